package schema

// DuckDB allocates its buffers from the jemalloc it bundles, but every
// C++ object it makes while parsing, binding, planning and running a
// statement (plan nodes, expressions, types, strings, vectors) comes from
// operator new, which libstdc++ serves from glibc's malloc. On this
// project's statements, large plans over small data, that malloc was 12%
// of a test binary's CPU time (perf: _int_malloc, _int_free,
// malloc_consolidate, unlink_chunk). cxxalloc.cpp defines operator new and
// delete in the executable, which the dynamic linker then binds for
// libstdc++ and DuckDB alike, and sends them to DuckDB's jemalloc
// (duckdb_je_malloc, exported by the static DuckDB library): a demo ingest
// took 10% less CPU, a small triage 10% less wall time.
//
// Only the plain, array and sized forms are replaced; libstdc++'s nothrow
// forms call them, and its aligned forms keep their own pair
// (aligned_alloc and free). Memory from malloc is still freed by free.

// #cgo CXXFLAGS: -O2
import "C"
