package schematest

import "syscall"

const (
	// tmpfsMagic is statfs(2)'s f_type of a tmpfs.
	tmpfsMagic = 0x01021994
	// memTempFree is the free space /dev/shm needs: 10 times the peak of
	// `go test ./...` (197 MiB on /dev/shm, sampled every 0.2 s, two test
	// binaries at a time). Docker's default /dev/shm is 64 MiB.
	memTempFree = 2 << 30
)

// memTempDir is /dev/shm when it is a tmpfs with memTempFree bytes free
// that this process may write to, or "". A test binary creates and
// removes thousands of files (warehouse copies, lake files, id claims); on
// this project's ext4 disk each creation scans the inode bitmap past the
// inodes deleted just before (perf of the lake tests: a quarter of the
// samples in ext4's inode allocation, recently_deleted and the block
// lookups under it). On /dev/shm the lake test binary took 35-39 -> 20-21
// CPU-s, cmd/tracehouse's 119 -> 98. The directory itself, not one made in
// it, keeps the paths as short as under /tmp give or take four bytes: two
// cmd tests hold output that names temporary paths to a width.
func memTempDir() string {
	var st syscall.Statfs_t
	if err := syscall.Statfs("/dev/shm", &st); err != nil || st.Type != tmpfsMagic ||
		st.Bavail*uint64(st.Bsize) < memTempFree {
		return ""
	}
	if syscall.Access("/dev/shm", 2 /* W_OK */) != nil {
		return ""
	}
	return "/dev/shm"
}
