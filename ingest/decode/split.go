package decode

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"math/bits"
	"strconv"

	"github.com/tracehouse/tracehouse/parseerr"
)

// Limits that turn pathological input into a clear error instead of unbounded
// memory.
const (
	maxEventBytes = 64 << 20 // one event object
	maxMetaBytes  = 64 << 20 // all top-level keys other than traceEvents
	batchBytes    = 1 << 20  // target size of a batch handed to decoders
	// Event ids are trace_id * 2^32 + the event's ordinal.
	maxEvents = 1<<32 - 1
)

// MaxEvents is the most events a trace may hold (event ids are trace_id *
// 2^32 + the event's index); the splitter checks it while it counts
// events, its reader once batches are cut by guess.
const MaxEvents = maxEvents

// Batch is a run of complete event objects cut from the decompressed
// stream, in stream order. Data is owned by the batch; Spans index into it.
//
// A batch cut by guess (Splitter.Guess) has a Span for each run of events
// (about 8 KiB): the events and the commas between them, with one
// byte more at each end, which Array overwrites with '[' and ']' for the
// reader to parse the run as one JSON array. A parse that fails means a
// damaged trace or a wrong guess, which only splitting the trace again
// without guessing tells apart. (Runs, not the whole batch: the parsed
// values of a megabyte held at once cost the garbage collector more than
// finding the events' ends did.)
type Batch struct {
	Seq     int    // 0, 1, 2... in stream order
	Data    []byte // the events and the separators between them
	Spans   []Span
	First   int64 // index of the first event in traceEvents; -1 once a batch before was guessed
	Base    int64 // stream offset of Data[0]
	Guessed bool  // cut by guess: each Span is a run of events (Array)
	pool    chan []byte
	buf     []byte // the whole buffer Data is cut from, for Recycle
}

// Array makes the i-th run of events of a guessed batch one JSON array
// (overwriting its first and last byte) and returns it.
func (b *Batch) Array(i int) []byte {
	a := b.Data[b.Spans[i].Start:b.Spans[i].End]
	a[0], a[len(a)-1] = '[', ']'
	return a
}

// Span is one event's bytes in a batch: Data[Start:End].
type Span struct{ Start, End int32 }

// Recycle hands the batch's buffer back to the splitter that cut it; the
// batch must not be used afterwards. Without it every batch costs a fresh
// buffer.
//
// The whole buffer goes back, not Data, which starts where the batch's
// first event does: a guessed batch's never starts at the buffer's first
// byte, and a buffer handed back shorter than the splitter's was never
// taken again (a new 1.25 MiB buffer for every batch, 280 MB of garbage
// for a 270 MB trace, before this).
func (b *Batch) Recycle() {
	select {
	case b.pool <- b.buf[:0]:
	default:
	}
	b.Data, b.Spans, b.buf = nil, nil, nil
}

// Len is the number of events in a batch not guessed.
func (b *Batch) Len() int { return len(b.Spans) }

// Event returns the i-th event's bytes and their offset in the decompressed
// stream.
func (b *Batch) Event(i int) ([]byte, int64) {
	sp := b.Spans[i]
	return b.Data[sp.Start:sp.End], b.Base + int64(sp.Start)
}

// ErrNotTrace marks JSON that is not a Chrome trace (a sidecar, a config).
var ErrNotTrace = errors.New("not a Chrome trace")

// Splitter finds event boundaries in a Chrome trace without decoding events:
// the pass over the bytes happens here, the decoding of each event in
// parallel decoders (with Guess, most batches are cut without this pass,
// and the decoders' parse is the only one). It accepts {"traceEvents": [...], ...} and a bare array
// of events, and keeps the other top-level keys as raw JSON.
type Splitter struct {
	r    io.Reader
	file string
	pool chan []byte // recycled batch buffers

	buf   []byte // buf[:n] is data; buf[0] is at stream offset base
	n     int
	base  int64
	eof   bool
	rerr  error
	total int64 // decompressed bytes read

	// The batch under construction starts at buf[bstart].
	bstart int
	spans  []Span
	events int64
	seq    int

	meta      map[string][]byte
	metaBytes int
	sawEvents bool

	guess   bool // cut batches by guess where the layout allows (Guess)
	guessed bool // a batch was cut by guess: events are counted no more
}

