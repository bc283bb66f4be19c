// Package report renders query results for people and programs: aligned
// text tables for a terminal, markdown, JSON and CSV. A report is a Doc: a
// list of blocks (headings, lines, tables) plus the typed value its JSON
// form encodes.
package report

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// Format is an output format.
type Format string

// Formats.
const (
	Text     Format = "table"
	Markdown Format = "markdown"
	JSON     Format = "json"
	CSV      Format = "csv"
)

// Formats lists the accepted --format values (text is an alias of table).
var Formats = []string{"table", "text", "markdown", "json", "csv"}

// ParseFormat reads a --format value.
func ParseFormat(s string) (Format, error) {
	switch strings.ToLower(s) {
	case "table", "text", "":
		return Text, nil
	case "markdown", "md":
		return Markdown, nil
	case "json":
		return JSON, nil
	case "csv":
		return CSV, nil
	}
	return "", fmt.Errorf("unknown format %q: want table, markdown, json or csv", s)
}

// Heading is a section title.
type Heading struct {
	Level int // 1 = document, 2 = section, 3 = table
	Text  string
}

// Lines are plain text lines; text output wraps them at the Doc's Width.
type Lines []string

// Pre are preformatted lines (drawings): never wrapped in text; fenced in
// markdown.
type Pre []string

// TOC is a table of contents: nested entries linking to headings of the
// same document. Markdown links each entry to its heading's anchor (the
// slug GitHub gives it); text indents the entries.
type TOC struct {
	Entries []TOCEntry
}

// TOCEntry is one line of a table of contents.
type TOCEntry struct {
	Depth int // 0 = top level
	Text  string
	// Target is the heading the entry links to; it must be a block of the
	// same Doc.
	Target *Heading
}

// Column is a table column; Right aligns numbers right in markdown. The
// other fields tell a width-limited text table (fit.go) how it may
// shorten the column.
type Column struct {
	Name  string
	Right bool
	// Prose marks a column of sentences (rationales, candidate paths): in a
	// width-limited text table its cells become numbered notes under it.
	Prose bool
	// Cut says how a width-limited text table shortens the column's cells.
	Cut Cut
	// Keep: never shortened (numbers, p-values, gates, verdicts,
	// priorities). Right columns are kept too.
	Keep bool
	// Kernel marks the kernel-name column (or a listing's name column,
	// synth's file paths): it gets the width first, and its cuts keep
	// different names different (a Wrap column wraps instead).
	Kernel bool
	// Sep, when set, splits a cell into items: a narrow cell keeps whole
	// items and says how many it left out ("+2 more").
	Sep string
	// Detail > 0: when the table does not fit, the column may move to an
	// indented line under each row ("Column: value"): 2 so that the others
	// read well (a location, a second name), 1 only when the table does
	// not fit otherwise or when that shows more kernel names whole (the
	// names get the width first). Higher levels move first, then the
	// rightmost.
	Detail int
	// Short is the header shown when the column is narrower than Name.
	Short string
	// Min, when set, is the least width the column is shortened to
	// (instead of its kind's).
	Min int
	// Wrap: a too-wide cell wraps onto more lines within its column
	// instead of being cut (prose that must be read whole: descriptions,
	// switches, tags).
	Wrap bool
	// Wide marks a column of detail only full output shows: a
	// width-limited text table leaves it out (--wide, markdown, CSV and
	// HTML keep it).
	Wide bool
}

// withoutWide is t without its Wide columns when the text is width-limited.
func withoutWide(t *Table, width int) *Table {
	if width <= 0 || !slices.ContainsFunc(t.Columns, func(c Column) bool { return c.Wide }) {
		return t
	}
	n := &Table{Name: t.Name, Empty: t.Empty}
	var keep []int
	for i, c := range t.Columns {
		if !c.Wide {
			keep = append(keep, i)
			n.Columns = append(n.Columns, c)
		}
	}
	pick := func(rows [][]string) [][]string {
		var out [][]string
		for _, r := range rows {
			row := make([]string, 0, len(keep))
			for _, i := range keep {
				if i < len(r) {
					row = append(row, r[i])
				}
			}
			out = append(out, row)
		}
		return out
	}
	n.Rows, n.Narrow = pick(t.Rows), pick(t.Narrow)
	return n
}

