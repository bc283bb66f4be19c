package capture

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tracehouse/tracehouse/vocab"
)

// Workloads.
const (
	// Both captures prefill, then decode (the default).
	Both = "both"
	// Prefill captures long prompts with one output token.
	Prefill = "prefill"
	// Decode captures short prompts with long outputs.
	Decode = "decode"
	// Legacy sends Options.Prompt with Options.MaxNewTokens.
	Legacy = "legacy"
)

// Workloads lists the workloads.
var Workloads = []string{Both, Prefill, Decode, Legacy}

// Options say what to capture and how. Start from Defaults(); Validate
// checks them (Capture does too).
type Options struct {
	// URL is the server's base URL, e.g. http://localhost:30000.
	URL string
	// Framework is sglang, vllm, trtllm or tokenspeed; "" detects it.
	Framework string
	// OutputDir is where the traces go. The server writes them itself, so
	// it must be a directory both it and this process see. vLLM and
	// TensorRT-LLM write into a directory of their own: OutputDir must be
	// that directory, and new files are copied below it.
	OutputDir string
	// Run labels the capture; the traces go to OutputDir/Run/<stage>/.
	// "" names it after the model and the time (plus "-" + Role).
	Run string
	// Role is mapping or formal in a two-trace capture, else "".
	Role string

	// Workload is both, prefill, decode or legacy.
	Workload string
	// WarmupSteps requests of each stage's shape go before the profiler is
	// armed; NumSteps forward steps are captured.
	WarmupSteps int
	NumSteps    int
	// Prompt lengths in words and output lengths in tokens.
	PrefillInputLen  int
	PrefillOutputLen int
	DecodeInputLen   int
	DecodeOutputLen  int
	// Prompt and MaxNewTokens are the legacy workload's request.
	Prompt       string
	MaxNewTokens int
	// ProfileByStage lets SGLang or TokenSpeed split EXTEND and DECODE
	// itself, in one profiling window.
	ProfileByStage bool
	// Ranks is how many trace files (one per rank) each stage waits for;
	// 0 reads it from the server's arguments when it says (TP x PP).
	Ranks int
	// FlushTimeout bounds the wait for the trace files of one stage.
	FlushTimeout time.Duration

	// Tuning; zero values take the defaults in brackets.
	// StableFor is how long a new file's size must stay put [2s].
	StableFor time.Duration
	// PollInterval is how often the output directory is listed [250ms].
	PollInterval time.Duration
	// StopGrace is how long SGLang and TokenSpeed, which stop after
	// num_steps by themselves, get to start writing before
	// /stop_profile is sent [5s].
	StopGrace time.Duration
	// RequestTimeout bounds each HTTP request, the profiler's stop
	// included; a probe that hangs longer fails the capture, which then
	// stops the profiler [10m].
	RequestTimeout time.Duration
	// Client sends the requests [a client without a timeout].
	Client *http.Client
	// Progress, when set, hears what is happening (from one goroutine).
	Progress func(Progress)
	// Now is the clock of the default run label [time.Now].
	Now func() time.Time
}

// Defaults are the command's defaults (the README's capture section
// names each).
func Defaults() Options {
	return Options{
		Workload:         Both,
		WarmupSteps:      10,
		NumSteps:         5,
		PrefillInputLen:  4090,
		PrefillOutputLen: 1,
		DecodeInputLen:   1,
		DecodeOutputLen:  2048,
		MaxNewTokens:     128,
		FlushTimeout:     300 * time.Second,
		RequestTimeout:   defaultRequestTimeout,
	}
}

// defaultRequestTimeout covers a 2048-token decode probe on a loaded,
// profiled server (profiling with stacks slows steps several times).
const defaultRequestTimeout = 10 * time.Minute

// OptionError is an invalid option. Its message names the option the way
// the command's flag is spelled, without dashes ("num-steps 0: want 1 or
// more"); the command adds them.
type OptionError struct {
	Option string // e.g. "num-steps"
	Value  string // as given, "" when missing
	Want   string
}

