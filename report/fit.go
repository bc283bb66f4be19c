package report

import (
	"strconv"
	"strings"

	"github.com/rivo/uniseg"
)

// Text tables fit the terminal (triage.md, issue 9): when a Doc has a
// Width, text tables are narrowed to it by shortening their widest text
// columns with a middle ellipsis, prose columns move into numbered notes
// under the table, and long lines wrap. Markdown, JSON and CSV are never
// shortened.

// minFitWidth is the narrowest a shortened column gets: enough to tell
// kernels apart by head and tail.
const minFitWidth = 10

// colGap is the space between two text columns.
const colGap = 2

func textWidth(s string) int { return uniseg.StringWidth(s) }

// middleEllipsis shortens s to width w, keeping its head and tail (kernel
// names differ in both).
func middleEllipsis(s string, w int) string {
	if textWidth(s) <= w {
		return s
	}
	if w < 3 {
		w = 3
	}
	r := []rune(s)
	tail := (w - 1) / 3
	head := w - 1 - tail
	// runes of width 1 are the rule; trim further while wide runes overflow
	for head > 0 && textWidth(string(r[:head]))+1+textWidth(string(r[len(r)-tail:])) > w {
		head--
	}
	return string(r[:head]) + "…" + string(r[len(r)-tail:])
}

// fitTable returns the header and rows to print and the notes to print
// under them. With a width (0: no limit, nothing changes), the table's prose
// columns collapse into one "Note" column of "[n]" markers (numbered from
// *note) whose texts go under the table, and text columns wider than a cap
// are cut to it with a middle ellipsis, the cap being the largest that fits.
func fitTable(t *Table, width int, note *int) (head []string, rows [][]string, notes []string) {
	cols := t.Columns
	rows = make([][]string, len(t.Rows))
	for i, r := range t.Rows {
		rows[i] = cleanCells(r)
	}
	if width > 0 {
		cols, rows, notes = proseToNotes(cols, rows, note)
	}
	head = make([]string, len(cols))
	for i, c := range cols {
		head[i] = c.Name
	}
	if width <= 0 {
		return head, rows, nil
	}
	natural := make([]int, len(head))
	for i, h := range head {
		natural[i] = textWidth(h)
	}
	for _, r := range rows {
		for i := 0; i < len(r) && i < len(natural); i++ {
			natural[i] = max(natural[i], textWidth(r[i]))
		}
	}
	// widthAt is the table's width with text columns capped at c (never
	// below minFitWidth, nor below their natural width when that is less).
	widthAt := func(c int) int {
		sum := colGap * (len(natural) - 1)
		for i, w := range natural {
			if !cols[i].Right {
				w = min(w, max(c, minFitWidth))
			}
			sum += w
		}
		return sum
	}
	hi := 0
	for _, w := range natural {
		hi = max(hi, w)
	}
	if widthAt(hi) <= width {
		return head, rows, notes
	}
	lo := minFitWidth
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if widthAt(mid) <= width {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	for i, c := range cols {
		if c.Right {
			continue
		}
		head[i] = middleEllipsis(head[i], lo)
		for _, r := range rows {
			if i < len(r) {
				r[i] = cutCell(r[i], lo, c.Cut)
			}
		}
	}
	return head, rows, notes
}

// cutCell shortens s to width w the way its column asks.
func cutCell(s string, w int, how Cut) string {
	if textWidth(s) <= w {
		return s
	}
	switch how {
	case CutPath:
		s = dropDirs(s)
	case CutEnd:
		r := []rune(s)
		for len(r) > 0 && textWidth(string(r))+1 > w {
			r = r[:len(r)-1]
		}
		return string(r) + "…"
	}
	return middleEllipsis(s, w)
}

// dropDirs replaces the directories of every path in s (words holding a
// '/') by "…/": a location reads by its file, line and function.
func dropDirs(s string) string {
	words := strings.Split(s, " ")
	for i, w := range words {
		if j := strings.LastIndexByte(w, '/'); j >= 0 {
			words[i] = "…/" + w[j+1:]
		}
	}
	return strings.Join(words, " ")
}

// proseToNotes replaces a table's prose columns by one "Note" column: a
// row with prose gets "[n]", and note n reads "Column: text. Column: text".
func proseToNotes(cols []Column, rows [][]string, note *int) ([]Column, [][]string, []string) {
	var prose []int
	var keep []Column
	for i, c := range cols {
		if c.Prose {
			prose = append(prose, i)
		} else {
			keep = append(keep, c)
		}
	}
	if len(prose) == 0 {
		return cols, rows, nil
	}
	keep = append(keep, Column{Name: "Note"})
	var notes []string
	out := make([][]string, len(rows))
	for ri, r := range rows {
		var parts []string
		var kept []string
		for i, cell := range r {
			if !cols[i].Prose {
				kept = append(kept, cell)
			} else if cell != "" && cell != "-" {
				parts = append(parts, cols[i].Name+": "+cell)
			}
		}
		marker := "-"
		if len(parts) > 0 {
			*note++
			marker = "[" + strconv.Itoa(*note) + "]"
			notes = append(notes, marker+" "+strings.Join(parts, ". "))
		}
		out[ri] = append(kept, marker)
	}
	return keep, out, notes
}

// wrapLine breaks a line longer than width at spaces; continuation lines
// are indented two more than the line's own indentation. A word longer
// than the width stays whole.
func wrapLine(s string, width int) []string {
	if width <= 0 || textWidth(s) <= width {
		return []string{s}
	}
	indent := s[:len(s)-len(strings.TrimLeft(s, " "))]
	cont := indent + "  "
	words := strings.Fields(s)
	var out []string
	line := indent
	for _, w := range words {
		switch {
		case line == indent || line == cont:
			line += w
		case textWidth(line)+1+textWidth(w) <= width:
			line += " " + w
		default:
			out = append(out, line)
			line = cont + w
		}
	}
	return append(out, line)
}
