//go:build !linux

package schematest

// memTempDir is Linux's /dev/shm only; elsewhere the tests keep the
// system's temporary directory.
func memTempDir() string { return "" }
