package ingest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tracehouse/tracehouse/catalog"
	"github.com/tracehouse/tracehouse/nsys"
	"github.com/tracehouse/tracehouse/nsys/nsystest"
	"github.com/tracehouse/tracehouse/schema"
)

// Issue 36 A-C: a value the warehouse cannot hold (a time or sum of times
// beyond 64 bits once added up, a rank beyond its INTEGER column, a negative
// device) is refused with its file's one positioned error; the other files
// of the ingest are stored, the warehouse still finishes, and so does the
// next ingest. Before, such values were stored and every later finish of
// any run failed ("Out of Range Error", "Conversion Error ... rank").

// The bounds, written out here rather than taken from package limits.
const (
	minTime  = -1152921504606846976 // -2^60 ns
	maxTime  = 8070450532247928831  // 2^63 - 2^60 - 1 ns
	maxDur   = 4611686018427387903  // 2^62 - 1 ns
	maxTotal = 4503599627370495     // 2^52 - 1 ns
	maxIndex = 16777215             // 2^24 - 1
)

// us writes ns as the decimal microseconds of a trace.
func us(ns int64) string {
	sign := ""
	u := uint64(ns)
	if ns < 0 {
		sign, u = "-", uint64(-ns)
	}
	return fmt.Sprintf("%s%d.%03d", sign, u/1000, u%1000)
}

// kernelEvent is a kernel on device 0, stream 7 (ts and dur as written).
func kernelEvent(name, ts, dur string) string {
	return `{"ph":"X","cat":"kernel","name":"` + name + `","pid":0,"tid":7,"ts":` + ts + `,"dur":` + dur +
		`,"args":{"device":0,"stream":7}}`
}

// traceJSON is a trace of events, with top-level keys after them (where
// Kineto writes baseTimeNanoseconds).
func traceJSON(meta string, events ...string) string {
	s := "{\"traceEvents\": [\n" + strings.Join(events, ",\n") + "\n]"
	if meta != "" {
		s += ", " + meta
	}
	return s + "}"
}

// goodTrace is a small valid trace whose content differs by tag.
func goodTrace(tag string) string {
	return traceJSON(`"baseTimeNanoseconds": 1700000000000000000`,
		`{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":2,"ts":10,"dur":1,"args":{"correlation":1}}`,
		`{"ph":"X","cat":"kernel","name":"good_`+tag+`","pid":0,"tid":7,"ts":12,"dur":3,"args":{"device":0,"stream":7,"correlation":1}}`,
		kernelEvent("other_"+tag, "20", "5"))
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// refused is a file an ingest must refuse: with a positioned error of
// cause, one line naming the file and holding each of want.
type refused struct {
	path  string
	cause error
	want  []string
}

// refusedAlone ingests dir, which holds the refused files beside a good
// JSON trace and a good Nsight export, and checks that each refused file
// failed alone, with its one line; that the good files are stored and the
// warehouse finishes; and that a later ingest of a new good file succeeds
// and finishes.
func refusedAlone(t *testing.T, dir string, bad []refused) *schema.Warehouse {
	t.Helper()
	ctx := context.Background()
	writeFile(t, filepath.Join(dir, "good.trace.json"), goodTrace("a"))
	writeNsysFixture(t, filepath.Join(dir, "good.sqlite"), nsystest.Recent, 0)
	w := openMemory(t)
	res, err := Ingest(ctx, w, []string{dir}, Options{Jobs: 2})
	if err != nil {
		t.Fatalf("the ingest failed as a whole: %v", err)
	}
	failed := map[string]error{}
	for _, f := range res.Files {
		switch f.Status {
		case StatusFailed:
			failed[f.Path] = f.Err
		case StatusIngested:
		default:
			t.Errorf("%s: %s %s", f.Path, f.Status, f.Reason)
		}
	}
	for _, b := range bad {
		err, ok := failed[b.path]
		if !ok {
			t.Errorf("%s: not refused", b.path)
			continue
		}
		delete(failed, b.path)
		msg := err.Error()
		if !strings.HasPrefix(msg, b.path+": ") || strings.Contains(msg, "\n") {
			t.Errorf("error %q: want one line starting with the file", msg)
		}
		for _, s := range b.want {
			if !strings.Contains(msg, s) {
				t.Errorf("error %q: want it to say %q", msg, s)
			}
		}
		var pe *ParseError
		if !errors.As(err, &pe) || !errors.Is(err, b.cause) {
			t.Errorf("error %q: want a positioned error of cause %v", msg, b.cause)
		}
	}
	for p, err := range failed {
		t.Errorf("%s failed too: %v", p, err)
	}
	var paths []string
	for _, f := range res.Files {
		if !slices.ContainsFunc(bad, func(b refused) bool { return b.path == f.Path }) {
			paths = append(paths, f.Path)
		}
	}
	slices.Sort(paths)
	if got, want := mustCSV(t, w.DB, `SELECT string_agg(path, ' ' ORDER BY path) AS stored FROM traces`),
		"stored\n"+strings.Join(paths, " ")+"\n"; got != want || len(paths) < 2 {
		t.Errorf("traces stored: %s, want every other file: %s", got, want)
	}
	if err := Finish(ctx, w.DB, catalog.Default()); err != nil {
		t.Fatalf("finish after the refused files: %v", err)
	}
	next := filepath.Join(t.TempDir(), "next", "next.trace.json")
	writeFile(t, next, goodTrace("b"))
	res, err = Ingest(ctx, w, []string{next}, Options{})
	if err != nil || res.Failed() != 0 {
		t.Fatalf("next ingest: %v %+v", err, res.Files)
	}
	if err := Finish(ctx, w.DB, catalog.Default()); err != nil {
		t.Fatalf("finish of the next ingest: %v", err)
	}
	return w
}

// TestValuesRefused: the refused files below (out-of-range JSON and Nsight
// values, Infinity in ts or dur, a damaged event after guessed batches),
// each refused alone beside the good files of one ingest (refusedAlone):
// one warehouse, ingest and two finishes for them all, not one each.
func TestValuesRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var bad []refused
	for _, write := range []func(*testing.T, string) []refused{
		outOfRangeJSON, outOfRangeNsys, infinityRefused, guessedSplitRefused,
	} {
		bad = append(bad, write(t, dir)...)
	}
	w := refusedAlone(t, dir, bad)
	infinityStored(t, w)
}

