package kernelname

import "testing"

// TestPatternsCompile: every pattern compiles (they compile on first use,
// so a bad one would otherwise panic only when a name reaches it), and a
// compiled pattern answers as regexp does.
func TestPatternsCompile(t *testing.T) {
	for _, l := range []lazyRe{dtypeRe, dtypesRe, dtypeHead, instrRe, tile2Re, tile3Re, layoutRe, alignRe,
		smRe, digitsRe, legacyRe, versionRe, cIdxRe, aIdxRe, bIdxRe, tTypesRe, macroTile} {
		if l.re() == nil {
			t.Error("a pattern compiled to nil")
		}
	}
	if !dtypesRe.MatchString("bf16fp32") || dtypesRe.MatchString("bf16x") {
		t.Error("dtypesRe: want bf16fp32 matched, bf16x not")
	}
	if got := dtypeHead.FindString("e4m3rest"); got != "e4m3" {
		t.Errorf("dtypeHead.FindString(e4m3rest) = %q, want e4m3", got)
	}
}
