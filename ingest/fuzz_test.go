package ingest

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/tracehouse/tracehouse/ingest/decode"
)

// decodeAll runs the split and decode stages over data, without a database.
func decodeAll(data []byte) (counts, []*decoded, error) {
	names := &interner{kernels: map[string]int32{}, sites: map[string]siteRef{}, nextKernel: 1, nextSite: 1}
	out := make(chan *decode.Batch, 4)
	sp := decode.NewSplitter(bytes.NewReader(data), "fuzz.json", make(chan []byte, 4))
	errc := make(chan error, 1)
	go func() { errc <- sp.Run(context.Background(), out); close(out) }()
	d := newDecoder("fuzz.json", names)
	var c counts
	var all []*decoded
	var derr error
	for b := range out {
		if derr != nil {
			continue
		}
		res, err := d.decode(b, nil)
		if err != nil {
			derr = err
			continue
		}
		c.add(res.counts)
		all = append(all, res)
	}
	if err := <-errc; err != nil {
		return c, all, err
	}
	return c, all, derr
}

// FuzzDecode feeds arbitrary bytes through the splitter and decoder and
// checks the invariants on every input: no panic; a failure is a one-line
// *ParseError naming the file; a success accounts for every event, and every
// stored event has a non-negative duration.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"traceEvents": [{"ph":"X","cat":"kernel","name":"k","ts":1.5,"dur":2,"args":{"device":0,"stream":7,"correlation":3}}]}`,
		`[{"ph":"X","cat":"python_function","name":"a.py(1): f","pid":1,"tid":1,"ts":0,"dur":3,"args":{"Python id":1}}]`,
		`{"traceEvents": [{"ph":"X","cat":"cpu_op","name":"aten::mm","ts":"1","dur":1}]}`,
		`{"traceEvents": [{"ph":"X","cat":"kernel","name":"k","ts":1,"dur":-1}]}`,
		`{"traceEvents": [{"ph":"M","name":"process_name","args":{"name":"GPU 0"}}, {"ph":"s","id":1}], "baseTimeNanoseconds": 5}`,
		`{"traceEvents": [{"ph":"X","cat":"user_annotation","name":"execute_1_context_1(8)_generation_0(0)","ts":1,"dur":1}]}`,
		`{"traceEvents": [{"ph":"X","ts":1,"ts":2}]}`,
		`{"traceEvents": [`,
		`{"a": [1, {"b": "}"}], "traceEvents": []}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, batches, err := decodeAll(data)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v (%T) is not a *ParseError", err, err)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "fuzz.json: ") || strings.ContainsAny(msg, "\n\r") {
				t.Fatalf("bad error text %q", msg)
			}
			return
		}
		var kinds int64
		for _, b := range batches {
			for _, k := range b.kernels {
				if k.dur < 0 {
					t.Fatalf("negative duration stored: %+v", k)
				}
			}
			for _, fr := range b.frames {
				if fr.dur < 0 {
					t.Fatalf("negative frame duration: %+v", fr)
				}
			}
			kinds += int64(len(b.kernels) + len(b.launches) + len(b.ops) + len(b.frames) + len(b.annotations))
		}
		if got := c.kernels + c.memcpy + c.memset + c.launches + c.cpuOps + c.pyFrames + c.annotations; got != kinds {
			t.Fatalf("counted %d stored events, decoded %d rows", got, kinds)
		}
		if sum := kinds + c.flows + c.counters + c.instants + c.metadata + c.other; sum != c.events {
			t.Fatalf("events %d, but kinds add up to %d", c.events, sum)
		}
	})
}
