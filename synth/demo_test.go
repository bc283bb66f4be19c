package synth

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"flag"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/demo and testdata/bad from the generator")

const (
	demoDir = "../testdata/demo"
	badDir  = "../testdata/bad"
)

// tree maps every file under dir (slash paths) to its bytes.
func tree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = b
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameTree(t *testing.T, committed, fresh string, refresh string) {
	t.Helper()
	want, got := tree(t, committed), tree(t, fresh)
	for name, b := range got {
		c, ok := want[name]
		if !ok {
			t.Errorf("%s: generated but not committed (%s)", name, refresh)
		} else if !bytes.Equal(b, c) {
			t.Errorf("%s: differs from the committed file (%s)", name, refresh)
		}
	}
	for name := range want {
		if _, ok := got[name]; !ok {
			t.Errorf("%s: committed but no longer generated (%s)", name, refresh)
		}
	}
}

// TestDemo regenerates the demo set and requires it byte-identical to the
// committed one. Refresh with: go test ./synth -run 'TestDemo|TestBroken' -update
func TestDemo(t *testing.T) {
	t.Parallel()
	if *update {
		if err := os.RemoveAll(demoDir); err != nil {
			t.Fatal(err)
		}
		if _, err := Demo(demoDir); err != nil {
			t.Fatal(err)
		}
	}
	fresh := t.TempDir()
	m, err := Demo(fresh)
	if err != nil {
		t.Fatal(err)
	}
	sameTree(t, demoDir, fresh, "run go test ./synth -run TestDemo -update")

	committed, err := ReadManifest(filepath.Join(demoDir, "MANIFEST.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(committed.Files) != len(m.Files) {
		t.Fatalf("manifest has %d files, demo wrote %d", len(committed.Files), len(m.Files))
	}
	var total int64
	fws := map[string]bool{}
	for _, f := range committed.Files {
		st, err := os.Stat(filepath.Join(demoDir, filepath.FromSlash(f.Path)))
		if err != nil {
			t.Fatalf("manifest path: %v", err)
		}
		total += st.Size()
		fws[f.Framework] = true
	}
	if len(fws) != 4 {
		t.Errorf("demo covers %d frameworks, want 4", len(fws))
	}
	if total > 6<<20 {
		t.Errorf("demo set is %d bytes; keep it to a few MB", total)
	}
	// The pair must not share content (ingest dedups by content hash).
	seen := map[string]string{}
	for name, b := range tree(t, demoDir) {
		if other, dup := seen[string(b)]; dup && strings.Contains(name, "trace") {
			t.Errorf("%s and %s have identical content", name, other)
		}
		seen[string(b)] = name
	}
}

func gunzip(b []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
}

// TestBroken regenerates testdata/bad and checks each file is broken in
// exactly the way its case says.
func TestBroken(t *testing.T) {
	t.Parallel()
	if *update {
		if err := os.RemoveAll(badDir); err != nil {
			t.Fatal(err)
		}
		if _, err := WriteBroken(badDir); err != nil {
			t.Fatal(err)
		}
	}
	fresh := t.TempDir()
	cases, err := WriteBroken(fresh)
	if err != nil {
		t.Fatal(err)
	}
	sameTree(t, badDir, fresh, "run go test ./synth -run TestBroken -update")
	kinds := map[string]bool{}
	for _, c := range cases {
		t.Run(c.Damage, func(t *testing.T) {
			if kinds[c.Damage] {
				t.Fatalf("damage %s used twice", c.Damage)
			}
			kinds[c.Damage] = true
			raw, err := os.ReadFile(filepath.Join(badDir, c.File))
			if err != nil {
				t.Fatal(err)
			}
			data := raw
			if strings.HasSuffix(c.File, ".gz") && c.Damage != DamageTruncatedGzip && c.Damage != DamageNotGzip {
				if data, err = gunzip(raw); err != nil {
					t.Fatalf("gunzip: %v", err)
				}
			}
			event := func() map[string]any {
				var top struct {
					TraceEvents []json.RawMessage `json:"traceEvents"`
				}
				if err := json.Unmarshal(data, &top); err != nil {
					t.Fatalf("decode: %v", err)
				}
				if c.Event < 0 || c.Event >= len(top.TraceEvents) {
					t.Fatalf("event %d out of range", c.Event)
				}
				var e map[string]any
				dec := json.NewDecoder(bytes.NewReader(top.TraceEvents[c.Event]))
				dec.UseNumber()
				if err := dec.Decode(&e); err != nil {
					t.Fatalf("event %d: %v", c.Event, err)
				}
				return e
			}
			switch c.Damage {
			case DamageTruncatedGzip:
				if _, err := gunzip(raw); err == nil {
					t.Error("truncated gzip decompresses without error")
				}
			case DamageNotGzip:
				if _, err := gzip.NewReader(bytes.NewReader(raw)); err == nil {
					t.Error("gzip header accepted")
				}
			case DamageGzipGarbage, DamageTruncatedJSON, DamageBadNumber, DamageStrayBrace, DamageNaN:
				if json.Valid(data) {
					t.Error("JSON is valid")
				}
				if c.Damage == DamageTruncatedJSON && int64(len(data)) != c.Offset {
					t.Errorf("truncated at %d, case says %d", len(data), c.Offset)
				}
			case DamageTSString:
				if _, ok := event()["ts"].(string); !ok {
					t.Error("ts is not a string")
				}
			case DamageDurObject:
				if _, ok := event()["dur"].(map[string]any); !ok {
					t.Error("dur is not an object")
				}
			case DamageArgsNumber:
				if _, ok := event()["args"].(json.Number); !ok {
					t.Error("args is not a number")
				}
			case DamageNameNumber:
				if _, ok := event()["name"].(json.Number); !ok {
					t.Error("name is not a number")
				}
			case DamageMissingTS:
				e := event()
				if _, ok := e["ts"]; ok || e["ph"] != "X" {
					t.Error("X event still has ts")
				}
			case DamageNegativeDur:
				if d, _ := event()["dur"].(json.Number); !strings.HasPrefix(string(d), "-") {
					t.Error("dur not negative")
				}
			case DamageDuplicateKey:
				if !json.Valid(data) {
					t.Fatal("JSON invalid")
				}
				// encoding/json keeps the last value; the text has two.
				var top struct {
					TraceEvents []json.RawMessage `json:"traceEvents"`
				}
				if err := json.Unmarshal(data, &top); err != nil {
					t.Fatal(err)
				}
				if n := bytes.Count(top.TraceEvents[c.Event], []byte(`"ts":`)); n != 2 {
					t.Errorf("ts appears %d times", n)
				}
			case DamageHugeName:
				if n, _ := event()["name"].(string); len(n) <= 1<<20 {
					t.Errorf("name is %d bytes", len(n))
				}
				if len(raw) > 64<<10 {
					t.Errorf("compressed file is %d bytes", len(raw))
				}
			case DamageIntOverflow:
				a, _ := event()["args"].(map[string]any)
				v, _ := a["correlation"].(json.Number)
				if _, err := strconv.ParseUint(string(v), 10, 64); err == nil {
					t.Errorf("correlation %s fits in 64 bits", v)
				}
			case DamageEventsNotArray:
				var top map[string]json.RawMessage
				if err := json.Unmarshal(data, &top); err != nil {
					t.Fatal(err)
				}
				if ev := bytes.TrimSpace(top["traceEvents"]); len(ev) == 0 || ev[0] == '[' {
					t.Error("traceEvents is an array")
				}
			case DamageEmpty:
				if len(raw) != 0 {
					t.Error("not empty")
				}
			case NonTraceChakra, NonTraceConfig, NonTraceServerArgs:
				var top map[string]json.RawMessage
				if err := json.Unmarshal(data, &top); err != nil {
					t.Fatal(err)
				}
				if _, ok := top["traceEvents"]; ok || !c.Skip {
					t.Error("non-trace looks like a trace or is not marked Skip")
				}
			default:
				t.Fatalf("no check for damage %s", c.Damage)
			}
			// Everything else about a damaged trace is a valid trace.
			if c.Damage == DamageTSString || c.Damage == DamageIntOverflow {
				if !json.Valid(data) {
					t.Error("damage should keep the JSON valid")
				}
			}
		})
	}
	if len(cases) < 20 {
		t.Errorf("only %d cases", len(cases))
	}
}
