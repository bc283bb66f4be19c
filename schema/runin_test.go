package schema_test

import (
	"context"
	"database/sql"
	"slices"
	"strings"
	"testing"

	"github.com/tracehouse/tracehouse/schema/schematest"
)

// TestRunIn checks the library's _run_in(id, ids) against membership
// computed here, for lists in and out of order, with gaps, repeats, a
// NULL element, empty and NULL lists: it must answer what list_contains
// answers, its range test being only what lets DuckDB skip row groups.
func TestRunIn(t *testing.T) {
	db := schematest.Open(t, "").DB
	ctx := context.Background()
	lists := []struct {
		lit   string // the list as SQL
		ids   []int64
		isNil bool // the list is NULL
	}{
		{"[]::BIGINT[]", nil, false},
		{"[3]::BIGINT[]", []int64{3}, false},
		{"[1, 5, 9]::BIGINT[]", []int64{1, 5, 9}, false},
		{"[9, 1]::BIGINT[]", []int64{9, 1}, false},
		{"[4, 4, 7]::BIGINT[]", []int64{4, 4, 7}, false},
		{"[2, NULL, 6]::BIGINT[]", []int64{2, 6}, false},
		{"NULL::BIGINT[]", nil, true},
	}
	for _, l := range lists {
		for id := int64(0); id <= 10; id++ {
			var got sql.NullBool
			if err := db.QueryRowContext(ctx, "SELECT _run_in($1::INTEGER, "+l.lit+")", id).Scan(&got); err != nil {
				t.Fatalf("_run_in(%d, %s): %v", id, l.lit, err)
			}
			want := sql.NullBool{Bool: slices.Contains(l.ids, id), Valid: !l.isNil}
			if got != want {
				t.Errorf("_run_in(%d, %s) = %v, want %v", id, l.lit, got, want)
			}
		}
	}
}

// TestRunInReachesTheScan checks that a constant list becomes a range
// filter on the table's scan (what skips the other runs' row groups), not
// only a filter above it.
func TestRunInReachesTheScan(t *testing.T) {
	ctx := context.Background()
	db, err := schematest.Open(t, "").DB.Conn(ctx) // (the TEMP table is the connection's)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// (a table with rows: DuckDB plans no scan of an empty one)
	if _, err := db.ExecContext(ctx, "CREATE TEMP TABLE r AS SELECT range::INTEGER AS run_id FROM range(1, 11)"); err != nil {
		t.Fatal(err)
	}
	var key, plan string
	if err := db.QueryRowContext(ctx,
		"EXPLAIN SELECT count(*) FROM r WHERE _run_in(run_id, [3, 5]::BIGINT[])").Scan(&key, &plan); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(plan, "run_id>=3") || !strings.Contains(plan, "run_id<=5") {
		t.Errorf("the scan has no range filter on run_id:\n%s", plan)
	}
}
