package tracefile

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fastjson"

	"github.com/tracehouse/tracehouse/ingest/decode"
)

// SliceOptions select what Slice keeps. Every filter given must hold for a
// GPU event (kernel, memcpy, memset) to be selected; at least one is needed.
type SliceOptions struct {
	// Stage keeps GPU events of one stage: prefill, decode or mixed. The
	// file name (or directory) decides for the whole trace when it names a
	// stage; otherwise the stage annotation window holding the event on the
	// GPU (SGLang step[EXTEND/DECODE ...], vLLM execute_..._context_..., or
	// a name containing prefill/extend/decode), else the CPU annotation
	// window holding its launch.
	Stage string
	// Window keeps GPU events that start in [Start, End), nanoseconds from
	// the trace's first event (what Perfetto shows as 0).
	Window *Window
	// Rank keeps one rank: for a trace of one rank it must be that rank
	// (from the file name, else distributedInfo, else 0); in a merged trace
	// (merged-*) it keeps the GPU events of that device and the CPU events
	// of the processes that launched them.
	Rank *int
	// Steps keeps GPU events of steps First..Last (inclusive). Steps are the
	// trace's step annotations, strongest kind present: SGLang step[...],
	// then vLLM execute_<n>_context_..., then ProfilerStep#N; on the GPU
	// when the trace has them there, else on the CPU (a GPU event then
	// belongs to the step whose window holds its launch). Steps are numbered
	// from 0 in time order, except ProfilerStep#N, which keeps N.
	Steps *StepRange

	Force   bool   // replace an existing output
	Workers int    // decoding goroutines, 0 = GOMAXPROCS
	TempDir string // for the event index, "" = the output's directory
}

// Window is a time range in nanoseconds from the trace's first event;
// End is math.MaxInt64 when open.
type Window struct{ Start, End int64 }

// StepRange is an inclusive range of step numbers.
type StepRange struct{ First, Last int }

// ErrNothingSelected is returned when no GPU event passes the filters.
var ErrNothingSelected = errors.New("no GPU event matches the selection")

// SliceResult reports what Slice kept.
type SliceResult struct {
	Events      int64 // events in the input
	Kept        int64 // events written
	GPUEvents   int64
	KeptGPU     int64
	Steps       int    // step windows found (of the kind used)
	StepSource  string // e.g. "gpu step[...]", "" when no steps were asked for
	StageSource string // "file name", "directory", "gpu annotations", "cpu annotations"
	// Absolute spans (the trace's own clock, ns) of the kept GPU events and
	// of the kept CPU activity.
	GPUStart, GPUEnd int64
	CPUStart, CPUEnd int64
	InBytes          int64
	OutBytes         int64
	Elapsed          time.Duration
}

// Index record kinds.
const (
	kNone   = iota // no usable time: dropped
	kMeta          // ph M: always kept
	kGPU           // kernel, memcpy, memset
	kLaunch        // cuda_runtime / cuda_driver
	kCPUOp         // cpu_op
	kGPUAnn        // gpu_user_annotation
	kCPU           // any other complete event
	kFlowS         // flow start
	kFlowF         // flow step or end
	kPoint         // instants, counters, begin/end, others with a ts
)

// idxRec is one event of the index pass 1 writes, in file order.
type idxRec struct {
	kind    uint8
	ts, end int64
	corr    int64 // correlation (GPU, launch), id (flows); noCorr when absent
	ext     int64 // External id (GPU, cpu_op); noCorr when absent
	dev     int64 // GPU: args.device, else pid; others: pid; noCorr when not a number
}

const idxSize = 41

func putIdx(b []byte, r *idxRec) {
	b[0] = r.kind
	binary.LittleEndian.PutUint64(b[1:], uint64(r.ts))
	binary.LittleEndian.PutUint64(b[9:], uint64(r.end))
	binary.LittleEndian.PutUint64(b[17:], uint64(r.corr))
	binary.LittleEndian.PutUint64(b[25:], uint64(r.ext))
	binary.LittleEndian.PutUint64(b[33:], uint64(r.dev))
}

