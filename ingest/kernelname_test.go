package ingest

import (
	"strings"
	"testing"
)

// Real kernel names as Kineto writes them (CUDA and ROCm), and the short
// names the triage report keys rows by.
var shortNameCases = []struct{ name, in, want string }{
	{"plain CUDA name kept", "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
		"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas"},
	{"triton name kept", "triton_poi_fused_add_mul_0", "triton_poi_fused_add_mul_0"},
	{"memcpy: arrow and parens kept, whitespace collapsed", "  Memcpy   HtoD\t(Pageable -> Device)\n", "Memcpy HtoD (Pageable -> Device)"},
	{"memset", "Memset (Device)", "Memset (Device)"},
	{"no void prefix: parameters kept", "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
		"ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)"},
	{"torch elementwise: templates kept, params dropped",
		"void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)",
		"void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, at::detail::Array<char*, 1> >"},
	{"anonymous namespace",
		"void (anonymous namespace)::cunn_SoftMaxForward<4, c10::BFloat16, float, c10::BFloat16, (anonymous namespace)::SoftMaxForwardEpilogue>(c10::BFloat16*, c10::BFloat16 const*, int)",
		"void (anonymous namespace)::cunn_SoftMaxForward<4, c10::BFloat16, float, c10::BFloat16, (anonymous namespace)::SoftMaxForwardEpilogue>"},
	{"lambdas with operator() inside template arguments",
		"void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl_nocast<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}>(at::TensorIteratorBase&, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1} const&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl_nocast<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}>(at::TensorIteratorBase&, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1} const&)::{lambda(int)#1})",
		"void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl_nocast<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}>(at::TensorIteratorBase&, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1} const&)::{lambda(int)#1}>"},
	{"cast with parens in template argument", "void foo<(int)3>(float*, int)", "void foo<(int)3>"},
	{"function-pointer parameter", "void foo<3>(void (*)(int))", "void foo<3>"},
	{"function pointer in template argument",
		"void vllm::act_and_mul_kernel<c10::BFloat16, &(float vllm::silu_kernel<float>(float const&)), true>(c10::BFloat16*, c10::BFloat16 const*, int)",
		"void vllm::act_and_mul_kernel<c10::BFloat16, &(float vllm::silu_kernel<float>(float const&)), true>"},
	{"flash-attn 2",
		"void flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::bfloat16_t, Flash_kernel_traits<128, 128, 64, 4, cutlass::bfloat16_t> >, false, true, false, false, true, true, false, false>(flash::Flash_fwd_params)",
		"void flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::bfloat16_t, Flash_kernel_traits<128, 128, 64, 4, cutlass::bfloat16_t> >, false, true, false, false, true, true, false, false>"},
	{"AITER demangled", "void aiter::add_rmsnorm_quant_kernel<std::bfloat16_t, 256, 8, true>(std::bfloat16_t*, std::bfloat16_t const*, std::bfloat16_t const*, float, int)",
		"void aiter::add_rmsnorm_quant_kernel<std::bfloat16_t, 256, 8, true>"},
	{"parameter list with space before it", "void foo<int> (int)", "void foo<int>"},
	{"operator() is a name, not a parameter list", "void Functor<float>::operator()(int)", "void Functor<float>::operator()"},
	{"operator() alone kept", "void Functor<float>::operator()", "void Functor<float>::operator()"},
	{"not a plain signature: kept whole", "void f(a)(b)", "void f(a)(b)"},
	{"unbalanced: kept", "void f(int))", "void f(int))"},
	{"trailing const: kept", "void X::f(int) const", "void X::f(int) const"},
	{"only a list", "void ()", "void"},
	{"hex address in template argument", "void kernel<(float*)0x7f3a2c000000>(float*)", "void kernel<(float*)0xADDR>"},
	{"hex literals", "fn 0x10UL, 0X1F,0xdeadBEEF;0x7f12", "fn 0xADDR, 0xADDR,0xADDR;0xADDR"},
	{"not hex literals", "foo0x1f 0x 0xg 0x1fg x0x1 0xADDR", "foo0x1f 0x 0xg 0x1fg x0x1 0xADDR"},
	{"hex digits of the placeholder stay", "0xADD", "0xADDR"},
	{"empty", "", ""},
	{"only spaces", " \t\n ", ""},
}

func TestShortName(t *testing.T) {
	t.Parallel()
	for _, c := range shortNameCases {
		got := ShortName(c.in)
		if got != c.want {
			t.Errorf("%s:\nShortName(%q)\n = %q\nwant %q", c.name, c.in, got, c.want)
		}
		if again := ShortName(got); again != got {
			t.Errorf("%s: not idempotent: %q -> %q", c.name, got, again)
		}
	}
}

