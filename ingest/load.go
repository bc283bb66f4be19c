package ingest

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/tracehouse/tracehouse/ingest/decode"
	"github.com/tracehouse/tracehouse/inline"
	"github.com/tracehouse/tracehouse/limits"
	"github.com/tracehouse/tracehouse/migrations"
	"github.com/tracehouse/tracehouse/parseerr"
	"github.com/tracehouse/tracehouse/schema"
	"github.com/tracehouse/tracehouse/vocab"
)

// loader loads one file at a time on its own connection.
type loader struct {
	db       *sql.DB
	conn     *sql.Conn
	names    *interner
	opt      Options
	decoders int
	seen     *contentClaims
	env      loadEnv
	sole     bool // the ingest's only loader: names commit with its traces (storeNames)
}

// loadEnv is what every loader of one ingest shares about the warehouse.
type loadEnv struct {
	spillDir string     // where sweep records spill, "" = the system's temporary directory
	bound    *duckBound // DuckDB's memory bound, nil when there is none
	rows     rowInserter
}

// rowInserter hands typed rows to SQL (*schema.Warehouse).
type rowInserter interface {
	InsertRows(ctx context.Context, conn *sql.Conn, table string, cols []schema.Column, src schema.RowSource) error
	ExecRows(ctx context.Context, conn *sql.Conn, query string, cols []schema.Column, src schema.RowSource, args ...any) error
}

// contentClaims remembers which file of this ingest took each content hash,
// so the same bytes under two paths in one ingest land once (the warehouse
// check alone cannot see a copy still being loaded on another connection).
type contentClaims struct {
	mu     sync.Mutex
	byHash map[string]string
}

// claim returns "" when hash is now path's, else the path that has it.
func (c *contentClaims) claim(hash, path string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if other, ok := c.byHash[hash]; ok {
		return other
	}
	c.byHash[hash] = path
	return ""
}

// tables a trace's rows go to, in the order of loader.specs.
const (
	appKernels = iota
	appLaunches
	appOps
	appAnnotations
	appFrames // JSON traces insert frames and derived rows typed (frameSource)
	appDerived
)

var specs = []schema.Spec{
	{Table: schema.Kernels, Columns: []string{"kernel_id", "trace_id", "run_id", "rank", "stage", "name_id", "kind",
		"ts_ns", "dur_ns", "device", "stream", "correlation", "external_id", "grid", "block", "bytes", "graph_launch"}},
	{Table: schema.Launches, Columns: []string{"launch_id", "trace_id", "name", "ts_ns", "dur_ns", "pid", "tid", "correlation", "external_id"}},
	{Table: schema.CPUOps, Columns: []string{"op_id", "trace_id", "name", "ts_ns", "dur_ns", "pid", "tid", "external_id", "sequence_number", "input_dims", "input_types"}},
	{Table: schema.Annotations, Columns: []string{"trace_id", "name", "cat", "ts_ns", "dur_ns", "pid", "tid", "stage"}},
	{Table: schema.PyFrameRows, Columns: frameColumnNames},
	{Table: "_derived", Columns: derivedColumnNames},
}

// freeAfterBytes is the size of JSON from which a trace's load hands its
// freed heap back to the system before the linking SQL (and the ingest
// before the finish). Each hand-back is a forced collection and the page
// faults of growing again; below this size the load peaks well under
// 400 MiB without it: the 270 MB SGLang trace (282 MB of JSON) took
// 95-99 k faults and peaked at 217-236 MiB without, 100-108 k and
// 194-228 MiB with them at 128 MB.
const freeAfterBytes = 512 << 20

// releaseAfterBytes is the size of JSON from which a trace's load hands
// DuckDB's freed pages back (schema.ReleaseFreedPages) after its SQL and
// before its link and commit. Below it the load peaks well under 400 MiB
// and the purge's page faults only cost time: the 270 MB SGLang trace
// (282 MB of JSON) peaked at 231-249 MiB with them, 225-239 without, for
// about 0.1 CPU-s more.
const releaseAfterBytes = 512 << 20

