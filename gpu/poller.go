package gpu

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/rlktop/rlktop/gpu/reading"
	"github.com/rlktop/rlktop/tracer"
)

// Counter track names. Per-device tracks carry the device index in
// tracer.Counter.Device; host-wide ones carry -1.
const (
	CounterUtilPct      = "gpu.util_pct"       // % of time a kernel ran
	CounterMemUtilPct   = "gpu.mem_util_pct"   // % of time memory was read/written
	CounterMemUsedBytes = "gpu.mem_used_bytes" // device memory in use, bytes
	CounterPowerMW      = "gpu.power_mw"       // board power, mW
	CounterPowerLimitMW = "gpu.power_limit_mw" // enforced power limit, mW
	CounterSMClockMHz   = "gpu.sm_clock_mhz"
	CounterMemClockMHz  = "gpu.mem_clock_mhz"
	CounterTempC        = "gpu.temp_c"
	CounterThrottled    = "gpu.throttle_reasons" // number of active reasons other than gpu_idle
	CounterCoTenants    = "gpu.cotenants"        // host-wide: processes sharing a GPU with the child
	CounterProcCPUPct   = "proc.cpu_pct"         // host-wide: child tree CPU, % of one CPU
	CounterProcRSSBytes = "proc.rss_bytes"       // host-wide: child tree resident memory, bytes
)

// CounterNames lists every counter track name AppendCounters may emit.
func CounterNames() []string {
	return []string{CounterUtilPct, CounterMemUtilPct, CounterMemUsedBytes, CounterPowerMW, CounterPowerLimitMW,
		CounterSMClockMHz, CounterMemClockMHz, CounterTempC, CounterThrottled, CounterCoTenants,
		CounterProcCPUPct, CounterProcRSSBytes}
}

// AppendCounters appends s as counter samples at s.TS, naming tracks
// through id (e.g. a *tracer.Strings' Intern). Unknown values are left
// out; gpu.cotenants is written only while a child is watched.
func AppendCounters(dst []tracer.Counter, s *reading.Sample, id func(string) tracer.StrID) []tracer.Counter {
	add := func(name string, dev int32, v float64) {
		dst = append(dst, tracer.Counter{TS: s.TS, Name: id(name), Device: dev, Value: v})
	}
	addInt := func(name string, dev int32, v int64) {
		if v >= 0 {
			add(name, dev, float64(v))
		}
	}
	for i := range s.Devices {
		d := &s.Devices[i]
		dev := int32(d.Index)
		addInt(CounterUtilPct, dev, int64(d.UtilPct))
		addInt(CounterMemUtilPct, dev, int64(d.MemUtilPct))
		addInt(CounterMemUsedBytes, dev, d.MemUsedBytes)
		addInt(CounterPowerMW, dev, d.PowerMW)
		addInt(CounterPowerLimitMW, dev, d.PowerLimitMW)
		addInt(CounterSMClockMHz, dev, int64(d.SMClockMHz))
		addInt(CounterMemClockMHz, dev, int64(d.MemClockMHz))
		addInt(CounterTempC, dev, int64(d.TempC))
		if d.ThrottleKnown {
			n := 0
			for _, r := range d.Throttle {
				if r != "gpu_idle" {
					n++
				}
			}
			add(CounterThrottled, dev, float64(n))
		}
	}
	if s.ProcOK {
		if s.Proc.CPUPct >= 0 {
			add(CounterProcCPUPct, -1, s.Proc.CPUPct)
		}
		add(CounterProcRSSBytes, -1, float64(s.Proc.RSSBytes))
		if !s.ForeignPIDs {
			add(CounterCoTenants, -1, float64(len(s.CoTenants)))
		}
	}
	return dst
}

// Reading is what a Poller delivers: the sample, its counters, and the
// error of a failed sample (then Sample may be partial).
type Reading struct {
	Sample   reading.Sample
	Counters []tracer.Counter
	Err      error
}

// Poller samples a Sampler at a fixed interval and delivers Readings on a
// channel. A slow consumer loses the older reading, never blocks the
// sampling: the channel holds one reading and a newer one replaces it
// (counted by Dropped).
type Poller struct {
	s       Sampler
	every   time.Duration
	ids     map[string]tracer.StrID
	dropped atomic.Uint64
}

// DefaultInterval is the sampling period when NewPoller gets 0.
const DefaultInterval = 500 * time.Millisecond

// MinInterval is the shortest period NewPoller accepts (NVML's own
// utilisation window is 1/6 s to 1 s; sampling faster adds nothing).
const MinInterval = 20 * time.Millisecond

// NewPoller returns a poller sampling every `every` (0: DefaultInterval;
// shorter than MinInterval: MinInterval). The counter names are interned
// with intern now, on the caller's goroutine — e.g. a *tracer.Strings'
// Intern, or a wire.AsyncSender's Name — and never again, so the table
// may stay owned by the consumer.
func NewPoller(s Sampler, every time.Duration, intern func(string) tracer.StrID) *Poller {
	if every == 0 {
		every = DefaultInterval
	}
	every = max(every, MinInterval)
	p := &Poller{s: s, every: every, ids: map[string]tracer.StrID{}}
	for _, n := range CounterNames() {
		p.ids[n] = intern(n)
	}
	return p
}

// Interval returns the sampling period.
func (p *Poller) Interval() time.Duration { return p.every }

// Dropped returns how many readings were replaced before the consumer
// took them.
func (p *Poller) Dropped() uint64 { return p.dropped.Load() }

// Run samples immediately and then every interval until ctx is done, then
// closes the returned channel.
func (p *Poller) Run(ctx context.Context) <-chan Reading {
	ch := make(chan Reading, 1)
	go func() {
		defer close(ch)
		t := time.NewTicker(p.every)
		defer t.Stop()
		for {
			s, err := p.s.Sample()
			r := Reading{Sample: s, Err: err}
			r.Counters = AppendCounters(nil, &r.Sample, func(n string) tracer.StrID { return p.ids[n] })
			select {
			case ch <- r:
			default:
				select { // replace the unread older reading
				case <-ch:
					p.dropped.Add(1)
				default:
				}
				select {
				case ch <- r:
				case <-ctx.Done():
					return
				}
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return ch
}
