// Package migrations holds the warehouse DDL as numbered SQL files, embedded
// in the binary. It is the only place DDL lives.
//
// Files are named NNNN_name.sql, numbered consecutively from 0001, applied
// up-only and in order by schema.Migrate. The staging/ folder holds the
// per-connection TEMP tables ingest fills before a trace is committed; they
// are not part of the warehouse's persistent schema and carry no version.
package migrations

import "embed"

// FS holds every numbered migration.
//
//go:embed *.sql
var FS embed.FS

// Staging holds the TEMP-table DDL ingest runs on each of its connections.
//
//go:embed staging/*.sql
var Staging embed.FS
