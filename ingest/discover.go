package ingest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/tracehouse/tracehouse/ingest/decode"
	"github.com/tracehouse/tracehouse/limits"
	"github.com/tracehouse/tracehouse/vocab"
)

// candidate is a file that may be a trace, with the run it belongs to.
type candidate struct {
	path  string // as found (relative to the working directory when given so)
	root  string // the command-line argument it was found under
	size  int64
	named bool // the name claims a trace (*.trace.json[.gz])
	// explicit: named on the command line (not found in a directory): a
	// file that is not a trace is then an error, not a skip
	explicit bool
	runDir   string // directory whose name labels the run ("" with --run)
	hash     string // content hash, once computed (resolveRuns may need it first)
	// refused: why the file named is never read (a FIFO, a device): it
	// fails alone with this
	refused error
	// exactSplit: find every event's end, guessing no batch (errGuessed)
	exactSplit bool
}

// sidecars are JSON files that sit next to traces and are never traces.
var sidecars = map[string]bool{
	"server_args.json": true, "config.json": true, "metadata.json": true,
	"execution_details.json": true, "MANIFEST.json": true,
}

// timestampDir matches directories named by a capture time, which group the
// files of one run rather than name it.
var timestampDir = regexp.MustCompile(`^(\d{8,}([._-]\d+)*|\d{4}-\d{2}-\d{2}([T_ -].*)?)$`)

func isTraceName(name string) bool {
	n := strings.ToLower(name)
	return strings.HasSuffix(n, ".json") || strings.HasSuffix(n, ".json.gz") || isNsysName(n)
}

// isPerfettoCopy reports a file `tracehouse perfetto-fix` wrote by default.
func isPerfettoCopy(name string) bool {
	n := strings.ToLower(name)
	return strings.HasSuffix(n, ".perfetto.json") || strings.HasSuffix(n, ".perfetto.json.gz")
}

func claimsTrace(name string) bool {
	n := strings.ToLower(name)
	return strings.HasSuffix(n, ".trace.json") || strings.HasSuffix(n, ".trace.json.gz")
}

// discover expands the command-line paths into trace candidates. Notices
// describe what was skipped on purpose.
func discover(paths []string, fixedRun bool) ([]candidate, []string, error) {
	var out []candidate
	var notices []string
	seen := map[string]bool{}
	for _, p := range paths {
		info, err := os.Stat(p)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", p, unwrapPathError(err))
		}
		if !info.IsDir() {
			abs, _ := filepath.Abs(p)
			if seen[abs] {
				continue
			}
			seen[abs] = true
			c := candidate{path: p, root: filepath.Dir(p), size: info.Size(), named: claimsTrace(info.Name()), explicit: true}
			if kind := decode.SpecialKind(info.Mode()); kind != "" {
				// Named, so an error (of this file alone), never read.
				c.size = 0
				c.refused = fmt.Errorf("%s: %s, %w: only regular files are read", p, kind, decode.ErrSpecial)
			}
			if !fixedRun {
				c.runDir = runDirOf(c.path, c.root, false)
			}
			out = append(out, c)
			continue
		}
		found := 0
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return fmt.Errorf("%s: %w", path, unwrapPathError(err))
			}
			name := d.Name()
			if d.IsDir() {
				if path != p && (strings.HasPrefix(name, ".") || strings.HasSuffix(name, nsysCacheSuffix)) {
					return filepath.SkipDir
				}
				return nil
			}
			if !isTraceName(name) || sidecars[name] {
				return nil
			}
			if isPerfettoCopy(name) {
				// perfetto-fix's output beside its input: the same events again
				notices = append(notices, path+": perfetto-fix copy, skipped (name the file to ingest it)")
				return nil
			}
			if isRepName(name) && fileExists(exportedSibling(path)) {
				notices = append(notices, path+": Nsight Systems report, skipped: its export "+filepath.Base(exportedSibling(path))+" is ingested instead")
				return nil
			}
			if filepath.Base(filepath.Dir(path)) == "capture_traces" {
				notices = append(notices, path+": CUDA-graph capture trace, skipped (name the file to ingest it)")
				return nil
			}
			abs, _ := filepath.Abs(path)
			if seen[abs] {
				return nil
			}
			seen[abs] = true
			info, err := d.Info()
			if err == nil && info.Mode()&fs.ModeSymlink != 0 {
				info, err = os.Stat(path) // what the link names
				if errors.Is(err, fs.ErrNotExist) {
					notices = append(notices, path+": a symlink to nothing, skipped")
					return nil
				}
			}
			if err != nil {
				return fmt.Errorf("%s: %w", path, unwrapPathError(err))
			}
			if info.IsDir() {
				return nil // (a symlinked directory is not walked)
			}
			if kind := decode.SpecialKind(info.Mode()); kind != "" {
				// A FIFO never ends, nor does /dev/zero: never read.
				notices = append(notices, path+": "+kind+", not a regular file, skipped")
				return nil
			}
			c := candidate{path: path, root: p, size: info.Size(), named: claimsTrace(name)}
			if !fixedRun {
				c.runDir = runDirOf(path, p, true)
			}
			out = append(out, c)
			found++
			return nil
		})
		if err != nil {
			return nil, nil, err
		}
		if found == 0 {
			return nil, nil, fmt.Errorf("%s: no trace files (*.json, *.json.gz, *.sqlite, *.nsys-rep) found", p)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out, notices, nil
}

