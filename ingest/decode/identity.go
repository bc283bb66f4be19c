package decode

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/tracehouse/tracehouse/vocab"
)

// NameIdentity is what a trace's file name says about it.
type NameIdentity struct {
	Rank, TP, DP, PP, EP int    // -1 when the name does not say
	Stage                string // prefill, decode or ""
	Merged               bool   // merged-*: several ranks in one file
	VLLMName             bool   // dp<d>_pp<p>_tp<t>_..._rank<r>: vLLM's naming
	TPName               bool   // -TP-<n>: SGLang / TokenSpeed naming
}

// Whole tokens separated by '-', '_', '.', or the ends, case-insensitive.
var (
	tokRank   = regexp.MustCompile(`(?i)(?:^|[-_.])rank-?(\d+)(?:$|[-_.])`)
	tokTP     = regexp.MustCompile(`(?i)(?:^|[-_.])tp-?(\d+)(?:$|[-_.])`)
	tokWorker = regexp.MustCompile(`(?i)(?:^|[-_.])worker-?(\d+)(?:$|[-_.])`)
	tokDP     = regexp.MustCompile(`(?i)(?:^|[-_.])dp-?(\d+)(?:$|[-_.])`)
	tokPP     = regexp.MustCompile(`(?i)(?:^|[-_.])pp-?(\d+)(?:$|[-_.])`)
	tokEP     = regexp.MustCompile(`(?i)(?:^|[-_.])ep-?(\d+)(?:$|[-_.])`)
	tokStage  = regexp.MustCompile(`(?i)(?:^|[-_.])(extend|prefill|decode)(?:$|[-_.])`)
	vllmName  = regexp.MustCompile(`(?i)(?:^|[-_.])dp\d+_pp\d+_tp\d+_(?:dcp\d+_)?(?:ep\d+_)?rank\d+(?:$|[-_.])`)
	tpDash    = regexp.MustCompile(`(?i)(?:^|[-_.])tp-\d+(?:$|[-_.])`)
)

func tokenInt(re *regexp.Regexp, s string) int {
	m := re.FindStringSubmatch(s)
	if m == nil {
		return -1
	}
	n, err := strconv.Atoi(m[1])
	if err != nil {
		return -1
	}
	return n
}

// IdentifyName reads rank, parallel ranks and stage from a file's base name.
// A global rank<n> wins over tp<n>: in vLLM's dp1_pp0_tp0_..._rank2 the TP
// index repeats across DP groups while rank does not.
func IdentifyName(base string) NameIdentity {
	id := NameIdentity{
		TP: tokenInt(tokTP, base), DP: tokenInt(tokDP, base),
		PP: tokenInt(tokPP, base), EP: tokenInt(tokEP, base),
	}
	id.Rank = tokenInt(tokRank, base)
	if id.Rank < 0 {
		id.Rank = id.TP
	}
	if id.Rank < 0 {
		id.Rank = tokenInt(tokWorker, base)
	}
	if m := tokStage.FindAllStringSubmatch(base, -1); m != nil {
		// The token closest to the end names the stage.
		id.Stage = stageWord(m[len(m)-1][1])
	}
	lower := strings.ToLower(base)
	id.Merged = strings.HasPrefix(lower, "merged-") || strings.HasPrefix(lower, "merged_")
	id.VLLMName = vllmName.MatchString(base)
	id.TPName = tpDash.MatchString(base)
	return id
}

func stageWord(w string) string {
	switch strings.ToLower(w) {
	case "extend", vocab.Prefill:
		return vocab.Prefill
	case vocab.Decode:
		return vocab.Decode
	}
	return ""
}

// DirStage returns the stage named by the directory component closest to
// the file that equals prefill, extend or decode (never a substring).
func DirStage(path string) string {
	dir := filepath.Dir(path)
	for {
		if s := stageWord(filepath.Base(dir)); s != "" {
			return s
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}
