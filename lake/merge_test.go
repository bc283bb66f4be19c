package lake

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tracehouse/tracehouse/schema"
)

// demoRuns are the demo warehouse's run ids and labels, by id.
func demoRuns(t *testing.T, db *sql.DB) (ids []int64, labels []string) {
	t.Helper()
	rows, err := db.Query(`SELECT run_id, label FROM runs ORDER BY run_id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var l string
		if err := rows.Scan(&id, &l); err != nil {
			t.Fatal(err)
		}
		ids, labels = append(ids, id), append(labels, l)
	}
	if len(ids) < 4 {
		t.Fatalf("the demo has %d runs; these tests need 4 or more", len(ids))
	}
	return ids, labels
}

// tableQueries are, per table, the query whose rows a lake holding the
// runs labelled runs (nil: all) must give exactly as the warehouse does.
func tableQueries(runs []string) map[string]string {
	in := "SELECT run_id FROM runs"
	if runs != nil {
		quoted := make([]string, len(runs))
		for i, r := range runs {
			quoted[i] = literal(r)
		}
		in += " WHERE label IN (" + strings.Join(quoted, ", ") + ")"
	}
	traces := "SELECT trace_id FROM traces WHERE run_id IN (" + in + ")"
	out := map[string]string{}
	for _, tb := range Tables {
		cols := "*"
		if tb.store == storeOverlap {
			cols = "* EXCLUDE (start_rank, starts_before_end)" // renumbered per trace
		}
		switch tb.layout {
		case dimension:
			var used []string
			for _, o := range []string{"kernels", "launches", "cpu_ops", "py_frame_events"} {
				if tb.key == "site_id" && o == "kernels" {
					continue
				}
				used = append(used, fmt.Sprintf("SELECT %s FROM %s WHERE trace_id IN (%s)", tb.key, o, traces))
			}
			if tb.key == "name_id" {
				used = used[:1]
			}
			out[tb.Name] = fmt.Sprintf("SELECT * FROM %s WHERE %s IN (%s)", tb.Name, tb.key, strings.Join(used, " UNION "))
		case byRun, commit:
			out[tb.Name] = fmt.Sprintf("SELECT %s FROM %s WHERE run_id IN (%s)", cols, tb.Name, in)
		default:
			out[tb.Name] = fmt.Sprintf("SELECT %s FROM %s WHERE trace_id IN (%s)", cols, tb.Name, traces)
		}
	}
	return out
}

// demoRows are the demo warehouse's rows of each query sameAsWarehouse
// asked, by query text: the warehouse is one read-only file per test
// binary, so a query's rows are the same for every test, and reading them
// again for each check was a tenth of this package's test CPU.
var demoRows = struct {
	sync.Mutex
	rows map[string][]string
}{rows: map[string][]string{}}

// demoDump is dump of the demo warehouse src (openDemo's), read once per
// query and test binary.
func demoDump(t *testing.T, src *schema.Warehouse, q string) []string {
	t.Helper()
	if src.Path != demoPath || !src.ReadOnly {
		t.Fatalf("demoDump of %s (read-only %v): only the demo warehouse's rows never change", src.Path, src.ReadOnly)
	}
	demoRows.Lock()
	rows, ok := demoRows.rows[q]
	demoRows.Unlock()
	if ok {
		return rows
	}
	rows = dump(t, src.DB, q)
	demoRows.Lock()
	demoRows.rows[q] = rows
	demoRows.Unlock()
	return rows
}

// sameAsWarehouse opens the lake (for the runs labelled runs; nil: every
// run) and checks every table gives exactly the rows of the runs the lake
// holds (want) that the demo warehouse src gives, and that no other run
// shows.
func sameAsWarehouse(t *testing.T, src *schema.Warehouse, dir string, want, runs []string, warn func(string)) {
	t.Helper()
	lk, err := OpenRead(context.Background(), dir, schema.Options{Threads: 1}, ReadOptions{Runs: runs, Warn: warn})
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Close()
	var got []string
	rows, err := lk.DB.Query(`SELECT label FROM runs ORDER BY label`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var l string
		rows.Scan(&l)
		got = append(got, l)
	}
	rows.Close()
	sorted := slices.Clone(want)
	slices.Sort(sorted)
	if !slices.Equal(got, sorted) {
		t.Fatalf("the lake shows runs %v, want %v", got, sorted)
	}
	shown := want
	if runs != nil {
		shown = runs
	}
	lakeQueries := tableQueries(nil)
	for table, q := range tableQueries(shown) {
		lq := q
		if tb := tableByName(table); runs != nil && (tb.layout == byTrace || tb.layout == byTraceStageRank) {
			// every row the lake shows: those of the runs asked for
			// must be the warehouse's, and the runs not asked for show
			// nothing (one scan of the files for both)
			lq = lakeQueries[table]
		}
		w, l := demoDump(t, src, q), dump(t, lk.DB, lq)
		if !slices.Equal(w, l) {
			t.Errorf("%s (runs %v): lake has %d rows, warehouse %d (runs not asked for show none); first difference:\n%s", table, shown, len(l), len(w), firstDiff(w, l))
		}
	}
}

// noWarning is a reader's Warn that fails the test: nothing is damaged.
func noWarning(t *testing.T) func(string) {
	return func(s string) { t.Errorf("warning: %s", s) }
}

func quoteAll(v []string) []string {
	out := make([]string, len(v))
	for i, s := range v {
		out[i] = literal(s)
	}
	return out
}

// mergedFiles counts the files under _tracehouse/merged/<table>/.
func mergedFiles(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	for _, tb := range Tables {
		ents, err := os.ReadDir(filepath.Join(dir, metaDir, mergedDir, tb.Name))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		n += len(ents)
	}
	return n
}

// testChunkBytes is the chunk size of the tests that merge the demo lake
// into several chunks, each of several traces (a reader of one run then
// filters a chunk's rows by trace). At 64 KiB each trace was a chunk of
// its own (16 chunks of 16 files), which tested no such filter and cost
// 0.8 CPU-s a compaction of the demo lake (0.3 at the default size). With
// the demo's 12 traces without sglang-mapping (demoWarehouse), 528 to 576
// KiB make chunks that each hold runs of both halves of
// TestCompactSameAnswers and merge the half lake into two or more (512
// KiB left vllm-qwen-moe's traces a chunk of their own, 592 merged the
// half lake into one).
const testChunkBytes = 552 << 10

var (
	halfOnce sync.Once
	halfDir  string // holds both half lakes
	halfRes  *CompactResult
	halfErr  error
)

// halfLakes are two lakes of the first half of the demo runs (demoRuns'
// ids[:len/2]), built once per test binary: written, those runs written
// into an empty directory; merged, a copy of it merged (testChunkBytes, no
// grace) into generation 1, with the result of that compaction. Tests
// copy them (copyDir); TestMain removes them.
func halfLakes(t *testing.T) (written, merged string, res *CompactResult) {
	t.Helper()
	src := openDemo(t)
	ids, _ := demoRuns(t, src.DB)
	halfOnce.Do(func() {
		ctx := context.Background()
		halfDir, halfErr = os.MkdirTemp("", "lake-half-")
		if halfErr != nil {
			return
		}
		w, m := filepath.Join(halfDir, "written"), filepath.Join(halfDir, "merged")
		if _, halfErr = Write(ctx, src.DB, w, WriteOptions{Runs: ids[:len(ids)/2]}); halfErr != nil {
			return
		}
		if halfErr = copyTree(w, m); halfErr != nil {
			return
		}
		halfRes, halfErr = Compact(ctx, m, CompactOptions{ChunkBytes: testChunkBytes, Grace: 0, Engine: schema.Options{Threads: 1}})
	})
	if halfErr != nil {
		t.Fatal(halfErr)
	}
	return filepath.Join(halfDir, "written"), filepath.Join(halfDir, "merged"), halfRes
}

// TestCompactSameAnswers: a lake of some demo runs, merged into several
// chunks, with runs written after the merge read from their own files
// beside the chunks, answers every table's query exactly as the warehouse
// does, whole and for two runs; merging again takes them in (and any
// small chunk with them), and the lake answers so for every run, each
// once asked for; with nothing new it changes nothing.
func TestCompactSameAnswers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src := openDemo(t)
	ids, labels := demoRuns(t, src.DB)
	half := len(ids) / 2
	// the half written into an empty lake and merged (the lake is read
	// first once merged: the same rows, and files of traces not merged
	// are read below and by TestExportRoundTrip)
	_, merged, res := halfLakes(t)
	dir := copyDir(t, merged)
	// chunks small enough that the demo's runs make several
	opt := CompactOptions{ChunkBytes: testChunkBytes, Grace: 0, Engine: schema.Options{Threads: 1}}
	var traces int
	if err := src.DB.QueryRow(`SELECT count(*) FROM traces WHERE run_id IN (` + intList(ids[:half]) + `)`).Scan(&traces); err != nil {
		t.Fatal(err)
	}
	if !res.Published || res.Generation != 1 || res.Merged != traces || res.Covered != traces || res.Left != 0 || res.Chunks < 2 {
		t.Fatalf("first compact: %+v, want generation 1 with all %d traces in 2 or more chunks", res, traces)
	}
	// (Generation 1 is read whole, runs nil, by
	// TestKilledCompactLeavesLakeReadable and TestDamagedChunkFallsBack;
	// the reads for some runs of generation 2 below filter its chunks as
	// a read of one run of it did.)

	// Later runs are read from their own files, beside the chunks.
	if _, err := Write(ctx, src.DB, dir, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	sameAsWarehouse(t, src, dir, labels, nil, nil)
	sameAsWarehouse(t, src, dir, labels, []string{labels[0], labels[len(labels)-1]}, nil)

	res2, err := Compact(ctx, dir, opt)
	if err != nil {
		t.Fatal(err)
	}
	var all int
	if err := src.DB.QueryRow(`SELECT count(*) FROM traces`).Scan(&all); err != nil {
		t.Fatal(err)
	}
	if !res2.Published || res2.Generation != 2 || res2.Merged != all-traces || res2.Covered != all || res2.Left != 0 {
		t.Fatalf("second compact: %+v, want generation 2 with %d new traces, %d in all", res2, all-traces, all)
	}
	// Each run asked for once and left out once: the runs at even and at
	// odd places (and a label with no files, with the even ones). Every
	// chunk holds runs of both, so each reader selects every chunk and
	// filters its rows by trace (a reader per run cost four more openings
	// and full scans of the lake). Between them they check every row of
	// every run (a whole read of the generation repeated them).
	var even, odd []string
	isEven := map[string]bool{} // as the manifest names runs
	for i, l := range labels {
		if i%2 == 0 {
			even = append(even, l)
			isEven[partValue(l)] = true
		} else {
			odd = append(odd, l)
		}
	}
	for _, c := range mustManifest(t, dir).Chunks {
		in := map[bool]bool{}
		for _, tr := range c.Traces {
			in[isEven[tr.Run]] = true
		}
		if !in[true] || !in[false] {
			t.Fatalf("a chunk holds runs of one half only (%+v): the halves test no filter of its rows", c.Traces)
		}
	}
	sameAsWarehouse(t, src, dir, labels, append(even, "no-such-run"), nil)
	sameAsWarehouse(t, src, dir, labels, odd, nil)
	// Grace 0: the first generation's manifest and the chunk files only
	// it named are gone.
	if gens, err := generations(dir); err != nil || !slices.Equal(gens, []int{2}) {
		t.Errorf("generations %v (%v), want [2]", gens, err)
	}
	m, err := currentManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	named := 0
	for _, c := range m.Chunks {
		named += len(c.Files)
	}
	if n := mergedFiles(t, dir); n != named {
		t.Errorf("%d chunk files on disk, the generation names %d", n, named)
	}

	// Idempotent: nothing new, nothing changes.
	res3, err := Compact(ctx, dir, opt)
	if err != nil {
		t.Fatal(err)
	}
	if res3.Published || res3.Generation != 2 || res3.Merged != 0 || res3.Covered != all {
		t.Errorf("third compact: %+v, want nothing published", res3)
	}
	if gens, _ := generations(dir); !slices.Equal(gens, []int{2}) {
		t.Errorf("generations %v after a compact with nothing to do", gens)
	}
}

// TestCompactGraceKeepsOldGeneration: with a grace period, the replaced
// generation's manifest and the files only it names stay for the readers
// that opened it; a reader of the old generation still reads every row.
// Past the grace period they go.
func TestCompactGraceKeepsOldGeneration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src := openDemo(t)
	ids, labels := demoRuns(t, src.DB)
	half := len(ids) / 2
	// generation 1: the half lake merged into chunks of testChunkBytes
	// (merging two runs here, then a third, cost 0.4 CPU-s more)
	_, merged, _ := halfLakes(t)
	dir := copyDir(t, merged)
	// the default chunk size: generation 1's chunks are all small, and
	// merged again
	opt := CompactOptions{Grace: time.Hour, Engine: schema.Options{Threads: 1}}
	// a reader opens generation 1
	old, err := Open(ctx, dir, schema.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	before := dump(t, old.DB, "SELECT * FROM kernels")
	if _, err := Write(ctx, src.DB, dir, WriteOptions{Runs: ids[half : half+1]}); err != nil {
		t.Fatal(err)
	}
	res, err := Compact(ctx, dir, opt)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Published || res.Generation != 2 || res.Removed != 0 {
		t.Fatalf("second compact: %+v", res)
	}
	// generation 2 merged them again: files only generation 1 names
	named := map[string]bool{}
	for _, c := range mustManifest(t, dir).Chunks {
		for _, f := range c.Files {
			named[f.Path] = true
		}
	}
	g1, err := readManifest(dir, 1)
	if err != nil {
		t.Fatal(err)
	}
	var oldOnly []string
	for _, c := range g1.Chunks {
		for _, f := range c.Files {
			if !named[f.Path] {
				oldOnly = append(oldOnly, f.Path)
			}
		}
	}
	if len(oldOnly) == 0 {
		t.Fatal("generation 2 names every file of generation 1: the grace keeps nothing a reader needs")
	}
	if gens, _ := generations(dir); !slices.Equal(gens, []int{1, 2}) {
		t.Errorf("generations %v, want [1 2] within the grace period", gens)
	}
	if after := dump(t, old.DB, "SELECT * FROM kernels"); !slices.Equal(before, after) {
		t.Errorf("a reader of generation 1 read %d kernel rows, then %d", len(before), len(after))
	}
	sameAsWarehouse(t, src, dir, labels[:half+1], nil, nil)
	// past the grace period (no reader left), the next compact removes it
	res, err = Compact(ctx, dir, CompactOptions{Grace: 0, Engine: schema.Options{Threads: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Removed == 0 {
		t.Errorf("nothing removed past the grace period: %+v", res)
	}
	if gens, _ := generations(dir); !slices.Equal(gens, []int{2}) {
		t.Errorf("generations %v, want [2]", gens)
	}
	for _, p := range oldOnly {
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(p))); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s, named by generation 1 only, is still there past the grace period (%v)", p, err)
		}
	}
	// (that the lake then reads as before, TestCompactSameAnswers checks)
}

// TestCompactWhileWriting: writers commit runs while compactions merge,
// in parallel: every reader sees each committed trace exactly once, and
// once all are done and merged the lake equals the warehouse.
func TestCompactWhileWriting(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src := openDemo(t)
	ids, labels := demoRuns(t, src.DB)
	dir := t.TempDir()
	if _, err := Write(ctx, src.DB, dir, WriteOptions{Runs: ids[:1]}); err != nil {
		t.Fatal(err)
	}
	// the default grace: a compaction never removes another's files
	opt := CompactOptions{ChunkBytes: testChunkBytes, Grace: DefaultGrace, Engine: schema.Options{Threads: 1}}
	var wg sync.WaitGroup
	errs := make(chan error, 2*len(ids))
	for i, id := range ids[1:] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// one run per writer, two traces a commit round: the runs
			// of four traces show half written between their rounds (a
			// round per trace cost 0.3 CPU-s more)
			_, err := Write(ctx, src.DB, dir, WriteOptions{Runs: []int64{id}, Batch: 2})
			errs <- err
		}()
		// Two compactions, started with the first two writers: both
		// merge what is committed then and race to publish the next
		// generation, one loses (the writers go on committing after
		// them). Started with every writer, the other three only raced
		// and lost as well (their merges thrown away).
		if i >= 2 {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := Compact(ctx, dir, opt)
			errs <- err
		}()
	}
	// a reader meanwhile: every trace it shows is whole, and once
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range 3 {
			lk, err := Open(ctx, dir, schema.Options{Threads: 1})
			if err != nil {
				errs <- err
				return
			}
			var dup, kernels, want int64
			err = lk.DB.QueryRow(`SELECT count(*) - count(DISTINCT kernel_id) FROM kernels`).Scan(&dup)
			if err == nil {
				err = lk.DB.QueryRow(`SELECT count(*) FROM kernels`).Scan(&kernels)
			}
			var shown []string
			if err == nil {
				shown = dump(t, lk.DB, `SELECT content_hash FROM traces`)
			}
			lk.Close()
			if err != nil {
				errs <- err
				return
			}
			q := `SELECT count(*) FROM kernels WHERE trace_id IN (SELECT trace_id FROM traces WHERE content_hash IN (` + strings.Join(quoteAll(shown), ", ") + `))`
			if err := src.DB.QueryRow(q).Scan(&want); err != nil {
				errs <- err
				return
			}
			if dup != 0 || kernels != want {
				errs <- fmt.Errorf("a reader during the compactions saw %d kernel rows (%d twice), its %d traces have %d", kernels, dup, len(shown), want)
			}
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	// (the lake is read whole once merged: a read of the chunks and files
	// the compactions left, before, repeated TestCompactSameAnswers' read
	// of chunks beside files; the reader above checked each state it saw)
	res, err := Compact(ctx, dir, opt)
	if err != nil {
		t.Fatal(err)
	}
	var all int
	if err := src.DB.QueryRow(`SELECT count(*) FROM traces`).Scan(&all); err != nil {
		t.Fatal(err)
	}
	if res.Covered != all || res.Left != 0 {
		t.Errorf("after the writers: %+v, want all %d traces merged", res, all)
	}
	sameAsWarehouse(t, src, dir, labels, nil, noWarning(t))
}

// compactCrashRole, run by TestMain in a child process, compacts the lake
// and dies (os.Exit: no deferred cleanup, like a kill) right after the
// N-th file it moves into place.
func compactCrashRole() {
	n, _ := strconv.Atoi(os.Getenv("LAKE_TEST_COMPACT_CRASH_AFTER"))
	count := 0
	testHookMoved = func(string) {
		if count++; count == n {
			os.Exit(3)
		}
	}
	_, err := Compact(context.Background(), os.Getenv("LAKE_TEST_DIR"), CompactOptions{ChunkBytes: testChunkBytes, Grace: 0, Engine: schema.Options{Threads: 1}})
	fmt.Fprintf(os.Stderr, "finished without crashing after %d files: %v\n", count, err)
	os.Exit(0)
}

// TestKilledCompactLeavesLakeReadable kills compactions right after their
// n-th file lands (in the first chunk; in the second, the first whole):
// the lake then shows every trace with exactly its rows, none twice; the
// next compaction finishes the job and removes what the killed ones left,
// and the lake then reads exactly as the warehouse.
func TestKilledCompactLeavesLakeReadable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src := openDemo(t)
	ids, labels := demoRuns(t, src.DB)
	// half the demo runs, written: they merge into several chunks (the
	// whole demo lake cost twice as much to merge, count and read)
	written, _, merged := halfLakes(t)
	dir := copyDir(t, written)
	labels = labels[:len(ids)/2]
	if merged.Chunks < 2 {
		t.Fatalf("the half lake merges into %d chunk(s): no kill lands in a second", merged.Chunks)
	}
	// Of 16 files a chunk; a kill elsewhere before the manifest leaves
	// what these leave (unnamed merged files), so a third kill and the
	// full reads after each but the last were redundant.
	for _, after := range []int{1, 20} {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "LAKE_TEST_COMPACT_CRASH_AFTER="+strconv.Itoa(after), "LAKE_TEST_DIR="+dir)
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 3 {
			t.Fatalf("after %d files: want exit 3, got %v: %s", after, err, out)
		}
		gens, err := generations(dir)
		if err != nil || len(gens) != 0 {
			t.Fatalf("after %d files: generations %v (%v): none was published", after, gens, err)
		}
		if mergedFiles(t, dir) == 0 {
			t.Fatalf("after %d files: no leftover chunk files: the kill tested nothing", after)
		}
	}
	// No generation was published: the reader reads the traces' own
	// files, none of the merged ones the kills left (each trace's rows
	// counted per table, as after a killed write: a full read of every
	// row cost three times as much, and TestCompactSameAnswers and
	// TestDamagedChunkFallsBack read traces' own files row by row)
	perTrace := rowsPerTrace(t, src)
	if n := checkCommitted(t, dir, perTrace); n != merged.Covered {
		t.Fatalf("after the kills the lake shows %d traces, want %d", n, merged.Covered)
	}
	res, err := Compact(ctx, dir, CompactOptions{ChunkBytes: testChunkBytes, Grace: 0, Engine: schema.Options{Threads: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Published || res.Generation != 1 || res.Left != 0 {
		t.Fatalf("compact after the kills: %+v", res)
	}
	named := 0
	for _, c := range mustManifest(t, dir).Chunks {
		named += len(c.Files)
	}
	if n := mergedFiles(t, dir); n != named {
		t.Errorf("%d chunk files on disk, generation 1 names %d: the killed compactions' files stayed", n, named)
	}
	// (read for some runs, a generation's chunks are filtered by trace:
	// TestCompactSameAnswers)
	sameAsWarehouse(t, src, dir, labels, nil, nil)
}

func mustManifest(t *testing.T, dir string) *manifest {
	t.Helper()
	m, err := currentManifest(dir)
	if err != nil || m == nil {
		t.Fatalf("no current generation: %v", err)
	}
	return m
}

// TestDamagedChunkFallsBack: a merged file that no longer matches its
// record is not read; its traces are read from their own files (every
// answer unchanged), with a note; the next compact merges them again.
func TestDamagedChunkFallsBack(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src := openDemo(t)
	ids, labels := demoRuns(t, src.DB)
	// half the demo runs, merged into several chunks (a lake of every
	// run, merged here, cost twice as much to merge and to read)
	_, merged, _ := halfLakes(t)
	dir := copyDir(t, merged)
	labels = labels[:len(ids)/2]
	opt := CompactOptions{ChunkBytes: testChunkBytes, Grace: 0, Engine: schema.Options{Threads: 1}}
	m := mustManifest(t, dir)
	var kernels chunkFile
	for _, f := range m.Chunks[0].Files {
		if f.Table == "kernels" {
			kernels = f
		}
	}
	if kernels.Path == "" {
		t.Fatal("the first chunk has no kernels file")
	}
	path := filepath.Join(dir, filepath.FromSlash(kernels.Path))
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0xff
	if err := os.WriteFile(path, b, 0o666); err != nil {
		t.Fatal(err)
	}
	var notes []string
	sameAsWarehouse(t, src, dir, labels, nil, func(s string) { notes = append(notes, s) })
	if len(notes) != 1 || !strings.Contains(notes[0], kernels.Path+" is damaged") || !strings.Contains(notes[0], "read from their own files") {
		t.Errorf("notes %q, want one naming %s", notes, kernels.Path)
	}
	res, err := Compact(ctx, dir, opt)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Published || res.Generation != 2 {
		t.Fatalf("compact of a damaged chunk: %+v, want generation 2", res)
	}
	notes = nil
	sameAsWarehouse(t, src, dir, labels, nil, func(s string) { notes = append(notes, s) })
	if len(notes) != 0 {
		t.Errorf("notes after the repair: %q", notes)
	}
}
