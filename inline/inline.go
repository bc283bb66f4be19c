// Package inline writes a statement's named arguments into its text as SQL
// literals before it reaches DuckDB.
//
// DuckDB plans a prepared statement twice when it takes parameters and
// reads a table: once when it is prepared (without values) and again,
// rebound, when it runs with them. Planning is most of what a small run
// costs: the fuse-pattern query of a demo run is planned in about 25 ms
// and runs in 23, the overlap-table query is planned in 23 ms and runs in
// 3.5. With the values written in, a statement is planned once, with the
// same constants the rebinding would have used.
//
// Only tracehouse's own statements go through Args (the embedded .sql
// files and the Go text beside them); the values may come from a user (a
// label, a path) and are written as quoted literals, never spliced.
package inline

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Args returns query with every $name placeholder that one of args names
// (each a sql.NamedArg) replaced by the literal of its value, and no
// arguments left. When an argument is not named, is not used by query, or
// has a value without a literal form here (a time, a float32, a string
// with a NUL byte or invalid UTF-8, a list other than a non-nil []string
// or []int64), it returns query and args unchanged, for the driver to bind. Placeholders in comments, string
// literals and quoted identifiers are left alone.
func Args(query string, args []any) (string, []any) {
	if len(args) == 0 {
		return query, args
	}
	lits := make(map[string]string, len(args))
	for _, a := range args {
		n, ok := a.(sql.NamedArg)
		if !ok || n.Name == "" {
			return query, args
		}
		lit, ok := literal(n.Value)
		if !ok {
			return query, args
		}
		lits[n.Name] = lit
	}
	out, used, ok := replace(query, lits)
	if !ok || len(used) != len(lits) {
		return query, args
	}
	return out, nil
}

// replace writes lits over the $name placeholders of query outside
// comments, string literals and quoted identifiers. ok is false when a
// placeholder names no literal (the driver then reports it).
func replace(query string, lits map[string]string) (out string, used map[string]bool, ok bool) {
	var b strings.Builder
	b.Grow(len(query) + 64)
	used = map[string]bool{}
	for i := 0; i < len(query); {
		c := query[i]
		switch {
		case c == '-' && strings.HasPrefix(query[i:], "--"):
			end := strings.IndexByte(query[i:], '\n')
			if end < 0 {
				end = len(query) - i
			}
			b.WriteString(query[i : i+end])
			i += end
		case c == '/' && strings.HasPrefix(query[i:], "/*"):
			end := strings.Index(query[i+2:], "*/")
			if end < 0 {
				end = len(query) - i - 2
			} else {
				end += 2
			}
			b.WriteString(query[i : i+2+end])
			i += 2 + end
		case c == '\'' || c == '"':
			end := quoted(query, i)
			b.WriteString(query[i:end])
			i = end
		case c == '$' && i+1 < len(query) && nameStart(query[i+1]):
			j := i + 2
			for j < len(query) && nameByte(query[j]) {
				j++
			}
			lit, found := lits[query[i+1:j]]
			if !found {
				return "", nil, false
			}
			used[query[i+1:j]] = true
			b.WriteString(lit)
			i = j
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String(), used, true
}

// quoted returns the end of the quoted token starting at i (a doubled
// quote is part of it).
func quoted(s string, i int) int {
	q := s[i]
	for j := i + 1; j < len(s); j++ {
		if s[j] != q {
			continue
		}
		if j+1 < len(s) && s[j+1] == q {
			j++
			continue
		}
		return j + 1
	}
	return len(s)
}

func nameStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func nameByte(c byte) bool { return nameStart(c) || c >= '0' && c <= '9' }

// literal is v as a SQL literal of the type the driver would bind it as;
// ok is false for values it leaves to the driver.
func literal(v any) (string, bool) {
	if vr, isValuer := v.(driver.Valuer); isValuer {
		dv, err := vr.Value()
		if err != nil {
			return "", false
		}
		v = dv
	}
	switch x := v.(type) {
	case nil:
		return "NULL", true
	case bool:
		return strconv.FormatBool(x), true
	case int:
		return integer(int64(x)), true
	case int8:
		return integer(int64(x)), true
	case int16:
		return integer(int64(x)), true
	case int32:
		return integer(int64(x)), true
	case int64:
		return integer(x), true
	case uint8:
		return strconv.FormatUint(uint64(x), 10), true
	case uint16:
		return strconv.FormatUint(uint64(x), 10), true
	case uint32:
		return strconv.FormatUint(uint64(x), 10), true
	case uint64:
		return strconv.FormatUint(x, 10), true
	case float64:
		return float(x)
	case string:
		if strings.IndexByte(x, 0) >= 0 || !utf8.ValidString(x) {
			return "", false
		}
		return "'" + strings.ReplaceAll(x, "'", "''") + "'", true
	case []string:
		return list(x, "VARCHAR[]")
	case []int64:
		return list(x, "BIGINT[]")
	}
	return "", false
}

// list is a typed list literal, the type the driver binds the slice as
// (a query reading a list, such as known_paths.sql's unnest($kernels), is
// then planned once too). A nil slice is left to the driver.
func list[T any](xs []T, typ string) (string, bool) {
	if xs == nil {
		return "", false
	}
	elems := make([]string, len(xs))
	for i, x := range xs {
		lit, ok := literal(x)
		if !ok {
			return "", false
		}
		elems[i] = lit
	}
	return "[" + strings.Join(elems, ", ") + "]::" + typ, true
}

// integer parenthesises a negative number, which after a minus sign
// would otherwise start a comment.
func integer(v int64) string {
	if v < 0 {
		return "(" + strconv.FormatInt(v, 10) + ")"
	}
	return strconv.FormatInt(v, 10)
}

// float is a cast from the shortest decimal text that reads back as v (a
// bare 0.5 would be a DECIMAL).
func float(v float64) (string, bool) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "", false
	}
	return "CAST('" + strconv.FormatFloat(v, 'g', -1, 64) + "' AS DOUBLE)", true
}

// Execer runs a statement: a *sql.DB, *sql.Conn or *sql.Tx.
type Execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// Queryer runs a query: a *sql.DB, *sql.Conn or *sql.Tx.
type Queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// Exec runs one of our statements on e with its named arguments written
// in (Args), so that DuckDB plans it once instead of twice.
func Exec(ctx context.Context, e Execer, query string, args ...any) (sql.Result, error) {
	q, a := Args(query, args)
	return e.ExecContext(ctx, q, a...)
}

// Query is Exec for a query.
func Query(ctx context.Context, e Queryer, query string, args ...any) (*sql.Rows, error) {
	q, a := Args(query, args)
	return e.QueryContext(ctx, q, a...)
}
