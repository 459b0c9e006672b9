package loop

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rlktop/rlktop/gpu"
	"github.com/rlktop/rlktop/gpu/reading"
	"github.com/rlktop/rlktop/tracer/livestate"
	"github.com/rlktop/rlktop/tracer/session"
)

// telemetry is a Live's GPU / child-process sampling: a gpu.Poller whose
// readings go to the session as counters, the latest kept for Telemetry,
// and co-tenants marked in the session's warnings.
type telemetry struct {
	mon    *gpu.Monitor // nil: telemetry off
	status string       // gpu.Open's status line
	cancel context.CancelFunc
	done   chan struct{}

	mu       sync.Mutex
	sample   reading.Sample
	have     bool
	notes    []string     // co-tenant warnings given, in order
	warned   map[int]bool // co-tenant pids already warned about
	cotenant bool         // the latest sample had a co-tenant
}

func (t *telemetry) open() {
	t.mon, t.status = gpu.Open()
}

// start runs the poller until close: readings go to sess as counters
// (co-tenants as warnings); the watched process follows sup's child.
func (t *telemetry) start(sess *session.Session, sup *Supervisor, every time.Duration) {
	ctx, cancel := context.WithCancel(context.Background())
	t.cancel = cancel
	t.done = make(chan struct{})
	readings := gpu.NewPoller(t.mon, every, sess.Intern).Run(ctx)
	go func() {
		defer close(t.done)
		watched := -1
		for r := range readings {
			// Follow the child across restarts (Restart also calls Watch
			// at once; this catches any other relaunch).
			switch cs := sup.Status(); {
			case cs.State == livestate.Running && cs.PID != watched:
				watched = cs.PID
				t.mon.Watch(cs.PID)
			case cs.State != livestate.Running && watched != 0:
				watched = 0
				t.mon.Watch(0) // no child: no "process not found" errors
			}
			sess.AddCounters(r.Counters)
			if msg := t.take(r); msg != "" {
				sess.Warn(msg)
			}
		}
	}()
}

// take stores a reading and returns a warning for co-tenants not warned
// about before ("" none).
func (t *telemetry) take(r gpu.Reading) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sample, t.have = r.Sample, true
	t.cotenant = r.Sample.HasCoTenant()
	if !t.cotenant {
		return ""
	}
	if t.warned == nil {
		t.warned = map[int]bool{}
	}
	var fresh []string
	for _, c := range r.Sample.CoTenants {
		if t.warned[c.PID] {
			continue
		}
		t.warned[c.PID] = true
		s := fmt.Sprintf("pid %d on %s GPU %d", c.PID, c.Vendor, c.Device)
		if c.UsedMemBytes > 0 {
			s += fmt.Sprintf(" (%.0f MiB)", float64(c.UsedMemBytes)/(1<<20))
		}
		fresh = append(fresh, s)
	}
	if len(fresh) == 0 {
		return ""
	}
	slices.Sort(fresh)
	msg := fmt.Sprintf("GPU co-tenant since %s: %s — another process shares the GPU, so times measured while it runs (and any comparison) are not the child's alone",
		time.Unix(0, r.Sample.TS).Format("15:04:05"), strings.Join(fresh, ", "))
	t.notes = append(t.notes, msg)
	return msg
}

func (t *telemetry) close() {
	if t.cancel != nil {
		t.cancel()
		<-t.done
		t.cancel = nil
	}
	if t.mon != nil {
		t.mon.Close()
	}
}

// latest is the newest sample, the status line and whether a sample was
// taken yet (Live.Telemetry).
func (t *telemetry) latest() (reading.Sample, string, bool) {
	if t.mon == nil {
		return reading.Sample{}, "telemetry off", false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.sample, t.status, t.have
}

// coTenantNotes returns the co-tenant warnings given so far.
func (t *telemetry) coTenantNotes() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.notes)
}
