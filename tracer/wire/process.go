package wire

import (
	"os"
	"strconv"
	"strings"

	"github.com/rlktop/rlktop/tracer/wire/msg"
)

// ProcessHello returns a Hello describing the calling process: source and
// device as given, its pid, host name, command line (/proc/self/cmdline),
// and the distributed rank and world size from the launchers' environment
// variables (RANK / WORLD_SIZE as torchrun sets them, then Open MPI's
// OMPI_COMM_WORLD_RANK / _SIZE, then Slurm's SLURM_PROCID / SLURM_NTASKS;
// rank -1 and world 0 when none is set). The caller fills the clock fields
// and devices.
func ProcessHello(source, device string) msg.Hello {
	host, _ := os.Hostname()
	return msg.Hello{
		Source:  source,
		PID:     int64(os.Getpid()),
		Rank:    envInt("RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID"),
		World:   max(envInt("WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "SLURM_NTASKS"), 0),
		Host:    host,
		Device:  device,
		Cmdline: selfCmdline(),
	}
}

func selfCmdline() []string {
	b, err := os.ReadFile("/proc/self/cmdline")
	if err != nil || len(b) == 0 {
		return nil
	}
	return strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
}

// envInt is the first of keys set to an integer, else -1.
func envInt(keys ...string) int64 {
	for _, k := range keys {
		if v, err := strconv.ParseInt(os.Getenv(k), 10, 64); err == nil {
			return v
		}
	}
	return -1
}
