package ingest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/tracehouse/tracehouse/inline"
	"github.com/tracehouse/tracehouse/limits"
	"github.com/tracehouse/tracehouse/vocab"
)

// runInfo is a run's row and what its files share.
type runInfo struct {
	id         int64
	label      string
	dir        string
	serverArgs *serverArgs
	argsPath   string
	model      string // Options.Model: the model when the server args do not say
	// taken is the label the run's directory gave when an earlier run
	// holds it: the run got the next free one (label), and the ingest says
	// so once a trace of it is stored.
	taken string
}

func runKey(c candidate, opt Options) string {
	if opt.Run != "" {
		return "\x00" + opt.Run
	}
	return c.runDir
}

// resolveRuns finds or creates the run row of every candidate's run before
// files are loaded in parallel (creating one run from two transactions at
// once would conflict).
func resolveRuns(ctx context.Context, db *sql.DB, cands []candidate, opt Options) (map[string]*runInfo, error) {
	runs := map[string]*runInfo{}
	var keys []string
	for _, c := range cands {
		k := runKey(c, opt)
		if _, ok := runs[k]; ok {
			continue
		}
		ri := &runInfo{dir: c.runDir, model: opt.Model}
		if opt.Run != "" {
			ri.label = opt.Run
			ri.dir = c.root
			if opt.SourceDir != "" {
				ri.dir = opt.SourceDir
			}
		}
		if p := findServerArgs(c.path, c.root, c.runDir); p != "" {
			sa, err := readServerArgs(p)
			if err != nil {
				if opt.Notice != nil {
					opt.Notice(fmt.Sprintf("%s: ignored: %v", p, err))
				}
			} else {
				ri.serverArgs, ri.argsPath = sa, p
				if opt.Notice != nil {
					for _, n := range sa.notes {
						opt.Notice(fmt.Sprintf("%s: %s", p, n))
					}
				}
			}
		}
		runs[k] = ri
		keys = append(keys, k)
	}
	sort.Strings(keys)
	// Labels are directory names; two run directories with one name in a
	// single ingest are told apart by their path below the ingest root.
	byLabel := map[string][]string{}
	for _, k := range keys {
		ri := runs[k]
		if ri.label == "" {
			ri.label = filepath.Base(ri.dir)
			if ri.label == "." || ri.label == string(filepath.Separator) {
				abs, _ := filepath.Abs(ri.dir)
				ri.label = filepath.Base(abs)
			}
		}
		// A directory name need not be UTF-8; the label is stored, so repaired.
		ri.label, _ = limits.ValidString(ri.label)
		byLabel[ri.label] = append(byLabel[ri.label], k)
	}
	for label, ks := range byLabel {
		if len(ks) < 2 {
			continue
		}
		for _, k := range ks {
			runs[k].label = label + "@" + filepath.ToSlash(filepath.Dir(runs[k].dir))
		}
	}
	for _, k := range keys {
		ri := runs[k]
		abs, _ := filepath.Abs(ri.dir)
		abs, _ = limits.ValidString(abs)
		// This ingest's files of the run, hashed only when an earlier run
		// could be the same capture (hashes kept for the load).
		var mine []*candidate
		for i := range cands {
			if runKey(cands[i], opt) == k {
				mine = append(mine, &cands[i])
			}
		}
		capture := newCapture(mine)
		id, label, err := findOrCreateRun(ctx, db, runRequest{label: ri.label, dir: abs, chosen: opt.Run != "",
			join: opt.Append, tags: opt.Tags, capture: capture})
		if err != nil {
			return nil, err
		}
		if label != ri.label {
			ri.taken = ri.label
		}
		ri.id, ri.label = id, label
	}
	return runs, nil
}

// sortedRuns are runs in key order.
func sortedRuns(runs map[string]*runInfo) []*runInfo {
	keys := make([]string, 0, len(runs))
	for k := range runs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]*runInfo, len(keys))
	for i, k := range keys {
		out[i] = runs[k]
	}
	return out
}

