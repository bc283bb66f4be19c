package lake

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tracehouse/tracehouse/catalog"
	"github.com/tracehouse/tracehouse/ingest"
	"github.com/tracehouse/tracehouse/schema"
)

// cancelWhenRead cancels the ingest once every byte was read.
type cancelWhenRead struct {
	mu          sync.Mutex
	total, seen int64
	cancel      context.CancelFunc
}

func (p *cancelWhenRead) Start(total int64) { p.total = total }
func (p *cancelWhenRead) Add(n int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.seen += n; p.seen >= p.total {
		p.cancel()
	}
}

// TestInterruptedLakeIngestCounts: an ingest --lake interrupted before its
// write says how many files the lake holds (none here; ingest's own count
// is of its throw-away warehouse), and the lake holds exactly that.
func TestInterruptedLakeIngestCounts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, _, err := Ingest(ctx, dir, []string{demo + "/sglang-llama"}, ingest.Options{Jobs: 1, Progress: &cancelWhenRead{cancel: cancel}},
		catalog.Default(), schema.Options{Threads: 1})
	want := "interrupted: 0 of 4 file(s) in the lake, nothing partial; run the same command again to finish"
	if err == nil || !strings.HasPrefix(err.Error(), want) || !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v\nwant %s", err, want)
	}
	traces, _ := filepath.Glob(filepath.Join(dir, "traces", "*.parquet"))
	for _, f := range traces {
		if filepath.Base(f) != schemaFile {
			t.Errorf("committed: %s", f)
		}
	}
}
