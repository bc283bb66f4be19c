package ingest

import (
	"fmt"
	"io"
	"os"

	"github.com/zeebo/xxh3"
)

// hashFile is the idempotency key: the same bytes under any path are one trace.
func hashFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := xxh3.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	sum := h.Sum128().Bytes()
	return fmt.Sprintf("xxh3-128:%x", sum[:]), nil
}
