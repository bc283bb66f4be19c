package lake

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/thrift/lib/go/thrift"

	"github.com/tracehouse/tracehouse/ingest"
	"github.com/tracehouse/tracehouse/migrations"
	"github.com/tracehouse/tracehouse/schema"
)

// Variable is the DuckDB variable naming the lake directory in views.sql
// (its views read getvariable(Variable) || '/<table>/**/*.parquet').
const Variable = "tracehouse_lake"

// NewerError is a lake written by a newer tracehouse.
type NewerError struct {
	Lake            string
	Version, Binary int
}

func (e *NewerError) Error() string {
	return fmt.Sprintf("lake %s has schema version %d, newer than this tracehouse knows (%d): upgrade tracehouse", e.Lake, e.Version, e.Binary)
}

// NotLakeError is a directory that holds no lake.
type NotLakeError struct{ Dir string }

func (e *NotLakeError) Error() string {
	return fmt.Sprintf("%s is not a tracehouse lake (no %s/schema_version): write one with 'tracehouse export --lake %s' or 'tracehouse ingest --lake %s PATH'",
		e.Dir, metaDir, e.Dir, e.Dir)
}

func binaryVersion() (int, error) {
	ms, err := schema.LoadMigrations(migrations.FS)
	if err != nil {
		return 0, err
	}
	return len(ms), nil
}

func readVersion(dir string) (int, error) {
	b, err := os.ReadFile(filepath.Join(dir, metaDir, "schema_version"))
	if err != nil {
		return 0, err
	}
	v, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0, fmt.Errorf("lake %s: %s/schema_version is damaged", dir, metaDir)
	}
	return v, nil
}

// checkReadable says whether at holds a lake this binary reads: one with
// a schema version no newer than its own migrations. Errors name the lake
// as dir (the user's spelling of at).
func checkReadable(at, dir string) error {
	have, err := readVersion(at)
	if errors.Is(err, fs.ErrNotExist) {
		return &NotLakeError{Dir: dir}
	}
	if err != nil {
		return err
	}
	bin, err := binaryVersion()
	if err != nil {
		return err
	}
	if have > bin {
		return &NewerError{Lake: dir, Version: have, Binary: bin}
	}
	return nil
}

// Open opens the lake at dir for reading: an in-memory DuckDB database
// with the warehouse's schema and SQL library (every macro and view) in
// which each table of Tables is a view over the lake's Parquet files, so
// every query of tracehouse runs unchanged. The catalog tables stay
// writable (a report installs its catalog); the rest is read-only. engine
// sets up that database (its Threads; the rest is ignored).
func Open(ctx context.Context, dir string, engine schema.Options) (*schema.Warehouse, error) {
	return OpenRuns(ctx, dir, engine, nil)
}

// OpenRuns is Open for a reader of the runs labelled runs only (nil: every
// run): the event tables' views name the files of those runs' directories
// (run=<label>/) and leave every other run's out, so that a query reads
// the files of the runs it reports on, not of the whole lake (every query
// of a report scans each file its views name). The runs, traces, names
// and sites tables stay whole, so labels resolve as in Open; a label with
// no directory shows no events, as its run has none.
//
// Every file it reads is checked against the size and checksum recorded
// when it was written (verify.go); a damage is an error (*DamagedError).
// OpenRead can leave the runs with damaged files out instead.
func OpenRuns(ctx context.Context, dir string, engine schema.Options, runs []string) (*schema.Warehouse, error) {
	return OpenRead(ctx, dir, engine, ReadOptions{Runs: runs})
}

// ReadOptions say how OpenRead opens a lake.
type ReadOptions struct {
	// Runs, when not nil, are the labels of the runs read (see OpenRuns).
	Runs []string
	// Warn, when set, hears of each damaged file (one line naming it and
	// its run), and the runs holding one are left out of the opened lake
	// (their traces, events and run rows), so the rest reads whole.
	// Unset, a damaged file fails the opening.
	Warn func(string)
	// Load, with Runs, reads the rows of the tables kept per trace into
	// memory at the opening when those runs' files of them total at most
	// LoadBytes, instead of leaving views over the files: a report of a
	// small run runs 20-30 queries, and each read every file its views
	// name again (most of a lake triage of a demo run's time).
	Load bool
}

// LoadBytes is the most Parquet a ReadOptions.Load opening reads into
// memory (the rows take several times their compressed size there); a
// larger selection stays views over the files, so an opening's memory does
// not grow with the runs it reads.
const LoadBytes = 8 << 20

