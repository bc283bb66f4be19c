package capture_test

import (
	"flag"
	"fmt"
	"os"
	"testing"
)

// TestMain runs up to 8 tests at once unless -test.parallel says
// otherwise. These tests spend their time waiting on fake servers' flush
// delays and timeouts, not on the CPU, so the default (GOMAXPROCS, 2 on
// the project's machine) would leave the package idling for seconds while
// `go test ./...` holds one of its slots.
func TestMain(m *testing.M) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		if err := flag.Set("test.parallel", "8"); err != nil {
			fmt.Fprintln(os.Stderr, "capture tests:", err)
			os.Exit(2)
		}
	}
	os.Exit(m.Run())
}
