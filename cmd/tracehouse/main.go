// Command tracehouse turns PyTorch profiler traces from LLM serving into a
// DuckDB warehouse and reports.
package main

import "os"

func main() {
	os.Exit(run(os.Args[1:], systemIO(), os.Getenv))
}
