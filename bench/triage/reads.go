package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tracehouse/tracehouse/bench/buildcli"
)

// The read cases: the report commands on the demo (testdata/demo: 16
// files, 6 runs, 3,827 GPU events) stored in a warehouse file and in a
// lake, the CLI as a process. On runs this small a command's cost is
// what it pays whatever the size (opening, checks, planning its
// statements), which is what the command tests pay hundreds of times
// (issue 35).
const demoDir = "testdata/demo"

// readCases ingests the demo into a warehouse and a lake of each binary's
// own (an older build may not open a newer one's), then times every read
// case as smallCases does.
func readCases(ctx context.Context, data, cli, against string, n int) ([]smallCase, [][]smallResult, error) {
	dir := filepath.Join(data, "reads")
	if err := os.RemoveAll(dir); err != nil {
		return nil, nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, err
	}
	bins, err := buildcli.Binaries(ctx, dir, cli, against)
	if err != nil {
		return nil, nil, err
	}
	cases := make([][]smallCase, len(bins))
	for b, bin := range bins {
		db := filepath.Join(dir, fmt.Sprintf("demo-%d.duckdb", b))
		lk := filepath.Join(dir, fmt.Sprintf("lake-%d", b))
		fmt.Fprintln(os.Stderr, "ingesting the demo with", bin)
		if _, err := runCLI(ctx, bin, "--db", db, "ingest", demoDir); err != nil {
			return nil, nil, fmt.Errorf("ingest the demo: %w", err)
		}
		if _, err := runCLI(ctx, bin, "--lake", lk, "ingest", demoDir); err != nil {
			return nil, nil, fmt.Errorf("ingest the demo into a lake: %w", err)
		}
		cases[b] = readCasesOn(db, lk, filepath.Join(dir, fmt.Sprintf("report-%d.md", b)))
	}
	results, err := timeCases(ctx, bins, cases, n)
	return cases[0], results, err
}

// readShort names readCasesOn's cases in the summary line.
var readShort = []string{"triage", "triage --rank all", "compare", "history", "report", "sql", "lake triage", "lake compare", "lake sql"}

// readCasesOn is the read cases on the demo in warehouse db and lake lk;
// md is the file the report case writes.
func readCasesOn(db, lk, md string) []smallCase {
	const base, cand = "sglang-llama", "sglang-formal"
	count := "SELECT count(*) FROM kernel_events"
	return []smallCase{
		{name: "triage RUN (its saved report)", args: []string{"--db", db, "triage", base}},
		{name: "triage --rank all RUN (computed)", args: []string{"--db", db, "triage", "--rank", "all", base}},
		{name: "compare BASE CAND", args: []string{"--db", db, "compare", base, cand}},
		{name: "history --metric step_time (6 runs)", args: []string{"--db", db, "history", "--metric", "step_time"}},
		{name: "report --markdown RUN", args: []string{"--db", db, "report", "--markdown", md, base}},
		{name: "sql (one count)", args: []string{"--db", db, "sql", count}},
		{name: "--lake triage RUN", args: []string{"--lake", lk, "triage", base}},
		{name: "--lake compare BASE CAND", args: []string{"--lake", lk, "compare", base, cand}},
		{name: "--lake sql (one count)", args: []string{"--lake", lk, "sql", count}},
	}
}
