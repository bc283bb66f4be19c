// C++ operator new and delete, routed to DuckDB's own jemalloc (see
// cxxalloc.go).
#include <cstddef>
#include <new>

extern "C" void *duckdb_je_malloc(std::size_t size);
extern "C" void duckdb_je_free(void *ptr);

static void *allocate(std::size_t n) {
	void *p = duckdb_je_malloc(n ? n : 1);
	if (p == nullptr) {
		throw std::bad_alloc();
	}
	return p;
}

void *operator new(std::size_t n) { return allocate(n); }
void *operator new[](std::size_t n) { return allocate(n); }
void operator delete(void *p) noexcept { duckdb_je_free(p); }
void operator delete[](void *p) noexcept { duckdb_je_free(p); }
void operator delete(void *p, std::size_t) noexcept { duckdb_je_free(p); }
void operator delete[](void *p, std::size_t) noexcept { duckdb_je_free(p); }
