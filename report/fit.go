package report

import (
	"cmp"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/rivo/uniseg"
)

// The one layout component of text output (issue 34 items 2 and 4). With a
// Doc Width every line printed fits it, counted in terminal columns:
//   - a table gives its kernel-name column the width first (at least 32
//     columns at 120, 24 at 80), never cuts a Keep or Right column
//     (numbers, p-values, gates, verdicts, priorities), drops whole items
//     of a list cell ("+2 more"), gives a Python location its file's base
//     name and line (or folds it under the row), moves prose columns into
//     numbered notes under it, and when even that does not fit, folds its
//     Detail columns into an indented line under each row;
//   - names cut to a column lose whole words (`_` parts, CamelCase words)
//     and keep what tells them apart from the column's other names;
//   - lines, notes and drawings wrap or are drawn to the width.
// Width 0 (--wide) prints everything whole, with no ellipsis. Markdown,
// JSON and CSV are never shortened. Every string from a trace (kernel
// names, tags, paths) is shown with its control characters escaped
// (escapeControl), so none reaches the terminal raw.

// colGap is the space between two text columns.
const colGap = 2

// ellipsis marks what a cut left out.
const ellipsis = "…"

// textWidth is the number of terminal columns s takes. Printable ASCII,
// which nearly every cell is (kernel names, numbers, paths), takes one a
// byte; uniseg measures the rest. Its grapheme segmentation of every cell
// was about 3% of the instructions of a triage of a stored run
// (callgrind), on strings that were nearly all ASCII.
func textWidth(s string) int {
	if printableASCII(s) {
		return len(s)
	}
	return uniseg.StringWidth(s)
}

// TextWidth is the terminal columns s takes (uniseg's width; printable
// ASCII without segmenting it): for what cmd fits to the terminal besides
// tables (the commands' help).
func TextWidth(s string) int { return textWidth(s) }

// printableASCII says whether every byte of s is printable ASCII (space
// to tilde): one grapheme cluster and one column each.
func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// nameMinWidth is the least a kernel-name column gets at a terminal width:
// 24 columns at 80, 32 at 120, growing a column per 5 between.
func nameMinWidth(width int) int {
	return min(32, max(24, 24+(width-80)/5))
}

// fitted is a table laid out for the terminal.
type fitted struct {
	head []string
	rows [][]string
	// details are the lines printed under each row (folded columns).
	details [][]string
	notes   []string
	gap     int // spaces between columns
}

// Minimum widths of the shortened kinds of column.
const (
	ruleMin      = 3
	minTextWidth = 8
	minListWidth = 12
	minWrapWidth = 16
	maxPathMin   = 24
)

