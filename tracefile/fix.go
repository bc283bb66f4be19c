package tracefile

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fastjson"

	"github.com/tracehouse/tracehouse/ingest/decode"
	"github.com/tracehouse/tracehouse/parseerr"
)

// FixOptions tune PerfettoFix.
type FixOptions struct {
	// Force overwrites an existing output file.
	Force bool
	// Workers decode events in parallel; 0 means GOMAXPROCS.
	Workers int
	// TempDir holds sort runs when a trace has more GPU events than
	// SortBudget; "" means the output's directory.
	TempDir string
	// SortBudget is the number of records sorted in memory before runs go
	// to disk; 0 means DefaultSortBudget.
	SortBudget int
}

// DefaultSortBudget keeps the lane sort near 12 MiB and the fix list near
// 6 MiB; a trace with more GPU events sorts in runs on disk.
const DefaultSortBudget = 1 << 18

// FixResult reports what PerfettoFix did.
type FixResult struct {
	Events     int64 // events in the input (and, unchanged in number, in the output)
	GPUEvents  int64 // kernels, memcpys and memsets placed on lanes
	Lanes      int   // (pid, tid) lanes holding GPU events
	SplitLanes int   // lanes whose events overlapped
	ExtraLanes int   // lanes added (the sum over split lanes of depth - 1)
	MaxDepth   int   // the deepest overlap on one lane
	Moved      int64 // GPU events moved to an added lane
	MovedFlows int64 // flow events moved with them

	// Repairs, in events (top-level keys count as events).
	StringTimes  int64 // ts or dur written as a string
	ControlChars int64 // unescaped control characters in strings
	BadNumbers   int64 // NaN, Infinity and other non-JSON numbers, now null
	// Unrepairable counts events Perfetto may still drop: a ts or dur that
	// is not a number, GPU events without a usable ts/dur (left in place).
	Unrepairable int64

	InBytes  int64 // decompressed JSON read
	OutBytes int64 // uncompressed JSON written
	Elapsed  time.Duration
}

// Repairs is the number of repaired events.
func (r *FixResult) Repairs() int64 { return r.StringTimes + r.ControlChars + r.BadNumbers }

// DefaultFixOutput is where PerfettoFix writes by default: beside the
// input, <name>.perfetto.json.gz.
func DefaultFixOutput(in string) string {
	base := filepath.Base(in)
	for _, suf := range []string{".json.gz", ".json", ".gz"} {
		if strings.HasSuffix(base, suf) && len(base) > len(suf) {
			base = base[:len(base)-len(suf)]
			break
		}
	}
	return filepath.Join(filepath.Dir(in), base+".perfetto.json.gz")
}

// Flags of a fix record.
const (
	fixTS   = 1 << iota // ts written as a string
	fixDur              // dur written as a string
	fixCtl              // unescaped control characters
	fixNum              // non-JSON numbers
	fixMove             // move to an added lane
)

// laneRec is a GPU event or flow event on a lane, for the lane sort.
type laneRec struct {
	lane uint32
	kind uint8 // recGPU or recFlow
	ord  int64
	ts   int64
	end  int64
	corr int64 // GPU: args.correlation; flow: id; noCorr when absent
}

const (
	recGPU  = 0
	recFlow = 1
	noCorr  = math.MinInt64
)

var laneCodec = codec[laneRec]{
	size: 37,
	put: func(b []byte, r *laneRec) {
		binary.LittleEndian.PutUint32(b[0:], r.lane)
		b[4] = r.kind
		binary.LittleEndian.PutUint64(b[5:], uint64(r.ord))
		binary.LittleEndian.PutUint64(b[13:], uint64(r.ts))
		binary.LittleEndian.PutUint64(b[21:], uint64(r.end))
		binary.LittleEndian.PutUint64(b[29:], uint64(r.corr))
	},
	get: func(b []byte) laneRec {
		return laneRec{
			lane: binary.LittleEndian.Uint32(b[0:]),
			kind: b[4],
			ord:  int64(binary.LittleEndian.Uint64(b[5:])),
			ts:   int64(binary.LittleEndian.Uint64(b[13:])),
			end:  int64(binary.LittleEndian.Uint64(b[21:])),
			corr: int64(binary.LittleEndian.Uint64(b[29:])),
		}
	},
}

