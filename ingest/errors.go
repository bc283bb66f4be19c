package ingest

import (
	"strings"

	"github.com/tracehouse/tracehouse/ingest/decode"
	"github.com/tracehouse/tracehouse/parseerr"
)

// Causes of a damaged trace, matchable with errors.Is (decode's: the
// splitter and the decoders report the same ones).
var (
	ErrTruncated = decode.ErrTruncated
	ErrSyntax    = decode.ErrSyntax
	ErrType      = decode.ErrType
	ErrMissing   = decode.ErrMissing
	ErrRange     = decode.ErrRange
	ErrDuplicate = decode.ErrDuplicate
	ErrTooLarge  = decode.ErrTooLarge
	ErrLayout    = decode.ErrLayout
	ErrGzip      = decode.ErrGzip
)

// ParseError is a damaged-trace error with its position (see
// parseerr.Error): the file, the event's index (-1 outside traceEvents) and
// byte offset in the decompressed stream, the JSON field, and one of the Err*
// causes above in Err.
type ParseError = parseerr.Error

// dbError marks a failure of the warehouse rather than of one file.
type dbError struct{ err error }

func (e *dbError) Error() string { return e.err.Error() }
func (e *dbError) Unwrap() error { return e.err }

// DuckDB's words for the two sides of a fatal error (a checkpoint that
// could not write, say on a full disk): the statement that met it says
// what failed, every statement after it on any connection gets
// invalidatedText with the first failure quoted; and a COMMIT whose
// automatic checkpoint failed says durableText, its rows stored. The
// driver gives both one error type, so the text tells them apart.
const (
	invalidatedText = "database has been invalidated"
	durableText     = "COMMIT succeeded and is durable"
)

// storedThenFailed is a trace whose COMMIT DuckDB made durable before its
// checkpoint failed: the trace is stored, the warehouse is not usable.
type storedThenFailed struct {
	id  int64
	err error
}

func (e *storedThenFailed) Error() string { return e.err.Error() }
func (e *storedThenFailed) Unwrap() error { return e.err }

// commitUnknown is a trace whose COMMIT failed in a warehouse that could
// not then say whether it holds the trace (invalidated by a fatal error):
// a COMMIT interrupted when another loader's checkpoint failed can have
// written its write-ahead log record, the trace stored, and fail all the
// same. The ingest asks the warehouse file once the failed instance is
// closed (settleUnknown).
type commitUnknown struct {
	id      int64
	err     error
	settled bool // the warehouse file was asked (settleUnknown)
}

func (e *commitUnknown) Error() string { return e.err.Error() }
func (e *commitUnknown) Unwrap() error { return e.err }

// warehouseError is a warehouse failure told in one line (its cause and
// the count of files stored), wrapping the failure itself.
type warehouseError struct {
	msg string
	err error
}

func (e *warehouseError) Error() string { return e.msg }
func (e *warehouseError) Unwrap() error { return e.err }

// causeLine is the line of err (errors.Join puts one error a line) that
// says what failed: the first that is not part of DuckDB's reply to a
// statement after a fatal error. When every line is (each statement met
// only the reply), it is the first reply's context (which save, which
// file) with the failure the reply quotes: the statement that failed
// itself may have been a checkpoint no caller asked for.
func causeLine(err error) string {
	lines := strings.Split(err.Error(), "\n")
	if l, ok := firstCause(lines); ok {
		return l
	}
	for i, l := range lines {
		at := strings.Index(l, invalidatedText)
		if at < 0 || i+1 == len(lines) || !strings.HasPrefix(lines[i+1], originalText) {
			continue
		}
		head := strings.TrimSuffix(strings.TrimSuffix(l[:at], "Failed: "), "FATAL Error: ")
		return head + strings.TrimSuffix(strings.TrimPrefix(lines[i+1], originalText), `"`)
	}
	return lines[0]
}

// originalText begins the line that ends DuckDB's reply to a statement
// after a fatal error, quoting that error:
//
//	FATAL Error: Failed: database has been invalidated because of a previous fatal error. [...]
//	Original error: "Failed to create checkpoint because of error: [...] No space left on device"
const originalText = `Original error: "`

// firstCause is the first line of lines that is not part of a reply
// (invalidatedText, or the originalText line after it).
func firstCause(lines []string) (string, bool) {
	for i, l := range lines {
		switch {
		case strings.TrimSpace(l) == "", strings.Contains(l, invalidatedText):
		case i > 0 && strings.HasPrefix(l, originalText) && strings.Contains(lines[i-1], invalidatedText):
		default:
			return l, true
		}
	}
	return "", false
}

// isConsequence says whether every line of err is part of DuckDB's reply
// to a statement after a fatal error (rather than the fatal error itself).
func isConsequence(err error) bool {
	_, ok := firstCause(strings.Split(err.Error(), "\n"))
	return !ok
}
