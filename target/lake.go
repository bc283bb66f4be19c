package target

import "fmt"

// Access is what a command does with the runs it names. The --lake policy
// follows from it, here alone: every command that reads works over a lake
// as over a warehouse; a command that changes a warehouse's rows refuses a
// lake, whose traces never change (ingest --lake and export --lake write a
// lake through package lake, which is reading as far as this goes).
type Access int

const (
	Reads  Access = iota // reads stored runs (or writes a lake itself)
	Writes               // changes stored rows: tag, rm, rename, reclassify, capture
)

// LakeError is a command that changes stored rows given a lake.
type LakeError struct{ Command string }

func (e *LakeError) Error() string {
	return fmt.Sprintf("--lake: '%s' changes stored rows, and a lake's traces never change: use it on a warehouse file (--db)", e.Command)
}

// CheckLake says whether a command of this access may run on a lake.
func CheckLake(a Access, command string) error {
	if a == Writes {
		return &LakeError{Command: command}
	}
	return nil
}
