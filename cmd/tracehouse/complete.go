package main

import (
	"slices"

	"github.com/spf13/cobra"

	"github.com/tracehouse/tracehouse/queries"
)

// completeRuns offers the warehouse's run labels for the first max
// positional arguments (max < 0: every one), never creating a warehouse and
// saying nothing when there is none.
func completeRuns(f *Factory, max int) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if max >= 0 && len(args) >= max {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		w, err := f.warehouse()(cmd.Context(), false)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		defer w.Close()
		runs, err := queries.Runs(cmd.Context(), w.DB)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []cobra.Completion
		for _, r := range runs {
			if !slices.Contains(args, r.Label) {
				out = append(out, r.Label)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}
