package parseerr

import (
	"errors"
	"io"
	"testing"
)

var errBad = errors.New("bad")

func TestError(t *testing.T) {
	cases := []struct {
		err  *Error
		want string
	}{
		{AtLine("c.yaml", 12, "fusions[0] (x)", "max_gap_us", Errorf(errBad, "want a number, got %q", "abc")),
			`c.yaml:12: fusions[0] (x): max_gap_us: want a number, got "abc"`},
		{AtLine("c.yaml", 0, "", "version", Errorf(errBad, "unsupported")), `c.yaml: version: unsupported`},
		{AtLine("", 3, "", "", Errorf(errBad, "syntax")), `line 3: syntax`},
		{AtLine("", 0, "fusions[0] (x)", "min_share", Errorf(errBad, "too big")), `fusions[0] (x): min_share: too big`},
		{AtOffset("t.json", 7, 1234, "dur", Errorf(errBad, "want a number")),
			`t.json: field "dur": want a number, at event 7 (byte 1234)`},
		{AtOffset("t.json", -1, 0, "", Errorf(errBad, "bad gzip header")), `t.json: bad gzip header, at byte 0`},
		{AtOffset("t.json", 2, 9, "args.a\nb", Errorf(errBad, "key\tappears\r\ntwice")),
			`t.json: field "args.a\nb": key\tappears\ntwice, at event 2 (byte 9)`},
		{AtLine("c.yaml", 4, "fusions[1] (a\nb)", "", errBad), `c.yaml:4: fusions[1] (a\nb): bad`},
	}
	for _, c := range cases {
		if got := c.err.Error(); got != c.want {
			t.Errorf("got  %s\nwant %s", got, c.want)
		}
		if !errors.Is(c.err, errBad) {
			t.Errorf("%s: errors.Is(errBad) = false", c.want)
		}
	}
}

func TestErrorfKeepsCause(t *testing.T) {
	err := Errorf(io.ErrUnexpectedEOF, "input ends at byte %d", 10)
	if err.Error() != "input ends at byte 10" || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("%v: cause lost or text changed", err)
	}
	var pe *Error
	if !errors.As(error(AtLine("f", 1, "", "", err)), &pe) || pe.Line != 1 {
		t.Errorf("errors.As failed")
	}
}
