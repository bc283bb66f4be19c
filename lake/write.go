package lake

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// WriteOptions say what Write copies.
type WriteOptions struct {
	// Runs are the run ids of the source to write; nil writes every run.
	Runs []int64
	// Batch is how many traces are written per COPY round (0: 32). Each
	// batch's traces are committed before the next batch starts.
	Batch int
}

// Trace statuses.
const (
	StatusWritten  = "written"
	StatusAlready  = "already in the lake"
	StatusOtherRun = "already in the lake under another run"
)

// TraceResult reports one trace of the source.
type TraceResult struct {
	Path    string // as ingested
	Hash    string // content hash
	Run     string // its run's label in the source
	Status  string
	LakeRun string // StatusOtherRun: the run that holds it in the lake
	TraceID int64  // its trace_id in the lake (0 when not written)
	RunID   int64  // its run_id in the lake (0 when not written)
	// SourceID is its trace_id in the source warehouse.
	SourceID int64
}

// WriteResult reports a Write.
type WriteResult struct {
	Traces []TraceResult
}

// Written counts the traces written.
func (r *WriteResult) Written() int {
	n := 0
	for _, t := range r.Traces {
		if t.Status == StatusWritten {
			n++
		}
	}
	return n
}

// Write copies the runs of a warehouse (db, at this binary's schema) into
// the lake at dir, creating it when needed. Traces already in the lake
// (same content hash) are skipped, so writing again adds only what is new.
// Each trace's files appear with its commit; a cancelled or killed Write
// leaves committed traces and nothing visible of the others.
func Write(ctx context.Context, db *sql.DB, dir string, opt WriteOptions) (*WriteResult, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	w := &writer{conn: conn, dir: dir}
	if err := w.prepare(ctx); err != nil {
		return nil, err
	}
	defer os.RemoveAll(w.tmp)
	srcs, err := w.sources(ctx, opt.Runs)
	if err != nil {
		return nil, err
	}
	res := &WriteResult{}
	var todo []*source
	for _, s := range srcs {
		done, damage, err := committedWhole(dir, s.hash)
		if err != nil {
			return nil, err
		}
		if done {
			res.Traces = append(res.Traces, TraceResult{Path: s.path, Hash: s.hash, Run: s.label, Status: StatusAlready, SourceID: s.id})
			continue
		}
		if err := w.clearDamagedRunRow(damage); err != nil {
			return nil, err
		}
		todo = append(todo, s)
	}
	batch := opt.Batch
	if batch <= 0 {
		batch = 32
	}
	for i := 0; i < len(todo); i += batch {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		part := todo[i:min(i+batch, len(todo))]
		out, err := w.batch(ctx, part, i/batch)
		res.Traces = append(res.Traces, out...)
		if err != nil {
			return res, err
		}
	}
	if err := w.finish(ctx); err != nil {
		return res, err
	}
	return res, nil
}

type writer struct {
	conn    *sql.Conn
	dir     string
	tmp     string
	claims  *claims
	cols    map[string][]column
	version int
	upgrade bool // the lake's files were written by an older schema
}

type column struct {
	name, typ string
}

// source is one trace of the source warehouse.
type source struct {
	id, runID    int64
	hash, label  string
	path         string
	newID, newRn int64
	overlap      bool
	steps        bool
}

func (w *writer) tracePath(hash string) string {
	return tracePath(w.dir, hash)
}

// prepare checks the lake's schema version, makes the writer's temporary
// directory and reads the source's columns.
func (w *writer) prepare(ctx context.Context) error {
	bin, err := binaryVersion()
	if err != nil {
		return err
	}
	w.version = bin
	if err := os.MkdirAll(filepath.Join(w.dir, metaDir), dirPerm); err != nil {
		return fmt.Errorf("lake %s: %w", w.dir, err)
	}
	have, err := readVersion(w.dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		w.upgrade = true
	case err != nil:
		return err
	case have > bin:
		return &NewerError{Lake: w.dir, Version: have, Binary: bin}
	case have < bin:
		w.upgrade = true
	}
	if w.tmp, err = tmpDir(w.dir); err != nil {
		return fmt.Errorf("lake %s: %w", w.dir, err)
	}
	w.claims = &claims{root: filepath.Join(w.dir, metaDir, "ids"), tmp: w.tmp}
	all, err := tableColumns(ctx, w.conn)
	if err != nil {
		return err
	}
	w.cols = map[string][]column{}
	for _, t := range Tables {
		cols := all[t.Name]
		if len(cols) == 0 {
			return fmt.Errorf("lake: the warehouse has no table %s", t.Name)
		}
		for _, c := range cols {
			if _, err := ruleOf(t.Name, c.name); err != nil {
				return err
			}
		}
		w.cols[t.Name] = cols
	}
	if err := w.schemaFiles(ctx); err != nil {
		return err
	}
	return w.meta(ctx)
}

