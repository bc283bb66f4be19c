package main

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/tracehouse/tracehouse/report"
)

// fitHelp fits every command's help under cmd to width terminal columns
// (issue 34 item 4; the flags wrap in the usage template): a description
// line wider than that wraps at its spaces, keeping its indentation, and
// an example wider than that continues on the next line after a shell
// line continuation (" \"), so that it still pastes into a shell as one
// command. The texts are written at most 80 wide; this keeps narrower
// terminals, and cobra's own texts (completion), within theirs.
func fitHelp(cmd *cobra.Command, width int) {
	if width <= 0 {
		return
	}
	cmd.Long = fitLines(cmd.Long, width, wrapProse)
	cmd.Example = fitExamples(cmd.Example, width)
	for _, c := range cmd.Commands() {
		fitHelp(c, width)
	}
}

// fitLines applies wrap to each line of s wider than width.
func fitLines(s string, width int, wrap func(string, int) []string) string {
	lines := strings.Split(s, "\n")
	var out []string
	for _, l := range lines {
		if report.TextWidth(l) <= width {
			out = append(out, l)
			continue
		}
		out = append(out, wrap(l, width)...)
	}
	return strings.Join(out, "\n")
}

// indentOf is the blanks l starts with.
func indentOf(l string) string { return l[:len(l)-len(strings.TrimLeft(l, " "))] }

// wrapProse breaks l at spaces into lines of at most width columns, each
// with l's indentation; a word wider than a line stands alone.
func wrapProse(l string, width int) []string {
	return pack(indentOf(l), indentOf(l), strings.Fields(l), width, "")
}

// fitExamples wraps each example line wider than width (wrapExample); a
// line that continues the one before keeps its indentation, and one that
// is continued itself still ends in " \".
func fitExamples(s string, width int) string {
	var out []string
	cont := false
	for _, l := range strings.Split(s, "\n") {
		if report.TextWidth(l) <= width {
			out = append(out, l)
		} else {
			body, more := strings.CutSuffix(l, " \\")
			w := width
			if more {
				w -= 2
			}
			lines := wrapExample(body, w, cont)
			if more {
				lines[len(lines)-1] += " \\"
			}
			out = append(out, lines...)
		}
		cont = strings.HasSuffix(l, "\\")
	}
	return strings.Join(out, "\n")
}

// wrapExample breaks a command line at blanks outside quotes into lines
// of at most width columns, each but the last ending in " \", the ones
// after it indented two more (as the examples written so): a shell reads
// them back as the one command. A quoted word (an SQL statement) is never
// broken: inside single quotes a backslash-newline would stay in the
// word. A flag stays with its value, a redirection or pipe with what
// follows it.
func wrapExample(l string, width int, cont bool) []string {
	words := shellWords(l)
	var units []string
	for i := 0; i < len(words); i++ {
		u := words[i]
		flag := strings.HasPrefix(u, "-") && !strings.Contains(u, "=")
		joins := flag || u == ">" || u == ">>" || u == "<" || u == "|" || u == "&&"
		if joins && i+1 < len(words) && !strings.HasPrefix(words[i+1], "-") {
			i++
			u += " " + words[i]
		}
		units = append(units, u)
	}
	next := indentOf(l)
	if !cont {
		next += "  "
	}
	return pack(indentOf(l), next, units, width, " \\")
}

// pack lays words out greedily into lines of at most width columns: the
// first starting with first, the others with next, every line but the
// last ending in end.
func pack(first, next string, words []string, width int, end string) []string {
	var out []string
	line := first
	for _, w := range words {
		switch {
		case line == first && len(out) == 0 || line == next && len(out) > 0:
			line += w
		case report.TextWidth(line)+1+report.TextWidth(w)+report.TextWidth(end) <= width:
			line += " " + w
		default:
			out = append(out, line+end)
			line = next + w
		}
	}
	return append(out, line)
}

// shellWords splits a command line at blanks outside single or double
// quotes, the quotes kept in the words.
func shellWords(l string) []string {
	var words []string
	var cur strings.Builder
	quote := byte(0)
	for i := 0; i < len(l); i++ {
		c := l[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == ' ':
			if cur.Len() > 0 {
				words = append(words, cur.String())
				cur.Reset()
			}
			continue
		}
		cur.WriteByte(c)
	}
	if cur.Len() > 0 {
		words = append(words, cur.String())
	}
	return words
}
