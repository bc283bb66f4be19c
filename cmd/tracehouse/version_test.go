package main

import (
	"regexp"
	"runtime/debug"
	"testing"
)

func TestBuildVersion(t *testing.T) {
	t.Parallel()
	info := &debug.BuildInfo{Main: debug.Module{Version: "v0.3.0"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.modified", Value: "true"}}}
	if v, c := buildVersion(info, true); v != "v0.3.0" || c != "abc123-dirty" {
		t.Errorf("got %s %s", v, c)
	}
	info = &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}
	if v, c := buildVersion(info, true); v != "dev" || c != "unknown" {
		t.Errorf("devel build: got %s %s", v, c)
	}
	code, out, _ := runCmd(t, "version")
	if code != 0 || !regexp.MustCompile(`^tracehouse \S+\ncommit \S+\nduckdb v\d+\.\d+\.\d+`).MatchString(out) {
		t.Errorf("version: exit %d, %q", code, out)
	}
}
