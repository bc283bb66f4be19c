package catalog

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// Hash identifies a catalog's content: the sha256 of its canonical JSON form
// (defaults applied, no comments or formatting), so reformatting a file does
// not reinstall it but any change to an entry does.
func (c *Catalog) Hash() string {
	b, err := json.Marshal(c)
	if err != nil {
		// Only strings, numbers and bools of finite value: cannot fail for a
		// catalog that passed Validate.
		panic(fmt.Sprintf("catalog hash: %v", err))
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
