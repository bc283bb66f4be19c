package queries

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tracehouse/tracehouse/catalog"
	"github.com/tracehouse/tracehouse/ingest"
	"github.com/tracehouse/tracehouse/schema"
	"github.com/tracehouse/tracehouse/schema/schematest"
)

// fusionFX fills a fixture with hand-made kernel sequences, numbering
// runs, traces, names and sites itself, to match a catalog against.
type fusionFX struct {
	fixture
	ctx context.Context
	*fusionIDs
}

// fusionIDs is what a warehouse's fusionFX values share: the ids given and
// what was stored under them.
type fusionIDs struct {
	names map[string]int64
	sites map[string]int64
	// the last run and trace ids given
	runs, traces int64
	// run and rank of each trace
	traceRuns map[int64][2]int64
	// next event ordinal per trace, for warehouse-unique kernel ids
	ordinal map[int64]int64
	// summed duration per (run, rank, stage): the share denominators,
	// counted here independently of the SQL
	stageNS map[string]int64
	// names classified by the last classify (every name stored then; the
	// classifier's rules and the names' rows change only through nameID),
	// and whether kernels were stored since the last NumberStreams
	classified int
	unnumbered bool
}

// newFusionFX copies a migrated warehouse and installs cat (the embedded
// catalog, already in the template copied, when nil).
func newFusionFX(t *testing.T, cat *catalog.Catalog) *fusionFX {
	t.Helper()
	f := sharedFusionFX(t)
	if cat != nil {
		f.install(cat)
	}
	return f
}

// sharedFusionFX is a warehouse with the embedded catalog that the cases
// (subtests) of a test share, one after another, through forCase or
// ruleFX: copying a warehouse per case would cost about as much as the
// case. Each case stores runs of its own and asks about those.
func sharedFusionFX(t *testing.T) *fusionFX {
	t.Helper()
	return &fusionFX{fixture: fixture{t: t, db: schematest.Open(t, catalogTemplate(t)).DB}, ctx: context.Background(),
		fusionIDs: &fusionIDs{names: map[string]int64{}, sites: map[string]int64{}, traceRuns: map[int64][2]int64{},
			ordinal: map[int64]int64{}, stageNS: map[string]int64{}}}
}

// forCase is f for the case t of the test that made f, with cat installed
// (the embedded catalog when nil).
func (f *fusionFX) forCase(t *testing.T, cat *catalog.Catalog) *fusionFX {
	t.Helper()
	c := &fusionFX{fixture: fixture{t: t, db: f.db}, ctx: f.ctx, fusionIDs: f.fusionIDs}
	if cat == nil {
		cat = catalog.Default()
	}
	c.install(cat)
	return c
}

// install makes cat the warehouse's catalog (a no-op when it already is).
func (f *fusionFX) install(cat *catalog.Catalog) {
	f.t.Helper()
	if err := ingest.InstallCatalog(f.ctx, f.db, cat); err != nil {
		f.t.Fatal(err)
	}
}

// run adds a run; model "" and tp 0 store NULL.
func (f *fusionFX) run(framework, model string, tp int) int64 {
	f.t.Helper()
	f.runs++
	var m, tpv any
	if model != "" {
		m = model
	}
	if tp > 0 {
		tpv = tp
	}
	f.exec(`INSERT INTO runs (run_id, label, framework, model, tp_size, ingested_at)
		VALUES (?, ?, ?, ?, ?, TIMESTAMP '2026-01-01')`, f.runs, fmt.Sprintf("run-%d", f.runs), framework, m, tpv)
	return f.runs
}

// traceOf adds a decode trace of run with the run's framework; tpRank < 0
// stores NULL.
func (f *fusionFX) traceOf(run int64, rank, tpRank int) int64 {
	f.t.Helper()
	f.traces++
	var tpr any
	if tpRank >= 0 {
		tpr = tpRank
	}
	f.exec(`INSERT INTO traces BY NAME SELECT
		?::INTEGER AS trace_id, ?::INTEGER AS run_id, 'trace-' || ? || '.json' AS path, 'hash-' || ? AS content_hash,
		0 AS bytes, 0 AS json_bytes, false AS compressed, ?::INTEGER AS rank, ?::INTEGER AS tp_rank,
		false AS rank_assumed, 'decode' AS stage, 'flag' AS stage_source, 'formal' AS role, 'flag' AS role_source,
		false AS merged, (SELECT framework FROM runs WHERE run_id = ?) AS framework, 0 AS events,
		0 AS kernel_events, 0 AS memcpy_events, 0 AS memset_events, 0 AS launch_events, 0 AS graph_launches,
		0 AS cpu_op_events, 0 AS py_frame_events, 0 AS annotation_events, 0 AS flow_events, 0 AS counter_events,
		0 AS instant_events, 0 AS metadata_events, 0 AS other_events, 0 AS warnings,
		TIMESTAMP '2026-01-01' AS ingested_at`, f.traces, run, f.traces, f.traces, rank, tpr, run)
	f.traceRuns[f.traces] = [2]int64{run, int64(rank)}
	return f.traces
}

