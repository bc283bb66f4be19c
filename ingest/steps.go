package ingest

import (
	"cmp"
	"context"
	"database/sql"
	"database/sql/driver"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/tracehouse/tracehouse/inline"
	"github.com/tracehouse/tracehouse/schema"
)

// stepRecs are the annotations insert_steps.sql would choose a trace's
// steps from, kept while the trace loads so that the steps are found here
// and appended: on a small trace the statement cost about 6 ms, half of it
// planning, more than the rest of its load's SQL (bench/README.md,
// "Forty-second figures"). insert_steps.sql stays the definition: it
// finds the steps of Nsight exports, of --steps-by, of a trace linked by
// the SQL (Options.linkInSQL) and of one whose candidates pass
// maxStepAnns, and TestStepsInGoMatchSQL holds the two to the same rows.
//
// Only the candidates are kept: the annotations of the strongest step
// evidence seen so far (kinds 1-3 of the statement), and, while there is
// none, the gpu_user_annotation events a repeating name may be chosen
// from (kind 4).
type stepRecs struct {
	anns  []stepAnn
	best  int8 // the least kind (1-3) kept, 0 while none
	limit int  // candidates kept at most; more, and the SQL finds the steps (over)
	over  bool
}

// maxStepAnns bounds the candidates kept (about 70 bytes each): a trace
// with more (steps, or GPU annotations without step evidence) has its
// steps found by insert_steps.sql, so memory stays flat in the trace's size.
const maxStepAnns = 1 << 15

// stepAnn is one candidate annotation, its times relative as decoded.
type stepAnn struct {
	name, cat, stage string
	ts, dur          int64
	kind             int8
}

const gpuAnnotationCat = "gpu_user_annotation"

var (
	vllmStepRe     = regexp.MustCompile(`^execute_\d+_context_(\d+)\((\d+)\)_generation_(\d+)\((\d+)\)`)
	profilerStepRe = regexp.MustCompile(`^ProfilerStep#\d+$`)
	batchSizeRe    = regexp.MustCompile(`\bbs=(\d+)`)
	tokensRe       = regexp.MustCompile(`\b(?:toks|tokens|tok)=(\d+)`)
)

// stepKind is insert_steps.sql's kind of an annotation name: 1 SGLang
// step[...], 2 vLLM execute_..., 3 ProfilerStep#N, else 0.
func stepKind(name string) int8 {
	switch {
	case strings.HasPrefix(name, "step["):
		return 1
	case strings.HasPrefix(name, "execute_") && vllmStepRe.MatchString(name):
		return 2
	case strings.HasPrefix(name, "ProfilerStep#") && profilerStepRe.MatchString(name):
		return 3
	}
	return 0
}

func newStepRecs() *stepRecs { return &stepRecs{limit: maxStepAnns} }

// add keeps a if it may make a step.
func (s *stepRecs) add(a *annotationRow) {
	if s.over {
		return
	}
	kind := stepKind(a.name)
	switch {
	case kind == 0 && (s.best != 0 || a.cat != gpuAnnotationCat):
		return
	case kind != 0 && s.best != 0 && kind > s.best:
		return
	case kind != 0 && kind != s.best:
		// stronger evidence: what was kept for weaker goes
		s.anns, s.best = s.anns[:0], kind
	}
	if len(s.anns) >= s.limit {
		s.over, s.anns = true, nil
		return
	}
	s.anns = append(s.anns, stepAnn{name: a.name, cat: a.cat, stage: a.stage, ts: a.ts, dur: a.dur, kind: kind})
}

// stepRow is a row of `steps`; null stands for NULL in the times, the
// sizes are NULL when not has*.
type stepRow struct {
	step                         int32
	source, name, stage          string // stage "": NULL
	batch, tokens                int32
	hasBatch, hasTokens          bool
	cpuTS, cpuEnd, gpuTS, gpuEnd int64
	edge                         bool
}

