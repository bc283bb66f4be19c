// Package shellwords splits one line into words the way a POSIX shell
// would for plain words and quotes (no variables, globs or operators):
// report --history takes the flags of 'tracehouse history' as one value.
package shellwords

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
)

// Split splits s into words at unquoted blanks: '...' keeps its
// text as is, "..." and a bare \ let \ escape the next character.
func Split(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	var quote rune
	escaped := false
	for _, r := range s {
		switch {
		case escaped:
			cur.WriteRune(r)
			escaped = false
		case quote == '\'':
			if r == '\'' {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\\':
			escaped, inWord = true, true
		case quote == '"':
			if r == '"' {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case unicode.IsSpace(r):
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	switch {
	case escaped:
		return nil, errors.New("a \\ ends it")
	case quote != 0:
		return nil, fmt.Errorf("unterminated %c quote", quote)
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}
