// Command tracehouse turns PyTorch profiler traces from LLM serving into a
// DuckDB warehouse and reports.
package main

import (
	"os"
	"runtime/debug"

	"github.com/tracehouse/tracehouse/ingest"
)

func main() {
	// Keep the heap near what ingest needs on multi-GB traces unless the user
	// chose a limit (GOMEMLIMIT); it is a soft limit, never a failure.
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(ingest.MemoryLimit)
	}
	os.Exit(run(os.Args[1:], systemIO(), os.Getenv))
}
