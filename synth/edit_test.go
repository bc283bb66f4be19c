package synth

import (
	"strings"
	"testing"
)

// TestEdits: a renamed, a removed, an added-after and a split kernel show
// up as such in the written trace, launched as often as the original; a
// slowed kernel's durations scale (Noise 0.001 keeps the jitter at +-0.1%).
func TestEdits(t *testing.T) {
	count := func(opt Options) (map[string]int, map[string]int64) {
		opt.Dir, opt.Framework, opt.Stage, opt.Steps, opt.Seed = t.TempDir(), SGLang, StageDecode, 4, 9
		opt.Noise, opt.BatchSize = 0.001, 32
		m, err := Generate(opt)
		if err != nil {
			t.Fatal(err)
		}
		n, dur := map[string]int{}, map[string]int64{}
		for _, e := range readTrace(t, m.Files[0].Path).events {
			if e["cat"] == "kernel" {
				name := e["name"].(string)
				n[name]++
				dur[name] += nsOf(t, e["dur"])
			}
		}
		return n, dur
	}
	base, baseDur := count(Options{})
	got, gotDur := count(Options{Edits: []Edit{
		{Match: "FusedAddRMSNorm", Into: []string{kAddElementwise, kRMSNorm}},
		{Match: "nvjet_tst_64x8_64x16", Into: []string{"nvjet_tst_64x16_64x8_4x1_v_bz_TNT"}},
		{Match: "rotary_embedding", Into: []string{}},
		{Match: "act_and_mul", Into: []string{"", "added_kernel"}},
		{Match: "BatchDecodeWithPagedKVCache", Factor: 1.2},
	}})
	if got[kFusedAddRMSNorm] != 0 || got[kAddElementwise] != base[kAddElementwise]+base[kFusedAddRMSNorm] ||
		got[kRMSNorm] != base[kRMSNorm]+base[kFusedAddRMSNorm] || base[kFusedAddRMSNorm] == 0 {
		t.Errorf("split: base fused %d add %d norm %d; got fused %d add %d norm %d", base[kFusedAddRMSNorm],
			base[kAddElementwise], base[kRMSNorm], got[kFusedAddRMSNorm], got[kAddElementwise], got[kRMSNorm])
	}
	if got[kNvjetQKV] != 0 || got["nvjet_tst_64x16_64x8_4x1_v_bz_TNT"] != base[kNvjetQKV] || base[kNvjetQKV] == 0 {
		t.Errorf("rename: %d -> %d", base[kNvjetQKV], got["nvjet_tst_64x16_64x8_4x1_v_bz_TNT"])
	}
	if got[kRotaryVLLM] != 0 || base[kRotaryVLLM] == 0 {
		t.Errorf("remove: %d left of %d", got[kRotaryVLLM], base[kRotaryVLLM])
	}
	if got["added_kernel"] != base[kActAndMulFI] || got[kActAndMulFI] != base[kActAndMulFI] {
		t.Errorf("add: %d added after %d", got["added_kernel"], base[kActAndMulFI])
	}
	for name, d := range baseDur {
		if !strings.Contains(name, "BatchDecodeWithPagedKVCache") {
			continue
		}
		ratio := float64(gotDur[name]) / float64(d)
		if ratio < 1.19 || ratio > 1.21 {
			t.Errorf("slowdown: %s took %.3fx", name, ratio)
		}
	}
}
