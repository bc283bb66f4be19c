package synth

import (
	"runtime"
	"testing"
)

// BenchmarkLargeTrace writes a 1 GB trace, plain and gzipped, and reports
// speed and heap; the heap must not grow with the size, and the writer
// must keep above 100 MB/s:
//
//	go test ./synth -run XXX -bench LargeTrace -benchtime 1x
func BenchmarkLargeTrace(b *testing.B) {
	for _, gz := range []bool{false, true} {
		name := "plain"
		if gz {
			name = "gzip"
		}
		b.Run(name, func(b *testing.B) {
			var n int64
			for i := 0; i < b.N; i++ {
				m, err := Generate(Options{Framework: SGLang, Dir: b.TempDir(), Ranks: 2, Layers: 32, Stage: StageDecode,
					TargetBytes: 1 << 30, Gzip: gz, Seed: 1})
				if err != nil {
					b.Fatal(err)
				}
				for _, f := range m.Files {
					n += f.UncompressedBytes
				}
			}
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			mbps := float64(n) / 1e6 / b.Elapsed().Seconds()
			b.ReportMetric(mbps, "MB/s")
			b.ReportMetric(float64(ms.HeapSys>>20), "heap-MiB")
			if mbps < 100 {
				b.Errorf("%.0f MB/s is below 100 MB/s", mbps)
			}
			if ms.HeapSys > 256<<20 {
				b.Errorf("heap %d MiB: memory grows with size", ms.HeapSys>>20)
			}
		})
	}
}
