package ingest

import (
	"cmp"
	"container/heap"
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"sort"

	duckdb "github.com/duckdb/duckdb-go/v2"
	"github.com/tracehouse/tracehouse/schema"
)

// linkRecs are what link_kernels.sql and link_steps.sql read of a trace
// (its kernels, launches, CPU ops and stage annotations), kept while the
// trace loads so that its kernels are linked here, in Go, and inserted
// once, linked, from a typed table function (the kernels themselves are
// held until then: held). In DuckDB the two
// statements cost 0.2-0.25 s per 270 MB trace inside its transaction, and
// for 1 GB of tiny events 6 CPU-s and 120 MiB past DuckDB's memory bound.
// The records go into blocks sorted and spilled to disk as the sweep's
// are (chunks), and the link is a few merge joins of them, so that a trace
// of any size links in the memory of a few blocks. The SQL stays the
// definition: it links Nsight exports, and TestLinkInGoMatchesSQL holds the
// two to the same rows.
type linkRecs struct {
	over     bool // linked by the SQL instead (Options.linkInSQL): nothing is kept
	dir      string
	size     int                 // records per block
	kernels  *chunks[linkKernel] // by correlation id
	streams  *chunks[linkKernel] // by device, stream, time
	launches *chunks[linkLaunch] // those with a correlation id, by it, then time
	ops      *chunks[linkOp]     // those with an External id, by it, then time
	rows     *held[kernelRow]    // the kernels' rows, in file order, to insert once linked
	gpuWins  []stageWindow       // gpu_user_annotation naming a stage; group = {pid (the device), 0}
	cpuWins  []stageWindow       // user_annotation naming a stage; group = {pid, tid}
}

// linkKernel is a kernel as linking reads it; null stands for NULL.
type linkKernel struct {
	ts, device, stream, correlation, extern int64 // device as stored (an INTEGER)
	ordinal                                 uint32
}

// linkLaunch is a launch with its Python site (noSite: none).
type linkLaunch struct {
	ts, correlation, extern, pid, tid int64
	ordinal                           uint32
	site                              int32
	graph                             bool
}

// linkOp is a CPU op with its Python site (noSite: none).
type linkOp struct {
	ts, extern int64
	ordinal    uint32
	site       int32
}

const noSite = -1

// linkChunk is how many link records one block holds: a quarter of the
// sweep's, as the joins fill their lists as fast as they sort them, and a
// list holds up to spillsAtOnce+1 blocks at once.
const linkChunk = 1 << 14

// kernelLink is a kernel on its way through the joins: its launch's
// values once joined to it, then its op's.
type kernelLink struct {
	ts, device          int64
	extern              int64 // the kernel's External id, else its launch's
	launchTS, pid, tid  int64 // its launch's
	ordinal, launch, op uint32
	launchSite, opSite  int32
	flags               uint8 // linkedLaunch, linkedOp, linkedGraph
}

const (
	linkedLaunch = 1 << iota
	linkedOp
	linkedGraph
)

// streamPos is a kernel's place on its stream, from 1.
type streamPos struct{ ordinal, pos uint32 }

// Sizes of the link records in a spill file.
const (
	linkKernelBytes = 5*8 + 4
	linkLaunchBytes = 5*8 + 4 + 4 + 1
	linkOpBytes     = 2*8 + 4 + 4
	kernelLinkBytes = 6*8 + 3*4 + 2*4 + 1
	streamPosBytes  = 4 + 4
)

func encLinkKernel(b []byte, k *linkKernel) {
	le := binary.LittleEndian
	le.PutUint64(b[0:], uint64(k.ts))
	le.PutUint64(b[8:], uint64(k.device))
	le.PutUint64(b[16:], uint64(k.stream))
	le.PutUint64(b[24:], uint64(k.correlation))
	le.PutUint64(b[32:], uint64(k.extern))
	le.PutUint32(b[40:], k.ordinal)
}

func decLinkKernel(b []byte, k *linkKernel) {
	le := binary.LittleEndian
	*k = linkKernel{ts: int64(le.Uint64(b[0:])), device: int64(le.Uint64(b[8:])), stream: int64(le.Uint64(b[16:])),
		correlation: int64(le.Uint64(b[24:])), extern: int64(le.Uint64(b[32:])), ordinal: le.Uint32(b[40:])}
}