// OpenRead is OpenRuns with options.
func OpenRead(ctx context.Context, dir string, engine schema.Options, opt ReadOptions) (*schema.Warehouse, error) {
	runs := opt.Runs
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if err := checkReadable(abs, dir); err != nil {
		return nil, err
	}
	// Every connection names the lake (tracehouse_lake), which tells the
	// SQL library that its tables never change: the fingerprints that
	// guard a warehouse's saved copies are constants here.
	engine.Lake = abs
	w, err := schema.Open(ctx, schema.Memory, engine)
	if err != nil {
		return nil, err
	}
	damage, notes, err := attach(ctx, w, abs, runs, opt.Load && runs != nil)
	if err == nil && opt.Warn != nil {
		for _, n := range notes {
			opt.Warn(fmt.Sprintf("lake %s: %s", dir, n))
		}
	}
	if err == nil && len(damage) > 0 {
		if opt.Warn == nil {
			err = &DamagedError{Dir: dir, Damage: damage}
		} else {
			for _, d := range damage {
				opt.Warn(fmt.Sprintf("lake %s: %s: run %s is left out; write its traces again ('tracehouse ingest --lake' of its files, or 'tracehouse export --lake' from a warehouse holding it) to repair it",
					dir, d, d.Run))
			}
		}
	}
	if err != nil {
		w.Close()
		return nil, err
	}
	// A copy of w, so that closing it also removes what schema.Open made
	// for an in-memory warehouse (its temporary file).
	lw := *w
	lw.Path, lw.ReadOnly, lw.Lake = dir, true, abs
	return &lw, nil
}

// attach replaces the tables of a freshly migrated in-memory warehouse by
// the lake's: the small ones (traces, runs, names, sites) are read into
// memory once, which fixes the set of traces the opened lake shows (later
// commits by other writers stay out of it); the event tables are views
// over their files, showing the rows of those traces only.
//
// With load, the event tables are read into memory instead when their
// files are small (ReadOptions.Load).
//
// It returns the damaged files it found (their runs are left out) and
// notes of merged files found damaged (their traces are read from their
// own files instead).
func attach(ctx context.Context, w *schema.Warehouse, dir string, runs []string, load bool) (_ []Damage, _ []string, err error) {
	conn, err := w.DB.Conn(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer conn.Close()
	exec := func(q string) error {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("lake %s: %w", dir, err)
		}
		return nil
	}
	if err := exec(`SET parquet_metadata_cache = true`); err != nil {
		return nil, nil, err
	}
	// The warehouse's columns and descriptions, and the files' layouts,
	// are read once for every table: a query per table was a third of an
	// opening's time (the statements, not the rows).
	order := viewOrder()
	cols, comments, err := warehouseTables(ctx, conn)
	if err != nil {
		return nil, nil, err
	}
	mg, err := readMerged(dir, runs)
	if err != nil {
		return nil, nil, err
	}
	rc, err := loadChecks(dir, mg.covered)
	if err != nil {
		return nil, nil, err
	}
	froms, have, perTrace, err := listedFiles(dir, order, runs, rc, mg)
	if err != nil {
		return nil, nil, err
	}
	load = load && perTrace <= LoadBytes
	damage := rc.damaged()
	var leftOut []int64
	for id := range rc.damage {
		leftOut = append(leftOut, id)
	}
	slices.Sort(leftOut)
	// One transaction for every statement of the opening: DuckDB commits
	// each statement run on its own, which was most of their time.
	if err := exec("BEGIN TRANSACTION"); err != nil {
		return nil, nil, err
	}
	defer func() {
		if err != nil {
			_, rerr := conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
			err = errors.Join(err, rerr)
		}
	}()
	// The trace rows are read from their files once, for the traces table
	// and for the bookkeeping of derivedSQL (lake_overlap, lake_steps).
	if err := exec("CREATE TEMP TABLE " + traceRows + " AS SELECT * FROM " + froms["traces"]); err != nil {
		return nil, nil, err
	}
	froms["traces"] = traceRows
	var ddl []string
	for _, t := range order {
		if len(cols[t.Name]) == 0 {
			return nil, nil, fmt.Errorf("lake: the warehouse has no table %s", t.Name)
		}
		kind := "VIEW"
		if load || t.layout == commit || t.layout == byRun || t.layout == dimension {
			kind = "TABLE"
		}
		if err := exec("DROP TABLE " + ident(t.Name)); err != nil {
			return nil, nil, err
		}
		q := selectSQL(froms[t.Name], t, cols[t.Name], have[t.Name], true)
		if t.layout == commit && len(leftOut) > 0 {
			// the runs with a damaged file: none of their traces shows,
			// so neither do their rows of any other table
			q += "\nWHERE run_id NOT IN (" + intList(leftOut) + ")"
		}
		if err := exec(fmt.Sprintf("CREATE %s %s AS\n%s", kind, ident(t.Name), q)); err != nil {
			return nil, nil, fmt.Errorf("read %s: %w", t.Name, err)
		}
		for _, c := range comments[t.Name] {
			ddl = append(ddl, c.statement(kind, t.Name))
		}
	}
	// A run's row file is its first writer's: what the row says of all
	// the run's traces is taken from the traces it has now, as a
	// warehouse's ingest takes it (a run may be written in parts).
	if err := ingest.RunsFromTraces(ctx, conn); err != nil {
		return nil, nil, fmt.Errorf("lake %s: %w", dir, err)
	}
	derived, derivedComments := derivedSQL(traceRows)
	// The bookkeeping views keep the warehouse tables' column names and
	// meanings, so their columns keep the warehouse's descriptions.
	for _, v := range derivedViews {
		for _, c := range comments[v] {
			if c.column != "" {
				derivedComments = append(derivedComments, c.statement("VIEW", v))
			}
		}
	}
	// The descriptions wait in a table for Describe: 60 COMMENT statements
	// were a third of an opening's time, and only `schema` (or a user's
	// query of duckdb_columns) reads them.
	ddl = append(ddl, derivedComments...)
	lits := make([]string, len(ddl))
	for i, d := range ddl {
		lits[i] = literal(d)
	}
	derived = append(derived, fmt.Sprintf("CREATE TABLE %s AS SELECT unnest([%s]::VARCHAR[]) AS stmt",
		describeTable, strings.Join(lits, ", ")), "DROP TABLE "+traceRows, "COMMIT")
	// One call for the bookkeeping views: DuckDB runs the statements in
	// turn (no value is bound, so the driver allows it).
	err = exec(strings.Join(derived, ";\n"))
	return damage, mg.notes, err
}

