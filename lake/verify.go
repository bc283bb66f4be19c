package lake

import (
	"cmp"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/zeebo/xxh3"
)

// Checksums.
//
// A lake's files are written once and never change, so each one's size and
// xxh3-128 are recorded when it lands, and every reader checks the files
// it is about to read against them: a flipped byte, a truncated or deleted
// file is found and named before DuckDB reads it (a damaged Parquet file
// otherwise fails every query with a TProtocolException naming nothing,
// and a deleted one silently drops rows). The records:
//
//	_tracehouse/sums/<trace file name>   the trace's files, written before its commit
//	_tracehouse/sums/run-<run_id>        the run's row file, by the writer that made it
//
// Each is a text file: a header line, "run <run_id> <label>", then one
// line "<size> <xxh3-128 hex> <path below the lake>" per file. Traces
// written before these records existed have none and are read unchecked.
// A run with a damaged file is left out of what a reader shows, with a
// warning naming the file; writing its traces again repairs it.

const (
	sumsDir    = "sums"
	sumsHeader = "tracehouse lake checksums 1"
)

// fileSum is one file's record.
type fileSum struct {
	path string // below the lake, '/'-separated
	size int64
	sum  string
}

// sums is one record file.
type sums struct {
	runID int64
	run   string
	files []fileSum
}

func (s *sums) encode() []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\nrun %d %s\n", sumsHeader, s.runID, partValue(s.run))
	for _, f := range s.files {
		fmt.Fprintf(&b, "%d %s %s\n", f.size, f.sum, f.path)
	}
	return []byte(b.String())
}

func parseSums(path string, b []byte) (*sums, error) {
	bad := fmt.Errorf("lake: %s is damaged (remove it and write its traces again)", path)
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) < 2 || lines[0] != sumsHeader {
		return nil, bad
	}
	f := strings.Fields(lines[1])
	if len(f) != 3 || f[0] != "run" {
		return nil, bad
	}
	s := &sums{}
	var err error
	if s.runID, err = strconv.ParseInt(f[1], 10, 64); err != nil {
		return nil, bad
	}
	s.run = f[2]
	for _, l := range lines[2:] {
		f := strings.SplitN(l, " ", 3)
		if len(f) != 3 {
			return nil, bad
		}
		size, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || size < 0 {
			return nil, bad
		}
		s.files = append(s.files, fileSum{path: f[2], size: size, sum: f[1]})
	}
	return s, nil
}

// hashFile is a file's size and xxh3-128.
func hashFile(path string) (int64, string, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, "", err
	}
	defer f.Close()
	h := xxh3.New()
	// A buffer no larger than the file: most of a lake's files are a few
	// KiB, and a fresh 256 KiB buffer for each (zeroed, then faulted in)
	// cost more than hashing them (perf of an opening of the demo lake).
	size := int64(256 << 10)
	if st, err := f.Stat(); err == nil && st.Size() < size {
		size = st.Size() + 1 // +1: the read that meets the end
	}
	buf := make([]byte, size)
	var n int64
	for {
		// Read by hand: io.Copy would go through os.File.WriteTo, several
		// times slower here.
		k, err := f.Read(buf)
		h.Write(buf[:k])
		n += int64(k)
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, "", err
		}
	}
	sum := h.Sum128().Bytes()
	return n, hex.EncodeToString(sum[:]), nil
}

// sumOf records the file at path, to be found at rel below the lake.
func sumOf(path, rel string) (fileSum, error) {
	n, s, err := hashFile(path)
	if err != nil {
		return fileSum{}, fmt.Errorf("lake: checksum of %s: %w", path, err)
	}
	return fileSum{path: filepath.ToSlash(rel), size: n, sum: s}, nil
}

