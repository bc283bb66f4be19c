package capture

import (
	"fmt"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
)

// Phases of a capture, in order.
const (
	PhaseDetect  = "detect"  // finding the framework and the model
	PhaseWarmup  = "warmup"  // requests before the profiler is armed
	PhaseProfile = "profile" // profiler armed, probes being sent
	PhaseStop    = "stop"    // waiting for the server to stop by itself, or stopping it
	PhaseFlush   = "flush"   // waiting for the trace files
	PhaseDone    = "done"    // the stage's traces are complete (or it failed)
)

// Progress is what a capture is doing, for a progress line.
type Progress struct {
	// Role is the two-trace role ("" outside a pair); Stage the stage
	// being captured (prefill, decode, mixed, or by-stage).
	Role  string
	Stage string
	Phase string
	// Requests sent in this phase, of RequestsWant.
	Requests     int
	RequestsWant int
	// Steps being captured.
	Steps int
	// Files: new trace files seen, of FilesWant (0 when the server does
	// not say how many ranks it has).
	Files     int
	FilesWant int
	// Bytes in the new files, and Growing of them in files still changing.
	Bytes   int64
	Growing int64
	// Waited is the time spent waiting for the files so far.
	Waited time.Duration
}

// String is the progress line.
func (p Progress) String() string {
	var b strings.Builder
	if p.Role != "" {
		b.WriteString(p.Role + " ")
	}
	if p.Stage != "" {
		b.WriteString(p.Stage + ": ")
	}
	switch p.Phase {
	case PhaseDetect:
		b.WriteString("asking the server what it runs")
	case PhaseWarmup:
		fmt.Fprintf(&b, "warm-up, %d/%d requests sent", p.Requests, p.RequestsWant)
	case PhaseProfile:
		fmt.Fprintf(&b, "profiling %d steps, %d/%d requests sent", p.Steps, p.Requests, p.RequestsWant)
	case PhaseStop:
		b.WriteString("stopping the profiler")
	case PhaseFlush, PhaseDone:
		if p.Phase == PhaseFlush {
			b.WriteString("waiting for traces: ")
		} else {
			b.WriteString("traces complete: ")
		}
		if p.FilesWant > 0 {
			fmt.Fprintf(&b, "%d/%d files", p.Files, p.FilesWant)
		} else {
			fmt.Fprintf(&b, "%d files", p.Files)
		}
		fmt.Fprintf(&b, ", %s", mb(p.Bytes))
		if p.Growing > 0 {
			fmt.Fprintf(&b, " (%s still growing)", mb(p.Growing))
		}
		fmt.Fprintf(&b, ", %ds", int(p.Waited.Seconds()))
	default:
		b.WriteString(p.Phase)
	}
	return b.String()
}

// mb is a byte count for people ("70 kB", "12 MB", not "0.0 MB").
func mb(n int64) string {
	if n < 0 {
		n = 0
	}
	return humanize.Bytes(uint64(n))
}
