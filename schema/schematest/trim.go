package schematest

// DuckDB hands memory back to the kernel whenever a database closes: it
// trims the C heap (malloc_trim) and purges every arena of its own
// jemalloc (mallctl "arena.<all>.purge", MADV_DONTNEED). A test binary opens
// and closes hundreds of warehouses, so each close's release was paid again
// as page faults by the next test's allocations: the trim was 7% of a
// package's CPU time (queries, perf: madvise, TLB flushes and page faults
// under Allocator::FlushAll), the purge a quarter of cmd/tracehouse's
// (1.65 M page faults -> 0.62 M, 125 -> 93 CPU-s). Test binaries link this
// package and skip both; tracehouse itself keeps DuckDB's behaviour.
//
// The purge is a call from DuckDB's jemalloc extension into jemalloc's
// mallctl, two objects of the static DuckDB archive, so the linker's --wrap
// can route it through __wrap_duckdb_je_mallctl, which passes every other
// control on.

/*
#cgo LDFLAGS: -Wl,--wrap=duckdb_je_mallctl
#include <stddef.h>
#include <string.h>

int malloc_trim(size_t pad) {
	(void)pad;
	return 0;
}

int __real_duckdb_je_mallctl(const char *name, void *oldp, size_t *oldlenp, void *newp, size_t newlen);

int __wrap_duckdb_je_mallctl(const char *name, void *oldp, size_t *oldlenp, void *newp, size_t newlen) {
	size_t n = strlen(name);
	if (n >= 6 && strcmp(name + n - 6, ".purge") == 0) {
		return 0;
	}
	return __real_duckdb_je_mallctl(name, oldp, oldlenp, newp, newlen);
}
*/
import "C"
