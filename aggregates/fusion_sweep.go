package aggregates

import (
	"cmp"
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"runtime/debug"
	"slices"

	duckdb "github.com/duckdb/duckdb-go/v2"
	"github.com/tracehouse/tracehouse/inline"
	"github.com/tracehouse/tracehouse/schema"
)

// fusionSweepKernels is the most GPU events a rank may hold for SaveFusion
// to find its chain occurrences in SQL (_fusion_related's stream walk);
// a larger rank's are found by sweepChains, one stream at a time, and
// handed to the same statement as a table. The SQL holds every kernel of
// the rank several times over in state DuckDB cannot spill: a 1 GB
// kernel-dense trace (1.68 M GPU events) ran out of memory under the
// finish's 200 MiB bound and, made again unbounded, peaked at 746 MiB
// (bench/README.md, "Eighteenth figures"). Smaller ranks keep the SQL,
// whose one statement costs less than the sweep's three.
const fusionSweepKernels = 1 << 17

// chainRole is one chain step of one fusion entry a kernel text can fill
// (_fusion_step_roles).
type chainRole struct {
	entry    int32 // index into the sweep's entries
	step     int32 // from 1
	nsteps   int32
	ordered  bool
	reach    int64 // max_between + 1: how many places later the next step may sit
	maxGapNS int64
}

// chainKernel is a GPU event whose text can fill a chain step, as
// fusion_sweep_kernels.sql reads it.
type chainKernel struct {
	pos, id, ts, end int64
	stage            string
	text             int64
}

// chainCandidate is a complete occurrence of an entry: its kernels'
// positions and ids, in stream order.
type chainCandidate struct {
	pos, ids []int64
}

// chainSweep finds the accepted chain occurrences of one rank's streams by
// _fusion_related's rule (sqllib/fusion.sql), which it restates for
// memory's sake: the SQL is the definition reports use and the one
// TestFusionSweepMatchesSQL holds this to; the finish uses this for ranks
// of more than fusionSweepKernels GPU events. Links: a kernel d places
// after another on its stream (1 <= d <= max_between + 1), in the same
// stage, starting at most max_gap_ns after the other ends, filling the next
// step (ordered entries) or a step not filled yet (unordered). Candidates:
// the distinct kernel lists of paths along links that fill every step,
// starting at step 1 for ordered entries. Choice: per entry, greedily,
// tightest first (fewest positions spanned), then leftmost, then by the
// positions in turn; a candidate is taken when none of its kernels is in
// one taken before. Candidates can only share a kernel when their spans
// overlap, so each entry's candidates are chosen island by island (a run of
// overlapping spans) as the stream is read; a stream is read once and at
// most the longest span of the catalog's chains is held, besides the
// island being built.
type chainSweep struct {
	roles   map[int64][]chainRole // by text
	entries []string
	span    int64 // longest span of any chain, in places
	// per stream
	buf     []chainKernel
	islands [][]chainCandidate // by entry
	last    []int64            // by entry: largest last position of its island
	emit    func(entry string, step int, occurrence, kernel int64) error
}

// newChainSweep sets a sweep up for roles (by text); emit receives each
// kernel of each accepted occurrence.
func newChainSweep(roles map[int64][]chainRole, entries []string, emit func(entry string, step int, occurrence, kernel int64) error) *chainSweep {
	s := &chainSweep{roles: roles, entries: entries, emit: emit,
		islands: make([][]chainCandidate, len(entries)), last: make([]int64, len(entries))}
	for _, rs := range roles {
		for _, r := range rs {
			s.span = max(s.span, int64(r.nsteps-1)*r.reach)
		}
	}
	return s
}

// add takes the next kernel of the current stream (in place order).
func (s *chainSweep) add(k chainKernel) error {
	// A kernel whose every path ends before k is complete: walk from it.
	for len(s.buf) > 0 && s.buf[0].pos+s.span < k.pos {
		if err := s.walkFrom(0); err != nil {
			return err
		}
		s.buf = s.buf[1:]
	}
	s.buf = append(s.buf, k)
	return nil
}

