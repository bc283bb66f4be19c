package queries

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"os"
	"testing"

	"github.com/tracehouse/tracehouse/catalog"
	"github.com/tracehouse/tracehouse/ingest"
	"github.com/tracehouse/tracehouse/schema"
	"github.com/tracehouse/tracehouse/schema/schematest"
)

// TestMain removes the warehouse templates the tests copy.
func TestMain(m *testing.M) { os.Exit(schematest.Main(m)) }

// fixture is a warehouse of its own that a test fills by hand, the way
// ingest would, with only the columns the queries read: every expected
// value in those tests is written down from the rows inserted here, not
// read back through the queries under test. It is one way to build a
// warehouse from hand-made events; fusionFX builds on it.
type fixture struct {
	t  testing.TB
	db *sql.DB
}

// newFixture copies the migrated template (migrating once per test binary).
func newFixture(t testing.TB) fixture {
	t.Helper()
	return fixture{t: t, db: schematest.Open(t, "").DB}
}

// newMemoryFixture migrates an in-memory warehouse: for benchmarks, whose
// figures should not include file I/O.
func newMemoryFixture(tb testing.TB) fixture {
	tb.Helper()
	w, err := schema.Open(context.Background(), schema.Memory, schema.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { w.Close() })
	return fixture{t: tb, db: w.DB}
}

// catalogTemplate is the migrated template with the embedded catalog
// installed (installing it takes longer than copying it).
func catalogTemplate(t testing.TB) string {
	t.Helper()
	return schematest.Template(t, "catalog", func(ctx context.Context, w *schema.Warehouse) error {
		return ingest.InstallCatalog(ctx, w.DB, catalog.Default())
	})
}

// demoTemplate is the migrated template with testdata/demo ingested (and
// no catalog installed).
func demoTemplate(t testing.TB) string {
	t.Helper()
	return schematest.Template(t, "demo", func(ctx context.Context, w *schema.Warehouse) error {
		res, err := ingest.Ingest(ctx, w, []string{"../testdata/demo"}, ingest.Options{Jobs: 2})
		if err == nil && res.Failed() > 0 {
			err = res.Files[0].Err
		}
		return err
	})
}

// demoCatalogTemplate is demoTemplate with the embedded catalog installed:
// for the tests that ask the demo's runs for fuse patterns (each ingested
// its runs into a warehouse of its own before, 0.1 s a run).
func demoCatalogTemplate(t testing.TB) string {
	t.Helper()
	return schematest.Derived(t, "demo-catalog", demoTemplate(t), func(ctx context.Context, w *schema.Warehouse) error {
		return ingest.InstallCatalog(ctx, w.DB, catalog.Default())
	})
}

func (f fixture) exec(query string, args ...any) {
	f.t.Helper()
	if _, err := f.db.Exec(query, args...); err != nil {
		f.t.Fatalf("%v\n%s", err, query)
	}
}

// run adds an SGLang run.
func (f fixture) run(id int, label string) {
	f.t.Helper()
	f.exec(`INSERT INTO runs (run_id, label, framework, ingested_at) VALUES (?, ?, 'sglang', TIMESTAMP '2026-01-01')`, id, label)
}

// trace adds a trace of run; role is formal or mapping.
func (f fixture) trace(id, run, rank int, stage, role string) {
	f.t.Helper()
	f.exec(`INSERT INTO traces BY NAME SELECT
		?::INTEGER AS trace_id, ?::INTEGER AS run_id, 'run' || ? || '/trace-' || ? || '.json' AS path,
		'hash-' || ? AS content_hash, 0 AS bytes, 0 AS json_bytes, false AS compressed,
		?::INTEGER AS rank, false AS rank_assumed, ? AS stage, 'flag' AS stage_source,
		? AS role, 'flag' AS role_source, false AS merged, 'sglang' AS framework,
		0 AS events, 0 AS kernel_events, 0 AS memcpy_events, 0 AS memset_events,
		0 AS launch_events, 0 AS graph_launches, 0 AS cpu_op_events, 0 AS py_frame_events,
		0 AS annotation_events, 0 AS flow_events, 0 AS counter_events, 0 AS instant_events,
		0 AS metadata_events, 0 AS other_events, 0 AS warnings,
		TIMESTAMP '2026-01-01' AS ingested_at`, id, run, run, id, id, rank, stage, role)
}

