package ingest

import (
	"os"
	"testing"

	"github.com/tracehouse/tracehouse/schema/schematest"
)

// TestMain removes the warehouse templates the tests copy.
func TestMain(m *testing.M) { os.Exit(schematest.Main(m)) }
