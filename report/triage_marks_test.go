package report

import (
	"strings"
	"testing"
)

// TestKernelLocationMarks: a site mapped across stages is marked `~`, a
// graph-replay location keeps its prefix, and each mark is explained once
// under the table; a stage without either gets no note.
func TestKernelLocationMarks(t *testing.T) {
	t.Parallel()
	op := "aten::mm"
	st := &TriageStage{Kernels: []TriageKernel{
		{Kernel: "a", Match: "cross-stage", Location: "resolved", SiteCount: 1, Sites: []TriageSite{{Location: "x.py:1 f", CPUOp: &op}}},
		{Kernel: "b", Match: "base-cross-stage", Location: "resolved", SiteCount: 1, Sites: []TriageSite{{Location: "y.py:2 g"}}},
		{Kernel: "c", Match: "graph-replay", Location: "graph-replay", SiteCount: 1, Sites: []TriageSite{{Location: "graph replay @ r.py:3 h"}}},
		{Kernel: "d", Match: "exact", Location: "resolved", SiteCount: 1, Sites: []TriageSite{{Location: "z.py:4 k"}}},
		{Kernel: "e", Match: "unmapped", Location: "unmapped", Sites: []TriageSite{}},
	}}
	want := [][2]string{{"~x.py:1 f", "aten::mm"}, {"~y.py:2 g", "-"}, {"graph replay @ r.py:3 h", "-"}, {"z.py:4 k", "-"}, {"unmapped", "-"}}
	for i, k := range st.Kernels {
		if loc, ops := siteCells(k); loc != want[i][0] || ops != want[i][1] {
			t.Errorf("%s: %q %q, want %q %q", k.Kernel, loc, ops, want[i][0], want[i][1])
		}
	}
	notes := kernelNotes(st)
	if len(notes) != 2 || !strings.HasPrefix(notes[0], "~ site mapped from another stage") || !strings.HasPrefix(notes[1], "graph replay @:") {
		t.Errorf("notes %q", notes)
	}
	if n := kernelNotes(&TriageStage{Kernels: st.Kernels[3:]}); len(n) != 0 {
		t.Errorf("notes without marks: %q", n)
	}
	// Rows --min-share hid are counted under the table.
	n := kernelNotes(&TriageStage{Kernels: st.Kernels[3:], KernelsHidden: 3, HiddenTimeNS: 1500})
	if len(n) != 1 || n[0] != "3 kernel(s) under --min-share hidden (1.50 µs of summed kernel time); --min-share 0 shows all" {
		t.Errorf("hidden rows note: %q", n)
	}
}

// TestFuseCells: evidence kernels carry their shares; text shows the first
// candidate path and how many more, markdown all of them.
func TestFuseCells(t *testing.T) {
	t.Parallel()
	f := TriageFusion{Pattern: "p", FusedPath: "sglang: a.py", Framework: "sglang", Sources: []string{"a.py", "b.py", "c.py"},
		EvidenceKernels: []string{"norm", "add"}, EvidenceSharePct: []float64{12.34, 0.5}}
	st := &TriageStage{Fusions: []TriageFusion{f}}
	text := fusionTable(st, Text).Rows[0]
	if text[5] != "norm (12.3%), add (0.5%)" || text[7] != "sglang: a.py (+2 more)" {
		t.Errorf("text cells %q", text)
	}
	md := fusionTable(st, Markdown).Rows[0]
	if md[7] != "sglang: a.py; b.py; c.py" {
		t.Errorf("markdown path cell %q", md[7])
	}
	f.Sources = f.Sources[:1]
	if got := fusedPaths(f, false); got != "sglang: a.py" {
		t.Errorf("one path: %q", got)
	}
}
