package synth

import (
	"strconv"
	"strings"
)

// emitStep writes the buffered events of a step the way Kineto groups them:
// CPU events first (closing order, so not sorted by ts), then GPU events
// stream by stream, then the flows.
func (g *gen) emitStep() {
	for i := range g.cpuEvs {
		g.emitCPU(&g.cpuEvs[i])
	}
	for s := range numStreams {
		id := streamIDs[s]
		for i := range g.gpuEvs {
			if g.gpuEvs[i].tid == id {
				g.emitGPU(&g.gpuEvs[i])
			}
		}
	}
	for i := range g.flows {
		g.emitFlow(&g.flows[i])
	}
	g.cpuEvs, g.gpuEvs, g.flows = g.cpuEvs[:0], g.gpuEvs[:0], g.flows[:0]
	g.flush(false)
}

func (g *gen) xHead(b []byte, cat, name string, pid, tid int, ts, dur int64, multi bool) []byte {
	if multi {
		b = append(b, "  {\n    \"ph\": \"X\", \"cat\": \""...)
	} else {
		b = append(b, "  {\"ph\": \"X\", \"cat\": \""...)
	}
	b = append(b, cat...)
	b = append(b, "\", \"name\": "...)
	b = appendStr(b, name)
	b = append(b, ", \"pid\": "...)
	b = strconv.AppendInt(b, int64(pid), 10)
	b = append(b, ", \"tid\": "...)
	b = strconv.AppendInt(b, int64(tid), 10)
	if multi {
		b = append(b, ",\n    \"ts\": "...)
	} else {
		b = append(b, ", \"ts\": "...)
	}
	b = g.appendTS(b, ts)
	b = append(b, ", \"dur\": "...)
	return appendMicros(b, dur)
}

// cbid is CUPTI's callback id of a runtime/driver call.
func cbid(api string) string {
	switch api {
	case "cudaLaunchKernel":
		return "211"
	case "cudaLaunchKernelExC":
		return "430"
	case "cudaMemcpyAsync":
		return "41"
	case "cudaMemsetAsync":
		return "51"
	case "cudaStreamSynchronize":
		return "131"
	case "cudaGraphLaunch":
		return "311"
	case "cuLaunchKernel":
		return "307"
	}
	return "0"
}

func (g *gen) emitCPU(e *ev) {
	b := g.next()
	switch e.kind {
	case evPy:
		g.f.PyFrames++
		b = g.xHead(b, "python_function", e.name, g.pid, e.tid, e.ts, e.dur, false)
		b = append(b, ", \"args\": {"...)
		if e.parent > 0 {
			b = append(b, "\"Python parent id\": "...)
			b = strconv.AppendInt(b, e.parent, 10)
			b = append(b, ", "...)
		}
		b = append(b, "\"Python id\": "...)
		b = strconv.AppendInt(b, e.id, 10)
		b = append(b, ", \"Python thread\": "...)
		b = strconv.AppendInt(b, int64(e.pyThr), 10)
		b = append(b, "}}"...)
	case evOp:
		g.f.CPUOps++
		b = g.xHead(b, "cpu_op", e.name, g.pid, e.tid, e.ts, e.dur, true)
		b = append(b, ",\n    \"args\": {\n      \"External id\": "...)
		b = strconv.AppendInt(b, e.ext, 10)
		b = append(b, ", \"Record function id\": 0, \"Sequence number\": "...)
		b = strconv.AppendInt(b, e.seq, 10)
		b = append(b, ", \"Fwd thread id\": 0, \"Ev Idx\": "...)
		b = strconv.AppendInt(b, e.ext-1, 10)
		if e.coll != "" {
			b = g.collArgs(b, e.coll, e.nelems)
		}
		b = append(b, "\n    }\n  }"...)
	case evAnno:
		g.f.Annotations++
		b = g.xHead(b, "user_annotation", e.name, g.pid, e.tid, e.ts, e.dur, false)
		b = append(b, ", \"args\": {\"External id\": "...)
		b = strconv.AppendInt(b, e.ext, 10)
		b = append(b, ", \"Record function id\": 0, \"Ev Idx\": "...)
		b = strconv.AppendInt(b, e.ext-1, 10)
		b = append(b, "}}"...)
	case evGPUAnno:
		g.f.Annotations++
		b = g.xHead(b, "gpu_user_annotation", e.name, g.dev, e.tid, e.ts, e.dur, false)
		b = append(b, ", \"args\": {\"External id\": "...)
		b = strconv.AppendInt(b, e.ext, 10)
		b = append(b, "}}"...)
	case evRuntime:
		g.f.Launches++
		cat := "cuda_runtime"
		if strings.HasPrefix(e.name, "cu") && !strings.HasPrefix(e.name, "cuda") {
			cat = "cuda_driver"
		}
		b = g.xHead(b, cat, e.name, g.pid, e.tid, e.ts, e.dur, true)
		b = append(b, ",\n    \"args\": {\n      "...)
		if e.ext > 0 {
			b = append(b, "\"External id\": "...)
			b = strconv.AppendInt(b, e.ext, 10)
			b = append(b, ", "...)
		}
		b = append(b, "\"cbid\": "...)
		b = append(b, cbid(e.name)...)
		b = append(b, ", \"correlation\": "...)
		b = strconv.AppendInt(b, e.corr, 10)
		b = append(b, "\n    }\n  }"...)
	}
	g.buf = b
}

