package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/tracehouse/tracehouse/shellwords"
)

// TestWrapExample: an example too wide for its terminal continues after
// " \" on lines of at most the width, never breaks a quoted word, keeps a
// flag with its value, and reads back as the same words.
func TestWrapExample(t *testing.T) {
	t.Parallel()
	line := `  tracehouse report --html main.html --tag branch=main --history '--metric step_time --by commit_date' > out.txt`
	got := wrapExample(line, 50, false)
	want := []string{
		`  tracehouse report --html main.html \`,
		`    --tag branch=main \`,
		`    --history '--metric step_time --by commit_date' \`,
		`    > out.txt`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("wrapped to\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, l := range got[:len(got)-1] {
		if !strings.HasSuffix(l, " \\") {
			t.Errorf("%q does not continue", l)
		}
	}
	joined := strings.ReplaceAll(strings.Join(got, "\n"), " \\\n", " ")
	a, err := shellwords.Split(joined)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := shellwords.Split(line)
	if !slices.Equal(a, b) {
		t.Errorf("read back as %q, want %q", a, b)
	}
	// A line that continues one before keeps its indentation, and one
	// continued already still ends in " \".
	ex := "  tracehouse sql --lake /shared/lake --format csv \\\n    \"SELECT run, count(*) FROM kernel_events GROUP BY 1\" > counts.csv \\\n    && wc -l counts.csv"
	fitted := strings.Split(fitExamples(ex, 60), "\n")
	for _, l := range fitted {
		if len(l) > 60 && !strings.Contains(l, `"SELECT`) {
			t.Errorf("%q is wider than 60", l)
		}
	}
	if fitted[1] != `    "SELECT run, count(*) FROM kernel_events GROUP BY 1" \` || fitted[2] != `    > counts.csv \` {
		t.Errorf("continued lines:\n%s", strings.Join(fitted, "\n"))
	}
}
