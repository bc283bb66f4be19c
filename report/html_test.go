package report

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"

	"github.com/tracehouse/tracehouse/analysis"
)

// Hostile strings as they could come from trace files and labels.
const (
	xssKernel = `<img src=x onerror=alert(1)>`
	xssLabel  = `"><script>alert(2)</script>`
	xssModel  = `evil/<svg onload=alert(3)>`
	pipeName  = `a|b\|c [x](javascript:alert(4)) ![i](http://example.invalid/t.png) &lt;b&gt; *em* ` + "`code`"
)

func i64(v int64) *int64 { return &v }

// hostileReport is a triage report whose every trace-derived string is
// hostile, built directly (report tests need no warehouse).
func hostileReport() *TriageReport {
	dom := xssKernel
	st := TriageStage{Stage: "decode", Rank: i64(0), displayName: "decode", hasTotals: true,
		Totals:   TriageTotals{KernelTimeNS: 1_000_000, BusyTimeNS: 900_000, WindowNS: 2_000_000, Streams: 2, GPUEvents: 3},
		Families: []TriageFamily{{Family: "attention", SharePct: 60, GPUTimeNS: 600_000, Launches: 2}, {Family: "other", SharePct: 40, GPUTimeNS: 400_000, Launches: 1}},
		Kernels: []TriageKernel{
			{Kernel: xssKernel, Family: "attention", Category: "compute", GPUTimeNS: 600_000, SharePct: 60, Launches: 2, AvgUS: 300,
				Location: "resolved", Match: "self", Sites: []TriageSite{{Location: "python/" + xssLabel + ".py:1 f"}}},
			{Kernel: pipeName, Family: "other", Category: "other", GPUTimeNS: 400_000, SharePct: 40, Launches: 1, AvgUS: 400, Location: "unmapped"},
		},
		Overlap: []TriageOverlap{{Priority: "P1", Verdict: "headroom", Kernel: pipeName, Scope: xssLabel, Dominant: &dom,
			DepRisk: "low", Recommendation: "try overlap", Signal: "400.0 us, under " + dom}},
		Fusions: []TriageFusion{{Pattern: xssLabel, Status: "opportunity", Confidence: "confirmed", EvidenceKernels: []string{xssKernel, pipeName},
			Locations: []string{xssLabel}, FusedPath: xssKernel, Rationale: pipeName}},
	}
	r := &TriageReport{Mode: ModeSingle, Framework: "SGLang", frameworkID: "sglang", Run: xssLabel, RunID: 7, Model: xssModel,
		Rank: i64(0), Traces: []TriageTrace{{Run: xssLabel, Path: "/tmp/" + xssLabel + "/t.json", Stage: "decode"}},
		Stages: []TriageStage{st}, Notes: []string{xssKernel}}
	r.windows = map[string][]Timeline{"decode": {{Title: "P1 " + xssKernel, FromNS: 0, ToNS: 100_000, FocusID: 2, Events: []TimelineEvent{
		{KernelID: 1, Name: pipeName, Category: "other", Stream: 7, HasStream: true, TSNS: 0, DurNS: 50_000},
		{KernelID: 2, Name: xssKernel, Category: "compute", Stream: 22, HasStream: true, TSNS: 20_000, DurNS: 60_000},
	}}}}
	return r
}

func hostileDocument() *Document {
	d := NewDocument("Report "+xssLabel, []*TriageReport{hostileReport()})
	h := testHistory([]string{xssLabel, "b", "c", "d", xssKernel}, []int64{100, 101, 99, 100, 150}, "decode")
	h.Match, h.What = xssKernel, "time per step of the kernels matching "+xssKernel
	d.History = []*analysis.HistoryReport{h}
	return d
}

// TestReportHTMLEscapes: every hostile string shows up as text; the page
// holds one script (ours) and no element or handler from the data.
func TestReportHTMLEscapes(t *testing.T) {
	var b bytes.Buffer
	if err := RenderHTML(&b, hostileDocument(), HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, bad := range []string{"<img", "<svg onload", "<script>alert", "onerror=alert(1)>", `href="javascript`} {
		if strings.Contains(page, bad) {
			t.Errorf("page holds %q unescaped", bad)
		}
	}
	if n := strings.Count(page, "<script"); n != 1 {
		t.Errorf("%d <script elements, want 1 (ours)", n)
	}
	// Attribute values hold escaped text (no '>' or '"' in them).
	quoted := regexp.MustCompile(`"[^"]*"`)
	handler := regexp.MustCompile(`(?i)\son[a-z]+\s*=`)
	for _, tag := range regexp.MustCompile(`<[a-zA-Z][^>]*>`).FindAllString(page, -1) {
		if handler.MatchString(quoted.ReplaceAllString(tag, `""`)) {
			t.Errorf("inline event handler in %s", tag)
		}
	}
	for _, want := range []string{"&lt;img src=x onerror=alert(1)&gt;", "&#34;&gt;&lt;script&gt;alert(2)&lt;/script&gt;", "evil/&lt;svg onload=alert(3)&gt;"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks the escaped text %q", want)
		}
	}
	// The page allows nothing but its own style and script.
	if !strings.Contains(page, `content="default-src &#39;none&#39;; style-src &#39;sha256-`) {
		t.Errorf("no Content-Security-Policy denying by default")
	}
}

