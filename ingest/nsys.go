package ingest

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tracehouse/tracehouse/ingest/decode"
	"github.com/tracehouse/tracehouse/inline"
	"github.com/tracehouse/tracehouse/limits"
	"github.com/tracehouse/tracehouse/nsys"
	"github.com/tracehouse/tracehouse/schema"
	"github.com/tracehouse/tracehouse/vocab"
)

// Nsight Systems profiles land in the same tables as Kineto traces (see
// migrations/0010_nsys.sql and the README's "Nsight Systems profiles"):
//
//	CUPTI_ACTIVITY_KIND_KERNEL/MEMCPY/MEMSET -> kernels (kind kernel/memcpy/memset)
//	CUPTI_ACTIVITY_KIND_RUNTIME              -> launches (correlationId -> correlation)
//	NVTX_EVENTS push/pop and start/end       -> annotations (cat user_annotation)
//	innermost NVTX range around the launch   -> kernels.site_id (sites.framework nvtx)
//	GPU span of the work launched in a range -> annotations (cat gpu_user_annotation)
//	TARGET_INFO_GPU                          -> traces.device_name, device_properties
//	TARGET_INFO_SESSION_START_TIME           -> traces.base_time_ns (times made absolute)
//
// Linking, stages and steps then run the same SQL as for Kineto traces.

// Source formats of traces.source_format.
const (
	FormatKineto = "kineto"
	FormatNsys   = "nsys"
)

// NVTXSitePrefix starts the name (and display) of a site that is an NVTX
// range rather than a Python frame.
const NVTXSitePrefix = "nvtx: "

// nsysExt and repExt are the names of Nsight exports and reports.
const (
	nsysExt = ".sqlite"
	repExt  = ".nsys-rep"
)

func isNsysName(name string) bool {
	n := strings.ToLower(name)
	return strings.HasSuffix(n, nsysExt) || strings.HasSuffix(n, repExt)
}

func isRepName(name string) bool { return strings.HasSuffix(strings.ToLower(name), repExt) }

// exportedSibling is the .sqlite an `nsys export` of rep writes by default
// (the report's name with its extension replaced).
func exportedSibling(rep string) string {
	return rep[:len(rep)-len(repExt)] + nsysExt
}

// skipError is a file left out on purpose: found in a directory, a notice;
// named on the command line, a failure (the user asked for it).
type skipError struct{ what, why string }

func (e *skipError) Error() string { return e.what + " skipped: " + e.why }

// failure is the error of a named file left out.
func (e *skipError) failure() string { return e.what + " not ingested: " + e.why }

// loadAny loads one candidate with the reader its content (or, for Nsight
// reports, its name) calls for.
func (l *loader) loadAny(ctx context.Context, c candidate, run *runInfo, hash string, replace int64) (*traceState, error) {
	switch {
	case isRepName(c.path):
		src, err := l.exportReport(ctx, c.path, hash)
		if err != nil {
			return nil, err
		}
		return l.loadNsys(ctx, c, src, run, hash, replace)
	case strings.HasSuffix(strings.ToLower(c.path), nsysExt) || nsys.IsSQLite(c.path):
		return l.loadNsys(ctx, c, c.path, run, hash, replace)
	}
	return l.load(ctx, c, run, hash, replace)
}

// defaultNsysCache is where .nsys-rep exports are kept: beside the
// warehouse file, or in the temporary directory for an in-memory one.
func defaultNsysCache(warehouse string) string {
	if warehouse == "" || warehouse == schema.Memory {
		return filepath.Join(os.TempDir(), "tracehouse-nsys-cache")
	}
	return warehouse + nsysCacheSuffix
}

// nsysCacheSuffix names the cache directory; discovery never walks into one.
const nsysCacheSuffix = ".nsys-cache"

