package decode

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// ErrSpecial is a path naming something other than a regular file: a FIFO
// or a device (/dev/zero) never ends, and opening a FIFO blocks until a
// writer comes, so neither is ever read as a trace.
var ErrSpecial = errors.New("not a regular file")

// SpecialKind names what a non-regular file is ("a FIFO", "a device"),
// "" for a regular file.
func SpecialKind(mode fs.FileMode) string {
	switch {
	case mode.IsRegular():
		return ""
	case mode.IsDir():
		return "a directory"
	case mode&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case mode&fs.ModeSocket != 0:
		return "a socket"
	case mode&fs.ModeDevice != 0:
		return "a device"
	}
	return "a special file"
}

// OpenRegular opens path for reading if it is a regular file (after
// symlinks), else fails with ErrSpecial naming what it is. The open does
// not wait on a FIFO (O_NONBLOCK) and the check is of the file opened, so
// a file swapped for a FIFO after it was found cannot hang the reader.
func OpenRegular(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if kind := SpecialKind(st.Mode()); kind != "" {
		f.Close()
		return nil, fmt.Errorf("%s, %w: only regular files are read", kind, ErrSpecial)
	}
	return f, nil
}

// ContextReader reads r until ctx is done: each read first checks ctx, so
// a long read (hashing a large file) stops at the next chunk once
// interrupted.
type ContextReader struct {
	Ctx context.Context
	R   io.Reader
}

func (c ContextReader) Read(p []byte) (int, error) {
	if err := c.Ctx.Err(); err != nil {
		return 0, err
	}
	return c.R.Read(p)
}