// TestReportMarkdownEscapes: the markdown parses (CommonMark with GFM
// tables) into tables whose every row has its header's cell count, with
// no raw HTML, link or image; the hostile names come back as text.
func TestReportMarkdownEscapes(t *testing.T) {
	var b bytes.Buffer
	if err := Render(&b, Markdown, hostileDocument().Markdown()); err != nil {
		t.Fatal(err)
	}
	md := b.Bytes()
	tables := CheckMarkdownTables(t, md)
	if tables < 4 {
		t.Errorf("%d tables, want the kernel, overlap, fusion and history tables", tables)
	}
	var html bytes.Buffer
	if err := goldmark.New(goldmark.WithExtensions(extension.GFM)).Convert(md, &html); err != nil {
		t.Fatal(err)
	}
	out := html.String()
	for _, bad := range []string{"<img", "<svg", "<script", "<a href=\"javascript", "<em>", "<code>code"} {
		if strings.Contains(out, bad) {
			t.Errorf("markdown renders %q:\n%s", bad, out)
		}
	}
	for _, want := range []string{"&lt;img src=x onerror=alert(1)&gt;", "a|b\\|c [x](javascript:alert(4))", "&amp;lt;b&amp;gt;"} {
		if !strings.Contains(out, want) {
			t.Errorf("rendered markdown lacks the text %q", want)
		}
	}
}

// CheckMarkdownTables parses md as CommonMark with GFM tables and fails
// when a table row's cell count differs from its header's, or when it
// holds raw HTML, an image, or a link anywhere but to its own headings.
// It returns the number of tables.
func CheckMarkdownTables(t testing.TB, md []byte) int {
	t.Helper()
	p := goldmark.New(goldmark.WithExtensions(extension.Table)).Parser()
	doc := p.Parse(text.NewReader(md))
	tables := 0
	err := ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *east.Table:
			tables++
			want := -1
			for row := n.FirstChild(); row != nil; row = row.NextSibling() {
				cells := row.ChildCount()
				if want < 0 {
					want = cells
				} else if cells != want {
					t.Errorf("table %d: a row of %d cells under a header of %d: %q", tables, cells, want, rowText(row, md))
				}
			}
		case *ast.Link:
			// the table of contents links to the document's own headings
			if !strings.HasPrefix(string(n.Destination), "#") {
				t.Errorf("markdown links to %q: %q", n.Destination, nodeText(n, md))
			}
		case *ast.RawHTML, *ast.HTMLBlock, *ast.Image, *ast.AutoLink:
			t.Errorf("markdown holds a %s: %q", n.Kind(), nodeText(n, md))
		}
		return ast.WalkContinue, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return tables
}

func rowText(n ast.Node, src []byte) string {
	var parts []string
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		parts = append(parts, nodeText(c, src))
	}
	return strings.Join(parts, " | ")
}

func nodeText(n ast.Node, src []byte) string {
	var b strings.Builder
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if t, ok := c.(*ast.Text); ok && entering {
			b.Write(t.Segment.Value(src))
		}
		return ast.WalkContinue, nil
	})
	return b.String()
}

// TestReportMarkdownTOC: every contents entry links to the anchor GitHub
// gives its heading, repeats numbered.
func TestReportMarkdownTOC(t *testing.T) {
	a, b := hostileReport(), hostileReport()
	b.RunID, b.Run, b.Model = 8, "b", "other/model" // a second "SGLang" heading
	d := NewDocument("T", []*TriageReport{a, b})
	var out bytes.Buffer
	if err := Render(&out, Markdown, d.Markdown()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"- [Model: evil/\\<svg onload=alert(3)>](#model-evilsvg-onloadalert3)\n",
		"  - [SGLang](#sglang)\n",
		"    - [\">\\<script>alert(2)\\</script>](#run-scriptalert2script)\n",
		"- [Model: other/model](#model-othermodel)\n  - [SGLang](#sglang-1)\n    - [b](#run-b)\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("contents lack %q:\n%s", want, out.String())
		}
	}
}

func TestReportSlug(t *testing.T) {
	for in, want := range map[string]string{
		"Model: meta-llama/Llama-3.1-8B-Instruct":    "model-meta-llamallama-31-8b-instruct",
		"Comparison: a -> b":                         "comparison-a---b",
		"Run sglang_llama":                           "run-sglang_llama",
		"  Ünïcode Stage  ":                          "ünïcode-stage",
		`Run "><script>`:                             "run-script",
		"extend/prefill: 3 vs 3 steps (too few ...)": "extendprefill-3-vs-3-steps-too-few-",
	} {
		if got := Slug(in); got != want {
			t.Errorf("Slug(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestReportCodeFence: a drawing (Pre) holding backticks gets a longer fence.
func TestReportCodeFence(t *testing.T) {
	var b bytes.Buffer
	if err := Render(&b, Markdown, Doc{Blocks: []any{Pre{"A [x] ```` y", "<b>"}}}); err != nil {
		t.Fatal(err)
	}
	if want := "`````\nA [x] ```` y\n<b>\n`````\n"; b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}
