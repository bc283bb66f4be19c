package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
)

// Dense traces for the memory rows, written here rather than by synth
// (whose recipes give 12 events and about 3 KB of JSON per GPU event):
//
//   - tiny: small events, seven per GPU event (four nested Python frames,
//     a CPU op, its launch and the kernel, as an eager PyTorch step with
//     shallow stacks), about 130 bytes each: 1 GB is about 7.5 M events and
//     1.1 M GPU events, the "7 M-event trace";
//   - kernels: GPU events and their launches only, Kineto's full kernel
//     arguments (grid, block, registers, ...), about 2.2 M kernels per GB;
//     one kernel in 16 has a name of its own (Triton-style), the rest come
//     from 40 names.
//
// Both run steps of 1,000 kernels marked by SGLang step annotations (CPU
// and GPU), one kernel in 8 being an all-reduce on a second stream that
// overlaps the next kernel, so the overlap, steps, fuse-pattern and
// overlap-table rows all have work. Times are exact microseconds with
// three decimals from a fixed epoch start, so the files are deterministic.
const (
	kindTiny    = "tiny"
	kindKernels = "kernels"
	opsPerStep  = 1000
)

var kernelNames = func() []string {
	base := []string{
		"void flashinfer::BatchDecodeWithPagedKVCacheKernel<128u, 8u, 16u>(Params)",
		"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
		"void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<c10::BFloat16>, at::detail::Array<char*, 1> >(int, at::native::FillFunctor<c10::BFloat16>, at::detail::Array<char*, 1>)",
		"void flashinfer::norm::RMSNormKernel<8u, __nv_bfloat16>(__nv_bfloat16*, __nv_bfloat16*, __nv_bfloat16*, unsigned int, unsigned int, unsigned int, float, float)",
		"void flashinfer::activation::act_and_mul_kernel<__nv_bfloat16, &silu>(__nv_bfloat16*, __nv_bfloat16 const*, int)",
		"void vllm::rotary_embedding_kernel<c10::BFloat16, true>(long const*, c10::BFloat16*, c10::BFloat16*, c10::BFloat16 const*, int, long, long, int, int, int)",
		"void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::ArgMaxOps<float>, unsigned int, long, 4> >(at::native::ReduceOp<float, at::native::ArgMaxOps<float>, unsigned int, long, 4>)",
		"triton_poi_fused_add_mul_0",
	}
	var out []string
	for i := 0; len(out) < 40; i++ {
		out = append(out, fmt.Sprintf("%s_v%d", base[i%len(base)], i/len(base)))
	}
	return out
}()

const allReduce = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)"

var (
	pyFrames = []string{"python/sglang/srt/model_executor/model_runner.py(1203): forward", "python/sglang/srt/models/llama.py(412): forward",
		"python/sglang/srt/layers/linear.py(288): forward", "torch/nn/modules/module.py(1750): _call_impl"}
	cpuOps = []string{"aten::mm", "aten::add", "aten::mul", "aten::silu", "aten::copy_", "aten::fill_", "aten::argmax", "aten::empty"}
)

// denseWriter writes one dense trace.
type denseWriter struct {
	w      *bufio.Writer
	kind   string
	first  bool
	b      []byte
	events int64
	bytes  int64 // written so far
}

// writeDense writes a trace of kind of about size bytes to path and
// returns its number of events and GPU events.
func writeDense(path, kind string, size int64) (events, gpu int64, err error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, 0, err
	}
	d := &denseWriter{w: bufio.NewWriterSize(f, 1<<20), kind: kind, first: true}
	d.w.WriteString(`{"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85029158912, "numSms": 132}],` + "\n" + `"traceEvents": [` + "\n")
	const start = int64(1_751_400_000_000_000_000) // ns
	var written int64
	t := start
	var corr, pyID int64
	for step := 0; written < size; step++ {
		stepStart := t
		// The CPU side of the step: for each op its frames, op and launch,
		// 3 us apart; kernels run 2 us after their launch, 1-5 us each.
		type gpuEv struct {
			name         string
			ts, dur      int64
			stream, corr int64
		}
		kernels := make([]gpuEv, 0, opsPerStep)
		gpuT := t + 2000
		for op := 0; op < opsPerStep; op++ {
			corr++
			launch := t + 1000
			if d.kind == kindTiny {
				parent := int64(0)
				for depth, name := range pyFrames {
					pyID++
					off := int64(depth) * 100
					d.py(name, t+off, 2800-2*off, pyID, parent)
					parent = pyID
				}
				d.cpuOp(cpuOps[op%len(cpuOps)], t+500, 1800, corr)
			}
			d.launch(launch, 500, corr)
			name := kernelNames[(op*7+step)%len(kernelNames)]
			if op%16 == 5 {
				name = fmt.Sprintf("triton_red_fused_%d_%d", step, op)
			}
			dur := int64(1000 + (op*37+step*11)%4000)
			gpuT = max(gpuT, launch+2000)
			kernels = append(kernels, gpuEv{name, gpuT, dur, 7, corr})
			if op%8 == 3 {
				corr++
				d.launch(launch+600, 300, corr)
				kernels = append(kernels, gpuEv{allReduce, gpuT + dur/2, 3000, 9, corr})
			}
			gpuT += dur + 200
			t += 3000
		}
		d.annotation("user_annotation", 1, 1, stepStart, t-stepStart)
		for _, k := range kernels {
			d.kernel(k.name, k.ts, k.dur, k.stream, k.corr)
		}
		d.annotation("gpu_user_annotation", 0, 7, stepStart+2000, gpuT-stepStart-2000)
		gpu += int64(len(kernels))
		t = max(t, gpuT) + 10_000
		written = d.bytes
	}
	d.w.WriteString("\n]}\n")
	if err := d.w.Flush(); err != nil {
		f.Close()
		return 0, 0, err
	}
	return d.events, gpu, f.Close()
}

