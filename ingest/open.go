package ingest

import (
	"fmt"
	"io"
	"os"

	"github.com/klauspost/compress/gzip"
	"github.com/tracehouse/tracehouse/parseerr"
	"github.com/zeebo/xxh3"
)

// openTrace opens a file, decompressing gzip (detected by its magic bytes,
// not its name).
func openTrace(path string, p Progress) (io.ReadCloser, bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false, err
	}
	var src io.Reader = f
	if p != nil {
		src = &progressReader{r: f, p: p}
	}
	var magic [2]byte
	n, _ := io.ReadFull(f, magic[:])
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		f.Close()
		return nil, false, err
	}
	if n == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := newGzipReader(src)
		if err != nil {
			f.Close()
			return nil, true, err
		}
		return readCloser{zr, f}, true, nil
	}
	return readCloser{src, f}, false, nil
}

// readCloser reads through r and closes the file underneath.
type readCloser struct {
	io.Reader
	c io.Closer
}

func (r readCloser) Close() error { return r.c.Close() }

func newGzipReader(r io.Reader) (io.ReadCloser, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		// The caller names the file.
		return nil, parseerr.AtOffset("", -1, 0, "", parseerr.Errorf(ErrGzip, "bad gzip header: %v", err))
	}
	return zr, nil
}

// progressReader reports bytes read from disk to a progress bar.
type progressReader struct {
	r io.Reader
	p Progress
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	if n > 0 {
		p.p.Add(int64(n))
	}
	return n, err
}

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
