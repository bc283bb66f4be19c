package ingest

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tracehouse/tracehouse/inline"
	"github.com/tracehouse/tracehouse/schema"
	"github.com/tracehouse/tracehouse/schema/schematest"
)

// stepNames are annotation names of every kind insert_steps.sql tells
// apart, with sizes it reads, cannot read (past INTEGER: NULL) and, in
// one vLLM name, token counts whose sum passes INTEGER (the statement
// fails; the Go pass leaves it to the statement).
var stepNames = [...][]string{
	0: {"layer", "attn", "decode_other", "ProfilerStep#x", "ProfilerStep#3 ", "xstep[bs=1]", "execute_1_context_a(1)"},
	1: {"step[bs=3 toks=17]", "step[tokens=5 bs=x]", "step[]", "step[bs=99999999999 tok=7]", "step[abs=4 xtoks=2]"},
	2: {"execute_1_context_2(30)_generation_3(4)", "execute_7_context_0(0)_generation_1(1)_tail",
		"execute_3_context_99999999999(1)_generation_1(2)", "execute_2_context_1(2147483647)_generation_1(1)"},
	3: {"ProfilerStep#1", "ProfilerStep#22"},
}

// TestStepsInGoMatchSQL holds the Go pass (stepRecs) to insert_steps.sql,
// the definition, on random annotations: the strongest evidence chosen,
// a repeating GPU annotation (kind 4) when there is none, the whole trace
// (step 0) when there is nothing, GPU windows joined to the latest CPU
// annotation of their name at or before them, step numbers, edges, batch
// sizes and tokens. Both exist, owned by ingest: the statement is what
// Nsight exports, --steps-by and traces with too many candidates use;
// the Go pass spares a small trace's load its cost. Trials where the
// statement's order is its own (tied) are left out.
func TestStepsInGoMatchSQL(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w, err := schema.Open(ctx, schema.Memory, schema.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	conn, err := w.DB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	rng := rand.New(rand.NewPCG(35, 42))
	// a third category (not one ingest stores) orders CPU annotations
	// starting together
	cats := [...]string{"user_annotation", gpuAnnotationCat, "z_annotation"}
	stages := [...]string{"", "decode", "prefill"}
	sources := map[string]int{}
	compared := 0
	for trial := range 60 {
		sqlTrace, goTrace := int64(2*trial+1), int64(2*trial+2)
		base := []int64{0, 1_700_000_000_000_000_000}[rng.IntN(2)]
		var anns []annotationRow
		kinds := len(stepNames)
		if rng.IntN(3) == 0 {
			kinds = 1 // no step evidence: a repeating GPU annotation, or none
		}
		type key struct {
			name, cat string
			ts, dur   int64
		}
		seen := map[key]bool{} // no two alike but for their stage
		for range rng.IntN(5) {
			kind := rng.IntN(kinds)
			name := stepNames[kind][rng.IntN(len(stepNames[kind]))]
			for _, cat := range cats {
				for range rng.IntN(6) {
					a := annotationRow{name: name, cat: cat, ts: int64(rng.IntN(40)) * 10, dur: int64(rng.IntN(3)) * 10,
						stage: stages[rng.IntN(len(stages))], pid: null, tid: null}
					if k := (key{a.name, a.cat, a.ts, a.dur}); !seen[k] {
						seen[k] = true
						anns = append(anns, a)
					}
				}
			}
		}
		rng.Shuffle(len(anns), func(i, j int) { anns[i], anns[j] = anns[j], anns[i] })
		recs := newStepRecs()
		err := schema.WithAppenders(conn, specs[appAnnotations:appAnnotations+1], func(apps []*schema.Appender) error {
			for i := range anns {
				a := &anns[i]
				recs.add(a)
				if err := apps[0].Append(int32(sqlTrace), a.name, a.cat, a.ts+base, a.dur, nil, nil, nullStr(a.stage)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		rows, ok := recs.find(base)
		_, sqlErr := inline.Exec(ctx, conn, stmt("insert_steps"), sql.Named("trace", sqlTrace), sql.Named("steps_by", nil))
		if !ok {
			if sqlErr == nil {
				t.Errorf("trial %d: the Go pass left the steps to the statement, which found them:\n%s", trial, dumpSteps(t, w, sqlTrace))
			}
			continue
		}
		if sqlErr != nil {
			t.Fatalf("trial %d: %v", trial, sqlErr)
		}
		if tied(rows) {
			// two steps the statement numbers in either order
			continue
		}
		compared++
		if err := insertSteps(conn, goTrace, rows); err != nil {
			t.Fatal(err)
		}
		want, got := dumpSteps(t, w, sqlTrace), dumpSteps(t, w, goTrace)
		if got != want {
			t.Errorf("trial %d: annotations %+v\nGo:\n%s\ninsert_steps.sql:\n%s", trial, anns, got, want)
		}
		sources[rows[0].source]++
		// the windows the link takes are those it would read back
		gpu, cpu, window, err := readSteps(ctx, conn, sqlTrace)
		if err != nil {
			t.Fatal(err)
		}
		g, c, win := stepWindows(rows)
		if !slices.Equal(g, gpu) || !slices.Equal(c, cpu) || win != window {
			t.Errorf("trial %d: windows %v %v %v, read back %v %v %v", trial, g, c, win, gpu, cpu, window)
		}
	}
	if compared < 40 {
		t.Errorf("only %d of 60 trials compared", compared)
	}
	// every kind of evidence was chosen somewhere
	for _, s := range []string{"step_annotation", "vllm_execute", "profiler_step", "gpu_annotation", "window"} {
		if sources[s] == 0 {
			t.Errorf("no trial found steps from %s (%v)", s, sources)
		}
	}
}

// tied says whether two of rows tie on the statement's order (start,
// GPU start, name), which it breaks by chance: two CPU annotations of a
// name starting together, neither with a GPU window.
func tied(rows []stepRow) bool {
	for i := 1; i < len(rows); i++ {
		a, b := &rows[i-1], &rows[i]
		if a.cpuTS == b.cpuTS && a.gpuTS == b.gpuTS && a.name == b.name {
			return true
		}
	}
	return false
}

func dumpSteps(t *testing.T, w *schema.Warehouse, trace int64) string {
	return schematest.Dump(t, w.DB, fmt.Sprintf(`SELECT * EXCLUDE (trace_id) FROM steps WHERE trace_id = %d ORDER BY step`, trace))
}

// TestStepRecsKeepOnlyCandidates checks what the Go pass keeps while a
// trace loads: GPU annotations only until step evidence comes, then only
// the strongest evidence, and nothing past its limit (the statement then
// finds the steps).
func TestStepRecsKeepOnlyCandidates(t *testing.T) {
	t.Parallel()
	s := newStepRecs()
	add := func(name, cat string) { s.add(&annotationRow{name: name, cat: cat}) }
	add("layer", gpuAnnotationCat)
	add("layer", "user_annotation")
	if len(s.anns) != 1 || s.best != 0 {
		t.Fatalf("kept %+v", s.anns)
	}
	add("ProfilerStep#1", "user_annotation")
	add("layer", gpuAnnotationCat)
	add("step[bs=1]", gpuAnnotationCat)
	add("ProfilerStep#2", "user_annotation")
	add("step[bs=2]", "user_annotation")
	if len(s.anns) != 2 || s.best != 1 || s.anns[0].name != "step[bs=1]" || s.anns[1].name != "step[bs=2]" {
		t.Fatalf("kept %+v (best %d)", s.anns, s.best)
	}
	s.limit = 3
	add("step[bs=3]", "user_annotation")
	if s.over {
		t.Fatal("over at its limit")
	}
	add("step[bs=4]", "user_annotation")
	if !s.over || s.anns != nil {
		t.Fatalf("past its limit: over %v, kept %d", s.over, len(s.anns))
	}
}
