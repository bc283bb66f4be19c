package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// smallDisk mounts a tmpfs of size bytes (mount(2) needs root, or
// CAP_SYS_ADMIN: the test skips without it) and unmounts it at the end.
func smallDisk(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		t.Skipf("a small disk needs a tmpfs mount (root): %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir
}

// TestDiskFullAtCheckpoint (issue 36, faults 2): the disk fills while a
// file's COMMIT writes DuckDB's checkpoint, which invalidates the database.
// The ingest ends with one line naming the file being stored, the disk's
// error, and "N of M stored", N what the warehouse holds once there is room
// again; the same command then stores the rest. Before, the only line was
// "restore DuckDB's memory limit: FATAL Error: Failed: database has been
// invalidated ...", naming no file and no count.
func TestDiskFullAtCheckpoint(t *testing.T) {
	t.Parallel()
	disk := smallDisk(t, "19m")
	src := filepath.Join(t.TempDir(), "traces")
	// 20 traces of about 4 MB of JSON: about 1 MB of log each, so the
	// first checkpoint comes at about the 16th commit, with the log near
	// 16 MB of the 19: the checkpoint's writes do not fit.
	if code, _, stderr := runCmd(t, "synth", "--out", src, "--ranks", "10", "--size-mb", "4", "--run", "r"); code != 0 {
		t.Fatalf("synth: %s", stderr)
	}
	db := filepath.Join(disk, "w.duckdb")
	code, _, stderr := runCmd(t, "--db", db, "ingest", "--jobs", "1", src)
	if code != 1 {
		t.Fatalf("ingest exit %d, want 1: %s", code, stderr)
	}
	m := regexp.MustCompile(`^tracehouse: (` + regexp.QuoteMeta(src) + `/\S+\.trace\.json\.gz): commit: .*No space left on device.*; (\d+) of 20 file\(s\) stored, nothing partial\n$`).
		FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("stderr %q, want one line naming the file, the disk's error and N of 20 stored", stderr)
	}
	if _, err := os.Stat(m[1]); err != nil {
		t.Errorf("the file named: %v", err)
	}
	// Room again: the warehouse holds what the line said, and the same
	// command stores the rest.
	if err := syscall.Mount("tmpfs", disk, "tmpfs", syscall.MS_REMOUNT, "size=400m"); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCmd(t, "--db", db, "--format", "csv", "sql", "SELECT count(*) AS n FROM traces")
	if code != 0 {
		t.Fatalf("sql: %s", errOut)
	}
	if want := "n\n" + m[2] + "\n"; out != want {
		t.Errorf("the ingest said %s stored, the warehouse holds %q", m[2], out)
	}
	n, _ := strconv.Atoi(m[2])
	code, _, errOut = runCmd(t, "--db", db, "ingest", src)
	if want := fmt.Sprintf("ingested %d file(s) ", 20-n); code != 0 || !strings.Contains(errOut, want) {
		t.Errorf("re-run exit %d: %q, want %q", code, errOut, want)
	}
}
