package schema

// DuckDB's bundled jemalloc is set to hand freed pages back to the kernel
// within a second (dirty_decay_ms and muzzy_decay_ms 1000 in DuckDB 1.5),
// a little at a time: as frees go by it purges a share of its dirty pages
// with madvise. tracehouse's statements are large plans over small data,
// each building and dropping dozens of hash tables and chunks, so the
// same pages were purged and faulted in again all the time: on the demo
// warehouse six fuse-pattern queries made 1,056-1,288 madvise calls
// (271-379 with the decay off), and the madvise, its TLB shootdowns and
// the page faults after it were about a third of that query's CPU time
// (perf). KeepFreedPages turns the decay off, so freed pages stay with
// jemalloc for the next allocation.
//
// Measured (2026-12-06, load 19-27, each pair alternated): `go test
// ./queries` 57-63 -> 36-43 CPU-s; six fuse-pattern queries on the demo
// 2.4-3.0 -> 1.6-2.4 CPU-s; a demo triage 0.61-0.78 -> 0.58-0.70; the
// demo's ingest 2.7-3.3 -> 2.4-2.7. But a 400 MB (46 MB gzip) trace's
// ingest then peaked at 305 MiB instead of 233-257 (a 10 s decay: 284),
// against the ingest targets of bench/README.md, so the commands do not
// call it: the test binaries do (schematest.Main), whose processes run
// thousands of small statements and no large ingest.

/*
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <sys/types.h>

extern int duckdb_je_mallctl(const char *name, void *oldp, size_t *oldlenp, void *newp, size_t newlen);

// keep_freed_pages sets the decay of the arenas made from now on and of
// every arena that exists to -1 (never purge); it returns the first
// error of the defaults (an arena index without an arena is skipped).
static int keep_freed_pages(void) {
	ssize_t never = -1;
	int err = duckdb_je_mallctl("arenas.dirty_decay_ms", NULL, NULL, &never, sizeof never);
	if (err == 0) {
		err = duckdb_je_mallctl("arenas.muzzy_decay_ms", NULL, NULL, &never, sizeof never);
	}
	if (err != 0) {
		return err;
	}
	unsigned n = 0;
	size_t len = sizeof n;
	if (duckdb_je_mallctl("arenas.narenas", &n, &len, NULL, 0) != 0) {
		return 0;
	}
	char name[64];
	for (unsigned i = 0; i < n; i++) {
		snprintf(name, sizeof name, "arena.%u.dirty_decay_ms", i);
		duckdb_je_mallctl(name, NULL, NULL, &never, sizeof never);
		snprintf(name, sizeof name, "arena.%u.muzzy_decay_ms", i);
		duckdb_je_mallctl(name, NULL, NULL, &never, sizeof never);
	}
	return 0;
}

// purge_freed_pages hands the freed pages of every arena
// (MALLCTL_ARENAS_ALL, 4096) back to the kernel now.
static int purge_freed_pages(void) {
	return duckdb_je_mallctl("arena.4096.purge", NULL, NULL, NULL, 0);
}

// decay_ms reads a decay setting of jemalloc (name as mallctl takes it)
// into *ms; it returns mallctl's error.
static int decay_ms(const char *name, long long *ms) {
	ssize_t v = 0;
	size_t len = sizeof v;
	int err = duckdb_je_mallctl(name, &v, &len, NULL, 0);
	*ms = v;
	return err;
}
*/
import "C"

import (
	"fmt"
	"sync"
	"unsafe"
)

// KeepFreedPages makes DuckDB's jemalloc keep the pages it frees for the
// rest of the process instead of purging them (see above). A failure
// leaves jemalloc as DuckDB set it, slower and not wrong, so it returns
// nothing.
func KeepFreedPages() { keepFreedPages() }

var keepFreedPages = sync.OnceFunc(func() { C.keep_freed_pages() })

// ReleaseFreedPages makes DuckDB's jemalloc hand every page it has freed
// back to the kernel now, as DuckDB does when a database closes, instead
// of a share at a time as later allocations go by (its 1 s decay). Between
// the large statements of a finish the freed pages of one statement were
// still resident when the next one grew: 200-270 MiB of them at the 1 GB
// kernel-dense trace's step save (bench/README.md, "Twenty-first
// figures"). A failure leaves the pages to the decay, so it returns
// nothing. (Test binaries skip it, as every purge: schematest.)
func ReleaseFreedPages() { C.purge_freed_pages() }

// decayMS returns jemalloc's decay setting name ("arenas.dirty_decay_ms",
// "arena.0.muzzy_decay_ms", ...), for the test that keepFreedPages holds.
func decayMS(name string) (int64, error) {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var ms C.longlong
	if err := C.decay_ms(cname, &ms); err != 0 {
		return 0, fmt.Errorf("jemalloc mallctl %s: error %d", name, int(err))
	}
	return int64(ms), nil
}
