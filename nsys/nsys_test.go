package nsys_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tracehouse/tracehouse/nsys"
	"github.com/tracehouse/tracehouse/nsys/nsystest"
)

const session = 1_751_289_296_000_000_000

// writeSmall writes one export with two kernels (one from a graph), a
// memcpy, a memset, three runtime calls and two NVTX ranges plus a mark.
func writeSmall(t *testing.T, path string, v nsystest.Variant) {
	t.Helper()
	w, err := nsystest.Create(path, v)
	if err != nil {
		t.Fatal(err)
	}
	w.Info(nsystest.Info{SessionStartNS: session, SchemaVersion: "3.11.1",
		Devices: []nsystest.Device{{ID: 0, Name: "NVIDIA H100 80GB HBM3", SMs: 132}, {ID: 3, Name: "NVIDIA H100 80GB HBM3", SMs: 132}}})
	w.Range(nsystest.Range{Name: "forward", Start: 100, End: 5000, PID: 4242, TID: 4243, PushPop: true})
	w.Range(nsystest.Range{Name: "open", Start: 4000, End: nsys.None, PID: 4242, TID: 4243})
	w.Mark("tick", 150, 4242, 4243)
	w.Call(nsystest.Call{Name: "cudaLaunchKernel_v7000", Start: 200, End: 230, PID: 4242, TID: 4243, Correlation: 11})
	w.Call(nsystest.Call{Name: "cudaGraphLaunch_v10000", Start: 300, End: 340, PID: 4242, TID: 4243, Correlation: 12})
	w.Call(nsystest.Call{Name: "cudaMemcpyAsync_v3020", Start: 400, End: 420, PID: 4242, TID: 4243, Correlation: 13})
	w.Kernel(nsystest.Kernel{Name: "void gemm<128>(float*)", Short: "gemm", Mangled: "_Z4gemmILi128EEvPf", Start: 1000, End: 1500,
		Device: 3, Stream: 7, Correlation: 11, PID: 4242, Grid: [3]int64{4, 2, 1}, Block: [3]int64{128, 1, 1}})
	w.Kernel(nsystest.Kernel{Name: "rmsnorm_kernel", Start: 1600, End: 1650, Device: 3, Stream: 7, Correlation: 12, PID: 4242,
		GraphNode: 77, Grid: [3]int64{1, 1, 1}, Block: [3]int64{256, 1, 1}})
	w.Memcpy(nsystest.Memcpy{Start: 1700, End: 1800, Device: 3, Stream: 7, Correlation: 13, PID: 4242, Bytes: 4096,
		CopyKind: 1, SrcKind: 2, DstKind: 3})
	w.Memset(nsystest.Memset{Start: 1900, End: 1910, Device: 3, Stream: 7, PID: 4242, Bytes: 64, MemKind: 3})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

type read struct {
	info   nsys.Info
	gpu    []nsys.Activity
	calls  []nsys.Call
	ranges []nsys.Range
}

func readAll(t *testing.T, path string) (read, error) {
	t.Helper()
	ctx := context.Background()
	var r read
	e, err := nsys.Open(ctx, path)
	if err != nil {
		return r, err
	}
	defer e.Close()
	if r.info, err = e.ReadInfo(ctx); err != nil {
		return r, err
	}
	if err := e.GPU(ctx, func(a *nsys.Activity) error { r.gpu = append(r.gpu, *a); return nil }); err != nil {
		return r, err
	}
	if err := e.Runtime(ctx, func(c *nsys.Call) error { r.calls = append(r.calls, *c); return nil }); err != nil {
		return r, err
	}
	err = e.Ranges(ctx, func(g *nsys.Range) error { r.ranges = append(r.ranges, *g); return nil })
	return r, err
}

// TestReadVariants reads the same rows written in three schema variants
// and checks every field against the values written.
func TestReadVariants(t *testing.T) {
	for _, c := range []struct {
		name        string
		v           nsystest.Variant
		gemm        string
		pid, node   int64
		schemaVer   string
		rmsnormName string
	}{
		{"recent", nsystest.Recent, "void gemm<128>(float*)", 4242, 77, "3.11.1", "rmsnorm_kernel"},
		{"legacy", nsystest.Legacy, "void gemm<128>(float*)", nsys.None, nsys.None, "", "rmsnorm_kernel"},
		{"short-only", nsystest.ShortOnly, "gemm", 4242, nsys.None, "", "rmsnorm_kernel"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x.sqlite")
			writeSmall(t, path, c.v)
			r, err := readAll(t, path)
			if err != nil {
				t.Fatal(err)
			}
			if !r.info.HasSessionStart || r.info.SessionStartNS != session || r.info.SchemaVersion != c.schemaVer {
				t.Errorf("info: %+v", r.info)
			}
			if len(r.info.Devices) != 2 || r.info.DeviceName(3) != "NVIDIA H100 80GB HBM3" || r.info.Devices[1].Props["smCount"] != int64(132) {
				t.Errorf("devices: %+v", r.info.Devices)
			}
			want := []nsys.Activity{
				{Kind: nsys.Kernel, Name: c.gemm, Start: 1000, End: 1500, Device: 3, Stream: 7, Correlation: 11, PID: c.pid,
					Grid: [3]int64{4, 2, 1}, Block: [3]int64{128, 1, 1}, HasDims: true, Bytes: nsys.None, GraphNode: nsys.None},
				{Kind: nsys.Kernel, Name: c.rmsnormName, Start: 1600, End: 1650, Device: 3, Stream: 7, Correlation: 12, PID: c.pid,
					Grid: [3]int64{1, 1, 1}, Block: [3]int64{256, 1, 1}, HasDims: true, Bytes: nsys.None, GraphNode: c.node},
				{Kind: nsys.Memcpy, Name: "Memcpy HtoD (Pinned -> Device)", Start: 1700, End: 1800, Device: 3, Stream: 7,
					Correlation: 13, PID: c.pid, Bytes: 4096, GraphNode: nsys.None},
				{Kind: nsys.Memset, Name: "Memset (Device)", Start: 1900, End: 1910, Device: 3, Stream: 7,
					Correlation: nsys.None, PID: c.pid, Bytes: 64, GraphNode: nsys.None},
			}
			if !reflect.DeepEqual(r.gpu, want) {
				t.Errorf("gpu:\n got %+v\nwant %+v", r.gpu, want)
			}
			wantCalls := []nsys.Call{
				{Name: "cudaLaunchKernel", Start: 200, End: 230, PID: 4242, TID: 4243, Correlation: 11},
				{Name: "cudaGraphLaunch", Start: 300, End: 340, PID: 4242, TID: 4243, Correlation: 12},
				{Name: "cudaMemcpyAsync", Start: 400, End: 420, PID: 4242, TID: 4243, Correlation: 13},
			}
			if !reflect.DeepEqual(r.calls, wantCalls) {
				t.Errorf("calls:\n got %+v\nwant %+v", r.calls, wantCalls)
			}
			wantRanges := []nsys.Range{
				{Name: "forward", Start: 100, End: 5000, PID: 4242, TID: 4243, PushPop: true},
				{Name: "open", Start: 4000, End: nsys.None, PID: 4242, TID: 4243},
			}
			if !reflect.DeepEqual(r.ranges, wantRanges) {
				t.Errorf("ranges:\n got %+v\nwant %+v", r.ranges, wantRanges)
			}
		})
	}
}