func encLinkLaunch(b []byte, l *linkLaunch) {
	le := binary.LittleEndian
	le.PutUint64(b[0:], uint64(l.ts))
	le.PutUint64(b[8:], uint64(l.correlation))
	le.PutUint64(b[16:], uint64(l.extern))
	le.PutUint64(b[24:], uint64(l.pid))
	le.PutUint64(b[32:], uint64(l.tid))
	le.PutUint32(b[40:], l.ordinal)
	le.PutUint32(b[44:], uint32(l.site))
	b[48] = 0
	if l.graph {
		b[48] = 1
	}
}

func decLinkLaunch(b []byte, l *linkLaunch) {
	le := binary.LittleEndian
	*l = linkLaunch{ts: int64(le.Uint64(b[0:])), correlation: int64(le.Uint64(b[8:])), extern: int64(le.Uint64(b[16:])),
		pid: int64(le.Uint64(b[24:])), tid: int64(le.Uint64(b[32:])), ordinal: le.Uint32(b[40:]), site: int32(le.Uint32(b[44:])),
		graph: b[48] == 1}
}

func encLinkOp(b []byte, o *linkOp) {
	le := binary.LittleEndian
	le.PutUint64(b[0:], uint64(o.ts))
	le.PutUint64(b[8:], uint64(o.extern))
	le.PutUint32(b[16:], o.ordinal)
	le.PutUint32(b[20:], uint32(o.site))
}

func decLinkOp(b []byte, o *linkOp) {
	le := binary.LittleEndian
	*o = linkOp{ts: int64(le.Uint64(b[0:])), extern: int64(le.Uint64(b[8:])), ordinal: le.Uint32(b[16:]), site: int32(le.Uint32(b[20:]))}
}

func encKernelLink(b []byte, k *kernelLink) {
	le := binary.LittleEndian
	le.PutUint64(b[0:], uint64(k.ts))
	le.PutUint64(b[8:], uint64(k.device))
	le.PutUint64(b[16:], uint64(k.extern))
	le.PutUint64(b[24:], uint64(k.launchTS))
	le.PutUint64(b[32:], uint64(k.pid))
	le.PutUint64(b[40:], uint64(k.tid))
	le.PutUint32(b[48:], k.ordinal)
	le.PutUint32(b[52:], k.launch)
	le.PutUint32(b[56:], k.op)
	le.PutUint32(b[60:], uint32(k.launchSite))
	le.PutUint32(b[64:], uint32(k.opSite))
	b[68] = k.flags
}

func decKernelLink(b []byte, k *kernelLink) {
	le := binary.LittleEndian
	*k = kernelLink{ts: int64(le.Uint64(b[0:])), device: int64(le.Uint64(b[8:])), extern: int64(le.Uint64(b[16:])),
		launchTS: int64(le.Uint64(b[24:])), pid: int64(le.Uint64(b[32:])), tid: int64(le.Uint64(b[40:])),
		ordinal: le.Uint32(b[48:]), launch: le.Uint32(b[52:]), op: le.Uint32(b[56:]),
		launchSite: int32(le.Uint32(b[60:])), opSite: int32(le.Uint32(b[64:])), flags: b[68]}
}

func encStreamPos(b []byte, p *streamPos) {
	binary.LittleEndian.PutUint32(b[0:], p.ordinal)
	binary.LittleEndian.PutUint32(b[4:], p.pos)
}

func decStreamPos(b []byte, p *streamPos) {
	*p = streamPos{ordinal: binary.LittleEndian.Uint32(b[0:]), pos: binary.LittleEndian.Uint32(b[4:])}
}

// The orders of the joins (null, the least int64, sorts first).

func kernelsByCorrelation(a, b *linkKernel) int {
	if a.correlation != b.correlation {
		return cmp.Compare(a.correlation, b.correlation)
	}
	return cmp.Compare(a.ordinal, b.ordinal)
}

func kernelsByStream(a, b *linkKernel) int {
	if a.device != b.device {
		return cmp.Compare(a.device, b.device)
	}
	if a.stream != b.stream {
		return cmp.Compare(a.stream, b.stream)
	}
	if a.ts != b.ts {
		return cmp.Compare(a.ts, b.ts)
	}
	return cmp.Compare(a.ordinal, b.ordinal)
}

