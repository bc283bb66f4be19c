package queries

import (
	"context"
	"database/sql"
	"math"
	"slices"
	"testing"

	"github.com/tracehouse/tracehouse/schema/schematest"
)

// TestKernelSpread: launchDB's kernel_a on rank 0 ran 5000, 15000 and 2000
// ns: min 2000, median 5000, p90 at 1.8 of the sorted three = 5000 + 0.8 x
// 10000, max 15000, sample standard deviation sqrt(((5000-m)^2 +
// (15000-m)^2 + (2000-m)^2) / 2) with m their mean; kernel_b's two
// instances 1000 and 500 likewise. With every rank, kernel_a's 100 on
// rank 1 joins.
func TestKernelSpread(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := launchDB(t)
	rows, err := KernelSpread(ctx, f.db, LaunchParams{Run: 1, Rank: rankOf(0)})
	if err != nil {
		t.Fatal(err)
	}
	m := (5000.0 + 15000 + 2000) / 3
	sd := math.Sqrt(((5000-m)*(5000-m) + (15000-m)*(15000-m) + (2000-m)*(2000-m)) / 2)
	sdB := math.Sqrt(((1000-750.0)*(1000-750.0) + (500-750.0)*(500-750.0)) / 1)
	if len(rows) != 2 {
		t.Fatalf("rows %+v", rows)
	}
	a, b := rows[0], rows[1]
	if a.ShortName != "kernel_a" || a.Events != 3 || a.MinNS != 2000 || a.P50NS != 5000 || math.Abs(a.P90NS-13000) > 1e-9 ||
		a.MaxNS != 15000 || math.Abs(a.StddevNS.Float64-sd) > 1e-6 {
		t.Errorf("kernel_a %+v, want stddev %v", a, sd)
	}
	if b.ShortName != "kernel_b" || b.Events != 2 || b.MinNS != 500 || b.P50NS != 750 || math.Abs(b.P90NS-950) > 1e-9 ||
		b.MaxNS != 1000 || math.Abs(b.StddevNS.Float64-sdB) > 1e-6 {
		t.Errorf("kernel_b %+v", b)
	}
	rows, err = KernelSpread(ctx, f.db, LaunchParams{Run: 1, Stage: sql.NullString{String: "decode", Valid: true}})
	if err != nil || len(rows) != 2 || rows[0].Events != 4 || rows[0].MinNS != 100 || rows[0].P50NS != 3500 {
		t.Errorf("every rank: %+v %v", rows, err)
	}
	// one instance: no standard deviation
	var sdv sql.NullFloat64
	if err := f.db.QueryRow(`SELECT stddev_ns FROM kernel_spread('r1', rank := 1)`).Scan(&sdv); err != nil || sdv.Valid {
		t.Errorf("one instance: stddev %v %v", sdv, err)
	}
}

// TestKernelSpreadMatchesBruteForce: on every run and rank of the demo,
// each kernel's spread is the one computed here from its durations.
func TestKernelSpreadMatchesBruteForce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := schematest.Open(t, finishedDemoTemplate(t)).DB
	type key struct {
		run, rank   int64
		stage, name string
	}
	durs := map[key][]int64{}
	if err := scanAll(db, `SELECT k.run_id, k.rank, k.stage, n.short_name, k.dur_ns FROM kernels k JOIN kernel_names n USING (name_id)`,
		func(r *sql.Rows) error {
			var k key
			var d int64
			err := r.Scan(&k.run, &k.rank, &k.stage, &k.name, &d)
			durs[k] = append(durs[k], d)
			return err
		}); err != nil {
		t.Fatal(err)
	}
	close := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(1, math.Abs(b)) }
	checked, spread := 0, 0
	runRanks := map[[2]int64]bool{}
	for k := range durs {
		runRanks[[2]int64{k.run, k.rank}] = true
	}
	for rr := range runRanks {
		rows, err := KernelSpread(ctx, db, LaunchParams{Run: rr[0], Rank: rankOf(rr[1])})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for k := range durs {
			if k.run == rr[0] && k.rank == rr[1] {
				n++
			}
		}
		if len(rows) != n {
			t.Errorf("run %d rank %d: %d rows, want %d", rr[0], rr[1], len(rows), n)
		}
		for _, r := range rows {
			ds := durs[key{rr[0], rr[1], r.Stage, r.ShortName}]
			var sum float64
			for _, d := range ds {
				sum += float64(d)
			}
			mean := sum / float64(len(ds))
			var ss float64
			for _, d := range ds {
				ss += (float64(d) - mean) * (float64(d) - mean)
			}
			sdOK := len(ds) == 1 && !r.StddevNS.Valid || len(ds) > 1 && math.Abs(r.StddevNS.Float64-math.Sqrt(ss/float64(len(ds)-1))) <= 1e-6*max(1, mean)
			if r.Events != int64(len(ds)) || r.MinNS != slices.Min(ds) || r.MaxNS != slices.Max(ds) ||
				!close(r.P50NS, interpolated(ds, 0.5)) || !close(r.P90NS, interpolated(ds, 0.9)) || !sdOK {
				t.Errorf("run %d rank %d %s %s: %+v, durations %v", rr[0], rr[1], r.Stage, r.ShortName, r, ds)
			}
			checked++
			if r.MaxNS > r.MinNS {
				spread++
			}
		}
	}
	if checked == 0 || spread == 0 {
		t.Errorf("fixture: %d kernels checked, %d with any spread", checked, spread)
	}
}