// traceTables are every table holding a trace's rows, for Options.Replace.
var traceTables = []string{schema.Kernels, schema.Launches, schema.CPUOps, schema.PyFrameRows, schema.Annotations, schema.Steps}

// file ingests one candidate. Errors of the file are in the result; a
// *dbError in it means the warehouse itself failed.
func (l *loader) file(ctx context.Context, c candidate, run *runInfo) FileResult {
	start := time.Now()
	res := FileResult{Path: c.path, Run: run.label}
	if c.refused != nil {
		res.Status, res.Err = StatusFailed, c.refused
		return res
	}
	hash, err := c.hash, error(nil)
	if hash == "" {
		hash, err = hashFile(ctx, c.path)
	}
	if err != nil {
		res.Status, res.Err = StatusFailed, fmt.Errorf("%s: %w", c.path, unwrapPathError(err))
		return res
	}
	if other := l.seen.claim(hash, c.path); other != "" {
		res.Status, res.Reason = StatusAlready, "same content as "+other
		return res
	}
	if l.opt.Known != nil && !l.opt.Replace {
		known, err := l.opt.Known(hash)
		if err != nil {
			res.Status, res.Err = StatusFailed, fmt.Errorf("%s: %w", c.path, err)
			return res
		}
		if known {
			res.Status = StatusAlready
			return res
		}
	}
	var old int64
	err = l.conn.QueryRowContext(ctx, `SELECT trace_id FROM traces WHERE content_hash = ?`, hash).Scan(&old)
	switch {
	case err == nil && !l.opt.Replace:
		res.Status, res.TraceID = StatusAlready, old
		return res
	case err != nil && !errors.Is(err, sql.ErrNoRows):
		res.Status, res.Err = StatusFailed, &dbError{fmt.Errorf("%s: look up its content hash: %w", c.path, err)}
		return res
	case err != nil:
		old = 0
	}
	t, err := l.loadAny(ctx, c, run, hash, old)
	if _, ok := err.(*errGuessed); ok {
		// Rolled back: split it again without guessing (errGuessed).
		c.exactSplit = true
		t, err = l.loadAny(ctx, c, run, hash, old)
	}
	if err != nil && isOutOfMemory(err) && l.env.bound.lift(ctx) {
		// DuckDB could not keep this trace inside its bound (one
		// transaction's rows and the linking statements' tables did not
		// fit or spill). Its transaction rolled back, nothing of it is
		// stored: load it again with the caller's limit, for the rest of
		// the ingest.
		if l.opt.Notice != nil {
			l.opt.Notice(c.path + ": DuckDB ran out of its ingest memory bound; loading again without it")
		}
		t, err = l.loadAny(ctx, c, run, hash, old)
	}
	res.Elapsed = time.Since(start)
	var durable *storedThenFailed
	if errors.As(err, &durable) {
		// stored, and the warehouse failed: the ingest stops (res.Err)
		res.Status, res.TraceID, res.Err = StatusIngested, durable.id, err
		return res
	}
	if err != nil {
		res.Status, res.Err = StatusFailed, err
		var unknown *commitUnknown
		if errors.As(err, &unknown) {
			// stored or not: the ingest asks the warehouse file (settleUnknown)
			res.TraceID = unknown.id
		}
		var skip *skipError
		if errors.As(err, &skip) {
			res.Status, res.Err, res.Reason = StatusSkipped, nil, skip.Error()
			if c.explicit {
				// named on the command line: not ingesting it fails the command
				res.Status, res.Err, res.Reason = StatusFailed, fmt.Errorf("%s: %s", c.path, skip.failure()), ""
			}
		}
		var pe *ParseError
		if errors.As(err, &pe) && errors.Is(err, decode.ErrNotTrace) {
			switch {
			case !c.named && !c.explicit:
				res.Status, res.Err, res.Reason = StatusSkipped, nil, "not a trace ("+pe.Err.Error()+"), skipped"
			case !c.named:
				// named on the command line: the user meant it as a trace
				// (a *.trace.json name keeps its positioned error)
				res.Err = fmt.Errorf("%s: not a trace (%w)", c.path, pe.Err)
			}
		}
		return res
	}
	res.Status, res.TraceID, res.Events, res.GPUEvents, res.JSONBytes = StatusIngested, t.id, t.counts.events,
		t.counts.kernels+t.counts.memcpy+t.counts.memset, t.jsonBytes
	return res
}