// tableColumns lists the columns of every table (and view) of the
// warehouse, in order, by table name: one query for all of them, where one
// per table was 16 statements of a write (each about 2 ms, most of it
// DuckDB listing the catalog, the same for one table as for all).
func tableColumns(ctx context.Context, q querier) (map[string][]column, error) {
	rows, err := q.QueryContext(ctx, `SELECT table_name, column_name, data_type FROM duckdb_columns()
		WHERE database_name = current_database() AND schema_name = 'main'
		ORDER BY table_name, column_index`)
	if err != nil {
		return nil, fmt.Errorf("lake: the warehouse's columns: %w", err)
	}
	defer rows.Close()
	out := map[string][]column{}
	for rows.Next() {
		var table string
		var c column
		if err := rows.Scan(&table, &c.name, &c.typ); err != nil {
			return nil, err
		}
		out[table] = append(out[table], c)
	}
	return out, rows.Err()
}

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// schemaFiles writes each table's _schema.parquet (no rows, every column),
// so that a table's files always match its glob and a reader learns every
// column even before the first trace has one.
func (w *writer) schemaFiles(ctx context.Context) error {
	for _, t := range Tables {
		final := filepath.Join(w.dir, t.Name, schemaFile)
		there, err := exists(final)
		if err != nil {
			return err
		}
		if there && !w.upgrade {
			continue
		}
		var sel []string
		for _, c := range w.cols[t.Name] {
			sel = append(sel, fmt.Sprintf("CAST(%s AS %s) AS %[1]s", ident(c.name), fileType(c.typ)))
		}
		if t.layout == commit {
			sel = append(sel, "NULL::BOOLEAN AS "+colLakeOverlap, "NULL::BOOLEAN AS "+colLakeSteps)
		}
		tmp := filepath.Join(w.tmp, "schema-"+t.Name+".parquet")
		q := fmt.Sprintf(`COPY (SELECT %s FROM %s LIMIT 0) TO %s (FORMAT parquet, COMPRESSION zstd)`,
			strings.Join(sel, ", "), ident(t.Name), literal(tmp))
		if _, err := w.conn.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("lake: schema file of %s: %w", t.Name, err)
		}
		if err := moveInto(tmp, final); err != nil {
			return err
		}
	}
	return nil
}

