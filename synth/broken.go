package synth

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/klauspost/compress/gzip"
)

// BrokenCase describes one file written by WriteBroken.
type BrokenCase struct {
	File   string // name inside the directory
	Damage string // kind of damage (stable id, see testdata/README.md)
	Event  int    // 0-based index in traceEvents of the damaged event, -1 if n/a
	// Offset is the byte offset of the damage in the (decompressed) JSON
	// text, -1 if n/a.
	Offset int64
	// Skip is true for non-traces: ingest must skip them with a notice,
	// not fail.
	Skip   bool
	Detail string
}

// Damage kinds.
const (
	DamageTruncatedGzip  = "truncated_gzip"
	DamageNotGzip        = "not_gzip"
	DamageGzipGarbage    = "gzip_of_garbage"
	DamageTruncatedJSON  = "truncated_json"
	DamageBadNumber      = "invalid_number"
	DamageStrayBrace     = "stray_brace"
	DamageTSString       = "ts_string"
	DamageDurObject      = "dur_object"
	DamageArgsNumber     = "args_number"
	DamageNameNumber     = "name_number"
	DamageMissingTS      = "missing_ts"
	DamageNegativeDur    = "negative_dur"
	DamageNaN            = "nan"
	DamageDuplicateKey   = "duplicate_key"
	DamageHugeName       = "huge_name"
	DamageIntOverflow    = "int_overflow"
	DamageEventsNotArray = "events_not_array"
	DamageEmpty          = "empty"
	NonTraceChakra       = "non_trace_chakra"
	NonTraceConfig       = "non_trace_config"
	NonTraceServerArgs   = "non_trace_server_args"
)

// baseTrace renders a small valid trace in memory, the raw material of the
// broken files.
func baseTrace() ([]byte, error) {
	opt, err := normalize(Options{Framework: SGLang, Dir: ".", Ranks: 1, Steps: 1, Layers: 1, Seed: 11,
		Start: time.Unix(1712345678, 901123000).UTC()})
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	g := newGen(opt, job{path: "base.trace.json", fileStage: StageDecode, only: StageDecode}, &buf)
	g.run()
	if g.err != nil {
		return nil, fmt.Errorf("synth: base trace: %w", g.err)
	}
	return buf.Bytes(), nil
}

// eventSpans returns the [start,end) byte span of each element of
// traceEvents and the index of the first kernel.
func eventSpans(text []byte) (spans [][2]int64, kernel int, err error) {
	dec := json.NewDecoder(bytes.NewReader(text))
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil, 0, fmt.Errorf("synth: no traceEvents: %w", err)
		}
		if tok == "traceEvents" {
			break
		}
	}
	if _, err := dec.Token(); err != nil { // '['
		return nil, 0, fmt.Errorf("synth: traceEvents: %w", err)
	}
	kernel = -1
	for dec.More() {
		start := dec.InputOffset()
		var e struct {
			Cat string `json:"cat"`
		}
		if err := dec.Decode(&e); err != nil {
			return nil, 0, fmt.Errorf("synth: event %d: %w", len(spans), err)
		}
		end := dec.InputOffset()
		for start < end && text[start] != '{' {
			start++
		}
		if e.Cat == "kernel" && kernel < 0 {
			kernel = len(spans)
		}
		spans = append(spans, [2]int64{start, end})
	}
	if kernel < 0 {
		return nil, 0, fmt.Errorf("synth: base trace has no kernel")
	}
	return spans, kernel, nil
}

// replaceIn replaces the first old in text[span] by repl and returns the new
// text and the offset of the change.
func replaceIn(text []byte, span [2]int64, old, repl string) ([]byte, int64, error) {
	ev := text[span[0]:span[1]]
	i := bytes.Index(ev, []byte(old))
	if i < 0 {
		return nil, 0, fmt.Errorf("synth: %q not found in event", old)
	}
	at := span[0] + int64(i)
	out := make([]byte, 0, len(text)+len(repl))
	out = append(out, text[:at]...)
	out = append(out, repl...)
	out = append(out, text[at+int64(len(old)):]...)
	return out, at, nil
}

// valueOf returns the text of key's value inside the event (up to the next
// comma), e.g. `"ts": 1.000`.
func valueOf(text []byte, span [2]int64, key string) (string, error) {
	ev := text[span[0]:span[1]]
	k := []byte(`"` + key + `": `)
	i := bytes.Index(ev, k)
	if i < 0 {
		return "", fmt.Errorf("synth: key %s not in event", key)
	}
	rest := ev[i:]
	j := bytes.IndexAny(rest, ",\n}")
	return string(rest[:j]), nil
}

func gz(b []byte) ([]byte, error) {
	var buf bytes.Buffer
	w, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, fmt.Errorf("synth: gzip: %w", err)
	}
	if _, err := w.Write(b); err != nil {
		return nil, fmt.Errorf("synth: gzip: %w", err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("synth: gzip: %w", err)
	}
	return buf.Bytes(), nil
}

