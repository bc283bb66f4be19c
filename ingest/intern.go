package ingest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/tracehouse/tracehouse/schema"
	"github.com/tracehouse/tracehouse/vocab"
)

// interner gives kernel names and Python frame names their warehouse ids.
// Names repeat millions of times, so events carry ids, and each distinct name
// is stored once (kernel_names, sites). It is shared by every file of an
// ingest; new names are written by flush before any trace using them commits.
type interner struct {
	mu         sync.Mutex
	kernels    map[string]int32
	nextKernel int32
	newKernels []string
	sites      map[string]siteRef
	nextSite   int32
	newSites   []Site
	// firstKernel and firstSite are the first ids this interner gives:
	// ids from them on are names this ingest stored
	firstKernel, firstSite int32
}

// siteRef is what decoding needs of a site.
type siteRef struct {
	id   int32
	tier int8
	fw   int8 // index into vocab.Frameworks, -1 for non-framework code
}

// frameworkIndex is name's index in vocab.Frameworks, -1 when it is none.
func frameworkIndex(name string) int8 {
	return int8(slices.Index(vocab.Frameworks, name))
}

// loadInterner reads the names already in the warehouse.
func loadInterner(ctx context.Context, db *sql.DB) (*interner, error) {
	in := &interner{kernels: map[string]int32{}, sites: map[string]siteRef{}, nextKernel: 1, nextSite: 1}
	rows, err := db.QueryContext(ctx, `SELECT name, name_id FROM kernel_names`)
	if err != nil {
		return nil, fmt.Errorf("read kernel names: %w", err)
	}
	for rows.Next() {
		var n string
		var id int32
		if err := rows.Scan(&n, &id); err != nil {
			rows.Close()
			return nil, fmt.Errorf("read kernel names: %w", err)
		}
		in.kernels[n] = id
		in.nextKernel = max(in.nextKernel, id+1)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read kernel names: %w", err)
	}
	rows, err = db.QueryContext(ctx, `SELECT name, site_id FROM sites`)
	if err != nil {
		return nil, fmt.Errorf("read sites: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var n string
		var id int32
		if err := rows.Scan(&n, &id); err != nil {
			return nil, fmt.Errorf("read sites: %w", err)
		}
		s := ParseSite(n)
		in.sites[n] = siteRef{id: id, tier: s.Tier(), fw: frameworkIndex(s.Framework)}
		in.nextSite = max(in.nextSite, id+1)
	}
	in.firstKernel, in.firstSite = in.nextKernel, in.nextSite
	return in, rows.Err()
}

// dropUnused deletes the names this ingest stored that no row refers to:
// names flushed with a later file's (the interner is shared) by a file that
// then failed. Every table with a column ending in name_id (site_id) counts
// as a reference to kernel_names (sites), found through the catalog as rm
// finds the tables a run owns. Run once no file is loading (an id the
// interner still hands out must not go).
func (in *interner) dropUnused(ctx context.Context, db *sql.DB) error {
	in.mu.Lock()
	defer in.mu.Unlock()
	for _, d := range []struct {
		table, key  string
		first, next int32
	}{{schema.KernelNames, "name_id", in.firstKernel, in.nextKernel}, {schema.Sites, "site_id", in.firstSite, in.nextSite}} {
		if d.next == d.first {
			continue // no new name
		}
		rows, err := db.QueryContext(ctx, `SELECT c.table_name, c.column_name FROM duckdb_columns() c
			JOIN duckdb_tables() t ON t.database_name = c.database_name AND t.schema_name = c.schema_name AND t.table_name = c.table_name
			WHERE c.database_name = current_database() AND c.schema_name = 'main' AND NOT t.temporary
			AND c.column_name LIKE '%' || ? AND c.table_name <> ? ORDER BY ALL`, d.key, d.table)
		if err != nil {
			return fmt.Errorf("drop unused %s: %w", d.table, err)
		}
		var refs []string
		for rows.Next() {
			var t, c string
			if err := rows.Scan(&t, &c); err != nil {
				rows.Close()
				return fmt.Errorf("drop unused %s: %w", d.table, err)
			}
			refs = append(refs, fmt.Sprintf(" EXCEPT SELECT %s FROM %s WHERE %s >= $1", c, t, c))
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("drop unused %s: %w", d.table, err)
		}
		// the new ids only: a table's zone maps skip the row groups of
		// earlier ingests
		q := fmt.Sprintf(`DELETE FROM %[1]s WHERE %[2]s IN (SELECT %[2]s FROM %[1]s WHERE %[2]s >= $1%[3]s)`,
			d.table, d.key, strings.Join(refs, ""))
		if _, err := db.ExecContext(ctx, q, d.first); err != nil {
			return fmt.Errorf("drop unused %s: %w", d.table, err)
		}
	}
	return nil
}

func (in *interner) kernel(name []byte) int32 {
	in.mu.Lock()
	defer in.mu.Unlock()
	if id, ok := in.kernels[string(name)]; ok {
		return id
	}
	n := string(name)
	id := in.nextKernel
	in.nextKernel++
	in.kernels[n] = id
	in.newKernels = append(in.newKernels, n)
	return id
}

func (in *interner) site(name []byte) siteRef {
	in.mu.Lock()
	defer in.mu.Unlock()
	if r, ok := in.sites[string(name)]; ok {
		return r
	}
	s := ParseSite(string(name))
	r := siteRef{id: in.nextSite, tier: s.Tier(), fw: frameworkIndex(s.Framework)}
	in.nextSite++
	in.sites[s.Name] = r
	in.newSites = append(in.newSites, s)
	return r
}

// flush stores the names interned since the last flush, classifies new kernel
// names, and commits, so that a trace committed afterwards never points at a
// name that is not stored. Holding the lock keeps ids and rows in step.
func (in *interner) flush(ctx context.Context, db *sql.DB) (err error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if len(in.newKernels) == 0 && len(in.newSites) == 0 {
		return nil
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("store names: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN TRANSACTION"); err != nil {
		endFailedBegin(ctx, conn)
		return fmt.Errorf("store names: %w", err)
	}
	defer func() {
		if err != nil {
			if _, rerr := conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK"); rerr != nil {
				err = errors.Join(err, rerr)
			}
		}
	}()
	if err := in.store(ctx, conn); err != nil {
		return err
	}
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		return fmt.Errorf("store names: %w", err)
	}
	in.newKernels = in.newKernels[:0]
	in.newSites = in.newSites[:0]
	return nil
}