// Guess makes the splitter cut batches of events by guess where it can
// instead of finding the end of every event: about batchBytes on, a
// newline (never inside a JSON string) followed by blanks and '{', with
// a comma before it, is taken as the boundary between two events.
// Nothing is scanned up to there, so each byte of such a batch is read
// once, by the reader's parse of the batch as an array (Batch.Array).
// A guess inside an event makes that parse fail, as damage does; the
// caller then splits the trace again without guessing, which also
// positions the errors of a damaged trace (once a batch is guessed,
// Batch.First and the splitter's event indexes are unknown: -1).
func (s *Splitter) Guess() { s.guess = true }

// Guessed says whether a batch was cut by guess.
func (s *Splitter) Guessed() bool { return s.guessed }

// NewSplitter reads a trace's decompressed bytes from r; damage is a
// *parseerr.Error naming file. Batch buffers come from pool (and go back
// to it through Batch.Recycle) when it has some.
func NewSplitter(r io.Reader, file string, pool chan []byte) *Splitter {
	// Fill each buffer: a gzip reader returns 32 KiB per call, and the
	// splitter ends a batch wherever its data ends inside an event.
	return &Splitter{r: fullReader{r}, file: file, pool: pool, buf: getBuf(pool, batchBytes+batchBytes/4), meta: map[string][]byte{}}
}

// Meta holds the raw JSON of every top-level key but traceEvents (complete
// once Run has returned).
func (s *Splitter) Meta() map[string][]byte { return s.meta }

// Bytes is the number of decompressed bytes read so far.
func (s *Splitter) Bytes() int64 { return s.total }

func getBuf(pool chan []byte, size int) []byte {
	select {
	case b := <-pool:
		if cap(b) >= size {
			return b[:cap(b)]
		}
	default:
	}
	return make([]byte, size)
}

func (s *Splitter) fail(cause error, off int64, format string, args ...any) error {
	return parseerr.AtOffset(s.file, -1, off, "", parseerr.Errorf(cause, format, args...))
}

func (s *Splitter) failEvent(cause error, off int64, format string, args ...any) error {
	return parseerr.AtOffset(s.file, s.events, off, "", parseerr.Errorf(cause, format, args...))
}

func (s *Splitter) off(pos int) int64 { return s.base + int64(pos) }

// more reads input, first moving buf[keep:n] to the front (or growing buf when
// nothing can be dropped). It returns how far positions moved, and false at
// the end of input.
func (s *Splitter) more(keep int, limit int, what string) (int, bool, error) {
	if s.eof {
		return 0, false, nil
	}
	shift := 0
	if s.n == len(s.buf) {
		if keep > 0 {
			copy(s.buf, s.buf[keep:s.n])
			s.n -= keep
			s.base += int64(keep)
			shift = keep
		} else {
			if len(s.buf) >= limit {
				return 0, false, s.failEvent(ErrTooLarge, s.off(0), "%s larger than %d MiB", what, limit>>20)
			}
			nb := make([]byte, 2*len(s.buf))
			copy(nb, s.buf[:s.n])
			s.buf = nb
		}
	}
	for {
		m, err := s.r.Read(s.buf[s.n:])
		s.n += m
		s.total += int64(m)
		if err != nil {
			s.eof = true
			if err != io.EOF {
				s.rerr = err
			}
			return shift, m > 0, nil
		}
		if m > 0 {
			return shift, true, nil
		}
	}
}

// readErr turns a reader failure (gzip damage, I/O) into a positioned error.
func (s *Splitter) readErr() error {
	if s.rerr == nil {
		return nil
	}
	if errors.Is(s.rerr, io.ErrUnexpectedEOF) {
		return s.fail(ErrGzip, s.total, "truncated gzip stream (position in the decompressed JSON)")
	}
	return s.fail(ErrGzip, s.total, "%v", s.rerr)
}

func (s *Splitter) endErr(inEvent bool, what string) error {
	if err := s.readErr(); err != nil {
		return err
	}
	if inEvent {
		return s.failEvent(ErrTruncated, s.total, "input ends inside %s", what)
	}
	return s.fail(ErrTruncated, s.total, "input ends inside %s", what)
}

// next returns the position of the next non-blank byte, reading as needed;
// keep is the first byte that must survive a buffer move.
func (s *Splitter) next(pos, keep int, inEvent bool, what string) (int, int, error) {
	for {
		for ; pos < s.n; pos++ {
			if c := s.buf[pos]; c != ' ' && c != '\n' && c != '\r' && c != '\t' {
				return pos, keep, nil
			}
		}
		shift, ok, err := s.more(keep, maxEventBytes, what)
		if err != nil {
			return 0, 0, err
		}
		pos -= shift
		keep -= shift
		if !ok {
			return 0, 0, s.endErr(inEvent, what)
		}
	}
}

