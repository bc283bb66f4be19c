package capture

import (
	"encoding/json"
	"testing"

	"github.com/tracehouse/tracehouse/vocab"
)

// TestExpectIgnoresBadSizes: the workers a capture waits for come from the
// server's parallel sizes only when they are whole numbers from 1 to
// maxWorkers (and so is their product); any other value leaves the count
// unknown (at least one file per stage). Before, sizes went through
// int(float64): tp_size 2.5 waited for 2 files, and tp_size 1e9 built a
// billion labels (gigabytes) before waiting for them.
func TestExpectIgnoresBadSizes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		fw, info string
		want     int // labels
	}{
		{vocab.SGLang, `{"tp_size": 2, "pp_size": 1, "dp_size": 1}`, 2},
		{vocab.SGLang, `{"tp_size": 2.0}`, 2},
		{vocab.SGLang, `{"tp_size": 2.5}`, 0},
		{vocab.SGLang, `{"tp_size": 0}`, 0},
		{vocab.SGLang, `{"tp_size": -4}`, 0},
		{vocab.SGLang, `{"tp_size": "4"}`, 0},
		{vocab.SGLang, `{"tp_size": 1e9}`, 0},
		{vocab.SGLang, `{"tp_size": 65536}`, 65536},
		{vocab.SGLang, `{"tp_size": 256, "pp_size": 256}`, 65536},
		{vocab.SGLang, `{"tp_size": 256, "pp_size": 512}`, 0},
		{vocab.SGLang, `{"tp_size": 4, "pp_size": 2.5}`, 4}, // pp unknown: 1
		{vocab.VLLM, `{"tensor_parallel_size": 4, "data_parallel_size": 2}`, 8},
		{vocab.VLLM, `{"tensor_parallel_size": 4.5}`, 0},
		{vocab.VLLM, `{"tensor_parallel_size": 60000, "pipeline_parallel_size": 60000, "data_parallel_size": 60000}`, 0},
	}
	for _, c := range cases {
		var info map[string]any
		if err := json.Unmarshal([]byte(c.info), &info); err != nil {
			t.Fatal(err)
		}
		if got := len(expect(c.fw, info, 0, nil).labels); got != c.want {
			t.Errorf("%s %s: %d workers, want %d", c.fw, c.info, got, c.want)
		}
	}
	// --ranks wins over whatever the server says
	var info map[string]any
	_ = json.Unmarshal([]byte(`{"tp_size": 1e9}`), &info)
	if got := len(expect(vocab.SGLang, info, 3, nil).labels); got != 3 {
		t.Errorf("--ranks 3: %d workers", got)
	}
}
