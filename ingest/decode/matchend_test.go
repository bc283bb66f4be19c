package decode

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math/bits"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/tracehouse/tracehouse/synth"
)

// refMatchEnd is matchEnd a byte at a time, the plain reading of its
// contract: the word-at-a-time version must agree with it on every input.
func refMatchEnd(b []byte, i int, eof bool) (int, error) {
	switch b[i] {
	case '"':
		return refStringEnd(b, i+1), nil
	case '{', '[':
	default:
		for j := i; j < len(b); j++ {
			if strings.IndexByte(",}] \n\r\t", b[j]) >= 0 {
				return j, nil
			}
		}
		if eof {
			return len(b), nil
		}
		return -1, nil
	}
	var open []byte
	for j := i; j < len(b); j++ {
		switch c := b[j]; c {
		case '"':
			e := refStringEnd(b, j+1)
			if e < 0 {
				return -1, nil
			}
			j = e - 1
		case '{', '[':
			open = append(open, c)
		case '}', ']':
			if len(open) == 0 {
				return 0, errors.New("unbalanced " + string(c))
			}
			if o := open[len(open)-1]; o == '{' && c != '}' || o == '[' && c != ']' {
				return 0, errors.New("mismatched " + string(o) + " and " + string(c))
			}
			open = open[:len(open)-1]
			if len(open) == 0 {
				return j + 1, nil
			}
		}
	}
	return -1, nil
}

// refStringEnd walks a string body from b[i], skipping each escaped byte.
func refStringEnd(b []byte, i int) int {
	for j := i; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// checkMatchEnd compares matchEnd with the reference at every position of
// b where a value may start.
func checkMatchEnd(t *testing.T, b []byte) {
	t.Helper()
	for i := range b {
		if b[i] != '{' && b[i] != '[' && b[i] != '"' {
			continue
		}
		for _, eof := range []bool{false, true} {
			got, gerr := matchEnd(b, i, eof)
			want, werr := refMatchEnd(b, i, eof)
			if got != want || (gerr == nil) != (werr == nil) || gerr != nil && gerr.Error() != werr.Error() {
				t.Fatalf("matchEnd(%q, %d, %v) = %d, %v; want %d, %v", b, i, eof, got, gerr, want, werr)
			}
		}
	}
}

func TestMatchEndAgreesWithReference(t *testing.T) {
	t.Parallel()
	// Mostly structural bytes, escapes and the letters the word test
	// confuses with brackets, at every alignment and length.
	const alphabet = `{}[]"""\\ ,:aY_y` + "\x7f\x00\xff\x5b\x7b"
	rng := rand.New(rand.NewPCG(3, 4))
	for n := 0; n < 40000; n++ {
		b := make([]byte, 1+rng.IntN(70))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		b[0] = "{[\""[rng.IntN(3)]
		checkMatchEnd(t, b)
	}
	// Balanced objects with long strings and escapes, cut anywhere.
	doc, _ := makeTrace(200, rng)
	for cut := len(doc) - 600; cut <= len(doc); cut++ {
		checkMatchEnd(t, []byte(doc[len(doc)-600-300:cut]))
	}
}

func FuzzMatchEnd(f *testing.F) {
	f.Add([]byte(`{"a": "b\"}", "c": [1, {"d": "\\"}]}`))
	f.Add([]byte(`["Y_y{", "]", {"x": [[]]}, "\\\\\""]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		checkMatchEnd(t, b)
	})
}

// TestStructural checks the word test byte by byte: its lowest mark is at
// the first byte that is a quote or a bracket (or one of the four extras).
func TestStructural(t *testing.T) {
	t.Parallel()
	candidate := func(c byte) bool { return strings.IndexByte(`"[]{}Y_y`+"\x7f", c) >= 0 }
	rng := rand.New(rand.NewPCG(5, 6))
	var w [8]byte
	for n := 0; n < 200000; n++ {
		for i := range w {
			w[i] = byte(rng.Uint32())
			if rng.IntN(4) == 0 {
				w[i] = `"[]{}a`[rng.IntN(6)]
			}
		}
		want := 8
		for i, c := range w {
			if candidate(c) {
				want = i
				break
			}
		}
		got := 8
		if m := structural(binary.LittleEndian.Uint64(w[:])); m != 0 {
			got = bits.TrailingZeros64(m) >> 3
		}
		if got != want {
			t.Fatalf("structural(%q): first mark at %d, want %d", w, got, want)
		}
	}
}

// BenchmarkSplitter reports the splitter's rate on an SGLang decode trace
// of 16 MB with Python stacks (synth, as bench/ingest makes them), held in
// memory: no decompression, no decoding.
func BenchmarkSplitter(b *testing.B) {
	dir := b.TempDir()
	m, err := synth.Generate(synth.Options{
		Framework: "sglang", Dir: dir, Run: "run", Model: "meta-llama/Llama-3.1-70B-Instruct",
		Ranks: 1, Layers: 80, Stage: "decode", TargetBytes: 16 << 20, TimeBase: "base_ns", Seed: 1,
	})
	if err != nil {
		b.Fatal(err)
	}
	doc, err := os.ReadFile(m.Files[0].Path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		out := make(chan *Batch, 4)
		done := make(chan struct{})
		go func() {
			for bt := range out {
				bt.Recycle()
			}
			close(done)
		}()
		err := NewSplitter(bytes.NewReader(doc), "bench.json", make(chan []byte, 8)).Run(context.Background(), out)
		close(out)
		<-done
		if err != nil {
			b.Fatal(err)
		}
	}
}
