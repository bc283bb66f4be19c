package ingest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
)

// held are rows of one table of a trace, as decoded, kept in file order
// until what they lack is known, so that each is inserted once, complete,
// rather than appended while decoding and updated after: kernels wait for
// their link (linkInGo), launches and CPU ops for their Python sites (the
// sweep) and baseTimeNanoseconds (often written after the events). DuckDB's
// UPDATEs of rows it had just appended built a hash table over them and
// rewrote their columns. Records are encoded compactly (the ordinal's
// increase, then enc's varints, absent values left out) into a buffer that
// goes to an unlinked temporary file whenever it fills, so holding them
// costs memory no longer whatever the trace's size. Should the file fail,
// records stay in memory: spilling saves memory, it never fails an ingest.
type held[T any] struct {
	dir     string
	spillAt int // bytes of records held in memory before they go to the file
	enc     func(b []byte, r *T) []byte
	dec     func(d *heldDecoder, r *T)
	buf     []byte   // records not written to f
	f       *os.File // nil until the buffer first fills
	written int64    // bytes of f holding records
	sizes   []int    // the size of each write to f, in order
	failed  bool     // the file could not be made or written: keep the rest in memory
	last    int64    // the last record's ordinal
	n       int
}

// heldSpillBytes is how much of a table's encoded records stays in memory
// before it goes to the file (the 270 MB SGLang trace's 85 k kernels and
// 85 k launches take 3.3 MB each, its 145 k CPU ops 5.6).
const heldSpillBytes = 4 << 20

func newHeld[T any](dir string, enc func([]byte, *T) []byte, dec func(*heldDecoder, *T)) *held[T] {
	return &held[T]{dir: dir, spillAt: heldSpillBytes, enc: enc, dec: dec}
}

// add keeps r, whose ordinal is ord; records come in ordinal order (the
// sink's stream order).
func (h *held[T]) add(ord int64, r *T) {
	if h.buf == nil {
		h.buf = make([]byte, 0, h.spillAt+h.spillAt/8)
	}
	b := binary.AppendUvarint(h.buf, uint64(ord-h.last))
	h.buf, h.last = h.enc(b, r), ord
	h.n++
	if len(h.buf) >= h.spillAt && !h.failed {
		h.spill()
	}
}

// spill writes the buffer to the file, making it on first use.
func (h *held[T]) spill() {
	if h.f == nil {
		f, err := unlinkedTemp(h.dir)
		if err != nil {
			h.failed = true
			return
		}
		h.f = f
	}
	if _, err := h.f.WriteAt(h.buf, h.written); err != nil {
		// what the failed write left past h.written is never read
		h.failed = true
		return
	}
	h.written += int64(len(h.buf))
	h.sizes = append(h.sizes, len(h.buf))
	h.buf = h.buf[:0]
}

// close removes the spill file.
func (h *held[T]) close() {
	if h.f != nil {
		h.f.Close()
		h.f = nil
	}
}

// reader reads the records back in the order they came; h must not grow
// while it does.
func (h *held[T]) reader() *heldReader[T] {
	return &heldReader[T]{h: h, left: h.n, d: heldDecoder{strs: map[string]string{}}}
}

// heldReader decodes held records one at a time, from each spilled write
// read back whole (a write holds whole records), then from the buffer.
type heldReader[T any] struct {
	h     *held[T]
	left  int
	pages int   // spilled writes read so far
	off   int64 // where the next one starts in the file
	page  []byte
	inBuf bool // d.b is the buffer's records
	ord   int64
	d     heldDecoder
	row   T
}

// next returns the next record and its ordinal, nil after the last.
func (r *heldReader[T]) next() (*T, int64, error) {
	if r.left == 0 {
		return nil, 0, nil
	}
	for len(r.d.b) == 0 {
		if err := r.more(); err != nil {
			return nil, 0, fmt.Errorf("read back held rows: %w", err)
		}
	}
	r.left--
	r.ord += int64(r.d.uv())
	var zero T
	r.row = zero
	r.h.dec(&r.d, &r.row)
	if r.d.bad {
		return nil, 0, errors.New("read back held rows: damaged record")
	}
	return &r.row, r.ord, nil
}

// more moves to the next spilled write, or to the buffer after them.
func (r *heldReader[T]) more() error {
	h := r.h
	if r.pages == len(h.sizes) {
		if r.inBuf {
			return errors.New("fewer records than held")
		}
		r.d.b, r.inBuf, r.page = h.buf, true, nil
		return nil
	}
	n := h.sizes[r.pages]
	if cap(r.page) < n {
		r.page = make([]byte, n)
	}
	r.page = r.page[:n]
	if _, err := h.f.ReadAt(r.page, r.off); err != nil {
		return err
	}
	r.d.b = r.page
	r.off += int64(n)
	r.pages++
	return nil
}

// heldDecoder reads the values of held records from b; a value that does
// not decode (a damaged file) sets bad.
type heldDecoder struct {
	b    []byte
	bad  bool
	strs map[string]string // strings met: one copy per distinct value while they are few
}

func (d *heldDecoder) byte() byte {
	if len(d.b) == 0 {
		d.bad = true
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *heldDecoder) uv() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.bad, d.b = true, nil
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *heldDecoder) v() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.bad, d.b = true, nil
		return 0
	}
	d.b = d.b[n:]
	return v
}

// opt reads a value written by appendOpt when bit is set in bits, else
// gives null.
func (d *heldDecoder) opt(bits uint, bit uint) int64 {
	if bits&bit == 0 {
		return null
	}
	return d.v()
}