// at is the position a JSON trace's error names: event i, starting at
// the first byte of its text in content.
func at(t *testing.T, content, event string, i int) string {
	t.Helper()
	off := strings.Index(content, event)
	if off < 0 {
		t.Fatalf("no %s in the trace", event)
	}
	return fmt.Sprintf(", at event %d (byte %d)", i, off)
}

// outOfRangeJSON writes JSON traces into dir whose values the warehouse
// cannot hold (a time beyond the bounds alone or once added to the
// base, a sum of GPU time, a device or rank beyond its column), and
// returns how each is refused.
func outOfRangeJSON(t *testing.T, dir string) []refused {
	cases := []struct {
		name  string
		file  string // "" = bad.trace.json
		event string // the event at fault, second in the trace
		meta  string
		cause error
		want  []string
	}{
		// The issue's: an end beyond 64 bits once the epoch ts is added.
		{name: "dur 9e15 us", event: kernelEvent("k", "1712345678901123", "9000000000000000"), cause: ErrRange,
			want: []string{`field "dur": 9000000000000000000 ns is longer than the warehouse keeps`}},
		{name: "dur just over", event: kernelEvent("k", "0", us(maxDur+1)), cause: ErrRange,
			want: []string{`field "dur": 4611686018427387904 ns is longer`}},
		{name: "ts just over", event: kernelEvent("k", us(maxTime+1), "0"), cause: ErrRange,
			want: []string{`field "ts": 8070450532247928832 ns is outside the times`}},
		{name: "ts just under", event: kernelEvent("k", us(minTime-1), "0"), cause: ErrRange,
			want: []string{`field "ts": -1152921504606846977 ns is outside the times`}},
		{name: "end just over", event: kernelEvent("k", us(maxTime-5), "0.006"), cause: ErrRange,
			want: []string{`field "dur": the event ends at 8070450532247928832 ns`}},
		{name: "end beyond int64", event: kernelEvent("k", us(maxTime), us(maxDur)), cause: ErrRange,
			want: []string{`field "dur": the event ends at 12682136550675316734 ns`}},
		// Issue item B, as written: 9223372036854775 us is beyond alone.
		{name: "ts 9223372036854775 us", event: kernelEvent("k", "9223372036854775", "1"),
			meta: `"baseTimeNanoseconds": 1700000000000000000`, cause: ErrRange,
			want: []string{`field "ts": 9223372036854775000 ns`}},
		// B: fits alone, beyond once baseTimeNanoseconds (written after
		// the events) is added; it wrapped to a negative ts_ns before.
		{name: "ts plus base", event: kernelEvent("k", "7000000000000000", "1"),
			meta: `"baseTimeNanoseconds": 1700000000000000000`, cause: ErrRange,
			want: []string{`field "ts": the event starts at 7000000000000000000 ns after baseTimeNanoseconds 1700000000000000000: 8700000000000000000 ns is outside`}},
		{name: "ts plus base beyond int64", event: kernelEvent("k", "8000000000000000", "1"),
			meta: `"baseTimeNanoseconds": 8000000000000000000`, cause: ErrRange,
			want: []string{`field "ts": the event starts at 8000000000000000000 ns after baseTimeNanoseconds 8000000000000000000: 16000000000000000000 ns is outside`}},
		{name: "end plus base", event: kernelEvent("k", "150", "100"),
			meta: `"baseTimeNanoseconds": ` + strconv.FormatInt(maxTime-200000, 10), cause: ErrRange,
			want: []string{`field "dur": the event ends at 250000 ns after baseTimeNanoseconds 8070450532247728831: 8070450532247978831 ns is outside`}},
		{name: "base beyond", event: kernelEvent("k", "1", "1"), meta: `"baseTimeNanoseconds": 9223372036854775807`, cause: ErrRange,
			want: []string{`baseTimeNanoseconds: 9223372036854775807 ns is outside the times`}},
		{name: "base beyond int64", event: kernelEvent("k", "1", "1"), meta: `"baseTimeNanoseconds": 92233720368547758070`, cause: ErrRange,
			want: []string{`baseTimeNanoseconds: 92233720368547758070 ns`}},
		{name: "base not an integer", event: kernelEvent("k", "1", "1"), meta: `"baseTimeNanoseconds": 1.7e18`, cause: ErrType,
			want: []string{`baseTimeNanoseconds: want an integer, got 1.7e18`}},
		// A sum no single value shows: 2^51 ns twice is one over.
		{name: "GPU time adds up", event: kernelEvent("k", "0", us(1<<51)) + ",\n" + kernelEvent("k2", "0", us(1<<51)), cause: ErrRange,
			want: []string{`the durations of its GPU events add up to more than the warehouse keeps`}},
		{name: "device -5", event: strings.Replace(kernelEvent("k", "1", "1"), `"device":0`, `"device":-5`, 1), cause: ErrRange,
			want: []string{`field "args.device": device -5 is outside 0 to 16777215`}},
		{name: "device from pid", event: strings.Replace(strings.Replace(kernelEvent("k", "1", "1"), `"device":0,`, ``, 1), `"pid":0`, `"pid":16777216`, 1),
			cause: ErrRange, want: []string{`field "pid": device 16777216 is outside 0 to 16777215`}},
		{name: "distributed rank", event: kernelEvent("k", "1", "1"), meta: `"distributedInfo": {"rank": 4294967296}`, cause: ErrRange,
			want: []string{`distributedInfo.rank: rank 4294967296 is outside 0 to 16777215`}},
		{name: "distributed rank beyond int64", event: kernelEvent("k", "1", "1"), meta: `"distributedInfo": {"rank": 99999999999999999999}`,
			cause: ErrRange, want: []string{`distributedInfo.rank: rank 99999999999999999999 is outside`}},
		{name: "TP token", file: "1751664424-TP-4294967297.trace.json", event: kernelEvent("k", "1", "1"), cause: ErrRange,
			want: []string{`file name: rank token "TP-4294967297" is outside 0 to 16777215`}},
		{name: "rank token beyond int64", file: "x_rank99999999999999999999.trace.json", event: kernelEvent("k", "1", "1"), cause: ErrRange,
			want: []string{`file name: rank token "rank99999999999999999999" is outside`}},
	}
	var bad []refused
	for i, c := range cases {
		name := c.file
		if name == "" {
			name = fmt.Sprintf("bad%d.trace.json", i)
		}
		path := filepath.Join(dir, name)
		// (each content differs: the same bytes twice are one trace)
		content := traceJSON(c.meta, kernelEvent(fmt.Sprintf("first%d", i), "100", "1"), c.event)
		writeFile(t, path, content)
		want := c.want
		if strings.HasPrefix(want[0], `field "`) {
			want = append(want, at(t, content, c.event, 1))
		}
		bad = append(bad, refused{path, c.cause, want})
	}
	return bad
}

