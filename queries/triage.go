package queries

import (
	"context"
	"database/sql"
	"fmt"
	"slices"

	"golang.org/x/sync/errgroup"
)

// TriageRunRow is one row of triage_run.sql.
type TriageRunRow struct {
	RunID             int64
	Label             string
	Framework         string
	FrameworkEvidence string
	Model             string
	TP, DP, EP, PP    sql.NullInt64
	CUDAGraph         sql.NullBool
	SourceDir         string
}

// TriageRun looks a run up by id or by label (pass the other invalid).
// It returns nil, nil when there is no such run.
func TriageRun(ctx context.Context, q Querier, run sql.NullInt64, label sql.NullString) (*TriageRunRow, error) {
	rows, err := collect(ctx, q, "triage_run", []any{sql.Named("run", run), sql.Named("label", label)},
		func(rows *sql.Rows) (TriageRunRow, error) {
			var r TriageRunRow
			err := rows.Scan(&r.RunID, &r.Label, &r.Framework, &r.FrameworkEvidence, &r.Model,
				&r.TP, &r.DP, &r.EP, &r.PP, &r.CUDAGraph, &r.SourceDir)
			return r, err
		})
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	return &rows[0], nil
}

// TriageTracesRow is one trace file of a run (triage_traces.sql).
type TriageTracesRow struct {
	TraceID   int64
	Path      string
	Rank      int64
	Stage     string
	Role      string
	GPUEvents int64
}

// TriageTraces lists a run's trace files by rank, stage and path.
func TriageTraces(ctx context.Context, q Querier, run int64) ([]TriageTracesRow, error) {
	return collect(ctx, q, "triage_traces", []any{sql.Named("run", run)}, func(rows *sql.Rows) (TriageTracesRow, error) {
		var r TriageTracesRow
		err := rows.Scan(&r.TraceID, &r.Path, &r.Rank, &r.Stage, &r.Role, &r.GPUEvents)
		return r, err
	})
}

// TriageGPUEventsRow counts a run's GPU events of one (stage, rank); 0 says
// the pair has none.
type TriageGPUEventsRow struct {
	Stage  string
	Rank   int64
	Events int64
}

// TriageGPUEvents returns every (stage, rank) pair of a run with its GPU
// event count.
func TriageGPUEvents(ctx context.Context, q Querier, run int64) ([]TriageGPUEventsRow, error) {
	return collect(ctx, q, "triage_gpu_events", []any{sql.Named("run", run)}, func(rows *sql.Rows) (TriageGPUEventsRow, error) {
		var r TriageGPUEventsRow
		err := rows.Scan(&r.Stage, &r.Rank, &r.Events)
		return r, err
	})
}

// TriageCoverageParams selects triage_coverage.sql's rows.
type TriageCoverageParams struct {
	Run     int64
	Mapping sql.NullInt64  // invalid = single-trace
	Rank    sql.NullInt64  // invalid = every rank
	Stage   sql.NullString // NULL = every stage
}

// TriageCoverageRow is the Python-site coverage of one stage, or of all
// (Stage invalid). Times are nanoseconds.
type TriageCoverageRow struct {
	Stage        sql.NullString
	KernelNS     int64
	SitedNS      int64
	ExactNS      int64
	CrossStageNS int64
	BaseNS       int64
	UnmappedNS   int64
	ReplayNS     int64
	CoveragePct  float64
}

// TriageCoverage returns per-stage coverage rows, then the total row.
func TriageCoverage(ctx context.Context, q Querier, p TriageCoverageParams) ([]TriageCoverageRow, error) {
	args := []any{sql.Named("run", p.Run), sql.Named("mapping", p.Mapping),
		sql.Named("rank", p.Rank), sql.Named("stage", p.Stage)}
	return collectSaved(ctx, q, "triage_coverage", singleTrace(p.Mapping, "name_scope", "_name_scope_none"), args, func(rows *sql.Rows) (TriageCoverageRow, error) {
		var r TriageCoverageRow
		err := rows.Scan(&r.Stage, &r.KernelNS, &r.SitedNS, &r.ExactNS, &r.CrossStageNS, &r.BaseNS, &r.UnmappedNS, &r.ReplayNS, &r.CoveragePct)
		return r, err
	})
}

// TriageRunsOfTracesRow is a run holding some of the given traces.
type TriageRunsOfTracesRow struct {
	RunID int64
	Label string
}

