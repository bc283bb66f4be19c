package main

import "runtime/debug"

// version is set at build time with -ldflags "-X main.version=..."; without
// it the module version from the build info is used.
var version = "dev"

// buildVersion is what the binary knows of itself: the version (ldflags,
// else the module version, else "dev") and the VCS commit with "-dirty"
// when the tree had local changes ("unknown" outside a VCS build).
func buildVersion(info *debug.BuildInfo, ok bool) (ver, commit string) {
	ver, commit = version, "unknown"
	if !ok {
		return ver, commit
	}
	if ver == "dev" && info.Main.Version != "" && info.Main.Version != "(devel)" {
		ver = info.Main.Version
	}
	dirty := false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			commit = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if dirty && commit != "unknown" {
		commit += "-dirty"
	}
	return ver, commit
}