// TestValuesAtTheLimitsStored: the largest values the bounds allow are
// stored exactly, and every saved aggregate of their run still computes.
func TestValuesAtTheLimitsStored(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d1 := int64(1<<51 - 1)
	d2 := int64(maxTotal) - d1 // the two add up to the bound exactly
	ev := func(cat, name string, ts, dur int64, pid, tid int, args string) string {
		return fmt.Sprintf(`{"ph":"X","cat":"%s","name":"%s","pid":%d,"tid":%d,"ts":%s,"dur":%s,"args":{%s}}`,
			cat, name, pid, tid, us(ts), us(dur), args)
	}
	content := traceJSON("",
		ev("user_annotation", "step[DECODE bs=1]", minTime, d1, 1, 2, ``),
		ev("user_annotation", "step[DECODE bs=1]", maxTime-d2, d2, 1, 2, ``),
		ev("python_function", "sglang/srt/x.py(1): f", minTime, d1, 1, 2, `"Python id":1`),
		ev("cpu_op", "aten::mm", minTime, 1, 1, 2, `"External id":1`),
		ev("cuda_runtime", "cudaLaunchKernel", minTime, 1, 1, 2, `"correlation":1,"External id":1`),
		ev("cuda_runtime", "cudaLaunchKernel", maxTime-d2, 1, 1, 2, `"correlation":2`),
		ev("kernel", "gemm", minTime, d1, 0, 7, `"device":0,"stream":7,"correlation":1`),
		ev("kernel", "nccl_allreduce", minTime, 0, 0, 9, `"device":0,"stream":9`),
		ev("kernel", "gemm", maxTime-d2, d2, 0, 7, `"device":0,"stream":7,"correlation":2`),
		ev("kernel", "nccl_allreduce", maxTime, 0, 0, 9, fmt.Sprintf(`"device":%d,"stream":9`, maxIndex)))
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "r1", fmt.Sprintf("edge-TP-%d.trace.json", maxIndex)), content)
	writeFile(t, filepath.Join(dir, "r2", "edge.trace.json"),
		strings.Replace(content, "{\"traceEvents\"", `{"distributedInfo": {"rank": 16777215}, "traceEvents"`, 1))
	w := openMemory(t)
	res, err := Ingest(ctx, w, []string{filepath.Join(dir, "r1"), filepath.Join(dir, "r2")}, Options{})
	if err != nil || res.Failed() != 0 {
		t.Fatalf("%v %+v", err, res.Files)
	}
	if err := Finish(ctx, w.DB, catalog.Default()); err != nil {
		t.Fatal(err)
	}
	got := mustCSV(t, w.DB, `SELECT rank, ts_ns, dur_ns, device FROM kernels ORDER BY rank, ts_ns, dur_ns, device`)
	row := func(ts, dur, dev int64) string { return fmt.Sprintf("%d,%d,%d,%d\n", maxIndex, ts, dur, dev) }
	want := "rank,ts_ns,dur_ns,device\n"
	for _, r := range []string{row(minTime, 0, 0), row(minTime, d1, 0), row(maxTime-d2, d2, 0), row(maxTime, 0, maxIndex)} {
		want += r + r // one of each trace
	}
	if got != want {
		t.Errorf("kernels:\n got %s\nwant %s", got, want)
	}
	got = mustCSV(t, w.DB, `SELECT min(start_ns) AS s, max(end_ns) AS e FROM traces`)
	if want := fmt.Sprintf("s,e\n%d,%d\n", int64(minTime), int64(maxTime)); got != want {
		t.Errorf("trace span: %s, want %s", got, want)
	}
	// The sums the reports make.
	got = mustCSV(t, w.DB, `SELECT sum(dur_ns)::BIGINT AS ns, max(ts_ns + dur_ns) - min(ts_ns) AS span FROM kernels`)
	if want := fmt.Sprintf("ns,span\n%d,%d\n", 2*int64(maxTotal), int64(math.MaxInt64)); got != want {
		t.Errorf("sums: %s, want %s", got, want)
	}
}

