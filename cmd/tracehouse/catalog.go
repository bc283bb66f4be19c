package main

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tracehouse/tracehouse/catalog"
	"github.com/tracehouse/tracehouse/report"
)

// CatalogOptions are the parsed arguments and flags of `tracehouse catalog
// list|show|check`. Verb says which one ran.
type CatalogOptions struct {
	Verb string // list | show | check
	// File is --catalog: a user catalog to read instead of the embedded one
	// (list, show).
	File string
	// Kind (fusion | overlap) and Framework filter `list`; "" = all.
	Kind      string
	Framework string
	ID        string   // show
	Files     []string // check
}

func newCmdCatalog(f *Factory, runF func(*CatalogOptions) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "catalog <command>",
		Short: "Read and validate the fusion and overlap catalog",
		Long: `The catalog lists known kernel fusions and stream overlaps, each with the
source files or pull requests where its fused or overlapped path lives. Triage
matches it against traces for the fuse-pattern table and the "Known path"
notes of the overlap table.

The catalog is embedded in tracehouse; --catalog FILE reads your own file in
the same format instead. None of these commands opens the warehouse.`,
		Example: `  tracehouse catalog list --kind fusion --framework vllm
  tracehouse catalog show sglang-flashinfer-allreduce-fusion
  tracehouse catalog check my-catalog.yaml`,
		Args: maxArgs(0),
	}
	cmd.AddCommand(
		newCmdCatalogList(f, runF),
		newCmdCatalogShow(f, runF),
		newCmdCatalogCheck(f, runF),
	)
	return cmd
}

// catalogKinds are the values --kind accepts.
var catalogKinds = []string{"fusion", "overlap"}

