package ingest

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tracehouse/tracehouse/schema"
	"github.com/tracehouse/tracehouse/schema/schematest"
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
// they were created (run ids), which `runs` and @latest~N sort by: the
// demo's six runs, ingested by demoTemplate's one ingest.
func TestRunsOfOneIngestInOrder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := schematest.Open(t, demoTemplate(t))
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
	if err := rows.Err(); err != nil || n != 6 {
		t.Fatalf("%d runs (want the demo's 6), %v", n, err)
	}
}

// TestRunSummaries: every run's framework, its evidence and, without server
// args, its parallel sizes are those its traces give, computed here in SQL
// from the traces table (the summary computes them in Go for all runs at
// once); server args are kept exactly for the runs whose directory has
// them; a run whose traces disagree says so, and a run left without traces
// is dropped.
func TestRunSummaries(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := schematest.Open(t, demoTemplate(t))
	// Two runs' traces moved into one: the frameworks disagree, and both
	// runs they left are empty.
	mixed := []string{"../testdata/demo/trtllm-llama", "../testdata/demo/vllm-qwen-moe"}
	if _, err := Ingest(ctx, w, mixed, Options{Run: "mixed", Replace: true, Jobs: 2}); err != nil {
		t.Fatal(err)
	}
	got := schematest.Dump(t, w.DB, `SELECT run_id, framework, framework_evidence, tp_size, dp_size, ep_size, pp_size
		FROM runs WHERE server_args IS NULL ORDER BY run_id`) +
		schematest.Dump(t, w.DB, `SELECT run_id, framework, framework_evidence FROM runs WHERE server_args IS NOT NULL ORDER BY run_id`)
	// the rules, written over the traces: one framework named (else
	// unknown), the first three distinct pieces of evidence in path order,
	// "no evidence" or the frameworks that disagree; sizes from the ranks
	const expect = `
		WITH t AS (
		    SELECT run_id, framework, coalesce(framework_evidence, '') AS e,
		           row_number() OVER (PARTITION BY run_id ORDER BY path, trace_id) AS pos
		    FROM traces),
		fw AS (
		    SELECT run_id, coalesce(list(DISTINCT framework ORDER BY framework) FILTER (WHERE framework <> 'unknown'), []) AS fws
		    FROM t GROUP BY run_id),
		ev AS (
		    SELECT run_id, string_agg(e, '; ' ORDER BY pos) AS ev
		    FROM (SELECT run_id, e, min(pos) AS pos FROM t WHERE e <> '' GROUP BY run_id, e
		          QUALIFY row_number() OVER (PARTITION BY run_id ORDER BY min(pos)) <= 3)
		    GROUP BY run_id),
		expect AS (
		    SELECT fw.run_id,
		           CASE WHEN len(fws) = 1 THEN fws[1] ELSE 'unknown' END AS framework,
		           CASE WHEN len(fws) > 1 THEN 'traces disagree: ' || array_to_string(fws, ', ')
		                ELSE coalesce(ev.ev, CASE WHEN len(fws) = 0 THEN 'no evidence' ELSE '' END) END AS evidence
		    FROM fw LEFT JOIN ev USING (run_id)),
		sizes AS (
		    SELECT run_id, max(tp_rank) + 1 AS tp, max(dp_rank) + 1 AS dp, max(ep_rank) + 1 AS ep, max(pp_rank) + 1 AS pp
		    FROM traces GROUP BY run_id)
		`
	want := schematest.Dump(t, w.DB, expect+`SELECT e.run_id, e.framework, e.evidence, s.tp, s.dp, s.ep, s.pp
		FROM expect e JOIN sizes s USING (run_id) JOIN runs r USING (run_id)
		WHERE r.server_args IS NULL ORDER BY run_id`) +
		schematest.Dump(t, w.DB, expect+`SELECT e.run_id, e.framework, e.evidence
		FROM expect e JOIN runs r USING (run_id)
		WHERE r.server_args IS NOT NULL ORDER BY run_id`)
	if got != want {
		t.Errorf("run summaries:\n%s\nwant (from the traces):\n%s", got, want)
	}
	if !strings.Contains(got, "traces disagree: trtllm, vllm") {
		t.Errorf("the mixed run does not say its traces disagree:\n%s", got)
	}
	// server args exactly where the run's directory has them; no run
	// without traces
	rows, err := w.DB.QueryContext(ctx, `SELECT source_dir, server_args IS NOT NULL,
		(SELECT count(*) FROM traces t WHERE t.run_id = r.run_id) FROM runs r ORDER BY run_id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var dir string
		var hasArgs bool
		var traces int
		if err := rows.Scan(&dir, &hasArgs, &traces); err != nil {
			t.Fatal(err)
		}
		// (SGLang's sit in the run's timestamp directory)
		files, _ := filepath.Glob(filepath.Join(dir, "server_args.json"))
		nested, _ := filepath.Glob(filepath.Join(dir, "*", "server_args.json"))
		if there := len(files)+len(nested) > 0; hasArgs != there {
			t.Errorf("run of %s: server args stored %v, file there %v", dir, hasArgs, there)
		}
		if traces == 0 {
			t.Errorf("run of %s has no trace", dir)
		}
		n++
	}
	if err := rows.Err(); err != nil || n != 5 {
		t.Fatalf("%d runs (want the demo's 6, two emptied, one mixed), %v", n, err)
	}
}
