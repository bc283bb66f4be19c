package queries

import (
	"context"
	"database/sql"
)

// Fusion statuses: a split chain that could be fused here, a split chain
// another framework fuses, or the fused path already running.
const (
	FusionOpportunity  = "opportunity"
	FusionElsewhere    = "elsewhere"
	FusionAlreadyFused = "already fused"
)

// FusionParams selects the rows of fusion_matches.sql.
type FusionMatchesParams struct {
	// Run supplies timing: the only run, or the formal run in two-trace mode.
	Run int64
	// Mapping lends Python sites and CPU ops in two-trace mode (they decide
	// keyword hits on sites/ops and the locations shown); invalid =
	// single-trace, where each kernel's own site and op are used.
	Mapping sql.NullInt64
	// Rank restricts to one rank; invalid = every rank.
	Rank sql.NullInt64
	// Stage restricts to one stage; NULL = every stage.
	Stage sql.NullString
	// MinShare (percent of the stage's summed kernel time) hides rows under
	// it. Conflicts are resolved before, so a hidden row still claims its
	// kernels.
	MinShare float64
	// OverlapFP is the run's OverlapFingerprint, for FusionMatchesCached's
	// freshness check; invalid = computed there.
	OverlapFP sql.NullString
}

// FusionMatchesRow is one row of the fuse-pattern table.
type FusionMatchesRow struct {
	Stage   string
	Pattern string // the catalog entry's display name
	ID      string // the catalog entry's id
	// Status is FusionOpportunity, FusionElsewhere or FusionAlreadyFused.
	Status string
	// Confidence is "confirmed" (share >= the entry's likely_share, or >= 4
	// occurrences) or "candidate".
	Confidence string
	// RelatedNS is the summed duration of the related kernels: those of the
	// accepted chain occurrences, or the fused kernels.
	RelatedNS int64
	// SharePct is RelatedNS over the stage's summed kernel time, in percent.
	SharePct float64
	// Occurrences counts chain occurrences, or fused kernels.
	Occurrences int64
	// Evidence lists the related kernels' short names in chain-step order,
	// then by time; Locations their Python sites (unmapped ones left out).
	Evidence []string
	// EvidenceSharePct is each evidence kernel's related time over the
	// stage's summed kernel time, in percent (same order as Evidence).
	EvidenceSharePct []float64
	Locations        []string
	// CandidatePath is "<framework>: <first source>", where the fused path lives.
	CandidatePath string
	Sources       []string
	Rationale     string
	Switch        string // "" when not known
	Origin        string // mainline | upstream | inflight
	Framework     string // the framework of the fused path
	Priority      int64
	Steps         int64 // chain steps of the entry (0: fused keywords only)
}

// FusionMatches returns the fuse-pattern rows: opportunities and elsewhere
// rows first, by priority and related time, then already-fused rows, per
// stage (prefill, decode, mixed, unknown, others by name). It needs the
// catalog installed (ingest.InstallCatalog).
func FusionMatches(ctx context.Context, q Querier, p FusionMatchesParams) ([]FusionMatchesRow, error) {
	args := []any{
		sql.Named("run", p.Run), sql.Named("mapping", p.Mapping), sql.Named("rank", p.Rank),
		sql.Named("stage", p.Stage), sql.Named("min_share", p.MinShare), sql.Named("runs", nil),
	}
	return collect(ctx, q, "fusion_matches", args, scanFusionMatches)
}

func scanFusionMatches(rows *sql.Rows) (FusionMatchesRow, error) {
	var r FusionMatchesRow
	var evidence, shares, locations, sources []any
	var sw sql.NullString
	var run, rank any // the report's own, known to the caller
	err := rows.Scan(&r.Stage, &r.Pattern, &r.ID, &r.Status, &r.Confidence, &r.RelatedNS,
		&r.SharePct, &r.Occurrences, &evidence, &shares, &locations, &r.CandidatePath, &sources,
		&r.Rationale, &sw, &r.Origin, &r.Framework, &r.Priority, &r.Steps, &run, &rank)
	r.Evidence, r.Locations, r.Sources = fusionStrings(evidence), fusionStrings(locations), fusionStrings(sources)
	for _, v := range shares {
		f, _ := v.(float64)
		r.EvidenceSharePct = append(r.EvidenceSharePct, f)
	}
	r.Switch = sw.String
	return r, err
}

