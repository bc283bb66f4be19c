package queries

import (
	"database/sql"
	"strings"
	"testing"

	"github.com/tracehouse/tracehouse/kernelname"
)

// demoFamilies pins the family of every kernel name of the demo traces
// (real kernel names of SGLang, vLLM, TensorRT-LLM and TokenSpeed runs),
// each by the head of its short name: a name takes the family of the
// longest head it starts with. Written by hand from what each kernel does.
var demoFamilies = []struct{ head, family string }{
	{"void flashinfer::activation::act_and_mul_kernel<__nv_bfloat16, &silu<f", "activation"},
	{"void vllm::act_and_mul_kernel<c10::BFloat16, &vllm::silu_kernel<c10::B", "activation"},
	{"_fwd_kernel_stage1", "attention"},
	{"_fwd_kernel_stage2", "attention"},
	{"fmha_v2_flash_attention_bf16_64_128_S_qkv_128_causal_sm90_kernel_nl_ti", "attention"},
	{"void cutlass::device_kernel<flash::enable_sm90_or_later<flash::FlashAt", "attention"},
	{"void flash::prepare_varlen_num_blocks_kernel<1, true>", "attention"},
	{"void flashinfer::BatchDecodeWithPagedKVCacheKernel<flashinfer::Default", "attention"},
	{"void flashinfer::BatchPrefillWithRaggedKVCacheKernel<flashinfer::Kerne", "attention"},
	{"xqa_kernel_dt_bf16_d_128_beam_1_kvt_bf16_pagedKV_32_nqpkv_8_m_8_sm_90", "attention"},
	{"ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "communication"},
	{"ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096", "communication"},
	{"void cross_device_reduce_1stage<__nv_bfloat16, 2>", "communication"},
	{"void vllm::cross_device_reduce_1stage<__nv_bfloat16, 2>", "communication"},
	{"void at::native::(anonymous namespace)::indexSelectLargeIndex<c10::BFl", "elementwise"},
	{"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunc", "elementwise"},
	{"void at::native::vectorized_elementwise_kernel<4, at::native::FillFunc", "elementwise"},
	{"nvjet_tst_128x256_64x4_1x2_h_bz_coopA_TNT", "gemm"},
	{"nvjet_tst_128x64_64x8_2x1_v_bz_TNT", "gemm"},
	{"nvjet_tst_128x8_64x12_2x1_v_bz_splitK_TNT", "gemm"},
	{"nvjet_tst_192x8_64x10_4x1_v_bz_TNN", "gemm"},
	{"nvjet_tst_256x8_64x6_2x1_v_bz_TNT", "gemm"},
	{"nvjet_tst_64x32_64x16_2x1_v_bz_bias_TNN", "gemm"},
	{"nvjet_tst_64x64_64x8_2x1_v_bz_TNT", "gemm"},
	{"nvjet_tst_64x8_64x16_4x1_v_bz_TNN", "gemm"},
	{"nvjet_tst_64x8_64x16_4x1_v_bz_TNT", "gemm"},
	{"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroups", "gemm"},
	{"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize256x128x64_warpgroups", "gemm"},
	{"void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64", "gemm"},
	{"void cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<cute:", "gemm"},
	{"void deep_gemm::sm100_fp8_gemm_1d1d_impl<(cute::UMMA::Major)0, (cute::", "gemm"},
	{"void (anonymous namespace)::set_mla_kv_buffer_kernel<64>", "kv_cache"},
	{"void (anonymous namespace)::store_kvcache<8, 128, c10::BFloat16>", "kv_cache"},
	{"void vllm::reshape_and_cache_flash_kernel<__nv_bfloat16, __nv_bfloat16", "kv_cache"},
	{"Memcpy DtoH (Device -> Pinned)", "memcpy"},
	{"Memcpy HtoD (Pageable -> Device)", "memcpy"},
	{"Memcpy HtoD (Pinned -> Device)", "memcpy"},
	{"Memset (Device)", "memset"},
	{"fused_moe_kernel", "moe"},
	{"void count_and_sort_expert_tokens_kernel<int>", "moe"},
	{"void moe_align_block_size_kernel<int>", "moe"},
	{"void moe_fused_gate_kernel<float, 256, 8, 4, 8>", "moe"},
	{"void moe_sum_reduce_kernel<c10::BFloat16, 8>", "moe"},
	{"void vllm::moe::moe_align_block_size_kernel<int>", "moe"},
	{"void vllm::moe::moe_sum_kernel<c10::BFloat16, 8>", "moe"},
	{"void vllm::moe::topkGatingSoftmax<4, 128, 4, 16, 32, int, float>", "moe"},
	{"void aiter::add_rmsnorm_quant_kernel<c10::BFloat16, 256, 8>", "norm"},
	{"void flashinfer::norm::FusedAddRMSNormKernel<8u, __nv_bfloat16>", "norm"},
	{"void flashinfer::norm::RMSNormKernel<8u, __nv_bfloat16>", "norm"},
	{"void vllm::fused_add_rms_norm_kernel<c10::BFloat16, 8>", "norm"},
	{"void vllm::rms_norm_kernel<c10::BFloat16>", "norm"},
	{"void at::native::(anonymous namespace)::tensor_kernel_scan_innermost_d", "other"},
	{"_per_token_group_quant_fp8", "quantize"},
	{"void at::native::sbtopk::gatherTopK<float, unsigned int, 2, false>", "reduce_topk"},
	{"void flashinfer::BatchQKApplyRotaryPosIdsCosSinCache<true, 64u, 8u, 16", "rope"},
	{"void tensorrt_llm::kernels::applyBiasRopeUpdateKVCacheV2<__nv_bfloat16", "rope"},
	{"void vllm::rotary_embedding_kernel<c10::BFloat16, true>", "rope"},
	{"void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at:", "sampling"},
	{"void flashinfer::sampling::TopKTopPSamplingFromProbKernel<1024u, (cub:", "sampling"},
	{"void tensorrt_llm::kernels::topKStage1<float, 128, 8>", "sampling"},
	{"void at::native::(anonymous namespace)::cunn_SoftMaxForward<8, float, ", "softmax"},
}

// TestDemoKernelFamilies: every kernel name the demo holds has the family
// pinned above, and every pinned head names a kernel of the demo.
func TestDemoKernelFamilies(t *testing.T) {
	t.Parallel()
	db := demoDB(t)
	rows, err := db.Query(`SELECT short_name, family FROM kernel_names ORDER BY short_name`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	used := make([]bool, len(demoFamilies))
	n := 0
	for rows.Next() {
		var name, fam string
		if err := rows.Scan(&name, &fam); err != nil {
			t.Fatal(err)
		}
		n++
		best := -1
		for i, p := range demoFamilies {
			if strings.HasPrefix(name, p.head) && (best < 0 || len(p.head) > len(demoFamilies[best].head)) {
				best = i
			}
		}
		if best < 0 {
			t.Errorf("demo kernel %q (%s) is not pinned", name, fam)
			continue
		}
		used[best] = true
		if want := demoFamilies[best].family; fam != want {
			t.Errorf("%s: family %s, want %s", name, fam, want)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for i, u := range used {
		if !u {
			t.Errorf("pinned head %q names no demo kernel", demoFamilies[i].head)
		}
	}
	if n < 60 {
		t.Errorf("only %d demo kernel names", n)
	}
}

// TestDemoDisplayNames: ingest stores every name's display name, the one
// kernelname.Display gives its short name, and within each stage of each
// demo run the kernel labels are distinct.
func TestDemoDisplayNames(t *testing.T) {
	t.Parallel()
	db := demoDB(t)
	rows, err := db.Query(`SELECT n.short_name, n.display_name, r.label, k.stage
		FROM kernel_names n
		JOIN (SELECT DISTINCT run_id, stage, name_id FROM kernels) k USING (name_id)
		JOIN runs r USING (run_id)
		ORDER BY r.label, k.stage, n.short_name`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	tables := map[string][]string{}
	for rows.Next() {
		var short, run, stage string
		var display sql.NullString
		if err := rows.Scan(&short, &display, &run, &stage); err != nil {
			t.Fatal(err)
		}
		if want := kernelname.Display(short); !display.Valid || display.String != want {
			t.Errorf("%s: display_name %v, want %q", short, display, want)
		}
		tables[run+" "+stage] = append(tables[run+" "+stage], short)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for table, names := range tables {
		seen := map[string]string{}
		for i, l := range kernelname.Labels(names) {
			if o, ok := seen[l]; ok {
				t.Errorf("%s: label %q for %s and %s", table, l, o, names[i])
			}
			seen[l] = names[i]
		}
	}
}
