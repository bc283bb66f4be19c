package decode

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// guessAll runs a guessing splitter over r and returns every event (the
// runs of guessed batches read as JSON arrays, compacted, and the spans
// of the others), how many batches were guessed, and whether a guessed
// run failed to read as an array of objects (its events are then
// missing from the list).
func guessAll(t *testing.T, r io.Reader) (events []string, guessed int, wrong bool, meta map[string][]byte, err error) {
	t.Helper()
	out := make(chan *Batch, 4)
	s := NewSplitter(r, "t.json", make(chan []byte, 4))
	s.Guess()
	errc := make(chan error, 1)
	go func() { errc <- s.Run(context.Background(), out); close(out) }()
	seq := 0
	for b := range out {
		if b.Seq != seq {
			t.Fatalf("batch %d came as %d", seq, b.Seq)
		}
		seq++
		if guessed > 0 && b.First != -1 {
			t.Fatalf("batch %d after a guessed one says it starts at event %d", b.Seq, b.First)
		}
		if !b.Guessed {
			for _, sp := range b.Spans {
				events = append(events, compact(t, b.Data[sp.Start:sp.End]))
			}
			b.Recycle()
			continue
		}
		guessed++
		for i := range b.Spans {
			var run []json.RawMessage
			if json.Unmarshal(b.Array(i), &run) != nil {
				wrong = true
				continue
			}
			for _, e := range run {
				if !bytes.HasPrefix(e, []byte("{")) {
					wrong = true
				}
				events = append(events, compact(t, e))
			}
		}
		b.Recycle()
	}
	return events, guessed, wrong, s.meta, <-errc
}

func compact(t *testing.T, b []byte) string {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		t.Fatalf("event %q: %v", b, err)
	}
	return buf.String()
}

// kinetoTrace is n events written as Kineto writes them (one key group a
// line, two blanks before each event's brace), with nested, a multi-line
// array of objects with a "ph" key in the args of every event: the
// boundaries a guess looks for then also appear inside events. A
// top-level array of objects follows the events, which a guess near their
// end must not take for events.
func kinetoTrace(n int, nested bool) (string, []string) {
	var evs []string
	for i := range n {
		list := ""
		if nested {
			list = `, "list": [` + "\n" + `      {"ph": "x,\n  {"},` + "\n" + `      {"ph": [1, 2]}` + "\n    ]"
		}
		name := strings.Repeat("k", i%37)
		if i%11 == 0 {
			name += `\"{[,\\`
		}
		evs = append(evs, fmt.Sprintf(`{
    "ph": "X", "cat": "kernel", "name": "%s", "pid": 0, "tid": 7,
    "ts": %d.%03d, "dur": 1.5,
    "args": {
      "device": 0, "stream": 7, "correlation": %d%s
    }
  }`, name, 1000+i, i%1000, i, list))
	}
	doc := "{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [\n    {\"id\": 0},\n    {\"id\": 1}\n  ],\n  \"traceEvents\": [\n  " +
		strings.Join(evs, ",\n  ") + "\n  ],\n  \"baseTimeNanoseconds\": 1712345678000000000,\n  \"more\": [\n    {\"a\": 1},\n    {\"b\": 2}\n  ]\n}\n"
	return doc, evs
}

// TestGuessedRunsHoldEveryEvent: on Kineto's layout the splitter guesses
// most batches, and their runs hold every event once, in order, as the
// exact split finds them.
func TestGuessedRunsHoldEveryEvent(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, 1, 200, 12000} {
		doc, evs := kinetoTrace(n, false)
		if !json.Valid([]byte(doc)) {
			t.Fatal("test trace is not valid JSON")
		}
		want := make([]string, len(evs))
		for i, e := range evs {
			want[i] = compact(t, []byte(e))
		}
		for name, r := range map[string]io.Reader{"whole": strings.NewReader(doc), "half": iotest.HalfReader(strings.NewReader(doc))} {
			got, guessed, wrong, meta, err := guessAll(t, r)
			if err != nil || wrong {
				t.Fatalf("n=%d %s: %v (a guess inside an event: %v)", n, name, err, wrong)
			}
			if n == 12000 && guessed == 0 {
				t.Fatalf("n=%d %s: no batch guessed", n, name)
			}
			if len(got) != len(want) {
				t.Fatalf("n=%d %s: %d events, want %d", n, name, len(got), len(want))
			}
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("n=%d %s: event %d = %s want %s", n, name, i, got[i], want[i])
				}
			}
			if string(meta["baseTimeNanoseconds"]) != "1712345678000000000" || !json.Valid(meta["more"]) {
				t.Fatalf("n=%d %s: meta = %q", n, name, meta)
			}
		}
	}
}

// TestGuessInsideAnEventFails: where the boundaries a guess looks for also
// appear inside events, some guesses cut an event, and the run that ends
// at such a cut does not read as an array (its last event is cut short):
// that failure makes ingest split the trace again without guessing,
// whatever the splitter makes of the bytes after the wrong cut.
func TestGuessInsideAnEventFails(t *testing.T) {
	t.Parallel()
	doc, _ := kinetoTrace(12000, true)
	if !json.Valid([]byte(doc)) {
		t.Fatal("test trace is not valid JSON")
	}
	_, guessed, wrong, _, err := guessAll(t, strings.NewReader(doc))
	if guessed == 0 || !wrong {
		t.Fatalf("%d batches guessed, a run not an array: %v (the split: %v); want a guess and a run that fails", guessed, wrong, err)
	}
}

// TestBatchBuffersReused: a batch handed back is the splitter's next
// buffer, guessed or not: a few buffers serve a trace of many batches.
func TestBatchBuffersReused(t *testing.T) {
	t.Parallel()
	doc, _ := kinetoTrace(30000, false) // 7 MB
	for _, guess := range []bool{false, true} {
		out := make(chan *Batch)
		s := NewSplitter(strings.NewReader(doc), "t.json", make(chan []byte, 4))
		if guess {
			s.Guess()
		}
		errc := make(chan error, 1)
		go func() { errc <- s.Run(context.Background(), out); close(out) }()
		bufs := map[*byte]bool{}
		batches, guessed := 0, 0
		for b := range out {
			batches++
			if b.Guessed {
				guessed++
			}
			bufs[&b.buf[:1][0]] = true
			b.Recycle()
		}
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
		if batches < 6 || guess && guessed < batches/2 || len(bufs) > 4 {
			t.Fatalf("guess %v: %d batches (%d guessed) in %d buffers; want most guessed when guessing, and at most 4 buffers",
				guess, batches, guessed, len(bufs))
		}
	}
}
