package session

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/klauspost/compress/gzip"
)

// readOnly adapts a reader to the connection interface: writes (control
// frames) fail, Close closes the underlying file.
type readOnly struct {
	io.Reader
	closer io.Closer
}

var errReplay = errors.New("session: a replayed recording takes no control frames")

func (r *readOnly) Write([]byte) (int, error) { return 0, errReplay }
func (r *readOnly) Close() error {
	if r.closer != nil {
		return r.closer.Close()
	}
	return nil
}

// Replay feeds a recording (gzip or raw wire stream) into the session as
// if its children were connected, so that `rlktop open FILE` can show the
// same State a live run shows (steps, marks, window at the end of the
// recording, drops). It returns at once; use Wait to know when the whole
// file was read. A recording cut short by a killed recorder replays up to
// its last whole frame, and the cut is reported in State.Warnings.
func (s *Session) Replay(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	br := bufio.NewReaderSize(f, 256<<10)
	var r io.Reader = br
	if m, _ := br.Peek(2); len(m) == 2 && m[0] == 0x1f && m[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			f.Close()
			return fmt.Errorf("replay %s: gzip header unreadable: %w", path, err)
		}
		r = zr
	}
	s.AddConn(&readOnly{Reader: r, closer: f})
	return nil
}