// fitTable lays out t for a terminal of width columns (0: everything
// whole), numbering its notes from *note.
func fitTable(t *Table, width int, note *int) fitted {
	src := t.Rows
	if width > 0 && t.Narrow != nil {
		src = t.Narrow
	}
	cols := t.Columns
	rows := make([][]string, len(src))
	for i, r := range src {
		rows[i] = cleanCells(r, len(cols))
	}
	f := fitted{gap: colGap}
	if width <= 0 {
		f.head = make([]string, len(cols))
		for i, c := range cols {
			f.head[i] = escapeControl(c.Name)
		}
		f.rows = rows
		return f
	}
	cols, rows, f.notes = proseToNotes(cols, rows, note)
	n := len(cols)
	cellNat := make([]int, n)
	for _, r := range rows {
		for i := range n {
			cellNat[i] = max(cellNat[i], textWidth(r[i]))
		}
	}
	// A header's rule is at least ruleMin dashes wide (renderText): the
	// least a column takes.
	headMin := func(i int) int {
		if cols[i].Short != "" {
			return max(ruleMin, min(textWidth(cols[i].Short), textWidth(cols[i].Name)))
		}
		return max(ruleMin, textWidth(cols[i].Name))
	}
	natural := func(i int) int { return max(cellNat[i], ruleMin, textWidth(cols[i].Name)) }
	nameMin := nameMinWidth(width)
	minOf := func(i int) int {
		c := cols[i]
		var m int
		switch {
		case c.Right || c.Keep:
			return max(cellNat[i], headMin(i))
		case c.Min > 0:
			m = c.Min
		case c.Kernel:
			m = nameMin
		case c.Cut == CutPath:
			m = 0
			for _, r := range rows {
				m = max(m, pathMinWidth(r[i]))
			}
			// its file and line whole where the terminal allows: a
			// location too wide for that goes under the row (Detail)
			m = min(m, max(maxPathMin, width/2))
		case c.Wrap:
			m = minWrapWidth
		case c.Sep != "":
			m = minListWidth
		default:
			m = minTextWidth
		}
		return max(min(cellNat[i], m), headMin(i))
	}
	// wantOf is the width a column reads well at: the names up to 40% of
	// the line, a location its file, line and function, other text a few
	// words.
	wantOf := func(i int) int {
		c := cols[i]
		cap := 24
		switch {
		case c.Right || c.Keep:
			return minOf(i)
		case c.Kernel:
			cap = max(nameMin, width*2/5)
		case c.Cut == CutPath, c.Wrap:
			cap = 40
		}
		return max(minOf(i), min(natural(i), cap))
	}
	gap := colGap
	shown := make([]bool, n)
	for i := range shown {
		shown[i] = true
	}
	sum := func(w func(int) int) int {
		s, k := 0, 0
		for i := range n {
			if shown[i] {
				s += w(i)
				k++
			}
		}
		return s + gap*max(0, k-1)
	}
	widths := make([]int, n)
	if sum(natural) <= width {
		for i := range n {
			widths[i] = natural(i)
		}
	} else {
		// Fold columns into the details line: those that may go for the
		// others to read well (Detail 2, the rightmost first) until the
		// others fit at the widths they read well at; then those that go
		// only to fit (Detail 1) until the others fit at all, and further
		// while that shows more names whole (the names get the width
		// first); then the gap between columns narrows to one.
		nextFold := func(sh []bool, level int) int {
			j := -1
			for i := n - 1; i >= 0; i-- {
				if sh[i] && cols[i].Detail >= level && (j < 0 || cols[i].Detail > cols[j].Detail) {
					j = i
				}
			}
			return j
		}
		fold := func(level int, over func() bool) {
			for over() {
				j := nextFold(shown, level)
				if j < 0 {
					return
				}
				shown[j] = false
			}
		}
		fold(2, func() bool { return sum(wantOf) > width })
		fold(1, func() bool { return sum(minOf) > width })
		// wholeNames is how many name cells the columns sh leave whole:
		// the names' columns get what the others leave at their least,
		// a column each in turn, as the widths are given below.
		wholeNames := func(sh []bool) int {
			spare, k := width, 0
			nw := map[int]int{}
			for i := range n {
				if !sh[i] {
					continue
				}
				spare -= minOf(i)
				if k++; k > 1 {
					spare -= gap
				}
				if cols[i].Kernel {
					nw[i] = minOf(i)
				}
			}
			for grew := true; grew && spare > 0; {
				grew = false
				for i := range n {
					if w, ok := nw[i]; ok && w < natural(i) && spare > 0 {
						nw[i]++
						spare--
						grew = true
					}
				}
			}
			whole := 0
			for i, w := range nw {
				for _, r := range rows {
					if textWidth(r[i]) <= w {
						whole++
					}
				}
			}
			return whole
		}
		// A secondary column goes only where that makes names whole: a
		// name too long for the line whatever folds (a cuBLAS name) is
		// cut as it would be, beside its figures.
		if sum(minOf) <= width {
			best := wholeNames(shown)
			trial := slices.Clone(shown)
			for j := nextFold(trial, 1); j >= 0; j = nextFold(trial, 1) {
				trial[j] = false
				if c := wholeNames(trial); c > best {
					best = c
					copy(shown, trial)
				}
			}
		}
		if sum(minOf) > width {
			gap = 1
		}
		// Last, any column but the first and the names goes under the
		// row (the rightmost first) rather than a line run past the width
		// or a figure be cut.
		for sum(minOf) > width {
			j := -1
			for i := n - 1; i > 0 && j < 0; i-- {
				if shown[i] && !cols[i].Kernel && i != firstShown(shown) {
					j = i
				}
			}
			if j < 0 {
				break
			}
			shown[j] = false
		}
		for i := range n {
			widths[i] = minOf(i)
		}
		spare := width - sum(func(i int) int { return widths[i] })
		// The names first (a column each in turn), whole if they can be;
		// then every other shortened column alike.
		grow := func(flexible func(int) bool) {
			for spare > 0 {
				grew := false
				for i := range n {
					if flexible(i) && widths[i] < natural(i) && spare > 0 {
						widths[i]++
						spare--
						grew = true
					}
				}
				if !grew {
					return
				}
			}
		}
		grow(func(i int) bool { return shown[i] && cols[i].Kernel })
		grow(func(i int) bool { return shown[i] && !cols[i].Right && !cols[i].Keep && !cols[i].Kernel })
	}
	// Cut what does not fit.
	for i := range n {
		if !shown[i] || cols[i].Right || cols[i].Keep {
			continue
		}
		if cols[i].Wrap {
			for r := range rows {
				rows[r][i] = strings.Join(wrapWith(rows[r][i], widths[i], ""), "\n")
			}
			continue
		}
		cells := make([]string, len(rows))
		for r := range rows {
			cells[r] = rows[r][i]
		}
		for r, c := range cutColumn(cols[i], cells, widths[i]) {
			rows[r][i] = c
		}
	}
	for i := range n {
		if !shown[i] {
			continue
		}
		h := cols[i].Name
		if textWidth(h) > widths[i] && cols[i].Short != "" {
			h = cols[i].Short
		}
		f.head = append(f.head, cutMiddle(escapeControl(h), widths[i]))
	}
	f.gap = gap
	folded := false
	for _, s := range shown {
		folded = folded || !s
	}
	for _, r := range rows {
		var row []string
		var parts []int
		for i := range n {
			switch {
			case shown[i]:
				row = append(row, r[i])
			case r[i] != "" && r[i] != "-":
				parts = append(parts, i)
			}
		}
		// A column that went under the row only because nothing else
		// would fit (no Detail level: a gate, a verdict) reads first
		// there, before the columns meant as detail.
		// The others keep their order (a share beside what it is under).
		slices.SortStableFunc(parts, func(a, b int) int { return cmp.Compare(min(cols[a].Detail, 1), min(cols[b].Detail, 1)) })
		f.rows = append(f.rows, row)
		if folded {
			f.details = append(f.details, detailLines(cols, r, parts, width))
		}
	}
	return f
}