func launchesByCorrelation(a, b *linkLaunch) int {
	if a.correlation != b.correlation {
		return cmp.Compare(a.correlation, b.correlation)
	}
	if a.ts != b.ts {
		return cmp.Compare(a.ts, b.ts)
	}
	return cmp.Compare(a.ordinal, b.ordinal)
}

func opsByExtern(a, b *linkOp) int {
	if a.extern != b.extern {
		return cmp.Compare(a.extern, b.extern)
	}
	if a.ts != b.ts {
		return cmp.Compare(a.ts, b.ts)
	}
	return cmp.Compare(a.ordinal, b.ordinal)
}

func linksByExtern(a, b *kernelLink) int {
	if a.extern != b.extern {
		return cmp.Compare(a.extern, b.extern)
	}
	return cmp.Compare(a.ordinal, b.ordinal)
}

func linksByOrdinal(a, b *kernelLink) int { return cmp.Compare(a.ordinal, b.ordinal) }

func positionsByOrdinal(a, b *streamPos) int { return cmp.Compare(a.ordinal, b.ordinal) }

// sortedSpilled is a chunks sorted in cmp order as it fills, spilling to dir.
func sortedSpilled[T any](size int, dir string, cmp func(a, b *T) int, recSize int, enc, dec func([]byte, *T)) *chunks[T] {
	c := newChunks[T](size)
	c.sortAhead(cmp)
	c.spillTo(dir, recSize, enc, dec)
	return c
}

// init readies r for a trace (over: the SQL links it); blocks of size
// records spill to dir.
func (r *linkRecs) init(over bool, dir string, size int) {
	*r = linkRecs{over: over, dir: dir, size: size}
	if over {
		return
	}
	r.kernels = sortedSpilled(size, dir, kernelsByCorrelation, linkKernelBytes, encLinkKernel, decLinkKernel)
	r.streams = sortedSpilled(size, dir, kernelsByStream, linkKernelBytes, encLinkKernel, decLinkKernel)
	r.launches = sortedSpilled(size, dir, launchesByCorrelation, linkLaunchBytes, encLinkLaunch, decLinkLaunch)
	r.ops = sortedSpilled(size, dir, opsByExtern, linkOpBytes, encLinkOp, decLinkOp)
	r.rows = newHeld(dir, encHeldKernel, decHeldKernel)
}

// close waits for the background sorts and removes the spill files.
func (r *linkRecs) close() {
	if r.over {
		return
	}
	r.kernels.close()
	r.streams.close()
	r.launches.close()
	r.ops.close()
	r.rows.close()
}

// hold keeps what linking reads from one decoded batch: its kernels (and
// their rows, inserted once linked), its
// launches that are no sweep point (no thread: no Python site), and its
// stage annotations. The sweep hands over the others (point).
func (r *linkRecs) hold(b *decoded) {
	if r.over {
		return
	}
	for i := range b.kernels {
		k := &b.kernels[i]
		dev := k.device
		if dev != null {
			dev = int64(int32(dev)) // kernels.device is an INTEGER
		}
		rec := linkKernel{ordinal: uint32(k.ordinal), ts: k.ts, device: dev, stream: k.stream, correlation: k.correlation, extern: k.externalID}
		r.kernels.add(rec)
		r.streams.add(rec)
		r.rows.add(k.ordinal, k)
	}
	for i := range b.launches {
		x := &b.launches[i]
		if x.pid == null && x.tid == null && x.correlation != null {
			r.launches.add(linkLaunch{ordinal: uint32(x.ordinal), ts: x.ts, pid: x.pid, tid: x.tid,
				correlation: x.correlation, extern: x.externalID, site: noSite, graph: x.graph})
		}
	}
	for i := range b.annotations {
		x := &b.annotations[i]
		if x.stage == "" || x.pid == null {
			continue
		}
		w := stageWindow{group: [2]int64{x.pid, 0}, ts: x.ts, end: x.ts + x.dur, stage: x.stage}
		switch x.cat {
		case "gpu_user_annotation":
			r.gpuWins = append(r.gpuWins, w)
		case "user_annotation":
			if x.tid != null {
				w.group[1] = x.tid
				r.cpuWins = append(r.cpuWins, w)
			}
		}
	}
}