// ExportCommand is the command that exports an Nsight Systems report to
// the SQLite file ingest reads, written beside the report.
func ExportCommand(rep string) string {
	return "nsys export --type sqlite --output " + shellQuote(exportedSibling(rep)) + " " + shellQuote(rep)
}

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:+@=,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// exportReport returns the SQLite export of the report at rep, exporting it
// once with the nsys binary into the cache (named by the report's content
// hash). Without nsys on PATH the report is skipped with the command to run.
func (l *loader) exportReport(ctx context.Context, rep, hash string) (string, error) {
	dir := l.opt.NsysCache
	if dir == "" {
		dir = defaultNsysCache("")
	}
	out := filepath.Join(dir, strings.TrimPrefix(hash, "xxh3-128:")+nsysExt)
	if fileExists(out) {
		return out, nil
	}
	bin, err := exec.LookPath("nsys")
	if err != nil {
		return "", &skipError{"Nsight Systems report", "nsys is not on PATH; export it with `" + ExportCommand(rep) + "` and ingest the .sqlite"}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("%s: export cache: %w", rep, unwrapPathError(err))
	}
	tmp := filepath.Join(dir, strings.TrimPrefix(hash, "xxh3-128:")+".tmp-"+strconv.Itoa(os.Getpid())+nsysExt)
	defer os.Remove(tmp)
	cmd := exec.CommandContext(ctx, bin, "export", "--type", "sqlite", "--force-overwrite", "true", "--output", tmp, rep)
	msg, err := cmd.CombinedOutput()
	if err == nil && !fileExists(tmp) {
		err = errors.New("it wrote no file")
	}
	if err != nil {
		last := strings.TrimSpace(string(msg))
		if i := strings.LastIndexByte(last, '\n'); i >= 0 {
			last = strings.TrimSpace(last[i+1:])
		}
		if last != "" {
			last = ": " + last
		}
		return "", fmt.Errorf("%s: nsys export failed (%v)%s", rep, err, last)
	}
	if err := os.Rename(tmp, out); err != nil {
		return "", fmt.Errorf("%s: export cache: %w", rep, unwrapPathError(err))
	}
	return out, nil
}

// nsysPlan is what must be known about an export before its rows are
// appended.
type nsysPlan struct {
	info       nsys.Info
	rank       int  // the trace's rank
	assumed    bool // no name token or single device gave it
	merged     bool // several GPUs: kernels.rank follows the device
	multiProc  bool // several processes: correlation ids are per process
	deviceName string
}

func (l *loader) planNsys(ctx context.Context, x *nsys.Export, ident decode.NameIdentity) (nsysPlan, error) {
	var p nsysPlan
	var err error
	if p.info, err = x.ReadInfo(ctx); err != nil {
		return p, err
	}
	devs, err := x.Devices(ctx)
	if err != nil {
		return p, err
	}
	procs, err := x.Processes(ctx)
	if err != nil {
		return p, err
	}
	p.multiProc = len(procs) > 1
	p.rank, p.merged = ident.Rank, ident.Merged
	switch {
	case p.rank >= 0:
	case len(devs) == 1:
		p.rank = int(devs[0])
	case len(devs) > 1:
		p.rank, p.merged = int(devs[0]), true
	default:
		p.rank, p.assumed = 0, true
	}
	if len(devs) > 0 {
		p.deviceName = p.info.DeviceName(devs[0])
		if i := slices.Index(devs, int64(p.rank)); i >= 0 {
			p.deviceName = p.info.DeviceName(devs[i])
		}
	}
	return p, nil
}