// traceRows holds the trace rows of an opening while it makes the tables
// that read them.
const traceRows = "temp._lake_trace_rows"

// describeTable holds the COMMENT statements Describe runs.
const describeTable = "_lake_describe"

// Describe gives the tables and views of a lake opened by Open or OpenRuns
// the warehouse's descriptions (a no-op the second time, and on a
// warehouse). Commands that show them (`schema`, `sql`) call it.
func Describe(ctx context.Context, w *schema.Warehouse) error {
	if w.Lake == "" {
		return nil
	}
	conn, err := w.DB.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	var pending bool
	if err := conn.QueryRowContext(ctx, "SELECT count(*) > 0 FROM duckdb_tables() WHERE schema_name = 'main' AND table_name = '"+
		describeTable+"'").Scan(&pending); err != nil || !pending {
		return err
	}
	rows, err := conn.QueryContext(ctx, "SELECT stmt FROM "+describeTable)
	if err != nil {
		return err
	}
	var stmts []string
	for rows.Next() {
		var st string
		if err := rows.Scan(&st); err != nil {
			rows.Close()
			return err
		}
		stmts = append(stmts, st)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return err
	}
	// In one transaction: each COMMENT committed on its own took 3-4
	// times as long (0.35 against 0.09 CPU-s for the demo lake).
	stmts = append(stmts, "DROP TABLE "+describeTable, "COMMIT")
	if _, err := conn.ExecContext(ctx, "BEGIN TRANSACTION;\n"+strings.Join(stmts, ";\n")); err != nil {
		_, rerr := conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
		return errors.Join(fmt.Errorf("lake %s: describe: %w", w.Lake, err), rerr)
	}
	return nil
}

// viewOrder is Tables with traces first: the other views filter on it.
func viewOrder() []Table {
	out := []Table{tableByName("traces")}
	for _, t := range Tables {
		if t.Name != "traces" {
			out = append(out, t)
		}
	}
	return out
}

// comment is a description of a table (column "") or of one of its columns.
type comment struct{ column, text string }

// statement gives a table's view (kind VIEW) or copy (TABLE) the comment.
func (c comment) statement(kind, table string) string {
	if c.column == "" {
		return fmt.Sprintf("COMMENT ON %s %s IS %s", kind, ident(table), literal(c.text))
	}
	return fmt.Sprintf("COMMENT ON COLUMN %s.%s IS %s", ident(table), ident(c.column), literal(c.text))
}

