package schema

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"strings"
	"testing"

	"github.com/tracehouse/tracehouse/migrations"
)

// landedSums is the checksum of every landed migration, in sha256sum's
// format (`sha256sum -c` checks it from migrations/).
const landedSums = "../migrations/landed.sha256"

// TestLandedMigrationsUnchanged pins every migration to its checksum: a
// warehouse that applied a migration never runs it again, so editing one
// after it landed makes old and new warehouses differ without either
// knowing. A change belongs in a new migration. Adding one means adding
// its line: `sha256sum 00NN_name.sql >> landed.sha256` in migrations/.
func TestLandedMigrationsUnchanged(t *testing.T) {
	t.Parallel()
	f, err := os.Open(landedSums)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pinned := map[string]string{}
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok || len(sum) != 64 {
			t.Fatalf("%s:%d: want `<sha256>  <file>`, got %q", landedSums, line, sc.Text())
		}
		pinned[name] = sum
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	names, err := fs.Glob(migrations.FS, "*.sql")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		b, err := fs.ReadFile(migrations.FS, name)
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.Sum256(b)
		got := hex.EncodeToString(h[:])
		want, ok := pinned[name]
		switch {
		case !ok:
			t.Errorf("migration %s is not pinned: once it is final, run `sha256sum %s >> landed.sha256` in migrations/", name, name)
		case got != want:
			t.Errorf("migration %s changed after it landed (sha256 %s, pinned %s): undo the edit and put the change in a new migration", name, got, want)
		}
		delete(pinned, name)
	}
	for name := range pinned {
		t.Errorf("%s pins %s, which is not a migration (a landed migration was removed or renamed)", landedSums, name)
	}
}
