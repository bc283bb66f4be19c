// Package tracefile rewrites Chrome-format torch.profiler traces without a
// warehouse: PerfettoFix writes a copy the Perfetto UI loads whole (GPU
// events overlapping on one lane spread over added lanes; string times,
// control characters and non-JSON numbers repaired), Slice a smaller trace
// holding only selected steps, stages, a time window or a rank.
//
// Both stream the input twice through ingest's front end (gzip detection,
// the byte splitter, fastjson per event, decimal times as integer
// nanoseconds, never float64) and keep memory flat: what grows with the
// trace goes to temporary files (the lane sort's runs, the slice's event
// index), unlinked as soon as they are created. Output is written under a
// temporary name and renamed into place when complete.
package tracefile
