package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rivo/uniseg"
)

// widthCases are the commands whose text output is held to golden files
// at 80 and 120 columns (issue 34): every line fits the width, counted in
// terminal columns, not bytes.
var widthCases = []struct {
	name string
	args []string
}{
	{"triage-sglang-llama", []string{"triage", "--timeline", "2", "sglang-llama"}},
	{"triage-sglang-llama-rank-all", []string{"triage", "--rank", "all", "sglang-llama"}},
	{"triage-tokenspeed-deepseek", []string{"triage", "--timeline", "1", "tokenspeed-deepseek"}},
	{"triage-vllm-qwen-moe", []string{"triage", "vllm-qwen-moe"}},
	{"triage-trtllm-llama", []string{"triage", "trtllm-llama"}},
	{"triage-two-trace", []string{"triage", "--mapping", "sglang-mapping", "--formal", "sglang-formal"}},
}

// TestTextFitsTheWidth runs each of widthCases on the demo with COLUMNS
// at 80 and 120 (off a terminal), holds the output to
// testdata/golden/width/NAME-COLUMNS.txt, and checks that no line is wider
// than the width; with --wide nothing is cut (no "…").
func TestTextFitsTheWidth(t *testing.T) {
	t.Parallel()
	db := demoCopy(t)
	for _, c := range widthCases {
		for _, cols := range []int{80, 120} {
			env := func(k string) string {
				if k == "COLUMNS" {
					return fmt.Sprint(cols)
				}
				return testEnv(k)
			}
			io, out, errOut := testIO("")
			if code := run(append([]string{"--db", db}, c.args...), io, env); code != 0 {
				t.Fatalf("%s: exit %d: %s", c.name, code, errOut.String())
			}
			got := maskTimes(out.String())
			for i, l := range strings.Split(got, "\n") {
				if w := uniseg.StringWidth(l); w > cols {
					t.Errorf("%s at %d columns: line %d is %d wide: %q", c.name, cols, i+1, w, l)
				}
			}
			golden(t, fmt.Sprintf("width/%s-%d.txt", c.name, cols), got)
		}
		io, out, errOut := testIO("")
		if code := run(append([]string{"--db", db, "--wide"}, c.args...), io, testEnv); code != 0 {
			t.Fatalf("%s --wide: exit %d: %s", c.name, code, errOut.String())
		}
		if strings.Contains(out.String(), "…") {
			t.Errorf("%s --wide cuts something:\n%s", c.name, out.String())
		}
	}
}