// TriageRunsOfTraces returns the runs holding any of traceIDs, by label.
func TriageRunsOfTraces(ctx context.Context, q Querier, traceIDs []int64) ([]TriageRunsOfTracesRow, error) {
	if traceIDs == nil {
		traceIDs = []int64{}
	}
	return collect(ctx, q, "triage_runs_of_traces", []any{sql.Named("trace_ids", traceIDs)}, func(rows *sql.Rows) (TriageRunsOfTracesRow, error) {
		var r TriageRunsOfTracesRow
		err := rows.Scan(&r.RunID, &r.Label)
		return r, err
	})
}

// TriageParams selects one triage report.
type TriageParams struct {
	// Run supplies timing: the only run, or the formal run in two-trace mode.
	Run int64
	// Mapping lends Python sites in two-trace mode; invalid = single-trace.
	Mapping sql.NullInt64
	// Rank restricts to one rank; invalid = every rank.
	Rank sql.NullInt64
	// Stage restricts to one stage; NULL = every stage.
	Stage sql.NullString
	// MinShare (percent) hides kernel rows under it (of summed kernel time)
	// and overlap rows under it (of GPU busy time).
	MinShare float64
	// OverlapRows caps the overlap rows per stage; 0 = no cap.
	OverlapRows int
	// Timelines asks for the events around the longest instance of the
	// first Timelines overlap rows of each stage.
	Timelines int
	// Framework, when set, is the framework of traces that do not say
	// theirs, for the catalog statuses (_fusion_gates, sqllib/fusion.sql);
	// NULL = none.
	Framework sql.NullString
	// GPUEvents are the run's TriageGPUEvents when the caller read them
	// (to pick the rank: target.RankOf); nil = read here.
	GPUEvents []TriageGPUEventsRow
}

// TriageData is every query result a triage report shows, as typed rows.
// Rendering (report.NewTriage) only formats; it computes no figure.
type TriageData struct {
	Params     TriageParams
	Run        TriageRunRow
	MappingRun *TriageRunRow // nil in single-trace mode
	Traces     []TriageTracesRow
	// MappingTraces are the mapping run's traces (two-trace mode).
	MappingTraces []TriageTracesRow
	GPUEvents     []TriageGPUEventsRow
	StageBusy     []StageBusyRow
	Coverage      []TriageCoverageRow
	Families      []FamilyRollupRow
	Kernels       []KernelTableRow
	Sites         []KernelSitesRow
	Overlap       []OverlapByKernelRow
	// KnownPaths[i] are the overlap-catalog entries matching Overlap[i].
	KnownPaths [][]KnownPathsRow
	Fusions    []FusionMatchesRow
	// Similarity holds at most one near-miss note per stage.
	Similarity []FusionSimilarityRow
	// Timelines are the windows TriageParams.Timelines asked for, in
	// overlap-row order.
	Timelines []TriageTimeline
	// Idle is where the GPU waits per stage (idle_by_stage.sql: busy time
	// and idle time by cause, device and per stream); IdleGaps are each
	// stage's longest gaps (idle_worst_gaps.sql). Both of the timing run.
	Idle     []IdleByStageRow
	IdleGaps []IdleWorstGapsRow
	// IdleSteps are the parts of each stage's first steps
	// (idle_by_step.sql), for the HTML report's bar per step.
	IdleSteps []IdleByStepRow
	// LaunchKernels and LaunchStages are the launch overhead per kernel
	// and per stage (launch_by_kernel.sql, launch_by_stage.sql), of the
	// timing run.
	LaunchKernels []LaunchByKernelRow
	LaunchStages  []LaunchByStageRow
	// Spread is each kernel's duration spread (kernel_spread.sql).
	Spread []KernelSpreadRow
	// CommOverlap is each stage and rank's communication hidden under
	// computation (comm_overlap.sql).
	CommOverlap []CommOverlapRow
	// StragglerRanks and StragglerSites are the late rank at collectives
	// (straggler_ranks.sql, straggler_sites.sql): every rank only (Params.Rank
	// invalid), else none.
	StragglerRanks []StragglerRankRow
	StragglerSites []StragglerSiteRow
}

// TriageTimeline is the window around the longest instance of one overlap
// row, with the events in it (timeline_window.sql).
type TriageTimeline struct {
	// Overlap is the row's index in TriageData.Overlap.
	Overlap      int
	FromNS, ToNS int64
	Events       []TimelineWindowRow
}

