//go:build rocm && cgo

// Command lib is rlktop's rocprofiler-sdk tool library, built with
//
//	go build -tags rocm -buildmode=c-shared -o build/librlktop_rocprof.so ./tracer/rocprof/lib
//
// rocprofiler-sdk loads it through ROCP_TOOL_LIBRARIES (rlktop run sets it)
// and calls rocprofiler_configure, which lives in rlkroc.c with every other
// function the SDK calls. This file is the Source of the one Go goroutine
// (tracer/pump.Run) that drains chunks of copied records (one cgo call per
// chunk), decodes them with package rocprof and sends wire frames to rlktop
// at $RLKTOP_SOCKET through a wire.AsyncSender, which never blocks.
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
#cgo CFLAGS: -I${SRCDIR}/../include -I${SRCDIR}/../../pump/include -O2 -Wall
#cgo LDFLAGS: -ldl -lpthread
#include <stdlib.h>
#include "rlkroc.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/pump"
	"github.com/rlktop/rlktop/tracer/rocprof"
	"github.com/rlktop/rlktop/tracer/steps"
	"github.com/rlktop/rlktop/tracer/wire"
	"github.com/rlktop/rlktop/tracer/wire/msg"
)

func main() {}

const dialTimeout = 2 * time.Second

var cfg = pump.Config{
	Name:    "rocprof",
	Tracing: "rocprofiler tracing",
	Tracer:  "the rocprofiler tool",
	Inert:   "rocprofiler unavailable",
	Debug:   os.Getenv("RLKTOP_ROCPROF_DEBUG") == "1",
}

//export rlkrocGoStart
func rlkrocGoStart() {
	liveEnv()
	go drain()
}

// liveEnv copies RLKTOP_SOCKET and the step variables from C's getenv into
// Go's environment where Go's lacks them: a Go runtime in a shared library
// takes the environment the process started with, so a variable an agent
// sets just before loading this library late (dlopen into a running
// process) would reach only C. The same copy as the CUPTI library's.
func liveEnv() {
	for _, k := range []string{wire.EnvSocket, steps.EnvStepRange, steps.EnvStepWindow} {
		if os.Getenv(k) != "" {
			continue
		}
		ck := C.CString(k)
		v := C.getenv(ck)
		C.free(unsafe.Pointer(ck))
		if v != nil {
			os.Setenv(k, C.GoString(v))
		}
	}
}

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

func infoMeta(i *C.rlkroc_info) []msg.KV {
	kv := []msg.KV{
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
		kv = append(kv, msg.KV{Key: "rocprof.error", Value: e})
	}
	return kv
}

func counterMeta(c *C.rlkroc_counters, d *rocprof.Decoder) []msg.KV {
	u := func(v C.uint64_t) string { return strconv.FormatUint(uint64(v), 10) }
	st := d.Stats()
	kv := []msg.KV{
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
		kv = append(kv, msg.KV{Key: "rocprof.agents", Value: strings.Join(agents, ",")})
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

// drain connects to rlktop, says hello and runs the pump until the
// process exits. Steps: roctx ranges named like steps (RLKTOP_STEP_RANGE),
// else ProfilerStep#N, else fixed windows (RLKTOP_STEP_WINDOW_MS), as the
// CUPTI library does (pump.Run applies the rule).
func drain() {
	i := info()
	dec := rocprof.NewDecoder(int32(os.Getpid()))
	dec.OpName = opName
	dec.SetSDKVersion(uint32(i.sdk_version))
	devs := devices(dec)
	src := &source{dec: dec, b: new(C.rlkroc_batch)}
	s := pump.Connect(cfg, src, dialTimeout, 1<<18) // nil: the context is stopped, the process pays nothing
	if s != nil {
		h := wire.ProcessHello("rocprof", "AMD GPU (rocprofiler-sdk)")
		h.ClockOffsetNs, h.StartNs, h.Devices = int64(i.clock_offset_ns), int64(i.start_real_ns), devs
		s.Hello(&h)
		s.Meta(infoMeta(&i))
		go pump.Controls(cfg, src, s)
	}
	cfg.Delay, _ = time.ParseDuration(os.Getenv("RLKTOP_ROCPROF_TEST_DRAIN_DELAY")) // test hook: a slow drain
	pump.Run(cfg, src, s)
}

// source is the pump's view of the C layer (rlkroc.c) and the decoder.
type source struct {
	dec  *rocprof.Decoder
	b    *C.rlkroc_batch   // its own allocation: cgo checks the whole object a pointer argument points into
	last C.rlkroc_counters // counters last sent
}

func (src *source) Next(wait time.Duration) (pump.State, error) {
	switch C.rlkroc_next(src.b, C.int(wait/time.Millisecond)) {
	case C.RLKROC_CHUNK:
		buf := unsafe.Slice((*byte)(unsafe.Pointer(src.b.buf)), int(src.b.len))
		return pump.Buffer, src.dec.Decode(buf)
	case C.RLKROC_EXIT:
		return pump.Exit, nil
	case C.RLKROC_INERT:
		return pump.Inert, nil
	}
	return pump.Idle, nil
}

func (src *source) Take() ([]string, []tracer.Event) {
	bt := src.dec.Take()
	return bt.NewStrings, bt.Events
}

func (src *source) Name(id tracer.StrID) string { return src.dec.Name(id) }

// TakeMemory returns the memory allocation records decoded since the
// previous call (pump.MemorySource).
func (src *source) TakeMemory() []tracer.MemEvent { return src.dec.TakeMemory() }

func (src *source) Counters(force bool) []msg.KV {
	if src.b.counters == src.last && !force {
		return nil
	}
	src.last = src.b.counters
	return counterMeta(&src.b.counters, src.dec)
}

func (src *source) Info() ([]msg.KV, bool) {
	i := info()
	return infoMeta(&i), i.tracing != 0
}

// SetTracing stops the tool's rocprofiler context (after flushing what it
// holds) or starts it again.
func (src *source) SetTracing(on bool) error {
	var arg C.int
	if on {
		arg = 1
	}
	if C.rlkroc_set_tracing(arg) != 0 {
		return nil
	}
	i := info()
	msg := "rocprofiler context could not be " + map[bool]string{true: "started", false: "stopped"}[on]
	if e := C.GoString(&i.error[0]); e != "" {
		msg += ": " + e
	}
	return errors.New(msg)
}

func (src *source) Done(pump.State) {
	cfg.Logf("done: %+v", src.dec.Stats())
	C.rlkroc_exit_done()
}
