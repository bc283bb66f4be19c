package ingest

import (
	"encoding/json"
	"strconv"

	"github.com/tracehouse/tracehouse/ingest/decode"
	"github.com/tracehouse/tracehouse/vocab"
)

// metaInfo is what the top-level keys say.
type metaInfo struct {
	rank          int
	baseNS        int64
	hasBase       bool
	deviceName    string
	devices       []byte
	schemaVersion string
	traceName     string
}

func traceInfo(meta map[string][]byte) metaInfo {
	mi := metaInfo{rank: -1}
	if b, ok := meta["baseTimeNanoseconds"]; ok {
		if v, isInt, ok := decode.ParseInt(b); isInt && ok {
			mi.baseNS, mi.hasBase = v, true
		}
	}
	var dist struct {
		Rank *int `json:"rank"`
	}
	if b, ok := meta["distributedInfo"]; ok && json.Unmarshal(b, &dist) == nil && dist.Rank != nil && *dist.Rank >= 0 {
		mi.rank = *dist.Rank
	}
	devs := meta["deviceProperties"]
	if devs == nil {
		devs = meta["computeProperties"]
	}
	mi.devices = devs
	var dp []struct {
		Name string `json:"name"`
	}
	if devs != nil && json.Unmarshal(devs, &dp) == nil && len(dp) > 0 {
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
	return mi
}

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
