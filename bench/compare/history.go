package main

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/tracehouse/tracehouse/aggregates"
	"github.com/tracehouse/tracehouse/analysis"
	"github.com/tracehouse/tracehouse/catalog"
	"github.com/tracehouse/tracehouse/ingest"
	"github.com/tracehouse/tracehouse/queries"
	"github.com/tracehouse/tracehouse/report"
	"github.com/tracehouse/tracehouse/schema"
	"github.com/tracehouse/tracehouse/stats"
	"github.com/tracehouse/tracehouse/synth"
	"github.com/tracehouse/tracehouse/target"
)

// historyBench times `tracehouse history` over runs synthetic SGLang decode
// runs of steps steps each (32 layers), ingested once into
// bench/out/history-<runs>runs-<steps>steps/: every run from the 70th on
// has its decode attention 20% slower, so the run at 70% of the series is
// the one change point. Timed, as history does it: the runs listed, their
// steps checked (aggregates.StepsStale) and their saved aggregates'
// freshness, the per-step samples of the series (queries.HistorySteps),
// medians, intervals and change points (analysis.NewHistory), text and JSON
// rendered (discarded). Two series: a kernel pattern (the kernel store)
// and busy time (the totals store); the figure is the slower one's best
// of n.
func historyBench(ctx context.Context, data string, runs, steps, n int, rebuild bool) error {
	dir := filepath.Join(data, fmt.Sprintf("history-%druns-%dsteps", runs, steps))
	db := filepath.Join(dir, "history.duckdb")
	slow := runs * 7 / 10
	if _, err := os.Stat(filepath.Join(dir, "done")); err != nil || rebuild {
		if err := buildHistory(ctx, dir, db, runs, steps, slow); err != nil {
			return err
		}
	}
	w, err := schema.Open(ctx, db, schema.Options{ReadOnly: true})
	if err != nil {
		return err
	}
	defer w.Close()
	var worst time.Duration
	var events int64
	if err := w.DB.QueryRowContext(ctx, `SELECT count(*) FROM kernels`).Scan(&events); err != nil {
		return err
	}
	for _, series := range []struct {
		name string
		p    queries.HistoryStepsParams
		o    analysis.HistoryOptions
	}{
		{"kernel " + attention, queries.HistoryStepsParams{Pattern: sql.NullString{String: attention, Valid: true}},
			analysis.HistoryOptions{Series: analysis.SeriesKernel, Match: attention}},
		{"busy", queries.HistoryStepsParams{Metric: sql.NullString{String: queries.MetricBusy, Valid: true}},
			analysis.HistoryOptions{Series: analysis.SeriesMetric, Match: queries.MetricBusy}},
	} {
		best := time.Duration(1 << 62)
		for i := 0; i < n; i++ {
			t, c := time.Now(), cpuTime()
			rep, err := history(ctx, w.DB, series.p, series.o)
			if err != nil {
				return err
			}
			if err := report.Render(io.Discard, report.Text, report.HistoryDoc(rep, report.Text)); err != nil {
				return err
			}
			if err := report.Render(io.Discard, report.JSON, report.HistoryDoc(rep, report.JSON)); err != nil {
				return err
			}
			d := time.Since(t)
			var marks []string
			for _, st := range rep.Stages {
				marks = append(marks, st.ChangePoints...)
			}
			fmt.Fprintf(os.Stderr, "%s run %d: %.2f s, CPU %.2f s, %d runs, change points %v\n", series.name, i+1, d.Seconds(),
				(cpuTime() - c).Seconds(), len(rep.Stages[0].Runs), marks)
			best = min(best, d)
		}
		worst = max(worst, best)
	}
	fmt.Printf("history over %d runs (%d GPU events in all): best of %d %.2f s\n", runs, events, n, worst.Seconds())
	return nil
}

const attention = "BatchDecodeWithPagedKVCache"

// phases prints each phase of history's work (-each).
var phases bool

// history is what `tracehouse history` does after parsing its flags (no
// tag filter, ingest order).
func history(ctx context.Context, db *sql.DB, p queries.HistoryStepsParams, o analysis.HistoryOptions) (*analysis.HistoryReport, error) {
	t, c := time.Now(), cpuTime()
	lap := func(what string) {
		if phases {
			fmt.Fprintf(os.Stderr, "  %-14s %.2f s (CPU %.2f s)\n", what, time.Since(t).Seconds(), (cpuTime() - c).Seconds())
		}
		t, c = time.Now(), cpuTime()
	}
	rows, err := queries.RunsTagged(ctx, db, nil)
	if err != nil {
		return nil, err
	}
	slices.Reverse(rows)
	runs := make([]analysis.HistoryRunInfo, len(rows))
	ids := make([]int64, len(rows))
	for i, r := range rows {
		runs[i] = analysis.HistoryRunInfo{RunID: r.RunID, Label: r.Label, IngestedAt: r.IngestedAt, Tags: r.Tags}
		ids[i] = r.RunID
	}
	lap("runs")
	stale, err := aggregates.StepsStale(ctx, db, ids, "")
	if err != nil {
		return nil, err
	}
	if len(stale) > 0 {
		return nil, fmt.Errorf("%d runs with steps to recompute", len(stale))
	}
	lap("steps_stale")
	fresh, err := queries.StepsFresh(ctx, db, ids)
	if err != nil {
		return nil, err
	}
	lap("steps_fresh")
	for _, id := range ids {
		if fresh[id] {
			p.FreshRuns = append(p.FreshRuns, id)
		}
	}
	p.Runs = ids
	steps, err := queries.HistorySteps(ctx, db, p)
	if err != nil {
		return nil, err
	}
	lap("history_steps")
	o.Rule = stats.DefaultChangeRule
	rep := analysis.NewHistory(runs, steps, o)
	lap("report")
	return rep, nil
}

func buildHistory(ctx context.Context, dir, db string, runs, steps, slow int) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	traces := filepath.Join(dir, "traces")
	t0 := time.Now()
	for i := 1; i <= runs; i++ {
		o := synth.Options{Framework: synth.SGLang, Dir: traces, Run: fmt.Sprintf("run%03d", i), Stage: synth.StageDecode,
			Steps: steps, Layers: 32, Seed: int64(i), Gzip: true, Noise: 0.02, BatchSize: 32}
		if i >= slow {
			o.Edits = []synth.Edit{{Match: attention, Factor: 1.2}}
		}
		if _, err := synth.Generate(o); err != nil {
			return err
		}
	}
	fmt.Fprintf(os.Stderr, "wrote %d runs in %.1f s\n", runs, time.Since(t0).Seconds())
	w, err := schema.Open(ctx, db, schema.Options{})
	if err != nil {
		return err
	}
	defer w.Close()
	t1, c1 := time.Now(), cpuTime()
	res, err := ingest.Ingest(ctx, w, []string{traces}, ingest.Options{})
	if err == nil {
		err = res.Err()
	}
	if err != nil {
		return err
	}
	if err := target.Finish(ctx, w.DB, catalog.Default()); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "ingested and finished in %.1f s (CPU %.1f s)\n", time.Since(t1).Seconds(), (cpuTime() - c1).Seconds())
	if _, err := w.DB.ExecContext(ctx, "CHECKPOINT"); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "done"), []byte("ok"), 0o644)
}