// endStream walks from the kernels left and chooses among the last
// islands' candidates.
func (s *chainSweep) endStream() error {
	for i := range s.buf {
		if err := s.walkFrom(i); err != nil {
			return err
		}
	}
	s.buf = s.buf[:0]
	for e := range s.islands {
		if err := s.choose(int32(e)); err != nil {
			return err
		}
	}
	return nil
}

// walkFrom finds the candidates starting at s.buf[i] (all the kernels they
// can reach are in the buffer) and adds them to their entries' islands.
func (s *chainSweep) walkFrom(i int) error {
	a := s.buf[i]
	seen := map[string]bool{}
	for _, r := range s.roles[a.text] {
		if r.ordered && r.step != 1 {
			continue
		}
		var found []chainCandidate
		var walk func(j int, step int32, used uint64, pos, ids []int64)
		walk = func(j int, step int32, used uint64, pos, ids []int64) {
			if int32(len(pos)) == r.nsteps {
				found = append(found, chainCandidate{pos: slices.Clone(pos), ids: slices.Clone(ids)})
				return
			}
			prev := s.buf[j]
			for n := j + 1; n < len(s.buf) && s.buf[n].pos-prev.pos <= r.reach; n++ {
				b := s.buf[n]
				if b.stage != prev.stage || b.ts-prev.end > r.maxGapNS {
					continue
				}
				for _, q := range s.roles[b.text] {
					if q.entry != r.entry {
						continue
					}
					if r.ordered && q.step != step+1 || !r.ordered && used&(1<<q.step) != 0 {
						continue
					}
					walk(n, q.step, used|1<<q.step, append(pos, b.pos), append(ids, b.id))
				}
			}
		}
		walk(i, r.step, 1<<r.step, []int64{a.pos}, []int64{a.id})
		for _, c := range found {
			key := fmt.Sprint(r.entry, c.pos)
			if seen[key] {
				continue
			}
			seen[key] = true
			if err := s.candidate(r.entry, c); err != nil {
				return err
			}
		}
	}
	return nil
}

// candidate adds c (found in order of its first position) to its entry's
// island, choosing among the island's candidates first when c starts past
// every span in it.
func (s *chainSweep) candidate(e int32, c chainCandidate) error {
	if len(s.islands[e]) > 0 && c.pos[0] > s.last[e] {
		if err := s.choose(e); err != nil {
			return err
		}
	}
	if len(s.islands[e]) == 0 {
		s.last[e] = c.pos[len(c.pos)-1]
	}
	s.islands[e] = append(s.islands[e], c)
	s.last[e] = max(s.last[e], c.pos[len(c.pos)-1])
	return nil
}

// choose takes entry e's island's candidates greedily (see chainSweep)
// and emits the kernels of those taken.
func (s *chainSweep) choose(e int32) error {
	cs := s.islands[e]
	slices.SortFunc(cs, func(a, b chainCandidate) int {
		if c := cmp.Compare(a.pos[len(a.pos)-1]-a.pos[0], b.pos[len(b.pos)-1]-b.pos[0]); c != 0 {
			return c
		}
		return slices.Compare(a.pos, b.pos)
	})
	claimed := map[int64]bool{}
	for _, c := range cs {
		if slices.ContainsFunc(c.pos, func(p int64) bool { return claimed[p] }) {
			continue
		}
		for i, p := range c.pos {
			claimed[p] = true
			if err := s.emit(s.entries[e], i+1, c.ids[0], c.ids[i]); err != nil {
				return err
			}
		}
	}
	s.islands[e] = cs[:0]
	return nil
}

