package ingest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"sort"
)

// Tagged is what TagRun changed.
type Tagged struct {
	// Tags are the run's tags afterwards, "key=value" sorted by key.
	Tags []string
	// Missing are keys asked to be removed that the run did not carry.
	Missing []string
	// MovedFrom are the other runs (labels, sorted) that lost a key to the
	// run with move.
	MovedFrom []string
}

// TagRun changes the tags of the run labelled label (README "Tags and
// baselines"), in one transaction: the keys rm are removed, then each key of set is
// set (a key already there takes the new value). With move, the keys of
// set are first taken off every other run, so that exactly one run carries
// them: a baseline that moves (tag:baseline=true names the latest run
// carrying the tag, so an older run tagged without move would not become
// the baseline while a newer one carries it too).
func TagRun(ctx context.Context, db *sql.DB, label string, set map[string]string, rm []string, move bool) (_ *Tagged, err error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("tag run: %w", err)
	}
	defer func() {
		if err != nil {
			tx.Rollback()
		}
	}()
	var id int64
	err = tx.QueryRowContext(ctx, `SELECT run_id FROM runs WHERE label = ?`, label).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, &RunNotFoundError{label}
	}
	if err != nil {
		return nil, fmt.Errorf("tag run %q: %w", label, err)
	}
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := &Tagged{}
	for _, k := range rm {
		var had bool
		if err := tx.QueryRowContext(ctx, `SELECT coalesce(list_contains(map_keys(tags), ?), false) FROM runs WHERE run_id = ?`, k, id).Scan(&had); err != nil {
			return nil, fmt.Errorf("tag run %q: %w", label, err)
		}
		if !had {
			out.Missing = append(out.Missing, k)
			continue
		}
		if _, err := tx.ExecContext(ctx, `UPDATE runs SET tags = map_from_entries(list_filter(map_entries(tags), e -> e.key <> ?)) WHERE run_id = ?`, k, id); err != nil {
			return nil, fmt.Errorf("tag run %q: remove %s: %w", label, k, err)
		}
	}
	if move {
		for _, k := range keys {
			rows, err := tx.QueryContext(ctx, `UPDATE runs SET tags = map_from_entries(list_filter(map_entries(tags), e -> e.key <> $key))
				WHERE run_id <> $run AND list_contains(map_keys(tags), $key) RETURNING label`, sql.Named("key", k), sql.Named("run", id))
			if err != nil {
				return nil, fmt.Errorf("tag run %q: move %s: %w", label, k, err)
			}
			for rows.Next() {
				var l string
				if err := rows.Scan(&l); err != nil {
					rows.Close()
					return nil, fmt.Errorf("tag run %q: move %s: %w", label, k, err)
				}
				if !slices.Contains(out.MovedFrom, l) {
					out.MovedFrom = append(out.MovedFrom, l)
				}
			}
			if err := rows.Close(); err != nil {
				return nil, fmt.Errorf("tag run %q: move %s: %w", label, k, err)
			}
		}
		sort.Strings(out.MovedFrom)
	}
	for _, k := range keys {
		if _, err := tx.ExecContext(ctx, `UPDATE runs SET tags = map_concat(map_from_entries(list_filter(map_entries(coalesce(tags, MAP {})), e -> e.key <> ?)), MAP {?: ?}) WHERE run_id = ?`,
			k, k, set[k], id); err != nil {
			return nil, fmt.Errorf("tag run %q: set %s: %w", label, k, err)
		}
	}
	var tags []any
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(list_sort([e.key || '=' || coalesce(e.value, '') FOR e IN map_entries(tags)]), []) FROM runs WHERE run_id = ?`, id).Scan(&tags); err != nil {
		return nil, fmt.Errorf("tag run %q: %w", label, err)
	}
	out.Tags = []string{}
	for _, t := range tags {
		if s, ok := t.(string); ok {
			out.Tags = append(out.Tags, s)
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("tag run %q: commit: %w", label, err)
	}
	return out, nil
}
