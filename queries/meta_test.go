package queries

import (
	"context"
	"database/sql"
	"strings"
	"testing"
)

// TestEveryQueryPrepares prepares every embedded .sql file against a freshly
// migrated warehouse, so a renamed column or a broken macro call fails here
// and not in front of a user. It also holds each file to the header
// convention: a leading comment naming the query after its file.
func TestEveryQueryPrepares(t *testing.T) {
	t.Parallel()
	db := newFixture(t).db
	names := Names()
	if len(names) == 0 {
		t.Fatal("no embedded queries")
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			text, err := Text(name)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(text, "-- "+name+":") {
				t.Errorf("%s.sql must start with a header comment %q", name, "-- "+name+": ...")
			}
			st, err := db.PrepareContext(context.Background(), text)
			if err != nil {
				t.Fatalf("prepare %s.sql: %v", name, err)
			}
			st.Close()
		})
	}
}

// stageOnly is the filter for one stage (NULL would mean every stage).
func stageOnly(s string) sql.NullString { return sql.NullString{String: s, Valid: true} }
