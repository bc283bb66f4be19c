package lake

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/zeebo/xxh3"
)

// Ids in a lake.
//
// The lake keeps the warehouse's columns and types, so its integer ids
// (runs.run_id, traces.trace_id, kernel_names.name_id, sites.site_id; and
// kernel_id, launch_id, op_id = trace_id * 2^32 + ordinal) must mean one
// thing across every process that ever wrote into it, with no lock and no
// central writer. Each id is claimed in the file system: for an id kind
// (run, trace, name, site) and its natural key (run label, content hash,
// kernel name, Python frame name),
//
//	_tracehouse/ids/<kind>/id/<id % 256>/<id>        holds the key  (who owns the id)
//	_tracehouse/ids/<kind>/key/<hh>/<xxh3 of key>    holds the id   (which id the key has)
//
// both created with link(2), which fails instead of replacing: the first
// writer wins, the others read what it wrote. A key's id is looked up in
// its key file; a new key claims the first free id among its candidates
// (the id its source warehouse gave it, then ids hashed from the key) and
// then its key file. Two processes with one new key agree through the key
// file; two keys never share an id because the id file is taken first.
// A process killed between the two leaves an id file nobody uses (a gap).
// Claims are never removed, so a key keeps its id for the lake's life.
//
// Exporting a warehouse into an empty lake keeps its ids (the preferred
// candidate is free), which is why reports over the lake and over the
// warehouse are byte-identical; later writers whose ids are taken get
// hashed ones (large numbers, below 2^31).

// Id kinds.
const (
	kindRun   = "run"
	kindTrace = "trace"
	kindName  = "name"
	kindSite  = "site"
)

// maxID bounds ids: INTEGER columns, and trace_id * 2^32 must fit a BIGINT.
const maxID = 1<<31 - 1

type claims struct {
	root string // DIR/_tracehouse/ids
	tmp  string // this writer's temporary directory
}

func (c *claims) keyPath(kind, key string) string {
	h := xxh3.HashString128(key).Bytes()
	s := fmt.Sprintf("%x", h[:])
	return filepath.Join(c.root, kind, "key", s[:2], s)
}

func (c *claims) idPath(kind string, id int64) string {
	return filepath.Join(c.root, kind, "id", fmt.Sprintf("%02x", id%256), strconv.FormatInt(id, 10))
}

// lookup returns the id of key and the note stored with it, or ok false.
func (c *claims) lookup(kind, key string) (id int64, note string, ok bool, err error) {
	p := c.keyPath(kind, key)
	found, err := exists(p)
	if err != nil || !found {
		return 0, "", false, err
	}
	b, err := readSettled(p)
	if err != nil {
		return 0, "", false, err
	}
	first, rest, _ := strings.Cut(string(b), "\n")
	id, err = strconv.ParseInt(first, 10, 64)
	if err != nil || id < 1 || id > maxID {
		return 0, "", false, fmt.Errorf("lake: claim %s is damaged", p)
	}
	return id, strings.TrimSuffix(rest, "\n"), true, nil
}

// claim returns key's id, claiming one (preferring preferred) when key has
// none yet. note is stored with a new claim; the stored note is returned
// (another writer's when it claimed the key first).
func (c *claims) claim(kind, key string, preferred int64, note string) (int64, string, error) {
	if id, stored, ok, err := c.lookup(kind, key); err != nil || ok {
		return id, stored, err
	}
	for i := 0; i < 64; i++ {
		cand := candidate(key, preferred, i)
		created, err := createOnce(c.tmp, c.idPath(kind, cand), []byte(key))
		if err != nil {
			return 0, "", err
		}
		if !created {
			owner, err := readSettled(c.idPath(kind, cand))
			if err != nil {
				return 0, "", err
			}
			if !bytes.Equal(owner, []byte(key)) {
				continue
			}
			// Ours: a writer of the same key got this far before.
		}
		content := strconv.FormatInt(cand, 10) + "\n" + note + "\n"
		created, err = createOnce(c.tmp, c.keyPath(kind, key), []byte(content))
		if err != nil {
			return 0, "", err
		}
		if created {
			return cand, note, nil
		}
		id, stored, ok, err := c.lookup(kind, key)
		if err == nil && !ok {
			err = fmt.Errorf("lake: claim of %s %q vanished", kind, key)
		}
		return id, stored, err
	}
	return 0, "", fmt.Errorf("lake: no free %s id for %q after 64 tries", kind, key)
}

// candidate is the i-th id key tries: preferred first (when valid), then
// ids hashed from the key.
func candidate(key string, preferred int64, i int) int64 {
	if preferred >= 1 && preferred <= maxID {
		if i == 0 {
			return preferred
		}
		i--
	}
	var salt [8]byte
	binary.LittleEndian.PutUint64(salt[:], uint64(i))
	h := xxh3.HashString(key + "\x00" + string(salt[:]))
	return 1 + int64(h%uint64(maxID-1))
}
