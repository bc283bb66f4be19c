package queries

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"github.com/tracehouse/tracehouse/schema"
)

// ktDB is a freshly migrated in-memory warehouse for the triage query tests,
// filled by hand: every expected value in those tests is written down from
// the rows inserted here, not read back through the queries under test.
type ktDB struct {
	t  testing.TB
	db *sql.DB
}

func newKTDB(t testing.TB) ktDB {
	t.Helper()
	w, err := schema.Open(context.Background(), schema.Memory, schema.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return ktDB{t: t, db: w.DB}
}

func (f ktDB) exec(query string, args ...any) {
	f.t.Helper()
	if _, err := f.db.Exec(query, args...); err != nil {
		f.t.Fatalf("%v\n%s", err, query)
	}
}

func (f ktDB) run(id int, label string) {
	f.t.Helper()
	f.exec(`INSERT INTO runs (run_id, label, framework, ingested_at) VALUES (?, ?, 'sglang', TIMESTAMP '2026-01-01')`, id, label)
}

func (f ktDB) trace(id, run, rank int, stage string) {
	f.t.Helper()
	f.exec(`INSERT INTO traces BY NAME SELECT
		?::INTEGER AS trace_id, ?::INTEGER AS run_id, 'run' || ? || '/trace-' || ? || '.json' AS path,
		'kt-hash-' || ? AS content_hash, 0 AS bytes, 0 AS json_bytes, false AS compressed,
		?::INTEGER AS rank, false AS rank_assumed, ? AS stage, 'flag' AS stage_source,
		'formal' AS role, 'flag' AS role_source, false AS merged, 'sglang' AS framework,
		0 AS events, 0 AS kernel_events, 0 AS memcpy_events, 0 AS memset_events,
		0 AS launch_events, 0 AS graph_launches, 0 AS cpu_op_events, 0 AS py_frame_events,
		0 AS annotation_events, 0 AS flow_events, 0 AS counter_events, 0 AS instant_events,
		0 AS metadata_events, 0 AS other_events, 0 AS warnings,
		TIMESTAMP '2026-01-01' AS ingested_at`, id, run, run, id, id, rank, stage)
}

// name adds a raw kernel name; base defaults to short.
func (f ktDB) name(id int, raw, short, base, family, category string) {
	f.t.Helper()
	if base == "" {
		base = short
	}
	f.exec(`INSERT INTO kernel_names (name_id, name, short_name, base_name, family, category)
		VALUES (?, ?, ?, ?, ?, ?)`, id, raw, short, base, family, category)
}

// site adds a Python site; rel is its framework-relative path ("" = none).
func (f ktDB) site(id int, file string, line int, fn, rel string) {
	f.t.Helper()
	f.exec(`INSERT INTO sites (site_id, name, file, line, func, display, rel_path, framework, is_wrapper)
		VALUES (?, ?, ?, ?, ?, ?, nullif(?, ''), 'sglang', false)`,
		id, fmt.Sprintf("%s(%d): %s", file, line, fn), file, line, fn,
		fmt.Sprintf("%s @ %s:%d", fn, rel, line), rel)
}

func (f ktDB) cpuOp(id int64, trace int, name string) {
	f.t.Helper()
	f.exec(`INSERT INTO cpu_ops (op_id, trace_id, name, ts_ns, dur_ns) VALUES (?, ?, ?, 0, 0)`, id, trace, name)
}

// ktKernel is one GPU event; Site and Op 0 mean NULL.
type ktKernel struct {
	ID    int64
	Trace int
	Run   int
	Rank  int
	Stage string
	Name  int
	TS    int64
	Dur   int64
	Site  int64
	Op    int64
}

func (f ktDB) kernels(ks ...ktKernel) {
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
			b.WriteString("(?, ?, ?, ?, ?, ?, 'kernel', ?, ?, 0, 7, false, nullif(?, 0), nullif(?, 0))")
			args = append(args, k.ID, k.Trace, k.Run, k.Rank, k.Stage, k.Name, k.TS, k.Dur, k.Site, k.Op)
		}
		f.exec(b.String(), args...)
	}
	// Ingest numbers every kernel on its stream; so do these fixtures.
	if err := schema.NumberStreams(context.Background(), f.db); err != nil {
		f.t.Fatal(err)
	}
}

func rankOf(n int64) sql.NullInt64 { return sql.NullInt64{Int64: n, Valid: true} }

// near compares shares computed by different float formulas.
func near(a, b float64) bool {
	d := a - b
	return d < 1e-9 && d > -1e-9
}