// nsysBad writes an export at path with one kernel bent by bend.
func nsysBad(t *testing.T, path string, session int64, k nsystest.Kernel) {
	t.Helper()
	w, err := nsystest.Create(path, nsystest.Recent)
	if err != nil {
		t.Fatal(err)
	}
	w.Info(nsystest.Info{SessionStartNS: session, Devices: []nsystest.Device{{ID: 0, Name: "GPU"}}})
	w.Kernel(nsystest.Kernel{Name: "ok", Start: 10, End: 20, Device: 0, Stream: 7, PID: 1})
	w.Kernel(k)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// outOfRangeNsys writes Nsight exports into dir whose values the warehouse
// cannot hold, and returns how each is refused.
func outOfRangeNsys(t *testing.T, dir string) []refused {
	k := func(start, end, dev int64) nsystest.Kernel {
		return nsystest.Kernel{Name: "k", Start: start, End: end, Device: dev, Stream: 7, PID: 1}
	}
	cases := []struct {
		name    string
		file    string
		session int64
		k       nsystest.Kernel
		cause   error
		want    string
	}{
		// The two.
		{"end INT64_MAX", "", nsysSession, k(100, math.MaxInt64, 0), nsys.ErrValue,
			"CUPTI_ACTIVITY_KIND_KERNEL row 2: end: 9223372036854775807 ns is outside the times"},
		{"device -5", "", nsysSession, k(100, 200, -5), nsys.ErrValue,
			"CUPTI_ACTIVITY_KIND_KERNEL row 2: deviceId: -5 is outside 0 to 16777215"},
		{"device just over", "", nsysSession, k(100, 200, maxIndex+1), nsys.ErrValue,
			"deviceId: 16777216 is outside"},
		{"end plus session", "", nsysSession, k(100, maxTime-nsysSession+1, 0), nsys.ErrValue,
			"row 2: end: 6319161236247928832 ns after the session start 1751289296000000000 ns: 8070450532247928832 ns is outside"},
		{"session beyond", "", maxTime + 1, k(100, 200, 0), nsys.ErrValue,
			"TARGET_INFO_SESSION_START_TIME: utcEpochNs: 8070450532247928832 ns is outside"},
		{"span too long", "", 0, k(minTime, maxTime, 0), nsys.ErrValue,
			"end: a span of 9223372036854775807 ns is longer than the warehouse keeps"},
		{"GPU time adds up", "", 0, k(0, maxTotal, 0), ErrRange,
			"the durations of its GPU events add up to more than the warehouse keeps"},
		{"TP token", "p-TP-4294967297.sqlite", nsysSession, k(100, 200, 0), ErrRange,
			`file name: rank token "TP-4294967297" is outside`},
	}
	var bad []refused
	for i, c := range cases {
		name := c.file
		if name == "" {
			name = fmt.Sprintf("bad%d.sqlite", i)
		}
		path := filepath.Join(dir, name)
		nsysBad(t, path, c.session, c.k)
		bad = append(bad, refused{path, c.cause, []string{c.want}})
	}
	return bad
}

// rawBytes turns each \xHH written in s into the byte.
func rawBytes(s string) string {
	return regexp.MustCompile(`\\x[0-9a-f]{2}`).ReplaceAllStringFunc(s, func(m string) string {
		b, _ := strconv.ParseUint(m[2:], 16, 8)
		return string([]byte{byte(b)})
	})
}

// TestInvalidUTF8Repaired (issue 36 C): a byte that is not UTF-8 in a
// kernel, Python frame, runtime call, CPU op or annotation name, or in the
// device properties, is stored as U+FFFD with a warning: it failed the
// whole ingest before (kernel_names.name NOT NULL, naming no file), and
// files not yet loaded were never stored. The same for an Nsight export's
// StringIds and NVTX text.
func TestInvalidUTF8Repaired(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "bad.trace.json"), rawBytes(traceJSON(
		`"deviceProperties": [{"id": 0, "name": "H\xff100", "x": NaN}], "distributedInfo": {"rank": 3, "y": "\xfe"}`,
		`{"ph":"X","cat":"user_annotation","name":"step\xc3","pid":1,"tid":2,"ts":1,"dur":50}`,
		`{"ph":"X","cat":"python_function","name":"sglang/srt/a\xff.py(1): f","pid":1,"tid":2,"ts":2,"dur":40,"args":{"Python id":1}}`,
		`{"ph":"X","cat":"cpu_op","name":"aten::\xe2\x82","pid":1,"tid":2,"ts":3,"dur":5,"args":{"External id":1,"Input Dims":[["\xff"]]}}`,
		`{"ph":"X","cat":"cuda_runtime","name":"cudaLaunch\x80Kernel","pid":1,"tid":2,"ts":4,"dur":1,"args":{"correlation":1,"External id":1}}`,
		`{"ph":"X","cat":"kernel","name":"bad\xff\xfekernel","pid":0,"tid":7,"ts":10,"dur":3,"args":{"device":0,"stream":7,"correlation":1}}`)))
	writeFile(t, filepath.Join(dir, "good.trace.json"), goodTrace("a"))
	ex := filepath.Join(dir, "bad.sqlite")
	w, err := nsystest.Create(ex, nsystest.Recent)
	if err != nil {
		t.Fatal(err)
	}
	w.Info(nsystest.Info{SessionStartNS: nsysSession, Devices: []nsystest.Device{{ID: 0, Name: "GPU\xff"}}})
	w.Range(nsystest.Range{Name: "range\xfe", Start: 50, End: 500, PID: 4, TID: 5, PushPop: true})
	w.Call(nsystest.Call{Name: "cudaLaunchKernel_v7000", Start: 100, End: 110, PID: 4, TID: 5, Correlation: 1})
	w.Kernel(nsystest.Kernel{Name: "nsys\xffkernel", Start: 200, End: 300, Device: 0, Stream: 7, PID: 4, Correlation: 1})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	db := openMemory(t)
	res, err := Ingest(ctx, db, []string{dir}, Options{})
	if err != nil || res.Failed() != 0 {
		t.Fatalf("%v %+v", err, res.Files)
	}
	if err := Finish(ctx, db.DB, catalog.Default()); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ q, want string }{
		{`SELECT name FROM kernel_names WHERE name NOT LIKE 'good%' AND name NOT LIKE 'other%' ORDER BY name`,
			"bad\uFFFDkernel\nnsys\uFFFDkernel\n"},
		{`SELECT name FROM sites WHERE name LIKE '%.py%' OR name LIKE 'nvtx%' ORDER BY name`,
			"nvtx: range\uFFFD\nsglang/srt/a\uFFFD.py(1): f\n"},
		{`SELECT name || ' ' || input_dims FROM cpu_ops`, "\"aten::\uFFFD [[\"\"\uFFFD\"\"]]\"\n"},
		{`SELECT DISTINCT name FROM launches ORDER BY name`, "cudaLaunchKernel\ncudaLaunch\uFFFDKernel\n"},
		{`SELECT DISTINCT name FROM annotations WHERE cat = 'user_annotation' ORDER BY name`, "range\uFFFD\nstep\uFFFD\n"},
	} {
		got, err := queryCSV(ctx, db.DB, c.q)
		if err != nil {
			t.Fatal(err)
		}
		if _, rows, _ := strings.Cut(got, "\n"); rows != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.q, rows, c.want)
		}
	}
	got := mustCSV(t, db.DB, `SELECT path LIKE '%.sqlite' AS nsys, device_name, device_properties::VARCHAR AS props,
		distributed_info::VARCHAR AS dist, rank, warnings > 0 AS warned FROM traces WHERE path LIKE '%bad%' ORDER BY nsys`)
	want := "nsys,device_name,props,dist,rank,warned\n" +
		"false,H\uFFFD100,\"[{\"\"id\"\":0,\"\"name\"\":\"\"H\uFFFD100\"\",\"\"x\"\":null}]\",\"{\"\"rank\"\":3,\"\"y\"\":\"\"\uFFFD\"\"}\",3,true\n"
	if !strings.HasPrefix(got, want) || !strings.Contains(got, "true,GPU\uFFFD,") {
		t.Errorf("traces:\n got %s\nwant %s(then the export's row, device GPU\uFFFD)", got, want)
	}
}

