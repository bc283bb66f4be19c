package ingest

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tracehouse/tracehouse/nsys"
	"github.com/tracehouse/tracehouse/nsys/nsystest"
	"github.com/tracehouse/tracehouse/queries"
	"github.com/tracehouse/tracehouse/schema"
	"github.com/tracehouse/tracehouse/synth"
)

const nsysSession = 1_751_289_296_000_000_000

// writeNsysFixture writes a small decode step as Nsight records it, on
// device dev of one process (pid 4242, thread 4243):
//
//	NVTX step[DECODE bs=4 toks=4] [100, 10000)
//	  NVTX layer.attn [150, 450)   cudaLaunchKernel @200 (corr 1) -> attn_kernel [1000, 1300)
//	  NVTX layer.mlp  [450, 900)   cudaLaunchKernel @500 (corr 2) -> gemm [1300, 1800)
//	  cudaGraphLaunch @950 (corr 3) -> k1 [2000, 2100), k2 [2100, 2300) (graph nodes)
//	cudaMemcpyAsync @20000 (corr 4) -> Memcpy HtoD [20100, 20200)
//	Memset [20300, 20310) with no correlation
//	NVTX "left open" [30000, -)
func writeNsysFixture(t *testing.T, path string, v nsystest.Variant, dev int64) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	w, err := nsystest.Create(path, v)
	if err != nil {
		t.Fatal(err)
	}
	w.Info(nsystest.Info{SessionStartNS: nsysSession, SchemaVersion: "3.11.1",
		Devices: []nsystest.Device{{ID: dev, Name: "NVIDIA H100 80GB HBM3", SMs: 132}}})
	const pid, tid = 4242, 4243
	w.Range(nsystest.Range{Name: "step[DECODE bs=4 toks=4]", Start: 100, End: 10000, PID: pid, TID: tid, PushPop: true})
	w.Range(nsystest.Range{Name: "layer.attn", Start: 150, End: 450, PID: pid, TID: tid, PushPop: true})
	w.Range(nsystest.Range{Name: "layer.mlp", Start: 450, End: 900, PID: pid, TID: tid, PushPop: true})
	w.Range(nsystest.Range{Name: "left open", Start: 30000, End: nsys.None, PID: pid, TID: tid})
	w.Mark("mark", 120, pid, tid)
	w.Call(nsystest.Call{Name: "cudaLaunchKernel_v7000", Start: 200, End: 220, PID: pid, TID: tid, Correlation: 1})
	w.Call(nsystest.Call{Name: "cudaLaunchKernel_v7000", Start: 500, End: 520, PID: pid, TID: tid, Correlation: 2})
	w.Call(nsystest.Call{Name: "cudaGraphLaunch_v10000", Start: 950, End: 990, PID: pid, TID: tid, Correlation: 3})
	w.Call(nsystest.Call{Name: "cudaMemcpyAsync_v3020", Start: 20000, End: 20050, PID: pid, TID: tid, Correlation: 4})
	k := func(name string, start, end, corr, node int64) {
		w.Kernel(nsystest.Kernel{Name: name, Start: start, End: end, Device: dev, Stream: 7, Correlation: corr, PID: pid,
			GraphNode: node, Grid: [3]int64{4, 1, 1}, Block: [3]int64{128, 1, 1}})
	}
	k("attn_kernel", 1000, 1300, 1, 0)
	k("gemm", 1300, 1800, 2, 0)
	k("k1", 2000, 2100, 3, 11)
	k("k2", 2100, 2300, 3, 12)
	w.Memcpy(nsystest.Memcpy{Start: 20100, End: 20200, Device: dev, Stream: 7, Correlation: 4, PID: pid, Bytes: 4096,
		CopyKind: 1, SrcKind: 2, DstKind: 3})
	w.Memset(nsystest.Memset{Start: 20300, End: 20310, Device: dev, Stream: 7, PID: pid, Bytes: 64, MemKind: 3})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func openMemory(t *testing.T) *schema.Warehouse {
	t.Helper()
	w, err := schema.Open(context.Background(), schema.Memory, schema.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

func mustCSV(t *testing.T, db *sql.DB, q string) string {
	t.Helper()
	s, err := queryCSV(context.Background(), db, q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return s
}

// TestNsysKnownAnswers ingests the fixture in two schema variants (with
// and without globalPid, graph node ids, mangledName, enum tables; NVTX
// text by id or inline) and checks every stored row against the values
// written: times made absolute, launches linked by correlation id, graph
// replays marked and left unlocated, kernel locations from the innermost
// NVTX range, the stage and step from the step[...] range, the rank from
// the file name, the device name, and the trace's counts and format.
func TestNsysKnownAnswers(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		v    nsystest.Variant
	}{{"recent", nsystest.Recent}, {"legacy", nsystest.Legacy}} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			path := filepath.Join(dir, "run1", "profile-rank2.sqlite")
			writeNsysFixture(t, path, c.v, 5)
			w := openMemory(t)
			res, err := Ingest(ctx, w, []string{filepath.Join(dir, "run1")}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Files) != 1 || res.Files[0].Status != StatusIngested || res.Files[0].GPUEvents != 6 {
				t.Fatalf("result: %+v", res.Files)
			}
			got := mustCSV(t, w.DB, `SELECT n.name, k.kind, k.ts_ns - 1751289296000000000 AS ts, k.dur_ns, k.device, k.stream,
					k.correlation, k.grid, k.block, k.bytes, k.rank, k.stage, k.graph_launch, l.name AS launch, s.display AS site,
					s.framework, k.step
				FROM kernels k JOIN kernel_names n USING (name_id)
				LEFT JOIN launches l ON l.launch_id = k.launch_id LEFT JOIN sites s ON s.site_id = k.site_id
				ORDER BY k.ts_ns`)
			want := `name,kind,ts,dur_ns,device,stream,correlation,grid,block,bytes,rank,stage,graph_launch,launch,site,framework,step
attn_kernel,kernel,1000,300,5,7,1,"[4,1,1]","[128,1,1]",NULL,2,decode,false,cudaLaunchKernel,nvtx: layer.attn,nvtx,1
gemm,kernel,1300,500,5,7,2,"[4,1,1]","[128,1,1]",NULL,2,decode,false,cudaLaunchKernel,nvtx: layer.mlp,nvtx,1
k1,kernel,2000,100,5,7,3,"[4,1,1]","[128,1,1]",NULL,2,decode,true,cudaGraphLaunch,NULL,NULL,1
k2,kernel,2100,200,5,7,3,"[4,1,1]","[128,1,1]",NULL,2,decode,true,cudaGraphLaunch,NULL,NULL,1
Memcpy HtoD (Pinned -> Device),memcpy,20100,100,5,7,4,NULL,NULL,4096,2,unknown,false,cudaMemcpyAsync,NULL,NULL,NULL
Memset (Device),memset,20300,10,5,7,NULL,NULL,NULL,64,2,unknown,false,NULL,NULL,NULL,NULL
`
			if got != want {
				t.Errorf("kernels:\n got %s\nwant %s", got, want)
			}
			got = mustCSV(t, w.DB, `SELECT name, cat, ts_ns - 1751289296000000000 AS ts, dur_ns, pid, tid, stage
				FROM annotations ORDER BY cat DESC, ts_ns, name`)
			// NVTX ranges, then their GPU projections (kernels launched inside).
			want = `name,cat,ts,dur_ns,pid,tid,stage
step[DECODE bs=4 toks=4],user_annotation,100,9900,4242,4243,decode
layer.attn,user_annotation,150,300,4242,4243,NULL
layer.mlp,user_annotation,450,450,4242,4243,NULL
layer.attn,gpu_user_annotation,1000,300,5,NULL,NULL
step[DECODE bs=4 toks=4],gpu_user_annotation,1000,1300,5,NULL,decode
layer.mlp,gpu_user_annotation,1300,500,5,NULL,NULL
`
			if got != want {
				t.Errorf("annotations:\n got %s\nwant %s", got, want)
			}
			got = mustCSV(t, w.DB, `SELECT source, name, stage, batch_size, tokens FROM steps`)
			if want := "source,name,stage,batch_size,tokens\nstep_annotation,step[DECODE bs=4 toks=4],decode,4,4\n"; got != want {
				t.Errorf("steps:\n got %s\nwant %s", got, want)
			}
			got = mustCSV(t, w.DB, `SELECT source_format, rank, rank_assumed, merged, stage, stage_source, device_name,
					base_time_ns, start_ns - base_time_ns AS start, end_ns - base_time_ns AS "end",
					kernel_events, memcpy_events, memset_events, launch_events, graph_launches, annotation_events,
					cpu_op_events, py_frame_events, events, warnings, warning_notes, json_bytes = bytes AS whole
				FROM traces`)
			want = `source_format,rank,rank_assumed,merged,stage,stage_source,device_name,base_time_ns,start,end,kernel_events,memcpy_events,memset_events,launch_events,graph_launches,annotation_events,cpu_op_events,py_frame_events,events,warnings,warning_notes,whole
nsys,2,false,false,decode,annotations,NVIDIA H100 80GB HBM3,1751289296000000000,100,20310,4,1,1,4,1,3,0,0,14,1,"[1 x NVTX range never closed, left out]",true
`
			if got != want {
				t.Errorf("trace:\n got %s\nwant %s", got, want)
			}
			got = mustCSV(t, w.DB, `SELECT count(*) AS n, count(site_id) AS sited FROM launches`)
			if want := "n,sited\n4,3\n"; got != want {
				t.Errorf("launches:\n got %s\nwant %s", got, want)
			}

			// Idempotent by content: the same file again, and a copy, store nothing.
			cp := filepath.Join(dir, "copy", "profile-rank2.sqlite")
			b, _ := os.ReadFile(path)
			os.MkdirAll(filepath.Dir(cp), 0o755)
			os.WriteFile(cp, b, 0o644)
			res, err = Ingest(ctx, w, []string{path, cp}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range res.Files {
				if f.Status != StatusAlready {
					t.Errorf("re-ingest %s: %s", f.Path, f.Status)
				}
			}
			if got := mustCSV(t, w.DB, `SELECT count(*) FROM kernels`); got != "count_star()\n6\n" {
				t.Errorf("re-ingest stored again: %s", got)
			}
		})
	}
}

