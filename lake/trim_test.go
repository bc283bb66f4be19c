package lake

// The lake's tests open and close a DuckDB database per lake they read:
// linking schematest makes the test binary skip DuckDB's release of memory
// at each close (schematest/trim.go), 22-25 -> 20-22 CPU-s here.
import _ "github.com/tracehouse/tracehouse/schema/schematest"