// warehouseTables reads the columns (in order) and the descriptions of
// every table of the freshly migrated warehouse, by table name.
func warehouseTables(ctx context.Context, q querier) (map[string][]column, map[string][]comment, error) {
	rows, err := q.QueryContext(ctx, `SELECT table_name, column_name, data_type, comment FROM (
		SELECT table_name, column_index, column_name, data_type, comment FROM duckdb_columns()
		WHERE database_name = current_database() AND schema_name = 'main'
		UNION ALL
		SELECT table_name, NULL, NULL, NULL, comment FROM duckdb_tables()
		WHERE database_name = current_database() AND schema_name = 'main' AND comment IS NOT NULL)
		ORDER BY table_name, column_index NULLS FIRST`)
	if err != nil {
		return nil, nil, fmt.Errorf("lake: the warehouse's tables: %w", err)
	}
	defer rows.Close()
	cols := map[string][]column{}
	comments := map[string][]comment{}
	for rows.Next() {
		var table string
		var col, typ, text *string
		if err := rows.Scan(&table, &col, &typ, &text); err != nil {
			return nil, nil, err
		}
		if col != nil {
			cols[table] = append(cols[table], column{name: *col, typ: *typ})
		}
		if text != nil {
			c := comment{text: *text}
			if col != nil {
				c.column = *col
			}
			comments[table] = append(comments[table], c)
		}
	}
	return cols, comments, rows.Err()
}

// listedFiles gives each table the read_parquet call over the files it
// has now, named one by one: every query of an opened lake binds its views
// again, and a glob there lists the table's directories each time, and
// union_by_name reads every file's footer each time (about 7% of a lake
// triage of the demo; scanning every file per query is most of the rest).
// Files are only ever added or replaced by a rename, so the lists stay
// readable while the lake is open; files added later stay out, as their
// traces do (attach). union_by_name is kept only for a table whose files'
// columns differ (a lake written by an older tracehouse, then upgraded).
// The files' layouts are read from their footers (fileLayouts), and so
// are the columns each table's files hold (a lake written by an older
// tracehouse lacks the newer ones; its views give them as NULL). With runs, a
// table kept per run lists its _schema.parquet (no rows, the columns) and
// the directories of those runs only (see OpenRuns).
// Files of traces not committed are left out, and so are files that do
// not match their records (rc notes them). perTrace is the size of the
// files listed for the tables kept per trace (the views).
func listedFiles(dir string, tables []Table, runs []string, rc *readerChecks, mg *merged) (_ map[string]string, _ map[string]map[string]bool, perTrace int64, _ error) {
	var files map[string][]string
	var err error
	if rc.unrecorded == 0 {
		files, err = recordedFiles(dir, tables, runs, rc)
	} else {
		files, err = walkedFiles(dir, tables, runs, rc)
	}
	if err != nil {
		return nil, nil, 0, err
	}
	var paths []string
	for _, t := range tables {
		files[t.Name] = append(files[t.Name], mg.files[t.Name]...)
		paths = append(paths, files[t.Name]...)
		if len(files[t.Name]) == 0 {
			return nil, nil, 0, fmt.Errorf("lake %s: read %s: no Parquet files under %s", dir, t.Name, filepath.Join(dir, t.Name))
		}
		if t.layout == byTrace || t.layout == byTraceStageRank {
			for _, f := range files[t.Name] {
				st, err := os.Stat(f)
				if err != nil {
					return nil, nil, 0, fmt.Errorf("lake %s: %w", dir, err)
				}
				perTrace += st.Size()
			}
		}
	}
	layout, top, err := fileLayouts(dir, paths)
	if err != nil {
		return nil, nil, 0, err
	}
	// have: each table's columns, in any of its files
	have := map[string]map[string]bool{}
	// read is the read_parquet call over some of a table's files
	read := func(t Table, fs []string) (string, error) {
		seen := map[string]bool{}
		list := make([]string, len(fs))
		if have[t.Name] == nil {
			have[t.Name] = map[string]bool{}
		}
		for i, f := range fs {
			l, ok := layout[f]
			if !ok {
				return "", fmt.Errorf("lake %s: read %s: no schema read for %s", dir, t.Name, f)
			}
			if !seen[l] {
				for _, c := range top[f] {
					have[t.Name][c] = true
				}
			}
			seen[l] = true
			list[i] = literal(f)
		}
		union := ""
		if len(seen) > 1 {
			union = ", union_by_name = true"
		}
		return fmt.Sprintf(`read_parquet([%s], hive_partitioning = false%s)`, strings.Join(list, ", "), union), nil
	}
	froms := map[string]string{}
	for _, t := range tables {
		ids := chunkFilter(t, runs, mg)
		if ids == nil {
			from, err := read(t, files[t.Name])
			if err != nil {
				return nil, nil, 0, err
			}
			froms[t.Name] = from
			continue
		}
		// A chunk holds other runs too: the table shows the traces of the
		// runs asked for, as their own files would (the chunk's row
		// groups of other traces are skipped by their statistics).
		own := files[t.Name][:len(files[t.Name])-len(mg.files[t.Name])]
		chunks, err := read(t, mg.files[t.Name])
		if err != nil {
			return nil, nil, 0, err
		}
		from := fmt.Sprintf("SELECT * FROM %s WHERE trace_id IN (%s)", chunks, intList(ids))
		if len(own) > 0 {
			ownFrom, err := read(t, own)
			if err != nil {
				return nil, nil, 0, err
			}
			from += "\nUNION ALL BY NAME SELECT * FROM " + ownFrom
		}
		froms[t.Name] = "(" + from + ")"
	}
	return froms, have, perTrace, nil
}

