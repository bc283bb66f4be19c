package queries

import (
	"database/sql"
	"math"
	"slices"
	"strings"
	"testing"
)

// Kernels as SGLang / vLLM name them, with the sites and ops they carry.
var (
	sgAllReduce = fkn("void cross_device_reduce_1stage<__nv_bfloat16, 2>", 8000).
			at("python/sglang/srt/distributed/device_communicators/custom_all_reduce.py:405 custom_all_reduce").
			op_("sgl_kernel::all_reduce")
	sgAddNorm = fkn("void flashinfer::norm::FusedAddRMSNormKernel<8u, __nv_bfloat16>", 3000).
			at("python/sglang/srt/layers/layernorm.py:142 forward_cuda").op_("sgl_kernel::fused_add_rmsnorm")
	vlAllReduce = fkn("void vllm::cross_device_reduce_1stage<__nv_bfloat16, 2>", 8000).
			at("vllm/_custom_ops.py:1806 all_reduce").op_("_C_custom_ar::all_reduce")
	vlAddNorm = fkn("void vllm::fused_add_rms_norm_kernel<c10::BFloat16, 8>", 3000).
			at("vllm/_custom_ops.py:330 fused_add_rms_norm").op_("_C::fused_add_rms_norm")
	// filler kernels hit no catalog keyword
	filler  = fkn("filler_kernel_a", 10000)
	filler2 = fkn("filler_kernel_b", 20000)
)

const (
	idARFusion    = "sglang-flashinfer-allreduce-fusion"
	idAddNorm     = "sglang-fused-add-rmsnorm"
	idVLLMAddNorm = "vllm-fused-add-rmsnorm"
)

