package main

import (
	"io"
	"os"

	"golang.org/x/term"
)

// IOStreams are the terminal streams, behind a struct so tests use buffers
// and say whether they are a terminal.
type IOStreams struct {
	In       io.Reader
	Out      io.Writer
	ErrOut   io.Writer
	OutTTY   bool
	ErrTTY   bool
	InTTY    bool
	TermCols int
}

func systemIO() *IOStreams {
	io := &IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr,
		OutTTY: term.IsTerminal(int(os.Stdout.Fd())),
		ErrTTY: term.IsTerminal(int(os.Stderr.Fd())),
		InTTY:  term.IsTerminal(int(os.Stdin.Fd())),
	}
	if w, _, err := term.GetSize(int(os.Stdout.Fd())); err == nil {
		io.TermCols = w
	}
	return io
}