func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// runDirOf picks the directory that names a file's run: the nearest
// ancestor up to root holding a server_args.json (its parent when it is a
// timestamp directory), else the first directory below root on the way to the
// file, else root itself.
//
// A stage directory (prefill, extend, decode) is never the run, nor a
// profiles directory above stage directories: srtctl writes one job's
// traces as logs/<job>/profiles/{prefill,decode}/, which is run <job>
// whichever of those directories is given.
func runDirOf(path, root string, rootIsDir bool) string {
	cleanRoot := filepath.Clean(root)
	if dir := serverArgsDir(path, root); dir != "" {
		if timestampDir.MatchString(filepath.Base(dir)) && filepath.Clean(dir) != cleanRoot {
			return filepath.Dir(dir)
		}
		return dir
	}
	if rootIsDir {
		rel, err := filepath.Rel(cleanRoot, filepath.Dir(path))
		if err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
			parts := strings.Split(rel, string(filepath.Separator))
			if !timestampDir.MatchString(parts[0]) && !isStageDir(parts[0]) &&
				!(isProfilesDir(parts[0]) && len(parts) > 1 && isStageDir(parts[1])) {
				return filepath.Join(cleanRoot, parts[0])
			}
		}
	}
	return aboveStageDirs(cleanRoot, path)
}

// aboveStageDirs is dir, or its nearest ancestor that is neither a stage
// directory nor a profiles directory holding the stage directory on the
// way to path.
func aboveStageDirs(dir, path string) string {
	if b := filepath.Base(dir); isStageDir(b) || isProfilesDir(b) || b == "." || b == ".." {
		// "." or a relative path may need its parents spelled out
		if abs, err := filepath.Abs(dir); err == nil {
			dir = abs
		}
		if abs, err := filepath.Abs(path); err == nil {
			path = abs
		}
	}
	for {
		base := filepath.Base(dir)
		lift := isStageDir(base)
		if !lift && isProfilesDir(base) {
			if rel, err := filepath.Rel(dir, path); err == nil {
				lift = isStageDir(strings.Split(rel, string(filepath.Separator))[0])
			}
		}
		parent := filepath.Dir(dir)
		if !lift || parent == dir {
			return dir
		}
		dir = parent
	}
}

// isStageDir says whether a directory name is a stage (decode.DirStage's
// words).
func isStageDir(name string) bool {
	switch strings.ToLower(name) {
	case "prefill", "extend", "decode":
		return true
	}
	return false
}

func isProfilesDir(name string) bool { return strings.EqualFold(name, "profiles") }

// serverArgsDir returns the nearest directory holding a server_args.json,
// from the file's own directory up to root, or "".
func serverArgsDir(path, root string) string {
	cleanRoot := filepath.Clean(root)
	for dir := filepath.Dir(path); ; {
		if fileExists(filepath.Join(dir, "server_args.json")) {
			return dir
		}
		parent := filepath.Dir(dir)
		if filepath.Clean(dir) == cleanRoot || parent == dir {
			return ""
		}
		dir = parent
	}
}

// fileExists says whether p is a regular file (after symlinks): a FIFO
// named server_args.json is not one to read.
func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// findServerArgs returns the server_args.json for a trace: searched from its
// directory up to root, then in the run directory's timestamp
// sub-directories.
func findServerArgs(path, root, runDir string) string {
	if dir := serverArgsDir(path, root); dir != "" {
		return filepath.Join(dir, "server_args.json")
	}
	if runDir == "" {
		return ""
	}
	entries, err := os.ReadDir(runDir)
	if err != nil {
		return ""
	}
	for _, e := range entries {
		if e.IsDir() && timestampDir.MatchString(e.Name()) {
			if p := filepath.Join(runDir, e.Name(), "server_args.json"); fileExists(p) {
				return p
			}
		}
	}
	return ""
}

// serverArgs is what tracehouse reads from a server_args.json.
type serverArgs struct {
	raw                          json.RawMessage
	model                        string
	tp, dp, ep, pp               int
	cudaGraph                    *bool
	framework, frameworkEvidence string
	// notes: values read but not kept (a parallel size that is not a
	// whole number in range), each naming its key
	notes []string
}

// maxServerArgs bounds the server_args.json kept in runs.server_args: a
// server's arguments are a few KB; a file far larger is something else,
// and would be copied into every run's row whole.
const maxServerArgs = 1 << 20

