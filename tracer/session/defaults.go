package session

import "sync/atomic"

// Limits are process-wide defaults for the Options fields of the same
// name, set from the command line (--max-conns, --max-names-per-conn,
// --max-name-bytes-per-conn) before a session starts. An Options field
// above 0 wins; a Limits field of 0 keeps the built-in default (1024
// connections, 1<<20 names, 64 MiB of names per connection).
type Limits struct {
	MaxConns            int
	MaxNamesPerConn     int
	MaxNameBytesPerConn int64 // bytes
}

// Flag names of the Limits fields, for messages.
const (
	MaxConnsFlag            = "max-conns"
	MaxNamesPerConnFlag     = "max-names-per-conn"
	MaxNameBytesPerConnFlag = "max-name-bytes-per-conn"
)

var setLimits atomic.Pointer[Limits]

// SetDefaultLimits sets the defaults New uses for the Options limits left
// at 0.
func SetDefaultLimits(l Limits) { setLimits.Store(&l) }

// DefaultLimits returns the built-in limits with those set by
// SetDefaultLimits over them.
func DefaultLimits() Limits {
	d := Limits{MaxConns: 1024, MaxNamesPerConn: 1 << 20, MaxNameBytesPerConn: 64 << 20}
	if p := setLimits.Load(); p != nil {
		if p.MaxConns > 0 {
			d.MaxConns = p.MaxConns
		}
		if p.MaxNamesPerConn > 0 {
			d.MaxNamesPerConn = p.MaxNamesPerConn
		}
		if p.MaxNameBytesPerConn > 0 {
			d.MaxNameBytesPerConn = p.MaxNameBytesPerConn
		}
	}
	return d
}
