package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/tracehouse/tracehouse/ingest"
)

// Exit codes, mapped from errors in one place.
const (
	exitOK         = 0
	exitError      = 1
	exitUsage      = 2
	exitRegression = 3
	// exitInterrupted is 128 + SIGINT, as a shell reports a command it
	// interrupted.
	exitInterrupted = 130
)

// usageError is a mistake in the command line.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error {
	return &usageError{fmt.Errorf(format, args...)}
}

// silentError carries an exit code for a failure already reported (for
// example, per-file ingest errors printed as they happened).
type silentError struct{ code int }

func (e *silentError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

func exitCode(err error) int {
	if err == nil {
		return exitOK
	}
	var s *silentError
	if errors.As(err, &s) {
		return s.code
	}
	var u *usageError
	var taken *ingest.RunExistsError
	if errors.As(err, &u) || errors.As(err, &taken) {
		return exitUsage
	}
	return exitError
}

// oneLine keeps an error to one line: users read it in a terminal or a CI log.
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ")), " ")
}