// head starts an event: the separator, then the head every X event shares.
func (d *denseWriter) head(cat, name string, pid, tid, ts, dur int64) {
	d.b = d.b[:0]
	if !d.first {
		d.b = append(d.b, ",\n"...)
	}
	d.first = false
	d.events++
	d.b = append(d.b, `{"ph":"X","cat":"`...)
	d.b = append(d.b, cat...)
	d.b = append(d.b, `","name":`...)
	d.b = strconv.AppendQuote(d.b, name)
	d.b = append(d.b, `,"pid":`...)
	d.b = strconv.AppendInt(d.b, pid, 10)
	d.b = append(d.b, `,"tid":`...)
	d.b = strconv.AppendInt(d.b, tid, 10)
	d.b = append(d.b, `,"ts":`...)
	d.b = appendMicros(d.b, ts)
	d.b = append(d.b, `,"dur":`...)
	d.b = appendMicros(d.b, dur)
}

func (d *denseWriter) end() {
	d.w.Write(d.b)
	d.bytes += int64(len(d.b))
}

func (d *denseWriter) py(name string, ts, dur, id, parent int64) {
	d.head("python_function", name, 1, 1, ts, dur)
	d.b = append(d.b, `,"args":{"Python parent id":`...)
	d.b = strconv.AppendInt(d.b, parent, 10)
	d.b = append(d.b, `,"Python id":`...)
	d.b = strconv.AppendInt(d.b, id, 10)
	d.b = append(d.b, "}}"...)
	d.end()
}

func (d *denseWriter) cpuOp(name string, ts, dur, ext int64) {
	d.head("cpu_op", name, 1, 1, ts, dur)
	d.b = append(d.b, `,"args":{"External id":`...)
	d.b = strconv.AppendInt(d.b, ext, 10)
	d.b = append(d.b, "}}"...)
	d.end()
}

func (d *denseWriter) launch(ts, dur, corr int64) {
	d.head("cuda_runtime", "cudaLaunchKernel", 1, 1, ts, dur)
	d.b = append(d.b, `,"args":{"External id":`...)
	d.b = strconv.AppendInt(d.b, corr, 10)
	d.b = append(d.b, `,"cbid":211,"correlation":`...)
	d.b = strconv.AppendInt(d.b, corr, 10)
	d.b = append(d.b, "}}"...)
	d.end()
}

func (d *denseWriter) kernel(name string, ts, dur, stream, corr int64) {
	d.head("kernel", name, 0, stream, ts, dur)
	d.b = append(d.b, `,"args":{"External id":`...)
	d.b = strconv.AppendInt(d.b, corr, 10)
	d.b = append(d.b, `,"device":0,"stream":`...)
	d.b = strconv.AppendInt(d.b, stream, 10)
	d.b = append(d.b, `,"correlation":`...)
	d.b = strconv.AppendInt(d.b, corr, 10)
	if d.kind == kindKernels {
		d.b = append(d.b, `,"registers per thread":128,"shared memory":98304,"blocks per SM":1.939394,"warps per SM":7.757576,"grid":[256,1,1],"block":[128,1,1],"est. achieved occupancy %":12`...)
	}
	d.b = append(d.b, "}}"...)
	d.end()
}

func (d *denseWriter) annotation(cat string, pid, tid, ts, dur int64) {
	d.head(cat, "step[DECODE bs=64]", pid, tid, ts, dur)
	d.b = append(d.b, "}"...)
	d.end()
}

// appendMicros writes ns as microseconds with three decimals (exact).
func appendMicros(b []byte, ns int64) []byte {
	b = strconv.AppendInt(b, ns/1000, 10)
	r := ns % 1000
	return append(b, '.', byte('0'+r/100), byte('0'+r/10%10), byte('0'+r%10))
}
