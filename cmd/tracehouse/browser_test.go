package main

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"image/png"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// The page checks (the report in TestReportEndToEnd, the layout at two
// widths in TestReportHTMLFitsInBrowser) share one headless Chromium per
// test binary, its pages one renderer process: a launch of its own cost
// each page about 1.3 CPU-s more than its page, which costs 4-5 CPU-s to
// lay out and draw (perf, load 10-13: the browser's CPU time for the three
// checks 18.8 -> 16.2 s with this file's own test). Each check opens its
// own window (a target) whose page has the size the check's
// --window-size gave it, and hears only its own page's console messages
// and requests.
//
// The browser is driven over the DevTools protocol on a pipe
// (--remote-debugging-pipe: JSON messages, each ended by a NUL byte, read
// by the browser on fd 3 and written on fd 4). The few commands used here
// need encoding/json and os/exec only; a DevTools client library
// (chromedp) would bring a websocket stack and generated bindings for
// every domain of the protocol.

// sharedBrowser is the test binary's browser, started by the first check
// that asks for it and closed by TestMain (closeBrowser).
var sharedBrowser struct {
	once sync.Once
	b    *browser
	err  error
}

// pageBrowser returns the test binary's browser, starting it on first use;
// the test skips when there is no Chromium (findChromium).
func pageBrowser(t *testing.T) *browser {
	t.Helper()
	chromium := findChromium(t)
	sharedBrowser.once.Do(func() { sharedBrowser.b, sharedBrowser.err = startBrowser(chromium) })
	if sharedBrowser.err != nil {
		t.Fatalf("start chromium: %v", sharedBrowser.err)
	}
	return sharedBrowser.b
}

// closeBrowser closes the browser if a test started one.
func closeBrowser() {
	if b := sharedBrowser.b; b != nil {
		b.close()
	}
}

// browser is a running headless Chromium and its DevTools pipe.
type browser struct {
	cmd     *exec.Cmd
	dir     string // user data dir
	stderr  *lockedBuffer
	toB     io.WriteCloser
	exited  chan struct{} // closed when the reader sees the pipe end
	writeMu sync.Mutex

	mu       sync.Mutex
	next     int64
	replies  map[int64]chan cdpMessage
	sessions map[string]func(cdpMessage) // events of each attached page
	readErr  error
}

// cdpMessage is a reply to a command (ID set) or an event (Method set).
type cdpMessage struct {
	ID        int64           `json:"id,omitempty"`
	Method    string          `json:"method,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *cdpError       `json:"error,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
}

type cdpError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// startBrowser launches chromium headless with the flags every page check
// had on its own command line: no sandbox (tests may run as root), no GPU,
// nothing fetched by the browser itself, and no host name resolving to
// anything, so that no request can leave the machine.
func startBrowser(chromium string) (*browser, error) {
	dir, err := os.MkdirTemp("", "tracehouse-chromium-")
	if err != nil {
		return nil, err
	}
	toBrowserR, toBrowserW, err := os.Pipe()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	fromBrowserR, fromBrowserW, err := os.Pipe()
	if err != nil {
		toBrowserR.Close()
		toBrowserW.Close()
		os.RemoveAll(dir)
		return nil, err
	}
	b := &browser{
		dir:      dir,
		stderr:   &lockedBuffer{},
		toB:      toBrowserW,
		exited:   make(chan struct{}),
		replies:  map[int64]chan cdpMessage{},
		sessions: map[string]func(cdpMessage){},
	}
	b.cmd = exec.Command(chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--host-resolver-rules=MAP * ~NOTFOUND",
		// one renderer for every page: a renderer's start is most of a
		// page's cost beyond its own layout and drawing
		"--remote-debugging-pipe", "--renderer-process-limit=1", "about:blank")
	b.cmd.ExtraFiles = []*os.File{toBrowserR, fromBrowserW} // fds 3 and 4
	b.cmd.Stderr = b.stderr
	err = b.cmd.Start()
	// the browser holds its own ends now
	toBrowserR.Close()
	fromBrowserW.Close()
	if err != nil {
		toBrowserW.Close()
		fromBrowserR.Close()
		os.RemoveAll(dir)
		return nil, err
	}
	go b.read(fromBrowserR)
	return b, nil
}