// sources lists the source's traces of the given runs.
func (w *writer) sources(ctx context.Context, runs []int64) ([]*source, error) {
	q := `SELECT t.trace_id, t.run_id, t.content_hash, r.label, t.path
		FROM traces t JOIN runs r USING (run_id)`
	if runs != nil {
		if len(runs) == 0 {
			return nil, nil
		}
		q += " WHERE t.run_id IN (" + intList(runs) + ")"
	}
	rows, err := w.conn.QueryContext(ctx, q+" ORDER BY t.trace_id")
	if err != nil {
		return nil, fmt.Errorf("lake: list traces: %w", err)
	}
	defer rows.Close()
	var out []*source
	for rows.Next() {
		s := &source{}
		if err := rows.Scan(&s.id, &s.runID, &s.hash, &s.label, &s.path); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// batch claims ids for some traces, writes their files into the
// temporary directory and commits them one trace at a time.
func (w *writer) batch(ctx context.Context, srcs []*source, n int) ([]TraceResult, error) {
	var out []TraceResult
	var keep []*source
	runs := map[int64]int64{}
	for _, s := range srcs {
		rn, ok := runs[s.runID]
		if !ok {
			id, _, err := w.claims.claim(kindRun, s.label, s.runID, "")
			if err != nil {
				return out, err
			}
			rn, runs[s.runID] = id, id
		}
		id, owner, err := w.claims.claim(kindTrace, s.hash, s.id, s.label)
		if err != nil {
			return out, err
		}
		if owner != s.label {
			out = append(out, TraceResult{Path: s.path, Hash: s.hash, Run: s.label, Status: StatusOtherRun, LakeRun: owner, SourceID: s.id})
			continue
		}
		s.newID, s.newRn = id, rn
		keep = append(keep, s)
	}
	if len(keep) == 0 {
		return out, nil
	}
	if err := w.fresh(ctx, keep); err != nil {
		return out, err
	}
	if err := w.mapTables(ctx, keep); err != nil {
		return out, err
	}
	files, err := w.copyTables(ctx, filepath.Join(w.tmp, "b"+strconv.Itoa(n)))
	if err != nil {
		return out, err
	}
	for _, s := range keep {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		if err := w.commit(s, files[s.newID]); err != nil {
			return out, err
		}
		out = append(out, TraceResult{Path: s.path, Hash: s.hash, Run: s.label, Status: StatusWritten, TraceID: s.newID, RunID: s.newRn, SourceID: s.id})
	}
	return out, nil
}

// fresh marks the traces whose runs' saved overlap and step aggregates
// are current in the source (the SQL library's _overlap_current and
// _steps_current): only those are copied.
func (w *writer) fresh(ctx context.Context, srcs []*source) error {
	overlap, steps := map[int64]bool{}, map[int64]bool{}
	for _, s := range srcs {
		if _, ok := overlap[s.runID]; ok {
			continue
		}
		var o, st bool
		err := w.conn.QueryRowContext(ctx, `SELECT _overlap_current($1), _steps_current($1)`, s.runID).Scan(&o, &st)
		if err != nil {
			return fmt.Errorf("lake: saved aggregates of run %s: %w", s.label, err)
		}
		overlap[s.runID], steps[s.runID] = o, st
	}
	for _, s := range srcs {
		s.overlap, s.steps = overlap[s.runID], steps[s.runID]
	}
	return nil
}

// mapTables fills the temporary tables mapping the source's ids to the
// lake's, claiming ids for the names and sites the traces use.
func (w *writer) mapTables(ctx context.Context, srcs []*source) error {
	for _, q := range []string{
		`CREATE OR REPLACE TEMP TABLE _lake_trace (old INTEGER, new INTEGER, run_new INTEGER, overlap BOOLEAN, steps BOOLEAN, sr_base BIGINT)`,
		`CREATE OR REPLACE TEMP TABLE _lake_run (old INTEGER, new INTEGER)`,
		`CREATE OR REPLACE TEMP TABLE _lake_name (old INTEGER, new INTEGER)`,
		`CREATE OR REPLACE TEMP TABLE _lake_site (old INTEGER, new INTEGER)`,
	} {
		if _, err := w.conn.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("lake: %w", err)
		}
	}
	var traces, runs [][]string
	seen := map[int64]bool{}
	ids := make([]int64, len(srcs))
	for i, s := range srcs {
		ids[i] = s.id
		traces = append(traces, []string{itoa(s.id), itoa(s.newID), itoa(s.newRn), strconv.FormatBool(s.overlap), strconv.FormatBool(s.steps)})
		if !seen[s.runID] {
			seen[s.runID] = true
			runs = append(runs, []string{itoa(s.runID), itoa(s.newRn)})
		}
	}
	if err := w.insert(ctx, "_lake_trace (old, new, run_new, overlap, steps)", traces); err != nil {
		return err
	}
	if err := w.insert(ctx, "_lake_run", runs); err != nil {
		return err
	}
	if _, err := w.conn.ExecContext(ctx, `UPDATE _lake_trace SET sr_base = b.base
		FROM (SELECT trace_id, min(start_rank) AS base FROM kernel_overlap_store GROUP BY trace_id) b
		WHERE b.trace_id = _lake_trace.old`); err != nil {
		return fmt.Errorf("lake: %w", err)
	}
	in := intList(ids)
	for _, d := range []struct{ kind, table, key, temp string }{
		{kindName, "kernel_names", "name_id", "_lake_name"},
		{kindSite, "sites", "site_id", "_lake_site"},
	} {
		var parts []string
		for _, t := range Tables {
			if t.layout != dimension && hasColumn(w.cols[t.Name], d.key) && hasColumn(w.cols[t.Name], "trace_id") {
				parts = append(parts, fmt.Sprintf("SELECT %s FROM %s WHERE trace_id IN (%s)", d.key, ident(t.Name), in))
			}
		}
		q := fmt.Sprintf(`SELECT d.%[1]s, d.name FROM %[2]s d WHERE d.%[1]s IN (%[3]s) ORDER BY d.%[1]s`,
			d.key, ident(d.table), strings.Join(parts, " UNION "))
		rows, err := w.conn.QueryContext(ctx, q)
		if err != nil {
			return fmt.Errorf("lake: %s of the traces: %w", d.table, err)
		}
		type pair struct {
			id   int64
			name string
		}
		var used []pair
		for rows.Next() {
			var p pair
			if err := rows.Scan(&p.id, &p.name); err != nil {
				rows.Close()
				return err
			}
			used = append(used, p)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		var m [][]string
		for _, p := range used {
			id, _, err := w.claims.claim(d.kind, p.name, p.id, "")
			if err != nil {
				return err
			}
			m = append(m, []string{itoa(p.id), itoa(id)})
		}
		if err := w.insert(ctx, d.temp, m); err != nil {
			return err
		}
	}
	return nil
}

// insert adds rows of integer/boolean literals to a temporary table.
func (w *writer) insert(ctx context.Context, table string, rows [][]string) error {
	for len(rows) > 0 {
		n := min(len(rows), 1000)
		vals := make([]string, n)
		for i, r := range rows[:n] {
			vals[i] = "(" + strings.Join(r, ", ") + ")"
		}
		if _, err := w.conn.ExecContext(ctx, "INSERT INTO "+table+" VALUES "+strings.Join(vals, ", ")); err != nil {
			return fmt.Errorf("lake: fill %s: %w", table, err)
		}
		rows = rows[n:]
	}
	return nil
}

// partFile is one file DuckDB wrote for one partition.
type partFile struct {
	table       string
	file        string
	stage, rank string // byTraceStageRank
}

// copyTables writes every table's rows of the mapped traces into dir,
// partitioned by the trace's new id (and stage and rank), and returns the
// files per new trace id (runs' rows are found by runRow).
func (w *writer) copyTables(ctx context.Context, dir string) (map[int64][]partFile, error) {
	files := map[int64][]partFile{}
	if err := os.MkdirAll(dir, dirPerm); err != nil {
		return nil, err
	}
	for _, t := range Tables {
		q, part, err := w.selectSQL(t)
		if err != nil {
			return nil, err
		}
		out := filepath.Join(dir, t.Name)
		copySQL := fmt.Sprintf(`COPY (%s) TO %s (FORMAT parquet, COMPRESSION zstd, PARTITION_BY (%s))`,
			q, literal(out), strings.Join(part, ", "))
		if _, err := w.conn.ExecContext(ctx, copySQL); err != nil {
			return nil, fmt.Errorf("lake: write %s: %w", t.Name, err)
		}
		err = filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) && p == out {
					return filepath.SkipDir // no rows
				}
				return err
			}
			if d.IsDir() {
				return nil
			}
			rel, _ := filepath.Rel(out, p)
			dirs := strings.Split(filepath.ToSlash(filepath.Dir(rel)), "/")
			if len(dirs) != len(part) {
				return fmt.Errorf("lake: unexpected file %s", p)
			}
			vals := map[string]string{}
			for _, c := range dirs {
				k, v, _ := strings.Cut(c, "=")
				if v, err = url.PathUnescape(v); err != nil {
					return fmt.Errorf("lake: unexpected file %s", p)
				}
				vals[k] = v
			}
			id, err := strconv.ParseInt(vals["_t"], 10, 64)
			if err != nil {
				return fmt.Errorf("lake: unexpected file %s", p)
			}
			if t.layout == byRun {
				return nil // runRow finds it
			}
			for _, f := range files[id] {
				if f.table == t.Name && f.stage == vals["_s"] && f.rank == vals["_r"] {
					return fmt.Errorf("lake: DuckDB split one partition of %s into several files (%s, %s)", t.Name, f.file, p)
				}
			}
			files[id] = append(files[id], partFile{table: t.Name, file: p, stage: vals["_s"], rank: vals["_r"]})
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return files, nil
}

// selectSQL is the query giving a table's rows of the mapped traces with
// the lake's ids, and its partition columns.
func (w *writer) selectSQL(t Table) (string, []string, error) {
	cols := w.cols[t.Name]
	var from string
	switch t.layout {
	case byRun:
		from = fmt.Sprintf(`%s s JOIN _lake_run lr ON lr.old = s.run_id`, ident(t.Name))
	case dimension:
		var parts []string
		for _, o := range Tables {
			if o.layout != dimension && hasColumn(w.cols[o.Name], t.key) && hasColumn(w.cols[o.Name], "trace_id") {
				parts = append(parts, fmt.Sprintf("SELECT trace_id, %s FROM %s", t.key, ident(o.Name)))
			}
		}
		from = fmt.Sprintf(`(SELECT DISTINCT * FROM (%s)) u JOIN _lake_trace lt ON lt.old = u.trace_id JOIN %s s ON s.%s = u.%s`,
			strings.Join(parts, " UNION ALL "), ident(t.Name), t.key, t.key)
	default:
		from = fmt.Sprintf(`%s s JOIN _lake_trace lt ON lt.old = s.trace_id`, ident(t.Name))
	}
	if hasColumn(cols, "name_id") {
		from += " LEFT JOIN _lake_name ln ON ln.old = s.name_id"
	}
	// other name columns (idle_gap_store's next_name_id, prev_name_id)
	// each map through a join of their own
	for _, c := range cols {
		if idColumns[c.name] == nameID && c.name != "name_id" {
			from += fmt.Sprintf(" LEFT JOIN _lake_name %s ON %s.old = s.%s", ident("ln_"+c.name), ident("ln_"+c.name), ident(c.name))
		}
	}
	if hasColumn(cols, "site_id") {
		from += " LEFT JOIN _lake_site ls ON ls.old = s.site_id"
	}
	sel := make([]string, 0, len(cols)+4)
	for _, c := range cols {
		rule, err := ruleOf(t.Name, c.name)
		if err != nil {
			return "", nil, err
		}
		col := "s." + ident(c.name)
		var e string
		switch rule {
		case keep:
			e = col
		case runID:
			e = "lt.run_new"
			if t.layout == byRun {
				e = "lr.new"
			}
		case traceID:
			e = "lt.new"
		case eventID:
			e = fmt.Sprintf("(lt.new::BIGINT << 32) | (%s & 4294967295)", col)
		case nameID:
			e = "ln.new"
			if c.name != "name_id" {
				e = ident("ln_"+c.name) + ".new"
			}
		case siteID:
			e = "ls.new"
		case startRank:
			e = fmt.Sprintf("(lt.new::BIGINT << 32) + (%s - lt.sr_base + 1)", col)
		}
		sel = append(sel, fmt.Sprintf("CAST(%s AS %s) AS %s", e, fileType(c.typ), ident(c.name)))
	}
	part := []string{"_t"}
	if t.layout == byRun {
		sel = append(sel, "lr.new AS _t")
	} else {
		sel = append(sel, "lt.new AS _t")
	}
	if t.layout == byTraceStageRank {
		sel = append(sel, "s.stage AS _s", "s.rank AS _r")
		part = append(part, "_s", "_r")
	}
	if t.layout == commit {
		sel = append(sel, "lt.overlap AS "+colLakeOverlap, "lt.steps AS "+colLakeSteps)
	}
	q := "SELECT " + strings.Join(sel, ", ") + " FROM " + from
	switch t.store {
	case storeOverlap:
		q += " WHERE lt.overlap"
	case storeSteps:
		q += " WHERE lt.steps"
	}
	return q, part, nil
}

// commit moves one trace's files into place: its rows, its run's row
// (unless the run has one), and last its trace row.
// Each file's size and checksum are recorded (verify.go) before the
// commit, so a committed trace always has its record.
func (w *writer) commit(s *source, files []partFile) error {
	label := "run=" + partValue(s.label)
	var marker string
	rec := &sums{runID: s.newRn, run: s.label}
	for _, f := range files {
		var rel string
		switch t := tableByName(f.table); t.layout {
		case commit:
			marker = f.file
			continue
		case byTrace:
			rel = filepath.Join(t.Name, label, fileName(s.hash))
		case byTraceStageRank:
			rel = filepath.Join(t.Name, label, "stage="+partValue(f.stage), "rank="+partValue(f.rank), fileName(s.hash))
		case dimension:
			rel = filepath.Join(t.Name, fileName(s.hash))
		}
		sum, err := sumOf(f.file, rel)
		if err != nil {
			return err
		}
		rec.files = append(rec.files, sum)
		final := filepath.Join(w.dir, rel)
		if err := moveInto(f.file, final); err != nil {
			return fmt.Errorf("lake: %w", err)
		}
		moved(final)
	}
	if marker == "" {
		return fmt.Errorf("lake: no trace row was written for %s", s.path)
	}
	if err := w.runRow(s); err != nil {
		return err
	}
	sum, err := sumOf(marker, filepath.Join("traces", fileName(s.hash)))
	if err != nil {
		return err
	}
	rec.files = append(rec.files, sum)
	if err := w.writeSums(traceSumsPath(w.dir, s.hash), rec); err != nil {
		return err
	}
	if err := moveInto(marker, w.tracePath(s.hash)); err != nil {
		return fmt.Errorf("lake: %w", err)
	}
	moved(w.tracePath(s.hash))
	return nil
}

// writeSums puts a record in place, replacing an older one (of a killed
// or damaged earlier write).
func (w *writer) writeSums(path string, rec *sums) error {
	tmp, err := writeTemp(w.tmp, rec.encode())
	if err != nil {
		return err
	}
	if err := moveInto(tmp, path); err != nil {
		return fmt.Errorf("lake: %w", err)
	}
	moved(path)
	return nil
}

// clearDamagedRunRow removes a run's row file that does not match its
// record (and the record), so that writing the run's traces again makes
// both anew: the first writer of a run row wins, and a damaged one would
// otherwise stay.
func (w *writer) clearDamagedRunRow(damage []Damage) error {
	for _, d := range damage {
		if !strings.HasPrefix(d.File, "runs/") {
			continue
		}
		for _, p := range []string{runSumsPath(w.dir, d.RunID), filepath.Join(w.dir, filepath.FromSlash(d.File))} {
			if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("lake: %w", err)
			}
		}
	}
	return nil
}

