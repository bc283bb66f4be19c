package aggregates

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tracehouse/tracehouse/catalog"
	"github.com/tracehouse/tracehouse/ingest"
	"github.com/tracehouse/tracehouse/schema"
	"github.com/tracehouse/tracehouse/schema/schematest"
)

// sweepCatalog has chains of every shape the walk treats apart: ordered
// (three steps, max_between 2, a 5 us gap), unordered (two steps, max_between
// 1), five steps of one keyword (occurrences tie up to their fourth kernel,
// with many candidates sharing kernels), one step, a chain whose keyword also hits
// a fused kernel (never a step), and one gated out by its models.
const sweepCatalog = `version: 1
fusions:
  - id: ord3
    name: Ordered three
    framework: sglang
    origin: mainline
    fused: [omega]
    chain:
      - [alpha]
      - [beta]
      - [gamma]
    max_gap_us: 5
    min_share: 0
    likely_share: 1.0
    sources: [a.py]
    rationale: Saves launches.
  - id: uno2
    name: Unordered two
    framework: sglang
    origin: mainline
    fused: [unofused]
    chain:
      - [delta]
      - [epsil]
    ordered: false
    max_between: 1
    min_share: 0
    likely_share: 1.0
    sources: [b.py]
    rationale: Saves launches.
  - id: five
    name: Five of a kind
    framework: sglang
    origin: mainline
    fused: [fivefused]
    chain:
      - [pentax]
      - [pentax]
      - [pentax]
      - [pentax]
      - [pentax]
    min_share: 0
    likely_share: 1.0
    sources: [c.py]
    rationale: Saves launches.
  - id: solo
    name: One step
    framework: sglang
    origin: mainline
    fused: [solofused]
    chain:
      - [solox]
    min_share: 0
    likely_share: 1.0
    sources: [d.py]
    rationale: Saves launches.
  - id: zed
    name: Zeta eta
    framework: sglang
    origin: mainline
    fused: [zeta_etakern_fused]
    chain:
      - [zeta]
      - [etakern]
    min_share: 0
    likely_share: 1.0
    sources: [e.py]
    rationale: Saves launches.
  - id: gated
    name: Gated out
    framework: sglang
    origin: mainline
    fused: [gatedfused]
    chain:
      - [alpha]
      - [beta]
    models_any: [nomodel]
    min_share: 0
    likely_share: 1.0
    sources: [f.py]
    rationale: Saves launches.
`

// sweepNames are the kernel names of the fixtures, by name_id - 1.
var sweepNames = []string{"alpha", "beta", "gamma", "delta", "epsil", "pentax", "solox", "zeta", "etakern",
	"zeta_etakern_fused", "noise", "omega"}

// sweepFixture is a warehouse with sweepCatalog installed, run 1 (model
// llama) of traces 1 (rank 0, sglang) and 2 (rank 1, vllm: its chains are
// `elsewhere`), and the kernels given as (kernel_id, trace, device, stream,
// stage, name_id, ts, dur), numbered on their streams. Its pool holds one
// connection, so the sweep's temporary tables stay visible to it.
func sweepFixture(t *testing.T, kernels []string) *sql.DB {
	t.Helper()
	ctx := context.Background()
	db := schematest.Open(t, "").DB
	db.SetMaxOpenConns(1)
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	cat, err := catalog.Parse([]byte(sweepCatalog), "sweep.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := ingest.InstallCatalog(ctx, db, cat); err != nil {
		t.Fatal(err)
	}
	exec(`INSERT INTO runs (run_id, label, model, ingested_at) VALUES (1, 'a', 'llama', TIMESTAMP '2026-01-01')`)
	for trace, fw := range map[int]string{1: "sglang", 2: "vllm"} {
		exec(`INSERT INTO traces BY NAME SELECT
			?::INTEGER AS trace_id, 1 AS run_id, 't' || ? AS path, 'hash-' || ? AS content_hash,
			0 AS bytes, 0 AS json_bytes, false AS compressed, ?::INTEGER AS rank, false AS rank_assumed,
			'decode' AS stage, 'flag' AS stage_source, 'formal' AS role, 'flag' AS role_source,
			false AS merged, ? AS framework, 0 AS events, 0 AS kernel_events, 0 AS memcpy_events,
			0 AS memset_events, 0 AS launch_events, 0 AS graph_launches, 0 AS cpu_op_events,
			0 AS py_frame_events, 0 AS annotation_events, 0 AS flow_events, 0 AS counter_events,
			0 AS instant_events, 0 AS metadata_events, 0 AS other_events, 0 AS warnings,
			TIMESTAMP '2026-01-01' AS ingested_at`, trace, trace, trace, trace-1, fw)
	}
	var names []string
	for i, n := range sweepNames {
		names = append(names, fmt.Sprintf("(%d, '%s', '%s', '%s', '%s', 'compute')", i+1, n, n, n, n))
	}
	exec(`INSERT INTO kernel_names (name_id, name, short_name, base_name, family, category) VALUES ` + strings.Join(names, ", "))
	exec(`INSERT INTO kernels (kernel_id, trace_id, run_id, rank, device, stream, stage, name_id, kind, ts_ns, dur_ns, graph_launch)
		SELECT id, t, 1, t - 1, d, s, st, n, 'kernel', ts, dur, false
		FROM (VALUES ` + strings.Join(kernels, ", ") + `) v(id, t, d, s, st, n, ts, dur)`)
	if err := schema.NumberStreams(ctx, db); err != nil {
		t.Fatal(err)
	}
	return db
}

