package capture

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/klauspost/compress/gzip"

	"github.com/tracehouse/tracehouse/vocab"
)

// fileState is what a directory listing says about one file.
type fileState struct {
	size int64
	mod  time.Time
}

// isTraceFile says whether a name can be a trace (sidecars excluded).
func isTraceFile(name string) bool {
	n := strings.ToLower(name)
	if n == "server_args.json" || strings.HasPrefix(n, ".") {
		return false
	}
	return strings.HasSuffix(n, ".json") || strings.HasSuffix(n, ".json.gz")
}

// snapshot lists the trace files directly in dir (a missing directory is
// empty).
func snapshot(dir string) (map[string]fileState, error) {
	out := map[string]fileState{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return out, nil
		}
		return nil, err
	}
	for _, e := range entries {
		if e.IsDir() || !isTraceFile(e.Name()) {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue // removed since the listing
		}
		out[e.Name()] = fileState{size: info.Size(), mod: info.ModTime()}
	}
	return out, nil
}

// expectation is the trace files one stage waits for: one per worker
// label (e.g. TP-0, rank1, TP-0-EXTEND); none when the server does not say
// how many ranks it has, and then at least one file of each suffix.
type expectation struct {
	labels   []string
	suffixes []string // by-stage: EXTEND and/or DECODE
	shape    labelShape
}

// labelShape is which parallel indices a file's label carries.
type labelShape struct {
	vllm   bool // rank<r>
	dp, pp bool // -DP-<d>, -PP-<p> besides -TP-<t>
	count  bool // no naming convention: labels are just counted
}

// Whole tokens, the one closest to the end of the name winning.
var (
	tokTP    = regexp.MustCompile(`(?i)(?:^|[-_.])TP-?(\d+)(?:$|[-_.])`)
	tokDP    = regexp.MustCompile(`(?i)(?:^|[-_.])DP-?(\d+)(?:$|[-_.])`)
	tokPP    = regexp.MustCompile(`(?i)(?:^|[-_.])PP-?(\d+)(?:$|[-_.])`)
	tokRank  = regexp.MustCompile(`(?i)(?:^|[-_.])rank-?(\d+)(?:$|[-_.])`)
	tokStage = regexp.MustCompile(`(?i)-(EXTEND|DECODE)(?:$|[-_.])`)
)

func lastToken(re *regexp.Regexp, s string) (string, bool) {
	m := re.FindAllStringSubmatch(s, -1)
	if m == nil {
		return "", false
	}
	return m[len(m)-1][1], true
}

// label is a file's worker label in the expectation's shape, "" when the
// name does not carry one.
func (e *expectation) label(name string) string {
	var l string
	switch {
	case e.shape.count:
		return ""
	case e.shape.vllm:
		r, ok := lastToken(tokRank, name)
		if !ok {
			return ""
		}
		l = "rank" + trimZeros(r)
	default:
		t, ok := lastToken(tokTP, name)
		if !ok {
			return ""
		}
		l = "TP-" + trimZeros(t)
		if e.shape.dp {
			d, _ := lastToken(tokDP, name)
			l += "-DP-" + trimZeros(d)
		}
		if e.shape.pp {
			p, _ := lastToken(tokPP, name)
			l += "-PP-" + trimZeros(p)
		}
	}
	if len(e.suffixes) > 0 {
		s, ok := lastToken(tokStage, name)
		if !ok {
			return ""
		}
		l += "-" + strings.ToUpper(s)
	}
	return l
}

func trimZeros(s string) string {
	n, err := strconv.Atoi(s)
	if err != nil {
		return s
	}
	return strconv.Itoa(n)
}

