package livestate

import (
	"fmt"

	"github.com/rlktop/rlktop/tracer/wire/msg"
)

// Refusal is a control command a child refused: its acknowledgement
// (msg.ControlAck) carried an error. Acknowledged flag changes are Marks.
type Refusal struct {
	// Seq is the command's sequence number (session.Session.Control,
	// SetFlags); 0 with Op, Key and Value empty when the acknowledgement
	// named a command the session did not send.
	Seq   uint64
	PID   int64 // the child's pid (its hello)
	Op    msg.ControlOp
	Key   string
	Value string
	Err   string // the child's reason, as it sent it
	AtNs  int64  // wall ns when the acknowledgement arrived
}

// String says who refused what and why: "child pid 42 refused set
// attention=bogus: unknown value" (the session's warning, and a
// comparison arm's reason).
func (r Refusal) String() string {
	return fmt.Sprintf("child pid %d refused %s %s=%s: %s", r.PID, r.Op, r.Key, r.Value, r.Err)
}
