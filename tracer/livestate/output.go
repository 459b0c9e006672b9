package livestate

import "time"

// Stream says which of the child's outputs a line came from.
type Stream uint8

// The child's output streams. Notice marks lines rlktop adds to the ring
// itself (skipped or lost output, restarts); their text starts "rlktop: ".
const (
	Stdout Stream = iota + 1
	Stderr
	Notice
)

func (s Stream) String() string {
	switch s {
	case Stdout:
		return "stdout"
	case Stderr:
		return "stderr"
	case Notice:
		return "rlktop"
	}
	return "?"
}

// OutputLine is one line of the child's output as rlktop read it.
type OutputLine struct {
	// Seq numbers lines from 1, increasing over the Supervisor's life
	// (restarts continue the count), so a reader can ask for what it has
	// not seen yet and can tell when the ring dropped lines.
	Seq    uint64
	Stream Stream
	// Text is the line without its end of line, as the child wrote it:
	// it may hold control characters, escape sequences and invalid UTF-8,
	// so escape it before display. A carriage return not followed by a
	// newline starts the line over, as on a terminal (progress bars).
	// Lines longer than loop.MaxLineBytes are cut into several.
	Text string
	// Time is when rlktop read the line (not when the child wrote it; the
	// two differ by up to loop.OutputPoll, or longer if rlktop was stopped).
	Time time.Time
}
