package catalog

import (
	"errors"
	"strings"
	"testing"
)

// FuzzParse checks the loader's promises on arbitrary input: it never
// panics, every failure is an ErrInvalid made of one-line *ParseErrors, and
// every success is a catalog that validates again and can be hashed.
func FuzzParse(f *testing.F) {
	f.Add([]byte(base))
	f.Add(Embedded())
	f.Add([]byte("version: 1\n"))
	f.Add([]byte("version: 1\nfusions:\n  - {id: a, chain: [[x], []]}\n"))
	f.Add([]byte("a: &x [*x]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data, "f.yaml")
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error does not match ErrInvalid: %v", err)
			}
			for _, line := range strings.Split(err.Error(), "\n") {
				if !strings.HasPrefix(line, "f.yaml") {
					t.Fatalf("error line without file position: %q", line)
				}
			}
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("no *ParseError in %v", err)
			}
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("parsed catalog fails Validate: %v", err)
		}
		_ = c.Hash()
	})
}