// cmpLane orders a lane's records by start, GPU events before the flows
// that bind to them, shorter first (so a zero-length event at t shares a
// lane with one starting at t), then file order.
func cmpLane(a, b laneRec) int {
	switch {
	case a.lane != b.lane:
		return cmpInt(int64(a.lane), int64(b.lane))
	case a.ts != b.ts:
		return cmpInt(a.ts, b.ts)
	case a.kind != b.kind:
		return cmpInt(int64(a.kind), int64(b.kind))
	case a.end != b.end:
		return cmpInt(a.end, b.end)
	}
	return cmpInt(a.ord, b.ord)
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// fixRec is what pass 2 does to one event.
type fixRec struct {
	ord   int64
	flags uint8
	lane  uint32
	sub   uint32 // added lane number, 1-based, with fixMove
}

var fixCodec = codec[fixRec]{
	size: 17,
	put: func(b []byte, r *fixRec) {
		binary.LittleEndian.PutUint64(b[0:], uint64(r.ord))
		b[8] = r.flags
		binary.LittleEndian.PutUint32(b[9:], r.lane)
		binary.LittleEndian.PutUint32(b[13:], r.sub)
	},
	get: func(b []byte) fixRec {
		return fixRec{
			ord:   int64(binary.LittleEndian.Uint64(b[0:])),
			flags: b[8],
			lane:  binary.LittleEndian.Uint32(b[9:]),
			sub:   binary.LittleEndian.Uint32(b[13:]),
		}
	},
}

func cmpFix(a, b fixRec) int { return cmpInt(a.ord, b.ord) }

// lane is one (pid, tid) of the trace.
type lane struct {
	pid, tid  string // raw JSON text, "" when absent
	tidNum    int64
	numeric   bool
	name      string // from thread_name metadata
	sortIndex string // raw JSON text of thread_sort_index, "" when none
	gpu       bool
	depth     int
	newTids   []int64 // tids of the added lanes
}

// laneTable maps lane keys to lanes, in order of first appearance.
type laneTable struct {
	ids   map[string]uint32
	lanes []*lane
}

func (t *laneTable) id(key string, pid, tid []byte) uint32 {
	if id, ok := t.ids[key]; ok {
		return id
	}
	id := uint32(len(t.lanes))
	l := &lane{pid: string(pid), tid: string(tid)}
	if n, ok := parseInt(tid); ok {
		l.tidNum, l.numeric = n, true
	} else if len(tid) > 2 && tid[0] == '"' {
		if n, ok := parseInt(tid[1 : len(tid)-1]); ok {
			l.tidNum, l.numeric = n, true
		}
	}
	t.ids[key] = id
	t.lanes = append(t.lanes, l)
	return id
}

// fixBatch is what pass 1 learns from one batch.
type fixBatch struct {
	keys  [][3]string // local lane index -> key, pid, tid
	recs  []laneRec   // lane is the local index
	fixes []fixRec
	names []laneName
	res   FixResult
}

type laneName struct {
	lane      uint32 // local index
	name      string
	sortIndex string
	isSort    bool
}

// fixWorker is pass 1's per-goroutine state.
type fixWorker struct {
	path  string
	p     fastjson.Parser
	num   []byte
	key   []byte
	local map[string]uint32
	out   *fixBatch
}

func (w *fixWorker) laneOf(f *fields) uint32 {
	w.key = w.key[:0]
	if f.pid != nil {
		w.key = f.pid.MarshalTo(w.key)
	}
	np := len(w.key)
	w.key = append(w.key, 0)
	if f.tid != nil {
		w.key = f.tid.MarshalTo(w.key)
	}
	if id, ok := w.local[string(w.key)]; ok {
		return id
	}
	id := uint32(len(w.out.keys))
	k := string(w.key)
	w.local[k] = id
	w.out.keys = append(w.out.keys, [3]string{k, k[:np], k[np+1:]})
	return id
}

func (w *fixWorker) batch(b *decode.Batch) (*fixBatch, error) {
	w.out = &fixBatch{}
	clear(w.local)
	if err := eachEvent(b, w.event); err != nil {
		return nil, err
	}
	return w.out, nil
}

func (w *fixWorker) event(raw []byte, ord, off int64) error {
	v, o, err := eventObject(&w.p, w.path, raw, ord, off)
	if err != nil {
		return err
	}
	out := w.out
	out.res.Events++
	f := readFields(o)
	var flags uint8
	if rawControl(raw) {
		flags |= fixCtl
		out.res.ControlChars++
	}
	var bad bool
	if w.num, bad = badNumber(v, w.num); bad {
		flags |= fixNum
		out.res.BadNumbers++
	}
	ts, tsState, num := micros(f.ts, w.num)
	dur, durState, num := micros(f.dur, num)
	w.num = num
	if tsState == timeString {
		flags |= fixTS
	}
	if durState == timeString {
		flags |= fixDur
	}
	if tsState == timeString || durState == timeString {
		out.res.StringTimes++
	}
	unrepairable := tsState == timeInvalid || durState == timeInvalid
	if unrepairable {
		out.res.Unrepairable++
	}
	if flags != 0 {
		out.fixes = append(out.fixes, fixRec{ord: ord, flags: flags})
	}
	// Every lane counts when choosing unused tids for added lanes.
	var ln uint32
	if f.pid != nil || f.tid != nil {
		ln = w.laneOf(&f)
	}
	switch phase(f.ph) {
	case 'X':
		if c := decode.Category(str(f.cat)); c != decode.CatKernel && c != decode.CatMemset && c != decode.CatMemcpy {
			return nil
		}
		if !usable(tsState) || !usable(durState) || dur < 0 || ts > math.MaxInt64-dur {
			// Left where it is: without a usable span it cannot be placed.
			if !unrepairable {
				out.res.Unrepairable++
			}
			return nil
		}
		corr := int64(noCorr)
		if n, ok, num := integer(arg(f.args, "correlation"), w.num); ok {
			corr, w.num = n, num
		}
		out.recs = append(out.recs, laneRec{lane: ln, kind: recGPU, ord: ord, ts: ts, end: ts + dur, corr: corr})
		out.res.GPUEvents++
	case 's', 't', 'f':
		if !usable(tsState) {
			return nil
		}
		corr := int64(noCorr)
		if n, ok, num := integer(f.id, w.num); ok {
			corr, w.num = n, num
		}
		out.recs = append(out.recs, laneRec{lane: ln, kind: recFlow, ord: ord, ts: ts, end: ts, corr: corr})
	case 'M':
		switch string(str(f.name)) {
		case "thread_name":
			if n := str(arg(f.args, "name")); n != nil {
				out.names = append(out.names, laneName{lane: ln, name: string(n)})
			}
		case "thread_sort_index":
			if s := arg(f.args, "sort_index"); s != nil && s.Type() == fastjson.TypeNumber {
				out.names = append(out.names, laneName{lane: ln, sortIndex: string(s.MarshalTo(nil)), isSort: true})
			}
		}
	}
	return nil
}

func usable(s timeState) bool { return s == timeNumber || s == timeString }

func shorten(s string) string {
	if len(s) > 160 {
		return s[:157] + "..."
	}
	return s
}

// PerfettoFix writes a copy of the trace at in that Perfetto loads whole:
//
//   - GPU events (kernels, memcpys, memsets) that overlap on one (pid, tid)
//     lane, which Perfetto drops or mis-nests, are spread over the fewest
//     added lanes (sorted by start, each placed on the lowest-numbered lane
//     that is free by then), with thread_name metadata ("stream 7
//     (overlap 1)") and a thread_sort_index keeping them beside the
//     original; flow events bound to a moved event move with it;
//   - ts and dur written as strings become numbers (the same digits);
//   - unescaped control characters in strings are escaped;
//   - NaN, Infinity and other numbers JSON has no form for become null.
//
// Every other byte of every other event is copied unchanged; events keep
// their order, and the other top-level keys their values. The input is read
// twice, streaming (plain or gzip, by content); the output is gzip when its
// name ends in .gz, written to a temporary file and renamed into place.
// Memory does not grow with the trace: the lane sort spills to disk.
func PerfettoFix(ctx context.Context, in, out string, opt FixOptions) (*FixResult, error) {
	start := time.Now()
	if opt.Workers <= 0 {
		opt.Workers = runtime.GOMAXPROCS(0)
	}
	if opt.SortBudget <= 0 {
		opt.SortBudget = DefaultSortBudget
	}
	if opt.TempDir == "" {
		opt.TempDir = filepath.Dir(out)
	}
	o, err := createOutput(out, opt.Force, in)
	if err != nil {
		return nil, err
	}
	committed := false
	defer func() {
		if !committed {
			o.abort()
		}
	}()

	// Pass 1: lanes, GPU events and flows, repairs.
	res := &FixResult{}
	lanes := &laneTable{ids: map[string]uint32{}}
	recs := newSorter(opt.TempDir, opt.SortBudget, laneCodec, cmpLane)
	defer recs.close()
	fixes := newSorter(opt.TempDir, opt.SortBudget, fixCodec, cmpFix)
	defer fixes.close()
	global := []uint32{}
	layout, err := scan(ctx, in, opt.Workers, func() func(*decode.Batch) (*fixBatch, error) {
		w := &fixWorker{path: in, local: map[string]uint32{}}
		return w.batch
	}, func(_ *decode.Batch, b *fixBatch) error {
		global = global[:0]
		for _, k := range b.keys {
			global = append(global, lanes.id(k[0], []byte(k[1]), []byte(k[2])))
		}
		for _, r := range b.recs {
			r.lane = global[r.lane]
			if r.kind == recGPU {
				lanes.lanes[r.lane].gpu = true
			}
			if err := recs.add(r); err != nil {
				return err
			}
		}
		for _, f := range b.fixes {
			if err := fixes.add(f); err != nil {
				return err
			}
		}
		for _, n := range b.names {
			l := lanes.lanes[global[n.lane]]
			if n.isSort {
				l.sortIndex = n.sortIndex
			} else {
				l.name = n.name
			}
		}
		res.add(&b.res)
		return nil
	})
	if err != nil {
		return nil, err
	}
	res.InBytes = layout.Bytes

	// Lane assignment over the sorted records.
	if err := assignLanes(recs, fixes, lanes, res); err != nil {
		return nil, fileError(in, err)
	}
	recs.close()
	newTids(lanes)

	// Top-level keys, repaired the same way.
	meta, err := repairMeta(in, layout.Meta, res)
	if err != nil {
		return nil, err
	}

	// Pass 2: copy, rewriting the events that need it.
	it, err := fixes.sorted()
	if err != nil {
		return nil, fileError(in, err)
	}
	writeHeader(o, layout.Array, meta)
	rw := &rewriter{lanes: lanes}
	next, more, err := it.next()
	if err != nil {
		return nil, fileError(in, err)
	}
	var events int64
	_, err = scan(ctx, in, 1, func() func(*decode.Batch) (struct{}, error) {
		return func(*decode.Batch) (struct{}, error) { return struct{}{}, nil }
	}, func(b *decode.Batch, _ struct{}) error {
		for i := range b.Len() {
			raw, off := b.Event(i)
			ord := b.First + int64(i)
			if events > 0 {
				o.writeString(",\n")
			}
			events++
			if !more || next.ord != ord {
				o.write(raw)
				continue
			}
			var flags uint8
			var mv fixRec
			for more && next.ord == ord {
				flags |= next.flags
				if next.flags&fixMove != 0 {
					mv = next
				}
				if next, more, err = it.next(); err != nil {
					return fileError(in, err)
				}
			}
			buf, err := rw.rewrite(raw, flags, mv)
			if err != nil {
				return eventError(in, ord, off, "", decode.ErrSyntax, shorten(err.Error()))
			}
			o.write(buf)
		}
		return o.err
	})
	if err != nil {
		return nil, err
	}
	if events != res.Events {
		return nil, fmt.Errorf("%s: the file changed while it was read (%d events, then %d)", in, res.Events, events)
	}
	writeLaneMeta(o, lanes, events > 0)
	writeFooter(o, layout.Array)
	res.OutBytes = o.n
	if err := o.commit(); err != nil {
		return nil, err
	}
	committed = true
	res.Elapsed = time.Since(start)
	return res, nil
}

func (r *FixResult) add(o *FixResult) {
	r.Events += o.Events
	r.GPUEvents += o.GPUEvents
	r.StringTimes += o.StringTimes
	r.ControlChars += o.ControlChars
	r.BadNumbers += o.BadNumbers
	r.Unrepairable += o.Unrepairable
}

// assignLanes walks each lane's GPU events by start and gives each the
// lowest-numbered sub-lane free at its start (0 is the original lane); it
// adds a move for every event and flow placed off the original lane.
func assignLanes(recs *sorter[laneRec], fixes *sorter[fixRec], lanes *laneTable, res *FixResult) error {
	it, err := recs.sorted()
	if err != nil {
		return err
	}
	var (
		cur     = uint32(math.MaxUint32)
		busy    laneHeap // (end, sub) of events still running
		free    subHeap  // sub-lanes free again
		depth   int
		groupTS int64 = math.MinInt64
		byCorr        = map[int64]uint32{} // GPU events starting at groupTS
		firstAt uint32
		hasAt   bool
	)
	finish := func() {
		if cur == math.MaxUint32 {
			return
		}
		l := lanes.lanes[cur]
		if l.gpu {
			res.Lanes++
			l.depth = max(depth, 1)
			if depth > 1 {
				res.SplitLanes++
				res.ExtraLanes += depth - 1
			}
			res.MaxDepth = max(res.MaxDepth, depth)
		}
	}
	for {
		r, ok, err := it.next()
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		if r.lane != cur {
			finish()
			cur, depth = r.lane, 0
			busy.items, free.h.items = busy.items[:0], free.h.items[:0]
			groupTS, hasAt = math.MinInt64, false
			clear(byCorr)
		}
		if r.ts != groupTS {
			groupTS, hasAt = r.ts, false
			clear(byCorr)
		}
		if r.kind == recFlow {
			// A flow binds to the event it starts or ends on: the GPU
			// event starting at the same time with the flow's id as its
			// correlation, else the first one starting then.
			sub, ok := byCorr[r.corr]
			if !ok && hasAt {
				sub, ok = firstAt, true
			}
			if ok && sub > 0 {
				res.MovedFlows++
				if err := fixes.add(fixRec{ord: r.ord, flags: fixMove, lane: r.lane, sub: sub}); err != nil {
					return err
				}
			}
			continue
		}
		for len(busy.items) > 0 && busy.items[0].end <= r.ts {
			free.push(busy.pop().sub)
		}
		var sub uint32
		if len(free.h.items) > 0 {
			sub = free.pop()
		} else {
			sub = uint32(depth)
			depth++
		}
		busy.push(laneEnd{end: r.end, sub: sub})
		if _, dup := byCorr[r.corr]; !dup && r.corr != noCorr {
			byCorr[r.corr] = sub
		}
		if !hasAt {
			firstAt, hasAt = sub, true
		}
		if sub > 0 {
			res.Moved++
			if err := fixes.add(fixRec{ord: r.ord, flags: fixMove, lane: r.lane, sub: sub}); err != nil {
				return err
			}
		}
	}
	finish()
	return nil
}

type laneEnd struct {
	end int64
	sub uint32
}

// laneHeap is a min-heap of running events by end (then sub-lane).
type laneHeap struct{ items []laneEnd }

func (h *laneHeap) less(i, j int) bool {
	a, b := h.items[i], h.items[j]
	return a.end < b.end || a.end == b.end && a.sub < b.sub
}

func (h *laneHeap) push(v laneEnd) {
	h.items = append(h.items, v)
	for i := len(h.items) - 1; i > 0; {
		p := (i - 1) / 2
		if !h.less(i, p) {
			break
		}
		h.items[i], h.items[p] = h.items[p], h.items[i]
		i = p
	}
}

func (h *laneHeap) pop() laneEnd {
	top := h.items[0]
	last := len(h.items) - 1
	h.items[0] = h.items[last]
	h.items = h.items[:last]
	for i := 0; ; {
		l, s := 2*i+1, i
		if l < len(h.items) && h.less(l, s) {
			s = l
		}
		if r := l + 1; r < len(h.items) && h.less(r, s) {
			s = r
		}
		if s == i {
			break
		}
		h.items[i], h.items[s] = h.items[s], h.items[i]
		i = s
	}
	return top
}

// subHeap is a min-heap of free sub-lane numbers.
type subHeap struct{ h laneHeap }

func (s *subHeap) push(sub uint32) { s.h.push(laneEnd{sub: sub}) }
func (s *subHeap) pop() uint32     { return s.h.pop().sub }

// newTids gives every added lane a numeric tid above every numeric tid of
// its pid, in lane order, so no two lanes of a process share one.
func newTids(lanes *laneTable) {
	next := map[string]int64{}
	for _, l := range lanes.lanes {
		if l.numeric {
			if n, ok := next[l.pid]; !ok || l.tidNum+1 > n {
				next[l.pid] = l.tidNum + 1
			}
		}
	}
	for _, l := range lanes.lanes {
		if l.depth <= 1 {
			continue
		}
		n, ok := next[l.pid]
		if !ok || n < 1 {
			n = 1
		}
		for range l.depth - 1 {
			l.newTids = append(l.newTids, n)
			n++
		}
		next[l.pid] = n
	}
}

// rewriter re-serializes the events that need a repair or a move.
type rewriter struct {
	lanes *laneTable
	p     fastjson.Parser
	buf   []byte
}

func (rw *rewriter) rewrite(raw []byte, flags uint8, mv fixRec) ([]byte, error) {
	v, err := decode.ParseJSON(&rw.p, raw)
	if err != nil {
		return nil, err
	}
	o, err := v.Object()
	if err != nil {
		return nil, err
	}
	var newTid int64
	moved := flags&fixMove != 0
	if moved {
		newTid = rw.lanes.lanes[mv.lane].newTids[mv.sub-1]
	}
	b := append(rw.buf[:0], '{')
	first, sawTid := true, false
	o.Visit(func(k []byte, v *fastjson.Value) {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = decode.AppendJSONString(b, k)
		b = append(b, ':')
		switch {
		case moved && string(k) == "tid":
			sawTid = true
			b = strconv.AppendInt(b, newTid, 10)
		case flags&fixTS != 0 && string(k) == "ts" && v.Type() == fastjson.TypeString,
			flags&fixDur != 0 && string(k) == "dur" && v.Type() == fastjson.TypeString:
			s, _ := v.StringBytes()
			b = append(b, s...)
		default:
			b = decode.AppendJSON(b, v)
		}
	})
	if moved && !sawTid {
		if !first {
			b = append(b, ',')
		}
		b = append(b, `"tid":`...)
		b = strconv.AppendInt(b, newTid, 10)
	}
	b = append(b, '}')
	rw.buf = b
	return b, nil
}

// repairMeta applies the string repairs to the top-level keys and returns
// them in key order.
func repairMeta(in string, meta map[string][]byte, res *FixResult) ([][2][]byte, error) {
	keys := make([]string, 0, len(meta))
	for k := range meta {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var p fastjson.Parser
	var num []byte
	out := make([][2][]byte, 0, len(keys))
	for _, k := range keys {
		raw := meta[k]
		ctl := rawControl(raw)
		v, err := decode.ParseJSON(&p, raw)
		if err != nil {
			return nil, &parseerr.Error{File: in, Event: -1, Offset: -1, Field: k, Err: &causeError{decode.ErrSyntax, shorten(err.Error())}}
		}
		var bad bool
		num, bad = badNumber(v, num)
		if ctl {
			res.ControlChars++
		}
		if bad {
			res.BadNumbers++
		}
		if ctl || bad {
			raw = decode.AppendJSON(nil, v)
		}
		out = append(out, [2][]byte{decode.AppendJSONString(nil, []byte(k)), raw})
	}
	return out, nil
}

func writeHeader(o *output, array bool, meta [][2][]byte) {
	if array {
		o.writeString("[\n")
		return
	}
	o.writeString("{\n")
	for _, kv := range meta {
		o.writeString("  ")
		o.write(kv[0])
		o.writeString(": ")
		o.write(kv[1])
		o.writeString(",\n")
	}
	o.writeString("  \"traceEvents\": [\n")
}

func writeFooter(o *output, array bool) {
	if array {
		o.writeString("\n]\n")
		return
	}
	o.writeString("\n  ]\n}\n")
}

// writeLaneMeta names the added lanes and keeps them sorted beside their
// original: the original's thread_sort_index (its tid when it has none,
// which is then given to the original too).
func writeLaneMeta(o *output, lanes *laneTable, comma bool) {
	var b []byte
	for _, l := range lanes.lanes {
		if len(l.newTids) == 0 {
			continue
		}
		name := l.name
		if name == "" && strings.HasPrefix(l.tid, `"`) {
			name = strings.Trim(l.tid, `"`)
		} else if name == "" {
			name = "stream " + l.tid
		}
		sort := l.sortIndex
		if sort == "" && l.numeric {
			sort = strconv.FormatInt(l.tidNum, 10)
			b = appendMeta(b[:0], "thread_sort_index", l.pid, l.tid, "sort_index", sort, false)
			comma = writeEvent(o, b, comma)
		}
		for i, tid := range l.newTids {
			t := strconv.FormatInt(tid, 10)
			b = appendMeta(b[:0], "thread_name", l.pid, t, "name", fmt.Sprintf("%s (overlap %d)", name, i+1), true)
			comma = writeEvent(o, b, comma)
			if sort != "" {
				b = appendMeta(b[:0], "thread_sort_index", l.pid, t, "sort_index", sort, false)
				comma = writeEvent(o, b, comma)
			}
		}
	}
}

func writeEvent(o *output, b []byte, comma bool) bool {
	if comma {
		o.writeString(",\n")
	}
	o.write(b)
	return true
}

// appendMeta appends a metadata (M) event; pid and tid are raw JSON.
func appendMeta(b []byte, name, pid, tid, key, value string, quote bool) []byte {
	b = append(b, `{"name":`...)
	b = decode.AppendJSONString(b, []byte(name))
	b = append(b, `,"ph":"M"`...)
	if pid != "" {
		b = append(b, `,"pid":`...)
		b = append(b, pid...)
	}
	b = append(b, `,"tid":`...)
	b = append(b, tid...)
	b = append(b, `,"args":{`...)
	b = decode.AppendJSONString(b, []byte(key))
	b = append(b, ':')
	if quote {
		b = decode.AppendJSONString(b, []byte(value))
	} else {
		b = append(b, value...)
	}
	return append(b, "}}"...)
}
