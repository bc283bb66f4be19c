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
const minFitWidth = 12

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

// fitTable returns the rows to print and the notes to print under them:
// prose cells become "[n]" markers (numbered from *note), and text columns
// are capped so the table fits width (0: no limit, nothing changes).
func fitTable(t *Table, width int, note *int) (head []string, rows [][]string, notes []string) {
	head = make([]string, len(t.Columns))
	for i, c := range t.Columns {
		head[i] = c.Name
	}
	rows = make([][]string, len(t.Rows))
	for i, r := range t.Rows {
		rows[i] = cleanCells(r)
	}
	if width <= 0 {
		return head, rows, nil
	}
	for i, c := range t.Columns {
		if !c.Prose {
			continue
		}
		for _, r := range rows {
			if i >= len(r) || r[i] == "" || r[i] == "-" {
				continue
			}
			*note++
			notes = append(notes, "["+strconv.Itoa(*note)+"] "+r[i])
			r[i] = "[" + strconv.Itoa(*note) + "]"
		}
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
	total := colGap * (len(natural) - 1)
	for _, w := range natural {
		total += w
	}
	if total <= width {
		return head, rows, notes
	}
	// The largest cap on text columns that fits: columns narrower than the
	// cap keep their width, wider ones are cut to it.
	capOf := func(c int) int {
		sum := colGap * (len(natural) - 1)
		for i, w := range natural {
			if shrinkable(t.Columns[i]) {
				w = min(w, max(c, minFitWidth, textWidth(head[i])))
			}
			sum += w
		}
		return sum
	}
	lo, hi := minFitWidth, 0
	for _, w := range natural {
		hi = max(hi, w)
	}
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if capOf(mid) <= width {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	for i, c := range t.Columns {
		if !shrinkable(c) {
			continue
		}
		w := max(lo, minFitWidth, textWidth(head[i]))
		for _, r := range rows {
			if i < len(r) {
				r[i] = middleEllipsis(r[i], w)
			}
		}
	}
	return head, rows, notes
}

func shrinkable(c Column) bool { return !c.Right && !c.Prose }

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
