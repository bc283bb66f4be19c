package synth

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"

	"github.com/klauspost/compress/gzip"
	"github.com/tracehouse/tracehouse/vocab"
)

type evKind uint8

const (
	evPy      evKind = iota // python_function
	evOp                    // cpu_op
	evAnno                  // user_annotation
	evGPUAnno               // gpu_user_annotation
	evRuntime               // cuda_runtime / cuda_driver
	evGPU                   // kernel / gpu_memcpy / gpu_memset
	evFlowS                 // ac2g start
	evFlowF                 // ac2g finish
)

// ev is one buffered event of the current step.
type ev struct {
	kind    evKind
	name    string
	k       *kspec
	ts, dur int64 // absolute ns
	tid     int   // CPU thread, or CUDA stream number
	pyThr   int
	id      int64 // Python id / flow id
	parent  int64 // Python parent id
	ext     int64 // External id, 0 = none
	corr    int64
	seq     int64
	coll    string // record_param_comms collective
	nelems  int64
	bytes   int64
	commsID uint64
}

// open is an event whose end is not known yet.
type open struct {
	kind   evKind
	name   string
	ts     int64
	id     int64
	parent int64
	ext    int64
	seq    int64
	coll   string
}

type thread struct {
	tid   int
	pyThr int
	cpu   int64 // this thread's clock, absolute ns
	stack []open
}

// gen writes one trace file.
type gen struct {
	opt   Options
	j     job
	rng   *rand.Rand
	f     *File
	trees map[string]*stepTree

	w   io.Writer // gzip or buffered file
	buf []byte
	nev int64
	err error

	pid, dev, sms int
	base          int64 // baseTimeNanoseconds (0 for epoch_us)
	start         int64 // absolute ns of the trace start
	th            [2]thread
	cur           *thread

	free      [numStreams]int64
	lastStart [numStreams]int64
	lastDur   [numStreams]int64

	pyID, ext, corr, seq int64

	cpuEvs, gpuEvs, flows []ev

	kstage           string // expected stage of kernels launched now
	tokens, seqs     int64
	scaleP, scaleD   int64 // duration scale of this step, per mille
	winLo, winHi     int64
	graphing         bool
	prefill          bool // this step runs prefill-shaped kernels
	stepNum, execNum int
}

func writeTrace(opt Options, j job) (File, error) {
	if err := os.MkdirAll(filepath.Dir(j.path), 0o755); err != nil {
		return File{}, fmt.Errorf("create directory: %w", err)
	}
	fh, err := os.Create(j.path)
	if err != nil {
		return File{}, fmt.Errorf("create trace: %w", err)
	}
	defer fh.Close()
	bw := bufio.NewWriterSize(fh, 1<<20)
	var w io.Writer = bw
	var gz *gzip.Writer
	if j.gzip {
		lvl := opt.GzipLevel
		if lvl == 0 {
			lvl = gzip.BestSpeed
		}
		gz, err = gzip.NewWriterLevel(bw, lvl)
		if err != nil {
			return File{}, fmt.Errorf("gzip: %w", err)
		}
		w = gz
	}
	g := newGen(opt, j, w)
	g.run()
	if g.err != nil {
		return File{}, fmt.Errorf("write %s: %w", j.path, g.err)
	}
	if gz != nil {
		if err := gz.Close(); err != nil {
			return File{}, fmt.Errorf("close gzip %s: %w", j.path, err)
		}
	}
	if err := bw.Flush(); err != nil {
		return File{}, fmt.Errorf("flush %s: %w", j.path, err)
	}
	if err := fh.Close(); err != nil {
		return File{}, fmt.Errorf("close %s: %w", j.path, err)
	}
	return *g.f, nil
}

