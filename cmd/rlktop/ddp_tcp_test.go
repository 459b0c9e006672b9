package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRanksOverTCP (the second node's path): `rlktop run
// --headless --listen 127.0.0.1:0 --listen-file F` runs a job whose rank 0
// reports over the Unix socket as usual, while rank 1 stands for a rank
// on another host: its environment loses RLKTOP_SOCKET and PYTHONPATH and
// gets them back only from `rlktop agent-env --connect "$(cat F)"`, so it
// reaches the session over TCP with the token or not at all. Both must
// be sources with their ranks (from RANK/WORLD_SIZE through the Python
// agent's hello). Needs python3 (standard library only: the agent's
// rlktop.step()).
func TestRanksOverTCP(t *testing.T) {
	bin := needRecordBin(t)
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	dir := t.TempDir()
	steps := filepath.Join(dir, "steps.py")
	if err := os.WriteFile(steps, []byte("import time, rlktop\nfor i in range(40):\n    time.sleep(0.03)\n    rlktop.step()\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := filepath.Join(dir, "addr")
	job := filepath.Join(dir, "job.sh")
	script := `F=$1
while [ ! -s "$F" ]; do sleep 0.05; done
( unset RLKTOP_SOCKET PYTHONPATH
  eval "$("$RLKTOP_BIN" agent-env --connect "$(cat "$F")" --untraced)"
  case "$RLKTOP_SOCKET" in tcp:*'#'*) ;; *) echo "agent-env gave RLKTOP_SOCKET=$RLKTOP_SOCKET" >&2; exit 3;; esac
  RANK=1 WORLD_SIZE=2 exec python3 "$STEPS" ) &
RANK=0 WORLD_SIZE=2 python3 "$STEPS"
wait $! || exit $?
`
	if err := os.WriteFile(job, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "run", "--headless", "--steps", "60", "--format", "json", "--listen", "127.0.0.1:0", "--listen-file", addr, "--", "sh", job, addr)
	cmd.Env = append(os.Environ(), "RLKTOP_BIN="+bin, "STEPS="+steps)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("run: %v\n%s", err, tail(stderr.String(), 3000))
	}
	if !strings.Contains(stderr.String(), "ranks on other hosts: eval \"$(rlktop agent-env --connect 'tcp:127.0.0.1:") {
		t.Errorf("stderr does not say how other hosts connect:\n%s", stderr.String())
	}
	if st, err := os.Stat(addr); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("--listen-file: %v %v, want mode 0600", st, err)
	}
	var doc struct {
		Sources []struct {
			Rank     int    `json:"rank"`
			RankFrom string `json:"rank_from"`
			World    int    `json:"world"`
			Steps    int    `json:"steps"`
		} `json:"sources"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if len(doc.Sources) != 2 {
		t.Fatalf("sources %+v: want rank 0 (Unix socket) and rank 1 (TCP)\n%s", doc.Sources, stderr.String())
	}
	for i, s := range doc.Sources {
		if s.Rank != i || s.RankFrom != "trace" || s.World != 2 || s.Steps == 0 {
			t.Errorf("source %d: %+v", i, s)
		}
	}
}

// agent-env refuses an address without a token.
func TestAgentEnvNeedsToken(t *testing.T) {
	rootCmd.SetArgs([]string{"agent-env", "--connect", "tcp:127.0.0.1:1"})
	rootCmd.SilenceUsage, rootCmd.SilenceErrors = true, true
	defer rootCmd.SetArgs(nil)
	if err := rootCmd.Execute(); err == nil || !strings.Contains(err.Error(), "tcp:HOST:PORT#TOKEN") {
		t.Errorf("error %v", err)
	}
}
