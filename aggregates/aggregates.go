// Package aggregates owns the copies a warehouse keeps of what reports
// would otherwise compute from every event of a run: the per-kernel
// overlap and per-device busy time, the per-step aggregates (with the idle
// rows per step), and each rank's fuse-pattern and overlap-opportunity
// rows. It says what is saved and when a copy is due for saving (the
// *_pending statements), computes and stores the copies (Finish, called
// after every ingest), and gives readers steps found another way than
// those stored (ReadSteps). Whether a saved copy is current is not decided
// here: the SQL library defines it once per copy (_overlap_current,
// _steps_current, _fusion_current, _overlap_rows_current), and this
// package asks it like every reader.
//
// It sits above ingest (which stores the events and finds the steps) and
// below target and the commands.
package aggregates

import (
	"database/sql/driver"
	"embed"
	"math"
)

//go:embed sql/*.sql
var sqlFiles embed.FS

func stmt(name string) string {
	b, err := sqlFiles.ReadFile("sql/" + name + ".sql")
	if err != nil {
		// The files are embedded at build time; a missing one is a build bug.
		panic("aggregates: missing embedded sql/" + name + ".sql")
	}
	return string(b)
}

// null marks an absent kernel id in a swept row.
const null = math.MinInt64

// nullable is v for an appender, NULL when it is null.
func nullable(v int64) driver.Value {
	if v == null {
		return nil
	}
	return v
}
