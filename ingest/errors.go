package ingest

import (
	"errors"
	"fmt"

	"github.com/tracehouse/tracehouse/parseerr"
)

// Causes of a damaged trace, matchable with errors.Is.
var (
	ErrTruncated = errors.New("unexpected end of data")
	ErrSyntax    = errors.New("invalid JSON")
	ErrType      = errors.New("wrong type")
	ErrMissing   = errors.New("missing field")
	ErrRange     = errors.New("value out of range")
	ErrDuplicate = errors.New("duplicate key")
	ErrTooLarge  = errors.New("too large")
	ErrLayout    = errors.New("not a Chrome trace")
	ErrGzip      = errors.New("bad gzip data")
)

// ParseError is a damaged-trace error with its position (see
// parseerr.Error): the file, the event's index (-1 outside traceEvents) and
// byte offset in the decompressed stream, the JSON field, and one of the Err*
// causes above in Err.
type ParseError = parseerr.Error

// safely turns a panic in f into an error naming the file, so one bad file
// can never take the whole ingest down with a Go stack trace.
func safely(path string, f func() error) func() error {
	return func() (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("%s: internal error (please report it with the file): %v", path, r)
			}
		}()
		return f()
	}
}

// dbError marks a failure of the warehouse rather than of one file.
type dbError struct{ err error }

func (e *dbError) Error() string { return e.err.Error() }
func (e *dbError) Unwrap() error { return e.err }
