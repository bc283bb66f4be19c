package queries

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/tracehouse/tracehouse/migrations"
	"github.com/tracehouse/tracehouse/schema"
)

// overlapMigrations returns the embedded migrations when they load (0002 and
// 0003 have landed), else 0001 plus 0004_overlap renumbered 0002, which is
// all the overlap views need (kernel_names.family/category are then filled
// directly by the tests instead of by the classifier).
func overlapMigrations(t testing.TB) fs.FS {
	t.Helper()
	if _, err := schema.LoadMigrations(migrations.FS); err == nil {
		return migrations.FS
	}
	base, err := fs.ReadFile(migrations.FS, "0001_warehouse.sql")
	if err != nil {
		t.Fatal(err)
	}
	overlap, err := fs.ReadFile(migrations.FS, "0004_overlap.sql")
	if err != nil {
		t.Fatal(err)
	}
	return fstest.MapFS{
		"0001_warehouse.sql": {Data: base},
		"0002_overlap.sql":   {Data: overlap},
	}
}

// openOverlapDB opens an in-memory warehouse with the overlap migration.
func openOverlapDB(t testing.TB) *sql.DB {
	t.Helper()
	w, err := schema.Open(context.Background(), schema.Memory, schema.Options{Migrations: overlapMigrations(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w.DB
}

// fixture inserts warehouse rows the way ingest would, with only the
// columns the overlap and scope queries read.
type fixture struct {
	t  testing.TB
	db *sql.DB
}

func (f fixture) exec(query string, args ...any) {
	f.t.Helper()
	if _, err := f.db.Exec(query, args...); err != nil {
		f.t.Fatalf("%v\n%s", err, query)
	}
}

func (f fixture) run(id int, label string) {
	f.exec(`INSERT INTO runs (run_id, label, ingested_at) VALUES (?, ?, TIMESTAMP '2026-01-01')`, id, label)
}

func (f fixture) trace(id, run, rank int, stage, role string) {
	f.exec(`INSERT INTO traces BY NAME SELECT
		?::INTEGER AS trace_id, ?::INTEGER AS run_id, 'trace-' || ? || '.json' AS path, 'hash-' || ? AS content_hash,
		0 AS bytes, 0 AS json_bytes, false AS compressed, ?::INTEGER AS rank, false AS rank_assumed,
		? AS stage, 'flag' AS stage_source, ? AS role, 'flag' AS role_source, false AS merged,
		'sglang' AS framework, 0 AS events, 0 AS kernel_events, 0 AS memcpy_events,
		0 AS memset_events, 0 AS launch_events, 0 AS graph_launches, 0 AS cpu_op_events,
		0 AS py_frame_events, 0 AS annotation_events, 0 AS flow_events, 0 AS counter_events,
		0 AS instant_events, 0 AS metadata_events, 0 AS other_events, 0 AS warnings,
		TIMESTAMP '2026-01-01' AS ingested_at`, id, run, id, id, rank, stage, role)
}

// name adds a kernel name; base defaults to short when empty.
func (f fixture) name(id int, short, base, family, category string) {
	if base == "" {
		base = short
	}
	f.exec(`INSERT INTO kernel_names (name_id, name, short_name, base_name, family, category)
		VALUES (?, ?, ?, ?, nullif(?, ''), nullif(?, ''))`,
		id, fmt.Sprintf("%s#%d", short, id), short, base, family, category)
}

// site adds a Python site `file(line): func`.
func (f fixture) site(id int, file string, line int, fn string) {
	f.exec(`INSERT INTO sites (site_id, name, file, line, func, display, rel_path, framework, is_wrapper)
		VALUES (?, ?, ?, ?, ?, ?, ?, 'sglang', false)`,
		id, fmt.Sprintf("%s(%d): %s", file, line, fn), file, line, fn,
		fmt.Sprintf("%s @ %s:%d", fn, file, line), file)
}

func (f fixture) cpuOp(id int64, trace int, name string) {
	f.exec(`INSERT INTO cpu_ops (op_id, trace_id, name, ts_ns, dur_ns) VALUES (?, ?, ?, 0, 0)`, id, trace, name)
}

// kernel is one GPU event; zero Device/Stream are real values, use the
// pointers' nil for NULL.
type kernel struct {
	ID     int64
	Trace  int
	Run    int
	Rank   int
	Stage  string
	Name   int
	TS     int64
	Dur    int64
	Device *int64
	Stream *int64
	Site   *int64
	Op     *int64
}

func ptr(v int64) *int64 { return &v }

// kernels appends rows in batches of multi-row INSERTs (fine for tests).
func (f fixture) kernels(ks []kernel) {
	f.t.Helper()
	const batch = 500
	for i := 0; i < len(ks); i += batch {
		end := min(i+batch, len(ks))
		var b strings.Builder
		b.WriteString(`INSERT INTO kernels (kernel_id, trace_id, run_id, rank, stage, name_id, kind,
			ts_ns, dur_ns, device, stream, graph_launch, site_id, op_id) VALUES `)
		var args []any
		for j, k := range ks[i:end] {
			if j > 0 {
				b.WriteString(",")
			}
			b.WriteString("(?, ?, ?, ?, ?, ?, 'kernel', ?, ?, ?, ?, false, ?, ?)")
			args = append(args, k.ID, k.Trace, k.Run, k.Rank, k.Stage, k.Name, k.TS, k.Dur,
				nullable(k.Device), nullable(k.Stream), nullable(k.Site), nullable(k.Op))
		}
		f.exec(b.String(), args...)
	}
	// Ingest numbers every kernel on its stream; so do these fixtures.
	if err := schema.NumberStreams(context.Background(), f.db); err != nil {
		f.t.Fatal(err)
	}
}

func nullable(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}
