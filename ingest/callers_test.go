package ingest

import (
	"context"
	"database/sql"
	"runtime"
	"sync"
	"testing"

	"github.com/tracehouse/tracehouse/schema"
	"github.com/tracehouse/tracehouse/schema/schematest"
)

// TestCallersOnly: on 2 cores or fewer DuckDB keeps its thread count and
// counts every thread as a caller's (no worker) until restore, which puts
// the caller's setting back; on more cores, or with no worker to begin
// with, nothing changes. Statements still compute the same under it.
func TestCallersOnly(t *testing.T) {
	ctx := context.Background()
	w, err := schema.Open(ctx, schema.Memory, schema.Options{Threads: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	threads, external := schematest.Threads(t, w.DB)
	if threads != 4 || external != 1 {
		t.Fatalf("opened with threads %d, external %d; want 4 and 1", threads, external)
	}
	// n(n+1)/2 over a table of several row groups, computed in parallel or not.
	sum := func() int64 {
		var s int64
		if err := w.DB.QueryRow(`SELECT sum(i) FROM range(1, 1000001) t(i)`).Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	for _, tc := range []struct {
		cores        int
		wantExternal int64
	}{{1, 4}, {2, 4}, {3, 1}, {16, 1}} {
		restore, err := callersOnly(ctx, w.DB, tc.cores)
		if err != nil {
			t.Fatal(err)
		}
		if th, ext := schematest.Threads(t, w.DB); th != 4 || ext != tc.wantExternal {
			t.Errorf("%d cores: threads %d, external %d; want 4 and %d", tc.cores, th, ext, tc.wantExternal)
		}
		if s := sum(); s != 1000000*1000001/2 {
			t.Errorf("%d cores: sum %d", tc.cores, s)
		}
		if err := restore(); err != nil {
			t.Fatal(err)
		}
		if th, ext := schematest.Threads(t, w.DB); th != 4 || ext != 1 {
			t.Errorf("%d cores, restored: threads %d, external %d; want 4 and 1", tc.cores, th, ext)
		}
	}
	// Without a worker to begin with (threads 3, external 3 on a caller's
	// one thread), nothing changes and restore leaves it so.
	w1, err := schema.Open(ctx, schema.Memory, schema.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer w1.Close()
	th1, ext1 := schematest.Threads(t, w1.DB)
	restore, err := callersOnly(ctx, w1.DB, 2)
	if err != nil {
		t.Fatal(err)
	}
	if th, ext := schematest.Threads(t, w1.DB); th != th1 || ext != ext1 {
		t.Errorf("one thread: threads %d, external %d; want %d and %d", th, ext, th1, ext1)
	}
	if err := restore(); err != nil {
		t.Fatal(err)
	}
	if th, ext := schematest.Threads(t, w1.DB); th != th1 || ext != ext1 {
		t.Errorf("one thread, restored: threads %d, external %d; want %d and %d", th, ext, th1, ext1)
	}
}

// settingsSeen records DuckDB's thread settings as an ingest reads its
// first bytes.
type settingsSeen struct {
	t                 *testing.T
	db                *sql.DB
	once              sync.Once
	threads, external int64
}

func (p *settingsSeen) Start(int64) {}
func (p *settingsSeen) Add(int64) {
	p.once.Do(func() { p.threads, p.external = schematest.Threads(p.t, p.db) })
}

// TestIngestRunsOnCallersOnSmallMachines: while an ingest loads its files
// on this machine DuckDB has no worker thread if the machine has 2 cores
// or fewer (CallersOnly), and afterwards the warehouse's settings are the
// caller's again.
func TestIngestRunsOnCallersOnSmallMachines(t *testing.T) {
	ctx := context.Background()
	w, err := schema.Open(ctx, schema.Memory, schema.Options{Threads: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	p := &settingsSeen{t: t, db: w.DB}
	// one trace: the settings are the ingest's, whatever it loads
	res, err := Ingest(ctx, w, []string{"../testdata/demo/trtllm-llama"}, Options{Jobs: 1, Progress: p})
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Err(); err != nil {
		t.Fatal(err)
	}
	want := int64(1)
	if runtime.GOMAXPROCS(0) <= callersOnlyCores {
		want = 4
	}
	if p.threads != 4 || p.external != want {
		t.Errorf("while loading (%d cores): threads %d, external %d; want 4 and %d", runtime.GOMAXPROCS(0), p.threads, p.external, want)
	}
	if th, ext := schematest.Threads(t, w.DB); th != 4 || ext != 1 {
		t.Errorf("after the ingest: threads %d, external %d; want 4 and 1", th, ext)
	}
}
