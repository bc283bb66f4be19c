package main

import (
	"context"
	"errors"
	"fmt"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func newCmdRoot(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tracehouse <command>",
		Short: "Turn PyTorch profiler traces from LLM serving into answers",
		Long: `tracehouse ingests torch.profiler (Kineto) Chrome traces from SGLang, vLLM,
TensorRT-LLM and TokenSpeed into an embedded DuckDB warehouse, and answers
from SQL: kernel, overlap and fusion triage, ad hoc queries, run comparison.`,
		Example: `  tracehouse ingest profiles/
  tracehouse runs
  tracehouse sql "SELECT family, sum(dur_ns)/1e6 AS ms FROM kernel_events GROUP BY 1 ORDER BY 2 DESC"`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	cmd.PersistentFlags().StringVar(&f.DB, "db", "", "warehouse file (default $TRACEHOUSE_DB or ./tracehouse.duckdb; :memory: for a throw-away one)")
	cmd.PersistentFlags().StringVar(&f.Format, "format", "table", "output format: table, markdown, json or csv")
	_ = cmd.RegisterFlagCompletionFunc("format", cobra.FixedCompletions([]string{"table", "markdown", "json", "csv"}, cobra.ShellCompDirectiveNoFileComp))
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return &usageError{err} })
	cmd.AddCommand(
		newCmdIngest(f, nil),
		newCmdRuns(f, nil),
		newCmdSQL(f, nil),
		newCmdCatalog(f, nil),
		newCmdTriage(f, nil),
		newCmdSynth(f, nil),
		newCmdReclassify(f),
		newCmdVersion(f),
	)
	return cmd
}

// run executes a command line and returns the exit code.
func run(args []string, io *IOStreams, getenv func(string) string) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	f := &Factory{IO: io, Getenv: getenv}
	root := newCmdRoot(f)
	root.SetArgs(args)
	root.SetIn(io.In)
	root.SetOut(io.Out)
	root.SetErr(io.ErrOut)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	var s *silentError
	if !errors.As(err, &s) {
		msg := err.Error()
		if strings.HasPrefix(msg, "unknown command") || strings.HasPrefix(msg, "unknown flag") ||
			strings.Contains(msg, "accepts") && strings.Contains(msg, "arg(s)") {
			err = &usageError{err}
		}
		fmt.Fprintf(io.ErrOut, "tracehouse: %s\n", oneLine(err.Error()))
		var u *usageError
		if errors.As(err, &u) {
			fmt.Fprintln(io.ErrOut, "Run 'tracehouse --help' for usage.")
		}
	}
	return exitCode(err)
}

// oneLine keeps an error to one line: users read it in a terminal or a CI log.
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ")), " ")
}

func newCmdVersion(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the tracehouse version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			_, err := fmt.Fprintf(f.IO.Out, "tracehouse %s\n", version)
			return err
		},
	}
}