// sweptRelated is _fusion_related of rank of run 1 with the chain
// occurrences sweepChains finds, and without (the SQL's own walk), dumped.
func sweptRelated(t *testing.T, db *sql.DB, rank int64) (swept, sql string) {
	t.Helper()
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	table, hits, err := sweepChains(ctx, conn, 1, rank)
	conn.Close()
	if err != nil {
		t.Fatal(err)
	}
	q := `SELECT * FROM _fusion_related(1, NULL, %d, NULL, false%s) ORDER BY ALL`
	swept = schematest.Dump(t, db, fmt.Sprintf(q, rank, ", chains := '"+table+"', hits := '"+hits+"'"))
	sql = schematest.Dump(t, db, fmt.Sprintf(q, rank, ""))
	if conn, err = db.Conn(ctx); err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := dropChainTables(ctx, conn); err != nil {
		t.Fatal(err)
	}
	return swept, sql
}

// TestFusionSweepKnownChains: on hand-made streams with known occurrences,
// the sweep's chains are those listed, and _fusion_related gives the same
// rows with them as with its own walk. Kernels are numbered from 101 in
// the order listed, each starting 1 us after the one listed before it and
// lasting 500 ns.
func TestFusionSweepKnownChains(t *testing.T) {
	t.Parallel()
	// name ids: 1 alpha, 2 beta, 3 gamma, 4 delta, 5 epsil, 6 pentax,
	// 7 solox, 8 zeta, 9 etakern, 10 zeta_etakern_fused, 11 noise
	var ks []string
	add := func(trace, stream int, stage string, names ...int) {
		for _, n := range names {
			id := 101 + len(ks)
			ks = append(ks, fmt.Sprintf("(%d, %d, 0, %d, '%s', %d, %d, 500)", id, trace, stream, stage, n, 1000*id))
		}
	}
	// stream 7 of trace 1 (kernels 101-): alpha beta gamma: one ord3
	// (101-103); alpha noise noise beta gamma: two between, one more
	// (104, 107, 108); alpha noise noise noise beta gamma: three between,
	// none; a decode alpha then prefill beta gamma: stages differ, none.
	add(1, 7, "decode", 1, 2, 3, 1, 11, 11, 2, 3, 1, 11, 11, 11, 2, 3, 1)
	add(1, 7, "prefill", 2, 3)
	// unordered, max_between 1: epsil delta (126, 127), delta epsil (129,
	// 130) after a noise kernel; a text hitting zed's fused keyword never
	// fills a step (131, in prefill so zed's decode chains stay): zeta
	// etakern is one (133, 134), zeta_etakern_fused etakern none; a lone
	// solox (135) is a one-step chain
	add(1, 7, "decode", 11, 11, 11, 11, 11, 11, 11, 11, 5, 4, 11, 4, 5)
	add(1, 7, "prefill", 10)
	add(1, 7, "decode", 9, 8, 9, 7)
	// stream 8: six pentax in a row end the stream (the walk's last
	// window): of the six candidates 136-140 and 137-141 span the fewest
	// places, and the leftmost is taken; every other shares a kernel
	add(1, 8, "decode", 6, 6, 6, 6, 6, 6)
	// trace 2 (vllm: elsewhere): alpha beta gamma at the stream's start
	add(2, 7, "decode", 1, 2, 3)
	db := sweepFixture(t, ks)
	swept, sqlRows := sweptRelated(t, db, 0)
	if swept != sqlRows {
		t.Errorf("rank 0: swept chains give other rows than the SQL's walk:\n%s", firstDiff(swept, sqlRows))
	}
	chains := schematest.Dump(t, db, `SELECT id, list(kernel_id ORDER BY step) FROM _fusion_related(1, NULL, 0, NULL, false)
		WHERE kind = 'chain' GROUP BY id, occurrence ORDER BY ALL`)
	want := strings.Join([]string{
		"five [136 137 138 139 140]",
		"ord3 [101 102 103]",
		"ord3 [104 107 108]",
		"solo [135]",
		"uno2 [126 127]",
		"uno2 [129 130]",
		"zed [133 134]",
	}, "\n") + "\n"
	if chains != want {
		t.Errorf("chains:\n%s\nwant:\n%s", chains, want)
	}
	swept, sqlRows = sweptRelated(t, db, 1)
	if swept != sqlRows || !strings.Contains(sqlRows, "elsewhere") {
		t.Errorf("rank 1: swept chains give other rows than the SQL's walk:\n%s", firstDiff(swept, sqlRows))
	}
}