// Triage runs every query of one triage report.
func Triage(ctx context.Context, q Querier, p TriageParams) (_ *TriageData, err error) {
	if p.Framework.Valid {
		conn, done, err := withFramework(ctx, q, p.Framework.String)
		if err != nil {
			return nil, err
		}
		defer func() {
			if derr := done(); err == nil {
				err = derr
			}
		}()
		q = conn
	}
	d := &TriageData{Params: p}
	run, err := TriageRun(ctx, q, sql.NullInt64{Int64: p.Run, Valid: true}, sql.NullString{})
	if err != nil {
		return nil, err
	}
	if run == nil {
		return nil, fmt.Errorf("triage: no run with id %d", p.Run)
	}
	d.Run = *run
	if d.Traces, err = TriageTraces(ctx, q, p.Run); err != nil {
		return nil, err
	}
	if p.Mapping.Valid {
		if d.MappingRun, err = TriageRun(ctx, q, p.Mapping, sql.NullString{}); err != nil {
			return nil, err
		}
		if d.MappingRun == nil {
			return nil, fmt.Errorf("triage: no mapping run with id %d", p.Mapping.Int64)
		}
		if d.MappingTraces, err = TriageTraces(ctx, q, p.Mapping.Int64); err != nil {
			return nil, err
		}
	}
	// The GPU events come first: how many there are says whether the
	// queries below run side by side (inParallel).
	d.GPUEvents = p.GPUEvents
	if d.GPUEvents == nil {
		if d.GPUEvents, err = TriageGPUEvents(ctx, q, p.Run); err != nil {
			return nil, err
		}
	}
	// The queries below are independent but for the overlap fingerprint:
	// on a *sql.DB of a large run two run at a time (each on its own
	// connection), so one query's planning and single-threaded parts
	// overlap another's scans. The two longest chains (overlap, fuse
	// patterns: each a query of hundreds of operators when not saved) come
	// first, so they run side by side and the short ones fill in.
	var fp sql.NullString
	var fresh bool
	var fpErr error
	fpDone := make(chan struct{})
	// afterFP runs a task once the fingerprint is known (the first task
	// runs first, also when the tasks run one by one); if it failed, the
	// first task reports it and the task does nothing.
	afterFP := func(task func(context.Context) error) func(context.Context) error {
		return func(ctx context.Context) error {
			select {
			case <-fpDone:
			case <-ctx.Done():
				return ctx.Err()
			}
			if fpErr != nil {
				return nil
			}
			return task(ctx)
		}
	}
	err = inParallel(ctx, q, sideBySide(d.GPUEvents), func(ctx context.Context) (err error) {
		// The saved copies read here (busy rows, overlap rows, fuse-pattern
		// rows) are current while the run's overlap fingerprint matches: a
		// pass over every kernel, done once rather than in each check. The
		// copies saved with the step aggregates (idle rows, comm overlap)
		// are current while the steps fingerprint, built on it, matches.
		fp, fpErr = OverlapFingerprint(ctx, q, p.Run)
		if fpErr == nil {
			fresh, fpErr = IdleFresh(ctx, q, p.Run, fp)
		}
		close(fpDone)
		if fpErr != nil {
			return fpErr
		}
		busySaved, err := OverlapFresh(ctx, q, p.Run, fp)
		if err != nil {
			return err
		}
		if d.StageBusy, err = StageBusy(ctx, q, StageBusyParams{Run: p.Run, Rank: p.Rank, Stage: p.Stage, OverlapFP: fp, Saved: busySaved}); err != nil {
			return err
		}
		// Saved at ingest when current (single-trace, one rank), else computed.
		if d.Overlap, _, err = OverlapByKernelCached(ctx, q, OverlapByKernelParams{Run: p.Run, Mapping: p.Mapping, Rank: p.Rank,
			Stage: p.Stage, MinShare: p.MinShare, MaxRows: p.OverlapRows, OverlapFP: fp, OverlapSaved: sql.NullBool{Bool: busySaved, Valid: true}}); err != nil {
			return err
		}
		d.KnownPaths, err = overlapKnownPaths(ctx, q, p, d.Overlap)
		return err
	}, afterFP(func(ctx context.Context) (err error) {
		// The rows saved at ingest when current (single-trace, one rank), else
		// computed: the same rows either way.
		d.Fusions, _, err = FusionMatchesCached(ctx, q, FusionMatchesParams{Run: p.Run, Mapping: p.Mapping, Rank: p.Rank,
			Stage: p.Stage, MinShare: p.MinShare, OverlapFP: fp})
		return err
	}), afterFP(func(ctx context.Context) (err error) {
		// Saved at ingest with the step aggregates when current, else computed.
		ip := IdleParams{Run: p.Run, Rank: p.Rank, Stage: p.Stage, Gaps: DefaultIdleGaps, Steps: DefaultIdleSteps, Fresh: fresh}
		if d.Idle, err = IdleByStage(ctx, q, ip); err != nil {
			return err
		}
		if d.IdleSteps, err = IdleByStep(ctx, q, ip); err != nil {
			return err
		}
		d.IdleGaps, err = IdleWorstGaps(ctx, q, ip)
		return err
	}), afterFP(func(ctx context.Context) (err error) {
		// Saved at ingest with the step aggregates when current, else computed.
		lp := LaunchParams{Run: p.Run, Rank: p.Rank, Stage: p.Stage, Fresh: sql.NullBool{Bool: fresh, Valid: true}}
		if lp.Saved, err = LaunchSaved(ctx, q, lp); err != nil {
			return err
		}
		if d.LaunchKernels, err = LaunchByKernel(ctx, q, lp); err != nil {
			return err
		}
		if d.LaunchStages, err = LaunchByStage(ctx, q, lp); err != nil {
			return err
		}
		if d.Spread, err = KernelSpread(ctx, q, lp); err != nil {
			return err
		}
		d.CommOverlap, err = CommOverlap(ctx, q, lp)
		return err
	}), func(ctx context.Context) (err error) {
		if p.Rank.Valid || ranksWithEvents(d.GPUEvents) < 2 {
			// One rank waits for nobody it can see, and a run of one
			// rank has no collective to match (straggler_arrivals takes
			// a call that at least two ranks made): 17 ms of a demo
			// run's `--rank all` report asked for no row.
			return nil
		}
		sp := StragglerParams{Run: p.Run, Stage: p.Stage}
		if d.StragglerRanks, err = StragglerRanks(ctx, q, sp); err != nil {
			return err
		}
		d.StragglerSites, err = StragglerSites(ctx, q, sp)
		return err
	}, func(ctx context.Context) (err error) {
		d.Coverage, err = TriageCoverage(ctx, q, TriageCoverageParams{Run: p.Run, Mapping: p.Mapping, Rank: p.Rank, Stage: p.Stage})
		return err
	}, func(ctx context.Context) (err error) {
		d.Families, err = FamilyRollup(ctx, q, FamilyRollupParams{Run: p.Run, Rank: p.Rank, Stage: p.Stage})
		return err
	}, func(ctx context.Context) (err error) {
		d.Kernels, err = KernelTable(ctx, q, KernelTableParams{Run: p.Run, Rank: p.Rank, Stage: p.Stage, MinShare: p.MinShare})
		return err
	}, func(ctx context.Context) (err error) {
		d.Sites, err = KernelSites(ctx, q, KernelSitesParams{Run: p.Run, Mapping: p.Mapping, Rank: p.Rank, Stage: p.Stage})
		return err
	})
	if err != nil {
		return nil, err
	}
	// Near-miss notes only where no whole chain matched: elsewhere they
	// would print nothing and cost a pass over every partial chain.
	var stages []string
	for _, k := range d.Kernels {
		if !slices.Contains(stages, k.Stage) {
			stages = append(stages, k.Stage)
		}
	}
	if d.Similarity, err = FusionNotes(ctx, q, FusionSimilarityParams{Run: p.Run, Mapping: p.Mapping,
		Rank: p.Rank, Stage: p.Stage}, stages, d.Fusions); err != nil {
		return nil, err
	}
	if d.Timelines, err = triageTimelines(ctx, q, d.Overlap, p.Timelines); err != nil {
		return nil, err
	}
	return d, nil
}