// find computes insert_steps.sql's rows (without --steps-by) from the
// candidates, base moving their times to absolute. ok is false where the
// statement must decide: a sum of durations past int64, or token counts
// whose sum passes INTEGER (the statement fails there).
func (s *stepRecs) find(base int64) (rows []stepRow, ok bool) {
	chosen := s.anns
	k := s.best
	if k == 0 {
		name, found, ok := repeatName(s.anns)
		if !ok {
			return nil, false
		}
		chosen, k = nil, 4
		if found {
			for _, a := range s.anns {
				if a.name == name {
					chosen = append(chosen, a)
				}
			}
		}
	}
	// aid's order (time, name, cat, duration) decides which CPU annotation
	// a GPU one belongs to when two start together.
	byName := map[string][]stepAnn{}
	var gpu []stepAnn
	for _, a := range chosen {
		a.ts += base
		if a.cat == gpuAnnotationCat {
			gpu = append(gpu, a)
		} else {
			byName[a.name] = append(byName[a.name], a)
		}
	}
	type cpuStep struct {
		a             stepAnn
		gpuTS, gpuEnd int64
	}
	cpus := map[string][]cpuStep{}
	for name, as := range byName {
		slices.SortFunc(as, func(x, y stepAnn) int {
			return cmp.Or(cmp.Compare(x.ts, y.ts), strings.Compare(x.cat, y.cat), cmp.Compare(x.dur, y.dur))
		})
		cs := make([]cpuStep, len(as))
		for i, a := range as {
			cs[i] = cpuStep{a: a, gpuTS: null, gpuEnd: null}
		}
		cpus[name] = cs
	}
	for _, g := range gpu {
		cs := cpus[g.name]
		// the latest CPU annotation of its name starting at or before it
		i, _ := slices.BinarySearchFunc(cs, g.ts+1, func(c cpuStep, t int64) int {
			if c.a.ts < t {
				return -1
			}
			return 1
		})
		if i == 0 {
			rows = append(rows, stepRow{name: g.name, stage: g.stage, cpuTS: null, cpuEnd: null, gpuTS: g.ts, gpuEnd: g.ts + g.dur})
			continue
		}
		c := &cs[i-1]
		if c.gpuTS == null || g.ts < c.gpuTS {
			c.gpuTS = g.ts
		}
		if c.gpuEnd == null || g.ts+g.dur > c.gpuEnd {
			c.gpuEnd = g.ts + g.dur
		}
	}
	for _, cs := range cpus {
		for _, c := range cs {
			rows = append(rows, stepRow{name: c.a.name, stage: c.a.stage, cpuTS: c.a.ts, cpuEnd: c.a.ts + c.a.dur,
				gpuTS: c.gpuTS, gpuEnd: c.gpuEnd})
		}
	}
	if len(rows) == 0 {
		return []stepRow{{step: 0, source: "window", name: "", cpuTS: null, cpuEnd: null, gpuTS: null, gpuEnd: null}}, true
	}
	start := func(r *stepRow) int64 {
		if r.cpuTS != null {
			return r.cpuTS
		}
		return r.gpuTS
	}
	gpuOrder := func(r *stepRow) int64 { // NULLS LAST (no time is MaxInt64: limits.TimeRange)
		if r.gpuTS == null {
			return math.MaxInt64
		}
		return r.gpuTS
	}
	slices.SortFunc(rows, func(x, y stepRow) int {
		return cmp.Or(cmp.Compare(start(&x), start(&y)), cmp.Compare(gpuOrder(&x), gpuOrder(&y)), strings.Compare(x.name, y.name),
			// ties the statement leaves to chance, made reproducible
			cmp.Compare(x.cpuEnd, y.cpuEnd), cmp.Compare(x.gpuEnd, y.gpuEnd), strings.Compare(x.stage, y.stage))
	})
	source := [...]string{1: "step_annotation", 2: "vllm_execute", 3: "profiler_step", 4: "gpu_annotation"}[k]
	for i := range rows {
		r := &rows[i]
		r.step, r.source = int32(i+1), source
		r.edge = len(rows) > 4 && (i == 0 || i == len(rows)-1)
		switch k {
		case 1:
			r.batch, r.hasBatch = extractInt(batchSizeRe, r.name)
			r.tokens, r.hasTokens = extractInt(tokensRe, r.name)
		case 2:
			m := vllmStepRe.FindStringSubmatch(r.name)
			var v [4]int32
			var has [4]bool
			for j := range v {
				v[j], has[j] = parseInt32(m[j+1])
			}
			if r.hasBatch = has[0] && has[2]; r.hasBatch {
				if r.batch, ok = addInt32(v[0], v[2]); !ok {
					return nil, false
				}
			}
			if r.hasTokens = has[1] && has[3]; r.hasTokens {
				if r.tokens, ok = addInt32(v[1], v[3]); !ok {
					return nil, false
				}
			}
		}
	}
	return rows, true
}