func newGen(opt Options, j job, w io.Writer) *gen {
	// One PCG stream per file, so ranks and stages differ but repeat.
	seed2 := uint64(j.rank)<<8 | uint64(j.stageIdx)
	g := &gen{opt: opt, j: j, w: w, rng: rand.New(rand.NewPCG(uint64(opt.Seed), 0x9e3779b97f4a7c15^seed2))}
	g.sms = 132
	if familyOf(opt.Model, opt.MoE).name == "deepseek" {
		g.sms = 148
	}
	g.dev = j.rank % 8
	g.pid = 40000 + int(uint64(opt.Seed)%9000) + 97*j.rank
	g.th[0] = thread{tid: g.pid, pyThr: 0}
	g.th[1] = thread{tid: g.pid + 173, pyThr: 1}
	g.start = opt.Start.UnixNano() + int64(j.rank)*1_250_000 + int64(j.stageIdx)*3_600_000_000
	if opt.TimeBase == TimeBaseNS {
		g.base = g.start/1_000_000*1_000_000 - 2_000_000_000 // ms-aligned, a little before the first event
	}
	stage := j.fileStage
	if stage == "" {
		stage = StageMixed
	}
	if opt.Framework == TRTLLM && j.fileStage == "" {
		stage = StageUnknown // nothing in a TRT-LLM trace names the stage
	}
	role := vocab.Formal
	if !opt.Graph && (opt.Framework == SGLang || opt.Framework == TokenSpeed) {
		role = vocab.Mapping // server_args.json says disable_cuda_graph
	}
	g.f = &File{Path: j.path, Framework: opt.Framework, Rank: j.rank, WorldSize: opt.Ranks, Stage: stage,
		Role: role, Graph: opt.Graph, Model: opt.Model, BaseTimeNS: g.base, StageGPU: map[string]StageTotals{}, Sites: map[string]int64{}}
	g.trees = map[string]*stepTree{}
	for _, s := range []string{StagePrefill, StageDecode} {
		if j.only == "" || j.only == s || (j.only == StageMixed && s == StagePrefill) {
			g.trees[s] = recipeFor(opt, s, g.sms)
		}
	}
	g.buf = make([]byte, 0, 512<<10)
	return g
}

func (g *gen) jitter(lo, span int) int64 { return int64(lo + g.rng.IntN(span)) }

// --- output -----------------------------------------------------------------

func (g *gen) flush(force bool) {
	if g.err != nil {
		g.buf = g.buf[:0]
		return
	}
	if len(g.buf) < 256<<10 && !force {
		return
	}
	n, err := g.w.Write(g.buf)
	g.f.UncompressedBytes += int64(n)
	if err != nil {
		g.err = err
	}
	g.buf = g.buf[:0]
}

func (g *gen) written() int64 { return g.f.UncompressedBytes + int64(len(g.buf)) }

// next starts a new element of traceEvents.
func (g *gen) next() []byte {
	if g.nev > 0 {
		g.buf = append(g.buf, ",\n"...)
	}
	g.nev++
	g.f.Events++
	return g.buf
}

func (g *gen) appendTS(b []byte, abs int64) []byte { return appendMicros(b, abs-g.base) }

