package ingest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// heldKernels are a trace's GPU events as decoded, kept in file order
// until they are linked, so that each is inserted once with its link
// (linkInGo) rather than appended while decoding and updated after:
// DuckDB's UPDATE of every kernel built a hash table over them and
// rewrote nine columns of rows it had just appended. Records are encoded
// compactly (a varint per value, absent values left out) into a buffer
// that goes to an unlinked temporary file whenever it fills, so holding
// them costs memory no longer whatever the trace's size. Should the file
// fail, records stay in memory: spilling saves memory, it never fails an
// ingest.
type heldKernels struct {
	dir     string
	spillAt int      // bytes of records held in memory before they go to the file
	buf     []byte   // records not written to f
	f       *os.File // nil until the buffer first fills
	written int64    // bytes of f holding records
	sizes   []int    // the size of each write to f, in order
	failed  bool     // the file could not be made or written: keep the rest in memory
	last    int64    // the last record's ordinal (ordinals are stored as increments)
	n       int
}

// heldSpillBytes is how much of the encoded records stays in memory before
// it goes to the file (the 270 MB SGLang trace's 85 k kernels take about
// 3.5 MB; a 1 GB kernel-dense trace's about 40 times that).
const heldSpillBytes = 4 << 20

// Bits of a record's first byte: which of the values that may be absent
// follow.
const (
	hasDevice = 1 << iota
	hasStream
	hasCorrelation
	hasExtern
	hasBytes
	hasGrid
	hasBlock
)

func newHeldKernels(dir string) *heldKernels { return &heldKernels{dir: dir, spillAt: heldSpillBytes} }

// add keeps k; records come in ordinal order (the sink's stream order).
func (h *heldKernels) add(k *kernelRow) {
	var bits byte
	for i, v := range [...]int64{k.device, k.stream, k.correlation, k.externalID, k.bytes} {
		if v != null {
			bits |= 1 << i
		}
	}
	if k.grid != "" {
		bits |= hasGrid
	}
	if k.block != "" {
		bits |= hasBlock
	}
	b := append(h.buf, bits, k.kind)
	b = binary.AppendUvarint(b, uint64(k.ordinal-h.last))
	b = binary.AppendVarint(b, int64(k.nameID))
	b = binary.AppendVarint(b, k.ts)
	b = binary.AppendVarint(b, k.dur)
	for _, v := range [...]int64{k.device, k.stream, k.correlation, k.externalID, k.bytes} {
		if v != null {
			b = binary.AppendVarint(b, v)
		}
	}
	for _, s := range [...]string{k.grid, k.block} {
		if s != "" {
			b = binary.AppendUvarint(b, uint64(len(s)))
			b = append(b, s...)
		}
	}
	h.buf, h.last = b, k.ordinal
	h.n++
	if len(h.buf) >= h.spillAt && !h.failed {
		h.spill()
	}
}

// spill writes the buffer to the file, making it on first use.
func (h *heldKernels) spill() {
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
func (h *heldKernels) close() {
	if h.f != nil {
		h.f.Close()
		h.f = nil
	}
}

// reader reads the records back in the order they came; h must not grow
// while it does.
func (h *heldKernels) reader() *heldReader {
	return &heldReader{h: h, left: h.n, strs: map[string]string{}}
}

// heldReader decodes held records one at a time, from each spilled write
// read back whole (a write holds whole records), then from the buffer.
type heldReader struct {
	h     *heldKernels
	left  int
	pages int   // spilled writes read so far
	off   int64 // where the next one starts in the file
	b     []byte
	page  []byte // the read-back write's storage
	ord   int64
	strs  map[string]string // grid and block values met: a few distinct ones
	row   kernelRow
	inBuf bool // b is the buffer's records
}

// next returns the next record, nil after the last.
func (r *heldReader) next() (*kernelRow, error) {
	if r.left == 0 {
		return nil, nil
	}
	for len(r.b) == 0 {
		if err := r.more(); err != nil {
			return nil, fmt.Errorf("read back held kernels: %w", err)
		}
	}
	r.left--
	k, err := r.decode()
	if err != nil {
		return nil, fmt.Errorf("read back held kernels: %w", err)
	}
	return k, nil
}

// more moves b to the next spilled write, or to the buffer after them.
func (r *heldReader) more() error {
	h := r.h
	if r.pages == len(h.sizes) {
		if r.inBuf {
			return io.ErrUnexpectedEOF
		}
		r.b, r.inBuf, r.page = h.buf, true, nil
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
	r.b = r.page
	r.off += int64(n)
	r.pages++
	return nil
}

// errHeld is a record that does not decode: the spill file was damaged.
var errHeld = errors.New("damaged record")

func (r *heldReader) decode() (*kernelRow, error) {
	b := r.b
	if len(b) < 2 {
		return nil, errHeld
	}
	bits, k := b[0], &r.row
	*k = kernelRow{kind: b[1], device: null, stream: null, correlation: null, externalID: null, bytes: null}
	b = b[2:]
	uv := func() uint64 {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			b = nil
			return 0
		}
		b = b[n:]
		return v
	}
	v := func() int64 {
		x, n := binary.Varint(b)
		if n <= 0 {
			b = nil
			return 0
		}
		b = b[n:]
		return x
	}
	r.ord += int64(uv())
	k.ordinal = r.ord
	k.nameID = int32(v())
	k.ts = v()
	k.dur = v()
	for i, dst := range [...]*int64{&k.device, &k.stream, &k.correlation, &k.externalID, &k.bytes} {
		if bits&(1<<i) != 0 {
			*dst = v()
		}
	}
	for i, dst := range [...]*string{&k.grid, &k.block} {
		if bits&(hasGrid<<i) != 0 {
			n := uv()
			if n > uint64(len(b)) {
				return nil, errHeld
			}
			*dst, b = r.str(b[:n]), b[n:]
		}
	}
	if b == nil {
		return nil, errHeld
	}
	r.b = b
	return k, nil
}

// str is b as a string, one copy per distinct value while they are few.
func (r *heldReader) str(b []byte) string {
	if s, ok := r.strs[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(r.strs) < 1<<12 {
		r.strs[s] = s
	}
	return s
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
