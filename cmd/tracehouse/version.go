package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// VersionOptions are the parsed flags of `tracehouse version`.
type VersionOptions struct {
	IO *IOStreams
}

func newCmdVersion(f *Factory, runF func(*VersionOptions) error) *cobra.Command {
	opts := &VersionOptions{}
	return &cobra.Command{
		Use:   "version",
		Short: "Print the tracehouse version",
		Args:  maxArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.IO = f.IO
			if runF != nil {
				return runF(opts)
			}
			return versionRun(opts)
		},
	}
}

func versionRun(opts *VersionOptions) error {
	_, err := fmt.Fprintf(opts.IO.Out, "tracehouse %s\n", version)
	return err
}