// TestFusionAllReduceNorm is the all-reduce + residual RMSNorm family on
// the embedded catalog: the split chain adjacent on one stream matches; far
// apart, beyond the gap, on two streams or in the wrong order it does not;
// the gates and the fused kernel decide the status.
func TestFusionAllReduceNorm(t *testing.T) {
	t.Parallel()
	f := newFusionFX(t, nil)
	layer := []fk{filler, sgAllReduce.after(2000), sgAddNorm, filler2}
	chain := fDur(sgAllReduce, sgAddNorm)
	norms := fDur(sgAddNorm)
	const llama = "meta-llama/Llama-3.1-8B-Instruct"
	layers := func(tr int64) { f.seq(tr, "decode", 7, 0, fRepeat(4, layer...)...) }
	arFusion := fLine("decode", idARFusion, FusionOpportunity, "confirmed", 4, 4*chain)
	// Where a chain does not occur, only the fused residual norm is left.
	onlyNorm := func(n int) string {
		return fLine("decode", idAddNorm, FusionAlreadyFused, "confirmed", n, int64(n)*norms)
	}
	// Each case is a run of its own (one trace, rank 0), all asked at once
	// (matchesOf).
	type arCase struct {
		name             string
		framework, model string
		tp, tpRank       int
		store            func(tr int64)
		want             []string
		check            func(t *testing.T, run int64, rows []FusionMatchesRow) // more, or nil
	}
	cases := []arCase{
		// The AITER entry matches the same kernels with the same priority,
		// steps and time; it comes later in the catalog, so the kernels are
		// already claimed when its turn comes.
		{"adjacent", "sglang", llama, 2, 0, layers,
			[]string{arFusion, fLine("decode", idAddNorm, FusionAlreadyFused, "confirmed", 4, 4*norms)},
			func(t *testing.T, run int64, rows []FusionMatchesRow) {
				if len(rows) == 0 {
					return
				}
				r := rows[0]
				if want := f.share(run, 0, "decode", 4*chain); math.Abs(r.SharePct-want) > 1e-9 {
					t.Errorf("share %v, want %v", r.SharePct, want)
				}
				if !slices.Equal(r.Evidence, []string{sgAllReduce.name, sgAddNorm.name}) {
					t.Errorf("evidence %q", r.Evidence)
				}
				if !slices.Equal(r.Locations, []string{
					"custom_all_reduce @ python/sglang/srt/distributed/device_communicators/custom_all_reduce.py:405",
					"forward_cuda @ python/sglang/srt/layers/layernorm.py:142"}) {
					t.Errorf("locations %q", r.Locations)
				}
				if r.CandidatePath != "sglang: python/sglang/srt/layers/flashinfer_comm_fusion.py" ||
					r.Switch != "--enable-flashinfer-allreduce-fusion" || r.Origin != "mainline" || r.Steps != 2 ||
					r.Pattern != "FlashInfer unified allreduce_fusion" || len(r.Sources) != 3 || r.Rationale == "" {
					t.Errorf("catalog fields: %+v", r)
				}
			}},
		{"two unrelated kernels between: still adjacent", "sglang", llama, 2, 0, func(tr int64) {
			f.seq(tr, "decode", 7, 0, fRepeat(4, sgAllReduce, filler, filler, sgAddNorm, filler2)...)
		}, []string{arFusion, onlyNorm(4)}, nil},
		{"three unrelated kernels between", "sglang", llama, 2, 0, func(tr int64) {
			f.seq(tr, "decode", 7, 0, fRepeat(4, sgAllReduce, filler, filler, filler, sgAddNorm, filler2)...)
		}, []string{onlyNorm(4)}, nil},
		{"gap of exactly max_gap_us", "sglang", llama, 2, 0, func(tr int64) {
			f.seq(tr, "decode", 7, 0, fRepeat(4, filler, sgAllReduce, sgAddNorm.after(50_000), filler2)...)
		}, []string{arFusion, onlyNorm(4)}, nil},
		{"gap over max_gap_us", "sglang", llama, 2, 0, func(tr int64) {
			f.seq(tr, "decode", 7, 0, fRepeat(4, filler, sgAllReduce, sgAddNorm.after(50_001), filler2)...)
		}, []string{onlyNorm(4)}, nil},
		{"different streams", "sglang", llama, 2, 0, func(tr int64) {
			// the norm starts 1 us after the all-reduce ends, on another stream
			for i := range int64(4) {
				end := f.seq(tr, "decode", 22, i*100_000, sgAllReduce)
				f.seq(tr, "decode", 7, end+1000, sgAddNorm, filler)
			}
		}, []string{onlyNorm(4)}, nil},
		{"wrong order", "sglang", llama, 2, 0, func(tr int64) {
			f.seq(tr, "decode", 7, 0, fRepeat(4, sgAddNorm, sgAllReduce, filler, filler, filler)...)
		}, []string{onlyNorm(4)}, nil},
		// the gates
		{"TP 1", "sglang", llama, 1, 0, layers, []string{onlyNorm(4)}, nil},
		{"TP unknown", "sglang", llama, 0, -1, layers, []string{onlyNorm(4)}, nil},
		// a trace of TP rank 1 proves TP >= 2
		{"TP from tp_rank", "sglang", llama, 0, 1, layers, []string{arFusion, onlyNorm(4)}, nil},
		// 44 us of 10.164 ms is 0.43%, under the entry's min_share 0.5
		{"share under min_share", "sglang", llama, 2, 0, func(tr int64) {
			end := f.seq(tr, "decode", 7, 0, fRepeat(4, layer...)...)
			f.seq(tr, "decode", 7, end+1_000_000, fkn("filler_kernel_long", 10_000_000))
		}, []string{onlyNorm(4)}, nil},
		// vLLM's own fused add + norm kernel is vLLM's "already fused"; the
		// SGLang entry's fused keyword hits it too, but SGLang's entries
		// only say `elsewhere` on a vLLM trace, and only for split chains.
		{"elsewhere on vLLM", "vllm", "Qwen/Qwen3-30B-A3B", 2, 0, func(tr int64) {
			f.seq(tr, "decode", 7, 0, fRepeat(4, filler, vlAllReduce.after(2000), vlAddNorm, filler2)...)
		}, []string{fLine("decode", idARFusion, FusionElsewhere, "confirmed", 4, 4*chain),
			fLine("decode", idVLLMAddNorm, FusionAlreadyFused, "confirmed", 4, 4*norms)}, nil},
		{"unknown framework is never own", "unknown", "", 2, 0, layers,
			[]string{fLine("decode", idARFusion, FusionElsewhere, "confirmed", 4, 4*chain)}, nil},
		// The fused kernel runs once; the split chain still runs four times
		// in the same stage and device, so the entry is `already fused`
		// (the path is on) and its chain is not reported. The AITER entry's
		// chain is no longer claimed by it and shows up on its own.
		// 9 us of 203 us is 4.4%, over the entry's likely_share of 4%
		{"fused kernel present", "sglang", llama, 2, 0, func(tr int64) {
			fused := fkn("void flashinfer::trtllm_allreduce_fusion::allreduce_fusion_kernel_oneshot_lamport<__nv_bfloat16, 8, true>", 9000)
			f.seq(tr, "decode", 7, 0, append(fRepeat(4, layer...), filler, fused, filler2)...)
		}, []string{fLine("decode", "sglang-aiter-allreduce-fusion", FusionOpportunity, "confirmed", 4, 4*chain),
			onlyNorm(4), fLine("decode", idARFusion, FusionAlreadyFused, "confirmed", 1, 9000)}, nil},
	}
	runs := make([]int64, len(cases))
	for i, c := range cases {
		runs[i] = f.run(c.framework, c.model, c.tp)
		c.store(f.traceOf(runs[i], 0, c.tpRank))
	}
	got := f.matchesOf(runs...)
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantFusions(t, got[runs[i]], c.want...)
			if c.check != nil {
				c.check(t, runs[i], got[runs[i]])
			}
		})
	}
}

