package ingest

import (
	"context"
	"fmt"
	"io"

	"github.com/zeebo/xxh3"

	"github.com/tracehouse/tracehouse/ingest/decode"
)

// hashFile is the idempotency key: the same bytes under any path are one
// trace. Only a regular file is read, and the read stops when ctx is done.
func hashFile(ctx context.Context, path string) (string, error) {
	f, err := decode.OpenRegular(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := xxh3.New()
	if _, err := io.Copy(h, decode.ContextReader{Ctx: ctx, R: f}); err != nil {
		return "", err
	}
	sum := h.Sum128().Bytes()
	return fmt.Sprintf("xxh3-128:%x", sum[:]), nil
}
