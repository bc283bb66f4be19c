package ingest

import "testing"

// TestMergeEvidence: a run's framework evidence says each kind once,
// however many traces said it (a two-rank vLLM run used to repeat it per
// file in the triage header), with file names counted and counts summed.
func TestMergeEvidence(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		evs  []string
		want string
	}{
		{[]string{
			"file name dp0_pp0_tp0_dcp0_ep0_rank0.17.pt.trace.json.gz fits vllm; Python frames in vllm code (1209)",
			"file name dp0_pp0_tp1_dcp0_ep0_rank1.17.pt.trace.json.gz fits vllm; Python frames in vllm code (1190)",
		}, "2 file names fit vllm; Python frames in vllm code (2399)"},
		{[]string{"file name a-TP-0.trace.json.gz fits sglang or tokenspeed; Python frames in sglang code (12)"},
			"file name a-TP-0.trace.json.gz fits sglang or tokenspeed; Python frames in sglang code (12)"},
		{[]string{"server_args.json has SGLang keys (model_path, mem_fraction_static) (d/server_args.json)",
			"server_args.json has SGLang keys (model_path, mem_fraction_static) (d/server_args.json)"},
			"server_args.json has SGLang keys (model_path, mem_fraction_static) (d/server_args.json)"},
		{[]string{"a", "b", "c", "d"}, "a; b; c; d"},
		{[]string{"", ""}, ""},
	} {
		if got := mergeEvidence(c.evs); got != c.want {
			t.Errorf("mergeEvidence(%q)\n = %q\nwant %q", c.evs, got, c.want)
		}
	}
}
