package lake

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tracehouse/tracehouse/schema"
)

// Merged generations.
//
// Every trace writes a dozen small files (one per table and partition), so
// a lake of a thousand runs holds fifteen thousand, and a reader that
// opens them all spends its time in opening files, not in reading rows
// (10 CPU-s to open a 200-run lake). Compact merges the files of many
// committed traces into one file per table, a "chunk", and publishes the
// chunks in a manifest:
//
//	_tracehouse/merged/gen-<N>.json          generation N: its chunks, each with its traces and files
//	_tracehouse/merged/<table>/<chunk>.parquet  a chunk's rows of one table
//
// A reader takes the highest generation: the traces it lists are read from
// their chunk's files and every other committed trace from its own files,
// so each trace is read exactly once, whatever the age of the generation.
// The traces' own files are never removed: they stay what writers check
// (a trace already in the lake), what Spark, Trino and views.sql read (the
// merged files are under _tracehouse/, hidden from them), and what a
// reader falls back on when a chunk file is damaged.
//
// A generation is published by creating its manifest with link(2), which
// fails instead of replacing: of two compactions that start from
// generation N, one publishes N+1 and the other removes its chunk files
// and changes nothing. Chunk files are moved into place before their
// manifest, under fresh names, so a compaction killed at any point leaves
// the previous generation whole and current (its leftover files are
// removed by a later compaction). A generation's files are removed only
// once its successor has been current for the grace period (a reader that
// opened the older one has finished by then), so merging never takes a
// file from under a reader. Writers never look at generations: they keep
// writing and committing traces as before, and a trace committed during a
// compaction is simply read from its own files until the next one.

// mergedDir holds the generations and their chunk files.
const mergedDir = "merged"

// manifestFormat is the version of the manifest's layout.
const manifestFormat = 1

// manifest is one generation.
type manifest struct {
	Format     int     `json:"format"`
	Generation int     `json:"generation"`
	Chunks     []chunk `json:"chunks"`
}

// chunk is a set of committed traces whose rows are merged into one file
// per table.
type chunk struct {
	ID     string       `json:"id"`
	Bytes  int64        `json:"bytes"` // the traces' own files, what the packing counts
	Traces []chunkTrace `json:"traces"`
	Files  []chunkFile  `json:"files"`
}

// chunkTrace is one trace a chunk holds.
type chunkTrace struct {
	Name  string `json:"name"` // its file name in traces/ (content hash .parquet)
	ID    int64  `json:"trace_id"`
	RunID int64  `json:"run_id"`
	Run   string `json:"run"` // its run's label
}

// chunkFile is a chunk's file of one table, with its size and checksum.
type chunkFile struct {
	Table string `json:"table"`
	Path  string `json:"path"` // below the lake, '/'-separated
	Size  int64  `json:"size"`
	Sum   string `json:"xxh3"`
}

func (f chunkFile) sum() fileSum { return fileSum{path: f.Path, size: f.Size, sum: f.Sum} }

func manifestName(gen int) string { return fmt.Sprintf("gen-%08d.json", gen) }