// value returns the end of the JSON value starting at pos, reading as needed.
func (s *Splitter) value(pos int, limit int, inEvent bool, what string) (start, end int, err error) {
	for {
		end, err := matchEnd(s.buf[:s.n], pos, s.eof)
		if err != nil {
			if inEvent {
				return 0, 0, s.failEvent(ErrSyntax, s.off(pos), "%s: %v", what, err)
			}
			return 0, 0, s.fail(ErrSyntax, s.off(pos), "%s: %v", what, err)
		}
		if end >= 0 {
			return pos, end, nil
		}
		shift, ok, err := s.more(pos, limit, what)
		if err != nil {
			return 0, 0, err
		}
		pos -= shift
		if !ok {
			return 0, 0, s.endErr(inEvent, what)
		}
	}
}

// run splits the whole input, sending batches to out.
// Run cuts the whole stream into batches, sent to out in order; it does
// not close out.
func (s *Splitter) Run(ctx context.Context, out chan<- *Batch) error {
	if _, ok, _ := s.more(0, maxEventBytes, "the file"); !ok && s.n == 0 {
		if err := s.readErr(); err != nil {
			return err
		}
		return s.fail(ErrTruncated, 0, "empty file")
	}
	pos, _, err := s.next(0, 0, false, "the file")
	if err != nil {
		return err
	}
	if bytes.HasPrefix(s.buf[pos:s.n], []byte("\xef\xbb\xbf")) {
		if pos, _, err = s.next(pos+3, pos+3, false, "the file"); err != nil {
			return err
		}
	}
	switch s.buf[pos] {
	case '[':
		s.sawEvents = true
		pos, err = s.eventArray(ctx, pos+1, out)
	case '{':
		pos, err = s.object(ctx, pos+1, out)
	default:
		return s.fail(ErrNotTrace, s.off(pos), "top level is not a JSON object or array")
	}
	if err != nil {
		return err
	}
	// Only blanks may follow.
	for {
		for ; pos < s.n; pos++ {
			if c := s.buf[pos]; c != ' ' && c != '\n' && c != '\r' && c != '\t' {
				return s.fail(ErrSyntax, s.off(pos), "unexpected %s after the end of the trace", quoteByte(c))
			}
		}
		shift, ok, err := s.more(pos, maxEventBytes, "the file")
		if err != nil {
			return err
		}
		pos -= shift
		if !ok {
			return s.readErr()
		}
	}
}

// object walks the top-level object, pos just past its opening brace.
func (s *Splitter) object(ctx context.Context, pos int, out chan<- *Batch) (int, error) {
	for first := true; ; first = false {
		var err error
		if pos, _, err = s.next(pos, pos, false, "the top-level object"); err != nil {
			return 0, err
		}
		c := s.buf[pos]
		if c == '}' {
			if !s.sawEvents {
				return 0, s.fail(ErrNotTrace, s.off(pos), "no traceEvents array")
			}
			return pos + 1, nil
		}
		if !first {
			if c != ',' {
				return 0, s.fail(ErrSyntax, s.off(pos), "expected , or } after a top-level value, found %s", quoteByte(c))
			}
			if pos, _, err = s.next(pos+1, pos+1, false, "the top-level object"); err != nil {
				return 0, err
			}
			c = s.buf[pos]
		}
		if c != '"' {
			if !s.sawEvents {
				return 0, s.fail(ErrNotTrace, s.off(pos), "top level is not a JSON object of a trace")
			}
			return 0, s.fail(ErrSyntax, s.off(pos), "expected a key, found %s", quoteByte(c))
		}
		start, end, err := s.value(pos, maxMetaBytes, false, "a top-level key")
		if err != nil {
			return 0, err
		}
		key, uerr := strconv.Unquote(string(s.buf[start:end]))
		if uerr != nil {
			return 0, s.fail(ErrSyntax, s.off(start), "bad top-level key %q", s.buf[start:min(end, start+40)])
		}
		// The colon, then the value; the key must stay in the buffer only
		// until here.
		pos, _, err = s.next(end, end, false, "the top-level object")
		if err != nil {
			return 0, err
		}
		if s.buf[pos] != ':' {
			return 0, s.fail(ErrSyntax, s.off(pos), "expected : after key %q, found %s", key, quoteByte(s.buf[pos]))
		}
		if pos, _, err = s.next(pos+1, pos+1, false, "the top-level object"); err != nil {
			return 0, err
		}
		if key == "traceEvents" {
			if s.sawEvents {
				return 0, s.fail(ErrDuplicate, s.off(pos), "traceEvents appears twice")
			}
			if s.buf[pos] != '[' {
				return 0, s.fail(ErrType, s.off(pos), "traceEvents is not an array")
			}
			s.sawEvents = true
			if pos, err = s.eventArray(ctx, pos+1, out); err != nil {
				return 0, err
			}
			continue
		}
		vs, ve, err := s.value(pos, maxMetaBytes, false, "top-level key "+strconv.Quote(key))
		if err != nil {
			return 0, err
		}
		if _, dup := s.meta[key]; dup {
			return 0, s.fail(ErrDuplicate, s.off(start), "top-level key %q appears twice", key)
		}
		s.metaBytes += ve - vs
		if s.metaBytes > maxMetaBytes {
			return 0, s.fail(ErrTooLarge, s.off(vs), "top-level keys other than traceEvents exceed %d MiB", maxMetaBytes>>20)
		}
		s.meta[key] = bytes.Clone(s.buf[vs:ve])
		pos = ve
	}
}

