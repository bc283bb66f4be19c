package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tracehouse/tracehouse/schema"
)

func newCmdReclassify(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "reclassify",
		Short: "Re-apply the kernel classifier to every stored kernel name",
		Long: `Set family and category of every kernel name from the warehouse's classifier
rules (table classifier_rules). Opening a warehouse with a newer tracehouse
already reclassifies when its rules changed; run this after editing the rules
table yourself. No trace is re-read.`,
		Example: `  tracehouse reclassify
  tracehouse sql "SELECT family, count(*) FROM kernel_names GROUP BY 1"`,
		Args: maxArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			w, err := f.Open(cmd.Context(), false)
			if err != nil {
				return err
			}
			defer w.Close()
			n, err := schema.Classify(cmd.Context(), w.DB, true)
			if err != nil {
				return err
			}
			v, err := schema.ClassifierVersion(cmd.Context(), w.DB)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(f.IO.Out, "classifier version %d (%d rules): %d kernel name(s) changed family or category\n", v.Version, v.Rules, n)
			return err
		},
	}
}