// fileLayouts reads the footer of every file: for each, a signature of
// its layout (its schema elements: files alike are read without
// union_by_name) and its top-level columns in order (what DESCRIBE of a
// read of it names). Read here, not by DuckDB's parquet_schema (a third of
// the opening of the demo lake, 296 files, plus a DESCRIBE per table):
// two reads per file, and only the footer's schema decoded.
func fileLayouts(dir string, files []string) (layout map[string]string, top map[string][]string, err error) {
	layout, top = map[string]string{}, map[string][]string{}
	for _, f := range files {
		if _, ok := layout[f]; ok {
			continue
		}
		cols, sig, err := fileLayout(f)
		if err != nil {
			name := f
			if rel, rerr := filepath.Rel(dir, f); rerr == nil {
				name = filepath.ToSlash(rel)
			}
			return nil, nil, fmt.Errorf("lake %s: %s is not a readable Parquet file (%s): remove it, and write its trace again", dir, name, oneLineErr(err))
		}
		layout[f], top[f] = sig, cols
	}
	return layout, top, nil
}

// fileLayout is a Parquet file's top-level columns and the signature of
// its layout: each schema element's path and bytes in the footer, sorted
// (so that files differing only in their columns' order read alike, as
// DuckDB matches columns by name).
func fileLayout(path string) (cols []string, signature string, err error) {
	elems, err := footerSchema(path)
	if err != nil {
		return nil, "", err
	}
	// The elements are the schema flattened depth first (a group's
	// children after it), the root first: the root's children are the
	// columns.
	var sig []string
	type group struct {
		path string
		left int32
	}
	open := []group{{left: elems[0].children}}
	for _, e := range elems[1:] {
		if len(open) == 0 {
			return nil, "", errors.New("damaged footer: elements after the last column")
		}
		g := &open[len(open)-1]
		if len(open) == 1 {
			cols = append(cols, e.name)
		}
		sig = append(sig, g.path+e.name+" "+string(e.raw))
		g.left--
		if e.children > 0 {
			open = append(open, group{path: g.path + e.name + ".", left: e.children})
		}
		for len(open) > 0 && open[len(open)-1].left <= 0 {
			open = open[:len(open)-1]
		}
	}
	if len(open) > 0 || len(cols) == 0 {
		return nil, "", errors.New("damaged footer: its schema ends early")
	}
	slices.Sort(sig)
	return cols, strings.Join(sig, "\x00"), nil
}

// parquetMagic ends a Parquet file (with a footer that is not encrypted),
// after the footer and its length.
const parquetMagic = "PAR1"

// schemaElement is one element of a Parquet file's schema: its name, its
// number of children (a group's) and its bytes in the footer.
type schemaElement struct {
	name     string
	children int32
	raw      []byte
}

// footerSchema is the schema of the Parquet file at path, as its footer
// lists it. Only the schema is decoded (the second field of the footer,
// parquet.thrift's FileMetaData, before its row groups): decoding the
// whole footer, statistics and all, took three times as long.
func footerSchema(path string) ([]schemaElement, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	var tail [8]byte
	if st.Size() < int64(len(tail))+int64(len(parquetMagic)) {
		return nil, fmt.Errorf("%d bytes, too short", st.Size())
	}
	if _, err := f.ReadAt(tail[:], st.Size()-int64(len(tail))); err != nil {
		return nil, err
	}
	n := int64(binary.LittleEndian.Uint32(tail[:4]))
	if string(tail[4:]) != parquetMagic || n <= 0 || n > st.Size()-int64(len(tail)) {
		return nil, errors.New("no Parquet footer at its end")
	}
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, st.Size()-int64(len(tail))-n); err != nil {
		return nil, err
	}
	return decodeSchema(buf)
}