// eventArray splits the events of traceEvents, pos just past its '['.
func (s *Splitter) eventArray(ctx context.Context, pos int, out chan<- *Batch) (int, error) {
	s.bstart = pos
	s.spans = s.spans[:0]
	for first := true; ; first = false {
		var err error
		if pos, s.bstart, err = s.next(pos, s.bstart, true, "traceEvents"); err != nil {
			return 0, err
		}
		c := s.buf[pos]
		if c == ']' {
			if len(s.spans) > 0 {
				if err := s.emit(ctx, pos, out); err != nil {
					return 0, err
				}
				pos = s.bstart
			}
			return pos + 1, nil
		}
		if !first {
			if c != ',' {
				// The damage follows the event just read; name that one.
				s.events--
				return 0, s.failEvent(ErrSyntax, s.off(pos), "unexpected %s after the event (want , or ])", quoteByte(c))
			}
			if pos, s.bstart, err = s.next(pos+1, s.bstart, true, "traceEvents"); err != nil {
				return 0, err
			}
			c = s.buf[pos]
		}
		if c != '{' {
			if c == ']' {
				return 0, s.failEvent(ErrSyntax, s.off(pos), "trailing comma before ]")
			}
			return 0, s.failEvent(ErrType, s.off(pos), "event is not a JSON object (starts with %s)", quoteByte(c))
		}
		// A batch starts here: cut it by guess while that finds a cut.
		for s.guess && len(s.spans) == 0 && pos > s.bstart {
			cut, err := s.guessCut(ctx, &pos, out)
			if err != nil {
				return 0, err
			}
			if !cut {
				break
			}
		}
		// Find the event's end; on a short buffer either hand off the
		// finished events and move the partial one to a fresh buffer, or
		// grow the buffer for one very large event.
		for {
			end, merr := matchEnd(s.buf[:s.n], pos, s.eof)
			if merr != nil {
				return 0, s.failEvent(ErrSyntax, s.off(pos), "%v", merr)
			}
			if end >= 0 {
				if end-s.bstart > 1<<31-1 {
					return 0, s.failEvent(ErrTooLarge, s.off(pos), "event larger than %d MiB", maxEventBytes>>20)
				}
				if s.events >= maxEvents {
					return 0, s.failEvent(ErrTooLarge, s.off(pos), "more than %d events in one trace", int64(maxEvents))
				}
				s.spans = append(s.spans, Span{int32(pos - s.bstart), int32(end - s.bstart)})
				s.events++
				pos = end
				break
			}
			if s.eof {
				return 0, s.endErr(true, "an event")
			}
			if len(s.spans) > 0 {
				if err := s.emit(ctx, pos, out); err != nil {
					return 0, err
				}
				pos = s.bstart
			} else if s.n-pos >= maxEventBytes {
				return 0, s.failEvent(ErrTooLarge, s.off(pos), "event larger than %d MiB", maxEventBytes>>20)
			}
			shift, _, err := s.more(s.bstart, maxEventBytes+batchBytes, "an event")
			if err != nil {
				return 0, err
			}
			pos -= shift
			s.bstart -= shift
		}
		if pos-s.bstart >= batchBytes {
			if err := s.emit(ctx, pos, out); err != nil {
				return 0, err
			}
			pos = s.bstart
		}
	}
}

