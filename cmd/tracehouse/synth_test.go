package main

import (
	"compress/gzip"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rivo/uniseg"
)

// TestSynthListFitsTheWidth: synth's list of written files is a table
// fitted to COLUMNS like every listing (issue 34 item 4; it printed
// tab-separated lines of up to 120 columns): at 80 and 120 columns
// (held to testdata/golden/width/synth-demo-COLUMNS.txt, DIR masked) no
// line is wider than the width and every path under DIR reads whole; with
// --wide nothing is cut.
func TestSynthListFitsTheWidth(t *testing.T) {
	t.Parallel()
	for _, cols := range []int{80, 120} {
		dir := t.TempDir()
		env := func(k string) string {
			if k == "COLUMNS" {
				return fmt.Sprint(cols)
			}
			return testEnv(k)
		}
		io, out, errOut := testIO("")
		if code := run([]string{"synth", "--out", dir, "--demo"}, io, env); code != 0 {
			t.Fatalf("synth at %d: exit %d: %s", cols, code, errOut)
		}
		got := strings.ReplaceAll(out.String(), dir, "/tmp/demo")
		for i, l := range strings.Split(got, "\n") {
			if w := uniseg.StringWidth(l); w > cols {
				t.Errorf("at %d columns: line %d is %d wide: %q", cols, i+1, w, l)
			}
		}
		files := writtenFiles(t, dir)
		if len(files) == 0 {
			t.Fatal("synth --demo wrote no trace")
		}
		for _, f := range files {
			rel, _ := filepath.Rel(dir, f)
			if !strings.Contains(got, "\n"+rel+" ") && !strings.Contains(got, "\n"+rel+"\n") {
				t.Errorf("at %d columns: %s is not on a line of its own start", cols, rel)
			}
		}
		golden(t, fmt.Sprintf("width/synth-demo-%d.txt", cols), got)
	}
	io, out, errOut := testIO("")
	if code := run([]string{"--wide", "synth", "--out", t.TempDir(), "--demo"}, io, testEnv); code != 0 {
		t.Fatalf("synth --wide: exit %d: %s", code, errOut)
	}
	if strings.Contains(out.String(), "…") {
		t.Errorf("synth --wide cuts something:\n%s", out)
	}
}

// TestSynthListFormats: --format csv and json list every written file by
// its path as written, with its event and GPU event counts, which the
// test counts itself in each file; markdown is a table too.
func TestSynthListFormats(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	type entry struct {
		Path      string `json:"path"`
		Events    int64  `json:"events"`
		GPUEvents int64  `json:"gpu_events"`
	}
	check := func(format string, got []entry) {
		t.Helper()
		files := writtenFiles(t, dir)
		if len(got) != len(files) {
			t.Fatalf("%s: %d files listed, %d written", format, len(got), len(files))
		}
		for _, e := range got {
			events, gpu := countEvents(t, e.Path)
			if e.Events != events || e.GPUEvents != gpu {
				t.Errorf("%s: %s: %d events, %d GPU events; the file holds %d and %d", format, e.Path, e.Events, e.GPUEvents, events, gpu)
			}
		}
	}

	code, out, stderr := runCmd(t, "--format", "json", "synth", "--out", dir, "--framework", "vllm", "--ranks", "2")
	if code != 0 {
		t.Fatalf("json: exit %d: %s", code, stderr)
	}
	var js []entry
	if err := json.Unmarshal([]byte(out), &js); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	check("json", js)

	code, out, stderr = runCmd(t, "--format", "csv", "synth", "--out", dir, "--framework", "vllm", "--ranks", "2")
	if code != 0 {
		t.Fatalf("csv: exit %d: %s", code, stderr)
	}
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || len(recs) < 2 || strings.Join(recs[0], ",") != "path,events,gpu_events" {
		t.Fatalf("csv: %v\n%s", err, out)
	}
	var cs []entry
	for _, r := range recs[1:] {
		ev, err1 := strconv.ParseInt(r[1], 10, 64)
		gpu, err2 := strconv.ParseInt(r[2], 10, 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("csv row %q", r)
		}
		cs = append(cs, entry{r[0], ev, gpu})
	}
	check("csv", cs)

	code, out, stderr = runCmd(t, "--format", "markdown", "synth", "--out", dir, "--framework", "vllm", "--ranks", "2")
	if code != 0 || !strings.Contains(out, "| File | Events | GPU events |") {
		t.Errorf("markdown: exit %d: %s\n%s", code, stderr, out)
	}
}

// writtenFiles are the trace files under dir (not server_args.json or
// the demo's MANIFEST.json).
func writtenFiles(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(p, "trace.json") || strings.HasSuffix(p, "trace.json.gz")) {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// countEvents counts a trace's traceEvents and its GPU events (kernels,
// memcpys and memsets).
func countEvents(t *testing.T, path string) (events, gpu int64) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		r = zr
	}
	var doc struct {
		TraceEvents []struct {
			Cat string `json:"cat"`
		} `json:"traceEvents"`
	}
	if err := json.NewDecoder(r).Decode(&doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	for _, e := range doc.TraceEvents {
		switch e.Cat {
		case "kernel", "gpu_memcpy", "gpu_memset":
			gpu++
		}
	}
	return int64(len(doc.TraceEvents)), gpu
}