// traceState accumulates what one trace's batches say.
type traceState struct {
	id  int64
	key int64 // id << 32: event ids are key + ordinal
	summary
	jsonBytes int64
	threads   threads
	frames    *chunks[sweepFrame]
	points    *chunks[sweepPoint]
	link      linkRecs
	// launches and CPU ops held until their sites and base are known
	// (held), nil when the SQL links the trace (it reads them stored)
	launches *held[launchRow]
	ops      *held[opRow]
	steps    *stepRecs       // nil when insert_steps.sql finds the steps (Options.linkInSQL)
	stages   map[string]bool // the stages of the kernels linked in Go (linkInGo)
	meta     map[string][]byte
	guessed  bool // the splitter cut a batch by guess
}

// place makes the event indexes of a batch's rows, which count from its
// first event, the trace's: the batches come in stream order, and a batch
// cut by guess does not know how many events came before it.
func (t *traceState) place(path string, b *decoded) error {
	first := t.counts.events
	if first+b.counts.events > decode.MaxEvents {
		return parseerr.AtOffset(path, -1, -1, "", parseerr.Errorf(ErrTooLarge, "more than %d events in one trace", int64(decode.MaxEvents)))
	}
	for i := range b.kernels {
		b.kernels[i].ordinal += first
	}
	for i := range b.launches {
		b.launches[i].ordinal += first
	}
	for i := range b.ops {
		b.ops[i].ordinal += first
	}
	for i := range b.frames {
		b.frames[i].ordinal += first
	}
	return nil
}

// errGuessed wraps the failure of a load whose events were split by
// guess (decode.Splitter.Guess): a wrong guess and damage look alike, and
// the errors of events after a guessed batch have no event index, so the
// file is loaded again with every event's end found (candidate.exactSplit).
type errGuessed struct{ err error }

func (e *errGuessed) Error() string { return e.err.Error() }
func (e *errGuessed) Unwrap() error { return e.err }

