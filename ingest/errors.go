package ingest

import (
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
