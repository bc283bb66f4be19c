package capture

import (
	"context"
	"errors"
	"strings"

	"github.com/tracehouse/tracehouse/vocab"
)

// profileRequest is one arming of the profiler.
type profileRequest struct {
	dir      string // absolute directory the server writes into (SGLang, TokenSpeed)
	prefix   string // file name prefix: tracehouse-<stage>
	numSteps int
	byStage  bool
}

// driver speaks one framework's HTTP API.
type driver struct {
	fw string
	c  *client
	// model is the id OpenAI-style requests name.
	model string
	// chat is set once /v1/completions answered 404: probes go to
	// /v1/chat/completions.
	chat bool
}

// sglangStart is SGLang's /start_profile body.
type sglangStart struct {
	OutputDir      string   `json:"output_dir"`
	NumSteps       int      `json:"num_steps"`
	Activities     []string `json:"activities"`
	WithStack      bool     `json:"with_stack"`
	RecordShapes   bool     `json:"record_shapes"`
	ProfileByStage bool     `json:"profile_by_stage"`
	MergeProfiles  bool     `json:"merge_profiles"`
	ProfilePrefix  string   `json:"profile_prefix"`
}

// tokenspeedStart is TokenSpeed's /start_profile body.
type tokenspeedStart struct {
	OutputDir      string   `json:"output_dir"`
	Activities     []string `json:"activities"`
	WithStack      bool     `json:"with_stack"`
	RecordShapes   bool     `json:"record_shapes"`
	ProfileID      string   `json:"profile_id"`
	NumSteps       int      `json:"num_steps"`
	ProfileByStage bool     `json:"profile_by_stage,omitempty"`
}

// sglangGenerate is SGLang's native /generate body.
type sglangGenerate struct {
	Text           string `json:"text"`
	SamplingParams struct {
		Temperature  int `json:"temperature"`
		MaxNewTokens int `json:"max_new_tokens"`
	} `json:"sampling_params"`
	Stream bool `json:"stream"`
}

// completion is the OpenAI-style /v1/completions body. ignore_eos keeps
// every request at its planned length (vLLM, TensorRT-LLM and TokenSpeed
// accept it).
type completion struct {
	Model       string `json:"model"`
	Prompt      string `json:"prompt"`
	MaxTokens   int    `json:"max_tokens"`
	Temperature int    `json:"temperature"`
	Seed        int    `json:"seed"`
	IgnoreEOS   bool   `json:"ignore_eos"`
	Stream      bool   `json:"stream"`
}

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type chatCompletion struct {
	Model       string        `json:"model"`
	Messages    []chatMessage `json:"messages"`
	MaxTokens   int           `json:"max_tokens"`
	Temperature int           `json:"temperature"`
	Seed        int           `json:"seed"`
	IgnoreEOS   bool          `json:"ignore_eos"`
	Stream      bool          `json:"stream"`
}

// stopsItself says whether the server ends the profile after num_steps on
// its own (then /stop_profile is sent only when no trace appears).
func (d *driver) stopsItself() bool {
	return d.fw == vocab.SGLang || d.fw == vocab.TokenSpeed
}

// writesOwnDir says whether the server writes into a directory of its own
// (its files are then copied into the stage's directory).
func (d *driver) writesOwnDir() bool {
	return d.fw == vocab.VLLM || d.fw == vocab.TRTLLM
}

// generate sends one request and waits for its answer.
func (d *driver) generate(ctx context.Context, text string, maxNew int) error {
	if d.fw == vocab.SGLang {
		var g sglangGenerate
		g.Text = text
		g.SamplingParams.MaxNewTokens = maxNew
		_, err := d.c.do(ctx, "POST", "/generate", g)
		return err
	}
	if !d.chat {
		_, err := d.c.do(ctx, "POST", "/v1/completions", completion{Model: d.model, Prompt: text, MaxTokens: maxNew, IgnoreEOS: true})
		if !notFound(err) {
			return err
		}
		d.chat = true
	}
	_, err := d.c.do(ctx, "POST", "/v1/chat/completions", chatCompletion{Model: d.model,
		Messages: []chatMessage{{Role: "user", Content: text}}, MaxTokens: maxNew, IgnoreEOS: true})
	return err
}

// start arms the profiler.
func (d *driver) start(ctx context.Context, r profileRequest) error {
	var body any
	switch d.fw {
	case vocab.SGLang:
		// One extra step: SGLang counts the step before checking whether
		// to stop, so N alone can stop before the last forward.
		body = sglangStart{OutputDir: r.dir, NumSteps: r.numSteps + 1, Activities: []string{"CPU", "GPU"},
			WithStack: true, ProfileByStage: r.byStage, ProfilePrefix: r.prefix}
	case vocab.TokenSpeed:
		body = tokenspeedStart{OutputDir: r.dir, Activities: []string{"CPU", "GPU"}, WithStack: true,
			ProfileID: r.prefix, NumSteps: r.numSteps, ProfileByStage: r.byStage}
	}
	_, err := d.c.do(ctx, "POST", "/start_profile", body)
	return d.profilerError(err)
}

// stop ends the profile. A server that had already stopped (SGLang's "not
// in progress") is not an error.
func (d *driver) stop(ctx context.Context) error {
	_, err := d.c.do(ctx, "POST", "/stop_profile", nil)
	var h *HTTPError
	if errors.As(err, &h) && notProfiling(h.Body) {
		return nil
	}
	return d.profilerError(err)
}

func notProfiling(body string) bool {
	b := strings.ToLower(body)
	for _, s := range []string{"not in progress", "not profiling", "not started", "not running", "no profil", "not been started"} {
		if strings.Contains(b, s) {
			return true
		}
	}
	return false
}

// profilerError explains a profiler route's failure.
func (d *driver) profilerError(err error) error {
	var h *HTTPError
	if !errors.As(err, &h) {
		return err
	}
	if notFound(err) {
		h.Hint = "the " + vocab.FrameworkName(d.fw) + " server has no profiler route: " + noProfilerHint(d.fw)
		return &noProfilerError{h}
	}
	if strings.Contains(strings.ToLower(h.Body), "already") {
		h.Hint = "a profiler is already running on the server: wait for it, or POST /stop_profile"
	}
	return err
}

func noProfilerHint(fw string) string {
	switch fw {
	case vocab.VLLM:
		return `start vLLM with --profiler-config '{"profiler":"torch","torch_profiler_dir":"DIR"}' (older versions: VLLM_TORCH_PROFILER_DIR=DIR), DIR being the output directory`
	case vocab.TRTLLM:
		return "this trtllm-serve cannot be driven live; run it with TLLM_TORCH_PROFILE_TRACE=FILE and TLLM_PROFILE_START_STOP=A-B, send requests, then ingest FILE with 'tracehouse ingest'"
	case vocab.TokenSpeed:
		return "use a TokenSpeed build that serves /start_profile and /stop_profile"
	}
	return "use an SGLang version that serves /start_profile and /stop_profile"
}
