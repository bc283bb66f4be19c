package ingest

import (
	"bytes"
	"math"
	"strconv"
	"strings"

	"github.com/tracehouse/tracehouse/ingest/decode"
	"github.com/tracehouse/tracehouse/limits"
	"github.com/tracehouse/tracehouse/parseerr"
	"github.com/valyala/fastjson"
)

// null marks an absent integer in a decoded row.
const null = math.MinInt64

// maxNameBytes bounds one name; longer is damage, not a kernel.
const maxNameBytes = 1 << 20

// GPU event kinds.
const (
	kindKernel uint8 = iota
	kindMemcpy
	kindMemset
)

var kindNames = [...]string{"kernel", "memcpy", "memset"}

type kernelRow struct {
	ordinal     int64
	nameID      int32
	kind        uint8
	ts, dur     int64
	device      int64
	stream      int64
	correlation int64
	externalID  int64
	grid, block string
	bytes       int64
}

type launchRow struct {
	ordinal     int64
	name        string
	ts, dur     int64
	pid, tid    int64
	correlation int64
	externalID  int64
	graph       bool
}

type opRow struct {
	ordinal    int64
	name       string
	ts, dur    int64
	pid, tid   int64
	externalID int64
	seq        int64
	dims       string
	types      string
}

type frameRow struct {
	ordinal  int64
	pyID     int64
	parentID int64
	site     siteRef
	ts, dur  int64
	pid, tid int64
}

type annotationRow struct {
	name     string
	cat      string
	ts, dur  int64
	pid, tid int64
	stage    string
}

// counts are per-kind event counts of one trace.
type counts struct {
	events, kernels, memcpy, memset, launches, graphLaunches, cpuOps, pyFrames int64
	annotations, flows, counters, instants, metadata, other                    int64
}

func (c *counts) add(o counts) {
	c.events += o.events
	c.kernels += o.kernels
	c.memcpy += o.memcpy
	c.memset += o.memset
	c.launches += o.launches
	c.graphLaunches += o.graphLaunches
	c.cpuOps += o.cpuOps
	c.pyFrames += o.pyFrames
	c.annotations += o.annotations
	c.flows += o.flows
	c.counters += o.counters
	c.instants += o.instants
	c.metadata += o.metadata
	c.other += o.other
}

// decoded is one batch of events, decoded.
type decoded struct {
	seq         int
	raw         []byte // the batch's buffer, recycled after decoding
	kernels     []kernelRow
	launches    []launchRow
	ops         []opRow
	frames      []frameRow
	annotations []annotationRow
	summary
}

// summary is what a stretch of a trace's events says beyond their rows:
// counts, warnings, time span and framework evidence. Each batch has one;
// the trace's is their merge.
type summary struct {
	counts   counts
	warnings map[string]int64
	minTS    int64
	maxEnd   int64
	// the latest start, and where minTS, maxTS and maxEnd were seen: to
	// position an error once the trace's baseTimeNanoseconds (often
	// written last) is known
	maxTS                 int64
	minAt, maxTSAt, maxAt eventPos
	// summed durations per kind of row (limits.AddTotal)
	totals [len(totalKinds)]int64
	// frames per serving framework (index into vocab.Frameworks): framework evidence
	fwFrames [4]int64
	// vLLM-style step annotations seen: framework evidence
	vllmSteps int64
	// distinct TensorRT-LLM kernel names (weak framework evidence)
	trtNames int64
}

// Kinds of rows whose durations are summed (summary.totals), as messages
// name them.
const (
	totalGPU = iota
	totalLaunch
	totalOp
	totalFrame
	totalAnnotation
)

var totalKinds = [...]string{"GPU events", "runtime calls", "CPU ops", "Python frames", "annotations"}

// checkTotals refuses a trace with more of one kind of event than the
// warehouse can add up.
func (s *summary) checkTotals(path string) error {
	for k, v := range s.totals {
		if v > limits.MaxTotal {
			return parseerr.AtOffset(path, -1, -1, "", parseerr.Errorf(ErrRange,
				"the durations of its %s add up to more than the warehouse keeps (%s)", totalKinds[k], limits.TotalRange))
		}
	}
	return nil
}

// eventPos is an event's index in traceEvents and its byte offset.
type eventPos struct{ event, off int64 }

func newSummary() summary {
	return summary{minTS: math.MaxInt64, maxTS: math.MinInt64, maxEnd: math.MinInt64}
}