// load reads, decodes and appends one file inside one transaction.
func (l *loader) load(ctx context.Context, c candidate, run *runInfo, hash string, replace int64) (t *traceState, err error) {
	var guessed bool
	defer func() {
		var pe *ParseError
		if guessed && errors.As(err, &pe) {
			err = &errGuessed{err}
		}
	}()
	conn := l.conn
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	id, err := nextTraceID(ctx, conn)
	if err != nil {
		return nil, &dbError{err}
	}
	t = &traceState{id: id, key: id << 32, summary: newSummary(),
		frames: newChunks[sweepFrame](sweepChunk), points: newChunks[sweepPoint](sweepChunk)}
	t.link.init(l.opt.linkInSQL, l.env.spillDir, linkChunk)
	if !l.opt.linkInSQL {
		t.steps = newStepRecs()
	}
	if !t.link.over {
		t.launches = newHeld(l.env.spillDir, encHeldLaunch, decHeldLaunch)
		t.ops = newHeld(l.env.spillDir, encHeldOp, decHeldOp)
		defer t.launches.close()
		defer t.ops.close()
	}
	t.frames.sortAhead(frameOrder)
	t.points.sortAhead(pointOrder)
	t.frames.spillTo(l.env.spillDir, frameBytes, encFrame, decFrame)
	t.points.spillTo(l.env.spillDir, pointBytes, encPoint, decPoint)
	// Whether or not the sweep ran: no sort outlives the load, no spill file stays open.
	defer t.frames.close()
	defer t.points.close()
	defer t.link.close()
	began := time.Now()
	ident := decode.IdentifyName(filepath.Base(c.path))
	if err := nameError(c.path, ident); err != nil {
		return nil, err
	}
	stage, stageSource := traceStage(l.opt.Stage, c.path, ident)
	stageKnown := stage != vocab.StageUnknown
	fileRank := ident.Rank

	tx, err := beginTrace(ctx, conn, replace)
	if err != nil {
		return nil, err
	}
	defer tx.rollback(ctx, &err)

	compressed := false
	err = schema.WithAppenders(conn, specs[:appFrames], func(apps []*schema.Appender) error {
		rc, gz, err := decode.Open(c.path, l.opt.Progress)
		if err != nil {
			var pe *ParseError
			if errors.As(err, &pe) {
				pe.File = c.path
				return pe
			}
			return fmt.Errorf("%s: %w", c.path, unwrapPathError(err))
		}
		defer rc.Close()
		compressed = gz
		if pp, ok := l.opt.Progress.(ParsedProgress); ok {
			rc = parsedReader{rc, pp}
		}
		return l.decode(ctx, c.path, rc, t, !c.exactSplit, func(b *decoded) error {
			if err := t.place(c.path, b); err != nil {
				return err
			}
			return t.append(apps, b, run.id, fileRank, stage, ident.Merged)
		})
	})
	guessed = t.guessed
	if err != nil {
		return nil, err
	}
	info, err := traceInfo(c.path, t.meta)
	if err != nil {
		return nil, err
	}
	if err := t.checkBase(c.path, info.baseNS); err != nil {
		return nil, err
	}
	if err := t.checkTotals(c.path); err != nil {
		return nil, err
	}
	// Frames are stored here, with their depth, rather than while
	// decoding: updating millions of uncommitted rows afterwards cost
	// DuckDB more memory than holding them costs here.
	if err := l.storeSwept(ctx, t, info.baseNS); err != nil {
		return nil, err
	}
	// The sweep's arrays are done with; let them go before the SQL runs.
	t.frames, t.points = nil, nil
	// After a large trace, give the freed heap back to the system now: the
	// linking SQL that follows is DuckDB's memory peak, and freed Go heap
	// would otherwise still count in the process's resident set (1 GB
	// trace: peak about 20 MiB lower). After a small one it is not worth
	// a forced collection and the page faults of growing again: 40 traces
	// of 50 MB took 14 CPU-seconds more with it.
	if t.jsonBytes >= freeAfterBytes {
		debug.FreeOSMemory()
	}
	if t.jsonBytes >= releaseAfterBytes {
		schema.ReleaseFreedPages()
	}

	rank, rankAssumed := fileRank, false
	if rank < 0 {
		rank = info.rank
	}
	if rank < 0 {
		rank, rankAssumed = 0, true
	}
	base := info.baseNS
	exec := func(name string, args ...any) error {
		if _, err := inline.Exec(ctx, conn, stmt(name), args...); err != nil {
			return &dbError{fmt.Errorf("%s: %s: %w", c.path, name, err)}
		}
		return nil
	}
	// Linking in Go (link.go), or by the SQL (Options.linkInSQL, for the
	// test holding the two equal), which reads times before they move.
	// Linked in Go, launches and CPU ops were inserted complete (storeSwept).
	inGo := !t.link.over
	if !inGo {
		if err := exec("launch_sites", sql.Named("trace", id), sql.Named("key", t.key)); err != nil {
			return nil, err
		}
		if err := exec("op_sites", sql.Named("trace", id), sql.Named("key", t.key)); err != nil {
			return nil, err
		}
		if err := exec("link_kernels", sql.Named("trace", id), sql.Named("base", base), sql.Named("rank", rank),
			sql.Named("merged", ident.Merged), sql.Named("stage_known", stageKnown)); err != nil {
			return nil, err
		}
	}
	if base != 0 {
		shifts := []string{"shift_annotations"}
		if !inGo {
			shifts = append(shifts, "shift_launches", "shift_cpu_ops")
		}
		for _, name := range shifts {
			if err := exec(name, sql.Named("trace", id), sql.Named("base", base)); err != nil {
				return nil, err
			}
		}
	}
	// Steps need absolute times (kernels, launches and annotations alike).
	steps, err := findSteps(ctx, conn, t, base)
	if err != nil {
		return nil, &dbError{fmt.Errorf("%s: insert_steps: %w", c.path, err)}
	}
	if inGo {
		// The link's records grow Go's heap, which cannot reuse the pages
		// DuckDB's statements above freed and its jemalloc still holds
		// (schema.ReleaseFreedPages): after a large trace they go back
		// first, as before the commit below (1 GB kernel-dense trace:
		// bench/README.md, "Twenty-first figures").
		if t.jsonBytes >= releaseAfterBytes {
			schema.ReleaseFreedPages()
		}
		if err := l.linkInGo(ctx, conn, c.path, t, steps, base, rank, ident.Merged, stageKnown, run.id, fileRank, stage); err != nil {
			return nil, err
		}
	} else {
		if err := exec("link_steps", sql.Named("trace", id)); err != nil {
			return nil, err
		}
		if _, err := conn.ExecContext(ctx, "DELETE FROM _derived"); err != nil {
			return nil, &dbError{fmt.Errorf("clear derived rows: %w", err)}
		}
	}
	switch {
	case stageKnown:
	case inGo:
		// the stages the link gave the kernels it inserted
		stage, stageSource = stageOf(t.stages)
	default:
		stage, stageSource, err = kernelStages(ctx, conn, id)
		if err != nil {
			return nil, err
		}
	}
	fw, fwEvidence := l.framework(c, run, ident, t)
	role, roleSource := traceRole(l.opt.Role, run.serverArgs)
	path := t.storedPath(c.path)
	for _, k := range info.repaired {
		t.warn("top-level key " + k + " stored with NaN, Infinity or invalid UTF-8 repaired (or as NULL)")
	}
	var notes []string
	var nwarn int64
	for msg, n := range t.warnings {
		nwarn += n
		notes = append(notes, fmt.Sprintf("%d x %s", n, msg))
	}
	sort.Strings(notes)
	startNS, endNS := any(nil), any(nil)
	if t.minTS <= t.maxEnd {
		startNS, endNS = t.minTS+base, t.maxEnd+base
	}
	var baseArg any
	if info.hasBase {
		baseArg = base
	}
	_, err = inline.Exec(ctx, conn, stmt("insert_trace"),
		sql.Named("trace_id", id), sql.Named("run_id", run.id), sql.Named("path", path),
		sql.Named("content_hash", hash), sql.Named("bytes", c.size), sql.Named("json_bytes", t.jsonBytes),
		sql.Named("compressed", compressed), sql.Named("rank", rank),
		sql.Named("tp_rank", nullInt(ident.TP)), sql.Named("dp_rank", nullInt(ident.DP)),
		sql.Named("pp_rank", nullInt(ident.PP)), sql.Named("ep_rank", nullInt(ident.EP)),
		sql.Named("rank_assumed", rankAssumed), sql.Named("stage", stage), sql.Named("stage_source", stageSource),
		sql.Named("role", role), sql.Named("role_source", roleSource), sql.Named("merged", ident.Merged),
		sql.Named("framework", fw), sql.Named("framework_evidence", fwEvidence),
		sql.Named("device_name", nullString(info.deviceName)),
		sql.Named("device_properties", nullString(string(info.devices))),
		sql.Named("distributed_info", nullString(string(info.distributed))),
		sql.Named("schema_version", nullString(info.schemaVersion)), sql.Named("trace_name", nullString(info.traceName)),
		sql.Named("base_time_ns", baseArg), sql.Named("start_ns", startNS), sql.Named("end_ns", endNS),
		sql.Named("events", t.counts.events), sql.Named("kernel_events", t.counts.kernels),
		sql.Named("memcpy_events", t.counts.memcpy), sql.Named("memset_events", t.counts.memset),
		sql.Named("launch_events", t.counts.launches), sql.Named("graph_launches", t.counts.graphLaunches),
		sql.Named("cpu_op_events", t.counts.cpuOps), sql.Named("py_frame_events", t.counts.pyFrames),
		sql.Named("annotation_events", t.counts.annotations), sql.Named("flow_events", t.counts.flows),
		sql.Named("counter_events", t.counts.counters), sql.Named("instant_events", t.counts.instants),
		sql.Named("metadata_events", t.counts.metadata), sql.Named("other_events", t.counts.other),
		sql.Named("warnings", nwarn), sql.Named("warning_notes", strings.Join(notes, "\n")),
		sql.Named("ingest_ms", time.Since(began).Milliseconds()))
	if err != nil {
		return nil, &dbError{fmt.Errorf("%s: store trace row: %w", c.path, err)}
	}
	if err := l.storeNames(ctx, tx); err != nil {
		return nil, &dbError{err}
	}
	if t.jsonBytes >= releaseAfterBytes {
		schema.ReleaseFreedPages()
	}
	if err := tx.commit(ctx, c.path, id); err != nil {
		return nil, err
	}
	return t, nil
}

