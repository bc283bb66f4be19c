package tempfiles

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// deadPID is the pid of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// TestSweep: of entries named by a host-qualified pattern, those of a dead
// process of this host go, those of a live one stay, those of another
// host stay until a day old (their pid means nothing here), and every
// entry a day old goes; names outside the pattern stay whatever their age.
func TestSweep(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := Pattern{Prefix: "w", Host: true}
	dead, me, h := deadPID(t), os.Getpid(), host()
	entries := []struct {
		name    string
		dir     bool
		old     bool
		removed bool
	}{
		{fmt.Sprintf("w%d.%s-a1", dead, h), true, false, true},
		{fmt.Sprintf("w%d.%s-a2", me, h), true, false, false},
		{fmt.Sprintf("w%d.%s-a3", me, h), true, true, true},
		{fmt.Sprintf("w%d.other_host-a4", dead), true, false, false},
		{fmt.Sprintf("w%d.other_host-a5", dead), true, true, true},
		{fmt.Sprintf("w%d-a6", dead), true, false, false}, // no host: an older name
		{fmt.Sprintf("w%d-a7", dead), false, true, true},
		{"x-old", false, true, false},
	}
	old := time.Now().Add(-StaleAfter - time.Hour)
	for _, e := range entries {
		path := filepath.Join(dir, e.name)
		if e.dir {
			if err := os.MkdirAll(filepath.Join(path, "b0"), 0o755); err != nil {
				t.Fatal(err)
			}
		} else if err := os.WriteFile(path, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		if e.old {
			if err := os.Chtimes(path, old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := 0
	for _, e := range entries {
		if e.removed {
			want++
		}
	}
	if n := Sweep(dir, p); n != want {
		t.Errorf("removed %d, want %d", n, want)
	}
	for _, e := range entries {
		_, err := os.Stat(filepath.Join(dir, e.name))
		if gone := os.IsNotExist(err); gone != e.removed {
			t.Errorf("%s: removed %v, want %v", e.name, gone, e.removed)
		}
	}
	if got := p.Name(); got != fmt.Sprintf("w%d.%s-", me, h) {
		t.Errorf("name %q", got)
	}
	if !Alive(me) || Alive(dead) {
		t.Errorf("alive: me %v, dead %v", Alive(me), Alive(dead))
	}
}
