package main

import (
	"context"
	"errors"
	"fmt"
	"os/signal"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
)

func newCmdRoot(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tracehouse <command>",
		Short: "Turn PyTorch profiler traces from LLM serving into answers",
		Long: `tracehouse ingests torch.profiler (Kineto) Chrome traces from SGLang, vLLM,
TensorRT-LLM and TokenSpeed into an embedded DuckDB warehouse, and answers
from SQL: kernel, overlap and fusion triage, ad hoc queries, run comparison.`,
		Example: `  tracehouse ingest profiles/
  tracehouse runs
  tracehouse sql "SELECT family, sum(dur_ns) FROM kernel_events GROUP BY 1"`,
		Args:          subcommandOnly,
		RunE:          showHelp,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	// --version says what `tracehouse version` says but DuckDB's version
	// (that one opens the engine)
	ver, commit := buildVersion(debug.ReadBuildInfo())
	cmd.Version = ver
	cmd.SetVersionTemplate("tracehouse {{.Version}}\ncommit " + commit + "\n")
	cmd.PersistentFlags().StringVar(&f.db, "db", "", "warehouse file (default $TRACEHOUSE_DB or ./tracehouse.duckdb; :memory: for a throw-away one)")
	cmd.PersistentFlags().StringVar(&f.lake, "lake", "", "Parquet lake `DIR` to read instead of the warehouse (ingest and export write it)")
	cmd.PersistentFlags().StringVar(&f.format, "format", "table", "output format: table, markdown, json or csv")
	cmd.PersistentFlags().BoolVar(&f.wide, "wide", false, "table output: print every column in full instead of fitting the terminal ($COLUMNS, else 120)")
	cmd.PersistentPreRunE = func(c *cobra.Command, _ []string) error {
		if err := checkFormat(c); err != nil {
			return err
		}
		return f.checkLake(c)
	}
	_ = cmd.RegisterFlagCompletionFunc("format", cobra.FixedCompletions([]string{"table", "markdown", "json", "csv"}, cobra.ShellCompDirectiveNoFileComp))
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return &usageError{err} })
	// Flag descriptions wrap to the text width (cobra's own template,
	// with pflag's wrapped listing in place of the one-line one, and a
	// last line that fits 80 columns).
	if w := f.textWidth(); w > 0 {
		n := strconv.Itoa(w)
		cmd.SetUsageTemplate(strings.NewReplacer(
			".LocalFlags.FlagUsages", "(.LocalFlags.FlagUsagesWrapped "+n+")",
			".InheritedFlags.FlagUsages", "(.InheritedFlags.FlagUsagesWrapped "+n+")",
			"for more information about a command.", "for more about a command.").Replace(cmd.UsageTemplate()))
	}
	cmd.AddCommand(
		newCmdIngest(f, nil),
		newCmdRuns(f, nil),
		newCmdSQL(f, nil),
		newCmdSchema(f, nil),
		newCmdRm(f, nil),
		newCmdRename(f, nil),
		newCmdTag(f, nil),
		newCmdCatalog(f),
		newCmdTriage(f, nil),
		newCmdCapture(f, nil),
		newCmdCompare(f, nil),
		newCmdReport(f, nil),
		newCmdHistory(f, nil),
		newCmdSynth(f, nil),
		newCmdReclassify(f, nil),
		newCmdPerfettoFix(f, nil),
		newCmdSlice(f, nil),
		newCmdVersion(f, nil),
		newCmdExport(f, nil),
		newCmdCompact(f, nil),
	)
	// cobra's completion command, made now so that an unknown shell is a
	// usage error rather than its help and exit 0
	// (its scripts go to the writer it sees now)
	cmd.SetOut(f.IO.Out)
	cmd.InitDefaultCompletionCmd()
	for _, c := range cmd.Commands() {
		if c.Name() == "completion" {
			c.Args, c.RunE = subcommandOnly, showHelp
		}
	}
	fitHelp(cmd, f.textWidth())
	return cmd
}

// noFormat are the commands whose output is no table: --format would do
// nothing there, so giving it is a usage error. (report says so itself,
// naming its own flags.)
var noFormat = map[string]bool{
	"ingest": true, "export": true, "compact": true, "tag": true, "version": true,
	"rm": true, "rename": true, "reclassify": true, "completion": true,
}

// checkFormat refuses --format on a command that would ignore it.
func checkFormat(cmd *cobra.Command) error {
	top := cmd
	for top.HasParent() && top.Parent().HasParent() {
		top = top.Parent()
	}
	if noFormat[top.Name()] && cmd.Flags().Changed("format") {
		return usagef("--format does not apply to '%s': it prints no table", cmd.CommandPath())
	}
	return nil
}

// run executes a command line and returns the exit code.
func run(args []string, io *IOStreams, getenv func(string) string) int {
	// SIGHUP too: a dropped ssh session must let capture stop the profiler
	// and ingest roll back, as Ctrl-C does.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	f := &Factory{IO: io, Getenv: getenv}
	root := newCmdRoot(f)
	root.SetArgs(args)
	root.SetIn(io.In)
	root.SetOut(io.Out)
	root.SetErr(io.ErrOut)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return exitOK
	}
	if ctx.Err() != nil {
		// SIGINT, SIGTERM or SIGHUP stopped the command: the shell's 128 + SIGINT,
		// whatever error the cancelled work returned.
		var s *silentError
		if msg := oneLine(err.Error()); !errors.As(err, &s) {
			if !strings.Contains(msg, "interrupted") { // "prefill: interrupted, profiler stopped"
				msg = "interrupted: " + msg
			}
			fmt.Fprintf(io.ErrOut, "tracehouse: %s\n", msg)
		}
		return exitInterrupted
	}
	var s *silentError
	if !errors.As(err, &s) {
		msg := oneLine(err.Error())
		var se *sqlError
		if errors.As(err, &se) {
			msg = strings.TrimRight(se.Error(), "\n")
		}
		fmt.Fprintf(io.ErrOut, "tracehouse: %s\n", msg)
		var u *usageError
		if errors.As(err, &u) {
			fmt.Fprintf(io.ErrOut, "Run '%s --help' for usage.\n", cmd.CommandPath())
		}
	}
	return exitCode(err)
}