// capture is the files one ingest gives a run, hashed on demand.
type capture struct {
	files  []*candidate
	hashes map[string]bool
}

func newCapture(files []*candidate) *capture { return &capture{files: files} }

// holds says whether every hash is among the capture's files.
func (c *capture) holds(ctx context.Context, hashes []string) (bool, error) {
	if c.hashes == nil {
		c.hashes = map[string]bool{}
		for _, f := range c.files {
			if f.hash == "" {
				h, err := hashFile(ctx, f.path)
				if ctx.Err() != nil {
					return false, ctx.Err()
				}
				if err != nil {
					// the load reports the file's error
					continue
				}
				f.hash = h
			}
			c.hashes[f.hash] = true
		}
	}
	for _, h := range hashes {
		if !c.hashes[h] {
			return false, nil
		}
	}
	return true, nil
}

// runRequest is what findOrCreateRun is asked for.
type runRequest struct {
	label, dir string
	chosen     bool // --run: the user named the label
	join       bool // --append: add to the run of that label
	tags       map[string]string
	capture    *capture
}

// RunExistsError is a label chosen with --run that an earlier capture
// holds: the files are not added to it unless the ingest says so.
type RunExistsError struct{ Label string }

func (e *RunExistsError) Error() string {
	return fmt.Sprintf("run %s already holds traces of another capture: add --append to add these to it, or choose another --run label", e.Label)
}

// findOrCreateRun returns the run these files belong to. A run is one
// capture: an existing run is joined only when asked (join), or when it is
// the same capture again: the same directory (or chosen label) and every
// trace it holds among these files (an ingest run again after an
// interruption or a failed file, or a directory that gained files). Else a
// derived label already taken gets the next free suffix (-2, -3, ...), and a
// chosen one is an error (*RunExistsError).
func findOrCreateRun(ctx context.Context, db *sql.DB, req runRequest) (int64, string, error) {
	for n := 1; ; n++ {
		l := req.label
		if n > 1 {
			l = fmt.Sprintf("%s-%d", req.label, n)
		}
		var id int64
		var src sql.NullString
		err := db.QueryRowContext(ctx, `SELECT run_id, source_dir FROM runs WHERE label = ?`, l).Scan(&id, &src)
		if err == nil {
			same := req.join
			if !same && (req.chosen || src.String == req.dir) {
				if same, err = sameCapture(ctx, db, id, req.capture); err != nil {
					return 0, "", err
				}
			}
			if same {
				if len(req.tags) > 0 {
					if err := addTags(ctx, db, id, req.tags); err != nil {
						return 0, "", err
					}
				}
				return id, l, nil
			}
			if req.chosen {
				return 0, "", &RunExistsError{Label: l}
			}
			continue
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return 0, "", fmt.Errorf("look up run %s: %w", l, err)
		}
		err = db.QueryRowContext(ctx, `INSERT INTO runs (run_id, label, source_dir, ingested_at, tags)
			VALUES (nextval('run_id_seq'), ?, ?, now()::TIMESTAMP, MAP {}) RETURNING run_id`, l, req.dir).Scan(&id)
		if err != nil {
			return 0, "", fmt.Errorf("create run %s: %w", l, err)
		}
		if len(req.tags) > 0 {
			if err := addTags(ctx, db, id, req.tags); err != nil {
				return 0, "", err
			}
		}
		return id, l, nil
	}
}

// sameCapture says whether every trace of run id is among the capture's
// files (by content).
func sameCapture(ctx context.Context, db *sql.DB, id int64, c *capture) (bool, error) {
	rows, err := db.QueryContext(ctx, `SELECT content_hash FROM traces WHERE run_id = ?`, id)
	if err != nil {
		return false, fmt.Errorf("read run's traces: %w", err)
	}
	var hashes []string
	for rows.Next() {
		var h string
		if err := rows.Scan(&h); err != nil {
			rows.Close()
			return false, fmt.Errorf("read run's traces: %w", err)
		}
		hashes = append(hashes, h)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return false, fmt.Errorf("read run's traces: %w", err)
	}
	return c.holds(ctx, hashes)
}