// FusionMatchesCached returns FusionMatches(p), read from the rows
// aggregates.SaveFusion saved when p is a single-trace report of one rank and
// that copy is current (fusion_fresh.sql, fusion_matches_saved.sql), and
// computed otherwise. saved says which.
func FusionMatchesCached(ctx context.Context, q Querier, p FusionMatchesParams) (rows []FusionMatchesRow, saved bool, err error) {
	if !p.Mapping.Valid && p.Rank.Valid {
		fresh, err := isFreshGiven(ctx, q, "fusion_fresh", "_fusion_current", p.OverlapFP,
			[]any{sql.Named("run", p.Run), sql.Named("rank", p.Rank.Int64)})
		if err != nil {
			return nil, false, err
		}
		if fresh {
			rows, err := collect(ctx, q, "fusion_matches_saved", []any{sql.Named("run", p.Run), sql.Named("rank", p.Rank.Int64),
				sql.Named("stage", p.Stage), sql.Named("min_share", p.MinShare)}, scanFusionMatches)
			return rows, true, err
		}
	}
	rows, err = FusionMatches(ctx, q, p)
	return rows, false, err
}

// FusionSimilarityParams selects the similarity notes of
// fusion_similarity.sql: the same scope as FusionParams, without a report
// share filter (a note is about entries that matched nowhere).
type FusionSimilarityParams struct {
	Run     int64
	Mapping sql.NullInt64
	Rank    sql.NullInt64
	Stage   sql.NullString
}

// FusionSimilarityRow is the single similarity note of one stage: no catalog entry's whole chain occurs in the stage, but all
// steps but one of a chain of three or more steps do, adjacently.
type FusionSimilarityRow struct {
	Stage string
	// Level is "high" (>= 4 occurrences and share >= the entry's
	// min_share), "medium" (one of the two) or "low" (neither).
	Level     string
	ID        string
	Pattern   string
	Framework string
	Origin    string
	Status    string // opportunity or elsewhere, as a full match would be
	// Steps is the entry's chain length; MissingStep (1-based) the step that
	// did not occur, MissingKeywords its keywords.
	Steps           int64
	MissingStep     int64
	MissingKeywords []string
	Occurrences     int64
	RelatedNS       int64
	SharePct        float64
	Evidence        []string
}

// FusionSimilarity returns at most one near-miss note per stage, for stages
// where no catalog chain occurs whole; see fusion_similarity.sql.
func FusionSimilarity(ctx context.Context, q Querier, p FusionSimilarityParams) ([]FusionSimilarityRow, error) {
	return fusionSimilarity(ctx, q, p, nil)
}

// fusionSimilarity is FusionSimilarity, of the stages listed when stages
// is not nil (p.Stage invalid).
func fusionSimilarity(ctx context.Context, q Querier, p FusionSimilarityParams, stages []string) ([]FusionSimilarityRow, error) {
	var list any // NULL, written in as such (a nil []string would be left to the driver)
	if stages != nil {
		list = stages
	}
	args := []any{
		sql.Named("run", p.Run), sql.Named("mapping", p.Mapping), sql.Named("rank", p.Rank),
		sql.Named("stage", p.Stage), sql.Named("stages", list),
	}
	return collect(ctx, q, "fusion_similarity", args, func(rows *sql.Rows) (FusionSimilarityRow, error) {
		var r FusionSimilarityRow
		var missing, evidence []any
		err := rows.Scan(&r.Stage, &r.Level, &r.ID, &r.Pattern, &r.Framework, &r.Origin, &r.Status,
			&r.Steps, &r.MissingStep, &missing, &r.Occurrences, &r.RelatedNS, &r.SharePct, &evidence)
		r.MissingKeywords, r.Evidence = fusionStrings(missing), fusionStrings(evidence)
		return r, err
	})
}

// FusionNotes returns the similarity notes a fuse-pattern table prints: it
// runs FusionSimilarity only for the stages (of stages, in that order) where
// rows, FusionMatches' result for the same run, mapping and rank, has no
// opportunity or elsewhere row. Near misses cost a pass over every chain
// with one step left out, which would be wasted where whole chains match
// (the query would find them and print nothing). The stages are asked for
// in one statement (a stage's note does not depend on another stage's
// kernels): on a small run a statement costs about the same for one stage
// or several, some 45 ms on a demo rank, mostly planning and setting up
// its operators.
func FusionNotes(ctx context.Context, q Querier, p FusionSimilarityParams, stages []string, rows []FusionMatchesRow) ([]FusionSimilarityRow, error) {
	matched := map[string]bool{}
	for _, r := range rows {
		if r.Status != FusionAlreadyFused {
			matched[r.Stage] = true
		}
	}
	var want []string
	for _, s := range stages {
		if !matched[s] && (!p.Stage.Valid || s == p.Stage.String) {
			want = append(want, s)
		}
	}
	if len(want) == 0 {
		return nil, nil
	}
	p.Stage = sql.NullString{}
	notes, err := fusionSimilarity(ctx, q, p, want)
	if err != nil {
		return nil, err
	}
	// in the order of stages, as one query per stage gave them
	var out []FusionSimilarityRow
	for _, s := range want {
		for _, n := range notes {
			if n.Stage == s {
				out = append(out, n)
			}
		}
	}
	return out, nil
}

// fusionStrings converts a scanned VARCHAR[] (duckdb-go gives []any).
func fusionStrings(v []any) []string {
	out := make([]string, 0, len(v))
	for _, e := range v {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
