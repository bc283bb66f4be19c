package ingest

import (
	"errors"
	"testing"
)

// TestResultErr: nil unless a file failed; then each failed file's error,
// and a failure without one still named by its path.
func TestResultErr(t *testing.T) {
	t.Parallel()
	ok := &Result{Files: []FileResult{{Path: "a", Status: StatusIngested}, {Path: "b", Status: StatusAlready}, {Path: "c", Status: StatusSkipped}}}
	if err := ok.Err(); err != nil {
		t.Errorf("no failure: %v", err)
	}
	bad := errors.New("d: event 3: bad ts")
	r := &Result{Files: append(ok.Files, FileResult{Path: "d", Status: StatusFailed, Err: bad}, FileResult{Path: "e", Status: StatusFailed})}
	err := r.Err()
	if !errors.Is(err, bad) || err.Error() != "d: event 3: bad ts\ne: failed" {
		t.Errorf("two failures: %v", err)
	}
}
