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

// runCheckpointAt runs a command that checkpoints the warehouse once its
// write-ahead log passes bytes (TRACEHOUSE_CHECKPOINT_BYTES) rather than
// DuckDB's 16 MiB: a disk a few MB large then fills at a checkpoint after
// a few small traces, where the default needed 16 MB of log, from about
// 60 MB of traces, to reach one.
func runCheckpointAt(t *testing.T, bytes string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	io, out, errOut := testIO("")
	code = run(args, io, func(k string) string {
		if k == "TRACEHOUSE_CHECKPOINT_BYTES" {
			return bytes
		}
		return testEnv(k)
	})
	return code, out.String(), errOut.String()
}

// twoMiB is the checkpoint threshold of the tests below
// (TRACEHOUSE_CHECKPOINT_BYTES). TestDiskFullWhileSaving keeps DuckDB's
// 16 MiB: at 3.5 MiB on a 5 MB disk its overlap save was once stored
// although its COMMIT failed with "Failed to create checkpoint" (at load
// 20), a case it does not test.
const twoMiB = "2097152"

// TestDiskFullAtCheckpoint (issue 36, faults 2): the disk fills while a
// file's COMMIT writes DuckDB's checkpoint, which invalidates the database.
// The ingest ends with one line naming the file being stored, the disk's
// error, and "N of M stored", N what the warehouse holds once there is room
// again; the same command then stores the rest. Before, the only line was
// "restore DuckDB's memory limit: FATAL Error: Failed: database has been
// invalidated ...", naming no file and no count.
func TestDiskFullAtCheckpoint(t *testing.T) {
	t.Parallel()
	disk := smallDisk(t, "3500k")
	src := filepath.Join(t.TempDir(), "traces")
	// 10 traces of about 1 MB of JSON: about 0.3 MB of log each, so the
	// first checkpoint (at 2 MiB of log) comes at about the 7th commit,
	// with the warehouse's 1.2 MB and the log filling most of the 3.5 MB
	// disk: the checkpoint's writes do not fit (they did not on 3 or 4
	// MB either). (20 traces, as TestDiskFullAtCheckpointParallel's, only
	// left the re-run more to store.)
	const files = 10
	if code, _, stderr := runCmd(t, "synth", "--out", src, "--ranks", "5", "--size-mb", "1", "--run", "r"); code != 0 {
		t.Fatalf("synth: %s", stderr)
	}
	db := filepath.Join(disk, "w.duckdb")
	code, _, stderr := runCheckpointAt(t, twoMiB, "--db", db, "ingest", "--jobs", "1", src)
	if code != 1 {
		t.Fatalf("ingest exit %d, want 1: %s", code, stderr)
	}
	m := regexp.MustCompile(`^tracehouse: (` + regexp.QuoteMeta(src) + `/\S+\.trace\.json\.gz): commit: .*No space left on device.*; (\d+) of ` + fmt.Sprint(files) + ` file\(s\) stored, nothing partial\n$`).
		FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("stderr %q, want one line naming the file, the disk's error and N of %d stored", stderr, files)
	}
	if _, err := os.Stat(m[1]); err != nil {
		t.Errorf("the file named: %v", err)
	}
	// Room again: the warehouse holds what the line said, and the same
	// command stores the rest.
	if err := syscall.Mount("tmpfs", disk, "tmpfs", syscall.MS_REMOUNT, "size=400m"); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCheckpointAt(t, twoMiB, "--db", db, "--format", "csv", "sql", "SELECT count(*) AS n FROM traces")
	if code != 0 {
		t.Fatalf("sql: %s", errOut)
	}
	if want := "n\n" + m[2] + "\n"; out != want {
		t.Errorf("the ingest said %s stored, the warehouse holds %q", m[2], out)
	}
	n, _ := strconv.Atoi(m[2])
	code, _, errOut = runCheckpointAt(t, twoMiB, "--db", db, "ingest", src)
	if want := fmt.Sprintf("ingested %d file(s) ", files-n); code != 0 || !strings.Contains(errOut, want) {
		t.Errorf("re-run exit %d: %q, want %q", code, errOut, want)
	}
}

