// Package tempfiles names the temporary files and directories tracehouse
// makes after the process that owns them, and sweeps what killed
// processes left: a killed process cannot remove its own, so the next one
// to use the same place does.
//
// A name is Prefix + <pid> [+ "." + <host>] + "-" + <random> + Suffix.
// An entry is stale when its process is gone (its pid names no running
// process on this host) or, whatever its name says, when it has not
// changed for StaleAfter (a process on another host sharing the
// directory, a pid reused, a name from an older tracehouse).
package tempfiles

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// StaleAfter is the age at which any temporary entry is taken for a killed
// process's: live owners change theirs far more often.
const StaleAfter = 24 * time.Hour

// Pattern describes the names of one kind of temporary entry.
type Pattern struct {
	Prefix, Suffix string
	// Host adds the host name after the pid, for directories that
	// processes on several machines share (a lake's).
	Host bool
}

// Name is the start of a new entry's name, for os.CreateTemp and the like
// ("*" then Suffix completes the pattern): Prefix, the pid, the host.
func (p Pattern) Name() string {
	s := p.Prefix + strconv.Itoa(os.Getpid())
	if p.Host {
		s += "." + host()
	}
	return s + "-"
}

// CreatePattern is the os.CreateTemp pattern of a new entry.
func (p Pattern) CreatePattern() string { return p.Name() + "*" + p.Suffix }

// host is this machine's name, without the characters names avoid.
func host() string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		return "unknown"
	}
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' {
			return r
		}
		return '_'
	}, h)
}

// owner reads the pid of a name of p, when the name says one of this host.
func (p Pattern) owner(name string) (int, bool) {
	rest := strings.TrimSuffix(strings.TrimPrefix(name, p.Prefix), p.Suffix)
	i := 0
	for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
		i++
	}
	pid, err := strconv.Atoi(rest[:i])
	if err != nil || pid <= 0 {
		return 0, false
	}
	rest = rest[i:]
	if p.Host {
		h := host()
		if !strings.HasPrefix(rest, "."+h+"-") {
			return 0, false
		}
		rest = rest[len(h)+1:]
	}
	// a name from before pids were written has the random part here
	if !strings.HasPrefix(rest, "-") {
		return 0, false
	}
	return pid, true
}

// Sweep removes the stale entries of pattern p in dir (files, or
// directories with what they hold) and returns how many it removed. It
// only tidies up: every error is ignored.
func Sweep(dir string, p Pattern) int {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range ents {
		name := e.Name()
		if !strings.HasPrefix(name, p.Prefix) || !strings.HasSuffix(name, p.Suffix) || len(name) < len(p.Prefix)+len(p.Suffix) {
			continue
		}
		stale := false
		if pid, ok := p.owner(name); ok && !Alive(pid) {
			stale = true
		} else if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > StaleAfter {
			stale = true
		}
		if stale && os.RemoveAll(filepath.Join(dir, name)) == nil {
			n++
		}
	}
	return n
}

// Alive says whether pid is a running process of this host (one of
// another user counts).
func Alive(pid int) bool {
	if pid == os.Getpid() {
		return true
	}
	proc, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	err = proc.Signal(syscall.Signal(0))
	return err == nil || errors.Is(err, syscall.EPERM)
}
