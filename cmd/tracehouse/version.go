package main

import (
	"context"
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/tracehouse/tracehouse/schema"
)

// version is set at build time with -ldflags "-X main.version=..."; without
// it the module version from the build info is used.
var version = "dev"

// VersionOptions are the parsed flags of `tracehouse version`.
type VersionOptions struct {
	IO  *IOStreams
	Ctx context.Context
}

func newCmdVersion(f *Factory, runF func(*VersionOptions) error) *cobra.Command {
	opts := &VersionOptions{}
	return &cobra.Command{
		Use:   "version",
		Short: "Print the tracehouse version, its VCS commit and the DuckDB version",
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

// buildVersion is what the binary knows of itself: the version (ldflags,
// else the module version, else "dev") and the VCS commit with "-dirty"
// when the tree had local changes ("unknown" outside a VCS build).
func buildVersion(info *debug.BuildInfo, ok bool) (ver, commit string) {
	ver, commit = version, "unknown"
	if !ok {
		return ver, commit
	}
	if ver == "dev" && info.Main.Version != "" && info.Main.Version != "(devel)" {
		ver = info.Main.Version
	}
	dirty := false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			commit = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if dirty && commit != "unknown" {
		commit += "-dirty"
	}
	return ver, commit
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
