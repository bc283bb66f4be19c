// Package target resolves what a command is asked to report on — run
// labels and trace paths — to runs of the warehouse, ingesting paths first,
// and picks the rank a report shows. Commands (triage, compare, report,
// capture) share it so that an argument means the same everywhere.
package target

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/tracehouse/tracehouse/catalog"
	"github.com/tracehouse/tracehouse/ingest"
	"github.com/tracehouse/tracehouse/queries"
	"github.com/tracehouse/tracehouse/schema"
)

// Opener opens the warehouse, for writing or read-only.
type Opener func(ctx context.Context, write bool) (*schema.Warehouse, error)

// Run is one run to report on.
type Run struct {
	ID    int64
	Label string
}

// IsPath says whether an argument names a file or directory rather than a
// run label: a path that exists wins over a label of the same spelling.
func IsPath(arg string) bool {
	_, err := os.Stat(arg)
	return err == nil
}

// Open opens the warehouse for a report that needs the catalog cat
// installed: for writing when write is set (paths to ingest), else
// read-only so other readers can share the file, reopening it for writing
// only when the stored catalog is another one (a lake takes the catalog
// where it is). A read-only open of a warehouse holding cat compares
// hashes only: the embedded catalog is not parsed (catalog.Lazy). When the
// warehouse cannot be written (another process holds it), the report goes
// on with the stored catalog and notice says so.
func Open(ctx context.Context, open Opener, write bool, cat *catalog.Lazy, notice func(string)) (*schema.Warehouse, error) {
	w, err := open(ctx, write)
	if err != nil {
		return nil, err
	}
	if write {
		if err := ingest.InstallCatalog(ctx, w.DB, cat.Catalog()); err != nil {
			w.Close()
			return nil, err
		}
		return w, nil
	}
	h, err := ingest.InstalledCatalogHash(ctx, w.DB)
	if err != nil {
		w.Close()
		return nil, err
	}
	if h == cat.Hash() {
		return w, nil
	}
	if w.Lake != "" {
		// A lake's database is in memory and its catalog tables stay
		// writable: install there. Opening it again for writing (as a
		// read-only file is) would read every table of the lake twice.
		if err := ingest.InstallCatalog(ctx, w.DB, cat.Catalog()); err != nil {
			w.Close()
			return nil, err
		}
		return w, nil
	}
	w.Close()
	rw, err := open(ctx, true)
	if err != nil {
		var locked *schema.LockedError
		if !errors.As(err, &locked) {
			return nil, err
		}
		notice(fmt.Sprintf("%v; fuse patterns use the catalog stored there", err))
		return open(ctx, false)
	}
	if err := ingest.InstallCatalog(ctx, rw.DB, cat.Catalog()); err != nil {
		rw.Close()
		return nil, err
	}
	return rw, nil
}

// Resolved is what one argument named.
type Resolved struct {
	Arg  string
	Runs []Run // by label; empty when no file of a path could be stored
	// Ingest is the ingest of a path argument (nil for a run label): its
	// per-file results, failures included, for the caller to report.
	Ingest *ingest.Result
}

// Resolve turns one RUN argument into runs, the same way for every
// command that takes one: a selector (@latest, @latest~N, tag:KEY=VALUE) or
// a run label names one stored run (SelectRun); a path that exists (it wins
// over a label of the same spelling) is ingested (with opt, then finished
// with cat, parsed only then: finishPaths) and gives the runs its traces
// belong to.
func Resolve(ctx context.Context, w *schema.Warehouse, arg string, opt ingest.Options, cat *catalog.Lazy) (Resolved, error) {
	if IsSelector(arg) || !IsPath(arg) {
		r, err := SelectRun(ctx, w, arg)
		var nr *NoRunError
		if errors.As(err, &nr) {
			return Resolved{}, &NotFoundError{Arg: arg, Warehouse: w.Path}
		}
		if err != nil {
			return Resolved{}, err
		}
		return Resolved{Arg: arg, Runs: []Run{r}}, nil
	}
	if w.Lake != "" {
		return Resolved{}, fmt.Errorf("%s is a path, and a lake is only read here: ingest it with 'tracehouse ingest --lake %s %s', then name its run", arg, w.Path, arg)
	}
	res, err := ingest.Ingest(ctx, w, []string{arg}, opt)
	if err != nil {
		return Resolved{}, err
	}
	if err := finishPaths(ctx, w, cat.Catalog()); err != nil {
		return Resolved{}, err
	}
	var ids []int64
	for _, r := range res.Files {
		if r.Status == ingest.StatusIngested || r.Status == ingest.StatusAlready {
			ids = append(ids, r.TraceID)
		}
	}
	rows, err := queries.TriageRunsOfTraces(ctx, w.DB, ids)
	if err != nil {
		return Resolved{}, err
	}
	out := Resolved{Arg: arg, Ingest: res}
	for _, r := range rows {
		out.Runs = append(out.Runs, Run{ID: r.RunID, Label: r.Label})
	}
	return out, nil
}

