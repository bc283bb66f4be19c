package capture

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"syscall"
	"time"
)

// HTTPError is a request the server answered with an error status, or with
// a success status and an error body. Its message is one line: method, URL,
// status and the start of the body.
type HTTPError struct {
	Method string
	URL    string
	Status int
	Body   string
	// Hint, when set, says what to do about it.
	Hint string
}

func (e *HTTPError) Error() string {
	msg := fmt.Sprintf("%s %s: %d %s", e.Method, e.URL, e.Status, http.StatusText(e.Status))
	if e.Status < 300 {
		msg += " with an error body"
	}
	if e.Body != "" {
		msg += ": " + e.Body
	}
	if e.Hint != "" {
		msg += " (" + e.Hint + ")"
	}
	return msg
}

// ConnError is a request that never got an answer: connection refused, no
// such host, a timeout.
type ConnError struct {
	Method string
	URL    string
	Err    error
}

func (e *ConnError) Error() string {
	if errors.Is(e.Err, syscall.ECONNREFUSED) {
		return fmt.Sprintf("%s %s: connection refused (is the server running and listening there?)", e.Method, e.URL)
	}
	return fmt.Sprintf("%s %s: %v", e.Method, e.URL, oneLine(e.Err.Error()))
}

func (e *ConnError) Unwrap() error { return e.Err }

// ErrNoProfiler matches (errors.Is) the error of a server without the
// /start_profile and /stop_profile routes.
var ErrNoProfiler = errors.New("the server has no profiler route")

// noProfilerError is a 404 on a profiler route, with what to do about it.
type noProfilerError struct{ http *HTTPError }

func (e *noProfilerError) Error() string { return e.http.Error() }
func (e *noProfilerError) Unwrap() []error {
	return []error{ErrNoProfiler, e.http}
}

// maxBody is how much of an error body a message quotes.
const maxBody = 300

// MaxResponse bounds the body of every answer read: a server streaming
// without end (or a 10 MB /server_info) must not fill memory or the
// warehouse's runs.server_args. Nothing the capture reads comes near it.
const MaxResponse = 1 << 20

// TooLargeError is an answer whose body exceeds MaxResponse; the rest was
// not read.
type TooLargeError struct {
	Method string
	URL    string
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s %s: %s", e.Method, e.URL, tooLarge)
}

const tooLarge = "answer larger than 1 MiB, not read"

// oneLine squeezes whitespace so that a message stays on one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func quoteBody(b []byte) string {
	s := oneLine(string(b))
	if len(s) > maxBody {
		s = s[:maxBody] + "..."
	}
	return s
}

// client talks to one server.
type client struct {
	base    string // without a trailing slash
	hc      *http.Client
	timeout time.Duration // per request
}

// do sends a request (body nil: none; []byte: as is; else JSON) and returns
// the response body. A status outside 2xx, or a 2xx JSON body that reports
// an error, is an *HTTPError.
func (c *client) do(ctx context.Context, method, path string, body any) ([]byte, error) {
	url := c.base + path
	var rd io.Reader
	isJSON := false
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	default:
		buf, err := marshal(b)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(buf)
		isJSON = true
	}
	parent := ctx
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, url, err)
	}
	if isJSON {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		if parent.Err() != nil {
			return nil, parent.Err()
		}
		if ctx.Err() != nil {
			err = fmt.Errorf("no answer within %v", c.timeout)
		} else if ue, ok := err.(interface{ Unwrap() error }); ok {
			err = ue.Unwrap() // drop *url.Error's repeat of the method and URL
		}
		return nil, &ConnError{Method: method, URL: url, Err: err}
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponse+1))
	if err != nil {
		if parent.Err() != nil {
			return nil, parent.Err()
		}
		if ctx.Err() != nil {
			err = fmt.Errorf("no complete answer within %v", c.timeout)
		}
		return nil, &ConnError{Method: method, URL: url, Err: err}
	}
	if len(out) > MaxResponse {
		return nil, &TooLargeError{Method: method, URL: url}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 || errorBody(out) {
		return nil, &HTTPError{Method: method, URL: url, Status: resp.StatusCode, Body: quoteBody(out)}
	}
	return out, nil
}

// marshal writes JSON without escaping <, > and & (prompts are sent as
// written).
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// errorBody says whether a success response still reports a failure:
// {"success": false, ...}, or an OpenAI-style {"object": "error"} or
// {"error": {...}}.
func errorBody(b []byte) bool {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		return false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil {
		return false
	}
	if s, ok := m["success"]; ok && string(s) == "false" {
		return true
	}
	if o, ok := m["object"]; ok && string(o) == `"error"` {
		return true
	}
	if e, ok := m["error"]; ok && string(e) != "null" && string(e) != `""` && string(e) != "false" {
		return true
	}
	return false
}

func notFound(err error) bool {
	var h *HTTPError
	return errors.As(err, &h) && (h.Status == http.StatusNotFound || h.Status == http.StatusMethodNotAllowed)
}
