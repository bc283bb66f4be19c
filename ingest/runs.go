package ingest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/tracehouse/tracehouse/vocab"
)

// runInfo is a run's row and what its files share.
type runInfo struct {
	id         int64
	label      string
	dir        string
	serverArgs *serverArgs
	argsPath   string
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
		ri := &runInfo{dir: c.runDir}
		if opt.Run != "" {
			ri.label = opt.Run
			ri.dir = c.root
		}
		if p := findServerArgs(c.path, c.root, c.runDir); p != "" {
			sa, err := readServerArgs(p)
			if err != nil {
				if opt.Notice != nil {
					opt.Notice(fmt.Sprintf("%s: ignored: %v", p, err))
				}
			} else {
				ri.serverArgs, ri.argsPath = sa, p
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
		id, label, err := findOrCreateRun(ctx, db, ri.label, abs, opt.Run != "", opt.Tags)
		if err != nil {
			return nil, err
		}
		ri.id, ri.label = id, label
	}
	return runs, nil
}

// findOrCreateRun returns the run with this label and source directory, or
// creates it. A label already used by a run from another directory gets a
// numeric suffix, unless the user chose the label with --run.
func findOrCreateRun(ctx context.Context, db *sql.DB, label, dir string, chosen bool, tags map[string]string) (int64, string, error) {
	for n := 1; ; n++ {
		l := label
		if n > 1 {
			l = fmt.Sprintf("%s-%d", label, n)
		}
		var id int64
		var src sql.NullString
		err := db.QueryRowContext(ctx, `SELECT run_id, source_dir FROM runs WHERE label = ?`, l).Scan(&id, &src)
		if err == nil {
			if chosen || src.String == dir {
				if len(tags) > 0 {
					if err := addTags(ctx, db, id, tags); err != nil {
						return 0, "", err
					}
				}
				return id, l, nil
			}
			continue
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return 0, "", fmt.Errorf("look up run %s: %w", l, err)
		}
		err = db.QueryRowContext(ctx, `INSERT INTO runs (run_id, label, source_dir, ingested_at, tags)
			VALUES (nextval('run_id_seq'), ?, ?, now()::TIMESTAMP, MAP {}) RETURNING run_id`, l, dir).Scan(&id)
		if err != nil {
			return 0, "", fmt.Errorf("create run %s: %w", l, err)
		}
		if len(tags) > 0 {
			if err := addTags(ctx, db, id, tags); err != nil {
				return 0, "", err
			}
		}
		return id, l, nil
	}
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
	// One transaction for every run's summary: committed one statement at
	// a time, 20 small runs took 105-118 ms, mostly commits. now() is then
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

// summariseRuns is finishRuns' work inside its transaction.
func summariseRuns(ctx context.Context, db *sql.Tx, runs map[string]*runInfo, stored map[string]bool) error {
	keys := make([]string, 0, len(runs))
	for k := range runs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for i, k := range keys {
		ri := runs[k]
		rows, err := db.QueryContext(ctx, `SELECT framework, coalesce(framework_evidence, '') FROM traces WHERE run_id = ? ORDER BY path, trace_id`, ri.id)
		if err != nil {
			return fmt.Errorf("summarise run %s: %w", ri.label, err)
		}
		fws := map[string]bool{}
		var evidence []string
		n := 0
		for rows.Next() {
			var f, e string
			if err := rows.Scan(&f, &e); err != nil {
				rows.Close()
				return fmt.Errorf("summarise run %s: %w", ri.label, err)
			}
			n++
			if f != vocab.FrameworkUnknown {
				fws[f] = true
			}
			if e != "" && len(evidence) < 3 && !contains(evidence, e) {
				evidence = append(evidence, e)
			}
		}
		rows.Close()
		if n == 0 {
			if _, err := db.ExecContext(ctx, `DELETE FROM runs WHERE run_id = ? AND NOT EXISTS (SELECT 1 FROM traces WHERE run_id = ?)`, ri.id, ri.id); err != nil {
				return fmt.Errorf("drop empty run %s: %w", ri.label, err)
			}
			continue
		}
		fw := vocab.FrameworkUnknown
		ev := strings.Join(evidence, "; ")
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
		_, err = db.ExecContext(ctx, `UPDATE runs SET framework = ?, framework_evidence = ?,
			model = coalesce(?, model), server_args = coalesce(?::JSON, server_args),
			tp_size = coalesce(?, tp_size), dp_size = coalesce(?, dp_size), ep_size = coalesce(?, ep_size),
			pp_size = coalesce(?, pp_size), cuda_graph = coalesce(?, cuda_graph),
			ingested_at = CASE WHEN ? THEN now()::TIMESTAMP + to_microseconds(?::BIGINT) ELSE ingested_at END
			WHERE run_id = ?`, fw, ev, model, args, tp, dp, ep, pp, graph, stored[ri.label], i, ri.id)
		if err != nil {
			return fmt.Errorf("summarise run %s: %w", ri.label, err)
		}
		// Without server args, the parallel sizes the file names imply (the
		// highest rank + 1: a lower bound when ranks were left out).
		if _, err := db.ExecContext(ctx, `UPDATE runs SET
			tp_size = coalesce(tp_size, (SELECT max(tp_rank) + 1 FROM traces WHERE run_id = ?)),
			dp_size = coalesce(dp_size, (SELECT max(dp_rank) + 1 FROM traces WHERE run_id = ?)),
			ep_size = coalesce(ep_size, (SELECT max(ep_rank) + 1 FROM traces WHERE run_id = ?)),
			pp_size = coalesce(pp_size, (SELECT max(pp_rank) + 1 FROM traces WHERE run_id = ?))
			WHERE run_id = ? AND server_args IS NULL`, ri.id, ri.id, ri.id, ri.id, ri.id); err != nil {
			return fmt.Errorf("summarise run %s: %w", ri.label, err)
		}
	}
	return nil
}

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

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