// span takes in an event's start and end seen at pos.
func (s *summary) span(ts, end int64, pos eventPos) {
	if ts < s.minTS {
		s.minTS, s.minAt = ts, pos
	}
	if ts > s.maxTS {
		s.maxTS, s.maxTSAt = ts, pos
	}
	if end > s.maxEnd {
		s.maxEnd, s.maxAt = end, pos
	}
}

func (s *summary) merge(o *summary) {
	s.counts.add(o.counts)
	for k, v := range o.warnings {
		if s.warnings == nil {
			s.warnings = map[string]int64{}
		}
		s.warnings[k] += v
	}
	// Strictly earlier or later: of equal times, the first event seen.
	if o.minTS < s.minTS {
		s.minTS, s.minAt = o.minTS, o.minAt
	}
	if o.maxTS > s.maxTS {
		s.maxTS, s.maxTSAt = o.maxTS, o.maxTSAt
	}
	if o.maxEnd > s.maxEnd {
		s.maxEnd, s.maxAt = o.maxEnd, o.maxAt
	}
	for k, v := range o.totals {
		s.totals[k] = limits.AddTotal(s.totals[k], v)
	}
	for i, n := range o.fwFrames {
		s.fwFrames[i] += n
	}
	s.vllmSteps += o.vllmSteps
	s.trtNames += o.trtNames
}

// decoder decodes raw events; one per goroutine.
type decoder struct {
	file    string
	p       fastjson.Parser
	names   *interner
	kernels map[string]int32
	sites   map[string]siteRef
	strs    map[string]string
	num     []byte

	// per event
	cur  int64    // event index in traceEvents, -1 when unknown (a batch cut by guess, or after one)
	ord  int64    // event index in its batch: rows carry it until the sink makes it the trace's
	off  int64    // event start offset, -1 when unknown
	out  *decoded // the batch being decoded (its warnings)
	ferr error
}

func newDecoder(file string, names *interner) *decoder {
	return &decoder{file: file, names: names, kernels: map[string]int32{}, sites: map[string]siteRef{}, strs: map[string]string{}}
}

func (d *decoder) fail(field string, cause error, format string, args ...any) error {
	return parseerr.AtOffset(d.file, d.cur, d.off, field, parseerr.Errorf(cause, format, args...))
}

// intern returns b as a string, reusing one copy per distinct value;
// invalid UTF-8 is repaired.
//
// intern, kernelID and siteRef take a name as the trace wrote it and look
// it up before checking its UTF-8: their maps' keys are valid UTF-8, so a
// name found is, and the check (utf8.Valid over every name, long Python
// paths included, was 0.8% of an ingest's instructions) runs once per
// distinct name. An invalid name is never a key; it is repaired, and its
// warning counted, each time it is met, as when every name was checked.
func (d *decoder) intern(b []byte) string {
	if s, ok := d.strs[string(b)]; ok {
		return s
	}
	s := string(d.validUTF8(b))
	if len(d.strs) < 1<<16 {
		d.strs[s] = s
	}
	return s
}

func (d *decoder) kernelID(raw []byte, out *decoded) int32 {
	if id, ok := d.kernels[string(raw)]; ok {
		return id
	}
	b := d.validUTF8(raw)
	if id, ok := d.kernels[string(b)]; ok {
		return id
	}
	if bytes.Contains(b, []byte("tensorrt_llm")) || bytes.Contains(b, []byte("trtllm")) {
		out.trtNames++
	}
	id := d.names.kernel(b)
	d.kernels[string(b)] = id
	return id
}

func (d *decoder) siteRef(raw []byte) siteRef {
	if r, ok := d.sites[string(raw)]; ok {
		return r
	}
	b := d.validUTF8(raw)
	if r, ok := d.sites[string(b)]; ok {
		return r
	}
	r := d.names.site(b)
	d.sites[string(b)] = r
	return r
}

// Bits for the event fields read; a second sighting is a duplicate key.
const (
	fPh = 1 << iota
	fCat
	fName
	fPid
	fTid
	fTs
	fDur
	fArgs
)

type eventFields struct {
	seen                    uint
	ph, cat, name           *fastjson.Value
	pid, tid, ts, dur, args *fastjson.Value
}

