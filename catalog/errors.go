package catalog

import (
	"errors"

	"github.com/tracehouse/tracehouse/parseerr"
)

// ErrInvalid matches (with errors.Is) every error Parse and Validate report
// about a catalog's content, so a caller can tell a bad file from an I/O or
// database failure without parsing messages.
var ErrInvalid = errors.New("invalid catalog")

// The kinds of problem a *ParseError can carry in Err. Each also matches
// ErrInvalid.
var (
	ErrSyntax       error = &invalid{"YAML syntax error"}
	ErrUnknownField error = &invalid{"unknown field"}
	ErrType         error = &invalid{"wrong type"}
	ErrMissing      error = &invalid{"missing required field"}
	ErrDuplicate    error = &invalid{"duplicate id"}
	ErrValue        error = &invalid{"invalid value"}
	ErrReference    error = &invalid{"unknown reference"}
)

// invalid is a kind of problem in a catalog's content.
type invalid struct{ text string }

func (k *invalid) Error() string { return k.text }

// Is makes every kind, and so every ParseError carrying one, match
// ErrInvalid.
func (k *invalid) Is(target error) bool { return target == ErrInvalid }

// ParseError is one problem in a catalog file, with its position (see
// parseerr.Error): the file ("" when the catalog was built in code), the
// 1-based line (0 when unknown), the entry ("fusions[3] (sglang-x)"; "" for
// top-level fields), the field ("max_gap_us", "chain[1][0]"; "" for the
// entry as a whole), and one of the Err* kinds above in Err, usually with
// detail.
type ParseError = parseerr.Error

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
