package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"

	"github.com/tracehouse/tracehouse/analysis"
	"github.com/tracehouse/tracehouse/assemble"
	"github.com/tracehouse/tracehouse/report"
	"github.com/tracehouse/tracehouse/synth"
)

// Hostile names: a kernel, a run label and a model that would be markup.
const (
	xssKernel  = `<img src=x onerror=alert(1)>`
	xssLabel   = `"><script>`
	xssModel   = `evil/<svg onload=alert(3)>`
	pipeKernel = `pipe|kernel\|x`
)

// TestReportEndToEnd ingests the demo and one hostile run once into a
// warehouse the subtests share read-only.
func TestReportEndToEnd(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	if _, err := synth.Generate(synth.Options{Dir: root, Run: xssLabel, Framework: synth.SGLang, Stage: synth.StageDecode,
		Model: xssModel, Steps: 6, Seed: 11, Edits: []synth.Edit{
			{Match: attentionMatch, Into: []string{xssKernel}},
			{Match: "act_and_mul", Into: []string{pipeKernel}},
		}}); err != nil {
		t.Fatal(err)
	}
	db := demoCopy(t)
	if code, _, stderr := runCmd(t, "--db", db, "ingest", "--tag", "evil=yes", "--tag", "kind=xss", root); code != 0 {
		t.Fatalf("ingest the hostile run: exit %d: %s", code, stderr)
	}
	for _, c := range []struct {
		name string
		test func(*testing.T, string)
	}{
		{"Flags", testReportFlags},
		{"Hostile", testReportHostile},
		{"Whole", testReportWhole},
		{"History", testReportHistory},
		{"DocsScreenshot", testReportDocsScreenshot},
	} {
		t.Run(c.name, func(t *testing.T) { c.test(t, db) })
	}
}

func runReport(db string, args ...string) (int, string, string) {
	io, out, errOut := testIO("")
	code := run(append([]string{"--db", db, "report"}, args...), io, testEnv)
	return code, out.String(), errOut.String()
}

// testReportFlags: mistakes are usage errors (exit 2) caught before the
// warehouse is opened, those of a --history value by history's own flags.
func testReportFlags(t *testing.T, _ string) {
	missing := filepath.Join(t.TempDir(), "none.duckdb")
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "--markdown FILE and/or --html FILE"},
		{[]string{"--markdown", "-", "--html", "-"}, "both write to standard output"},
		{[]string{"--markdown", "a", "--html", "a"}, "same file"},
		{[]string{"--html", "a", "--tag", "k=v", "run"}, "without RUN"},
		{[]string{"--html", "a", "--tag", "novalue"}, "want KEY=VALUE"},
		{[]string{"--html", "a", "--compare", "one"}, "want BASE,CANDIDATE"},
		{[]string{"--html", "a", "--compare", "a,b,c"}, "want BASE,CANDIDATE"},
		{[]string{"--html", "a", "--history", "metric=step_time"}, "at most 0 argument"},
		{[]string{"--html", "a", "--history", "--metric nope"}, "want step_time, busy, exposed_comm"},
		{[]string{"--html", "a", "--history", "--metric busy --bogus"}, "unknown flag: --bogus"},
		{[]string{"--html", "a", "--history", "--kernel busy --family gemm"}, "exactly one of --kernel"},
		{[]string{"--html", "a", "--history", "--kernel '(unclosed'"}, "missing closing )"},
		{[]string{"--html", "a", "--history", `--kernel "abc`}, "unterminated \" quote"},
		{[]string{"--html", "a", "--history", ""}, "give the flags of 'tracehouse history'"},
		{[]string{"--html", "a", "--history", "--help"}, "give the flags of 'tracehouse history'"},
		{[]string{"--html", "a", "--history", "--metric busy --fail-on-regression"}, "--fail-on-regression gates"},
		{[]string{"--html", "a", "--stage", "warmup"}, "--stage"},
		{[]string{"--html", "a", "--rank", "-1"}, "--rank"},
		{[]string{"--html", "a", "--min-share", "101"}, "--min-share"},
		{[]string{"--html", "a", "--timelines", "-1"}, "--timelines"},
		{[]string{"--html", "a", "--format", "json"}, "--format does not apply"},
	} {
		code, _, stderr := runReport(missing, c.args...)
		if code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d mentioning %q", c.args, code, stderr, exitUsage, c.want)
		}
	}
	if _, err := os.Stat(missing); err == nil {
		t.Errorf("a usage error created the warehouse")
	}
}

