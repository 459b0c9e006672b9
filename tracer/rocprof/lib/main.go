//go:build rocm && cgo

// Command lib is rlktop's rocprofiler-sdk tool library, built with
//
//	go build -tags rocm -buildmode=c-shared -o build/librlktop_rocprof.so ./tracer/rocprof/lib
//
// rocprofiler-sdk loads it through ROCP_TOOL_LIBRARIES (rlktop run sets it)
// and calls rocprofiler_configure, which lives in rlkroc.c with every other
// function the SDK calls. This file is the one Go goroutine that drains
// chunks of copied records (one cgo call per chunk), decodes them with
// package rocprof and sends wire frames to rlktop at $RLKTOP_SOCKET through
// a wire.AsyncSender, which never blocks.
//
// Environment (all optional): RLKTOP_SOCKET (set by rlktop run; without it
// rocprofiler_configure declines and the library does nothing),
// RLKTOP_ROCPROF_BUFFER_MB (rocprofiler buffer, default 8),
// RLKTOP_ROCPROF_CHUNK_KB (default 1024), RLKTOP_ROCPROF_RING (queued
// chunks, default 64), RLKTOP_ROCPROF_MAX_RECORD (bytes copied per record,
// default 4096), RLKTOP_ROCPROF_HIP=0 (no HIP API tracing: kernels are then
// linked to ranges by their launching thread only),
// RLKTOP_ROCPROF_EXIT_WAIT_MS (default 3000), RLKTOP_ROCPROF_DEBUG=1.
package main

/*
#cgo CFLAGS: -I${SRCDIR}/../include -O2 -Wall
#cgo LDFLAGS: -ldl -lpthread
#include <stdlib.h>
#include "rlkroc.h"
*/
import "C"

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/rocprof"
	"github.com/rlktop/rlktop/tracer/steps"
	"github.com/rlktop/rlktop/tracer/wire"
)

func main() {}

const (
	chunkEvents = 8192
	dialTimeout = 2 * time.Second
	metaEvery   = time.Second
	exitFlush   = 2500 * time.Millisecond
)

var debug = os.Getenv("RLKTOP_ROCPROF_DEBUG") == "1"

func logf(format string, a ...any) {
	if debug {
		fmt.Fprintf(os.Stderr, "rlktop rocprof[%d]: "+format+"\n", append([]any{os.Getpid()}, a...)...)
	}
}

//export rlkrocGoStart
func rlkrocGoStart() { go drain() }

func info() C.rlkroc_info {
	var i C.rlkroc_info
	C.rlkroc_get_info(&i)
	return i
}

func opName(kind, op int32) string {
	p := C.rlkroc_op_name(C.int32_t(kind), C.int32_t(op))
	if p == nil {
		return ""
	}
	return C.GoString(p)
}

func sdkVersion(v uint32) string {
	return fmt.Sprintf("%d.%d.%d", v/10000, v/100%100, v%100)
}

func infoMeta(i *C.rlkroc_info) []wire.KV {
	kv := []wire.KV{
		{Key: "rocprof.sdk_version", Value: sdkVersion(uint32(i.sdk_version))},
		{Key: "rocprof.runtime_version", Value: C.GoString(&i.runtime_version[0])},
		{Key: "rocprof.abi_pinned", Value: rocprof.SDKVersion},
		{Key: "rocprof.tracing", Value: strconv.FormatBool(i.tracing != 0)},
		{Key: "rocprof.hip_api", Value: strconv.FormatBool(i.hip_api != 0)},
		{Key: "rocprof.buffer_bytes", Value: strconv.FormatUint(uint64(i.buffer_bytes), 10)},
		{Key: "rocprof.chunk_bytes", Value: strconv.FormatUint(uint64(i.chunk_bytes), 10)},
		{Key: "rocprof.ring_chunks", Value: strconv.Itoa(int(i.ring_cap))},
	}
	if e := C.GoString(&i.error[0]); e != "" {
		kv = append(kv, wire.KV{Key: "rocprof.error", Value: e})
	}
	return kv
}

func counterMeta(c *C.rlkroc_counters, d *rocprof.Decoder) []wire.KV {
	u := func(v C.uint64_t) string { return strconv.FormatUint(uint64(v), 10) }
	st := d.Stats()
	kv := []wire.KV{
		{Key: "rocprof.dropped_records", Value: u(c.sdk_dropped)},
		{Key: "rocprof.ring_dropped_records", Value: u(c.ring_dropped)},
		{Key: "rocprof.truncated_records", Value: u(c.truncated)},
		{Key: "rocprof.entries", Value: u(c.entries)},
		{Key: "rocprof.chunks", Value: u(c.chunks)},
		{Key: "rocprof.short_records", Value: strconv.FormatUint(st.Short, 10)},
		{Key: "rocprof.unpaired_markers", Value: strconv.FormatUint(st.Unpaired, 10)},
		{Key: "rocprof.unnamed_kernels", Value: strconv.FormatUint(st.NoName, 10)},
		{Key: "rocprof.unknown_agents", Value: strconv.FormatUint(st.NoAgent, 10)},
		{Key: "rocprof.open_ranges", Value: strconv.Itoa(d.Open())},
	}
	var agents []string
	for h, o := range d.Agents() {
		agents = append(agents, fmt.Sprintf("%d=%#x", o, h))
	}
	if len(agents) > 0 {
		kv = append(kv, wire.KV{Key: "rocprof.agents", Value: strings.Join(agents, ",")})
	}
	return kv
}

