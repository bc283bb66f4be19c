package nsystest

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
)

// FromKineto writes, at dst, the Nsight Systems export of the workload a
// Kineto trace (src, JSON or gzip) recorded, as Nsight would have seen it:
// kernels, memcpy and memset with their devices, streams and correlation
// ids; runtime and driver calls with Nsight's `_v<version>` names; CPU
// user annotations as NVTX push/pop ranges; GPUs from deviceProperties;
// kernels whose launch is a cudaGraphLaunch get graph node ids. What Nsight
// does not record (Python frames, cpu_ops, GPU-side annotation mirrors,
// flows) is left out. Times keep their nanoseconds exactly. Meant for small
// traces: the whole file is decoded at once.
func FromKineto(src, dst string, v Variant) error {
	tr, err := readKineto(src)
	if err != nil {
		return fmt.Errorf("nsystest: %s: %w", src, err)
	}
	base := tr.base
	abs := func(e *kevent) (int64, int64, error) {
		ts, err := microsNS(e.TS)
		if err != nil {
			return 0, 0, fmt.Errorf("ts %q: %w", e.TS, err)
		}
		dur := int64(0)
		if e.Dur != "" {
			if dur, err = microsNS(e.Dur); err != nil {
				return 0, 0, fmt.Errorf("dur %q: %w", e.Dur, err)
			}
		}
		return base + ts, base + ts + dur, nil
	}
	// The session starts at the first event, on a whole millisecond.
	session := int64(-1)
	launches := map[int64]*kevent{}
	for i := range tr.events {
		e := &tr.events[i]
		if e.Ph != "X" {
			continue
		}
		start, _, err := abs(e)
		if err != nil {
			return fmt.Errorf("nsystest: %s: event %d: %w", src, i, err)
		}
		if session < 0 || start < session {
			session = start
		}
		if e.Cat == "cuda_runtime" || e.Cat == "cuda_driver" {
			if c, ok := e.arg("correlation"); ok {
				launches[c] = e
			}
		}
	}
	session = session / 1_000_000 * 1_000_000
	w, err := Create(dst, v)
	if err != nil {
		return err
	}
	info := Info{SessionStartNS: session, SchemaVersion: "3.11.1"}
	for _, d := range tr.devices {
		info.Devices = append(info.Devices, Device(d))
	}
	w.Info(info)
	nodes := int64(0)
	for i := range tr.events {
		e := &tr.events[i]
		if e.Ph != "X" {
			continue
		}
		start, end, _ := abs(e)
		start, end = start-session, end-session
		pid, tid := e.intField(e.PID), e.intField(e.TID)
		corr, _ := e.arg("correlation")
		switch e.Cat {
		case "user_annotation":
			w.Range(Range{Name: e.Name, Start: start, End: end, PID: pid, TID: tid, PushPop: true})
		case "cuda_runtime", "cuda_driver":
			name := e.Name
			if strings.HasPrefix(name, "cuda") {
				name += "_v7000"
			}
			w.Call(Call{Name: name, Start: start, End: end, PID: pid, TID: tid, Correlation: corr})
		case "kernel", "gpu_memcpy", "gpu_memset":
			dev, _ := e.arg("device")
			stream, _ := e.arg("stream")
			var lpid, node int64
			if l := launches[corr]; l != nil {
				lpid = l.intField(l.PID)
				if strings.Contains(l.Name, "GraphLaunch") {
					nodes++
					node = nodes
				}
			}
			switch e.Cat {
			case "kernel":
				k := Kernel{Name: e.Name, Start: start, End: end, Device: dev, Stream: stream, Correlation: corr, PID: lpid, GraphNode: node}
				k.Grid, k.Block = e.dims("grid"), e.dims("block")
				w.Kernel(k)
			case "gpu_memcpy":
				b, _ := e.arg("bytes")
				ck, sk, dk, err := memcpyKinds(e.Name)
				if err != nil {
					return fmt.Errorf("nsystest: %s: event %d: %w", src, i, err)
				}
				w.Memcpy(Memcpy{Start: start, End: end, Device: dev, Stream: stream, Correlation: corr, PID: lpid, Bytes: b,
					CopyKind: ck, SrcKind: sk, DstKind: dk, GraphNode: node})
			case "gpu_memset":
				b, _ := e.arg("bytes")
				mk := int64(slices.Index(memKinds, strings.TrimSuffix(strings.TrimPrefix(e.Name, "Memset ("), ")")))
				w.Memset(Memset{Start: start, End: end, Device: dev, Stream: stream, Correlation: corr, PID: lpid, Bytes: b,
					MemKind: max(mk, 0), GraphNode: node})
			}
		}
	}
	return w.Close()
}