// firstShown is the index of the first column shown.
func firstShown(shown []bool) int {
	for i, s := range shown {
		if s {
			return i
		}
	}
	return -1
}

// detailIndent starts the lines of a row's folded columns.
const detailIndent = "    "

// detailLines are the lines under a row holding its folded columns
// (indices parts of r), "Column: value" joined by "; " as many to a line
// as fit, in their order where they fit; a value too long for a line
// alone is shortened as its column would be (a long location keeps its
// file, line and function).
func detailLines(cols []Column, r []string, parts []int, width int) []string {
	var lines []detailLine
	for _, i := range parts {
		head := detailName(cols[i]) + ": "
		item := head + r[i]
		if room := width - textWidth(detailIndent) - textWidth(head); textWidth(item) > width-textWidth(detailIndent) && room >= 12 {
			switch {
			case cols[i].Wrap:
				// prose wraps with its line below
			case cols[i].Cut == CutPath:
				// a location wraps rather than lose its file or function
				item = head + dropDirs(r[i])
			case cols[i].Kernel:
				item = head + cutMiddle(r[i], room)
			default:
				item = head + cutColumn(cols[i], []string{r[i]}, room)[0]
			}
		}
		// An item goes on the last line when it has room, else on the
		// first line with room for it (a short family beside a short CPU
		// op rather than a line of its own above a long location); one
		// too long for a line alone wraps on lines of its own.
		placed := false
		fits := func(k int) bool { return lines[k].open && textWidth(lines[k].text)+2+textWidth(item) <= width }
		for k := range lines {
			if j := (k + len(lines) - 1) % len(lines); fits(j) {
				lines[j].text += "; " + item
				placed = true
				break
			}
		}
		if !placed {
			text := detailIndent + item
			lines = append(lines, detailLine{text, textWidth(text) <= width})
		}
	}
	var out []string
	for _, l := range lines {
		out = append(out, wrapLine(l.text, width)...)
	}
	return out
}

// detailLine is a line of detailLines; open while more fits on it.
type detailLine struct {
	text string
	open bool
}

// detailName is a folded column's name in its row's details line: its
// name, or its short header when the name is long.
func detailName(c Column) string {
	if c.Short != "" && textWidth(c.Name) > 16 {
		return c.Short
	}
	return c.Name
}

// cutColumn shortens the cells of column c to width w the way its kind
// asks.
func cutColumn(c Column, cells []string, w int) []string {
	switch {
	case c.Cut == CutPhrase:
		return cutPhrases(cells, w)
	case c.Kernel, c.Cut == CutMiddle && c.Sep == "":
		// Any text cut in its middle keeps different cells different
		// (sql's name and path columns, evidence naming other files).
		return cutNames(cells, w)
	case c.Sep != "":
		out := make([]string, len(cells))
		for i, s := range cells {
			out[i] = cutList(s, c.Sep, w, c.Cut == CutPath)
		}
		return out
	}
	out := make([]string, len(cells))
	for i, s := range cells {
		out[i] = cutCell(s, w, c.Cut)
	}
	return out
}

// cutPhrases shortens phrases to width w at their spaces (cutPhrase);
// should that fail for one of them, or make two different ones read the
// same, the column is cut as names are (cutNames).
func cutPhrases(cells []string, w int) []string {
	out := make([]string, len(cells))
	of := map[string]string{}
	for i, s := range cells {
		c, ok := cutPhrase(s, w)
		if prev, dup := of[c]; !ok || dup && prev != s {
			return cutNames(cells, w)
		}
		of[c] = s
		out[i] = c
	}
	return out
}

// cutPhrase shortens s to width w by dropping whole words from its middle
// or its end. Of the cuts that fit it takes the one showing the most of s,
// its head counting double (a pattern's name says first what it fuses):
// "Fused activation-and-mul …" rather than "Fused … (SwiGLU / GeGLU)", and
// "FlashInfer … allreduce_fusion" (a tie goes to the cut that keeps the
// end). A lone symbol ("+", "/") never ends the head or starts the tail.
// false when not even the first word fits.
func cutPhrase(s string, w int) (string, bool) {
	if textWidth(s) <= w {
		return s, true
	}
	words := strings.Split(s, " ")
	// width of words[i:j] joined by spaces
	span := func(i, j int) int {
		if i >= j {
			return 0
		}
		return textWidth(strings.Join(words[i:j], " "))
	}
	best, bestShown := "", -1
	for head := 1; head < len(words); head++ {
		if isSymbol(words[head-1]) || span(0, head)+2 > w {
			continue
		}
		// tail == len(words): no tail, the phrase is cut at its end
		for tail := len(words); tail > head; tail-- {
			if tail < len(words) && isSymbol(words[tail]) {
				continue
			}
			shown, out := 2*span(0, head)+span(tail, len(words)), ""
			if tail == len(words) {
				out = strings.Join(words[:head], " ") + " " + ellipsis
			} else {
				out = strings.Join(words[:head], " ") + " " + ellipsis + " " + strings.Join(words[tail:], " ")
			}
			if textWidth(out) > w {
				break // a longer tail is wider still
			}
			// a tie goes to the cut with a tail, then to the longer head
			if shown > bestShown || shown == bestShown && tail < len(words) && strings.HasSuffix(best, ellipsis) {
				best, bestShown = out, shown
			}
		}
	}
	return best, bestShown >= 0
}