// expect derives what one stage waits for from the framework, the server's
// arguments and an explicit rank count.
func expect(fw string, info map[string]any, ranks int, suffixes []string) expectation {
	e := expectation{suffixes: suffixes}
	var workers []string
	switch fw {
	case vocab.SGLang, vocab.TokenSpeed:
		tp, pp, dp := num(info, "tp_size", "tensor_parallel_size"), max(1, num(info, "pp_size", "pipeline_parallel_size")), num(info, "dp_size", "data_parallel_size")
		dpAttention, _ := info["enable_dp_attention"].(bool)
		// Without DP attention each DP replica is its own TP group, and
		// its files say -DP-<d>.
		replicas := 1
		if dp > 1 && !dpAttention {
			replicas = dp
			e.shape.dp = true
		}
		e.shape.pp = pp > 1
		if tp*pp*replicas > maxWorkers {
			tp = 0 // not a worker count: unknown
		}
		if ranks > 0 {
			tp, pp, replicas = ranks, 1, 1
			e.shape.dp, e.shape.pp = false, false
		}
		for d := 0; d < replicas && tp > 0; d++ {
			for p := 0; p < pp; p++ {
				for t := 0; t < tp; t++ {
					l := "TP-" + strconv.Itoa(t)
					if e.shape.dp {
						l += "-DP-" + strconv.Itoa(d)
					}
					if e.shape.pp {
						l += "-PP-" + strconv.Itoa(p)
					}
					workers = append(workers, l)
				}
			}
		}
	case vocab.VLLM:
		e.shape.vllm = true
		world := ranks
		if world == 0 {
			world = num(info, "tensor_parallel_size") * max(1, num(info, "pipeline_parallel_size")) * max(1, num(info, "data_parallel_size"))
			if world > maxWorkers {
				world = 0 // not a worker count: unknown
			}
		}
		for r := 0; r < world; r++ {
			workers = append(workers, "rank"+strconv.Itoa(r))
		}
	default:
		e.shape.count = true
		for r := 0; r < ranks; r++ {
			workers = append(workers, "file "+strconv.Itoa(r+1))
		}
	}
	if len(suffixes) == 0 {
		e.labels = workers
		return e
	}
	for _, w := range workers {
		for _, s := range suffixes {
			e.labels = append(e.labels, w+"-"+s)
		}
	}
	return e
}

// tracked is a new or changed file being watched.
type tracked struct {
	fileState
	since    time.Time // when its size or mtime last changed
	checked  bool      // verified complete at this size and mtime
	complete bool
}

// watch waits for the trace files a stopped profiler writes into dir:
// files that are new or changed against before, whose size and mtime
// have not moved for StableFor and that are complete (a gzip stream that
// ends, JSON that closes), one per expected worker, with no new file for
// StableFor. It gives up after FlushTimeout, counted from start.
type watch struct {
	dir     string
	before  map[string]fileState
	want    expectation
	start   time.Time
	opt     Options
	report  func(Progress)
	files   map[string]*tracked
	lastNew time.Time // when a file last appeared
}

// wait returns the complete new files (names in dir), sorted.
func (w *watch) wait(ctx context.Context) ([]string, error) {
	if w.files == nil {
		w.files = map[string]*tracked{}
	}
	deadline := w.start.Add(w.opt.FlushTimeout)
	tick := time.NewTicker(w.opt.PollInterval)
	defer tick.Stop()
	for {
		done, err := w.poll()
		if err != nil {
			return nil, err
		}
		if done {
			return w.names(), nil
		}
		if !time.Now().Before(deadline) {
			return nil, w.timeout()
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-tick.C:
		}
	}
}

// seen says whether any new or changed trace file has appeared (one
// listing, no waiting): a server that stops by itself has stopped.
func (w *watch) seen() (bool, error) {
	if w.files == nil {
		w.files = map[string]*tracked{}
	}
	if _, err := w.poll(); err != nil {
		return false, err
	}
	return len(w.files) > 0, nil
}

// poll lists the directory once and says whether the wait is over.
func (w *watch) poll() (bool, error) {
	now := time.Now()
	cur, err := snapshot(w.dir)
	if err != nil {
		return false, fmt.Errorf("watch %s: %w", w.dir, err)
	}
	for name := range w.files {
		if _, ok := cur[name]; !ok {
			delete(w.files, name) // a temporary file renamed away
		}
	}
	for name, st := range cur {
		if old, ok := w.before[name]; ok && old == st {
			continue // there before the profiler was armed, untouched
		}
		t := w.files[name]
		switch {
		case t == nil:
			w.files[name] = &tracked{fileState: st, since: now}
			w.lastNew = now
		case t.fileState != st:
			*t = tracked{fileState: st, since: now}
		}
	}
	var bytes, growing int64
	stable := true
	for name, t := range w.files {
		bytes += t.size
		if now.Sub(t.since) < w.opt.StableFor {
			stable = false
			growing += t.size
			continue
		}
		if !t.checked {
			t.checked = true
			t.complete = complete(filepath.Join(w.dir, name))
		}
		if !t.complete {
			// Still being written (a writer that pauses): wait for more.
			stable = false
			growing += t.size
		}
	}
	w.report(Progress{Phase: PhaseFlush, Files: len(w.files), FilesWant: len(w.want.labels),
		Bytes: bytes, Growing: growing, Waited: now.Sub(w.start)})
	if !stable || len(w.files) == 0 || now.Sub(w.lastNew) < w.opt.StableFor {
		return false, nil
	}
	missing := w.missing()
	return len(missing) == 0, nil
}

