// Package ingest reads torch.profiler (Kineto) Chrome traces into the
// warehouse: discover files -> decode (gzip + streaming split + parallel
// event decoding) -> normalise (names, sites, per-thread attribution) ->
// load (DuckDB appenders, one transaction per trace file).
package ingest

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tracehouse/tracehouse/schema"
	"github.com/tracehouse/tracehouse/vocab"
)

//go:embed sql/*.sql
var sqlFiles embed.FS

func stmt(name string) string {
	b, err := sqlFiles.ReadFile("sql/" + name + ".sql")
	if err != nil {
		// The files are embedded at build time; a missing one is a build bug.
		panic("ingest: missing embedded sql/" + name + ".sql")
	}
	return string(b)
}

// MemoryLimit is the Go heap size ingest is tuned for (runtime/debug's soft
// limit, set by the command unless GOMEMLIMIT is): it keeps the garbage of
// decoded batches from doubling the heap on multi-GB traces.
const MemoryLimit = 160 << 20

// Options say how to ingest; Validate checks them.
type Options struct {
	Run       string // one label for every file's run, "" = from directories
	Append    bool   // add to the existing run labelled Run (else *RunExistsError)
	Framework string // framework of every file, "" = detect
	// FrameworkEvidence says how Framework was told ("" = the --framework
	// flag); capture passes what it detected from the server.
	FrameworkEvidence string
	// Model is the runs' model when their server arguments do not say
	// (capture: the model the server reported).
	Model string
	// SourceDir, with Run, is the run's source directory (default: the
	// directory given, or a file's parent; capture: the capture's).
	SourceDir string
	Stage     string            // stage of every file, "" = detect
	Role      string            // two-trace role of every file, "" = detect
	Tags      map[string]string // key=value tags added to the runs
	Jobs      int               // files in parallel, 0 = CPUs
	Replace   bool              // re-ingest files already stored
	// Progress, when set, hears about bytes read (for a progress bar).
	Progress Progress
	// Notice, when set, hears one line per file skipped on purpose.
	Notice func(string)
	// NsysCache is where Nsight Systems reports (.nsys-rep) are exported
	// to SQLite, once each; "" = beside the warehouse file.
	NsysCache string
	// Known, when set, says whether a content hash is stored elsewhere
	// (a lake): such a file is skipped as already ingested, unless Replace.
	Known func(contentHash string) (bool, error)

	// linkInSQL links every trace's kernels with link_kernels.sql and
	// link_steps.sql, as Nsight exports are (TestLinkInGoMatchesSQL).
	linkInSQL bool
}

// Progress is told the total input size, then bytes as they are read.
type Progress interface {
	Start(total int64)
	Add(n int64)
}

// ParsedProgress is a Progress that also hears of the trace bytes parsed,
// after decompression (what a rate of parsing counts; Add counts bytes
// read from disk, compressed or not).
type ParsedProgress interface {
	Progress
	Parsed(n int64)
}

// Status of one file.
const (
	StatusIngested = "ingested"
	StatusAlready  = "already ingested"
	StatusSkipped  = "skipped"
	StatusFailed   = "failed"
)

// FileResult reports one file.
type FileResult struct {
	Path      string
	Status    string
	Err       error
	Reason    string // why skipped
	Run       string
	TraceID   int64
	Events    int64
	GPUEvents int64
	JSONBytes int64
	Elapsed   time.Duration
}

// Result reports an ingest.
type Result struct {
	Files []FileResult
}

// Failed counts failed files.
func (r *Result) Failed() int {
	n := 0
	for _, f := range r.Files {
		if f.Status == StatusFailed {
			n++
		}
	}
	return n
}

// Err is nil when no file failed, else every failed file's error (each
// names its file), joined: for callers that want every file or nothing.
func (r *Result) Err() error {
	var errs []error
	for _, f := range r.Files {
		switch {
		case f.Status != StatusFailed:
		case f.Err != nil:
			errs = append(errs, f.Err)
		default:
			errs = append(errs, fmt.Errorf("%s: failed", f.Path))
		}
	}
	return errors.Join(errs...)
}

