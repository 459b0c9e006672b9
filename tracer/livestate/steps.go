package livestate

// StepTime is one completed training step.
type StepTime struct {
	Step    int64 // step number as the source numbered it
	PID     int32
	StartNs int64 // host CLOCK_REALTIME ns
	DurNs   int64
}

// Mark is a flag change acknowledged by a child, for the sparkline.
type Mark struct {
	Step  int64 // step at which it took effect; -1 unknown
	PID   int64
	Key   string
	Value string
	AtNs  int64  // wall ns when the ack arrived
	Seq   uint64 // the set command's sequence number (session.Session.Control, SetFlags)
}