// fk is one GPU event of a hand-made sequence.
type fk struct {
	name string
	dur  int64  // ns
	gap  int64  // idle ns between the previous event of the sequence and this one
	site string // "rel/path.py:12 func", "" = no Python site
	op   string // CPU op name, "" = none
	kind string // kernel (default), memcpy or memset
	dev  int64  // device (default 0)
}

func fkn(name string, dur int64) fk { return fk{name: name, dur: dur, gap: 1000} }

func (e fk) at(site string) fk  { e.site = site; return e }
func (e fk) op_(op string) fk   { e.op = op; return e }
func (e fk) after(gap int64) fk { e.gap = gap; return e }
func (e fk) as(kind string) fk  { e.kind = kind; return e }
func (e fk) on(dev int64) fk    { e.dev = dev; return e }

// fRepeat concatenates n copies of a layer.
func fRepeat(n int, layer ...fk) []fk {
	var out []fk
	for range n {
		out = append(out, layer...)
	}
	return out
}

// fDur adds the durations of events.
func fDur(es ...fk) int64 {
	var s int64
	for _, e := range es {
		s += e.dur
	}
	return s
}

// seq stores events on one stream of one trace, back to back from start_ns
// with each event's gap before it, and returns where the last one ends.
func (f *fusionFX) seq(trace int64, stage string, stream int64, start int64, es ...fk) int64 {
	f.t.Helper()
	rr, ok := f.traceRuns[trace]
	if !ok {
		f.t.Fatalf("trace %d was not made by traceOf", trace)
	}
	run, rank := rr[0], rr[1]
	var ks []kernel
	var ops strings.Builder
	var opArgs []any
	t := start
	for i, e := range es {
		if i > 0 {
			t += e.gap
		}
		id := trace<<32 | f.ordinal[trace]
		f.ordinal[trace]++
		k := kernel{ID: id, Trace: int(trace), Run: int(run), Rank: int(rank), Stage: stage, Name: int(f.nameID(e.name)),
			Kind: e.kind, TS: t, Dur: e.dur, Device: ptr(e.dev), Stream: ptr(stream)}
		if e.site != "" {
			k.Site = f.siteID(e.site)
		}
		if e.op != "" {
			if len(opArgs) > 0 {
				ops.WriteString(", ")
			}
			ops.WriteString("(?, ?, ?, ?, 0)")
			opArgs = append(opArgs, id, trace, e.op, t)
			k.Op = id
		}
		ks = append(ks, k)
		f.stageNS[fmt.Sprintf("%d/%d/%s", run, rank, stage)] += e.dur
		t += e.dur
	}
	if len(opArgs) > 0 {
		f.exec(`INSERT INTO cpu_ops (op_id, trace_id, name, ts_ns, dur_ns) VALUES `+ops.String(), opArgs...)
	}
	f.appendKernels(ks...)
	f.unnumbered = true
	return t
}

// nameID stores a kernel name once, unclassified; its short and base names
// are the name itself.
func (f *fusionFX) nameID(name string) int64 {
	if id, ok := f.names[name]; ok {
		return id
	}
	id := int64(len(f.names) + 1)
	f.names[name] = id
	f.name(int(id), name, name, name, "", "")
	return id
}

// siteID stores a site given as "rel/path.py:12 func", installed under
// /opt/venv.
func (f *fusionFX) siteID(s string) int64 {
	if id, ok := f.sites[s]; ok {
		return id
	}
	loc, fn, _ := strings.Cut(s, " ")
	file, lineS, _ := strings.Cut(loc, ":")
	line, err := strconv.Atoi(lineS)
	if err != nil {
		f.t.Fatalf("site %q: want rel/path.py:LINE func", s)
	}
	id := int64(len(f.sites) + 1)
	f.sites[s] = id
	f.site(int(id), "/opt/venv/"+file, line, fn, file)
	return id
}

// classify sets family/category on the stored names and numbers kernels on
// their streams, as ingest does, each when something was stored since it
// last did (the stored rows are then as a classify and numbering of each
// step left them: every statement before reads its own rows only).
func (f *fusionFX) classify() {
	f.t.Helper()
	if f.classified != len(f.names) {
		if _, err := schema.Classify(f.ctx, f.db, true); err != nil {
			f.t.Fatal(err)
		}
		f.classified = len(f.names)
	}
	f.numberStreams()
}

// numberStreams numbers the kernels stored since it last did on their
// streams (seq leaves them unnumbered): before a statement reads them.
func (f *fusionFX) numberStreams() {
	f.t.Helper()
	if !f.unnumbered {
		return
	}
	if err := schema.NumberStreams(f.ctx, f.db); err != nil {
		f.t.Fatal(err)
	}
	f.unnumbered = false
}