// check compares the file at path with its record: "" when it matches,
// else what is wrong.
func (f fileSum) check(path string) (string, error) {
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "missing", nil
	}
	if err != nil {
		return "", err
	}
	if st.Size() != f.size {
		return fmt.Sprintf("%d bytes, %d when written", st.Size(), f.size), nil
	}
	_, s, err := hashFile(path)
	if err != nil {
		return "", err
	}
	if s != f.sum {
		return "its checksum differs from the one recorded when it was written", nil
	}
	return "", nil
}

func traceSumsPath(dir, hash string) string {
	return filepath.Join(dir, metaDir, sumsDir, strings.TrimSuffix(fileName(hash), ".parquet"))
}

func runSumsPath(dir string, runID int64) string {
	return filepath.Join(dir, metaDir, sumsDir, "run-"+itoa(runID))
}

// readSums reads a record; nil when there is none.
func readSums(path string) (*sums, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return parseSums(path, b)
}

// Damage is a file of a lake that does not match its record.
type Damage struct {
	File  string // below the lake
	What  string // missing, the sizes, or a checksum that differs
	Run   string // the run it belongs to
	RunID int64
}

func (d Damage) String() string {
	return fmt.Sprintf("%s is damaged (%s)", d.File, d.What)
}

// DamagedError is a lake whose files do not all match their records, for
// a reader that takes no warnings.
type DamagedError struct {
	Dir    string
	Damage []Damage
}

func (e *DamagedError) Error() string {
	d := e.Damage[0]
	msg := fmt.Sprintf("lake %s: %s, of run %s", e.Dir, d, d.Run)
	if len(e.Damage) > 1 {
		msg += fmt.Sprintf(" (and %d more damaged file(s))", len(e.Damage)-1)
	}
	return msg
}

// traceDamage checks a committed trace's files, and its run's row file,
// against their records: the damaged ones (none when the trace has no
// record: a lake written before records existed).
func traceDamage(dir, hash string) ([]Damage, error) {
	s, err := readSums(traceSumsPath(dir, hash))
	if err != nil || s == nil {
		return nil, err
	}
	var out []Damage
	check := func(s *sums) error {
		for _, f := range s.files {
			what, err := f.check(filepath.Join(dir, filepath.FromSlash(f.path)))
			if err != nil {
				return err
			}
			if what != "" {
				out = append(out, Damage{File: f.path, What: what, Run: s.run, RunID: s.runID})
			}
		}
		return nil
	}
	if err := check(s); err != nil {
		return nil, err
	}
	rs, err := readSums(runSumsPath(dir, s.runID))
	if err == nil && rs != nil {
		err = check(rs)
	}
	return out, err
}

// committedWhole says whether a trace is in the lake and its files match
// their records (a damaged trace is written again).
func committedWhole(dir, hash string) (bool, []Damage, error) {
	there, err := exists(tracePath(dir, hash))
	if err != nil || !there {
		return false, nil, err
	}
	d, err := traceDamage(dir, hash)
	if err != nil {
		return false, nil, err
	}
	return len(d) == 0, d, nil
}

// readerChecks is what a reader knows of the lake's records: each file's
// record and run, and the traces committed.
type readerChecks struct {
	dir       string
	committed map[string]bool    // trace file names (hash.parquet) with a commit
	records   map[string]fileSum // file below the lake -> record
	runOf     map[string]*sums   // file below the lake -> its record file
	seen      map[string]bool    // files listed and checked
	damage    map[int64][]Damage // by run id
	// covered are the committed traces a merged generation holds (read
	// from its chunks, not from their own files: merge.go)
	covered map[string]bool
	// traces are the records of the committed traces not covered, and
	// runRecords their runs' row records (nil: none); unrecorded counts
	// those without a record (written before records existed)
	traces     []*sums
	runRecords map[int64]*sums
	unrecorded int
}

