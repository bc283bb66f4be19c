package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/tracehouse/tracehouse/catalog"
	"github.com/tracehouse/tracehouse/report"
)

// CatalogShowOptions are the parsed arguments and flags of `tracehouse
// catalog show`.
type CatalogShowOptions struct {
	common
	Format report.Format
	// File is --catalog: a user catalog to read instead of the embedded one.
	File string
	ID   string
}

func newCmdCatalogShow(f *Factory, runF func(*CatalogShowOptions) error) *cobra.Command {
	opts := &CatalogShowOptions{}
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Show every field of one catalog entry",
		Example: `  tracehouse catalog show sglang-flashinfer-allreduce-fusion
  tracehouse catalog show vllm-shared-experts-stream --format json`,
		Args: exactArgs(1, "one entry id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			var err error
			opts.common = f.common(cmd)
			if opts.Format, err = f.outputFormat(); err != nil {
				return err
			}
			opts.ID = args[0]
			if runF != nil {
				return runF(opts)
			}
			return catalogShowRun(opts)
		},
	}
	cmd.Flags().StringVar(&opts.File, "catalog", "", "read `FILE` instead of the embedded catalog")
	return cmd
}

func catalogShowRun(opts *CatalogShowOptions) error {
	c, err := loadCatalog(opts.File)
	if err != nil {
		return err
	}
	t := &report.Table{Name: "entry", Columns: []report.Column{{Name: "Field", Keep: true}, {Name: "Value", Wrap: true}}}
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
		return opts.render(opts.Format, report.Doc{Blocks: []any{t}, JSON: fusionJSON(e)})
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
		return opts.render(opts.Format, report.Doc{Blocks: []any{t}, JSON: overlapJSON(e)})
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