// infinityRefused (issue 36 K): Infinity and -Infinity are read as NaN
// is: in fields ingest does not read they pass, in top-level keys stored as
// JSON they become null (args.trace.json, which it writes into dir beside
// the refused files; infinityStored checks it), and in ts or dur they fail
// the file with its position. Before, any Infinity failed the file with
// fastjson's `unparsed tail: "inity..."`.
func infinityRefused(t *testing.T, dir string) []refused {
	writeFile(t, filepath.Join(dir, "args.trace.json"), traceJSON(`"deviceProperties": [{"id": 0, "name": "GPU", "max": Infinity, "min": -infinity}]`,
		`{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1,"dur":2,"args":{"device":0,"stream":7,"a":Infinity,"b":-Infinity,"c":NaN,"d":[Infinity],"e":infinity,"f":-INFINITY}}`,
		`{"ph":"C","name":"c","pid":0,"ts":2,"args":{"v":-Infinity}}`))
	var bad []refused
	for i, c := range []struct{ event, want string }{
		{kernelEvent("k", "Infinity", "1"), `field "ts": Infinity is not a JSON number`},
		{kernelEvent("k", "1", "-Infinity"), `field "dur": -Infinity is not a JSON number`},
	} {
		p := filepath.Join(dir, fmt.Sprintf("inf%d.trace.json", i))
		content := traceJSON("", kernelEvent(fmt.Sprintf("first%d", i), "1", "1"), c.event)
		writeFile(t, p, content)
		bad = append(bad, refused{p, ErrSyntax, []string{c.want, at(t, content, c.event, 1)}})
	}
	return bad
}

