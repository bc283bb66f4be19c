// Command scale measures issue 38's rows: how tracehouse behaves when a
// team keeps using it for months (a warehouse and a lake of 1,000 runs),
// and ingest's memory and speed on traces dense in events. Every command
// is the CLI, built from this tree (or -cli PATH), run as its own process;
// wall clock from the parent, CPU time (user + system) and peak resident
// set from the child's rusage.
//
//	go run ./bench/scale                  # the warehouse and lake rows (builds bench/out/scale once)
//	go run ./bench/scale -cases memory    # peak memory, throughput and CPU of single large traces
//	go run ./bench/scale -cases all -n 7  # both, 7 repetitions of each timed command
//
// Generated data is kept in -data and reused; -rebuild builds it again.
// The rows, each with its target, go to stdout; everything else to stderr.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tracehouse/tracehouse/bench/buildcli"
	"github.com/tracehouse/tracehouse/bench/host"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench/scale:", err)
		os.Exit(1)
	}
}

// config is what the flags say.
type config struct {
	data    string // generated traces, warehouses, lakes
	bin     string // the tracehouse binary
	n       int    // repetitions of each timed command
	series  int    // new runs ingested one after another into each copy, after the first (ingest row)
	memN    int    // ingests of each 1 GB trace
	lakeN   int    // repetitions of each lake command
	cases   map[string]bool
	memMB   int64 // size of the dense traces
	runs    int   // runs in the large warehouse
	small   int   // runs in the small one
	batch   int   // runs per ingest while building
	rebuild bool
}

func run() error {
	var c config
	cases := flag.String("cases", "warehouse", "which rows, comma-separated: ingest, readers, history, lake, size, rm (together: warehouse), memory, or all")
	flag.StringVar(&c.data, "data", filepath.Join("bench", "out", "scale"), "directory for generated traces, warehouses and lakes")
	flag.StringVar(&c.bin, "cli", "", "tracehouse binary to measure (default: built from this tree)")
	flag.IntVar(&c.n, "n", 5, "repetitions of each timed command (alternated between the sides of a ratio)")
	flag.IntVar(&c.series, "series", 4, "ingest row: new runs ingested one after another into each copy after the first (run 1,001); the ratio is their median, the first after the copy is shown beside (0: the first only)")
	flag.IntVar(&c.lakeN, "lake-n", 1, "repetitions of each command over the large lake")
	flag.IntVar(&c.memN, "mem-n", 1, "ingests of each dense trace (memory cases)")
	flag.Int64Var(&c.memMB, "mem-size", 1000, "MB of JSON in each dense trace (memory cases)")
	flag.IntVar(&c.runs, "runs", 1000, "runs in the large warehouse and lake")
	flag.IntVar(&c.small, "small", 10, "runs in the small warehouse and lake")
	flag.IntVar(&c.batch, "batch", 50, "runs per ingest command while building the large warehouse (a team ingests run by run; one command for all would be quicker to build but lay the file out differently)")
	flag.BoolVar(&c.rebuild, "rebuild", false, "generate and build everything again")
	flag.Parse()
	c.cases = map[string]bool{}
	for _, name := range strings.Split(*cases, ",") {
		switch name {
		case "all":
			c.cases["memory"] = true
			fallthrough
		case "warehouse":
			for _, w := range warehouseCases {
				c.cases[w] = true
			}
		case "memory":
			c.cases[name] = true
		default:
			if !slices.Contains(warehouseCases, name) {
				return fmt.Errorf("-cases %q: unknown case %q (want %s, warehouse, memory or all)", *cases, name, strings.Join(warehouseCases, ", "))
			}
			c.cases[name] = true
		}
	}
	ctx := context.Background()
	if err := os.MkdirAll(c.data, 0o755); err != nil {
		return err
	}
	if c.bin == "" {
		bin, err := buildcli.Build(ctx, c.data)
		if err != nil {
			return err
		}
		c.bin = bin
	}
	fmt.Fprintln(os.Stderr, "before:", host.Speed())
	var rows []row
	add := func(r row) {
		rows = append(rows, r)
		fmt.Fprintf(os.Stderr, "row: %s: %s (target %s)\n", r.what, r.figure, r.target)
	}
	if slices.ContainsFunc(warehouseCases, func(w string) bool { return c.cases[w] }) {
		if err := warehouseRows(ctx, c, add); err != nil {
			printRows(rows)
			return err
		}
	}
	if c.cases["memory"] {
		if err := memoryRows(ctx, c, add); err != nil {
			printRows(rows)
			return err
		}
	}
	fmt.Fprintln(os.Stderr, "after:", host.Speed())
	printRows(rows)
	return nil
}

// warehouseCases are the rows over the 1,000-run warehouse and lake.
var warehouseCases = []string{"ingest", "readers", "history", "lake", "size", "rm"}

// row is one line of issue 38's table: what was measured, the figure, the
// target, and whether the figure meets it (met is nil for a row that is
// reported only).
type row struct {
	what, figure, target string
	met                  *bool
}

func judged(ok bool) *bool { return &ok }

// printRows writes the rows as an aligned table, then how many met their
// target, on the last line.
func printRows(rows []row) {
	w0, w1 := len("case"), len("figure")
	for _, r := range rows {
		w0, w1 = max(w0, len(r.what)), max(w1, len(r.figure))
	}
	fmt.Printf("%-*s  %-*s  %s\n", w0, "case", w1, "figure", "target")
	met, judgedRows := 0, 0
	for _, r := range rows {
		verdict := ""
		if r.met != nil {
			judgedRows++
			verdict = "  NOT MET"
			if *r.met {
				met++
				verdict = "  met"
			}
		}
		fmt.Printf("%-*s  %-*s  %s%s\n", w0, r.what, w1, r.figure, r.target, verdict)
	}
	fmt.Printf("scale: %d of %d judged rows met\n", met, judgedRows)
}

// mib formats bytes as MiB.
func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

// joinArgs is a command line for messages.
func joinArgs(args []string) string {
	if len(args) > 8 {
		return strings.Join(args[:8], " ") + fmt.Sprintf(" ... (%d arguments)", len(args))
	}
	return strings.Join(args, " ")
}