func addTags(ctx context.Context, db *sql.DB, id int64, tags map[string]string) error {
	keys := make([]string, 0, len(tags))
	for k := range tags {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if _, err := db.ExecContext(ctx, `UPDATE runs SET tags = map_concat(map_from_entries(list_filter(map_entries(tags), e -> e.key <> ?)), MAP {?: ?}) WHERE run_id = ?`, k, k, tags[k], id); err != nil {
			return fmt.Errorf("tag run: %w", err)
		}
	}
	return nil
}

// finishRuns fills each run's summary from its traces and server args, and
// drops runs left without traces (every file failed or was skipped). The
// run's evidence quotes its traces' in path order, so it does not depend on
// which file a parallel ingest happened to load first. Runs are finished in
// the order they were created (their keys sorted), so that the runs of one
// ingest get their ingested_at, the order history and @latest~N follow, in
// that order too.
//
// stored holds the labels of runs this ingest added a trace to: only those
// get a new ingested_at (re-ingesting stored files changes nothing). Runs
// left without any trace (--replace moved them all elsewhere) are removed
// with whatever they still own.
func finishRuns(ctx context.Context, db *sql.DB, runs map[string]*runInfo, stored map[string]bool) error {
	ctx = context.WithoutCancel(ctx)
	// Every run's summary in one transaction (summariseRuns). now() is then
	// the same for every run, so each run's ingested_at is it plus the
	// run's place in that order, in microseconds: still one per run, in
	// the order they were created.
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("summarise runs: %w", err)
	}
	if err := summariseRuns(ctx, tx, runs, stored); err != nil {
		tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("summarise runs: %w", err)
	}
	return dropEmptyRuns(ctx, db)
}

// summariseRuns is finishRuns' work inside its transaction: every run's
// traces read by one query, and the summaries written by two statements
// for all runs (three statements per run took 102-121 ms for 20 small
// runs, one transaction or not).
func summariseRuns(ctx context.Context, tx *sql.Tx, runs map[string]*runInfo, stored map[string]bool) error {
	keys := make([]string, 0, len(runs))
	ids := make([]int64, 0, len(runs))
	for k := range runs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		ids = append(ids, runs[k].id)
	}
	traces, err := tracesOfRuns(ctx, tx, ids)
	if err != nil {
		return err
	}
	var rows [][]any // one row per run, in summaryColumns' order
	var kept []int64
	for i, k := range keys {
		ri := runs[k]
		ts := traces[ri.id]
		if len(ts) == 0 {
			if _, err := tx.ExecContext(ctx, `DELETE FROM runs WHERE run_id = ? AND NOT EXISTS (SELECT 1 FROM traces WHERE run_id = ?)`, ri.id, ri.id); err != nil {
				return fmt.Errorf("drop empty run %s: %w", ri.label, err)
			}
			continue
		}
		fw, ev := runFramework(ts)
		var model, args any
		var tp, dp, ep, pp, graph any
		if sa := ri.serverArgs; sa != nil {
			args = string(sa.raw)
			if sa.model != "" {
				model = sa.model
			}
			tp, dp, ep, pp = nullInt(sa.tp), nullInt(sa.dp), nullInt(sa.ep), nullInt(sa.pp)
			if sa.cudaGraph != nil {
				graph = *sa.cudaGraph
			}
		}
		if model == nil && ri.model != "" {
			model = ri.model
		}
		rows = append(rows, []any{ri.id, fw, ev, model, args, tp, dp, ep, pp, graph, stored[ri.label], i})
		kept = append(kept, ri.id)
	}
	if err := writeSummaries(ctx, tx, rows); err != nil {
		return err
	}
	if len(kept) == 0 {
		return nil
	}
	return parallelSizes(ctx, tx, kept)
}

