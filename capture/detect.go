package capture

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/tracehouse/tracehouse/vocab"
)

// Server is what a capture learned about the server it drives.
type Server struct {
	Framework string
	// Evidence says how the framework was told ("given" when named).
	Evidence string
	// Model is the model path or id the server reports ("" when unknown);
	// ModelID the id OpenAI-style requests name.
	Model   string
	ModelID string
	// Info is the body of /server_info (older SGLang: /get_server_info)
	// when the server exposes one as a JSON object, saved as
	// server_args.json; nil otherwise.
	Info []byte
	info map[string]any // Info, nested server arguments lifted one level
	// Notes are what the user should hear about the detection (a
	// /server_info too large to keep).
	Notes []string
}

// UnknownFrameworkError is a server none of the detection routes
// identified; the caller should name the framework.
type UnknownFrameworkError struct {
	URL string
	// Tried says what each route answered.
	Tried []string
}

func (e *UnknownFrameworkError) Error() string {
	return fmt.Sprintf("could not tell which framework serves %s (%s): name it with --framework (%s)",
		e.URL, strings.Join(e.Tried, "; "), strings.Join(vocab.Frameworks, ", "))
}

// Detect asks the server at opt.URL what it runs:
// /server_info (SGLang: model_path and scheduler fields; TokenSpeed:
// mentions tokenspeed), then /readiness (TokenSpeed), then /v1/models
// (owned_by tells vLLM from TensorRT-LLM). With opt.Framework set it only
// gathers the server's arguments and model id.
func Detect(ctx context.Context, opt Options) (*Server, error) {
	opt = opt.withTuning()
	c := &client{base: strings.TrimRight(opt.URL, "/"), hc: opt.Client, timeout: opt.RequestTimeout}
	return detect(ctx, c, opt.Framework)
}

func detect(ctx context.Context, c *client, fw string) (*Server, error) {
	s := &Server{Framework: fw}
	if fw != "" {
		s.Evidence = "given"
	}
	var tried []string
	// /server_info: SGLang, TokenSpeed, and vLLM in its dev mode.
	if fw == "" || fw == vocab.SGLang || fw == vocab.TokenSpeed || fw == vocab.VLLM {
		routes := []string{"/server_info", "/get_server_info"}
		if fw == vocab.VLLM {
			routes = routes[:1]
		}
		for _, route := range routes {
			body, err := c.do(ctx, "GET", route, nil)
			if err != nil {
				if _, conn := err.(*ConnError); conn || ctx.Err() != nil {
					return nil, err
				}
				tried = append(tried, route+": "+statusOf(err))
				var big *TooLargeError
				if errors.As(err, &big) {
					s.Notes = append(s.Notes, big.Error()+": the server's arguments are not recorded")
				}
				if notFound(err) {
					continue
				}
				break
			}
			s.setInfo(body)
			if s.Info == nil {
				tried = append(tried, route+": not a JSON object")
			}
			break
		}
	}
	if s.Framework == "" && s.info != nil {
		lower := strings.ToLower(string(s.Info))
		_, hasModelPath := s.info["model_path"]
		switch {
		case strings.Contains(lower, "tokenspeed"):
			s.Framework, s.Evidence = vocab.TokenSpeed, "/server_info mentions tokenspeed"
		case hasModelPath && hasAny(s.info, "schedule_policy", "chunked_prefill_size", "max_running_requests", "mem_fraction_static"):
			s.Framework, s.Evidence = vocab.SGLang, "/server_info has model_path and scheduler fields"
		case hasAny(s.info, "vllm_config", "vllm_version"):
			s.Framework, s.Evidence = vocab.VLLM, "/server_info has vllm_config"
		default:
			tried = append(tried, "/server_info: no SGLang or TokenSpeed fields")
		}
	}
	if s.Framework == "" {
		_, err := c.do(ctx, "GET", "/readiness", nil)
		switch {
		case err == nil:
			s.Framework, s.Evidence = vocab.TokenSpeed, "/readiness answers"
		case isConn(err) || ctx.Err() != nil:
			return nil, err
		default:
			tried = append(tried, "/readiness: "+statusOf(err))
		}
	}
	if s.Framework != vocab.SGLang {
		models, err := c.do(ctx, "GET", "/v1/models", nil)
		if err != nil {
			if isConn(err) || ctx.Err() != nil || s.Framework != "" {
				return nil, err
			}
			tried = append(tried, "/v1/models: "+statusOf(err))
		} else {
			id, owner := modelCard(models)
			s.ModelID = id
			tried = append(tried, fmt.Sprintf("/v1/models: owned_by %q", owner))
			if s.Framework == "" {
				switch o := strings.ToLower(owner); {
				case strings.Contains(o, "vllm"):
					s.Framework, s.Evidence = vocab.VLLM, `/v1/models owned_by "`+owner+`"`
				case strings.Contains(o, "tensorrt") || strings.Contains(o, "trtllm"):
					s.Framework, s.Evidence = vocab.TRTLLM, `/v1/models owned_by "`+owner+`"`
				case strings.Contains(o, "tokenspeed"):
					s.Framework, s.Evidence = vocab.TokenSpeed, `/v1/models owned_by "`+owner+`"`
				case strings.Contains(o, "sglang"):
					s.Framework, s.Evidence = vocab.SGLang, `/v1/models owned_by "`+owner+`"`
				}
			}
			if s.Framework != vocab.SGLang && id == "" {
				return nil, &HTTPError{Method: "GET", URL: c.base + "/v1/models", Status: 200, Body: quoteBody(models),
					Hint: "no model listed; OpenAI-style requests need its id"}
			}
		}
	}
	if s.Framework == "" {
		return nil, &UnknownFrameworkError{URL: c.base, Tried: tried}
	}
	s.Model = str(s.info, "model_path", "model", "served_model_name")
	if s.Model == "" && s.ModelID == "" && s.Framework == vocab.SGLang {
		// No server info: the model still names the run.
		models, err := c.do(ctx, "GET", "/v1/models", nil)
		if isConn(err) || ctx.Err() != nil {
			return nil, err
		}
		s.ModelID, _ = modelCard(models)
	}
	if s.Model == "" {
		s.Model = s.ModelID
	}
	return s, nil
}

