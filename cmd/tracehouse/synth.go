package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tracehouse/tracehouse/report"
	"github.com/tracehouse/tracehouse/synth"
	"github.com/tracehouse/tracehouse/vocab"
)

// SynthOptions are the parsed flags of `tracehouse synth`.
type SynthOptions struct {
	IO *IOStreams
	// Format and Width are how the list of written files prints.
	Format    report.Format
	Width     int
	Out       string
	Framework string
	Run       string
	Model     string
	Ranks     int
	Steps     int
	Layers    int
	Graph     bool
	Gzip      bool
	SizeMB    int64
	Stage     string
	MoE       bool
	Seed      int64
	Demo      bool
}

func newCmdSynth(f *Factory, runF func(*SynthOptions) error) *cobra.Command {
	opts := &SynthOptions{}
	cmd := &cobra.Command{
		Use:   "synth --out DIR",
		Short: "Write realistic synthetic traces (demos, tests, benchmarks)",
		Long: `Write seeded, realistic torch.profiler traces in a serving framework's file
layout and naming: SGLang (timestamp directory, -TP-<r>-EXTEND/-DECODE files,
server_args.json), vLLM (dp0_pp0_tp0_dcp0_ep0_rank0.<id>.pt.trace.json.gz with
per-step annotations), TensorRT-LLM (trace.json) or TokenSpeed (<id>-TP-<r>).
The same flags always write the same bytes. Prints the written files as a
table fitted to the width, paths under DIR; --format csv or json give each
file's path as written, for scripts.`,
		Example: `  tracehouse synth --out /tmp/traces --framework vllm --ranks 2
  tracehouse synth --out /tmp/big --size-mb 1000 --stage decode  # a 1 GB trace
  tracehouse synth --out /tmp/demo --demo                        # the demo set
  tracehouse synth --out /tmp/t --format csv | tail -n +2 | cut -d, -f1`,
		Args: maxArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			var err error
			opts.IO = f.IO
			opts.Width = f.textWidth()
			if opts.Format, err = f.outputFormat(); err != nil {
				return err
			}
			if opts.Out == "" {
				return usagef("--out DIR is required")
			}
			opts.Framework = strings.ToLower(opts.Framework)
			if !slices.Contains(vocab.Frameworks, opts.Framework) {
				return usagef("--framework %q: want one of %s", opts.Framework, strings.Join(vocab.Frameworks, ", "))
			}
			if opts.Stage != "" && opts.Stage != vocab.Prefill && opts.Stage != vocab.Decode {
				return usagef("--stage %q: want prefill or decode", opts.Stage)
			}
			if runF != nil {
				return runF(opts)
			}
			return synthRun(opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Out, "out", "", "output `DIR`")
	fl.StringVar(&opts.Framework, "framework", vocab.SGLang, strings.Join(vocab.Frameworks, ", "))
	fl.StringVar(&opts.Run, "run", "synthetic", "run directory name")
	fl.StringVar(&opts.Model, "model", "meta-llama/Llama-3.1-8B-Instruct", "model path written to server args")
	fl.IntVar(&opts.Ranks, "ranks", 1, "TP ranks (one file per rank)")
	fl.IntVar(&opts.Steps, "steps", 4, "forward steps per trace (ignored with --size-mb)")
	fl.IntVar(&opts.Layers, "layers", 8, "layers per step")
	fl.BoolVar(&opts.Graph, "graph", false, "CUDA-graph replays (a formal trace) instead of eager launches")
	fl.BoolVar(&opts.Gzip, "gzip", true, "gzip the traces (TensorRT-LLM traces are always plain)")
	fl.Int64Var(&opts.SizeMB, "size-mb", 0, "grow each trace to about this many MB of JSON")
	fl.StringVar(&opts.Stage, "stage", "", "write only prefill or decode steps")
	fl.BoolVar(&opts.MoE, "moe", false, "a mixture-of-experts model")
	fl.Int64Var(&opts.Seed, "seed", 1, "random seed")
	fl.BoolVar(&opts.Demo, "demo", false, "write the bundled demo set (all frameworks) instead")
	_ = cmd.RegisterFlagCompletionFunc("framework", cobra.FixedCompletions(vocab.Frameworks, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("stage", cobra.FixedCompletions([]string{vocab.Prefill, vocab.Decode}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func synthRun(opts *SynthOptions) error {
	var m synth.Manifest
	var err error
	if opts.Demo {
		m, err = synth.Demo(opts.Out)
	} else {
		m, err = synth.Generate(synth.Options{
			Framework: opts.Framework, Dir: opts.Out, Run: opts.Run, Model: opts.Model,
			Ranks: opts.Ranks, Steps: opts.Steps, Layers: opts.Layers, Graph: opts.Graph, Gzip: opts.Gzip,
			TargetBytes: opts.SizeMB << 20, Stage: opts.Stage, MoE: opts.MoE, Seed: opts.Seed, TimeBase: "base_ns",
		})
	}
	if err != nil {
		return err
	}
	d := synthDoc(opts.Out, m, opts.Format)
	d.Width = opts.Width
	return report.Render(opts.IO.Out, opts.Format, d)
}

// synthFileJSON is the JSON shape (and the CSV columns) of one written
// file; a test pins these names.
type synthFileJSON struct {
	Path      string `json:"path"`
	Events    int64  `json:"events"`
	GPUEvents int64  `json:"gpu_events"`
}

// synthDoc lists the files synth wrote. Text and markdown name DIR once
// and each file by its path under it, so that a file's row fits 80
// columns (a path under DIR wraps in its column rather than being cut;
// the counts move under the row when the line is short). CSV and JSON
// give each path as written, one file a row, for scripts: this, not
// tab-separated text, is how a script reads the list, as for every other
// tracehouse listing.
func synthDoc(dir string, m synth.Manifest, fm report.Format) report.Doc {
	js := make([]synthFileJSON, 0, len(m.Files))
	for _, f := range m.Files {
		js = append(js, synthFileJSON{f.Path, f.Events, f.GPUEvents})
	}
	if fm == report.CSV || fm == report.JSON {
		t := &report.Table{Name: "files", Columns: []report.Column{{Name: "path"}, {Name: "events", Right: true}, {Name: "gpu_events", Right: true}}}
		for _, f := range js {
			t.Rows = append(t.Rows, []string{f.Path, strconv.FormatInt(f.Events, 10), strconv.FormatInt(f.GPUEvents, 10)})
		}
		return report.Doc{Blocks: []any{t}, JSON: js}
	}
	t := &report.Table{Name: "files", Empty: "no files written",
		Columns: []report.Column{{Name: "File", Kernel: true, Wrap: true}, {Name: "Events", Right: true, Detail: 1}, {Name: "GPU events", Short: "GPU ev.", Right: true, Detail: 1}}}
	for _, f := range js {
		rel := f.Path
		if r, err := filepath.Rel(dir, f.Path); err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			rel = r
		}
		t.Rows = append(t.Rows, []string{rel, strconv.FormatInt(f.Events, 10), strconv.FormatInt(f.GPUEvents, 10)})
	}
	files := "files"
	if len(js) == 1 {
		files = "file"
	}
	head := report.Lines{fmt.Sprintf("Wrote %d trace %s under %s:", len(js), files, dir)}
	return report.Doc{Blocks: []any{head, t}}
}