func getIdx(b []byte) idxRec {
	return idxRec{
		kind: b[0],
		ts:   int64(binary.LittleEndian.Uint64(b[1:])),
		end:  int64(binary.LittleEndian.Uint64(b[9:])),
		corr: int64(binary.LittleEndian.Uint64(b[17:])),
		ext:  int64(binary.LittleEndian.Uint64(b[25:])),
		dev:  int64(binary.LittleEndian.Uint64(b[33:])),
	}
}

// Step annotation kinds, strongest first.
const (
	stepSGLang = iota
	stepVLLM
	stepProfiler
	stepKinds
)

var stepKindNames = [stepKinds]string{"step[...]", "execute_..._context_...", "ProfilerStep#"}

type window struct {
	start, end int64
	gpu        bool
	kind       int    // step kind
	num        int    // ProfilerStep number
	stage      string // stage windows
}

type sliceBatch struct {
	recs   []idxRec
	steps  []window
	stages []window
	minTS  int64
	gpu    int64
}

type sliceWorker struct {
	path string
	p    fastjson.Parser
	num  []byte
	out  *sliceBatch
}

func (w *sliceWorker) batch(b *decode.Batch) (*sliceBatch, error) {
	w.out = &sliceBatch{recs: make([]idxRec, 0, b.Len()), minTS: math.MaxInt64}
	if err := eachEvent(b, w.event); err != nil {
		return nil, err
	}
	return w.out, nil
}

func (w *sliceWorker) event(raw []byte, ord, off int64) error {
	_, o, err := eventObject(&w.p, w.path, raw, ord, off)
	if err != nil {
		return err
	}
	f := readFields(o)
	r := idxRec{corr: noCorr, ext: noCorr, dev: noCorr}
	out := w.out
	defer func() { out.recs = append(out.recs, r) }()
	ph := phase(f.ph)
	if ph == 'M' {
		r.kind = kMeta
		return nil
	}
	ts, tsState, num := micros(f.ts, w.num)
	w.num = num
	if !usable(tsState) {
		return nil // kNone
	}
	r.ts, r.end = ts, ts
	if n, ok, num := integer(f.pid, w.num); ok {
		r.dev, w.num = n, num
	}
	switch ph {
	case 'X':
		dur, durState, num := micros(f.dur, w.num)
		w.num = num
		if !usable(durState) || dur < 0 || ts > math.MaxInt64-dur {
			r.kind = kPoint
			break
		}
		r.end = ts + dur
		out.minTS = min(out.minTS, ts)
		cat := str(f.cat)
		switch decode.Category(cat) {
		case decode.CatKernel, decode.CatMemcpy, decode.CatMemset:
			r.kind = kGPU
			out.gpu++
			if n, ok, num := integer(arg(f.args, "device"), w.num); ok {
				r.dev, w.num = n, num
			}
			r.corr = w.argInt(f.args, "correlation")
			r.ext = w.argInt(f.args, "External id", "external id")
		case decode.CatLaunch:
			r.kind = kLaunch
			r.corr = w.argInt(f.args, "correlation")
		case decode.CatCPUOp:
			r.kind = kCPUOp
			r.ext = w.argInt(f.args, "External id", "external id")
		case decode.CatGPUAnnotation:
			r.kind = kGPUAnn
			if n, ok, num := integer(arg(f.args, "device"), w.num); ok {
				r.dev, w.num = n, num
			}
		default:
			r.kind = kCPU
		}
		name := str(f.name)
		gpu := r.kind == kGPUAnn
		if r.kind == kGPUAnn || r.kind == kCPU || r.kind == kCPUOp {
			if k, n, ok := stepKind(name); ok {
				out.steps = append(out.steps, window{start: r.ts, end: r.end, gpu: gpu, kind: k, num: n})
			}
		}
		if r.kind == kGPUAnn || decode.Category(cat) == decode.CatUserAnnotation {
			if s, _ := decode.AnnotationStage(name); s != "" {
				out.stages = append(out.stages, window{start: r.ts, end: r.end, gpu: gpu, stage: s})
			}
		}
	case 's':
		r.kind = kFlowS
		r.corr = w.intOr(f.id)
	case 't', 'f':
		r.kind = kFlowF
		r.corr = w.intOr(f.id)
	default:
		r.kind = kPoint
	}
	return nil
}

