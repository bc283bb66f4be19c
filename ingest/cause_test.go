package ingest

import (
	"errors"
	"fmt"
	"testing"
)

// TestCauseLineSkipsDuckDBsReply: DuckDB's reply to a statement after a
// fatal error is two lines, the second quoting the failure. Neither is the
// cause when another error holds it; when none does (every save met only
// the reply), the line is the first reply's context with the quoted
// failure, in one line (the "save the aggregates" message of
// TestDiskFullWhileSaving, seen under load as `Original error: "Failed to
// create checkpoint ...`).
func TestCauseLineSkipsDuckDBsReply(t *testing.T) {
	t.Parallel()
	const disk = `Failed to create checkpoint because of error: Could not write file "/d/w.duckdb": No space left on device`
	reply := fmt.Errorf("save the overlap of run r: %w", errors.New(
		"FATAL Error: Failed: database has been invalidated because of a previous fatal error. The database must be restarted prior to being used again.\n"+
			`Original error: "`+disk+`"`))
	cause := errors.New("save the steps of run r: IO Error: " + disk)
	for _, tc := range []struct {
		name        string
		err         error
		want        string
		consequence bool
	}{
		{"reply then cause", errors.Join(reply, cause), cause.Error(), false},
		{"cause then reply", errors.Join(cause, reply), cause.Error(), false},
		{"reply alone", reply, "save the overlap of run r: " + disk, true},
		{"two replies", errors.Join(reply, fmt.Errorf("save the fuse patterns of run r: %w", errors.Unwrap(reply))), "save the overlap of run r: " + disk, true},
		{"plain", errors.New("save x: out of memory"), "save x: out of memory", false},
	} {
		if got := causeLine(tc.err); got != tc.want {
			t.Errorf("%s: causeLine = %q, want %q", tc.name, got, tc.want)
		}
		if got := isConsequence(tc.err); got != tc.consequence {
			t.Errorf("%s: isConsequence = %v, want %v", tc.name, got, tc.consequence)
		}
	}
}
