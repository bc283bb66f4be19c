package outfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// special makes, in dir, each kind of file an output must never replace,
// as the names the test checks: a FIFO, a socket, a directory, a character
// device (root only: mknod), and symlinks to the FIFO and the device.
func special(t *testing.T, dir string) map[string]string {
	t.Helper()
	kinds := map[string]string{}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	kinds[fifo] = "a FIFO"
	sock := filepath.Join(dir, "sock")
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	if err := syscall.Bind(fd, &syscall.SockaddrUnix{Name: sock}); err != nil {
		t.Fatal(err)
	}
	kinds[sock] = "a socket"
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	kinds[sub] = "a directory"
	link := filepath.Join(dir, "fifo-link")
	if err := os.Symlink(fifo, link); err != nil {
		t.Fatal(err)
	}
	kinds[link] = "a FIFO"
	// A device node like /dev/null (1, 3), made here rather than
	// risking the real one.
	null := filepath.Join(dir, "null")
	if err := syscall.Mknod(null, syscall.S_IFCHR|0o666, 1<<8|3); err == nil {
		kinds[null] = "a device"
		nl := filepath.Join(dir, "null-link")
		if err := os.Symlink(null, nl); err != nil {
			t.Fatal(err)
		}
		kinds[nl] = "a device"
	} else {
		t.Logf("no device node (%v): that case is left out", err)
	}
	return kinds
}

func TestCheckRefusesSpecialFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for path, kind := range special(t, dir) {
		err := Check(path, Policy{Force: true})
		if !errors.Is(err, ErrSpecial) || err.Error() != path+": "+kind+", not a regular file: outputs replace regular files only" {
			t.Errorf("%s: %v, want it refused as %s", path, err, kind)
		}
		// And at the rename, should one appear after the check.
		tmp := filepath.Join(dir, "tmp")
		if err := os.WriteFile(tmp, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := Replace(tmp, path); !errors.Is(err, ErrSpecial) {
			t.Errorf("Replace over %s: %v", path, err)
		}
		if _, err := os.Stat(tmp); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("Replace over %s left its temporary file", path)
		}
		st, err := os.Lstat(path)
		if err != nil || st.Mode().IsRegular() {
			t.Errorf("%s was replaced: %v", path, err)
		}
	}
}

func TestCheckByIdentity(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := filepath.Join(dir, "trace.json")
	if err := os.WriteFile(in, []byte(`{"traceEvents": []}`), 0o644); err != nil {
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
	// The input named through a symlink, and the output through a hard
	// link or a symlink: the same file each time.
	for _, c := range [][2]string{{sym, in}, {in, hard}, {in, sym}, {hard, "./" + filepath.Base(in)}} {
		inPath, out := c[0], c[1]
		if !filepath.IsAbs(out) {
			out = filepath.Join(dir, out)
		}
		err := Check(out, Policy{Force: true, Inputs: []string{inPath}})
		if !errors.Is(err, ErrIsInput) {
			t.Errorf("input %s, output %s: %v, want it refused", inPath, out, err)
		}
	}
	other := filepath.Join(dir, "other.json")
	if err := os.WriteFile(other, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Check(other, Policy{Force: true, Inputs: []string{in}}); err != nil {
		t.Errorf("another file with --force: %v", err)
	}
}

func TestCheckExistingAndMissing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	f := filepath.Join(dir, "report.md")
	if err := os.WriteFile(f, []byte("<!-- ours -->\n# r"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "nowhere"), filepath.Join(dir, "dangling")); err != nil {
		t.Fatal(err)
	}
	isOurs := func(head []byte) bool { return strings.HasPrefix(string(head), "<!-- ours -->") }
	for _, c := range []struct {
		path string
		p    Policy
		want string // "" = allowed
	}{
		{f, Policy{}, f + ": output file exists (use --force to overwrite)"},
		{f, Policy{Force: true}, ""},
		{f, Policy{Ours: isOurs}, ""},
		{f, Policy{Ours: func([]byte) bool { return false }}, f + ": exists and tracehouse did not write it (use --force to replace it)"},
		{f, Policy{Force: true, Ours: func([]byte) bool { return false }}, ""},
		{filepath.Join(dir, "new.md"), Policy{}, ""},
		{filepath.Join(dir, "dangling"), Policy{}, filepath.Join(dir, "dangling") + ": output file exists (use --force to overwrite)"},
		{filepath.Join(dir, "dangling"), Policy{Force: true}, ""},
		{"/nonexistent/dir/x.md", Policy{Force: true}, "/nonexistent/dir/x.md: directory /nonexistent/dir does not exist"},
		{filepath.Join(f, "x.md"), Policy{}, filepath.Join(f, "x.md") + ": " + f + " is not a directory"},
	} {
		got := ""
		if err := Check(c.path, c.p); err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("%s %+v: %q, want %q", c.path, c.p, got, c.want)
		}
	}
}

// TestWrite: the file holds what write wrote, mode 0644, and nothing else
// is left in its directory; a failed write leaves nothing at all (an older
// file stays as it was); a FIFO at the path is not replaced.
func TestWrite(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "out.md")
	put := func(text string, fail error) error {
		return Write(path, func(w io.Writer) error {
			if _, err := io.WriteString(w, text); err != nil {
				return err
			}
			return fail
		})
	}
	if err := put("first", nil); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	if err := put("second, half", boom); !errors.Is(err, boom) || !strings.Contains(err.Error(), path) {
		t.Errorf("failed write: %v, want boom naming %s", err, path)
	}
	got, err := os.ReadFile(path)
	if err != nil || string(got) != "first" {
		t.Errorf("after a failed write: %q %v, want the first file", got, err)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o644 {
		t.Errorf("mode: %v %v", st, err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("the directory holds %d entries, want the output alone", len(ents))
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Write(fifo, func(w io.Writer) error { return nil }); !errors.Is(err, ErrSpecial) {
		t.Errorf("writing over a FIFO: %v, want ErrSpecial", err)
	}
	if st, err := os.Lstat(fifo); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced: %v %v", st, err)
	}
}
