package synth

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// DemoRuns are the runs of the committed demo set, in writing order.
func DemoRuns() []Options {
	const llama = "meta-llama/Llama-3.1-8B-Instruct"
	return []Options{
		// TP=2 eager: custom all-reduce + fused add-RMSNorm chains in decode,
		// NCCL overlapping GEMMs in prefill.
		{Framework: SGLang, Run: "sglang-llama", Model: llama, Ranks: 2, Steps: 3, Layers: 4, Gzip: true, Seed: 101},
		// One file per rank, stages only from the execute_... annotations.
		{Framework: VLLM, Run: "vllm-qwen-moe", Model: "Qwen/Qwen3-30B-A3B", MoE: true, Ranks: 2, Steps: 6, Layers: 3, Gzip: true, Seed: 102},
		// Plain trace.json, no Python stacks, CUDA graphs for decode.
		{Framework: TRTLLM, Run: "trtllm-llama", Model: llama, Ranks: 1, Steps: 5, Layers: 4, Graph: true, Seed: 103},
		// MLA + MoE with fp8 quant chains, epoch-microsecond timestamps.
		{Framework: TokenSpeed, Run: "tokenspeed-deepseek", Model: "deepseek-ai/DeepSeek-V3", MoE: true, Ranks: 1, Steps: 4, Layers: 4,
			Gzip: true, TimeBase: TimeBaseEpochUS, Seed: 104},
		// The two-trace pair: same model and shape, eager vs CUDA graphs.
		{Framework: SGLang, Run: "sglang-mapping", Model: llama, Ranks: 2, Steps: 3, Layers: 4, Gzip: true, Seed: 105},
		{Framework: SGLang, Run: "sglang-formal", Model: llama, Ranks: 2, Steps: 3, Layers: 4, Gzip: true, Graph: true, Seed: 106},
	}
}

// Demo writes the committed demo set into dir (testdata/demo) together with
// MANIFEST.json (paths relative to dir). The output is byte-identical on
// every call.
func Demo(dir string) (Manifest, error) {
	var all Manifest
	for _, opt := range DemoRuns() {
		opt.Dir = dir
		m, err := Generate(opt)
		if err != nil {
			return Manifest{}, fmt.Errorf("synth: demo %s: %w", opt.Run, err)
		}
		all.Files = append(all.Files, m.Files...)
	}
	rel := Manifest{Files: make([]File, len(all.Files))}
	for i, f := range all.Files {
		p, err := filepath.Rel(dir, f.Path)
		if err != nil {
			return Manifest{}, fmt.Errorf("synth: demo manifest: %w", err)
		}
		f.Path = filepath.ToSlash(p)
		rel.Files[i] = f
	}
	b, err := json.MarshalIndent(rel, "", "  ")
	if err != nil {
		return Manifest{}, fmt.Errorf("synth: demo manifest: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "MANIFEST.json"), append(b, '\n'), 0o644); err != nil {
		return Manifest{}, fmt.Errorf("synth: demo manifest: %w", err)
	}
	return all, nil
}

// ReadManifest reads a MANIFEST.json written by Demo; paths stay relative.
func ReadManifest(path string) (Manifest, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Manifest{}, fmt.Errorf("synth: %w", err)
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return Manifest{}, fmt.Errorf("synth: %s: %w", path, err)
	}
	return m, nil
}
