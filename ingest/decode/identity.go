package decode

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/tracehouse/tracehouse/limits"
	"github.com/tracehouse/tracehouse/vocab"
)

// NameIdentity is what a trace's file name says about it.
type NameIdentity struct {
	Rank, TP, DP, PP, EP int    // -1 when the name does not say
	Stage                string // prefill, decode or ""
	Merged               bool   // merged-*: several ranks in one file
	VLLMName             bool   // dp<d>_pp<p>_tp<t>_..._rank<r>: vLLM's naming
	TPName               bool   // -TP-<n>: SGLang / TokenSpeed naming
	// TooLarge is the first rank token whose number is beyond
	// limits.MaxIndex ("TP-4294967297"), "" when none is: ingest refuses
	// such a file rather than guess its rank.
	TooLarge string
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

// tokenInt is the number of re's token in s, -1 when there is none or it
// is beyond limits.MaxIndex (then named in *tooLarge, if that is still "").
func tokenInt(re *regexp.Regexp, s string, tooLarge *string) int {
	m := re.FindStringSubmatchIndex(s)
	if m == nil {
		return -1
	}
	n, err := strconv.ParseInt(s[m[2]:m[3]], 10, 64)
	if err != nil || !limits.Index(n) {
		if *tooLarge == "" {
			*tooLarge = strings.Trim(s[m[0]:m[1]], "-_.")
		}
		return -1
	}
	return int(n)
}

// IdentifyName reads rank, parallel ranks and stage from a file's base name.
// A global rank<n> wins over tp<n>: in vLLM's dp1_pp0_tp0_..._rank2 the TP
// index repeats across DP groups while rank does not.
func IdentifyName(base string) NameIdentity {
	var id NameIdentity
	id.TP = tokenInt(tokTP, base, &id.TooLarge)
	id.DP = tokenInt(tokDP, base, &id.TooLarge)
	id.PP = tokenInt(tokPP, base, &id.TooLarge)
	id.EP = tokenInt(tokEP, base, &id.TooLarge)
	id.Rank = tokenInt(tokRank, base, &id.TooLarge)
	if id.Rank < 0 {
		id.Rank = id.TP
	}
	if id.Rank < 0 {
		id.Rank = tokenInt(tokWorker, base, &id.TooLarge)
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
