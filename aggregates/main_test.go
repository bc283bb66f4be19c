package aggregates

import (
	"os"
	"testing"

	"github.com/tracehouse/tracehouse/schema/schematest"
)

// TestMain removes the warehouse templates the tests copy when they end,
// and keeps DuckDB's freed pages for the binary (schematest.Main).
func TestMain(m *testing.M) { os.Exit(schematest.Main(m)) }
