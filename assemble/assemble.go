// Package assemble makes the reports the commands print, each in one step
// from an open warehouse and resolved runs: Triage (one run, or a
// mapping/formal pair), Compare (two runs), History (many) and RunDetail
// (what `runs RUN` prints). The
// commands that print them (triage, compare, history) and those that
// gather them (report, capture --then) share these steps instead of
// calling each other: cmd/tracehouse parses flags into these options,
// calls a step and maps its errors to exit codes.
//
// A step reads (target for runs and ranks, queries for rows, aggregates
// for steps found for one command alone), decides (analysis) and returns the
// model report formats; it prints nothing.
package assemble

import (
	"fmt"

	"github.com/tracehouse/tracehouse/vocab"
)

// stepsWhere names the steps a selection asks for: "decode steps on rank
// 0", "steps on any rank".
func stepsWhere(stage string, rankAll bool, rank int64) string {
	s := "steps"
	if stage != "" {
		s = vocab.StageName(stage) + " steps"
	}
	if rankAll {
		return s + " on any rank"
	}
	return fmt.Sprintf("%s on rank %d", s, rank)
}
