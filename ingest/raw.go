package ingest

import (
	"bufio"
	"context"
	"io"

	"golang.org/x/sync/errgroup"
)

// This file exports the decoding front end (gzip detection, the byte
// splitter, decimal times, file-name identity) for the trace rewriters in
// tracefile/, which stream a trace without loading it.

// RawBatch is a run of complete event objects cut from a trace, in stream
// order. Data is owned by the batch.
type RawBatch struct {
	Seq   int    // 0, 1, 2... in stream order
	First int64  // index in traceEvents of the batch's first event
	Base  int64  // offset of Data[0] in the decompressed stream
	Data  []byte // the events and the separators between them
	spans []span
	pool  chan []byte
}

// Recycle hands the batch's buffer back to the splitter; the batch must not
// be used afterwards. Without it every batch costs a fresh buffer.
func (b *RawBatch) Recycle() {
	select {
	case b.pool <- b.Data[:0]:
	default:
	}
	b.Data, b.spans = nil, nil
}

// Len is the number of events in the batch.
func (b *RawBatch) Len() int { return len(b.spans) }

// Event returns the i-th event's bytes and their offset in the decompressed
// stream.
func (b *RawBatch) Event(i int) ([]byte, int64) {
	sp := b.spans[i]
	return b.Data[sp.start:sp.end], b.Base + int64(sp.start)
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
// batches, in stream order; it does not close out. Damage is a *ParseError
// naming file. The splitter is the one ingest uses: a byte scanner that finds
// event boundaries, leaving each event to be decoded by the caller (with
// fastjson, as ingest's decoders do).
func SplitEvents(ctx context.Context, r io.Reader, file string, out chan<- *RawBatch) (Layout, error) {
	br := bufio.NewReaderSize(r, 4096)
	array := startsWithArray(br)
	raw := make(chan *rawBatch, 2)
	pool := make(chan []byte, 2*cap(out)+4)
	sp := newSplitter(fullReader{br}, file, pool)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(safely(file, func() error {
		defer close(raw)
		return sp.run(gctx, raw)
	}))
	g.Go(func() error {
		for b := range raw {
			rb := &RawBatch{Seq: b.seq, First: b.first, Base: b.base, Data: b.data, spans: b.spans, pool: pool}
			select {
			case out <- rb:
			case <-gctx.Done():
				for range raw {
				}
				return gctx.Err()
			}
		}
		return nil
	})
	err := g.Wait()
	return Layout{Array: array, Meta: sp.meta, Bytes: sp.total}, err
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

// OpenTrace opens a trace file, decompressing gzip (detected by its magic
// bytes, not its name); gz reports whether it was compressed.
func OpenTrace(path string) (r io.ReadCloser, gz bool, err error) {
	r, gz, err = openTrace(path, nil)
	if pe, ok := err.(*ParseError); ok {
		pe.File = path
	}
	return r, gz, err
}

// MicrosToNanos converts the decimal text of a JSON number of microseconds to
// integer nanoseconds without a float64 round trip; ok is false for text
// that is not a JSON number or overflows int64.
func MicrosToNanos(b []byte) (ns int64, ok bool) {
	if !validNumber(b) {
		return 0, false
	}
	return microsToNanos(b)
}

// ParseInt parses the text of a JSON integer that fits int64.
func ParseInt(b []byte) (int64, bool) {
	v, isInt, ok := parseInt(b)
	return v, isInt && ok && validNumber(b)
}

// ValidNumber reports whether b is a number by JSON's grammar.
func ValidNumber(b []byte) bool { return validNumber(b) }

// NameIdentity is what a trace's file name says about it.
type NameIdentity struct {
	Rank   int    // -1 when the name does not say
	Stage  string // prefill, decode or ""
	Merged bool   // merged-*: several ranks in one file
}

// IdentifyName reads rank, stage and merging from a trace's base name, by
// the same rules as ingest.
func IdentifyName(base string) NameIdentity {
	id := identifyName(base)
	return NameIdentity{Rank: id.rank, Stage: id.stage, Merged: id.merged}
}

// DirStage returns the stage named by the directory component closest to a
// file that equals prefill, extend or decode, "" when none does.
func DirStage(path string) string { return dirStage(path) }

// AnnotationStage reads a stage (prefill, decode, mixed or "") from an
// annotation name, by the same rules as ingest.
func AnnotationStage(name []byte) string {
	s, _ := annotationStage(name)
	return s
}

// Category kinds for the rewriters.
const (
	CatOther          = catOther
	CatKernel         = catKernel
	CatMemcpy         = catMemcpy
	CatMemset         = catMemset
	CatLaunch         = catLaunch
	CatCPUOp          = catCPUOp
	CatPython         = catPython
	CatUserAnnotation = catUserAnnotation
	CatGPUAnnotation  = catGPUAnnotation
)

// Category classifies an event's cat as ingest does.
func Category(cat []byte) int { return category(cat) }
