//go:build cupti && cgo

// Command lib is rlktop's CUPTI injection library, built with
//
//	go build -tags cupti -buildmode=c-shared -o build/librlktop_cupti.so ./tracer/cupti/lib
//
// (scripts/build-cupti.sh). The CUDA driver loads it through
// CUDA_INJECTION64_PATH and calls InitializeInjection; NVTX loads it through
// NVTX_INJECTION64_PATH and calls InitializeInjectionNvtx2. Both live in
// rlk.c, which owns every call CUPTI makes into the library. This file is
// the one Go goroutine that drains completed buffers (one cgo call per
// buffer), decodes them with package cupti and sends wire frames to rlktop
// at $RLKTOP_SOCKET through a wire.AsyncSender, which never blocks.
//
// Environment (all optional): RLKTOP_SOCKET (set by rlktop run; without it
// the library turns tracing off and detaches), RLKTOP_CUPTI_LIB (exact
// libcupti path), RLKTOP_CUPTI_SEARCH (extra folders, colon-separated),
// RLKTOP_STEP_RANGE (regex of the NVTX ranges that are training steps;
// default: steps.DefaultStepRange, else ProfilerStep#N), RLKTOP_CUPTI_BUFFER_MB (1–10, default 4), RLKTOP_CUPTI_RING (queued
// buffers, default 16), RLKTOP_CUPTI_MAX_BUFFERS (default 32),
// RLKTOP_CUPTI_START=0 (start with tracing off), RLKTOP_CUPTI_SUBSCRIBE=0
// (never take the CUPTI subscriber), RLKTOP_CUPTI_EXIT_WAIT_MS (default
// 3000), RLKTOP_CUPTI_SENDER_EVENTS (events the sender queues before it
// drops, default 1<<18), RLKTOP_CUPTI_DEBUG=1 (diagnostics on stderr).
package main

/*
#include <stdlib.h>
#include "rlk.h"
*/
import "C"

import (
	"fmt"
	"os"
	"strconv"
	"time"
	"unsafe"

	"github.com/rlktop/rlktop/tracer/cupti"
	"github.com/rlktop/rlktop/tracer/steps"
	"github.com/rlktop/rlktop/tracer/wire"
)

func main() {}

const (
	chunk       = 8192                    // events per Send: a full sender ring drops at this granularity
	dialTimeout = 2 * time.Second         // connecting to rlktop
	metaEvery   = time.Second             // drop counters at most this often
	exitFlush   = 2500 * time.Millisecond // at process exit, within RLKTOP_CUPTI_EXIT_WAIT_MS
)

var debug = os.Getenv("RLKTOP_CUPTI_DEBUG") == "1"

func logf(format string, a ...any) {
	if debug {
		fmt.Fprintf(os.Stderr, "rlktop cupti[%d]: "+format+"\n", append([]any{os.Getpid()}, a...)...)
	}
}

// senderEvents is the AsyncSender's ring size in events:
// RLKTOP_CUPTI_SENDER_EVENTS, default 1<<18 (18 MiB).
func senderEvents() int {
	if n, err := strconv.Atoi(os.Getenv("RLKTOP_CUPTI_SENDER_EVENTS")); err == nil && n > 0 {
		return n
	}
	return 1 << 18
}

//export rlkGoStart
func rlkGoStart() { go drain() }

func info() C.rlk_info {
	var i C.rlk_info
	C.rlk_get_info(&i)
	return i
}

func apiName(domain int, cbid uint32) string {
	p := C.rlk_callback_name(C.uint32_t(domain), C.uint32_t(cbid))
	if p == nil {
		return ""
	}
	return C.GoString(p)
}

func subscriberState(i *C.rlk_info) string {
	switch {
	case i.subscribed != 0:
		return "held"
	case i.subscribe_result == 39: // CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED
		return "unavailable: another tool holds CUPTI (torch.profiler, Nsight, compute-sanitizer); activity records only, and that tool may take the activity buffers over (expect gaps)"
	case i.subscribe_result != 0:
		return "unavailable: cuptiSubscribe returned " + strconv.Itoa(int(i.subscribe_result))
	}
	return "not taken"
}

func infoMeta(i *C.rlk_info) []wire.KV {
	kv := []wire.KV{
		{Key: "cupti.path", Value: C.GoString(&i.cupti_path[0])},
		{Key: "cupti.found_by", Value: C.GoString(&i.how[0])},
		{Key: "cupti.version", Value: strconv.Itoa(int(i.cupti_version))},
		{Key: "cupti.subscriber", Value: subscriberState(i)},
		{Key: "cupti.nvtx", Value: strconv.FormatBool(i.nvtx != 0)},
		{Key: "cupti.tracing", Value: strconv.FormatBool(i.tracing != 0)},
		{Key: "cupti.buffer_bytes", Value: strconv.FormatUint(uint64(i.buffer_bytes), 10)},
		{Key: "cupti.max_buffers", Value: strconv.Itoa(int(i.max_buffers))},
	}
	if i.activity_result != 0 {
		kv = append(kv, wire.KV{Key: "cupti.activity_warning", Value: "some activity kinds could not be enabled (CUptiResult " + strconv.Itoa(int(i.activity_result)) + ")"})
	}
	if e := C.GoString(&i.error[0]); e != "" {
		kv = append(kv, wire.KV{Key: "cupti.error", Value: e})
	}
	return kv
}

