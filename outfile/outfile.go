// Package outfile decides which paths tracehouse may write its outputs to
// (perfetto-fix -o, slice -o, report --markdown/--html): checked before any
// work, so that a bad path fails at once rather than after the rendering,
// and checked again just before the rename that puts the output in place.
//
// An output is written beside its final name and renamed over it, which
// replaces whatever the name held. That is right for a regular file the user
// asked to replace and wrong for anything else: a device node (-o /dev/null
// as root replaced /dev/null with a trace), a FIFO, a socket, a directory,
// or the input itself reached under another name (a symlink, a hard link).
package outfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// ErrExists is an output file that exists where replacing it was not
// asked for (--force).
var ErrExists = errors.New("output file exists (use --force to overwrite)")

// ErrNotOurs is an existing file that a command replacing its own earlier
// outputs (Policy.Ours) did not write, where --force was not given.
var ErrNotOurs = errors.New("exists and tracehouse did not write it (use --force to replace it)")

// ErrSpecial is an output path naming something other than a regular file.
var ErrSpecial = errors.New("not a regular file: outputs replace regular files only")

// ErrIsInput is an output path naming one of the command's inputs.
var ErrIsInput = errors.New("is the input (the same file): give another output")

// Policy says what an output may replace.
type Policy struct {
	// Force replaces an existing regular file.
	Force bool
	// Inputs are files the command reads: the output is never one of them,
	// whatever name reaches it.
	Inputs []string
	// Ours, when set, says whether an existing file is one this command
	// wrote before (given its first bytes): such a file is replaced
	// without Force.
	Ours func(head []byte) bool
}

// headBytes is how much of an existing file Policy.Ours sees.
const headBytes = 4096

// Check refuses an output path the policy does not let tracehouse write:
// its directory missing, a special file (or a symlink to one), one of the
// inputs, or (without Force, and not Ours) an existing file. nil means the
// path may be written, now.
func Check(path string, p Policy) error {
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s: directory %s does not exist", path, dir)
	case err != nil:
		return fmt.Errorf("%s: %w", path, unwrapPath(err))
	case !st.IsDir():
		return fmt.Errorf("%s: %s is not a directory", path, dir)
	}
	lst, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: %w", path, unwrapPath(err))
	}
	if err := regular(path, lst); err != nil {
		return err
	}
	// (by identity: device and inode, whatever names reach the file)
	for _, in := range p.Inputs {
		if ist, err := os.Stat(in); err == nil {
			if ost, err := os.Stat(path); err == nil && os.SameFile(ist, ost) {
				return fmt.Errorf("%s %w %s", path, ErrIsInput, in)
			}
		}
	}
	switch {
	case p.Force:
		return nil
	case p.Ours == nil:
		return fmt.Errorf("%s: %w", path, ErrExists)
	case ours(path, p.Ours):
		return nil
	}
	return fmt.Errorf("%s: %w", path, ErrNotOurs)
}

// regular refuses a special file at path (lst is its Lstat): a symlink is
// judged by what it points to, as a user reading the name would.
func regular(path string, lst fs.FileInfo) error {
	mode := lst.Mode()
	if mode&fs.ModeSymlink != 0 {
		if st, err := os.Stat(path); err == nil {
			mode = st.Mode()
		} else {
			mode = 0 // a dangling link: replacing it writes a regular file
		}
	}
	if mode.IsRegular() || mode == 0 {
		return nil
	}
	kind := "a special file"
	switch {
	case mode.IsDir():
		kind = "a directory"
	case mode&fs.ModeNamedPipe != 0:
		kind = "a FIFO"
	case mode&fs.ModeSocket != 0:
		kind = "a socket"
	case mode&fs.ModeDevice != 0:
		kind = "a device"
	}
	return fmt.Errorf("%s: %s, %w", path, kind, ErrSpecial)
}

// ours reads the head of path for Policy.Ours. Only a regular file is
// opened (Check has refused others), so the read cannot block.
func ours(path string, mine func([]byte) bool) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, headBytes)
	n, _ := io.ReadFull(f, head)
	return mine(head[:n])
}

// Write writes path through write, into a temporary file beside it that
// Replace moves into place once it is whole (mode 0644): a failed write
// leaves nothing at path, and a reader never sees half a file. Errors name
// path, never the temporary name.
func Write(path string, write func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fmt.Errorf("write %s: %w", path, err)
	}
	err = write(tmp)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o644)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	return Replace(tmp.Name(), path)
}

// Replace moves the finished temporary file tmp to path, after checking
// again that path is not (now) a special file: between Check and here an
// output may take minutes. tmp is removed when the move fails.
func Replace(tmp, path string) error {
	if lst, err := os.Lstat(path); err == nil {
		if err := regular(path, lst); err != nil {
			os.Remove(tmp)
			return err
		}
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("%s: %w", path, unwrapPath(err))
	}
	return nil
}

// unwrapPath drops an *fs.PathError's path (the message names the output
// itself, not a temporary name).
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return fmt.Errorf("%s: %w", le.Op, le.Err)
	}
	return err
}