// nameError refuses a file whose name gives a rank the warehouse cannot
// hold (rather than guess another).
func nameError(path string, ident decode.NameIdentity) error {
	if ident.TooLarge == "" {
		return nil
	}
	return parseerr.AtLine(path, 0, "", "file name", parseerr.Errorf(ErrRange,
		"rank token %q is outside %s", ident.TooLarge, limits.IndexRange))
}

// checkBase refuses a trace whose times, once its baseTimeNanoseconds is
// added, are outside the times the warehouse keeps; the error points at the
// event that starts first or last, or ends last.
func (t *traceState) checkBase(path string, base int64) error {
	if base == 0 || t.minTS > t.maxEnd {
		return nil
	}
	check := func(v int64, at eventPos, field, what string) error {
		if _, ok := limits.AddTime(v, base); ok {
			return nil
		}
		return parseerr.AtOffset(path, at.event, at.off, field, parseerr.Errorf(ErrRange,
			"the event %s at %d ns after baseTimeNanoseconds %d: %s ns is outside the times the warehouse keeps (%s)",
			what, v, base, limits.Sum(v, base), limits.TimeRange))
	}
	if err := check(t.minTS, t.minAt, "ts", "starts"); err != nil {
		return err
	}
	if err := check(t.maxTS, t.maxTSAt, "ts", "starts"); err != nil {
		return err
	}
	return check(t.maxEnd, t.maxAt, "dur", "ends")
}

