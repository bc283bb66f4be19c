package main

import (
	"strconv"
	"strings"
	"testing"

	"github.com/rivo/uniseg"

	"github.com/tracehouse/tracehouse/report"
)

// TestTriageFitsTheTerminal: off a terminal, table output fits $COLUMNS,
// else 120 columns, on the whole demo (every run at every rank with every
// kernel row: demoAllRanks, the reports testTriageJSONContract prints as
// JSON); --wide prints names in full.
func TestTriageFitsTheTerminal(t *testing.T) {
	t.Parallel()
	db := demoCopy(t) // the demo, ingested once per test binary
	widest := func(s string) (int, string) {
		w, line := 0, ""
		for _, l := range strings.Split(s, "\n") {
			if n := uniseg.StringWidth(l); n > w {
				w, line = n, l
			}
		}
		return w, line
	}
	// triage's reports are built once, by the command's steps, and
	// printed at each width by its print step (only the printing reads
	// the width; sql runs whole, in the environment).
	allRanks := demoAllRanks(t)
	for _, c := range []struct {
		columns string
		limit   int
	}{{"", 120}, {"150", 150}} {
		for _, args := range [][]string{append([]string{"triage"}, demoAllRanksArgs...), {"sql", "SELECT kernel_id, run, name, site, dur_ns FROM kernel_events ORDER BY kernel_id LIMIT 20"}} {
			var code int
			var out, stderr string
			if args[0] == "triage" {
				width := -1 // COLUMNS unset: the command line's own
				if c.columns != "" {
					width, _ = strconv.Atoi(c.columns)
				}
				out = printTriage(t, allRanks, "table", "", width, args[1:]...)
			} else if c.columns == "" {
				// COLUMNS unset is testEnv: the same command line as
				// other tests', run once (demoOnce)
				code, out, stderr = demoOnce(t, args...)
			} else {
				io, o, errOut := testIO("")
				env := func(k string) string {
					if k == "COLUMNS" {
						return c.columns
					}
					return testEnv(k)
				}
				code = run(append([]string{"--db", db}, args...), io, env)
				out, stderr = o.String(), errOut.String()
			}
			if code != 0 {
				t.Fatalf("%v: exit %d %s", args, code, stderr)
			}
			if w, line := widest(out); w > c.limit {
				t.Errorf("COLUMNS=%q %v: a line of %d columns: %q", c.columns, args, w, line)
			}
		}
	}
	// Each run's report as `triage RUN` prints it (at the command line's
	// own width, then --wide): the demo's reports (triageDemoReports,
	// `triage testdata/demo`'s, built once), printed one at a time by
	// triage's print step.
	reps, _ := triageDemoReports(t)
	wide := 0
	for _, rep := range reps {
		out := printTriage(t, []*report.TriageReport{rep}, "table", "", -1, rep.Run)
		if w, line := widest(out); out == "" || w > 120 {
			t.Errorf("%s: a line of %d columns: %q", rep.Run, w, line)
		}
		if rep.Run != "sglang-llama" {
			continue
		}
		out = printTriage(t, []*report.TriageReport{rep}, "table", "", 0, rep.Run)
		if w, _ := widest(out); w <= 120 || !strings.Contains(out, "python/sglang/srt/layers/quantization/unquant.py") {
			t.Errorf("--wide: widest line %d, full paths missing", w)
		}
		wide++
	}
	if len(reps) != len(demoLabels) || wide != 1 {
		t.Errorf("%d reports (sglang-llama's %d times), want the demo's %d runs'", len(reps), wide, len(demoLabels))
	}
}