// finishPaths is Finish for a warehouse that outlives the command, and
// only the catalog for an in-memory one (`--db :memory: triage FILE`),
// which lives for this one command: its reports compute each aggregate of
// which no current copy is saved, as they read it, and saving the copies
// first cost more than that (their computation, for every rank, plus the
// inserts): one-shot `triage FILE` 0.63-0.66 -> 0.56-0.58 s, `triage` of
// the demo 4.4-4.8 -> 3.1-3.5 s, `compare PATH PATH` 1.84-1.91 -> 1.26-1.32
// s, with the same output.
func finishPaths(ctx context.Context, w *schema.Warehouse, cat *catalog.Catalog) error {
	if w.Path == schema.Memory {
		return ingest.InstallCatalog(ctx, w.DB, cat)
	}
	return Finish(ctx, w.DB, cat)
}

// Latest is the most recently ingested run.
func Latest(ctx context.Context, w *schema.Warehouse) (Run, error) {
	runs, err := queries.Runs(ctx, w.DB)
	if err != nil {
		return Run{}, err
	}
	if len(runs) == 0 {
		return Run{}, &EmptyError{Warehouse: w.Path}
	}
	return Run{ID: runs[0].RunID, Label: runs[0].Label}, nil
}

// NotFoundError is an argument that is neither a path nor a run.
type NotFoundError struct {
	Arg       string
	Warehouse string
}

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("%q is neither a file, a directory nor a run of %s (see 'tracehouse runs')", e.Arg, e.Warehouse)
}

// EmptyError is a warehouse without runs.
type EmptyError struct{ Warehouse string }

func (e *EmptyError) Error() string {
	return fmt.Sprintf("no runs in %s: pass a trace PATH, or ingest with 'tracehouse ingest PATH'", e.Warehouse)
}

// Rank picks the rank a one-rank report of run shows: want when the run has
// GPU events there; else, unless the caller insisted (explicit), the run's
// lowest rank with GPU events, and fellBack says so.
func Rank(ctx context.Context, q queries.Querier, run Run, want int64, explicit bool) (rank int64, fellBack bool, err error) {
	events, err := queries.TriageGPUEvents(ctx, q, run.ID)
	if err != nil {
		return 0, false, err
	}
	return RankOf(events, run, want, explicit)
}

// RankOf is Rank for a caller that read the run's GPU events
// (queries.TriageGPUEvents) itself, to show them too.
func RankOf(events []queries.TriageGPUEventsRow, run Run, want int64, explicit bool) (rank int64, fellBack bool, err error) {
	var ranks []int64
	for _, e := range events {
		if e.Events > 0 && !slices.Contains(ranks, e.Rank) {
			ranks = append(ranks, e.Rank)
		}
	}
	if len(ranks) == 0 || slices.Contains(ranks, want) {
		return want, false, nil
	}
	if explicit {
		return 0, false, &NoRankError{Run: run.Label, Rank: want, Ranks: ranks}
	}
	return slices.Min(ranks), true, nil
}

// NoRankError is a rank asked for that has no GPU events in the run.
type NoRankError struct {
	Run   string
	Rank  int64
	Ranks []int64
}

func (e *NoRankError) Error() string {
	s := make([]string, len(e.Ranks))
	for i, r := range e.Ranks {
		s[i] = strconv.FormatInt(r, 10)
	}
	return fmt.Sprintf("run %s has no GPU events on rank %d (ranks: %s)", e.Run, e.Rank, strings.Join(s, ", "))
}

// Needs says how a command naming runs by args must open the warehouse
// for Resolve: for writing when an argument is a path (it is ingested
// first), and which run labels a lake must read: nil (every run) when an
// argument is a selector or a path, since which run it names is known
// only once the lake is open. Empty arguments are skipped.
func Needs(args ...string) (write bool, labels []string) {
	all := false
	for _, a := range args {
		switch {
		case a == "":
			continue
		case IsSelector(a):
			all = true
		case IsPath(a):
			write, all = true, true
		}
		labels = append(labels, a)
	}
	if all {
		return write, nil
	}
	return false, labels
}

// IsSelector says whether arg is @latest, @latest~N or tag:KEY=VALUE
// rather than a run label or a path.
func IsSelector(arg string) bool {
	return arg == "@latest" || strings.HasPrefix(arg, "@latest~") || strings.HasPrefix(arg, "tag:")
}

