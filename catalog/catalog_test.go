package catalog

import (
	"slices"
	"strings"
	"testing"
)

func TestDefaultValidates(t *testing.T) {
	t.Parallel()
	c := Default()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if c.Version != Version || c.File != EmbeddedFile {
		t.Errorf("version %d file %q", c.Version, c.File)
	}
	// Each entry also stands on its own: a catalog of just that entry (minus
	// references to others) validates, so no entry leans on a neighbour's error.
	for _, f := range c.Fusions {
		f.Subsumes = nil
		one := &Catalog{Version: Version, Fusions: []Fusion{f}}
		if err := one.Validate(); err != nil {
			t.Errorf("%s: %v", f.ID, err)
		}
		if f.Line() == 0 {
			t.Errorf("%s: no position recorded", f.ID)
		}
	}
	for _, o := range c.Overlaps {
		one := &Catalog{Version: Version, Overlaps: []Overlap{o}}
		if err := one.Validate(); err != nil {
			t.Errorf("%s: %v", o.ID, err)
		}
	}
}

func TestDefaultCounts(t *testing.T) {
	t.Parallel()
	c := Default()
	got := map[string]int{}
	for _, f := range c.Fusions {
		got[f.Framework]++
	}
	// The split of the 47 fusion patterns by framework: SGLang 27, vLLM 11,
	// TokenSpeed 5, TensorRT-LLM 4.
	want := map[string]int{"sglang": 27, "vllm": 11, "tokenspeed": 5, "trtllm": 4}
	for fw, n := range want {
		if got[fw] != n {
			t.Errorf("%s: %d fusions, want %d", fw, got[fw], n)
		}
	}
	if len(c.Fusions) != 47 {
		t.Errorf("%d fusions, want 47", len(c.Fusions))
	}
}

// Default parses afresh: one caller's edits never leak into another's.
func TestDefaultIsFresh(t *testing.T) {
	t.Parallel()
	a, b := Default(), Default()
	a.Fusions[0].Fused[0] = "changed"
	a.Fusions = a.Fusions[:1]
	if b.Fusions[0].Fused[0] == "changed" || len(b.Fusions) != 47 {
		t.Fatal("Default shares state between calls")
	}
}

// Every rationale is a single sentence of our own: one line, ending with a
// full stop, and no two entries share one.
func TestDefaultRationales(t *testing.T) {
	t.Parallel()
	c := Default()
	seen := map[string]string{}
	check := func(id, r string) {
		if !strings.HasSuffix(r, ".") || strings.Count(strings.TrimSuffix(r, "."), ". ") > 0 {
			t.Errorf("%s: rationale is not one sentence: %q", id, r)
		}
		if other, dup := seen[r]; dup {
			t.Errorf("%s: same rationale as %s", id, other)
		}
		seen[r] = id
	}
	for _, f := range c.Fusions {
		check(f.ID, f.Rationale)
	}
	for _, o := range c.Overlaps {
		check(o.ID, o.Rationale)
	}
}

// An entry that subsumes another must outrank it, or conflict resolution
// (priority first) could keep the subsumed entry and drop its replacement.
func TestDefaultSubsumesOutrank(t *testing.T) {
	t.Parallel()
	c := Default()
	for _, f := range c.Fusions {
		for _, id := range f.Subsumes {
			g, _ := c.Fusion(id)
			if g.Priority >= f.Priority {
				t.Errorf("%s (priority %d) subsumes %s (priority %d)", f.ID, f.Priority, id, g.Priority)
			}
		}
	}
}

func TestHash(t *testing.T) {
	t.Parallel()
	a, b := Default(), Default()
	if a.Hash() != b.Hash() {
		t.Fatal("hash differs between two parses of the same file")
	}
	b.File = "elsewhere.yaml"
	if a.Hash() != b.Hash() {
		t.Error("hash depends on the file name")
	}
	b.Overlaps[3].Rationale += " "
	if a.Hash() == b.Hash() {
		t.Error("hash ignores a changed rationale")
	}
	c := Default()
	c.Fusions = slices.Delete(c.Fusions, 0, 1)
	if a.Hash() == c.Hash() {
		t.Error("hash ignores a removed entry")
	}
}
