package queries

import (
	"context"
	"database/sql"
	"time"
)

// CompareParams selects one side of a comparison: a run, one rank or every
// rank, and whether the edge steps count.
type CompareParams struct {
	Run       int64
	Rank      sql.NullInt64 // invalid = every rank
	KeepEdges bool
	// Fresh says the run's saved step aggregates are current (StepsFresh):
	// the queries read them; false computes them. CompareFetch sets it.
	Fresh bool
}

// stepTwins are the twins of the computing macros a compare or history
// query calls beside the saved step aggregates (steps.sql, idle.sql):
// named in their place when every run the query reads is saved and
// current, so that DuckDB does not bind what a constant would skip (see
// collectSaved). A name the query does not call is left out.
func stepTwins(fresh bool, names ...string) []savedTwin {
	if !fresh {
		return nil
	}
	twin := map[string]string{
		"step_totals_for":   "_step_totals_none",
		"step_kernels_for":  "_step_kernels_none",
		"_idle_step_causes": "_idle_step_causes_saved",
	}
	out := make([]savedTwin, len(names))
	for i, n := range names {
		out[i] = savedTwin{n, twin[n]}
	}
	return out
}

func (p CompareParams) args() []any {
	return []any{sql.Named("run", p.Run), sql.Named("rank", p.Rank), sql.Named("keep_edges", p.KeepEdges),
		sql.Named("fresh", p.Fresh)}
}

// CompareRunRow is one row of compare_run.sql.
type CompareRunRow struct {
	RunID          int64
	Label          string
	Framework      string
	Model          string
	TP, DP, EP, PP sql.NullInt64
	CUDAGraph      sql.NullBool
	GPUs           []string
	Tags           []string // key=value, sorted by key
	IngestedAt     time.Time
}

// CompareRun returns the header facts of a run; nil when there is none.
func CompareRun(ctx context.Context, q Querier, run int64) (*CompareRunRow, error) {
	rows, err := collect(ctx, q, "compare_run", []any{sql.Named("run", run)}, func(rows *sql.Rows) (CompareRunRow, error) {
		var r CompareRunRow
		var gpus, tags []any
		err := rows.Scan(&r.RunID, &r.Label, &r.Framework, &r.Model, &r.TP, &r.DP, &r.EP, &r.PP, &r.CUDAGraph,
			&gpus, &tags, &r.IngestedAt)
		r.GPUs, r.Tags = fusionStrings(gpus), fusionStrings(tags)
		return r, err
	})
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	return &rows[0], nil
}

// CompareStepsRow is one step of compare_steps.sql. Times are nanoseconds.
type CompareStepsRow struct {
	Stage         string
	Rank          int64
	TraceID       int64
	Step          int64
	Source        string
	BatchSize     sql.NullInt64
	Tokens        sql.NullInt64
	Kernels       int64
	KernelNS      int64
	BusyNS        int64
	WindowNS      int64 // the step time
	IdleNS        int64
	ExposedCommNS int64
	// IdleCauses is IdleNS by cause (sqllib/idle.sql); invalid when the
	// causes do not add up to IdleNS (a step over several devices).
	IdleCauses IdleCauses
}

// IdleCauses is a step's idle time by cause (sqllib/idle.sql); Valid says
// the five add up to the step's idle time.
type IdleCauses struct {
	HostBoundNS, LaunchLatencyNS, SyncNS, GraphInternalNS, OtherNS int64
	Valid                                                          bool
}

// ByCause is the causes under their names (IdleCauseNames' order).
func (c IdleCauses) ByCause() []int64 {
	return []int64{c.HostBoundNS, c.LaunchLatencyNS, c.SyncNS, c.GraphInternalNS, c.OtherNS}
}

// IdleCauseNames are the idle causes of sqllib/idle.sql, in the order
// reports show them.
var IdleCauseNames = []string{"host_bound", "launch_latency", "sync", "graph_internal", "other"}

// CompareSteps returns the per-step samples of one side.
func CompareSteps(ctx context.Context, q Querier, p CompareParams) ([]CompareStepsRow, error) {
	twins := stepTwins(p.Fresh, "step_totals_for", "_idle_step_causes")
	return collectSaved(ctx, q, "compare_steps", twins, p.args(), func(rows *sql.Rows) (CompareStepsRow, error) {
		var r CompareStepsRow
		var c [5]sql.NullInt64
		err := rows.Scan(&r.Stage, &r.Rank, &r.TraceID, &r.Step, &r.Source, &r.BatchSize, &r.Tokens,
			&r.Kernels, &r.KernelNS, &r.BusyNS, &r.WindowNS, &r.IdleNS, &r.ExposedCommNS, &c[0], &c[1], &c[2], &c[3], &c[4])
		r.IdleCauses = IdleCauses{HostBoundNS: c[0].Int64, LaunchLatencyNS: c[1].Int64, SyncNS: c[2].Int64,
			GraphInternalNS: c[3].Int64, OtherNS: c[4].Int64, Valid: c[0].Valid}
		return r, err
	})
}

