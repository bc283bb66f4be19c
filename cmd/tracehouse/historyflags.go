package main

import (
	"io"

	"github.com/tracehouse/tracehouse/shellwords"
)

// The flags of 'tracehouse history' given as one value elsewhere (report
// --history 'FLAGS'), parsed by history's own flag set.

// parseHistoryArgs parses one `report --history` value: the flags of
// `tracehouse history`, split like a shell would ('...' and "..." quote,
// \ escapes), through history's own command, so that both take the same
// flags with the same checks. Mistakes are usage errors.
func parseHistoryArgs(f *Factory, value string) (*HistoryOptions, error) {
	words, err := shellwords.Split(value)
	if err != nil {
		return nil, usagef("--history %q: %v", value, err)
	}
	if len(words) == 0 { // and cobra would read os.Args
		return nil, usagef("--history %q: give the flags of 'tracehouse history', e.g. --history '--metric step_time'", value)
	}
	var got *HistoryOptions
	cmd := newCmdHistory(f, func(o *HistoryOptions) error { got = o; return nil })
	cmd.SetArgs(words)
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	if err := cmd.Execute(); err != nil {
		return nil, usagef("--history %q: %v (it takes the flags of 'tracehouse history')", value, err)
	}
	if got == nil { // --help
		return nil, usagef("--history %q: give the flags of 'tracehouse history' (see 'tracehouse history --help')", value)
	}
	if got.FailOnRegress {
		return nil, usagef("--history %q: --fail-on-regression gates 'tracehouse history', not a report", value)
	}
	return got, nil
}
