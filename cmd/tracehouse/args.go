package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tracehouse/tracehouse/vocab"
)

// Argument checks that report usage errors (exit 2), typed rather than
// recognised later by cobra's message text.

func minArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < n {
			return usagef("%s needs at least %d argument(s)", cmd.CommandPath(), n)
		}
		return nil
	}
}

func maxArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) > n {
			return usagef("%s takes at most %d argument(s), got %d", cmd.CommandPath(), n, len(args))
		}
		return nil
	}
}

func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usagef("%s needs exactly %s, got %d argument(s)", cmd.CommandPath(), what, len(args))
		}
		return nil
	}
}

// subcommandOnly is the argument check of a command that only groups
// subcommands: anything left over is an unknown subcommand.
func subcommandOnly(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
		if cmd.SuggestionsMinimumDistance <= 0 {
			cmd.SuggestionsMinimumDistance = 2 // cobra's own default
		}
		if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
			msg += "; did you mean " + strings.Join(s, " or ") + "?"
		}
		return usagef("%s", msg)
	}
	return nil
}

// showHelp runs a command that only groups subcommands.
func showHelp(cmd *cobra.Command, _ []string) error { return cmd.Help() }

// stageFlag parses --stage: a stage of vocab, or "all" (returned as "").
func stageFlag(stage string) (string, error) {
	s := strings.ToLower(stage)
	if s == "all" {
		return "", nil
	}
	st, ok := vocab.ParseStage(s)
	if !ok {
		return "", usagef("--stage %q: want prefill, decode, mixed, unknown or all", stage)
	}
	return st, nil
}

// rankFlag parses --rank: a rank number, or "all".
func rankFlag(rank string) (n int64, all bool, err error) {
	if strings.EqualFold(rank, "all") {
		return 0, true, nil
	}
	n, perr := strconv.ParseInt(rank, 10, 32)
	if perr != nil || n < 0 {
		return 0, false, usagef("--rank %q: want a rank number (0, 1, ...) or all", rank)
	}
	return n, false, nil
}

// parseTags reads repeated --tag key=value flags.
func parseTags(flags []string) (map[string]string, error) {
	tags := map[string]string{}
	for _, t := range flags {
		k, v, ok := strings.Cut(t, "=")
		if !ok || k == "" {
			return nil, usagef("--tag %q: want key=value", t)
		}
		tags[k] = v
	}
	return tags, nil
}

// checkOutput refuses an output that would replace its own input: the same
// name, or the same file (device and inode) reached through a symlink or
// a hard link. (The library refuses it too, with the other outputs it never
// writes; here it is a usage mistake.)
func checkOutput(in, out string) error {
	a, err1 := filepath.Abs(in)
	b, err2 := filepath.Abs(out)
	same := err1 == nil && err2 == nil && a == b
	if ist, err := os.Stat(in); err == nil {
		if ost, err := os.Stat(out); err == nil && os.SameFile(ist, ost) {
			same = true
		}
	}
	if same {
		return usagef("%s is the input (the same file): give another -o", out)
	}
	return nil
}
