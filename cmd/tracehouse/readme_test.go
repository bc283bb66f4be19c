package main

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
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
