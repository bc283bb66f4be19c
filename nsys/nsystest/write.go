// Package nsystest writes Nsight Systems SQLite exports for tests and
// benchmarks: the tables and columns of NVIDIA's "SQLite Export Schema
// Reference", in the shapes different Nsight versions give them (Variant),
// filled with the rows a test asks for.
package nsystest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/tracehouse/tracehouse/nsys"
	_ "modernc.org/sqlite" // the same pure-Go driver the reader uses
)

// Variant is which optional parts of the schema an export has: Nsight
// versions differ in exactly these.
type Variant struct {
	// KernelNames are the kernel name columns, each a StringIds id:
	// some of demangledName, shortName, mangledName.
	KernelNames []string
	// GlobalPid adds globalPid to the GPU activity tables.
	GlobalPid bool
	// GraphNodeID adds graphNodeId to the GPU activity tables.
	GraphNodeID bool
	// TextIDs stores NVTX range text in StringIds (textId) rather than
	// inline (text).
	TextIDs bool
	// EventTypeEnum adds ENUM_NSYS_EVENT_TYPE.
	EventTypeEnum bool
	// CUDADevice adds TARGET_INFO_CUDA_DEVICE beside TARGET_INFO_GPU.
	CUDADevice bool
	// Meta adds META_DATA_EXPORT with the export schema version.
	Meta bool
}

// Recent is the schema of a current Nsight Systems (2024-2025).
var Recent = Variant{
	KernelNames: []string{"demangledName", "shortName", "mangledName"},
	GlobalPid:   true, GraphNodeID: true, TextIDs: true, EventTypeEnum: true, CUDADevice: true, Meta: true,
}

// Legacy is the schema of an older Nsight Systems (2020-2021): no
// mangledName, globalPid, graph node ids, enum tables or CUDA device table,
// NVTX text inline.
var Legacy = Variant{KernelNames: []string{"demangledName", "shortName"}}

// ShortOnly has kernels named by shortName alone.
var ShortOnly = Variant{KernelNames: []string{"shortName"}, GlobalPid: true}

// Device is one GPU.
type Device struct {
	ID   int64
	Name string
	SMs  int64
}

// Info is the session: its start (UTC epoch ns) and GPUs.
type Info struct {
	SessionStartNS int64
	SchemaVersion  string
	Devices        []Device
}

// Kernel is one kernel row. Times are ns from the session start.
type Kernel struct {
	Name        string // demangled
	Short       string // "" = Name
	Mangled     string // "" = Name
	Start, End  int64
	Device      int64
	Stream      int64
	Correlation int64 // 0 = NULL
	PID         int64
	GraphNode   int64 // 0 = not launched from a graph
	Grid, Block [3]int64
}

// Memcpy is one memcpy row (CUPTI memcpy and memory kinds).
type Memcpy struct {
	Start, End                 int64
	Device, Stream             int64
	Correlation, PID           int64
	Bytes                      int64
	CopyKind, SrcKind, DstKind int64
	GraphNode                  int64
}

// Memset is one memset row.
type Memset struct {
	Start, End       int64
	Device, Stream   int64
	Correlation, PID int64
	Bytes, MemKind   int64
	GraphNode        int64
}

// Call is one CUDA runtime call; Name as Nsight writes it
// (cudaLaunchKernel_v7000).
type Call struct {
	Name        string
	Start, End  int64
	PID, TID    int64
	Correlation int64 // 0 = NULL
}

// Range is one NVTX range; End nsys.None leaves it open.
type Range struct {
	Name       string
	Start, End int64
	PID, TID   int64
	PushPop    bool
}

// Writer writes one export. Rows go in one transaction, committed by Close.
type Writer struct {
	v    Variant
	db   *sql.DB
	tx   *sql.Tx
	strs map[string]int64
	st   map[string]*sql.Stmt
	err  error
}

