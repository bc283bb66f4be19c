package synth

import (
	"os"
	"runtime"
	"testing"
	"time"
)

// TestLargeTrace writes a 1 GB trace when SYNTH_LARGE is set (e.g.
// SYNTH_LARGE=1 go test ./synth -run TestLargeTrace -v) and reports speed
// and heap, which must not grow with the size.
func TestLargeTrace(t *testing.T) {
	if os.Getenv("SYNTH_LARGE") == "" {
		t.Skip("set SYNTH_LARGE=1 to write a 1 GB trace")
	}
	for _, gz := range []bool{false, true} {
		dir := t.TempDir()
		start := time.Now()
		m, err := Generate(Options{Framework: SGLang, Dir: dir, Ranks: 2, Layers: 32, Stage: StageDecode,
			TargetBytes: 1 << 30, Gzip: gz, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		el := time.Since(start)
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		var n int64
		for _, f := range m.Files {
			n += f.UncompressedBytes
		}
		mbps := float64(n) / 1e6 / el.Seconds()
		t.Logf("gzip=%v: %d files, %.0f MB in %v = %.0f MB/s, heap sys %d MiB", gz, len(m.Files), float64(n)/1e6, el.Round(time.Millisecond), mbps, ms.HeapSys>>20)
		if mbps < 100 {
			t.Errorf("%.0f MB/s is below 100 MB/s", mbps)
		}
		if ms.HeapSys > 256<<20 {
			t.Errorf("heap %d MiB: memory grows with size", ms.HeapSys>>20)
		}
	}
}
