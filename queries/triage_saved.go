package queries

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"reflect"
	"strconv"
)

// DefaultMinShare and DefaultOverlapRows are the --min-share and
// --overlap-rows of a triage that does not set them: the sections its
// saved report (TriageSaved) is made for.
const (
	DefaultMinShare    = 1.0
	DefaultOverlapRows = 10
)

// triageSaveVersion is part of TriageRecipe: raise it when Go code between
// the queries' rows and TriageData changes what a report holds (Triage,
// FusionNotes, KnownPathsByPair...), so that reports saved by an earlier
// binary are computed again instead of read. The queries' texts and the
// rows' types are in the recipe already.
const triageSaveVersion = 1

// TriageRecipe is what a saved triage report depends on besides the
// warehouse's rows (which _triage_fingerprint covers): a hash of every
// query's text, of the shape of TriageData (its fields' names and types,
// down to the rows'), of the SQL library (lib: schema.LibraryHash), of the
// verdict floor the overlap rows are saved for, and of triageSaveVersion.
// A report saved under another recipe is not read.
func TriageRecipe(lib string) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "version %d\nlibrary %s\nfloor %d\n", triageSaveVersion, lib, DefaultMinDurNS)
	for _, name := range Names() {
		b, err := fs.ReadFile(files, name+".sql")
		if err != nil {
			return "", fmt.Errorf("triage recipe: %w", err)
		}
		fmt.Fprintf(h, "%s %d\n", name, len(b))
		h.Write(b)
	}
	typeShape(h, reflect.TypeFor[TriageData](), map[reflect.Type]bool{})
	return hex.EncodeToString(h.Sum(nil)[:16]), nil
}

// typeShape writes t's fields' names and types, recursively, to w.
func typeShape(w interface{ Write([]byte) (int, error) }, t reflect.Type, seen map[reflect.Type]bool) {
	fmt.Fprintf(w, "%s(%s)", t.String(), t.Kind())
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array:
		typeShape(w, t.Elem(), seen)
	case reflect.Struct:
		if seen[t] {
			return
		}
		seen[t] = true
		w.Write([]byte("{"))
		for i := range t.NumField() {
			f := t.Field(i)
			fmt.Fprintf(w, "%s:", f.Name)
			typeShape(w, f.Type, seen)
			w.Write([]byte(";"))
		}
		w.Write([]byte("}"))
	}
}

// triageSections are the fields of TriageData a saved report holds: every
// one but Params (the caller's, given back with the report).
var triageSections = func() []string {
	t := reflect.TypeFor[TriageData]()
	var out []string
	for i := range t.NumField() {
		if f := t.Field(i); f.Name != "Params" {
			out = append(out, f.Name)
		}
	}
	return out
}()

// TriageSections encodes every section of d (each field of TriageData but
// Params) as JSON, by field name: what a saved report holds. Decoding it
// (TriageSaved) gives d's fields back exactly (floats are written in the
// shortest form that reads back as the same value; nil and empty slices
// stay apart). It fails on a value JSON cannot hold (a NaN).
func TriageSections(d *TriageData) (map[string]string, error) {
	v := reflect.ValueOf(d).Elem()
	out := make(map[string]string, len(triageSections))
	for _, name := range triageSections {
		b, err := json.Marshal(v.FieldByName(name).Interface())
		if err != nil {
			return nil, fmt.Errorf("encode triage section %s: %w", name, err)
		}
		out[name] = string(b)
	}
	return out, nil
}

// TriageSaved reads run p.Run's saved triage report (triage_saved.sql,
// after triage_saved_record.sql says there is one to check) when it is
// current for recipe and was made for p's MinShare and
// OverlapRows: the rank it shows and its sections, with p as Params. It
// returns nil when there is none: the caller computes the report (Triage).
// The caller checks the rest of p is what a saved report is made for (one
// rank, every stage, single-trace, no timelines, no framework override),
// and that the rank is the one it wants.
func TriageSaved(ctx context.Context, q Querier, p TriageParams, recipe string) (rank int64, _ *TriageData, _ error) {
	args := []any{sql.Named("run", p.Run), sql.Named("recipe", recipe),
		sql.Named("min_share", p.MinShare), sql.Named("overlap_rows", p.OverlapRows)}
	if saved, err := isFresh(ctx, q, "triage_saved_record", args); err != nil || !saved {
		return 0, nil, err
	}
	type row struct {
		rank          int64
		section, rows string
	}
	rows, err := collect(ctx, q, "triage_saved", args,
		func(rows *sql.Rows) (row, error) {
			var r row
			err := rows.Scan(&r.rank, &r.section, &r.rows)
			return r, err
		})
	if err != nil || len(rows) != len(triageSections) {
		return 0, nil, err
	}
	d := &TriageData{Params: p}
	v := reflect.ValueOf(d).Elem()
	for _, r := range rows {
		f := v.FieldByName(r.section)
		if !f.IsValid() || r.section == "Params" || r.rank != rows[0].rank {
			return 0, nil, fmt.Errorf("saved triage report of run %d: unexpected section %s of rank %d", p.Run, strconv.Quote(r.section), r.rank)
		}
		if err := json.Unmarshal([]byte(r.rows), f.Addr().Interface()); err != nil {
			return 0, nil, fmt.Errorf("saved triage report of run %d: section %s: %w", p.Run, r.section, err)
		}
	}
	return rows[0].rank, d, nil
}
