package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/tracehouse/tracehouse/catalog"
)

// runCatalog runs a command line with buffer streams; the warehouse path
// points at a file that must never be created (these commands do not open
// the warehouse).
func runCatalog(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	io, out, errOut := testIO("")
	db := filepath.Join(t.TempDir(), "never.duckdb")
	code = run(append([]string{"--db", db}, args...), io, testEnv)
	if _, err := os.Stat(db); err == nil {
		t.Errorf("%v opened the warehouse", args)
	}
	return code, out.String(), errOut.String()
}

// smallCatalog is a valid one-fusion, one-overlap catalog file.
const smallCatalog = `version: 1
fusions:
  - id: my-fusion
    name: My fusion
    framework: vllm
    origin: mainline
    fused: [my_fused_kernel]
    chain:
      - [alpha]
      - [beta]
    min_share: 0.5
    likely_share: 2
    sources: [src/my.py]
    rationale: Saves a launch.
overlaps:
  - id: my-overlap
    name: My overlap
    framework: sglang
    origin: upstream
    keywords: [alt_stream]
    sources: [src/o.py]
    rationale: Hides a copy.
`

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCatalogList(t *testing.T) {
	t.Parallel()
	def := catalog.Default()
	// --wide: every column on the row's line (width_golden_test holds
	// the fitted layout)
	code, out, errOut := runCatalog(t, "--wide", "catalog", "list")
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if !strings.HasPrefix(lines[0], "ID") || !strings.Contains(lines[0], "Switch") {
		t.Errorf("header %q", lines[0])
	}
	if n := len(lines) - 2; n != len(def.Fusions)+len(def.Overlaps) {
		t.Errorf("%d rows, want %d", n, len(def.Fusions)+len(def.Overlaps))
	}
	first := strings.Fields(lines[2])
	if want := []string{def.Fusions[0].ID, "fusion", def.Fusions[0].Framework, def.Fusions[0].Origin}; !slices.Equal(first[:4], want) {
		t.Errorf("first row %q, want it to start %q", lines[2], want)
	}

	// csv, filtered: one row per trtllm entry, counted from the catalog
	code, out, _ = runCatalog(t, "catalog", "list", "--framework", "trtllm", "--format", "csv")
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if code != 0 || err != nil {
		t.Fatalf("exit %d, %v", code, err)
	}
	want := 0
	for _, f := range def.Fusions {
		if f.Framework == "trtllm" {
			want++
		}
	}
	for _, o := range def.Overlaps {
		if o.Framework == "trtllm" {
			want++
		}
	}
	if len(recs)-1 != want {
		t.Errorf("%d trtllm rows, want %d", len(recs)-1, want)
	}
	for _, r := range recs[1:] {
		if r[2] != "trtllm" {
			t.Errorf("row %q is not trtllm", r)
		}
	}

	// a user's catalog file
	code, out, _ = runCatalog(t, "catalog", "list", "--catalog", writeFile(t, "c.yaml", smallCatalog), "--format", "markdown")
	if code != 0 || !strings.Contains(out, "| my-fusion | fusion | vllm | mainline | 2 | - | 0.5 / 2 | 0 | - |") ||
		!strings.Contains(out, "| my-overlap | overlap | sglang | upstream | - | - | - | - | - |") {
		t.Errorf("exit %d, markdown:\n%s", code, out)
	}

	code, _, errOut = runCatalog(t, "catalog", "list", "--kind", "fusions")
	if code != exitUsage || !strings.Contains(errOut, `--kind "fusions": want fusion or overlap`) {
		t.Errorf("bad --kind: exit %d, stderr %q", code, errOut)
	}
}

