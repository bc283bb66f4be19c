package ingest

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/tracehouse/tracehouse/schema"
)

func TestTagRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w, err := schema.Open(ctx, schema.Memory, schema.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.DB.ExecContext(ctx, `INSERT INTO runs (run_id, label, ingested_at, tags) VALUES
		(1, 'old', TIMESTAMP '2026-01-01', MAP {'baseline': 'true', 'branch': 'main'}),
		(2, 'new', TIMESTAMP '2026-01-02', MAP {}),
		(3, 'other', TIMESTAMP '2026-01-03', NULL)`); err != nil {
		t.Fatal(err)
	}
	tags := func(label string) []string {
		t.Helper()
		var v []any
		if err := w.DB.QueryRowContext(ctx, `SELECT coalesce(list_sort([e.key || '=' || e.value FOR e IN map_entries(tags)]), []) FROM runs WHERE label = ?`, label).Scan(&v); err != nil {
			t.Fatal(err)
		}
		out := []string{}
		for _, s := range v {
			out = append(out, s.(string))
		}
		return out
	}

	// Set two keys on a run with no tags (NULL map), one replacing nothing.
	got, err := TagRun(ctx, w.DB, "other", map[string]string{"commit": "abc", "branch": "dev"}, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"branch=dev", "commit=abc"}; !slices.Equal(got.Tags, want) || !slices.Equal(tags("other"), want) {
		t.Errorf("tags %v (stored %v), want %v", got.Tags, tags("other"), want)
	}
	// A new value replaces the old one; removing a missing key is reported.
	got, err = TagRun(ctx, w.DB, "other", map[string]string{"commit": "def"}, []string{"branch", "nope"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Tags, []string{"commit=def"}) || !slices.Equal(got.Missing, []string{"nope"}) {
		t.Errorf("after replace and remove: %+v", got)
	}
	// Without move both runs carry the baseline; with move only the new one.
	if _, err := TagRun(ctx, w.DB, "new", map[string]string{"baseline": "true"}, nil, false); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(tags("old"), "baseline=true") {
		t.Errorf("without move the old run lost its baseline: %v", tags("old"))
	}
	got, err = TagRun(ctx, w.DB, "new", map[string]string{"baseline": "true"}, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.MovedFrom, []string{"old"}) || !slices.Equal(tags("old"), []string{"branch=main"}) ||
		!slices.Equal(tags("new"), []string{"baseline=true"}) {
		t.Errorf("move: %+v; old %v, new %v", got, tags("old"), tags("new"))
	}
	// An unknown run changes nothing.
	var nf *RunNotFoundError
	if _, err := TagRun(ctx, w.DB, "missing", map[string]string{"a": "b"}, nil, true); !errors.As(err, &nf) {
		t.Errorf("unknown run: %v", err)
	}
	if !slices.Equal(tags("new"), []string{"baseline=true"}) {
		t.Errorf("a failed tag changed another run: %v", tags("new"))
	}
}