func nextTraceID(ctx context.Context, conn *sql.Conn) (int64, error) {
	var id int64
	if err := conn.QueryRowContext(ctx, `SELECT nextval('trace_id_seq')`).Scan(&id); err != nil {
		return 0, fmt.Errorf("allocate trace id: %w", err)
	}
	return id, nil
}

func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// kernelStages derives a trace's stage from its kernels' stages.
func kernelStages(ctx context.Context, conn *sql.Conn, id int64) (string, string, error) {
	rows, err := conn.QueryContext(ctx, `SELECT DISTINCT stage FROM kernels WHERE trace_id = ?`, id)
	if err != nil {
		return "", "", &dbError{fmt.Errorf("read kernel stages: %w", err)}
	}
	defer rows.Close()
	seen := map[string]bool{}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return "", "", &dbError{err}
		}
		seen[s] = true
	}
	if err := rows.Err(); err != nil {
		return "", "", &dbError{err}
	}
	stage, source := stageOf(seen)
	return stage, source, nil
}

// stageOf is a trace's stage and its source from the stages of its
// kernels (seen, which it may change).
func stageOf(seen map[string]bool) (stage, source string) {
	delete(seen, vocab.StageUnknown)
	switch {
	case len(seen) == 0:
		return vocab.StageUnknown, "none"
	case len(seen) == 1:
		for s := range seen {
			return s, "annotations"
		}
	}
	return vocab.Mixed, "annotations"
}

