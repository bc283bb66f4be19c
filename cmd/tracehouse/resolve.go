package main

import (
	"github.com/tracehouse/tracehouse/catalog"
	"github.com/tracehouse/tracehouse/ingest"
	"github.com/tracehouse/tracehouse/schema"
	"github.com/tracehouse/tracehouse/target"
)

// resolveArg resolves one RUN argument for a report (target.Resolve: a
// selector or label names a stored run, a path is ingested first, with
// role), showing the ingest's progress and summarizing its files:
// ingestErr is set when a file failed (reported already; the report goes
// on with what landed and the exit status is 1). runs is empty when no
// file of a path could be stored.
func resolveArg(c common, w *schema.Warehouse, cat *catalog.Lazy, arg, role string) (runs []target.Run, ingestErr, err error) {
	pctx, iopt, done := withProgress(c.Ctx, c, ingest.Options{Role: role})
	r, err := target.Resolve(pctx, w, arg, iopt, cat)
	done()
	if err != nil {
		return nil, nil, err
	}
	if r.Ingest != nil {
		ingestErr = summarize(c.IO, r.Ingest)
	}
	return r.Runs, ingestErr, nil
}
