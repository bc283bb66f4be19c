package tracefile

import (
	"github.com/valyala/fastjson"

	"github.com/tracehouse/tracehouse/ingest/decode"
)

// fields are the top-level fields of an event the rewriters read; the first
// of a duplicated key wins.
type fields struct {
	ph, cat, name, pid, tid, ts, dur, id, args *fastjson.Value
}

func readFields(o *fastjson.Object) fields {
	var f fields
	o.Visit(func(k []byte, v *fastjson.Value) {
		var dst **fastjson.Value
		switch string(k) {
		case "ph":
			dst = &f.ph
		case "cat":
			dst = &f.cat
		case "name":
			dst = &f.name
		case "pid":
			dst = &f.pid
		case "tid":
			dst = &f.tid
		case "ts":
			dst = &f.ts
		case "dur":
			dst = &f.dur
		case "id":
			dst = &f.id
		case "args":
			dst = &f.args
		default:
			return
		}
		if *dst == nil {
			*dst = v
		}
	})
	return f
}

// str returns a string field's bytes, nil when absent or not a string.
func str(v *fastjson.Value) []byte {
	if v == nil || v.Type() != fastjson.TypeString {
		return nil
	}
	b, _ := v.StringBytes()
	return b
}

// phase returns the event's ph letter, 0 when absent or odd.
func phase(v *fastjson.Value) byte {
	b := str(v)
	if len(b) != 1 {
		return 0
	}
	return b[0]
}

// timeState says how a ts or dur was written.
type timeState uint8

const (
	timeAbsent  timeState = iota
	timeNumber            // a JSON number: usable as is
	timeString            // a number written as a string: usable, needs repair for Perfetto
	timeInvalid           // neither
)

// micros reads a microsecond ts or dur as integer nanoseconds, from its
// decimal text (never through float64), accepting the string form.
func micros(v *fastjson.Value, num []byte) (int64, timeState, []byte) {
	if v == nil {
		return 0, timeAbsent, num
	}
	switch v.Type() {
	case fastjson.TypeNumber:
		num = v.MarshalTo(num[:0])
		if ns, ok := decode.MicrosToNanos(num); ok {
			return ns, timeNumber, num
		}
	case fastjson.TypeString:
		b, _ := v.StringBytes()
		if ns, ok := decode.MicrosToNanos(b); ok {
			return ns, timeString, num
		}
	}
	return 0, timeInvalid, num
}

// parseInt parses the text of a JSON integer that fits int64.
func parseInt(b []byte) (int64, bool) {
	v, isInt, ok := decode.ParseInt(b)
	return v, isInt && ok
}

// integer reads an integer-valued number or numeric string.
func integer(v *fastjson.Value, num []byte) (int64, bool, []byte) {
	if v == nil {
		return 0, false, num
	}
	switch v.Type() {
	case fastjson.TypeNumber:
		num = v.MarshalTo(num[:0])
		n, ok := parseInt(num)
		return n, ok, num
	case fastjson.TypeString:
		b, _ := v.StringBytes()
		n, ok := parseInt(b)
		return n, ok, num
	}
	return 0, false, num
}

// arg returns args[key] of an event, nil when absent.
func arg(args *fastjson.Value, key string) *fastjson.Value {
	if args == nil || args.Type() != fastjson.TypeObject {
		return nil
	}
	o, _ := args.Object()
	return o.Get(key)
}

// eachEvent calls fn with every event of b, its ordinal in the trace and
// its byte offset.
func eachEvent(b *decode.Batch, fn func(raw []byte, ord, off int64) error) error {
	for i := range b.Len() {
		raw, off := b.Event(i)
		if err := fn(raw, b.First+int64(i), off); err != nil {
			return err
		}
	}
	return nil
}

// eventObject parses the event at ordinal ord (byte offset off) of path
// into a value that is an object, or says in the file's terms what is
// wrong with it.
func eventObject(p *fastjson.Parser, path string, raw []byte, ord, off int64) (*fastjson.Value, *fastjson.Object, error) {
	v, err := decode.ParseJSON(p, raw)
	if err != nil {
		return nil, nil, eventError(path, ord, off, "", decode.ErrSyntax, shorten(err.Error()))
	}
	o, err := v.Object()
	if err != nil {
		return nil, nil, eventError(path, ord, off, "", decode.ErrType, "event is not an object")
	}
	return v, o, nil
}
