package ingest

import (
	"context"
	"testing"
	"time"

	"github.com/tracehouse/tracehouse/schema"
)

// TestRunRowsAfterReingest (issue 9 item 14): re-ingesting stored files
// into their run leaves its ingested_at alone, and --replace into another
// run leaves no empty run row behind.
func TestRunRowsAfterReingest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w, err := schema.Open(ctx, schema.Memory, schema.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	paths := []string{"../testdata/demo/trtllm-llama"}
	if _, err := Ingest(ctx, w, paths, Options{Run: "x", Jobs: 1}); err != nil {
		t.Fatal(err)
	}
	var before time.Time
	if err := w.DB.QueryRow(`SELECT ingested_at FROM runs WHERE label = 'x'`).Scan(&before); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	res, err := Ingest(ctx, w, paths, Options{Run: "x", Jobs: 1})
	if err != nil || res.Files[0].Status != StatusAlready {
		t.Fatalf("re-ingest: %v %+v", err, res.Files)
	}
	var after time.Time
	if err := w.DB.QueryRow(`SELECT ingested_at FROM runs WHERE label = 'x'`).Scan(&after); err != nil {
		t.Fatal(err)
	}
	if !after.Equal(before) {
		t.Errorf("ingested_at moved from %v to %v though nothing was stored", before, after)
	}

	if _, err := Ingest(ctx, w, paths, Options{Run: "y", Replace: true, Jobs: 1}); err != nil {
		t.Fatal(err)
	}
	var runs, xRows, yTraces int
	if err := w.DB.QueryRow(`SELECT count(*), count(*) FILTER (WHERE label = 'x'),
		(SELECT count(*) FROM traces JOIN runs USING (run_id) WHERE label = 'y') FROM runs`).Scan(&runs, &xRows, &yTraces); err != nil {
		t.Fatal(err)
	}
	if runs != 1 || xRows != 0 || yTraces != 1 {
		t.Errorf("after --replace --run y: %d runs, %d rows for x, %d traces in y", runs, xRows, yTraces)
	}
}

// TestRunsOfOneIngestInOrder: the runs of one ingest, summarised in one
// transaction, still get one ingested_at each, increasing in the order
// they were created (run ids), which `runs` and @latest~N sort by.
func TestRunsOfOneIngestInOrder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := threeDemoRuns(t)
	rows, err := w.DB.QueryContext(ctx, `SELECT run_id, ingested_at FROM runs ORDER BY run_id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var prev time.Time
	n := 0
	for rows.Next() {
		var id int64
		var at time.Time
		if err := rows.Scan(&id, &at); err != nil {
			t.Fatal(err)
		}
		if n > 0 && !at.After(prev) {
			t.Errorf("run %d ingested at %v, not after the run before it (%v)", id, at, prev)
		}
		prev = at
		n++
	}
	if err := rows.Err(); err != nil || n != 3 {
		t.Fatalf("%d runs, %v", n, err)
	}
}