// decodeSchema reads the schema field of a Parquet footer (thrift compact
// protocol).
func decodeSchema(footer []byte) ([]schemaElement, error) {
	ctx := context.Background()
	tr := thrift.NewTMemoryBufferLen(len(footer))
	tr.Write(footer)
	p := thrift.NewTCompactProtocolConf(tr, &thrift.TConfiguration{})
	damaged := func(err error) error { return fmt.Errorf("damaged footer: %w", err) }
	if _, err := p.ReadStructBegin(ctx); err != nil {
		return nil, damaged(err)
	}
	for {
		_, typ, id, err := p.ReadFieldBegin(ctx)
		if err != nil {
			return nil, damaged(err)
		}
		if typ == thrift.STOP {
			return nil, errors.New("damaged footer: no schema")
		}
		if id != 2 || typ != thrift.LIST {
			if err := p.Skip(ctx, typ); err != nil {
				return nil, damaged(err)
			}
			continue
		}
		_, size, err := p.ReadListBegin(ctx)
		if err != nil {
			return nil, damaged(err)
		}
		if size == 0 || size > len(footer) {
			// (an element takes a byte at least)
			return nil, fmt.Errorf("damaged footer: a schema of %d elements", size)
		}
		elems := make([]schemaElement, size)
		for i := range elems {
			start := len(footer) - tr.Len()
			e, err := decodeElement(ctx, p)
			if err != nil {
				return nil, damaged(err)
			}
			e.raw = footer[start : len(footer)-tr.Len()]
			elems[i] = e
		}
		return elems, nil
	}
}

// decodeElement reads one SchemaElement: its name (field 4) and number
// of children (field 5); the other fields are skipped.
func decodeElement(ctx context.Context, p *thrift.TCompactProtocol) (schemaElement, error) {
	var e schemaElement
	if _, err := p.ReadStructBegin(ctx); err != nil {
		return e, err
	}
	for {
		_, typ, id, err := p.ReadFieldBegin(ctx)
		if err != nil {
			return e, err
		}
		switch {
		case typ == thrift.STOP:
			return e, p.ReadStructEnd(ctx)
		case id == 4 && typ == thrift.STRING:
			e.name, err = p.ReadString(ctx)
		case id == 5 && typ == thrift.I32:
			e.children, err = p.ReadI32(ctx)
		default:
			err = p.Skip(ctx, typ)
		}
		if err != nil {
			return e, err
		}
		if err := p.ReadFieldEnd(ctx); err != nil {
			return e, err
		}
	}
}

// chunkFilter is the trace ids of the runs asked for that merged chunks
// of table t hold, when t is kept per run and read for some runs only
// (nil: no filter).
func chunkFilter(t Table, runs []string, mg *merged) []int64 {
	if runs == nil || len(mg.files[t.Name]) == 0 || t.layout != byTrace && t.layout != byTraceStageRank {
		return nil
	}
	return mg.traceIDs
}

// merged is what a reader takes of the lake's current merged generation
// (merge.go): the chunk files it reads, by table, the traces they hold,
// and notes of chunks left out for a damaged file.
type merged struct {
	files   map[string][]string // table -> chunk files, checked
	covered map[string]bool     // trace file names the chunks hold
	// with runs: the ids of those runs' traces in the chunks
	traceIDs []int64
	notes    []string
}

// readMerged reads the current generation and checks the chunk files a
// reader of runs (nil: all) reads: the small tables' files of every chunk,
// the per-run tables' files of the chunks holding one of the runs. A chunk
// with a damaged file is not used: its traces are read from their own
// files, which merging never removes, and a note says so.
func readMerged(dir string, runs []string) (*merged, error) {
	mg := &merged{files: map[string][]string{}, covered: map[string]bool{}}
	m, err := currentManifest(dir)
	if err != nil || m == nil {
		return mg, err
	}
	want := wantedRuns(runs)
	for _, c := range m.Chunks {
		selected := want == nil || slices.ContainsFunc(c.Traces, func(t chunkTrace) bool { return want[t.Run] })
		var take []chunkFile
		bad := ""
		for _, f := range c.Files {
			t, ok := lookupTable(f.Table)
			if !ok {
				return nil, fmt.Errorf("lake %s: %s names table %s, unknown to this tracehouse: upgrade tracehouse", dir, manifestName(m.Generation), f.Table)
			}
			if !selected && (t.layout == byTrace || t.layout == byTraceStageRank) {
				continue
			}
			path := filepath.Join(dir, filepath.FromSlash(f.Path))
			what, err := f.sum().check(path)
			if err != nil {
				return nil, fmt.Errorf("lake %s: check %s: %w", dir, f.Path, err)
			}
			if what != "" {
				bad = fmt.Sprintf("merged file %s is damaged (%s): its %d trace(s) are read from their own files; run 'tracehouse compact --lake' to merge them again", f.Path, what, len(c.Traces))
				break
			}
			take = append(take, chunkFile{Table: f.Table, Path: path})
		}
		if bad != "" {
			mg.notes = append(mg.notes, bad)
			continue
		}
		for _, f := range take {
			mg.files[f.Table] = append(mg.files[f.Table], f.Path)
		}
		for _, t := range c.Traces {
			mg.covered[t.Name] = true
			if want[t.Run] {
				mg.traceIDs = append(mg.traceIDs, t.ID)
			}
		}
	}
	return mg, nil
}

