package ingest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadServerArgsBounded: a server_args.json beyond 1 MiB is refused
// (the run keeps no server args, with a notice) rather than stored whole
// in runs.server_args; one at the limit is read.
func TestReadServerArgsBounded(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name string, size int) string {
		head, tail := `{"model_path": "m", "pad": "`, `"}`
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(head+strings.Repeat("x", size-len(head)-len(tail))+tail), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if sa, err := readServerArgs(write("ok.json", maxServerArgs)); err != nil || sa.model != "m" || len(sa.raw) != maxServerArgs {
		t.Errorf("at the limit: %v", err)
	}
	if _, err := readServerArgs(write("big.json", maxServerArgs+1)); err == nil || err.Error() != "larger than 1 MiB, not a server's arguments" {
		t.Errorf("beyond the limit: %v", err)
	}
}
