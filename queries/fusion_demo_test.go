package queries

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"github.com/tracehouse/tracehouse/catalog"
	"github.com/tracehouse/tracehouse/ingest"
	"github.com/tracehouse/tracehouse/schema/schematest"
)

// TestFusionDemo runs the fuse-pattern query over the committed demo set
// (rank 0, every stage) with the embedded catalog and pins its rows: entry,
// status, confidence and occurrences. See testdata/README.md for what each
// run holds; the comments below say why each row is there.
func TestFusionDemo(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := schematest.Open(t, demoTemplate(t))
	if err := ingest.InstallCatalog(ctx, w.DB, catalog.Default()); err != nil {
		t.Fatal(err)
	}
	runID := func(label string) int64 {
		var id int64
		if err := w.DB.QueryRowContext(ctx, `SELECT run_id FROM runs WHERE label = ?`, label).Scan(&id); err != nil {
			t.Fatalf("run %s: %v", label, err)
		}
		return id
	}
	// The single-run path of _fusion_kernels and _fusion_gates (runs NULL,
	// which every report below takes) reads run `run` alone, here the
	// newest run of the set. The rows below cannot tell: a row needs both a
	// kernel of its trace and that trace's gates (_fusion_related's _out),
	// so either filter alone keeps other runs' rows out; but without the
	// first a report of the newest run walks every run's streams, and
	// without the second it matches the keywords of entries only another
	// run's model or TP size lets in.
	var last int64
	var kernelRuns, gateRuns string
	if err := w.DB.QueryRowContext(ctx, `SELECT max(run_id) FROM runs`).Scan(&last); err != nil {
		t.Fatal(err)
	}
	if err := w.DB.QueryRowContext(ctx, `
		SELECT (SELECT list(DISTINCT run_id ORDER BY run_id) FROM _fusion_kernels($1, NULL, NULL))::VARCHAR,
		       (SELECT list(DISTINCT t.run_id ORDER BY t.run_id) FROM _fusion_gates($1) JOIN traces t USING (trace_id))::VARCHAR`,
		last).Scan(&kernelRuns, &gateRuns); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("[%d]", last); kernelRuns != want || gateRuns != want {
		t.Errorf("runs read for run %d: kernels %s, gates %s, want %s", last, kernelRuns, gateRuns, want)
	}
	rank0 := sql.NullInt64{Int64: 0, Valid: true}
	sglangEager := []string{
		"prefill sglang-fused-qk-rope-reshape-cache opportunity confirmed x12",
		"prefill sglang-fused-add-rmsnorm already fused confirmed x24",
		"prefill sglang-act-and-mul already fused confirmed x12",
		"decode sglang-fused-qk-rope-reshape-cache opportunity confirmed x12",
		"decode sglang-flashinfer-allreduce-fusion opportunity confirmed x24",
		"decode sglang-fused-add-rmsnorm already fused confirmed x24",
		"decode sglang-act-and-mul already fused confirmed x12",
	}

	for _, c := range []struct {
		run, mapping string
		want         []string
	}{
		// Eager SGLang Llama TP=2 (the mapping run is the same deployment).
		// Decode: every layer's custom all-reduce is followed on stream 7 by
		// FlashInfer's FusedAddRMSNorm, the chain SGLang's allreduce_fusion
		// fuses; RoPE -> store_kvcache is the rope + cache chain; FlashInfer's
		// fused add + norm and act-and-mul run. Prefill: the NCCL all-reduce
		// runs on stream 22, so no all-reduce + norm chain exists. The GEMMs
		// launched from layers/quantization/unquant.py match no quant step
		// (catalog.yaml narrows bare `quant`; it matched those sites).
		{"sglang-llama", "", sglangEager},
		{"sglang-mapping", "", sglangEager},
		// The formal run replays decode in CUDA graphs: the same chains on
		// kernels without Python sites or ops (FlashInfer's act_and_mul
		// kernel name says the fused activation runs).
		{"sglang-formal", "", sglangEager},
		// Two-trace mode: the mapping run lends its sites to the formal
		// kernels, so decode matches like the eager runs (timing stays the
		// formal run's).
		{"sglang-formal", "sglang-mapping", sglangEager},
		// vLLM Qwen3 MoE TP=2 (model unknown to the warehouse, TP proven by
		// the tp1 file): custom all-reduce (decode) or pynccl all-reduce on
		// stream 7 (prefill, mixed) then fused_add_rms_norm is SGLang's
		// allreduce_fusion `elsewhere`; rotary -> reshape_and_cache_flash is
		// SGLang's rope + cache `elsewhere`; vLLM's own fused add + norm and
		// act-and-mul are `already fused`. The MoE sum -> all-reduce chain
		// loses its all-reduce kernels to allreduce_fusion, which has more
		// time.
		{"vllm-qwen-moe", "", []string{
			"prefill sglang-fused-qk-rope-reshape-cache elsewhere candidate x3",
			"prefill sglang-flashinfer-allreduce-fusion elsewhere confirmed x6",
			"prefill vllm-fused-add-rmsnorm already fused confirmed x6",
			"prefill vllm-act-and-mul already fused confirmed x3",
			"decode sglang-fused-qk-rope-reshape-cache elsewhere confirmed x12",
			"decode sglang-flashinfer-allreduce-fusion elsewhere confirmed x24",
			"decode vllm-fused-add-rmsnorm already fused confirmed x24",
			"decode vllm-act-and-mul already fused confirmed x12",
			"mixed sglang-fused-qk-rope-reshape-cache elsewhere candidate x3",
			"mixed sglang-flashinfer-allreduce-fusion elsewhere confirmed x6",
			"mixed vllm-fused-add-rmsnorm already fused confirmed x6",
			"mixed vllm-act-and-mul already fused confirmed x3",
		}},
		// TensorRT-LLM Llama, one rank, stage unknown: FlashInfer's fused
		// add + RMSNorm, act-and-mul and (where a cpu_op names it) RMSNorm
		// run. Its applyBiasRopeUpdateKVCache already fuses RoPE with the
		// cache update (a fused keyword of the rope + cache entries), so no
		// rope + cache row.
		{"trtllm-llama", "", []string{
			"unknown trtllm-flashinfer-fused-add-rmsnorm already fused confirmed x40",
			"unknown trtllm-flashinfer-act-and-mul already fused confirmed x8",
			"unknown trtllm-flashinfer-rmsnorm already fused candidate x2",
		}},
		// TokenSpeed DeepSeek-V3 fp8 on B200: the fp8 GEMM -> silu_and_mul
		// -> per-token-group FP8 quant chains are TokenSpeed's GEMM + SwiGLU
		// + quant opportunity (three steps, so it claims the kernels before
		// the two-step act + quant entries); RMSNorm -> per-token-group quant
		// is SGLang's DeepSeek norm + quant `elsewhere` (norms followed by an
		// FP8 GEMM rather than a quant kernel do not count); Triton decode
		// attention next to its FP8 quant is TokenSpeed's MLA kernels'
		// opportunity.
		{"tokenspeed-deepseek", "", []string{
			"prefill tokenspeed-nvfp4-gemm-swiglu-quant opportunity confirmed x6",
			"prefill sglang-deepseek-rmsnorm-quant elsewhere confirmed x22",
			"decode tokenspeed-mla-attention opportunity confirmed x8",
			"decode tokenspeed-nvfp4-gemm-swiglu-quant opportunity confirmed x6",
			"decode sglang-deepseek-rmsnorm-quant elsewhere confirmed x22",
		}},
	} {
		t.Run(c.run+"+"+c.mapping, func(t *testing.T) {
			t.Parallel()
			p := FusionMatchesParams{Run: runID(c.run), Rank: rank0}
			if c.mapping != "" {
				p.Mapping = sql.NullInt64{Int64: runID(c.mapping), Valid: true}
			}
			rows, err := FusionMatches(ctx, w.DB, p)
			if err != nil {
				t.Fatal(err)
			}
			got := make([]string, len(rows))
			for i, r := range rows {
				got[i] = fmt.Sprintf("%s %s %s %s x%d", r.Stage, r.ID, r.Status, r.Confidence, r.Occurrences)
			}
			if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("fusion rows:\n got:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(c.want, "\n  "))
			}
			sim, err := FusionSimilarity(ctx, w.DB, FusionSimilarityParams{Run: p.Run, Mapping: p.Mapping, Rank: rank0})
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range sim {
				t.Errorf("unexpected similarity note: %+v", s)
			}
		})
	}
}
