// Package livestate holds the plain data types that the process layer
// produces and the view layer draws: the child's status and output lines
// (made by loop.Supervisor), a comparison's result and its step labels
// (loop.Compare), and the step times and flag marks of a live session
// (tracer/session), under these names only: views and tui import this
// package instead of loop and session (the rule internal/archtest
// checks). Device readings live in gpu/reading for the same reason.
//
// It imports only the standard library and tracer/attrib (the comparison
// statistics a CompareResult carries); keep it so.
package livestate
