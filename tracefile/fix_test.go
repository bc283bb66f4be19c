package tracefile

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/valyala/fastjson"

	"github.com/tracehouse/tracehouse/ingest/decode"
)

// writeTrace writes a trace of the given events ({"traceEvents": [...]}
// plus extra top-level text) and returns its path.
func writeTrace(t testing.TB, dir, name string, events []string, extra string) string {
	t.Helper()
	doc := `{"schemaVersion": 1, "traceEvents": [` + "\n" + strings.Join(events, ",\n") + "\n]" + extra + "}\n"
	return writeFile(t, dir, name, []byte(doc))
}

func writeFile(t testing.TB, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if strings.HasSuffix(name, ".gz") {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		zw.Write(data)
		zw.Close()
		data = b.Bytes()
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// readOutput reads a trace file (gzip by name) as strict JSON: what
// encoding/json refuses (raw control characters, NaN), Perfetto refuses too.
func readOutput(t testing.TB, path string) (top map[string]json.RawMessage, events []map[string]any) {
	return readTrace(t, path, false)
}

func readTrace(t testing.TB, path string, lenient bool) (top map[string]json.RawMessage, events []map[string]any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		if data, err = io.ReadAll(zr); err != nil {
			t.Fatal(err)
		}
	}
	if lenient {
		// Inputs may hold what Perfetto refuses; read them as the tool does.
		var p fastjson.Parser
		v, err := decode.ParseJSON(&p, data)
		if err != nil {
			t.Fatal(err)
		}
		data = decode.AppendJSON(nil, v)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		t.Fatalf("output is not valid JSON: %v\n%s", err, data)
	}
	var list []json.RawMessage
	if bytes.HasPrefix(bytes.TrimSpace(raw), []byte("[")) {
		if err := json.Unmarshal(raw, &list); err != nil {
			t.Fatal(err)
		}
	} else {
		if err := json.Unmarshal(raw, &top); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(top["traceEvents"], &list); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range list {
		d := json.NewDecoder(bytes.NewReader(r))
		d.UseNumber()
		var ev map[string]any
		if err := d.Decode(&ev); err != nil {
			t.Fatal(err)
		}
		events = append(events, ev)
	}
	return top, events
}

func fix(t testing.TB, in string, opt FixOptions) (string, *FixResult) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out.perfetto.json.gz")
	res, err := PerfettoFix(context.Background(), in, out, opt)
	if err != nil {
		t.Fatal(err)
	}
	return out, res
}

// nsOf reads a ts or dur of a decoded event as nanoseconds.
func nsOf(t testing.TB, v any) int64 {
	t.Helper()
	var text string
	switch x := v.(type) {
	case json.Number:
		text = string(x)
	case string:
		text = x
	default:
		t.Fatalf("time %v (%T) is not a number", v, v)
	}
	ns, ok := decode.MicrosToNanos([]byte(text))
	if !ok {
		t.Fatalf("time %q is not a number", text)
	}
	return ns
}

func isGPU(ev map[string]any) bool {
	c, _ := ev["cat"].(string)
	return ev["ph"] == "X" && decode.Category([]byte(c)) >= decode.CatKernel && decode.Category([]byte(c)) <= decode.CatMemset
}

// gpuSpan is a GPU event's span, when it has a usable one (events without
// stay where they are).
func gpuSpan(ev map[string]any) (span, bool) {
	if !isGPU(ev) {
		return span{}, false
	}
	ts, ok1 := timeText(ev["ts"])
	dur, ok2 := timeText(ev["dur"])
	if !ok1 || !ok2 || dur < 0 || ts > math.MaxInt64-dur {
		return span{}, false
	}
	return span{ts, ts + dur}, true
}

func timeText(v any) (int64, bool) {
	switch x := v.(type) {
	case json.Number:
		return decode.MicrosToNanos([]byte(x))
	case string:
		return decode.MicrosToNanos([]byte(x))
	}
	return 0, false
}

func laneKey(ev map[string]any) string { return fmt.Sprint(ev["pid"], "/", ev["tid"]) }

type span struct{ start, end int64 }

func overlaps(a, b span) bool { return a.start < b.end && b.start < a.end }

// maxDepth is the largest number of mutually overlapping spans, by brute
// force: the clique of an interval graph is found at some span's start.
func maxDepth(spans []span) int {
	best := 0
	for _, s := range spans {
		// Spans overlapping every member must all contain the point
		// just after s.start (or s itself when it is empty).
		n := 0
		for _, o := range spans {
			if o == s || overlaps(o, s) && o.start <= s.start {
				n++
			}
		}
		best = max(best, n)
	}
	return best
}

// checkFix checks PerfettoFix's promises between an input and its output:
// strict JSON; every input event exactly once, in order, with its timing
// unchanged and, except for tid on GPU events and flows, its fields equal
// (string times becoming numbers); no two GPU events of an output lane
// overlapping; each input lane spread over exactly as many lanes as its
// maximum overlap depth.
func checkFix(t testing.TB, in, out string) {
	t.Helper()
	_, want := readTrace(t, in, true)
	_, got := readOutput(t, out)
	if len(got) < len(want) {
		t.Fatalf("output has %d events, input %d", len(got), len(want))
	}
	inLanes := map[string][]span{}
	outLanes := map[string][]span{}
	laneMap := map[string]map[string]bool{}
	for i, w := range want {
		g := got[i]
		for k, wv := range w {
			gv, ok := g[k]
			switch {
			case !ok:
				t.Fatalf("event %d lost %q: %v -> %v", i, k, w, g)
			case k == "tid" && (isGPU(w) || w["ph"] == "f" || w["ph"] == "s" || w["ph"] == "t"):
			case k == "ts" || k == "dur":
				if _, ok := timeText(wv); !ok {
					// Not a time: left as it was.
					if !equalJSON(wv, gv) {
						t.Fatalf("event %d: %s %v -> %v", i, k, wv, gv)
					}
					continue
				}
				if nsOf(t, wv) != nsOf(t, gv) {
					t.Fatalf("event %d: %s %v -> %v", i, k, wv, gv)
				}
				if _, isStr := gv.(string); isStr {
					t.Fatalf("event %d: %s still a string", i, k)
				}
			default:
				if !equalJSON(wv, gv) {
					t.Fatalf("event %d: %s %v -> %v", i, k, wv, gv)
				}
			}
		}
		if len(g) != len(w) && !(w["tid"] == nil && len(g) == len(w)+1) {
			t.Fatalf("event %d: fields %v -> %v", i, w, g)
		}
		if s, ok := gpuSpan(w); ok {
			inLanes[laneKey(w)] = append(inLanes[laneKey(w)], s)
			outLanes[laneKey(g)] = append(outLanes[laneKey(g)], s)
			if laneMap[laneKey(w)] == nil {
				laneMap[laneKey(w)] = map[string]bool{}
			}
			laneMap[laneKey(w)][laneKey(g)] = true
		}
	}
	for _, g := range got[len(want):] {
		if g["ph"] != "M" {
			t.Fatalf("added event is not metadata: %v", g)
		}
	}
	for k, spans := range outLanes {
		for i := range spans {
			for j := i + 1; j < len(spans); j++ {
				if overlaps(spans[i], spans[j]) {
					t.Fatalf("lane %s: %v overlaps %v", k, spans[i], spans[j])
				}
			}
		}
	}
	for k, spans := range inLanes {
		if d := maxDepth(spans); len(laneMap[k]) != d {
			t.Fatalf("lane %s: depth %d spread over %d lanes", k, d, len(laneMap[k]))
		}
	}
}

func equalJSON(a, b any) bool {
	ab, _ := json.Marshal(a)
	bb, _ := json.Marshal(b)
	return bytes.Equal(ab, bb)
}

func TestFixSpreadsOverlappingKernels(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := writeTrace(t, dir, "t.json", []string{
		`{"name": "thread_name", "ph": "M", "pid": 0, "tid": 7, "args": {"name": "stream 7"}}`,
		`{"ph": "X", "cat": "kernel", "name": "C", "pid": 0, "tid": 7, "ts": 12, "dur": 8, "args": {"correlation": 3}}`,
		`{"ph": "X", "cat": "kernel", "name": "A", "pid": 0, "tid": 7, "ts": 0, "dur": 10, "args": {"correlation": 1}}`,
		`{"ph": "X", "cat": "kernel", "name": "B", "pid": 0, "tid": 7, "ts": 5, "dur": 10, "args": {"correlation": 2}}`,
		`{"ph": "f", "id": 2, "pid": 0, "tid": 7, "ts": 5, "cat": "ac2g", "name": "ac2g", "bp": "e"}`,
		`{"ph": "X", "cat": "kernel", "name": "D", "pid": 0, "tid": 7, "ts": 16, "dur": 2, "args": {"correlation": 4}}`,
		`{"ph": "X", "cat": "kernel", "name": "E", "pid": 0, "tid": 8, "ts": 0, "dur": 100}`,
		`{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 100, "tid": 100, "ts": 0, "dur": 50}`,
		`{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 100, "tid": 100, "ts": 10, "dur": 5}`,
	}, "")
	for _, budget := range []int{0, 2} {
		out, res := fix(t, in, FixOptions{SortBudget: budget})
		checkFix(t, in, out)
		_, got := readOutput(t, out)
		tids := map[string]string{}
		for _, ev := range got {
			if ev["ph"] == "X" || ev["ph"] == "f" {
				name := fmt.Sprint(ev["name"])
				if ev["ph"] == "f" {
					name = "flow"
				}
				tids[name] = fmt.Sprint(ev["tid"])
			}
		}
		// A on 7; B overlaps A: the added lane 9 (above tid 8); C after A
		// ends: 7; D after B ends and during C: 9. The flow follows B.
		want := map[string]string{"A": "7", "B": "9", "C": "7", "D": "9", "E": "8", "flow": "9", "aten::mm": "100"}
		if fmt.Sprint(tids) != fmt.Sprint(want) {
			t.Errorf("budget %d: tids %v, want %v", budget, tids, want)
		}
		added := got[len(got)-3:]
		wantAdded := []string{
			`{"args":{"sort_index":7},"name":"thread_sort_index","ph":"M","pid":0,"tid":7}`,
			`{"args":{"name":"stream 7 (overlap 1)"},"name":"thread_name","ph":"M","pid":0,"tid":9}`,
			`{"args":{"sort_index":7},"name":"thread_sort_index","ph":"M","pid":0,"tid":9}`,
		}
		for i, ev := range added {
			b, _ := json.Marshal(ev)
			if string(b) != wantAdded[i] {
				t.Errorf("added %d: %s, want %s", i, b, wantAdded[i])
			}
		}
		if res.Lanes != 2 || res.SplitLanes != 1 || res.ExtraLanes != 1 || res.MaxDepth != 2 ||
			res.Moved != 2 || res.MovedFlows != 1 || res.GPUEvents != 5 || res.Events != 9 {
			t.Errorf("budget %d: result %+v", budget, res)
		}
	}
}

// The whole output of a small case, pinned: unchanged events byte for byte,
// rewritten ones compact, top-level keys sorted before traceEvents.
func TestFixExactOutput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := writeFile(t, dir, "t.json", []byte("{\"traceEvents\": [\n"+
		"  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"A\", \"pid\": 0, \"tid\": 7,\n    \"ts\": 1712345678901.123, \"dur\": 10}"+
		",\n  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"B\\u0001\", \"pid\": 0, \"tid\": 7, \"ts\": \"1712345678905.5\", \"dur\": 10, \"args\": {\"occ\": NaN}}"+
		",\n  {\"ph\": \"i\", \"name\": \"x\x02y\", \"pid\": 0, \"tid\": 7, \"ts\": \"3\"}"+
		"\n], \"displayTimeUnit\": \"ms\", \"baseTimeNanoseconds\": 1712345678000000000}"))
	out := filepath.Join(dir, "t.perfetto.json")
	res, err := PerfettoFix(context.Background(), in, out, FixOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(out)
	want := "{\n" +
		"  \"baseTimeNanoseconds\": 1712345678000000000,\n" +
		"  \"displayTimeUnit\": \"ms\",\n" +
		"  \"traceEvents\": [\n" +
		"{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"A\", \"pid\": 0, \"tid\": 7,\n    \"ts\": 1712345678901.123, \"dur\": 10},\n" +
		`{"ph":"X","cat":"kernel","name":"B\u0001","pid":0,"tid":8,"ts":1712345678905.5,"dur":10,"args":{"occ":null}}` + ",\n" +
		`{"ph":"i","name":"x\u0002y","pid":0,"tid":7,"ts":3}` + ",\n" +
		`{"name":"thread_sort_index","ph":"M","pid":0,"tid":7,"args":{"sort_index":7}}` + ",\n" +
		`{"name":"thread_name","ph":"M","pid":0,"tid":8,"args":{"name":"stream 7 (overlap 1)"}}` + ",\n" +
		`{"name":"thread_sort_index","ph":"M","pid":0,"tid":8,"args":{"sort_index":7}}` +
		"\n  ]\n}\n"
	if string(got) != want {
		t.Errorf("output:\n%s\nwant:\n%s", got, want)
	}
	if res.StringTimes != 2 || res.ControlChars != 1 || res.BadNumbers != 1 || res.Moved != 1 || res.Unrepairable != 0 {
		t.Errorf("result %+v", res)
	}
	checkFix(t, in, out)
}

// Issue 36 K: Infinity and -Infinity (JavaScript's, which fastjson reads
// only as far as "Inf") become null like NaN, in events and top-level keys
// alike; it failed with `unparsed tail: "inity..."` before. Infinity
// inside a string stays as written. Any case reads alike, as fastjson's
// NaN and Inf do.
func TestFixInfinityBecomesNull(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := writeFile(t, dir, "t.json", []byte("{\"traceEvents\": [\n"+
		`  {"ph": "X", "cat": "kernel", "name": "A", "pid": 0, "tid": 7, "ts": 1, "dur": 10, "args": {"occ": Infinity, "s": "Infinity", "l": infinity, "u": -INFINITY}}`+",\n"+
		`  {"ph": "C", "name": "c", "pid": 0, "ts": 2, "args": {"v": [-Infinity, 1, NaN]}}`+
		"\n], \"x\": {\"max\": -Infinity}}"))
	out := filepath.Join(dir, "t.perfetto.json")
	res, err := PerfettoFix(context.Background(), in, out, FixOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(out)
	want := "{\n" +
		"  \"x\": {\"max\":null},\n" +
		"  \"traceEvents\": [\n" +
		`{"ph":"X","cat":"kernel","name":"A","pid":0,"tid":7,"ts":1,"dur":10,"args":{"occ":null,"s":"Infinity","l":null,"u":null}}` + ",\n" +
		`{"ph":"C","name":"c","pid":0,"ts":2,"args":{"v":[null,1,null]}}` +
		"\n  ]\n}\n"
	if string(got) != want {
		t.Errorf("output:\n%s\nwant:\n%s", got, want)
	}
	if res.BadNumbers != 3 {
		t.Errorf("result %+v, want 3 bad numbers (two events, one key)", res)
	}
	checkFix(t, in, out)
}

func TestFixBareArrayAndNesting(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	doc := `[
{"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD", "pid": 1, "tid": "stream 3", "ts": 0, "dur": 100},
{"ph": "X", "cat": "kernel", "name": "in", "pid": 1, "tid": "stream 3", "ts": 10, "dur": 10},
{"ph": "X", "cat": "kernel", "name": "in2", "pid": 1, "tid": "stream 3", "ts": 30, "dur": 10},
{"ph": "X", "cat": "kernel", "name": "zero", "pid": 1, "tid": "stream 3", "ts": 100, "dur": 0},
{"ph": "X", "cat": "kernel", "name": "after", "pid": 1, "tid": "stream 3", "ts": 100, "dur": 5},
{"ph": "X", "cat": "kernel", "name": "z2", "pid": 1, "tid": "stream 3", "ts": 105, "dur": 0},
{"ph": "X", "cat": "kernel", "name": "z3", "pid": 1, "tid": "stream 3", "ts": 105, "dur": 0}
]`
	in := writeFile(t, dir, "a.json.gz", []byte(doc))
	out, res := fix(t, in, FixOptions{})
	checkFix(t, in, out)
	top, got := readOutput(t, out)
	if top != nil {
		t.Errorf("a bare array became an object")
	}
	// Nested kernels go to one added lane; zero-length events at a
	// neighbour's start or end share its lane.
	if res.ExtraLanes != 1 || res.Moved != 2 {
		t.Errorf("result %+v", res)
	}
	if got[len(got)-1]["args"].(map[string]any)["name"] != "stream 3 (overlap 1)" {
		t.Errorf("added lane name: %v", got[len(got)-1])
	}
}

func TestFixRandomInvariants(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 9))
	dir := t.TempDir()
	for round := range 20 {
		var events []string
		n := 1 + rng.IntN(400)
		for i := range n {
			pid, tid := rng.IntN(2), 7+rng.IntN(3)
			ts, dur := rng.IntN(2000), rng.IntN(60)
			if rng.IntN(10) == 0 {
				dur = 0
			}
			switch rng.IntN(8) {
			case 0:
				events = append(events, fmt.Sprintf(`{"ph": "f", "id": %d, "pid": %d, "tid": %d, "ts": %d.%03d, "cat": "ac2g", "bp": "e"}`, i-1, pid, tid, ts, i%7))
			case 1:
				events = append(events, fmt.Sprintf(`{"ph": "X", "cat": "cpu_op", "name": "op%d", "pid": 99, "tid": %d, "ts": "%d", "dur": %d}`, i, tid, ts, dur))
			default:
				events = append(events, fmt.Sprintf(`{"ph": "X", "cat": "kernel", "name": "k%d", "pid": %d, "tid": %d, "ts": %d.%03d, "dur": %d, "args": {"correlation": %d}}`, i, pid, tid, ts, i%7, dur, i))
			}
		}
		in := writeTrace(t, dir, fmt.Sprintf("r%d.json", round), events, "")
		out1, r1 := fix(t, in, FixOptions{})
		checkFix(t, in, out1)
		out2, r2 := fix(t, in, FixOptions{SortBudget: 1 + rng.IntN(50), Workers: 1 + rng.IntN(3)})
		a, _ := os.ReadFile(out1)
		b, _ := os.ReadFile(out2)
		if !bytes.Equal(a, b) {
			t.Fatalf("round %d: output depends on the sort budget or workers", round)
		}
		r1.Elapsed, r2.Elapsed = 0, 0
		if *r1 != *r2 {
			t.Fatalf("round %d: %+v vs %+v", round, r1, r2)
		}
	}
}

func TestFixBadInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := []byte(`{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 1}]}`)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(bytes.Repeat(good, 100))
	zw.Close()
	cases := []struct {
		name string
		data []byte
		want []string
		is   error
	}{
		{"truncated.json.gz", gz.Bytes()[:gz.Len()/2], []string{"truncated gzip"}, decode.ErrGzip},
		{"broken.json", []byte(`{"traceEvents": [{"ph": "X", "ts": 1,, "dur": 2}]}`), []string{"at event 0"}, decode.ErrSyntax},
		{"cut.json", good[:len(good)-10], []string{"input ends inside"}, decode.ErrTruncated},
		{"notjson.json", []byte("hello"), []string{"not a JSON object"}, nil},
		{"empty.json", nil, []string{"empty file"}, decode.ErrTruncated},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := filepath.Join(dir, c.name)
			os.WriteFile(in, c.data, 0o644)
			outDir := t.TempDir()
			out := filepath.Join(outDir, "out.json.gz")
			_, err := PerfettoFix(context.Background(), in, out, FixOptions{})
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") || !strings.HasPrefix(msg, in+": ") {
				t.Errorf("error is not one line naming the file: %q", msg)
			}
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not say %q", msg, w)
				}
			}
			if c.is != nil && !errors.Is(err, c.is) {
				t.Errorf("error %q is not %v", msg, c.is)
			}
			if left, _ := os.ReadDir(outDir); len(left) != 0 {
				t.Errorf("left behind: %v", left)
			}
		})
	}
	t.Run("missing", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "o.json")
		_, err := PerfettoFix(context.Background(), filepath.Join(dir, "nope.json"), out, FixOptions{})
		if err == nil || !strings.Contains(err.Error(), "nope.json: no such file") {
			t.Errorf("error %v", err)
		}
	})
}

