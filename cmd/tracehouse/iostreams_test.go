package main

import "bytes"

// testIO returns streams backed by buffers.
func testIO(stdin string) (*IOStreams, *bytes.Buffer, *bytes.Buffer) {
	out, errOut := &bytes.Buffer{}, &bytes.Buffer{}
	return &IOStreams{In: bytes.NewBufferString(stdin), Out: out, ErrOut: errOut}, out, errOut
}