// TestFusionRegressions pins the earlier tool's false positives.
func TestFusionRegressions(t *testing.T) {
	t.Parallel()
	f := newFusionFX(t, nil)
	gemm := fkn("nvjet_tst_64x8_64x16_4x1_v_bz_TNT", 12000)
	memset := fkn("Memset (Device)", 1200).as("memset")
	const pr = "sglang-pr22392-cutlass-fp8-scaled-mm"
	// each case a run of its own (one trace, rank 0), all asked at once
	// (matchesOf)
	var names []string
	var wants [][]string
	var runs []int64
	for _, c := range []struct {
		name string
		tp   int
		seq  []fk // nil: the memset in another stage
		want []string
	}{
		{"FusedAddRMSNorm without an all-reduce", 8, []fk{filler, sgAddNorm, filler2},
			[]string{fLine("decode", idAddNorm, FusionAlreadyFused, "confirmed", 1, sgAddNorm.dur)}},
		{"GEMM and a distant memset", 1, []fk{memset, filler, filler, gemm, filler, filler, filler2}, nil},
		{"GEMM and a memset in another stage", 1, nil, nil},
		// positive controls: the memset next to the GEMM, on either side
		// (the entry is unordered), or one kernel away (max_between 1); one
		// occurrence of 13.2 us in ~50 us is over likely_share 1%: confirmed
		{"memset right before the GEMM", 1, []fk{filler, memset, gemm, filler2},
			[]string{fLine("decode", pr, FusionOpportunity, "confirmed", 1, memset.dur+gemm.dur)}},
		{"memset right after the GEMM", 1, []fk{filler, gemm, memset, filler2},
			[]string{fLine("decode", pr, FusionOpportunity, "confirmed", 1, memset.dur+gemm.dur)}},
		{"memset one kernel away", 1, []fk{memset, filler, gemm, filler2},
			[]string{fLine("decode", pr, FusionOpportunity, "confirmed", 1, memset.dur+gemm.dur)}},
	} {
		run := f.run("sglang", "meta-llama/Llama-3.1-8B-Instruct", c.tp)
		tr := f.traceOf(run, 0, 0)
		if c.seq == nil {
			end := f.seq(tr, "prefill", 7, 0, filler, memset)
			f.seq(tr, "decode", 7, end+1000, gemm, filler2)
		} else {
			f.seq(tr, "decode", 7, 0, c.seq...)
		}
		names, wants, runs = append(names, c.name), append(wants, c.want), append(runs, run)
	}
	got := f.matchesOf(runs...)
	for i, name := range names {
		t.Run(name, func(t *testing.T) {
			rows := got[runs[i]]
			wantFusions(t, rows, wants[i]...)
			for _, r := range rows {
				if strings.Contains(r.ID, "allreduce") {
					t.Errorf("all-reduce fusion reported without an all-reduce: %s", fusionLine(r))
				}
			}
		})
	}
}

