package main

import (
	"github.com/tracehouse/tracehouse/assemble"
	"github.com/tracehouse/tracehouse/report"
	"github.com/tracehouse/tracehouse/schema"
)

// runDetail prints `runs RUN` (assemble.RunDetail); CSV is its traces'
// table alone.
func runDetail(opts *RunsOptions, w *schema.Warehouse) error {
	doc, traces, err := assemble.RunDetail(opts.Ctx, w, opts.Run)
	if err != nil {
		return err
	}
	if opts.Format == report.CSV {
		doc.Blocks = []any{traces}
	}
	return opts.render(opts.Format, doc)
}
