// Package ingest reads torch.profiler (Kineto) Chrome traces into the
// warehouse: discover files -> decode (gzip + streaming split + parallel
// event decoding) -> normalise (names, sites, per-thread attribution) ->
// load (DuckDB appenders, one transaction per trace file).
package ingest

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/tracehouse/tracehouse/migrations"
	"github.com/tracehouse/tracehouse/schema"
)

//go:embed sql/*.sql
var sqlFiles embed.FS

func stmt(name string) string {
	b, err := sqlFiles.ReadFile("sql/" + name + ".sql")
	if err != nil {
		// The files are embedded at build time; a missing one is a build bug.
		panic("ingest: missing embedded sql/" + name + ".sql")
	}
	return string(b)
}

// MemoryLimit is the Go heap size ingest is tuned for (runtime/debug's soft
// limit, set by the command unless GOMEMLIMIT is): it keeps the garbage of
// decoded batches from doubling the heap on multi-GB traces.
const MemoryLimit = 160 << 20

// Options are the ingest command's flags.
type Options struct {
	Run       string            // --run: one label for every file
	Framework string            // --framework, "" = detect
	Stage     string            // --stage, "" = detect
	Role      string            // --role, "" = detect
	Tags      map[string]string // --tag k=v
	Jobs      int               // files in parallel, 0 = CPUs
	Replace   bool              // re-ingest files already stored
	// Progress, when set, hears about bytes read (for a progress bar).
	Progress Progress
	// Notice, when set, hears one line per file skipped on purpose.
	Notice func(string)
}

// Progress is told the total input size, then bytes as they are read.
type Progress interface {
	Start(total int64)
	Add(n int64)
}

// Status of one file.
const (
	StatusIngested = "ingested"
	StatusAlready  = "already ingested"
	StatusSkipped  = "skipped"
	StatusFailed   = "failed"
)

// FileResult reports one file.
type FileResult struct {
	Path      string
	Status    string
	Err       error
	Reason    string // why skipped
	Run       string
	TraceID   int64
	Events    int64
	GPUEvents int64
	JSONBytes int64
	Elapsed   time.Duration
}

// Result reports an ingest.
type Result struct {
	Files []FileResult
}

// Failed counts failed files.
func (r *Result) Failed() int {
	n := 0
	for _, f := range r.Files {
		if f.Status == StatusFailed {
			n++
		}
	}
	return n
}

// Ingest ingests paths (files or directories) into the warehouse. A damaged
// file fails alone: its error is in the result, nothing of it is stored, and
// the other files still land. The error return is for problems that stop
// the whole ingest (bad arguments, no traces, database failures).
func Ingest(ctx context.Context, w *schema.Warehouse, paths []string, opt Options) (*Result, error) {
	if w.ReadOnly {
		return nil, errors.New("warehouse is open read-only")
	}
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	cands, notices, err := discover(paths, opt.Run != "")
	if err != nil {
		return nil, err
	}
	for _, n := range notices {
		if opt.Notice != nil {
			opt.Notice(n)
		}
	}
	names, err := loadInterner(ctx, w.DB)
	if err != nil {
		return nil, err
	}
	runs, err := resolveRuns(ctx, w.DB, cands, opt)
	if err != nil {
		return nil, err
	}
	if opt.Progress != nil {
		var total int64
		for _, c := range cands {
			total += c.size
		}
		opt.Progress.Start(total)
	}
	jobs := opt.Jobs
	if jobs <= 0 {
		jobs = runtime.NumCPU()
	}
	jobs = min(jobs, len(cands))
	res := &Result{Files: make([]FileResult, len(cands))}
	seen := &contentClaims{byHash: map[string]string{}}
	work := make(chan int)
	var wg sync.WaitGroup
	var fatalMu sync.Mutex
	var fatal error
	// Every decoder of every file shares the machine's cores.
	decoders := max(1, runtime.NumCPU()/jobs)
	for j := 0; j < jobs; j++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, err := w.DB.Conn(ctx)
			if err == nil {
				err = prepareConn(ctx, conn)
			}
			for i := range work {
				if err != nil {
					res.Files[i] = FileResult{Path: cands[i].path, Status: StatusFailed, Err: err}
					continue
				}
				l := &loader{db: w.DB, conn: conn, names: names, opt: opt, decoders: decoders, seen: seen}
				c := cands[i]
				if perr := safely(c.path, func() error {
					res.Files[i] = l.file(ctx, c, runs[runKey(c, opt)])
					return nil
				})(); perr != nil {
					res.Files[i] = FileResult{Path: c.path, Status: StatusFailed, Err: perr}
				}
				if res.Files[i].Status == StatusSkipped && opt.Notice != nil {
					opt.Notice(cands[i].path + ": " + res.Files[i].Reason)
				}
				var dbErr *dbError
				if errors.As(res.Files[i].Err, &dbErr) {
					fatalMu.Lock()
					if fatal == nil {
						fatal = dbErr.err
					}
					fatalMu.Unlock()
				}
			}
			if conn != nil {
				conn.Close()
			}
		}()
	}
	for i := range cands {
		select {
		case work <- i:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
	}
	close(work)
	wg.Wait()
	for i := range res.Files {
		if res.Files[i].Path == "" {
			res.Files[i] = FileResult{Path: cands[i].path, Status: StatusFailed, Err: ctx.Err()}
		}
	}
	if err := finishRuns(ctx, w.DB, runs); err != nil {
		return res, err
	}
	if ctx.Err() != nil {
		// Interrupted: whatever was mid-load rolled back; say how to finish.
		stored := 0
		for _, f := range res.Files {
			if f.Status == StatusIngested || f.Status == StatusAlready {
				stored++
			}
		}
		return res, fmt.Errorf("interrupted: %d of %d file(s) stored, nothing partial; run the same command again to finish", stored, len(res.Files))
	}
	if fatal != nil {
		return res, fatal
	}
	return res, nil
}