// loadNsys loads the Nsight Systems export src (the candidate itself, or a
// report's cached export) as trace c, in one transaction.
func (l *loader) loadNsys(ctx context.Context, c candidate, src string, run *runInfo, hash string, replace int64) (t *traceState, err error) {
	began := time.Now()
	x, err := nsys.Open(ctx, src)
	if err != nil {
		return nil, l.nsysError(c, src, err)
	}
	defer x.Close()
	ident := decode.IdentifyName(filepath.Base(c.path))
	if err := nameError(c.path, ident); err != nil {
		return nil, err
	}
	plan, err := l.planNsys(ctx, x, ident)
	if err != nil {
		return nil, l.nsysError(c, src, err)
	}
	conn := l.conn
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	id, err := nextTraceID(ctx, conn)
	if err != nil {
		return nil, &dbError{err}
	}
	t = &traceState{id: id, key: id << 32, summary: newSummary()}
	stage, stageSource := traceStage(l.opt.Stage, c.path, ident)
	stageKnown := stage != vocab.StageUnknown

	tx, err := beginTrace(ctx, conn, replace)
	if err != nil {
		return nil, err
	}
	defer tx.rollback(ctx, &err)
	base := plan.info.SessionStartNS
	if !plan.info.HasSessionStart {
		t.warn("no TARGET_INFO_SESSION_START_TIME: times are relative to the session start")
	}
	if err := schema.WithAppenders(conn, specs, func(apps []*schema.Appender) error {
		return l.appendNsys(ctx, x, apps, t, plan, run.id, stage, base)
	}); err != nil {
		var dbe *dbError
		if errors.As(err, &dbe) {
			return nil, err
		}
		return nil, l.nsysError(c, src, err)
	}
	if err := t.checkTotals(c.path); err != nil {
		return nil, err
	}
	if n := x.Repaired(); n > 0 {
		t.warn(invalidUTF8)
		t.warnings[invalidUTF8] += n - 1
	}

	exec := func(name string, args ...any) error {
		if _, err := inline.Exec(ctx, conn, stmt(name), args...); err != nil {
			return &dbError{fmt.Errorf("%s: %s: %w", c.path, name, err)}
		}
		return nil
	}
	if err := exec("launch_sites", sql.Named("trace", id), sql.Named("key", t.key)); err != nil {
		return nil, err
	}
	if err := exec("link_kernels", sql.Named("trace", id), sql.Named("base", 0), sql.Named("rank", plan.rank),
		sql.Named("merged", plan.merged), sql.Named("stage_known", stageKnown)); err != nil {
		return nil, err
	}
	if err := exec("insert_steps", sql.Named("trace", id), sql.Named("steps_by", nil)); err != nil {
		return nil, err
	}
	if err := exec("link_steps", sql.Named("trace", id)); err != nil {
		return nil, err
	}
	if _, err := conn.ExecContext(ctx, "DELETE FROM _derived"); err != nil {
		return nil, &dbError{fmt.Errorf("clear derived rows: %w", err)}
	}
	if !stageKnown {
		if stage, stageSource, err = kernelStages(ctx, conn, id); err != nil {
			return nil, err
		}
	}
	fw, fwEvidence := l.framework(c, run, ident, t)
	role, roleSource := traceRole(l.opt.Role, run.serverArgs)
	path := t.storedPath(c.path)
	var notes []string
	var nwarn int64
	for msg, n := range t.warnings {
		nwarn += n
		notes = append(notes, fmt.Sprintf("%d x %s", n, msg))
	}
	sort.Strings(notes)
	startNS, endNS := any(nil), any(nil)
	if t.minTS <= t.maxEnd {
		startNS, endNS = t.minTS, t.maxEnd
	}
	var baseArg any
	if plan.info.HasSessionStart {
		baseArg = base
	}
	var props any
	if len(plan.info.Devices) > 0 {
		ds := make([]map[string]any, len(plan.info.Devices))
		for i, d := range plan.info.Devices {
			ds[i] = d.Props
		}
		if b, err := json.Marshal(ds); err == nil {
			props = string(b)
		}
	}
	size := c.size
	if src != c.path {
		if st, err := os.Stat(src); err == nil {
			size = st.Size()
		}
	}
	t.jsonBytes = size
	_, err = inline.Exec(ctx, conn, stmt("insert_trace"),
		sql.Named("trace_id", id), sql.Named("run_id", run.id), sql.Named("path", path),
		sql.Named("content_hash", hash), sql.Named("bytes", c.size), sql.Named("json_bytes", size),
		sql.Named("compressed", false), sql.Named("rank", plan.rank),
		sql.Named("tp_rank", nullInt(ident.TP)), sql.Named("dp_rank", nullInt(ident.DP)),
		sql.Named("pp_rank", nullInt(ident.PP)), sql.Named("ep_rank", nullInt(ident.EP)),
		sql.Named("rank_assumed", plan.assumed), sql.Named("stage", stage), sql.Named("stage_source", stageSource),
		sql.Named("role", role), sql.Named("role_source", roleSource), sql.Named("merged", plan.merged),
		sql.Named("framework", fw), sql.Named("framework_evidence", fwEvidence),
		sql.Named("device_name", nullString(plan.deviceName)), sql.Named("device_properties", props),
		sql.Named("distributed_info", nil),
		sql.Named("schema_version", nullString(plan.info.SchemaVersion)), sql.Named("trace_name", nil),
		sql.Named("base_time_ns", baseArg), sql.Named("start_ns", startNS), sql.Named("end_ns", endNS),
		sql.Named("events", t.counts.events), sql.Named("kernel_events", t.counts.kernels),
		sql.Named("memcpy_events", t.counts.memcpy), sql.Named("memset_events", t.counts.memset),
		sql.Named("launch_events", t.counts.launches), sql.Named("graph_launches", t.counts.graphLaunches),
		sql.Named("cpu_op_events", int64(0)), sql.Named("py_frame_events", int64(0)),
		sql.Named("annotation_events", t.counts.annotations), sql.Named("flow_events", int64(0)),
		sql.Named("counter_events", int64(0)), sql.Named("instant_events", t.counts.instants),
		sql.Named("metadata_events", int64(0)), sql.Named("other_events", t.counts.other),
		sql.Named("warnings", nwarn), sql.Named("warning_notes", strings.Join(notes, "\n")),
		sql.Named("ingest_ms", time.Since(began).Milliseconds()))
	if err != nil {
		return nil, &dbError{fmt.Errorf("%s: store trace row: %w", c.path, err)}
	}
	if _, err := conn.ExecContext(ctx, `UPDATE traces SET source_format = ? WHERE trace_id = ?`, FormatNsys, id); err != nil {
		return nil, &dbError{fmt.Errorf("%s: store trace format: %w", c.path, err)}
	}
	if err := l.storeNames(ctx, tx); err != nil {
		return nil, &dbError{err}
	}
	if err := tx.commit(ctx, c.path, id); err != nil {
		return nil, err
	}
	if l.opt.Progress != nil {
		l.opt.Progress.Add(c.size)
	}
	return t, nil
}