// testReportHostile: the hostile run, chosen by its tags, written by the
// command: its kernel, label and model show up as text in both formats.
func testReportHostile(t *testing.T, db string) {
	dir := t.TempDir()
	md, page := filepath.Join(dir, "x.md"), filepath.Join(dir, "x.html")
	code, _, stderr := runReport(db, "--markdown", md, "--html", page, "--tag", "evil=yes", "--tag", "kind=xss", "--min-share", "0")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "report: [1/1] "+xssLabel+"\n") || !strings.Contains(stderr, "wrote "+page) {
		t.Errorf("stderr lacks progress or the written files:\n%s", stderr)
	}
	h, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	checkHostileHTML(t, string(h))

	m, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	if tables := checkMarkdown(t, m); tables < 3 {
		t.Errorf("%d markdown tables, want at least the kernel, overlap and fusion tables", tables)
	}
	var rendered bytes.Buffer
	if err := goldmark.New(goldmark.WithExtensions(extension.GFM)).Convert(m, &rendered); err != nil {
		t.Fatal(err)
	}
	out := rendered.String()
	for _, bad := range []string{"<img", "<svg", "<script"} {
		if strings.Contains(out, bad) {
			t.Errorf("rendered markdown holds %q", bad)
		}
	}
	for _, want := range []string{"&lt;img src=x onerror=alert(1)&gt;", "&quot;&gt;&lt;script&gt;", "evil/&lt;svg onload=alert(3)&gt;", `pipe|kernel\|x`} {
		if !strings.Contains(out, want) {
			t.Errorf("rendered markdown lacks the text %q", want)
		}
	}
	// Only the hostile run was selected.
	if strings.Count(string(m), "\n#### Run ") != 1 {
		t.Errorf("--tag selected other runs too")
	}

	// - writes to stdout; a run named as tag:KEY=VALUE.
	code, stdout, stderr := runReport(db, "--markdown", "-", "tag:kind=xss", "--stage", "decode")
	if code != 0 || !strings.HasPrefix(stdout, "# tracehouse report\n") || !strings.Contains(stdout, "#### Run \">\\<script>\n") {
		t.Errorf("--markdown -: exit %d, stderr %s\n%s", code, stderr, stdout)
	}
}

func checkHostileHTML(t *testing.T, page string) {
	t.Helper()
	for _, bad := range []string{"<img", "<svg onload", xssLabel} {
		if strings.Contains(page, bad) {
			t.Errorf("page holds %q unescaped", bad)
		}
	}
	if n := strings.Count(page, "<script"); n != 1 {
		t.Errorf("%d <script elements, want 1", n)
	}
	for _, want := range []string{"&lt;img src=x onerror=alert(1)&gt;", "&#34;&gt;&lt;script&gt;", "evil/&lt;svg onload=alert(3)&gt;"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks the escaped text %q", want)
		}
	}
}