// devices reads the agents the C layer queried: hello devices and the
// decoder's agent handle → GPU index map.
func devices(dec *rocprof.Decoder) []tracer.Device {
	var a [64]C.rlkroc_agent
	n := int(C.rlkroc_agents(&a[0], 64))
	var out []tracer.Device
	for _, ag := range a[:n] {
		if ag._type != 2 {
			continue
		}
		id := int32(ag.type_id)
		dec.SetAgent(uint64(ag.handle), id)
		out = append(out, tracer.Device{ID: id, Name: C.GoString(&ag.product[0]), Vendor: "amd", SMs: int(ag.cu_count),
			ComputeCap: C.GoString(&ag.name[0]), Props: map[string]string{"agent_handle": strconv.FormatUint(uint64(ag.handle), 10)}})
	}
	return out
}

// drain runs for the life of the process; a broken connection only stops
// output (the sender drops and counts), chunks keep being released.
func drain() {
	i := info()
	dec := rocprof.NewDecoder(int32(os.Getpid()))
	dec.OpName = opName
	dec.SetSDKVersion(uint32(i.sdk_version))
	devs := devices(dec)
	var s *wire.AsyncSender
	if conn, err := wire.DialEnv(dialTimeout); err != nil {
		// Nobody to send to: stop the context so the process pays nothing.
		fmt.Fprintf(os.Stderr, "rlktop rocprof[%d]: %v; rocprofiler tracing switched off\n", os.Getpid(), err)
		C.rlkroc_set_tracing(0)
	} else {
		s = wire.NewAsyncSender(conn, 1<<18)
		h := wire.ProcessHello("rocprof", "AMD GPU (rocprofiler-sdk)")
		h.ClockOffsetNs, h.StartNs, h.Devices = int64(i.clock_offset_ns), int64(i.start_real_ns), devs
		s.Hello(&h)
		s.Meta(infoMeta(&i))
		go controls(s)
	}
	// Steps: roctx ranges named like steps (RLKTOP_STEP_RANGE), else
	// ProfilerStep#N, else fixed windows (RLKTOP_STEP_WINDOW_MS), as the
	// CUPTI library does.
	var relay *wire.Relay // decoder string ids → stream ids, chunked sends
	if s != nil {
		relay = wire.NewRelay(s, chunkEvents)
	}
	stepRule := steps.FromEnv(os.Getenv, func(err error) {
		fmt.Fprintf(os.Stderr, "rlktop rocprof[%d]: %v; using the default step ranges\n", os.Getpid(), err)
	})
	var b C.rlkroc_batch
	var lastMeta time.Time
	var last C.rlkroc_counters
	delay, _ := time.ParseDuration(os.Getenv("RLKTOP_ROCPROF_TEST_DRAIN_DELAY")) // test hook: a slow drain
	for {
		st := C.rlkroc_next(&b, 200)
		if st == C.RLKROC_CHUNK {
			buf := unsafe.Slice((*byte)(unsafe.Pointer(b.buf)), int(b.len))
			if err := dec.Decode(buf); err != nil {
				logf("%v", err)
			}
			bt := dec.Take()
			stepRule.Apply(bt.Events, dec.Name)
			bt.Events = append(bt.Events, stepRule.Windows(bt.Events)...)
			if delay > 0 {
				time.Sleep(delay)
			}
			if relay != nil {
				relay.Send(bt.NewStrings, bt.Events)
			}
		}
		if s != nil && (st != C.RLKROC_CHUNK || time.Since(lastMeta) > metaEvery) {
			if b.counters != last || st == C.RLKROC_EXIT {
				s.Meta(counterMeta(&b.counters, dec))
				last = b.counters
			}
			lastMeta = time.Now()
		}
		switch st {
		case C.RLKROC_EXIT, C.RLKROC_INERT:
			if s != nil {
				i := info()
				s.Meta(infoMeta(&i))
				s.Meta(counterMeta(&b.counters, dec))
				reason := "exit"
				if st == C.RLKROC_INERT {
					reason = "rocprofiler unavailable"
				}
				_ = s.Close(wire.Bye{Reason: reason, ExitCode: -1}, exitFlush)
			}
			logf("done: %+v", dec.Stats())
			C.rlkroc_exit_done()
			return
		}
	}
}

// controls applies rlktop's Control frames: pause stops the tool's
// rocprofiler context (after flushing what it holds) and resume starts it
// again. Flags cannot be set inside the traced program, so set and stop are
// refused (rlktop restarts the command with the other arm's environment).
func controls(s *wire.AsyncSender) {
	for c := range s.Controls() {
		ack := wire.Control{Op: wire.ControlAck, Seq: c.Seq, Step: -1}
		switch c.Op {
		case wire.ControlPause, wire.ControlResume:
			on := c.Op == wire.ControlResume
			var arg C.int
			if on {
				arg = 1
			}
			if C.rlkroc_set_tracing(arg) == 0 {
				i := info()
				ack.Err = "rocprofiler context could not be " + map[bool]string{true: "started", false: "stopped"}[on]
				if e := C.GoString(&i.error[0]); e != "" {
					ack.Err += ": " + e
				}
			}
		default:
			ack.Err = "the rocprofiler tool cannot " + c.Op.String() + " inside the traced process; rlktop restarts the command instead"
		}
		i := info()
		ack.Tracing = i.tracing != 0
		s.Ack(&ack)
		s.Meta(infoMeta(&i))
	}
}
