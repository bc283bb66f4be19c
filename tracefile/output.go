package tracefile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/klauspost/compress/gzip"

	"github.com/tracehouse/tracehouse/outfile"
	"github.com/tracehouse/tracehouse/tempfiles"
)

// ErrExists is returned when the output file exists and overwriting was not
// asked for.
var ErrExists = outfile.ErrExists

// GzipLevel is the compression of .gz output. Level 1 keeps compression from
// being the slowest stage (the output is a viewing copy, not an archive).
const GzipLevel = gzip.BestSpeed

// output is a trace written under a temporary name in the destination's
// directory and renamed into place only when complete: a failed or
// interrupted rewrite leaves no partial file. A name ending in .gz is
// gzip-compressed. Only a regular file is ever replaced, and never the
// input (package outfile).
type output struct {
	path  string
	force bool
	f     *os.File
	gz    *gzip.Writer
	w     *bufio.Writer
	n     int64 // uncompressed bytes written
	err   error
}

func createOutput(path string, force bool, input string) (*output, error) {
	if err := outfile.Check(path, outfile.Policy{Force: force, Inputs: []string{input}}); err != nil {
		return nil, err
	}
	// named after this process, so that the next write of path removes
	// what a killed one left
	tmp := tempfiles.Pattern{Prefix: "." + filepath.Base(path) + ".tmp-"}
	tempfiles.Sweep(filepath.Dir(path), tmp)
	f, err := os.CreateTemp(filepath.Dir(path), tmp.CreatePattern())
	if err != nil {
		return nil, fileError(path, err)
	}
	o := &output{path: path, force: force, f: f}
	var w io.Writer = f
	if strings.HasSuffix(path, ".gz") {
		o.gz, _ = gzip.NewWriterLevel(f, GzipLevel)
		w = o.gz
	}
	o.w = bufio.NewWriterSize(w, 1<<20)
	return o, nil
}

// write appends p; the first error sticks and is reported by commit.
func (o *output) write(p []byte) {
	if o.err != nil {
		return
	}
	n, err := o.w.Write(p)
	o.n += int64(n)
	if err != nil {
		o.err = fileError(o.path, err)
	}
}

func (o *output) writeString(s string) {
	if o.err != nil {
		return
	}
	n, err := o.w.WriteString(s)
	o.n += int64(n)
	if err != nil {
		o.err = fileError(o.path, err)
	}
}

// commit finishes the file and moves it into place.
func (o *output) commit() error {
	if o.err != nil {
		o.abort()
		return o.err
	}
	err := o.w.Flush()
	if err == nil && o.gz != nil {
		err = o.gz.Close()
	}
	if err == nil {
		err = o.f.Chmod(0o644)
	}
	if err == nil {
		err = o.f.Sync()
	}
	if cerr := o.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(o.f.Name())
		return fileError(o.path, err)
	}
	tmp := o.f.Name()
	if o.force {
		return outfile.Replace(tmp, o.path)
	}
	// A hard link never replaces a file that appeared meanwhile.
	err = os.Link(tmp, o.path)
	if err == nil || errors.Is(err, fs.ErrExist) {
		os.Remove(tmp)
	} else if _, serr := os.Lstat(o.path); serr != nil {
		// No hard links here (some network filesystems): rename.
		return outfile.Replace(tmp, o.path)
	}
	if err != nil {
		os.Remove(tmp)
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%s: %w", o.path, ErrExists)
		}
		return fileError(o.path, err)
	}
	return nil
}

// abort removes the temporary file.
func (o *output) abort() {
	if o.f != nil {
		o.f.Close()
		os.Remove(o.f.Name())
	}
}