// missing lists the expected workers without a file yet.
func (w *watch) missing() []string {
	have := map[string]bool{}
	n := 0
	for name := range w.files {
		if l := w.want.label(name); l != "" {
			have[l] = true
		}
		n++
	}
	var out []string
	if w.want.shape.count {
		for i := n; i < len(w.want.labels); i++ {
			out = append(out, w.want.labels[i])
		}
		return out
	}
	for _, l := range w.want.labels {
		if !have[l] {
			out = append(out, l)
		}
	}
	if len(w.want.labels) == 0 {
		// Rank count unknown: at least one file of each stage suffix.
		for _, s := range w.want.suffixes {
			found := false
			for l := range have {
				found = found || strings.HasSuffix(l, "-"+s)
			}
			if !found {
				out = append(out, "a -"+s+" file")
			}
		}
	}
	return out
}

func (w *watch) names() []string {
	out := make([]string, 0, len(w.files))
	for name := range w.files {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// TimeoutError is a stage whose trace files did not all arrive complete
// within the flush timeout. Nothing of the stage is used.
type TimeoutError struct {
	Stage   string
	Dir     string
	Timeout time.Duration
	// Found are the new files seen (complete or not), Growing those still
	// changing or incomplete, Missing the expected workers without a file.
	Found   []string
	Growing []string
	Missing []string
	// Hint says what may be wrong.
	Hint string
}

func (e *TimeoutError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: traces not complete in %s after %v: ", e.Stage, e.Dir, e.Timeout)
	if len(e.Found) == 0 {
		b.WriteString("no new trace file appeared")
	} else {
		fmt.Fprintf(&b, "found %s", strings.Join(e.Found, ", "))
	}
	if len(e.Growing) > 0 {
		fmt.Fprintf(&b, "; still being written: %s", strings.Join(e.Growing, ", "))
	}
	if len(e.Missing) > 0 {
		fmt.Fprintf(&b, "; missing: %s", strings.Join(e.Missing, ", "))
	}
	b.WriteString("; nothing of this stage is ingested")
	if e.Hint != "" {
		b.WriteString(" (" + e.Hint + ")")
	}
	return b.String()
}

func (w *watch) timeout() error {
	e := &TimeoutError{Dir: w.dir, Timeout: w.opt.FlushTimeout, Found: w.names(), Missing: w.missing()}
	now := time.Now()
	for _, name := range e.Found {
		t := w.files[name]
		if now.Sub(t.since) < w.opt.StableFor || (t.checked && !t.complete) {
			e.Growing = append(e.Growing, name)
		}
	}
	return e
}

// complete says whether a trace file is whole: a gzip stream that ends
// with its checksum, or JSON text that closes its object or array.
func complete(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var magic [2]byte
	if n, _ := io.ReadFull(f, magic[:]); n == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return false
		}
		zr, err := gzip.NewReader(f)
		if err != nil {
			return false
		}
		_, err = io.Copy(io.Discard, zr)
		return err == nil
	}
	info, err := f.Stat()
	if err != nil || info.Size() == 0 {
		return false
	}
	tail := make([]byte, min(info.Size(), 256))
	if _, err := f.ReadAt(tail, info.Size()-int64(len(tail))); err != nil {
		return false
	}
	tail = bytes.TrimRight(tail, " \t\r\n")
	return len(tail) > 0 && slices.Contains([]byte("}]"), tail[len(tail)-1])
}
