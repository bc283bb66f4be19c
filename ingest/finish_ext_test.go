package ingest_test

import (
	"github.com/tracehouse/tracehouse/aggregates"
	"github.com/tracehouse/tracehouse/ingest"
)

// The finish the internal tests call (finish_hook_test.go).
func init() { ingest.Finish = aggregates.FinishPerRun }
