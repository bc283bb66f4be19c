package ingest

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/valyala/fastjson"

	"github.com/tracehouse/tracehouse/ingest/decode"
	"github.com/tracehouse/tracehouse/limits"
	"github.com/tracehouse/tracehouse/parseerr"
	"github.com/tracehouse/tracehouse/vocab"
)

// metaInfo is what the top-level keys say.
type metaInfo struct {
	rank        int
	baseNS      int64
	hasBase     bool
	deviceName  string
	devices     []byte // deviceProperties (or computeProperties) as JSON DuckDB takes
	distributed []byte // distributedInfo, the same
	// repaired names the keys above rewritten to be stored (NaN made
	// null, invalid UTF-8 replaced), for the trace's warnings
	repaired      []string
	schemaVersion string
	traceName     string
}

// traceInfo reads the top-level keys of the trace at path. A base time or
// rank the warehouse cannot hold is an error naming its key (nothing else
// of these keys is fatal).
func traceInfo(path string, meta map[string][]byte) (metaInfo, error) {
	mi := metaInfo{rank: -1}
	metaErr := func(key string, cause error, format string, args ...any) error {
		return parseerr.AtOffset(path, -1, -1, key, parseerr.Errorf(cause, format, args...))
	}
	if b, ok := meta["baseTimeNanoseconds"]; ok && !bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		b = bytes.TrimSpace(b)
		v, isInt, ok := decode.ParseInt(b)
		switch {
		case !decode.ValidNumber(b):
			return mi, metaErr("baseTimeNanoseconds", ErrType, "want an integer, got %s", shortJSON(b))
		case !isInt:
			return mi, metaErr("baseTimeNanoseconds", ErrType, "want an integer, got %s", shortJSON(b))
		case !ok || !limits.Time(v):
			return mi, metaErr("baseTimeNanoseconds", ErrRange, "%s ns is outside the times the warehouse keeps (%s)", shortJSON(b), limits.TimeRange)
		}
		mi.baseNS, mi.hasBase = v, true
	}
	devsKey := "deviceProperties"
	if meta[devsKey] == nil {
		devsKey = "computeProperties"
	}
	var fixed bool
	if mi.devices, fixed = storableJSON(meta[devsKey]); fixed {
		mi.repaired = append(mi.repaired, devsKey)
	}
	if mi.distributed, fixed = storableJSON(meta["distributedInfo"]); fixed {
		mi.repaired = append(mi.repaired, "distributedInfo")
	}
	var dist struct {
		Rank json.RawMessage `json:"rank"`
	}
	if b := mi.distributed; b != nil && json.Unmarshal(b, &dist) == nil && dist.Rank != nil {
		// A negative or non-integer rank says nothing (as before); one
		// beyond an INTEGER cannot be stored.
		v, isInt, ok := decode.ParseInt(dist.Rank)
		switch {
		case isInt && ok && v >= 0 && limits.Index(v):
			mi.rank = int(v)
		case isInt && decode.ValidNumber(dist.Rank) && (!ok || v > 0):
			return mi, metaErr("distributedInfo.rank", ErrRange, "rank %s is outside %s", shortJSON(dist.Rank), limits.IndexRange)
		}
	}
	var dp []struct {
		Name string `json:"name"`
	}
	if devs := mi.devices; devs != nil && json.Unmarshal(devs, &dp) == nil && len(dp) > 0 {
		mi.deviceName = dp[0].Name
	}
	if b, ok := meta["schemaVersion"]; ok {
		var v any
		if json.Unmarshal(b, &v) == nil {
			switch x := v.(type) {
			case string:
				mi.schemaVersion = x
			case float64:
				mi.schemaVersion = strconv.FormatFloat(x, 'f', -1, 64)
			}
		}
	}
	if b, ok := meta["traceName"]; ok {
		_ = json.Unmarshal(b, &mi.traceName)
	}
	return mi, nil
}

// storableJSON is a top-level value as the warehouse's JSON columns take
// it: as written when it is strict JSON in UTF-8, else rewritten (NaN and
// Infinity null, invalid UTF-8 replaced; fixed is true), else nil when it
// does not parse at all (fixed is true too). nil stays nil.
func storableJSON(raw []byte) (out []byte, fixed bool) {
	if raw == nil {
		return nil, false
	}
	if utf8.Valid(raw) && json.Valid(raw) {
		return raw, false
	}
	var p fastjson.Parser
	v, err := decode.ParseJSON(&p, raw)
	if err != nil {
		return nil, true
	}
	out, _ = limits.ValidUTF8(decode.AppendJSON(nil, v))
	if !json.Valid(out) {
		return nil, true
	}
	return out, true
}

// shortJSON is a value's text for a message, cut short.
func shortJSON(b []byte) string { return shorten(string(b)) }

// traceStage decides a trace's stage before its kernels are read, strongest
// evidence first: the option, the file name, the directory. Unknown (source
// "none") leaves it to the kernels' annotations (kernelStages).
func traceStage(opt, path string, ident decode.NameIdentity) (stage, source string) {
	switch {
	case opt != "":
		return opt, "flag"
	case ident.Stage != "":
		return ident.Stage, "filename"
	}
	if s := decode.DirStage(path); s != "" {
		return s, "directory"
	}
	return vocab.StageUnknown, "none"
}

// traceRole decides a trace's two-trace role: the option, else mapping when
// server_args.json turns CUDA graphs off, else formal.
func traceRole(opt string, sa *serverArgs) (role, source string) {
	switch {
	case opt != "":
		return opt, "flag"
	case sa != nil && sa.cudaGraph != nil:
		if !*sa.cudaGraph {
			return vocab.Mapping, "server_args.json"
		}
		return vocab.Formal, "server_args.json"
	}
	return vocab.Formal, "default"
}