// execQuerier is a *sql.DB, *sql.Tx or *sql.Conn.
type execQuerier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// runsWhere is the condition naming runs by id (nil: every run), and its
// arguments.
func runsWhere(runs []int64) (string, []any) {
	if runs == nil {
		return "true", nil
	}
	return "list_contains($runs, run_id)", []any{sql.Named("runs", runs)}
}

// parallelSizes sets the parallel sizes of runs (nil: every run) without
// server args: those the file names imply (the highest rank + 1: a lower
// bound when ranks were left out), over every trace of the run, so that a
// rank added by a later ingest (--append, or another part of a run in a
// lake) counts as it would have in one ingest of all the files.
func parallelSizes(ctx context.Context, db execQuerier, runs []int64) error {
	where, args := runsWhere(runs)
	q, qa := inline.Args(`UPDATE runs SET
		tp_size = coalesce(t.tp, runs.tp_size), dp_size = coalesce(t.dp, runs.dp_size),
		ep_size = coalesce(t.ep, runs.ep_size), pp_size = coalesce(t.pp, runs.pp_size)
		FROM (SELECT run_id, max(tp_rank) + 1 AS tp, max(dp_rank) + 1 AS dp, max(ep_rank) + 1 AS ep, max(pp_rank) + 1 AS pp
		      FROM traces WHERE `+where+` GROUP BY run_id) t
		WHERE runs.run_id = t.run_id AND runs.server_args IS NULL`, args)
	if _, err := db.ExecContext(ctx, q, qa...); err != nil {
		return fmt.Errorf("summarise runs: parallel sizes: %w", err)
	}
	return nil
}

// RunsFromTraces makes every run's row say what an ingest makes it say of
// all the run's traces: its framework and evidence (runFramework, over its
// traces in path order) and, without server args, its parallel sizes
// (parallelSizes). The rest of the row (label, server args and what they
// give, tags, ingested_at) is left as it is. A lake's readers call it
// (lake.Open): a lake's run row is written by the run's first ingest into
// it, and traces added by later ingests would not count otherwise. Only
// the rows whose framework or evidence differ get those written (the
// sizes are one statement for every run).
func RunsFromTraces(ctx context.Context, db execQuerier) error {
	traces, err := tracesOfRuns(ctx, db, nil)
	if err != nil {
		return err
	}
	rows, err := db.QueryContext(ctx, `SELECT run_id, framework, coalesce(framework_evidence, '') FROM runs ORDER BY run_id`)
	if err != nil {
		return fmt.Errorf("summarise runs: %w", err)
	}
	var changed [][]any
	for rows.Next() {
		var id int64
		var fw, ev string
		if err := rows.Scan(&id, &fw, &ev); err != nil {
			rows.Close()
			return fmt.Errorf("summarise runs: %w", err)
		}
		if ts := traces[id]; len(ts) > 0 {
			if f, e := runFramework(ts); f != fw || e != ev {
				// the rest of the summary NULL and not stored: kept as it is
				changed = append(changed, []any{id, f, e, nil, nil, nil, nil, nil, nil, nil, false, 0})
			}
		}
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return fmt.Errorf("summarise runs: %w", err)
	}
	if err := writeSummaries(ctx, db, changed); err != nil {
		return err
	}
	return parallelSizes(ctx, db, nil)
}

// summaryRows bounds the runs one summary statement writes (12 parameters
// each).
const summaryRows = 256

// traceSummary is what a run's summary reads of one of its traces.
type traceSummary struct{ framework, evidence string }

