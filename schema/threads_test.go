package schema

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestEngineThreads: whatever the cores asked for, DuckDB gets at least
// minAggregateThreads threads and starts cores - 1 workers.
func TestEngineThreads(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ cores, threads, external int }{
		{1, 3, 3}, {2, 3, 2}, {3, 3, 1}, {8, 8, 1},
	} {
		threads, external := engineThreads(c.cores)
		if threads != c.threads || external != c.external {
			t.Errorf("engineThreads(%d) = %d, %d; want %d, %d", c.cores, threads, external, c.threads, c.external)
		}
	}
	threads, external := engineThreads(0)
	if n := runtime.GOMAXPROCS(0); n >= minAggregateThreads {
		if threads != 0 || external != 0 {
			t.Errorf("engineThreads(0) on %d cores = %d, %d; want DuckDB's defaults", n, threads, external)
		}
	} else if threads-external+1 != n || threads < minAggregateThreads {
		t.Errorf("engineThreads(0) on %d cores = %d, %d", n, threads, external)
	}
}

// TestOpenThreads: the settings reach DuckDB, and a query that groups runs.
func TestOpenThreads(t *testing.T) {
	t.Parallel()
	w, err := open(Memory, false, Options{Threads: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	var threads, external, groups int
	err = w.DB.QueryRowContext(context.Background(), `SELECT current_setting('threads'), current_setting('external_threads'),
		(SELECT count(*) FROM (SELECT range % 7 AS g FROM range(100000) GROUP BY g))`).Scan(&threads, &external, &groups)
	if err != nil {
		t.Fatal(err)
	}
	if threads != 3 || external != 3 || groups != 7 {
		t.Errorf("threads %d, external_threads %d, groups %d; want 3, 3, 7", threads, external, groups)
	}
}

// TestOpenCheckpointBytes: CheckpointBytes reaches DuckDB, so a commit of
// more log than it checkpoints the file (the log is then empty), where
// DuckDB's default 16 MiB leaves the same commit in the log.
func TestOpenCheckpointBytes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, c := range []struct {
		bytes      int64
		checkpoint bool
	}{{0, false}, {256 << 10, true}} {
		path := filepath.Join(t.TempDir(), "w.duckdb")
		w, err := Open(ctx, path, Options{Threads: 1, CheckpointBytes: c.bytes})
		if err != nil {
			t.Fatal(err)
		}
		// About 0.8 MiB of log (random doubles do not compress), in fewer
		// rows than a row group: DuckDB writes whole row groups straight
		// to the file, logging only where they are.
		if _, err := w.DB.ExecContext(ctx, `CREATE TABLE t AS SELECT random() AS x FROM range(100000)`); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(path + ".wal")
		logged := err == nil && fi.Size() > 0
		if logged == c.checkpoint {
			t.Errorf("CheckpointBytes %d: log left after the commit: %v (%v), want %v", c.bytes, logged, err, !c.checkpoint)
		}
		// Closing checkpoints either way: nothing is lost.
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
