package schema

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/tracehouse/tracehouse/sqllib"
)

// The SQL library (package sqllib) is applied to a warehouse the way the
// catalog is installed: when the hash stored in the warehouse differs from
// the binary's, in one transaction that drops what the earlier library
// made and creates the new one. The hash and the names of the objects it
// made are stored as two macros of the library's own (a table would be
// part of the schema users see, and of a lake's layout).
const (
	hashMacro    = "_sqllib_hash"
	objectsMacro = "_sqllib_objects"
)

// libStatement is one statement of the library and where it is.
type libStatement struct {
	sql, file string
	line      int
}

// library is the embedded library, split once per process.
type library struct {
	hash    string
	stmts   []libStatement // every statement, in creation order
	objects []sqllib.Object
	// temp is the library as TEMP objects, one string of statements for
	// a connection of a read-only warehouse whose library is stale.
	temp string
}

// libraryHash is the embedded library's hash, computed once per process.
// It is all a read-only open of a current warehouse needs: splitting the
// library into statements and finding the objects it defines (loadLibrary,
// a regular expression over 200 kB of SQL) was 10-13 ms of CPU, a fifth
// of the open, which a read-only open only needs when it creates the
// library as TEMP objects or a writable one when it applies it.
var libraryHash = sync.OnceValues(sqllib.EmbeddedHash)

var loadLibrary = sync.OnceValues(func() (*library, error) {
	ms, err := sqllib.Load()
	if err != nil {
		return nil, err
	}
	h, err := libraryHash()
	if err != nil {
		return nil, err
	}
	lib := &library{hash: h}
	var temp, comments []string
	mine := map[string]bool{} // the macros and views the library makes
	for _, m := range ms {
		for _, st := range SplitStatements(m.SQL) {
			// the statement without the comment above it
			st.SQL = st.SQL[firstCode(st.SQL):]
			lib.stmts = append(lib.stmts, libStatement{sql: st.SQL, line: st.Line, file: "sqllib/" + m.Name + ".sql"})
			for _, kind := range []string{"MACRO", "VIEW"} {
				if strings.HasPrefix(st.SQL, "CREATE "+kind+" ") {
					temp = append(temp, "CREATE TEMP "+kind+" "+strings.TrimPrefix(st.SQL, "CREATE "+kind+" "))
				}
			}
			if c := commentTarget.FindStringSubmatch(st.SQL); c != nil {
				comments = append(comments, c[1], st.SQL)
			}
		}
		for _, o := range sqllib.Definitions(m.SQL) {
			mine[o.Name] = true
		}
		lib.objects = append(lib.objects, sqllib.Definitions(m.SQL)...)
	}
	if len(temp) == 0 {
		return nil, errors.New("sqllib: the library creates no macro or view")
	}
	// The descriptions of the library's own macros and views (and of
	// their columns) go on the TEMP copies too: the stored ones carry the
	// older library's, or none. A table's cannot (the file is read-only):
	// `schema` on such a warehouse shows its tables' stored descriptions.
	for i := 0; i < len(comments); i += 2 {
		if mine[comments[i]] {
			temp = append(temp, comments[i+1])
		}
	}
	lib.temp = strings.Join(temp, ";\n")
	return lib, nil
})

// commentTarget matches a COMMENT ON statement and names the macro, view
// or table it describes (a column's: its table or view).
var commentTarget = regexp.MustCompile(`^COMMENT\s+ON\s+(?:MACRO\s+TABLE|MACRO|VIEW|TABLE|COLUMN)\s+([a-z_][a-z0-9_]*)`)

// LibraryHash is the hash of the embedded SQL library.
func LibraryHash() (string, error) {
	return libraryHash()
}

// StoredLibraryHash returns the hash of the library stored in the
// warehouse, "" when none is (a warehouse made before the library).
func StoredLibraryHash(ctx context.Context, q interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}) (string, error) {
	var exists bool
	if err := q.QueryRowContext(ctx, `SELECT count(*) > 0 FROM duckdb_functions()
		WHERE database_name = current_database() AND schema_name = 'main' AND function_name = '`+hashMacro+`'`).Scan(&exists); err != nil {
		return "", fmt.Errorf("read the SQL library's hash: %w", err)
	}
	if !exists {
		return "", nil
	}
	var h string
	if err := q.QueryRowContext(ctx, `SELECT `+hashMacro+`()`).Scan(&h); err != nil {
		return "", fmt.Errorf("read the SQL library's hash: %w", err)
	}
	return h, nil
}