// checkMarkdown parses md (CommonMark, GFM tables) and fails on a table
// row whose cell count differs from its header's, on raw HTML or an
// image, and on a link that is not to the document's own headings; it
// returns the number of tables.
func checkMarkdown(t *testing.T, md []byte) int {
	t.Helper()
	doc := goldmark.New(goldmark.WithExtensions(extension.Table)).Parser().Parse(text.NewReader(md))
	tables := 0
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *east.Table:
			tables++
			want := n.FirstChild().ChildCount()
			for row := n.FirstChild(); row != nil; row = row.NextSibling() {
				if row.ChildCount() != want {
					t.Errorf("table %d: a row of %d cells under a header of %d", tables, row.ChildCount(), want)
				}
			}
			if len(n.Alignments) != want {
				t.Errorf("table %d: %d alignments for %d columns", tables, len(n.Alignments), want)
			}
		case *ast.Link:
			if !strings.HasPrefix(string(n.Destination), "#") {
				t.Errorf("link to %q", n.Destination)
			}
		case *ast.RawHTML, *ast.HTMLBlock, *ast.Image, *ast.AutoLink:
			t.Errorf("markdown holds a %s", n.Kind())
		}
		return ast.WalkContinue, nil
	})
	return tables
}

// reportOpts are the options of `report` over every run with a
// comparison and the history of step time, as the command would parse
// them.
func reportOpts(t *testing.T, db string, targets ...string) *ReportOptions {
	t.Helper()
	io, _, _ := testIO("")
	f := &Factory{IO: io, Getenv: testEnv, db: db}
	o := &ReportOptions{common: common{IO: io, Warehouse: f.warehouse(), Ctx: context.Background()},
		Targets: targets, Title: "tracehouse report", Compare: []string{"sglang-llama", "sglang-formal"},
		Sections: defaultSections(), Timelines: 3, History: []string{"--metric step_time"}}
	for _, h := range o.History {
		ho, err := parseHistoryArgs(f, h)
		if err != nil {
			t.Fatal(err)
		}
		o.histories = append(o.histories, ho)
	}
	return o
}

