package synth

import "strconv"

// vllmTree is a vLLM V1 worker step (eager, or a full CUDA graph for decode).
func vllmTree(opt Options, fam modelFamily, stage string) (*stepTree, *builder) {
	site := "/opt/venv/lib/python3.12/site-packages/"
	b := newBuilder(site, "vllm/", site)
	p := func(rel string) string { return b.py("vllm/" + rel) }
	w := func(rel string) string { return b.wrap("vllm/" + rel) }
	dec := stage == StageDecode
	tp := opt.Ranks
	mfile := "model_executor/models/" + fam.file + ".py"

	norm := kern("void vllm::fused_add_rms_norm_kernel<c10::BFloat16, 8>(c10::BFloat16*, c10::BFloat16*, c10::BFloat16 const*, float, int, int)", 41000, 3400).launch(dims(4096, 1, 1), dims(512, 1, 1), 30, 0, 45)
	normFirst := kern("void vllm::rms_norm_kernel<c10::BFloat16>(c10::BFloat16*, c10::BFloat16 const*, c10::BFloat16 const*, float, int, int)", 37000, 3000).launch(dims(4096, 1, 1), dims(1024, 1, 1), 26, 0, 45)
	qkNorm := kern("void vllm::rms_norm_kernel<c10::BFloat16>(c10::BFloat16*, c10::BFloat16 const*, c10::BFloat16 const*, float, int, int)", 18000, 2200).launch(dims(65536, 1, 1), dims(128, 1, 1), 26, 0, 60)
	gemmQKV := kern(kGemmXmma128, 160000, 0).launch(dims(40, 32, 1), dims(128, 1, 1), 168, 197632, 6)
	gemmO := kern(kGemmXmma128, 120000, 0).launch(dims(32, 32, 1), dims(128, 1, 1), 168, 197632, 6)
	if dec {
		gemmQKV = kern(kNvjetQKV, 0, 9100).launch(dims(80, 1, 1), dims(128, 1, 1), 168, 99328, 6)
		gemmO = kern(kNvjetSplitK, 0, 6200).launch(dims(32, 1, 3), dims(128, 1, 1), 168, 132096, 6)
	}
	rope := kern(kRotaryVLLM, 22000, 2000).launch(dims(4096, 1, 1), dims(256, 1, 1), 32, 0, 72)
	cache := kern("void vllm::reshape_and_cache_flash_kernel<__nv_bfloat16, __nv_bfloat16, (vllm::Fp8KVCacheDataType)0>(__nv_bfloat16 const*, __nv_bfloat16 const*, __nv_bfloat16*, __nv_bfloat16*, long const*, long, long, long, long, int, int, int, float const*, float const*)", 19000, 1800).launch(dims(4096, 1, 1), dims(512, 1, 1), 28, 0, 70)
	fa3 := kern("void cutlass::device_kernel<flash::enable_sm90_or_later<flash::FlashAttnFwdSm90<flash::CollectiveMainloopFwdSm90<2, cute::tuple<cute::C<1>, cute::C<1>, cute::C<1> >, cute::tuple<cute::C<128>, cute::C<128>, cute::C<128> >, 128, cutlass::bfloat16_t, float, cutlass::arch::Sm90, true, false, false, true, true, false, false, true, true, true, false, false>, flash::CollectiveEpilogueFwd<cute::tuple<cute::C<128>, cute::C<128>, cute::C<128> >, cute::tuple<cute::C<1>, cute::C<1>, cute::C<1> >, cutlass::bfloat16_t, cutlass::arch::Sm90, 256, true, true, false, false>, flash::VarlenDynamicPersistentTileScheduler<128, 128, 256, 128, false, true, true, true, true, true> > > >(flash::FlashAttnFwdSm90<flash::CollectiveMainloopFwdSm90<2, cute::tuple<cute::C<1>, cute::C<1>, cute::C<1> >, cute::tuple<cute::C<128>, cute::C<128>, cute::C<128> >, 128, cutlass::bfloat16_t, float, cutlass::arch::Sm90, true, false, false, true, true, false, false, true, true, true, false, false>, flash::CollectiveEpilogueFwd<cute::tuple<cute::C<128>, cute::C<128>, cute::C<128> >, cute::tuple<cute::C<1>, cute::C<1>, cute::C<1> >, cutlass::bfloat16_t, cutlass::arch::Sm90, 256, true, true, false, false>, flash::VarlenDynamicPersistentTileScheduler<128, 128, 256, 128, false, true, true, true, true, true> >::Params)", 480000, 13900).launch(dims(132, 1, 1), dims(384, 1, 1), 128, 156672, 12)
	prepFA := kern("void flash::prepare_varlen_num_blocks_kernel<1, true>(int, int, int, int const*, int const*, int const*, int const*, int const*, int const*, int, int, int, int, int, cutlass::FastDivmod, cutlass::FastDivmod, int*, int*, bool)", 2600, 2400).launch(dims(1, 1, 1), dims(1024, 1, 1), 32, 0, 3)
	act := kern("void vllm::act_and_mul_kernel<c10::BFloat16, &vllm::silu_kernel<c10::BFloat16>, true>(c10::BFloat16*, c10::BFloat16 const*, int)", 44000, 3000).launch(dims(4096, 1, 1), dims(1024, 1, 1), 22, 0, 85)
	customAR := kern("void vllm::cross_device_reduce_1stage<__nv_bfloat16, "+strconv.Itoa(tp)+">(vllm::RankData*, vllm::RankSignals, vllm::Signal*, __nv_bfloat16*, int, int)", 0, 7400).launch(dims(132, 1, 1), dims(512, 1, 1), 38, 0, 50)
	// pynccl launches on the current stream and bypasses c10d, so the
	// kernel carries no collective metadata.
	pyNCCL := kern(kNCCLAllReduce, 121000, 0).launch(dims(4, 1, 1), dims(640, 1, 1), 96, 0, 2).via("cudaLaunchKernelExC")

	opc := b.opCall()
	rmsNorm := func(k *kspec, fused bool) *node {
		f, op := p("_custom_ops.py(321): rms_norm"), "_C::rms_norm"
		if fused {
			f, op = p("_custom_ops.py(330): fused_add_rms_norm"), "_C::fused_add_rms_norm"
		}
		return call(fr(b.mod("RMSNorm"), w("model_executor/custom_op.py(44): forward"), p("model_executor/layers/layernorm.py(229): forward_cuda"), f, opc), []string{op}, k)
	}
	linear := func(class string, g *kspec, bias bool) *node {
		ops := []string{"aten::linear", "aten::matmul", "aten::mm"}
		if bias {
			ops = []string{"aten::linear", "aten::addmm"}
		}
		return call(fr(b.mod(class), p("model_executor/layers/linear.py(563): forward"), p("model_executor/layers/linear.py(228): apply"),
			p("model_executor/layers/utils.py(98): default_unquantized_gemm"), b.builtin("function linear")), ops, g)
	}
	allReduce := func() *node {
		if tp < 2 {
			return nil
		}
		top := fr(p("distributed/communication_op.py(13): tensor_model_parallel_all_reduce"), p("distributed/parallel_state.py(483): all_reduce"), opc)
		if dec {
			nd := n(top, call(fr(p("distributed/parallel_state.py(129): all_reduce"), p("distributed/parallel_state.py(517): _all_reduce_out_place"),
				p("distributed/device_communicators/cuda_communicator.py(141): all_reduce"),
				p("distributed/device_communicators/custom_all_reduce.py(286): custom_all_reduce"),
				p("_custom_ops.py(1806): all_reduce"), opc), []string{"_C_custom_ar::all_reduce"}, customAR))
			return wrapOps(nd, "vllm::all_reduce")
		}
		nd := n(top, call(fr(p("distributed/parallel_state.py(129): all_reduce"), p("distributed/parallel_state.py(517): _all_reduce_out_place"),
			p("distributed/device_communicators/cuda_communicator.py(153): all_reduce"),
			p("distributed/device_communicators/pynccl.py(140): all_reduce"), p("distributed/device_communicators/pynccl_wrapper.py(348): ncclAllReduce")), nil, pyNCCL))
		return wrapOps(nd, "vllm::all_reduce")
	}
	ar := func() []*node {
		if x := allReduce(); x != nil {
			return []*node{x}
		}
		return nil
	}

	attnBlock := func() *node {
		kids := []*node{linear("QKVParallelLinear", gemmQKV, fam.name == "qwen")}
		if fam.name == "qwen" {
			kids = append(kids, rmsNorm(qkNorm, false), rmsNorm(qkNorm, false))
		}
		attnKids := []*node{
			call(fr(p("v1/attention/backends/flash_attn.py(584): forward"), opc), []string{"_C_cache_ops::reshape_and_cache_flash"}, cache),
			call(fr(p("vllm_flash_attn/flash_attn_interface.py(233): flash_attn_varlen_func"), opc), []string{"_vllm_fa3_C::fwd"}, prepFA, fa3),
		}
		kids = append(kids,
			call(fr(b.mod("RotaryEmbedding"), w("model_executor/custom_op.py(44): forward"), p("model_executor/layers/rotary_embedding/base.py(176): forward_cuda"),
				p("_custom_ops.py(296): rotary_embedding"), opc), []string{"_C::rotary_embedding"}, rope),
			wrapOps(n(fr(b.mod("Attention"), p("attention/layer.py(312): forward"), opc, p("attention/layer.py(561): unified_attention_with_output")), attnKids...),
				"vllm::unified_attention_with_output"),
			linear("RowParallelLinear", gemmO, false))
		kids = append(kids, ar()...)
		return n(fr(b.mod(fam.attn), p(mfile+"(236): forward")), kids...)
	}

	mlpBlock := func() *node {
		if !opt.MoE {
			up := kern(kNvjetBig, 560000, 0).launch(dims(132, 1, 1), dims(384, 1, 1), 168, 221184, 9)
			down := kern(kGemmXmma256, 300000, 0).launch(dims(16, 32, 1), dims(256, 1, 1), 168, 221184, 6)
			if dec {
				up = kern(kNvjetUp, 0, 24000).launch(dims(112, 1, 1), dims(128, 1, 1), 168, 198656, 6)
				down = kern(kNvjetSplitK, 0, 14500).launch(dims(32, 1, 4), dims(128, 1, 1), 168, 132096, 6)
			}
			kids := []*node{linear("MergedColumnParallelLinear", up, false),
				call(fr(b.mod("SiluAndMul"), w("model_executor/custom_op.py(44): forward"), p("model_executor/layers/activation.py(84): forward_cuda"), opc),
					[]string{"_C::silu_and_mul"}, act),
				linear("RowParallelLinear", down, false)}
			kids = append(kids, ar()...)
			return n(fr(b.mod(fam.mlp), p(mfile+"(96): forward")), kids...)
		}
		gate := kern("nvjet_tst_64x8_64x16_4x1_v_bz_TNN", 17000, 3900).launch(dims(8, 1, 1), dims(128, 1, 1), 168, 99328, 6)
		topk := kern("void vllm::moe::topkGatingSoftmax<4, 128, 4, 16, 32, int, float>(float const*, bool const*, float*, int, int*, int*, int, int, int)", 12000, 3100).launch(dims(64, 1, 1), dims(128, 1, 1), 40, 0, 30)
		align := kern("void vllm::moe::moe_align_block_size_kernel<int>(int const*, int*, int*, int*, int, int, int, int, unsigned long, int*)", 8800, 4300).launch(dims(1, 1, 1), dims(1024, 1, 1), 32, 8192, 3)
		w13 := kern(kFusedMoE, 700000, 38000).launch(dims(2048, 1, 1), dims(128, 1, 1), 255, 81920, 12).via("cuLaunchKernel")
		w2 := kern(kFusedMoE, 380000, 21000).launch(dims(1024, 1, 1), dims(128, 1, 1), 255, 81920, 12).via("cuLaunchKernel")
		sum := kern("void vllm::moe::moe_sum_kernel<c10::BFloat16, 8>(c10::BFloat16*, c10::BFloat16 const*, int)", 28000, 3100).launch(dims(4096, 1, 1), dims(1024, 1, 1), 24, 0, 75)
		fm := func(rel string) string { return p("model_executor/layers/fused_moe/" + rel) }
		experts := wrapOps(n(fr(b.mod("FusedMoE"), fm("layer.py(1683): forward"), opc, fm("layer.py(2061): moe_forward"), fm("layer.py(1812): forward_impl"),
			fm("layer.py(402): forward_cuda")),
			call(fr(fm("fused_moe.py(1024): fused_topk"), opc), []string{"_moe_C::topk_softmax"}, topk),
			call(fr(fm("fused_moe.py(1602): fused_experts_impl"), fm("moe_align_block_size.py(84): moe_align_block_size"), opc), []string{"_moe_C::moe_align_block_size"}, align),
			call(fr(fm("fused_moe.py(1602): fused_experts_impl"), fm("fused_moe.py(742): invoke_fused_moe_kernel"), b.tritonFrames()), nil, w13),
			call(fr(fm("fused_moe.py(1602): fused_experts_impl"), opc), []string{"_C::silu_and_mul"}, act),
			call(fr(fm("fused_moe.py(1602): fused_experts_impl"), fm("fused_moe.py(742): invoke_fused_moe_kernel"), b.tritonFrames()), nil, w2),
			call(fr(fm("fused_moe.py(1602): fused_experts_impl"), p("_custom_ops.py(1611): moe_sum"), opc), []string{"_moe_C::moe_sum"}, sum),
		), "vllm::moe_forward")
		kids := []*node{
			call(fr(b.mod("ReplicatedLinear"), p("model_executor/layers/linear.py(318): forward"), b.builtin("function linear")), []string{"aten::linear", "aten::mm"}, gate),
			experts,
		}
		kids = append(kids, ar()...)
		return n(fr(b.mod(fam.moe), p(mfile+"(152): forward")), kids...)
	}

	embed := kern(kIndexSelect, 39000, 2900).launch(dims(1024, 1, 1), dims(128, 4, 1), 30, 0, 60)
	modelKids := []*node{call(fr(b.mod("VocabParallelEmbedding"), p("model_executor/layers/vocab_parallel_embedding.py(461): forward"), b.builtin("function embedding")),
		[]string{"aten::embedding", "aten::index_select"}, embed)}
	for i := 0; i < opt.Layers; i++ {
		in := rmsNorm(norm, true)
		if i == 0 {
			in = rmsNorm(normFirst, false)
		}
		modelKids = append(modelKids, n(fr(b.mod(fam.layer), p(mfile+"(342): forward")), in, attnBlock(), rmsNorm(norm, true), mlpBlock()))
	}
	modelKids = append(modelKids, rmsNorm(norm, true))
	model := n(fr(b.mod(fam.causalLM), p(mfile+"(689): forward"), w("compilation/decorators.py(239): __call__")),
		n(fr(b.mod(fam.model), p(mfile+"(401): forward")), modelKids...))

	lmHead := kern(kNvjetLogits, 58000, 49000).launch(dims(1002, 1, 1), dims(128, 1, 1), 168, 99328, 6)
	logits := []*node{call(fr(p("model_executor/layers/logits_processor.py(98): _get_logits"), p("model_executor/layers/vocab_parallel_embedding.py(51): apply"),
		b.builtin("function linear")), []string{"aten::linear", "aten::matmul", "aten::mm"}, lmHead)}
	if tp >= 2 {
		ag := kern(kNCCLAllGather, 17000, 13500).launch(dims(2, 1, 1), dims(640, 1, 1), 96, 0, 2).on(sComm).collective("allgather")
		nd := call(fr(p("distributed/communication_op.py(19): tensor_model_parallel_gather"), p("distributed/parallel_state.py(575): gather"),
			b.tp("torch/distributed/c10d_logger.py(81): wrapper"), b.tp("torch/distributed/distributed_c10d.py(4290): gather")),
			[]string{"c10d::gather_", "record_param_comms", "nccl:gather"}, ag)
		nd.leaf.comm = true
		// the sampler needs the gathered logits
		logits = append(logits, nd)
	}
	fill := kern(kFillMangled, 1300, 1200).launch(dims(1, 1, 1), dims(128, 1, 1), 16, 0, 3).mayZero()
	tok := int64(8192)
	if dec {
		tok = 512
	}
	prologue := []*node{
		n(fr(p("v1/worker/gpu_model_runner.py(1187): _prepare_inputs")),
			call(fr(p("v1/worker/gpu_input_batch.py(402): copy_to_gpu"), b.builtin("method copy_ of Tensor object at 0x7f1c2b3a4d50")),
				[]string{"aten::copy_"}, memcpyK(kMemcpyHtoDPin, tok, 3100, 1700)),
			call(fr(p("v1/worker/block_table.py(118): commit_block_table"), b.builtin("method copy_ of Tensor object at 0x7f1c2b3a5e60")),
				[]string{"aten::copy_"}, memcpyK(kMemcpyHtoD, 16384, 4100, 3900)),
			call(fr(p("v1/worker/gpu_model_runner.py(1290): _prepare_inputs"), b.builtin("method fill_ of Tensor object at 0x7f1c2b3a6f70")), []string{"aten::fill_"}, fill),
			call(fr(p("v1/attention/backends/flash_attn.py(262): build"), b.builtin("method zero_ of Tensor object at 0x7f1c2b3a7a80")), []string{"aten::zero_"}, memsetK(2048, 1200, 1100))),
	}
	softmax := kern(kSoftmax, 21000, 20000).launch(dims(32, 1, 1), dims(1024, 1, 1), 30, 0, 50)
	topkS := kern(kGatherTopK, 19000, 18500).launch(dims(32, 1, 1), dims(1024, 1, 1), 40, 0, 40)
	argmax := kern(kArgmax, 9100, 8900).launch(dims(32, 1, 1), dims(32, 16, 1), 32, 4096, 25)
	epilogue := []*node{
		n(fr(p("v1/worker/gpu_model_runner.py(2210): compute_logits"), p(mfile+"(703): compute_logits"), b.mod("LogitsProcessor"),
			p("model_executor/layers/logits_processor.py(62): forward")), logits...),
		n(fr(b.mod("Sampler"), p("v1/sample/sampler.py(84): forward")),
			call(fr(p("v1/sample/sampler.py(166): sample"), p("v1/sample/ops/topk_topp_sampler.py(118): forward_native"), b.builtin("method topk of Tensor object at 0x7f1c2b3a8b90")), []string{"aten::topk"}, topkS),
			call(fr(p("v1/sample/sampler.py(166): sample"), b.builtin("method softmax of Tensor object at 0x7f1c2b3a9ca0")), []string{"aten::softmax", "aten::_softmax"}, softmax),
			call(fr(p("v1/sample/sampler.py(134): greedy_sample"), b.builtin("method argmax of Tensor object at 0x7f1c2b3aadb0")), []string{"aten::argmax"}, argmax)),
		call(fr(p("v1/worker/gpu_model_runner.py(2388): _to_list"), b.builtin("method tolist of Tensor object at 0x7f1c2b3abec0")),
			[]string{"aten::to", "aten::_to_copy", "aten::copy_"}, memcpyK(kMemcpyDtoH, 256, 2000, 1900)),
	}
	epilogue[len(epilogue)-1].leaf.sync = true
	second := call(fr(p("v1/worker/gpu_model_runner.py(203): _async_copy_to_cpu"), b.builtin("method to of Tensor object at 0x7f1c2b3acfd0")),
		[]string{"aten::to", "aten::_to_copy", "aten::copy_"}, sideCopy(memcpyK(kMemcpyDtoH, 2048, 1800, 1750)))
	second.leaf.sync = true

	st := &stepTree{
		outer: fr(b.std("multiprocessing/process.py(314): _bootstrap"), b.std("multiprocessing/process.py(108): run"),
			w("v1/executor/multiproc_executor.py(576): worker_main"), w("v1/executor/multiproc_executor.py(634): worker_busy_loop")),
		outer2: fr(b.std("threading.py(1075): _bootstrap_inner"), b.std("threading.py(1012): run"),
			w("v1/executor/multiproc_executor.py(521): async_output_busy_loop")),
		pre: fr(w("v1/worker/worker_base.py(342): execute_model"), w("v1/worker/gpu_worker.py(447): execute_model"),
			b.tp("torch/utils/_contextlib.py(120): decorate_context"), w("v1/worker/gpu_model_runner.py(2271): execute_model"),
			w("v1/worker/gpu_model_runner.py(2107): _model_forward")),
		annoAt:   4,
		prologue: prologue,
		model:    model,
		graph: fr(w("compilation/cuda_graph.py(195): __call__"), b.tp("torch/cuda/graphs.py(118): replay"),
			b.builtin("method replay of CUDAGraph object at 0x7f1c2b3ad0e0")),
		epilogue: epilogue,
		second:   second,
	}
	return st, b
}

// wrapOps makes the first ops-less level of nd open cpu ops around its
// children (a custom op that calls other ops, like vllm::moe_forward).
func wrapOps(nd *node, ops ...string) *node {
	return &node{frames: nd.frames, kids: nd.kids, leaf: nd.leaf, ops: ops}
}
