package main

import (
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/tracehouse/tracehouse/catalog"
	"github.com/tracehouse/tracehouse/report"
)

// catalogKinds are the values --kind accepts.
var catalogKinds = []string{"fusion", "overlap"}

// CatalogListOptions are the parsed flags of `tracehouse catalog list`.
type CatalogListOptions struct {
	common
	Format report.Format
	// File is --catalog: a user catalog to read instead of the embedded one.
	File string
	// Kind (fusion | overlap) and Framework filter the list; "" = all.
	Kind      string
	Framework string
}

func newCmdCatalogList(f *Factory, runF func(*CatalogListOptions) error) *cobra.Command {
	opts := &CatalogListOptions{}
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
			var err error
			opts.common = f.common(cmd)
			if opts.Format, err = f.outputFormat(); err != nil {
				return err
			}
			if opts.Kind != "" && !slices.Contains(catalogKinds, opts.Kind) {
				return usagef("--kind %q: want fusion or overlap", opts.Kind)
			}
			if runF != nil {
				return runF(opts)
			}
			return catalogListRun(opts)
		},
	}
	cmd.Flags().StringVar(&opts.File, "catalog", "", "read `FILE` instead of the embedded catalog")
	cmd.Flags().StringVar(&opts.Kind, "kind", "", "only fusion or overlap entries")
	cmd.Flags().StringVar(&opts.Framework, "framework", "", "only entries of this framework ("+strings.Join(catalog.Frameworks, ", ")+")")
	_ = cmd.RegisterFlagCompletionFunc("kind", cobra.FixedCompletions(catalogKinds, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("framework", cobra.FixedCompletions(catalog.Frameworks, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func catalogListRun(opts *CatalogListOptions) error {
	c, err := loadCatalog(opts.File)
	if err != nil {
		return err
	}
	t := &report.Table{Name: "catalog", Empty: "no catalog entries match",
		// IDs are typed back into `catalog show`: never cut; gates and
		// switches wrap or go under the row, whole.
		Columns: []report.Column{{Name: "ID", Keep: true}, {Name: "Kind", Keep: true}, {Name: "Framework", Keep: true},
			{Name: "Origin", Keep: true, Detail: 1}, {Name: "Steps", Right: true, Detail: 1}, {Name: "Gates", Wrap: true, Detail: 2},
			{Name: "Min/likely %", Keep: true}, {Name: "Priority", Short: "Prio", Right: true},
			{Name: "Switch", Wrap: true, Detail: 2}}}
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
	return opts.render(opts.Format, report.Doc{Blocks: []any{t}, JSON: js})
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
