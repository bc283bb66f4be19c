package decode

import (
	"strings"

	"github.com/tracehouse/tracehouse/vocab"
)

// Event categories tracehouse stores (Category).
const (
	CatOther = iota
	CatKernel
	CatMemcpy
	CatMemset
	CatLaunch
	CatCPUOp
	CatPython
	CatUserAnnotation
	CatGPUAnnotation
)

// Category classifies an event by its cat (PyTorch's names and Kineto's
// older ones).
func Category(cat []byte) int {
	switch string(cat) {
	case "kernel", "Kernel":
		return CatKernel
	case "gpu_memcpy", "Memcpy":
		return CatMemcpy
	case "gpu_memset", "Memset":
		return CatMemset
	case "cuda_runtime", "cuda_driver", "Runtime", "hip_runtime", "hip_driver":
		return CatLaunch
	case "cpu_op", "Operator":
		return CatCPUOp
	case "python_function":
		return CatPython
	case "user_annotation":
		return CatUserAnnotation
	case "gpu_user_annotation":
		return CatGPUAnnotation
	}
	return CatOther
}

// AnnotationStage reads a stage from an annotation name: SGLang
// step[EXTEND ...] / [DECODE ...], vLLM execute_<n>_context_<c>(..)_generation_<g>(..),
// or the words prefill / extend / decode. vllm reports the vLLM step form.
func AnnotationStage(name []byte) (stage string, vllm bool) {
	n := strings.ToLower(string(name))
	if i := strings.Index(n, "_context_"); i >= 0 && strings.HasPrefix(n, "execute_") {
		if j := strings.Index(n, "_generation_"); j > i {
			c := leadingInt(n[i+len("_context_"):])
			g := leadingInt(n[j+len("_generation_"):])
			if c >= 0 && g >= 0 {
				switch {
				case c > 0 && g > 0:
					return vocab.Mixed, true
				case c > 0:
					return vocab.Prefill, true
				case g > 0:
					return vocab.Decode, true
				}
				return "", true
			}
		}
	}
	hasPrefill := strings.Contains(n, "prefill") || strings.Contains(n, "extend")
	hasDecode := strings.Contains(n, "decode")
	switch {
	case hasPrefill && hasDecode:
		return vocab.Mixed, false
	case hasPrefill:
		return vocab.Prefill, false
	case hasDecode:
		return vocab.Decode, false
	}
	return "", false
}

func leadingInt(s string) int {
	n, i := 0, 0
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9' && i < 9; i++ {
		n = n*10 + int(s[i]-'0')
	}
	if i == 0 {
		return -1
	}
	return n
}