// libraryCurrent says whether the warehouse holds the library of hash
// (this binary's): one cheap query (a warehouse made before the library
// has no hash macro, and the call fails).
func libraryCurrent(ctx context.Context, db *sql.DB, hash string) bool {
	var h string
	err := db.QueryRowContext(ctx, `SELECT `+hashMacro+`()`).Scan(&h)
	return err == nil && h == hash
}

// applyLibrary brings the warehouse's macros and views to the embedded
// library when its stored hash differs, in one transaction: the objects
// the stored library made (for a warehouse made before it: those of this
// one, which the migrations made) are dropped, the library is created,
// and its hash and object names are stored with it.
func applyLibrary(ctx context.Context, db *sql.DB) (err error) {
	lib, err := loadLibrary()
	if err != nil {
		return err
	}
	if libraryCurrent(ctx, db, lib.hash) {
		return nil
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("apply the SQL library: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN TRANSACTION"); err != nil {
		return fmt.Errorf("apply the SQL library: %w", err)
	}
	defer func() {
		if err != nil {
			_, rerr := conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
			err = errors.Join(err, rerr)
		}
	}()
	stored, err := StoredLibraryHash(ctx, conn)
	if err != nil {
		return err
	}
	if stored == lib.hash {
		// another process applied it since the check above
		_, err := conn.ExecContext(ctx, "COMMIT")
		return err
	}
	drops, err := libraryDrops(ctx, conn, lib, stored != "")
	if err != nil {
		return err
	}
	if len(drops) > 0 {
		if _, err := conn.ExecContext(ctx, strings.Join(drops, ";\n")); err != nil {
			return fmt.Errorf("apply the SQL library: drop the earlier one: %w", err)
		}
	}
	for _, st := range lib.stmts {
		if _, err := conn.ExecContext(ctx, st.sql); err != nil {
			return fmt.Errorf("apply the SQL library: %s:%d: %w", st.file, st.line, err)
		}
	}
	names := make([]string, len(lib.objects))
	for i, o := range lib.objects {
		names[i] = quote(o.Name)
	}
	if _, err := conn.ExecContext(ctx, fmt.Sprintf(`CREATE OR REPLACE MACRO %s() AS %s;
CREATE OR REPLACE MACRO %s() AS [%s]::VARCHAR[]`, hashMacro, quote(lib.hash), objectsMacro, strings.Join(names, ", "))); err != nil {
		return fmt.Errorf("apply the SQL library: store its hash: %w", err)
	}
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		return fmt.Errorf("apply the SQL library: commit: %w", err)
	}
	return nil
}

// libraryDrops are the statements that drop the macros and views the
// stored library made (hasStored) or, in a warehouse made before the
// library, the migrations' ones, which are this library's names.
func libraryDrops(ctx context.Context, conn *sql.Conn, lib *library, hasStored bool) ([]string, error) {
	names := make([]string, len(lib.objects))
	for i, o := range lib.objects {
		names[i] = quote(o.Name)
	}
	list := "[" + strings.Join(names, ", ") + "]::VARCHAR[]"
	if hasStored {
		list = "list_concat(" + list + ", " + objectsMacro + "())"
	}
	rows, err := conn.QueryContext(ctx, `WITH names AS (SELECT `+list+` AS names)
		SELECT CASE function_type WHEN 'table_macro' THEN 'DROP MACRO TABLE ' ELSE 'DROP MACRO ' END || function_name
		FROM duckdb_functions(), names
		WHERE database_name = current_database() AND schema_name = 'main'
		  AND function_type IN ('macro', 'table_macro') AND list_contains(names, function_name)
		UNION ALL
		SELECT 'DROP VIEW ' || view_name
		FROM duckdb_views(), names
		WHERE database_name = current_database() AND schema_name = 'main' AND NOT internal
		  AND list_contains(names, view_name)
		ORDER BY 1`)
	if err != nil {
		return nil, fmt.Errorf("apply the SQL library: list the earlier one: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// tempLibrary creates the library as TEMP objects on a new connection of a
// read-only warehouse whose stored library is stale (a newer binary on a
// warehouse no writer has opened since): they shadow the stored ones for
// every statement of that connection, and the warehouse is not written.
func tempLibrary(execer driver.ExecerContext) error {
	lib, err := loadLibrary()
	if err != nil {
		return err
	}
	if _, err := execer.ExecContext(context.Background(), lib.temp, nil); err != nil {
		return fmt.Errorf("the SQL library as temporary macros: %w", err)
	}
	return nil
}

// quote is s as a SQL string literal.
func quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}