func newCmdCatalogList(f *Factory, runF func(*CatalogOptions) error) *cobra.Command {
	opts := &CatalogOptions{Verb: "list"}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List catalog entries",
		Long: `List the catalog's fusion and overlap entries in file order, with what
decides when a fusion applies: its chain length, gates (TP size, model
tokens), share thresholds, priority and the switch that turns it on.`,
		Example: `  tracehouse catalog list
  tracehouse catalog list --kind overlap --format markdown
  tracehouse catalog list --catalog my-catalog.yaml --format json`,
		Args: maxArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Kind != "" && !slices.Contains(catalogKinds, opts.Kind) {
				return usagef("--kind %q: want fusion or overlap", opts.Kind)
			}
			if runF != nil {
				return runF(opts)
			}
			return catalogListRun(f, opts)
		},
	}
	cmd.Flags().StringVar(&opts.File, "catalog", "", "read `FILE` instead of the embedded catalog")
	cmd.Flags().StringVar(&opts.Kind, "kind", "", "only fusion or overlap entries")
	cmd.Flags().StringVar(&opts.Framework, "framework", "", "only entries of this framework (sglang, vllm, trtllm, tokenspeed, flashinfer)")
	_ = cmd.RegisterFlagCompletionFunc("kind", cobra.FixedCompletions(catalogKinds, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("framework", cobra.FixedCompletions([]string{"sglang", "vllm", "trtllm", "tokenspeed", "flashinfer"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func newCmdCatalogShow(f *Factory, runF func(*CatalogOptions) error) *cobra.Command {
	opts := &CatalogOptions{Verb: "show"}
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Show every field of one catalog entry",
		Example: `  tracehouse catalog show sglang-flashinfer-allreduce-fusion
  tracehouse catalog show vllm-shared-experts-stream --format json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("%s needs exactly one entry id, got %d argument(s)", cmd.CommandPath(), len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ID = args[0]
			if runF != nil {
				return runF(opts)
			}
			return catalogShowRun(f, opts)
		},
	}
	cmd.Flags().StringVar(&opts.File, "catalog", "", "read `FILE` instead of the embedded catalog")
	return cmd
}

func newCmdCatalogCheck(f *Factory, runF func(*CatalogOptions) error) *cobra.Command {
	opts := &CatalogOptions{Verb: "check"}
	return &cobra.Command{
		Use:   "check FILE...",
		Short: "Validate catalog files",
		Long: `Validate catalog files as --catalog would read them. A good file prints
"FILE: ok (N fusions, M overlaps)"; a bad one prints each problem on one line
to standard error, as FILE:LINE: entry: field: message, and the exit status
is 1.`,
		Example: `  tracehouse catalog check my-catalog.yaml
  tracehouse catalog check catalogs/*.yaml`,
		Args: minArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Files = args
			if runF != nil {
				return runF(opts)
			}
			return catalogCheckRun(f, opts)
		},
	}
}

// loadCatalog reads --catalog FILE, or the embedded catalog.
func loadCatalog(file string) (*catalog.Catalog, error) {
	if file == "" {
		return catalog.Default(), nil
	}
	return catalog.Load(file)
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

func catalogListRun(f *Factory, opts *CatalogOptions) error {
	format, err := f.OutputFormat()
	if err != nil {
		return err
	}
	c, err := loadCatalog(opts.File)
	if err != nil {
		return err
	}
	t := &report.Table{Name: "catalog", Empty: "no catalog entries match",
		Columns: []report.Column{{Name: "ID"}, {Name: "Kind"}, {Name: "Framework"}, {Name: "Origin"},
			{Name: "Steps", Right: true}, {Name: "Gates"}, {Name: "Min/likely %"}, {Name: "Priority", Right: true},
			{Name: "Switch"}}}
	js := []catalogEntryJSON{}
	keep := func(kind, framework string) bool {
		return (opts.Kind == "" || opts.Kind == kind) && (opts.Framework == "" || opts.Framework == framework)
	}
	for i := range c.Fusions {
		e := &c.Fusions[i]
		if !keep("fusion", e.Framework) {
			continue
		}
		t.Rows = append(t.Rows, []string{e.ID, "fusion", e.Framework, e.Origin, strconv.Itoa(len(e.Chain)),
			fusionGates(e), shortFloat(e.MinShare) + " / " + shortFloat(e.LikelyShare), strconv.Itoa(e.Priority),
			orDash(e.Switch)})
		js = append(js, fusionJSON(e))
	}
	for i := range c.Overlaps {
		e := &c.Overlaps[i]
		if !keep("overlap", e.Framework) {
			continue
		}
		t.Rows = append(t.Rows, []string{e.ID, "overlap", e.Framework, e.Origin, "-", "-", "-", "-", orDash(e.Switch)})
		js = append(js, overlapJSON(e))
	}
	return report.Render(f.IO.Out, format, report.Doc{Blocks: []any{t}, JSON: js})
}

// fusionGates summarises the gates other than shares: "-" when none.
func fusionGates(e *catalog.Fusion) string {
	var g []string
	if e.MinTP > 1 {
		g = append(g, "TP>="+strconv.Itoa(e.MinTP))
	}
	if len(e.ModelsAny) > 0 {
		g = append(g, "model: "+strings.Join(e.ModelsAny, "|"))
	}
	if len(e.ModelsNone) > 0 {
		g = append(g, "not: "+strings.Join(e.ModelsNone, "|"))
	}
	if !e.Ordered {
		g = append(g, "unordered")
	}
	return orDash(strings.Join(g, "; "))
}

func catalogShowRun(f *Factory, opts *CatalogOptions) error {
	format, err := f.OutputFormat()
	if err != nil {
		return err
	}
	c, err := loadCatalog(opts.File)
	if err != nil {
		return err
	}
	t := &report.Table{Name: "entry", Columns: []report.Column{{Name: "Field"}, {Name: "Value"}}}
	add := func(field, value string) { t.Rows = append(t.Rows, []string{field, value}) }
	list := func(v []string) string { return orDash(strings.Join(v, ", ")) }
	if e, ok := c.Fusion(opts.ID); ok {
		add("id", e.ID)
		add("kind", "fusion")
		add("name", e.Name)
		add("framework", e.Framework)
		add("origin", e.Origin)
		add("fused", list(e.Fused))
		if len(e.Chain) == 0 {
			add("chain", "- (no split chain known: only `already fused` rows)")
		}
		for i, step := range e.Chain {
			add(fmt.Sprintf("chain step %d", i+1), strings.Join(step, " / "))
		}
		add("ordered", strconv.FormatBool(e.Ordered))
		add("max_gap_us", shortFloat(e.MaxGapUS))
		add("max_between", strconv.Itoa(e.MaxBetween))
		add("models_any", list(e.ModelsAny))
		add("models_none", list(e.ModelsNone))
		add("min_tp", strconv.Itoa(e.MinTP))
		add("min_share", shortFloat(e.MinShare))
		add("likely_share", shortFloat(e.LikelyShare))
		add("priority", strconv.Itoa(e.Priority))
		add("subsumes", list(e.Subsumes))
		add("sources", list(e.Sources))
		add("switch", orDash(e.Switch))
		add("rationale", e.Rationale)
		return report.Render(f.IO.Out, format, report.Doc{Blocks: []any{t}, JSON: fusionJSON(e)})
	}
	if e, ok := c.Overlap(opts.ID); ok {
		add("id", e.ID)
		add("kind", "overlap")
		add("name", e.Name)
		add("framework", e.Framework)
		add("origin", e.Origin)
		add("keywords", list(e.Keywords))
		add("sources", list(e.Sources))
		add("switch", orDash(e.Switch))
		add("rationale", e.Rationale)
		return report.Render(f.IO.Out, format, report.Doc{Blocks: []any{t}, JSON: overlapJSON(e)})
	}
	msg := fmt.Sprintf("no catalog entry with id %q", opts.ID)
	if near := nearIDs(c, opts.ID); len(near) > 0 {
		msg += "; did you mean " + strings.Join(near, ", ") + "?"
	} else {
		msg += "; 'tracehouse catalog list' shows them all"
	}
	return errors.New(msg)
}

// nearIDs lists up to three ids containing id, or contained in it, so a
// partial or misremembered id gets a suggestion.
func nearIDs(c *catalog.Catalog, id string) []string {
	var out []string
	consider := func(cand string) {
		if len(out) < 3 && id != "" && (strings.Contains(cand, id) || strings.Contains(id, cand)) {
			out = append(out, cand)
		}
	}
	for _, e := range c.Fusions {
		consider(e.ID)
	}
	for _, e := range c.Overlaps {
		consider(e.ID)
	}
	return out
}

// catalogCheckJSON is the JSON shape of one file in `catalog check`.
type catalogCheckJSON struct {
	File     string   `json:"file"`
	OK       bool     `json:"ok"`
	Fusions  int      `json:"fusions"`
	Overlaps int      `json:"overlaps"`
	Problems []string `json:"problems"`
}

func catalogCheckRun(f *Factory, opts *CatalogOptions) error {
	format, err := f.OutputFormat()
	if err != nil {
		return err
	}
	var results []catalogCheckJSON
	failed := false
	for _, file := range opts.Files {
		r := catalogCheckJSON{File: file, OK: true, Problems: []string{}}
		c, err := catalog.Load(file)
		if err != nil {
			failed = true
			r.OK = false
			if errors.Is(err, catalog.ErrInvalid) {
				// one positioned problem per line, as Parse reports them
				r.Problems = strings.Split(err.Error(), "\n")
			} else {
				r.Problems = []string{file + ": " + oneLine(err.Error())}
			}
		} else {
			r.Fusions, r.Overlaps = len(c.Fusions), len(c.Overlaps)
		}
		results = append(results, r)
	}
	if format == report.JSON {
		if err := report.Render(f.IO.Out, format, report.Doc{JSON: results}); err != nil {
			return err
		}
	} else {
		for _, r := range results {
			if r.OK {
				fmt.Fprintf(f.IO.Out, "%s: ok (%d fusions, %d overlaps)\n", r.File, r.Fusions, r.Overlaps)
				continue
			}
			for _, p := range r.Problems {
				fmt.Fprintln(f.IO.ErrOut, p)
			}
		}
	}
	if failed {
		return &silentError{exitError}
	}
	return nil
}

// shortFloat prints 0.5, 4 and 50 without trailing zeros.
func shortFloat(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
