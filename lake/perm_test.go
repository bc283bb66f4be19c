package lake

import (
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// umask reads the process's umask without changing it (Linux 4.7+).
func umask(t *testing.T) fs.FileMode {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc/self/status: %v", err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "Umask:"); ok {
			m, err := strconv.ParseUint(strings.TrimSpace(v), 8, 32)
			if err != nil {
				t.Fatal(err)
			}
			return fs.FileMode(m)
		}
	}
	t.Skip("no Umask line in /proc/self/status")
	return 0
}

// TestLakeRespectsUmask: every file and directory of a written lake (its
// Parquet files, checksums, id claims, schema version, views) has the
// permissions the umask leaves, as files other tools make: a lake written
// with umask 002 is readable and writable by the group.
func TestLakeRespectsUmask(t *testing.T) {
	t.Parallel()
	mask := umask(t)
	dir := demoLake(t)
	wantFile, wantDir := 0o666&^mask, 0o777&^mask
	bad := map[string]int{}
	n := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		want := wantFile
		if d.IsDir() {
			want = wantDir
		}
		if p == dir {
			return nil // made by the test
		}
		n++
		if info.Mode().Perm() != want {
			rel, _ := filepath.Rel(dir, p)
			key := info.Mode().Perm().String() + " " + strings.SplitN(filepath.ToSlash(rel), "/", 3)[0]
			bad[key]++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(bad) > 0 {
		t.Errorf("of %d files and directories, with umask %03o (want files %v, directories %v), these differ: %v", n, mask, wantFile, wantDir, bad)
	}
}