// generations lists the manifests in dir's merged directory, by number.
func generations(dir string) ([]int, error) {
	ents, err := os.ReadDir(filepath.Join(dir, metaDir, mergedDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("lake %s: %w", dir, err)
	}
	var gens []int
	for _, e := range ents {
		n, ok := strings.CutPrefix(e.Name(), "gen-")
		if n, ok2 := strings.CutSuffix(n, ".json"); ok && ok2 && !e.IsDir() {
			if g, err := strconv.Atoi(n); err == nil && g > 0 {
				gens = append(gens, g)
			}
		}
	}
	slices.Sort(gens)
	return gens, nil
}

// readManifest reads generation gen.
func readManifest(dir string, gen int) (*manifest, error) {
	path := filepath.Join(dir, metaDir, mergedDir, manifestName(gen))
	b, err := readSettled(path)
	if err != nil {
		return nil, err
	}
	m := &manifest{}
	if err := json.Unmarshal(b, m); err != nil || m.Generation != gen {
		return nil, fmt.Errorf("lake %s: %s is damaged (remove it: the traces it merged are read from their own files; run 'tracehouse compact --lake' again)", dir, filepath.Join(metaDir, mergedDir, manifestName(gen)))
	}
	if m.Format > manifestFormat {
		return nil, fmt.Errorf("lake %s: %s was written by a newer tracehouse: upgrade tracehouse", dir, filepath.Join(metaDir, mergedDir, manifestName(gen)))
	}
	return m, nil
}

// currentManifest is the highest generation, nil when the lake has none.
// A generation removed between the listing and the read (only ever one
// superseded for the whole grace period) is listed again.
func currentManifest(dir string) (*manifest, error) {
	for try := 0; ; try++ {
		gens, err := generations(dir)
		if err != nil || len(gens) == 0 {
			return nil, err
		}
		m, err := readManifest(dir, gens[len(gens)-1])
		if errors.Is(err, fs.ErrNotExist) && try < 3 {
			continue
		}
		return m, err
	}
}

// CompactOptions say how Compact merges.
type CompactOptions struct {
	// ChunkBytes is how many bytes of the traces' own files one chunk
	// holds at most (0: DefaultChunkBytes). A trace larger than that is a
	// chunk of its own.
	ChunkBytes int64
	// Grace is how long the files of a superseded generation stay for
	// readers that opened it (negative: DefaultGrace; 0: removed at once,
	// for a lake no command is reading).
	Grace time.Duration
	// Engine sets up the in-memory database that merges (its Threads).
	Engine schema.Options
}

// DefaultChunkBytes is the default size of a chunk (of its traces' own
// files): large enough that a thousand small runs make a handful of files
// per table, small enough that a reader of one run reads little besides.
const DefaultChunkBytes = 64 << 20

// DefaultGrace is how long a superseded generation's files stay: far
// longer than any command reading a lake takes.
const DefaultGrace = time.Hour

// CompactResult reports a Compact.
type CompactResult struct {
	Generation int // the generation current afterwards (0: none)
	Published  bool
	// Merged counts the traces newly merged; Covered the traces the
	// current generation holds; Left the committed traces it does not
	// (committed meanwhile, damaged, or written before checksums).
	Merged, Covered, Left int
	Chunks                int // chunks in the current generation
	ChunksWritten         int
	// Raced: another compaction published the generation this one was
	// building; this one changed nothing.
	Raced   bool
	Removed int // files of superseded generations removed
	Damaged []Damage
}

// Compact merges the committed traces of the lake at dir that no
// generation holds yet into chunks, and publishes them with the current
// generation's chunks as the next generation (see above). Traces whose
// own files are damaged, or that have no checksum records, are left
// unmerged (a reader still reads them, and warns of the damage). A chunk
// smaller than half ChunkBytes is merged again with the new traces, so
// generations stay a few large chunks. With nothing new to merge it
// publishes nothing. Either way it removes the files of generations
// superseded for longer than Grace.
func Compact(ctx context.Context, dir string, opt CompactOptions) (*CompactResult, error) {
	if opt.ChunkBytes <= 0 {
		opt.ChunkBytes = DefaultChunkBytes
	}
	if opt.Grace < 0 {
		opt.Grace = DefaultGrace
	}
	if err := checkReadable(dir, dir); err != nil {
		return nil, err
	}
	cur, err := currentManifest(dir)
	if err != nil {
		return nil, err
	}
	res := &CompactResult{}
	gen := 0
	var keep, redo []chunk
	anyDamaged := false
	covered := map[string]bool{}
	if cur != nil {
		gen = cur.Generation
		for _, c := range cur.Chunks {
			damaged, err := chunkDamage(dir, c)
			if err != nil {
				return nil, err
			}
			for _, t := range c.Traces {
				covered[t.Name] = true
			}
			anyDamaged = anyDamaged || damaged
			if damaged || c.Bytes < opt.ChunkBytes/2 {
				redo = append(redo, c)
			} else {
				keep = append(keep, c)
			}
		}
	}
	todo, left, err := unmerged(dir, covered, res)
	if err != nil {
		return nil, err
	}
	res.Generation, res.Left, res.Merged = gen, left, len(todo)
	if len(todo) == 0 && !anyDamaged {
		// nothing new: the current generation stands as it is
		if cur != nil {
			res.Chunks = len(cur.Chunks)
			for _, c := range cur.Chunks {
				res.Covered += len(c.Traces)
			}
		}
		res.Removed, err = sweepGenerations(dir, opt.Grace)
		return res, err
	}
	// The redone chunks' traces are merged again from their own files,
	// with the new ones (a damaged chunk's traces are checked like them).
	for _, c := range redo {
		again, left, err := recordedTraces(dir, c.Traces, res)
		if err != nil {
			return nil, err
		}
		todo = append(todo, again...)
		res.Left += left
	}
	tmp, err := tmpDir(dir)
	if err != nil {
		return nil, fmt.Errorf("lake %s: %w", dir, err)
	}
	defer os.RemoveAll(tmp)
	w, err := schema.Open(ctx, schema.Memory, opt.Engine)
	if err != nil {
		return nil, err
	}
	defer w.Close()
	// Merging streams rows from the traces' files into the chunk's; left
	// unbounded, DuckDB kept far more of them in memory than it needed
	// (1.6 GiB merging a lake of 1,000 small runs).
	if _, err := w.DB.ExecContext(ctx, fmt.Sprintf(`SET memory_limit = '%dMiB'`, compactMemoryMiB)); err != nil {
		return nil, fmt.Errorf("lake %s: bound DuckDB's memory: %w", dir, err)
	}
	next := &manifest{Format: manifestFormat, Generation: gen + 1, Chunks: keep}
	var written []string
	for i, part := range pack(todo, opt.ChunkBytes) {
		if err := ctx.Err(); err != nil {
			removeAll(dir, written)
			return nil, err
		}
		c, files, err := writeChunk(ctx, w, dir, tmp, fmt.Sprintf("g%d-%d-%s", gen+1, i, filepath.Base(tmp)), part)
		written = append(written, files...)
		if err != nil {
			removeAll(dir, written)
			return nil, err
		}
		next.Chunks = append(next.Chunks, c)
		res.ChunksWritten++
	}
	b, err := json.MarshalIndent(next, "", " ")
	if err != nil {
		return nil, err
	}
	created, err := createOnce(tmp, filepath.Join(dir, metaDir, mergedDir, manifestName(next.Generation)), append(b, '\n'))
	if err != nil {
		removeAll(dir, written)
		return nil, fmt.Errorf("lake %s: publish generation %d: %w", dir, next.Generation, err)
	}
	if !created {
		removeAll(dir, written)
		res.Raced, res.Merged = true, 0
		return res, nil
	}
	moved(filepath.Join(dir, metaDir, mergedDir, manifestName(next.Generation)))
	res.Generation, res.Published, res.Chunks = next.Generation, true, len(next.Chunks)
	for _, c := range next.Chunks {
		res.Covered += len(c.Traces)
	}
	res.Removed, err = sweepGenerations(dir, opt.Grace)
	return res, err
}

// removeAll removes files (below the lake) a failed compaction moved into
// place: no generation names them.
func removeAll(dir string, rels []string) {
	for _, r := range rels {
		os.Remove(filepath.Join(dir, filepath.FromSlash(r)))
	}
}

// mergeTrace is a trace to merge: its record (its files, its run).
type mergeTrace struct {
	chunkTrace
	files []fileSum
	bytes int64
}

// unmerged lists the committed traces no chunk covers whose files are
// whole, and counts those left out (damaged, noted in res, or without a
// record).
func unmerged(dir string, covered map[string]bool, res *CompactResult) ([]mergeTrace, int, error) {
	ents, err := os.ReadDir(filepath.Join(dir, "traces"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, 0, fmt.Errorf("lake %s: %w", dir, err)
	}
	var names []chunkTrace
	for _, e := range ents {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".parquet") || name == schemaFile || covered[name] {
			continue
		}
		names = append(names, chunkTrace{Name: name})
	}
	return recordedTraces(dir, names, res)
}

// recordedTraces reads the records of traces and checks their files: the
// whole ones, and how many were left out.
func recordedTraces(dir string, traces []chunkTrace, res *CompactResult) ([]mergeTrace, int, error) {
	var out []mergeTrace
	left := 0
	runRows := map[int64]*sums{}
	for _, t := range traces {
		s, err := readSums(filepath.Join(dir, metaDir, sumsDir, strings.TrimSuffix(t.Name, ".parquet")))
		if err != nil {
			return nil, 0, err
		}
		if s == nil {
			left++ // written before records existed: read from its files, never merged
			continue
		}
		rs, ok := runRows[s.runID]
		if !ok {
			if rs, err = readSums(runSumsPath(dir, s.runID)); err != nil {
				return nil, 0, err
			}
			runRows[s.runID] = rs
		}
		mt := mergeTrace{chunkTrace: chunkTrace{Name: t.Name, RunID: s.runID, Run: s.run}}
		files := slices.Clone(s.files)
		runFile := fileSum{path: "runs/" + itoa(s.runID) + ".parquet"}
		if rs != nil && len(rs.files) == 1 {
			runFile = rs.files[0]
		}
		var damage []Damage
		for _, f := range files {
			what, err := f.check(filepath.Join(dir, filepath.FromSlash(f.path)))
			if err != nil {
				return nil, 0, err
			}
			if what != "" {
				damage = append(damage, Damage{File: f.path, What: what, Run: s.run, RunID: s.runID})
			}
			mt.bytes += f.size
		}
		if runFile.sum != "" {
			if what, err := runFile.check(filepath.Join(dir, filepath.FromSlash(runFile.path))); err != nil {
				return nil, 0, err
			} else if what != "" {
				damage = append(damage, Damage{File: runFile.path, What: what, Run: s.run, RunID: s.runID})
			}
		} else if ok, err := exists(filepath.Join(dir, filepath.FromSlash(runFile.path))); err != nil || !ok {
			if err == nil {
				damage = append(damage, Damage{File: runFile.path, What: "missing", Run: s.run, RunID: s.runID})
			}
			if err != nil {
				return nil, 0, err
			}
		}
		if len(damage) > 0 {
			res.Damaged = append(res.Damaged, damage...)
			left++
			continue
		}
		mt.files = append(files, runFile)
		out = append(out, mt)
	}
	sortDamage(res.Damaged)
	return out, left, nil
}

// pack groups traces into chunks of at most limit bytes, a run's traces
// together and runs in the order of their ids, so that a chunk's rows
// (written in that order) keep each run in few row groups.
func pack(traces []mergeTrace, limit int64) [][]mergeTrace {
	slices.SortFunc(traces, func(a, b mergeTrace) int {
		return cmp.Or(cmp.Compare(a.RunID, b.RunID), cmp.Compare(a.Name, b.Name))
	})
	var out [][]mergeTrace
	var cur []mergeTrace
	var size int64
	for _, t := range traces {
		if len(cur) > 0 && size+t.bytes > limit {
			out = append(out, cur)
			cur, size = nil, 0
		}
		cur = append(cur, t)
		size += t.bytes
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// writeChunk merges the traces' files into one file per table, moves them
// into place under the chunk's id, and returns the chunk and the files
// moved (below the lake).
func writeChunk(ctx context.Context, w *schema.Warehouse, dir, tmp, id string, traces []mergeTrace) (chunk, []string, error) {
	c := chunk{ID: id}
	bySource := map[string][]string{} // table -> files, in the traces' order
	seen := map[string]bool{}
	for _, t := range traces {
		c.Bytes += t.bytes
		for _, f := range t.files {
			table, _, _ := strings.Cut(f.path, "/")
			if seen[f.path] {
				continue // a run's row, shared by its traces
			}
			seen[f.path] = true
			bySource[table] = append(bySource[table], filepath.Join(dir, filepath.FromSlash(f.path)))
		}
	}
	var done []string
	for _, t := range Tables {
		files := bySource[t.Name]
		if len(files) == 0 {
			continue
		}
		// The table's schema file gives every column (a file written by an
		// older tracehouse may lack some); it has no rows.
		if sf := filepath.Join(dir, t.Name, schemaFile); fileExists(sf) {
			files = append([]string{sf}, files...)
		}
		lits := make([]string, len(files))
		for i, f := range files {
			lits[i] = literal(f)
		}
		src := fmt.Sprintf("read_parquet([%s], hive_partitioning = false, union_by_name = true)", strings.Join(lits, ", "))
		q := "SELECT * FROM " + src
		switch t.layout {
		case dimension:
			q = fmt.Sprintf("SELECT DISTINCT ON (%[1]s) * FROM %s ORDER BY %[1]s", ident(t.key), src)
		case byRun:
			q = fmt.Sprintf("SELECT DISTINCT ON (run_id) * FROM %s ORDER BY run_id", src)
		}
		out := filepath.Join(tmp, "chunk-"+t.Name+".parquet")
		// The files are read in the traces' order and written in it
		// (insertion order is kept), so each run's rows are contiguous.
		if _, err := w.DB.ExecContext(ctx, fmt.Sprintf(`COPY (%s) TO %s (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE %d)`, q, literal(out), chunkRowGroup)); err != nil {
			return c, done, fmt.Errorf("lake %s: merge %s: %w", dir, t.Name, err)
		}
		rel := mergedDir + "/" + t.Name + "/" + id + ".parquet"
		relFull := metaDir + "/" + rel
		sum, err := sumOf(out, relFull)
		if err != nil {
			return c, done, err
		}
		final := filepath.Join(dir, filepath.FromSlash(relFull))
		if err := moveInto(out, final); err != nil {
			return c, done, fmt.Errorf("lake: %w", err)
		}
		done = append(done, relFull)
		moved(final)
		c.Files = append(c.Files, chunkFile{Table: t.Name, Path: sum.path, Size: sum.size, Sum: sum.sum})
	}
	// The traces' ids, from the merged trace rows (the records hold none).
	rows, err := w.DB.QueryContext(ctx, fmt.Sprintf(`SELECT trace_id, content_hash FROM read_parquet(%s)`,
		literal(filepath.Join(dir, metaDir, mergedDir, "traces", id+".parquet"))))
	if err != nil {
		return c, done, fmt.Errorf("lake %s: merged traces: %w", dir, err)
	}
	ids := map[string]int64{}
	for rows.Next() {
		var tid int64
		var hash string
		if err := rows.Scan(&tid, &hash); err != nil {
			rows.Close()
			return c, done, err
		}
		ids[fileName(hash)] = tid
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return c, done, err
	}
	for _, t := range traces {
		id, ok := ids[t.Name]
		if !ok {
			return c, done, fmt.Errorf("lake %s: the merged trace rows lack traces/%s", dir, t.Name)
		}
		ct := t.chunkTrace
		ct.ID = id
		c.Traces = append(c.Traces, ct)
	}
	return c, done, nil
}

func fileExists(path string) bool {
	ok, err := exists(path)
	return ok && err == nil
}

// chunkDamage says whether a chunk's files do not all match their
// records.
func chunkDamage(dir string, c chunk) (bool, error) {
	for _, f := range c.Files {
		what, err := f.sum().check(filepath.Join(dir, filepath.FromSlash(f.Path)))
		if err != nil || what != "" {
			return what != "", err
		}
	}
	return false, nil
}

// sweepGenerations removes what readers can no longer be reading: the
// manifests (and then the chunk files only they name) of generations whose
// successor was published more than grace ago, and chunk files no
// manifest names that are older than grace (a killed compaction's). It
// returns how many files it removed.
func sweepGenerations(dir string, grace time.Duration) (int, error) {
	gens, err := generations(dir)
	if err != nil || len(gens) == 0 {
		return 0, err
	}
	base := filepath.Join(dir, metaDir, mergedDir)
	now := time.Now()
	live := map[string]bool{}
	var drop []string
	for i, g := range gens {
		path := filepath.Join(base, manifestName(g))
		if i < len(gens)-1 {
			st, err := os.Stat(filepath.Join(base, manifestName(gens[i+1])))
			if err != nil {
				return 0, fmt.Errorf("lake %s: %w", dir, err)
			}
			if now.Sub(st.ModTime()) >= grace {
				drop = append(drop, path)
				continue
			}
		}
		m, err := readManifest(dir, g)
		if err != nil {
			return 0, err
		}
		for _, c := range m.Chunks {
			for _, f := range c.Files {
				live[f.Path] = true
			}
		}
	}
	removed := 0
	for _, p := range drop {
		if err := os.Remove(p); err == nil {
			removed++
		}
	}
	for _, t := range Tables {
		tdir := filepath.Join(base, t.Name)
		ents, err := os.ReadDir(tdir)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return removed, fmt.Errorf("lake %s: %w", dir, err)
		}
		for _, e := range ents {
			rel := metaDir + "/" + mergedDir + "/" + t.Name + "/" + e.Name()
			if live[rel] {
				continue
			}
			info, err := e.Info()
			if err != nil || now.Sub(info.ModTime()) < grace {
				continue // a compaction at work, or a reader's generation
			}
			if err := os.Remove(filepath.Join(tdir, e.Name())); err == nil {
				removed++
			}
		}
	}
	return removed, nil
}

// compactMemoryMiB is DuckDB's memory_limit while Compact merges.
const compactMemoryMiB = 256

// chunkRowGroup is the rows per row group of a chunk file: small enough
// that a reader of one run skips most of a chunk's other runs by the row
// groups' statistics, large enough to compress well.
const chunkRowGroup = 16384
