package main

import (
	"context"
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/tracehouse/tracehouse/schema"
)

// VersionOptions are the parsed flags of `tracehouse version`.
type VersionOptions struct {
	IO  *IOStreams
	Ctx context.Context
}

func newCmdVersion(f *Factory, runF func(*VersionOptions) error) *cobra.Command {
	opts := &VersionOptions{}
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, its VCS commit and the DuckDB version",
		Args:  maxArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.IO = f.IO
			opts.Ctx = cmd.Context()
			if runF != nil {
				return runF(opts)
			}
			return versionRun(opts)
		},
	}
}

func versionRun(opts *VersionOptions) error {
	ver, commit := buildVersion(debug.ReadBuildInfo())
	engine, err := schema.EngineVersion(opts.Ctx)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(opts.IO.Out, "tracehouse %s\ncommit %s\nduckdb %s\n", ver, commit, engine)
	return err
}
