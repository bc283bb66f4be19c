package ingest

import (
	"encoding/json"
	"strconv"
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
		if v, isInt, ok := parseInt(b); isInt && ok {
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