// ranksWithEvents counts the ranks of a run that stored a GPU event.
func ranksWithEvents(events []TriageGPUEventsRow) int {
	seen := map[int64]bool{}
	for _, e := range events {
		if e.Events > 0 {
			seen[e.Rank] = true
		}
	}
	return len(seen)
}

// sideBySideGPUEvents is the fewest GPU events (of every rank and stage)
// of a run whose report's queries run two at a time. Under it each query
// costs mostly its planning, and two at a time took more CPU and more wall
// time than one after the other: a demo trace's report (183 GPU events,
// every copy saved) 66-72 against 60 CPU-ms and 76-79 against 61-68 ms
// of wall time, two connections planning side by side on 2 cores.
const sideBySideGPUEvents = 20000

// sideBySide says whether the report of a run of these GPU events runs
// its queries two at a time (sideBySideGPUEvents).
func sideBySide(events []TriageGPUEventsRow) bool {
	var n int64
	for _, e := range events {
		n += e.Events
	}
	return n >= sideBySideGPUEvents
}

// inParallel runs the tasks two at a time when parallel and q is a
// *sql.DB (a pool: each task's queries take a connection of their own),
// else one after the other (on q's one connection when q is a *sql.Conn
// or *sql.Tx, which are not safe for concurrent use). The first error is
// returned; it cancels the rest.
func inParallel(ctx context.Context, q Querier, parallel bool, tasks ...func(context.Context) error) error {
	if _, ok := q.(*sql.DB); !ok || !parallel {
		for _, t := range tasks {
			if err := t(ctx); err != nil {
				return err
			}
		}
		return nil
	}
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(2)
	for _, t := range tasks {
		g.Go(func() error { return t(ctx) })
	}
	return g.Wait()
}

