package main

import (
	"strconv"

	"github.com/tracehouse/tracehouse/catalog"
)

// loadCatalog reads --catalog FILE, or the embedded catalog.
func loadCatalog(file string) (*catalog.Catalog, error) {
	if file == "" {
		return catalog.Default(), nil
	}
	return catalog.Load(file)
}

// catalogFor is loadCatalog for a command that may not need the catalog
// parsed (a report of a warehouse that holds it compares its hash only):
// a --catalog FILE is read at once (its errors come before the warehouse
// is touched), the embedded catalog when first needed. A command that
// will install it (one that writes) calls Prefetch, so that the parse
// overlaps opening the warehouse.
func catalogFor(file string) (*catalog.Lazy, error) {
	if file != "" {
		c, err := catalog.Load(file)
		if err != nil {
			return nil, err
		}
		return catalog.Parsed(c), nil
	}
	return catalog.LazyDefault(), nil
}

// catalogEntryJSON is the JSON shape of one entry in `catalog list` and
// `catalog show`; a test pins these names. Fusion-only fields are left out
// of overlap entries and the other way round.
type catalogEntryJSON struct {
	ID          string     `json:"id"`
	Kind        string     `json:"kind"`
	Name        string     `json:"name"`
	Framework   string     `json:"framework"`
	Origin      string     `json:"origin"`
	Fused       []string   `json:"fused,omitempty"`
	Chain       [][]string `json:"chain,omitempty"`
	Ordered     *bool      `json:"ordered,omitempty"`
	MaxGapUS    *float64   `json:"max_gap_us,omitempty"`
	MaxBetween  *int       `json:"max_between,omitempty"`
	ModelsAny   []string   `json:"models_any,omitempty"`
	ModelsNone  []string   `json:"models_none,omitempty"`
	MinTP       *int       `json:"min_tp,omitempty"`
	MinShare    *float64   `json:"min_share,omitempty"`
	LikelyShare *float64   `json:"likely_share,omitempty"`
	Priority    *int       `json:"priority,omitempty"`
	Subsumes    []string   `json:"subsumes,omitempty"`
	Keywords    []string   `json:"keywords,omitempty"`
	Sources     []string   `json:"sources"`
	Switch      *string    `json:"switch"`
	Rationale   string     `json:"rationale"`
}

func fusionJSON(e *catalog.Fusion) catalogEntryJSON {
	return catalogEntryJSON{ID: e.ID, Kind: "fusion", Name: e.Name, Framework: e.Framework, Origin: e.Origin,
		Fused: e.Fused, Chain: e.Chain, Ordered: &e.Ordered, MaxGapUS: &e.MaxGapUS, MaxBetween: &e.MaxBetween,
		ModelsAny: e.ModelsAny, ModelsNone: e.ModelsNone, MinTP: &e.MinTP, MinShare: &e.MinShare,
		LikelyShare: &e.LikelyShare, Priority: &e.Priority, Subsumes: e.Subsumes, Sources: e.Sources,
		Switch: optional(e.Switch), Rationale: e.Rationale}
}

func overlapJSON(e *catalog.Overlap) catalogEntryJSON {
	return catalogEntryJSON{ID: e.ID, Kind: "overlap", Name: e.Name, Framework: e.Framework, Origin: e.Origin,
		Keywords: e.Keywords, Sources: e.Sources, Switch: optional(e.Switch), Rationale: e.Rationale}
}

// optional makes an unknown switch JSON null rather than "".
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// shortFloat prints 0.5, 4 and 50 without trailing zeros.
func shortFloat(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
