package lake

import (
	"context"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/tracehouse/tracehouse/migrations"
	"github.com/tracehouse/tracehouse/schema"
)

var (
	lakeOnce  sync.Once
	lakeDir   string
	lakeWrite *WriteResult
	lakeErr   error
)

// demoLake is a lake exported from the demo warehouse into an empty
// directory in one round (Write's default batch), written once per test
// binary; tests only read it (TestExportRoundTrip checks the write,
// lakeWrite). TestMain removes it. (Written in rounds of 5 traces it cost
// 0.2 CPU-s more; writes of several rounds are TestCompactWhileWriting's,
// whose lake is read whole against the warehouse, ids included.)
func demoLake(t *testing.T) string {
	t.Helper()
	src := openDemo(t)
	lakeOnce.Do(func() {
		lakeDir, lakeErr = os.MkdirTemp("", "lake-")
		if lakeErr == nil {
			lakeWrite, lakeErr = Write(context.Background(), src.DB, lakeDir, WriteOptions{})
		}
	})
	if lakeErr != nil {
		t.Fatal(lakeErr)
	}
	return lakeDir
}

var (
	openedOnce sync.Once
	opened     *schema.Warehouse
	openedErr  error
	countsOnce sync.Once
	counts     map[string]int64
	countsErr  error
)

// openDemoLake is the demo lake (demoLake) opened by Open once per test
// binary, for the tests that only query it whole: each opening of it
// cost 0.15 CPU-s. Tests must not close it (TestMain does).
func openDemoLake(t *testing.T) *schema.Warehouse {
	t.Helper()
	dir := demoLake(t)
	openedOnce.Do(func() {
		opened, openedErr = Open(context.Background(), dir, schema.Options{Threads: 1})
	})
	if openedErr != nil {
		t.Fatal(openedErr)
	}
	return opened
}

// demoLakeCounts are the rows of every lake table and of the views
// kernel_events and py_frames in the opened demo lake (openDemoLake),
// counted once per test binary. Tests must not change the map.
func demoLakeCounts(t *testing.T) map[string]int64 {
	t.Helper()
	lk := openDemoLake(t)
	countsOnce.Do(func() {
		counts = map[string]int64{}
		for _, v := range append([]string{"kernel_events", "py_frames"}, tableNames()...) {
			var n int64
			if err := lk.DB.QueryRow("SELECT count(*) FROM " + v).Scan(&n); err != nil {
				countsErr = fmt.Errorf("%s: %w", v, err)
				return
			}
			counts[v] = n
		}
	})
	if countsErr != nil {
		t.Fatal(countsErr)
	}
	return counts
}

