package queries

import (
	"context"
	"database/sql"
)

// KernelSitesParams selects kernel_sites.sql's rows.
type KernelSitesParams struct {
	// Run is the run whose kernels are listed (the formal run in two-trace mode).
	Run int64
	// Mapping lends sites in two-trace mode; invalid = single-trace.
	Mapping sql.NullInt64
	// Rank restricts to one rank; invalid = every rank.
	Rank sql.NullInt64
	// Stage restricts to one stage; NULL = every stage.
	Stage sql.NullString
}

// KernelSitesRow is one row of kernel_sites.sql: one of the two best
// Python locations of a short name in a stage, or (SiteRank invalid) the
// only row of a short name without any. Times are nanoseconds.
type KernelSitesRow struct {
	Stage        string
	Kernel       string
	Match        string // self | exact | cross-stage | base | base-cross-stage | unmapped
	SiteRank     sql.NullInt64
	Location     sql.NullString
	SiteNS       int64
	KernelNS     int64
	SiteSharePct float64
	CPUOp        sql.NullString
	Sites        int64 // distinct locations of the kernel
	SitedNS      int64 // the kernel's GPU time that has a location
	Replay       bool  // Location is the frame around a CUDA/HIP graph launch
}

// KernelSites returns the best two Python locations of every short name of
// the run, with their CPU ops, sorted by stage, short name and rank.
func KernelSites(ctx context.Context, q Querier, p KernelSitesParams) ([]KernelSitesRow, error) {
	args := []any{
		sql.Named("run", p.Run),
		sql.Named("mapping", p.Mapping),
		sql.Named("rank", p.Rank),
		sql.Named("stage", p.Stage),
	}
	return collectSaved(ctx, q, "kernel_sites", singleTrace(p.Mapping, "name_scope", "_name_scope_none"), args, func(rows *sql.Rows) (KernelSitesRow, error) {
		var r KernelSitesRow
		err := rows.Scan(&r.Stage, &r.Kernel, &r.Match, &r.SiteRank, &r.Location, &r.SiteNS,
			&r.KernelNS, &r.SiteSharePct, &r.CPUOp, &r.Sites, &r.SitedNS, &r.Replay)
		return r, err
	})
}
