package synth

import (
	"strconv"
	"strings"
)

// stream is a logical CUDA stream; streamIDs maps it to the number written.
type stream int8

const (
	sMain stream = iota // compute
	sComm               // NCCL collectives
	sAux                // side copies, shared experts
	numStreams
)

var streamIDs = [numStreams]int{7, 22, 13}

type kcat uint8

const (
	catKernel kcat = iota
	catMemcpy
	catMemset
)

// kspec is one kind of GPU event: what it is called, how it is launched,
// where it runs and how long it takes.
type kspec struct {
	name   string
	cat    kcat
	api    string // launch call written on the CPU side
	stream stream
	durP   int64 // mean ns in a prefill step of 4096 tokens
	durD   int64 // mean ns in a decode step of ~32 sequences
	grid   [3]int32
	block  [3]int32
	regs   int32
	smem   int32
	occ    int32
	coll   string // NCCL collective name ("" = not a collective)
	bytes  int64  // memcpy/memset bytes at scale 1
	pdl    bool   // programmatic dependent launch: may start before its predecessor ends
	join   bool   // waits for the comm and aux streams before starting
	fork   bool   // on sComm/sAux: starts only after the main stream's last kernel
	zero   bool   // now and then recorded with zero duration

	nameJSON []byte // quoted, escaped name, built once
	argsTail []byte // constant args text (launch config), built once
}

func kern(name string, durP, durD int64) *kspec {
	return &kspec{name: name, api: "cudaLaunchKernel", durP: durP, durD: durD,
		grid: [3]int32{132, 1, 1}, block: [3]int32{256, 1, 1}, regs: 32, occ: 25}
}

func memcpyK(name string, bytes, durP, durD int64) *kspec {
	return &kspec{name: name, cat: catMemcpy, api: "cudaMemcpyAsync", durP: durP, durD: durD, bytes: bytes}
}

func memsetK(bytes, durP, durD int64) *kspec {
	return &kspec{name: "Memset (Device)", cat: catMemset, api: "cudaMemsetAsync", durP: durP, durD: durD, bytes: bytes}
}

func (k *kspec) launch(grid, block [3]int32, regs, smem, occ int32) *kspec {
	k.grid, k.block, k.regs, k.smem, k.occ = grid, block, regs, smem, occ
	return k
}
func (k *kspec) via(api string) *kspec { k.api = api; return k }
func (k *kspec) on(s stream) *kspec    { k.stream = s; k.fork = s != sMain; return k }
func (k *kspec) withPDL() *kspec       { k.pdl = true; k.api = "cudaLaunchKernelExC"; return k }
func (k *kspec) joins() *kspec         { k.join = true; return k }
func (k *kspec) mayZero() *kspec       { k.zero = true; return k }
func (k *kspec) collective(c string) *kspec {
	k.coll = c
	k.api = "cudaLaunchKernelExC"
	return k
}

// dims is a shorthand for a grid or block.
func dims(x, y, z int32) [3]int32 { return [3]int32{x, y, z} }

// leaf is a call that launches GPU work: nested cpu_ops, then the launches.
type leaf struct {
	ops  []string // cpu_op names, outer -> inner; the launches sit in the innermost
	ks   []*kspec
	site string // innermost framework frame above it: the expected attribution
	sync bool   // ends with a cudaStreamSynchronize that has no kernel
	comm bool   // a collective: the innermost op is record_param_comms
}

// node is a Python call with its frames, children and (at most) one leaf.
type node struct {
	frames []string
	ops    []string // cpu ops open around the children (a custom op calling others)
	kids   []*node
	leaf   *leaf
}

// builder makes frame names for one framework and numbers nn.Module
// instances the way Kineto does (per class, in creation order).
type builder struct {
	root     string // absolute prefix of the framework's own files ("" = no Python stacks)
	own      string // prefix that marks a frame as the framework's own code
	torch    string // the site-packages directory holding torch, triton, flashinfer
	stdlib   string
	counts   map[string]int
	wrappers map[string]bool
}

