package report

import (
	"compress/gzip"
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tracehouse/tracehouse/kernelname"
)

// demoKernelNames are the distinct kernel names of the demo traces
// (testdata/demo), as the traces spell them, sorted.
func demoKernelNames(t *testing.T) []string {
	t.Helper()
	seen := map[string]bool{}
	err := filepath.WalkDir("../testdata/demo", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.Contains(d.Name(), ".trace.json") && d.Name() != "trace.json" {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		var r io.Reader = f
		if strings.HasSuffix(path, ".gz") {
			z, err := gzip.NewReader(f)
			if err != nil {
				return err
			}
			r = z
		}
		var tr struct {
			TraceEvents []struct {
				Name string `json:"name"`
				Cat  string `json:"cat"`
			} `json:"traceEvents"`
		}
		if err := json.NewDecoder(r).Decode(&tr); err != nil {
			return err
		}
		for _, e := range tr.TraceEvents {
			if e.Cat == "kernel" {
				seen[e.Name] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// TestSplitItemsKeepsNamesWhole (issue 34 item 2): a list cell of kernel
// names splits only at the ", " between items, never at one inside a
// name's template or parameter list (DeepGEMM's labels
// `sm100_fp8_gemm_1d1d_impl<…, 2112u, 7168u, …>`, FlashInfer's templates,
// NCCL's glued parameter list) nor after a "->" (`Memcpy HtoD (Pinned ->
// Device)`); cutList then drops whole items and counts them right.
func TestSplitItemsKeepsNamesWhole(t *testing.T) {
	t.Parallel()
	full := demoKernelNames(t)
	if len(full) < 40 {
		t.Fatalf("only %d kernel names in the demo", len(full))
	}
	// The forms a list cell holds: the short name (what --wide and
	// markdown show: the parameter list dropped), and the label of the
	// table (what a terminal shows: DeepGEMM's shape arguments).
	var shorts []string
	for _, n := range full {
		s := n
		if p := kernelname.Split(n); p.HasParams {
			s = strings.TrimSuffix(n, "("+p.Params+")")
		}
		shorts = append(shorts, s)
	}
	labels := kernelname.Labels(shorts)
	inside := 0
	for _, form := range [][]string{full, shorts, labels} {
		for _, n := range form {
			if strings.Count(n, ", ") > 0 {
				inside++
			}
		}
		// Every run of three names of one form, each with a share as the
		// fuse evidence has it.
		for i := 0; i+3 <= len(form); i++ {
			items := make([]string, 3)
			for j := range items {
				items[j] = form[i+j] + " (" + strconv.Itoa(i+j) + ".5%)"
			}
			cell := strings.Join(items, ", ")
			if got := splitItems(cell, ", "); !slices.Equal(got, items) {
				t.Fatalf("splitItems(%q)\n  = %q\n want %q", cell, got, items)
			}
			for _, w := range []int{24, 40, 60, 90, 140} {
				got := cutList(cell, ", ", w, false)
				if textWidth(cell) <= w {
					if got != cell {
						t.Errorf("width %d: %q cut to %q", w, cell, got)
					}
					continue
				}
				kept, more := wholeItemsKept(got, items)
				if !more {
					t.Errorf("width %d: %q does not say what it left out of %q", w, got, cell)
				}
				if kept == 0 && !strings.HasSuffix(got, " +2 more") {
					t.Errorf("width %d: %q counts wrong (3 items)", w, got)
				}
			}
		}
	}
	// The test means something only if names hold ", " inside brackets.
	if inside < 20 {
		t.Errorf("only %d names hold \", \"", inside)
	}
	for _, l := range labels {
		if strings.HasPrefix(l, "sm100_fp8_gemm_1d1d_impl<…, ") {
			return
		}
	}
	t.Errorf("no DeepGEMM label with its shape arguments in %q", labels)
}

// wholeItemsKept is how many of items got begins with whole, joined by
// ", " and followed by " +N more" with N the rest; 0 when got's first item
// is shortened (the rest counted all the same). more reports a "+N more"
// that counts right.
func wholeItemsKept(got string, items []string) (kept int, more bool) {
	for k := len(items) - 1; k >= 1; k-- {
		if got == strings.Join(items[:k], ", ")+" +"+strconv.Itoa(len(items)-k)+" more" {
			return k, true
		}
	}
	return 0, strings.HasSuffix(got, " +"+strconv.Itoa(len(items)-1)+" more")
}

// TestSplitItemsBrackets: the bracket rules on their own.
func TestSplitItemsBrackets(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"a, b", []string{"a", "b"}},
		{"f<1, 2> (1%), g (2%)", []string{"f<1, 2> (1%)", "g (2%)"}},
		{"f(int, int), g[1, 2], h", []string{"f(int, int)", "g[1, 2]", "h"}},
		{"Memcpy HtoD (Pinned -> Device), k<a, b>", []string{"Memcpy HtoD (Pinned -> Device)", "k<a, b>"}},
		{"x -> y, z", []string{"x -> y", "z"}},
		{"a), b", []string{"a)", "b"}},
		// unbalanced: no bracket tells where an item ends
		{"operator<, b", []string{"operator<", "b"}},
		{"", []string{""}},
	} {
		if got := splitItems(c.in, ", "); !slices.Equal(got, c.want) {
			t.Errorf("splitItems(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := splitItems("a/x.py:1 f<a; b>; b.py:2 g", "; "); !slices.Equal(got, []string{"a/x.py:1 f<a; b>", "b.py:2 g"}) {
		t.Errorf("\"; \": %q", got)
	}
}

// TestCutTextKeepsCellsApart: a plain text column cut in its middle (sql's
// columns, evidence naming files) keeps cells that differ different, as the
// name column does: three runs' evidence differs only in its directory.
func TestCutTextKeepsCellsApart(t *testing.T) {
	t.Parallel()
	var cells []string
	for _, run := range []string{"sglang-formal", "sglang-llama", "sglang-mapping"} {
		cells = append(cells, "server_args.json has SGLang keys (model_path, mem_fraction_static) (../demo/"+run+"/2025-07-04/server_args.json)")
	}
	for _, w := range []int{20, 27, 40, 60} {
		got := cutColumn(Column{Name: "framework_evidence"}, cells, w)
		seen := map[string]bool{}
		for _, c := range got {
			if textWidth(c) > w {
				t.Errorf("width %d: %q is wider", w, c)
			}
			if seen[c] {
				t.Errorf("width %d: two cells cut to %q: %q", w, c, got)
			}
			seen[c] = true
		}
	}
}