// read hands each message from the browser to the command waiting for it
// or to its page's event handler, until the pipe ends.
func (b *browser) read(r io.ReadCloser) {
	defer r.Close()
	br := bufio.NewReaderSize(r, 1<<20)
	var err error
	for {
		var line []byte
		line, err = br.ReadBytes(0)
		if err != nil {
			break
		}
		var m cdpMessage
		if err = json.Unmarshal(line[:len(line)-1], &m); err != nil {
			break
		}
		b.mu.Lock()
		if m.ID != 0 {
			ch := b.replies[m.ID]
			delete(b.replies, m.ID)
			b.mu.Unlock()
			if ch != nil {
				ch <- m
			}
			continue
		}
		on := b.sessions[m.SessionID]
		b.mu.Unlock()
		if on != nil {
			on(m)
		}
	}
	b.mu.Lock()
	if errors.Is(err, io.EOF) {
		err = errors.New("chromium closed its DevTools pipe")
	}
	b.readErr = err
	for id, ch := range b.replies {
		close(ch)
		delete(b.replies, id)
	}
	b.mu.Unlock()
	close(b.exited)
}

// call sends a command (to the browser, or to a page's session) and
// decodes its result into result (when not nil).
func (b *browser) call(session, method string, params, result any) error {
	b.mu.Lock()
	if b.readErr != nil {
		err := b.readErr
		b.mu.Unlock()
		return fmt.Errorf("%s: %v\n%s", method, err, b.stderr.String())
	}
	b.next++
	id := b.next
	ch := make(chan cdpMessage, 1)
	b.replies[id] = ch
	b.mu.Unlock()
	p, err := json.Marshal(params)
	if err != nil {
		return err
	}
	msg, err := json.Marshal(cdpMessage{ID: id, Method: method, Params: p, SessionID: session})
	if err != nil {
		return err
	}
	b.writeMu.Lock()
	_, err = b.toB.Write(append(msg, 0))
	b.writeMu.Unlock()
	if err != nil {
		return fmt.Errorf("%s: %v", method, err)
	}
	select {
	case m, ok := <-ch:
		if !ok {
			return fmt.Errorf("%s: chromium went away\n%s", method, b.stderr.String())
		}
		if m.Error != nil {
			return fmt.Errorf("%s: %s (%d)", method, m.Error.Message, m.Error.Code)
		}
		if result != nil {
			return json.Unmarshal(m.Result, result)
		}
		return nil
	case <-time.After(3 * time.Minute):
		return fmt.Errorf("%s: no answer from chromium in 3 minutes", method)
	}
}

// close asks the browser to close, kills it if it has not within 10 s,
// and removes its profile.
func (b *browser) close() {
	done := make(chan struct{})
	go func() {
		b.cmd.Wait()
		close(done)
	}()
	b.call("", "Browser.close", nil, nil)
	b.toB.Close()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		b.cmd.Process.Kill()
		<-done
	}
	os.RemoveAll(b.dir)
}

// browserRun is what headless Chromium saw of a page.
type browserRun struct {
	dom      string   // the DOM after the page's script ran
	console  []string // console messages (errors, CSP violations)
	requests []string // URLs the page asked the network for
}

// browserPage is a window of the shared browser showing one page.
type browserPage struct {
	b       *browser
	target  string
	session string
	loaded  chan struct{}

	mu       sync.Mutex
	console  []string
	requests []pageRequest
	once     sync.Once
}

// pageOptions is how a page is shown: its size in CSS pixels (the
// window's inner size, innerWidth x innerHeight, scroll bars included),
// and whether scroll bars take room (--hide-scrollbars).
type pageOptions struct {
	width, height  int
	hideScrollbars bool
}