// name adds a kernel name. An empty raw name is short#id, an empty base
// name is the short one, an empty family or category is NULL (not yet
// classified).
func (f fixture) name(id int, raw, short, base, family, category string) {
	f.t.Helper()
	if raw == "" {
		raw = fmt.Sprintf("%s#%d", short, id)
	}
	if base == "" {
		base = short
	}
	f.exec(`INSERT INTO kernel_names (name_id, name, short_name, base_name, family, category)
		VALUES (?, ?, ?, ?, nullif(?, ''), nullif(?, ''))`, id, raw, short, base, family, category)
}

// site adds the Python site `file(line): fn`; rel is its framework-relative
// path ("" = none).
func (f fixture) site(id int, file string, line int, fn, rel string) {
	f.t.Helper()
	f.exec(`INSERT INTO sites (site_id, name, file, line, func, display, rel_path, framework, is_wrapper)
		VALUES (?, ?, ?, ?, ?, ?, nullif(?, ''), 'sglang', false)`,
		id, fmt.Sprintf("%s(%d): %s", file, line, fn), file, line, fn,
		fmt.Sprintf("%s @ %s:%d", fn, rel, line), rel)
}

// cpuOp adds a CPU op at ts 0.
func (f fixture) cpuOp(id int64, trace int, name string) {
	f.t.Helper()
	f.exec(`INSERT INTO cpu_ops (op_id, trace_id, name, ts_ns, dur_ns) VALUES (?, ?, ?, 0, 0)`, id, trace, name)
}

// kernel is one GPU event. Device and Stream nil store NULL (zero is a real
// device and stream); Site and Op 0 store NULL; Kind "" is a kernel.
type kernel struct {
	ID     int64
	Trace  int
	Run    int
	Rank   int
	Stage  string
	Name   int
	Kind   string
	TS     int64
	Dur    int64
	Device *int64
	Stream *int64
	Site   int64
	Op     int64
}

func ptr(v int64) *int64 { return &v }

// kernels appends ks through DuckDB's appender (a multi-row INSERT of
// bound VALUES spent most of its time binding thousands of parameters) and
// numbers every kernel on its stream, as ingest does.
func (f fixture) kernels(ks ...kernel) {
	f.t.Helper()
	f.appendKernels(ks...)
	if err := schema.NumberStreams(context.Background(), f.db); err != nil {
		f.t.Fatal(err)
	}
}

// appendKernels is kernels without numbering them on their streams: for a
// fixture that numbers them (schema.NumberStreams) before it asks.
func (f fixture) appendKernels(ks ...kernel) {
	f.t.Helper()
	ctx := context.Background()
	conn, err := f.db.Conn(ctx)
	if err != nil {
		f.t.Fatal(err)
	}
	defer conn.Close()
	spec := []schema.Spec{{Table: schema.Kernels, Columns: []string{"kernel_id", "trace_id", "run_id", "rank", "stage",
		"name_id", "kind", "ts_ns", "dur_ns", "device", "stream", "graph_launch", "site_id", "op_id"}}}
	err = schema.WithAppenders(conn, spec, func(apps []*schema.Appender) error {
		for _, k := range ks {
			kind := k.Kind
			if kind == "" {
				kind = "kernel"
			}
			var device, stream, site, op driver.Value
			if k.Device != nil {
				device = int32(*k.Device)
			}
			if k.Stream != nil {
				stream = *k.Stream
			}
			if k.Site != 0 {
				site = int32(k.Site)
			}
			if k.Op != 0 {
				op = k.Op
			}
			if err := apps[0].Append(k.ID, int32(k.Trace), int32(k.Run), int32(k.Rank), k.Stage, int32(k.Name), kind,
				k.TS, k.Dur, device, stream, false, site, op); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		f.t.Fatal(err)
	}
}

// kernelsOn appends ks, putting those without a device or stream on the
// given ones (a single-stream trace).
func (f fixture) kernelsOn(device, stream int64, ks ...kernel) {
	f.t.Helper()
	for i := range ks {
		if ks[i].Device == nil {
			ks[i].Device = ptr(device)
		}
		if ks[i].Stream == nil {
			ks[i].Stream = ptr(stream)
		}
	}
	f.kernels(ks...)
}

func rankOf(n int64) sql.NullInt64 { return sql.NullInt64{Int64: n, Valid: true} }

// near compares shares computed by different float formulas.
func near(a, b float64) bool {
	d := a - b
	return d < 1e-9 && d > -1e-9
}