func (w *sliceWorker) argInt(args *fastjson.Value, keys ...string) int64 {
	for _, k := range keys {
		if v := arg(args, k); v != nil {
			return w.intOr(v)
		}
	}
	return noCorr
}

func (w *sliceWorker) intOr(v *fastjson.Value) int64 {
	n, ok, num := integer(v, w.num)
	w.num = num
	if !ok {
		return noCorr
	}
	return n
}

// stepKind recognises a step annotation.
func stepKind(name []byte) (kind, num int, ok bool) {
	switch {
	case len(name) > 6 && string(name[:5]) == "step[":
		return stepSGLang, 0, true
	case len(name) > 8 && string(name[:8]) == "execute_" && strings.Contains(string(name), "_context_") &&
		strings.Contains(string(name), "_generation_"):
		return stepVLLM, 0, true
	case len(name) > 13 && string(name[:13]) == "ProfilerStep#":
		if n, err := strconv.Atoi(string(name[13:])); err == nil {
			return stepProfiler, n, true
		}
	}
	return 0, 0, false
}

// ParseWindow reads START:END, each a duration from the trace's first event
// ("1.5s", "200ms", "350us", "250000ns"; a bare number is microseconds, the
// trace's own unit); either side may be empty.
func ParseWindow(s string) (Window, error) {
	a, b, ok := strings.Cut(s, ":")
	if !ok {
		return Window{}, fmt.Errorf("window %q: want START:END (e.g. 1.5s:2s, 200ms:, :350us)", s)
	}
	w := Window{End: math.MaxInt64}
	var err error
	if a != "" {
		if w.Start, err = parseOffset(a); err != nil {
			return Window{}, fmt.Errorf("window %q: %w", s, err)
		}
	}
	if b != "" {
		if w.End, err = parseOffset(b); err != nil {
			return Window{}, fmt.Errorf("window %q: %w", s, err)
		}
	}
	if w.End <= w.Start {
		return Window{}, fmt.Errorf("window %q: the end is not after the start", s)
	}
	return w, nil
}

func parseOffset(s string) (int64, error) {
	if n, ok := decode.MicrosToNanos([]byte(s)); ok {
		if n < 0 {
			return 0, fmt.Errorf("%q is negative", s)
		}
		return n, nil
	}
	d, err := time.ParseDuration(strings.ReplaceAll(s, "µs", "us"))
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration (1.5s, 200ms, 350us, 250000ns)", s)
	}
	if d < 0 {
		return 0, fmt.Errorf("%q is negative", s)
	}
	return int64(d), nil
}

// ParseSteps reads N or N:M.
func ParseSteps(s string) (StepRange, error) {
	a, b, two := strings.Cut(s, ":")
	first, err := strconv.Atoi(a)
	if err != nil || first < 0 {
		return StepRange{}, fmt.Errorf("step %q: want N or N:M, steps numbered from 0", s)
	}
	last := first
	if two {
		if last, err = strconv.Atoi(b); err != nil || last < first {
			return StepRange{}, fmt.Errorf("step %q: want N:M with M >= N", s)
		}
	}
	return StepRange{first, last}, nil
}

