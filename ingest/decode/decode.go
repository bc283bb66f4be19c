// Package decode is ingest's front end for one trace file: opening it (gzip
// detected by its magic bytes), cutting its event array into batches
// without decoding the events, exact decimal times, event categories, and
// what a trace's file name, directory and annotations say about its rank
// and stage. It links no database: the trace rewriters in tracefile read
// traces through it by the same rules as ingest.
package decode

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/gzip"

	"github.com/tracehouse/tracehouse/parseerr"
)

// Causes of a damaged trace, matchable with errors.Is (ingest re-exports
// them).
var (
	ErrTruncated = errors.New("unexpected end of data")
	ErrSyntax    = errors.New("invalid JSON")
	ErrType      = errors.New("wrong type")
	ErrMissing   = errors.New("missing field")
	ErrRange     = errors.New("value out of range")
	ErrDuplicate = errors.New("duplicate key")
	ErrTooLarge  = errors.New("too large")
	ErrLayout    = errors.New("not a Chrome trace")
	ErrGzip      = errors.New("bad gzip data")
)

// Guard turns a panic in f into an error naming the file, so one bad file
// can never take a whole run down with a Go stack trace.
func Guard(path string, f func() error) func() error {
	return func() (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("%s: internal error (please report it with the file): %v", path, r)
			}
		}()
		return f()
	}
}

// Counter hears about bytes read from disk (a progress bar).
type Counter interface{ Add(n int64) }

// Open opens a trace file, decompressing gzip (detected by its magic bytes,
// not its name); gz reports whether it was compressed. Bytes read from disk
// go to c when it is not nil. A bad gzip header is a *parseerr.Error
// naming path. Only a regular file is opened (OpenRegular).
func Open(path string, c Counter) (r io.ReadCloser, gz bool, err error) {
	f, err := OpenRegular(path)
	if err != nil {
		return nil, false, err
	}
	var src io.Reader = f
	if c != nil {
		src = &countingReader{r: f, c: c}
	}
	var magic [2]byte
	n, _ := io.ReadFull(f, magic[:])
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		f.Close()
		return nil, false, err
	}
	if n == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		// The inflater reads through a bufio.Reader of its own, 4 KiB at a
		// time, unless given one: with this one a 28 MB gzip trace takes
		// about 110 reads from disk instead of 7,000.
		zr, err := gzip.NewReader(bufio.NewReaderSize(src, gzipReadBytes))
		if err != nil {
			f.Close()
			return nil, true, parseerr.AtOffset(path, -1, 0, "", parseerr.Errorf(ErrGzip, "bad gzip header: %v", err))
		}
		return readCloser{zr, f}, true, nil
	}
	return readCloser{src, f}, false, nil
}

// gzipReadBytes is how much of a gzip file one read from disk takes.
const gzipReadBytes = 256 << 10

// readCloser reads through r and closes the file underneath.
type readCloser struct {
	io.Reader
	c io.Closer
}

func (r readCloser) Close() error { return r.c.Close() }

// countingReader reports bytes read from disk to a Counter.
type countingReader struct {
	r io.Reader
	c Counter
}

func (p *countingReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	if n > 0 {
		p.c.Add(int64(n))
	}
	return n, err
}

// Layout is what a trace holds besides its events.
type Layout struct {
	// Array is true for a bare top-level array of events, false for
	// {"traceEvents": [...], ...}.
	Array bool
	// Meta holds the raw JSON of every top-level key but traceEvents.
	Meta map[string][]byte
	// Bytes is the size of the decompressed stream.
	Bytes int64
}

// SplitEvents reads a Chrome trace from r and sends its events to out in
// batches, in stream order; it does not close out. Damage is a
// *parseerr.Error naming file. Each event is left to the caller to decode
// (with fastjson, as ingest's decoders do); Batch.Recycle hands a read
// batch's buffer back.
func SplitEvents(ctx context.Context, r io.Reader, file string, out chan<- *Batch) (Layout, error) {
	br := bufio.NewReaderSize(r, 4096)
	array := startsWithArray(br)
	sp := NewSplitter(br, file, make(chan []byte, 2*cap(out)+4))
	err := Guard(file, func() error { return sp.Run(ctx, out) })()
	return Layout{Array: array, Meta: sp.Meta(), Bytes: sp.Bytes()}, err
}

// fullReader fills each buffer it is given (a gzip reader returns 32 KiB
// per call): the splitter cuts a batch whenever its data ends inside an
// event, so short reads meant many small batches, each with a fresh buffer.
type fullReader struct{ r io.Reader }

func (f fullReader) Read(p []byte) (n int, err error) {
	for n < len(p) && err == nil {
		var m int
		m, err = f.r.Read(p[n:])
		n += m
	}
	return n, err
}

// startsWithArray peeks past blanks and a byte-order mark for a '['.
func startsWithArray(br *bufio.Reader) bool {
	for n := 64; ; n *= 2 {
		b, err := br.Peek(n)
		i := 0
		if len(b) >= 3 && b[0] == 0xef && b[1] == 0xbb && b[2] == 0xbf {
			i = 3
		}
		for ; i < len(b); i++ {
			switch b[i] {
			case ' ', '\n', '\r', '\t':
				continue
			}
			return b[i] == '['
		}
		if err != nil || n >= 4096 {
			return false
		}
	}
}
