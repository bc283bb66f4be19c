package aggregates

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/tracehouse/tracehouse/schema/schematest"
)

// TestSweepOverlapMatchesSQL: the per-kernel overlap saved by the Go sweep
// is, row for row and column for column (start ranks included), what the
// SQL macro kernel_overlap_for computes. The two are one algorithm with
// one owner: the macro (sqllib/overlap.sql) defines the figures and is
// what every reader without a current saved copy, a lake, and a run with
// a group too large for Go's memory bound use; the Go sweep exists for
// speed alone, when ingest saves a run (one pass instead of four sorts of
// two points per kernel). Checked on random kernels crowded into few
// instants so that starts and ends tie within and across streams, with
// zero-length events, nested events on one stream, NULL streams and
// devices, a stage outside the four known ones, a name without a category
// and several runs; saved run by run and as one batch, in ranges of
// several groups and all at once (and, past the group limit, a piece of a
// group at a time: one piece, and pieces of 7 events; the groups here hold
// 35-62 events, so a limit of 40 streams some and not others in one range;
// pieces of 16 as well cost a third of the test and caught nothing more).
// Ranges of one group each (chunk 1: a statement per group, a quarter of
// the test's time) went: the changes to the ranges and their sweep that
// failed them (a range's upper or lower key off by one, the start count
// restarted per range) fail the ranges of several groups too, which also
// fail those a one-group range cannot show (bench/README.md, "Seventy-fourth
// figures").
func TestSweepOverlapMatchesSQL(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := schematest.Open(t, "").DB
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec(`INSERT INTO runs (run_id, label, ingested_at) VALUES (1, 'a', TIMESTAMP '2026-01-01'), (2, 'b', TIMESTAMP '2026-01-01')`)
	exec(`INSERT INTO kernel_names (name_id, name, short_name, base_name, family, category) VALUES
		(1, 'gemm', 'gemm', 'gemm', 'gemm', 'compute'),
		(2, 'flash', 'flash', 'flash', 'attention', 'compute'),
		(3, 'nccl', 'nccl', 'nccl', 'communication', 'communication'),
		(4, 'copy', 'copy', 'copy', 'memcpy', 'memory'),
		(5, 'odd', 'odd', 'odd', NULL, NULL),
		(6, 'norm', 'norm', 'norm', 'norm', 'elementwise')`)
	rng := rand.New(rand.NewPCG(7, 11))
	stages := []string{"prefill", "decode", "warmup"}
	var rows []string
	for trace := 1; trace <= 4; trace++ {
		run := 1 + (trace-1)/2
		for i := range 400 {
			// trace 4 is a merged file of two ranks sharing device ids
			rank := trace % 2
			if trace == 4 {
				rank = rng.IntN(2)
			}
			device, stream := "NULL", "NULL"
			if d := rng.IntN(3); d < 2 {
				device = fmt.Sprint(d)
			}
			if s := rng.IntN(4); s < 3 {
				stream = fmt.Sprint(7 + s)
			}
			dur := 0
			if rng.IntN(6) > 0 {
				dur = rng.IntN(40)
			}
			rows = append(rows, fmt.Sprintf("(%d, %d, %d, %d, '%s', %d, 'kernel', %d, %d, %s, %s, false)",
				int64(trace)<<32+int64(i), trace, run, rank, stages[rng.IntN(3)], 1+rng.IntN(6),
				1000+rng.IntN(120)*5, dur, device, stream))
		}
	}
	exec(`INSERT INTO kernels (kernel_id, trace_id, run_id, rank, stage, name_id, kind, ts_ns, dur_ns, device, stream, graph_launch) VALUES ` +
		strings.Join(rows, ",\n"))

	dump := func(q string) string { return schematest.Dump(t, db, q+` ORDER BY kernel_id`) }
	// The references (the macros over the kernels, which no save
	// changes) are computed once per run list, not once per case: they
	// were half of this test's time.
	refs := map[string]string{}
	ref := func(q string, dump func(string) string) string {
		if _, ok := refs[q]; !ok {
			refs[q] = dump(q)
		}
		return refs[q]
	}
	// The communication overlap rows the sweep saves are _comm_parts_for's
	// (sqllib/comm.sql), and those of merged intervals (commBruteForce).
	brute := commBruteForce(t, db)
	commDump := func(q string) string { return schematest.Dump(t, db, q+` ORDER BY ALL`) }
	checkComm := func(what string, runs ...int) {
		t.Helper()
		list := strings.Trim(strings.Join(strings.Fields(fmt.Sprint(runs)), ", "), "[]")
		q := `SELECT * FROM _comm_parts_for(NULL, runs := [` + list + `])`
		_, known := refs[q]
		want := ref(q, commDump)
		if got := commDump(`SELECT * FROM comm_overlap_store WHERE list_contains([` + list + `], run_id)`); got != want || want == "" {
			t.Errorf("%s: saved communication overlap differs from _comm_parts_for:\n%s", what, firstDiff(got, want))
		}
		if known {
			return // checked against the merged intervals already
		}
		lines := strings.Split(strings.TrimSuffix(want, "\n"), "\n")
		slices.Sort(lines)
		var b strings.Builder
		for _, line := range lines {
			b.WriteString(line + "\n")
		}
		var bw strings.Builder
		for _, line := range brute {
			if slices.ContainsFunc(runs, func(r int) bool { return strings.HasPrefix(line, fmt.Sprint(r)+" ") }) {
				bw.WriteString(line + "\n")
			}
		}
		if b.String() != bw.String() {
			t.Errorf("%s: _comm_parts_for differs from merged intervals:\n%s", what, firstDiff(b.String(), bw.String()))
		}
	}
	store := func(chunk, limit int64) runStore {
		s := overlapStore()
		s.fill = func(ctx context.Context, conn *sql.Conn, runs []int64, _ *finishPlan) error {
			return sweepOverlapBy(ctx, conn, runArgs(runs), chunk, limit)
		}
		return s
	}
	// the last two: groups over the limit, swept a piece of chunk
	// events at a time (sweepStreamed), both runs in one batch only: a
	// piece reads its group by the group's own columns, the same alone or
	// in a batch, and each of six changes to the streamed sweep that
	// failed it run by run (a piece's ends before the next's starts, its
	// start, order and device filter, the comm rows, the end order)
	// failed the batch too, which costs a third of the run-by-run saves
	for _, c := range []struct{ chunk, limit int64 }{{500, sweepGroupLimit},
		{sweepChunkKernels, sweepGroupLimit}, {sweepChunkKernels, 20}, {7, 40}} {
		chunk := c.chunk
		for run := 1; run <= 2 && c.limit == sweepGroupLimit; run++ {
			if err := store(chunk, c.limit).saveOne(ctx, db, int64(run)); err != nil {
				t.Fatal(err)
			}
			want := ref(fmt.Sprintf(`SELECT * FROM kernel_overlap_for(%d)`, run), dump)
			if n := strings.Count(want, "\n"); n != 800 {
				t.Fatalf("run %d: %d rows", run, n)
			}
			if got := dump(fmt.Sprintf(`SELECT * FROM kernel_overlap_store WHERE run_id = %d`, run)); got != want {
				t.Errorf("chunk %d, run %d: saved rows differ from kernel_overlap_for:\n%s", chunk, run, firstDiff(got, want))
			}
			checkComm(fmt.Sprintf("chunk %d, limit %d, run %d", chunk, c.limit, run), run)
		}
		if err := store(chunk, c.limit).saveBatch(ctx, db, batch{runs: []int64{1, 2}}, nil); err != nil {
			t.Fatal(err)
		}
		want := ref(`SELECT * FROM kernel_overlap_for(NULL, runs := [1, 2])`, dump)
		if got := dump(`SELECT * FROM kernel_overlap_store`); got != want {
			t.Errorf("chunk %d, runs 1 and 2 in one batch: saved rows differ:\n%s", chunk, firstDiff(got, want))
		}
		checkComm(fmt.Sprintf("chunk %d, limit %d, runs 1 and 2", chunk, c.limit), 1, 2)
	}
}