// TestCatalogJSONFields pins the JSON field names of list and show.
func TestCatalogJSONFields(t *testing.T) {
	t.Parallel()
	keys := func(m map[string]any) string {
		var k []string
		for key := range m {
			k = append(k, key)
		}
		sort.Strings(k)
		return strings.Join(k, ",")
	}
	code, out, _ := runCatalog(t, "catalog", "list", "--catalog", writeFile(t, "c.yaml", smallCatalog), "--format", "json")
	var list []map[string]any
	if err := json.Unmarshal([]byte(out), &list); code != 0 || err != nil || len(list) != 2 {
		t.Fatalf("exit %d, %v, %d entries", code, err, len(list))
	}
	if got, want := keys(list[0]), "chain,framework,fused,id,kind,likely_share,max_between,max_gap_us,min_share,min_tp,name,ordered,origin,priority,rationale,sources,switch"; got != want {
		t.Errorf("fusion keys %s, want %s", got, want)
	}
	if got, want := keys(list[1]), "framework,id,keywords,kind,name,origin,rationale,sources,switch"; got != want {
		t.Errorf("overlap keys %s, want %s", got, want)
	}
	if list[0]["switch"] != nil || list[0]["max_gap_us"] != 50.0 || list[0]["ordered"] != true {
		t.Errorf("defaults in JSON: %v", list[0])
	}

	code, out, _ = runCatalog(t, "catalog", "show", "sglang-qwen3-fused-qknorm-mrope-cache", "--format", "json")
	var one map[string]any
	if err := json.Unmarshal([]byte(out), &one); code != 0 || err != nil {
		t.Fatalf("exit %d, %v", code, err)
	}
	if got, want := keys(one), "chain,framework,fused,id,kind,likely_share,max_between,max_gap_us,min_share,min_tp,models_any,models_none,name,ordered,origin,priority,rationale,sources,subsumes,switch"; got != want {
		t.Errorf("show keys %s, want %s", got, want)
	}
}