// infinityStored checks the stored args.trace.json of infinityRefused.
func infinityStored(t *testing.T, w *schema.Warehouse) {
	t.Helper()
	if got := mustCSV(t, w.DB, `SELECT device_properties::VARCHAR AS p FROM traces WHERE path LIKE '%/args.trace.json'`); got != "p\n\"[{\"\"id\"\":0,\"\"name\"\":\"\"GPU\"\",\"\"max\"\":null,\"\"min\"\":null}]\"\n" {
		t.Errorf("device properties: %s", got)
	}
}

// TestInvalidUTF8InPathsRepaired (issue 36 C): a directory or file name, or
// a server_args.json, holding bytes that are not UTF-8 is stored with
// U+FFFD in their place. Before, the first failed the whole ingest ("look
// up run run\xff: could not bind parameter", "store trace row: could not
// bind parameter", naming no problem) and the second stored the traces and
// then failed that ingest and every later one of the run ("summarise runs:
// could not bind parameter").
func TestInvalidUTF8InPathsRepaired(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	runDir := filepath.Join(dir, "run\xff")
	bad := filepath.Join(runDir, "a\xfe.trace.json")
	writeFile(t, bad, goodTrace("a"))
	writeNsysFixture(t, filepath.Join(runDir, "b\xff.sqlite"), nsystest.Recent, 0)
	writeFile(t, filepath.Join(runDir, "server_args.json"), "{\"model_path\": \"m\xff\", \"tp_size\": 1}")
	writeFile(t, filepath.Join(dir, "good", "g.trace.json"), goodTrace("b"))
	w := openMemory(t)
	for range 2 { // the second is a re-run: all already stored
		res, err := Ingest(ctx, w, []string{dir}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if res.Failed() != 0 {
			t.Fatalf("%+v", res.Files)
		}
		if err := Finish(ctx, w.DB, catalog.Default()); err != nil {
			t.Fatal(err)
		}
	}
	got := mustCSV(t, w.DB, `SELECT label, source_dir, server_args->>'model_path' AS model, path,
		coalesce(warning_notes::VARCHAR LIKE '%file path with invalid UTF-8%', false) AS warned FROM traces JOIN runs USING (run_id) ORDER BY label, path`)
	want := "label,source_dir,model,path,warned\ngood," + filepath.Join(dir, "good") + ",NULL," + filepath.Join(dir, "good", "g.trace.json") + ",false\n" +
		"run\uFFFD," + filepath.Join(dir, "run\uFFFD") + ",m\uFFFD," + filepath.Join(dir, "run\uFFFD", "a\uFFFD.trace.json") + ",true\n" +
		"run\uFFFD," + filepath.Join(dir, "run\uFFFD") + ",m\uFFFD," + filepath.Join(dir, "run\uFFFD", "b\uFFFD.sqlite") + ",true\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	// A label or tag given by the user that is not UTF-8 is refused before
	// any work (they would be stored otherwise than typed).
	for _, opt := range []Options{{Run: "x\xff"}, {Tags: map[string]string{"k\xff": "v"}}, {Tags: map[string]string{"k": "v\xfe"}}} {
		if _, err := Ingest(ctx, w, []string{bad}, opt); err == nil || !strings.Contains(err.Error(), "not valid UTF-8") {
			t.Errorf("%+v: %v, want a refusal", opt, err)
		}
	}
}

// TestServerArgsParallelSizes (issue 36 A): a parallel size in
// server_args.json that is not a whole number from 1 to the INTEGER limit
// is left unset with a note naming the file and key, and the run's traces
// are still stored. Before, sizes went through int(float64): tp_size 2.5
// was stored as 2, 2^53+1 rounded, and 1e10 wrapped out of the column.
func TestServerArgsParallelSizes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cases := []struct {
		args    string
		want    string // tp,dp,ep,pp as stored
		refused []string
	}{
		{`{"model_path": "m", "tp_size": 2.5, "dp_size": 2.0, "ep_size": 1e10, "pp_size": 0}`,
			"NULL,2,NULL,NULL", []string{`"tp_size" is 2.5`, `"ep_size" is 1e10`, `"pp_size" is 0`}},
		{`{"model_path": "m", "tp_size": 2147483647, "dp_size": 2147483648, "ep_size": -1, "pp_size": 9007199254740993}`,
			"2147483647,NULL,NULL,NULL", []string{`"dp_size" is 2147483648`, `"ep_size" is -1`, `"pp_size" is 9007199254740993`}},
		// vLLM's keys; a string is not a size either; null is absent.
		{`{"model": "m", "tensor_parallel_size": "4", "data_parallel_size": 3, "pipeline_parallel_size": null, "expert_parallel_size": 1}`,
			"NULL,3,1,NULL", []string{`"tensor_parallel_size" is "4"`}},
		// The first key present decides: a refused tp_size does not fall
		// back to tensor_parallel_size.
		{`{"model": "m", "tp_size": 1.5, "tensor_parallel_size": 8}`,
			"NULL,NULL,NULL,NULL", []string{`"tp_size" is 1.5`}},
	}
	// one ingest of a run directory per case, each with its server args,
	// into one warehouse, then one finish (an ingest and a finish a case
	// made four warehouses of one run each)
	dir := t.TempDir()
	var runs, argsFiles []string
	for i, c := range cases {
		run := filepath.Join(dir, fmt.Sprintf("run%d", i))
		args := filepath.Join(run, "server_args.json")
		writeFile(t, args, c.args)
		writeFile(t, filepath.Join(run, "a.trace.json"), goodTrace(strconv.Itoa(i)))
		runs, argsFiles = append(runs, run), append(argsFiles, args)
	}
	var notices []string
	w := openMemory(t)
	res, err := Ingest(ctx, w, runs, Options{Notice: func(s string) { notices = append(notices, s) }})
	if err != nil || res.Failed() != 0 || res.Stored() != len(cases) {
		t.Fatalf("%v %+v", err, res.Files)
	}
	if err := Finish(ctx, w.DB, catalog.Default()); err != nil {
		t.Fatal(err)
	}
	for i, c := range cases {
		args := argsFiles[i]
		got := mustCSV(t, w.DB, fmt.Sprintf(`SELECT tp_size, dp_size, ep_size, pp_size, model FROM runs WHERE label = 'run%d'`, i))
		if want := "tp_size,dp_size,ep_size,pp_size,model\n" + c.want + ",m\n"; got != want {
			t.Errorf("case %d: got\n%s\nwant\n%s", i, got, want)
		}
		var mine []string
		for _, n := range notices {
			if strings.HasPrefix(n, args+": ") {
				mine = append(mine, n)
			}
		}
		if len(mine) != len(c.refused) {
			t.Errorf("case %d: notices %q, want one for each of %q", i, mine, c.refused)
			continue
		}
		for j, want := range c.refused {
			n := mine[j]
			if !strings.HasPrefix(n, args+": "+want+", not a whole number from 1 to 2147483647") || strings.Contains(n, "\n") {
				t.Errorf("case %d: notice %q, want one line %q naming %s", i, n, want, args)
			}
		}
	}
	refused := 0
	for _, c := range cases {
		refused += len(c.refused)
	}
	if len(notices) != refused {
		t.Errorf("notices %q: want the %d the cases name", notices, refused)
	}
}

