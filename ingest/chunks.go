package ingest

import (
	"slices"
	"sync"
)

// chunks is an append-only list kept in fixed-size blocks: growing it never
// copies what it already holds, which for a multi-GB trace's millions of
// sweep records saved both the copying and the garbage of a growing slice.
type chunks[T any] struct {
	size   int // records per block
	blocks [][]T
	n      int

	// With ahead set (sortAhead), each block is sorted on its own goroutine
	// as soon as it is full, while the trace is still being decoded, so
	// that sorted has only the last block left to sort: the sort was about
	// half of the serial sweep after the last event.
	ahead   func(a, b *T) int
	sorting sync.WaitGroup
}

func newChunks[T any](size int) *chunks[T] { return &chunks[T]{size: size} }

// sortAhead makes full blocks sort themselves in cmp order in the
// background; sorted must then be called with the same cmp.
func (c *chunks[T]) sortAhead(cmp func(a, b *T) int) { c.ahead = cmp }

func (c *chunks[T]) add(v T) {
	if len(c.blocks) == 0 || len(c.blocks[len(c.blocks)-1]) == c.size {
		c.blocks = append(c.blocks, make([]T, 0, c.size))
	}
	last := &c.blocks[len(c.blocks)-1]
	*last = append(*last, v)
	c.n++
	if c.ahead != nil && len(*last) == c.size {
		b, cmp := *last, c.ahead
		c.sorting.Go(func() { sortBlock(b, cmp) })
	}
}

func sortBlock[T any](b []T, cmp func(a, b *T) int) {
	slices.SortFunc(b, func(x, y T) int { return cmp(&x, &y) })
}

// wait waits for the background sorts (a no-op without sortAhead).
func (c *chunks[T]) wait() { c.sorting.Wait() }

func (c *chunks[T]) len() int { return c.n }

// merged yields the records in cmp order without a second copy: each block
// is sorted in place, then blocks are merged through a small heap.
type merged[T any] struct {
	blocks [][]T
	pos    []int
	heap   []int // block indexes, ordered by their current record
	cmp    func(a, b *T) int
}

func (c *chunks[T]) sorted(cmp func(a, b *T) int) *merged[T] {
	c.wait()
	m := &merged[T]{blocks: c.blocks, pos: make([]int, len(c.blocks)), cmp: cmp}
	for i, b := range c.blocks {
		if c.ahead == nil || len(b) < c.size {
			sortBlock(b, cmp)
		}
		if len(b) > 0 {
			m.push(i)
		}
	}
	return m
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
	if m.pos[b] == len(m.blocks[b]) {
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