func TestCatalogShow(t *testing.T) {
	t.Parallel()
	e, _ := catalog.Default().Fusion("sglang-flashinfer-allreduce-fusion")
	// --wide: each value whole on its field's line
	code, out, errOut := runCatalog(t, "--wide", "catalog", "show", e.ID)
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	fields := map[string]string{}
	for _, l := range strings.Split(out, "\n")[2:] {
		if l == "" {
			continue
		}
		// field names are at most two words ("chain step 1")
		k, v, _ := strings.Cut(l, "  ")
		fields[k] = strings.TrimSpace(v)
	}
	for k, want := range map[string]string{
		"id":           e.ID,
		"switch":       e.Switch,
		"min_tp":       "2",
		"chain step 1": strings.Join(e.Chain[0], " / "),
		"chain step 2": strings.Join(e.Chain[1], " / "),
		"sources":      strings.Join(e.Sources, ", "),
		"models_any":   "-",
		"rationale":    e.Rationale,
	} {
		if fields[k] != want {
			t.Errorf("%s = %q, want %q", k, fields[k], want)
		}
	}

	code, out, errOut = runCatalog(t, "catalog", "show", "allreduce")
	if code != exitError || out != "" ||
		errOut != "tracehouse: no catalog entry with id \"allreduce\"; did you mean sglang-flashinfer-allreduce-fusion, sglang-aiter-allreduce-fusion, sglang-fused-moe-sum-allreduce?\n" {
		t.Errorf("unknown id: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if code, _, _ := runCatalog(t, "catalog", "show"); code != exitUsage {
		t.Errorf("show without id: exit %d", code)
	}
}

func TestCatalogCheck(t *testing.T) {
	t.Parallel()
	good := writeFile(t, "good.yaml", smallCatalog)
	emb := writeFile(t, "embedded.yaml", string(catalog.Embedded()))
	def := catalog.Default()
	code, out, errOut := runCatalog(t, "catalog", "check", good, emb)
	want := fmt.Sprintf("%s: ok (1 fusions, 1 overlaps)\n%s: ok (%d fusions, %d overlaps)\n", good, emb, len(def.Fusions), len(def.Overlaps))
	if code != 0 || out != want || errOut != "" {
		t.Errorf("exit %d\nstdout %q\nwant   %q\nstderr %q", code, out, want, errOut)
	}

	// two problems, each on its line with position, entry and field
	bad := writeFile(t, "bad.yaml", strings.Replace(strings.Replace(smallCatalog,
		"    min_share: 0.5\n", "    min_share: 0.5\n    max_between: -1\n", 1),
		"framework: sglang", "framework: pytorch", 1))
	code, out, errOut = runCatalog(t, "catalog", "check", bad, good)
	wantErr := bad + `:12: fusions[0] (my-fusion): max_between: want a number >= 0, got -1` + "\n" +
		bad + `:19: overlaps[0] (my-overlap): framework: want one of sglang, vllm, trtllm, tokenspeed, flashinfer; got "pytorch"` + "\n"
	if code != exitError || out != good+": ok (1 fusions, 1 overlaps)\n" || errOut != wantErr {
		t.Errorf("exit %d\nstdout %q\nstderr %q\nwant   %q", code, out, errOut, wantErr)
	}

	missing := filepath.Join(t.TempDir(), "missing.yaml")
	code, _, errOut = runCatalog(t, "catalog", "check", missing)
	if code != exitError || !strings.HasPrefix(errOut, missing+": read catalog: ") || strings.Count(errOut, "\n") != 1 {
		t.Errorf("missing file: exit %d, stderr %q", code, errOut)
	}

	code, out, _ = runCatalog(t, "catalog", "check", "--format", "json", good, bad)
	var res []catalogCheckJSON
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != exitError || len(res) != 2 ||
		!res[0].OK || res[1].OK || len(res[1].Problems) != 2 {
		t.Errorf("json: exit %d, %v, %+v", code, err, res)
	}

	if code, _, errOut := runCatalog(t, "catalog", "check"); code != exitUsage || !strings.Contains(errOut, "needs at least 1 argument") {
		t.Errorf("check without files: exit %d, stderr %q", code, errOut)
	}
}

// TestCatalogOptions checks the parsed options a run function receives.
func TestCatalogOptions(t *testing.T) {
	t.Parallel()
	io, _, _ := testIO("")
	f := &Factory{IO: io, Getenv: testEnv}
	// Each verb's parsed flags, as its run function receives them.
	type parsed struct {
		Verb, File, Kind, Framework, ID string
		Files                           []string
	}
	var got []parsed
	run := func(cmd *cobra.Command, args ...string) {
		t.Helper()
		cmd.SetArgs(args)
		if err := cmd.Execute(); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
	}
	run(newCmdCatalogList(f, func(o *CatalogListOptions) error {
		got = append(got, parsed{Verb: "list", File: o.File, Kind: o.Kind, Framework: o.Framework})
		return nil
	}), "--kind", "overlap", "--framework", "vllm", "--catalog", "c.yaml")
	run(newCmdCatalogShow(f, func(o *CatalogShowOptions) error {
		got = append(got, parsed{Verb: "show", File: o.File, ID: o.ID})
		return nil
	}), "x-id", "--catalog", "c.yaml")
	run(newCmdCatalogCheck(f, func(o *CatalogCheckOptions) error {
		got = append(got, parsed{Verb: "check", Files: o.Files})
		return nil
	}), "a.yaml", "b.yaml")
	want := []parsed{
		{Verb: "list", File: "c.yaml", Kind: "overlap", Framework: "vllm"},
		{Verb: "show", File: "c.yaml", ID: "x-id"},
		{Verb: "check", Files: []string{"a.yaml", "b.yaml"}},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("options\n got %+v\nwant %+v", got, want)
	}

	if code, out, _ := runCatalog(t, "catalog", "--help"); code != 0 || !strings.Contains(out, "tracehouse catalog check my-catalog.yaml") {
		t.Errorf("help: exit %d\n%s", code, out)
	}
}
