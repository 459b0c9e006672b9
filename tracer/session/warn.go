package session

// Warn adds msg to State.Warnings (at most 100 are kept), for what rlktop
// itself observes about a run — e.g. loop.Live's telemetry marking a GPU
// co-tenant — so that every view and report of the session shows it.
func (s *Session) Warn(msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.warn(msg)
	s.version++
}