// testHookMoved, when set (tests), hears of every file a commit moved
// into the lake (a test kills the process there).
var testHookMoved func(path string)

func moved(path string) {
	if testHookMoved != nil {
		testHookMoved(path)
	}
}

// runRow links the run's row into place unless the run has one. Its file
// sits in the batch's output under the negated run id; several traces of
// one run share it (link, not rename, leaves it for the next).
func (w *writer) runRow(s *source) error {
	final := filepath.Join(w.dir, "runs", itoa(s.newRn)+".parquet")
	there, err := exists(final)
	if err != nil || there {
		return err
	}
	matches, err := filepath.Glob(filepath.Join(w.tmp, "b*", "runs", "_t="+itoa(s.newRn), "*.parquet"))
	if err != nil {
		return err
	}
	if len(matches) == 0 {
		return fmt.Errorf("lake: no run row was written for %s", s.label)
	}
	if err := os.MkdirAll(filepath.Dir(final), dirPerm); err != nil {
		return err
	}
	created, err := linkOnce(matches[len(matches)-1], final)
	if err != nil || !created {
		return err
	}
	moved(final)
	// Its record, by the writer that made it (a writer killed here
	// leaves the row unrecorded: read unchecked).
	sum, err := sumOf(final, filepath.Join("runs", itoa(s.newRn)+".parquet"))
	if err != nil {
		return err
	}
	return w.writeSums(runSumsPath(w.dir, s.newRn), &sums{runID: s.newRn, run: s.label, files: []fileSum{sum}})
}