// SelectRun resolves a selector (@latest: the most recently ingested run;
// @latest~N: N runs before it; tag:KEY=VALUE: the latest run carrying that
// tag) or a run label to one stored run holding traces, never ingesting:
// for commands that change stored runs (tag, rm, rename) or read them only
// (runs RUN, export).
func SelectRun(ctx context.Context, w *schema.Warehouse, arg string) (Run, error) {
	var key, value sql.NullString
	back := 0
	switch {
	case arg == "@latest" || strings.HasPrefix(arg, "@latest~"):
		if n, ok := strings.CutPrefix(arg, "@latest~"); ok {
			v, err := strconv.Atoi(n)
			if err != nil || v < 0 {
				return Run{}, &SelectorError{Arg: arg, Why: "want @latest or @latest~N with N >= 0"}
			}
			back = v
		}
	case strings.HasPrefix(arg, "tag:"):
		k, v, ok := strings.Cut(strings.TrimPrefix(arg, "tag:"), "=")
		if !ok || k == "" {
			return Run{}, &SelectorError{Arg: arg, Why: "want tag:KEY=VALUE"}
		}
		key, value = sql.NullString{String: k, Valid: true}, sql.NullString{String: v, Valid: true}
	default:
		r, err := queries.TriageRun(ctx, w.DB, sql.NullInt64{}, sql.NullString{String: arg, Valid: true})
		if err != nil {
			return Run{}, err
		}
		if r == nil {
			return Run{}, &NoRunError{Label: arg, Warehouse: w.Path}
		}
		return stored(ctx, w, Run{ID: r.RunID, Label: r.Label})
	}
	rows, err := queries.RunSelect(ctx, w.DB, key, value)
	if err != nil {
		return Run{}, err
	}
	if back >= len(rows) {
		why := fmt.Sprintf("%s has only %d run(s)", w.Path, len(rows))
		if key.Valid {
			why = fmt.Sprintf("no run of %s carries tag %s=%s", w.Path, key.String, value.String)
		}
		return Run{}, &SelectorError{Arg: arg, Why: why}
	}
	return Run{ID: rows[back].RunID, Label: rows[back].Label}, nil
}

// stored is run when it holds a trace, else an *EmptyRunError: a run row
// without traces is what an ingest killed before any file landed leaves
// (removed when the warehouse is next opened for writing).
func stored(ctx context.Context, w *schema.Warehouse, run Run) (Run, error) {
	traces, err := queries.TriageTraces(ctx, w.DB, run.ID)
	if err != nil {
		return Run{}, err
	}
	if len(traces) == 0 {
		return Run{}, &EmptyRunError{Label: run.Label}
	}
	return run, nil
}

// EmptyRunError is a run that holds no trace.
type EmptyRunError struct{ Label string }

func (e *EmptyRunError) Error() string {
	return fmt.Sprintf("run %s holds no traces (an interrupted ingest left it; the next ingest removes it): nothing to read", e.Label)
}

// SelectRuns is SelectRun for each argument, in order, each run once.
func SelectRuns(ctx context.Context, w *schema.Warehouse, args []string) ([]Run, error) {
	var out []Run
	seen := map[int64]bool{}
	for _, a := range args {
		r, err := SelectRun(ctx, w, a)
		if err != nil {
			return nil, err
		}
		if !seen[r.ID] {
			seen[r.ID] = true
			out = append(out, r)
		}
	}
	return out, nil
}

// SelectTagged is every run carrying all of tags (key=value), newest
// first; none given: every run. No such run is an error: "no run of W
// carries k=v", or *EmptyError for an empty warehouse.
func SelectTagged(ctx context.Context, w *schema.Warehouse, tags []string) ([]Run, error) {
	var key, value sql.NullString
	if len(tags) > 0 {
		k, v, _ := strings.Cut(tags[0], "=")
		key, value = sql.NullString{String: k, Valid: true}, sql.NullString{String: v, Valid: true}
	}
	rows, err := queries.RunSelect(ctx, w.DB, key, value)
	if err != nil {
		return nil, err
	}
	var runs []Run
	for _, r := range rows {
		if hasTags(r.Tags, tags) {
			runs = append(runs, Run{ID: r.RunID, Label: r.Label})
		}
	}
	if len(runs) == 0 {
		if len(tags) > 0 {
			return nil, fmt.Errorf("no run of %s carries %s", w.Path, strings.Join(tags, " and "))
		}
		return nil, &EmptyError{Warehouse: w.Path}
	}
	return runs, nil
}

// hasTags says whether a run's tags (key=value) include every wanted one.
func hasTags(have, want []string) bool {
	for _, t := range want {
		if !slices.Contains(have, t) {
			return false
		}
	}
	return true
}

// NoRunError is a run label the warehouse does not hold.
type NoRunError struct {
	Label     string
	Warehouse string
}

func (e *NoRunError) Error() string {
	return fmt.Sprintf("no run labelled %q in %s (see 'tracehouse runs')", e.Label, e.Warehouse)
}

// SelectorError is a selector that names no run.
type SelectorError struct {
	Arg, Why string
}

func (e *SelectorError) Error() string { return fmt.Sprintf("selector %q: %s", e.Arg, e.Why) }