// isSymbol: w has no letter or digit (a "+" or "/" between words).
func isSymbol(w string) bool {
	return !strings.ContainsFunc(w, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) })
}

// cutCell shortens s to width w the way its column asks.
func cutCell(s string, w int, how Cut) string {
	if textWidth(s) <= w {
		return s
	}
	switch how {
	case CutPath:
		return cutPath(s, w)
	case CutEnd:
		return cutEnd(s, w)
	}
	return cutMiddle(s, w)
}

// A unit is what a cut never splits: a grapheme cluster, or an escape
// escapeControl wrote (`\x1b`, `\u009b`).
func units(s string) []string {
	var out []string
	for len(s) > 0 {
		if n := escapeLen(s); n > 0 {
			out = append(out, s[:n])
			s = s[n:]
			continue
		}
		if s[0] >= 0x20 && s[0] <= 0x7e && (len(s) == 1 || s[1] < 0x80) {
			// printable ASCII followed by ASCII: a cluster of its own (only
			// a non-ASCII mark could join it)
			out = append(out, s[:1])
			s = s[1:]
			continue
		}
		c, rest, _, _ := uniseg.FirstGraphemeClusterInString(s, -1)
		out = append(out, c)
		s = rest
	}
	return out
}

// escapeLen is the length of the escape s starts with, or 0.
func escapeLen(s string) int {
	hex := func(t string) bool {
		for i := 0; i < len(t); i++ {
			if !isHexDigit(t[i]) {
				return false
			}
		}
		return true
	}
	switch {
	case len(s) >= 4 && s[0] == '\\' && s[1] == 'x' && hex(s[2:4]):
		return 4
	case len(s) >= 6 && s[0] == '\\' && s[1] == 'u' && hex(s[2:6]):
		return 6
	}
	return 0
}

func isHexDigit(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func unitsWidth(us []string) int {
	w := 0
	for _, u := range us {
		w += textWidth(u)
	}
	return w
}

// headUnits is the longest prefix of us at most w wide.
func headUnits(us []string, w int) []string {
	n := 0
	for i, u := range us {
		if n += textWidth(u); n > w {
			return us[:i]
		}
	}
	return us
}

// tailUnits is the longest suffix of us at most w wide.
func tailUnits(us []string, w int) []string {
	n := 0
	for i := len(us) - 1; i >= 0; i-- {
		if n += textWidth(us[i]); n > w {
			return us[i+1:]
		}
	}
	return us
}

// cutMiddle shortens s to width w keeping its head and tail (names
// differ at both ends).
func cutMiddle(s string, w int) string {
	if textWidth(s) <= w {
		return s
	}
	if w < 2 {
		return ellipsis
	}
	// A name of words loses whole words (cutWords).
	if c, ok := cutWords(s, w, -1); ok {
		return c
	}
	// A label's template arguments stay whole when they leave the name
	// room: `at::native::vectorized…<…>`.
	if i := strings.IndexByte(s, '<'); i > 0 && strings.HasSuffix(s, ">") {
		if args := s[i:]; textWidth(args) <= w-6 {
			return cutEnd(s[:i], w-textWidth(args)) + args
		}
	}
	us := units(s)
	tailW := (w - 1) / 3
	tail := tailUnits(us, tailW)
	head := headUnits(us, w-1-unitsWidth(tail))
	return strings.Join(head, "") + ellipsis + strings.Join(tail, "")
}

// cutEnd shortens s to width w keeping its head.
func cutEnd(s string, w int) string {
	if textWidth(s) <= w {
		return s
	}
	if w < 2 {
		return ellipsis
	}
	return strings.Join(headUnits(units(s), w-1), "") + ellipsis
}

// cutNames shortens names to width w, keeping different names different
// where it can: a middle cut, or, for names that it would make equal, their
// head and then the part where they differ from one another.
func cutNames(names []string, w int) []string {
	out := make([]string, len(names))
	for i, s := range names {
		out[i] = cutMiddle(s, w)
	}
	if w < 8 {
		return out
	}
	for pass := 0; pass < 2; pass++ {
		byCut := map[string][]int{}
		for i := range names {
			byCut[out[i]] = append(byCut[out[i]], i)
		}
		changed := false
		for _, idx := range byCut {
			distinct := map[string]bool{}
			for _, i := range idx {
				distinct[names[i]] = true
			}
			if len(distinct) < 2 {
				continue
			}
			// Each name keeps where it differs from the others of its
			// group: at word boundaries where every one of them can
			// (cutWords), else by characters (cutAround).
			byWords := map[int]string{}
			around := map[int]string{}
			seen := map[string]string{}
			clash := false
			for _, i := range idx {
				us := units(names[i])
				// p: the first unit at which names[i] differs from another
				// name of the group.
				p := 0
				for _, j := range idx {
					if names[j] == names[i] {
						continue
					}
					p = max(p, commonPrefix(us, units(names[j])))
				}
				around[i] = cutAround(us, p, w)
				c, ok := cutWords(names[i], w, len(strings.Join(us[:min(p, len(us))], "")))
				if prev, dup := seen[c]; !ok || dup && prev != names[i] {
					clash = true
				}
				seen[c] = names[i]
				byWords[i] = c
			}
			for _, i := range idx {
				c := byWords[i]
				if clash {
					c = around[i]
				}
				if c != out[i] {
					out[i] = c
					changed = true
				}
			}
		}
		if !changed {
			break
		}
	}
	return out
}

// tileRe is a part of a name that gives a tile or shape: 64x64,
// MT128x128x32, and runs of numbers (fmha's 64_128).
var tileRe = regexp.MustCompile(`^(?:MT)?[0-9]+(?:x[0-9]+)+$|^[0-9]+(?:_[0-9]+)+$`)

// cutWords shortens a kernel name at the boundaries of its words, so a
// person still reads real words: an identifier (with its template
// arguments, `<…>` or the few that tell two kernels apart, kept whole
// when they leave the name room) made of `_`-separated parts drops whole
// parts from its middle (cutParts); a CamelCase one keeps its first
// words (`BatchPrefillWithRagged…<…>`). must, when >= 0, is the byte
// offset of a character the cut has to keep (where the name differs from
// another one of its column). false for any other text, or when no cut
// at word boundaries fits.
func cutWords(s string, w, must int) (string, bool) {
	if textWidth(s) <= w {
		return s, true
	}
	ident, args := s, ""
	if i := strings.IndexByte(s, '<'); i > 0 && strings.HasSuffix(s, ">") {
		ident, args = s[:i], s[i:]
		if textWidth(args) > w-6 {
			return "", false
		}
	}
	if !isIdent(ident) {
		return "", false
	}
	if must >= len(ident) {
		must = -1
	}
	room := w - textWidth(args)
	if c, ok := cutPartsKeeping(ident, room, must); ok {
		return c + args, true
	}
	if strings.Contains(strings.Trim(ident, "_"), "_") {
		// A name of parts too long for its first and last: a cut of
		// characters keeps more of it than a CamelCase one would.
		return "", false
	}
	if c, ok := cutCamel(ident, room, must); ok {
		return c + args, true
	}
	return "", false
}

// isIdent: s is a C identifier (letters, digits, `_`).
func isIdent(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isWordUnit(s[i:i+1]) && s[i] != '_' {
			return false
		}
	}
	return s != ""
}