// TestDiskFullAtCheckpointParallel (issue 36, faults 2) is
// TestDiskFullAtCheckpoint with two files loading at once, at several disk
// sizes: the line names the file whose statement met the full disk, not
// one that only met DuckDB's "database has been invalidated" reply to a
// later statement on the other connection, nor none (a trace id's
// sequence write can be the statement whose checkpoint fails). The count
// is what the warehouse holds, and the file named is stored only when
// DuckDB said its COMMIT was durable. Before, 2 of 3 tries named no file
// or the wrong one. (With 2 MiB checkpoints the three disks met, in one
// try, a trace id's write, a COMMIT's checkpoint and DuckDB's "Original
// error" reply.) A file whose COMMIT the failure left in doubt counts as
// the warehouse holds it: once in about 30 runs the other loader's COMMIT,
// interrupted as the ingest stopped, had been logged, and "8 of 20" was
// said of a warehouse holding 9 (ingest's TestSettleUnknownCommits makes
// that interleaving by hand).
func TestDiskFullAtCheckpointParallel(t *testing.T) {
	t.Parallel()
	src := filepath.Join(t.TempDir(), "traces")
	if code, _, stderr := runCmd(t, "synth", "--out", src, "--ranks", "10", "--size-mb", "1", "--run", "r"); code != 0 {
		t.Fatalf("synth: %s", stderr)
	}
	line := regexp.MustCompile(`^tracehouse: (` + regexp.QuoteMeta(src) + `/\S+\.trace\.json\.gz): (.*); (\d+) of 20 file\(s\) stored, nothing partial\n$`)
	// the warehouse, of those the disk filled, that holds the most files
	rerunDB, rerunN := "", -1
	for _, size := range []string{"3500k", "4m", "5m"} {
		disk := smallDisk(t, size)
		db := filepath.Join(disk, "w.duckdb")
		code, _, stderr := runCheckpointAt(t, twoMiB, "--db", db, "ingest", "--jobs", "2", src)
		if code == 0 {
			t.Logf("%s: all stored (the disk was large enough)", size)
			continue
		}
		m := line.FindStringSubmatch(stderr)
		if m == nil {
			t.Errorf("%s: stderr %q, want one line naming the file, the disk's error and N of 20 stored", size, stderr)
			continue
		}
		if cause := m[2]; !strings.Contains(cause, "No space left on device") || strings.Contains(cause, "invalidated") {
			t.Errorf("%s: %q is not the disk's error as the file met it", size, cause)
		}
		if err := syscall.Mount("tmpfs", disk, "tmpfs", syscall.MS_REMOUNT, "size=400m"); err != nil {
			t.Fatal(err)
		}
		code, out, errOut := runCheckpointAt(t, twoMiB, "--db", db, "--format", "csv", "sql", "SELECT count(*) AS n, count(*) FILTER (WHERE path = '"+m[1]+"') AS named FROM traces")
		if code != 0 {
			t.Fatalf("sql: %s", errOut)
		}
		named := "0"
		if strings.Contains(m[2], "commit:") && strings.Contains(m[2], "durable") || strings.HasSuffix(m[2], " (the trace is stored)") {
			named = "1"
		}
		if want := "n,named\n" + m[3] + "," + named + "\n"; out != want {
			t.Errorf("%s: the ingest said %q, the warehouse holds %q, want %q", size, stderr, out, want)
		}
		if n, _ := strconv.Atoi(m[3]); n > rerunN {
			rerunDB, rerunN = db, n
		}
	}
	if rerunDB == "" {
		return
	}
	// The same command stores the rest: once, on the warehouse holding
	// the most files (each re-run loads and finishes the traces not
	// stored, 4 to 13 of them; the warehouse's count and the named file
	// are checked at every size above).
	code, _, errOut := runCheckpointAt(t, twoMiB, "--db", rerunDB, "ingest", src)
	if want := fmt.Sprintf("ingested %d file(s) ", 20-rerunN); code != 0 || !strings.Contains(errOut, want) {
		t.Errorf("re-run on %s (%d stored): exit %d: %q, want %q", rerunDB, rerunN, code, errOut, want)
	}
}

// TestDiskFullWhileSaving (issue 36, faults 2): the disk fills while the
// aggregates are saved after every file is stored (12 traces of about 1.3
// MB of log each leave the log just under DuckDB's 16 MB checkpoint
// threshold, and the overlap saved first crosses it on a 17 MB disk). The
// one line says which save failed, the disk's error and "12 of 12 stored",
// as the warehouse holds them; the same command then saves the rest.
// Before, it printed a chain of DuckDB errors ending with "restore DuckDB's
// memory limit: ... invalidated", with no count.
func TestDiskFullWhileSaving(t *testing.T) {
	t.Parallel()
	disk := smallDisk(t, "17m")
	src := filepath.Join(t.TempDir(), "traces")
	if code, _, stderr := runCmd(t, "synth", "--out", src, "--ranks", "6", "--size-mb", "5", "--run", "r"); code != 0 {
		t.Fatalf("synth: %s", stderr)
	}
	db := filepath.Join(disk, "w.duckdb")
	code, _, stderr := runCmd(t, "--db", db, "ingest", "--jobs", "1", src)
	if code != 1 {
		t.Fatalf("ingest exit %d, want 1: %s", code, stderr)
	}
	m := regexp.MustCompile(`^tracehouse: save the aggregates: (save [^\n]*No space left on device[^\n]*); (\d+) of 12 file\(s\) stored, nothing partial; run the same command again to save the rest\n$`).
		FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("stderr %q, want one line naming the save, the disk's error and N of 12 stored", stderr)
	}
	if strings.Contains(m[1], "invalidated") {
		t.Errorf("%q is DuckDB's reply to a later statement, not the failure", m[1])
	}
	if err := syscall.Mount("tmpfs", disk, "tmpfs", syscall.MS_REMOUNT, "size=400m"); err != nil {
		t.Fatal(err)
	}
	count := func() string {
		code, out, errOut := runCmd(t, "--db", db, "--format", "csv", "sql",
			"SELECT (SELECT count(*) FROM traces) AS n, (SELECT count(*) FROM kernel_overlap_runs) AS overlap_saved")
		if code != 0 {
			t.Fatalf("sql: %s", errOut)
		}
		return out
	}
	if got, want := count(), "n,overlap_saved\n"+m[2]+",0\n"; got != want || m[2] != "12" {
		t.Errorf("the ingest said %s of 12 stored, the warehouse holds %q, want %q", m[2], got, "n,overlap_saved\n12,0\n")
	}
	code, _, errOut := runCmd(t, "--db", db, "ingest", src)
	if code != 0 || !strings.Contains(errOut, "ingested 0 file(s) ") || !strings.Contains(errOut, "12 already ingested") {
		t.Errorf("re-run exit %d: %q", code, errOut)
	}
	if got, want := count(), "n,overlap_saved\n12,1\n"; got != want {
		t.Errorf("after the re-run the warehouse holds %q, want %q", got, want)
	}
}