func readServerArgs(path string) (*serverArgs, error) {
	f, err := decode.OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxServerArgs+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxServerArgs {
		return nil, fmt.Errorf("larger than 1 MiB, not a server's arguments")
	}
	// Stored as JSON, which holds UTF-8 only (Go's decoder repairs its
	// strings alike).
	b, _ = limits.ValidUTF8(b)
	// Numbers are kept as their decimal text: a size is checked as
	// written, not after a trip through float64 (where 2.5 truncated to 2
	// and 2^53+1 rounded).
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("%s: not a JSON object: %w", path, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%s: not a JSON object: data after the object", path)
	}
	// /server_info responses nest the arguments; flatten one level.
	for _, k := range []string{"server_args", "args"} {
		if inner, ok := m[k].(map[string]any); ok {
			for kk, v := range inner {
				if _, dup := m[kk]; !dup {
					m[kk] = v
				}
			}
		}
	}
	sa := &serverArgs{raw: json.RawMessage(b), tp: -1, dp: -1, ep: -1, pp: -1}
	str := func(keys ...string) string {
		for _, k := range keys {
			if s, ok := m[k].(string); ok && s != "" {
				return s
			}
		}
		return ""
	}
	// num reads a parallel size: the first key present decides; a value
	// that is not a whole number from 1 to the column's int32 limit is
	// left unset with a note, rather than stored as some other size.
	num := func(keys ...string) int {
		for _, k := range keys {
			v, ok := m[k]
			if !ok || v == nil {
				continue
			}
			if n, ok := parallelSize(v); ok {
				return n
			}
			sa.notes = append(sa.notes, fmt.Sprintf("%q is %s, not a whole number from 1 to %d; the run's %s is left unset",
				k, jsonText(v), math.MaxInt32, keys[0]))
			return -1
		}
		return -1
	}
	boolean := func(keys ...string) *bool {
		for _, k := range keys {
			if v, ok := m[k].(bool); ok {
				return &v
			}
		}
		return nil
	}
	sa.model = str("model_path", "model", "served_model_name")
	sa.tp = num("tp_size", "tensor_parallel_size")
	sa.dp = num("dp_size", "data_parallel_size")
	sa.ep = num("ep_size", "expert_parallel_size", "moe_ep_size")
	sa.pp = num("pp_size", "pipeline_parallel_size")
	if off := boolean("disable_cuda_graph", "enforce_eager"); off != nil {
		on := !*off
		sa.cudaGraph = &on
	} else if on := boolean("use_cuda_graph", "cuda_graph"); on != nil {
		sa.cudaGraph = on
	}
	lower := strings.ToLower(string(b))
	// The evidence names the keys the file has, every one of them (the
	// report fits it to the width; what is stored is never abbreviated).
	sglangKeys := present(m, "disable_radix_cache", "mem_fraction_static", "chunked_prefill_size", "disable_cuda_graph")
	vllmKeys := present(m, "gpu_memory_utilization", "enforce_eager")
	switch {
	case strings.Contains(lower, "tokenspeed"):
		sa.framework, sa.frameworkEvidence = vocab.TokenSpeed, "server_args.json mentions tokenspeed"
	case has(m, "model_path") && len(sglangKeys) > 0:
		sa.framework, sa.frameworkEvidence = vocab.SGLang, "server_args.json has SGLang keys ("+strings.Join(append([]string{"model_path"}, sglangKeys...), ", ")+")"
	case strings.Contains(lower, "tensorrt_llm") || strings.Contains(lower, "trtllm"):
		sa.framework, sa.frameworkEvidence = vocab.TRTLLM, "server_args.json mentions TensorRT-LLM"
	case has(m, "tensor_parallel_size") && len(vllmKeys) > 0:
		sa.framework, sa.frameworkEvidence = vocab.VLLM, "server_args.json has vLLM keys ("+strings.Join(append([]string{"tensor_parallel_size"}, vllmKeys...), ", ")+")"
	}
	return sa, nil
}

func has(m map[string]any, k string) bool { _, ok := m[k]; return ok }

// parallelSize returns v as a parallel size when it is a JSON number whose
// value is a whole number from 1 to math.MaxInt32 (runs.tp_size and its
// siblings are INTEGER). 2.0 and 2e0 are 2; 2.5, 0, -1 and 1e10 are not
// sizes.
func parallelSize(v any) (int, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	r, ok := new(big.Rat).SetString(n.String())
	if !ok || !r.IsInt() {
		return 0, false
	}
	i := r.Num()
	if !i.IsInt64() || i.Int64() < 1 || i.Int64() > math.MaxInt32 {
		return 0, false
	}
	return int(i.Int64()), true
}

// jsonText is a decoded value's JSON text for a message, cut short.
func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	return shortJSON(b)
}

// present is those of keys m has, in the order given.
func present(m map[string]any, keys ...string) []string {
	var out []string
	for _, k := range keys {
		if has(m, k) {
			out = append(out, k)
		}
	}
	return out
}
