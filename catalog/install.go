package catalog

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
)

// Execer is a handle Install can open a transaction on: *sql.DB or *sql.Conn.
// Install needs its own transaction so the three tables change together.
type Execer interface {
	BeginTx(ctx context.Context, opts *sql.TxOptions) (*sql.Tx, error)
}

// Hash identifies a catalog's content: the sha256 of its canonical JSON form
// (defaults applied, no comments or formatting), so reformatting a file does
// not reinstall it but any change to an entry does.
func (c *Catalog) Hash() string {
	b, err := json.Marshal(c)
	if err != nil {
		// Only strings, numbers and bools of finite value: cannot fail for a
		// catalog that passed Validate.
		panic(fmt.Sprintf("catalog hash: %v", err))
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Install makes the warehouse's catalog tables hold exactly c. It does
// nothing when they already hold a catalog with the same content hash, so
// calling it on every open is cheap, and switching between the embedded
// catalog and a user's --catalog FILE rewrites the tables each way.
func Install(ctx context.Context, db Execer, c *Catalog) error {
	_, err := install(ctx, db, c)
	return err
}

// install reports whether it wrote anything, for tests.
func install(ctx context.Context, db Execer, c *Catalog) (changed bool, err error) {
	// A catalog built or edited in code reaches here unchecked otherwise.
	if err := c.Validate(); err != nil {
		return false, err
	}
	hash := c.Hash()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("install catalog: %w", err)
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, tx.Rollback())
		}
	}()
	current, err := installedHashes(ctx, tx)
	if err != nil {
		return false, err
	}
	if len(current) == 1 && current[0] == hash {
		// Nothing to write; commit so a read-only warehouse works too.
		if err := tx.Commit(); err != nil {
			return false, fmt.Errorf("install catalog: commit: %w", err)
		}
		return false, nil
	}
	for _, table := range []string{"fusion_catalog_steps", "fusion_catalog", "overlap_catalog"} {
		if _, err := tx.ExecContext(ctx, "DELETE FROM "+table); err != nil {
			return false, fmt.Errorf("install catalog: clear %s: %w", table, err)
		}
	}
	if err := insertFusions(ctx, tx, c, hash); err != nil {
		return false, err
	}
	if err := insertOverlaps(ctx, tx, c, hash); err != nil {
		return false, err
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("install catalog: commit: %w", err)
	}
	return true, nil
}

// InstalledHash returns the content hash of the catalog in the warehouse, ""
// when the tables are empty.
func InstalledHash(ctx context.Context, db Execer) (string, error) {
	// A plain transaction: duckdb-go rejects TxOptions.ReadOnly, and this one
	// only reads, so rolling it back loses nothing.
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return "", fmt.Errorf("read installed catalog: %w", err)
	}
	defer tx.Rollback() // its error cannot change the answer
	hs, err := installedHashes(ctx, tx)
	if err != nil || len(hs) == 0 {
		return "", err
	}
	return hs[0], nil
}

// installedHashes lists the distinct hashes stored in the catalog tables:
// none when empty, one normally, more only if something else wrote rows.
func installedHashes(ctx context.Context, tx *sql.Tx) ([]string, error) {
	rows, err := tx.QueryContext(ctx, `
		SELECT DISTINCT catalog_hash FROM (
			SELECT catalog_hash FROM fusion_catalog
			UNION ALL
			SELECT catalog_hash FROM overlap_catalog)
		ORDER BY catalog_hash`)
	if err != nil {
		return nil, fmt.Errorf("read installed catalog: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var h string
		if err := rows.Scan(&h); err != nil {
			return nil, fmt.Errorf("read installed catalog: %w", err)
		}
		out = append(out, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read installed catalog: %w", err)
	}
	return out, nil
}

// insertFusions writes every fusion entry in one INSERT and every chain step
// in another: a statement per row cost about 2 ms each (some 300 rows), most
// of a one-shot triage's catalog install.
func insertFusions(ctx context.Context, tx *sql.Tx, c *Catalog, hash string) error {
	if len(c.Fusions) == 0 {
		return nil
	}
	const cols = 22
	args := make([]any, 0, cols*len(c.Fusions))
	var stepArgs []any
	for i, f := range c.Fusions {
		args = append(args, f.ID, i, f.Name, f.Framework, f.Origin,
			list(f.Fused), len(f.Chain), f.Ordered, gapNS(f.MaxGapUS), f.MaxBetween,
			list(f.ModelsAny), list(f.ModelsNone), f.MinTP, f.MinShare, f.LikelyShare,
			f.Priority, list(f.Subsumes), list(f.Sources), nullable(f.Switch), f.Rationale,
			c.Version, hash)
		for s, kws := range f.Chain {
			stepArgs = append(stepArgs, f.ID, s+1, list(kws))
		}
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO fusion_catalog (
		id, ordinal, name, framework, origin, fused, steps, ordered, max_gap_ns,
		max_between, models_any, models_none, min_tp, min_share, likely_share,
		priority, subsumes, sources, switch, rationale, catalog_version, catalog_hash)
		VALUES `+placeholders(len(c.Fusions), cols), args...)
	if err != nil {
		return fmt.Errorf("install catalog: fusions: %w", err)
	}
	if len(stepArgs) == 0 {
		return nil
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO fusion_catalog_steps (id, step_no, keywords) VALUES `+
		placeholders(len(stepArgs)/3, 3), stepArgs...)
	if err != nil {
		return fmt.Errorf("install catalog: fusion steps: %w", err)
	}
	return nil
}

// insertOverlaps writes every overlap entry in one INSERT.
func insertOverlaps(ctx context.Context, tx *sql.Tx, c *Catalog, hash string) error {
	if len(c.Overlaps) == 0 {
		return nil
	}
	const cols = 11
	args := make([]any, 0, cols*len(c.Overlaps))
	for i, o := range c.Overlaps {
		args = append(args, o.ID, i, o.Name, o.Framework, o.Origin,
			list(o.Keywords), list(o.Sources), nullable(o.Switch), o.Rationale,
			c.Version, hash)
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO overlap_catalog (
		id, ordinal, name, framework, origin, keywords, sources, switch, rationale,
		catalog_version, catalog_hash)
		VALUES `+placeholders(len(c.Overlaps), cols), args...)
	if err != nil {
		return fmt.Errorf("install catalog: overlaps: %w", err)
	}
	return nil
}

// placeholders is "(?, ..., ?), ..." for rows rows of cols values.
func placeholders(rows, cols int) string {
	row := "(" + strings.Repeat("?, ", cols-1) + "?)"
	var b strings.Builder
	b.Grow(rows * (len(row) + 2))
	for i := range rows {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(row)
	}
	return b.String()
}

// list makes a nil slice an empty list: the columns are NOT NULL, and an
// absent list means "none", not "unknown".
func list(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// gapNS converts the file's microseconds to the warehouse's nanoseconds.
func gapNS(us float64) int64 { return int64(math.Round(us * 1000)) }