// commBruteForce is comm_overlap_store's rows as dumped (run, trace,
// rank, stage, device, comm, comp, overlap; sorted), computed here from
// the events: per (trace, rank, stage, device), the union of the
// communication events' intervals, of the others' but memory's (a name
// without a category being neither), and their intersection, instant by
// instant.
func commBruteForce(t *testing.T, db *sql.DB) []string {
	t.Helper()
	type key struct {
		run, trace, rank int64
		stage, device    string
	}
	type ev struct {
		from, to int64
		kind     string
	}
	evs := map[key][]ev{}
	rows, err := db.Query(`SELECT k.run_id, k.trace_id, k.rank, k.stage, coalesce(k.device::VARCHAR, '<nil>'), k.ts_ns, k.ts_ns + k.dur_ns,
			coalesce(n.category, '')
		FROM kernels k JOIN kernel_names n USING (name_id) WHERE k.dur_ns > 0`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var k key
		var e ev
		if err := rows.Scan(&k.run, &k.trace, &k.rank, &k.stage, &k.device, &e.from, &e.to, &e.kind); err != nil {
			t.Fatal(err)
		}
		evs[k] = append(evs[k], e)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	var out []string
	for k, es := range evs {
		lo, hi := es[0].from, es[0].to
		for _, e := range es {
			lo, hi = min(lo, e.from), max(hi, e.to)
		}
		var comm, comp, both int64
		for ns := lo; ns < hi; ns++ { // every nanosecond: the times are small
			var c, p bool
			for _, e := range es {
				if e.from <= ns && ns < e.to {
					switch e.kind {
					case "communication":
						c = true
					case "memory", "":
					default:
						p = true
					}
				}
			}
			if c {
				comm++
			}
			if p {
				comp++
			}
			if c && p {
				both++
			}
		}
		out = append(out, fmt.Sprintf("%d %d %d %s %s %d %d %d", k.run, k.trace, k.rank, k.stage, k.device, comm, comp, both))
	}
	slices.Sort(out)
	return out
}

// firstDiff shows the first line where two dumps differ.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range min(len(g), len(w)) {
		if g[i] != w[i] {
			return fmt.Sprintf("line %d:\n got %s\nwant %s", i+1, g[i], w[i])
		}
	}
	return fmt.Sprintf("%d lines vs %d", len(g), len(w))
}

