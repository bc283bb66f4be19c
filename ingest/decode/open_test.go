package decode

import (
	"bytes"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/klauspost/compress/gzip"
)

// gzipMember compresses b as one gzip member.
func gzipMember(t *testing.T, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// TestOpenGzipReadsWholeStreams reads, through Open, a gzip file of two
// members (as `cat a.gz b.gz` makes) whose compressed bytes span several of
// Open's reads from disk: the bytes come back as they were written, and
// the same file cut short fails at the read rather than ending early.
func TestOpenGzipReadsWholeStreams(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(38, 270))
	// random letters compress to about 5 bits each: each member is larger
	// compressed than one read from disk
	parts := make([][]byte, 2)
	for i := range parts {
		parts[i] = make([]byte, 3*gzipReadBytes/2)
		for j := range parts[i] {
			parts[i][j] = 'a' + byte(r.IntN(26))
		}
	}
	file := append(gzipMember(t, parts[0]), gzipMember(t, parts[1])...)
	if len(file) < 2*gzipReadBytes {
		t.Fatalf("test file is %d bytes compressed, want more than %d", len(file), 2*gzipReadBytes)
	}
	dir := t.TempDir()
	whole := filepath.Join(dir, "whole.json.gz")
	cut := filepath.Join(dir, "cut.json.gz")
	if err := os.WriteFile(whole, file, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cut, file[:len(file)-len(file)/3], 0o644); err != nil {
		t.Fatal(err)
	}

	rc, gz, err := Open(whole, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(rc)
	rc.Close()
	if err != nil {
		t.Fatalf("read %s: %v", whole, err)
	}
	if !gz {
		t.Error("gzip file not reported as compressed")
	}
	if want := append(append([]byte{}, parts[0]...), parts[1]...); !bytes.Equal(got, want) {
		t.Errorf("read %d bytes, want the %d written (equal: %v)", len(got), len(want), bytes.Equal(got, want))
	}

	rc, _, err = Open(cut, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	if _, err := io.ReadAll(rc); err == nil {
		t.Error("a gzip file cut short read without error")
	}
}
