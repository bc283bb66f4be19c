package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rivo/uniseg"
)

// TestIngestNotesFitTheWidth (issue 34): ingest's notes wrap to the text
// width like every other message; the note about a parallel size that is
// not a whole number names a long path and used to run past 100 columns
// at 80. An error line would stay one line; none is printed here. (At 80
// columns only: the notes are written by common.message, as capture's
// messages are, which TestCaptureFitsTheWidth checks at 120 too.)
func TestIngestNotesFitTheWidth(t *testing.T) {
	t.Parallel()
	src := filepath.Join("..", "..", "testdata", "demo", "sglang-llama", "2025-07-04_18-26-43")
	dir := filepath.Join(t.TempDir(), "a-run-directory-with-a-rather-long-name-as-real-capture-directories-have")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	name := "1751653603.1234567-TP-0-DECODE.trace.json.gz"
	b, err := os.ReadFile(filepath.Join(src, name))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "server_args.json"), []byte(`{"model_path": "m", "tp_size": 2.5}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, cols := range []int{80} {
		t.Run(fmt.Sprint(cols), func(t *testing.T) {
			t.Parallel()
			io, _, errOut := testIO("")
			env := func(k string) string {
				if k == "COLUMNS" {
					return fmt.Sprint(cols)
				}
				return testEnv(k)
			}
			db := filepath.Join(t.TempDir(), "w.duckdb")
			if code := run([]string{"--db", db, "ingest", dir}, io, env); code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			stderr := errOut.String()
			if !strings.Contains(stderr, "tp_size") {
				t.Fatalf("no note about tp_size 2.5:\n%s", stderr)
			}
			for i, l := range strings.Split(stderr, "\n") {
				if w := uniseg.StringWidth(l); w > cols && !strings.HasPrefix(l, "error: ") {
					t.Errorf("at %d columns: line %d is %d wide: %q", cols, i+1, w, l)
				}
			}
		})
	}
}

// unwrapped is s with its line breaks and runs of spaces as single spaces:
// messages wrapped to the width, read as the sentences they are.
func unwrapped(s string) string { return strings.Join(strings.Fields(s), " ") }
