package queries

import (
	"context"
	"database/sql"
	"fmt"
	"testing"

	"github.com/tracehouse/tracehouse/schema/schematest"
)

// TestFrameworkOverrideDrivesCatalog (issue 9 item 1): when the traces do
// not say their framework, the one the user names decides which catalog
// entries are the run's own, exactly as if the traces had said it; unset,
// the override is gone from the connection pool.
func TestFrameworkOverrideDrivesCatalog(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := schematest.Open(t, demoCatalogTemplate(t))
	run := demoRuns(t, w.DB)["sglang-llama"]
	// Without an override the rows are asked for alone (FusionMatches, the
	// rows Triage shows): a whole triage each was a third of this test.
	fusions := func(fw sql.NullString) string {
		var rows []FusionMatchesRow
		if fw.Valid {
			d, err := Triage(ctx, w.DB, TriageParams{Run: run, Rank: rankOf(0), MinShare: 1, Framework: fw})
			if err != nil {
				t.Fatal(err)
			}
			rows = d.Fusions
		} else {
			var err error
			if rows, err = FusionMatches(ctx, w.DB, FusionMatchesParams{Run: run, Rank: rankOf(0), MinShare: 1}); err != nil {
				t.Fatal(err)
			}
		}
		var s string
		for _, f := range rows {
			s += fmt.Sprintf("%s %s %s %d\n", f.Stage, f.ID, f.Status, f.RelatedNS)
		}
		return s
	}
	known := fusions(sql.NullString{})
	if known == "" {
		t.Fatal("fixture: no fuse rows on sglang-llama")
	}
	if _, err := w.DB.Exec(`UPDATE traces SET framework = 'unknown' WHERE run_id = ?`, run); err != nil {
		t.Fatal(err)
	}
	unknown := fusions(sql.NullString{})
	if unknown == known {
		t.Fatal("fixture: statuses do not depend on the framework")
	}
	if got := fusions(sql.NullString{String: "sglang", Valid: true}); got != known {
		t.Errorf("with --framework sglang:\n%s\nwant what the traces' own framework gave:\n%s", got, known)
	}
	// A trace that names its framework keeps it whatever the override.
	if _, err := w.DB.Exec(`UPDATE traces SET framework = 'sglang' WHERE run_id = ?`, run); err != nil {
		t.Fatal(err)
	}
	if got := fusions(sql.NullString{String: "vllm", Valid: true}); got != known {
		t.Errorf("override beat the traces' framework:\n%s", got)
	}
	// Every pooled connection is clean again.
	for i := 0; i < 4; i++ {
		var v sql.NullString
		if err := w.DB.QueryRow(`SELECT getvariable('tracehouse_framework')::VARCHAR`).Scan(&v); err != nil || v.Valid {
			t.Fatalf("variable left set: %v %v", v, err)
		}
	}
}