// setInfo keeps a /server_info body when it is a JSON object.
func (s *Server) setInfo(body []byte) {
	var m map[string]any
	if json.Unmarshal(body, &m) != nil || m == nil {
		return
	}
	// Newer servers nest the arguments; lift them one level.
	for _, k := range []string{"server_args", "args"} {
		if inner, ok := m[k].(map[string]any); ok {
			for kk, v := range inner {
				if _, dup := m[kk]; !dup {
					m[kk] = v
				}
			}
		}
	}
	s.Info = bytes.TrimSpace(body)
	s.info = m
}

// modelCard reads the first model of a /v1/models answer.
func modelCard(body []byte) (id, owner string) {
	var l struct {
		Data []struct {
			ID      string `json:"id"`
			OwnedBy string `json:"owned_by"`
		} `json:"data"`
	}
	if json.Unmarshal(body, &l) != nil || len(l.Data) == 0 {
		return "", ""
	}
	return l.Data[0].ID, l.Data[0].OwnedBy
}

func isConn(err error) bool {
	_, ok := err.(*ConnError)
	return ok
}

func statusOf(err error) string {
	if h, ok := err.(*HTTPError); ok {
		return fmt.Sprint(h.Status)
	}
	if _, ok := err.(*TooLargeError); ok {
		return tooLarge
	}
	return err.Error()
}

func hasAny(m map[string]any, keys ...string) bool {
	for _, k := range keys {
		if _, ok := m[k]; ok {
			return true
		}
	}
	return false
}

func str(m map[string]any, keys ...string) string {
	for _, k := range keys {
		if s, ok := m[k].(string); ok && s != "" {
			return s
		}
	}
	return ""
}

// maxWorkers bounds the workers a server's arguments may announce: the
// capture waits for one file each, so a larger size (a bug, or a hostile
// server) would have it build and wait for billions.
const maxWorkers = 1 << 16

// num reads a parallel size from a server's arguments: the first key
// present, when it is a whole number from 1 to maxWorkers; else 0
// (unknown), never a truncation (2.5 is not 2).
func num(m map[string]any, keys ...string) int {
	for _, k := range keys {
		if v, ok := m[k]; ok && v != nil {
			f, ok := v.(float64)
			if !ok || f != math.Trunc(f) || f < 1 || f > maxWorkers {
				return 0
			}
			return int(f)
		}
	}
	return 0
}