// point keeps a sweep point (a launch on a thread, or a CPU op) with its
// Python site (0: none); thread is its {pid, tid}.
func (r *linkRecs) point(p *sweepPoint, site int32, thread [2]int64) {
	if r.over {
		return
	}
	s := int32(noSite)
	if site != 0 {
		s = site
	}
	switch p.kind {
	case derivedLaunchSite:
		if p.correlation != null {
			r.launches.add(linkLaunch{ordinal: p.ordinal, ts: p.ts, pid: thread[0], tid: thread[1],
				correlation: p.correlation, extern: p.extern, site: s, graph: p.graph})
		}
	case derivedOpSite:
		if p.extern != null {
			r.ops.add(linkOp{ordinal: p.ordinal, ts: p.ts, extern: p.extern, site: s})
		}
	}
}

// stageWindow is an annotation [ts, end) naming a stage, on a device or a
// thread (group).
type stageWindow struct {
	group   [2]int64 // {the device, 0} or {pid, tid}
	ts, end int64
	stage   string
}

// stepWindow is a row of `steps` as link_steps.sql reads it.
type stepWindow struct {
	ts, end int64
	step    int32
}

// linked is what linking sets on one kernel (link_kernels.sql and
// link_steps.sql); null stands for NULL.
type linked struct {
	kernelID, launchID, opID, site, streamPos, ts, step int64
	graph                                               bool
	stage                                               string // "": keep the kernel's
}

// joinGroups walks left in key order and calls f with each record and the
// right records of its key (right is in key order too, nulls left out):
// a key's right records are held while its left ones pass, usually one.
func joinGroups[L, R any](left *merged[L], lkey func(*L) int64, right *merged[R], rkey func(*R) int64, f func(*L, []R)) {
	var group []R
	var gk int64
	started := false
	for l := left.peek(); l != nil; l = left.peek() {
		if k := lkey(l); !started || k != gk {
			group, gk, started = group[:0], k, true
			for r := right.peek(); r != nil && rkey(r) < k; r = right.peek() {
				right.pop()
			}
			for r := right.peek(); r != nil && rkey(r) == k; r = right.peek() {
				group = append(group, *r)
				right.pop()
			}
		}
		f(l, group)
		left.pop()
	}
}

// latest picks among n rows in (time, ordinal) order the latest at or
// before ts, else the latest: its index, -1 when n is 0. Ties go to the
// later in the file, as in link_kernels.sql.
func latest(n int, ts int64, at func(int) int64) int {
	if n == 0 {
		return -1
	}
	i := sort.Search(n, func(i int) bool { return at(i) > ts })
	if i == 0 {
		return n - 1
	}
	return i - 1
}

// linkCursor hands out the linked kernels in kernel_id order.
type linkCursor struct {
	key, base          int64
	stageKnown, window bool
	gpuSteps, cpuSteps []stepWindow
	gpu, cpu           stageIndex
	kernels            *merged[kernelLink]
	positions          *merged[streamPos]
	lists              []interface{ close() }
	row                linked
}

