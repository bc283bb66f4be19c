package queries

import (
	"context"
	"database/sql"
)

// SchemaObjectsRow is one row of schema_objects.sql.
type SchemaObjectsRow struct {
	Kind        string
	Name        string
	Type        sql.NullString
	Description string
}

// SchemaObjects lists the warehouse's tables, views and macros (object
// ""), or the columns or parameters of one of them.
func SchemaObjects(ctx context.Context, q Querier, object string) ([]SchemaObjectsRow, error) {
	obj := sql.NullString{String: object, Valid: object != ""}
	return collect(ctx, q, "schema_objects", []any{sql.Named("object", obj)}, func(rows *sql.Rows) (SchemaObjectsRow, error) {
		var r SchemaObjectsRow
		err := rows.Scan(&r.Kind, &r.Name, &r.Type, &r.Description)
		return r, err
	})
}