// flushInto stores the names interned since the last flush on conn, inside
// the transaction of the trace using them, which only an ingest's sole
// loader may do (no other trace can commit pointing at them first): they
// commit with it, sparing a transaction of their own per trace. When that
// transaction is rolled back, requeue hands them to the next flush again.
func (in *interner) flushInto(ctx context.Context, conn *sql.Conn) (requeue func(), err error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if len(in.newKernels) == 0 && len(in.newSites) == 0 {
		return nil, nil
	}
	if err := in.store(ctx, conn); err != nil {
		return nil, err
	}
	kernels, sites := slices.Clone(in.newKernels), slices.Clone(in.newSites)
	in.newKernels = in.newKernels[:0]
	in.newSites = in.newSites[:0]
	return func() {
		in.mu.Lock()
		defer in.mu.Unlock()
		in.newKernels = append(kernels, in.newKernels...)
		in.newSites = append(sites, in.newSites...)
	}, nil
}

// store appends the pending names on conn and classifies the new kernel
// names, inside the caller's transaction; the caller holds in.mu.
func (in *interner) store(ctx context.Context, conn *sql.Conn) error {
	specs := []schema.Spec{
		{Table: schema.KernelNames, Columns: []string{"name_id", "name", "demangled", "short_name", "base_name", "display_name"}},
		{Table: schema.Sites, Columns: []string{"site_id", "name", "file", "line", "func", "display", "rel_path", "framework", "is_wrapper"}},
	}
	err := schema.WithAppenders(conn, specs, func(apps []*schema.Appender) error {
		for _, n := range in.newKernels {
			f := NormalizeKernelName(n)
			var dem any
			if f.Mangled {
				dem = f.Demangled
			}
			if err := apps[0].Append(in.kernels[n], n, dem, f.Short, f.Base, f.Display); err != nil {
				return err
			}
		}
		for _, s := range in.newSites {
			var file, line, rel any
			if s.File != "" {
				file, line, rel = s.File, int32(s.Line), s.RelPath
			}
			if err := apps[1].Append(in.sites[s.Name].id, s.Name, file, line, s.Func, s.Display, rel, s.Framework, s.Wrapper); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store names: %w", err)
	}
	if len(in.newKernels) > 0 {
		if _, err := schema.Classify(ctx, conn, false); err != nil {
			return fmt.Errorf("classify new kernel names: %w", err)
		}
		// names stored before display names were (migration 0019)
		if _, err := schema.FillDisplayNames(ctx, conn, false); err != nil {
			return fmt.Errorf("store names: %w", err)
		}
	}
	return nil
}
