// Package vocab defines once the words tracehouse stores and shows:
// serving frameworks, stages and two-trace roles (the value domains of the
// warehouse's text columns). Ingest validates against them, commands offer
// them for completion, reports spell them, and the synthetic trace generator
// writes them. It imports nothing of the project, so every package can use
// it.
package vocab

import "slices"

// Serving frameworks (runs.framework, traces.framework), in report order.
// "unknown" is stored when the evidence does not decide.
const (
	SGLang     = "sglang"
	VLLM       = "vllm"
	TRTLLM     = "trtllm"
	TokenSpeed = "tokenspeed"
	// FrameworkUnknown is stored when the evidence does not decide.
	FrameworkUnknown = "unknown"
)

// Frameworks lists the serving frameworks tracehouse knows.
var Frameworks = []string{SGLang, VLLM, TRTLLM, TokenSpeed}

// FrameworkName is how a report spells a framework.
func FrameworkName(fw string) string {
	switch fw {
	case SGLang:
		return "SGLang"
	case VLLM:
		return "vLLM"
	case TRTLLM:
		return "TensorRT-LLM"
	case TokenSpeed:
		return "TokenSpeed"
	}
	return fw
}

// Stages (kernels.stage, traces.stage). SGLang calls prefill EXTEND.
const (
	Prefill      = "prefill"
	Decode       = "decode"
	Mixed        = "mixed"
	StageUnknown = "unknown"
)

// Stages lists every stored stage, in report order.
var Stages = []string{Prefill, Decode, Mixed, StageUnknown}

// StageName is how a report spells a stage: prefill the way SGLang users
// know it too.
func StageName(stage string) string {
	if stage == Prefill {
		return "extend/prefill"
	}
	return stage
}

// ParseStage reads a stage as users write it (extend is SGLang's word for
// prefill); ok is false for anything else.
func ParseStage(s string) (stage string, ok bool) {
	switch s {
	case "extend", "extend/prefill", Prefill:
		return Prefill, true
	}
	return s, slices.Contains(Stages, s)
}

// Roles of a run in two-trace triage (traces.role).
const (
	// Mapping is the eager run (CUDA graphs off) lending Python sites.
	Mapping = "mapping"
	// Formal is the real serving config supplying timing.
	Formal = "formal"
)

// Roles lists the two-trace roles.
var Roles = []string{Mapping, Formal}