func renderBoth(t *testing.T, d *report.Document) (md, page []byte) {
	t.Helper()
	var m, h bytes.Buffer
	if err := report.Render(&m, report.Markdown, d.Markdown()); err != nil {
		t.Fatal(err)
	}
	if err := report.RenderHTML(&h, d, report.HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	return m.Bytes(), h.Bytes()
}

// testReportWhole: every run plus a comparison: valid markdown tables, and
// in headless Chromium the charts the model asks for, no script error and
// no request leaving the page. (That a report's bytes do not change from
// one build to the next: TestReportGoldenDemo's golden files, written by
// other processes, and testReportHistory's command run twice.)
func testReportWhole(t *testing.T, db string) {
	d1, ierr, err := reportBuild(reportOpts(t, db))
	if err != nil || ierr != nil {
		t.Fatal(err, ierr)
	}
	md, page := renderBoth(t, d1)
	if d1.Runs() != len(demoLabels)+1 || d1.Compare == nil {
		t.Fatalf("%d runs (compare %v), want the demo's %d and the hostile one with a comparison", d1.Runs(), d1.Compare != nil, len(demoLabels))
	}
	if tables := checkMarkdown(t, md); tables < 3*len(demoLabels) {
		t.Errorf("only %d markdown tables", tables)
	}
	checkHostileHTML(t, string(page))
	t.Logf("markdown %d KiB, HTML %d KiB", len(md)/1024, len(page)/1024)

	chromium := findChromium(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "report.html")
	if err := os.WriteFile(file, page, 0o644); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(dir, "report.png")
	b := runChromium(t, chromium, file, shot, "1280,1600")
	checkScreenshot(t, shot)

	dom := b.dom
	root := regexp.MustCompile(`<html[^>]*>`).FindString(dom)
	if !strings.Contains(root, `data-ready="1"`) {
		t.Errorf("the page's script did not finish: %s", root)
	}
	if strings.Contains(root, "data-script-errors") {
		t.Errorf("the page recorded a script error: %s", root)
	}
	for _, l := range b.console {
		t.Errorf("console: %s", l)
	}
	for _, u := range b.requests {
		t.Errorf("the page requested %s", u)
	}
	if strings.Contains(dom, "<img") || strings.Count(dom, "<script") != 1 {
		t.Errorf("the DOM holds an element from a trace's strings")
	}
	if !strings.Contains(dom, "&lt;img src=x onerror=alert(1)&gt;") {
		t.Errorf("the hostile kernel name is not shown as text")
	}

	// The charts the model asks for, each with its bars.
	want := map[string][]int{}
	for _, m := range d1.Models {
		for _, f := range m.Frameworks {
			for _, r := range f.Runs {
				fam := 0
				for _, st := range r.Stages {
					fam += len(st.Families)
					if len(st.Kernels) > 0 {
						want["kernels"] = append(want["kernels"], min(10, len(st.Kernels)))
					}
					for range min(3, len(st.Overlap)) {
						want["timeline"] = append(want["timeline"], -1) // events: checked against data-bars
					}
				}
				want["families"] = append(want["families"], fam)
			}
		}
	}
	for _, st := range d1.Compare.Stages {
		want["delta families"] = append(want["delta families"], len(st.Decomposition))
		want["delta kernels"] = append(want["delta kernels"], min(15, len(st.Kernels)))
	}
	// A history chart's "bars" are its points, one per run of the stage
	// that has a value (an absent run is a gap, drawn as no point).
	for _, h := range d1.History {
		for _, st := range h.Stages {
			n := 0
			for _, p := range st.Runs {
				if p.Absent == "" {
					n++
				}
			}
			want["history"] = append(want["history"], n)
		}
	}
	if len(want["history"]) < 2 {
		t.Errorf("the step-time history has %d stage(s), want the demo's several", len(want["history"]))
	}
	// What the browser shows is what `tracehouse history` says, asked
	// separately.
	cli := reportHistoryJSON(t, db, "--metric", "step_time")
	checkHistoryCharts(t, "chart in the DOM", historyCharts(t, dom), []analysis.HistoryReport{cli})
	got := svgCharts(t, dom)
	for kind, bars := range want {
		if len(got[kind]) != len(bars) {
			t.Errorf("%d %q charts in the DOM, want %d", len(got[kind]), kind, len(bars))
			continue
		}
		for i, n := range bars {
			if g := got[kind][i]; g == 0 || n >= 0 && g != n {
				t.Errorf("%s chart %d: %d bars, want %d", kind, i, g, n)
			}
		}
	}
	t.Logf("charts: %d families, %d kernels, %d timelines, %d+%d compare, %d history", len(got["families"]), len(got["kernels"]),
		len(got["timeline"]), len(got["delta families"]), len(got["delta kernels"]), len(got["history"]))
}

// reportHistoryMemo holds the histories testReportWhole and
// testReportHistory read of TestReportEndToEnd's warehouse (read-only to
// them): db and a history's args joined by NUL -> *memoHistory.
var reportHistoryMemo sync.Map

type memoHistory struct {
	once sync.Once
	rep  *analysis.HistoryReport
}

// reportHistory is what `history ARGS --format format` prints on db, its
// report built once per test binary by the command's steps (as
// builtReport's) and printed by its print step.
func reportHistory(t *testing.T, db, format string, args ...string) string {
	t.Helper()
	v, _ := reportHistoryMemo.LoadOrStore(strings.Join(append([]string{db}, args...), "\x00"), &memoHistory{})
	m := v.(*memoHistory)
	m.once.Do(func() {
		opts := parseCmd(t, db, "table", newCmdHistory, args...)
		w, err := opts.Warehouse(opts.Ctx, false)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		if m.rep, err = assemble.History(opts.Ctx, w, opts.HistoryOptions); err != nil {
			t.Fatal(err)
		}
	})
	if m.rep == nil {
		t.Fatalf("history %v: its build failed (see the first failure)", args)
	}
	o := parseCmd(t, "unused.duckdb", format, newCmdHistory, args...)
	io, out, _ := testIO("")
	o.IO = io
	_ = historyPrint(o, m.rep) // (the exit status: the goldens')
	return out.String()
}

// reportHistoryJSON is reportHistory's JSON, decoded.
func reportHistoryJSON(t *testing.T, db string, args ...string) analysis.HistoryReport {
	t.Helper()
	out := reportHistory(t, db, "json", args...)
	var r analysis.HistoryReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("history %v: %v\n%s", args, err, out)
	}
	return r
}