var (
	copyKinds = []string{"Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA", "AtoD", "DtoA", "DtoD", "HtoH", "PtoP"}
	memKinds  = []string{"Unknown", "Pageable", "Pinned", "Device", "Array", "Managed", "Device Static", "Managed Static"}
)

// memcpyKinds parses Kineto's "Memcpy HtoD (Pinned -> Device)".
func memcpyKinds(name string) (copyKind, src, dst int64, err error) {
	var kind, from, to string
	rest, ok := strings.CutPrefix(name, "Memcpy ")
	if ok {
		kind, rest, ok = strings.Cut(rest, " (")
	}
	if ok {
		from, to, ok = strings.Cut(strings.TrimSuffix(rest, ")"), " -> ")
	}
	c, s, d := slices.Index(copyKinds, kind), slices.Index(memKinds, from), slices.Index(memKinds, to)
	if !ok || c < 0 || s < 0 || d < 0 {
		return 0, 0, 0, fmt.Errorf("memcpy name %q is not Kineto's", name)
	}
	return int64(c), int64(s), int64(d), nil
}

type kdevice struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
	SMs  int64  `json:"numSms"`
}

type kevent struct {
	Ph   string                     `json:"ph"`
	Cat  string                     `json:"cat"`
	Name string                     `json:"name"`
	PID  json.RawMessage            `json:"pid"`
	TID  json.RawMessage            `json:"tid"`
	TS   json.Number                `json:"ts"`
	Dur  json.Number                `json:"dur"`
	Args map[string]json.RawMessage `json:"args"`
}

func (e *kevent) intField(raw json.RawMessage) int64 {
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		return 0
	}
	return n
}

func (e *kevent) arg(k string) (int64, bool) {
	raw, ok := e.Args[k]
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	return n, err == nil
}

func (e *kevent) dims(k string) [3]int64 {
	var d [3]int64
	var v []int64
	if json.Unmarshal(e.Args[k], &v) == nil {
		copy(d[:], v)
	}
	return d
}

type ktrace struct {
	base    int64
	devices []kdevice
	events  []kevent
}

func readKineto(path string) (*ktrace, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	br := bufio.NewReader(f)
	var r io.Reader = br
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, err
		}
		defer zr.Close()
		r = zr
	}
	var doc struct {
		TraceEvents []kevent    `json:"traceEvents"`
		Devices     []kdevice   `json:"deviceProperties"`
		Base        json.Number `json:"baseTimeNanoseconds"`
	}
	dec := json.NewDecoder(r)
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return nil, err
	}
	tr := &ktrace{devices: doc.Devices, events: doc.TraceEvents}
	if doc.Base != "" {
		if tr.base, err = doc.Base.Int64(); err != nil {
			return nil, err
		}
	}
	return tr, nil
}

// microsNS converts decimal microseconds to integer nanoseconds exactly.
func microsNS(n json.Number) (int64, error) {
	s := string(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	whole, frac, _ := strings.Cut(s, ".")
	if len(frac) > 3 {
		if strings.Trim(frac[3:], "0") != "" {
			return 0, fmt.Errorf("finer than a nanosecond")
		}
		frac = frac[:3]
	}
	frac += strings.Repeat("0", 3-len(frac))
	v, err := strconv.ParseInt(whole+frac, 10, 64)
	if err != nil {
		return 0, err
	}
	if neg {
		v = -v
	}
	return v, nil
}
