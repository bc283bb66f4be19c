package main

import (
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// specialOutputs makes in dir the files an output must never replace: a
// FIFO and, as root, a device node like /dev/null (made here, not the real
// one), each also behind a symlink.
func specialOutputs(t *testing.T, dir string) map[string]string {
	t.Helper()
	kinds := map[string]string{}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	kinds[fifo] = "a FIFO"
	null := filepath.Join(dir, "null")
	if err := syscall.Mknod(null, syscall.S_IFCHR|0o666, 1<<8|3); err == nil {
		kinds[null] = "a device"
	}
	for _, p := range slices.Collect(maps.Keys(kinds)) {
		k := kinds[p]
		if err := os.Symlink(p, p+"-link"); err != nil {
			t.Fatal(err)
		}
		kinds[p+"-link"] = k
	}
	return kinds
}

// stillSpecial fails the test if path is now a regular file.
func stillSpecial(t *testing.T, path string) {
	t.Helper()
	st, err := os.Lstat(path)
	if err != nil || st.Mode().IsRegular() {
		t.Errorf("%s was replaced (%v)", path, err)
	}
}

// TestOutputsNeverReplaceSpecialFiles (issue 36 E): perfetto-fix -o and
// slice -o, even with --force, and report --markdown/--html refuse a device
// node, a FIFO (or a symlink to one) with one line naming it, and leave it
// as it was. Before, they renamed a file over it (as root, -o /dev/null
// --force replaced /dev/null with a 14 MB file).
func TestOutputsNeverReplaceSpecialFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := copyFile(t, "../../testdata/demo/trtllm-llama/trace.json", dir)
	db := llamaCopy(t) // a run to report: trtllm-llama, of that trace
	for out, kind := range specialOutputs(t, dir) {
		for _, args := range [][]string{
			{"perfetto-fix", in, "-o", out, "--force"},
			{"slice", in, "-o", out, "--force", "--rank", "0"},
			{"--db", db, "report", "--markdown", out, "--force", "trtllm-llama"},
			{"--db", db, "report", "--html", out, "trtllm-llama"},
		} {
			code, stdout, stderr := runCmd(t, args...)
			want := "tracehouse: " + out + ": " + kind + ", not a regular file: outputs replace regular files only\n"
			if code != 1 || stdout != "" || stderr != want {
				t.Errorf("%v: exit %d, stdout %q, stderr %q\nwant exit 1, %q", args, code, stdout, stderr, want)
			}
			stillSpecial(t, out)
		}
	}
}

// TestOutputIsTheInputByIdentity (issue 36 E): the output is compared with
// the input as files (device and inode), not as path strings: an input
// reached through a symlink or a hard link is never overwritten, --force or
// not.
func TestOutputIsTheInputByIdentity(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := copyFile(t, "../../testdata/demo/trtllm-llama/trace.json", dir)
	orig, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	sym := filepath.Join(dir, "sym.json")
	hard := filepath.Join(dir, "hard.json")
	if err := os.Symlink(in, sym); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(in, hard); err != nil {
		t.Fatal(err)
	}
	for _, c := range [][2]string{{sym, in}, {in, hard}, {hard, in}, {in, sym}} {
		for _, cmd := range [][]string{{"perfetto-fix"}, {"slice", "--rank", "0"}} {
			args := slices.Concat(cmd, []string{c[0], "-o", c[1], "--force"})
			code, _, stderr := runCmd(t, args...)
			if code == 0 || !strings.Contains(stderr, c[1]+" is the input (the same file)") {
				t.Errorf("%v: exit %d, %q", args, code, stderr)
			}
			if b, _ := os.ReadFile(in); !bytes.Equal(b, orig) {
				t.Fatalf("%v overwrote the input", args)
			}
		}
	}
}

// TestReportRefusesAFileItDidNotWrite (issue 36 E): report --html X where X
// exists and is not a report (a trace) is refused without --force; a
// report it wrote before is replaced, as a re-run expects. Each check that
// writes asks for both formats at once (each file is checked on its own),
// so that the report is built three times rather than six.
func TestReportRefusesAFileItDidNotWrite(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := copyFile(t, "../../testdata/demo/trtllm-llama/trace.json", dir)
	orig, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	db := llamaCopy(t) // a run to report: trtllm-llama, of that trace
	const r = "trtllm-llama"
	flags := []string{"--html", "--markdown"}
	// both writes the report in either format, to the file named after
	// the flag and prefix.
	both := func(prefix string, more ...string) []string {
		args := []string{"--db", db, "report"}
		for _, flag := range flags {
			args = append(args, flag, filepath.Join(dir, prefix+flag[2:]))
		}
		return append(append(args, more...), r)
	}
	for _, flag := range flags {
		code, _, stderr := runCmd(t, "--db", db, "report", flag, in, r)
		if want := "tracehouse: " + in + ": exists and tracehouse did not write it (use --force to replace it)\n"; code != 1 || stderr != want {
			t.Errorf("report %s over a trace: exit %d %q, want %q", flag, code, stderr, want)
		}
		if b, _ := os.ReadFile(in); !bytes.Equal(b, orig) {
			t.Fatalf("report %s overwrote the trace", flag)
		}
	}
	for i := range 2 { // the second replaces the first without --force
		if code, _, stderr := runCmd(t, both("r")...); code != 0 {
			t.Fatalf("report, time %d: exit %d %s", i+1, code, stderr)
		}
	}
	for _, flag := range flags {
		other := filepath.Join(dir, "notes"+flag[2:])
		if err := os.WriteFile(other, []byte("my notes\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if code, _, _ := runCmd(t, "--db", db, "report", flag, other, r); code != 1 {
			t.Errorf("report %s over a file of notes: exit %d", flag, code)
		}
	}
	if code, _, stderr := runCmd(t, both("notes", "--force")...); code != 0 {
		t.Errorf("report --force: exit %d %s", code, stderr)
	}
	for _, flag := range flags {
		if b, err := os.ReadFile(filepath.Join(dir, "notes"+flag[2:])); err != nil || bytes.Equal(b, []byte("my notes\n")) {
			t.Errorf("report %s --force left the notes: %v", flag, err)
		}
	}
}

// TestOutputPathCheckedFirst (issue 36 item 10): an output in a directory
// that does not exist fails before any work, naming the directory (not a
// temporary file): here before the missing warehouse is even looked at.
func TestOutputPathCheckedFirst(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "none.duckdb")
	bad := filepath.Join(dir, "nonexistent", "x.md")
	in := copyFile(t, "../../testdata/demo/trtllm-llama/trace.json", dir)
	want := "tracehouse: " + bad + ": directory " + filepath.Dir(bad) + " does not exist\n"
	for _, args := range [][]string{
		{"--db", db, "report", "--markdown", bad, "r"},
		{"--db", db, "report", "--html", bad},
		{"perfetto-fix", in, "-o", bad},
		{"slice", in, "-o", bad, "--rank", "0"},
	} {
		code, _, stderr := runCmd(t, args...)
		if code != 1 || stderr != want {
			t.Errorf("%v: exit %d %q, want %q", args, code, stderr, want)
		}
	}
}
