package queries

import (
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tracehouse/tracehouse/catalog"
)

func testOverlap(id, framework string, keywords ...string) catalog.Overlap {
	return catalog.Overlap{ID: id, Name: "Overlap " + id, Framework: framework, Origin: "upstream",
		Keywords: keywords, Sources: []string{"src/" + id + ".py"}, Rationale: "Test overlap."}
}

// TestKnownPaths checks the known paths: overlap entries whose keywords
// hit an overlap row's kernel or its dominant overlapping kernel, by name,
// site or CPU op, in row order with the run's framework first, then
// FlashInfer's (a kernel library, no one's "elsewhere"), then other serving
// frameworks' entries, which are "elsewhere" (issue 36 item 15).
func TestKnownPaths(t *testing.T) {
	t.Parallel()
	cat := testCatalog(nil,
		testOverlap("o-vllm-gather", "vllm", "AllGather"), // name, compact: ncclDevKernel_AllGather
		testOverlap("o-fi-gather", "flashinfer", "AllGather"),
		testOverlap("o-sglang-alt", "sglang", "alt_stream"),
		testOverlap("o-sglang-gather", "sglang", "all_gather"),
		testOverlap("o-op", "trtllm", "all_to_all_single"),
		testOverlap("o-none", "sglang", "zeta"),
	)
	f := newFusionFX(t, cat)
	run := f.run("sglang", "test/model-7b", 2)
	tr := f.traceOf(run, 0, 0)
	gather := fkn("ncclDevKernel_AllGather_RING_LL", 30_000)
	alt := fkn("shared_expert_gemm", 20_000).at("python/sglang/srt/models/qwen2_moe.py:300 forward_alt_stream")
	a2a := fkn("all2all_kernel", 10_000).op_("c10d::all_to_all_single")
	plain := fkn("plain_kernel", 5000)
	f.seq(tr, "decode", 7, 0, alt, plain, a2a)
	f.seq(tr, "decode", 22, 0, gather)
	// in prefill the plain kernel runs from an alt-stream site
	f.seq(tr, "prefill", 7, 1_000_000, plain.at("python/sglang/srt/models/x.py:1 alt_stream_fork"))
	f.numberStreams()

	pairs := []KnownPathPair{
		{Kernel: gather.name},                     // 0: by name, both gather entries, sglang first
		{Kernel: plain.name, Dominant: alt.name},  // 1: by the dominant's site
		{Kernel: a2a.name, Dominant: gather.name}, // 2: by op, and the dominant's name
		{Kernel: plain.name},                      // 3: nothing in decode
	}
	rows, err := KnownPaths(f.ctx, f.db, KnownPathsParams{Run: run, Stage: stageOnly("decode"), Pairs: pairs})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rows {
		got = append(got, fmt.Sprintf("%d %s %s %v elsewhere=%v", r.Index, r.ID, r.Matched, r.Keywords, r.Elsewhere))
	}
	want := []string{
		"0 o-sglang-gather kernel [all_gather] elsewhere=false",
		"0 o-fi-gather kernel [AllGather] elsewhere=false",
		"0 o-vllm-gather kernel [AllGather] elsewhere=true",
		"1 o-sglang-alt dominant [alt_stream] elsewhere=false",
		"2 o-sglang-gather dominant [all_gather] elsewhere=false",
		"2 o-fi-gather dominant [AllGather] elsewhere=false",
		"2 o-vllm-gather dominant [AllGather] elsewhere=true",
		"2 o-op kernel [all_to_all_single] elsewhere=true",
	}
	if !slices.Equal(got, want) {
		t.Errorf("known paths:\n got:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	if len(rows) > 0 {
		// report.KnownPathLabel renders these as the row's label.
		if r := rows[0]; r.Name != "Overlap o-sglang-gather" || r.Framework != "sglang" || r.Origin != "upstream" {
			t.Errorf("first entry %+v", r)
		}
	}
	by := KnownPathsByPair(rows, len(pairs))
	if len(by[1]) != 1 || by[3] != nil || len(by[2]) != 4 {
		t.Errorf("by pair: %+v", by)
	}

	// sites are those of the stage asked for: in prefill, plain_kernel's
	// own site carries alt_stream; a name hits in any stage, one where it
	// has no kernel too (gather runs in decode only)
	rows, err = KnownPaths(f.ctx, f.db, KnownPathsParams{Run: run, Stage: stageOnly("prefill"),
		Pairs: []KnownPathPair{{Kernel: plain.name}, {Kernel: plain.name, Dominant: gather.name}}})
	if err != nil {
		t.Fatal(err)
	}
	got = nil
	for _, r := range rows {
		got = append(got, fmt.Sprintf("%d %s %s %v", r.Index, r.ID, r.Matched, r.Keywords))
	}
	if want := []string{"0 o-sglang-alt kernel [alt_stream]",
		"1 o-sglang-alt kernel [alt_stream]", "1 o-sglang-gather dominant [all_gather]",
		"1 o-fi-gather dominant [AllGather]", "1 o-vllm-gather dominant [AllGather]",
	}; !slices.Equal(got, want) {
		t.Errorf("prefill:\n got:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}

	// one call, each pair in its own stage: what the calls per stage gave
	rows, err = KnownPaths(f.ctx, f.db, KnownPathsParams{Run: run, Pairs: []KnownPathPair{
		{Kernel: plain.name, Dominant: alt.name, Stage: "decode"}, // the dominant's decode site
		{Kernel: plain.name, Stage: "prefill"},                    // its own prefill site
		{Kernel: plain.name, Stage: "decode"},                     // nothing in decode
		{Kernel: gather.name, Stage: "prefill"},                   // its name, with no prefill kernel
	}})
	if err != nil {
		t.Fatal(err)
	}
	got = nil
	for _, r := range rows {
		got = append(got, fmt.Sprintf("%d %s %s %v", r.Index, r.ID, r.Matched, r.Keywords))
	}
	if want := []string{"0 o-sglang-alt dominant [alt_stream]", "1 o-sglang-alt kernel [alt_stream]",
		"3 o-sglang-gather kernel [all_gather]", "3 o-fi-gather kernel [AllGather]", "3 o-vllm-gather kernel [AllGather]",
	}; !slices.Equal(got, want) {
		t.Errorf("pairs in their own stages:\n got:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}

	// two-trace mode: the mapping run lends its sites
	formal := f.run("sglang", "test/model-7b", 2)
	mapping := f.run("sglang", "test/model-7b", 2)
	f.seq(f.traceOf(formal, 0, 0), "decode", 7, 0, fkn("graph_kernel", 1000))
	f.seq(f.traceOf(mapping, 0, 0), "decode", 7, 0, fkn("graph_kernel", 1200).at("python/sglang/srt/models/m.py:5 run_alt_stream"))
	f.numberStreams()
	for _, m := range []sql.NullInt64{{}, {Int64: mapping, Valid: true}} {
		for _, stage := range []string{"", "decode"} {
			rows, err = KnownPaths(f.ctx, f.db, KnownPathsParams{Run: formal, Mapping: m, Pairs: []KnownPathPair{{Kernel: "graph_kernel", Stage: stage}}})
			if err != nil {
				t.Fatal(err)
			}
			if want := map[bool]int{false: 0, true: 1}[m.Valid]; len(rows) != want {
				t.Errorf("mapping %v, stage %q: %d rows, want %d", m, stage, len(rows), want)
			}
		}
	}

	// a run of unknown framework has no "elsewhere": catalog order
	unknown := f.run("unknown", "test/model-7b", 2)
	f.seq(f.traceOf(unknown, 0, 0), "decode", 7, 0, gather)
	f.numberStreams()
	rows, err = KnownPaths(f.ctx, f.db, KnownPathsParams{Run: unknown, Pairs: []KnownPathPair{{Kernel: gather.name}}})
	if err != nil {
		t.Fatal(err)
	}
	got = nil
	for _, r := range rows {
		got = append(got, fmt.Sprintf("%s elsewhere=%v", r.ID, r.Elsewhere))
	}
	if want := []string{"o-vllm-gather elsewhere=false", "o-fi-gather elsewhere=false", "o-sglang-gather elsewhere=false"}; !slices.Equal(got, want) {
		t.Errorf("unknown framework:\n got:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}

	// no pairs, no rows
	rows, err = KnownPaths(f.ctx, f.db, KnownPathsParams{Run: run})
	if err != nil || len(rows) != 0 {
		t.Errorf("no pairs: %v, %v", rows, err)
	}
}
