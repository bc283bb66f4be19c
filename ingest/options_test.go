package ingest

import (
	"errors"
	"testing"
)

// Validate speaks of options, not of a command's flags.
func TestValidateNamesOptions(t *testing.T) {
	err := Options{Stage: "warmup", Role: "eager"}.Validate()
	want := `stage "warmup": want one of prefill, decode, mixed` + "\n" + `role "eager": want one of mapping, formal`
	if err == nil || err.Error() != want {
		t.Fatalf("got %v\nwant %s", err, want)
	}
	var oe *OptionError
	if !errors.As(err, &oe) || oe.Option != "stage" || oe.Value != "warmup" {
		t.Errorf("no *OptionError for stage in %v", err)
	}
	if err := (Options{Framework: "vllm", Stage: "mixed", Role: "mapping"}).Validate(); err != nil {
		t.Errorf("valid options: %v", err)
	}
}