// tracesOfRuns reads the framework and its evidence of every trace of runs
// (nil: every run), by run, in path order.
func tracesOfRuns(ctx context.Context, db execQuerier, runs []int64) (map[int64][]traceSummary, error) {
	where, args := runsWhere(runs)
	q, qa := inline.Args(`SELECT run_id, framework, coalesce(framework_evidence, '') FROM traces
		WHERE `+where+` ORDER BY run_id, path, trace_id`, args)
	rows, err := db.QueryContext(ctx, q, qa...)
	if err != nil {
		return nil, fmt.Errorf("summarise runs: %w", err)
	}
	defer rows.Close()
	out := map[int64][]traceSummary{}
	for rows.Next() {
		var id int64
		var t traceSummary
		if err := rows.Scan(&id, &t.framework, &t.evidence); err != nil {
			return nil, fmt.Errorf("summarise runs: %w", err)
		}
		out[id] = append(out[id], t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("summarise runs: %w", err)
	}
	return out, nil
}

// runFramework is a run's framework and evidence from its traces' (in
// path order): the one framework they name, quoting up to three distinct
// pieces of evidence; unknown when none names one or they disagree.
func runFramework(ts []traceSummary) (fw, ev string) {
	fws := map[string]bool{}
	var evs []string
	for _, t := range ts {
		if t.framework != vocab.FrameworkUnknown {
			fws[t.framework] = true
		}
		evs = append(evs, t.evidence)
	}
	fw, ev = vocab.FrameworkUnknown, mergeEvidence(evs)
	switch len(fws) {
	case 1:
		for f := range fws {
			fw = f
		}
	case 0:
		if ev == "" {
			ev = "no evidence"
		}
	default:
		var list []string
		for f := range fws {
			list = append(list, f)
		}
		sort.Strings(list)
		ev = "traces disagree: " + strings.Join(list, ", ")
	}
	return fw, ev
}

// fileFits is the part of a trace's evidence that names its file.
var fileFits = regexp.MustCompile(`^file name (.+) fits (.+)$`)

// counted is a part of evidence ending in a count: "Python frames in vllm
// code (1209)".
var counted = regexp.MustCompile(`^(.*) \((\d+)\)$`)

// mergeEvidence is the run's evidence from its traces': each kind said
// once (the traces of one run say the same things about different files),
// file names counted, counts summed; every kind kept (the report fits the
// line to the width: what is stored is never cut short).
func mergeEvidence(evs []string) string {
	type part struct {
		text  string
		fits  string // a file name's: what it fits
		files int
		n     int64
		count bool
	}
	var parts []*part
	byKey := map[string]*part{}
	for _, e := range evs {
		if e == "" {
			continue
		}
		for _, p := range strings.Split(e, "; ") {
			key, pt := p, &part{text: p}
			if m := fileFits.FindStringSubmatch(p); m != nil {
				key, pt.fits, pt.files = "file fits "+m[2], m[2], 1
			} else if m := counted.FindStringSubmatch(p); m != nil {
				key, pt.text, pt.count = m[1], m[1], true
				pt.n, _ = strconv.ParseInt(m[2], 10, 64)
			}
			if old, ok := byKey[key]; ok {
				old.files += pt.files
				old.n += pt.n
				continue
			}
			byKey[key] = pt
			parts = append(parts, pt)
		}
	}
	var out []string
	for _, p := range parts {
		switch {
		case p.files > 1:
			out = append(out, fmt.Sprintf("%d file names fit %s", p.files, p.fits))
		case p.count:
			out = append(out, fmt.Sprintf("%s (%d)", p.text, p.n))
		default:
			out = append(out, p.text)
		}
	}
	return strings.Join(out, "; ")
}

// summaryColumns are the values of a run's summary, in the order
// writeSummaries takes them: run id, framework, evidence, then from the
// server args (NULL: keep what the run has) model, args, parallel sizes and
// CUDA graph; whether a trace was stored (then ingested_at is now plus the
// run's place, in microseconds: one instant per run, in the order they were
// created), and that place.
var summaryColumns = []struct{ name, typ string }{
	{"run_id", "BIGINT"}, {"framework", "VARCHAR"}, {"evidence", "VARCHAR"},
	{"model", "VARCHAR"}, {"args", "VARCHAR"}, {"tp", "INTEGER"}, {"dp", "INTEGER"}, {"ep", "INTEGER"}, {"pp", "INTEGER"},
	{"graph", "BOOLEAN"}, {"stored", "BOOLEAN"}, {"place", "BIGINT"},
}

// writeSummaries writes runs' summaries, one row of summaryColumns each,
// summaryRows to a statement.
func writeSummaries(ctx context.Context, db execQuerier, rows [][]any) error {
	for len(rows) > 0 {
		n := min(len(rows), summaryRows)
		if err := writeSummaryBatch(ctx, db, rows[:n]); err != nil {
			return err
		}
		rows = rows[n:]
	}
	return nil
}

func writeSummaryBatch(ctx context.Context, db execQuerier, rows [][]any) error {
	// Written in as literals (inline.Args), so the statement is planned once.
	names := make([]string, len(summaryColumns))
	for j, c := range summaryColumns {
		names[j] = c.name
	}
	values := make([]string, len(rows))
	var args []any
	for i, r := range rows {
		cols := make([]string, len(r))
		for j, v := range r {
			name := fmt.Sprintf("v%d_%d", i, j)
			cols[j] = "$" + name + "::" + summaryColumns[j].typ
			args = append(args, sql.Named(name, v))
		}
		values[i] = "(" + strings.Join(cols, ", ") + ")"
	}
	q, qa := inline.Args(`UPDATE runs SET framework = v.framework, framework_evidence = v.evidence,
		model = coalesce(v.model, runs.model), server_args = coalesce(v.args::JSON, runs.server_args),
		tp_size = coalesce(v.tp, runs.tp_size), dp_size = coalesce(v.dp, runs.dp_size),
		ep_size = coalesce(v.ep, runs.ep_size), pp_size = coalesce(v.pp, runs.pp_size),
		cuda_graph = coalesce(v.graph, runs.cuda_graph),
		ingested_at = CASE WHEN v.stored THEN now()::TIMESTAMP + to_microseconds(v.place) ELSE runs.ingested_at END
		FROM (VALUES `+strings.Join(values, ", ")+`) v(`+strings.Join(names, ", ")+`)
		WHERE runs.run_id = v.run_id`, args)
	if _, err := db.ExecContext(ctx, q, qa...); err != nil {
		return fmt.Errorf("summarise runs: %w", err)
	}
	return nil
}

// DropEmptyRuns removes runs that hold no trace (a run is made before its
// files load, so an ingest killed before any landed leaves one), with every
// row they still own: a run without traces is not a run. Commands call it
// when they open the warehouse for writing.
func DropEmptyRuns(ctx context.Context, db *sql.DB) error { return dropEmptyRuns(ctx, db) }

// dropEmptyRuns removes runs that hold no trace any more, with every row
// they still own (a saved overlap, steps).
func dropEmptyRuns(ctx context.Context, db *sql.DB) error {
	rows, err := db.QueryContext(ctx, `SELECT label FROM runs WHERE run_id NOT IN (SELECT run_id FROM traces) ORDER BY label`)
	if err != nil {
		return fmt.Errorf("find empty runs: %w", err)
	}
	var labels []string
	for rows.Next() {
		var l string
		if err := rows.Scan(&l); err != nil {
			rows.Close()
			return fmt.Errorf("find empty runs: %w", err)
		}
		labels = append(labels, l)
	}
	rows.Close()
	if len(labels) == 0 {
		return nil
	}
	_, err = RemoveRuns(ctx, db, labels)
	return err
}

func nullInt(v int) any {
	if v < 0 {
		return nil
	}
	return v
}