// TestFusionQKNormRopeCache is the QK-norm / RoPE / KV-cache family: several
// entries match overlapping kernels, and priority, subsumes, claimed kernels
// and the model gates decide which rows remain.
func TestFusionQKNormRopeCache(t *testing.T) {
	t.Parallel()
	f := newFusionFX(t, nil)
	qnorm := fkn("void flashinfer::norm::RMSNormKernel<8u, __nv_bfloat16>", 2000).
		at("python/sglang/srt/models/utils.py:120 apply_qk_norm").op_("sgl_kernel::rmsnorm")
	rope := fkn("void vllm::rotary_embedding_kernel<c10::BFloat16, true>", 2500).
		at("python/sglang/srt/layers/rotary_embedding.py:215 forward_cuda").op_("sgl_kernel::rotary_embedding")
	kv := fkn("void set_kv_buffer_kernel<8, 128>", 1500).
		at("python/sglang/srt/mem_cache/memory_pool.py:588 set_kv_buffer").op_("sgl_kernel::set_kv_buffer")
	layer := []fk{qnorm, rope, kv, filler2}
	// each model a run of its own, all asked at once (matchesOf)
	var runs []int64
	cases := []struct {
		model string
		want  []string
	}{
		// reshape-and-cache (priority 40) claims rope + store and subsumes
		// the RoPE + KV store entry (20); QK-norm + RoPE (30) loses its rope
		// kernel to it; the one-step in-place QK norm keeps its kernels.
		{"meta-llama/Llama-3.1-8B-Instruct", []string{
			fLine("decode", "sglang-fused-qk-rope-reshape-cache", FusionOpportunity, "confirmed", 4, 4*fDur(rope, kv)),
			fLine("decode", "sglang-inplace-qk-rmsnorm", FusionOpportunity, "confirmed", 4, 4*fDur(qnorm)),
		}},
		// the Qwen3 three-step entry (90) takes all three kernels
		{"Qwen/Qwen3-8B", []string{
			fLine("decode", "sglang-qwen3-fused-qknorm-mrope-cache", FusionOpportunity, "confirmed", 4, 4*fDur(qnorm, rope, kv)),
		}},
		// Qwen3.5 is excluded from it (models_none) and gets PR #20667 (100)
		{"Qwen/Qwen3.5-27B", []string{
			fLine("decode", "sglang-pr20667-qwen35-qknorm-rope-cache", FusionOpportunity, "confirmed", 4, 4*fDur(qnorm, rope, kv)),
		}},
	}
	for _, c := range cases {
		run := f.run("sglang", c.model, 1)
		f.seq(f.traceOf(run, 0, 0), "decode", 7, 0, fRepeat(4, layer...)...)
		runs = append(runs, run)
	}
	got := f.matchesOf(runs...)
	for i, c := range cases {
		t.Run(c.model, func(t *testing.T) {
			rows := got[runs[i]]
			wantFusions(t, rows, c.want...)
			if len(rows) > 0 && rows[0].ID == "sglang-pr20667-qwen35-qknorm-rope-cache" && rows[0].Origin != "inflight" {
				t.Errorf("origin %q", rows[0].Origin)
			}
		})
	}
}

