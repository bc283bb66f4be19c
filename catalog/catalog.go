// Package catalog holds tracehouse's source-backed catalog of known kernel
// fusions and stream overlaps (README, Triage): the embedded catalog.yaml,
// a strict loader that names the file, line and field of every problem, and
// Install, which copies a catalog into the warehouse tables the fuse-pattern
// and overlap reports match against.
//
// The catalog is data, not code, so users can read it, cite it and replace it
// with their own file (--catalog FILE) without rebuilding tracehouse.
package catalog

import (
	_ "embed"
	"fmt"
	"os"
	"slices"

	"github.com/tracehouse/tracehouse/vocab"
)

// Version is the catalog format this package reads.
const Version = 1

// Defaults the contract gives for optional fusion fields.
const (
	DefaultMaxGapUS   = 50
	DefaultMaxBetween = 2
	DefaultMinTP      = 1
)

// EmbeddedFile names the embedded catalog in error messages; it is the
// file's path in the repository, so an error points straight at it.
const EmbeddedFile = "catalog/catalog.yaml"

//go:embed catalog.yaml
var embedded []byte

// Catalog is one parsed catalog file.
type Catalog struct {
	Version  int
	Fusions  []Fusion
	Overlaps []Overlap

	// File is where the catalog was read from (for messages); not content.
	File string `json:"-"`
}

// Fusion is a split kernel chain that has a fused path somewhere.
type Fusion struct {
	ID        string
	Name      string
	Framework string
	Origin    string
	// Fused keywords: a kernel matching one means the fused path runs.
	Fused []string
	// Chain is the unfused path: one step per kernel, each a list of
	// alternative keywords. Empty when no split chain is known.
	Chain       [][]string
	Ordered     bool
	MaxGapUS    float64
	MaxBetween  int
	ModelsAny   []string
	ModelsNone  []string
	MinTP       int
	MinShare    float64
	LikelyShare float64
	Priority    int
	Subsumes    []string
	Sources     []string
	Switch      string // "" when unknown
	Rationale   string

	pos position
}

// Overlap is a known multi-stream (or launch) overlap path.
type Overlap struct {
	ID        string
	Name      string
	Framework string
	Origin    string
	Keywords  []string
	Sources   []string
	Switch    string // "" when unknown
	Rationale string

	pos position
}

// Line is the line the entry starts on in its file, 0 when built in code.
func (f *Fusion) Line() int { return f.pos.line }

// Line is the line the entry starts on in its file, 0 when built in code.
func (o *Overlap) Line() int { return o.pos.line }

// position remembers where an entry and each of its fields were written, so
// Validate can report semantic problems at the right line.
type position struct {
	line   int
	fields map[string]int // field name -> line of its value
}

func (p position) of(field string) int {
	if l, ok := p.fields[field]; ok {
		return l
	}
	return p.line
}

// FlashInfer is the kernel library several serving frameworks take fused
// paths from; an entry for its kernels names it as its framework.
const FlashInfer = "flashinfer"

// Frameworks are the values an entry's framework takes, in the order error
// messages list them: vocab's serving frameworks, then FlashInfer. Never
// written after init.
var Frameworks = append(slices.Clone(vocab.Frameworks), FlashInfer)

// origins are the values an entry's origin takes, in the order error
// messages list them. Never written after init.
var origins = []string{"mainline", "upstream", "inflight"}

// Default returns the catalog embedded in the binary, freshly parsed, so
// callers may modify it. The embedded file is checked by the package tests;
// a failure here is a build defect, hence the panic.
func Default() *Catalog {
	c, err := Parse(embedded, EmbeddedFile)
	if err != nil {
		panic(fmt.Sprintf("embedded catalog is invalid: %v", err))
	}
	return c
}

// Embedded returns the bytes of the embedded catalog (for `catalog show`).
func Embedded() []byte { return append([]byte(nil), embedded...) }

// Load reads and parses a user's catalog file.
func Load(path string) (*Catalog, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read catalog: %w", err)
	}
	return Parse(data, path)
}

// Parse decodes a catalog file and validates it. filename is used only in
// error messages. Every problem found is reported, one line each, in file
// order; a lone problem is returned as a *ParseError.
func Parse(data []byte, filename string) (*Catalog, error) {
	c, errs, also := decode(data, filename)
	if c == nil {
		return nil, errs.err() // not a catalog document at all
	}
	c.File = filename
	verrs := c.validate()
	if len(errs) == 0 {
		return c, verrs.err()
	}
	// What decoding could not read is not reported again as missing or
	// out of range.
	bad := map[string]bool{}
	for _, k := range also {
		bad[k] = true
	}
	for _, e := range errs {
		bad[errKey(e.Entry, e.Field)] = true
	}
	for _, e := range verrs {
		if !bad[errKey(e.Entry, e.Field)] {
			errs = append(errs, e)
		}
	}
	slices.SortStableFunc(errs, func(a, b *ParseError) int { return a.Line - b.Line })
	return nil, errs.err()
}

// Fusion returns the fusion entry with the given id.
func (c *Catalog) Fusion(id string) (*Fusion, bool) {
	for i := range c.Fusions {
		if c.Fusions[i].ID == id {
			return &c.Fusions[i], true
		}
	}
	return nil, false
}

// Overlap returns the overlap entry with the given id.
func (c *Catalog) Overlap(id string) (*Overlap, bool) {
	for i := range c.Overlaps {
		if c.Overlaps[i].ID == id {
			return &c.Overlaps[i], true
		}
	}
	return nil, false
}