func tableByName(name string) Table {
	for _, t := range Tables {
		if t.Name == name {
			return t
		}
	}
	panic("lake: no table " + name)
}

// fileType is the type a column has in the lake's files: the warehouse's,
// but JSON as VARCHAR (Parquet's JSON annotation reads as binary in
// arrow-go and Trino; the views cast it back).
func fileType(typ string) string {
	if typ == "JSON" {
		return "VARCHAR"
	}
	return typ
}

func hasColumn(cols []column, name string) bool {
	return slices.ContainsFunc(cols, func(c column) bool { return c.name == name })
}

func ident(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

func literal(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

func intList(v []int64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = itoa(x)
	}
	return strings.Join(s, ", ")
}

// finish writes the catalog the source holds into the lake's own files.
func (w *writer) finish(ctx context.Context) error {
	meta := filepath.Join(w.dir, metaDir)
	for _, t := range []string{"fusion_catalog", "fusion_catalog_steps", "overlap_catalog"} {
		tmp := filepath.Join(w.tmp, "catalog-"+t+".parquet")
		q := fmt.Sprintf(`COPY (SELECT * FROM %s) TO %s (FORMAT parquet, COMPRESSION zstd)`, ident(t), literal(tmp))
		if _, err := w.conn.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("lake: write %s: %w", t, err)
		}
		if err := moveInto(tmp, filepath.Join(meta, "catalog", t+".parquet")); err != nil {
			return err
		}
	}
	return nil
}

