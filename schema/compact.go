package schema

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Compacted is what Compact did to a warehouse file.
type Compacted struct {
	Before, After int64 // bytes of the file
}

// Compact rewrites the warehouse file of w without the space that deleted
// rows hold, and closes w. DuckDB marks a deleted row and keeps its block:
// after `rm` the file was larger than before (a checkpoint, FORCE
// CHECKPOINT or VACUUM shrank it by nothing), and only later ingests
// reused the space. Compact copies every table, view, macro, sequence and
// comment into a new file beside it (DuckDB's COPY FROM DATABASE, same
// block size, this binary's storage version), checks each table's row
// count, closes the warehouse and renames the copy over it. It refuses a
// read-only warehouse, a lake or an in-memory one (w is closed all the
// same); on any error the file is left as it was and the copy removed.
// The warehouse's lock is held until the copy is complete; a writer that
// opened the file in the instant between its close and the rename would
// write into the replaced file.
func Compact(ctx context.Context, w *Warehouse) (_ Compacted, err error) {
	var c Compacted
	closed := false
	defer func() {
		if !closed {
			err = errors.Join(err, w.Close())
		}
	}()
	path := w.Path
	switch {
	case w.Lake != "":
		return c, fmt.Errorf("compact: %s is a lake (its files are rewritten by writing their traces again)", w.Lake)
	case path == "" || path == Memory:
		return c, errors.New("compact: an in-memory warehouse has no file")
	case w.ReadOnly:
		return c, fmt.Errorf("compact %s: opened read-only", path)
	}
	st, err := os.Stat(path)
	if err != nil {
		return c, fmt.Errorf("compact %s: %w", path, err)
	}
	c.Before = st.Size()
	tmp := fmt.Sprintf("%s.compact-%d", path, os.Getpid())
	remove := func() { os.Remove(tmp); os.Remove(tmp + ".wal") }
	remove()
	defer func() {
		if err != nil {
			remove()
		}
	}()
	fail := func(step string, err error) error { return fmt.Errorf("compact %s: %s: %w", path, step, err) }
	var name string
	var block int64
	if err := w.DB.QueryRowContext(ctx, `SELECT database_name, block_size FROM pragma_database_size()
		WHERE database_name = current_database()`).Scan(&name, &block); err != nil {
		return c, fail("read the block size", err)
	}
	if _, err := w.DB.ExecContext(ctx, "CHECKPOINT"); err != nil {
		return c, fail("checkpoint", err)
	}
	// One connection: ATTACH is per database instance, but the copy and
	// the checks must see the same attachment without racing a pool.
	conn, err := w.DB.Conn(ctx)
	if err != nil {
		return c, fail("connect", err)
	}
	defer conn.Close()
	const into = "tracehouse_compact"
	if _, err := conn.ExecContext(ctx, `ATTACH `+quote(tmp)+` AS `+into+
		` (STORAGE_VERSION `+quote(StorageVersion)+`, BLOCK_SIZE `+strconv.FormatInt(block, 10)+`)`); err != nil {
		return c, fail("create the copy", err)
	}
	detached := false
	defer func() {
		if !detached {
			conn.ExecContext(context.WithoutCancel(ctx), `DETACH `+into)
		}
	}()
	if _, err := conn.ExecContext(ctx, `COPY FROM DATABASE `+quoteIdent(name)+` TO `+into); err != nil {
		return c, fail("copy", err)
	}
	if err := sameRows(ctx, conn, name, into); err != nil {
		return c, fail("check the copy", err)
	}
	// Everything in the copy's file, none in a log beside it that the
	// rename would leave behind.
	if _, err := conn.ExecContext(ctx, `CHECKPOINT `+into); err != nil {
		return c, fail("checkpoint the copy", err)
	}
	detached = true
	if _, err := conn.ExecContext(ctx, `DETACH `+into); err != nil {
		return c, fail("close the copy", err)
	}
	conn.Close()
	closed = true
	if err := w.Close(); err != nil {
		return c, fail("close", err)
	}
	// A log left beside the old file would be replayed into the new one,
	// and one beside the copy would be lost.
	for _, wal := range []string{path + ".wal", tmp + ".wal"} {
		if _, err := os.Stat(wal); err == nil {
			return c, fail("close", fmt.Errorf("DuckDB left a write-ahead log %s (the file is kept as it was)", wal))
		}
	}
	if err := os.Chmod(tmp, st.Mode().Perm()); err != nil {
		return c, fail("permissions", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return c, fail("replace", err)
	}
	if st, err := os.Stat(path); err == nil {
		c.After = st.Size()
	}
	return c, nil
}

// sameRows checks that every table of database from has as many rows in
// database to.
func sameRows(ctx context.Context, conn *sql.Conn, from, to string) error {
	rows, err := conn.QueryContext(ctx, `SELECT schema_name, table_name FROM duckdb_tables()
		WHERE database_name = ? AND NOT temporary ORDER BY ALL`, from)
	if err != nil {
		return err
	}
	var tables [][2]string
	for rows.Next() {
		var t [2]string
		if err := rows.Scan(&t[0], &t[1]); err != nil {
			rows.Close()
			return err
		}
		tables = append(tables, t)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return err
	}
	if len(tables) == 0 {
		return errors.New("no tables")
	}
	for _, t := range tables {
		name := quoteIdent(t[0]) + "." + quoteIdent(t[1])
		var a, b int64
		if err := conn.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM `+quoteIdent(from)+`.`+name+`),
			(SELECT count(*) FROM `+quoteIdent(to)+`.`+name+`)`).Scan(&a, &b); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if a != b {
			return fmt.Errorf("%s: %d rows copied of %d", name, b, a)
		}
	}
	return nil
}

// quoteIdent quotes an SQL identifier.
func quoteIdent(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}
