package session

import "slices"

// Warn adds msg to State.Warnings (at most 100 are kept), for what rlktop
// itself observes about a run — e.g. loop.Live's telemetry marking a GPU
// co-tenant — so that every view and report of the session shows it.
func (s *Session) Warn(msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.warn(msg)
	s.version++
}

// AgentWarningKey is the Meta key of a warning a traced process sends
// (the Python agent's _warn): each becomes a session warning.
const AgentWarningKey = "agent.warning"

// warnOnce is warn of a message not already warned (s.mu held): a
// torch.profiler window's import warnings repeat window after window.
func (s *Session) warnOnce(msg string) {
	if slices.Contains(s.warnings, msg) {
		return
	}
	s.warn(msg)
}