// Cut is how a too-wide cell is shortened.
type Cut int

const (
	// CutMiddle keeps head and tail (names that differ at both ends).
	CutMiddle Cut = iota
	// CutPath drops leading directories of the Python locations in the
	// cell first ("…/linear.py:131 apply"), then the end of the function's
	// name, then the middle of the file's base name; never the ":line"
	// (cutPath).
	CutPath
	// CutEnd keeps the head (figures first, detail last).
	CutEnd
	// CutPhrase drops whole words from the middle of a phrase (a fuse
	// pattern's name), keeping its first and last words (cutPhrase).
	CutPhrase
)

// Table is a named table of strings, already formatted.
type Table struct {
	Name    string // file name stem for CSV, e.g. "kernels"
	Columns []Column
	Rows    [][]string
	// Narrow, when set, are the cells a width-limited text table shows
	// instead of Rows (kernel labels instead of whole names); parallel to
	// Rows.
	Narrow [][]string
	// Empty is printed instead of an empty table (text and markdown).
	Empty string
}

// Drawing is a block drawn for the width it is shown at (an ASCII
// timeline): Draw(0) is its full size, and markdown fences that.
type Drawing struct {
	Draw func(width int) []string
}

// Doc is a whole report.
type Doc struct {
	Blocks []any // *Heading, Lines, Pre, *Table, *TOC, *Drawing
	// JSON is the value the json format encodes; nil encodes the tables.
	JSON any
	// Width, when > 0, is the terminal width text output fits (tables
	// narrowed, prose moved to notes, lines wrapped); 0 prints everything.
	Width int
}

// ErrCSVNeedsDir is returned for csv output of several tables without a directory.
var ErrCSVNeedsDir = errors.New("csv writes one file per table: give a directory")

// Render writes d to w in format f. CSV with more than one table needs
// RenderCSVDir instead.
func Render(w io.Writer, f Format, d Doc) error {
	switch f {
	case JSON:
		v := d.JSON
		if v == nil {
			v = tablesJSON(d)
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		// Kernel names are full of <...>; \u003c helps no reader.
		enc.SetEscapeHTML(false)
		return enc.Encode(v)
	case CSV:
		tables := d.tables()
		if len(tables) != 1 {
			return ErrCSVNeedsDir
		}
		return writeCSV(w, tables[0])
	case Markdown:
		return renderMarkdown(w, d)
	default:
		return renderText(w, d)
	}
}

// RenderCSVDir writes one CSV file per table into dir and returns the paths.
func RenderCSVDir(dir string, d Doc) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var paths []string
	used := map[string]int{}
	for _, t := range d.tables() {
		name := t.Name
		if name == "" {
			name = "table"
		}
		used[name]++
		if used[name] > 1 {
			name = fmt.Sprintf("%s-%d", name, used[name])
		}
		p := filepath.Join(dir, name+".csv")
		f, err := os.Create(p)
		if err != nil {
			return paths, err
		}
		err = writeCSV(f, t)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return paths, fmt.Errorf("write %s: %w", p, err)
		}
		paths = append(paths, p)
	}
	return paths, nil
}

func (d Doc) tables() []*Table {
	var out []*Table
	for _, b := range d.Blocks {
		if t, ok := b.(*Table); ok {
			out = append(out, t)
		}
	}
	return out
}

func tablesJSON(d Doc) any {
	var out []map[string]string
	for _, t := range d.tables() {
		for _, r := range t.Rows {
			m := map[string]string{}
			for i, c := range t.Columns {
				if i < len(r) {
					m[c.Name] = r[i]
				}
			}
			out = append(out, m)
		}
	}
	if out == nil {
		out = []map[string]string{}
	}
	return out
}

func writeCSV(w io.Writer, t *Table) error {
	cw := csv.NewWriter(w)
	head := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		head[i] = c.Name
	}
	if err := cw.Write(head); err != nil {
		return err
	}
	if err := cw.WriteAll(t.Rows); err != nil {
		return err
	}
	return cw.Error()
}

