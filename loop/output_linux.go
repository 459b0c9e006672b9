package loop

import (
	"os"
	"syscall"
)

// punchHole releases n bytes at off of f without changing its size
// (fallocate FALLOC_FL_PUNCH_HOLE|FALLOC_FL_KEEP_SIZE; ext4, xfs, btrfs and
// tmpfs support it).
func punchHole(f *os.File, off, n int64) error {
	const punchHole, keepSize = 0x02, 0x01 // linux/falloc.h
	return os.NewSyscallError("fallocate", syscall.Fallocate(int(f.Fd()), punchHole|keepSize, off, n))
}
