package schema

import (
	"context"
	"testing"
)

// TestKeepFreedPages: after KeepFreedPages (schematest.Main called it
// for this binary), DuckDB's jemalloc never purges freed pages, in the
// arenas that exist and those made later; DuckDB sets 1000 ms, so this
// fails if the setting is not applied.
func TestKeepFreedPages(t *testing.T) {
	KeepFreedPages()
	w, err := Open(context.Background(), Memory, Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.DB.Exec("SELECT 1"); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"arenas.dirty_decay_ms", "arenas.muzzy_decay_ms", "arena.0.dirty_decay_ms", "arena.0.muzzy_decay_ms"} {
		ms, err := decayMS(name)
		if err != nil {
			t.Fatal(err)
		}
		if ms != -1 {
			t.Errorf("%s = %d, want -1 (never purge)", name, ms)
		}
	}
}
