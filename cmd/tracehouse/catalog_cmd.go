package main

import "github.com/spf13/cobra"

func newCmdCatalog(f *Factory) *cobra.Command {
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
		Args: subcommandOnly,
		RunE: showHelp,
	}
	cmd.AddCommand(
		newCmdCatalogList(f, nil),
		newCmdCatalogShow(f, nil),
		newCmdCatalogCheck(f, nil),
	)
	return cmd
}