// walkedFiles lists each table's files by walking its directories (with
// runs, those of the runs only): for a lake holding traces written before
// checksum records existed, whose files only the directories know.
func walkedFiles(dir string, tables []Table, runs []string, rc *readerChecks) (map[string][]string, error) {
	files := map[string][]string{}
	var roots []string
	for _, t := range tables {
		walk := func(root string) error {
			return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				if d.IsDir() || !strings.HasSuffix(d.Name(), ".parquet") {
					return nil
				}
				ok, err := rc.take(path, t)
				if ok {
					files[t.Name] = append(files[t.Name], path)
				}
				return err
			})
		}
		root := filepath.Join(dir, t.Name)
		dirs, err := runDirs(root, t, runs)
		if runs != nil && (t.layout == byTrace || t.layout == byTraceStageRank) {
			// a run directory gone whole is missing files too
			for _, label := range runs {
				roots = append(roots, t.Name+"/run="+partValue(label))
			}
		}
		for _, d := range dirs {
			if err == nil {
				err = walk(d)
			}
			if rel, rerr := filepath.Rel(dir, d); rerr == nil {
				roots = append(roots, filepath.ToSlash(rel))
			}
		}
		if err != nil {
			return nil, fmt.Errorf("lake %s: read %s: %w", dir, t.Name, err)
		}
	}
	rc.missing(roots)
	return files, nil
}

// recordedFiles lists each table's files from the records of the
// committed traces not merged (with runs, those of the runs only for the
// tables kept per run), each table's _schema.parquet, and the row files
// of those traces' runs: no directory is walked, so an opening costs what
// the traces it reads cost, not what the lake holds. Each file is checked
// against its record (a damaged one is noted in rc and left out).
func recordedFiles(dir string, tables []Table, runs []string, rc *readerChecks) (map[string][]string, error) {
	files := map[string][]string{}
	for _, t := range tables {
		sf := filepath.Join(dir, t.Name, schemaFile)
		ok, err := exists(sf)
		if err != nil {
			return nil, fmt.Errorf("lake %s: %w", dir, err)
		}
		if ok {
			files[t.Name] = append(files[t.Name], sf)
		}
	}
	want := wantedRuns(runs)
	runDone := map[int64]bool{}
	for _, s := range rc.traces {
		selected := want == nil || want[s.run]
		for _, f := range s.files {
			name, _, _ := strings.Cut(f.path, "/")
			t, ok := lookupTable(name)
			if !ok || !selected && (t.layout == byTrace || t.layout == byTraceStageRank) {
				continue
			}
			path, ok, err := rc.checked(f, s)
			if err != nil {
				return nil, err
			}
			if ok {
				files[name] = append(files[name], path)
			}
		}
		if runDone[s.runID] {
			continue
		}
		runDone[s.runID] = true
		f := fileSum{path: "runs/" + itoa(s.runID) + ".parquet"}
		rs := rc.runRecords[s.runID]
		if rs != nil && len(rs.files) == 1 {
			path, ok, err := rc.checked(rs.files[0], rs)
			if err != nil {
				return nil, err
			}
			if ok {
				files["runs"] = append(files["runs"], path)
			}
			continue
		}
		// a run row whose writer was killed before its record: read
		// unchecked, as before records existed
		path := filepath.Join(dir, filepath.FromSlash(f.path))
		there, err := exists(path)
		if err != nil {
			return nil, fmt.Errorf("lake %s: %w", dir, err)
		}
		if there {
			files["runs"] = append(files["runs"], path)
		}
	}
	return files, nil
}

// wantedRuns are the labels of runs as the records hold them (escaped);
// nil for every run.
func wantedRuns(runs []string) map[string]bool {
	if runs == nil {
		return nil
	}
	want := map[string]bool{}
	for _, r := range runs {
		want[partValue(r)] = true
	}
	return want
}

// lookupTable is the table of Tables named name.
func lookupTable(name string) (Table, bool) {
	for _, t := range Tables {
		if t.Name == name {
			return t, true
		}
	}
	return Table{}, false
}

// oneLineErr is an error's first line.
func oneLineErr(err error) string {
	first, _, _ := strings.Cut(err.Error(), "\n")
	return first
}

// runDirs are the directories (or the one file) under root, table t's
// directory, that listedFiles walks: root itself, or with runs and a
// table kept per run, its _schema.parquet (which a lake written before
// it existed lacks: then root) and the directories of those runs that
// have one.
func runDirs(root string, t Table, runs []string) ([]string, error) {
	if runs == nil || t.layout != byTrace && t.layout != byTraceStageRank {
		return []string{root}, nil
	}
	schema := filepath.Join(root, schemaFile)
	if ok, err := exists(schema); !ok || err != nil {
		return []string{root}, err
	}
	dirs := []string{schema}
	for _, label := range runs {
		d := filepath.Join(root, "run="+partValue(label))
		ok, err := exists(d)
		if err != nil {
			return nil, err
		}
		if ok {
			dirs = append(dirs, d)
		}
	}
	return dirs, nil
}

