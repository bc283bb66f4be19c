package report

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/tracehouse/tracehouse/analysis"
	"github.com/tracehouse/tracehouse/vocab"
)

// The multi-run document of `tracehouse report` (README "Reports"): triage reports grouped by model, then framework,
// an optional comparison and optional history charts. Markdown reuses the
// triage and compare views; HTML (html.go) adds charts.

// Document is one report over several runs.
type Document struct {
	Title  string
	Models []DocModel
	// Compare is the comparison section (--compare); nil when not asked.
	Compare *analysis.CompareReport
	// History holds the histories of `tracehouse history` (--history), in
	// the order asked; empty when not asked. Both formats show each one's
	// tables as `history` prints them; HTML adds a line chart per stage
	// (HistoryChart).
	History []*analysis.HistoryReport
	// Notes are printed under the title (runs left out, fallbacks).
	Notes []string
}

// DocModel is the runs of one model.
type DocModel struct {
	Model      string
	Frameworks []DocFramework
}

// DocFramework is the runs of one framework within a model.
type DocFramework struct {
	Framework string // as displayed: SGLang, vLLM, ...
	Runs      []*TriageReport
}

// LineChart is one series over runs, in the order given (history: by tag
// value or ingest time), with the change points marked.
type LineChart struct {
	Title string
	// Unit labels the values, e.g. "µs per step".
	Unit   string
	Points []LinePoint
}

// LinePoint is one run's value.
type LinePoint struct {
	Run   string
	Value float64
	// Lo and Hi bound the value's interval; nil when there is none.
	Lo, Hi *float64
	// Absent marks a run without the series: a gap in the line, no value.
	Absent bool
	// Change marks a change point, the direction the series departs in
	// (analysis.ChangeSlower, analysis.ChangeFaster); "" elsewhere.
	Change string
}

// NewDocument groups runs by model (alphabetical, unknown last), then
// framework (SGLang, vLLM, TensorRT-LLM, TokenSpeed, then others), then
// label.
func NewDocument(title string, runs []*TriageReport) *Document {
	d := &Document{Title: title, Notes: []string{}}
	sorted := slices.Clone(runs)
	slices.SortStableFunc(sorted, func(a, b *TriageReport) int {
		return cmp.Or(compareModels(a.Model, b.Model), cmp.Compare(frameworkRank(a.frameworkID), frameworkRank(b.frameworkID)),
			cmp.Compare(a.Framework, b.Framework), cmp.Compare(a.Run, b.Run), cmp.Compare(a.RunID, b.RunID))
	})
	for _, r := range sorted {
		if n := len(d.Models); n == 0 || d.Models[n-1].Model != r.Model {
			d.Models = append(d.Models, DocModel{Model: r.Model})
		}
		m := &d.Models[len(d.Models)-1]
		if n := len(m.Frameworks); n == 0 || m.Frameworks[n-1].Framework != r.Framework {
			m.Frameworks = append(m.Frameworks, DocFramework{Framework: r.Framework})
		}
		f := &m.Frameworks[len(m.Frameworks)-1]
		f.Runs = append(f.Runs, r)
	}
	return d
}

func unknownModel(m string) bool { return m == "" || m == "unknown" }

func compareModels(a, b string) int {
	if ua, ub := unknownModel(a), unknownModel(b); ua != ub {
		if ua {
			return 1
		}
		return -1
	}
	return cmp.Compare(a, b)
}

func frameworkRank(id string) int {
	if i := slices.Index(vocab.Frameworks, id); i >= 0 {
		return i
	}
	return len(vocab.Frameworks)
}

// Runs counts the document's runs.
func (d *Document) Runs() int {
	n := 0
	for _, m := range d.Models {
		for _, f := range m.Frameworks {
			n += len(f.Runs)
		}
	}
	return n
}

// modelHeading is a model section's title.
func modelHeading(m string) string {
	if unknownModel(m) {
		return "Model: unknown"
	}
	return "Model: " + m
}

// Markdown is the document as markdown blocks: the triage and compare
// views with their headings moved under the document's, and a table of
// contents.
func (d *Document) Markdown() Doc {
	blocks := []any{&Heading{Level: 1, Text: d.Title}}
	intro := Lines{d.summary()}
	intro = append(intro, d.Notes...)
	blocks = append(blocks, intro)
	toc := &TOC{}
	blocks = append(blocks, &Heading{Level: 2, Text: "Contents"}, toc)
	for _, m := range d.Models {
		mh := &Heading{Level: 2, Text: modelHeading(m.Model)}
		blocks = append(blocks, mh)
		toc.Entries = append(toc.Entries, TOCEntry{Depth: 0, Text: mh.Text, Target: mh})
		for _, f := range m.Frameworks {
			fh := &Heading{Level: 3, Text: f.Framework}
			blocks = append(blocks, fh)
			toc.Entries = append(toc.Entries, TOCEntry{Depth: 1, Text: f.Framework, Target: fh})
			for _, r := range f.Runs {
				rh := &Heading{Level: 4, Text: "Run " + r.Run}
				toc.Entries = append(toc.Entries, TOCEntry{Depth: 2, Text: r.Run, Target: rh})
				// The triage view under the run's heading: its title
				// dropped, its sections three levels down.
				for i, b := range r.Doc(Markdown).Blocks {
					if i == 0 {
						b = rh
					} else if h, ok := b.(*Heading); ok {
						b = &Heading{Level: h.Level + 3, Text: h.Text}
					}
					blocks = append(blocks, b)
				}
			}
		}
	}
	if d.Compare != nil {
		for i, b := range CompareDoc(d.Compare, Markdown).Blocks {
			if h, ok := b.(*Heading); ok {
				h = &Heading{Level: h.Level + 1, Text: h.Text}
				if i == 0 {
					h.Text = "Comparison: " + d.Compare.Base.Label + " -> " + d.Compare.Candidate.Label
					toc.Entries = append(toc.Entries, TOCEntry{Depth: 0, Text: h.Text, Target: h})
				}
				b = h
			}
			blocks = append(blocks, b)
		}
	}
	// Each history under the document's: its title a section in the
	// contents, its stages one level down.
	for _, h := range d.History {
		for i, b := range HistoryDoc(h, Markdown).Blocks {
			if hd, ok := b.(*Heading); ok {
				hd = &Heading{Level: hd.Level + 1, Text: hd.Text}
				if i == 0 {
					toc.Entries = append(toc.Entries, TOCEntry{Depth: 0, Text: hd.Text, Target: hd})
				}
				b = hd
			}
			blocks = append(blocks, b)
		}
	}
	return Doc{Blocks: blocks}
}

// summary is the line under the title.
func (d *Document) summary() string {
	var parts []string
	if n := d.Runs(); n > 0 {
		parts = append(parts, fmt.Sprintf("%d run(s), grouped by model, then framework (SGLang, vLLM, TensorRT-LLM, TokenSpeed)", n))
	}
	if d.Compare != nil {
		parts = append(parts, "a comparison")
	}
	switch n := len(d.History); n {
	case 0:
	case 1:
		parts = append(parts, "a history")
	default:
		parts = append(parts, fmt.Sprintf("%d histories", n))
	}
	// A document of a comparison or histories alone starts with it.
	s := strings.Join(parts, "; ")
	if s == "" {
		s = "nothing to report"
	}
	return strings.ToUpper(s[:1]) + s[1:] + "."
}

// joinNonEmpty joins the non-empty parts.
func joinNonEmpty(sep string, parts ...string) string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, sep)
}
