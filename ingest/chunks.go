package ingest

import (
	"fmt"
	"os"
	"sort"
	"sync"
)

// chunks is an append-only list kept in fixed-size blocks: growing it never
// copies what it already holds, which for a multi-GB trace's millions of
// sweep records saved both the copying and the garbage of a growing slice.
type chunks[T any] struct {
	size   int   // records per block
	blocks [][]T // full blocks; nil where a block went to the spill file
	cur    []T   // the block being filled
	n      int

	// With ahead set (sortAhead), each full block is sorted on its own
	// goroutine while the trace is still being decoded, so that sorted
	// has only the last block left to sort: the sort was about half of the
	// serial sweep after the last event.
	ahead   func(a, b *T) int
	sorting sync.WaitGroup

	// With sp set (spillTo), sorted full blocks are written to a temporary
	// file and read back a window at a time by the merge, so the records
	// of a trace cost memory no longer: 2.2 M frames and 0.8 M points of
	// a 1 GB trace held about 125 MiB until the sweep.
	sp *spill[T]
}

func newChunks[T any](size int) *chunks[T] { return &chunks[T]{size: size} }

// sortAhead makes full blocks sort themselves in cmp order in the
// background; sorted must then be called with the same cmp.
func (c *chunks[T]) sortAhead(cmp func(a, b *T) int) { c.ahead = cmp }

// spillTo makes sorted full blocks go to an unlinked temporary file in
// dir ("" = the system's), records encoded in recSize bytes by enc and
// read back by dec. It needs sortAhead. Should the file fail, blocks stay
// in memory: spilling saves memory, it never fails an ingest.
func (c *chunks[T]) spillTo(dir string, recSize int, enc func([]byte, *T), dec func([]byte, *T)) {
	c.sp = &spill[T]{dir: dir, recSize: recSize, enc: enc, dec: dec, kept: map[int][]T{}, busy: make(chan struct{}, spillsAtOnce)}
}

// spillsAtOnce is how many full blocks of one list may wait to be sorted
// and written at once: a producer faster than the sorts (a merge feeding
// the next join) waits rather than holding every block in memory.
const spillsAtOnce = 2

func (c *chunks[T]) add(v T) {
	if c.cur == nil {
		c.cur = make([]T, 0, c.size)
	}
	c.cur = append(c.cur, v)
	c.n++
	if len(c.cur) == c.size {
		c.seal()
	}
}

// seal moves the full current block into blocks, sorting (and spilling)
// it in the background when asked to.
func (c *chunks[T]) seal() {
	b, i, cmp := c.cur, len(c.blocks), c.ahead
	c.cur = nil
	if cmp == nil {
		c.blocks = append(c.blocks, b)
		return
	}
	if c.sp == nil || !c.sp.open() {
		c.blocks = append(c.blocks, b)
		c.sorting.Go(func() { sortBlock(b, cmp) })
		return
	}
	// The goroutine owns the block from here: once written, nothing holds it.
	c.blocks = append(c.blocks, nil)
	sp := c.sp
	sp.busy <- struct{}{}
	c.sorting.Go(func() {
		defer func() { <-sp.busy }()
		sortBlock(b, cmp)
		sp.write(i, b)
	})
}

// sortBlock sorts b in cmp order. It sorts by index (sort.Sort) because
// slices.SortFunc's comparison takes its records by value, and handing cmp
// their addresses moved both copies to the heap: two allocations per
// comparison, 105 MB of garbage per block of 65 k frames, and a tenth of
// a large ingest's CPU.
func sortBlock[T any](b []T, cmp func(a, b *T) int) { sort.Sort(blockOrder[T]{b, cmp}) }

// blockOrder is sort.Interface over a block.
type blockOrder[T any] struct {
	b   []T
	cmp func(a, b *T) int
}

func (o blockOrder[T]) Len() int           { return len(o.b) }
func (o blockOrder[T]) Less(i, j int) bool { return o.cmp(&o.b[i], &o.b[j]) < 0 }
func (o blockOrder[T]) Swap(i, j int)      { o.b[i], o.b[j] = o.b[j], o.b[i] }

// wait waits for the background sorts (a no-op without sortAhead).
func (c *chunks[T]) wait() { c.sorting.Wait() }

// close waits for the background work and removes the spill file.
func (c *chunks[T]) close() {
	c.wait()
	if c.sp != nil && c.sp.f != nil {
		c.sp.f.Close()
	}
}

func (c *chunks[T]) len() int { return c.n }

// spill is the temporary file sorted blocks go to: block i at offset
// i * size * recSize.
type spill[T any] struct {
	dir      string
	recSize  int
	enc, dec func([]byte, *T)
	f        *os.File
	failed   bool // the file could not be made: keep blocks in memory

	mu   sync.Mutex
	kept map[int][]T // blocks whose write failed, kept in memory instead

	busy chan struct{} // a token per block being sorted and written (spillsAtOnce)
}