// share is related over the stage's stored duration, in percent; rank < 0
// sums every rank.
func (f *fusionFX) share(run, rank int64, stage string, related int64) float64 {
	var total int64
	for key, ns := range f.stageNS {
		var r, k int64
		var s string
		if _, err := fmt.Sscanf(strings.ReplaceAll(key, "/", " "), "%d %d %s", &r, &k, &s); err != nil {
			f.t.Fatal(err)
		}
		if r == run && (rank < 0 || k == rank) && s == stage {
			total += ns
		}
	}
	return 100 * float64(related) / float64(total)
}

// conf is the catalog's confidence rule, from the stored durations: confirmed
// at >= likely percent of the stage (all ranks) or >= 4 occurrences.
func (f *fusionFX) conf(run int64, stage string, related int64, occ int, likely float64) string {
	if occ >= 4 || f.share(run, -1, stage, related) >= likely {
		return "confirmed"
	}
	return "candidate"
}

// matches runs FusionMatches over every rank and stage, min share 0.
func (f *fusionFX) matches(run int64) []FusionMatchesRow {
	f.t.Helper()
	return f.matchesP(FusionMatchesParams{Run: run})
}

func (f *fusionFX) matchesP(p FusionMatchesParams) []FusionMatchesRow {
	f.t.Helper()
	f.classify()
	rows, err := FusionMatches(f.ctx, f.db, p)
	if err != nil {
		f.t.Fatal(err)
	}
	return rows
}

// matchesOf runs fusion_matches.sql once for every run given, with $runs:
// each (run, rank) is then the single-trace report of that rank alone, as
// aggregates.SaveFusion computes them (min share 0). It returns each run's
// rows in the query's order; every run must have one rank, whose rows
// are then the run's report over every rank. The rule tests' cases that
// share a catalog are runs of one warehouse asked this way together:
// planning the query is most of what a case cost asked alone (about 40
// ms), and the cases asked alone (the filters, the order, several ranks,
// two-trace mode) keep FusionMatches' own path tested.
func (f *fusionFX) matchesOf(runs ...int64) map[int64][]FusionMatchesRow {
	f.t.Helper()
	f.classify()
	type runRow struct {
		run, rank int64
		row       FusionMatchesRow
	}
	rows, err := collect(f.ctx, f.db, "fusion_matches", []any{
		sql.Named("run", nil), sql.Named("mapping", nil), sql.Named("rank", nil),
		sql.Named("stage", nil), sql.Named("min_share", 0.0), sql.Named("runs", runs),
	}, func(rows *sql.Rows) (runRow, error) {
		r, err := scanFusionMatches(rows)
		if err != nil {
			return runRow{}, err
		}
		// the same row again, for the (run, rank) scanFusionMatches drops
		rr := runRow{row: r}
		dest := make([]any, 21)
		for i := range dest[:19] {
			dest[i] = new(any)
		}
		dest[19], dest[20] = &rr.run, &rr.rank
		return rr, rows.Scan(dest...)
	})
	if err != nil {
		f.t.Fatal(err)
	}
	out := map[int64][]FusionMatchesRow{}
	for _, r := range rows {
		if r.rank != 0 {
			f.t.Fatalf("run %d: a row of rank %d; matchesOf is for runs of rank 0 alone", r.run, r.rank)
		}
		if !slices.Contains(runs, r.run) {
			f.t.Fatalf("a row of run %d, not asked for (%v)", r.run, runs)
		}
		out[r.run] = append(out[r.run], r.row)
	}
	return out
}

// fusionLine is the part of a row most tests compare.
func fusionLine(r FusionMatchesRow) string {
	return fmt.Sprintf("%s %s %s %s x%d %dns", r.Stage, r.ID, r.Status, r.Confidence, r.Occurrences, r.RelatedNS)
}

// wantFusions compares rows (in order) with want lines.
func wantFusions(t *testing.T, rows []FusionMatchesRow, want ...string) {
	t.Helper()
	got := make([]string, len(rows))
	for i, r := range rows {
		got[i] = fusionLine(r)
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("fusion rows:\n got:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// fLine builds a fusionLine from expected values.
func fLine(stage, id, status, confidence string, occ int, related int64) string {
	return fmt.Sprintf("%s %s %s %s x%d %dns", stage, id, status, confidence, occ, related)
}

// testLikely is the test entries' likely_share, in percent.
const testLikely = 50

// testFusion is a catalog entry for rule tests, with the catalog's defaults.
func testFusion(id string, chain ...[]string) catalog.Fusion {
	return catalog.Fusion{ID: id, Name: "Test " + id, Framework: "sglang", Origin: "mainline",
		Fused: []string{id + "-fused-kernel"}, Chain: chain, Ordered: true,
		MaxGapUS: catalog.DefaultMaxGapUS, MaxBetween: catalog.DefaultMaxBetween, MinTP: catalog.DefaultMinTP,
		MinShare: 0, LikelyShare: testLikely, Sources: []string{"src/" + id + ".py"}, Rationale: "Test entry."}
}

// testCatalog wraps entries in a catalog.
func testCatalog(fusions []catalog.Fusion, overlaps ...catalog.Overlap) *catalog.Catalog {
	return &catalog.Catalog{Version: catalog.Version, Fusions: fusions, Overlaps: overlaps}
}