// TestLayout walks the exported demo lake: every file is where the layout
// says, partition directories agree with the rows inside, file names are
// content hashes of committed traces, and the lake's own files exist.
func TestLayout(t *testing.T) {
	t.Parallel()
	dir := demoLake(t)
	src := openDemo(t)
	hashes := map[string]string{} // file name -> run label
	rows, err := src.DB.Query(`SELECT t.content_hash, r.label FROM traces t JOIN runs r USING (run_id)`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var h, l string
		if err := rows.Scan(&h, &l); err != nil {
			t.Fatal(err)
		}
		hashes[fileName(h)] = l
	}
	rows.Close()
	for _, f := range []string{"schema_version", "views.sql", "catalog/fusion_catalog.parquet",
		"catalog/fusion_catalog_steps.parquet", "catalog/overlap_catalog.parquet"} {
		if _, err := os.Stat(filepath.Join(dir, metaDir, f)); err != nil {
			t.Error(err)
		}
	}
	v, err := readVersion(dir)
	ms, _ := schema.LoadMigrations(migrations.FS)
	if err != nil || v != len(ms) {
		t.Errorf("schema_version %d (%v), want %d", v, err, len(ms))
	}
	hashName := regexp.MustCompile(`^[0-9a-f]{32}\.parquet$`)
	counts := map[string]int{}
	db := openDemo(t).DB // any DuckDB to read single files
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		parts := strings.Split(filepath.ToSlash(rel), "/")
		if parts[0] == metaDir {
			if d.IsDir() && len(parts) == 2 && parts[1] == "tmp" {
				if ents, _ := os.ReadDir(p); len(ents) != 0 {
					t.Errorf("%s: a finished write left %d temporary entries", rel, len(ents))
				}
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		tb := tableByName(parts[0])
		name := parts[len(parts)-1]
		if name == "_schema.parquet" {
			if len(parts) != 2 {
				t.Errorf("%s: schema file not at the table's root", rel)
			}
			return nil
		}
		counts[tb.Name]++
		var want []string
		switch tb.layout {
		case byRun:
			if !regexp.MustCompile(`^\d+\.parquet$`).MatchString(name) {
				t.Errorf("%s: a run's file is named by its run_id", rel)
			}
			var id int64
			if err := db.QueryRow(fmt.Sprintf(`SELECT any_value(run_id) FROM read_parquet(%s) HAVING count(*) = 1`, literal(p))).Scan(&id); err != nil || name != fmt.Sprintf("%d.parquet", id) {
				t.Errorf("%s: holds run %d (%v), want one row of its run", rel, id, err)
			}
			return nil
		case commit, dimension:
			want = []string{tb.Name, name}
		case byTrace:
			want = []string{tb.Name, "run=" + partValue(hashes[name]), name}
		case byTraceStageRank:
			if len(parts) != 5 {
				t.Errorf("%s: want %s/run=/stage=/rank=/<hash>.parquet", rel, tb.Name)
				return nil
			}
			stage, _ := url.PathUnescape(strings.TrimPrefix(parts[2], "stage="))
			rank := strings.TrimPrefix(parts[3], "rank=")
			want = []string{tb.Name, "run=" + partValue(hashes[name]), "stage=" + stage, "rank=" + rank, name}
			var n int
			q := fmt.Sprintf(`SELECT count(*) FROM read_parquet(%s) WHERE stage IS DISTINCT FROM %s OR rank::VARCHAR IS DISTINCT FROM %s`,
				literal(p), literal(stage), literal(rank))
			if err := db.QueryRow(q).Scan(&n); err != nil || n != 0 {
				t.Errorf("%s: %d rows of another stage or rank (%v)", rel, n, err)
			}
		}
		if !hashName.MatchString(name) || hashes[name] == "" {
			t.Errorf("%s: not named by the content hash of a trace", rel)
		}
		if strings.Join(parts, "/") != strings.Join(want, "/") {
			t.Errorf("%s: want %s", rel, strings.Join(want, "/"))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tb := range Tables {
		if counts[tb.Name] == 0 {
			t.Errorf("%s: no files", tb.Name)
		}
	}
	if counts["traces"] != len(hashes) {
		t.Errorf("%d trace files, want %d", counts["traces"], len(hashes))
	}
}

// arrowTypes are the Arrow types arrow-go's Parquet reader gives each
// DuckDB column type of the warehouse.
var arrowTypes = map[string]string{
	"INTEGER":               "int32",
	"BIGINT":                "int64",
	"DOUBLE":                "float64",
	"BOOLEAN":               "bool",
	"VARCHAR":               "utf8",
	"JSON":                  "utf8", // written as VARCHAR
	"TIMESTAMP":             "timestamp[us]",
	"VARCHAR[]":             "list<element: utf8, nullable>",
	"MAP(VARCHAR, VARCHAR)": "map<utf8, utf8, items_nullable>",
	"UBIGINT":               "uint64",
}

// TestParquetReadBack reads every Parquet file of the lake with arrow-go's
// Parquet reader (a reader independent of DuckDB, which wrote them): every
// column of the warehouse table is there with the Arrow type of its
// DuckDB type, and the rows add up to the warehouse's.
func TestParquetReadBack(t *testing.T) {
	t.Parallel()
	dir := demoLake(t)
	src := openDemo(t)
	all, err := tableColumns(context.Background(), src.DB)
	if err != nil {
		t.Fatal(err)
	}
	for _, tb := range Tables {
		cols := all[tb.Name]
		if len(cols) == 0 {
			t.Fatalf("the warehouse has no table %s", tb.Name)
		}
		var want int64
		q := "SELECT count(*) FROM " + tb.Name
		switch tb.Name {
		case "kernel_names":
			q = "SELECT count(*) FROM (SELECT DISTINCT trace_id, name_id FROM kernels)"
		case "sites":
			q = "SELECT count(*) FROM (SELECT DISTINCT trace_id, site_id FROM (SELECT trace_id, site_id FROM kernels UNION ALL SELECT trace_id, site_id FROM launches UNION ALL SELECT trace_id, site_id FROM cpu_ops UNION ALL SELECT trace_id, site_id FROM py_frame_events) WHERE site_id IS NOT NULL)"
		}
		if err := src.DB.QueryRow(q).Scan(&want); err != nil {
			t.Fatal(err)
		}
		var got int64
		files, _ := filepath.Glob(filepath.Join(dir, tb.Name, "*.parquet"))
		for _, pat := range []string{"*/*.parquet", "*/*/*/*.parquet"} {
			m, _ := filepath.Glob(filepath.Join(dir, tb.Name, pat))
			files = append(files, m...)
		}
		for _, p := range files {
			n, schema := readParquet(t, p)
			got += n
			for _, c := range cols {
				fs, ok := schema.FieldsByName(c.name)
				if !ok || len(fs) != 1 {
					t.Errorf("%s: no column %s", p, c.name)
					continue
				}
				wantType, known := arrowTypes[c.typ]
				if !known {
					t.Errorf("%s.%s: DuckDB type %s missing from arrowTypes", tb.Name, c.name, c.typ)
					continue
				}
				if got := fs[0].Type.String(); got != wantType {
					t.Errorf("%s: column %s (%s) reads as %s, want %s", p, c.name, c.typ, got, wantType)
				}
			}
			if tb.layout == commit {
				for _, c := range []string{colLakeOverlap, colLakeSteps} {
					if fs, ok := schema.FieldsByName(c); !ok || fs[0].Type.ID() != arrow.BOOL {
						t.Errorf("%s: no BOOLEAN column %s", p, c)
					}
				}
			}
		}
		if got != want {
			t.Errorf("%s: %d rows in %d files, want %d", tb.Name, got, len(files), want)
		}
	}
}

// readParquet reads a whole file with arrow-go and returns its row count
// (counted over the record batches read) and its Arrow schema.
func readParquet(t *testing.T, path string) (int64, *arrow.Schema) {
	t.Helper()
	f, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	defer f.Close()
	r, err := pqarrow.NewFileReader(f, pqarrow.ArrowReadProperties{BatchSize: 1024}, memory.DefaultAllocator)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	tbl, err := r.ReadTable(context.Background())
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	defer tbl.Release()
	if tbl.NumRows() != f.NumRows() {
		t.Errorf("%s: read %d rows, footer says %d", path, tbl.NumRows(), f.NumRows())
	}
	return tbl.NumRows(), tbl.Schema()
}