// open makes the file on first use; false when it cannot be made.
func (s *spill[T]) open() bool {
	if s.f == nil && !s.failed {
		f, err := unlinkedTemp(s.dir)
		if err != nil {
			s.failed = true
			return false
		}
		s.f = f
	}
	return !s.failed
}

func (s *spill[T]) write(i int, b []T) {
	buf := make([]byte, len(b)*s.recSize)
	for j := range b {
		s.enc(buf[j*s.recSize:], &b[j])
	}
	if _, err := s.f.WriteAt(buf, int64(i)*int64(len(b))*int64(s.recSize)); err != nil {
		s.mu.Lock()
		s.kept[i] = b
		s.mu.Unlock()
	}
}

// mergeWindow is how many records of a spilled block the merge holds.
const mergeWindow = 1 << 10

// merged yields the records in cmp order without a second copy: each block
// is sorted in place, then blocks are merged through a small heap.
type merged[T any] struct {
	blocks [][]T // each block's records in memory: all of it, or a window of a spilled one
	pos    []int
	heap   []int // block indexes, ordered by their current record
	cmp    func(a, b *T) int

	sp   *spill[T]
	next []int // a spilled block's next record in the file; -1 for blocks in memory
	size int
	buf  []byte
	err  error // the first failed read of the spill file
}

func (c *chunks[T]) sorted(cmp func(a, b *T) int) *merged[T] {
	c.wait()
	blocks := c.blocks
	if len(c.cur) > 0 {
		blocks = append(blocks, c.cur)
	}
	m := &merged[T]{blocks: make([][]T, len(blocks)), pos: make([]int, len(blocks)), next: make([]int, len(blocks)),
		cmp: cmp, sp: c.sp, size: c.size}
	for i, b := range blocks {
		m.next[i] = -1
		if b == nil {
			if kept, ok := c.sp.kept[i]; ok {
				b = kept
			} else {
				m.blocks[i], m.next[i] = make([]T, 0, mergeWindow), 0
				if m.refill(i) {
					m.push(i)
				}
				continue
			}
		} else if c.ahead == nil || i == len(c.blocks) {
			// not sorted in the background: every block, or the last, partial one
			sortBlock(b, cmp)
		}
		m.blocks[i] = b
		if len(b) > 0 {
			m.push(i)
		}
	}
	return m
}

// refill reads a spilled block's next window; false when none is left.
func (m *merged[T]) refill(b int) bool {
	if m.next[b] < 0 || m.next[b] >= m.size || m.err != nil {
		return false
	}
	n := min(mergeWindow, m.size-m.next[b])
	rs := m.sp.recSize
	if cap(m.buf) < n*rs {
		m.buf = make([]byte, mergeWindow*rs)
	}
	buf := m.buf[:n*rs]
	off := (int64(b)*int64(m.size) + int64(m.next[b])) * int64(rs)
	if _, err := m.sp.f.ReadAt(buf, off); err != nil {
		m.err = fmt.Errorf("read back sorted sweep records: %w", err)
		return false
	}
	w := m.blocks[b][:n]
	for j := range w {
		m.sp.dec(buf[j*rs:], &w[j])
	}
	m.blocks[b], m.pos[b] = w, 0
	m.next[b] += n
	return true
}

// peek returns the smallest remaining record, nil when none is left.
func (m *merged[T]) peek() *T {
	if len(m.heap) == 0 {
		return nil
	}
	b := m.heap[0]
	return &m.blocks[b][m.pos[b]]
}

// pop advances past the record peek returned.
func (m *merged[T]) pop() {
	b := m.heap[0]
	m.pos[b]++
	if m.pos[b] == len(m.blocks[b]) && !m.refill(b) {
		last := len(m.heap) - 1
		m.heap[0] = m.heap[last]
		m.heap = m.heap[:last]
	}
	m.down(0)
}

func (m *merged[T]) less(i, j int) bool {
	a, b := m.heap[i], m.heap[j]
	c := m.cmp(&m.blocks[a][m.pos[a]], &m.blocks[b][m.pos[b]])
	return c < 0 || c == 0 && a < b
}

func (m *merged[T]) push(b int) {
	m.heap = append(m.heap, b)
	for i := len(m.heap) - 1; i > 0; {
		p := (i - 1) / 2
		if !m.less(i, p) {
			break
		}
		m.heap[i], m.heap[p] = m.heap[p], m.heap[i]
		i = p
	}
}

func (m *merged[T]) down(i int) {
	for {
		l, s := 2*i+1, i
		if l < len(m.heap) && m.less(l, s) {
			s = l
		}
		if r := l + 1; r < len(m.heap) && m.less(r, s) {
			s = r
		}
		if s == i {
			return
		}
		m.heap[i], m.heap[s] = m.heap[s], m.heap[i]
		i = s
	}
}