// nsysError names the candidate in a reader error (the reader names the
// file it opened, which for a report is the cached export).
func (l *loader) nsysError(c candidate, src string, err error) error {
	var pe *ParseError
	if errors.As(err, &pe) && pe.File == src && src != c.path {
		pe.File = c.path + " (exported as " + src + ")"
	}
	return err
}

// storedPath is path as the warehouse stores it: a file name need not be
// UTF-8, a VARCHAR must (the file is still read by its own name).
func (t *traceState) storedPath(path string) string {
	p, repaired := limits.ValidString(path)
	if repaired {
		t.warn("file path with invalid UTF-8 stored with U+FFFD in its place")
	}
	return p
}

func (t *traceState) warn(msg string) {
	if t.warnings == nil {
		t.warnings = map[string]int64{}
	}
	t.warnings[msg]++
}

// nvtxRange is an NVTX range kept for locating launches and projecting
// ranges onto the GPU.
type nvtxRange struct {
	start, end int64 // absolute ns
	thread     int32
	site       int32
	parent     int32 // the range open around this one's start on its thread, -1 for none
	name       string
	stage      string
	windows    []gpuWindow // per device: the span of GPU work launched inside
}

type gpuWindow struct {
	device     int64
	start, end int64
}

// nvtxLaunch is a runtime call on a known thread.
type nvtxLaunch struct {
	ts        int64
	thread    int32
	ordinal   uint32
	innermost int32 // innermost open range at ts, -1 for none
}