// svgCharts counts, per chart kind, the bars each chart of the DOM holds,
// checking them against the chart's data-bars.
func svgCharts(t *testing.T, dom string) map[string][]int {
	t.Helper()
	out := map[string][]int{}
	open := regexp.MustCompile(`<svg class="chart ([a-z ]+)"[^>]*data-bars="(\d+)"`)
	for _, part := range strings.Split(dom, "</svg>") {
		i := strings.LastIndex(part, "<svg ")
		if i < 0 {
			continue
		}
		m := open.FindStringSubmatch(part[i:])
		if m == nil {
			t.Errorf("an svg without class or data-bars: %.200s", part[i:])
			continue
		}
		// Bars, or a line chart's points.
		bars := strings.Count(part[i:], `class="bar `) + strings.Count(part[i:], `class="pt`)
		if fmt.Sprint(bars) != m[2] {
			t.Errorf("%s chart: %d bars drawn, data-bars says %s", m[1], bars, m[2])
		}
		out[m[1]] = append(out[m[1]], bars)
	}
	return out
}

// reportHistories are the --history values testReportHistory gives, with
// the same flags as `tracehouse history` arguments, written out.
var reportHistories = []struct {
	value string
	args  []string
}{
	{"--metric step_time", []string{"--metric", "step_time"}},
	{"--kernel '" + attentionMatch + "' --stage decode --window 3", []string{"--kernel", attentionMatch, "--stage", "decode", "--window", "3"}},
}