// cutParts shortens a name made of `_`-separated parts by dropping whole
// parts from its middle rather than characters (cutPartsKeeping).
func cutParts(s string, w int) (string, bool) { return cutPartsKeeping(s, w, -1) }

// cutPartsKeeping shortens an identifier made of `_`-separated parts
// (`ncclDevKernel_AllReduce_Sum_bf16_RING_LL`, a kernel library's display
// name `cutlass_bf16_relu_64x64_64x4_tn`) by dropping whole parts from
// its middle: it keeps the first part (the library), the first tile if
// it names one, the last part (the layout, the mask, the protocol; not
// a `_kernel` or `_impl`, which every kernel has: the name is then cut at
// its end) and
// the part holding byte must (when >= 0; the last part goes if they do not
// fit with it), then as many of the other parts from the left as fit,
// then from the right (`ncclDevKernel_AllReduce…_LL`,
// `cutlass_bf16_relu_64x64…_tn`, `fmha_bf16_64_128_qkv…_causal`). A cut
// of characters splits a word (`ncclDevKernel_AllR…_RING_LL`) or a tile
// (`cutlass_bf16_relu_…_64x4_tn` reads as a 64x4 tile). false for any
// other text, or when the parts it must keep do not fit.
func cutPartsKeeping(s string, w, must int) (string, bool) {
	if textWidth(s) <= w {
		return s, true
	}
	if !isIdent(s) {
		return "", false
	}
	// Parts and the byte each starts at. Numbers in a row are one part (a
	// tile spelled 64_128); `_`s in a row stay with the part after them
	// (`_per_token`, `fused__to_copy`).
	var parts []string
	var starts []int
	prevNum := false
	pending, pendingAt := "", 0
	at := 0
	for _, p := range strings.Split(s, "_") {
		start := at
		at += len(p) + 1
		if p == "" {
			if pending == "" {
				pendingAt = start
			}
			pending += "_"
			continue
		}
		if pending != "" {
			p, start, pending = pending+p, pendingAt, ""
		}
		num := digitsOnly(p)
		if num && prevNum {
			parts[len(parts)-1] += "_" + p
			continue
		}
		parts = append(parts, p)
		starts = append(starts, start)
		prevNum = num
	}
	if pending != "" && len(parts) > 0 {
		parts[len(parts)-1] += "_" + strings.TrimSuffix(pending, "_")
	}
	if len(parts) < 3 {
		return "", false
	}
	keep := make([]bool, len(parts))
	keep[0], keep[len(parts)-1] = true, true
	if genericPart[strings.ToLower(parts[len(parts)-1])] {
		// A last part every kernel has says nothing: the name is cut at
		// its end (`rotary_embedding…`, not `rotary…_kernel`).
		keep[len(parts)-1] = false
	}
	for i, p := range parts[1:] {
		if tileRe.MatchString(p) {
			keep[i+1] = true
			break
		}
	}
	if must >= 0 {
		for i := len(parts) - 1; i >= 0; i-- {
			if starts[i] <= must {
				keep[i] = true
				break
			}
		}
	}
	// A run of parts dropped is `…` in place of them and the `_` before
	// them: `cutlass_bf16_relu_64x64…_tn`.
	render := func() string {
		var b strings.Builder
		for i, p := range parts {
			if !keep[i] {
				continue
			}
			switch {
			case i > 0 && keep[i-1]:
				b.WriteString("_")
			case i > 0:
				b.WriteString(ellipsis + "_")
			}
			b.WriteString(p)
		}
		if !keep[len(parts)-1] {
			b.WriteString(ellipsis)
		}
		return b.String()
	}
	if keep[len(parts)-1] && textWidth(render()) > w && must >= 0 && must < starts[len(parts)-1] {
		// Where two names differ matters more than their common end:
		// `ncclDevKernel_AllGather…` beside `ncclDevKernel_AllReduce…`.
		keep[len(parts)-1] = false
	}
	if textWidth(render()) > w {
		return "", false
	}
	add := func(i int) bool {
		if keep[i] {
			return true
		}
		keep[i] = true
		if textWidth(render()) > w {
			keep[i] = false
			return false
		}
		return true
	}
	left := 1
	for ; left < len(parts)-1 && add(left); left++ {
	}
	for i := len(parts) - 2; i > left && keep[len(parts)-1] && add(i); i-- {
	}
	return render(), true
}

