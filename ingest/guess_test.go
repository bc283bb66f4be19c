package ingest

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// kinetoKernels is a trace of n kernels in Kineto's layout (one key group
// a line, two blanks before each event's brace), kernel i with correlation
// i; with nested, each has a multi-line array of objects with a "ph" key
// in its args, so that the boundaries the splitter guesses at also appear
// inside events.
// bad, if not negative, is the index of a kernel whose dur is a string.
func kinetoKernels(n int, nested bool, bad int) (string, []string) {
	var evs []string
	for i := range n {
		list, dur := "", "1.5"
		if nested {
			list = `, "list": [` + "\n" + `        {"ph": 1},` + "\n" + `        {"ph": [1, 2]}` + "\n      ]"
		}
		if i == bad {
			dur = `"x"`
		}
		evs = append(evs, fmt.Sprintf(`{
    "ph": "X", "cat": "kernel", "name": "k%d", "pid": 0, "tid": 7,
    "ts": %d.%03d, "dur": %s,
    "args": {
      "device": 0, "stream": 7, "correlation": %d%s
    }
  }`, i%13, 1000+i, i%1000, dur, i, list))
	}
	return "{\n  \"traceEvents\": [\n  " + strings.Join(evs, ",\n  ") + "\n  ],\n  \"baseTimeNanoseconds\": 1700000000000000000\n}\n", evs
}

// TestGuessedSplitStoresEveryEvent: a trace large enough for the splitter
// to cut batches by guess stores every event with its index in the trace
// (kernel ids are the trace's key plus it), whether the guesses hold or
// some cut an event and the trace is split again without guessing.
func TestGuessedSplitStoresEveryEvent(t *testing.T) {
	t.Parallel()
	const n = 6000 // 1.3-2 MB: batches and runs of events on both sides of guesses
	for _, nested := range []bool{false, true} {
		t.Run(fmt.Sprintf("nested=%v", nested), func(t *testing.T) {
			t.Parallel()
			doc, _ := kinetoKernels(n, nested, -1)
			path := filepath.Join(t.TempDir(), "k.trace.json")
			writeFile(t, path, doc)
			w := openMemory(t)
			res, err := Ingest(context.Background(), w, []string{path}, Options{})
			if err != nil || res.Failed() != 0 {
				t.Fatalf("ingest: %v %+v", err, res.Files)
			}
			got := mustCSV(t, w.DB, `SELECT count(*) AS n, count(DISTINCT kernel_id) AS ids,
				count(*) FILTER (WHERE kernel_id - (trace_id::BIGINT << 32) <> correlation) AS misplaced,
				count(*) FILTER (WHERE ts_ns <> 1700000000000000000 + (1000 + correlation) * 1000 + correlation % 1000) AS mistimed
				FROM kernels`)
			if want := fmt.Sprintf("n,ids,misplaced,mistimed\n%d,%d,0,0\n", n, n); got != want {
				t.Fatalf("kernels:\n%s\nwant\n%s", got, want)
			}
		})
	}
}

// guessedSplitRefused: a damaged event after guessed batches is named by
// its index and byte, as a split that finds every event's end names it.
// It writes the trace into dir and returns how it is refused.
func guessedSplitRefused(t *testing.T, dir string) []refused {
	const n, bad = 6000, 5001
	doc, evs := kinetoKernels(n, false, bad)
	path := filepath.Join(dir, "guessed.trace.json")
	writeFile(t, path, doc)
	return []refused{{path, ErrType, []string{`field "dur": want a number, got string` + at(t, doc, evs[bad], bad)}}}
}