// TestFusionSweepMatchesSQL: on random streams the sweep (used by the
// finish for ranks too large for the SQL's memory) and _fusion_related's
// own walk (the definition, which reports use) give the same rows, and
// SaveFusion saves the same fuse-pattern rows either way. The streams are
// crowded with steps of every entry, at gaps around the 1 us and 50 us
// bounds, some overlapping, in two stages, on three streams and a NULL
// one, so that candidates overlap in long islands, cross stage changes
// and end at the walk's window and at a stream's end.
func TestFusionSweepMatchesSQL(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(5, 8))
	var ks []string
	id := 100
	for trace := 1; trace <= 2; trace++ {
		for _, stream := range []string{"7", "8", "9", "NULL"} {
			ts := int64(0)
			stage := "decode"
			for range 300 {
				if rng.IntN(40) == 0 {
					stage = map[string]string{"decode": "prefill", "prefill": "decode"}[stage]
				}
				// gaps of -300..1500 ns mostly, sometimes up to 60 us
				gap := rng.Int64N(1800) - 300
				if rng.IntN(20) == 0 {
					gap = rng.Int64N(60000)
				}
				ts = max(0, ts+gap)
				dur := 100 + rng.Int64N(600)
				name := 1 + rng.IntN(len(sweepNames))
				id++
				ks = append(ks, fmt.Sprintf("(%d, %d, 0, %s, '%s', %d, %d, %d)", id, trace, stream, stage, name, ts, dur))
				ts += dur
			}
		}
	}
	db := sweepFixture(t, ks)
	for rank := int64(0); rank <= 1; rank++ {
		swept, sqlRows := sweptRelated(t, db, rank)
		if swept != sqlRows {
			t.Errorf("rank %d: swept chains give other rows than the SQL's walk:\n%s", rank, firstDiff(swept, sqlRows))
		}
		if n := strings.Count(sqlRows, "chain"); n < 100 {
			t.Errorf("rank %d: only %d chain kernels: the fixture tests little", rank, n)
		}
	}
	// SaveFusion's rows, with every rank swept and with none
	save := func(above int64) string {
		s := fusionStore()
		s.chainsAbove = above
		if err := s.save(ctx, db, []int64{1}); err != nil {
			t.Fatal(err)
		}
		return schematest.Dump(t, db, `SELECT * FROM fusion_match_store ORDER BY ALL`)
	}
	bySQL, bySweep := save(1<<40), save(0)
	if bySQL != bySweep || bySQL == "" {
		t.Errorf("saved fuse patterns differ, swept against SQL:\n%s", firstDiff(bySweep, bySQL))
	}
	if got := schematest.Dump(t, db, `SELECT count(*) FROM duckdb_tables() WHERE temporary`); got != "0\n" {
		t.Errorf("temporary tables left: %s", got)
	}
}
