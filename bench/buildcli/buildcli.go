// Package buildcli builds the tracehouse command a benchmark times, so
// that every benchmark program builds it the same way.
package buildcli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// Build builds ./cmd/tracehouse (run from the repository's root) into
// dir/tracehouse and returns its path; go build's output goes to stderr.
func Build(ctx context.Context, dir string) (string, error) {
	bin := filepath.Join(dir, "tracehouse")
	fmt.Fprintln(os.Stderr, "building the CLI")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/tracehouse")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return "", fmt.Errorf("build the CLI: %w", err)
	}
	return bin, nil
}

// Binaries are the builds a benchmark alternates: cli, or when it is
// empty the command built into dir (Build), then against when set.
func Binaries(ctx context.Context, dir, cli, against string) ([]string, error) {
	bin := cli
	if bin == "" {
		var err error
		if bin, err = Build(ctx, dir); err != nil {
			return nil, err
		}
	}
	bins := []string{bin}
	if against != "" {
		bins = append(bins, against)
	}
	return bins, nil
}