func renderText(w io.Writer, d Doc) error {
	ew := &errWriter{w: w}
	note := 0
	for i, b := range d.Blocks {
		switch b := b.(type) {
		case *Heading:
			if i > 0 && b.Level <= 2 {
				ew.printf("\n")
			}
			lines := wrapLine(escapeControl(b.Text), d.Width)
			for _, l := range lines {
				ew.printf("%s\n", l)
			}
			if b.Level == 1 {
				w := 0
				for _, l := range lines {
					w = max(w, textWidth(l))
				}
				ew.printf("%s\n", strings.Repeat("=", w))
			}
		case Lines:
			for _, l := range b {
				for _, part := range wrapLine(escapeControl(l), d.Width) {
					ew.printf("%s\n", part)
				}
			}
		case Pre:
			for _, l := range b {
				ew.printf("%s\n", fitLine(escapeControl(l), d.Width))
			}
		case *Drawing:
			for _, l := range b.Draw(d.Width) {
				ew.printf("%s\n", fitLine(escapeControl(l), d.Width))
			}
		case *TOC:
			for _, e := range b.Entries {
				for _, part := range wrapLine(strings.Repeat("  ", e.Depth)+escapeControl(e.Text), d.Width) {
					ew.printf("%s\n", part)
				}
			}
		case *Table:
			if len(b.Rows) == 0 && b.Empty != "" {
				for _, part := range wrapLine(escapeControl(b.Empty), d.Width) {
					ew.printf("%s\n", part)
				}
				continue
			}
			f := fitTable(withoutWide(b, d.Width), d.Width, &note)
			rule := make([]string, len(f.head))
			for i, h := range f.head {
				rule[i] = strings.Repeat("-", max(ruleMin, textWidth(h)))
			}
			writeAligned(ew, append([][]string{f.head, rule}, f.rows...), f.details, f.gap)
			for _, n := range f.notes {
				for _, part := range wrapLine(n, d.Width) {
					ew.printf("%s\n", part)
				}
			}
		default:
			return fmt.Errorf("report: unknown block %T", b)
		}
	}
	return ew.err
}

// writeAligned pads every cell but the last of a row to its column's
// width plus the gap (the layout text/tabwriter gave, measured in display
// columns); details[i], when given, are printed under rows[i+2] (the
// first two rows are the header and its rule).
func writeAligned(ew *errWriter, rows [][]string, details [][]string, gap int) {
	// A wrapped cell (fit.go, Column.Wrap) holds its lines joined by "\n":
	// its row takes as many lines, the other cells blank below their first.
	var widths []int
	for _, r := range rows {
		for i := 0; i < len(r)-1; i++ {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			for _, l := range strings.Split(r[i], "\n") {
				widths[i] = max(widths[i], textWidth(l))
			}
		}
	}
	var b strings.Builder
	for ri, r := range rows {
		cells := make([][]string, len(r))
		lines := 1
		for i, c := range r {
			cells[i] = strings.Split(c, "\n")
			lines = max(lines, len(cells[i]))
		}
		for li := range lines {
			b.Reset()
			for i, c := range cells {
				s := ""
				if li < len(c) {
					s = c[li]
				}
				b.WriteString(s)
				if i < len(r)-1 {
					b.WriteString(strings.Repeat(" ", widths[i]-textWidth(s)+gap))
				}
			}
			// an empty last cell leaves no trailing blanks
			ew.printf("%s\n", strings.TrimRight(b.String(), " "))
		}
		if k := ri - 2; k >= 0 && k < len(details) {
			for _, l := range details[k] {
				ew.printf("%s\n", l)
			}
		}
	}
}

// cleanCells keeps each of a row's n cells on one line, its control
// characters escaped; a short row is padded with empty cells.
func cleanCells(r []string, n int) []string {
	out := make([]string, max(n, len(r)))
	for i, c := range r {
		out[i] = escapeControl(c)
	}
	return out[:max(n, len(r))]
}