// Stored counts the files the warehouse holds after the ingest: those it
// stored and those already there.
func (r *Result) Stored() int {
	n := 0
	for _, f := range r.Files {
		if f.Status == StatusIngested || f.Status == StatusAlready {
			n++
		}
	}
	return n
}

// Interrupted is the one line an interrupted ingest ends with, whether it
// was loading files or saving their aggregates afterwards (target.Finish):
// each file and each saved copy is one transaction, and the same command
// run again stores the rest and saves what is missing.
func (r *Result) Interrupted() error { return r.interrupted(nil) }

// interrupted is Interrupted for an ingest stopped by a signal and a
// warehouse failure at once: files whose COMMIT the failure left in doubt
// and the warehouse file could not settle (unsettled says why) are counted
// apart, as the warehouse failure's own line counts them.
func (r *Result) interrupted(unsettled error) error {
	msg := fmt.Sprintf("interrupted: %d of %d file(s) stored, nothing partial", r.Stored(), len(r.Files))
	if n := unknownCommits(r.Files); n > 0 {
		why := "the warehouse could not be asked"
		if unsettled != nil {
			why = causeLine(unsettled)
		}
		msg += fmt.Sprintf("; %d more may be stored: %s", n, why)
	}
	return errors.New(msg + "; run the same command again to finish")
}

// FinishFailed is the one line for a failure of the warehouse while the
// aggregates are saved after the files (target.Finish; not a run's own
// failure, a *FinishError): what failed first, and how many files are
// stored. Each file and each saved copy is one transaction, and the same
// command run again saves what is missing.
func (r *Result) FinishFailed(err error) error {
	return &warehouseError{err: err, msg: fmt.Sprintf("save the aggregates: %s; %d of %d file(s) stored, nothing partial; run the same command again to save the rest",
		causeLine(err), r.Stored(), len(r.Files))}
}

// Ingest ingests paths (files or directories) into the warehouse. A damaged
// file fails alone: its error is in the result, nothing of it is stored, and
// the other files still land. The error return is for problems that stop
// the whole ingest (bad arguments, no traces, database failures). After a
// failure that invalidated DuckDB (a disk full at a checkpoint), which
// then refuses every statement, a file whose COMMIT it left in doubt is
// settled by closing w.DB and opening the warehouse file again, read-only.
func Ingest(ctx context.Context, w *schema.Warehouse, paths []string, opt Options) (*Result, error) {
	return ingestBounded(ctx, w, paths, opt, DuckDBMemoryPerJob, UnboundedLoadBytes)
}

// UnboundedLoadBytes is the size of input files (as stored, gzip or not)
// below which an ingest leaves DuckDB's memory unbounded
// (DuckDBMemoryPerJob): such a load holds a few MiB in DuckDB, never near
// the bound, and each change of DuckDB's memory_limit made it hand every
// freed page back to the kernel (jemalloc purged), which the statements
// after it faulted in again. Even at 30x gzip, 4 MiB of files is 120 MB of
// JSON, about 40 MiB held by DuckDB (a 1 GB trace: 330 MiB).
const UnboundedLoadBytes = 4 << 20