// showPage loads file in a window of its own and returns what the page
// did once its load event fired; with shot set, it also writes a PNG
// screenshot of the window there.
func showPage(t *testing.T, b *browser, file, shot string, o pageOptions) browserRun {
	t.Helper()
	p, err := b.open(o)
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	defer p.close()
	if err := p.load("file://" + file); err != nil {
		t.Fatalf("chromium: %v", err)
	}
	var dom struct {
		Result struct {
			Value string `json:"value"`
		} `json:"result"`
		ExceptionDetails json.RawMessage `json:"exceptionDetails"`
	}
	if err := b.call(p.session, "Runtime.evaluate", map[string]any{
		"expression": "document.documentElement.outerHTML", "returnByValue": true,
	}, &dom); err != nil || dom.ExceptionDetails != nil {
		t.Fatalf("chromium: read the DOM: %v %s", err, dom.ExceptionDetails)
	}
	if shot != "" {
		var png struct {
			Data string `json:"data"`
		}
		if err := b.call(p.session, "Page.captureScreenshot", map[string]any{"format": "png"}, &png); err != nil {
			t.Fatalf("chromium: %v", err)
		}
		raw, err := base64.StdEncoding.DecodeString(png.Data)
		if err != nil {
			t.Fatalf("chromium: screenshot: %v", err)
		}
		if err := os.WriteFile(shot, raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	run := browserRun{dom: dom.Result.Value, console: p.console}
	for _, r := range p.requests {
		if !r.blocked {
			run.requests = append(run.requests, r.url)
		}
	}
	return run
}

// open makes a window whose page is o.width x o.height CSS pixels and
// attaches to it, with the page, runtime, log and network events on.
func (b *browser) open(o pageOptions) (*browserPage, error) {
	var created struct {
		TargetID string `json:"targetId"`
	}
	if err := b.call("", "Target.createTarget", map[string]any{"url": "about:blank", "newWindow": true}, &created); err != nil {
		return nil, err
	}
	p := &browserPage{b: b, target: created.TargetID, loaded: make(chan struct{}, 1)}
	var attached struct {
		SessionID string `json:"sessionId"`
	}
	if err := b.call("", "Target.attachToTarget", map[string]any{"targetId": p.target, "flatten": true}, &attached); err != nil {
		b.call("", "Target.closeTarget", map[string]any{"targetId": p.target}, nil)
		return nil, err
	}
	p.session = attached.SessionID
	b.mu.Lock()
	b.sessions[p.session] = p.event
	b.mu.Unlock()
	if err := p.resize(o.width, o.height); err != nil {
		p.close()
		return nil, err
	}
	for _, m := range []string{"Page.enable", "Runtime.enable", "Log.enable", "Network.enable"} {
		if err := b.call(p.session, m, nil, nil); err != nil {
			p.close()
			return nil, err
		}
	}
	if o.hideScrollbars {
		if err := b.call(p.session, "Emulation.setScrollbarsHidden", map[string]any{"hidden": true}, nil); err != nil {
			p.close()
			return nil, err
		}
	}
	return p, nil
}

// resize sizes the page's window so that its page is width x height: the
// window is that much larger than the page as its frame takes (a headless
// window's frame is as tall as a toolbar's).
func (p *browserPage) resize(width, height int) error {
	var win struct {
		WindowID int `json:"windowId"`
		Bounds   struct {
			Width  int `json:"width"`
			Height int `json:"height"`
		} `json:"bounds"`
	}
	if err := p.b.call("", "Browser.getWindowForTarget", map[string]any{"targetId": p.target}, &win); err != nil {
		return err
	}
	var inner struct {
		Result struct {
			Value []int `json:"value"`
		} `json:"result"`
	}
	if err := p.b.call(p.session, "Runtime.evaluate", map[string]any{"expression": "[innerWidth, innerHeight]", "returnByValue": true}, &inner); err != nil {
		return err
	}
	if len(inner.Result.Value) != 2 {
		return fmt.Errorf("the page's size: %v", inner.Result.Value)
	}
	return p.b.call("", "Browser.setWindowBounds", map[string]any{"windowId": win.WindowID, "bounds": map[string]any{
		"width": width + win.Bounds.Width - inner.Result.Value[0], "height": height + win.Bounds.Height - inner.Result.Value[1],
	}}, nil)
}

// load navigates to url and waits for its load event.
func (p *browserPage) load(url string) error {
	var nav struct {
		ErrorText string `json:"errorText"`
	}
	if err := p.b.call(p.session, "Page.navigate", map[string]any{"url": url}, &nav); err != nil {
		return err
	}
	if nav.ErrorText != "" {
		return fmt.Errorf("navigate to %s: %s", url, nav.ErrorText)
	}
	select {
	case <-p.loaded:
		return nil
	case <-p.b.exited:
		return fmt.Errorf("chromium went away loading %s\n%s", url, p.b.stderr.String())
	case <-time.After(3 * time.Minute):
		return fmt.Errorf("%s did not load in 3 minutes", url)
	}
}

// event records what the page writes to its console and the requests it
// starts. Console messages are the console API's, uncaught exceptions and
// the browser's own messages about the page (a CSP violation, a failed
// load), as --enable-logging printed them.
func (p *browserPage) event(m cdpMessage) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch m.Method {
	case "Page.loadEventFired":
		select {
		case p.loaded <- struct{}{}:
		default:
		}
	case "Runtime.consoleAPICalled":
		var e struct {
			Type string            `json:"type"`
			Args []json.RawMessage `json:"args"`
		}
		json.Unmarshal(m.Params, &e)
		var args []string
		for _, a := range e.Args {
			args = append(args, string(a))
		}
		p.console = append(p.console, fmt.Sprintf("console.%s: %s", e.Type, strings.Join(args, " ")))
	case "Runtime.exceptionThrown":
		p.console = append(p.console, "uncaught exception: "+string(m.Params))
	case "Log.entryAdded":
		var e struct {
			Entry struct {
				Source string `json:"source"`
				Level  string `json:"level"`
				Text   string `json:"text"`
				URL    string `json:"url"`
			} `json:"entry"`
		}
		json.Unmarshal(m.Params, &e)
		p.console = append(p.console, fmt.Sprintf("%s %s: %s %s", e.Entry.Source, e.Entry.Level, e.Entry.Text, e.Entry.URL))
	case "Network.requestWillBeSent":
		var e struct {
			RequestID string `json:"requestId"`
			Request   struct {
				URL string `json:"url"`
			} `json:"request"`
		}
		json.Unmarshal(m.Params, &e)
		if url := e.Request.URL; url != "" && !strings.HasPrefix(url, "file:") && !strings.HasPrefix(url, "data:") {
			p.requests = append(p.requests, pageRequest{id: e.RequestID, url: url})
		}
	case "Network.loadingFailed":
		// A request the page itself refused (its policy, say) never
		// left it: the net log the check read before had no job for it.
		var e struct {
			RequestID     string `json:"requestId"`
			BlockedReason string `json:"blockedReason"`
		}
		json.Unmarshal(m.Params, &e)
		if e.BlockedReason != "" {
			for i := range p.requests {
				if p.requests[i].id == e.RequestID {
					p.requests[i].blocked = true
				}
			}
		}
	}
}

// pageRequest is a request the page started for a URL that is neither a
// local file nor data:.
type pageRequest struct {
	id, url string
	blocked bool // refused before it left the page
}

// close closes the page's window.
func (p *browserPage) close() {
	p.once.Do(func() {
		p.b.call("", "Target.closeTarget", map[string]any{"targetId": p.target}, nil)
		p.b.mu.Lock()
		delete(p.b.sessions, p.session)
		p.b.mu.Unlock()
	})
}

// TestBrowserSeesThePage: the shared browser shows a page at the window
// size asked for, with or without scroll bars, and hears what the page
// does: a console message, an uncaught exception, a CSP violation and a
// request that would leave the machine (not the page's data: image, nor
// the image its policy refused).
func TestBrowserSeesThePage(t *testing.T) {
	t.Parallel()
	b := pageBrowser(t)
	dir := t.TempDir()
	page := filepath.Join(dir, "page.html")
	html := `<!DOCTYPE html><html><head>
<meta http-equiv="Content-Security-Policy" content="img-src http://example.invalid data:; script-src 'unsafe-inline'">
<title>t</title></head><body><div style="height:3000px"></div>
<img src="http://example.invalid/a.png"><img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=">
<img src="http://refused.invalid/b.png">
<script>console.error('boom'); document.title = innerWidth + 'x' + innerHeight + ' ' + document.documentElement.clientWidth;
setTimeout(function () { throw new Error('late'); }, 0); throw new Error('thrown');</script>
</body></html>`
	if err := os.WriteFile(page, []byte(html), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		o     pageOptions
		title string
	}{
		{pageOptions{width: 800, height: 600}, "800x600 785"},
		{pageOptions{width: 1000, height: 700, hideScrollbars: true}, "1000x700 1000"},
	} {
		shot := filepath.Join(dir, "shot.png")
		r := showPage(t, b, page, shot, c.o)
		if !strings.Contains(r.dom, "<title>"+c.title+"</title>") {
			t.Errorf("%+v: the page saw %s, want %s", c.o, regexp.MustCompile(`<title>.*</title>`).FindString(r.dom), c.title)
		}
		if f, err := os.Open(shot); err != nil {
			t.Error(err)
		} else {
			img, err := png.Decode(f)
			f.Close()
			if err != nil || img.Bounds().Dx() != c.o.width || img.Bounds().Dy() != c.o.height {
				t.Errorf("%+v: the screenshot: %v", c.o, err)
			}
		}
		if len(r.requests) != 1 || r.requests[0] != "http://example.invalid/a.png" {
			t.Errorf("%+v: requests %q, want the example.invalid image only", c.o, r.requests)
		}
		console := strings.Join(r.console, "\n")
		for _, want := range []string{"boom", "thrown", "refused.invalid"} {
			if !strings.Contains(console, want) {
				t.Errorf("%+v: no console message with %q in\n%s", c.o, want, console)
			}
		}
	}
}