// cutCamel shortens a CamelCase identifier to its first words and `…`
// (`BatchPrefillWithRagged…`): a cut of characters leaves a word no one
// reads (`BatchPrefillWithRaggedK…`). Every word up to the one holding
// byte must (when >= 0) stays. false when the identifier is one word, or
// its first word (or those it must keep) does not fit.
func cutCamel(s string, w, must int) (string, bool) {
	if textWidth(s) <= w {
		return s, true
	}
	bounds := camelBounds(s)
	if len(bounds) == 0 {
		return "", false
	}
	end := -1
	for _, b := range bounds {
		if textWidth(s[:b])+1 > w {
			break
		}
		end = b
	}
	if end < 0 || (must >= 0 && must >= end) {
		return "", false
	}
	return s[:end] + ellipsis, true
}

// camelBounds are the byte offsets in s where a CamelCase word starts
// (other than the first): a capital after a small letter or digit
// (`Batch|Prefill`), the last capital of a run before a small letter
// (`KV|Cache`).
func camelBounds(s string) []int {
	isUp := func(c byte) bool { return c >= 'A' && c <= 'Z' }
	isLow := func(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }
	var out []int
	for i := 1; i < len(s); i++ {
		switch {
		case isUp(s[i]) && isLow(s[i-1]):
			out = append(out, i)
		case isUp(s[i]) && isUp(s[i-1]) && i+1 < len(s) && s[i+1] >= 'a' && s[i+1] <= 'z':
			out = append(out, i)
		}
	}
	return out
}

// genericPart are last parts of kernel names that tell no kernel from
// another.
var genericPart = map[string]bool{"kernel": true, "kern": true, "impl": true}

func digitsOnly(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

func commonPrefix(a, b []string) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return i
}

// cutAround shortens us to width w so that unit p stays visible: the head,
// `…`, a window from just before p (at the start of its word), and `…`
// when the window ends before the name does.
func cutAround(us []string, p, w int) string {
	if unitsWidth(us) <= w {
		return strings.Join(us, "")
	}
	if p >= len(us) {
		p = len(us) - 1
	}
	if unitsWidth(us[:p+1]) < w {
		return strings.Join(headUnits(us, w-1), "") + ellipsis
	}
	start := p
	for start > 0 && p-start < 12 && isWordUnit(us[start-1]) {
		start--
	}
	headW := max(3, w/3)
	rest := us[start:]
	if unitsWidth(rest) <= w-headW-1 {
		return strings.Join(headUnits(us, w-1-unitsWidth(rest)), "") + ellipsis + strings.Join(rest, "")
	}
	window := headUnits(rest, w-headW-2)
	return strings.Join(headUnits(us, w-2-unitsWidth(window)), "") + ellipsis + strings.Join(window, "") + ellipsis
}

func isWordUnit(u string) bool {
	return len(u) == 1 && (u[0] >= '0' && u[0] <= '9' || u[0] >= 'a' && u[0] <= 'z' || u[0] >= 'A' && u[0] <= 'Z')
}

// cutList fits a cell of items separated by sep into width w: as many
// whole items as fit, then "+N more"; the first item is shortened (a path
// to its file, line and function; anything else in its middle, a trailing
// "(…)" kept) only when it alone does not fit. Items are never spliced.
func cutList(s, sep string, w int, paths bool) string {
	if textWidth(s) <= w {
		return s
	}
	items := splitItems(s, sep)
	short := func(it string, w int) string {
		if paths {
			return cutPath(it, w)
		}
		return cutItem(it, w)
	}
	if paths {
		// Every location without its directories first, if that fits.
		all := make([]string, len(items))
		for i, it := range items {
			all[i] = dropDirs(it)
		}
		if j := strings.Join(all, sep); textWidth(j) <= w {
			return j
		}
		items = all
	}
	for k := len(items) - 1; k >= 1; k-- {
		more := " +" + strconv.Itoa(len(items)-k) + " more"
		if head := strings.Join(items[:k], sep); textWidth(head)+textWidth(more) <= w {
			return head + more
		}
	}
	more := ""
	if len(items) > 1 {
		more = " +" + strconv.Itoa(len(items)-1) + " more"
	}
	return short(items[0], max(1, w-textWidth(more))) + more
}

