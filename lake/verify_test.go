package lake

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tracehouse/tracehouse/schema"
)

// copyLake is a fresh copy of the exported demo lake (files copied, never
// linked: the tests damage them).
func copyLake(t *testing.T) string {
	t.Helper()
	return copyDir(t, demoLake(t))
}

// copyDir is a fresh copy of the lake at src, in a temporary directory of
// t (files copied, never linked).
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	if err := copyTree(src, dst); err != nil {
		t.Fatal(err)
	}
	return dst
}

// copyTree copies the files and directories under src into dst.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.Create(to)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
}

// kernelSums are count and sum(dur_ns) of kernels per run label.
func kernelSums(t *testing.T, w *schema.Warehouse) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, line := range dump(t, w.DB, `SELECT r.label, ' ', count(*), ' ', sum(k.dur_ns) FROM kernels k JOIN runs r USING (run_id) GROUP BY 1`) {
		label, rest, _ := strings.Cut(line, " ")
		out[label] = rest
	}
	return out
}

func flipByte(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0x5a
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func oneFile(t *testing.T, dir, pattern string) string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, pattern))
	if err != nil || len(m) == 0 {
		t.Fatalf("no file %s: %v", pattern, err)
	}
	slices.Sort(m)
	return m[0]
}

// TestDamagedLake: a flipped byte in an event file, a deleted event file,
// a truncated commit file and a damaged run row (each in another run) are
// found when the lake is opened, and named: a reader that takes warnings
// leaves those runs out and reads every other run whole (the warehouse's
// sums), one that does not gets a *DamagedError; writing the traces again
// repairs the lake (one trace per damaged run).
func TestDamagedLake(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src := openDemo(t)
	want := kernelSums(t, src)
	dir := copyLake(t)
	// The lake keeps the warehouse's ids (exported into an empty lake).
	firstTrace := func(label string) (hash string, runID int64) {
		if err := src.DB.QueryRow(`SELECT min(content_hash), any_value(run_id) FROM traces JOIN runs USING (run_id) WHERE label = ?`,
			label).Scan(&hash, &runID); err != nil {
			t.Fatal(err)
		}
		return hash, runID
	}
	const checksum = "its checksum differs from the one recorded when it was written"
	type damage struct{ run, file, what string }
	var damaged []damage
	// a flipped byte in a kernels file
	p := oneFile(t, dir, "kernels/run=sglang-llama/stage=*/rank=*/*.parquet")
	flipByte(t, p)
	damaged = append(damaged, damage{"sglang-llama", p, checksum})
	// a deleted kernels file
	p = oneFile(t, dir, "kernels/run=vllm-qwen-moe/stage=*/rank=*/*.parquet")
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	damaged = append(damaged, damage{"vllm-qwen-moe", p, "missing"})
	// a truncated commit file
	hash, _ := firstTrace("trtllm-llama")
	p = tracePath(dir, hash)
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(p, 100); err != nil {
		t.Fatal(err)
	}
	damaged = append(damaged, damage{"trtllm-llama", p, fmt.Sprintf("100 bytes, %d when written", st.Size())})
	// a flipped byte in a run row
	_, runID := firstTrace("tokenspeed-deepseek")
	p = filepath.Join(dir, "runs", itoa(runID)+".parquet")
	flipByte(t, p)
	damaged = append(damaged, damage{"tokenspeed-deepseek", p, checksum})

	_, err = Open(ctx, dir, schema.Options{Threads: 1})
	var de *DamagedError
	if !errors.As(err, &de) || len(de.Damage) != len(damaged) || !strings.Contains(err.Error(), fmt.Sprintf("(and %d more damaged file(s))", len(damaged)-1)) {
		t.Fatalf("open without warnings: %v", err)
	}

	var warnings []string
	lk, err := OpenRead(ctx, dir, schema.Options{Threads: 1}, ReadOptions{Warn: func(s string) { warnings = append(warnings, s) }})
	if err != nil {
		t.Fatal(err)
	}
	got := kernelSums(t, lk)
	lk.Close()
	left := map[string]bool{}
	for _, d := range damaged {
		left[d.run] = true
		rel, _ := filepath.Rel(dir, d.file)
		line := fmt.Sprintf("lake %s: %s is damaged (%s): run %s is left out; ", dir, filepath.ToSlash(rel), d.what, d.run)
		if !slices.ContainsFunc(warnings, func(w string) bool { return strings.HasPrefix(w, line) }) {
			t.Errorf("no warning %q in\n%s", line, strings.Join(warnings, "\n"))
		}
	}
	if len(warnings) != len(damaged) {
		t.Errorf("%d warnings, want %d", len(warnings), len(damaged))
	}
	intact := 0
	for label, w := range want {
		if left[label] {
			if g, ok := got[label]; ok {
				t.Errorf("run %s shown: %s", label, g)
			}
			continue
		}
		intact++
		if got[label] != w {
			t.Errorf("run %s: %s, want %s", label, got[label], w)
		}
	}
	if intact == 0 {
		t.Error("no intact run: the test proves nothing")
	}

	res, err := Write(ctx, src.DB, dir, WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Written() != len(damaged) {
		t.Errorf("the repair wrote %d traces, want %d", res.Written(), len(damaged))
	}
	lk, err = Open(ctx, dir, schema.Options{Threads: 1})
	if err != nil {
		t.Fatalf("after the repair: %v", err)
	}
	defer lk.Close()
	if got := kernelSums(t, lk); !mapsEqual(got, want) {
		t.Errorf("after the repair: %v, want %v", got, want)
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestUnreadableFileNamed: in a lake without checksum records (written
// before they existed), a file DuckDB cannot read fails the opening with
// one line naming it, not a TProtocolException naming nothing.
func TestUnreadableFileNamed(t *testing.T) {
	t.Parallel()
	dir := copyLake(t)
	if err := os.RemoveAll(filepath.Join(dir, metaDir, sumsDir)); err != nil {
		t.Fatal(err)
	}
	path := oneFile(t, dir, "kernels/run=vllm-*/stage=*/rank=*/*.parquet")
	if err := os.WriteFile(path, []byte("PAR1 this is not a Parquet file PAR1"), 0o644); err != nil {
		t.Fatal(err)
	}
	rel, _ := filepath.Rel(dir, path)
	_, err := Open(context.Background(), dir, schema.Options{Threads: 1})
	if err == nil || !strings.Contains(err.Error(), filepath.ToSlash(rel)+" is not a readable Parquet file") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("err %v", err)
	}
}

// TestLeftoversNotRead: files of a trace that was never committed (a
// killed writer's) are not read, even when unreadable.
func TestLeftoversNotRead(t *testing.T) {
	t.Parallel()
	dir := copyLake(t)
	junk := filepath.Join(dir, "kernels", "run=ghost", "stage=decode", "rank=0", "0123abcd.parquet")
	if err := os.MkdirAll(filepath.Dir(junk), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(junk, []byte("half a file"), 0o644); err != nil {
		t.Fatal(err)
	}
	lk, err := Open(context.Background(), dir, schema.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	lk.Close()
}
