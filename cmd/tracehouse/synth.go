package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tracehouse/tracehouse/synth"
	"github.com/tracehouse/tracehouse/vocab"
)

// SynthOptions are the parsed flags of `tracehouse synth`.
type SynthOptions struct {
	IO        *IOStreams
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
The same flags always write the same bytes. Prints the written files.`,
		Example: `  tracehouse synth --out /tmp/traces --framework vllm --ranks 2
  tracehouse synth --out /tmp/big --size-mb 1000 --stage decode  # a 1 GB trace
  tracehouse synth --out /tmp/demo --demo                        # the demo set`,
		Args: maxArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.IO = f.IO
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
	for _, file := range m.Files {
		fmt.Fprintf(opts.IO.Out, "%s\t%d events\t%d GPU events\n", file.Path, file.Events, file.GPUEvents)
	}
	return nil
}