// readFiles is the read_parquet call over a table's files; root is the
// SQL expression of the lake directory (a literal, or getvariable).
func readFiles(root, table string) string {
	return fmt.Sprintf(`read_parquet(%s || '/%s/**/*.parquet', hive_partitioning = false, union_by_name = true)`, root, table)
}

// variableRoot is the root expression of views.sql.
var variableRoot = fmt.Sprintf("getvariable('%s')", Variable)

// viewSQL is the view standing for table t, over its files: see selectSQL.
func viewSQL(from string, t Table, cols []column) string {
	return fmt.Sprintf("CREATE OR REPLACE VIEW %s AS\n%s", ident(t.Name), selectSQL(from, t, cols, nil, false))
}

// selectSQL reads table t from its files (from): its columns (NULL where
// the files have none; have nil means all there) with the warehouse's
// types, one row per key for dimensions, and only the rows of traces in
// the traces table or view (so nothing of a trace still being written).
// merged says from may read a run's row twice (from a merged chunk and
// from its own file, merge.go): one row per run is kept.
func selectSQL(from string, t Table, cols []column, have map[string]bool, merged bool) string {
	sel := make([]string, len(cols))
	for i, c := range cols {
		src := ident(c.name)
		if have != nil && !have[c.name] {
			src = "NULL"
		}
		sel[i] = fmt.Sprintf("CAST(%s AS %s) AS %s", src, c.typ, ident(c.name))
	}
	distinct, where, order := "", "", ""
	switch t.layout {
	case commit:
	case dimension:
		distinct = fmt.Sprintf("DISTINCT ON (%s) ", ident(t.key))
		order = "\nORDER BY " + ident(t.key)
	case byRun:
		where = "\nWHERE run_id IN (SELECT run_id FROM traces)"
		if merged {
			distinct = "DISTINCT ON (run_id) "
			order = "\nORDER BY run_id"
		}
	default:
		where = "\nWHERE trace_id IN (SELECT trace_id FROM traces)"
	}
	return fmt.Sprintf("SELECT %s%s\nFROM %s%s%s", distinct, strings.Join(sel, ",\n       "), from, where, order)
}

// derivedViews are the warehouse tables derivedSQL replaces by views.
var derivedViews = []string{"kernel_overlap_runs", "step_store_runs", "device_busy_store"}

// derivedSQL replaces the saved-aggregate bookkeeping tables: a trace's
// rows never change once committed, so a run's saved overlap (steps) is
// current exactly when every trace of it was written with its saved rows,
// under the constant fingerprint the SQL library gives a lake (0: see
// _overlap_fingerprint in sqllib/overlap.sql). The saved busy rows are
// summed from the saved overlap by the library's _device_busy_saved, as
// aggregates.SaveOverlap sums them in a warehouse.
func derivedSQL(traces string) (q, comments []string) {
	q = []string{
		`DROP TABLE kernel_overlap_runs`,
		`DROP TABLE step_store_runs`,
		// what aggregates.SaveOverlap sums from kernel_overlap_store, summed here
		`DROP TABLE device_busy_store`,
		`CREATE VIEW device_busy_store AS SELECT * FROM _device_busy_saved(NULL)`,
		fmt.Sprintf(`CREATE TABLE _lake_traces AS
SELECT CAST(trace_id AS INTEGER) AS trace_id, CAST(run_id AS INTEGER) AS run_id,
       coalesce(%s, false) AS overlap, coalesce(%s, false) AS steps, CAST(ingested_at AS TIMESTAMP) AS ingested_at
FROM %s
WHERE trace_id IN (SELECT trace_id FROM traces)`, colLakeOverlap, colLakeSteps, traces),
	}
	for _, d := range []struct{ view, col string }{
		{"kernel_overlap_runs", "overlap"},
		{"step_store_runs", "steps"},
	} {
		q = append(q, fmt.Sprintf(`CREATE VIEW %s AS
SELECT run_id, 0::UBIGINT AS fingerprint, max(ingested_at) AS stored_at
FROM _lake_traces
GROUP BY run_id
HAVING bool_and(%s)`, d.view, d.col))
		comments = append(comments, fmt.Sprintf(`COMMENT ON VIEW %s IS %s`, d.view,
			literal("Runs of the lake whose every trace was written with its saved rows (fingerprints are constant: lake traces never change).")))
	}
	comments = append(comments, `COMMENT ON VIEW device_busy_store IS `+
		literal("Saved GPU busy time per trace, stage and device: the lake's kernel_overlap_store summed."))
	return q, comments
}