func (d *heldDecoder) str() string {
	n := d.uv()
	if n > uint64(len(d.b)) {
		d.bad, d.b = true, nil
		return ""
	}
	b := d.b[:n]
	d.b = d.b[n:]
	if s, ok := d.strs[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(d.strs) < 1<<12 {
		d.strs[s] = s
	}
	return s
}

// optStr reads a string written by appendOptStr when bit is set in bits,
// else gives "".
func (d *heldDecoder) optStr(bits uint, bit uint) string {
	if bits&bit == 0 {
		return ""
	}
	return d.str()
}

// presentInt is the bit for an optional integer v that is not null.
func presentInt(v int64, bit uint) uint {
	if v == null {
		return 0
	}
	return bit
}

// presentStr is the bit for an optional string s that is not "".
func presentStr(s string, bit uint) uint {
	if s == "" {
		return 0
	}
	return bit
}

func appendOpt(b []byte, v int64) []byte {
	if v == null {
		return b
	}
	return binary.AppendVarint(b, v)
}

func appendStr(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendOptStr(b []byte, s string) []byte {
	if s == "" {
		return b
	}
	return appendStr(b, s)
}

// Bits of a held record's first value: which of the values that may be
// absent follow (and a launch's graph flag).
const (
	hasDevice uint = 1 << iota
	hasStream
	hasCorrelation
	hasExtern
	hasBytes
	hasGrid
	hasBlock
	hasPid
	hasTid
	hasSeq
	hasDims
	hasTypes
	isGraph
)

func encHeldKernel(b []byte, k *kernelRow) []byte {
	bits := presentInt(k.device, hasDevice) | presentInt(k.stream, hasStream) | presentInt(k.correlation, hasCorrelation) |
		presentInt(k.externalID, hasExtern) | presentInt(k.bytes, hasBytes) | presentStr(k.grid, hasGrid) | presentStr(k.block, hasBlock)
	b = binary.AppendUvarint(b, uint64(bits))
	b = append(b, k.kind)
	b = binary.AppendVarint(b, int64(k.nameID))
	b = binary.AppendVarint(b, k.ts)
	b = binary.AppendVarint(b, k.dur)
	for _, v := range [...]int64{k.device, k.stream, k.correlation, k.externalID, k.bytes} {
		b = appendOpt(b, v)
	}
	b = appendOptStr(b, k.grid)
	return appendOptStr(b, k.block)
}

func decHeldKernel(d *heldDecoder, k *kernelRow) {
	bits := uint(d.uv())
	k.kind = d.byte()
	k.nameID = int32(d.v())
	k.ts, k.dur = d.v(), d.v()
	k.device, k.stream = d.opt(bits, hasDevice), d.opt(bits, hasStream)
	k.correlation, k.externalID = d.opt(bits, hasCorrelation), d.opt(bits, hasExtern)
	k.bytes = d.opt(bits, hasBytes)
	k.grid, k.block = d.optStr(bits, hasGrid), d.optStr(bits, hasBlock)
}

func encHeldLaunch(b []byte, l *launchRow) []byte {
	bits := presentInt(l.pid, hasPid) | presentInt(l.tid, hasTid) | presentInt(l.correlation, hasCorrelation) |
		presentInt(l.externalID, hasExtern)
	if l.graph {
		bits |= isGraph
	}
	b = binary.AppendUvarint(b, uint64(bits))
	b = appendStr(b, l.name)
	b = binary.AppendVarint(b, l.ts)
	b = binary.AppendVarint(b, l.dur)
	for _, v := range [...]int64{l.pid, l.tid, l.correlation, l.externalID} {
		b = appendOpt(b, v)
	}
	return b
}

func decHeldLaunch(d *heldDecoder, l *launchRow) {
	bits := uint(d.uv())
	l.graph = bits&isGraph != 0
	l.name = d.str()
	l.ts, l.dur = d.v(), d.v()
	l.pid, l.tid = d.opt(bits, hasPid), d.opt(bits, hasTid)
	l.correlation, l.externalID = d.opt(bits, hasCorrelation), d.opt(bits, hasExtern)
}

func encHeldOp(b []byte, o *opRow) []byte {
	bits := presentInt(o.pid, hasPid) | presentInt(o.tid, hasTid) | presentInt(o.externalID, hasExtern) |
		presentInt(o.seq, hasSeq) | presentStr(o.dims, hasDims) | presentStr(o.types, hasTypes)
	b = binary.AppendUvarint(b, uint64(bits))
	b = appendStr(b, o.name)
	b = binary.AppendVarint(b, o.ts)
	b = binary.AppendVarint(b, o.dur)
	for _, v := range [...]int64{o.pid, o.tid, o.externalID, o.seq} {
		b = appendOpt(b, v)
	}
	b = appendOptStr(b, o.dims)
	return appendOptStr(b, o.types)
}

func decHeldOp(d *heldDecoder, o *opRow) {
	bits := uint(d.uv())
	o.name = d.str()
	o.ts, o.dur = d.v(), d.v()
	o.pid, o.tid = d.opt(bits, hasPid), d.opt(bits, hasTid)
	o.externalID, o.seq = d.opt(bits, hasExtern), d.opt(bits, hasSeq)
	o.dims, o.types = d.optStr(bits, hasDims), d.optStr(bits, hasTypes)
}

// unlinkedTemp makes a temporary file in dir ("" = the system's) and
// unlinks it at once: it goes away with the process, whatever happens.
func unlinkedTemp(dir string) (*os.File, error) {
	f, err := os.CreateTemp(dir, "tracehouse-sweep-*")
	if err != nil {
		return nil, err
	}
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
