package main

import (
	"bytes"
	"context"
	"fmt"
	"html/template"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// htmlFitCheck runs in the report page after it is laid out and writes
// what does not fit into <pre id="fit">: a table wider than its section
// (it would scroll sideways), a name column narrower than 150 px or than
// another column of its table, two equal labels in one chart, a chart
// label, legend or tick cut with an ellipsis inside a word or a name, a
// chart text outside its chart, a contents entry cut.
const htmlFitCheck = `
(function () {
  var out = [];
  function where(el) { var s = el.closest('section'); return s ? s.id : '?'; }
  // a chart text's own words, its wrapped lines (tspans) joined by a
  // space, without its tooltip
  function own(x) { return Array.prototype.filter.call(x.childNodes, function (n) { return n.nodeType === 3 || n.nodeName === 'tspan'; }).map(function (n) { return n.textContent; }).join(' '); }
  // an ellipsis beside a letter, digit or '_' cut a word or a name
  // ("kernel…concurrently", "sm100_fp8_gemm_1d1…"); one between
  // brackets, commas or blanks folds template arguments ("<…>", "<…, 7168u, …>")
  function cutInWord(t) { return /[A-Za-z0-9_]…|…[A-Za-z0-9_]/.test(t); }
  document.querySelectorAll('.tw').forEach(function (w) {
    var t = w.querySelector('table');
    if (t.scrollWidth > w.clientWidth + 1) out.push('table in ' + where(w) + ' (' + Array.prototype.map.call(t.tHead.rows[0].cells, function (c) { return c.textContent.trim(); }).join(', ') + ') is ' + t.scrollWidth + ' px in ' + w.clientWidth);
    var ths = t.tHead.rows[0].cells, name = null, widest = 0;
    for (var i = 0; i < ths.length; i++) {
      if (ths[i].classList.contains('name')) name = ths[i]; else widest = Math.max(widest, ths[i].offsetWidth);
    }
    if (name && (name.offsetWidth < 150 || name.offsetWidth < widest))
      out.push('name column in ' + where(w) + ' is ' + name.offsetWidth + ' px, another ' + widest);
  });
  document.querySelectorAll('svg.chart').forEach(function (s) {
    var seen = {}, vb = s.viewBox.baseVal;
    s.querySelectorAll('text.lbl').forEach(function (x) {
      if (seen[own(x)]) out.push('chart "' + s.getAttribute('aria-label') + '" has two labels ' + own(x));
      seen[own(x)] = 1;
    });
    s.querySelectorAll('text.lbl, text.leg, text.tick').forEach(function (x) {
      if (cutInWord(own(x))) out.push('chart "' + s.getAttribute('aria-label') + '" cuts a label inside a word: ' + own(x));
    });
    s.querySelectorAll('text.lbl, text.tick, text.val, text.leg').forEach(function (x) {
      var b = x.getBBox();
      if (b.x < -0.5 || b.x + b.width > vb.width + 0.5) out.push('chart "' + s.getAttribute('aria-label') + '" clips ' + own(x) + ' (' + b.x + '..' + (b.x + b.width) + ')');
    });
  });
  document.querySelectorAll('nav.toc li').forEach(function (li) {
    if (li.scrollWidth > li.clientWidth + 1) out.push('contents entry cut: ' + li.textContent);
  });
  // nothing else runs past the page's width either (a caption, a heading)
  var page = document.documentElement.clientWidth;
  if (document.documentElement.scrollWidth > page + 1) {
    out.push('the page is ' + document.documentElement.scrollWidth + ' px wide in ' + page);
    document.querySelectorAll('main *').forEach(function (e) {
      if (e.scrollWidth > e.clientWidth + 1 && !e.closest('.tw') && !e.closest('svg')) out.push('  ' + e.tagName + ' in ' + where(e) + ': ' + e.textContent.slice(0, 80));
    });
  }
  var tables = document.querySelectorAll('.tw').length, charts = document.querySelectorAll('svg.chart').length;
  var p = document.createElement('pre'); p.id = 'fit';
  p.textContent = 'width ' + page + ' tables ' + tables + ' charts ' + charts + '\n' + out.join('\n');
  document.body.appendChild(p);
})();`

// htmlFitToParent runs after htmlFitCheck in a frame of the checked page
// and copies what the check wrote into the page, as <pre id="fit-WIDTH">
// (a frame's own DOM is not in the page's dump).
const htmlFitToParent = `
(function () {
  var p = parent.document.createElement('pre');
  p.id = 'fit-' + window.innerWidth;
  p.textContent = document.getElementById('fit').textContent;
  parent.document.body.appendChild(p);
})();`

// TestReportHTMLFitsInBrowser renders the demo's report (every run, a
// comparison, a history) and lays it out in headless Chromium at 1000 and
// 1400 px (issue 34 item 5): no table scrolls sideways, the name column is
// the wide one, chart labels are distinct, whole (wrapped, never cut
// inside a word) and inside their chart, and
// contents entries wrap rather than being cut; nothing makes the page
// scroll sideways.
func TestReportHTMLFitsInBrowser(t *testing.T) {
	chromium := findChromium(t)
	t.Parallel()
	db := demoCopy(t)
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	code, _, errOut := runCmd(t, "--db", db, "report", "--html", page, "--compare", "sglang-llama,sglang-formal",
		"--history", "--metric step_time")
	if code != 0 {
		t.Fatalf("report: exit %d: %s", code, errOut)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	// The page's policy admits its own script only: the check goes in
	// with the policy taken out. Each width is a frame of one page (one
	// Chromium start, about 1.5 CPU-s, rather than one per width): a frame
	// lays the report out as a window of its width does (the same client
	// width, scrollbar included), and its check hands what it wrote to the
	// page, as <pre id="fit-WIDTH">.
	html := regexp.MustCompile(`<meta http-equiv="Content-Security-Policy"[^>]*>`).ReplaceAllString(string(b), "")
	html = strings.Replace(html, "</body>", "<script>"+htmlFitCheck+htmlFitToParent+"</script></body>", 1)
	widths := []int{1000, 1400}
	var frames strings.Builder
	for _, width := range widths {
		fmt.Fprintf(&frames, `<iframe style="display:block;border:0;width:%dpx;height:1000px" srcdoc="%s"></iframe>`, width, template.HTMLEscapeString(html))
	}
	checked := filepath.Join(dir, "checked.html")
	if err := os.WriteFile(checked, []byte(`<!DOCTYPE html><html><body style="margin:0">`+frames.String()+`</body></html>`), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--host-resolver-rules=MAP * ~NOTFOUND",
		fmt.Sprintf("--window-size=%d,1000", slices.Max(widths)), "--dump-dom", "file://"+checked)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	for _, width := range widths {
		m := regexp.MustCompile(fmt.Sprintf(`(?s)<pre id="fit-%d">(.*?)</pre>`, width)).FindStringSubmatch(stdout.String())
		if m == nil {
			t.Fatalf("at %d px the check wrote nothing:\n%s", width, stderr.String())
		}
		lines := strings.Split(strings.TrimSpace(m[1]), "\n")
		// the page has tables and charts to check: the demo's runs have
		// kernel, overlap and fuse tables and bar charts
		var tables, charts, client int
		if _, err := fmt.Sscanf(lines[0], "width %d tables %d charts %d", &client, &tables, &charts); err != nil || tables < 10 || charts < 5 {
			t.Errorf("at %d px: %q: too little checked", width, lines[0])
		}
		// a window of the width, less its vertical scrollbar
		if client > width || client < width-20 {
			t.Errorf("at %d px the frame's page is %d px wide", width, client)
		}
		for _, l := range lines[1:] {
			t.Errorf("at %d px: %s", width, l)
		}
	}
}