// emit hands buf[bstart:end] with its spans to the decoders and continues in
// a fresh buffer holding buf[end:n].
func (s *Splitter) emit(ctx context.Context, end int, out chan<- *Batch) error {
	if len(s.spans) == 0 {
		return nil
	}
	return s.send(ctx, end, s.spans, false, out)
}

// send hands buf[bstart:end] to the decoders as a batch of these spans
// (runs of events when guessed) and continues in a fresh buffer holding
// buf[end:n].
func (s *Splitter) send(ctx context.Context, end int, spans []Span, guessed bool, out chan<- *Batch) error {
	first := s.events - int64(len(spans))
	if s.guessed {
		first = -1
	}
	b := &Batch{
		Seq:     s.seq,
		Data:    s.buf[s.bstart:end],
		Spans:   spans,
		First:   first,
		Base:    s.off(s.bstart),
		Guessed: guessed,
		pool:    s.pool,
		buf:     s.buf,
	}
	size := len(s.buf)
	if size < batchBytes+batchBytes/4 {
		size = batchBytes + batchBytes/4
	}
	nb := getBuf(s.pool, size)
	if len(nb) < s.n-end {
		nb = make([]byte, 2*(s.n-end))
	}
	copy(nb, s.buf[end:s.n])
	s.base += int64(end)
	s.n -= end
	s.buf = nb
	s.bstart = 0
	s.spans = make([]Span, 0, cap(spans))
	s.seq++
	select {
	case out <- b:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// guessBytes is the size of a run of events cut by guess, guessWindow how
// far past it a cut is looked for. By callgrind on a 40 MB SGLang trace,
// runs of 8 KiB cost 7.6% fewer instructions than finding each event's
// end, runs of 32 KiB 6.9% (the garbage collector marks the parsed
// values held), one array of the whole megabyte 7.2% more.
const (
	guessBytes  = 8 << 10
	guessWindow = 8 << 10
)

// guessCut cuts a batch by guess (Guess) from the event starting at
// buf[*pos], no event of the batch being found yet, and moves *pos to the
// event after it; false when no cut was found, nothing then done.
func (s *Splitter) guessCut(ctx context.Context, pos *int, out chan<- *Batch) (bool, error) {
	s.bstart = *pos - 1
	runs := s.spans[:0]
	start, end := *pos, 0 // the run being cut begins at start; the batch ends at end
	for start-s.bstart < batchBytes {
		want := start + guessBytes + guessWindow
		for s.n < want && !s.eof {
			if s.n == len(s.buf) && s.bstart == 0 {
				break // a full buffer: look in what it holds
			}
			shift, ok, err := s.more(s.bstart, maxEventBytes+batchBytes, "an event")
			if err != nil {
				return false, err
			}
			*pos -= shift
			start -= shift
			s.bstart -= shift
			want -= shift
			if !ok {
				break
			}
		}
		j, k := s.guessAt(start, min(s.n, want))
		if j < 0 {
			break
		}
		// The run is buf[start:k] with one byte more at each end, for
		// Batch.Array to make brackets of: buf[start-1] is past the
		// previous run's comma.
		runs = append(runs, Span{int32(start - 1 - s.bstart), int32(k + 1 - s.bstart)})
		start, end = j, k+1
	}
	if len(runs) == 0 {
		s.spans = runs
		return false, nil
	}
	s.guessed = true
	if err := s.send(ctx, end, runs, true, out); err != nil {
		return false, err
	}
	*pos = start - end
	return true, nil
}

// phWithin is how far into an object phFirst looks.
const phWithin = 128

// phFirst says whether b, the start of an object's text past its brace,
// has a "ph" key before any bracket: what every event Kineto writes
// does, and the objects a guess may also meet do not (those in arrays in
// an event's args; those of a top-level array after traceEvents, which a
// guess near the end of the events reaches). A guess at another object
// only costs a second load (errGuessed); this makes it rare.
func phFirst(b []byte) bool {
	i := bytes.Index(b, []byte(`"ph"`))
	return i >= 0 && !bytes.ContainsAny(b[:i], "{}[]")
}

// guessAt looks for the first boundary between two events guessBytes or
// more past the event at buf[start], before lim: a newline followed by
// blanks and '{' (j), with a comma (k) before it, the object a "ph" key
// (phFirst). j is -1 when there is none.
func (s *Splitter) guessAt(start, lim int) (j, k int) {
	b := s.buf[:s.n]
	for from := start + guessBytes; from < lim; {
		i := bytes.IndexByte(b[from:lim], '\n')
		if i < 0 {
			return -1, 0
		}
		i += from
		from = i + 1
		j := i + 1
		for j < len(b) && (b[j] == ' ' || b[j] == '\t' || b[j] == '\r') {
			j++
		}
		if j == len(b) || b[j] != '{' || !phFirst(b[j+1:min(len(b), j+phWithin)]) {
			continue
		}
		// b[start] is '{': the look back stops there at the latest.
		k := i - 1
		for b[k] == ' ' || b[k] == '\t' || b[k] == '\r' || b[k] == '\n' {
			k--
		}
		if b[k] == ',' {
			return j, k
		}
	}
	return -1, 0
}

func quoteByte(c byte) string { return strconv.QuoteRune(rune(c)) }

// matchEnd returns the end of the JSON value starting at b[i], or -1 when b
// ends first (eof says whether more can come: a number at the very end of the
// input is complete). It checks bracket structure and strings only; the
// decoders validate each event fully.
//
// Outside strings it skips eight bytes at a time that hold no quote or
// bracket (structural): a byte at a time, this loop was most of the
// splitter's goroutine, which also decompresses (270 MB trace: 0.45 s).
func matchEnd(b []byte, i int, eof bool) (int, error) {
	switch b[i] {
	case '"':
		return stringEnd(b, i+1)
	case '{', '[':
	default:
		for j := i; j < len(b); j++ {
			switch b[j] {
			case ',', '}', ']', ' ', '\n', '\r', '\t':
				return j, nil
			}
		}
		if eof {
			return len(b), nil
		}
		return -1, nil
	}
	var stack [64]byte
	deep := stack[:0]
	for j := i; j < len(b); j++ {
		if j+8 <= len(b) {
			m := structural(binary.LittleEndian.Uint64(b[j:]))
			if m == 0 {
				j += 7
				continue
			}
			j += bits.TrailingZeros64(m) >> 3
		}
		switch c := b[j]; c {
		case '"':
			e, err := stringEnd(b, j+1)
			if e < 0 || err != nil {
				return e, err
			}
			j = e - 1
		case '{', '[':
			deep = append(deep, c)
		case '}', ']':
			if len(deep) == 0 {
				return 0, errors.New("unbalanced " + string(c))
			}
			open := deep[len(deep)-1]
			if open == '{' && c != '}' || open == '[' && c != ']' {
				return 0, errors.New("mismatched " + string(open) + " and " + string(c))
			}
			deep = deep[:len(deep)-1]
			if len(deep) == 0 {
				return j + 1, nil
			}
		}
	}
	return -1, nil
}

// Word-at-a-time byte tests (eight bytes of a little-endian word at once).
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// zeroBytes has the high bit of the lowest zero byte of w set, and none
// below it (bits above it may be set too: only the lowest is exact).
func zeroBytes(w uint64) uint64 { return (w - ones) &^ w & highs }

// structural marks the bytes of w that may be a quote or a bracket: '"',
// and (b|0x20)&0xF9 == 0x79, which is '[', ']', '{', '}' and also 'Y', '_',
// 'y', DEL; matchEnd's switch ignores the extras.
func structural(w uint64) uint64 {
	return zeroBytes(w^(ones*'"')) | zeroBytes((w|ones*0x20)&(ones*0xF9)^(ones*0x79))
}

// stringEnd returns the index just past the closing quote of a string whose
// body starts at b[i], or -1 when b ends first. The strings of an event are
// mostly short (keys, "X", names), so it looks at eight bytes at a time
// rather than paying bytes.IndexByte's call for each.
func stringEnd(b []byte, i int) (int, error) {
	for {
		q := i
		for ; q+8 <= len(b); q += 8 {
			if m := zeroBytes(binary.LittleEndian.Uint64(b[q:]) ^ (ones * '"')); m != 0 {
				q += bits.TrailingZeros64(m) >> 3
				break
			}
		}
		for ; q < len(b) && b[q] != '"'; q++ {
		}
		if q >= len(b) {
			return -1, nil
		}
		// The quote is escaped when an odd number of backslashes precede it.
		bs := 0
		for p := q - 1; p >= i && b[p] == '\\'; p-- {
			bs++
		}
		if bs%2 == 0 {
			return q + 1, nil
		}
		i = q + 1
	}
}