func (g *gen) header() {
	b := g.buf
	b = append(b, "{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": ["...)
	name, mem, major, smemOpt := "NVIDIA H100 80GB HBM3", int64(85045346304), 9, 232448
	if g.sms == 148 {
		name, mem, major, smemOpt = "NVIDIA B200", 191537135616, 10, 232448
	}
	nd := g.opt.Ranks
	if nd > 8 {
		nd = 8
	}
	for i := 0; i < nd; i++ {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, "\n    {\n      \"id\": "...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, ", \"name\": "...)
		b = appendStr(b, name)
		b = append(b, ", \"totalGlobalMem\": "...)
		b = strconv.AppendInt(b, mem, 10)
		b = append(b, ",\n      \"computeMajor\": "...)
		b = strconv.AppendInt(b, int64(major), 10)
		b = append(b, ", \"computeMinor\": 0,\n      \"maxThreadsPerBlock\": 1024, \"maxThreadsPerMultiprocessor\": 2048,\n      \"regsPerBlock\": 65536, \"warpSize\": 32,\n      \"sharedMemPerBlock\": 49152, \"numSms\": "...)
		b = strconv.AppendInt(b, int64(g.sms), 10)
		b = append(b, ",\n      \"regsPerMultiprocessor\": 65536, \"sharedMemPerBlockOptin\": "...)
		b = strconv.AppendInt(b, int64(smemOpt), 10)
		b = append(b, "\n    }"...)
	}
	b = append(b, "\n  ],\n  \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": "...)
	b = strconv.AppendInt(b, int64(g.j.rank), 10)
	b = append(b, ", \"world_size\": "...)
	b = strconv.AppendInt(b, int64(g.opt.Ranks), 10)
	b = append(b, ", \"pg_count\": 2, \"pg_config\": [{\"pg_name\": \"0\", \"pg_desc\": \"default_pg\", \"backend_config\": \"cuda:nccl\", \"pg_size\": "...)
	b = strconv.AppendInt(b, int64(g.opt.Ranks), 10)
	b = append(b, ", \"ranks\": \"all\"}], \"nccl_version\": \"2.27.3\"},\n"...)
	stack := "1"
	if g.opt.Framework == TRTLLM {
		stack = "0"
	}
	b = append(b, "  \"record_shapes\": 0,\n  \"with_stack\": "+stack+",\n  \"profile_memory\": 0,\n  \"cupti_version\": 26,\n  \"cuda_runtime_version\": 12080,\n  \"cuda_driver_version\": 12080,\n  \"trace_id\": \""...)
	b = strconv.AppendUint(b, g.rng.Uint64(), 16)
	b = append(b, "\",\n  \"traceEvents\": [\n"...)
	g.buf = b
	g.metadataStart()
}

func (g *gen) footer() {
	g.buf = append(g.buf, "\n  ],\n  \"traceName\": "...)
	g.buf = appendStr(g.buf, "/tmp/profiles/"+filepath.Base(g.j.path))
	g.buf = append(g.buf, ",\n  \"displayTimeUnit\": \"ms\""...)
	if g.opt.TimeBase == TimeBaseNS {
		g.buf = append(g.buf, ",\n  \"baseTimeNanoseconds\": "...)
		g.buf = strconv.AppendInt(g.buf, g.base, 10)
	}
	g.buf = append(g.buf, "\n}\n"...)
}

// meta writes a ph:"M" event; pid and tid are JSON text (numbers or strings).
func (g *gen) meta(name string, pid, tid string, argKey, argVal string) {
	b := g.next()
	b = append(b, `  {"name": `...)
	b = appendStr(b, name)
	b = append(b, `, "ph": "M", "ts": `...)
	b = g.appendTS(b, g.start)
	b = append(b, `, "pid": `...)
	b = append(b, pid...)
	b = append(b, `, "tid": `...)
	b = append(b, tid...)
	b = append(b, `, "args": {`...)
	b = appendStr(b, argKey)
	b = append(b, ": "...)
	b = append(b, argVal...)
	b = append(b, "}}"...)
	g.buf = b
}

func itoa(i int) string { return strconv.Itoa(i) }

func (g *gen) metadataStart() {
	pid, dev := itoa(g.pid), itoa(g.dev)
	g.meta("process_name", pid, "0", "name", `"python3"`)
	g.meta("process_labels", pid, "0", "labels", `"CPU"`)
	g.meta("process_name", dev, "0", "name", `"python3"`)
	g.meta("process_labels", dev, "0", "labels", `"GPU `+dev+`"`)
	g.meta("process_sort_index", dev, "0", "sort_index", itoa(5000000+g.dev))
	for s := range numStreams {
		id := itoa(streamIDs[s])
		g.meta("thread_name", dev, id, "name", `"stream `+id+` "`)
		g.meta("thread_sort_index", dev, id, "sort_index", id)
	}
}

func (g *gen) metadataEnd() {
	pid := itoa(g.pid)
	for i := range g.th {
		tid := itoa(g.th[i].tid)
		g.meta("thread_name", pid, tid, "name", `"thread `+tid+` (python3)"`)
		g.meta("thread_sort_index", pid, tid, "sort_index", tid)
	}
}

// odds and ends Kineto writes around the real events.
func (g *gen) traceSpans(end int64) {
	b := g.next()
	b = append(b, `  {"ph": "X", "cat": "Trace", "ts": `...)
	b = g.appendTS(b, g.start)
	b = append(b, `, "dur": `...)
	b = appendMicros(b, end-g.start)
	b = append(b, `, "pid": "Spans", "tid": "PyTorch Profiler", "name": "PyTorch Profiler (0)", "args": {"Op count": 0}}`...)
	g.buf = b
	b = g.next()
	b = append(b, `  {"name": "Iteration Start: PyTorch Profiler", "ph": "i", "s": "g", "pid": "Traces", "tid": "Trace PyTorch Profiler", "ts": `...)
	b = g.appendTS(b, g.start)
	b = append(b, '}')
	g.buf = b
	b = g.next()
	b = append(b, `  {"ph": "X", "cat": "overhead", "name": "Activity Buffer Request", "pid": -1, "tid": 0, "ts": `...)
	b = g.appendTS(b, g.start+15_000)
	b = append(b, `, "dur": `...)
	b = appendMicros(b, g.jitter(4000, 9000))
	b = append(b, '}')
	g.buf = b
	b = g.next()
	b = append(b, `  {"name": "Record Window End", "ph": "i", "s": "g", "pid": "", "tid": "", "ts": `...)
	b = g.appendTS(b, end+1000)
	b = append(b, '}')
	g.buf = b
}

// memory writes the [memory] instant and a counter Kineto-style traces carry.
func (g *gen) memory(ts int64) {
	alloc := int64(60_000_000_000) + g.rng.Int64N(2_000_000_000)
	b := g.next()
	b = append(b, `  {"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": `...)
	b = strconv.AppendInt(b, int64(g.pid), 10)
	b = append(b, `, "tid": `...)
	b = strconv.AppendInt(b, int64(g.th[0].tid), 10)
	b = append(b, `, "ts": `...)
	b = g.appendTS(b, ts)
	b = append(b, `, "args": {"Total Reserved": 79456894976, "Total Allocated": `...)
	b = strconv.AppendInt(b, alloc, 10)
	b = append(b, `, "Bytes": 2097152, "Addr": 139858372591616, "Device Id": `...)
	b = strconv.AppendInt(b, int64(g.dev), 10)
	b = append(b, `, "Device Type": 1}}`...)
	g.buf = b
	b = g.next()
	b = append(b, `  {"ph": "C", "name": "GPU Memory Allocated", "pid": `...)
	b = strconv.AppendInt(b, int64(g.dev), 10)
	b = append(b, `, "ts": `...)
	b = g.appendTS(b, ts)
	b = append(b, `, "args": {"GB": `...)
	b = strconv.AppendFloat(b, float64(alloc)/1e9, 'f', 3, 64)
	b = append(b, "}}"...)
	g.buf = b
}

// --- the run ----------------------------------------------------------------

func (g *gen) run() {
	g.header()
	any := g.anyTree()
	for i := range g.th {
		g.th[i].cpu = g.start + 40_000 + int64(i)*7_000
	}
	g.cur = &g.th[0]
	for _, f := range any.outer {
		g.pushPy(f)
	}
	g.cur = &g.th[1]
	for _, f := range any.outer2 {
		g.pushPy(f)
	}
	g.cur = &g.th[0]
	g.th[0].cpu += 200_000
	for i := 0; ; i++ {
		if g.opt.TargetBytes > 0 {
			if i > 0 && g.written()+g.written()/int64(i)/2 >= g.opt.TargetBytes {
				break
			}
		} else if i >= g.opt.Steps {
			break
		}
		g.step(i)
		g.flush(false)
		if g.err != nil {
			return
		}
	}
	// Close the loops that ran for the whole capture.
	end := max(g.th[0].cpu, g.th[1].cpu) + 50_000
	for i := range g.th {
		g.cur = &g.th[i]
		g.cur.cpu = end
		g.popTo(0)
	}
	g.emitStep()
	g.traceSpans(end)
	g.metadataEnd()
	g.footer()
	g.flush(true)
	if len(g.f.Sites) == 0 {
		g.f.Sites = nil
	}
}

func (g *gen) anyTree() *stepTree {
	for _, s := range []string{StagePrefill, StageDecode} {
		if t := g.trees[s]; t != nil {
			return t
		}
	}
	panic("synth: no step tree") // newGen always builds one
}

func (g *gen) step(i int) {
	stage := stepStage(g.j.only, i, g.j.mixed)
	tree := g.trees[StagePrefill]
	if stage == StageDecode {
		tree = g.trees[StageDecode]
	}
	g.kstage = g.f.Stage
	if g.f.Stage == StageMixed {
		g.kstage = stage
	}
	// Step shape: tokens and sequences drive durations and message sizes.
	ctx, ctxTok, gen := 0, 0, 0
	switch stage {
	case StagePrefill:
		ctx = 1 + g.rng.IntN(4)
		ctxTok = 1024 * (2 + g.rng.IntN(7))
		if g.opt.BatchSize > 0 {
			ctx, ctxTok = g.opt.BatchSize, 1024*g.opt.BatchSize
		}
		g.tokens, g.seqs = int64(ctxTok), int64(ctx)
		g.scaleP = g.tokens * 1000 / 4096
	case StageDecode:
		gen = 8 + g.rng.IntN(57)
		if g.opt.BatchSize > 0 {
			gen = g.opt.BatchSize
		}
		g.tokens, g.seqs = int64(gen), int64(gen)
	case StageMixed:
		ctx, ctxTok, gen = 1, 512*(1+g.rng.IntN(4)), 8+g.rng.IntN(25)
		g.tokens, g.seqs = int64(ctxTok+gen), int64(ctx+gen)
		g.scaleP = max(g.tokens*1000/4096, 150)
	}
	g.scaleD = 850 + g.seqs*5
	g.prefill = stage != StageDecode
	g.winLo, g.winHi = math.MaxInt64, 0 // (1<<62 was below times after 2116)

	th := &g.th[0]
	g.cur = th
	stepStart := th.cpu
	g.memory(stepStart)
	depth := len(th.stack)
	g.pushAnno("ProfilerStep#" + strconv.Itoa(g.stepNum+3))
	g.stepNum++
	anno := g.annotation(stage, ctx, ctxTok, gen)
	for k, f := range tree.pre {
		if k == tree.annoAt && anno != "" {
			g.pushAnno(anno)
		}
		g.pushPy(f)
	}
	if tree.annoAt >= len(tree.pre) && anno != "" {
		g.pushAnno(anno)
	}

	// The second thread copies the previous step's results meanwhile.
	if tree.second != nil {
		t2 := &g.th[1]
		t2.cpu = max(t2.cpu, stepStart+g.jitter(15_000, 40_000))
		g.cur = t2
		g.walk(tree.second)
		g.cur = th
	}
	for _, nd := range tree.prologue {
		g.walk(nd)
	}
	if g.opt.Graph && stage == StageDecode {
		g.replay(tree)
	} else {
		g.walk(tree.model)
	}
	for _, nd := range tree.epilogue {
		g.walk(nd)
	}
	g.popTo(depth)
	if anno != "" && g.winHi > 0 {
		g.cpuEvs = append(g.cpuEvs, ev{kind: evGPUAnno, name: anno, ts: g.winLo, dur: g.winHi - g.winLo,
			tid: streamIDs[sMain], ext: g.ext})
	}
	g.emitStep()
	th.cpu += g.jitter(40_000, 260_000)
}

func (g *gen) annotation(stage string, ctx, ctxTok, gen int) string {
	switch g.opt.Framework {
	case VLLM:
		g.execNum++
		return "execute_" + strconv.Itoa(1200+g.execNum) + "_context_" + strconv.Itoa(ctx) + "(" + strconv.Itoa(ctxTok) +
			")_generation_" + strconv.Itoa(gen) + "(" + strconv.Itoa(gen) + ")"
	case SGLang, TokenSpeed:
		if stage == StageDecode {
			return "step[DECODE bs=" + strconv.Itoa(gen) + " tokens=" + strconv.Itoa(gen) + "]"
		}
		return "step[EXTEND bs=" + strconv.Itoa(ctx) + " tokens=" + strconv.Itoa(ctxTok) + "]"
	}
	return ""
}

// --- CPU side -----------------------------------------------------------------

func (g *gen) innermost(kind evKind) *open {
	st := g.cur.stack
	for i := len(st) - 1; i >= 0; i-- {
		if st[i].kind == kind {
			return &st[i]
		}
	}
	return nil
}

func (g *gen) pushPy(name string) {
	t := g.cur
	t.cpu += g.jitter(150, 900)
	var parent int64
	if p := g.innermost(evPy); p != nil {
		parent = p.id
	}
	g.pyID++
	t.stack = append(t.stack, open{kind: evPy, name: name, ts: t.cpu, id: g.pyID, parent: parent})
}

func (g *gen) pushOp(name, coll string) {
	t := g.cur
	t.cpu += g.jitter(300, 1500)
	g.ext++
	g.seq++
	t.stack = append(t.stack, open{kind: evOp, name: name, ts: t.cpu, ext: g.ext, seq: g.seq, coll: coll})
}

func (g *gen) pushAnno(name string) {
	t := g.cur
	t.cpu += g.jitter(500, 2000)
	g.ext++
	t.stack = append(t.stack, open{kind: evAnno, name: name, ts: t.cpu, ext: g.ext})
}

// popTo closes open events down to depth, innermost first.
func (g *gen) popTo(depth int) {
	t := g.cur
	for len(t.stack) > depth {
		o := t.stack[len(t.stack)-1]
		t.stack = t.stack[:len(t.stack)-1]
		t.cpu += g.jitter(100, 600)
		e := ev{kind: o.kind, name: o.name, ts: o.ts, dur: t.cpu - o.ts, tid: t.tid, pyThr: t.pyThr,
			id: o.id, parent: o.parent, ext: o.ext, seq: o.seq, coll: o.coll}
		if o.coll != "" {
			e.nelems = g.nelems(o.coll)
		}
		g.cpuEvs = append(g.cpuEvs, e)
	}
}

func (g *gen) walk(nd *node) {
	depth := len(g.cur.stack)
	for _, f := range nd.frames {
		g.pushPy(f)
	}
	for _, o := range nd.ops {
		g.pushOp(o, "")
	}
	if l := nd.leaf; l != nil {
		for _, o := range l.ops {
			coll := ""
			if l.comm && o == "record_param_comms" && len(l.ks) > 0 {
				coll = l.ks[0].coll
			}
			g.pushOp(o, coll)
		}
		for _, k := range l.ks {
			g.launch(k, l.site)
		}
		if l.sync {
			g.syncCall()
		}
	}
	for _, k := range nd.kids {
		g.walk(k)
	}
	g.popTo(depth)
}

func (g *gen) launchDur(api string) int64 {
	switch api {
	case "cudaGraphLaunch":
		return g.jitter(12_000, 26_000)
	case "cudaMemcpyAsync":
		return g.jitter(4_000, 9_000)
	case "cuLaunchKernel", "cudaLaunchKernelExC":
		return g.jitter(3_000, 5_000)
	}
	return g.jitter(2_500, 4_000)
}

func (g *gen) curExt() int64 {
	if o := g.innermost(evOp); o != nil {
		return o.ext
	}
	return 0
}

// launch records the runtime call and the GPU event it starts.
func (g *gen) launch(k *kspec, site string) {
	t := g.cur
	t.cpu += g.jitter(200, 800)
	ts, d := t.cpu, g.launchDur(k.api)
	g.corr++
	ext := g.curExt()
	g.cpuEvs = append(g.cpuEvs, ev{kind: evRuntime, name: k.api, ts: ts, dur: d, tid: t.tid, ext: ext, corr: g.corr})
	ready := ts + d/2 + g.jitter(1500, 2500)
	start, dur := g.schedule(k, ready)
	g.addGPU(k, start, dur, ext, g.corr, ts)
	if site != "" {
		g.f.Sites[site]++
	}
	t.cpu = ts + d
}

// syncCall is a cudaStreamSynchronize: a runtime call with no GPU event,
// lasting until the stream(s) it waits for are idle.
func (g *gen) syncCall() {
	t := g.cur
	t.cpu += g.jitter(300, 900)
	ts := t.cpu
	until := g.free[sAux]
	if t == &g.th[0] {
		until = max(g.free[sMain], g.free[sComm], g.free[sAux])
	}
	d := max(until-ts+g.jitter(1500, 1500), g.jitter(2000, 3000))
	g.corr++
	g.cpuEvs = append(g.cpuEvs, ev{kind: evRuntime, name: "cudaStreamSynchronize", ts: ts, dur: d, tid: t.tid, ext: g.curExt(), corr: g.corr})
	t.cpu = ts + d
}

// replay launches the model part of a step as one CUDA graph.
func (g *gen) replay(tree *stepTree) {
	t := g.cur
	depth := len(t.stack)
	for _, f := range tree.graph {
		g.pushPy(f)
	}
	t.cpu += g.jitter(300, 900)
	ts, d := t.cpu, g.launchDur("cudaGraphLaunch")
	g.corr++
	corr, ext := g.corr, g.curExt()
	g.cpuEvs = append(g.cpuEvs, ev{kind: evRuntime, name: "cudaGraphLaunch", ts: ts, dur: d, tid: t.tid, ext: ext, corr: corr})
	g.f.GraphLaunches++
	ready := ts + g.jitter(6_000, 4_000)
	first := true
	g.graphing = true
	walkKernels(tree.model, func(k *kspec) {
		start, dur := g.schedule(k, ready)
		flowFrom := int64(-1)
		if first {
			flowFrom, first = ts, false
		}
		g.addGPU(k, start, dur, ext, corr, flowFrom)
		g.f.GraphKernels++
		// Graph nodes start as soon as their stream frees up.
		ready = g.free[sMain] + g.jitter(400, 900)
	})
	g.graphing = false
	t.cpu = ts + d
	g.popTo(depth)
}

// --- GPU side -----------------------------------------------------------------

func (g *gen) duration(k *kspec) int64 {
	mean := k.durD * g.scaleD / 1000
	if g.prefill {
		mean = k.durP * g.scaleP / 1000
	}
	if mean <= 0 {
		mean = max(k.durP, k.durD) / 10
	}
	if k.zero && g.rng.IntN(5) == 0 {
		return 0
	}
	if g.opt.Noise > 0 {
		spread := int(g.opt.Noise * 1000)
		return max(mean*g.jitter(1000-spread, 2*spread+1)/1000, 700)
	}
	return max(mean*g.jitter(900, 200)/1000, 700)
}

func (g *gen) schedule(k *kspec, ready int64) (start, dur int64) {
	s := k.stream
	start = max(ready, g.free[s])
	if k.fork {
		start = max(start, g.free[sMain])
	}
	if k.join {
		start = max(start, g.free[sComm], g.free[sAux])
	}
	if k.pdl && g.graphing {
		// Inside a graph the dependent kernel is already queued when its
		// predecessor runs, so PDL lets it start early.
		ready = min(ready, g.free[s]-1)
	}
	if k.pdl && !k.join && !k.fork && g.free[s] > ready && g.lastDur[s] > 0 {
		// Programmatic dependent launch: the prologue overlaps the
		// predecessor's tail on the same stream.
		ov := min(g.lastDur[s]/4, 1500)
		start = max(ready, g.free[s]-ov, g.lastStart[s]+1)
	}
	dur = g.duration(k)
	g.free[s] = max(g.free[s], start+dur)
	g.lastStart[s], g.lastDur[s] = start, dur
	return start, dur
}

func (g *gen) nelems(coll string) int64 {
	if coll == "allgather" {
		return g.seqs * 128256 / int64(max(g.opt.Ranks, 1))
	}
	return g.tokens * 4096
}

// addGPU records a GPU event and its counts; flowFrom >= 0 adds an ac2g
// flow from the launch at that time.
func (g *gen) addGPU(k *kspec, start, dur, ext, corr, flowFrom int64) {
	e := ev{kind: evGPU, k: k, ts: start, dur: dur, tid: streamIDs[k.stream], ext: ext, corr: corr}
	if k.cat != catKernel {
		e.bytes = k.bytes
		if g.prefill {
			e.bytes = max(k.bytes*g.scaleP/1000, 4)
		}
	}
	if k.coll != "" {
		e.nelems = g.nelems(k.coll)
		if g.rng.IntN(3) == 0 {
			e.commsID = g.rng.Uint64() | 1<<63 // above int64, as seen in real traces
		}
	}
	g.gpuEvs = append(g.gpuEvs, e)
	switch k.cat {
	case catKernel:
		g.f.Kernels++
	case catMemcpy:
		g.f.Memcpy++
	case catMemset:
		g.f.Memset++
	}
	if dur == 0 {
		g.f.ZeroDurKernels++
	}
	g.f.GPUEvents++
	g.f.GPUDurNS += dur
	st := g.f.StageGPU[g.kstage]
	st.Count++
	st.DurNS += dur
	g.f.StageGPU[g.kstage] = st
	if g.f.GPUStartNS == 0 || start < g.f.GPUStartNS {
		g.f.GPUStartNS = start
	}
	g.f.GPUEndNS = max(g.f.GPUEndNS, start+dur)
	g.winLo = min(g.winLo, start)
	g.winHi = max(g.winHi, start+dur)
	if flowFrom >= 0 {
		g.flows = append(g.flows, ev{kind: evFlowS, ts: flowFrom, tid: g.cur.tid, id: corr},
			ev{kind: evFlowF, ts: start, tid: e.tid, id: corr})
	}
}