// splitItems splits a list cell at each sep outside brackets (<>, (),
// []): a kernel name's template or parameter list holds ", " too
// (`sm100_fp8_gemm_1d1d_impl<…, 2112u, 7168u, …>`), and an item is never
// split inside it. The '>' of "->" (`Memcpy HtoD (Pinned -> Device)`)
// closes nothing, and an unmatched closer leaves the depth at 0; a cell
// whose brackets do not balance is split at every sep.
func splitItems(s, sep string) []string {
	if sep == "" {
		return []string{s}
	}
	var items []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '<' || c == '(' || c == '[':
			depth++
		case c == '>' && i > 0 && s[i-1] == '-':
		case c == '>' || c == ')' || c == ']':
			depth = max(0, depth-1)
		case depth == 0 && strings.HasPrefix(s[i:], sep):
			items = append(items, s[start:i])
			start = i + len(sep)
			i = start - 1
		}
	}
	if depth != 0 {
		// Unbalanced (a name cut short, an operator<): no bracket tells
		// where an item ends.
		return strings.Split(s, sep)
	}
	return append(items, s[start:])
}

// cutItem shortens one list item, keeping a trailing parenthesised figure
// ("name (0.9%)").
func cutItem(it string, w int) string {
	if textWidth(it) <= w {
		return it
	}
	if j := strings.LastIndex(it, " ("); j > 0 && strings.HasSuffix(it, ")") {
		suffix := it[j:]
		if rest := w - textWidth(suffix); rest >= 4 {
			return cutMiddle(it[:j], rest) + suffix
		}
	}
	return cutMiddle(it, w)
}

// cutPath shortens a Python location ("path:line func", "func @ path:line",
// "graph replay @ path:line func", several joined by "; ") to width w:
// first its directories go ("…/" in their place), then that "…/" too,
// leaving "func @ base.py:line"; then the function is cut (by characters,
// its head kept, down to "…"), any text before a trailing function first;
// only then the middle of the file's base name. The ":line" and a trailing
// "(site share 60%)" are never cut.
func cutPath(s string, w int) string {
	if textWidth(s) <= w {
		return s
	}
	if len(splitItems(s, "; ")) > 1 {
		return cutList(s, "; ", w, true)
	}
	d := dropDirs(s)
	if textWidth(d) <= w {
		return d
	}
	l, ok := parseLocation(d)
	if !ok {
		return cutMiddle(d, w)
	}
	l.dirs = ""
	if out := l.render(); textWidth(out) <= w {
		return out
	}
	l.cutFunction(w)
	if out := l.render(); textWidth(out) <= w {
		return out
	}
	// The base name's middle, its extension kept: `vocab…_embedding.py:487`.
	stem, ext := l.base, ""
	if j := strings.LastIndexByte(stem, '.'); j > 0 {
		stem, ext = stem[:j], stem[j:]
	}
	l.base = ""
	if room := w - textWidth(l.render()) - textWidth(ext); room >= 3 {
		l.base = cutMiddle(stem, room) + ext
		return l.render()
	}
	return cutMiddle(d, w)
}

// location is a Python location split into what cutPath shortens apart.
type location struct {
	head    string // the words before the file: "forward", "graph replay"
	headSep string // what joins them to the file: " @ " or " "
	dirs    string // "…/" (or "~…/") once dropDirs replaced the directories
	base    string // the file's base name: "vocab_parallel_embedding.py"
	line    string // ":487"
	tail    string // the words after the file: "apply"
	fig     string // a trailing figure: " (site share 60%)"
}

// locFileRe is the word of a location that names its file and line.
var locFileRe = regexp.MustCompile(`^(~?…/|.*/)?([^/ ]+)(:[0-9]+)$`)

// parseLocation splits s at the word naming its file ("path:line"); false
// when none does.
func parseLocation(s string) (location, bool) {
	var l location
	if j := strings.LastIndex(s, " ("); j > 0 && strings.HasSuffix(s, ")") {
		s, l.fig = s[:j], s[j:]
	}
	words := strings.Split(s, " ")
	for i, wd := range words {
		m := locFileRe.FindStringSubmatch(wd)
		if m == nil {
			continue
		}
		l.dirs, l.base, l.line = m[1], m[2], m[3]
		if i > 0 {
			l.head, l.headSep = strings.Join(words[:i], " "), " "
			if h, ok := strings.CutSuffix(l.head, " @"); ok {
				l.head, l.headSep = h, " @ "
			}
		}
		l.tail = strings.Join(words[i+1:], " ")
		return l, true
	}
	return l, false
}

func (l location) render() string {
	var b strings.Builder
	if l.head != "" {
		b.WriteString(l.head + l.headSep)
	}
	b.WriteString(l.dirs + l.base + l.line)
	if l.tail != "" {
		b.WriteString(" " + l.tail)
	}
	b.WriteString(l.fig)
	return b.String()
}

// cutFunction cuts the function's name (the words after the file, or
// else those before it) at its end until l fits w, down to "…"; a
// context before a trailing function ("graph replay @") goes first.
func (l *location) cutFunction(w int) {
	for _, t := range []*string{&l.head, &l.tail} {
		if over := textWidth(l.render()) - w; *t != "" && over > 0 {
			*t = cutEnd(*t, max(1, textWidth(*t)-over))
		}
	}
}

// pathFuncMin is the least of a function's name a location column shows.
const pathFuncMin = 8

// pathMinWidth is the least a location column gets for s: its first
// location's file base name and line whole, beside the head of its
// function (pathFuncMin columns) and any figure.
func pathMinWidth(s string) int {
	first := splitItems(s, "; ")[0]
	l, ok := parseLocation(dropDirs(first))
	if !ok {
		return textWidth(dropDirs(first))
	}
	l.dirs = ""
	if l.tail != "" && l.head != "" {
		l.head = ellipsis
	}
	for _, t := range []*string{&l.head, &l.tail} {
		*t = cutEnd(*t, pathFuncMin)
	}
	return textWidth(l.render())
}