// TestFusionActQuant is the activation + quantize family: the split
// SiLU-and-mul then per-token-group FP8 quant matches SGLang's MoE act-quant
// entry; vLLM's SiLU+Mul+Quant entry matches the same kernels but comes
// later in the catalog, so its kernels are claimed; the SiLU-and-mul kernel
// is itself SGLang's fused activation-and-mul.
func TestFusionActQuant(t *testing.T) {
	t.Parallel()
	act := fkn("void flashinfer::activation::act_and_mul_kernel<__nv_bfloat16, &silu<float> >", 3500).
		at("python/sglang/srt/layers/activation.py:67 forward_cuda").op_("sgl_kernel::silu_and_mul")
	quant := fkn("_per_token_group_quant_fp8", 2500).
		at("python/sglang/srt/layers/quantization/fp8_kernel.py:401 sglang_per_token_group_quant_fp8")
	f := newFusionFX(t, nil)
	run := f.run("sglang", "meta-llama/Llama-3.1-8B-Instruct", 1)
	f.seq(f.traceOf(run, 0, 0), "prefill", 7, 0, fRepeat(4, act, quant, filler2)...)
	wantFusions(t, f.matches(run),
		fLine("prefill", "sglang-fused-moe-act-quant", FusionOpportunity, "confirmed", 4, 4*fDur(act, quant)),
		fLine("prefill", "sglang-act-and-mul", FusionAlreadyFused, "confirmed", 4, 4*act.dur))
}

// TestFusionUnorderedTopK is an unordered entry (grouped top-k with its
// renormalisation): both orders match.
func TestFusionUnorderedTopK(t *testing.T) {
	t.Parallel()
	f := newFusionFX(t, nil)
	topk := fkn("void biased_grouped_topk_kernel<float>", 4000)
	renorm := fkn("void renorm_weights_kernel<float>", 1000)
	// each order a run of its own, both asked at once (matchesOf)
	names := []string{"top-k first", "renorm first"}
	var runs []int64
	for _, layer := range [][]fk{{topk, renorm, filler2}, {renorm, topk, filler2}} {
		run := f.run("sglang", "deepseek-ai/DeepSeek-V3", 8)
		f.seq(f.traceOf(run, 0, 0), "decode", 7, 0, fRepeat(4, layer...)...)
		runs = append(runs, run)
	}
	got := f.matchesOf(runs...)
	for i, name := range names {
		t.Run(name, func(t *testing.T) {
			wantFusions(t, got[runs[i]],
				fLine("decode", "sglang-fused-moe-grouped-topk", FusionOpportunity, "confirmed", 4, 4*fDur(topk, renorm)))
		})
	}
}

// TestFusionTwoTrace: in two-trace mode a keyword that only the mapping
// run's sites carry decides the match, while time comes from the formal run.
func TestFusionTwoTrace(t *testing.T) {
	t.Parallel()
	f := newFusionFX(t, nil)
	const name = "void flashinfer::norm::RMSNormKernel<8u, __nv_bfloat16>"
	formal := f.run("sglang", "Qwen/Qwen3-8B", 1)
	mapping := f.run("sglang", "Qwen/Qwen3-8B", 1)
	// the formal run replays CUDA graphs: no Python site on its kernels
	f.seq(f.traceOf(formal, 0, 0), "decode", 7, 0, fRepeat(4, fkn(name, 1800), filler2)...)
	f.seq(f.traceOf(mapping, 0, 0), "decode", 7, 0,
		fRepeat(4, fkn(name, 2600).at("python/sglang/srt/models/utils.py:120 apply_qk_norm"), filler2)...)

	const id = "sglang-inplace-qk-rmsnorm"
	wantFusions(t, f.matchesP(FusionMatchesParams{Run: formal}))
	rows := f.matchesP(FusionMatchesParams{Run: formal, Mapping: sql.NullInt64{Int64: mapping, Valid: true}})
	wantFusions(t, rows, fLine("decode", id, FusionOpportunity, "confirmed", 4, 4*1800))
	if len(rows) == 1 && !slices.Equal(rows[0].Locations, []string{"apply_qk_norm @ python/sglang/srt/models/utils.py:120"}) {
		t.Errorf("locations %q", rows[0].Locations)
	}
}

