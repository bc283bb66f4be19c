package aggregates

import (
	"context"
	"os"
	"testing"

	"github.com/tracehouse/tracehouse/ingest"
	"github.com/tracehouse/tracehouse/schema"
	"github.com/tracehouse/tracehouse/schema/schematest"
)

// TestMain removes the warehouse templates the tests copy when they end,
// and keeps DuckDB's freed pages for the binary (schematest.Main).
func TestMain(m *testing.M) { os.Exit(schematest.Main(m)) }

// demoTemplate is a template of the demo runs under dir
// (../testdata/demo/<run>) ingested with one job, so every copy holds the
// same trace and kernel ids, and not finished; built once per test
// binary and list of runs.
func demoTemplate(t *testing.T, runs ...string) string {
	t.Helper()
	name, paths := "demo", make([]string, len(runs))
	for i, r := range runs {
		name += "-" + r
		paths[i] = "../testdata/demo/" + r
	}
	return schematest.Template(t, name, func(ctx context.Context, w *schema.Warehouse) error {
		res, err := ingest.Ingest(ctx, w, paths, ingest.Options{Jobs: 1})
		if err == nil && res.Failed() > 0 {
			err = res.Files[0].Err
		}
		return err
	})
}