// ingestBounded is Ingest with DuckDB's memory bounded to perJobMiB per
// file loading at once (tests make it tight) when the files hold
// unboundedBelow bytes or more.
func ingestBounded(ctx context.Context, w *schema.Warehouse, paths []string, opt Options, perJobMiB int, unboundedBelow int64) (*Result, error) {
	if w.ReadOnly {
		return nil, errors.New("warehouse is open read-only")
	}
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	if opt.NsysCache == "" {
		opt.NsysCache = defaultNsysCache(w.Path)
	}
	cands, notices, err := discover(paths, opt.Run != "")
	if err != nil {
		return nil, err
	}
	for _, n := range notices {
		if opt.Notice != nil {
			opt.Notice(n)
		}
	}
	names, err := loadInterner(ctx, w.DB)
	if err != nil {
		return nil, err
	}
	runs, err := resolveRuns(ctx, w.DB, cands, opt)
	if err != nil {
		return nil, err
	}
	var total int64
	for _, c := range cands {
		total += c.size
	}
	if opt.Progress != nil {
		opt.Progress.Start(total)
	}
	jobs := opt.Jobs
	if jobs <= 0 {
		jobs = runtime.NumCPU()
	}
	jobs = min(jobs, len(cands))
	res := &Result{Files: make([]FileResult, len(cands))}
	var bound *duckBound
	if total >= unboundedBelow {
		if bound, err = boundDuckDB(ctx, w, perJobMiB*max(1, jobs)); err != nil {
			return nil, err
		}
	}
	// Sweep records spill beside the warehouse file, as DuckDB's own do:
	// the system's temporary directory is often memory (tmpfs).
	spillDir := ""
	if w.Path != "" && w.Path != schema.Memory {
		spillDir = filepath.Dir(w.Path)
	}
	// Before any trace's transaction begins: one that has read the
	// warehouse would not see the rows' table function registered later.
	if err := w.RegisterRows(ctx); err != nil {
		return nil, errors.Join(err, bound.restore(ctx))
	}
	callers, err := CallersOnly(ctx, w.DB)
	if err != nil {
		return nil, errors.Join(err, bound.restore(ctx))
	}
	fatal := loadFiles(ctx, w.DB, cands, runs, names, opt, jobs, loadEnv{spillDir: spillDir, bound: bound, rows: w}, res.Files)
	callersErr := callers()
	// The finish that follows (aggregates.Finish) is the command's next
	// peak: after large traces, hand the heap the load freed back to the
	// system first, or it stays resident under the finish (1 GB of tiny
	// events: about 60 MiB). One collection per ingest, not per file.
	var read int64
	for _, f := range res.Files {
		read += f.JSONBytes
	}
	if read >= freeAfterBytes {
		debug.FreeOSMemory()
	}
	for i := range res.Files {
		if res.Files[i].Path == "" {
			err := ctx.Err()
			if err == nil {
				err = fmt.Errorf("%s: not loaded: the warehouse failed", cands[i].path)
			}
			res.Files[i] = FileResult{Path: cands[i].path, Status: StatusFailed, Err: err}
		}
	}
	// A warehouse failure can leave a file's COMMIT in doubt (interrupted
	// when another loader's checkpoint failed, it may have stored the
	// trace): the warehouse file says which, so the count below is what
	// it holds.
	var unsettled error
	var dbErr *dbError
	warehouseFailed := errors.As(fatal, &dbErr)
	if warehouseFailed {
		unsettled = settleUnknown(ctx, w, res.Files)
	}
	// A file that failed may have had its new names stored with another
	// file's (they share the interner): those no stored row uses go.
	if ctx.Err() == nil && fatal == nil && res.Failed() > 0 {
		if err := names.dropUnused(ctx, w.DB); err != nil {
			return res, err
		}
	}
	// A warehouse failure stops the ingest and, when it invalidated DuckDB
	// (a disk full at a checkpoint), fails every statement after it too:
	// its own error, naming the file being stored, is the one reported,
	// with how many files were stored before it.
	if err := errors.Join(bound.restore(ctx), callersErr); err != nil && !warehouseFailed {
		return res, err
	}
	stored := map[string]bool{}
	for _, f := range res.Files {
		if f.Status == StatusIngested {
			stored[f.Run] = true
		}
	}
	if err := finishRuns(ctx, w.DB, runs, stored); err != nil && !warehouseFailed {
		return res, err
	}
	if opt.Notice != nil {
		for _, ri := range sortedRuns(runs) {
			if ri.taken != "" && stored[ri.label] {
				opt.Notice(fmt.Sprintf("%s: run %s is an earlier capture, so these traces are run %s (to add them to %s instead: ingest --run %s --append)",
					ri.dir, ri.taken, ri.label, ri.taken, ri.taken))
			}
		}
	}
	if ctx.Err() != nil {
		// Interrupted: whatever was mid-load rolled back; say how to finish.
		return res, res.interrupted(unsettled)
	}
	if warehouseFailed {
		msg := fmt.Sprintf("%s; %d of %d file(s) stored, nothing partial", warehouseCause(dbErr, res.Files), res.Stored(), len(res.Files))
		if n := unknownCommits(res.Files); n > 0 {
			// the warehouse file could not be asked (unsettled says why)
			msg += fmt.Sprintf("; %d more may be stored: %s", n, causeLine(unsettled))
		}
		return res, &warehouseError{err: errors.Join(dbErr.err, unsettled), msg: msg}
	}
	return res, fatal
}

