package ingest

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// hangGuard runs f and fails the test if it has not returned long after
// any ingest of two small files would have (a hang, not a slow machine).
func hangGuard(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Minute):
		t.Fatalf("%s hung", what)
	}
}

// TestSpecialFilesNeverHangIngest (issue 36 F): a FIFO or a symlink to
// /dev/zero named *.trace.json, found in a directory, is skipped with a
// note; named on the command line, it fails alone with one line; a FIFO
// named server_args.json is no run's arguments. The good trace beside them
// is stored each time. Before, opening or hashing such a file blocked
// forever (and ignored SIGINT and SIGTERM).
func TestSpecialFilesNeverHangIngest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	run := filepath.Join(dir, "r")
	good := filepath.Join(run, "good.trace.json")
	writeFile(t, good, goodTrace("a"))
	fifo := filepath.Join(run, "fifo.trace.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(run, "server_args.json"), 0o644); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(run, "zero.trace.json")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	var notices []string
	w := openMemory(t)
	hangGuard(t, "ingest of the directory", func() {
		res, err := Ingest(ctx, w, []string{run}, Options{Notice: func(s string) { notices = append(notices, s) }})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Files) != 1 || res.Files[0].Path != good || res.Files[0].Status != StatusIngested {
			t.Errorf("files %+v, want the good trace alone, ingested", res.Files)
		}
	})
	slices.Sort(notices)
	want := []string{fifo + ": a FIFO, not a regular file, skipped", zero + ": a device, not a regular file, skipped"}
	if !slices.Equal(notices, want) {
		t.Errorf("notices:\n%s\nwant\n%s", strings.Join(notices, "\n"), strings.Join(want, "\n"))
	}
	writeFile(t, filepath.Join(dir, "b.trace.json"), goodTrace("b"))
	w = openMemory(t)
	hangGuard(t, "ingest of the files named", func() {
		res, err := Ingest(ctx, w, []string{fifo, zero, filepath.Join(dir, "b.trace.json")}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, f := range res.Files {
			got[f.Path] = f.Status
			if f.Err != nil {
				got[f.Path] += ": " + f.Err.Error()
			}
		}
		want := map[string]string{
			fifo:                               StatusFailed + ": " + fifo + ": a FIFO, not a regular file: only regular files are read",
			zero:                               StatusFailed + ": " + zero + ": a device, not a regular file: only regular files are read",
			filepath.Join(dir, "b.trace.json"): StatusIngested,
		}
		if len(got) != len(want) {
			t.Errorf("files %v, want %v", got, want)
		}
		for p, s := range want {
			if got[p] != s {
				t.Errorf("%s: %q, want %q", p, got[p], s)
			}
		}
	})
}
