package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tracehouse/tracehouse/report"
	"github.com/tracehouse/tracehouse/schema"
)

// ReclassifyOptions are the parsed flags of `tracehouse reclassify`.
type ReclassifyOptions struct {
	common
}

func newCmdReclassify(f *Factory, runF func(*ReclassifyOptions) error) *cobra.Command {
	opts := &ReclassifyOptions{}
	return &cobra.Command{
		Use:   "reclassify",
		Short: "Re-apply the kernel classifier to every stored kernel name",
		Long: `Set family and category of every kernel name from the warehouse's classifier
rules (table classifier_rules). Opening a warehouse with a newer tracehouse
already reclassifies when its rules changed; run this when classifier_rules
was changed outside tracehouse (no tracehouse command edits it; the duckdb
CLI can). It also sets every name's display_name (the name reports show),
which a warehouse made by an older tracehouse lacks or has in an older form.
No trace is re-read.`,
		Example: `  tracehouse reclassify
  tracehouse sql "SELECT family, count(*) FROM kernel_names GROUP BY 1"`,
		Args:        maxArgs(0),
		Annotations: writes,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.common = f.common(cmd)
			if runF != nil {
				return runF(opts)
			}
			return reclassifyRun(opts)
		},
	}
}

func reclassifyRun(opts *ReclassifyOptions) error {
	w, err := opts.Warehouse(opts.Ctx, true)
	if err != nil {
		return err
	}
	defer w.Close()
	n, err := schema.Classify(opts.Ctx, w.DB, true)
	if err != nil {
		return err
	}
	d, err := schema.FillDisplayNames(opts.Ctx, w.DB, true)
	if err != nil {
		return err
	}
	v, err := schema.ClassifierVersion(opts.Ctx, w.DB)
	if err != nil {
		return err
	}
	return report.Render(opts.IO.Out, report.Text, report.Doc{Width: opts.Width, Blocks: []any{report.Lines{
		fmt.Sprintf("classifier version %d (%d rules): %d kernel name(s) changed family or category, %d display name(s) set", v.Version, v.Rules, n, d)}}})
}
