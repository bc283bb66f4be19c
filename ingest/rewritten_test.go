package ingest_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/tracehouse/tracehouse/ingest"
	"github.com/tracehouse/tracehouse/schema"
	"github.com/tracehouse/tracehouse/synth"
	"github.com/tracehouse/tracehouse/tracefile"
)

// The trace rewriters' outputs (tracefile) are read back here, where a
// warehouse is at hand: tracefile's own tests link no database.

// demoManifestAndWarehouse returns the demo's manifest and an empty
// in-memory warehouse, closed when t ends.
func demoManifestAndWarehouse(t *testing.T) (synth.Manifest, *schema.Warehouse) {
	t.Helper()
	m, err := synth.ReadManifest("../testdata/demo/MANIFEST.json")
	if err != nil {
		t.Fatal(err)
	}
	w, err := schema.Open(context.Background(), schema.Memory, schema.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return m, w
}

// A Perfetto-safe copy is still a trace tracehouse reads the same: the
// demo traces with PDL overlaps ingest with the manifest's GPU events and
// summed time (the copies ingested together, in one ingest).
func TestFixedTraceIngestsTheSame(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m, w := demoManifestAndWarehouse(t)
	dir := t.TempDir()
	moved := int64(0)
	fixed := map[string]synth.File{}
	var outs []string
	for i, f := range m.Files {
		if f.Framework != "trtllm" && !(f.Framework == "sglang" && f.Graph) {
			continue
		}
		out := filepath.Join(dir, fmt.Sprintf("fixed%d.trace.json.gz", i))
		res, err := tracefile.PerfettoFix(ctx, filepath.Join("../testdata/demo", f.Path), out, tracefile.FixOptions{})
		if err != nil {
			t.Fatal(err)
		}
		moved += res.Moved
		fixed[out] = f
		outs = append(outs, out)
	}
	ir, err := ingest.Ingest(ctx, w, outs, ingest.Options{Run: "fixed"})
	if err != nil || ir.Failed() != 0 || len(ir.Files) != len(outs) {
		t.Fatalf("%v %+v", err, ir)
	}
	for _, r := range ir.Files {
		f := fixed[r.Path]
		var n, dur int64
		if err := w.DB.QueryRowContext(ctx, `SELECT count(*), sum(dur_ns) FROM kernels WHERE trace_id = ?`, r.TraceID).Scan(&n, &dur); err != nil {
			t.Fatal(err)
		}
		if n != f.GPUEvents || dur != f.GPUDurNS {
			t.Errorf("%s: %d GPU events, %d ns; manifest %d, %d ns", f.Path, n, dur, f.GPUEvents, f.GPUDurNS)
		}
	}
	if moved == 0 {
		t.Errorf("no demo trace had an overlap to spread")
	}
}

// The slice of a demo trace ingests cleanly and holds exactly the kernels
// the generator says the selection has: the decode kernels of the vLLM
// trace (stage only from annotations), by the manifest's own count. The
// slices are ingested together, in one ingest (one a slice cost an
// ingest's fixed statements each).
func TestSliceIngestsWithExactlyTheSelection(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m, w := demoManifestAndWarehouse(t)
	dir := t.TempDir()
	type slice struct {
		of, stage string
		want      synth.StageTotals
	}
	slices := map[string]slice{}
	var outs []string
	for _, f := range m.Files {
		if f.Framework != "vllm" && f.Framework != "tokenspeed" {
			continue
		}
		for si, stage := range []string{"prefill", "decode", "mixed"} {
			want := f.StageGPU[stage]
			// A neutral name: ingest takes the stages from the annotations.
			out := filepath.Join(dir, fmt.Sprintf("slice%d-%d.trace.json.gz", len(outs), si))
			res, err := tracefile.Slice(ctx, filepath.Join("../testdata/demo", f.Path), out, tracefile.SliceOptions{Stage: stage})
			if want.Count == 0 {
				if !errors.Is(err, tracefile.ErrNothingSelected) {
					t.Errorf("%s %s: %v", f.Path, stage, err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%s %s: %v", f.Path, stage, err)
			}
			if res.KeptGPU != want.Count {
				t.Errorf("%s %s: kept %d GPU events, manifest %d", f.Path, stage, res.KeptGPU, want.Count)
			}
			slices[out] = slice{f.Path, stage, want}
			outs = append(outs, out)
		}
	}
	ir, err := ingest.Ingest(ctx, w, outs, ingest.Options{Run: "slices"})
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, r := range ir.Files {
		s, ok := slices[r.Path]
		if !ok || r.Err != nil || r.Status != ingest.StatusIngested {
			t.Fatalf("%s (a slice %v): %s, %v", r.Path, ok, r.Status, r.Err)
		}
		var n, dur int64
		var stages string
		err = w.DB.QueryRowContext(ctx, `SELECT count(*), sum(dur_ns), string_agg(DISTINCT stage, ',') FROM kernels WHERE trace_id = ?`,
			r.TraceID).Scan(&n, &dur, &stages)
		if err != nil {
			t.Fatal(err)
		}
		if n != s.want.Count || dur != s.want.DurNS || stages != s.stage {
			t.Errorf("%s %s: ingested %d kernels, %d ns, stages %s; manifest %d, %d ns", s.of, s.stage, n, dur, stages, s.want.Count, s.want.DurNS)
		}
		checked++
	}
	if checked < 4 {
		t.Fatalf("only %d slices checked", checked)
	}
}