// repeatName is the gpu_user_annotation name repeating at least twice
// that covers the most time (then the least name), as insert_steps.sql's
// _repeat; ok is false when a sum of durations passes int64.
func repeatName(anns []stepAnn) (name string, found, ok bool) {
	type total struct {
		n   int
		sum int64
	}
	totals := map[string]*total{}
	for _, a := range anns {
		t := totals[a.name]
		if t == nil {
			t = &total{}
			totals[a.name] = t
		}
		if (a.dur > 0 && t.sum > math.MaxInt64-a.dur) || (a.dur < 0 && t.sum < math.MinInt64-a.dur) {
			return "", false, false
		}
		t.n, t.sum = t.n+1, t.sum+a.dur
	}
	var best int64
	for n, t := range totals {
		if t.n >= 2 && (!found || t.sum > best || (t.sum == best && n < name)) {
			name, best, found = n, t.sum, true
		}
	}
	return name, found, true
}

// extractInt is TRY_CAST(regexp_extract(s, re, 1) AS INTEGER).
func extractInt(re *regexp.Regexp, s string) (int32, bool) {
	m := re.FindStringSubmatch(s)
	if m == nil {
		return 0, false
	}
	return parseInt32(m[1])
}

func parseInt32(s string) (int32, bool) {
	v, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		return 0, false
	}
	return int32(v), true
}

func addInt32(a, b int32) (int32, bool) {
	s := int64(a) + int64(b)
	if s > math.MaxInt32 || s < math.MinInt32 {
		return 0, false
	}
	return int32(s), true
}

var stepColumns = []string{"trace_id", "step", "source", "name", "stage", "batch_size", "tokens",
	"cpu_ts_ns", "cpu_end_ns", "gpu_ts_ns", "gpu_end_ns", "edge"}

// insertSteps appends rows as trace's steps on conn, inside the caller's
// transaction.
func insertSteps(conn *sql.Conn, trace int64, rows []stepRow) error {
	return schema.WithAppenders(conn, []schema.Spec{{Table: schema.Steps, Columns: stepColumns}}, func(apps []*schema.Appender) error {
		for _, r := range rows {
			var batch, tokens driver.Value
			if r.hasBatch {
				batch = r.batch
			}
			if r.hasTokens {
				tokens = r.tokens
			}
			if err := apps[0].Append(int32(trace), r.step, r.source, r.name, nullStr(r.stage), batch, tokens,
				nullable(r.cpuTS), nullable(r.cpuEnd), nullable(r.gpuTS), nullable(r.gpuEnd), r.edge); err != nil {
				return err
			}
		}
		return nil
	})
}

// stepWindows are rows' windows as readSteps reads them from `steps`.
func stepWindows(rows []stepRow) (gpu, cpu []stepWindow, window bool) {
	for _, r := range rows {
		window = window || r.source == "window"
		if r.gpuTS != null {
			gpu = append(gpu, stepWindow{ts: r.gpuTS, end: r.gpuEnd, step: r.step})
		}
		if r.cpuTS != null {
			cpu = append(cpu, stepWindow{ts: r.cpuTS, end: r.cpuEnd, step: r.step})
		}
	}
	byStart := func(a, b stepWindow) int { return cmp.Or(cmp.Compare(a.ts, b.ts), cmp.Compare(a.step, b.step)) }
	slices.SortFunc(gpu, byStart)
	slices.SortFunc(cpu, byStart)
	return gpu, cpu, window
}

// findSteps stores trace's steps: found from the kept candidates, else
// (none kept, too many, or a value only the statement can decide) by
// insert_steps.sql. It returns the windows when found here, for the link.
func findSteps(ctx context.Context, conn *sql.Conn, t *traceState, base int64) (*foundSteps, error) {
	if t.steps != nil && !t.steps.over {
		if rows, ok := t.steps.find(base); ok {
			if err := insertSteps(conn, t.id, rows); err != nil {
				return nil, err
			}
			f := &foundSteps{}
			f.gpu, f.cpu, f.window = stepWindows(rows)
			return f, nil
		}
	}
	_, err := inline.Exec(ctx, conn, stmt("insert_steps"), sql.Named("trace", t.id), sql.Named("steps_by", nil))
	return nil, err
}

// foundSteps are the windows of the steps findSteps found in Go.
type foundSteps struct {
	gpu, cpu []stepWindow
	window   bool
}