// Slice writes a smaller, valid trace holding the GPU events the options
// select, the CPU events and flows that launched them (launches by
// correlation, cpu_ops by External id, and every CPU event overlapping the
// kept launches in time, so Python stacks stay whole), GPU annotations
// overlapping the kept GPU events, instants and counters in those spans,
// and all metadata events and top-level keys. Kept events are copied byte
// for byte, in order. The input is read twice, streaming; an index of 41
// bytes per event goes to a temporary file (unlinked at once), and the sets
// held in memory grow with the selection, not the trace.
func Slice(ctx context.Context, in, out string, opt SliceOptions) (*SliceResult, error) {
	start := time.Now()
	if opt.Stage == "" && opt.Window == nil && opt.Rank == nil && opt.Steps == nil {
		return nil, errors.New("slice: give at least one of stage, window, rank, steps")
	}
	if opt.Workers <= 0 {
		opt.Workers = runtime.GOMAXPROCS(0)
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
	idx, err := os.CreateTemp(opt.TempDir, ".tracehouse-index-*")
	if err != nil {
		return nil, fileError(out, err)
	}
	os.Remove(idx.Name())
	defer idx.Close()

	// Pass 1: the index, step and stage windows, the first timestamp.
	res := &SliceResult{}
	iw := bufio.NewWriterSize(idx, 1<<20)
	var steps, stages []window
	minTS := int64(math.MaxInt64)
	rec := make([]byte, idxSize)
	layout, err := scan(ctx, in, opt.Workers, func() func(*decode.Batch) (*sliceBatch, error) {
		w := &sliceWorker{path: in}
		return w.batch
	}, func(_ *decode.Batch, b *sliceBatch) error {
		for i := range b.recs {
			putIdx(rec, &b.recs[i])
			if _, err := iw.Write(rec); err != nil {
				return fileError(out, err)
			}
		}
		res.Events += int64(len(b.recs))
		res.GPUEvents += b.gpu
		steps = append(steps, b.steps...)
		stages = append(stages, b.stages...)
		minTS = min(minTS, b.minTS)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := iw.Flush(); err != nil {
		return nil, fileError(out, err)
	}
	res.InBytes = layout.Bytes

	sel, err := newSelection(in, opt, layout, steps, stages, minTS, res)
	if err != nil {
		return nil, err
	}
	ix := &index{f: idx, n: res.Events}
	keep, err := sel.decide(ix, res)
	if err != nil {
		return nil, fileError(in, err)
	}
	defer keep.close()

	// Pass 2: copy the kept events.
	meta, err := sortedMeta(layout.Meta)
	if err != nil {
		return nil, fileError(in, err)
	}
	writeHeader(o, layout.Array, meta)
	var seen, kept int64
	_, err = scan(ctx, in, 1, func() func(*decode.Batch) (struct{}, error) {
		return func(*decode.Batch) (struct{}, error) { return struct{}{}, nil }
	}, func(b *decode.Batch, _ struct{}) error {
		for i := range b.Len() {
			k, err := keep.next()
			if err != nil {
				return fileError(in, err)
			}
			seen++
			if !k {
				continue
			}
			raw, _ := b.Event(i)
			if kept > 0 {
				o.writeString(",\n")
			}
			kept++
			o.write(raw)
		}
		return o.err
	})
	if err != nil {
		return nil, err
	}
	if seen != res.Events {
		return nil, fmt.Errorf("%s: the file changed while it was read (%d events, then %d)", in, res.Events, seen)
	}
	writeFooter(o, layout.Array)
	res.Kept, res.OutBytes = kept, o.n
	if err := o.commit(); err != nil {
		return nil, err
	}
	committed = true
	res.Elapsed = time.Since(start)
	return res, nil
}

// sortedMeta returns the top-level keys in key order, values unchanged.
func sortedMeta(meta map[string][]byte) ([][2][]byte, error) {
	keys := make([]string, 0, len(meta))
	for k := range meta {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([][2][]byte, 0, len(keys))
	for _, k := range keys {
		out = append(out, [2][]byte{decode.AppendJSONString(nil, []byte(k)), meta[k]})
	}
	return out, nil
}

// index reads the pass-1 index back, sequentially.
type index struct {
	f *os.File
	n int64
}

func (ix *index) each(fn func(ord int64, r *idxRec) error) error {
	br := bufio.NewReaderSize(io.NewSectionReader(ix.f, 0, ix.n*idxSize), 1<<20)
	rec := make([]byte, idxSize)
	for ord := int64(0); ord < ix.n; ord++ {
		if _, err := io.ReadFull(br, rec); err != nil {
			return fmt.Errorf("read back the event index: %w", err)
		}
		r := getIdx(rec)
		if err := fn(ord, &r); err != nil {
			return err
		}
	}
	return nil
}

// idSet is a sorted set of ids; it grows with the selection.
type idSet []int64

func (s *idSet) add(v int64) {
	if v != noCorr {
		*s = append(*s, v)
	}
}

func (s *idSet) seal() {
	slices.Sort(*s)
	*s = slices.Compact(*s)
}

func (s idSet) has(v int64) bool {
	if v == noCorr {
		return false
	}
	_, ok := slices.BinarySearch(s, v)
	return ok
}

type span64 struct{ start, end int64 }

func emptySpan() span64 { return span64{math.MaxInt64, math.MinInt64} }

func (s *span64) add(a, b int64) {
	s.start = min(s.start, a)
	s.end = max(s.end, b)
}

func (s span64) overlaps(a, b int64) bool {
	// Half-open, but an empty event at a boundary counts as inside.
	return a < s.end && s.start < b || a == b && s.start <= a && a <= s.end
}

func (s span64) contains(t int64) bool { return s.start <= t && t <= s.end }

// selection holds the decided filters.
type selection struct {
	opt      SliceOptions
	window   span64 // absolute, for GPU event starts
	hasWin   bool
	rankDev  int64 // device to keep in a merged trace; noCorr when not filtering
	stepWin  []window
	stepCPU  bool
	stageAll int // 1: the file's stage matches, -1: it does not, 0: per event
	stageWin []window
	stageCPU bool
}

func newSelection(in string, opt SliceOptions, layout decode.Layout, steps, stages []window, minTS int64, res *SliceResult) (*selection, error) {
	s := &selection{opt: opt, rankDev: noCorr}
	if minTS == math.MaxInt64 {
		minTS = 0
	}
	if w := opt.Window; w != nil {
		s.hasWin = true
		s.window = span64{minTS + w.Start, math.MaxInt64}
		if w.End < math.MaxInt64-minTS {
			s.window.end = minTS + w.End
		}
	}
	ident := decode.IdentifyName(filepath.Base(in))
	if opt.Rank != nil {
		if ident.Merged {
			s.rankDev = int64(*opt.Rank)
		} else {
			rank := ident.Rank
			if rank < 0 {
				rank = distributedRank(layout.Meta["distributedInfo"])
			}
			if rank < 0 {
				rank = 0
			}
			if rank != *opt.Rank {
				return nil, fmt.Errorf("%s: the trace is rank %d, not %d", in, rank, *opt.Rank)
			}
		}
	}
	if opt.Steps != nil {
		kind := stepKinds
		for _, w := range steps {
			kind = min(kind, w.kind)
		}
		if kind == stepKinds {
			return nil, fmt.Errorf("%s: no step annotations (step[...], execute_..._context_..., ProfilerStep#N) to select steps by", in)
		}
		var gpu, cpu []window
		for _, w := range steps {
			if w.kind != kind {
				continue
			}
			if w.gpu {
				gpu = append(gpu, w)
			} else {
				cpu = append(cpu, w)
			}
		}
		ws, where := gpu, "gpu"
		if len(gpu) == 0 {
			ws, where, s.stepCPU = cpu, "cpu", true
		}
		slices.SortStableFunc(ws, func(a, b window) int { return cmpInt(a.start, b.start) })
		res.Steps, res.StepSource = len(ws), where+" "+stepKindNames[kind]
		for i, w := range ws {
			n := i
			if kind == stepProfiler {
				n = w.num
			}
			if n >= opt.Steps.First && n <= opt.Steps.Last {
				s.stepWin = append(s.stepWin, w)
			}
		}
		if len(s.stepWin) == 0 {
			return nil, fmt.Errorf("%s: no step %d..%d among %d %s steps", in, opt.Steps.First, opt.Steps.Last, len(ws), where+" "+stepKindNames[kind])
		}
	}
	if opt.Stage != "" {
		fileStage, src := ident.Stage, "file name"
		if fileStage == "" {
			fileStage, src = decode.DirStage(in), "directory"
		}
		switch {
		case fileStage != "":
			res.StageSource = src
			s.stageAll = -1
			if fileStage == opt.Stage {
				s.stageAll = 1
			}
		default:
			var gpu, cpu []window
			for _, w := range stages {
				if w.gpu {
					gpu = append(gpu, w)
				} else {
					cpu = append(cpu, w)
				}
			}
			ws, where := gpu, "gpu annotations"
			if len(gpu) == 0 {
				ws, where, s.stageCPU = cpu, "cpu annotations", true
			}
			if len(ws) == 0 {
				return nil, fmt.Errorf("%s: the stage is unknown (not in the file name or directory, no stage annotations)", in)
			}
			res.StageSource = where
			// Innermost window first: sorted by start, the last window
			// starting before a time that still holds it is the innermost.
			slices.SortStableFunc(ws, func(a, b window) int { return cmpInt(a.start, b.start) })
			s.stageWin = ws
		}
	}
	return s, nil
}

// distributedRank reads distributedInfo.rank, -1 when absent.
func distributedRank(raw []byte) int {
	if raw == nil {
		return -1
	}
	var p fastjson.Parser
	v, err := decode.ParseJSON(&p, raw)
	if err != nil {
		return -1
	}
	n, ok, _ := integer(v.Get("rank"), nil)
	if !ok {
		return -1
	}
	return int(n)
}

// stageAt returns the stage of the innermost window holding t.
func stageAt(ws []window, t int64) string {
	i, _ := slices.BinarySearchFunc(ws, t, func(w window, t int64) int {
		if w.start <= t {
			return -1
		}
		return 1
	})
	// ws[:i] start at or before t; look back a bounded distance for one
	// that still holds t (nested windows are few).
	for j, n := i-1, 0; j >= 0 && n < 64; j, n = j-1, n+1 {
		if t < ws[j].end || t == ws[j].start {
			return ws[j].stage
		}
	}
	return ""
}

// inWindows reports whether t falls in one of ws, sorted by start (step
// windows of one kind do not nest; a few overlapping ones are looked at).
func inWindows(ws []window, t int64) bool {
	i, _ := slices.BinarySearchFunc(ws, t, func(w window, t int64) int {
		if w.start <= t {
			return -1
		}
		return 1
	})
	for j, n := i-1, 0; j >= 0 && n < 64; j, n = j-1, n+1 {
		if t < ws[j].end || t == ws[j].start {
			return true
		}
	}
	return false
}

// keepBits streams the keep decision of every event, in file order.
type keepBits struct {
	f   *os.File
	r   *bufio.Reader
	cur byte
	n   int64
}

func (k *keepBits) next() (bool, error) {
	if k.n%8 == 0 {
		b, err := k.r.ReadByte()
		if err != nil {
			return false, fmt.Errorf("read back the keep bits: %w", err)
		}
		k.cur = b
	}
	bit := k.cur&(1<<(k.n%8)) != 0
	k.n++
	return bit, nil
}

func (k *keepBits) close() { k.f.Close() }

// decide runs over the index: the selected GPU events, then what belongs to
// them, and writes one keep bit per event to a temporary file.
func (s *selection) decide(ix *index, res *SliceResult) (*keepBits, error) {
	// CPU windows (steps or stages without GPU annotations) select GPU
	// events through the launches inside them.
	var stepLaunch, stageLaunch idSet
	if s.stepCPU || s.stageCPU {
		err := ix.each(func(_ int64, r *idxRec) error {
			if r.kind != kLaunch {
				return nil
			}
			if s.stepCPU && inWindows(s.stepWin, r.ts) {
				stepLaunch.add(r.corr)
			}
			if s.stageCPU && stageAt(s.stageWin, r.ts) == s.opt.Stage {
				stageLaunch.add(r.corr)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		stepLaunch.seal()
		stageLaunch.seal()
	}
	selected := func(r *idxRec) bool {
		if r.kind != kGPU {
			return false
		}
		if s.rankDev != noCorr && r.dev != s.rankDev {
			return false
		}
		if s.hasWin && !(s.window.start <= r.ts && (r.ts < s.window.end || s.window.end == math.MaxInt64)) {
			return false
		}
		if s.opt.Steps != nil {
			if s.stepCPU && !stepLaunch.has(r.corr) || !s.stepCPU && !inWindows(s.stepWin, r.ts) {
				return false
			}
		}
		if s.opt.Stage != "" {
			switch {
			case s.stageAll != 0:
				return s.stageAll > 0
			case s.stageCPU:
				return stageLaunch.has(r.corr)
			default:
				return stageAt(s.stageWin, r.ts) == s.opt.Stage
			}
		}
		return true
	}
	// The kept GPU events: their correlations, External ids and span.
	var corrs, exts idSet
	gpuSpan := emptySpan()
	err := ix.each(func(_ int64, r *idxRec) error {
		if selected(r) {
			res.KeptGPU++
			corrs.add(r.corr)
			exts.add(r.ext)
			gpuSpan.add(r.ts, r.end)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if res.KeptGPU == 0 {
		return nil, ErrNothingSelected
	}
	corrs.seal()
	exts.seal()
	// The launches of the kept GPU events, their span and processes.
	cpuSpan := emptySpan()
	var pids idSet
	err = ix.each(func(_ int64, r *idxRec) error {
		if r.kind == kLaunch && corrs.has(r.corr) {
			cpuSpan.add(r.ts, r.end)
			pids.add(r.dev)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	pids.seal()
	if s.hasWin {
		gpuSpan.add(s.window.start, s.window.end)
		cpuSpan.add(s.window.start, s.window.end)
	}
	if s.stepCPU {
		for _, w := range s.stepWin {
			cpuSpan.add(w.start, w.end)
		}
	}
	// Only in a merged trace does the rank filter reach CPU events.
	cpuPID := func(r *idxRec) bool { return s.rankDev == noCorr || pids.has(r.dev) }
	// Flows that start in what is kept; their steps and ends follow.
	var flows idSet
	keepFlowStart := func(r *idxRec) bool {
		return corrs.has(r.corr) || cpuSpan.contains(r.ts) && cpuPID(r)
	}
	err = ix.each(func(_ int64, r *idxRec) error {
		if r.kind == kFlowS && keepFlowStart(r) {
			flows.add(r.corr)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	flows.seal()
	all := gpuSpan
	all.add(cpuSpan.start, cpuSpan.end)
	f, err := os.CreateTemp(filepath.Dir(ix.f.Name()), ".tracehouse-keep-*")
	if err != nil {
		return nil, err
	}
	os.Remove(f.Name())
	bw := bufio.NewWriterSize(f, 1<<16)
	var cur byte
	err = ix.each(func(ord int64, r *idxRec) error {
		var k bool
		switch r.kind {
		case kMeta:
			k = true
		case kGPU:
			k = selected(r)
		case kLaunch:
			k = corrs.has(r.corr)
		case kCPUOp:
			k = exts.has(r.ext) || cpuSpan.overlaps(r.ts, r.end) && cpuPID(r)
		case kCPU:
			k = cpuSpan.overlaps(r.ts, r.end) && cpuPID(r)
		case kGPUAnn:
			k = gpuSpan.overlaps(r.ts, r.end) && (s.rankDev == noCorr || r.dev == s.rankDev)
		case kFlowS:
			k = keepFlowStart(r)
		case kFlowF:
			k = flows.has(r.corr)
		case kPoint:
			k = all.contains(r.ts) && (s.rankDev == noCorr || r.dev == s.rankDev || pids.has(r.dev))
		}
		if k {
			cur |= 1 << (ord % 8)
		}
		if ord%8 == 7 {
			if err := bw.WriteByte(cur); err != nil {
				return err
			}
			cur = 0
		}
		return nil
	})
	if err == nil && ix.n%8 != 0 {
		err = bw.WriteByte(cur)
	}
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		f.Close()
		return nil, err
	}
	res.GPUStart, res.GPUEnd = gpuSpan.start, gpuSpan.end
	res.CPUStart, res.CPUEnd = cpuSpan.start, cpuSpan.end
	if cpuSpan.start > cpuSpan.end {
		res.CPUStart, res.CPUEnd = 0, 0
	}
	return &keepBits{f: f, r: bufio.NewReaderSize(f, 1<<16)}, nil
}
