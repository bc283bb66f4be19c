package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rivo/uniseg"

	"github.com/tracehouse/tracehouse/capture"
	"github.com/tracehouse/tracehouse/capture/capturetest"
)

// fixedDir is a new directory under /tmp whose name is always as long
// (th-capture-XXXXXXXX), so the capture's lines that name it wrap the
// same way on every run; the golden holds it masked.
func fixedDir(t *testing.T) (dir string) {
	t.Helper()
	for range 100 {
		dir = fmt.Sprintf("/tmp/th-capture-%08x", rand.Uint32())
		if err := os.Mkdir(dir, 0o755); err == nil {
			t.Cleanup(func() { os.RemoveAll(dir) })
			return dir
		} else if !os.IsExist(err) {
			t.Skipf("no fixed-length directory under /tmp: %v", err)
		}
	}
	t.Fatal("no free name under /tmp")
	return ""
}

// TestCaptureFitsTheWidth (issue 34 item 4): capture's messages on stderr
// (progress off a terminal, the server's notes, what was ingested, what
// was captured where) fit 80 and 120 columns, held to
// testdata/golden/width/capture-COLUMNS.txt with the directory, the port
// and the figures that vary between runs (sizes, seconds, event counts)
// masked. An error line stays one line (it is grepped for whole): none
// is printed here.
func TestCaptureFitsTheWidth(t *testing.T) {
	t.Parallel()
	for _, cols := range []int{80, 120} {
		t.Run(fmt.Sprint(cols), func(t *testing.T) {
			t.Parallel()
			out, db := fixedDir(t), filepath.Join(t.TempDir(), "w.duckdb")
			// A /server_info too large to read makes a note.
			srv := capturetest.New(t, capturetest.Config{Framework: "sglang", Ranks: 2, InfoBytes: 3 * capture.MaxResponse,
				FlushDelay: 30 * time.Millisecond})
			args := append([]string{"--url", srv.URL, "--output-dir", out, "--framework", "sglang", "--run", "serving-infrastructure-llama-8b-h100",
				"--tag", "note=baseline-before-the-flashinfer-upgrade-of-july", "--then", "triage",
				// The server's answer is too large to read, so it does not
				// say how many files to wait for; without --ranks the wait
				// would end once the first file had been still for
				// StableFor, which a loaded host can reach before the
				// second rank's file appears.
				"--ranks", "2"}, smallWorkload...)
			env := func(k string) string {
				if k == "COLUMNS" {
					return fmt.Sprint(cols)
				}
				return testEnv(k)
			}
			code, stdout, stderr := runCaptureEnv(t, context.Background(), db, env, args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			for name, s := range map[string]string{"stderr": stderr, "stdout": stdout} {
				for i, l := range strings.Split(s, "\n") {
					if w := uniseg.StringWidth(l); w > cols && !strings.HasPrefix(l, "error: ") {
						t.Errorf("%s at %d columns: line %d is %d wide: %q", name, cols, i+1, w, l)
					}
				}
			}
			// What a wait for the traces has seen when its line is printed
			// depends on timing.
			got := waitingLine.ReplaceAllString(stderr, "$1…")
			got = strings.ReplaceAll(got, out, "/tmp/th-capture-XXXXXXXX")
			got = strings.ReplaceAll(got, srv.URL, "http://127.0.0.1:NNNNN")
			got = captureVaries.ReplaceAllString(got, "N$1")
			golden(t, fmt.Sprintf("width/capture-%d.txt", cols), got)
		})
	}
}

// waitingLine is a progress line of a wait for trace files.
var waitingLine = regexp.MustCompile(`(?m)^(\S+: waiting for traces: ).*$`)

// captureVaries are the figures of capture's messages that vary between
// runs of one capture: sizes, seconds waited and files seen while waiting,
// event counts and MB of JSON.
var captureVaries = regexp.MustCompile(`\b\d+(?:\.\d+)?( kB| MB| B\b|s\b| events| GPU events)`)

// TestCaptureProgressFitsTheTerminal: on a terminal the progress line,
// redrawn in place, is cut to the terminal's width (a wrapped line would
// leave its first rows on screen); off a terminal it is printed whole.
func TestCaptureProgressFitsTheTerminal(t *testing.T) {
	t.Parallel()
	pr := capture.Progress{Role: "mapping", Stage: "decode", Phase: capture.PhaseFlush, Files: 16, FilesWant: 16,
		Bytes: 1200 << 20, Growing: 300 << 20, Waited: 1234 * time.Second}
	whole := pr.String()
	if uniseg.StringWidth(whole) <= 60 {
		t.Fatalf("%q is short: the test means nothing", whole)
	}
	for _, tty := range []bool{true, false} {
		io, _, errOut := testIO("")
		io.ErrTTY, io.TermCols = tty, 60
		p := &captureProgress{io: io}
		p.update(pr)
		p.finish()
		got := strings.TrimPrefix(strings.ReplaceAll(errOut.String(), "\r\033[K", "\n"), "\n")
		lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
		switch {
		case tty && (len(lines) != 1 || uniseg.StringWidth(lines[0]) != 59 || !strings.HasPrefix(whole, strings.TrimSuffix(lines[0], "…"))):
			t.Errorf("terminal: %q, want %q cut to 59 columns", got, whole)
		case !tty && got != whole+"\n":
			t.Errorf("off a terminal: %q, want %q", got, whole)
		}
	}
}