// triageTimelines reads the window around the longest instance of each of
// the first n overlap rows of every stage.
func triageTimelines(ctx context.Context, q Querier, rows []OverlapByKernelRow, n int) ([]TriageTimeline, error) {
	var out []TriageTimeline
	drawn := map[string]int{}
	for i, o := range rows {
		if drawn[o.Stage] >= n {
			continue
		}
		drawn[o.Stage]++
		from, to, events, err := TimelineAround(ctx, q, o.Longest)
		if err != nil {
			return nil, err
		}
		out = append(out, TriageTimeline{Overlap: i, FromNS: from, ToNS: to, Events: events})
	}
	return out, nil
}

// overlapKnownPaths looks up the overlap-catalog entries of every overlap
// row, each in its own stage so keywords see the sites and CPU ops of the
// row's stage (one query for every stage).
func overlapKnownPaths(ctx context.Context, q Querier, p TriageParams, rows []OverlapByKernelRow) ([][]KnownPathsRow, error) {
	if len(rows) == 0 {
		return make([][]KnownPathsRow, 0), nil
	}
	pairs := make([]KnownPathPair, len(rows))
	for i, r := range rows {
		pairs[i] = KnownPathPair{Kernel: r.Kernel, Dominant: r.Dominant.String, Stage: r.Stage}
	}
	found, err := KnownPaths(ctx, q, KnownPathsParams{Run: p.Run, Mapping: p.Mapping, Rank: p.Rank, Pairs: pairs})
	if err != nil {
		return nil, err
	}
	return KnownPathsByPair(found, len(pairs)), nil
}

// execQuerier is a handle that also executes statements (a *sql.Conn or
// *sql.Tx: session state set on it stays on it).
type execQuerier interface {
	Querier
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// withFramework returns a handle whose session has the variable
// tracehouse_framework set (see _fusion_gates in sqllib/fusion.sql), and the function that
// resets it and gives a borrowed connection back to the pool.
func withFramework(ctx context.Context, q Querier, framework string) (execQuerier, func() error, error) {
	var h execQuerier
	release := func() error { return nil }
	switch x := q.(type) {
	case *sql.DB:
		conn, err := x.Conn(ctx)
		if err != nil {
			return nil, nil, fmt.Errorf("triage: %w", err)
		}
		h, release = conn, conn.Close
	case execQuerier:
		h = x
	default:
		return nil, nil, fmt.Errorf("triage: a framework override needs a connection, got %T", q)
	}
	if _, err := h.ExecContext(ctx, `SET VARIABLE tracehouse_framework = ?`, framework); err != nil {
		release()
		return nil, nil, fmt.Errorf("triage: set framework: %w", err)
	}
	return h, func() error {
		// never hand a connection back with the override still set
		_, err := h.ExecContext(context.WithoutCancel(ctx), `RESET VARIABLE tracehouse_framework`)
		if rerr := release(); err == nil {
			err = rerr
		}
		return err
	}, nil
}