// link computes link_kernels.sql and link_steps.sql for every held
// kernel: each kernel's launch (merged by correlation id), then its op
// (by External id), its place on its stream, and, in kernel_id order
// (the cursor), its stage and step. key is the trace's id << 32; base
// moves times to absolute; stageKnown skips the stage windows; the steps
// are the trace's rows of `steps` (absolute times), window true when its
// one step is the whole trace. The cursor's close removes its spill files.
func (r *linkRecs) link(key, base int64, stageKnown bool, gpuSteps, cpuSteps []stepWindow, window bool) (*linkCursor, error) {
	c := &linkCursor{key: key, base: base, stageKnown: stageKnown, window: window, gpuSteps: gpuSteps, cpuSteps: cpuSteps}
	withLaunch := sortedSpilled(r.size, r.dir, linksByExtern, kernelLinkBytes, encKernelLink, decKernelLink)
	defer withLaunch.close()
	kernels, launches := r.kernels.sorted(kernelsByCorrelation), r.launches.sorted(launchesByCorrelation)
	joinGroups(kernels, func(k *linkKernel) int64 { return k.correlation }, launches, func(l *linkLaunch) int64 { return l.correlation },
		func(k *linkKernel, group []linkLaunch) {
			kl := kernelLink{ordinal: k.ordinal, ts: k.ts, device: k.device, extern: k.extern, launchTS: null, pid: null, tid: null,
				launchSite: noSite, opSite: noSite}
			if k.correlation != null {
				if i := latest(len(group), k.ts, func(i int) int64 { return group[i].ts }); i >= 0 {
					l := &group[i]
					kl.flags |= linkedLaunch
					if l.graph {
						kl.flags |= linkedGraph
					}
					kl.launch, kl.launchTS, kl.pid, kl.tid, kl.launchSite = l.ordinal, l.ts, l.pid, l.tid, l.site
					if kl.extern == null {
						kl.extern = l.extern
					}
				}
			}
			withLaunch.add(kl)
		})
	if err := errors.Join(kernels.err, launches.err); err != nil {
		return nil, err
	}
	linked := sortedSpilled(r.size, r.dir, linksByOrdinal, kernelLinkBytes, encKernelLink, decKernelLink)
	positions := sortedSpilled(r.size, r.dir, positionsByOrdinal, streamPosBytes, encStreamPos, decStreamPos)
	c.lists = []interface{ close() }{linked, positions}
	byExtern, ops := withLaunch.sorted(linksByExtern), r.ops.sorted(opsByExtern)
	joinGroups(byExtern, func(k *kernelLink) int64 { return k.extern }, ops, func(o *linkOp) int64 { return o.extern },
		func(k *kernelLink, group []linkOp) {
			kl := *k
			if kl.extern != null {
				if i := latest(len(group), kl.ts, func(i int) int64 { return group[i].ts }); i >= 0 {
					kl.flags |= linkedOp
					kl.op, kl.opSite = group[i].ordinal, group[i].site
				}
			}
			linked.add(kl)
		})
	// Places on each (device, stream), a NULL device or stream a group of
	// its own as in SQL's PARTITION BY.
	streams := r.streams.sorted(kernelsByStream)
	var dev, stream int64
	var pos uint32
	for k := streams.peek(); k != nil; k = streams.peek() {
		if pos == 0 || k.device != dev || k.stream != stream {
			dev, stream, pos = k.device, k.stream, 0
		}
		pos++
		positions.add(streamPos{ordinal: k.ordinal, pos: pos})
		streams.pop()
	}
	if err := errors.Join(byExtern.err, ops.err, streams.err); err != nil {
		c.close()
		return nil, err
	}
	if !stageKnown {
		c.gpu, c.cpu = newStageIndex(r.gpuWins), newStageIndex(r.cpuWins)
	}
	c.kernels, c.positions = linked.sorted(linksByOrdinal), positions.sorted(positionsByOrdinal)
	return c, nil
}

// close removes the cursor's spill files.
func (c *linkCursor) close() {
	for _, l := range c.lists {
		l.close()
	}
}

// next is the next kernel's row, nil after the last.
func (c *linkCursor) next() (*linked, error) {
	k, p := c.kernels.peek(), c.positions.peek()
	if k == nil || p == nil || k.ordinal != p.ordinal {
		err := errors.Join(c.kernels.err, c.positions.err)
		if err == nil && (k != nil || p != nil) {
			err = errors.New("internal error: a kernel linked without its place on its stream")
		}
		return nil, err
	}
	o := &c.row
	*o = linked{kernelID: c.key + int64(k.ordinal), launchID: null, opID: null, site: null, streamPos: int64(p.pos), ts: k.ts + c.base, step: null}
	if k.flags&linkedLaunch != 0 {
		o.launchID, o.graph = c.key+int64(k.launch), k.flags&linkedGraph != 0
	}
	if k.flags&linkedOp != 0 {
		o.opID = c.key + int64(k.op)
	}
	switch {
	case o.graph:
	case k.flags&linkedLaunch != 0 && k.launchSite != noSite:
		o.site = int64(k.launchSite)
	case k.flags&linkedOp != 0 && k.opSite != noSite:
		o.site = int64(k.opSite)
	}
	if !c.stageKnown {
		if k.device != null {
			o.stage = c.gpu.at([2]int64{k.device, 0}, k.ts)
		}
		if o.stage == "" && k.flags&linkedLaunch != 0 && k.pid != null && k.tid != null {
			o.stage = c.cpu.at([2]int64{k.pid, k.tid}, k.launchTS)
		}
	}
	switch {
	case c.window:
		o.step = 0
	default:
		if s, ok := stepAt(c.gpuSteps, o.ts); ok {
			o.step = s
		} else if k.flags&linkedLaunch != 0 {
			if s, ok := stepAt(c.cpuSteps, k.launchTS+c.base); ok {
				o.step = s
			}
		}
	}
	c.kernels.pop()
	c.positions.pop()
	return o, nil
}

