package ingest

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/tracehouse/tracehouse/ingest/decode"
	"github.com/tracehouse/tracehouse/vocab"
)

// framework decides a trace's framework from its evidence, strongest first:
// the flag; server_args.json; the file name; Python frame paths; annotation
// vocabulary (only when no framework's frames speak); and, only when nothing
// else speaks, TensorRT-LLM kernel names. Conflicting evidence of comparable
// strength gives unknown, never a guess.
func (l *loader) framework(c candidate, run *runInfo, ident decode.NameIdentity, t *traceState) (string, string) {
	if l.opt.Framework != "" {
		if l.opt.FrameworkEvidence != "" {
			return l.opt.Framework, l.opt.FrameworkEvidence
		}
		return l.opt.Framework, "--framework flag"
	}
	if sa := run.serverArgs; sa != nil && sa.framework != "" {
		return sa.framework, sa.frameworkEvidence + " (" + run.argsPath + ")"
	}
	// Frames: a fork's own code outranks the code it borrows (SGLang runs
	// vLLM ops; TokenSpeed grew from SGLang).
	var frames string
	for _, f := range []string{vocab.TokenSpeed, vocab.TRTLLM, vocab.SGLang, vocab.VLLM} {
		if t.fwFrames[frameworkIndex(f)] > 0 {
			frames = f
			break
		}
	}
	var name string
	switch {
	case ident.VLLMName:
		name = vocab.VLLM
	case ident.TPName:
		name = vocab.SGLang + "|" + vocab.TokenSpeed
	}
	// execute_<n>_context_..._generation_... annotations say "a step": SGLang
	// traces carry them too. They count only when no framework's own
	// Python frames speak, which outrank them.
	steps := ""
	if t.vllmSteps > 0 && frames == "" {
		steps = vocab.VLLM
	}
	var ev []string
	cands := map[string]bool{}
	for _, f := range vocab.Frameworks {
		cands[f] = true
	}
	narrow := func(set, why string) bool {
		if set == "" {
			return true
		}
		next := map[string]bool{}
		for _, f := range strings.Split(set, "|") {
			if cands[f] {
				next[f] = true
			}
		}
		ev = append(ev, why)
		if len(next) == 0 {
			return false
		}
		cands = next
		return true
	}
	framesWhy := ""
	if frames != "" {
		framesWhy = fmt.Sprintf("Python frames in %s code (%d)", frames, t.fwFrames[frameworkIndex(frames)])
	}
	ok := narrow(name, "file name "+filepath.Base(c.path)+" fits "+strings.ReplaceAll(name, "|", " or ")) &&
		narrow(frames, framesWhy) &&
		narrow(steps, fmt.Sprintf("vLLM step annotations (%d)", t.vllmSteps))
	if ok && len(ev) == 0 && t.trtNames > 0 {
		// Weak: kernel names, used only when nothing else speaks.
		ok = narrow(vocab.TRTLLM, fmt.Sprintf("weak: %d TensorRT-LLM kernel names, no other evidence", t.trtNames))
	}
	if !ok {
		return vocab.FrameworkUnknown, "evidence conflicts: " + strings.Join(ev, "; ")
	}
	if len(ev) == 0 {
		return vocab.FrameworkUnknown, "no framework evidence (no server_args.json, no Python frames, no known file naming)"
	}
	if len(cands) == 1 {
		for f := range cands {
			return f, strings.Join(ev, "; ")
		}
	}
	return vocab.FrameworkUnknown, "ambiguous: " + strings.Join(ev, "; ")
}