func (g *gen) collArgs(b []byte, coll string, nelems int64) []byte {
	b = append(b, ",\n      \"Collective name\": \""...)
	b = append(b, coll...)
	b = append(b, "\", \"dtype\": \"BFloat16\", \"In msg nelems\": "...)
	b = strconv.AppendInt(b, nelems, 10)
	b = append(b, ", \"Out msg nelems\": "...)
	out := nelems
	if coll == "allgather" {
		out = nelems * int64(g.opt.Ranks)
	}
	b = strconv.AppendInt(b, out, 10)
	b = append(b, ", \"Group size\": "...)
	b = strconv.AppendInt(b, int64(g.opt.Ranks), 10)
	b = append(b, ",\n      \"In split size\": \"[]\", \"Out split size\": \"[]\", \"Process Group Name\": \"0\", \"Process Group Description\": \"default_pg\", \"Process Group Ranks\": \"["...)
	for r := 0; r < g.opt.Ranks; r++ {
		if r > 0 {
			b = append(b, ", "...)
		}
		b = strconv.AppendInt(b, int64(r), 10)
	}
	return append(b, "]\""...)
}

func (g *gen) emitGPU(e *ev) {
	k := e.k
	b := g.next()
	cat := "kernel"
	switch k.cat {
	case catMemcpy:
		cat = "gpu_memcpy"
	case catMemset:
		cat = "gpu_memset"
	}
	b = append(b, "  {\n    \"ph\": \"X\", \"cat\": \""...)
	b = append(b, cat...)
	b = append(b, "\", \"name\": "...)
	b = append(b, k.nameJSON...)
	b = append(b, ", \"pid\": "...)
	b = strconv.AppendInt(b, int64(g.dev), 10)
	b = append(b, ", \"tid\": "...)
	b = strconv.AppendInt(b, int64(e.tid), 10)
	b = append(b, ",\n    \"ts\": "...)
	b = g.appendTS(b, e.ts)
	b = append(b, ", \"dur\": "...)
	b = appendMicros(b, e.dur)
	b = append(b, ",\n    \"args\": {\n      "...)
	if e.ext > 0 {
		b = append(b, "\"External id\": "...)
		b = strconv.AppendInt(b, e.ext, 10)
		b = append(b, ",\n      "...)
	}
	if k.cat == catKernel {
		b = append(b, "\"queued\": 0, "...)
	}
	b = append(b, "\"device\": "...)
	b = strconv.AppendInt(b, int64(g.dev), 10)
	b = append(b, ", \"context\": 1,\n      \"stream\": "...)
	b = strconv.AppendInt(b, int64(e.tid), 10)
	b = append(b, ", \"correlation\": "...)
	b = strconv.AppendInt(b, e.corr, 10)
	if k.cat == catKernel {
		b = append(b, k.argsTail...)
	} else {
		b = append(b, ",\n      \"bytes\": "...)
		b = strconv.AppendInt(b, e.bytes, 10)
		b = append(b, ", \"memory bandwidth (GB/s)\": "...)
		bw := 0.0
		if e.dur > 0 {
			bw = float64(e.bytes) / float64(e.dur)
		}
		b = strconv.AppendFloat(b, bw, 'f', 6, 64)
	}
	if k.coll != "" {
		b = g.collArgs(b, k.coll, e.nelems)
		if e.commsID != 0 {
			b = append(b, ", \"Comms Id\": "...)
			b = strconv.AppendUint(b, e.commsID, 10)
		}
	}
	b = append(b, "\n    }\n  }"...)
	g.buf = b
}

func (g *gen) emitFlow(e *ev) {
	g.f.Flows++
	b := g.next()
	if e.kind == evFlowS {
		b = append(b, "  {\"ph\": \"s\", \"id\": "...)
		b = strconv.AppendInt(b, e.id, 10)
		b = append(b, ", \"pid\": "...)
		b = strconv.AppendInt(b, int64(g.pid), 10)
	} else {
		b = append(b, "  {\"ph\": \"f\", \"id\": "...)
		b = strconv.AppendInt(b, e.id, 10)
		b = append(b, ", \"pid\": "...)
		b = strconv.AppendInt(b, int64(g.dev), 10)
	}
	b = append(b, ", \"tid\": "...)
	b = strconv.AppendInt(b, int64(e.tid), 10)
	b = append(b, ", \"ts\": "...)
	b = g.appendTS(b, e.ts)
	b = append(b, ", \"cat\": \"ac2g\", \"name\": \"ac2g\""...)
	if e.kind == evFlowF {
		b = append(b, ", \"bp\": \"e\""...)
	}
	b = append(b, '}')
	g.buf = b
}
