package ingest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"

	"github.com/tracehouse/tracehouse/catalog"
	"github.com/tracehouse/tracehouse/schema"
)

// InstallCatalog makes the warehouse's catalog tables hold exactly c. It does
// nothing when they already hold a catalog with the same content hash, so
// calling it on every open is cheap, and switching between the embedded
// catalog and a user's --catalog FILE rewrites the tables each way.
func InstallCatalog(ctx context.Context, db connOpener, c *catalog.Catalog) error {
	_, err := installCatalog(ctx, db, c)
	return err
}

// connOpener is a handle InstallCatalog takes a connection of (*sql.DB):
// its rows go in through DuckDB's appender, within one transaction on that
// connection, so the three tables change together.
type connOpener interface {
	Conn(ctx context.Context) (*sql.Conn, error)
}

// installCatalog reports whether it wrote anything, for tests.
func installCatalog(ctx context.Context, db connOpener, c *catalog.Catalog) (changed bool, err error) {
	// A catalog built or edited in code reaches here unchecked otherwise.
	if err := c.Validate(); err != nil {
		return false, err
	}
	hash := c.Hash()
	conn, err := db.Conn(ctx)
	if err != nil {
		return false, fmt.Errorf("install catalog: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN TRANSACTION"); err != nil {
		return false, fmt.Errorf("install catalog: %w", err)
	}
	defer func() {
		if err != nil {
			_, rerr := conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
			err = errors.Join(err, rerr)
		}
	}()
	current, err := installedCatalogHashes(ctx, conn)
	if err != nil {
		return false, err
	}
	if len(current) == 1 && current[0] == hash {
		// Nothing to write; commit so a read-only warehouse works too.
		if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
			return false, fmt.Errorf("install catalog: commit: %w", err)
		}
		return false, nil
	}
	for _, table := range []string{"fusion_catalog_steps", "fusion_catalog", "overlap_catalog"} {
		if _, err := conn.ExecContext(ctx, "DELETE FROM "+table); err != nil {
			return false, fmt.Errorf("install catalog: clear %s: %w", table, err)
		}
	}
	if err := appendCatalog(conn, c, hash); err != nil {
		return false, fmt.Errorf("install catalog: %w", err)
	}
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		return false, fmt.Errorf("install catalog: commit: %w", err)
	}
	return true, nil
}

// InstalledCatalogHash returns the content hash of the catalog in the warehouse, ""
// when the tables are empty.
// It is one statement, which DuckDB runs in a transaction of its own, so
// the two tables are read at one point in time: a transaction around it
// (BEGIN, ROLLBACK) was two more statements in every report's open
// (issue 38).
func InstalledCatalogHash(ctx context.Context, db catalogQuerier) (string, error) {
	hs, err := installedCatalogHashes(ctx, db)
	if err != nil || len(hs) == 0 {
		return "", err
	}
	return hs[0], nil
}

// catalogQuerier is a *sql.DB, *sql.Tx or *sql.Conn.
type catalogQuerier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// installedCatalogHashes lists the distinct hashes stored in the catalog tables:
// none when empty, one normally, more only if something else wrote rows.
func installedCatalogHashes(ctx context.Context, q catalogQuerier) ([]string, error) {
	rows, err := q.QueryContext(ctx, `
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

// appendCatalog writes every fusion entry, chain step and overlap entry
// through DuckDB's appender on conn, in its open transaction: one INSERT
// of bound VALUES per table cost about 30 ms (binding a thousand
// parameters), most of installing the catalog into a fresh warehouse,
// which every one-shot triage and every lake report does.
func appendCatalog(conn *sql.Conn, c *catalog.Catalog, hash string) error {
	specs := []schema.Spec{
		{Table: "fusion_catalog", Columns: []string{"id", "ordinal", "name", "framework", "origin", "fused", "steps",
			"ordered", "max_gap_ns", "max_between", "models_any", "models_none", "min_tp", "min_share", "likely_share",
			"priority", "subsumes", "sources", "switch", "rationale", "catalog_version", "catalog_hash"}},
		{Table: "fusion_catalog_steps", Columns: []string{"id", "step_no", "keywords"}},
		{Table: "overlap_catalog", Columns: []string{"id", "ordinal", "name", "framework", "origin", "keywords",
			"sources", "switch", "rationale", "catalog_version", "catalog_hash"}},
	}
	return schema.WithAppenders(conn, specs, func(apps []*schema.Appender) error {
		fusions, steps, overlaps := apps[0], apps[1], apps[2]
		for i, f := range c.Fusions {
			if err := fusions.Append(f.ID, int32(i), f.Name, f.Framework, f.Origin,
				catalogList(f.Fused), int32(len(f.Chain)), f.Ordered, gapNS(f.MaxGapUS), int32(f.MaxBetween),
				catalogList(f.ModelsAny), catalogList(f.ModelsNone), int32(f.MinTP), f.MinShare, f.LikelyShare,
				int32(f.Priority), catalogList(f.Subsumes), catalogList(f.Sources), nullString(f.Switch), f.Rationale,
				int32(c.Version), hash); err != nil {
				return err
			}
			for s, kws := range f.Chain {
				if err := steps.Append(f.ID, int32(s+1), catalogList(kws)); err != nil {
					return err
				}
			}
		}
		for i, o := range c.Overlaps {
			if err := overlaps.Append(o.ID, int32(i), o.Name, o.Framework, o.Origin,
				catalogList(o.Keywords), catalogList(o.Sources), nullString(o.Switch), o.Rationale,
				int32(c.Version), hash); err != nil {
				return err
			}
		}
		return nil
	})
}

// catalogList makes a nil slice an empty list: the columns are NOT NULL,
// and an absent list means "none", not "unknown".
func catalogList(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// gapNS converts the file's microseconds to the warehouse's nanoseconds.
func gapNS(us float64) int64 { return int64(math.Round(us * 1000)) }
