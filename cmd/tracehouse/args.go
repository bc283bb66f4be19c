package main

import "github.com/spf13/cobra"

// minArgs and maxArgs are cobra's argument checks reporting usage errors.
func minArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < n {
			return usagef("%s needs at least %d argument(s)", cmd.CommandPath(), n)
		}
		return nil
	}
}

func maxArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) > n {
			return usagef("%s takes at most %d argument(s), got %d", cmd.CommandPath(), n, len(args))
		}
		return nil
	}
}
