package lake

import (
	"fmt"
	"path/filepath"
	"sync"
	"testing"
)

// TestClaimsAgree: writers claiming overlapping keys at once, all
// preferring the same few ids, end with one id per key, a different id for
// every key, and the same answers when asked again.
func TestClaimsAgree(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	const writers, keys = 8, 60
	got := make([]map[string]int64, writers)
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tmp, err := tmpDir(root)
			if err != nil {
				errs <- err
				return
			}
			c := &claims{root: filepath.Join(root, metaDir, "ids"), tmp: tmp}
			got[w] = map[string]int64{}
			for i := range keys {
				// every writer sees the keys in another order; writer w
				// prefers ids 1..5 for them, as fresh warehouses do
				j := (i + 7*w) % keys
				if w%2 == 1 {
					j = keys - 1 - j
				}
				k := fmt.Sprintf("kernel_%d", j)
				id, note, err := c.claim(kindName, k, int64(1+i%5), fmt.Sprintf("w%d", w))
				if err != nil {
					errs <- err
					return
				}
				if prev, ok := got[w][k]; ok && prev != id {
					errs <- fmt.Errorf("writer %d: %s got %d then %d", w, k, prev, id)
				}
				got[w][k] = id
				_ = note
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	owner := map[int64]string{}
	for k, id := range got[0] {
		if other, ok := owner[id]; ok {
			t.Errorf("%s and %s share id %d", k, other, id)
		}
		owner[id] = k
		if id < 1 || id > maxID {
			t.Errorf("%s: id %d out of range", k, id)
		}
		for w := 1; w < writers; w++ {
			if got[w][k] != id {
				t.Errorf("%s: writer 0 has %d, writer %d has %d", k, id, w, got[w][k])
			}
		}
	}
	if len(owner) != keys {
		t.Errorf("%d keys claimed, want %d", len(owner), keys)
	}
	// The note is the first claimant's; a preferred id is kept when free.
	c := &claims{root: filepath.Join(root, metaDir, "ids"), tmp: t.TempDir()}
	id, note, err := c.claim(kindName, "kernel_0", 99, "late")
	if err != nil || id != got[0]["kernel_0"] || note == "late" {
		t.Errorf("late claim of kernel_0: %d %q %v", id, note, err)
	}
	id, _, err = c.claim(kindRun, "fresh-run", 7, "")
	if err != nil || id != 7 {
		t.Errorf("a free preferred id: got %d %v, want 7", id, err)
	}
	id, _, err = c.claim(kindRun, "other-run", 7, "")
	if err != nil || id == 7 {
		t.Errorf("a taken preferred id: got %d %v", id, err)
	}
}

// TestClaimAfterHalfClaim: a writer killed between its two claim files
// left an id file; the same key claims it again, another key does not.
func TestClaimAfterHalfClaim(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	c := &claims{root: filepath.Join(root, "ids"), tmp: t.TempDir()}
	if _, err := createOnce(c.tmp, c.idPath(kindTrace, 5), []byte("hash-a")); err != nil {
		t.Fatal(err)
	}
	id, _, err := c.claim(kindTrace, "hash-b", 5, "")
	if err != nil || id == 5 {
		t.Errorf("hash-b took id 5 of a half claim: %d %v", id, err)
	}
	id, _, err = c.claim(kindTrace, "hash-a", 5, "")
	if err != nil || id != 5 {
		t.Errorf("hash-a: got %d %v, want its half-claimed 5", id, err)
	}
}
