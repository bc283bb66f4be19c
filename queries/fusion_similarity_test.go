package queries

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func (f *fusionFX) similarity(run int64) []FusionSimilarityRow {
	f.t.Helper()
	f.classify()
	rows, err := FusionSimilarity(f.ctx, f.db, FusionSimilarityParams{Run: run})
	if err != nil {
		f.t.Fatal(err)
	}
	return rows
}

func similarityLine(r FusionSimilarityRow) string {
	return fmt.Sprintf("%s %s %s missing %d/%d %v x%d %dns", r.Stage, r.Level, r.ID, r.MissingStep, r.Steps,
		r.MissingKeywords, r.Occurrences, r.RelatedNS)
}

func wantSimilarity(t *testing.T, rows []FusionSimilarityRow, want ...string) {
	t.Helper()
	got := make([]string, len(rows))
	for i, r := range rows {
		got[i] = similarityLine(r)
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("similarity:\n got:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// TestFusionSimilarity checks the similarity note: all steps but one of a
// chain of three or more occurring adjacently, only where no chain matched
// whole.
func TestFusionSimilarity(t *testing.T) {
	t.Parallel()
	share := sharedFusionFX(t)
	abg := testFusion("t-abg", []string{"alpha"}, []string{"beta"}, []string{"gamma", "gamma2"})
	abg.MinShare = 10
	ab := testFusion("t-ab", []string{"alpha"}, []string{"beta"})
	dz := testFusion("t-dz", []string{"delta"}, []string{"zeta"})
	big := fkn("big_kernel", 1_000_000)

	t.Run("last step missing, high", func(t *testing.T) {
		f, run, tr := share.ruleFX(t, abg)
		f.seq(tr, "decode", 7, 0, fRepeat(4, kAlpha, kBeta, kPad)...)
		rows := f.similarity(run)
		// 4 x 7 us of 68 us = 41% >= min_share 10, and 4 occurrences
		wantSimilarity(t, rows, fmt.Sprintf("decode high t-abg missing 3/3 [gamma gamma2] x4 %dns", 4*fDur(kAlpha, kBeta)))
		if len(rows) == 1 {
			r := rows[0]
			if !slices.Equal(r.Evidence, []string{kAlpha.name, kBeta.name}) || r.Status != FusionOpportunity ||
				r.Pattern != "Test t-abg" {
				t.Errorf("row %+v", r)
			}
			// report's similarity note prints these fields (TestSimilarityNote).
			if got := fmt.Sprintf("%s %s %s %.2f", r.Framework, r.Origin, r.Level, r.SharePct); got != "sglang mainline high 41.18" {
				t.Errorf("note fields: %s", got)
			}
		}
	})
	t.Run("middle step missing, medium", func(t *testing.T) {
		f, run, tr := share.ruleFX(t, abg)
		// alpha then gamma: 2 of 3 steps with beta left out, 4 times, but
		// under min_share
		end := f.seq(tr, "decode", 7, 0, fRepeat(4, kAlpha, kGamma, kPad)...)
		f.seq(tr, "decode", 7, end+1000, big)
		wantSimilarity(t, f.similarity(run), fmt.Sprintf("decode medium t-abg missing 2/3 [beta] x4 %dns", 4*fDur(kAlpha, kGamma)))
	})
	t.Run("once, small, low", func(t *testing.T) {
		f, run, tr := share.ruleFX(t, abg)
		f.seq(tr, "decode", 7, 0, kBeta, kGamma, big)
		wantSimilarity(t, f.similarity(run), fmt.Sprintf("decode low t-abg missing 1/3 [alpha] x1 %dns", fDur(kBeta, kGamma)))
	})
	t.Run("whole chain present: no note", func(t *testing.T) {
		f, run, tr := share.ruleFX(t, abg)
		f.seq(tr, "decode", 7, 0, fRepeat(4, kAlpha, kBeta, kGamma, kPad)...)
		wantSimilarity(t, f.similarity(run))
	})
	t.Run("another entry matched in the stage: no note", func(t *testing.T) {
		f, run, tr := share.ruleFX(t, abg, dz)
		f.seq(tr, "decode", 7, 0, fRepeat(4, kAlpha, kBeta, kPad, kDelta, fkn("zeta_kernel", 100))...)
		wantSimilarity(t, f.similarity(run))
		// the prefill stage has no whole match, so it gets its note
		f.seq(tr, "prefill", 7, 100_000_000, fRepeat(4, kAlpha, kBeta, kPad)...)
		wantSimilarity(t, f.similarity(run), fmt.Sprintf("prefill high t-abg missing 3/3 [gamma gamma2] x4 %dns", 4*fDur(kAlpha, kBeta)))
	})
	t.Run("two-step entries give no note", func(t *testing.T) {
		f, run, tr := share.ruleFX(t, ab)
		f.seq(tr, "decode", 7, 0, fRepeat(4, kAlpha, kPad)...)
		wantSimilarity(t, f.similarity(run))
	})
	t.Run("steps too far apart: no note", func(t *testing.T) {
		f, run, tr := share.ruleFX(t, abg)
		f.seq(tr, "decode", 7, 0, fRepeat(4, kAlpha, kPad, kPad, kPad, kBeta)...)
		wantSimilarity(t, f.similarity(run))
	})
	t.Run("gated entry gives no note", func(t *testing.T) {
		e := abg
		e.ModelsAny = []string{"qwen"}
		f, run, tr := share.ruleFX(t, e)
		f.seq(tr, "decode", 7, 0, fRepeat(4, kAlpha, kBeta, kPad)...)
		wantSimilarity(t, f.similarity(run))
	})
	t.Run("best of several", func(t *testing.T) {
		// t-abg's alpha-beta is high; beta-gamma on another stream is a low
		// near miss of both t-abg and t-bgd: one note per stage, the best
		bgd := testFusion("t-bgd", []string{"beta"}, []string{"delta"}, []string{"gamma"})
		f, run, tr := share.ruleFX(t, abg, bgd)
		f.seq(tr, "decode", 7, 0, fRepeat(4, kAlpha, kBeta, kPad)...)
		f.seq(tr, "decode", 8, 0, kBeta, kGamma)
		rows := f.similarity(run)
		if len(rows) != 1 || rows[0].ID != "t-abg" || rows[0].Level != "high" {
			t.Errorf("rows %v", rows)
		}
	})
}

// TestFusionNotes checks that notes are asked for only where no chain row
// was found.
func TestFusionNotes(t *testing.T) {
	t.Parallel()
	abg := testFusion("t-abg", []string{"alpha"}, []string{"beta"}, []string{"gamma"})
	f, run, tr := ruleFX(t, abg)
	f.seq(tr, "prefill", 7, 0, fRepeat(4, kAlpha, kBeta, kGamma, kPad)...)
	f.seq(tr, "decode", 7, 10_000_000, fRepeat(4, kAlpha, kBeta, kPad)...)
	rows := f.matches(run)
	notes, err := FusionNotes(f.ctx, f.db, FusionSimilarityParams{Run: run}, []string{"prefill", "decode", "mixed"}, rows)
	if err != nil {
		t.Fatal(err)
	}
	wantSimilarity(t, notes, fmt.Sprintf("decode high t-abg missing 3/3 [gamma] x4 %dns", 4*fDur(kAlpha, kBeta)))

	// no stage matched whole: every note from one pass over the run, in
	// the order of stages (not the query's), each as its stage's own query
	// gives it
	f, run, tr = ruleFX(t, abg)
	f.seq(tr, "prefill", 7, 0, fRepeat(4, kAlpha, kGamma, kPad)...)
	f.seq(tr, "decode", 7, 10_000_000, fRepeat(4, kAlpha, kBeta, kPad)...)
	rows = f.matches(run)
	notes, err = FusionNotes(f.ctx, f.db, FusionSimilarityParams{Run: run}, []string{"decode", "prefill"}, rows)
	if err != nil {
		t.Fatal(err)
	}
	wantSimilarity(t, notes, fmt.Sprintf("decode high t-abg missing 3/3 [gamma] x4 %dns", 4*fDur(kAlpha, kBeta)),
		fmt.Sprintf("prefill high t-abg missing 2/3 [beta] x4 %dns", 4*fDur(kAlpha, kGamma)))
	// the stages listed, and only those, are walked
	notes, err = fusionSimilarity(f.ctx, f.db, FusionSimilarityParams{Run: run}, []string{"prefill", "mixed"})
	if err != nil {
		t.Fatal(err)
	}
	wantSimilarity(t, notes, fmt.Sprintf("prefill high t-abg missing 2/3 [beta] x4 %dns", 4*fDur(kAlpha, kGamma)))
}