// appendNsys appends an export's rows: NVTX ranges as annotations, runtime
// calls as launches, GPU activity as kernels. Per thread, a sweep gives
// each launch its innermost open NVTX range (its location, through
// _derived), and each GPU event extends the GPU windows of the ranges
// around its launch; those windows are appended as gpu_user_annotation
// rows, as Kineto records them. Times are made absolute with base;
// ordinals number launches and GPU events together.
func (l *loader) appendNsys(ctx context.Context, x *nsys.Export, apps []*schema.Appender, t *traceState,
	p nsysPlan, runID int64, stage string, base int64) error {
	var ordinal int64
	// The reader checked every time, absolute ones too (limits.Time).
	span := func(kind int, start, end int64) {
		t.counts.events++
		t.minTS = min(t.minTS, start+base)
		t.maxEnd = max(t.maxEnd, end+base)
		t.totals[kind] = limits.AddTotal(t.totals[kind], end-start)
	}
	// Correlation ids are counted per process: in an export of several
	// processes, (pid << 32) + id keeps them apart.
	corr := func(c, pid int64) int64 {
		if c == nsys.None || !p.multiProc || pid == nsys.None {
			return c
		}
		return pid<<32 | c&0xFFFFFFFF
	}
	var ranges []nvtxRange
	err := x.Ranges(ctx, func(r *nsys.Range) error {
		if r.End == nsys.None {
			t.counts.events++
			t.counts.other++
			t.warn("NVTX range never closed, left out")
			return nil
		}
		span(totalAnnotation, r.Start, r.End)
		t.counts.annotations++
		st, vllm := decode.AnnotationStage([]byte(r.Name))
		if vllm {
			t.vllmSteps++
		}
		if err := apps[appAnnotations].Append(int32(t.id), r.Name, "user_annotation", r.Start+base, r.End-r.Start,
			nullable(r.PID), nullable(r.TID), nullStr(st)); err != nil {
			return &dbError{err}
		}
		if r.PID != nsys.None && r.End > r.Start {
			site := l.names.site([]byte(NVTXSitePrefix + r.Name))
			ranges = append(ranges, nvtxRange{start: r.Start + base, end: r.End + base, thread: t.threads.id(r.PID, r.TID),
				site: site.id, parent: -1, name: r.Name, stage: st})
		}
		return nil
	})
	if err != nil {
		return err
	}
	var launches []nvtxLaunch
	byCorr := map[int64]int32{}
	err = x.Runtime(ctx, func(c *nsys.Call) error {
		span(totalLaunch, c.Start, c.End)
		t.counts.launches++
		if strings.Contains(c.Name, "GraphLaunch") {
			t.counts.graphLaunches++
		}
		cr := corr(c.Correlation, c.PID)
		if err := apps[appLaunches].Append(t.key+ordinal, int32(t.id), c.Name, c.Start+base, c.End-c.Start,
			nullable(c.PID), nullable(c.TID), nullable(cr), nil); err != nil {
			return &dbError{err}
		}
		if c.PID != nsys.None {
			if cr != nsys.None {
				byCorr[cr] = int32(len(launches))
			}
			launches = append(launches, nvtxLaunch{ts: c.Start + base, thread: t.threads.id(c.PID, c.TID), ordinal: uint32(ordinal), innermost: -1})
		}
		ordinal++
		return nil
	})
	if err != nil {
		return err
	}
	locateLaunches(ranges, launches)
	for i := range launches {
		if r := launches[i].innermost; r >= 0 {
			if err := apps[appDerived].Append(int8(derivedLaunchSite), int64(launches[i].ordinal), ranges[r].site); err != nil {
				return &dbError{err}
			}
		}
	}
	kernelIDs := map[string]int32{}
	var dims []byte
	err = x.GPU(ctx, func(a *nsys.Activity) error {
		span(totalGPU, a.Start, a.End)
		if p.multiProc && a.PID == nsys.None && a.Correlation != nsys.None {
			t.warn("several processes and no globalPid: GPU events linked to launches by correlation id alone")
		}
		nameID, ok := kernelIDs[a.Name]
		if !ok {
			nameID = l.names.kernel([]byte(a.Name))
			kernelIDs[a.Name] = nameID
			if strings.Contains(a.Name, "tensorrt_llm") || strings.Contains(a.Name, "trtllm") {
				t.trtNames++
			}
		}
		kind := kindKernel
		switch a.Kind {
		case nsys.Memcpy:
			kind = kindMemcpy
			t.counts.memcpy++
		case nsys.Memset:
			kind = kindMemset
			t.counts.memset++
		default:
			t.counts.kernels++
		}
		rank := p.rank
		if p.merged {
			rank = int(a.Device)
		}
		var grid, block any
		if a.HasDims {
			dims = appendDims(dims[:0], a.Grid)
			grid = string(dims)
			dims = appendDims(dims[:0], a.Block)
			block = string(dims)
		}
		cr := corr(a.Correlation, a.PID)
		if err := apps[appKernels].Append(t.key+ordinal, int32(t.id), int32(runID), int32(rank), stage, nameID,
			kindNames[kind], a.Start+base, a.End-a.Start, int32(a.Device), nullable(a.Stream),
			nullable(cr), nil, grid, block, nullable(a.Bytes), false); err != nil {
			return &dbError{err}
		}
		ordinal++
		if li, ok := byCorr[cr]; ok && cr != nsys.None {
			project(ranges, launches[li], a.Device, a.Start+base, a.End+base)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if ordinal >= 1<<32 {
		return fmt.Errorf("%s: more than 2^32 rows", x.Path())
	}
	for i := range ranges {
		r := &ranges[i]
		slices.SortFunc(r.windows, func(a, b gpuWindow) int { return cmp.Compare(a.device, b.device) })
		for _, w := range r.windows {
			t.totals[totalAnnotation] = limits.AddTotal(t.totals[totalAnnotation], w.end-w.start)
			if err := apps[appAnnotations].Append(int32(t.id), r.name, "gpu_user_annotation", w.start, w.end-w.start,
				w.device, nil, nullStr(r.stage)); err != nil {
				return &dbError{err}
			}
		}
	}
	return nil
}

// locateLaunches sets each launch's innermost open range and each range's
// parent, thread by thread in time order with a stack. A range starting at
// a launch's instant is open at it; a range ending there is not.
func locateLaunches(ranges []nvtxRange, launches []nvtxLaunch) {
	ri := make([]int32, len(ranges))
	for i := range ri {
		ri[i] = int32(i)
	}
	slices.SortFunc(ri, func(a, b int32) int {
		x, y := &ranges[a], &ranges[b]
		return cmp.Or(cmp.Compare(x.thread, y.thread), cmp.Compare(x.start, y.start), cmp.Compare(y.end, x.end), cmp.Compare(a, b))
	})
	li := make([]int32, len(launches))
	for i := range li {
		li[i] = int32(i)
	}
	slices.SortFunc(li, func(a, b int32) int {
		x, y := &launches[a], &launches[b]
		return cmp.Or(cmp.Compare(x.thread, y.thread), cmp.Compare(x.ts, y.ts), cmp.Compare(a, b))
	})
	var stack []int32
	thread := int32(-1)
	i, j := 0, 0
	for i < len(ri) || j < len(li) {
		takeRange := j == len(li) || i < len(ri) && (ranges[ri[i]].thread < launches[li[j]].thread ||
			ranges[ri[i]].thread == launches[li[j]].thread && ranges[ri[i]].start <= launches[li[j]].ts)
		var th int32
		var ts int64
		if takeRange {
			th, ts = ranges[ri[i]].thread, ranges[ri[i]].start
		} else {
			th, ts = launches[li[j]].thread, launches[li[j]].ts
		}
		if th != thread {
			stack, thread = stack[:0], th
		}
		for len(stack) > 0 && ranges[stack[len(stack)-1]].end <= ts {
			stack = stack[:len(stack)-1]
		}
		if takeRange {
			r := ri[i]
			if len(stack) > 0 {
				ranges[r].parent = stack[len(stack)-1]
			}
			stack = append(stack, r)
			i++
			continue
		}
		if len(stack) > 0 {
			launches[li[j]].innermost = stack[len(stack)-1]
		}
		j++
	}
}

// project extends, on device, the GPU window of every range open around
// the launch of a GPU event spanning [start, end).
func project(ranges []nvtxRange, l nvtxLaunch, device, start, end int64) {
	for r := l.innermost; r >= 0; r = ranges[r].parent {
		g := &ranges[r]
		if l.ts < g.start || l.ts >= g.end {
			continue
		}
		k := slices.IndexFunc(g.windows, func(w gpuWindow) bool { return w.device == device })
		if k < 0 {
			g.windows = append(g.windows, gpuWindow{device, start, end})
			continue
		}
		w := &g.windows[k]
		w.start, w.end = min(w.start, start), max(w.end, end)
	}
}

// appendDims writes `[x,y,z]`, the form Kineto traces give grid and block.
func appendDims(b []byte, d [3]int64) []byte {
	b = append(b, '[')
	for i, v := range d {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, v, 10)
	}
	return append(b, ']')
}