// TestFusionMoreFamilies covers more entry families on the embedded
// catalog: MoE sum + all-reduce, sampling temperature + softmax, top-k +
// top-p sampling (unordered, three steps), and a vLLM router GEMM.
func TestFusionMoreFamilies(t *testing.T) {
	t.Parallel()
	f := newFusionFX(t, nil)
	moe := fkn("fused_moe_kernel", 40_000).at("python/sglang/srt/layers/moe/fused_moe_triton/fused_moe.py:688 invoke_fused_moe_kernel")
	moeSum := fkn("void moe_sum_reduce_kernel<c10::BFloat16, 8>", 3000).
		at("python/sglang/srt/layers/moe/fused_moe_triton/fused_moe.py:1602 fused_experts_impl")
	temp := fkn("void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<float, float, float, at::native::binary_internal::DivFunctor<float> > >", 2000).
		at("python/sglang/srt/layers/sampler.py:80 apply_temperature")
	softmax := fkn("void at::native::cunn_SoftMaxForward<8, float, float, float>", 6000).
		at("python/sglang/srt/layers/sampler.py:86 forward").op_("aten::_softmax")
	topk := fkn("topk_mask_kernel", 3000)
	topp := fkn("topp_filter_kernel", 3000)
	sample := fkn("sampling_from_probs_kernel", 2000)
	cast := fkn("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_copy<float> >", 1000).
		at("vllm/model_executor/layers/fused_moe/router/gate_linear.py:40 forward")
	gemm := fkn("void cutlass::gemm::kernel::GemmUniversal<float>", 5000).
		at("vllm/model_executor/layers/fused_moe/router/gate_linear.py:41 forward")
	cases := []struct {
		name, framework, model string
		tp                     int
		layer                  []fk
		want                   func(stage string) []string
	}{
		// fused_moe -> moe_sum -> all-reduce: both MoE kernels can start
		// the chain; the tighter pair (moe_sum, all-reduce) is taken
		{"MoE sum + all-reduce", "sglang", "Qwen/Qwen3-30B-A3B", 2, []fk{moe, moeSum, sgAllReduce, filler2},
			func(s string) []string {
				return []string{fLine(s, "sglang-fused-moe-sum-allreduce", FusionOpportunity, "confirmed", 4, 4*fDur(moeSum, sgAllReduce))}
			}},
		{"temperature + softmax", "sglang", "meta-llama/Llama-3.1-8B-Instruct", 1, []fk{temp, softmax, filler2},
			func(s string) []string {
				return []string{fLine(s, "sglang-fused-temperature-softmax", FusionOpportunity, "confirmed", 4, 4*fDur(temp, softmax))}
			}},
		{"top-k + top-p + sampling", "tokenspeed", "Qwen/Qwen3-8B", 1, []fk{topk, topp, sample, filler2},
			func(s string) []string {
				return []string{fLine(s, "tokenspeed-fused-topk-topp", FusionOpportunity, "confirmed", 4, 4*fDur(topk, topp, sample))}
			}},
		{"top-k + top-p + sampling, sampling first", "tokenspeed", "Qwen/Qwen3-8B", 1, []fk{sample, topk, topp, filler2},
			func(s string) []string {
				return []string{fLine(s, "tokenspeed-fused-topk-topp", FusionOpportunity, "confirmed", 4, 4*fDur(topk, topp, sample))}
			}},
		// on SGLang the TokenSpeed path is `elsewhere`
		{"top-k + top-p + sampling on SGLang", "sglang", "Qwen/Qwen3-8B", 1, []fk{topk, topp, sample, filler2},
			func(s string) []string {
				return []string{fLine(s, "tokenspeed-fused-topk-topp", FusionElsewhere, "confirmed", 4, 4*fDur(topk, topp, sample))}
			}},
		{"router cast + GEMM", "vllm", "deepseek-ai/DeepSeek-V3", 8, []fk{cast, gemm, filler2},
			func(s string) []string {
				return []string{fLine(s, "vllm-dsv3-router-gemm", FusionOpportunity, "confirmed", 4, 4*fDur(cast, gemm))}
			}},
	}
	// each case a run of its own, all asked at once (matchesOf)
	runs := make([]int64, len(cases))
	for i, c := range cases {
		runs[i] = f.run(c.framework, c.model, c.tp)
		f.seq(f.traceOf(runs[i], 0, 0), "decode", 7, 0, fRepeat(4, c.layer...)...)
	}
	got := f.matchesOf(runs...)
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantFusions(t, got[runs[i]], c.want("decode")...)
		})
	}
}