// CompareKernelStepsRow is one kernel in one step (compare_kernel_steps.sql).
type CompareKernelStepsRow struct {
	Stage    string
	Kernel   string // short name
	Rank     int64
	TraceID  int64
	Step     int64
	NS       int64
	Launches int64
}

// CompareKernelSteps returns every kernel's time per step of one side.
func CompareKernelSteps(ctx context.Context, q Querier, p CompareParams) ([]CompareKernelStepsRow, error) {
	return collectSaved(ctx, q, "compare_kernel_steps", stepTwins(p.Fresh, "step_kernels_for"), p.args(), func(rows *sql.Rows) (CompareKernelStepsRow, error) {
		var r CompareKernelStepsRow
		err := rows.Scan(&r.Stage, &r.Kernel, &r.Rank, &r.TraceID, &r.Step, &r.NS, &r.Launches)
		return r, err
	})
}

// CompareKernelsRow is one kernel of one stage (compare_kernels.sql).
type CompareKernelsRow struct {
	Stage            string
	Kernel           string // short name
	Family           string
	Category         string
	NS               int64
	Launches         int64
	StageNS          int64 // the share's denominator
	HiddenNS         int64
	HiddenByComputNS int64
	Site             sql.NullString
}

// CompareKernels returns one side's kernel rows over the steps used.
func CompareKernels(ctx context.Context, q Querier, p CompareParams) ([]CompareKernelsRow, error) {
	return collectSaved(ctx, q, "compare_kernels", stepTwins(p.Fresh, "step_kernels_for"), p.args(), func(rows *sql.Rows) (CompareKernelsRow, error) {
		var r CompareKernelsRow
		err := rows.Scan(&r.Stage, &r.Kernel, &r.Family, &r.Category, &r.NS, &r.Launches, &r.StageNS,
			&r.HiddenNS, &r.HiddenByComputNS, &r.Site)
		return r, err
	})
}

// CompareSide is everything a comparison reads about one side.
type CompareSide struct {
	Params      CompareParams
	Run         CompareRunRow
	Steps       []CompareStepsRow // every rank when Params.Rank is invalid
	KernelSteps []CompareKernelStepsRow
	Kernels     []CompareKernelsRow
	Fusions     []FusionMatchesRow
	// CommOverlap is communication hidden under computation per stage and
	// rank (comm_overlap.sql), of the detail rank(s).
	CommOverlap []CommOverlapRow
}

// CompareFetch reads one side of a comparison. Steps come for every rank
// (for the rank spread); the kernel figures for detail, one rank (every
// rank when invalid). Whether the saved step aggregates are current is
// checked once, here (p.Fresh is set from it).
func CompareFetch(ctx context.Context, q Querier, p CompareParams, detail sql.NullInt64) (*CompareSide, error) {
	run, err := CompareRun(ctx, q, p.Run)
	if err != nil {
		return nil, err
	}
	if run == nil {
		return nil, sql.ErrNoRows
	}
	fresh, err := StepsFresh(ctx, q, []int64{p.Run})
	if err != nil {
		return nil, err
	}
	p.Fresh = fresh[p.Run]
	s := &CompareSide{Params: p, Run: *run}
	if s.Steps, err = CompareSteps(ctx, q, p); err != nil {
		return nil, err
	}
	d := p
	d.Rank = detail
	if s.KernelSteps, err = CompareKernelSteps(ctx, q, d); err != nil {
		return nil, err
	}
	if s.Kernels, err = CompareKernels(ctx, q, d); err != nil {
		return nil, err
	}
	if s.Fusions, _, err = FusionMatchesCached(ctx, q, FusionMatchesParams{Run: p.Run, Rank: detail}); err != nil {
		return nil, err
	}
	if s.CommOverlap, err = CommOverlap(ctx, q, LaunchParams{Run: p.Run, Rank: detail,
		Fresh: sql.NullBool{Bool: p.Fresh, Valid: true}}); err != nil {
		return nil, err
	}
	return s, nil
}