func TestBaseName(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, want string }{
		{"void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, at::detail::Array<char*, 1> >", "void at::native::vectorized_elementwise_kernel"},
		{"void vllm::act_and_mul_kernel<c10::BFloat16, &(float vllm::silu_kernel<float>(float const&)), true>", "void vllm::act_and_mul_kernel"},
		{"void (anonymous namespace)::cunn_SoftMaxForward<4, c10::BFloat16, float, c10::BFloat16, (anonymous namespace)::SoftMaxForwardEpilogue>", "void (anonymous namespace)::cunn_SoftMaxForward"},
		{"void foo<(int)3>", "void foo"},
		{"A<B<C<D>>>::e<f>", "A::e"},
		{"foo<(1<<3)>::bar", "foo::bar"},
		{"foo<(a>b)>", "foo"},
		{"foo<decltype(std::declval<int>())>", "foo"},
		{"foo(bar<float>)", "foo(bar)"},
		{"bool std::operator< <int>(a)", "bool std::operator<(a)"},
		{"X::operator<<", "X::operator<<"},
		{"X::operator<=>", "X::operator<=>"},
		{"X::operator>>=", "X::operator>>="},
		{"X::operator->()", "X::operator->()"},
		{"a->b<int>", "a->b"},
		{"Memcpy HtoD (Pageable -> Device)", "Memcpy HtoD (Pageable -> Device)"},
		{"void <unnamed>::kernel<float>", "void <unnamed>::kernel"},
		{"a < b", "a < b"},
		{"x<y", "x<y"},
		{"x<y<z>", "x<y"},
		{"f<(int>", "f<(int>"},
		{"ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage)"},
		{"triton_poi_fused_add_mul_0", "triton_poi_fused_add_mul_0"},
		{"", ""},
	}
	for _, c := range cases {
		if got := BaseName(c.in); got != c.want {
			t.Errorf("BaseName(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestDemangle(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in   string
		want string
		ok   bool
	}{
		{"_ZN5aiter24add_rmsnorm_quant_kernelIDF16bLi256ELi8ELb1EEEvPT_PKS1_S4_fi",
			"void aiter::add_rmsnorm_quant_kernel<std::bfloat16_t, 256, 8, true>(std::bfloat16_t*, std::bfloat16_t const*, std::bfloat16_t const*, float, int)", true},
		// ROCm code-object symbols carry a .kd suffix: the same kernel.
		{"_ZN5aiter24add_rmsnorm_quant_kernelIfLi256EEEvPfPKfi.kd", "void aiter::add_rmsnorm_quant_kernel<float, 256>(float*, float const*, int)", true},
		{"_ZN5aiter39mla_dec_stage1_bf16_a16w16_subQ16_mqa16E", "aiter::mla_dec_stage1_bf16_a16w16_subQ16_mqa16", true},
		{"_ZN7ck_tile6kentryILi1ENS_13FmhaFwdKernelIiEEJNS1_5KargsEEEEvDpT1_",
			"void ck_tile::kentry<1, ck_tile::FmhaFwdKernel<int>, ck_tile::FmhaFwdKernel::Kargs>(ck_tile::FmhaFwdKernel::Kargs)", true},
		{"_ZN12_GLOBAL__N_110foo_kernelEPf", "(anonymous namespace)::foo_kernel(float*)", true},
		{"_ZZN2at6native18elementwise_kernelEvENKUliE_clEi", "at::native::elementwise_kernel()::{lambda(int)#1}::operator()(int) const", true},
		{"__ZN5aiter3fooEv", "aiter::foo()", true},
		{"_Z3fooILi3EEvPFviE", "void foo<3>(void (*)(int))", true},
		// Not mangled, or not demanglable: returned unchanged.
		{"Cijk_Ailk_Bljk_BBS_BH_MT128x128x64_MI16x16x16x1_SN_1LDSB0_GRVW8", "Cijk_Ailk_Bljk_BBS_BH_MT128x128x64_MI16x16x16x1_SN_1LDSB0_GRVW8", false},
		{"_fwd_kernel_stage1", "_fwd_kernel_stage1", false},
		{"void flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128> >(flash::Flash_fwd_params)", "void flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128> >(flash::Flash_fwd_params)", false},
		{"_Z", "_Z", false},
		{"_ZN", "_ZN", false},
		{"_ZN5aiter", "_ZN5aiter", false},
		{"_Zfoo", "_Zfoo", false},
		{"", "", false},
	}
	for _, c := range cases {
		got, ok := Demangle(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("Demangle(%q) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.ok)
		}
	}
	long := "_ZN5aiter" + strings.Repeat("9abcdefghi", maxMangledLen/10+1) + "Ev"
	if got, ok := Demangle(long); ok || got != long {
		t.Errorf("a %d-byte mangled name was demangled", len(long))
	}
}

func TestNormalizeKernelName(t *testing.T) {
	t.Parallel()
	f := NormalizeKernelName("_ZN5aiter24add_rmsnorm_quant_kernelIDF16bLi256ELi8ELb1EEEvPT_PKS1_S4_fi")
	want := KernelNameForms{
		Demangled: "void aiter::add_rmsnorm_quant_kernel<std::bfloat16_t, 256, 8, true>(std::bfloat16_t*, std::bfloat16_t const*, std::bfloat16_t const*, float, int)",
		Mangled:   true,
		Short:     "void aiter::add_rmsnorm_quant_kernel<std::bfloat16_t, 256, 8, true>",
		Base:      "void aiter::add_rmsnorm_quant_kernel",
		Display:   "add_rmsnorm_quant_kernel<…>",
	}
	if f != want {
		t.Errorf("mangled: got %+v\nwant %+v", f, want)
	}
	f = NormalizeKernelName("Memcpy  DtoD (Device -> Device)")
	want = KernelNameForms{Short: "Memcpy DtoD (Device -> Device)", Base: "Memcpy DtoD (Device -> Device)", Display: "Memcpy DtoD (Device -> Device)"}
	if f != want {
		t.Errorf("plain: got %+v, want %+v", f, want)
	}
}

// hugeNames are megabyte-long pathological kernel names.
func hugeNames() []string {
	const n = 1 << 20
	return []string{
		strings.Repeat("<", n),
		strings.Repeat("a<", n/2),
		strings.Repeat("a<b>", n/4),
		strings.Repeat("(", n),
		"void " + strings.Repeat("(", n/2) + strings.Repeat(")", n/2),
		"void f" + strings.Repeat("()", n/2),
		strings.Repeat("0x", n/2),
		strings.Repeat("0x1f ", n/5),
		"0x" + strings.Repeat("f", n) + "g",
		strings.Repeat(" \t", n/2),
		strings.Repeat("operator<", n/9),
		strings.Repeat("operator   -", n/12),
		"_Z" + strings.Repeat("N", n),
	}
}

// TestHugeNames: megabyte-long pathological names come out at most twice
// as long as they went in (an address becomes 0xADDR). A quadratic pass would make this test take minutes instead
// of milliseconds; BenchmarkHugeNames prints the rate.
func TestHugeNames(t *testing.T) {
	t.Parallel()
	for i, s := range hugeNames() {
		short := ShortName(s)
		if len(short) > 2*len(s) || len(BaseName(short)) > len(short) || len(BaseName(s)) > 2*len(s) {
			t.Errorf("name %d: short %d, base %d bytes of %d", i, len(short), len(BaseName(short)), len(s))
		}
		if d, ok := Demangle(s); ok && d == "" {
			t.Errorf("name %d: demangled to nothing", i)
		}
	}
}

// BenchmarkHugeNames: MB/s of pathological names through every name pass
// (linear passes give about the rate of ordinary names).
func BenchmarkHugeNames(b *testing.B) {
	names := hugeNames()
	var size int64
	for _, s := range names {
		size += int64(len(s))
	}
	b.SetBytes(size)
	for b.Loop() {
		for _, s := range names {
			BaseName(ShortName(s))
			BaseName(s)
			Demangle(s)
		}
	}
}

func FuzzShortName(f *testing.F) {
	for _, c := range shortNameCases {
		f.Add(c.in)
	}
	f.Add("void f(a)(b)(c)")
	f.Add("void  X::operator() (int) ")
	f.Add("0xADDRu 0x1fu(0x2)")
	f.Fuzz(func(t *testing.T, in string) {
		s := ShortName(in)
		if again := ShortName(s); again != s {
			t.Fatalf("not idempotent: %q -> %q -> %q", in, s, again)
		}
		if strings.Contains(s, "  ") {
			t.Fatalf("double space in %q", s)
		}
		if strings.Trim(s, " ") != s || strings.ContainsAny(s, "\t\n\r\v\f") {
			t.Fatalf("untrimmed or non-space whitespace in %q", s)
		}
		if len(s) > len(in)+len(hexPlaceholder)*strings.Count(in, "0") {
			t.Fatalf("short name %q longer than its input allows", s)
		}
		b := BaseName(s)
		if len(b) > len(s) {
			t.Fatalf("base name %q longer than %q", b, s)
		}
	})
}

func FuzzDemangle(f *testing.F) {
	f.Add("_ZN5aiter24add_rmsnorm_quant_kernelIDF16bLi256ELi8ELb1EEEvPT_PKS1_S4_fi")
	f.Add("_ZN7ck_tile6kentryILi1ENS_13FmhaFwdKernelIiEEJNS1_5KargsEEEEvDpT1_")
	f.Add("__ZZN2at6native18elementwise_kernelEvENKUliE_clEi.kd")
	f.Fuzz(func(t *testing.T, in string) {
		out, ok := Demangle(in)
		if !ok && out != in {
			t.Fatalf("failed demangle changed the name: %q -> %q", in, out)
		}
		if ok && out == "" {
			t.Fatalf("empty demangled name for %q", in)
		}
	})
}

func BenchmarkNormalizeKernelName(b *testing.B) {
	names := []string{
		shortNameCases[7].in,
		"_ZN5aiter24add_rmsnorm_quant_kernelIDF16bLi256ELi8ELb1EEEvPT_PKS1_S4_fi",
		"nvjet_tst_192x192_64x3_2x1_v_bz_coopB_TNT",
	}
	for b.Loop() {
		for _, n := range names {
			NormalizeKernelName(n)
		}
	}
}