// WriteBroken writes one small file per kind of bad input into dir (and the
// non-traces ingest must skip), and returns the table describing them.
func WriteBroken(dir string) ([]BrokenCase, error) {
	text, err := baseTrace()
	if err != nil {
		return nil, err
	}
	spans, k, err := eventSpans(text)
	if err != nil {
		return nil, err
	}
	ks := spans[k]
	var cases []BrokenCase
	files := map[string][]byte{}
	add := func(c BrokenCase, data []byte) {
		cases = append(cases, c)
		files[c.File] = data
	}
	// edit damages the first kernel by replacing old with repl.
	edit := func(file, damage, detail, old, repl string) error {
		out, at, err := replaceIn(text, ks, old, repl)
		if err != nil {
			return fmt.Errorf("%s: %w", damage, err)
		}
		add(BrokenCase{File: file, Damage: damage, Event: k, Offset: at, Detail: detail}, out)
		return nil
	}
	rng := rand.New(rand.NewPCG(7, 11))

	// Compression damage.
	full, err := gz(text)
	if err != nil {
		return nil, err
	}
	add(BrokenCase{File: "truncated-gzip.trace.json.gz", Damage: DamageTruncatedGzip, Event: -1, Offset: -1,
		Detail: "gzip stream cut at half its compressed length (no trailer)"}, full[:len(full)/2])
	junk := make([]byte, 4096)
	for i := range junk {
		junk[i] = byte(rng.UintN(256))
	}
	add(BrokenCase{File: "not-gzip.trace.json.gz", Damage: DamageNotGzip, Event: -1, Offset: 0,
		Detail: "named .gz but random bytes: no gzip header"}, junk)
	gj, err := gz(junk)
	if err != nil {
		return nil, err
	}
	add(BrokenCase{File: "gzip-of-garbage.trace.json.gz", Damage: DamageGzipGarbage, Event: -1, Offset: 0,
		Detail: "a valid gzip stream whose content is random bytes, not JSON"}, gj)

	// JSON syntax damage.
	ts, err := valueOf(text, ks, "ts")
	if err != nil {
		return nil, err
	}
	cut := ks[0] + int64(bytes.Index(text[ks[0]:ks[1]], []byte(ts))) + int64(len(ts))
	add(BrokenCase{File: "truncated.trace.json", Damage: DamageTruncatedJSON, Event: k, Offset: cut,
		Detail: "file ends in the middle of an event, right after its ts"}, text[:cut])
	if err := edit("invalid-number.trace.json", DamageBadNumber, `"ts": 12..5 (not a number)`, ts, `"ts": 12..5`); err != nil {
		return nil, err
	}
	{
		at := ks[1]
		out := append(append(append([]byte{}, text[:at]...), "}"...), text[at:]...)
		add(BrokenCase{File: "stray-brace.trace.json", Damage: DamageStrayBrace, Event: k, Offset: at,
			Detail: "an extra } right after the event closes"}, out)
	}

	// Wrong types.
	if err := edit("ts-string.trace.json", DamageTSString, `"ts": "abc" on a kernel`, ts, `"ts": "abc"`); err != nil {
		return nil, err
	}
	dur, err := valueOf(text, ks, "dur")
	if err != nil {
		return nil, err
	}
	if err := edit("dur-object.trace.json", DamageDurObject, `"dur": {} on a kernel`, dur, `"dur": {}`); err != nil {
		return nil, err
	}
	{
		ev := text[ks[0]:ks[1]]
		a := bytes.Index(ev, []byte(`"args": {`))
		z := bytes.LastIndex(ev, []byte("\n    }"))
		if a < 0 || z < a {
			return nil, fmt.Errorf("synth: kernel args not found")
		}
		at := ks[0] + int64(a)
		out := append(append(append([]byte{}, text[:at]...), `"args": 5`...), text[ks[0]+int64(z)+6:]...)
		add(BrokenCase{File: "args-number.trace.json", Damage: DamageArgsNumber, Event: k, Offset: at,
			Detail: `"args": 5 on a kernel`}, out)
	}
	name, err := valueOf(text, ks, "name")
	if err != nil {
		return nil, err
	}
	if err := edit("name-number.trace.json", DamageNameNumber, `"name": 17 on a kernel`, name, `"name": 17`); err != nil {
		return nil, err
	}
	if err := edit("missing-ts.trace.json", DamageMissingTS, `a ph:"X" kernel without ts`, ts+", ", ""); err != nil {
		return nil, err
	}
	if err := edit("negative-dur.trace.json", DamageNegativeDur, `"dur": -3.250 on a kernel`, dur, `"dur": -3.250`); err != nil {
		return nil, err
	}
	if err := edit("nan.trace.json", DamageNaN, `"dur": NaN (not JSON)`, dur, `"dur": NaN`); err != nil {
		return nil, err
	}
	if err := edit("duplicate-key.trace.json", DamageDuplicateKey, `"ts" twice in one kernel with different values`,
		ts, ts+`, "ts": 1.000`); err != nil {
		return nil, err
	}
	{
		huge := `"name": "` + strings.Repeat("void very_long_kernel<", (1<<20)/22+1000) + `"`
		out, at, err := replaceIn(text, ks, name, huge)
		if err != nil {
			return nil, err
		}
		z, err := gz(out)
		if err != nil {
			return nil, err
		}
		add(BrokenCase{File: "huge-name.trace.json.gz", Damage: DamageHugeName, Event: k, Offset: at,
			Detail: "a kernel name longer than 1 MiB (gzip keeps the file small)"}, z)
	}
	corr, err := valueOf(text, ks, "correlation")
	if err != nil {
		return nil, err
	}
	if err := edit("int-overflow.trace.json", DamageIntOverflow, `"correlation": 99999999999999999999999 (above int64 and uint64)`,
		corr, `"correlation": 99999999999999999999999`); err != nil {
		return nil, err
	}
	{
		i := bytes.Index(text, []byte(`"traceEvents": [`))
		out := []byte(string(text[:i]) + `"traceEvents": {"ph": "X", "name": "not an array"},` + "\n  \"traceName\": \"x\"\n}\n")
		add(BrokenCase{File: "events-not-array.trace.json", Damage: DamageEventsNotArray, Event: -1, Offset: int64(i),
			Detail: "traceEvents is an object, not an array"}, out)
	}
	add(BrokenCase{File: "x.trace.json", Damage: DamageEmpty, Event: -1, Offset: 0, Detail: "an empty file named like a trace"}, nil)

	// Non-traces that sit next to real traces: skip, do not fail.
	add(BrokenCase{File: "chakra_rank0.json", Damage: NonTraceChakra, Event: -1, Offset: -1, Skip: true,
		Detail: "a Chakra execution trace (nodes, no traceEvents)"}, []byte(chakraJSON))
	add(BrokenCase{File: "config.json", Damage: NonTraceConfig, Event: -1, Offset: -1, Skip: true,
		Detail: "a Hugging Face model config"}, []byte(configJSON))
	add(BrokenCase{File: "server_args.json", Damage: NonTraceServerArgs, Event: -1, Offset: -1, Skip: true,
		Detail: "SGLang server arguments sidecar"}, []byte(serverArgsJSON))

	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("synth: %w", err)
	}
	for _, c := range cases {
		if err := os.WriteFile(filepath.Join(dir, c.File), files[c.File], 0o644); err != nil {
			return nil, fmt.Errorf("synth: write %s: %w", c.File, err)
		}
	}
	return cases, nil
}

