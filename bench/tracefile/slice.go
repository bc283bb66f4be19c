package main

import (
	"context"
	"fmt"
	"os"

	"github.com/tracehouse/tracehouse/tracefile"
)

// benchSlice keeps ten decode steps from the middle of the trace's first
// stretch: the work is the two passes over the whole trace either way.
func benchSlice(ctx context.Context, in, out string) (int64, error) {
	res, err := tracefile.Slice(ctx, in, out, tracefile.SliceOptions{
		Steps: &tracefile.StepRange{First: 10, Last: 19}, Stage: "decode", Force: true})
	if err != nil {
		return 0, err
	}
	fmt.Fprintf(os.Stderr, "kept %d of %d events, %d of %d GPU events; %d steps from %s\n",
		res.Kept, res.Events, res.KeptGPU, res.GPUEvents, res.Steps, res.StepSource)
	return res.InBytes, nil
}
