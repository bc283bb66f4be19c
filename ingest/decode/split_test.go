package decode

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/tracehouse/tracehouse/parseerr"
)

// splitAll runs a splitter over r and returns the raw events and metadata.
// Like the loader, it gives each batch's buffer back once read.
func splitAll(t testing.TB, r io.Reader) ([]string, map[string][]byte, error) {
	t.Helper()
	out := make(chan *Batch, 4)
	pool := make(chan []byte, 4)
	s := NewSplitter(r, "t.json", pool)
	errc := make(chan error, 1)
	go func() { errc <- s.Run(context.Background(), out); close(out) }()
	var events []string
	var next int64
	seq := 0
	for b := range out {
		if b.Seq != seq || b.First != next {
			t.Fatalf("batch seq %d first %d; want %d %d", b.Seq, b.First, seq, next)
		}
		seq++
		for _, sp := range b.Spans {
			events = append(events, string(b.Data[sp.Start:sp.End]))
		}
		next += int64(len(b.Spans))
		b.Recycle()
	}
	return events, s.meta, <-errc
}

func makeTrace(n int, rng *rand.Rand) (string, []string) {
	var evs []string
	for i := 0; i < n; i++ {
		name := strings.Repeat("k", rng.IntN(50))
		if i%7 == 0 {
			name += `\"quoted\\\" {[ \\\\`
		}
		ev := fmt.Sprintf(`{"ph": "X", "name": "%s", "ts": %d.%03d, "dur": 1, "args": {"grid": [1, 2, 3], "n": {"x": []}}}`, name, i, i%1000)
		if i%5 == 0 {
			ev = strings.ReplaceAll(ev, ", ", ",\n    ")
		}
		evs = append(evs, ev)
	}
	doc := `{"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "H100"}], "traceEvents": [` + "\n" +
		strings.Join(evs, ",\n") + "\n], \"baseTimeNanoseconds\": 1712345678000000000, \"x\": \"}]\"}\n"
	return doc, evs
}

func TestSplitterFindsEveryEvent(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 3, 5000, 40000} {
		doc, want := makeTrace(n, rng)
		if !json.Valid([]byte(doc)) {
			t.Fatal("test trace is not valid JSON")
		}
		readers := map[string]io.Reader{
			"whole":   strings.NewReader(doc),
			"onebyte": iotest.OneByteReader(strings.NewReader(doc)),
			"half":    iotest.HalfReader(strings.NewReader(doc)),
		}
		if n > 5000 {
			delete(readers, "onebyte") // slow, and covered by the smaller cases
		}
		for name, r := range readers {
			got, meta, err := splitAll(t, r)
			if err != nil {
				t.Fatalf("n=%d %s: %v", n, name, err)
			}
			if len(got) != len(want) {
				t.Fatalf("n=%d %s: %d events, want %d", n, name, len(got), len(want))
			}
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("n=%d %s: event %d = %q want %q", n, name, i, got[i], want[i])
				}
			}
			if string(meta["baseTimeNanoseconds"]) != "1712345678000000000" || string(meta["x"]) != `"}]"` {
				t.Fatalf("meta = %q", meta)
			}
			var dp []map[string]any
			if err := json.Unmarshal(meta["deviceProperties"], &dp); err != nil || dp[0]["name"] != "H100" {
				t.Fatalf("deviceProperties = %s (%v)", meta["deviceProperties"], err)
			}
		}
	}
}

func TestSplitterBareArray(t *testing.T) {
	t.Parallel()
	got, _, err := splitAll(t, strings.NewReader(`[{"ph":"X"}, {"ph":"i"}]`))
	if err != nil || len(got) != 2 || got[1] != `{"ph":"i"}` {
		t.Fatalf("got %q, %v", got, err)
	}
}

func TestSplitterLargeEvent(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", 3*batchBytes)
	doc := `{"traceEvents":[{"a":1},{"name":"` + big + `"},{"b":2}]}`
	got, _, err := splitAll(t, strings.NewReader(doc))
	if err != nil || len(got) != 3 || len(got[1]) != len(big)+11 {
		t.Fatalf("got %d events, %v", len(got), err)
	}
}

func TestSplitterErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		doc   string
		cause error
		want  string
	}{
		{``, ErrTruncated, "empty file"},
		{`   `, ErrTruncated, "input ends inside the file"},
		{`{"traceEvents": [{"ph":"X"}, {"ph":`, ErrTruncated, "at event 1"},
		{`{"traceEvents": [{"ph":"X"}`, ErrTruncated, "input ends inside traceEvents"},
		{`{"traceEvents": [{"ph":"X"}] `, ErrTruncated, "the top-level object"},
		{`{"traceEvents": [{"ph":"X"}]}}`, ErrSyntax, "after the end"},
		{`{"traceEvents": [{"ph":"X"},]}`, ErrSyntax, "trailing comma"},
		{`{"traceEvents": [{"ph":"X"} {"ph":"X"}]}`, ErrSyntax, "after the event (want , or ]), at event 0"},
		{`{"traceEvents": [1, 2]}`, ErrType, "not a JSON object"},
		{`{"traceEvents": {"a": 1}}`, ErrType, "traceEvents is not an array"},
		{`{"traceEvents": [{"ph":"X"]}]}`, ErrSyntax, "mismatched"},
		{`{"traceEvents": [], "traceEvents": []}`, ErrDuplicate, "twice"},
		{`{"schema": "chakra", "nodes": []}`, ErrNotTrace, "no traceEvents"},
		{`"just a string"`, ErrNotTrace, "not a JSON object"},
	}
	for _, c := range cases {
		_, _, err := splitAll(t, strings.NewReader(c.doc))
		var pe *parseerr.Error
		if !errors.As(err, &pe) || !errors.Is(err, c.cause) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v; want %v containing %q", c.doc, err, c.cause, c.want)
			continue
		}
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: multi-line error %q", c.doc, err)
		}
	}
}

func TestSplitterEventOffsets(t *testing.T) {
	t.Parallel()
	doc := `{"traceEvents": [{"a":1},` + "\n" + `  {"b":2}, {"c":`
	_, _, err := splitAll(t, strings.NewReader(doc))
	var pe *parseerr.Error
	if !errors.As(err, &pe) || pe.Event != 2 {
		t.Fatalf("got %v", err)
	}
	if want := int64(bytes.Index([]byte(doc), []byte(`{"c"`))); pe.Offset != int64(len(doc)) || want < 0 {
		t.Fatalf("offset %d, want end of input %d", pe.Offset, len(doc))
	}
}
