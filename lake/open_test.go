package lake

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/tracehouse/tracehouse/schema"
)

// TestOpenRuns: a lake opened for some runs shows exactly their rows of
// every per-run table (what Open shows of them), names no file of another
// run, and keeps the runs, traces, names and sites tables whole; a label
// with no files shows nothing and is no error.
func TestOpenRuns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := demoLake(t)
	all, err := Open(ctx, dir, schema.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer all.Close()
	picked := []string{"sglang-llama", "trtllm-llama", "no-such-run"}
	some, err := OpenRuns(ctx, dir, schema.Options{Threads: 1}, picked)
	if err != nil {
		t.Fatal(err)
	}
	defer some.Close()
	ofPicked := ` WHERE trace_id IN (SELECT trace_id FROM traces JOIN runs USING (run_id)
		WHERE label IN ('sglang-llama', 'trtllm-llama'))`
	for _, tb := range Tables {
		q := "SELECT * FROM " + tb.Name
		perRun := tb.layout == byTrace || tb.layout == byTraceStageRank
		want := dump(t, all.DB, q)
		if perRun {
			want = dump(t, all.DB, q+ofPicked)
			if every := dump(t, all.DB, q); len(want) == len(every) {
				t.Errorf("%s: the picked runs hold all %d rows: the test proves nothing", tb.Name, len(every))
			}
		}
		if got := dump(t, some.DB, q); !slices.Equal(got, want) {
			t.Errorf("%s: %d rows, want %d; first difference:\n%s", tb.Name, len(got), len(want), firstDiff(want, got))
		}
		if tb.Name == "kernels" && len(want) == 0 {
			t.Error("kernels: the picked runs have none")
		}
	}
	var view string
	if err := some.DB.QueryRow(`SELECT sql FROM duckdb_views() WHERE view_name = 'kernels'`).Scan(&view); err != nil {
		t.Fatal(err)
	}
	for run, named := range map[string]bool{"sglang-llama": true, "trtllm-llama": true, "vllm-qwen-moe": false, "sglang-formal": false} {
		if got := strings.Contains(view, "/run="+run+"/"); got != named {
			t.Errorf("kernels view names files of %s: %v, want %v", run, got, named)
		}
	}
}
