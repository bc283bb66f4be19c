package schema

// Go's external link exports every symbol of the executable (-rdynamic):
// with DuckDB linked in, 60,000 dynamic symbols (1.4 MB of .dynsym, 4.7
// MB of .dynstr) that the dynamic linker searches for each of the 5,400
// relocations against libstdc++ at every start, faulting in pages of those
// tables as it goes. Nothing looks them up at run time: tracehouse loads
// no extension (DuckDB's autoload is off, schema.open), and the symbols a
// shared library needs from the executable (operator new and delete,
// cxxalloc.go) are exported all the same, since libstdc++ references
// them. --no-export-dynamic (after Go's -rdynamic, so it wins) leaves 466.
// Measured (issue 38, load 8.5, perf stat alternated): `tracehouse --help`
// 42-45 -> 33-37 ms of CPU and 1,150 -> 970-1,040 page faults; `triage
// RUN` on a saved report 10 ms less CPU, 115 fewer page faults. A
// loadable DuckDB extension (LOAD in `tracehouse sql`) would not find
// DuckDB's symbols in the executable.

// #cgo LDFLAGS: -Wl,--no-export-dynamic
import "C"