// loadChecks reads the traces committed and the records of those not
// covered by a merged generation.
func loadChecks(dir string, covered map[string]bool) (*readerChecks, error) {
	rc := &readerChecks{dir: dir, committed: map[string]bool{}, records: map[string]fileSum{},
		runOf: map[string]*sums{}, seen: map[string]bool{}, damage: map[int64][]Damage{},
		covered: covered, runRecords: map[int64]*sums{}}
	ents, err := os.ReadDir(filepath.Join(dir, "traces"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("lake %s: %w", dir, err)
	}
	add := func(s *sums) {
		for _, f := range s.files {
			rc.records[f.path] = f
			rc.runOf[f.path] = s
		}
	}
	runsRead := map[int64]bool{}
	for _, e := range ents {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".parquet") || name == schemaFile {
			continue
		}
		rc.committed[name] = true
		if covered[name] {
			continue
		}
		s, err := readSums(filepath.Join(dir, metaDir, sumsDir, strings.TrimSuffix(name, ".parquet")))
		if err != nil {
			return nil, err
		}
		if s == nil {
			rc.unrecorded++
			continue
		}
		add(s)
		rc.traces = append(rc.traces, s)
		if !runsRead[s.runID] {
			runsRead[s.runID] = true
			rs, err := readSums(runSumsPath(dir, s.runID))
			if err != nil {
				return nil, err
			}
			if rs != nil {
				add(rs)
				rc.runRecords[s.runID] = rs
			}
		}
	}
	return rc, nil
}

// take says whether a reader lists the file at path, of table t: not when
// it belongs to a trace not committed (a writer's, still at work or
// killed: the views would filter its rows out anyway), nor when it does
// not match its record (noted as damage).
func (rc *readerChecks) take(path string, t Table) (bool, error) {
	name := filepath.Base(path)
	if t.layout != byRun && name != schemaFile && (!rc.committed[name] || rc.covered[name]) {
		return false, nil
	}
	rel, err := filepath.Rel(rc.dir, path)
	if err != nil {
		return false, err
	}
	rel = filepath.ToSlash(rel)
	rec, ok := rc.records[rel]
	if !ok {
		return true, nil
	}
	rc.seen[rel] = true
	what, err := rec.check(path)
	if err != nil {
		return false, fmt.Errorf("lake %s: check %s: %w", rc.dir, rel, err)
	}
	if what == "" {
		return true, nil
	}
	s := rc.runOf[rel]
	rc.damage[s.runID] = append(rc.damage[s.runID], Damage{File: rel, What: what, Run: s.run, RunID: s.runID})
	return false, nil
}

// checked checks a recorded file of record s (of the traces listed from
// their records): its path, and whether it is read (not when damaged:
// noted).
func (rc *readerChecks) checked(f fileSum, s *sums) (string, bool, error) {
	path := filepath.Join(rc.dir, filepath.FromSlash(f.path))
	what, err := f.check(path)
	if err != nil {
		return "", false, fmt.Errorf("lake %s: check %s: %w", rc.dir, f.path, err)
	}
	if what != "" {
		rc.damage[s.runID] = append(rc.damage[s.runID], Damage{File: f.path, What: what, Run: s.run, RunID: s.runID})
		return "", false, nil
	}
	return path, true, nil
}

// missing notes the recorded files under the walked roots (below the
// lake) that were not there.
func (rc *readerChecks) missing(roots []string) {
	for rel, rec := range rc.records {
		if rc.seen[rel] {
			continue
		}
		under := false
		for _, r := range roots {
			if rel == r || strings.HasPrefix(rel, r+"/") {
				under = true
				break
			}
		}
		if !under {
			continue
		}
		s := rc.runOf[rel]
		rc.damage[s.runID] = append(rc.damage[s.runID], Damage{File: rec.path, What: "missing", Run: s.run, RunID: s.runID})
	}
}

// damaged lists the damage found, by run id then file.
func (rc *readerChecks) damaged() []Damage {
	var out []Damage
	for _, d := range rc.damage {
		out = append(out, d...)
	}
	sortDamage(out)
	return out
}

func sortDamage(d []Damage) {
	slices.SortFunc(d, func(a, b Damage) int {
		return cmp.Or(cmp.Compare(a.RunID, b.RunID), cmp.Compare(a.File, b.File))
	})
}