// stageIndex answers "the innermost stage window of a group containing t"
// (latest start, then earliest end, then least stage): the windows' starts
// and ends cut each group's time into stretches that the same windows
// contain, so each stretch has one answer, found once.
type stageIndex map[[2]int64]stageStretches

// stageStretches are a group's stretches: stretch i is [at[i], at[i+1])
// (the last one contains no window), its answer stage[i] ("": none).
type stageStretches struct {
	at    []int64
	stage []string
}

func newStageIndex(wins []stageWindow) stageIndex {
	x := stageIndex{}
	wins = slices.Clone(wins)
	slices.SortFunc(wins, func(a, b stageWindow) int { return cmp.Or(compareGroups(a.group, b.group), cmp.Compare(a.ts, b.ts)) })
	for len(wins) > 0 {
		n := 1
		for n < len(wins) && wins[n].group == wins[0].group {
			n++
		}
		g := wins[:n]
		wins = wins[n:]
		var at []int64
		for _, w := range g {
			if w.end > w.ts { // an empty window contains no instant
				at = append(at, w.ts, w.end)
			}
		}
		slices.Sort(at)
		at = slices.Compact(at)
		s := stageStretches{at: at, stage: make([]string, len(at))}
		var open windowHeap
		next := 0
		for i, t := range at {
			for ; next < len(g) && g[next].ts <= t; next++ {
				if g[next].end > g[next].ts {
					heap.Push(&open, g[next])
				}
			}
			for len(open) > 0 && open[0].end <= t {
				heap.Pop(&open)
			}
			if len(open) > 0 {
				s.stage[i] = open[0].stage
			}
		}
		x[g[0].group] = s
	}
	return x
}

// at is the stage of group's innermost window containing t, "" for none.
func (x stageIndex) at(group [2]int64, t int64) string {
	s, ok := x[group]
	if !ok {
		return ""
	}
	i := sort.Search(len(s.at), func(i int) bool { return s.at[i] > t })
	if i == 0 {
		return ""
	}
	return s.stage[i-1]
}

func compareGroups(a, b [2]int64) int {
	return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1]))
}

// windowHeap orders open windows innermost first: latest start, then
// earliest end, then least stage.
type windowHeap []stageWindow

