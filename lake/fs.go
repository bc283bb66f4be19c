package lake

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/tracehouse/tracehouse/tempfiles"
)

// Files appear in a lake only whole: they are written under
// _tracehouse/tmp/ (on the same file system) and then moved into place,
// by rename(2) where replacing an equal copy is harmless, or by link(2)
// where the first writer must win (a claim, a run's row), since link fails
// with EEXIST instead of replacing.

// Files and directories are made with every permission the umask leaves
// (0666, 0777), as other tools make them: a lake shared by a group is
// written with umask 002 and every member then reads and writes it.
// os.CreateTemp and os.MkdirTemp would make them 0600 and 0700 whatever
// the umask.
const (
	filePerm = 0o666
	dirPerm  = 0o777
)

// createTemp creates a new file in dir, named prefix and a random suffix.
func createTemp(dir, prefix string) (*os.File, error) {
	for i := 0; ; i++ {
		name := filepath.Join(dir, prefix+strconv.FormatUint(rand.Uint64(), 36))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, filePerm)
		if errors.Is(err, fs.ErrExist) && i < 100 {
			continue
		}
		return f, err
	}
}

// mkdirTemp creates a new directory in dir, named prefix and a random
// suffix.
func mkdirTemp(dir, prefix string) (string, error) {
	for i := 0; ; i++ {
		name := filepath.Join(dir, prefix+strconv.FormatUint(rand.Uint64(), 36))
		err := os.Mkdir(name, dirPerm)
		if errors.Is(err, fs.ErrExist) && i < 100 {
			continue
		}
		return name, err
	}
}

// tmpPattern names the writers' temporary directories: w<pid>.<host>-...
// (the host, since writers on many machines share the lake).
var tmpPattern = tempfiles.Pattern{Prefix: "w", Host: true}

// tmpDir makes a fresh directory under DIR/_tracehouse/tmp for one writer,
// removing what killed writers left: directories of processes of this host
// that are gone, and any not changed for a day (tempfiles.StaleAfter; a
// live writer changes its directory with every batch, far more often).
func tmpDir(dir string) (string, error) {
	base := filepath.Join(dir, metaDir, "tmp")
	if err := os.MkdirAll(base, dirPerm); err != nil {
		return "", err
	}
	tempfiles.Sweep(base, tmpPattern)
	return mkdirTemp(base, tmpPattern.Name())
}

// writeTemp writes data to a new file in tmp. It is not synced: a killed
// process loses nothing written; a crash of the machine may leave an empty
// claim, which readSettled reports.
func writeTemp(tmp string, data []byte) (string, error) {
	f, err := createTemp(tmp, "f-")
	if err != nil {
		return "", err
	}
	name := f.Name()
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(name)
		return "", err
	}
	return name, nil
}

// createOnce makes path hold data unless path exists: created says which.
// The file appears whole (link of a synced temporary file).
func createOnce(tmp, path string, data []byte) (created bool, err error) {
	if err := os.MkdirAll(filepath.Dir(path), dirPerm); err != nil {
		return false, err
	}
	name, err := writeTemp(tmp, data)
	if err != nil {
		return false, err
	}
	defer os.Remove(name)
	return linkOnce(name, path)
}

// linkOnce links from to path unless path exists.
func linkOnce(from, path string) (created bool, err error) {
	err = os.Link(from, path)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrExist):
		return false, nil
	default:
		return false, fmt.Errorf("lake: %w (the lake's file system must support hard links)", err)
	}
}

// moveInto renames from to path, replacing an older copy.
func moveInto(from, path string) error {
	if err := os.MkdirAll(filepath.Dir(path), dirPerm); err != nil {
		return err
	}
	return os.Rename(from, path)
}

// readSettled reads a file another writer may have just created. Files are
// created whole, so an empty one only appears on file systems that lose
// data on a crash; it is retried briefly, then reported.
func readSettled(path string) ([]byte, error) {
	for i := 0; ; i++ {
		b, err := os.ReadFile(path)
		if err != nil || len(b) > 0 || i == 20 {
			if err == nil && len(b) == 0 {
				err = fmt.Errorf("lake: %s is empty (remove it and write again)", path)
			}
			return b, err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// exists says whether path exists.
func exists(path string) (bool, error) {
	_, err := os.Stat(path)
	if err == nil {
		return true, nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return false, err
}

// partValue escapes a Hive partition value for a directory name: URL
// escaping of everything but letters, digits and -_.~ (DuckDB decodes it
// back when it reads the partition, Spark and Trino unescape %XX too).
func partValue(v string) string {
	if v == "" {
		return "__HIVE_DEFAULT_PARTITION__"
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-_.~", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

// fileName is the name of a trace's files: its content hash without the
// algorithm prefix ("xxh3-128:"), since ':' has no place in a Hadoop path.
func fileName(hash string) string {
	_, hex, ok := strings.Cut(hash, ":")
	if !ok {
		hex = hash
	}
	return partValue(hex) + ".parquet"
}

// tracePath is the trace row file of a content hash: the trace's commit.
func tracePath(dir, hash string) string {
	return filepath.Join(dir, "traces", fileName(hash))
}
