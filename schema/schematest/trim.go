package schematest

// DuckDB trims the C heap (malloc_trim) whenever a database closes, handing
// every free page back to the kernel. A test binary opens and closes
// hundreds of warehouses, so each close's trim was paid again as page
// faults by the next test's allocations: 7% of a package's CPU time
// (queries, perf: madvise, TLB flushes and page faults under
// Allocator::FlushAll). Test binaries link this package and skip the
// trim; tracehouse itself keeps DuckDB's behaviour.

/*
#include <stddef.h>

int malloc_trim(size_t pad) {
	(void)pad;
	return 0;
}
*/
import "C"
