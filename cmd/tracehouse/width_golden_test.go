package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/rivo/uniseg"

	"github.com/tracehouse/tracehouse/schema"
)

// widthCases are the commands whose text output is held to golden files
// at 80 and 120 columns (issue 34): every line fits the width, counted in
// terminal columns, not bytes.
var widthCases = []struct {
	name string
	args []string
}{
	{"triage-sglang-llama", []string{"triage", "--timeline", "2", "sglang-llama"}},
	{"triage-sglang-llama-rank-all", append([]string{"triage"}, llamaRankAllArgs...)},
	{"triage-tokenspeed-deepseek", []string{"triage", "--timeline", "1", "tokenspeed-deepseek"}},
	{"triage-vllm-qwen-moe", []string{"triage", "vllm-qwen-moe"}},
	{"triage-trtllm-llama", []string{"triage", "trtllm-llama"}},
	{"triage-two-trace", append([]string{"triage"}, demoTwoTraceArgs...)},
	{"compare-sglang", []string{"compare", "sglang-llama", "sglang-formal"}},
	{"compare-stages", []string{"compare", "sglang-llama", "trtllm-llama"}},
	{"history-step-time", []string{"history", "--metric", "step_time"}},
	{"history-kernel", []string{"history", "--kernel", "BatchDecodeWithPagedKVCache", "--stage", "decode"}},
	{"runs", []string{"runs"}},
	{"runs-detail", []string{"runs", "sglang-llama"}},
	{"catalog-list", []string{"catalog", "list"}},
	{"catalog-show", []string{"catalog", "show", "sglang-fused-qknorm-rope"}},
	{"schema", []string{"schema"}},
	{"schema-kernels", []string{"schema", "kernels"}},
	{"sql-runs", []string{"sql", "SELECT label, framework, framework_evidence, source_dir FROM runs ORDER BY label"}},
	// writes nothing on a warehouse already classified: its one line
	{"reclassify", []string{"reclassify"}},
}

// widthTags are tags put on a run first: long enough that compare's
// header and the runs listing must wrap or fold them.
var widthTags = []string{"tag", "sglang-llama", "gpu=h100", "team=serving-infrastructure",
	"note=baseline-before-the-flashinfer-upgrade-of-july", "commit=5f3c2a9e1d7b4c6a8e0f2d4b6a8c0e2f4a6b8d0c"}

// TestTextFitsTheWidth runs each of widthCases on the demo with COLUMNS
// at 80 and 120 (off a terminal), holds the output to
// testdata/golden/width/NAME-COLUMNS.txt, and checks that no line is wider
// than the width; with --wide nothing is cut (no "…").
func TestTextFitsTheWidth(t *testing.T) {
	t.Parallel()
	db := demoCopy(t)
	if io, _, errOut := testIO(""); run(append([]string{"--db", db}, widthTags...), io, testEnv) != 0 {
		t.Fatalf("%v: %s", widthTags, errOut)
	}
	// The runs' source directories are absolute paths of this checkout;
	// the goldens hold one fixed path of the same kind, so a checkout
	// elsewhere neither changes a line nor how it wraps.
	w, err := schema.Open(context.Background(), db, schema.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = w.DB.Exec(`UPDATE runs SET source_dir = '/src/tracehouse/testdata/demo/' || regexp_extract(source_dir, '[^/]+$')`)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range widthCases {
		widthGoldens(t, db, c.name, c.args...)
	}
}

// widthGoldens runs ARGS on db with COLUMNS at 80 and 120 (off a
// terminal), holds each output to testdata/golden/width/NAME-COLUMNS.txt,
// checks that no line is wider than the width, and that with --wide
// nothing is cut (no "…" or "..."). A report (triage, compare, history) is
// built once, by the command's steps, and printed at each width by its
// print step (builtReport): only the printing reads the width; schema's
// rows too (demoSchemaRows); the other commands, whose reading is cheap,
// run whole at each width.
func widthGoldens(t *testing.T, db, name string, args ...string) {
	t.Helper()
	// compare and history may exit 1 (cannot decide) or 3 (regression):
	// what they print is held all the same.
	ok := func(code int) bool { return code == 0 || code == exitError || code == exitRegression }
	var printAt func(format, dir string, width int) string
	switch {
	case args[0] == "triage" && slices.Equal(args[1:], llamaRankAllArgs):
		// A triage report holds neither tags nor source directories (what
		// TestTextFitsTheWidth changed): these are the demo's, built once
		// for the package's tests (llamaRankAll).
		reps := llamaRankAll(t)
		printAt = func(format, dir string, width int) string {
			return printTriage(t, reps, format, dir, width, llamaRankAllArgs...)
		}
	case args[0] == "triage" && slices.Equal(args[1:], demoTwoTraceArgs):
		// the demo's, as llamaRankAll's (demoTwoTrace)
		reps := demoTwoTrace(t)
		printAt = func(format, dir string, width int) string {
			return printTriage(t, reps, format, dir, width, demoTwoTraceArgs...)
		}
	case args[0] == "triage", args[0] == "compare", args[0] == "history":
		printAt = builtReport(t, db, args[0], args[1:]...)
	case args[0] == "schema":
		// The rows schema reads hold no runs, tags or source directories
		// (what TestTextFitsTheWidth changed): the demo's, read once for
		// the package's tests (demoSchemaRows), printed by schema's print
		// step.
		object := ""
		if len(args) > 1 {
			object = args[1]
		}
		rows := demoSchemaRows(t, object)[object]
		printAt = func(format, dir string, width int) string {
			return schemaPrinted(t, rows, format, width, args[1:]...)
		}
	}
	// output is what ARGS print at width cols (0: --wide)
	output := func(cols int) string {
		t.Helper()
		if printAt != nil {
			out := printAt("table", "", cols)
			if out == "" {
				t.Fatalf("%s at %d columns: no output", name, cols)
			}
			return out
		}
		env, line := testEnv, append([]string{"--db", db}, args...)
		if cols > 0 {
			env = func(k string) string {
				if k == "COLUMNS" {
					return fmt.Sprint(cols)
				}
				return testEnv(k)
			}
		} else {
			line = append([]string{"--db", db, "--wide"}, args...)
		}
		io, out, errOut := testIO("")
		if code := run(line, io, env); !ok(code) || cols > 0 && out.Len() == 0 {
			t.Fatalf("%s at %d columns: exit %d: %s", name, cols, code, errOut.String())
		}
		return out.String()
	}
	for _, cols := range []int{80, 120} {
		got := maskTimes(output(cols))
		for i, l := range strings.Split(got, "\n") {
			if w := uniseg.StringWidth(l); w > cols {
				t.Errorf("%s at %d columns: line %d is %d wide: %q", name, cols, i+1, w, l)
			}
		}
		golden(t, fmt.Sprintf("width/%s-%d.txt", name, cols), got)
	}
	if wide := output(0); strings.Contains(wide, "…") || strings.Contains(wide, "...") {
		t.Errorf("%s --wide cuts something:\n%s", name, wide)
	}
}