// Validate checks the options' enumerated values; the command reports its
// error as a usage error.
func (opt Options) Validate() error {
	check := func(flag, v string, ok ...string) error {
		if v == "" || slices.Contains(ok, v) {
			return nil
		}
		return fmt.Errorf("--%s %q: want one of %s", flag, v, strings.Join(ok, ", "))
	}
	return errors.Join(
		check("framework", opt.Framework, frameworks...),
		check("stage", opt.Stage, "prefill", "decode", "mixed"),
		check("role", opt.Role, "mapping", "formal"),
	)
}

// prepareConn creates the connection's TEMP table for derived values.
func prepareConn(ctx context.Context, conn *sql.Conn) error {
	b, err := migrations.Staging.ReadFile("staging/ingest_staging.sql")
	if err != nil {
		return err
	}
	for _, st := range schema.SplitStatements(string(b)) {
		if _, err := conn.ExecContext(ctx, st.SQL); err != nil {
			return fmt.Errorf("prepare ingest connection: %w", err)
		}
	}
	return nil
}

// dbError marks a failure of the warehouse rather than of one file.
type dbError struct{ err error }

func (e *dbError) Error() string { return e.err.Error() }
func (e *dbError) Unwrap() error { return e.err }

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
// drops runs left without traces (every file failed or was skipped).
func finishRuns(ctx context.Context, db *sql.DB, runs map[string]*runInfo) error {
	ctx = context.WithoutCancel(ctx)
	for _, ri := range runs {
		rows, err := db.QueryContext(ctx, `SELECT framework, coalesce(framework_evidence, '') FROM traces WHERE run_id = ? ORDER BY trace_id`, ri.id)
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
			if f != "unknown" {
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
		fw := "unknown"
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
			pp_size = coalesce(?, pp_size), cuda_graph = coalesce(?, cuda_graph), ingested_at = now()::TIMESTAMP
			WHERE run_id = ?`, fw, ev, model, args, tp, dp, ep, pp, graph, ri.id)
		if err != nil {
			return fmt.Errorf("summarise run %s: %w", ri.label, err)
		}
	}
	return nil
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

// openTrace opens a file, decompressing gzip (detected by its magic bytes,
// not its name).
func openTrace(path string, p Progress) (io.ReadCloser, bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false, err
	}
	var src io.Reader = f
	if p != nil {
		src = &progressReader{r: f, p: p}
	}
	var magic [2]byte
	n, _ := io.ReadFull(f, magic[:])
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		f.Close()
		return nil, false, err
	}
	if n == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := newGzipReader(src)
		if err != nil {
			f.Close()
			return nil, true, err
		}
		return readCloser{zr, f}, true, nil
	}
	return readCloser{src, f}, false, nil
}

// readCloser reads through r and closes the file underneath.
type readCloser struct {
	io.Reader
	c io.Closer
}

func (r readCloser) Close() error { return r.c.Close() }
