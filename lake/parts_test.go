package lake

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/tracehouse/tracehouse/catalog"
	"github.com/tracehouse/tracehouse/ingest"
	"github.com/tracehouse/tracehouse/schema"
)

// runSummary is what a run's row says of all its traces, and the rest of
// the row but its id and ingest time, one line per run.
const runSummary = `SELECT concat_ws(' | ', label, source_dir, framework, framework_evidence, coalesce(model, '-'),
	coalesce(md5(server_args::VARCHAR), '-'), 'tp ' || coalesce(tp_size::VARCHAR, '-'), 'dp ' || coalesce(dp_size::VARCHAR, '-'),
	'ep ' || coalesce(ep_size::VARCHAR, '-'), 'pp ' || coalesce(pp_size::VARCHAR, '-'), coalesce(cuda_graph::VARCHAR, '-'), tags::VARCHAR) FROM runs`

// TestRunIngestedInPartsReadsAsOne: a run ingested into a lake in two
// parts, in either order, reads as a warehouse's ingest of all its files
// at once: its framework evidence quotes every trace, and its parallel
// sizes (vllm-qwen-moe has no server args: its ranks' file names give
// them) count every rank. The first part's row file alone said tp 1 and
// one file's evidence.
func TestRunIngestedInPartsReadsAsOne(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	vllm := demo + "/vllm-qwen-moe/"
	a := []string{vllm + "dp0_pp0_tp0_dcp0_ep0_rank0.1751657210123456789.pt.trace.json.gz"}
	b := []string{vllm + "dp0_pp0_tp1_dcp0_ep0_rank1.1751657210123456789.pt.trace.json.gz"}

	w, err := schema.Open(ctx, schema.Memory, schema.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := ingest.Ingest(ctx, w, slices.Concat(a, b), ingest.Options{Jobs: 1}); err != nil {
		t.Fatal(err)
	}
	want := dump(t, w.DB, runSummary)
	if len(want) != 1 || !strings.Contains(want[0], "| 2 file names fit vllm; ") || !strings.Contains(want[0], "| tp 2 |") {
		t.Fatalf("the warehouse's vllm-qwen-moe is not tp 2 from 2 files:\n%s", strings.Join(want, "\n"))
	}
	for _, c := range []struct {
		name  string
		parts [][]string
	}{{"a-then-b", [][]string{a, b}}, {"b-then-a", [][]string{b, a}}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			for _, p := range c.parts {
				if _, wr, err := Ingest(ctx, dir, p, ingest.Options{Jobs: 1}, catalog.Default(), schema.Options{Threads: 1}); err != nil || wr.Written() != len(p) {
					t.Fatalf("ingest %v: %v", p, err)
				}
			}
			l, err := Open(ctx, dir, schema.Options{Threads: 1})
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			if got := dump(t, l.DB, runSummary); !slices.Equal(got, want) {
				t.Errorf("the lake's runs:\n%s\nwant (the warehouse's):\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}