// dropDirs replaces the directories of every path in s (words holding a
// '/') by "…/": a location reads by its file, line and function.
func dropDirs(s string) string {
	words := strings.Split(s, " ")
	for i, w := range words {
		if j := strings.LastIndexByte(w, '/'); j >= 0 && j < len(w)-1 {
			lead := ""
			if strings.HasPrefix(w, "~") {
				lead = "~"
			}
			words[i] = lead + "…/" + w[j+1:]
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
	keep = append(keep, Column{Name: "Note", Keep: true})
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
// than a line is broken where the line ends.
func wrapLine(s string, width int) []string {
	if width <= 0 || textWidth(s) <= width {
		return []string{s}
	}
	indent := s[:len(s)-len(strings.TrimLeft(s, " "))]
	if textWidth(indent)+2 >= width/2 {
		indent = ""
	}
	return wrapWith(s, width, indent+"  ")
}

// wrapWith breaks s at spaces into lines of at most width, continuation
// lines starting with cont.
func wrapWith(s string, width int, cont string) []string {
	if width <= 0 || textWidth(s) <= width {
		return []string{s}
	}
	indent := s[:len(s)-len(strings.TrimLeft(s, " "))]
	words := bindUnits(strings.Fields(s))
	var out []string
	line := indent
	for _, w := range words {
		switch {
		case line == indent || line == cont:
		case textWidth(line)+1+textWidth(w) <= width:
			line += " "
		default:
			out = append(out, line)
			line = cont
		}
		// a word longer than what is left of the line: break it
		for textWidth(line)+textWidth(w) > width {
			us := units(w)
			head := headUnits(us, width-textWidth(line))
			if len(head) == 0 {
				head = us[:1]
			}
			// a path or identifier breaks after a separator when one is
			// in the second half of the line
			for k := len(head) - 1; k > len(head)/2; k-- {
				if strings.Contains("/_-.,:", head[k-1]) && len(head[k-1]) == 1 {
					head = head[:k]
					break
				}
			}
			out = append(out, line+strings.Join(head, ""))
			line = cont
			w = strings.Join(us[len(head):], "")
		}
		line += w
	}
	return append(out, line)
}

// bindUnits joins a number and the unit or short word after it ("2.9",
// "µs)"; "12", "file(s)"; "3", "steps") into one word, so that a wrap never
// leaves a figure at the end of one line and what it counts at the start
// of the next: the two are read as one.
func bindUnits(words []string) []string {
	out := words[:0:0]
	for i := 0; i < len(words); i++ {
		w := words[i]
		if i+1 < len(words) && isNumber(w) && (isUnit(words[i+1]) || isCounted(words[i+1])) {
			i++
			w += " " + words[i]
		}
		out = append(out, w)
	}
	return out
}

// isNumber: w is a figure, maybe signed or after an opening bracket
// ("2.9", "(70.6", "+1,024", "~3").
func isNumber(w string) bool {
	w = strings.TrimLeft(w, "([~≈+-−")
	if w == "" || !isDigit(w[0]) || !isDigit(w[len(w)-1]) {
		return false
	}
	return strings.Trim(w, "0123456789.,") == ""
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// figureUnits are the units printed after a figure with a space.
var figureUnits = map[string]bool{
	"ns": true, "µs": true, "us": true, "ms": true, "s": true, "%": true,
	"B": true, "KiB": true, "MiB": true, "GiB": true, "TiB": true,
	"kB": true, "KB": true, "MB": true, "GB": true, "TB": true, "x": true, "×": true,
}

// isCounted: w is a short noun a number may count ("file(s)", "steps,",
// "runs"): lower-case letters (a plural "(s)" and punctuation after them
// allowed), 3 to maxCounted of them, and not a word that joins ("and",
// "than"). Longer words stay free so that the two bound never make a word
// too long for a line.
func isCounted(w string) bool {
	w = strings.TrimSuffix(strings.TrimRight(w, ")],;:."), "(s")
	if len(w) < 3 || len(w) > maxCounted || notCounted[w] {
		return false
	}
	for _, r := range w {
		if r < 'a' || r > 'z' {
			return false
		}
	}
	return true
}

const maxCounted = 12

// notCounted are short words that follow a number without being what it
// counts.
var notCounted = map[string]bool{"and": true, "the": true, "for": true, "but": true, "not": true,
	"are": true, "was": true, "were": true, "from": true, "with": true, "into": true, "than": true,
	"then": true, "per": true, "out": true, "more": true, "less": true, "over": true, "under": true}

// isUnit: w is a unit, maybe followed by punctuation ("µs)", "ms;").
func isUnit(w string) bool {
	return figureUnits[strings.TrimRight(w, ")],;:.")]
}

// FitLine is s cut at its end to width terminal columns (0: whole), with
// "…" where it was cut: for a line redrawn in place (a progress line),
// which wrapping would break.
func FitLine(s string, width int) string { return fitLine(s, width) }

// fitLine cuts a line of a drawing to width (its end).
func fitLine(s string, width int) string {
	if width <= 0 || textWidth(s) <= width {
		return s
	}
	return cutEnd(s, width)
}
