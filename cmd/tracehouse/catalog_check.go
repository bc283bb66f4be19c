package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/tracehouse/tracehouse/catalog"
	"github.com/tracehouse/tracehouse/report"
)

// CatalogCheckOptions are the parsed arguments and flags of `tracehouse
// catalog check`.
type CatalogCheckOptions struct {
	common
	Format report.Format
	Files  []string
}

func newCmdCatalogCheck(f *Factory, runF func(*CatalogCheckOptions) error) *cobra.Command {
	opts := &CatalogCheckOptions{}
	return &cobra.Command{
		Use:   "check FILE...",
		Short: "Validate catalog files",
		Long: `Validate catalog files as --catalog would read them. A good file prints
"FILE: ok (N fusions, M overlaps)"; a bad one prints each problem on one line
to standard error, as FILE:LINE: entry: field: message, and the exit status
is 1.`,
		Example: `  tracehouse catalog check my-catalog.yaml
  tracehouse catalog check catalogs/*.yaml`,
		Args: minArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var err error
			opts.common = f.common(cmd)
			if opts.Format, err = f.outputFormat(); err != nil {
				return err
			}
			opts.Files = args
			if runF != nil {
				return runF(opts)
			}
			return catalogCheckRun(opts)
		},
	}
}

// catalogCheckJSON is the JSON shape of one file in `catalog check`.
type catalogCheckJSON struct {
	File     string   `json:"file"`
	OK       bool     `json:"ok"`
	Fusions  int      `json:"fusions"`
	Overlaps int      `json:"overlaps"`
	Problems []string `json:"problems"`
}

func catalogCheckRun(opts *CatalogCheckOptions) error {
	var results []catalogCheckJSON
	failed := false
	for _, file := range opts.Files {
		r := catalogCheckJSON{File: file, OK: true, Problems: []string{}}
		c, err := catalog.Load(file)
		if err != nil {
			failed = true
			r.OK = false
			if errors.Is(err, catalog.ErrInvalid) {
				// one positioned problem per line, as Parse reports them
				r.Problems = strings.Split(err.Error(), "\n")
			} else {
				r.Problems = []string{file + ": " + oneLine(err.Error())}
			}
		} else {
			r.Fusions, r.Overlaps = len(c.Fusions), len(c.Overlaps)
		}
		results = append(results, r)
	}
	if opts.Format == report.JSON {
		if err := report.Render(opts.IO.Out, opts.Format, report.Doc{JSON: results}); err != nil {
			return err
		}
	} else {
		for _, r := range results {
			if r.OK {
				fmt.Fprintf(opts.IO.Out, "%s: ok (%d fusions, %d overlaps)\n", r.File, r.Fusions, r.Overlaps)
				continue
			}
			for _, p := range r.Problems {
				fmt.Fprintln(opts.IO.ErrOut, p)
			}
		}
	}
	if failed {
		return &silentError{exitError}
	}
	return nil
}