// TestRejects: each kind of bad file fails Open or a read with its cause
// and a one-line message naming the file.
func TestRejects(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.sqlite")
	writeSmall(t, good, nsystest.Recent)
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// A SQLite database of something else.
	other := filepath.Join(dir, "other.sqlite")
	db, err := sql.Open("sqlite", other)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE users (id INTEGER, name TEXT); INSERT INTO users VALUES (1, 'a')`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	// Kernels whose name columns are all gone.
	noNames := filepath.Join(dir, "nonames.sqlite")
	w, err := nsystest.Create(noNames, nsystest.Variant{})
	if err != nil {
		t.Fatal(err)
	}
	w.Kernel(nsystest.Kernel{Start: 1, End: 2})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// A kernel ending before it starts.
	backwards := filepath.Join(dir, "backwards.sqlite")
	w, err = nsystest.Create(backwards, nsystest.Legacy)
	if err != nil {
		t.Fatal(err)
	}
	w.Kernel(nsystest.Kernel{Name: "k", Start: 10, End: 20})
	w.Kernel(nsystest.Kernel{Name: "k", Start: 30, End: 25})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// Pages of the kernel table overwritten with garbage.
	garbled := append([]byte(nil), data...)
	for i := 4096; i < len(garbled); i++ {
		garbled[i] = byte(i * 7)
	}
	for _, c := range []struct {
		name  string
		path  string
		cause error
		msg   string
	}{
		{"text", write("t.sqlite", []byte("hello, not a database at all, long enough to have a header")), nsys.ErrNotSQLite, "not a SQLite database"},
		{"empty", write("e.sqlite", nil), nsys.ErrNotSQLite, "not a SQLite database"},
		{"header-cut", write("h.sqlite", data[:60]), nsys.ErrDamaged, "truncated inside its 100-byte header"},
		{"truncated", write("tr.sqlite", data[:len(data)/2]), nsys.ErrDamaged, "truncated: its header says"},
		{"garbled", write("g.sqlite", garbled), nsys.ErrDamaged, "damaged SQLite file"},
		{"other", other, nsys.ErrNotExport, "not an Nsight Systems export: no StringIds and CUPTI_ACTIVITY_KIND_KERNEL tables (it has users)"},
		{"no-names", noNames, nsys.ErrSchema, "CUPTI_ACTIVITY_KIND_KERNEL: no kernel name column"},
		{"backwards", backwards, nsys.ErrValue, "CUPTI_ACTIVITY_KIND_KERNEL row 2: end: 25 is before start 30"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := readAll(t, c.path)
			if err == nil {
				t.Fatal("read a bad file without error")
			}
			if !errors.Is(err, c.cause) {
				t.Errorf("cause: want %v, got %v", c.cause, err)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, c.path+": ") || !strings.Contains(msg, c.msg) || strings.Contains(msg, "\n") {
				t.Errorf("message: want one line %q... containing %q, got %q", c.path, c.msg, msg)
			}
		})
	}
}
