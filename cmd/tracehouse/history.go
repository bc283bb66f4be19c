package main

import (
	"database/sql"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/spf13/cobra"

	"github.com/tracehouse/tracehouse/analysis"
	"github.com/tracehouse/tracehouse/ingest"
	"github.com/tracehouse/tracehouse/queries"
	"github.com/tracehouse/tracehouse/report"
	"github.com/tracehouse/tracehouse/schema"
	"github.com/tracehouse/tracehouse/stats"
	"github.com/tracehouse/tracehouse/target"
	"github.com/tracehouse/tracehouse/vocab"
)

// HistoryOptions are the parsed flags of `tracehouse history`.
type HistoryOptions struct {
	common
	Format report.Format
	// Exactly one of Kernel (RE2 on short names), Family and Metric.
	Kernel, Family, Metric string
	Stage                  string // "" = every stage
	Rank                   int64
	Tags                   []string // key=value, every one required
	By                     string
	Last                   int
	Rule                   stats.ChangeRule
	KeepEdges              bool
	StepsBy                string
	FailOnRegress          bool
}

func newCmdHistory(f *Factory, runF func(*HistoryOptions) error) *cobra.Command {
	opts := &HistoryOptions{Rule: stats.DefaultChangeRule}
	var stage string
	var tags []string
	minChange := stats.DefaultChangeRule.MinChange * 100
	cmd := &cobra.Command{
		Use:   "history --kernel PATTERN | --family F | --metric step_time|busy|exposed_comm",
		Short: "One series over many runs, per step, with its change points: when did this get slow",
		Long: `Follow one figure over runs (spec: compare.md section 6): the time per step of
the kernels whose short name matches --kernel (an RE2 pattern; matching
kernels are summed), of a kernel --family (attention, gemm, moe, norm,
communication, ...), or a step --metric: step_time (the step's GPU window),
busy (GPU busy time) or exposed_comm (communication not hidden under
compute). One row per run and stage, in ingest order (--by TAG: ordered by
that tag's value, numbers in their numeric order, e.g. 0.4.9 before
0.4.10), with the median per step, its 95% interval (from 6 steps),
launches per step and share (of the summed kernel time for kernels, of the
step time for metrics). Runs are every run, or those carrying every
--tag KEY=VALUE; --last N keeps the newest N of the order.

Change points, marked per stage: ` + wrapText("Change points, marked per stage: "+analysis.RuleText(stats.DefaultChangeRule)+".", 76)[len("Change points, marked per stage: "):] + `
--window and --min-change set the window and the floor. "When did this get
slow" is the first run of the first lasting shift to slower; a change point
the next run does not continue (it is back) is a one-run spike, reported
apart.

A run without the series (no steps in the stage on the rank, or not one
matching kernel: a kernel renamed by a library upgrade) is "absent": a gap
in the table and the chart, never 0 and never a change point. A selection
that holds nothing (no run carries the --tag, none has the --by tag, the
--rank or the --stage, an unknown --family, a --kernel pattern that
matches nothing) is an error.

With --fail-on-regression the exit status is 3 while the newest selected
run stays beyond the level before the last lasting shift to slower in a
stage (that level, the median of the runs before the shift, plus its
threshold: every run of a lasting shift fails, not only its first; a spike
alone fails only while it is the newest run), 1 when the newest run is
absent from a stage's series (cannot decide), else 0; 1 on errors, 2 on
usage errors.`,
		Example: `  tracehouse history --kernel 'BatchDecodeWithPagedKVCache' --stage decode
  tracehouse history --metric step_time --tag branch=main --by commit_date
  tracehouse history --family attention --format csv > attention.csv
  tracehouse history --metric busy --tag branch=main --last 20 --fail-on-regression`,
		Args: maxArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.common = f.common(cmd)
			var err error
			if opts.Format, err = f.outputFormat(); err != nil {
				return err
			}
			if err := opts.parse(stage, tags, minChange); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return historyRun(opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Kernel, "kernel", "", "kernels whose short name matches the RE2 `PATTERN` (summed)")
	fl.StringVar(&opts.Family, "family", "", "kernels of `FAMILY` (attention, gemm, moe, norm, communication, ...)")
	fl.StringVar(&opts.Metric, "metric", "", "a step `METRIC`: step_time, busy or exposed_comm")
	fl.StringVar(&stage, "stage", "all", "stage: prefill (extend), decode, mixed, unknown or all (one series each)")
	fl.Int64Var(&opts.Rank, "rank", 0, "rank whose steps are measured")
	fl.StringArrayVar(&tags, "tag", nil, "only runs carrying tag `key=value` (repeatable: every one)")
	fl.StringVar(&opts.By, "by", "", "order runs by this `TAG`'s value instead of ingest time (runs without it left out)")
	fl.IntVar(&opts.Last, "last", 0, "keep only the newest `N` runs of the order (0 = all)")
	fl.IntVar(&opts.Rule.Window, "window", stats.DefaultChangeRule.Window, "previous runs the rolling median and noise are taken over")
	fl.Float64Var(&minChange, "min-change", minChange, "smallest departure from the rolling median that is a change, in `PERCENT`")
	fl.BoolVar(&opts.KeepEdges, "keep-edges", false, "keep the first and last step of each trace")
	fl.StringVar(&opts.StepsBy, "steps-by", "", "find steps by a kernel that runs once per step: RE2 `PATTERN` on kernel short names")
	fl.BoolVar(&opts.FailOnRegress, "fail-on-regression", false, "exit 3 while the newest run stays beyond the level before a lasting shift to slower")
	_ = cmd.RegisterFlagCompletionFunc("stage", cobra.FixedCompletions(append(slices.Clone(vocab.Stages), "all"), cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("metric", cobra.FixedCompletions(queries.HistoryMetrics, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func (o *HistoryOptions) parse(stage string, tags []string, minChange float64) error {
	n := 0
	for _, s := range []string{o.Kernel, o.Family, o.Metric} {
		if s != "" {
			n++
		}
	}
	if n != 1 {
		return usagef("give exactly one of --kernel PATTERN, --family F or --metric %s", strings.Join(queries.HistoryMetrics, "|"))
	}
	if o.Kernel != "" {
		if _, err := regexp.Compile(o.Kernel); err != nil {
			return usagef("--kernel %q: %v", o.Kernel, err)
		}
	}
	if o.Metric != "" && !slices.Contains(queries.HistoryMetrics, o.Metric) {
		return usagef("--metric %q: want %s", o.Metric, strings.Join(queries.HistoryMetrics, ", "))
	}
	st, err := stageFlag(stage)
	if err != nil {
		return err
	}
	o.Stage = st
	if o.Rank < 0 {
		return usagef("--rank %d: want a rank number (0, 1, ...)", o.Rank)
	}
	parsed, err := parseTags(tags)
	if err != nil {
		return err
	}
	for _, t := range tags {
		k, _, _ := strings.Cut(t, "=")
		o.Tags = append(o.Tags, k+"="+parsed[k])
	}
	switch {
	case o.Last < 0:
		return usagef("--last %d: want 0 (all) or more", o.Last)
	case o.Rule.Window < 1:
		return usagef("--window %d: want 1 or more", o.Rule.Window)
	case minChange < 0:
		return usagef("--min-change %v: want a percentage >= 0", minChange)
	}
	o.Rule.MinChange = minChange / 100
	if err := ingest.CheckStepsBy(o.StepsBy); err != nil {
		return &usageError{err}
	}
	return nil
}

func historyRun(opts *HistoryOptions) error {
	w, err := opts.Warehouse(opts.Ctx, false)
	if err != nil {
		return err
	}
	defer w.Close()
	rep, err := historyBuild(opts, w)
	if err != nil {
		return err
	}
	if opts.Format == report.CSV {
		err = report.Render(opts.IO.Out, report.CSV, report.Doc{Blocks: []any{report.HistoryCSVTable(rep)}})
	} else {
		err = report.Render(opts.IO.Out, opts.Format, report.HistoryDoc(rep, opts.Format))
	}
	if err != nil {
		return err
	}
	d, line := rep.Decide(opts.FailOnRegress)
	switch d {
	case analysis.Regression:
		fmt.Fprintln(opts.IO.ErrOut, line)
		return &silentError{exitRegression}
	case analysis.CannotDecide:
		return errors.New(line)
	}
	if line != "" {
		fmt.Fprintln(opts.IO.ErrOut, line)
	}
	return nil
}

// historyBuild selects and orders the runs, finds again, for this command
// alone, the steps of runs whose steps were found another way than asked
// (ingest.ReadSteps), and builds the history: what `history` prints and
// `report --history` draws.
func historyBuild(opts *HistoryOptions, w *schema.Warehouse) (*analysis.HistoryReport, error) {
	ctx := opts.Ctx
	rows, err := queries.RunsTagged(ctx, w.DB, opts.Tags)
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		if len(opts.Tags) > 0 {
			return nil, fmt.Errorf("no run of %s carries %s", w.Path, strings.Join(opts.Tags, " and "))
		}
		return nil, &target.EmptyError{Warehouse: w.Path}
	}
	slices.Reverse(rows) // oldest first
	var runs []analysis.HistoryRunInfo
	var untagged []string
	for _, r := range rows {
		info := analysis.HistoryRunInfo{RunID: r.RunID, Label: r.Label, IngestedAt: r.IngestedAt, Tags: r.Tags}
		if opts.By != "" {
			v, ok := tagValue(r.Tags, opts.By)
			if !ok {
				untagged = append(untagged, r.Label)
				continue
			}
			info.By = v
		}
		runs = append(runs, info)
	}
	if opts.By != "" {
		if len(runs) == 0 {
			return nil, fmt.Errorf("no selected run carries tag %s (--by)", opts.By)
		}
		slices.SortStableFunc(runs, func(a, b analysis.HistoryRunInfo) int { return naturalCompare(a.By, b.By) })
	}
	if opts.Last > 0 && len(runs) > opts.Last {
		runs = runs[len(runs)-opts.Last:]
	}
	if err := checkHistoryRank(rows, runs, opts.Rank); err != nil {
		return nil, err
	}
	if opts.Family != "" {
		families, err := queries.HistoryFamilies(ctx, w.DB)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(families, opts.Family) {
			return nil, fmt.Errorf("unknown family %s; families: %s", opts.Family, strings.Join(families, ", "))
		}
	}
	// Steps found another way than asked are found again for this command
	// alone, as compare does.
	ids := make([]int64, len(runs))
	for i, r := range runs {
		ids[i] = r.RunID
	}
	q, err := ingest.ReadSteps(ctx, w.DB, ids, opts.StepsBy)
	if err != nil {
		return nil, err
	}
	defer q.Close()
	fresh, err := queries.StepsFresh(ctx, q, ids)
	if err != nil {
		return nil, err
	}
	var freshIDs []int64
	for _, id := range ids {
		if fresh[id] {
			freshIDs = append(freshIDs, id)
		}
	}
	p := queries.HistoryStepsParams{Runs: ids, FreshRuns: freshIDs, Rank: opts.Rank, KeepEdges: opts.KeepEdges}
	ro := analysis.HistoryOptions{Rank: opts.Rank, Stage: opts.Stage, Tags: opts.Tags, By: opts.By, KeepEdges: opts.KeepEdges, Rule: opts.Rule}
	if opts.Stage != "" {
		p.Stage = sql.NullString{String: opts.Stage, Valid: true}
	}
	switch {
	case opts.Metric != "":
		p.Metric = sql.NullString{String: opts.Metric, Valid: true}
		ro.Series, ro.Match = analysis.SeriesMetric, opts.Metric
	case opts.Family != "":
		p.Family = sql.NullString{String: opts.Family, Valid: true}
		ro.Series, ro.Match = analysis.SeriesFamily, opts.Family
	default:
		p.Pattern = sql.NullString{String: opts.Kernel, Valid: true}
		ro.Series, ro.Match = analysis.SeriesKernel, opts.Kernel
	}
	steps, err := queries.HistorySteps(ctx, q, p)
	if err != nil {
		return nil, err
	}
	rep := analysis.NewHistory(runs, steps, ro)
	if !rep.HasValues() {
		where := stepsWhere(opts.Stage, false, opts.Rank)
		switch {
		case len(steps) == 0:
			return nil, fmt.Errorf("no selected run has %s", where)
		case opts.Family != "":
			return nil, fmt.Errorf("no kernel of family %s in the selected runs' %s", opts.Family, where)
		default:
			return nil, fmt.Errorf("no kernel matches %q in the selected runs' %s", opts.Kernel, where)
		}
	}
	if len(untagged) > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%d run(s) without tag %s left out: %s", len(untagged), opts.By, strings.Join(untagged, ", ")))
	}
	return rep, nil
}

// checkHistoryRank refuses a rank no selected run has (rows: the runs
// with their ranks; runs: those selected).
func checkHistoryRank(rows []queries.RunsRow, runs []analysis.HistoryRunInfo, rank int64) error {
	selected := map[int64]bool{}
	for _, r := range runs {
		selected[r.RunID] = true
	}
	var ranks []int64
	for _, r := range rows {
		if !selected[r.RunID] {
			continue
		}
		for _, rk := range r.Ranks {
			if !slices.Contains(ranks, rk) {
				ranks = append(ranks, rk)
			}
		}
	}
	if len(ranks) == 0 || slices.Contains(ranks, rank) {
		return nil
	}
	slices.Sort(ranks)
	s := make([]string, len(ranks))
	for i, r := range ranks {
		s[i] = strconv.FormatInt(r, 10)
	}
	return fmt.Errorf("no rank %d in the selected runs (ranks: %s); see --rank", rank, strings.Join(s, ", "))
}

// parseHistoryArgs parses one `report --history` value: the flags of
// `tracehouse history`, split like a shell would ('...' and "..." quote,
// \ escapes), through history's own command, so that both take the same
// flags with the same checks. Mistakes are usage errors.
func parseHistoryArgs(f *Factory, value string) (*HistoryOptions, error) {
	words, err := splitWords(value)
	if err != nil {
		return nil, usagef("--history %q: %v", value, err)
	}
	if len(words) == 0 { // and cobra would read os.Args
		return nil, usagef("--history %q: give the flags of 'tracehouse history', e.g. --history '--metric step_time'", value)
	}
	var got *HistoryOptions
	cmd := newCmdHistory(f, func(o *HistoryOptions) error { got = o; return nil })
	cmd.SetArgs(words)
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	if err := cmd.Execute(); err != nil {
		return nil, usagef("--history %q: %v (it takes the flags of 'tracehouse history')", value, err)
	}
	if got == nil { // --help
		return nil, usagef("--history %q: give the flags of 'tracehouse history' (see 'tracehouse history --help')", value)
	}
	if got.FailOnRegress {
		return nil, usagef("--history %q: --fail-on-regression gates 'tracehouse history', not a report", value)
	}
	return got, nil
}

// splitWords splits s into words at unquoted blanks: '...' keeps its
// text as is, "..." and a bare \ let \ escape the next character.
func splitWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	var quote rune
	escaped := false
	for _, r := range s {
		switch {
		case escaped:
			cur.WriteRune(r)
			escaped = false
		case quote == '\'':
			if r == '\'' {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\\':
			escaped, inWord = true, true
		case quote == '"':
			if r == '"' {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case unicode.IsSpace(r):
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	switch {
	case escaped:
		return nil, errors.New("a \\ ends it")
	case quote != 0:
		return nil, fmt.Errorf("unterminated %c quote", quote)
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// wrapText breaks s into lines of at most width bytes at spaces.
func wrapText(s string, width int) string {
	var b strings.Builder
	line := 0
	for i, w := range strings.Fields(s) {
		if i > 0 {
			if line+1+len(w) > width {
				b.WriteByte('\n')
				line = 0
			} else {
				b.WriteByte(' ')
				line++
			}
		}
		b.WriteString(w)
		line += len(w)
	}
	return b.String()
}

// tagValue is the value of tag key among "key=value" tags.
func tagValue(tags []string, key string) (string, bool) {
	for _, t := range tags {
		if k, v, ok := strings.Cut(t, "="); ok && k == key {
			return v, true
		}
	}
	return "", false
}

// naturalCompare orders strings with their digit runs compared as numbers:
// 0.4.9 < 0.4.10, run2 < run10; otherwise byte order.
func naturalCompare(a, b string) int {
	for a != "" && b != "" {
		da, db := digitsPrefix(a), digitsPrefix(b)
		if da != "" && db != "" {
			na, nb := strings.TrimLeft(da, "0"), strings.TrimLeft(db, "0")
			if c := compareInts(na, nb); c != 0 {
				return c
			}
			a, b = a[len(da):], b[len(db):]
			continue
		}
		if a[0] != b[0] {
			if a[0] < b[0] {
				return -1
			}
			return 1
		}
		a, b = a[1:], b[1:]
	}
	return len(a) - len(b)
}

func digitsPrefix(s string) string {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i]
}

// compareInts compares decimal digit strings without leading zeros.
func compareInts(a, b string) int {
	if len(a) != len(b) {
		return len(a) - len(b)
	}
	return strings.Compare(a, b)
}