// warehouseCause is the line that tells a warehouse failure, naming the
// file being stored when it happened. With several loaders, each meets
// the failure in its own statement, and the first to report (first) may
// only have met DuckDB's "invalidated" reply to a statement after the
// failing one: the file whose statement failed itself (a COMMIT whose
// checkpoint found the disk full) is the one named. Another loader's
// statement cut short when the ingest stopped (context canceled) is
// neither.
func warehouseCause(first *dbError, files []FileResult) string {
	named := func(f FileResult, d *dbError) string {
		line := causeLine(d)
		if !strings.Contains(line, f.Path) {
			line = f.Path + ": " + line
		}
		var u *commitUnknown
		if f.Status == StatusIngested && errors.As(d, &u) {
			// its COMMIT failed, and the warehouse file holds its trace
			line += " (the trace is stored)"
		}
		return line
	}
	var root, fallback string
	for _, f := range files {
		var d *dbError
		if f.Err == nil || !errors.As(f.Err, &d) {
			continue
		}
		switch {
		case errors.Is(d, context.Canceled):
			// the ingest stopping this file's loader after the failure
		case isConsequence(d):
			if d == first && fallback == "" {
				fallback = named(f, d)
			}
		case d == first:
			return named(f, d)
		case root == "":
			root = named(f, d)
		}
	}
	switch {
	case root != "":
		return root
	case !isConsequence(first) && !errors.Is(first, context.Canceled):
		return causeLine(first) // met outside any file (a connection)
	case fallback != "":
		return fallback
	}
	return causeLine(first)
}

// Stages are the values Options.Stage takes besides "" (detect): a trace
// is never declared of unknown stage.
var Stages = []string{vocab.Prefill, vocab.Decode, vocab.Mixed}

// Validate checks the options' enumerated values: nil, or an *OptionError
// per bad value (joined when several are bad).
func (opt Options) Validate() error {
	check := func(option, v string, ok ...string) error {
		if v == "" || slices.Contains(ok, v) {
			return nil
		}
		return &OptionError{Option: option, Value: v, Want: ok}
	}
	var appendErr, labelErr error
	if opt.Append && opt.Run == "" {
		appendErr = errors.New("append: name the run to add to (Run)")
	}
	if opt.Run != "" {
		labelErr = CheckLabel(opt.Run)
	}
	// Tags are stored as typed, so they must be UTF-8 (a directory name
	// need not: it is repaired).
	var textErrs []error
	for _, k := range slices.Sorted(maps.Keys(opt.Tags)) {
		if !utf8.ValidString(k) || !utf8.ValidString(opt.Tags[k]) {
			textErrs = append(textErrs, fmt.Errorf("tag %q=%q is not valid UTF-8", k, opt.Tags[k]))
		}
	}
	return errors.Join(
		errors.Join(textErrs...),
		appendErr,
		labelErr,
		check("framework", opt.Framework, vocab.Frameworks...),
		check("stage", opt.Stage, Stages...),
		check("role", opt.Role, vocab.Roles...),
	)
}

// CheckLabel refuses a run label that could not be named back: empty, not
// UTF-8, or reading as a selector (every label beginning with @ or tag:).
func CheckLabel(label string) error {
	switch {
	case strings.TrimSpace(label) == "":
		return errors.New("run label is empty")
	case !utf8.ValidString(label):
		// stored as typed, so UTF-8 (a directory name need not be: it is repaired)
		return fmt.Errorf("run label %q is not valid UTF-8", label)
	case strings.HasPrefix(label, "@") || strings.HasPrefix(label, "tag:"):
		return fmt.Errorf("run label %q: labels never begin with @ or tag: (those are selectors: @latest, @latest~N, tag:KEY=VALUE)", label)
	}
	return nil
}

// OptionError is an option whose value is none of those it takes. Option is
// the lower-case name of the Options field ("framework", "stage", "role").
type OptionError struct {
	Option string
	Value  string
	Want   []string
}

func (e *OptionError) Error() string {
	return fmt.Sprintf("%s %q: want one of %s", e.Option, e.Value, strings.Join(e.Want, ", "))
}
