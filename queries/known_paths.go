package queries

import (
	"context"
	"database/sql"
)

// KnownPathPair is one overlap-table row as known_paths.sql needs it: the
// row's kernel and its dominant overlapping kernel, by short name.
type KnownPathPair struct {
	Kernel   string
	Dominant string // "" when the row has none
	// Stage is the row's stage, whose sites and CPU ops keywords see; ""
	// = KnownPathsParams.Stage.
	Stage string
}

// KnownPathParams selects the known paths of some overlap-table rows. Run,
// Mapping, Rank and Stage are those of the overlap table, so keywords see
// the same sites and CPU ops the table shows.
type KnownPathsParams struct {
	Run     int64
	Mapping sql.NullInt64
	Rank    sql.NullInt64
	Stage   sql.NullString // of pairs without one; NULL = every stage
	Pairs   []KnownPathPair
}

// KnownPathsRow is one overlap-catalog entry matching one pair.
type KnownPathsRow struct {
	// Index is the pair's position in KnownPathParams.Pairs (0-based).
	Index    int
	Kernel   string
	Dominant string
	// Matched says which side a keyword hit: "kernel", "dominant" or "both".
	Matched   string
	ID        string
	Name      string
	Framework string
	Origin    string
	Switch    string // "" when not known
	Sources   []string
	Rationale string
	Keywords  []string // the entry's keywords that hit
	// Elsewhere: the entry is another serving framework's than the run's
	// (known) framework.
	Elsewhere bool
}

// KnownPaths returns, for each pair, the overlap-catalog entries whose
// keywords match its kernel or its dominant overlapping kernel: pairs in
// order, entries of the run's own framework first, other serving
// frameworks' (Elsewhere) last, then catalog order. It
// needs the catalog installed (ingest.InstallCatalog).
func KnownPaths(ctx context.Context, q Querier, p KnownPathsParams) ([]KnownPathsRow, error) {
	kernels := make([]string, len(p.Pairs))
	dominants := make([]string, len(p.Pairs))
	stages := make([]string, len(p.Pairs))
	for i, pr := range p.Pairs {
		kernels[i], dominants[i], stages[i] = pr.Kernel, pr.Dominant, pr.Stage
	}
	args := []any{
		sql.Named("run", p.Run), sql.Named("mapping", p.Mapping), sql.Named("rank", p.Rank),
		sql.Named("stage", p.Stage), sql.Named("kernels", kernels), sql.Named("dominants", dominants),
		sql.Named("stages", stages),
	}
	return collectSaved(ctx, q, "known_paths", singleTrace(p.Mapping, "_fusion_kernels", "_fusion_kernels_none"), args, func(rows *sql.Rows) (KnownPathsRow, error) {
		var r KnownPathsRow
		var index int64
		var dominant, sw sql.NullString
		var sources, keywords []any
		err := rows.Scan(&index, &r.Kernel, &dominant, &r.Matched, &r.ID, &r.Name, &r.Framework,
			&r.Origin, &sw, &sources, &r.Rationale, &keywords, &r.Elsewhere)
		r.Index = int(index) - 1
		r.Dominant, r.Switch = dominant.String, sw.String
		r.Sources, r.Keywords = fusionStrings(sources), fusionStrings(keywords)
		return r, err
	})
}

// KnownPathsByPair groups rows by pair: out[i] holds the entries of
// p.Pairs[i], in the query's order (nil when none matched).
func KnownPathsByPair(rows []KnownPathsRow, pairs int) [][]KnownPathsRow {
	out := make([][]KnownPathsRow, pairs)
	for _, r := range rows {
		if r.Index >= 0 && r.Index < pairs {
			out[r.Index] = append(out[r.Index], r)
		}
	}
	return out
}
