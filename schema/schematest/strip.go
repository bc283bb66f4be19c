//go:build !symbols

package schematest

// A test binary is linked, run once and thrown away; its symbol table and
// DWARF (125 MB binary -> 97 MB) serve only a debugger or a profiler.
// Leaving them out (-Wl,-s) makes the host linker's share of each DuckDB
// test binary's link 6.0 -> 3.8 CPU-s (go test -c ./lake/, load 11); Go's
// own stack traces come from pclntab, which stays. Gold would save more,
// but -fuse-ld is not on cmd/go's #cgo flag allow-list.
//
// To profile a test binary (perf, or go tool pprof given the binary: both
// name functions from the symbol table, and pprof names C code wrongly
// without it), build it with -tags symbols.

// #cgo LDFLAGS: -Wl,-s
import "C"