func TestFixNeverOverwritesWithoutForce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := writeTrace(t, dir, "t.json", []string{`{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 1}`}, "")
	out := filepath.Join(dir, "o.json")
	os.WriteFile(out, []byte("keep"), 0o644)
	_, err := PerfettoFix(context.Background(), in, out, FixOptions{})
	if !errors.Is(err, ErrExists) {
		t.Fatalf("error %v", err)
	}
	if b, _ := os.ReadFile(out); string(b) != "keep" {
		t.Fatalf("overwritten without --force")
	}
	if _, err := PerfettoFix(context.Background(), in, out, FixOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	checkFix(t, in, out)
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"o.json", "t.json"}) {
		t.Errorf("directory holds %v", names)
	}
}

func TestDefaultFixOutput(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"d/x-TP-0-DECODE.trace.json.gz": "d/x-TP-0-DECODE.trace.perfetto.json.gz",
		"y.json":                        "y.perfetto.json.gz",
		"z":                             "z.perfetto.json.gz",
	} {
		if got := DefaultFixOutput(in); got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
}

// FuzzPerfettoFix feeds arbitrary bytes to PerfettoFix and checks on every
// input: no panic; a failure is one line naming the file and leaves no
// output; a success keeps every promise checkFix checks.
func FuzzPerfettoFix(f *testing.F) {
	for _, s := range []string{
		`{"traceEvents": [{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1.5,"dur":2},{"ph":"X","cat":"kernel","name":"j","pid":0,"tid":7,"ts":2,"dur":2}]}`,
		`[{"ph":"X","cat":"gpu_memset","name":"m","pid":"0","tid":"stream 7","ts":"1","dur":"3"},{"ph":"f","id":1,"pid":"0","tid":"stream 7","ts":"1"}]`,
		`{"traceEvents": [{"ph":"X","cat":"kernel","name":"a` + "\x01" + `","ts":1,"dur":NaN}], "x": [1, Infinity]}`,
		`{"traceEvents": [{"ph":"M","name":"thread_name","pid":0,"tid":7,"args":{"name":"s"}}, {"ph":"X","cat":"Kernel","ts":0,"dur":0,"tid":7},{"ph":"X","cat":"Kernel","ts":0,"dur":5,"tid":7}]}`,
		`{"traceEvents": [`,
		`{"traceEvents": [{"ph":"X","cat":"kernel","ts":1,"dur":-1,"tid":1},{"ph":"X","cat":"kernel","ts":1e3,"dur":1,"tid":1}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		in := filepath.Join(dir, "in.json")
		os.WriteFile(in, data, 0o644)
		outDir := filepath.Join(dir, "out")
		os.Mkdir(outDir, 0o755)
		out := filepath.Join(outDir, "o.json")
		_, err := PerfettoFix(context.Background(), in, out, FixOptions{SortBudget: 3})
		if err != nil {
			if msg := err.Error(); strings.Contains(msg, "\n") || !strings.HasPrefix(msg, in+": ") {
				t.Fatalf("error is not one line naming the file: %q", msg)
			}
			if left, _ := os.ReadDir(outDir); len(left) != 0 {
				t.Fatalf("left behind %v", left)
			}
			return
		}
		checkFix(t, in, out)
	})
}

// An interrupted rewrite (Ctrl-C cancels the context) leaves nothing behind.
func TestCancelledLeavesNothing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var events []string
	for i := range 20000 {
		events = append(events, fmt.Sprintf(`{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": %d, "dur": 3}`, 2*i))
	}
	in := writeTrace(t, dir, "t.json", events, "")
	outDir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := PerfettoFix(ctx, in, filepath.Join(outDir, "f.json.gz"), FixOptions{SortBudget: 100}); !errors.Is(err, context.Canceled) {
		t.Errorf("perfetto-fix: %v", err)
	}
	if _, err := Slice(ctx, in, filepath.Join(outDir, "s.json.gz"), SliceOptions{Steps: &StepRange{0, 1}}); !errors.Is(err, context.Canceled) {
		t.Errorf("slice: %v", err)
	}
	if left, _ := os.ReadDir(outDir); len(left) != 0 {
		t.Errorf("left behind %v", left)
	}
}