// TestFailedFileLeavesNoNames (values item 7): a file that fails after its
// kernel and Python frame names were interned leaves none of them stored.
// The files of an ingest share one interner, and a later file's flush
// stored the failed file's names too: before, kernel_names and sites kept
// rows no kernel, launch or frame referred to. A name the failed file
// shares with a stored one stays.
func TestFailedFileLeavesNoNames(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	var events []string
	for i := range 50 {
		events = append(events, kernelEvent(fmt.Sprintf("only_in_bad_%d", i), strconv.Itoa(100+i*10), "5"))
	}
	events = append(events,
		kernelEvent("good_shared", "20", "5"),
		`{"ph":"X","cat":"python_function","name":"bad_only.py(12): f","pid":1,"tid":2,"ts":1,"dur":900}`,
		// a duration beyond what the warehouse holds fails the file, at its end
		kernelEvent("only_in_bad_last", "2000", "9000000000000000"))
	writeFile(t, filepath.Join(dir, "a_bad.trace.json"), traceJSON(`"baseTimeNanoseconds": 1700000000000000000`, events...))
	writeFile(t, filepath.Join(dir, "b_good.trace.json"), traceJSON(`"baseTimeNanoseconds": 1700000000000000000`,
		`{"ph":"X","cat":"python_function","name":"good.py(3): g","pid":1,"tid":2,"ts":1,"dur":900}`,
		kernelEvent("good_shared", "20", "5"), kernelEvent("good_own", "40", "5")))
	w := openMemory(t)
	res, err := Ingest(ctx, w, []string{dir}, Options{Jobs: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Failed() != 1 || res.Stored() != 1 || !strings.Contains(res.Files[0].Path, "a_bad") || res.Files[0].Status != StatusFailed {
		t.Fatalf("%+v", res.Files)
	}
	if err := Finish(ctx, w.DB, catalog.Default()); err != nil {
		t.Fatal(err)
	}
	if got, want := mustCSV(t, w.DB, `SELECT name FROM kernel_names ORDER BY name`), "name\ngood_own\ngood_shared\n"; got != want {
		t.Errorf("kernel names:\n%s\nwant\n%s", got, want)
	}
	if got, want := mustCSV(t, w.DB, `SELECT name FROM sites ORDER BY name`), "name\ngood.py(3): g\n"; got != want {
		t.Errorf("sites:\n%s\nwant\n%s", got, want)
	}
	// the next ingest interns the failed file's names again, fixed
	fixed := strings.Replace(traceJSON(`"baseTimeNanoseconds": 1700000000000000000`, events...), "9000000000000000", "7", 1)
	writeFile(t, filepath.Join(dir, "a_bad.trace.json"), fixed)
	res, err = Ingest(ctx, w, []string{dir}, Options{Jobs: 1})
	if err != nil || res.Failed() != 0 || res.Stored() != 2 {
		t.Fatalf("%v %+v", err, res.Files)
	}
	if got, want := mustCSV(t, w.DB, `SELECT count(*) AS n, count(*) FILTER (WHERE name_id NOT IN (SELECT name_id FROM kernel_names)) AS dangling FROM kernels`), "n,dangling\n54,0\n"; got != want {
		t.Errorf("kernels: %s, want %s", got, want)
	}
	if got, want := mustCSV(t, w.DB, `SELECT count(*) AS n FROM kernel_names`), "n\n53\n"; got != want {
		t.Errorf("kernel names: %s, want %s", got, want)
	}
}