// sweepChains finds the accepted chain occurrences of rank rank of run
// (chainSweep) on conn and writes them to the temporary table
// fusion_sweep_chains.sql makes, whose name it returns for
// fusion_store_rows.sql ($chains), with that of the rank's keyword hits
// (fusion_sweep_hits.sql; $hits), which the chain roles come from. The
// caller drops the tables (dropChainTables).
func sweepChains(ctx context.Context, conn *sql.Conn, run, rank int64) (chains, hits string, _ error) {
	const swept, hitTable = "temp.main._fusion_swept", "temp.main._fusion_sweep_hits"
	args := []any{sql.Named("run", run), sql.Named("rank", rank)}
	for _, name := range []string{"fusion_sweep_hits", "fusion_sweep_roles", "fusion_sweep_chains"} {
		if _, err := inline.Exec(ctx, conn, stmt(name), args...); err != nil {
			return "", "", fmt.Errorf("%s: %w", name, err)
		}
	}
	roles, entries, err := readChainRoles(ctx, conn)
	if err != nil {
		return "", "", fmt.Errorf("read chain roles: %w", err)
	}
	if len(roles) == 0 {
		return swept, hitTable, nil
	}
	// The kernels are read whole first: the appender reserves the
	// connection, which the reading holds. Only the found kernels are kept.
	type found struct {
		entry              string
		step               int
		occurrence, kernel int64
	}
	var out []found
	sw := newChainSweep(roles, entries, func(entry string, step int, occurrence, kernel int64) error {
		out = append(out, found{entry, step, occurrence, kernel})
		return nil
	})
	var stream [3]int64
	first := true
	err = eachDriverRow(ctx, conn, "fusion_sweep_kernels", args, 9, func(v []driver.Value) error {
		key := [3]int64{v[0].(int64), v[1].(int64), v[2].(int64)}
		if !first && key != stream {
			if err := sw.endStream(); err != nil {
				return err
			}
		}
		first, stream = false, key
		return sw.add(chainKernel{pos: v[3].(int64), id: v[4].(int64), stage: v[5].(string),
			ts: v[6].(int64), end: v[6].(int64) + v[7].(int64), text: v[8].(int64)})
	})
	if err == nil && !first {
		err = sw.endStream()
	}
	if err != nil {
		return "", "", fmt.Errorf("fusion_sweep_kernels: %w", err)
	}
	// The events read are garbage now (as in sweepOverlapBy): under the
	// process's Go memory limit no collection would come before the
	// fuse-pattern statement, whose DuckDB memory would stack on them.
	debug.FreeOSMemory()
	if len(out) == 0 {
		return swept, hitTable, nil
	}
	cols := []string{"id", "variant", "step", "occurrence", "kernel_id"}
	types := []duckdb.Type{duckdb.TYPE_VARCHAR, duckdb.TYPE_INTEGER, duckdb.TYPE_BIGINT, duckdb.TYPE_BIGINT, duckdb.TYPE_BIGINT}
	err = schema.WithQueryAppender(conn, "INSERT INTO "+swept+" SELECT * FROM _chains", "_chains", cols, types,
		func(a *schema.Appender) error {
			for _, f := range out {
				if err := a.Append(f.entry, int32(0), int64(f.step), f.occurrence, f.kernel); err != nil {
					return err
				}
			}
			return nil
		})
	if err != nil {
		return "", "", err
	}
	return swept, hitTable, nil
}

// readChainRoles reads fusion_sweep_roles.sql's table: each text's roles,
// and the entries they name.
func readChainRoles(ctx context.Context, conn *sql.Conn) (map[int64][]chainRole, []string, error) {
	rows, err := conn.QueryContext(ctx, `SELECT text, id, step, nsteps, ordered, max_between, max_gap_ns
		FROM temp.main._fusion_sweep_roles ORDER BY text, id, step`)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	roles := map[int64][]chainRole{}
	index := map[string]int32{}
	var entries []string
	for rows.Next() {
		var text, step, nsteps, between, gap int64
		var id string
		var ordered bool
		if err := rows.Scan(&text, &id, &step, &nsteps, &ordered, &between, &gap); err != nil {
			return nil, nil, err
		}
		e, ok := index[id]
		if !ok {
			e = int32(len(entries))
			index[id] = e
			entries = append(entries, id)
		}
		roles[text] = append(roles[text], chainRole{entry: e, step: int32(step), nsteps: int32(nsteps), ordered: ordered,
			reach: between + 1, maxGapNS: gap})
	}
	return roles, entries, rows.Err()
}

// dropChainTables drops sweepChains's temporary tables from conn.
func dropChainTables(ctx context.Context, conn *sql.Conn) error {
	for _, name := range []string{"fusion_sweep_drop_chains", "fusion_sweep_drop_roles", "fusion_sweep_drop_hits"} {
		if _, err := conn.ExecContext(ctx, stmt(name)); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}