func newBuilder(root, own, sitePackages string) *builder {
	return &builder{root: root, own: root + own, torch: sitePackages, stdlib: "/usr/lib/python3.12/",
		counts: map[string]int{}, wrappers: map[string]bool{}}
}

func (b *builder) noPython() bool { return b.root == "" }

// py names a frame in the framework's own code: "path.py(line): func".
func (b *builder) py(rel string) string {
	if b.noPython() {
		return ""
	}
	return b.root + rel
}

// wrap names a framework frame that attribution must skip (runners, loops).
func (b *builder) wrap(rel string) string {
	f := b.py(rel)
	if f != "" {
		b.wrappers[f] = true
	}
	return f
}

func (b *builder) tp(rel string) string {
	if b.noPython() {
		return ""
	}
	return b.torch + rel
}

// sp names a frame in another site package (flashinfer, triton).
func (b *builder) sp(rel string) string {
	if b.noPython() {
		return ""
	}
	return b.torch + rel
}

func (b *builder) std(rel string) string {
	if b.noPython() {
		return ""
	}
	return b.stdlib + rel
}

// builtin names a C function frame.
func (b *builder) builtin(s string) string {
	if b.noPython() {
		return ""
	}
	return "<built-in " + s + ">"
}

// mod returns the frames torch records when an nn.Module is called.
func (b *builder) mod(class string) []string {
	if b.noPython() {
		return nil
	}
	n := b.counts[class]
	b.counts[class] = n + 1
	return []string{
		b.tp("torch/nn/modules/module.py(1773): _wrapped_call_impl"),
		b.tp("torch/nn/modules/module.py(1784): _call_impl"),
		"nn.Module: " + class + "_" + strconv.Itoa(n),
	}
}

// opCall is the frame of calling a torch custom op through torch.ops.
func (b *builder) opCall() string { return b.tp("torch/_ops.py(1243): __call__") }

// n makes a node from frames (empty names dropped) and children.
func n(frames []string, kids ...*node) *node {
	nd := &node{}
	for _, f := range frames {
		if f != "" {
			nd.frames = append(nd.frames, f)
		}
	}
	nd.kids = kids
	return nd
}

// call makes a node that launches ks inside the nested cpu ops.
func call(frames []string, ops []string, ks ...*kspec) *node {
	nd := n(frames)
	nd.leaf = &leaf{ops: ops, ks: ks}
	return nd
}

func fr(parts ...any) []string {
	var out []string
	for _, p := range parts {
		switch v := p.(type) {
		case string:
			out = append(out, v)
		case []string:
			out = append(out, v...)
		}
	}
	return out
}

// resolveSites fills leaf.site with the innermost framework frame above each
// leaf, skipping wrappers: what attribution at ingest should find.
func (b *builder) resolveSites(nd *node, above string) {
	for _, f := range nd.frames {
		if b.root != "" && strings.HasPrefix(f, b.own) && !b.wrappers[f] {
			above = f
		}
	}
	if nd.leaf != nil {
		nd.leaf.site = above
	}
	for _, k := range nd.kids {
		b.resolveSites(k, above)
	}
}

// walkKernels calls fn for each kspec under nd in launch order.
func walkKernels(nd *node, fn func(*kspec)) {
	if nd.leaf != nil {
		for _, k := range nd.leaf.ks {
			fn(k)
		}
	}
	for _, k := range nd.kids {
		walkKernels(k, fn)
	}
}

// stepTree is what one forward step of one stage runs.
type stepTree struct {
	outer    []string // frames open for the whole trace on the main thread
	outer2   []string // same on the second thread
	pre      []string // per-step frames from the scheduler down to the runner
	annoAt   int      // the step annotation opens after this many pre frames
	prologue []*node
	model    *node    // the part a CUDA graph captures
	graph    []string // frames at the cudaGraphLaunch that replays model
	epilogue []*node
	second   *node // per-step work of the second thread
}
