package loop

import (
	"os"
	"path/filepath"
	"testing"
)

// gpuLibsOf reads /proc/PID/maps lines (address, perms, offset, dev,
// inode, path): a HIP process's maps (librocprofiler-register, which HIP
// loads, among its ROCm libraries) give the register's path and no CUDA; a
// CUDA process's give libcupti before libcuda wherever each comes; a
// process with neither gives "".
func TestGPULibsOf(t *testing.T) {
	const hip = `7f1c2a000000-7f1c2a200000 r-xp 00000000 08:01 1234 /opt/rocm-6.4.0/lib/libamdhip64.so.6.4.60400
7f1c2b000000-7f1c2b020000 r-xp 00000000 08:01 1235 /opt/rocm-6.4.0/lib/librocprofiler-register.so.0.4.0
7f1c2c000000-7f1c2c100000 r-xp 00000000 08:01 1236 /opt/rocm-6.4.0/lib/libhsa-runtime64.so.1.15.0
7ffd1c000000-7ffd1c021000 rw-p 00000000 00:00 0 [stack]
`
	const cuda = `7f00aa000000-7f00aa100000 r-xp 00000000 08:01 99 /usr/lib/x86_64-linux-gnu/libcuda.so.570.86.15
7f00ab000000-7f00ab100000 r-xp 00000000 08:01 98 /venv/lib/python3.12/site-packages/nvidia/cuda_cupti/lib/libcupti.so.12
`
	for _, c := range []struct{ maps, cuda, rocm string }{
		{hip, "", "/opt/rocm-6.4.0/lib/librocprofiler-register.so.0.4.0"},
		{cuda, "/venv/lib/python3.12/site-packages/nvidia/cuda_cupti/lib/libcupti.so.12", ""},
		{"00400000-00452000 r-xp 00000000 08:02 173521 /usr/bin/python3.13\n", "", ""},
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "maps"), []byte(c.maps), 0o600); err != nil {
			t.Fatal(err)
		}
		if cu, ro := gpuLibsOf(dir); cu != c.cuda || ro != c.rocm {
			t.Errorf("gpuLibsOf = %q, %q; want %q, %q", cu, ro, c.cuda, c.rocm)
		}
	}
}