func (e *OptionError) Error() string {
	if e.Value == "" {
		return e.Option + ": " + e.Want
	}
	return e.Option + " " + e.Value + ": " + e.Want
}

// Validate checks the options; the error is an *OptionError.
func (o Options) Validate() error {
	bad := func(opt, val, want string) error { return &OptionError{Option: opt, Value: val, Want: want} }
	atLeast := func(opt string, v, lo int) error {
		if v < lo {
			return bad(opt, strconv.Itoa(v), fmt.Sprintf("want %d or more", lo))
		}
		return nil
	}
	if o.URL == "" {
		return bad("url", "", "required (the server's base URL, e.g. http://localhost:30000)")
	}
	if u, err := url.Parse(o.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return bad("url", strconv.Quote(o.URL), "want http://HOST:PORT")
	}
	if o.Framework != "" && !slices.Contains(vocab.Frameworks, o.Framework) {
		return bad("framework", strconv.Quote(o.Framework), "want one of "+strings.Join(vocab.Frameworks, ", "))
	}
	if o.OutputDir == "" {
		return bad("output-dir", "", "required (a directory both the server and tracehouse can see)")
	}
	if o.Run != "" && (strings.ContainsAny(o.Run, `/\`) || o.Run == "." || o.Run == "..") {
		return bad("run", strconv.Quote(o.Run), "want a label without slashes (it names a directory)")
	}
	if o.Role != "" && !slices.Contains(vocab.Roles, o.Role) {
		return bad("role", strconv.Quote(o.Role), "want mapping or formal")
	}
	if !slices.Contains(Workloads, o.Workload) {
		return bad("workload", strconv.Quote(o.Workload), "want one of "+strings.Join(Workloads, ", "))
	}
	for _, err := range []error{
		atLeast("warmup-steps", o.WarmupSteps, 0),
		atLeast("num-steps", o.NumSteps, 1),
		atLeast("prefill-input-len", o.PrefillInputLen, 1),
		atLeast("prefill-output-len", o.PrefillOutputLen, 1),
		atLeast("decode-input-len", o.DecodeInputLen, 1),
		atLeast("decode-output-len", o.DecodeOutputLen, 1),
		atLeast("max-new-tokens", o.MaxNewTokens, 1),
		atLeast("ranks", o.Ranks, 0),
	} {
		if err != nil {
			return err
		}
	}
	if o.Workload == Legacy && strings.TrimSpace(o.Prompt) == "" {
		return bad("prompt", "", "required by the legacy workload")
	}
	if o.Workload != Legacy && o.Prompt != "" {
		return bad("prompt", "", "only the legacy workload sends a prompt (add workload legacy)")
	}
	if o.ProfileByStage && o.Framework != "" && o.Framework != vocab.SGLang && o.Framework != vocab.TokenSpeed {
		return bad("profile-by-stage", "", "only SGLang and TokenSpeed split stages themselves")
	}
	if o.ProfileByStage && o.Workload == Legacy {
		return bad("profile-by-stage", "", "does not go with the legacy workload")
	}
	if o.FlushTimeout <= 0 {
		return bad("flush-timeout", o.FlushTimeout.String(), "want a positive duration, e.g. 300s")
	}
	if o.RequestTimeout <= 0 {
		return bad("request-timeout", o.RequestTimeout.String(), "want a positive duration, e.g. 10m")
	}
	return nil
}

// withTuning fills the tuning defaults.
func (o Options) withTuning() Options {
	if o.StableFor <= 0 {
		o.StableFor = 2 * time.Second
	}
	if o.PollInterval <= 0 {
		o.PollInterval = 250 * time.Millisecond
	}
	if o.StopGrace <= 0 {
		o.StopGrace = 5 * time.Second
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = defaultRequestTimeout
	}
	if o.Client == nil {
		o.Client = &http.Client{}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}