// meta writes views.sql, spark.sql, trino.sql and, last, the schema version: a directory is a
// lake of this version from then on (its schema files are in place).
func (w *writer) meta(ctx context.Context) error {
	meta := filepath.Join(w.dir, metaDir)
	views, err := w.viewsFile(ctx)
	if err != nil {
		return err
	}
	trino, err := trinoSQL(w.version, w.cols)
	if err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		data []byte
	}{
		{"views.sql", views},
		{"spark.sql", []byte(sparkSQL(w.version, w.cols))},
		{"trino.sql", []byte(trino)},
		{"schema_version", []byte(itoa(int64(w.version)) + "\n")},
	} {
		tmp, err := writeTemp(w.tmp, f.data)
		if err != nil {
			return err
		}
		if err := moveInto(tmp, filepath.Join(meta, f.name)); err != nil {
			return err
		}
	}
	return nil
}

// friendlyViews are the migrations' views over plain tables that
// views.sql recreates for DuckDB users (the rest need tracehouse's macros:
// 'tracehouse sql --lake DIR' has them all).
var friendlyViews = []string{"py_frames", "kernel_events"}

// viewsFile is _tracehouse/views.sql.
func (w *writer) viewsFile(ctx context.Context) ([]byte, error) {
	var b strings.Builder
	fmt.Fprintf(&b, `-- tracehouse lake, schema version %d: DuckDB views over this lake's Parquet files,
-- with the warehouse's table names, columns and types. In duckdb:
--   SET VARIABLE %[2]s = '/path/to/lake';   -- or s3://bucket/lake (httpfs); default: the current directory
--   .read /path/to/lake/_tracehouse/views.sql
-- Only rows of committed traces (a file in traces/) are shown. The overlap, scope
-- and step macros are tracehouse's: 'tracehouse sql --lake DIR' has them all.
SET VARIABLE %[2]s = coalesce(getvariable('%[2]s'), '.');
`, w.version, Variable)
	for _, t := range viewOrder() {
		b.WriteString("\n" + viewSQL(readFiles(variableRoot, t.Name), t, w.cols[t.Name]) + ";\n")
	}
	for _, v := range friendlyViews {
		var def string
		err := w.conn.QueryRowContext(ctx, `SELECT sql FROM duckdb_views() WHERE database_name = current_database() AND schema_name = 'main' AND view_name = ?`, v).Scan(&def)
		if err != nil {
			return nil, fmt.Errorf("lake: view %s: %w", v, err)
		}
		def = strings.TrimSpace(strings.Replace(def, "CREATE VIEW", "CREATE OR REPLACE VIEW", 1))
		b.WriteString("\n" + strings.TrimSuffix(def, ";") + ";\n")
	}
	return []byte(b.String()), nil
}