func counterMeta(c *C.rlk_counters, st cupti.Stats) []wire.KV {
	u := func(v C.uint64_t) string { return strconv.FormatUint(uint64(v), 10) }
	return []wire.KV{
		{Key: "cupti.dropped_records", Value: u(c.cupti_dropped)},
		{Key: "cupti.ring_dropped_records", Value: u(c.ring_dropped)},
		{Key: "cupti.null_buffers", Value: u(c.null_buffers)},
		{Key: "cupti.buffers", Value: u(c.buffers)},
		{Key: "cupti.records", Value: strconv.FormatUint(st.Records, 10)},
		{Key: "cupti.short_records", Value: strconv.FormatUint(st.Short, 10)},
		{Key: "cupti.unpaired_markers", Value: strconv.FormatUint(st.Unpaired, 10)},
	}
}

// drain runs for the life of the process. It never returns early on an
// error of its own: a broken connection only stops output (the sender
// drops and counts), and CUPTI's buffers keep being recycled.
func drain() {
	i := info()
	var s *wire.AsyncSender
	if i.initialized != 0 {
		conn, err := wire.DialEnv(dialTimeout)
		if err != nil {
			// Nobody to send to: detach so the process pays nothing.
			fmt.Fprintf(os.Stderr, "rlktop cupti[%d]: %v; CUPTI tracing switched off\n", os.Getpid(), err)
			C.rlk_set_tracing(0)
		} else {
			s = wire.NewAsyncSender(conn, senderEvents())
		}
	} else {
		logf("not tracing: %s", C.GoString(&i.error[0]))
	}
	var pc, pm, pr C.uint64_t
	C.rlk_clock_pair(&pc, &pm, &pr)
	if s != nil {
		h := wire.ProcessHello("cupti", "NVIDIA GPU (CUPTI)")
		h.ClockOffsetNs, h.StartNs = int64(pr)-int64(pm), int64(pr)
		s.Hello(&h)
		s.Meta(infoMeta(&i))
		go controls(s)
	}

	dec := cupti.NewDecoder(int32(os.Getpid()), cupti.CMemory{APINames: apiName})
	var relay *wire.Relay // decoder string ids → stream ids, chunked sends
	if s != nil {
		relay = wire.NewRelay(s, chunk)
	}
	stepRule := steps.FromEnv(os.Getenv, func(err error) {
		fmt.Fprintf(os.Stderr, "rlktop cupti[%d]: %v; using the default step ranges\n", os.Getpid(), err)
	})
	dec.Clock.Add(int64(pc), int64(pm))
	var b C.rlk_batch
	var lastMeta time.Time
	var lastCounters C.rlk_counters
	// Test hook: a slow drain, so that tests can fill the ring.
	delay, _ := time.ParseDuration(os.Getenv("RLKTOP_CUPTI_TEST_DRAIN_DELAY"))
	for {
		st := C.rlk_next(&b, 200)
		dec.Clock.Add(int64(b.pair_cupti_ns), int64(b.pair_mono_ns))
		if st == C.RLK_BUFFER {
			buf := unsafe.Slice((*byte)(unsafe.Pointer(b.buf)), int(b.valid))
			offs := unsafe.Slice((*uint32)(unsafe.Pointer(b.offs)), int(b.nrec))
			if err := dec.Decode(buf, offs); err != nil {
				logf("%v", err)
			}
			bt := dec.Take()
			stepRule.Apply(bt.Events, dec.Strings().Get)
			bt.Events = append(bt.Events, stepRule.Windows(bt.Events)...)
			if delay > 0 {
				time.Sleep(delay)
			}
			if relay != nil {
				relay.Send(bt.NewStrings, bt.Events)
			}
		}
		if s != nil && s.Err() != nil {
			// rlktop went away: stop paying for tracing nobody reads.
			fmt.Fprintf(os.Stderr, "rlktop cupti[%d]: lost the connection to rlktop (%v); CUPTI tracing switched off\n", os.Getpid(), s.Err())
			C.rlk_set_tracing(0)
			s = nil
		}
		if s != nil && (st != C.RLK_BUFFER || time.Since(lastMeta) > metaEvery) {
			if b.counters != lastCounters || st == C.RLK_EXIT {
				s.Meta(counterMeta(&b.counters, dec.Stats()))
				lastCounters = b.counters
			}
			lastMeta = time.Now()
		}
		switch st {
		case C.RLK_EXIT:
			if s != nil {
				i := info()
				s.Meta(infoMeta(&i))
				_ = s.Close(wire.Bye{Reason: "exit", ExitCode: -1}, exitFlush)
			}
			logf("exit: %d records, counters %+v", dec.Stats().Records, b.counters)
			C.rlk_exit_done()
			return
		case C.RLK_INERT:
			if s != nil {
				i := info()
				s.Meta(infoMeta(&i))
				_ = s.Close(wire.Bye{Reason: "cupti unavailable", ExitCode: -1}, exitFlush)
			}
			return
		}
	}
}

// controls applies rlktop's Control frames: pause/resume switch CUPTI off
// (disabled, flushed, detached) and on; flags cannot be set inside a CUDA
// program, so ControlSet and ControlStop are refused (rlktop restarts the
// command with the other arm's environment instead).
func controls(s *wire.AsyncSender) {
	for c := range s.Controls() {
		ack := wire.Control{Op: wire.ControlAck, Seq: c.Seq, Step: -1}
		switch c.Op {
		case wire.ControlPause, wire.ControlResume:
			on := c.Op == wire.ControlResume
			if C.rlk_set_tracing(boolInt(on)) == 0 && on {
				i := info()
				ack.Err = "tracing could not be switched on: " + C.GoString(&i.error[0])
			}
		default:
			ack.Err = "the CUPTI tracer cannot " + c.Op.String() + " inside the traced process; rlktop restarts the command instead"
		}
		i := info()
		ack.Tracing = i.tracing != 0
		s.Ack(&ack)
		s.Meta(infoMeta(&i))
	}
}

func boolInt(b bool) C.int {
	if b {
		return 1
	}
	return 0
}
