package nsys

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/tracehouse/tracehouse/limits"
	"github.com/tracehouse/tracehouse/parseerr"
)

// None marks an integer the export does not give (a column this Nsight
// version lacks, or a NULL).
const None = math.MinInt64

// Kind is the kind of a GPU activity.
type Kind int8

// Kinds of GPU activity.
const (
	Kernel Kind = iota + 1
	Memcpy
	Memset
)

func (k Kind) String() string {
	switch k {
	case Kernel:
		return "kernel"
	case Memcpy:
		return "memcpy"
	case Memset:
		return "memset"
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Activity is one row of CUPTI_ACTIVITY_KIND_KERNEL, _MEMCPY or _MEMSET.
type Activity struct {
	Kind Kind
	// Name: for kernels the first of demangledName, mangledName, shortName
	// the export has (KernelNameColumn says which); for memcpy and memset the
	// name Kineto gives the same CUPTI record ("Memcpy HtoD (Pinned ->
	// Device)", "Memset (Device)"), so both sources name them alike.
	Name        string
	Start, End  int64 // ns from the session start
	Device      int64 // deviceId (TARGET_INFO_GPU.id)
	Stream      int64 // streamId
	Correlation int64 // correlationId, None when absent
	PID         int64 // process from globalPid, None when the version has none
	Grid, Block [3]int64
	HasDims     bool  // Grid and Block were read (kernels)
	Bytes       int64 // memcpy and memset size, None for kernels
	GraphNode   int64 // graphNodeId, None when not launched from a graph (or not recorded)
}

// Call is one CUDA runtime API call (CUPTI_ACTIVITY_KIND_RUNTIME).
type Call struct {
	// Name without Nsight's `_v<version>` suffix: cudaLaunchKernel, as
	// Kineto names it.
	Name        string
	Start, End  int64
	PID, TID    int64 // from globalTid, None when absent
	Correlation int64 // None when absent
}

// Range is one NVTX push/pop or start/end range (NVTX_EVENTS).
type Range struct {
	Name       string
	Start, End int64 // End is None for a range never closed
	PID, TID   int64 // the thread that opened it, None when absent
	PushPop    bool  // a push/pop (thread) range; false: start/end
}

// Device is one GPU the export describes (TARGET_INFO_GPU, else
// TARGET_INFO_CUDA_DEVICE).
type Device struct {
	ID   int64
	Name string
	// Props holds every column of the device's row.
	Props map[string]any
}

// Info is what the export says about the session as a whole.
type Info struct {
	// SessionStartNS is the UTC epoch of the session start in ns: add it to
	// every Start/End for absolute times. HasSessionStart is false when the
	// export has no TARGET_INFO_SESSION_START_TIME.
	SessionStartNS  int64
	HasSessionStart bool
	// SchemaVersion is META_DATA_EXPORT's EXPORT_SCHEMA_VERSION, "" when absent.
	SchemaVersion string
	Devices       []Device
}

// DeviceName is the name of device id, "" when the export does not say.
func (in *Info) DeviceName(id int64) string {
	for _, d := range in.Devices {
		if d.ID == id {
			return d.Name
		}
	}
	return ""
}

// ReadInfo reads the session start, the export schema version and the GPUs.
func (e *Export) ReadInfo(ctx context.Context) (Info, error) {
	var in Info
	if e.HasColumn(TableSessionTime, "utcEpochNs") {
		var v sql.NullInt64
		err := e.db.QueryRowContext(ctx, `SELECT utcEpochNs FROM `+TableSessionTime+` LIMIT 1`).Scan(&v)
		if err != nil && err != sql.ErrNoRows {
			return in, e.damaged(TableSessionTime, err)
		}
		if v.Valid && !limits.Time(v.Int64) {
			return in, fail(e.path, TableSessionTime, "utcEpochNs", parseerr.Errorf(ErrValue,
				"%d ns is outside the times the warehouse keeps (%s)", v.Int64, limits.TimeRange))
		}
		in.SessionStartNS, in.HasSessionStart = v.Int64, v.Valid
		e.base = v.Int64
	}
	if e.HasColumn(TableMeta, "name") && e.HasColumn(TableMeta, "value") {
		var v sql.NullString
		err := e.db.QueryRowContext(ctx, `SELECT CAST(value AS TEXT) FROM `+TableMeta+` WHERE name = 'EXPORT_SCHEMA_VERSION' LIMIT 1`).Scan(&v)
		if err != nil && err != sql.ErrNoRows {
			return in, e.damaged(TableMeta, err)
		}
		in.SchemaVersion = v.String
	}
	var err error
	switch {
	case e.HasColumn(TableGPU, "id"):
		in.Devices, err = e.devices(ctx, TableGPU, "id")
	case e.HasColumn(TableCUDADevice, "gpuId"):
		in.Devices, err = e.devices(ctx, TableCUDADevice, "gpuId")
	}
	return in, err
}

// devices reads every row of table, keyed by its idCol.
func (e *Export) devices(ctx context.Context, table, idCol string) ([]Device, error) {
	rows, err := e.db.QueryContext(ctx, `SELECT * FROM `+table+` ORDER BY `+quote(idCol))
	if err != nil {
		return nil, e.damaged(table, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, e.damaged(table, err)
	}
	var out []Device
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, e.damaged(table, err)
		}
		d := Device{ID: None, Props: map[string]any{}}
		for i, c := range cols {
			v := vals[i]
			if b, ok := v.([]byte); ok {
				v = string(b)
			}
			if v == nil {
				continue
			}
			d.Props[c] = v
			switch c {
			case idCol:
				if n, ok := v.(int64); ok {
					d.ID = n
				}
			case "name":
				if s, ok := v.(string); ok {
					d.Name = e.validString(s)
				}
			}
		}
		// One GPU seen by several processes is one device.
		if d.ID != None && !slices.ContainsFunc(out, func(o Device) bool { return o.ID == d.ID }) {
			out = append(out, d)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, e.damaged(table, err)
	}
	return out, nil
}

// KernelNameColumn is the column kernel names are read from: demangledName,
// mangledName or shortName, the first the export has ("" without kernels).
func (e *Export) KernelNameColumn() string {
	for _, c := range []string{"demangledName", "mangledName", "shortName"} {
		if e.HasColumn(TableKernel, c) {
			return c
		}
	}
	return ""
}

// column is one column a reader selects: required ones fail the read when
// absent, others read as NULL.
type column struct {
	name     string
	required bool
}

// selectFrom builds SELECT over table's columns, NULL for absent optional
// ones.
func (e *Export) selectFrom(table string, cols []column) (string, error) {
	var b strings.Builder
	b.WriteString("SELECT ")
	for i, c := range cols {
		if i > 0 {
			b.WriteString(", ")
		}
		switch {
		case e.HasColumn(table, c.name):
			b.WriteString(quote(c.name))
		case c.required:
			return "", fail(e.path, table, "", parseerr.Errorf(ErrSchema, "no column %s (it has %s)", c.name, strings.Join(e.columns[table], ", ")))
		default:
			b.WriteString("NULL")
		}
	}
	b.WriteString(" FROM " + quote(table))
	return b.String(), nil
}

func quote(id string) string { return `"` + strings.ReplaceAll(id, `"`, `""`) + `"` }

// scanner walks one table's rows, numbering them for error positions.
type scanner struct {
	e     *Export
	table string
	rows  *sql.Rows
	row   int64
}

func (e *Export) scan(ctx context.Context, table string, cols []column) (*scanner, error) {
	q, err := e.selectFrom(table, cols)
	if err != nil {
		return nil, err
	}
	rows, err := e.db.QueryContext(ctx, q)
	if err != nil {
		return nil, e.damaged(table, err)
	}
	return &scanner{e: e, table: table, rows: rows}, nil
}

func (s *scanner) next(dest ...any) (bool, error) {
	if !s.rows.Next() {
		if err := s.rows.Err(); err != nil {
			// SQLite's own failure (a page it cannot read): damage.
			de := s.e.damaged(s.table, err)
			if pe, ok := de.(*parseerr.Error); ok && s.row > 0 {
				pe.Entry = fmt.Sprintf("%s after row %d", s.table, s.row)
			}
			return false, de
		}
		return false, nil
	}
	s.row++
	if err := s.rows.Scan(dest...); err != nil {
		return false, s.badValue("", "%v", err)
	}
	return true, nil
}

func (s *scanner) close() { s.rows.Close() }

// entry names the current row for error messages.
func (s *scanner) entry() string { return fmt.Sprintf("%s row %d", s.table, s.row) }

// badValue is a value error at the scanner's row.
func (s *scanner) badValue(field, format string, args ...any) error {
	return fail(s.e.path, s.entry(), field, parseerr.Errorf(ErrValue, format, args...))
}

// span checks a row's start and end.
func (s *scanner) span(start, end sql.NullInt64) (int64, int64, error) {
	if !start.Valid {
		return 0, 0, s.badValue("start", "NULL")
	}
	if !end.Valid {
		return 0, 0, s.badValue("end", "NULL")
	}
	if end.Int64 < start.Int64 {
		return 0, 0, s.badValue("end", "%d is before start %d", end.Int64, start.Int64)
	}
	if err := s.time("start", start.Int64); err != nil {
		return 0, 0, err
	}
	if err := s.time("end", end.Int64); err != nil {
		return 0, 0, err
	}
	if d := end.Int64 - start.Int64; !limits.Duration(d) {
		return 0, 0, s.badValue("end", "a span of %d ns is longer than the warehouse keeps (%s)", d, limits.DurationRange)
	}
	return start.Int64, end.Int64, nil
}

// time checks that a time, made absolute with the session start, is one
// the warehouse keeps (sums and differences of two never overflow).
func (s *scanner) time(field string, ns int64) error {
	if !limits.Time(ns) {
		return s.badValue(field, "%d ns is outside the times the warehouse keeps (%s)", ns, limits.TimeRange)
	}
	if _, ok := limits.AddTime(ns, s.e.base); !ok {
		return s.badValue(field, "%d ns after the session start %d ns: %s ns is outside the times the warehouse keeps (%s)",
			ns, s.e.base, limits.Sum(ns, s.e.base), limits.TimeRange)
	}
	return nil
}

// device checks a deviceId: a GPU index, and the rank of a one-GPU export.
func (s *scanner) device(dev sql.NullInt64) error {
	if !dev.Valid {
		return s.badValue("deviceId", "NULL")
	}
	if !limits.Index(dev.Int64) {
		return s.badValue("deviceId", "%d is outside %s", dev.Int64, limits.IndexRange)
	}
	return nil
}

// name resolves a name column's value: a StringIds id, or text.
func (s *scanner) name(ctx context.Context, field string, v any) (string, error) {
	switch x := v.(type) {
	case int64:
		str, err := s.e.String(ctx, x)
		if err != nil {
			if pe, ok := err.(*parseerr.Error); ok {
				pe.Entry, pe.Field = s.entry(), field
			}
			return "", err
		}
		return str, nil
	case string:
		return s.e.validString(x), nil
	case []byte:
		return s.e.validString(string(x)), nil
	case nil:
		return "", s.badValue(field, "NULL")
	}
	return "", s.badValue(field, "want a string id or text, got %T", v)
}

func orNone(v sql.NullInt64) int64 {
	if !v.Valid {
		return None
	}
	return v.Int64
}

// Global thread and process ids pack the process into bits 24..47 and the
// thread into bits 0..23 (the export reference's "serialized process and
// thread identifiers").
func pidOf(global sql.NullInt64) int64 {
	if !global.Valid {
		return None
	}
	return global.Int64 >> 24 & 0xFFFFFF
}

func tidOf(global sql.NullInt64) int64 {
	if !global.Valid {
		return None
	}
	return global.Int64 & 0xFFFFFF
}

// GPU calls f for every kernel, memcpy and memset, table by table in row
// order (not time order). The Activity is reused between calls.
func (e *Export) GPU(ctx context.Context, f func(*Activity) error) error {
	if e.HasTable(TableKernel) {
		if err := e.kernels(ctx, f); err != nil {
			return err
		}
	}
	if e.HasTable(TableMemcpy) {
		if err := e.memops(ctx, Memcpy, f); err != nil {
			return err
		}
	}
	if e.HasTable(TableMemset) {
		if err := e.memops(ctx, Memset, f); err != nil {
			return err
		}
	}
	return nil
}

func (e *Export) kernels(ctx context.Context, f func(*Activity) error) error {
	nameCol := e.KernelNameColumn()
	if nameCol == "" {
		return fail(e.path, TableKernel, "", parseerr.Errorf(ErrSchema,
			"no kernel name column (demangledName, mangledName or shortName; it has %s)", strings.Join(e.columns[TableKernel], ", ")))
	}
	s, err := e.scan(ctx, TableKernel, []column{
		{"start", true}, {"end", true}, {"deviceId", true}, {"streamId", true}, {nameCol, true},
		{"correlationId", false}, {"globalPid", false}, {"graphNodeId", false},
		{"gridX", false}, {"gridY", false}, {"gridZ", false}, {"blockX", false}, {"blockY", false}, {"blockZ", false},
	})
	if err != nil {
		return err
	}
	defer s.close()
	hasDims := e.HasColumn(TableKernel, "gridX") && e.HasColumn(TableKernel, "blockX")
	var start, end, dev, stream, corr, gpid, node sql.NullInt64
	var dims [6]sql.NullInt64
	var name any
	a := &Activity{Kind: Kernel, Bytes: None}
	for {
		ok, err := s.next(&start, &end, &dev, &stream, &name, &corr, &gpid, &node,
			&dims[0], &dims[1], &dims[2], &dims[3], &dims[4], &dims[5])
		if err != nil || !ok {
			return err
		}
		if a.Start, a.End, err = s.span(start, end); err != nil {
			return err
		}
		if err := s.device(dev); err != nil {
			return err
		}
		if a.Name, err = s.name(ctx, nameCol, name); err != nil {
			return err
		}
		a.Device, a.Stream = dev.Int64, orNone(stream)
		a.Correlation, a.PID, a.GraphNode = orNone(corr), pidOf(gpid), orNone(node)
		a.HasDims = hasDims
		for i := range 3 {
			a.Grid[i], a.Block[i] = dims[i].Int64, dims[3+i].Int64
		}
		if err := f(a); err != nil {
			return err
		}
	}
}

// CUPTI's memcpy kinds and memory kinds, as Kineto spells them.
var (
	copyKinds = []string{"Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA", "AtoD", "DtoA", "DtoD", "HtoH", "PtoP"}
	memKinds  = []string{"Unknown", "Pageable", "Pinned", "Device", "Array", "Managed", "Device Static", "Managed Static"}
)

func kindName(names []string, v sql.NullInt64) string {
	if !v.Valid || v.Int64 < 0 || v.Int64 >= int64(len(names)) {
		return "Unknown"
	}
	return names[v.Int64]
}

func (e *Export) memops(ctx context.Context, kind Kind, f func(*Activity) error) error {
	table := TableMemcpy
	cols := []column{{"start", true}, {"end", true}, {"deviceId", true}, {"streamId", true}, {"bytes", true},
		{"correlationId", false}, {"globalPid", false}, {"graphNodeId", false}}
	if kind == Memcpy {
		cols = append(cols, column{"copyKind", true}, column{"srcKind", false}, column{"dstKind", false})
	} else {
		table = TableMemset
		cols = append(cols, column{"memKind", false}, column{"memKind", false}, column{"memKind", false})
	}
	s, err := e.scan(ctx, table, cols)
	if err != nil {
		return err
	}
	defer s.close()
	names := map[[3]int64]string{}
	var start, end, dev, stream, bytes, corr, gpid, node, k1, k2, k3 sql.NullInt64
	a := &Activity{Kind: kind}
	for {
		ok, err := s.next(&start, &end, &dev, &stream, &bytes, &corr, &gpid, &node, &k1, &k2, &k3)
		if err != nil || !ok {
			return err
		}
		if a.Start, a.End, err = s.span(start, end); err != nil {
			return err
		}
		if err := s.device(dev); err != nil {
			return err
		}
		key := [3]int64{orNone(k1), orNone(k2), orNone(k3)}
		n, ok := names[key]
		if !ok {
			if kind == Memcpy {
				n = "Memcpy " + kindName(copyKinds, k1) + " (" + kindName(memKinds, k2) + " -> " + kindName(memKinds, k3) + ")"
			} else {
				n = "Memset (" + kindName(memKinds, k1) + ")"
			}
			names[key] = n
		}
		a.Name = n
		a.Device, a.Stream, a.Bytes = dev.Int64, orNone(stream), orNone(bytes)
		a.Correlation, a.PID, a.GraphNode = orNone(corr), pidOf(gpid), orNone(node)
		if err := f(a); err != nil {
			return err
		}
	}
}

// apiVersion is Nsight's version suffix on runtime API names.
var apiVersion = regexp.MustCompile(`_v\d+$`)

// Runtime calls f for every CUDA runtime call, in row order. The Call is
// reused between calls.
func (e *Export) Runtime(ctx context.Context, f func(*Call) error) error {
	if !e.HasTable(TableRuntime) {
		return nil
	}
	nameCol := "nameId"
	if !e.HasColumn(TableRuntime, nameCol) && e.HasColumn(TableRuntime, "name") {
		nameCol = "name"
	}
	s, err := e.scan(ctx, TableRuntime, []column{{"start", true}, {"end", true}, {nameCol, true},
		{"correlationId", false}, {"globalTid", false}})
	if err != nil {
		return err
	}
	defer s.close()
	names := map[string]string{}
	var start, end, corr, gtid sql.NullInt64
	var name any
	c := &Call{}
	for {
		ok, err := s.next(&start, &end, &name, &corr, &gtid)
		if err != nil || !ok {
			return err
		}
		if c.Start, c.End, err = s.span(start, end); err != nil {
			return err
		}
		raw, err := s.name(ctx, nameCol, name)
		if err != nil {
			return err
		}
		n, ok := names[raw]
		if !ok {
			n = apiVersion.ReplaceAllString(raw, "")
			names[raw] = n
		}
		c.Name, c.Correlation, c.PID, c.TID = n, orNone(corr), pidOf(gtid), tidOf(gtid)
		if err := f(c); err != nil {
			return err
		}
	}
}

// rangeTypes returns the eventType ids of push/pop and start/end ranges:
// from ENUM_NSYS_EVENT_TYPE when the export has it, else Nsight's values.
func (e *Export) rangeTypes(ctx context.Context) (pushPop, startEnd int64, err error) {
	pushPop, startEnd = 59, 60
	if !e.HasColumn(TableEventTypes, "id") || !e.HasColumn(TableEventTypes, "name") {
		return pushPop, startEnd, nil
	}
	rows, err := e.db.QueryContext(ctx, `SELECT id, name FROM `+TableEventTypes+` WHERE name IN ('NvtxPushPopRange', 'NvtxStartEndRange')`)
	if err != nil {
		return 0, 0, e.damaged(TableEventTypes, err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var name string
		if err := rows.Scan(&id, &name); err != nil {
			return 0, 0, e.damaged(TableEventTypes, err)
		}
		if name == "NvtxPushPopRange" {
			pushPop = id
		} else {
			startEnd = id
		}
	}
	if err := rows.Err(); err != nil {
		return 0, 0, e.damaged(TableEventTypes, err)
	}
	return pushPop, startEnd, nil
}

// Ranges calls f for every NVTX push/pop and start/end range, in row order
// (marks and other NVTX records are left out). The Range is reused.
func (e *Export) Ranges(ctx context.Context, f func(*Range) error) error {
	if !e.HasTable(TableNVTX) {
		return nil
	}
	if !e.HasColumn(TableNVTX, "text") && !e.HasColumn(TableNVTX, "textId") {
		return fail(e.path, TableNVTX, "", parseerr.Errorf(ErrSchema, "no range text column (text or textId; it has %s)",
			strings.Join(e.columns[TableNVTX], ", ")))
	}
	pushPop, startEnd, err := e.rangeTypes(ctx)
	if err != nil {
		return err
	}
	q, err := e.selectFrom(TableNVTX, []column{{"start", true}, {"end", true}, {"eventType", true},
		{"text", false}, {"textId", false}, {"globalTid", false}})
	if err != nil {
		return err
	}
	rows, err := e.db.QueryContext(ctx, q+` WHERE "eventType" IN (?, ?)`, pushPop, startEnd)
	if err != nil {
		return e.damaged(TableNVTX, err)
	}
	s := &scanner{e: e, table: TableNVTX, rows: rows}
	defer s.close()
	var start, end, typ, textID, gtid sql.NullInt64
	var text sql.NullString
	r := &Range{}
	for {
		ok, err := s.next(&start, &end, &typ, &text, &textID, &gtid)
		if err != nil || !ok {
			return err
		}
		if !start.Valid {
			return s.badValue("start", "NULL")
		}
		r.Start, r.End = start.Int64, orNone(end)
		if r.End != None && r.End < r.Start {
			return s.badValue("end", "%d is before start %d", r.End, r.Start)
		}
		if r.End != None {
			if _, _, err := s.span(start, end); err != nil {
				return err
			}
		} else if err := s.time("start", r.Start); err != nil {
			return err
		}
		switch {
		case text.Valid:
			r.Name = s.e.validString(text.String)
		case textID.Valid:
			if r.Name, err = s.name(ctx, "textId", textID.Int64); err != nil {
				return err
			}
		default:
			r.Name = ""
		}
		r.PID, r.TID, r.PushPop = pidOf(gtid), tidOf(gtid), typ.Int64 == pushPop
		if err := f(r); err != nil {
			return err
		}
	}
}

// Devices lists the deviceId values of the GPU activity tables, sorted: the
// GPUs that ran something.
func (e *Export) Devices(ctx context.Context) ([]int64, error) {
	var parts []string
	for _, t := range []string{TableKernel, TableMemcpy, TableMemset} {
		if e.HasColumn(t, "deviceId") {
			parts = append(parts, `SELECT DISTINCT "deviceId" FROM `+quote(t)+` WHERE "deviceId" IS NOT NULL`)
		}
	}
	if len(parts) == 0 {
		return nil, nil
	}
	return oneColumn[int64](ctx, e, TableKernel, strings.Join(parts, " UNION ")+" ORDER BY 1")
}

// Processes lists the processes that made CUDA runtime calls, sorted (none
// when the export records no thread ids).
func (e *Export) Processes(ctx context.Context) ([]int64, error) {
	if !e.HasColumn(TableRuntime, "globalTid") {
		return nil, nil
	}
	return oneColumn[int64](ctx, e, TableRuntime, `SELECT DISTINCT ("globalTid" >> 24) & 16777215 FROM `+TableRuntime+
		` WHERE "globalTid" IS NOT NULL ORDER BY 1`)
}