func renderMarkdown(w io.Writer, d Doc) error {
	ew := &errWriter{w: w}
	anchors := headingAnchors(d.Blocks)
	for i, b := range d.Blocks {
		if i > 0 {
			ew.printf("\n")
		}
		switch b := b.(type) {
		case *Heading:
			ew.printf("%s %s\n", strings.Repeat("#", min(6, max(1, b.Level))), escapeMarkdownText(oneLineText(b.Text)))
		case *TOC:
			for _, e := range b.Entries {
				ew.printf("%s- [%s](#%s)\n", strings.Repeat("  ", e.Depth), escapeMarkdownText(e.Text), anchors[e.Target])
			}
		case Lines:
			for _, l := range b {
				ew.printf("%s  \n", escapeMarkdownText(l))
			}
		case Pre:
			writeFenced(ew, b)
		case *Drawing:
			writeFenced(ew, b.Draw(0))
		case *Table:
			if len(b.Rows) == 0 && b.Empty != "" {
				ew.printf("_%s_\n", escapeMarkdownText(b.Empty))
				continue
			}
			head := make([]string, len(b.Columns))
			rule := make([]string, len(b.Columns))
			for i, c := range b.Columns {
				head[i] = escapeCell(c.Name)
				rule[i] = "---"
				if c.Right {
					rule[i] = "---:"
				}
			}
			ew.printf("| %s |\n| %s |\n", strings.Join(head, " | "), strings.Join(rule, " | "))
			for _, r := range b.Rows {
				cells := make([]string, len(r))
				for i, c := range r {
					cells[i] = escapeCell(c)
				}
				ew.printf("| %s |\n", strings.Join(cells, " | "))
			}
		default:
			return fmt.Errorf("report: unknown block %T", b)
		}
	}
	return ew.err
}

// writeFenced writes lines as a fenced block. A fence longer than any run
// of backticks inside cannot be closed by the content.
func writeFenced(ew *errWriter, lines []string) {
	fence := "```"
	for _, l := range lines {
		for strings.Contains(l, fence) {
			fence += "`"
		}
	}
	ew.printf("%s\n", fence)
	for _, l := range lines {
		ew.printf("%s\n", oneLineText(l))
	}
	ew.printf("%s\n", fence)
}

// escapeCell keeps a value inside its markdown table cell: a pipe would
// end the cell, a line break the row.
func escapeCell(s string) string {
	return strings.ReplaceAll(escapeMarkdownText(oneLineText(s)), "|", `\|`)
}

// oneLineText keeps a value on one line, its control characters escaped.
func oneLineText(s string) string {
	return escapeControl(s)
}

// markdownEscaper backslash-escapes the characters that would turn text
// from trace files into markup: < (kernel names' template brackets would
// become HTML tags, and a name like <img ...> an element), [ and ] (links
// and images, which a viewer would load), & (entities), * and ` (emphasis,
// code spans), and the backslash itself so that a name's own backslashes
// escape nothing. One pass: no character is escaped twice.
var markdownEscaper = strings.NewReplacer(`\`, `\\`, "<", `\<`, "[", `\[`, "]", `\]`, "&", `\&`, "*", `\*`, "`", "\\`")

// escapeMarkdownText makes s render as the text it is, control
// characters shown escaped.
func escapeMarkdownText(s string) string {
	return markdownEscaper.Replace(escapeControl(s))
}

// headingAnchors gives each heading of blocks the anchor GitHub gives it:
// its slug, with -1, -2, ... appended to repeats in document order.
func headingAnchors(blocks []any) map[*Heading]string {
	out := map[*Heading]string{}
	seen := map[string]bool{}
	for _, b := range blocks {
		h, ok := b.(*Heading)
		if !ok {
			continue
		}
		base := Slug(h.Text)
		slug := base
		for i := 1; seen[slug]; i++ {
			slug = base + "-" + strconv.Itoa(i)
		}
		seen[slug] = true
		out[h] = slug
	}
	return out
}

// Slug is GitHub's anchor for a heading's text: lower case, letters,
// digits, '_' and '-' kept, spaces turned into '-', everything else
// dropped.
func Slug(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(s)) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) || r == '_' || r == '-':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

func (e *errWriter) printf(format string, args ...any) {
	fmt.Fprintf(e, format, args...)
}