// TestSweepSharedKeyInPieces: a group key standing for two groups (a
// device id past the key's 20 bits, 1048575, shares its key with the NULL
// device: overlap_store_groups.sql's single false) is read a piece at a
// time by its key (overlap_store_kernels.sql), the single groups by their
// columns (overlap_store_piece.sql), and both sweep to kernel_overlap_for's
// rows.
func TestSweepSharedKeyInPieces(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := schematest.Open(t, "").DB
	exec := func(q string) {
		t.Helper()
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec(`INSERT INTO runs (run_id, label, ingested_at) VALUES (1, 'a', TIMESTAMP '2026-01-01')`)
	exec(`INSERT INTO kernel_names (name_id, name, short_name, base_name, family, category) VALUES
		(1, 'gemm', 'gemm', 'gemm', 'gemm', 'compute'), (2, 'nccl', 'nccl', 'nccl', 'communication', 'communication')`)
	rng := rand.New(rand.NewPCG(3, 5))
	var rows []string
	for i := range 120 {
		device := []string{"NULL", "1048575", "0"}[i%3]
		rows = append(rows, fmt.Sprintf("(%d, 1, 1, 0, 'decode', %d, 'kernel', %d, %d, %s, %d, false)",
			int64(1)<<32+int64(i), 1+rng.IntN(2), 1000+rng.IntN(40)*5, rng.IntN(30), device, 7+rng.IntN(2)))
	}
	exec(`INSERT INTO kernels (kernel_id, trace_id, run_id, rank, stage, name_id, kind, ts_ns, dur_ns, device, stream, graph_launch) VALUES ` +
		strings.Join(rows, ",\n"))
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	groups, err := overlapGroups(ctx, conn, runArgs([]int64{1}))
	if err != nil {
		t.Fatal(err)
	}
	var single []bool
	for _, g := range groups {
		single = append(single, g.single)
	}
	if !slices.Equal(single, []bool{true, false}) {
		t.Fatalf("groups single %v, want one of its own and one shared key", single)
	}
	conn.Close()
	s := overlapStore()
	s.fill = func(ctx context.Context, conn *sql.Conn, runs []int64, _ *finishPlan) error {
		return sweepOverlapBy(ctx, conn, runArgs(runs), 9, 20)
	}
	if err := s.saveOne(ctx, db, 1); err != nil {
		t.Fatal(err)
	}
	dump := func(q string) string { return schematest.Dump(t, db, q+` ORDER BY kernel_id`) }
	want := dump(`SELECT * FROM kernel_overlap_for(1)`)
	if n := strings.Count(want, "\n"); n != 120 {
		t.Fatalf("%d rows", n)
	}
	if got := dump(`SELECT * FROM kernel_overlap_store`); got != want {
		t.Errorf("saved rows differ from kernel_overlap_for:\n%s", firstDiff(got, want))
	}
}
