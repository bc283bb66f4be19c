package ingest

import (
	"context"
	"os"
	"testing"

	"github.com/tracehouse/tracehouse/schema"
	"github.com/tracehouse/tracehouse/schema/schematest"
)

// TestMain removes the warehouse templates the tests copy.
func TestMain(m *testing.M) { os.Exit(schematest.Main(m)) }

// demoIngest is what Ingest returned when demoTemplate's fill ingested
// testdata/demo (set once, before demoTemplate first returns).
var demoIngest *Result

// demoTemplate is a template of testdata/demo ingested (two jobs) into a
// migrated warehouse, once per test binary: TestDemoMatchesManifest
// checks that ingest (demoIngest and the rows), other tests start from
// it.
func demoTemplate(t *testing.T) string {
	t.Helper()
	return schematest.Template(t, "demo-runs", func(ctx context.Context, w *schema.Warehouse) error {
		res, err := Ingest(ctx, w, []string{"../testdata/demo"}, Options{Jobs: 2})
		demoIngest = res
		return err
	})
}