func (h windowHeap) Len() int { return len(h) }
func (h windowHeap) Less(i, j int) bool {
	a, b := &h[i], &h[j]
	if a.ts != b.ts {
		return a.ts > b.ts
	}
	if a.end != b.end {
		return a.end < b.end
	}
	return a.stage < b.stage
}
func (h windowHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *windowHeap) Push(x any)   { *h = append(*h, x.(stageWindow)) }
func (h *windowHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// stepAt is the step of the window (sorted by start, then step; windows
// of one kind do not overlap) containing t: the last starting at or
// before t, if t is before its end.
func stepAt(wins []stepWindow, t int64) (int64, bool) {
	n, _ := slices.BinarySearchFunc(wins, t+1, func(w stepWindow, t int64) int {
		if w.ts < t {
			return -1
		}
		return 1
	})
	if n == 0 || t >= wins[n-1].end {
		return 0, false
	}
	return int64(wins[n-1].step), true
}

// readSteps reads trace's step windows as link_steps.sql does: GPU and
// CPU windows sorted by (start, step), and whether its one step is the
// whole trace (stepWindows, over the rows stored).
func readSteps(ctx context.Context, conn *sql.Conn, trace int64) (gpu, cpu []stepWindow, window bool, err error) {
	rows, err := conn.QueryContext(ctx, `SELECT step, source, gpu_ts_ns, gpu_end_ns, cpu_ts_ns, cpu_end_ns FROM steps WHERE trace_id = $1`, trace)
	if err != nil {
		return nil, nil, false, err
	}
	defer rows.Close()
	var stored []stepRow
	for rows.Next() {
		var r stepRow
		var gts, gend, cts, cend sql.NullInt64
		if err := rows.Scan(&r.step, &r.source, &gts, &gend, &cts, &cend); err != nil {
			return nil, nil, false, err
		}
		r.gpuTS, r.gpuEnd = nullOr(gts), nullOr(gend)
		r.cpuTS, r.cpuEnd = nullOr(cts), nullOr(cend)
		stored = append(stored, r)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, false, err
	}
	gpu, cpu, window = stepWindows(stored)
	return gpu, cpu, window, nil
}

// nullOr is v's value, or null for SQL NULL.
func nullOr(v sql.NullInt64) int64 {
	if !v.Valid {
		return null
	}
	return v.Int64
}

// kernelColumns are the columns of `kernels` a linked kernel's row fills
// (kernelSource): every one.
var kernelColumns = columns([]string{"kernel_id", "trace_id", "run_id", "rank", "stage", "name_id", "kind",
	"ts_ns", "dur_ns", "device", "stream", "correlation", "external_id", "grid", "block", "bytes",
	"graph_launch", "launch_id", "op_id", "site_id", "stream_pos", "step"},
	duckdb.TYPE_BIGINT, duckdb.TYPE_INTEGER, duckdb.TYPE_INTEGER, duckdb.TYPE_INTEGER, duckdb.TYPE_VARCHAR,
	duckdb.TYPE_INTEGER, duckdb.TYPE_VARCHAR,
	duckdb.TYPE_BIGINT, duckdb.TYPE_BIGINT, duckdb.TYPE_INTEGER, duckdb.TYPE_BIGINT, duckdb.TYPE_BIGINT,
	duckdb.TYPE_BIGINT, duckdb.TYPE_VARCHAR, duckdb.TYPE_VARCHAR, duckdb.TYPE_BIGINT,
	duckdb.TYPE_BOOLEAN, duckdb.TYPE_BIGINT, duckdb.TYPE_BIGINT, duckdb.TYPE_INTEGER, duckdb.TYPE_BIGINT, duckdb.TYPE_INTEGER)

// kernelSource is the held kernels, each with its link, as rows of
// kernelColumns: the rows link_kernels.sql and link_steps.sql leave on
// appended kernels (TestLinkInGoMatchesSQL). The rank is the trace's, or
// in a merged file the kernel's device (else the file name's rank, 0 when
// it has none); the stage the link's, else the trace's.
type kernelSource struct {
	cur          *linkCursor
	rows         *heldReader[kernelRow]
	trace, run   int32
	rank, merged int32 // merged: the rank of a kernel without a device
	isMerged     bool
	stage        string
	stages       map[string]bool // every stage given, for the trace's (stageOf)
	last         string          // the stage given last, in stages
}

func (s *kernelSource) Fill(chunk duckdb.DataChunk) (int, error) {
	n := 0
	for limit := schema.ChunkRows(); n < limit; n++ {
		r, err := s.cur.next()
		if err != nil {
			return 0, err
		}
		k, ord, kerr := s.rows.next()
		if kerr != nil {
			return 0, kerr
		}
		if r == nil || k == nil {
			if r != nil || k != nil {
				return 0, errors.New("internal error: held kernels and linked kernels differ in number")
			}
			break
		}
		if r.kernelID != s.cur.key+ord {
			return 0, fmt.Errorf("internal error: kernel %d linked in the place of %d", r.kernelID-s.cur.key, ord)
		}
		rank := s.rank
		if s.isMerged {
			rank = s.merged
			if k.device != null {
				rank = int32(k.device)
			}
		}
		stage := r.stage
		if stage == "" {
			stage = s.stage
		}
		if stage != s.last || len(s.stages) == 0 {
			s.stages[stage], s.last = true, stage
		}
		// Each value set separately, typed: duckdb.SetChunkValue takes the
		// chunk by value, and through a helper function that copy went to
		// the heap, one allocation per value (frameSource).
		err = errors.Join(
			duckdb.SetChunkValue(chunk, 0, n, r.kernelID),
			duckdb.SetChunkValue(chunk, 1, n, s.trace),
			duckdb.SetChunkValue(chunk, 2, n, s.run),
			duckdb.SetChunkValue(chunk, 3, n, rank),
			duckdb.SetChunkValue(chunk, 4, n, stage),
			duckdb.SetChunkValue(chunk, 5, n, k.nameID),
			duckdb.SetChunkValue(chunk, 6, n, kindNames[k.kind]),
			duckdb.SetChunkValue(chunk, 7, n, r.ts),
			duckdb.SetChunkValue(chunk, 8, n, k.dur),
			duckdb.SetChunkValue(chunk, 16, n, r.graph),
			duckdb.SetChunkValue(chunk, 20, n, r.streamPos))
		if k.device == null {
			err = keep(err, chunk.SetValue(9, n, nil))
		} else {
			err = keep(err, duckdb.SetChunkValue(chunk, 9, n, int32(k.device)))
		}
		for _, c := range [...]struct {
			col int
			v   int64
		}{{10, k.stream}, {11, k.correlation}, {12, k.externalID}, {15, k.bytes}, {17, r.launchID}, {18, r.opID}} {
			if c.v == null {
				err = keep(err, chunk.SetValue(c.col, n, nil))
			} else {
				err = keep(err, duckdb.SetChunkValue(chunk, c.col, n, c.v))
			}
		}
		for _, c := range [...]struct {
			col int
			v   int64
		}{{19, r.site}, {21, r.step}} {
			if c.v == null {
				err = keep(err, chunk.SetValue(c.col, n, nil))
			} else {
				err = keep(err, duckdb.SetChunkValue(chunk, c.col, n, int32(c.v)))
			}
		}
		for _, c := range [...]struct {
			col int
			v   string
		}{{13, k.grid}, {14, k.block}} {
			if c.v == "" {
				err = keep(err, chunk.SetValue(c.col, n, nil))
			} else {
				err = keep(err, duckdb.SetChunkValue(chunk, c.col, n, c.v))
			}
		}
		if err != nil {
			return 0, err
		}
	}
	return n, nil
}

// linkInGo links the trace's kernels from t.link and inserts them, each
// with its link, into `kernels` (steps: the step windows findSteps found,
// nil: read back from `steps`); the caller has stored the launch and op
// sites, moved the times and found the steps. rank is the trace's, stage
// the one its file gives (vocab.StageUnknown when none).
func (l *loader) linkInGo(ctx context.Context, conn *sql.Conn, path string, t *traceState, steps *foundSteps, base int64, rank int,
	merged, stageKnown bool, runID int64, fileRank int, stage string) error {
	if t.link.kernels.len() == 0 {
		return nil
	}
	var gpu, cpu []stepWindow
	var window bool
	if steps != nil {
		gpu, cpu, window = steps.gpu, steps.cpu, steps.window
	} else {
		var err error
		if gpu, cpu, window, err = readSteps(ctx, conn, t.id); err != nil {
			return &dbError{fmt.Errorf("%s: read the steps: %w", path, err)}
		}
	}
	cur, err := t.link.link(t.key, base, stageKnown, gpu, cpu, window)
	if err != nil {
		return fmt.Errorf("%s: link the kernels: %w", path, err)
	}
	defer cur.close()
	if t.jsonBytes >= freeAfterBytes {
		// The joins' garbage goes back before DuckDB's INSERT of every
		// kernel: the load phase's peak.
		debug.FreeOSMemory()
	}
	src := &kernelSource{cur: cur, rows: t.link.rows.reader(), trace: int32(t.id), run: int32(runID),
		rank: int32(rank), merged: int32(max(fileRank, 0)), isMerged: merged, stage: stage, stages: map[string]bool{}}
	if err := l.env.rows.InsertRows(ctx, conn, schema.Kernels, kernelColumns, src); err != nil {
		return &dbError{fmt.Errorf("%s: insert the linked kernels: %w", path, err)}
	}
	t.stages = src.stages
	return nil
}