const chakraJSON = `{
  "schema": "1.0.2-chakra.0.0.4",
  "pid": 41237,
  "time": "2025-06-30 14:15:03",
  "start_ts": 5180342,
  "nodes": [
    {"id": 1, "name": "[pytorch|profiler|execution_trace|thread]", "ctrl_deps": 1, "inputs": {"values": [], "shapes": [], "types": []}, "outputs": {"values": [], "shapes": [], "types": []}, "attrs": [{"name": "rf_id", "type": "uint64", "value": 0}, {"name": "fw_parent", "type": "uint64", "value": 0}, {"name": "seq_id", "type": "int64", "value": -1}, {"name": "scope", "type": "uint64", "value": 7}, {"name": "tid", "type": "uint64", "value": 1}, {"name": "fw_tid", "type": "uint64", "value": 0}, {"name": "op_schema", "type": "string", "value": ""}, {"name": "kernel_backend", "type": "string", "value": ""}, {"name": "kernel_file", "type": "string", "value": ""}]},
    {"id": 2, "name": "aten::mm", "ctrl_deps": 1, "inputs": {"values": [[4, 5, 0, 4096, 2, "cuda:0"], [6, 7, 0, 16777216, 2, "cuda:0"]], "shapes": [[1, 4096], [4096, 4096]], "types": ["Tensor(c10::BFloat16)", "Tensor(c10::BFloat16)"]}, "outputs": {"values": [[8, 9, 0, 4096, 2, "cuda:0"]], "shapes": [[1, 4096]], "types": ["Tensor(c10::BFloat16)"]}, "attrs": [{"name": "rf_id", "type": "uint64", "value": 12}, {"name": "seq_id", "type": "int64", "value": 88}, {"name": "op_schema", "type": "string", "value": "aten::mm(Tensor self, Tensor mat2) -> Tensor"}]}
  ]
}
`

const configJSON = `{
  "architectures": ["LlamaForCausalLM"],
  "attention_bias": false,
  "bos_token_id": 128000,
  "eos_token_id": [128001, 128008, 128009],
  "hidden_act": "silu",
  "hidden_size": 4096,
  "intermediate_size": 14336,
  "max_position_embeddings": 131072,
  "model_type": "llama",
  "num_attention_heads": 32,
  "num_hidden_layers": 32,
  "num_key_value_heads": 8,
  "rms_norm_eps": 1e-05,
  "rope_theta": 500000.0,
  "torch_dtype": "bfloat16",
  "vocab_size": 128256
}
`

const serverArgsJSON = `{
  "model_path": "meta-llama/Llama-3.1-8B-Instruct",
  "tp_size": 1,
  "dp_size": 1,
  "ep_size": 1,
  "pp_size": 1,
  "disable_cuda_graph": false,
  "cuda_graph_max_bs": 160,
  "attention_backend": "flashinfer"
}
`