// Create starts an export at path (replacing any file there).
func Create(path string, v Variant) (*Writer, error) {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	db, err := sql.Open("sqlite", (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String()+"?_pragma=journal_mode(OFF)&_pragma=synchronous(OFF)")
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	w := &Writer{v: v, db: db, strs: map[string]int64{}, st: map[string]*sql.Stmt{}}
	for _, ddl := range schema(v) {
		if _, err := db.Exec(ddl); err != nil {
			db.Close()
			return nil, fmt.Errorf("nsystest: %s: %w", ddl, err)
		}
	}
	if w.tx, err = db.Begin(); err != nil {
		db.Close()
		return nil, err
	}
	return w, nil
}

// schema is the DDL of a variant, column for column as the reference
// documents it.
func schema(v Variant) []string {
	opt := func(on bool, col string) string {
		if on {
			return col + ", "
		}
		return ""
	}
	var names string
	for _, n := range v.KernelNames {
		names += n + " INTEGER NOT NULL, "
	}
	gpid := opt(v.GlobalPid, "globalPid INTEGER")
	node := opt(v.GraphNodeID, "graphNodeId INTEGER")
	ddl := []string{
		`CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL)`,
		`CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, utcTime TEXT, localTime TEXT)`,
		`CREATE TABLE TARGET_INFO_GPU (vmId INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT, busLocation TEXT, isDiscrete INTEGER,
			l2CacheSize INTEGER, totalMemory INTEGER, memoryBandwidth INTEGER, clockRate INTEGER, smCount INTEGER,
			pwGpuId INTEGER, uuid TEXT, luid INTEGER, chipName TEXT)`,
		`CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
			contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER, ` + gpid + names + `
			launchType INTEGER, cacheConfig INTEGER, registersPerThread INTEGER NOT NULL,
			gridX INTEGER NOT NULL, gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL,
			blockX INTEGER NOT NULL, blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL,
			staticSharedMemory INTEGER NOT NULL, dynamicSharedMemory INTEGER NOT NULL,
			localMemoryPerThread INTEGER NOT NULL, localMemoryTotal INTEGER NOT NULL, gridId INTEGER NOT NULL,
			` + node + `sharedMemoryExecuted INTEGER)`,
		`CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
			contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER, ` + gpid + `
			bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL, deprecatedSrcId INTEGER, srcKind INTEGER, dstKind INTEGER,
			srcDeviceId INTEGER, srcContextId INTEGER, dstDeviceId INTEGER, dstContextId INTEGER, ` + node + `migrationCause INTEGER)`,
		`CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
			contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER, ` + gpid + `
			value INTEGER NOT NULL, bytes INTEGER NOT NULL, ` + node + `memKind INTEGER)`,
		`CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL,
			globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, callchainId INTEGER)`,
		`CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, rangeId INTEGER,
			category INTEGER, color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid INTEGER, ` +
			opt(v.TextIDs, "textId INTEGER") + `domainId INTEGER, uint64Value INTEGER, int64Value INTEGER,
			doubleValue REAL, uint32Value INTEGER, int32Value INTEGER, floatValue REAL, jsonTextId INTEGER, jsonText TEXT)`,
	}
	if v.EventTypeEnum {
		ddl = append(ddl, `CREATE TABLE ENUM_NSYS_EVENT_TYPE (id INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL, label TEXT)`,
			`INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES (33, 'NvtxCategory', 'NVTX Category'), (34, 'NvtxMark', 'NVTX Mark'),
				(39, 'NvtxThread', 'NVTX Thread'), (59, 'NvtxPushPopRange', 'NVTX PushPop Range'),
				(60, 'NvtxStartEndRange', 'NVTX StartEnd Range'), (75, 'NvtxDomainCreate', 'NVTX Domain Create')`)
	}
	if v.CUDADevice {
		ddl = append(ddl, `CREATE TABLE TARGET_INFO_CUDA_DEVICE (gpuId INTEGER NOT NULL, cudaId INTEGER NOT NULL, pid INTEGER,
			uuid TEXT NOT NULL, numMultiprocessors INTEGER, name TEXT)`)
	}
	if v.Meta {
		ddl = append(ddl, `CREATE TABLE META_DATA_EXPORT (name TEXT NOT NULL, value TEXT)`)
	}
	return ddl
}

// stmt prepares (once) an insert into table.
func (w *Writer) exec(table string, cols []string, args ...any) {
	if w.err != nil {
		return
	}
	key := table + "(" + strings.Join(cols, ",") + ")"
	st, ok := w.st[key]
	if !ok {
		q := "INSERT INTO " + table + " (" + strings.Join(cols, ", ") + ") VALUES (?" + strings.Repeat(", ?", len(cols)-1) + ")"
		if st, w.err = w.tx.Prepare(q); w.err != nil {
			return
		}
		w.st[key] = st
	}
	_, w.err = st.Exec(args...)
}

func (w *Writer) str(s string) int64 {
	if id, ok := w.strs[s]; ok {
		return id
	}
	id := int64(len(w.strs) + 1)
	w.strs[s] = id
	w.exec("StringIds", []string{"id", "value"}, id, s)
	return id
}

func null(v int64) any {
	if v == 0 {
		return nil
	}
	return v
}

// Info writes the session start, the schema version and the GPUs.
func (w *Writer) Info(in Info) {
	w.exec("TARGET_INFO_SESSION_START_TIME", []string{"utcEpochNs", "utcTime", "localTime"}, in.SessionStartNS, "", "")
	if w.v.Meta {
		w.exec("META_DATA_EXPORT", []string{"name", "value"}, "EXPORT_SCHEMA_VERSION", in.SchemaVersion)
	}
	for _, d := range in.Devices {
		w.exec("TARGET_INFO_GPU", []string{"vmId", "id", "name", "smCount", "totalMemory", "uuid"},
			0, d.ID, d.Name, d.SMs, int64(80)<<30, fmt.Sprintf("GPU-%08d", d.ID))
		if w.v.CUDADevice {
			w.exec("TARGET_INFO_CUDA_DEVICE", []string{"gpuId", "cudaId", "pid", "uuid", "numMultiprocessors", "name"},
				d.ID, d.ID, nil, fmt.Sprintf("GPU-%08d", d.ID), d.SMs, d.Name)
		}
	}
}

func (w *Writer) gpuCols(cols []string, args []any, pid, node int64) ([]string, []any) {
	if w.v.GlobalPid {
		cols, args = append(cols, "globalPid"), append(args, pid<<24)
	}
	if w.v.GraphNodeID {
		cols, args = append(cols, "graphNodeId"), append(args, null(node))
	}
	return cols, args
}

// Kernel writes a kernel row.
func (w *Writer) Kernel(k Kernel) {
	cols := []string{"start", "end", "deviceId", "contextId", "streamId", "correlationId", "registersPerThread",
		"gridX", "gridY", "gridZ", "blockX", "blockY", "blockZ", "staticSharedMemory", "dynamicSharedMemory",
		"localMemoryPerThread", "localMemoryTotal", "gridId"}
	args := []any{k.Start, k.End, k.Device, 1, k.Stream, null(k.Correlation), 32,
		k.Grid[0], k.Grid[1], k.Grid[2], k.Block[0], k.Block[1], k.Block[2], 0, 0, 0, 0, 0}
	for _, n := range w.v.KernelNames {
		s := k.Name
		switch {
		case n == "shortName" && k.Short != "":
			s = k.Short
		case n == "mangledName" && k.Mangled != "":
			s = k.Mangled
		}
		cols, args = append(cols, n), append(args, w.str(s))
	}
	cols, args = w.gpuCols(cols, args, k.PID, k.GraphNode)
	w.exec("CUPTI_ACTIVITY_KIND_KERNEL", cols, args...)
}

// Memcpy writes a memcpy row.
func (w *Writer) Memcpy(m Memcpy) {
	cols := []string{"start", "end", "deviceId", "contextId", "streamId", "correlationId", "bytes", "copyKind", "srcKind", "dstKind"}
	args := []any{m.Start, m.End, m.Device, 1, m.Stream, null(m.Correlation), m.Bytes, m.CopyKind, m.SrcKind, m.DstKind}
	cols, args = w.gpuCols(cols, args, m.PID, m.GraphNode)
	w.exec("CUPTI_ACTIVITY_KIND_MEMCPY", cols, args...)
}

// Memset writes a memset row.
func (w *Writer) Memset(m Memset) {
	cols := []string{"start", "end", "deviceId", "contextId", "streamId", "correlationId", "value", "bytes", "memKind"}
	args := []any{m.Start, m.End, m.Device, 1, m.Stream, null(m.Correlation), 0, m.Bytes, m.MemKind}
	cols, args = w.gpuCols(cols, args, m.PID, m.GraphNode)
	w.exec("CUPTI_ACTIVITY_KIND_MEMSET", cols, args...)
}

// Call writes a CUDA runtime row.
func (w *Writer) Call(c Call) {
	w.exec("CUPTI_ACTIVITY_KIND_RUNTIME", []string{"start", "end", "eventClass", "globalTid", "correlationId", "nameId", "returnValue"},
		c.Start, c.End, 1, c.PID<<24|c.TID, null(c.Correlation), w.str(c.Name), 0)
}

// Range writes an NVTX range.
func (w *Writer) Range(r Range) {
	typ := int64(60)
	if r.PushPop {
		typ = 59
	}
	var end any = r.End
	if r.End == nsys.None {
		end = nil
	}
	gtid := r.PID<<24 | r.TID
	if w.v.TextIDs {
		w.exec("NVTX_EVENTS", []string{"start", "end", "eventType", "globalTid", "textId"}, r.Start, end, typ, gtid, w.str(r.Name))
		return
	}
	w.exec("NVTX_EVENTS", []string{"start", "end", "eventType", "globalTid", "text"}, r.Start, end, typ, gtid, r.Name)
}

// Mark writes an NVTX mark (an instant the reader leaves out).
func (w *Writer) Mark(name string, ts, pid, tid int64) {
	w.exec("NVTX_EVENTS", []string{"start", "eventType", "globalTid", "text"}, ts, 34, pid<<24|tid, name)
}

// Exec runs one statement inside the export's transaction (tests use it to
// bend a fixture).
func (w *Writer) Exec(q string, args ...any) {
	if w.err != nil {
		return
	}
	_, w.err = w.tx.ExecContext(context.Background(), q, args...)
}

// Close commits and closes the export; it returns the first error of any
// write.
func (w *Writer) Close() error {
	for _, st := range w.st {
		st.Close()
	}
	err := w.err
	if err == nil {
		err = w.tx.Commit()
	} else {
		w.tx.Rollback()
	}
	if cerr := w.db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("nsystest: %w", err)
	}
	return nil
}