// testReportHistory: `report --history FLAGS` shows, per history and
// stage, the table `tracehouse history FLAGS` prints (valid CommonMark,
// its cells those of history's JSON) and, in HTML, a line chart with a
// point per run at history's median and a ring per change point; the
// same command twice writes the same bytes.
func testReportHistory(t *testing.T, db string) {
	dir := t.TempDir()
	write := func(n int) (md, page []byte) {
		t.Helper()
		mdf, pagef := filepath.Join(dir, fmt.Sprintf("h%d.md", n)), filepath.Join(dir, fmt.Sprintf("h%d.html", n))
		args := []string{"--markdown", mdf, "--html", pagef, "tag:kind=xss"}
		for _, h := range reportHistories {
			args = append(args, "--history", h.value)
		}
		code, _, stderr := runReport(db, args...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		for _, h := range reportHistories {
			if !strings.Contains(stderr, "report: history "+h.value+"\n") {
				t.Errorf("stderr lacks the history's progress line:\n%s", stderr)
			}
		}
		var err error
		if md, err = os.ReadFile(mdf); err != nil {
			t.Fatal(err)
		}
		if page, err = os.ReadFile(pagef); err != nil {
			t.Fatal(err)
		}
		return md, page
	}
	md, page := write(1)
	md2, page2 := write(2)
	if !bytes.Equal(md, md2) || !bytes.Equal(page, page2) {
		t.Errorf("the same report --history twice differs")
	}

	var cli []analysis.HistoryReport
	var stages int
	for _, h := range reportHistories {
		r := reportHistoryJSON(t, db, h.args...)
		if len(r.Stages) == 0 {
			t.Fatalf("history %v has no stage", h.args)
		}
		cli = append(cli, r)
		stages += len(r.Stages)
		// The markdown holds history's own tables, row for row.
		out := reportHistory(t, db, "markdown", h.args...)
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "| ") && !strings.Contains(string(md), l+"\n") {
				t.Errorf("report markdown lacks history's row %q", l)
			}
		}
		if !strings.Contains(string(md), "\n## History: "+r.What+"\n") {
			t.Errorf("no section for history %q", r.What)
		}
	}
	// The decode series of step time holds the demo's decode runs and the
	// hostile one; the demo's TokenSpeed run departs from the SGLang ones.
	if n := len(cli[0].Stages[1].Runs); cli[0].Stages[1].Stage != "decode" || n < 5 || len(cli[0].Stages[1].ChangePoints) == 0 {
		t.Errorf("step-time decode series: %+v; want the demo's decode runs with a change point", cli[0].Stages[1])
	}

	// Markdown: valid CommonMark tables, one per stage, whose cells are
	// history's JSON values.
	checkMarkdown(t, md)
	tables := historyTables(md)
	if len(tables) != stages {
		t.Fatalf("%d history tables in the markdown, want %d (one per stage)", len(tables), stages)
	}
	var rows [][]chartPoint
	for _, tb := range tables {
		var pts []chartPoint
		for _, row := range tb {
			if row["µs/step"] == "absent" { // a gap: no point
				continue
			}
			us, err := strconv.ParseFloat(row["µs/step"], 64)
			steps, err2 := strconv.Atoi(row["Steps"])
			if err != nil || err2 != nil {
				t.Errorf("history row %v: µs/step or steps not a number", row)
			}
			change := map[string]string{"": "", "▲ slower": analysis.ChangeSlower, "▼ faster": analysis.ChangeFaster}[strings.TrimSuffix(row["Change"], " (spike)")]
			// (a label's markdown escapes are backslashes; no label here holds one)
			pts = append(pts, chartPoint{label: strings.ReplaceAll(row["Run"], `\`, ""), value: us, change: change, steps: steps})
		}
		rows = append(rows, pts)
	}
	checkHistoryCharts(t, "markdown table", rows, cli)

	// HTML: a chart per stage with history's points and change points.
	checkHistoryCharts(t, "HTML chart", historyCharts(t, string(page)), cli)
	checkHostileHTML(t, string(page))
}

// historyTables are the markdown's history tables (those with a µs/step
// and a "vs previous runs" column), each a list of rows keyed by header.
func historyTables(md []byte) [][]map[string]string {
	doc := goldmark.New(goldmark.WithExtensions(extension.Table)).Parser().Parse(text.NewReader(md))
	cell := func(n ast.Node) string {
		var b strings.Builder
		_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
			if t, ok := c.(*ast.Text); ok && entering {
				b.Write(t.Segment.Value(md))
			}
			return ast.WalkContinue, nil
		})
		return b.String()
	}
	var out [][]map[string]string
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		tb, ok := n.(*east.Table)
		if !entering || !ok {
			return ast.WalkContinue, nil
		}
		var head []string
		for c := tb.FirstChild().FirstChild(); c != nil; c = c.NextSibling() {
			head = append(head, cell(c))
		}
		if !slices.Contains(head, "µs/step") || !slices.Contains(head, "vs previous runs") {
			return ast.WalkSkipChildren, nil
		}
		var rows []map[string]string
		for r := tb.FirstChild().NextSibling(); r != nil; r = r.NextSibling() {
			row := map[string]string{}
			i := 0
			for c := r.FirstChild(); c != nil; c = c.NextSibling() {
				if i < len(head) {
					row[head[i]] = cell(c)
				}
				i++
			}
			rows = append(rows, row)
		}
		out = append(out, rows)
		return ast.WalkSkipChildren, nil
	})
	return out
}

// chartPoint is one run of a history as a chart draws it or a table
// shows it.
type chartPoint struct {
	label, change string
	value         float64 // µs per step
	steps         int     // -1: not shown (charts)
}

// historyCharts reads the page's (or the DOM's) history charts: per chart
// its points, from their tooltips ("LABEL: VALUE µs per step", with
// " (change point: slower)" at a change point), and its rings.
func historyCharts(t *testing.T, page string) (charts [][]chartPoint) {
	t.Helper()
	pt := regexp.MustCompile(`<circle [^>]*class="pt( change (slower|faster))?"[^>]*><title>([^<]*)</title>`)
	tip := regexp.MustCompile(`^(.*): ([0-9.]+) µs per step( \(change point: (slower|faster)\))?$`)
	for _, part := range strings.Split(page, `<svg class="chart history"`)[1:] {
		part = part[:strings.Index(part, "</svg>")]
		var points []chartPoint
		for _, m := range pt.FindAllStringSubmatch(part, -1) {
			tm := tip.FindStringSubmatch(html.UnescapeString(m[3]))
			if tm == nil || tm[4] != m[2] {
				t.Errorf("history point tooltip %q (class %q)", m[3], m[2])
				continue
			}
			v, _ := strconv.ParseFloat(tm[2], 64)
			points = append(points, chartPoint{label: tm[1], value: v, change: m[2], steps: -1})
		}
		rings := strings.Count(part, `class="ring slower"`) + strings.Count(part, `class="ring faster"`)
		marked := 0
		for _, p := range points {
			if p.change != "" {
				marked++
			}
		}
		if rings != marked || !strings.Contains(part, `<polyline points="`) {
			t.Errorf("history chart: %d rings for %d change points, polyline %v", rings, marked, strings.Contains(part, "<polyline"))
		}
		charts = append(charts, points)
	}
	return charts
}

// checkHistoryCharts compares the charts (or tables: kind), in order,
// with the stages of histories as `tracehouse history --format json` gave
// them: a point per run, at its median (to the 0.1 µs shown), with its
// change mark and, in tables, its steps.
func checkHistoryCharts(t *testing.T, kind string, charts [][]chartPoint, hs []analysis.HistoryReport) {
	t.Helper()
	i := 0
	for _, h := range hs {
		for _, st := range h.Stages {
			if i >= len(charts) {
				t.Errorf("no %s for %s, %s", kind, h.What, st.Stage)
				i++
				continue
			}
			c := charts[i]
			i++
			// A point per run with a value; an absent run is a gap.
			var present []analysis.HistoryPoint
			for _, p := range st.Runs {
				if p.Absent == "" {
					present = append(present, p)
				}
			}
			if len(c) != len(present) {
				t.Errorf("%s of %s, %s: %d points, want %d runs", kind, h.What, st.Stage, len(c), len(present))
				continue
			}
			for j, p := range present {
				if c[j].label != p.Label || math.Abs(c[j].value-*p.MedianNS/1e3) > 0.05 || c[j].change != p.Change ||
					c[j].steps >= 0 && c[j].steps != p.Steps {
					t.Errorf("%s of %s, %s, point %d: %+v; want %s at %.3f µs, %d steps, change %q", kind, h.What, st.Stage,
						j+1, c[j], p.Label, *p.MedianNS/1e3, p.Steps, p.Change)
				}
			}
		}
	}
	if i != len(charts) {
		t.Errorf("%d history %ss, want %d", len(charts), kind, i)
	}
}

// testReportDocsScreenshot writes the README's screenshots of the demo
// report when TRACEHOUSE_DOCS_SCREENSHOT names the PNG to write: the top
// of the page (contents, a run's triage header, charts and kernel table)
// there, and its comparison section alone beside it (NAME-compare.png).
func testReportDocsScreenshot(t *testing.T, db string) {
	out := os.Getenv("TRACEHOUSE_DOCS_SCREENSHOT")
	if out == "" {
		t.Skip("set TRACEHOUSE_DOCS_SCREENSHOT=$PWD/docs/report-html.png to rewrite the README's screenshot")
	}
	o := reportOpts(t, db, demoLabels...)
	o.History, o.histories = nil, nil // the README's command has none
	d, _, err := reportBuild(o)
	if err != nil {
		t.Fatal(err)
	}
	_, page := renderBoth(t, d)
	file := filepath.Join(t.TempDir(), "demo.html")
	if err := os.WriteFile(file, page, 0o644); err != nil {
		t.Fatal(err)
	}
	chromium := findChromium(t)
	runChromium(t, chromium, file, out, "1280,1100")
	checkScreenshot(t, out)
	// The same report without its runs: the comparison section at the top.
	cd := *d
	cd.Models = nil
	_, page = renderBoth(t, &cd)
	file = filepath.Join(t.TempDir(), "compare.html")
	if err := os.WriteFile(file, page, 0o644); err != nil {
		t.Fatal(err)
	}
	cmp := strings.TrimSuffix(out, ".png") + "-compare.png"
	runChromium(t, chromium, file, cmp, "1280,1100")
	checkScreenshot(t, cmp)
}

// findChromium is Debian's chromium (or $TRACEHOUSE_CHROMIUM); the test
// skips only when there is none.
func findChromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("TRACEHOUSE_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("chromium not found: install Debian's chromium (apt-get install chromium; .ci/run does) to run the browser test")
	return ""
}

// browserRun is what headless Chromium saw.
type browserRun struct {
	dom      string   // the DOM after the page's script ran
	console  []string // console messages (errors, CSP violations)
	requests []string // URLs the page asked the network for
}

// runChromium loads file in headless Chromium, dumps the DOM, takes a
// screenshot and logs the network. No request can leave the machine:
// every host name resolves to nothing.
func runChromium(t *testing.T, chromium, file, shot, size string) browserRun {
	t.Helper()
	dir := t.TempDir()
	netlog := filepath.Join(dir, "net.json")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--host-resolver-rules=MAP * ~NOTFOUND",
		"--enable-logging=stderr", "--v=0", "--log-net-log="+netlog, "--hide-scrollbars",
		"--window-size="+size, "--screenshot="+shot, "--dump-dom", "file://"+file)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	b := browserRun{dom: stdout.String()}
	for _, l := range strings.Split(stderr.String(), "\n") {
		if strings.Contains(l, ":CONSOLE") {
			b.console = append(b.console, l)
		}
	}
	b.requests = pageRequests(t, netlog)
	return b
}

// pageRequests reads a Chromium net log and returns the URLs of requests
// the page started (the browser's own, initiator "not an origin", are left
// out; they cannot leave the machine either).
func pageRequests(t *testing.T, netlog string) []string {
	t.Helper()
	raw, err := os.ReadFile(netlog)
	if err != nil {
		t.Fatalf("chromium wrote no net log: %v", err)
	}
	var log struct {
		Constants struct {
			LogEventTypes map[string]int `json:"logEventTypes"`
		} `json:"constants"`
		Events []struct {
			Type   int            `json:"type"`
			Params map[string]any `json:"params"`
		} `json:"events"`
	}
	if err := json.Unmarshal(raw, &log); err != nil {
		t.Fatalf("net log: %v", err)
	}
	start, ok := log.Constants.LogEventTypes["URL_REQUEST_START_JOB"]
	if !ok {
		t.Fatalf("net log without URL_REQUEST_START_JOB events")
	}
	var out []string
	for _, e := range log.Events {
		if e.Type != start {
			continue
		}
		url, _ := e.Params["url"].(string)
		initiator, _ := e.Params["initiator"].(string)
		if url == "" || initiator == "not an origin" || strings.HasPrefix(url, "file:") || strings.HasPrefix(url, "data:") {
			continue
		}
		out = append(out, url)
	}
	return out
}

func checkScreenshot(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if b := img.Bounds(); b.Dx() < 1000 || b.Dy() < 800 {
		t.Errorf("screenshot %v", b)
	}
}

// TestReportNetLog: the net-log reader finds a request the page started
// and leaves the browser's own and local files out.
func TestReportNetLog(t *testing.T) {
	t.Parallel()
	log := `{"constants":{"logEventTypes":{"REQUEST_ALIVE":1,"URL_REQUEST_START_JOB":2}},"events":[
{"type":2,"params":{"url":"https://update.example/x","initiator":"not an origin"}},
{"type":2,"params":{"url":"file:///tmp/report.html","initiator":"null"}},
{"type":1,"params":{"url":"http://example.invalid/alive"}},
{"type":2,"phase":2},
{"type":2,"params":{"url":"http://example.invalid/a.png","initiator":"null"}}]}`
	path := filepath.Join(t.TempDir(), "net.json")
	if err := os.WriteFile(path, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := pageRequests(t, path); len(got) != 1 || got[0] != "http://example.invalid/a.png" {
		t.Errorf("page requests %v, want the image only", got)
	}
}
