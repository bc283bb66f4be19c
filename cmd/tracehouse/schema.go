package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tracehouse/tracehouse/lake"
	"github.com/tracehouse/tracehouse/queries"
	"github.com/tracehouse/tracehouse/report"
)

// SchemaOptions are the parsed flags of `tracehouse schema`.
type SchemaOptions struct {
	common
	Format report.Format
	Object string
}

func newCmdSchema(f *Factory, runF func(*SchemaOptions) error) *cobra.Command {
	opts := &SchemaOptions{}
	return &cobra.Command{
		Use:   "schema [NAME]",
		Short: "Describe the warehouse's tables, views and macros",
		Long: `List the tables, views and SQL macros of the warehouse with what each holds,
or, given a NAME, the columns of that table or view (or the parameters of that
macro) with their types and descriptions. The descriptions are DuckDB comments,
so duckdb_tables(), duckdb_columns() and duckdb_functions() show them too.`,
		Example: `  tracehouse schema
  tracehouse schema kernels
  tracehouse schema overlap_kernels`,
		Args: maxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var err error
			opts.common = f.common(cmd)
			if opts.Format, err = f.outputFormat(); err != nil {
				return err
			}
			if len(args) == 1 {
				opts.Object = args[0]
			}
			if runF != nil {
				return runF(opts)
			}
			return schemaRun(opts)
		},
	}
}

// schemaJSON is the JSON shape of one row.
type schemaJSON struct {
	Kind        string  `json:"kind"`
	Name        string  `json:"name"`
	Type        *string `json:"type"`
	Description string  `json:"description"`
}

func schemaRun(opts *SchemaOptions) error {
	w, err := opts.Warehouse(opts.Ctx, false)
	if err != nil {
		return err
	}
	defer w.Close()
	if err := lake.Describe(opts.Ctx, w); err != nil {
		return err
	}
	rows, err := queries.SchemaObjects(opts.Ctx, w.DB, opts.Object)
	if err != nil {
		return err
	}
	return schemaPrint(opts, rows)
}

// schemaPrint prints the rows of `schema [NAME]` in the format of opts:
// what the command does with them once read (a test prints one object's
// rows at several widths this way).
func schemaPrint(opts *SchemaOptions, rows []queries.SchemaObjectsRow) error {
	if opts.Object != "" && len(rows) == 0 {
		return fmt.Errorf("no table, view or macro named %q: run 'tracehouse schema' for the list", opts.Object)
	}
	name, typ := "Object", "Parameters"
	if opts.Object != "" {
		name, typ = "Name", "Type"
	}
	// Names are typed back into `sql`: never cut; a long type or
	// parameter list and the description wrap, the former under its row
	// when the description would be narrow.
	t := &report.Table{Name: "schema", Columns: []report.Column{{Name: "Kind", Keep: true}, {Name: name, Keep: true},
		{Name: typ, Wrap: true, Detail: 2}, {Name: "Description", Wrap: true}}}
	js := []schemaJSON{}
	for _, r := range rows {
		t.Rows = append(t.Rows, []string{r.Kind, r.Name, r.Type.String, r.Description})
		j := schemaJSON{Kind: r.Kind, Name: r.Name, Description: r.Description}
		if r.Type.Valid {
			j.Type = &r.Type.String
		}
		js = append(js, j)
	}
	return opts.render(opts.Format, report.Doc{Blocks: []any{t}, JSON: js})
}
