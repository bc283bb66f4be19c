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
// convention: a leading comment naming the query after its file and
// documenting its parameters and columns.
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
			header := leadingComment(text)
			for _, section := range []string{"Parameters", "Columns"} {
				if !strings.Contains(header, section) {
					t.Errorf("%s.sql: the header comment must document its %s", name, strings.ToLower(section))
				}
			}
			st, err := db.PrepareContext(context.Background(), text)
			if err != nil {
				t.Fatalf("prepare %s.sql: %v", name, err)
			}
			st.Close()
		})
	}
}

// leadingComment returns the comment lines that open a .sql file.
func leadingComment(text string) string {
	var b strings.Builder
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, "--") {
			break
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.String()
}

// stageOnly is the filter for one stage (NULL would mean every stage).
func stageOnly(s string) sql.NullString { return sql.NullString{String: s, Valid: true} }
