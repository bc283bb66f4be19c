package report

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestReportSortInBrowser runs the page's sorting script in headless
// Chromium on a table like the report's and clicks its headers: numbers
// (times in their own units) sort largest first then smallest first,
// values without a number last;
// text A-Z then Z-A; ties keep their current order; shortened names sort by the
// full name.
func TestReportSortInBrowser(t *testing.T) {
	chromium := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			chromium = p
			break
		}
	}
	if chromium == "" {
		t.Skip("chromium not found: install Debian's chromium (apt-get install chromium; .ci/run does) to run the browser test")
	}
	table := newPageTable(&Table{Columns: []Column{{Name: "Kernel"}, {Name: "GPU time", Right: true}, {Name: "p"}},
		Rows: [][]string{
			{"b" + strings.Repeat("x", 80) + "2", "1.50 ms", "p=0.010"},
			{"c", "900 µs", "~ (p=0.400)"},
			{"a", "n/a", "too few"},
			{"b" + strings.Repeat("x", 80) + "1", "1.50 ms", "p<0.001"},
		}})
	var tb bytes.Buffer
	if err := pageTemplate().ExecuteTemplate(&tb, "table", table); err != nil {
		t.Fatal(err)
	}
	// The driver clicks a header, reads the first cells' sort keys, and
	// writes the orders into the page for --dump-dom.
	driver := `
function order() { return Array.prototype.map.call(document.querySelectorAll('tbody tr'), function (r) {
  var c = r.cells[0]; return (c.getAttribute('data-sort') || c.textContent).slice(-1); }).join(''); }
var out = [], th = document.querySelectorAll('th button');
th[1].click(); out.push(order()); th[1].click(); out.push(order());
th[0].click(); out.push(order()); th[0].click(); out.push(order());
document.getElementById('out').textContent = out.join(',');`
	page := "<!DOCTYPE html><html><body>" + tb.String() + `<p id="out"></p><script>` + pageJS + "</script><script>" + driver + "</script></body></html>"
	dir := t.TempDir()
	file := filepath.Join(dir, "sort.html")
	if err := os.WriteFile(file, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--host-resolver-rules=MAP * ~NOTFOUND",
		"--dump-dom", "file://"+file)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	m := regexp.MustCompile(`<p id="out">([^<]*)</p>`).FindStringSubmatch(stdout.String())
	if m == nil {
		t.Fatalf("the driver wrote nothing:\n%s", stdout.String())
	}
	// GPU time: the two 1.50 ms in their order (2, 1), then 900 µs, n/a
	// last; then ascending, the tie in its current order and n/a still
	// last. Kernel: a, b...1, b...2, c by full name; then reversed.
	if want := "21ca,c21a,a12c,c21a"; m[1] != want {
		t.Errorf("orders %s, want %s", m[1], want)
	}
}
