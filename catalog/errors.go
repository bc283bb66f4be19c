package catalog

import (
	"errors"
	"strconv"
	"strings"
)

// ErrInvalid matches (with errors.Is) every error Parse and Validate report
// about a catalog's content, so a caller can tell a bad file from an I/O or
// database failure without parsing messages.
var ErrInvalid = errors.New("invalid catalog")

// The kinds of problem a *ParseError can carry in Err. Each also matches
// ErrInvalid through the ParseError that wraps it.
var (
	ErrSyntax       = errors.New("YAML syntax error")
	ErrUnknownField = errors.New("unknown field")
	ErrType         = errors.New("wrong type")
	ErrMissing      = errors.New("missing required field")
	ErrDuplicate    = errors.New("duplicate id")
	ErrValue        = errors.New("invalid value")
	ErrReference    = errors.New("unknown reference")
)

// ParseError is one problem in a catalog file, with its position. It is
// modelled on encoding/csv's ParseError: one line of text, and a sentinel
// cause in Err for errors.Is.
type ParseError struct {
	File  string // as given to Parse; "" when the catalog was built in code
	Line  int    // 1-based; 0 when unknown
	Entry string // "fusions[3] (sglang-x)"; "" for top-level fields
	Field string // "max_gap_us", "chain[1][0]"; "" for the entry as a whole
	Err   error  // one of the Err* kinds above, usually with detail
}

// Error renders "file:line: entry: field: message", leaving out the parts
// that are unknown.
func (e *ParseError) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			b.WriteString(":")
			b.WriteString(strconv.Itoa(e.Line))
		}
		b.WriteString(": ")
	} else if e.Line > 0 {
		b.WriteString("line ")
		b.WriteString(strconv.Itoa(e.Line))
		b.WriteString(": ")
	}
	if e.Entry != "" {
		b.WriteString(e.Entry)
		b.WriteString(": ")
	}
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Err.Error())
	// Keys and ids come from the file and may hold line breaks; escaping them
	// keeps the one-line-per-problem promise.
	return oneLine.Replace(b.String())
}

var oneLine = strings.NewReplacer("\r\n", `\n`, "\n", `\n`, "\r", `\r`)

// Unwrap returns the kind of problem.
func (e *ParseError) Unwrap() error { return e.Err }

// Is makes every ParseError match ErrInvalid.
func (e *ParseError) Is(target error) bool { return target == ErrInvalid }

// detail is a kind of problem plus the words that describe this instance; the
// message is the words alone so the kind is not repeated in every line.
type detail struct {
	kind error
	msg  string
}

func (d *detail) Error() string { return d.msg }
func (d *detail) Unwrap() error { return d.kind }

func problem(kind error, msg string) error { return &detail{kind: kind, msg: msg} }

// errorList collects problems in file order.
type errorList []*ParseError

func (l *errorList) add(e *ParseError) { *l = append(*l, e) }

// err returns nil, the single error, or all of them joined one per line. A
// lone error is returned as is so callers can type-assert it.
func (l errorList) err() error {
	switch len(l) {
	case 0:
		return nil
	case 1:
		return l[0]
	}
	errs := make([]error, len(l))
	for i, e := range l {
		errs[i] = e
	}
	return errors.Join(errs...)
}
