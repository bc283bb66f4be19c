package ingest

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
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

// ParseError is a damaged-trace error with its position, modelled on
// encoding/csv's ParseError: which file, which event, where, which field.
type ParseError struct {
	File   string // path as given
	Event  int64  // index of the event in traceEvents, -1 outside events
	Offset int64  // byte offset in the decompressed stream
	Field  string // JSON field, "" when the whole event or file is at fault
	Err    error  // one of the Err* causes, possibly wrapped with detail
}

func (e *ParseError) Error() string {
	msg := e.File + ": "
	if e.Field != "" {
		msg += "field " + strconv.Quote(e.Field) + ": "
	}
	// The cause may quote damaged input; keep the message on one line.
	msg += oneLine.Replace(e.Err.Error())
	switch {
	case e.Event >= 0:
		msg += fmt.Sprintf(", at event %d (byte %d)", e.Event, e.Offset)
	case e.Offset >= 0:
		msg += fmt.Sprintf(", at byte %d", e.Offset)
	}
	return msg
}

func (e *ParseError) Unwrap() error { return e.Err }

var oneLine = strings.NewReplacer("\n", `\n`, "\r", `\r`, "\t", `\t`)

// detail wraps a cause with a human explanation while keeping errors.Is.
type detail struct {
	cause error
	text  string
}

func (d *detail) Error() string { return d.text }
func (d *detail) Unwrap() error { return d.cause }

func errorf(cause error, format string, args ...any) error {
	return &detail{cause: cause, text: fmt.Sprintf(format, args...)}
}

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
