package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/tracehouse/tracehouse/analysis"
	"github.com/tracehouse/tracehouse/assemble"
	"github.com/tracehouse/tracehouse/catalog"
	"github.com/tracehouse/tracehouse/report"
	"github.com/tracehouse/tracehouse/schema"
	"github.com/tracehouse/tracehouse/target"
)

// The output of the reports more than one command prints (triage and
// capture --then triage; compare and capture --then compare), built by
// the library steps of package assemble.

// triageTarget is one run to report on.
type triageTarget struct {
	run     target.Run
	mapping *target.Run // two-trace mode
}

// triageRender prints the triage reports of resolved targets in format fm
// (CSV: one file per table into out): triage's output, and capture's for
// the runs it has just ingested.
func triageRender(c common, fm report.Format, out string, w *schema.Warehouse, targets []triageTarget, o assemble.TriageOptions) error {
	var csvDoc report.Doc
	for i, t := range targets {
		rep, err := assemble.Triage(c.Ctx, w, t.run, t.mapping, o)
		if err != nil {
			return err
		}
		if err := writeTriage(c, fm, i, rep, &csvDoc); err != nil {
			return err
		}
	}
	if fm == report.CSV && len(targets) > 0 {
		written, err := report.RenderCSVDir(out, csvDoc)
		if err != nil {
			return err
		}
		c.message(fmt.Sprintf("wrote %d CSV file(s) to %s", len(written), out))
	}
	return nil
}

// writeTriage writes the i-th report of a triage in format fm: rendered
// to the output stream (a blank line between text or markdown reports), or
// for CSV added to csvDoc, whose tables are written to files at the end.
func writeTriage(c common, fm report.Format, i int, rep *report.TriageReport, csvDoc *report.Doc) error {
	switch fm {
	case report.CSV:
		for _, tb := range rep.CSVTables() {
			csvDoc.Blocks = append(csvDoc.Blocks, tb)
		}
		return nil
	case report.Text, report.Markdown:
		if i > 0 {
			fmt.Fprintln(c.IO.Out)
		}
	}
	return c.render(fm, rep.Doc(fm))
}

// compareArgs resolves BASE and CANDIDATE (ingesting paths) to one run
// each and compares them (assemble.Compare): compare's work, and capture
// --then compare's. ingestErr is set when a file failed to ingest
// (reported already).
func compareArgs(c common, w *schema.Warehouse, cat *catalog.Lazy, baseArg, candArg string, o assemble.CompareOptions) (rep *analysis.CompareReport, ingestErr, err error) {
	one := func(arg string) (target.Run, error) {
		runs, iErr, err := resolveArg(c, w, cat, arg, "")
		if err != nil {
			return target.Run{}, err
		}
		if iErr != nil {
			ingestErr = iErr
		}
		switch len(runs) {
		case 0:
			return target.Run{}, fmt.Errorf("%s: no trace of it could be stored", arg)
		case 1:
			return runs[0], nil
		}
		labels := make([]string, len(runs))
		for i, x := range runs {
			labels[i] = x.Label
		}
		return target.Run{}, usagef("%s holds %d runs (%s): name one", arg, len(runs), strings.Join(labels, ", "))
	}
	base, err := one(baseArg)
	if err != nil {
		return nil, nil, err
	}
	cand, err := one(candArg)
	if err != nil {
		return nil, nil, err
	}
	rep, err = assemble.Compare(c.Ctx, w, base, cand, baseArg, candArg, o)
	var same *assemble.SameRunError
	var notComparable *assemble.NotComparableError
	if errors.As(err, &same) || errors.As(err, &notComparable) {
		return nil, nil, &usageError{err}
	}
	if err != nil {
		return nil, nil, err
	}
	return rep, ingestErr, nil
}

// printCompare prints a comparison in format fm; CSV writes one file per
// table into out and the verdict line to standard error.
func printCompare(c common, fm report.Format, out string, rep *analysis.CompareReport) error {
	if fm != report.CSV {
		return c.render(fm, report.CompareDoc(rep, fm))
	}
	tables := report.CompareCSVTables(rep)
	blocks := make([]any, len(tables))
	for i, t := range tables {
		blocks[i] = t
	}
	written, err := report.RenderCSVDir(out, report.Doc{Blocks: blocks})
	if err != nil {
		return err
	}
	c.message(fmt.Sprintf("wrote %d CSV file(s) to %s", len(written), out))
	fmt.Fprintln(c.IO.ErrOut, report.CompareVerdictLine(rep))
	return nil
}
