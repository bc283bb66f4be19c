package target

import (
	"os"
	"path/filepath"
	"testing"
)

// TestPathsUnder: files and walked directories are summed against the
// limit; a path that cannot be read is not "small".
func TestPathsUnder(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "run")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, n := range map[string]int{"a.json": 100, "run/b.json": 200} {
		if err := os.WriteFile(filepath.Join(dir, name), make([]byte, n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	a := filepath.Join(dir, "a.json")
	for _, c := range []struct {
		paths []string
		limit int64
		want  bool
	}{
		{[]string{a}, 101, true},
		{[]string{a}, 100, false},
		{[]string{dir}, 301, true},
		{[]string{dir}, 300, false},
		{[]string{a, sub}, 301, true},
		{[]string{a, sub}, 250, false},
		{[]string{filepath.Join(dir, "missing")}, 1 << 30, false},
	} {
		if got := pathsUnder(c.paths, c.limit); got != c.want {
			t.Errorf("pathsUnder(%v, %d) = %v, want %v", c.paths, c.limit, got, c.want)
		}
	}
}
