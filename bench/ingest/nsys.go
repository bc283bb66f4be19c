package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"time"

	"github.com/tracehouse/tracehouse/ingest"
	"github.com/tracehouse/tracehouse/nsys/nsystest"
	"github.com/tracehouse/tracehouse/schema"
)

// benchNsys measures ingest of one Nsight Systems export holding about
// kernels kernels (with one runtime call each, and NVTX step and layer
// ranges around them), written once into data by nsystest. The figure is
// rows (GPU events + runtime calls + NVTX ranges) per second.
func benchNsys(ctx context.Context, data string, kernels int64, jobs int, cpuprof string) error {
	dir := filepath.Join(data, fmt.Sprintf("nsys-%dk", kernels/1000))
	path := filepath.Join(dir, "decode", "profile-TP-0.sqlite")
	if _, err := os.Stat(filepath.Join(dir, "done")); err != nil {
		fmt.Fprintf(os.Stderr, "generating an nsys export of %d kernels into %s\n", kernels, path)
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
		if err := writeNsysBench(path, kernels); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, "done"), nil, 0o644); err != nil {
			return err
		}
	}
	db := filepath.Join(data, "bench-nsys.duckdb")
	os.Remove(db)
	os.Remove(db + ".wal")
	w, err := schema.Open(ctx, db, schema.Options{})
	if err != nil {
		return err
	}
	defer w.Close()
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(ingest.MemoryLimit)
	}
	runtime.GC()
	resetPeak()
	if cpuprof != "" {
		f, err := os.Create(cpuprof)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	start := time.Now()
	res, err := ingest.Ingest(ctx, w, []string{dir}, ingest.Options{Jobs: jobs})
	if err != nil {
		return err
	}
	elapsed := time.Since(start)
	for _, f := range res.Files {
		if f.Err != nil {
			return f.Err
		}
	}
	var rows, gpu, bytes int64
	for _, f := range res.Files {
		rows += f.Events
		gpu += f.GPUEvents
		bytes += f.JSONBytes
	}
	peak := peakMiB()
	fmt.Fprintf(os.Stderr, "%d rows (%d GPU events) from %.1f MB of SQLite in %.2f s\n", rows, gpu, float64(bytes)/1e6, elapsed.Seconds())
	fmt.Printf("ingest (nsys export, %d GPU events): %.0f rows/s (%.0f GPU events/s), peak %d MiB\n",
		gpu, float64(rows)/elapsed.Seconds(), float64(gpu)/elapsed.Seconds(), peak)
	return nil
}

// writeNsysBench writes decode steps of an 80-layer model: per layer an
// NVTX range and twelve kernels, each launched by cudaLaunchKernel.
func writeNsysBench(path string, kernels int64) error {
	names := []string{
		"void flashinfer::BatchDecodeWithPagedKVCacheKernel<128u, 8u>(flashinfer::paged_kv_t<__nv_bfloat16, int>)",
		"nvjet_tst_64x8_64x16_4x1_v_bz_TNT", "void vllm::rms_norm_kernel<c10::BFloat16, 8>(c10::BFloat16*)",
		"void vllm::act_and_mul_kernel<c10::BFloat16, &vllm::silu_kernel<c10::BFloat16>, true>(c10::BFloat16*)",
		"void vllm::rotary_embedding_kernel<c10::BFloat16, true>(long const*)", "sm90_xmma_gemm_bf16bf16_bf16f32",
		"void cross_device_reduce_1stage<__nv_bfloat16, 8>(RankData*)", "void vllm::fused_add_rms_norm_kernel<c10::BFloat16, 8>(c10::BFloat16*)",
		"nvjet_tst_128x16_64x8_2x1_v_bz_TNN", "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float> >(int)",
		"void flashinfer::MergeStatesKernel<8u, 16u>(__nv_bfloat16*)", "void vllm::reshape_and_cache_flash_kernel<__nv_bfloat16>(long const*)",
	}
	w, err := nsystest.Create(path, nsystest.Recent)
	if err != nil {
		return err
	}
	const pid, tid = 1000, 1001
	w.Info(nsystest.Info{SessionStartNS: 1_751_289_296_000_000_000, Devices: []nsystest.Device{{ID: 0, Name: "NVIDIA H100 80GB HBM3", SMs: 132}}})
	var cpu, gpu, corr, n int64 = 1000, 0, 0, 0
	for step := 0; n < kernels; step++ {
		stepStart := cpu
		for layer := 0; layer < 80 && n < kernels; layer++ {
			layerStart := cpu
			for i, name := range names {
				corr++
				w.Call(nsystest.Call{Name: "cudaLaunchKernel_v7000", Start: cpu, End: cpu + 3000, PID: pid, TID: tid, Correlation: corr})
				dur := int64(8000 + (n*7919)%30000)
				start := max(gpu, cpu+4000)
				w.Kernel(nsystest.Kernel{Name: name, Start: start, End: start + dur, Device: 0, Stream: 7, Correlation: corr, PID: pid,
					Grid: [3]int64{int64(132 + i), 1, 1}, Block: [3]int64{256, 1, 1}})
				gpu = start + dur
				cpu += 5000
				n++
			}
			w.Range(nsystest.Range{Name: fmt.Sprintf("layer %d", layer), Start: layerStart, End: cpu, PID: pid, TID: tid, PushPop: true})
		}
		w.Range(nsystest.Range{Name: "step[DECODE bs=32 toks=32]", Start: stepStart, End: cpu, PID: pid, TID: tid, PushPop: true})
		cpu += 20000
	}
	return w.Close()
}
