package ingest

import (
	"context"
	"path/filepath"
	"testing"
)

// TestInvalidUTF8CountedEachTime: names are checked for UTF-8 once per
// distinct valid name (decoder.intern), but an invalid one is repaired,
// and its warning counted, every time it is met, whatever the cache holds.
func TestInvalidUTF8CountedEachTime(t *testing.T) {
	t.Parallel()
	kernel := func(name string) string {
		return `{"ph":"X","cat":"kernel","name":"` + name + `","pid":0,"tid":7,"ts":10,"dur":3,"args":{"device":0,"stream":7}}`
	}
	frame := `{"ph":"X","cat":"python_function","name":"a\xff.py(1): f","pid":1,"tid":2,"ts":2,"dur":40,"args":{"Python id":1}}`
	other := `{"ph":"X","cat":"over\xffhead","name":"x\xfe","pid":1,"tid":2,"ts":2,"dur":1}`
	path := filepath.Join(t.TempDir(), "u.trace.json")
	writeFile(t, path, rawBytes(traceJSON("", kernel("ok"), kernel("bad\xff"), kernel("ok"), kernel("bad\xff"), frame,
		kernel("bad\xff"), frame, other, kernel("ok"))))
	w := openMemory(t)
	res, err := Ingest(context.Background(), w, []string{path}, Options{})
	if err != nil || res.Failed() != 0 {
		t.Fatalf("%v %+v", err, res.Files)
	}
	// 3 kernels and 2 frames repaired, the other event's cat and name
	got := mustCSV(t, w.DB, `SELECT warnings, warning_notes FROM traces`)
	if want := "warnings,warning_notes\n7,[7 x string with invalid UTF-8 stored with U+FFFD in its place]\n"; got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	if got, want := mustCSV(t, w.DB, `SELECT count(*) AS n, count(DISTINCT name_id) AS names FROM kernels`), "n,names\n6,2\n"; got != want {
		t.Fatalf("kernels:\n%s\nwant\n%s", got, want)
	}
}
