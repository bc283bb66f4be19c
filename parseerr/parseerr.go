// Package parseerr is the positioned error of tracehouse's readers (trace
// files in ingest, catalog files in catalog): which input, where in it,
// which record and field, and a sentinel cause that errors.Is matches. It is
// modelled on encoding/csv's ParseError: one line of text, no stack.
package parseerr

import (
	"fmt"
	"strconv"
	"strings"
)

// Error is one problem at a position in an input. Make it with AtLine (a
// line-oriented document) or AtOffset (a byte stream), which mark the
// position kind not used as unknown.
type Error struct {
	File   string // the input as the caller named it; "" when it has no name
	Line   int    // 1-based line in a document; 0 when unknown
	Offset int64  // byte offset in a stream (after decompression); -1 when unknown
	Event  int64  // index of the stream's record (a trace event); -1 outside records
	Entry  string // the document entry at fault, e.g. "fusions[3] (sglang-x)"; "" for none
	Field  string // the field at fault; "" for a whole record, entry or input
	Err    error  // the cause: a sentinel, usually with detail (see Errorf)
}

// AtLine is a problem in a line-oriented document such as a YAML file:
// line 0 when it is not known, entry and field "" when they do not apply.
func AtLine(file string, line int, entry, field string, err error) *Error {
	return &Error{File: file, Line: line, Offset: -1, Event: -1, Entry: entry, Field: field, Err: err}
}

// AtOffset is a problem in a byte stream such as a JSON trace: event is the
// record's index (-1 outside records), offset its start (or where reading
// stopped), field "" for the record as a whole.
func AtOffset(file string, event, offset int64, field string, err error) *Error {
	return &Error{File: file, Line: 0, Offset: offset, Event: event, Field: field, Err: err}
}

// Error renders the problem on one line, leaving out what is unknown:
//
//	catalog.yaml:12: fusions[0] (x): max_gap_us: want a number, got "abc"
//	trace.json: field "dur": want a number, got a string, at event 7 (byte 1234)
//
// A stream's fields are keys of its records, taken from the input, so they
// are quoted; a document's are paths the reader built (chain[1][0]) and are
// not. Line breaks and tabs, which damaged input may carry into any part,
// are escaped.
func (e *Error) Error() string {
	var b strings.Builder
	switch {
	case e.File != "" && e.Line > 0:
		b.WriteString(e.File + ":" + strconv.Itoa(e.Line) + ": ")
	case e.File != "":
		b.WriteString(e.File + ": ")
	case e.Line > 0:
		b.WriteString("line " + strconv.Itoa(e.Line) + ": ")
	}
	if e.Entry != "" {
		b.WriteString(e.Entry + ": ")
	}
	if e.Field != "" {
		if e.Offset >= 0 {
			b.WriteString("field " + strconv.Quote(e.Field) + ": ")
		} else {
			b.WriteString(e.Field + ": ")
		}
	}
	b.WriteString(e.Err.Error())
	switch {
	case e.Event >= 0:
		fmt.Fprintf(&b, ", at event %d (byte %d)", e.Event, e.Offset)
	case e.Offset >= 0:
		fmt.Fprintf(&b, ", at byte %d", e.Offset)
	}
	return oneLine.Replace(b.String())
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

var oneLine = strings.NewReplacer("\r\n", `\n`, "\n", `\n`, "\r", `\r`, "\t", `\t`)

// Errorf is cause described for this one instance: its text is the
// formatted words alone (the sentinel's own text is not repeated in every
// message), and errors.Is still finds cause.
func Errorf(cause error, format string, args ...any) error {
	return &detail{cause: cause, text: fmt.Sprintf(format, args...)}
}

type detail struct {
	cause error
	text  string
}

func (d *detail) Error() string { return d.text }
func (d *detail) Unwrap() error { return d.cause }