// TestNsysRank: without a rank in the file name the rank is the one GPU's
// id; an export of several GPUs keeps each GPU as its rank (merged).
func TestNsysRank(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	one := filepath.Join(dir, "one", "profile.sqlite")
	writeNsysFixture(t, one, nsystest.Recent, 3)
	two := filepath.Join(dir, "two", "node.sqlite")
	w, err := nsystest.Create(two, nsystest.Recent)
	if err != nil {
		t.Fatal(err)
	}
	w.Info(nsystest.Info{SessionStartNS: nsysSession, Devices: []nsystest.Device{{ID: 0, Name: "A"}, {ID: 1, Name: "B"}}})
	// Two processes whose correlation ids collide: each kernel still finds
	// its own process's launch.
	w.Call(nsystest.Call{Name: "cudaLaunchKernel_v7000", Start: 10, End: 20, PID: 100, TID: 100, Correlation: 1})
	w.Call(nsystest.Call{Name: "cudaLaunchKernel_v7000", Start: 15, End: 25, PID: 200, TID: 200, Correlation: 1})
	w.Kernel(nsystest.Kernel{Name: "a", Start: 30, End: 40, Device: 0, Stream: 7, Correlation: 1, PID: 100})
	w.Kernel(nsystest.Kernel{Name: "b", Start: 31, End: 41, Device: 1, Stream: 7, Correlation: 1, PID: 200})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	wh := openMemory(t)
	if _, err := Ingest(ctx, wh, []string{one, two}, Options{}); err != nil {
		t.Fatal(err)
	}
	got := mustCSV(t, wh.DB, `SELECT regexp_extract(t.path, '[^/]+$') AS file, t.rank, t.rank_assumed, t.merged, t.device_name,
			string_agg(DISTINCT k.rank::VARCHAR, ',' ORDER BY k.rank::VARCHAR) AS kernel_ranks
		FROM traces t JOIN kernels k USING (trace_id) GROUP BY ALL ORDER BY file`)
	want := `file,rank,rank_assumed,merged,device_name,kernel_ranks
node.sqlite,0,false,true,A,"0,1"
profile.sqlite,3,false,false,NVIDIA H100 80GB HBM3,3
`
	if got != want {
		t.Errorf("ranks:\n got %s\nwant %s", got, want)
	}
	got = mustCSV(t, wh.DB, `SELECT n.name, l.pid FROM kernels k JOIN kernel_names n USING (name_id)
		JOIN launches l ON l.launch_id = k.launch_id WHERE n.name IN ('a', 'b') ORDER BY n.name`)
	if want := "name,pid\na,100\nb,200\n"; got != want {
		t.Errorf("per-process correlation:\n got %s\nwant %s", got, want)
	}
}