// append writes one decoded batch's rows and keeps what the sweep needs.
func (t *traceState) append(apps []*schema.Appender, b *decoded, runID int64, rank int, stage string, merged bool) error {
	t.merge(&b.summary)
	t.link.hold(b)
	if rank < 0 {
		rank = 0 // corrected from distributedInfo by link_kernels
	}
	// Only the SQL's link reads kernels appended here; linked in Go, they
	// are held (t.link.hold) and inserted once linked (linkInGo).
	kernels := b.kernels
	if !t.link.over {
		kernels = nil
	}
	for i := range kernels {
		k := &kernels[i]
		r := rank
		if merged && k.device != null {
			r = int(k.device)
		}
		if err := apps[appKernels].Append(t.key+k.ordinal, int32(t.id), int32(runID), int32(r), stage, k.nameID,
			kindNames[k.kind], k.ts, k.dur, nullable32(k.device), nullable(k.stream), nullable(k.correlation),
			nullable(k.externalID), nullStr(k.grid), nullStr(k.block), nullable(k.bytes), false); err != nil {
			return err
		}
	}
	for i := range b.launches {
		x := &b.launches[i]
		if t.launches != nil {
			t.launches.add(x.ordinal, x)
		} else if err := apps[appLaunches].Append(t.key+x.ordinal, int32(t.id), x.name, x.ts, x.dur, nullable(x.pid), nullable(x.tid),
			nullable(x.correlation), nullable(x.externalID)); err != nil {
			return err
		}
		if x.pid != null || x.tid != null {
			t.points.add(sweepPoint{ts: x.ts, correlation: x.correlation, extern: x.externalID, ordinal: uint32(x.ordinal),
				thread: t.threads.id(x.pid, x.tid), kind: derivedLaunchSite, graph: x.graph})
		}
	}
	for i := range b.ops {
		x := &b.ops[i]
		if t.ops != nil {
			t.ops.add(x.ordinal, x)
		} else if err := apps[appOps].Append(t.key+x.ordinal, int32(t.id), x.name, x.ts, x.dur, nullable(x.pid), nullable(x.tid),
			nullable(x.externalID), nullable(x.seq), nullStr(x.dims), nullStr(x.types)); err != nil {
			return err
		}
		t.points.add(sweepPoint{ts: x.ts, correlation: null, extern: x.externalID, ordinal: uint32(x.ordinal),
			thread: t.threads.id(x.pid, x.tid), kind: derivedOpSite})
	}
	for i := range b.frames {
		x := &b.frames[i]
		t.frames.add(sweepFrame{ts: x.ts, end: x.ts + x.dur, pyID: x.pyID, parentID: x.parentID, ordinal: uint32(x.ordinal),
			thread: t.threads.id(x.pid, x.tid), site: x.site.id, tier: x.site.tier})
	}
	for i := range b.annotations {
		x := &b.annotations[i]
		if t.steps != nil {
			t.steps.add(x)
		}
		if err := apps[appAnnotations].Append(int32(t.id), x.name, x.cat, x.ts, x.dur, nullable(x.pid), nullable(x.tid), nullStr(x.stage)); err != nil {
			return err
		}
	}
	return nil
}

func nullable(v int64) driver.Value {
	if v == null {
		return nil
	}
	return v
}

func nullable32(v int64) driver.Value {
	if v == null {
		return nil
	}
	return int32(v)
}

func nullStr(s string) driver.Value {
	if s == "" {
		return nil
	}
	return s
}

// prepareConn creates the connection's TEMP table for derived values.
func prepareConn(ctx context.Context, conn *sql.Conn) error {
	b, err := migrations.Staging.ReadFile("staging/ingest_staging.sql")
	if err != nil {
		return err
	}
	for _, st := range schema.SplitStatements(string(b)) {
		if _, err := conn.ExecContext(ctx, st.SQL); err != nil {
			return fmt.Errorf("prepare ingest connection: %w", err)
		}
	}
	return nil
}

// parsedReader tells a ParsedProgress of the bytes the decoder reads.
type parsedReader struct {
	io.ReadCloser
	p ParsedProgress
}

func (r parsedReader) Read(b []byte) (int, error) {
	n, err := r.ReadCloser.Read(b)
	if n > 0 {
		r.p.Parsed(int64(n))
	}
	return n, err
}
