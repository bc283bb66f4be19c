package main

import (
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/rivo/uniseg"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// TestReadmeCommandTable: the README's command table lists every command of
// the command tree once, and nothing else (issue 36 item 17: it listed
// ingest and runs twice and left out completion).
func TestReadmeCommandTable(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(b), "\n## Commands\n")
	if !ok {
		t.Fatal("README has no ## Commands section")
	}
	section, _, _ := strings.Cut(after, "\n## ")
	row := regexp.MustCompile("^\\| `tracehouse ([a-z-]+)")
	seen := map[string]int{}
	var listed []string
	for _, l := range strings.Split(section, "\n") {
		if m := row.FindStringSubmatch(l); m != nil {
			if seen[m[1]]++; seen[m[1]] == 2 {
				t.Errorf("README lists %q more than once", m[1])
			}
			listed = append(listed, m[1])
		}
	}
	io, _, _ := testIO("")
	root := newCmdRoot(&Factory{IO: io, Getenv: testEnv})
	var tree []string
	for _, c := range root.Commands() {
		if c.IsAvailableCommand() {
			tree = append(tree, c.Name())
		}
	}
	for _, n := range tree {
		if seen[n] == 0 {
			t.Errorf("README's command table leaves out %q", n)
		}
	}
	for n := range seen {
		if !slices.Contains(tree, n) {
			t.Errorf("README's command table lists %q, which is no command", n)
		}
	}
	if len(listed) == 0 {
		t.Fatal("no command rows found")
	}
}

// TestHelpFlagColumnsAlign: pflag pads flag names and placeholders to one
// column by their length in bytes, so a placeholder with a non-ASCII rune
// (`µs`) shifts its description left of the others (issue 36 item 17).
// Every command's flag usages must put each description at one rune column.
func TestHelpFlagColumnsAlign(t *testing.T) {
	t.Parallel()
	io, _, _ := testIO("")
	root := newCmdRoot(&Factory{IO: io, Getenv: testEnv})
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, set := range []*pflag.FlagSet{c.LocalFlags(), c.InheritedFlags()} {
			col := -1
			for _, l := range strings.Split(set.FlagUsages(), "\n") {
				name := strings.TrimLeft(l, " ")
				if !strings.HasPrefix(name, "-") {
					continue // a continuation line or the end
				}
				// The description starts after the first run of three
				// or more spaces past the flag's name.
				i := strings.Index(l[len(l)-len(name):], "   ")
				if i < 0 {
					continue
				}
				at := len(l) - len(name) + i
				for at < len(l) && l[at] == ' ' {
					at++
				}
				runes := utf8.RuneCountInString(l[:at])
				if col == -1 {
					col = runes
				} else if runes != col {
					t.Errorf("%s: flag description at column %d, others at %d: %q", c.CommandPath(), runes, col, l)
				}
			}
		}
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
}

// TestHelpFitsTheWidth (issue 34): at 80 and 120 columns every line of
// every command's help fits the width, counted in terminal columns: the
// description, the usage line, the subcommands, the flags (pflag's
// one-line listing ran to 157 columns) and the examples, which continue
// on the next line after " \" (they ran to 115). At 60 columns, where
// the examples wrap by themselves, each still reads back as the same
// words as written (a shell joins the continued lines).
func TestHelpFitsTheWidth(t *testing.T) {
	t.Parallel()
	help := func(path []string, cols int) string {
		env := func(k string) string {
			if k == "COLUMNS" {
				return strconv.Itoa(cols)
			}
			return testEnv(k)
		}
		io, out, _ := testIO("")
		if code := run(append(slices.Clone(path), "--help"), io, env); code != 0 {
			t.Errorf("%v --help at %d columns: exit %d", path, cols, code)
		}
		return out.String()
	}
	io, _, _ := testIO("")
	var paths [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		paths = append(paths, path)
		for _, s := range c.Commands() {
			walk(s, append(append([]string{}, path...), s.Name()))
		}
	}
	walk(newCmdRoot(&Factory{IO: io, Getenv: testEnv}), nil)
	if len(paths) < 20 {
		t.Fatalf("%d commands: the walk missed some", len(paths))
	}
	// examples is the Examples section of a help, its continued lines
	// joined as a shell joins them, as words.
	examples := func(h string) []string {
		_, ex, _ := strings.Cut(h, "\nExamples:\n")
		ex, _, _ = strings.Cut(ex, "\n\n")
		return strings.Fields(strings.ReplaceAll(ex, " \\\n", " "))
	}
	for _, p := range paths {
		for _, cols := range []int{80, 120} {
			for i, l := range strings.Split(help(p, cols), "\n") {
				if n := uniseg.StringWidth(l); n > cols {
					t.Errorf("tracehouse %s --help at %d columns: line %d is %d wide: %q", strings.Join(p, " "), cols, i+1, n, l)
				}
			}
		}
		if whole, narrow := examples(help(p, 1000)), examples(help(p, 60)); !slices.Equal(whole, narrow) {
			t.Errorf("tracehouse %s --help: the examples at 60 columns read\n%q\nnot\n%q", strings.Join(p, " "), narrow, whole)
		}
	}
}
