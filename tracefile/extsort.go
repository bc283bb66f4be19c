package tracefile

import (
	"bufio"
	"container/heap"
	"errors"
	"io"
	"os"
	"slices"
)

// codec writes a record as a fixed number of bytes and reads it back.
type codec[T any] struct {
	size int
	put  func(b []byte, v *T)
	get  func(b []byte) T
}

// sorter is an external merge sort over fixed-size records: it keeps up to
// budget records in memory, writes each full buffer to a temporary file as
// a sorted run, and merges the runs when read. Memory is the budget plus a
// read buffer per run, whatever the number of records.
type sorter[T any] struct {
	budget int
	cmp    func(a, b T) int
	codec  codec[T]
	dir    string

	buf  []T
	f    *os.File // unlinked once created: nothing is left behind
	w    *bufio.Writer
	off  int64
	runs []extRun
	n    int64
}

type extRun struct{ off, n int64 }

func newSorter[T any](dir string, budget int, c codec[T], cmp func(a, b T) int) *sorter[T] {
	return &sorter[T]{budget: budget, codec: c, cmp: cmp, dir: dir}
}

// Len is the number of records added.
func (s *sorter[T]) Len() int64 { return s.n }

func (s *sorter[T]) add(v T) error {
	if len(s.buf) == cap(s.buf) {
		// Small, then the whole budget at once: growing by doubling
		// copied and page-faulted more than the sort itself cost.
		nb := make([]T, len(s.buf), min(s.budget, max(4096, 64*cap(s.buf))))
		copy(nb, s.buf)
		s.buf = nb
	}
	s.buf = append(s.buf, v)
	s.n++
	if len(s.buf) >= s.budget {
		return s.spill()
	}
	return nil
}

func (s *sorter[T]) spill() error {
	if len(s.buf) == 0 {
		return nil
	}
	if s.f == nil {
		f, err := os.CreateTemp(s.dir, ".tracehouse-sort-*")
		if err != nil {
			return err
		}
		// Unlink at once: the file lives until closed and never outlives
		// the process, even when it is killed.
		os.Remove(f.Name())
		s.f = f
		s.w = bufio.NewWriterSize(f, 1<<16)
	}
	slices.SortFunc(s.buf, s.cmp)
	rec := make([]byte, s.codec.size)
	for i := range s.buf {
		s.codec.put(rec, &s.buf[i])
		if _, err := s.w.Write(rec); err != nil {
			return err
		}
	}
	s.runs = append(s.runs, extRun{off: s.off, n: int64(len(s.buf))})
	s.off += int64(len(s.buf)) * int64(s.codec.size)
	s.buf = s.buf[:0]
	return nil
}

// close releases the temporary file.
func (s *sorter[T]) close() {
	if s.f != nil {
		s.f.Close()
		s.f = nil
	}
	s.buf = nil
}

// sorted returns an iterator over every record in cmp order (ties in the
// order added when they were added to the same run, otherwise by run).
// The sorter takes no more records.
func (s *sorter[T]) sorted() (*merger[T], error) {
	m := &merger[T]{cmp: s.cmp}
	if len(s.runs) == 0 {
		slices.SortStableFunc(s.buf, s.cmp)
		m.mem = s.buf
		return m, nil
	}
	if err := s.spill(); err != nil {
		return nil, err
	}
	if err := s.w.Flush(); err != nil {
		return nil, err
	}
	s.buf = nil
	for i, r := range s.runs {
		rr := &runReader[T]{idx: i, left: r.n, codec: s.codec, rec: make([]byte, s.codec.size),
			r: bufio.NewReaderSize(io.NewSectionReader(s.f, r.off, r.n*int64(s.codec.size)), 1<<16)}
		ok, err := rr.next()
		if err != nil {
			return nil, err
		}
		if ok {
			m.h.runs = append(m.h.runs, rr)
		}
	}
	m.h.cmp = s.cmp
	heap.Init(&m.h)
	return m, nil
}

type runReader[T any] struct {
	idx   int
	r     *bufio.Reader
	left  int64
	cur   T
	codec codec[T]
	rec   []byte
}

func (r *runReader[T]) next() (bool, error) {
	if r.left == 0 {
		return false, nil
	}
	if _, err := io.ReadFull(r.r, r.rec); err != nil {
		return false, errors.Join(errors.New("read back a sort run"), err)
	}
	r.cur = r.codec.get(r.rec)
	r.left--
	return true, nil
}

type runHeap[T any] struct {
	runs []*runReader[T]
	cmp  func(a, b T) int
}

func (h runHeap[T]) Len() int { return len(h.runs) }
func (h runHeap[T]) Less(i, j int) bool {
	c := h.cmp(h.runs[i].cur, h.runs[j].cur)
	return c < 0 || c == 0 && h.runs[i].idx < h.runs[j].idx
}
func (h runHeap[T]) Swap(i, j int) { h.runs[i], h.runs[j] = h.runs[j], h.runs[i] }
func (h *runHeap[T]) Push(x any)   { h.runs = append(h.runs, x.(*runReader[T])) }
func (h *runHeap[T]) Pop() any {
	x := h.runs[len(h.runs)-1]
	h.runs = h.runs[:len(h.runs)-1]
	return x
}

// merger yields sorted records.
type merger[T any] struct {
	cmp func(a, b T) int
	mem []T // when everything fit in memory
	i   int
	h   runHeap[T]
}

// next returns the next record; ok is false at the end.
func (m *merger[T]) next() (v T, ok bool, err error) {
	if m.h.runs == nil {
		if m.i >= len(m.mem) {
			return v, false, nil
		}
		m.i++
		return m.mem[m.i-1], true, nil
	}
	if len(m.h.runs) == 0 {
		return v, false, nil
	}
	top := m.h.runs[0]
	v = top.cur
	more, err := top.next()
	if err != nil {
		return v, false, err
	}
	if more {
		heap.Fix(&m.h, 0)
	} else {
		heap.Pop(&m.h)
	}
	return v, true, nil
}