// decode decodes batch b into reuse, a batch already sunk whose row slices
// are taken over (nil: a new one).
func (d *decoder) decode(b *decode.Batch, reuse *decoded) (*decoded, error) {
	out := reuse
	if out == nil {
		out = &decoded{}
	}
	*out = decoded{seq: b.Seq, raw: b.Data, summary: newSummary(),
		kernels: out.kernels[:0], launches: out.launches[:0], ops: out.ops[:0],
		frames: out.frames[:0], annotations: out.annotations[:0]}
	d.out = out
	if b.Guessed {
		if err := d.guessed(b, out); err != nil {
			return nil, err
		}
		return out, nil
	}
	for i, sp := range b.Spans {
		d.cur, d.ord = -1, int64(i)
		if b.First >= 0 {
			d.cur = b.First + int64(i)
		}
		d.off = b.Base + int64(sp.Start)
		if err := d.event(b.Data[sp.Start:sp.End], out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// guessed decodes a batch cut by guess (decode.Splitter.Guess): one parse
// of all its events as a JSON array. An error here, as in any batch after
// a guessed one, has no event index: the load fails with errGuessed and
// is done again with every event's end found (loader.file).
func (d *decoder) guessed(b *decode.Batch, out *decoded) error {
	d.ord = 0
	for i, sp := range b.Spans {
		d.cur, d.off = -1, b.Base+int64(sp.Start)
		v, err := decode.ParseJSON(&d.p, b.Array(i))
		if err != nil {
			return d.fail("", ErrSyntax, "%s", shorten(err.Error()))
		}
		events, err := v.Array()
		if err != nil {
			return d.fail("", ErrType, "a run of events is not an array")
		}
		d.off = -1
		for _, e := range events {
			if err := d.value(e, out); err != nil {
				return err
			}
			d.ord++
		}
	}
	return nil
}

func (d *decoder) warn(out *decoded, msg string) {
	if out.warnings == nil {
		out.warnings = map[string]int64{}
	}
	out.warnings[msg]++
}

func (d *decoder) event(raw []byte, out *decoded) error {
	v, err := decode.ParseJSON(&d.p, raw)
	if err != nil {
		return d.fail("", ErrSyntax, "%s", shorten(err.Error()))
	}
	return d.value(v, out)
}

// value decodes one event, parsed.
func (d *decoder) value(v *fastjson.Value, out *decoded) error {
	o, err := v.Object()
	if err != nil {
		return d.fail("", ErrType, "event is not an object")
	}
	var f eventFields
	d.ferr = nil
	o.Visit(func(k []byte, v *fastjson.Value) {
		if d.ferr != nil {
			return
		}
		var bit uint
		var dst **fastjson.Value
		switch string(k) {
		case "ph":
			bit, dst = fPh, &f.ph
		case "cat":
			bit, dst = fCat, &f.cat
		case "name":
			bit, dst = fName, &f.name
		case "pid":
			bit, dst = fPid, &f.pid
		case "tid":
			bit, dst = fTid, &f.tid
		case "ts":
			bit, dst = fTs, &f.ts
		case "dur":
			bit, dst = fDur, &f.dur
		case "args":
			bit, dst = fArgs, &f.args
		default:
			return
		}
		if f.seen&bit != 0 {
			d.ferr = d.fail(string(k), ErrDuplicate, "key appears twice in one event")
			return
		}
		f.seen |= bit
		*dst = v
	})
	if d.ferr != nil {
		return d.ferr
	}
	out.counts.events++
	if f.ph == nil {
		d.warn(out, "event without ph skipped")
		out.counts.other++
		return nil
	}
	ph, err := f.ph.StringBytes()
	if err != nil {
		return d.fail("ph", ErrType, "want a string, got %s", f.ph.Type())
	}
	if len(ph) != 1 {
		d.warn(out, "event with unknown ph skipped")
		out.counts.other++
		return nil
	}
	switch ph[0] {
	case 'X':
		return d.complete(&f, out)
	case 'M':
		out.counts.metadata++
	case 's', 'f', 't':
		out.counts.flows++
	case 'C':
		out.counts.counters++
	case 'i', 'I':
		out.counts.instants++
	case 'B', 'E', 'b', 'e', 'n', 'P', 'O', 'N', 'D', 'R':
		out.counts.other++
	default:
		d.warn(out, "event with unknown ph skipped")
		out.counts.other++
	}
	return nil
}

// shownNumber is a number's text for a message: decode.ParseJSON reads
// Infinity as fastjson's Inf, which the trace did not say.
func shownNumber(b []byte) string {
	s := string(b)
	if u := strings.TrimLeft(s, "+-"); strings.EqualFold(u, "inf") {
		return s[:len(s)-len(u)] + "Infinity"
	}
	return shorten(s)
}

func shorten(s string) string {
	if len(s) > 160 {
		return s[:157] + "..."
	}
	return s
}

// rawStr reads a string field as the trace wrote it: its UTF-8 is not
// checked (validUTF8; intern).
func (d *decoder) rawStr(v *fastjson.Value, field string) ([]byte, error) {
	b, err := v.StringBytes()
	if err != nil {
		return nil, d.fail(field, ErrType, "want a string, got %s", v.Type())
	}
	if len(b) > maxNameBytes {
		return nil, d.fail(field, ErrTooLarge, "string of %d bytes (limit %d)", len(b), maxNameBytes)
	}
	return b, nil
}

// invalidUTF8 is the warning counted for each string repaired.
const invalidUTF8 = "string with invalid UTF-8 stored with U+FFFD in its place"

// validUTF8 repairs a string the warehouse could not hold (its VARCHAR is
// UTF-8), counting a warning rather than failing the trace over one byte.
func (d *decoder) validUTF8(b []byte) []byte {
	b, repaired := limits.ValidUTF8(b)
	if repaired && d.out != nil {
		d.warn(d.out, invalidUTF8)
	}
	return b
}

// micros reads a microsecond number as nanoseconds.
func (d *decoder) micros(v *fastjson.Value, field string) (int64, error) {
	if v.Type() != fastjson.TypeNumber {
		return 0, d.fail(field, ErrType, "want a number, got %s", v.Type())
	}
	d.num = v.MarshalTo(d.num[:0])
	ns, ok := decode.MicrosToNanos(d.num)
	if !ok {
		if !decode.ValidNumber(d.num) {
			return 0, d.fail(field, ErrSyntax, "%s is not a JSON number", shownNumber(d.num))
		}
		return 0, d.fail(field, ErrRange, "%s microseconds overflows int64 nanoseconds", shorten(string(d.num)))
	}
	return ns, nil
}

// integer reads an integer field; absent (nil) gives null.
func (d *decoder) integer(v *fastjson.Value, field string) (int64, error) {
	if v == nil {
		return null, nil
	}
	switch v.Type() {
	case fastjson.TypeNumber:
	case fastjson.TypeNull:
		return null, nil
	default:
		return 0, d.fail(field, ErrType, "want an integer, got %s", v.Type())
	}
	d.num = v.MarshalTo(d.num[:0])
	n, isInt, ok := decode.ParseInt(d.num)
	if isInt && ok {
		// ParseInt took the text by JSON's grammar: no second look needed
		return n, nil
	}
	if !decode.ValidNumber(d.num) {
		return 0, d.fail(field, ErrSyntax, "%s is not a JSON number", shownNumber(d.num))
	}
	if !isInt {
		return 0, d.fail(field, ErrType, "want an integer, got %s", shorten(string(d.num)))
	}
	if !ok {
		return 0, d.fail(field, ErrRange, "%s does not fit in 64 bits", shorten(string(d.num)))
	}
	return n, nil
}

// thread reads pid or tid: a number, a numeric string, or "stream 7".
// Other strings ("Spans", "Traces") give null.
func (d *decoder) thread(v *fastjson.Value, field string) (int64, error) {
	if v == nil {
		return null, nil
	}
	if v.Type() == fastjson.TypeString {
		b, _ := v.StringBytes()
		b = bytes.TrimPrefix(b, []byte("stream "))
		if n, err := strconv.ParseInt(string(b), 10, 64); err == nil {
			return n, nil
		}
		return null, nil
	}
	return d.integer(v, field)
}

// complete handles a ph:"X" event.
func (d *decoder) complete(f *eventFields, out *decoded) error {
	if f.ts == nil {
		return d.fail("ts", ErrMissing, "complete (X) event has no ts")
	}
	ts, err := d.micros(f.ts, "ts")
	if err != nil {
		return err
	}
	if f.dur == nil {
		return d.fail("dur", ErrMissing, "complete (X) event has no dur")
	}
	dur, err := d.micros(f.dur, "dur")
	if err != nil {
		return err
	}
	if dur < 0 {
		return d.fail("dur", ErrRange, "negative duration %s", d.num)
	}
	// cat and name as written: a cat of a kind stored is one of
	// decode.Category's, ASCII; names are checked as they are interned.
	var cat []byte
	if f.cat != nil {
		if cat, err = d.rawStr(f.cat, "cat"); err != nil {
			return err
		}
	}
	var name []byte
	if f.name != nil {
		if name, err = d.rawStr(f.name, "name"); err != nil {
			return err
		}
	}
	var args *fastjson.Object
	if f.args != nil && f.args.Type() != fastjson.TypeNull {
		if args, err = f.args.Object(); err != nil {
			return d.fail("args", ErrType, "want an object, got %s", f.args.Type())
		}
	}
	kind := decode.Category(cat)
	if kind == decode.CatOther {
		// Not stored, but its invalid UTF-8 is counted, as in any string read.
		d.validUTF8(cat)
		d.validUTF8(name)
		out.counts.other++
		return nil
	}
	if f.name == nil {
		return d.fail("name", ErrMissing, "%s event has no name", cat)
	}
	// Relative to baseTimeNanoseconds, which load checks once known.
	if !limits.Time(ts) {
		return d.fail("ts", ErrRange, "%d ns is outside the times the warehouse keeps (%s)", ts, limits.TimeRange)
	}
	if !limits.Duration(dur) {
		return d.fail("dur", ErrRange, "%d ns is longer than the warehouse keeps (%s)", dur, limits.DurationRange)
	}
	end, ok := limits.AddTime(ts, dur)
	if !ok {
		return d.fail("dur", ErrRange, "the event ends at %s ns, outside the times the warehouse keeps (%s)", limits.Sum(ts, dur), limits.TimeRange)
	}
	out.span(ts, end, eventPos{d.cur, d.off})
	pid, err := d.thread(f.pid, "pid")
	if err != nil {
		return err
	}
	tid, err := d.thread(f.tid, "tid")
	if err != nil {
		return err
	}
	a := argFields{}
	if args != nil {
		if err := d.readArgs(args, &a); err != nil {
			return err
		}
	}
	switch kind {
	case decode.CatKernel, decode.CatMemcpy, decode.CatMemset:
		r := kernelRow{ordinal: d.ord, nameID: d.kernelID(name, out), ts: ts, dur: dur, bytes: null}
		switch kind {
		case decode.CatKernel:
			r.kind = kindKernel
			out.counts.kernels++
		case decode.CatMemcpy:
			r.kind = kindMemcpy
			out.counts.memcpy++
		default:
			r.kind = kindMemset
			out.counts.memset++
		}
		if r.device, err = d.integer(a.device, "args.device"); err != nil {
			return err
		}
		field := "args.device"
		if r.device == null {
			r.device, field = pid, "pid"
		}
		// The device is an INTEGER column, and a merged trace's rank.
		if r.device != null && !limits.Index(r.device) {
			return d.fail(field, ErrRange, "device %d is outside %s", r.device, limits.IndexRange)
		}
		if r.stream, err = d.integer(a.stream, "args.stream"); err != nil {
			return err
		}
		if r.stream == null {
			r.stream = tid
		}
		if r.correlation, err = d.integer(a.correlation, "args.correlation"); err != nil {
			return err
		}
		if r.externalID, err = d.integer(a.externalID, "args.External id"); err != nil {
			return err
		}
		if r.bytes, err = d.integer(a.bytes, "args.bytes"); err != nil {
			return err
		}
		r.grid = d.dims(a.grid)
		r.block = d.dims(a.block)
		out.totals[totalGPU] = limits.AddTotal(out.totals[totalGPU], dur)
		out.kernels = append(out.kernels, r)
	case decode.CatLaunch:
		r := launchRow{ordinal: d.ord, name: d.intern(name), ts: ts, dur: dur, pid: pid, tid: tid}
		if r.correlation, err = d.integer(a.correlation, "args.correlation"); err != nil {
			return err
		}
		if r.externalID, err = d.integer(a.externalID, "args.External id"); err != nil {
			return err
		}
		r.graph = bytes.Contains(name, []byte("GraphLaunch"))
		out.counts.launches++
		if r.graph {
			out.counts.graphLaunches++
		}
		out.totals[totalLaunch] = limits.AddTotal(out.totals[totalLaunch], dur)
		out.launches = append(out.launches, r)
	case decode.CatCPUOp:
		r := opRow{ordinal: d.ord, name: d.intern(name), ts: ts, dur: dur, pid: pid, tid: tid}
		if r.externalID, err = d.integer(a.externalID, "args.External id"); err != nil {
			return err
		}
		if r.seq, err = d.integer(a.seq, "args.Sequence number"); err != nil {
			return err
		}
		if a.inputDims != nil {
			r.dims = d.intern(a.inputDims.MarshalTo(d.num[:0]))
		}
		if a.inputTypes != nil {
			r.types = d.intern(a.inputTypes.MarshalTo(d.num[:0]))
		}
		out.counts.cpuOps++
		out.totals[totalOp] = limits.AddTotal(out.totals[totalOp], dur)
		out.ops = append(out.ops, r)
	case decode.CatPython:
		r := frameRow{ordinal: d.ord, site: d.siteRef(name), ts: ts, dur: dur, pid: pid, tid: tid}
		if r.pyID, err = d.integer(a.pyID, "args.Python id"); err != nil {
			return err
		}
		if r.parentID, err = d.integer(a.pyParent, "args.Python parent id"); err != nil {
			return err
		}
		if r.site.fw >= 0 {
			out.fwFrames[r.site.fw]++
		}
		out.counts.pyFrames++
		out.totals[totalFrame] = limits.AddTotal(out.totals[totalFrame], dur)
		out.frames = append(out.frames, r)
	case decode.CatUserAnnotation, decode.CatGPUAnnotation:
		name = d.validUTF8(name) // read for its stage too
		r := annotationRow{name: d.intern(name), cat: d.intern(cat), ts: ts, dur: dur, pid: pid, tid: tid}
		if kind == decode.CatGPUAnnotation {
			dev, err := d.integer(a.device, "args.device")
			if err != nil {
				return err
			}
			if dev != null {
				r.pid = dev
			}
		}
		var vllm bool
		r.stage, vllm = decode.AnnotationStage(name)
		if vllm {
			out.vllmSteps++
		}
		out.counts.annotations++
		out.totals[totalAnnotation] = limits.AddTotal(out.totals[totalAnnotation], dur)
		out.annotations = append(out.annotations, r)
	}
	return nil
}

// argFields are the args values read; unknown args are ignored.
type argFields struct {
	seen                                    uint
	device, stream, correlation, externalID *fastjson.Value
	grid, block, bytes, seq, pyID, pyParent *fastjson.Value
	inputDims, inputTypes                   *fastjson.Value
}

func (d *decoder) readArgs(o *fastjson.Object, a *argFields) error {
	d.ferr = nil
	o.Visit(func(k []byte, v *fastjson.Value) {
		if d.ferr != nil {
			return
		}
		var bit uint
		var dst **fastjson.Value
		switch string(k) {
		case "device":
			bit, dst = 1<<0, &a.device
		case "stream":
			bit, dst = 1<<1, &a.stream
		case "correlation":
			bit, dst = 1<<2, &a.correlation
		case "External id", "external id":
			bit, dst = 1<<3, &a.externalID
		case "grid":
			bit, dst = 1<<4, &a.grid
		case "block":
			bit, dst = 1<<5, &a.block
		case "bytes":
			bit, dst = 1<<6, &a.bytes
		case "Sequence number":
			bit, dst = 1<<7, &a.seq
		case "Python id":
			bit, dst = 1<<8, &a.pyID
		case "Python parent id":
			bit, dst = 1<<9, &a.pyParent
		case "Input Dims":
			bit, dst = 1<<10, &a.inputDims
		case "Input type":
			bit, dst = 1<<11, &a.inputTypes
		default:
			return
		}
		if a.seen&bit != 0 {
			d.ferr = d.fail("args."+string(k), ErrDuplicate, "key appears twice in one event")
			return
		}
		a.seen |= bit
		*dst = v
	})
	return d.ferr
}

// dims renders [x, y, z] compactly as "[x,y,z]"; "" when absent.
func (d *decoder) dims(v *fastjson.Value) string {
	if v == nil {
		return ""
	}
	arr, err := v.Array()
	if err != nil {
		return d.intern(v.MarshalTo(d.num[:0]))
	}
	b := d.num[:0]
	b = append(b, '[')
	for i, e := range arr {
		if i > 0 {
			b = append(b, ',')
		}
		b = e.MarshalTo(b)
	}
	b = append(b, ']')
	d.num = b
	return d.intern(b)
}