// TestNsysRejects: a corrupt, a truncated and a non-nsys SQLite file, and
// one with a value no export has, each fail alone with one clear line
// naming the file; nothing of them is stored; the good file lands.
func TestNsysRejects(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	good := filepath.Join(dir, "good.sqlite")
	writeNsysFixture(t, good, nsystest.Recent, 0)
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	garbled := append([]byte(nil), data...)
	for i := 4096; i < len(garbled); i++ {
		garbled[i] = byte(i * 13)
	}
	other := filepath.Join(dir, "other.sqlite")
	db, err := sql.Open("sqlite", other)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE notes (id INTEGER, body TEXT); INSERT INTO notes VALUES (1, 'x')`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	// A kernel ending before it starts, after rows that were fine: the
	// rows already appended must roll back.
	bad := filepath.Join(dir, "backwards.sqlite")
	writeNsysFixture(t, bad, nsystest.Legacy, 0)
	bw, err := sql.Open("sqlite", bad)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bw.Exec(`UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET "end" = 1 WHERE start = 2100`); err != nil {
		t.Fatal(err)
	}
	bw.Close()
	want := map[string]string{
		write("corrupt.sqlite", garbled):              "damaged SQLite file",
		write("truncated.sqlite", data[:len(data)/3]): "damaged SQLite file: truncated",
		write("text.sqlite", []byte("plain text")):    "not a SQLite database",
		other: "not an Nsight Systems export",
		bad:   "CUPTI_ACTIVITY_KIND_KERNEL row 4: end: 1 is before start 2100",
	}
	w := openMemory(t)
	res, err := Ingest(ctx, w, []string{dir}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Failed() != len(want) {
		t.Errorf("failed %d files, want %d", res.Failed(), len(want))
	}
	for _, f := range res.Files {
		msg, isBad := want[f.Path]
		switch {
		case !isBad && f.Status != StatusIngested:
			t.Errorf("%s: %s %v", f.Path, f.Status, f.Err)
		case isBad && (f.Status != StatusFailed || f.Err == nil):
			t.Errorf("%s: want failed, got %s", f.Path, f.Status)
		case isBad:
			s := f.Err.Error()
			if !strings.HasPrefix(s, f.Path+": ") || !strings.Contains(s, msg) || strings.Contains(s, "\n") {
				t.Errorf("%s: want one line naming the file with %q, got %q", f.Path, msg, s)
			}
		}
	}
	got := mustCSV(t, w.DB, `SELECT (SELECT count(*) FROM traces) AS traces, (SELECT count(*) FROM kernels) AS kernels,
		(SELECT count(*) FROM launches) AS launches, (SELECT count(*) FROM annotations) AS annotations,
		(SELECT count(*) FROM steps) AS steps`)
	if want := "traces,kernels,launches,annotations,steps\n1,6,4,6,1\n"; got != want {
		t.Errorf("stored:\n got %s\nwant %s", got, want)
	}
}

// TestNsysReport: an .nsys-rep is exported once through the nsys binary
// into the cache and ingested under its own path; without nsys it is
// skipped with the export command; beside its own export it is skipped.
func TestNsysReport(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	fixture := filepath.Join(dir, "fixture.sqlite")
	writeNsysFixture(t, fixture, nsystest.Recent, 0)
	rep := filepath.Join(dir, "profiles", "decode", "worker-TP-1.nsys-rep")
	os.MkdirAll(filepath.Dir(rep), 0o755)
	if err := os.WriteFile(rep, []byte("an nsys report"), 0o644); err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(dir, "cache")

	// No nsys: found in a directory, skipped with the command to run;
	// named, a failure saying the same.
	t.Setenv("PATH", filepath.Join(dir, "empty"))
	var notices []string
	w := openMemory(t)
	res, err := Ingest(ctx, w, []string{filepath.Dir(rep)}, Options{NsysCache: cache, Notice: func(s string) { notices = append(notices, s) }})
	if err != nil {
		t.Fatal(err)
	}
	wantCmd := "nsys export --type sqlite --output " + filepath.Join(dir, "profiles", "decode", "worker-TP-1.sqlite") + " " + rep
	if res.Files[0].Status != StatusSkipped || len(notices) != 1 || !strings.Contains(notices[0], "Nsight Systems report skipped: nsys is not on PATH; export it with `"+wantCmd) {
		t.Errorf("without nsys, found: %+v, notices %q", res.Files[0], notices)
	}
	notices = nil
	res, err = Ingest(ctx, w, []string{rep}, Options{NsysCache: cache, Notice: func(s string) { notices = append(notices, s) }})
	if err != nil {
		t.Fatal(err)
	}
	if f := res.Files[0]; f.Status != StatusFailed || len(notices) != 0 ||
		f.Err.Error() != rep+": Nsight Systems report not ingested: nsys is not on PATH; export it with `"+wantCmd+"` and ingest the .sqlite" {
		t.Errorf("without nsys, named: %+v, notices %q", f, notices)
	}

	// A stand-in nsys that "exports" the fixture and counts its runs.
	bin := filepath.Join(dir, "bin")
	os.MkdirAll(bin, 0o755)
	script := `#!/bin/sh
echo run >> "` + filepath.Join(dir, "runs") + `"
while [ $# -gt 1 ]; do
  if [ "$1" = "--output" ]; then out="$2"; fi
  shift
done
/bin/cp "` + fixture + `" "$out"
`
	if err := os.WriteFile(filepath.Join(bin, "nsys"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
	for range 2 {
		res, err = Ingest(ctx, w, []string{rep}, Options{NsysCache: cache, Replace: true})
		if err != nil {
			t.Fatal(err)
		}
		if f := res.Files[0]; f.Status != StatusIngested || f.GPUEvents != 6 {
			t.Fatalf("with nsys: %+v", f)
		}
	}
	runs, _ := os.ReadFile(filepath.Join(dir, "runs"))
	if strings.Count(string(runs), "run") != 1 {
		t.Errorf("nsys ran %d times, want once (the export is cached)", strings.Count(string(runs), "run"))
	}
	got := mustCSV(t, w.DB, `SELECT regexp_extract(path, '[^/]+$') AS file, source_format, rank, stage, stage_source,
		(SELECT count(*) FROM kernels) AS kernels FROM traces`)
	if want := "file,source_format,rank,stage,stage_source,kernels\nworker-TP-1.nsys-rep,nsys,1,decode,directory,6\n"; got != want {
		t.Errorf("report:\n got %s\nwant %s", got, want)
	}

	// Beside its export, the report is skipped in a directory scan.
	if err := os.WriteFile(filepath.Join(dir, "profiles", "decode", "worker-TP-1.sqlite"), mustRead(t, fixture), 0o644); err != nil {
		t.Fatal(err)
	}
	notices = nil
	res, err = Ingest(ctx, openMemory(t), []string{filepath.Join(dir, "profiles")}, Options{NsysCache: cache,
		Notice: func(s string) { notices = append(notices, s) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Files) != 1 || !strings.HasSuffix(res.Files[0].Path, "worker-TP-1.sqlite") || len(notices) != 1 ||
		!strings.Contains(notices[0], "its export worker-TP-1.sqlite is ingested instead") {
		t.Errorf("report beside its export: %+v, notices %q", res.Files, notices)
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// kinetoToNsys converts every trace under src into an Nsight export at the
// same place under dst (name ending .sqlite), and copies the other files
// (server_args.json), so both trees have the same layout.
func kinetoToNsys(t *testing.T, src, dst string, v nsystest.Variant) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		out := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return err
		}
		if !strings.Contains(d.Name(), "trace.json") {
			return os.WriteFile(out, mustRead(t, p), 0o644)
		}
		n++
		out = strings.TrimSuffix(strings.TrimSuffix(out, ".gz"), ".json") + ".sqlite"
		return nsystest.FromKineto(p, out, v)
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestNsysMatchesKineto emits one synthetic workload as Kineto traces
// (synth) and as the Nsight exports of the same events, ingests both, and
// requires the same kernel table (GPU time, launches, shares, rank spread,
// stages) and the same GPU events one by one (times, devices, streams,
// stages, ranks, CUDA-graph replays and the launch each one links to).
func TestNsysMatchesKineto(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		opt synth.Options
		v   nsystest.Variant
	}{
		// Stage from the file name, CUDA graphs in decode, TP=2.
		{synth.Options{Framework: synth.SGLang, Ranks: 2, Steps: 3, Layers: 2, Graph: true, Seed: 7}, nsystest.Recent},
		// Stages only from the execute_... annotations, MoE, eager.
		{synth.Options{Framework: synth.VLLM, Ranks: 2, Steps: 6, Layers: 2, MoE: true, Seed: 8}, nsystest.Legacy},
		// Driver launches, CUDA graphs, no stage anywhere.
		{synth.Options{Framework: synth.TRTLLM, Ranks: 1, Steps: 5, Layers: 2, Graph: true, Seed: 9}, nsystest.Recent},
	} {
		t.Run(c.opt.Framework, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			kdir, ndir := filepath.Join(dir, "kineto"), filepath.Join(dir, "nsys")
			c.opt.Dir, c.opt.Run = kdir, "run"
			if _, err := synth.Generate(c.opt); err != nil {
				t.Fatal(err)
			}
			files := kinetoToNsys(t, kdir, ndir, c.v)
			w := openMemory(t)
			for _, in := range []struct{ dir, label string }{{kdir, "kineto"}, {ndir, "nsys"}} {
				res, err := Ingest(ctx, w, []string{in.dir}, Options{Run: in.label})
				if err != nil {
					t.Fatal(err)
				}
				if len(res.Files) != files || res.Failed() > 0 {
					t.Fatalf("%s: %+v", in.label, res.Files)
				}
			}
			var runs [2]int64
			for i, label := range []string{"kineto", "nsys"} {
				if err := w.DB.QueryRow(`SELECT run_id FROM runs WHERE label = ?`, label).Scan(&runs[i]); err != nil {
					t.Fatal(err)
				}
			}
			var tables [2][]queries.KernelTableRow
			for i, run := range runs {
				rows, err := queries.KernelTable(ctx, w.DB, queries.KernelTableParams{Run: run})
				if err != nil {
					t.Fatal(err)
				}
				tables[i] = rows
			}
			if len(tables[0]) == 0 || !reflect.DeepEqual(tables[0], tables[1]) {
				t.Errorf("kernel tables differ:\nkineto %+v\n  nsys %+v", tables[0], tables[1])
			}
			events := func(label string) string {
				return mustCSV(t, w.DB, `SELECT n.name, k.kind, k.stage, k.rank, k.ts_ns, k.dur_ns, k.device, k.stream,
						k.correlation, k.bytes, k.graph_launch, l.name AS launch, l.ts_ns AS launch_ts
					FROM kernels k JOIN kernel_names n USING (name_id) JOIN runs r USING (run_id)
					LEFT JOIN launches l ON l.launch_id = k.launch_id
					WHERE r.label = '`+label+`'
					ORDER BY k.rank, k.ts_ns, k.device, k.stream, n.name`)
			}
			ke, ne := events("kineto"), events("nsys")
			if strings.Count(ke, "\n") < 50 || ke != ne {
				t.Errorf("GPU events differ (%d and %d lines)", strings.Count(ke, "\n"), strings.Count(ne, "\n"))
				kl, nl := strings.Split(ke, "\n"), strings.Split(ne, "\n")
				for i := range min(len(kl), len(nl)) {
					if kl[i] != nl[i] {
						t.Errorf("first difference, line %d:\nkineto %s\n  nsys %s", i, kl[i], nl[i])
						break
					}
				}
			}
			got := mustCSV(t, w.DB, `SELECT DISTINCT source_format FROM traces t JOIN runs r USING (run_id) WHERE r.label = 'nsys'`)
			if got != "source_format\nnsys\n" {
				t.Errorf("nsys run formats: %s", got)
			}
		})
	}
}
