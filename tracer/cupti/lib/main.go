//go:build cupti && cgo

// Command lib is rlktop's CUPTI injection library, built with
//
//	go build -tags cupti -buildmode=c-shared -o build/librlktop_cupti.so ./tracer/cupti/lib
//
// (scripts/build-cupti.sh). The CUDA driver loads it through
// CUDA_INJECTION64_PATH and calls InitializeInjection; NVTX loads it through
// NVTX_INJECTION64_PATH and calls InitializeInjectionNvtx2. Both live in
// rlk.c, which owns every call CUPTI makes into the library. This file is
// the Source of the one Go goroutine (tracer/pump.Run) that drains
// completed buffers (one cgo call per buffer), decodes them with package
// cupti and sends wire frames to rlktop at $RLKTOP_SOCKET through a
// wire.AsyncSender, which never blocks.
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
#cgo CFLAGS: -I${SRCDIR}/../../pump/include
#include <stdlib.h>
#include "rlk.h"
*/
import "C"

import (
	"errors"
	"os"
	"strconv"
	"time"
	"unsafe"

	"github.com/rlktop/rlktop/tracer"
	"github.com/rlktop/rlktop/tracer/cupti"
	"github.com/rlktop/rlktop/tracer/pump"
	"github.com/rlktop/rlktop/tracer/steps"
	"github.com/rlktop/rlktop/tracer/wire"
	"github.com/rlktop/rlktop/tracer/wire/msg"
)

func main() {}

const dialTimeout = 2 * time.Second // connecting to rlktop

var cfg = pump.Config{
	Name:    "cupti",
	Tracing: "CUPTI tracing",
	Tracer:  "the CUPTI tracer",
	Inert:   "cupti unavailable",
	Debug:   os.Getenv("RLKTOP_CUPTI_DEBUG") == "1",
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
func rlkGoStart() {
	liveEnv()
	go drain()
}

// liveEnv copies rlktop's variables from the C environment as it is now
// into Go's. A Go runtime in a shared library takes the environment the
// process started with (the block after argv), so what the Python agent
// sets just before it loads the library into a running process (rlktop
// attach) reaches only C's getenv; it is removed again once
// InitializeInjection returns, which is why this runs in rlkGoStart, on
// InitializeInjection's thread, before it returns.
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

func infoMeta(i *C.rlk_info) []msg.KV {
	kv := []msg.KV{
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
		kv = append(kv, msg.KV{Key: "cupti.activity_warning", Value: "some activity kinds could not be enabled (CUptiResult " + strconv.Itoa(int(i.activity_result)) + ")"})
	}
	if e := C.GoString(&i.error[0]); e != "" {
		kv = append(kv, msg.KV{Key: "cupti.error", Value: e})
	}
	return kv
}

func counterMeta(c *C.rlk_counters, st cupti.Stats) []msg.KV {
	u := func(v C.uint64_t) string { return strconv.FormatUint(uint64(v), 10) }
	return []msg.KV{
		{Key: "cupti.dropped_records", Value: u(c.cupti_dropped)},
		{Key: "cupti.ring_dropped_records", Value: u(c.ring_dropped)},
		{Key: "cupti.null_buffers", Value: u(c.null_buffers)},
		{Key: "cupti.buffers", Value: u(c.buffers)},
		{Key: "cupti.records", Value: strconv.FormatUint(st.Records, 10)},
		{Key: "cupti.short_records", Value: strconv.FormatUint(st.Short, 10)},
		{Key: "cupti.unpaired_markers", Value: strconv.FormatUint(st.Unpaired, 10)},
	}
}

// drain connects to rlktop, says hello and runs the pump until the
// process exits.
func drain() {
	i := info()
	src := &source{dec: cupti.NewDecoder(int32(os.Getpid()), cupti.CMemory{APINames: apiName}), b: new(C.rlk_batch)}
	var s *wire.AsyncSender
	if i.initialized != 0 {
		s = pump.Connect(cfg, src, dialTimeout, senderEvents()) // nil: CUPTI detached, the process pays nothing
	} else {
		cfg.Logf("not tracing: %s", C.GoString(&i.error[0]))
	}
	var pc, pm, pr C.uint64_t
	C.rlk_clock_pair(&pc, &pm, &pr)
	src.dec.Clock.Add(int64(pc), int64(pm))
	if s != nil {
		h := wire.ProcessHello("cupti", "NVIDIA GPU (CUPTI)")
		h.ClockOffsetNs, h.StartNs = int64(pr)-int64(pm), int64(pr)
		s.Hello(&h)
		s.Meta(infoMeta(&i))
		go pump.Controls(cfg, src, s)
	}
	// Test hook: a slow drain, so that tests can fill the ring.
	cfg.Delay, _ = time.ParseDuration(os.Getenv("RLKTOP_CUPTI_TEST_DRAIN_DELAY"))
	pump.Run(cfg, src, s)
}

// source is the pump's view of the C layer (rlk.c) and the decoder.
type source struct {
	dec  *cupti.Decoder
	b    *C.rlk_batch      // its own allocation: cgo checks the whole object a pointer argument points into
	last C.rlk_counters    // counters last sent
	mem  []tracer.MemEvent // MEMORY2 records not yet taken (TakeMemory)
}

func (src *source) Next(wait time.Duration) (pump.State, error) {
	b := src.b
	st := C.rlk_next(b, C.int(wait/time.Millisecond))
	src.dec.Clock.Add(int64(b.pair_cupti_ns), int64(b.pair_mono_ns))
	switch st {
	case C.RLK_BUFFER:
		buf := unsafe.Slice((*byte)(unsafe.Pointer(b.buf)), int(b.valid))
		offs := unsafe.Slice((*uint32)(unsafe.Pointer(b.offs)), int(b.nrec))
		return pump.Buffer, src.dec.Decode(buf, offs)
	case C.RLK_EXIT:
		return pump.Exit, nil
	case C.RLK_INERT:
		return pump.Inert, nil
	}
	return pump.Idle, nil
}

func (src *source) Take() ([]string, []tracer.Event) {
	bt := src.dec.Take()
	src.mem = append(src.mem, bt.Memory...)
	return bt.NewStrings, bt.Events
}

// TakeMemory returns the MEMORY2 records decoded since the previous call
// (pump.MemorySource).
func (src *source) TakeMemory() []tracer.MemEvent {
	m := src.mem
	src.mem = nil
	return m
}

func (src *source) Name(id tracer.StrID) string { return src.dec.Strings().Get(id) }

func (src *source) Counters(force bool) []msg.KV {
	if src.b.counters == src.last && !force {
		return nil
	}
	src.last = src.b.counters
	return counterMeta(&src.b.counters, src.dec.Stats())
}

func (src *source) Info() ([]msg.KV, bool) {
	i := info()
	return infoMeta(&i), i.tracing != 0
}

// SetTracing switches CUPTI off (disabled, flushed, detached) or on.
func (src *source) SetTracing(on bool) error {
	if C.rlk_set_tracing(boolInt(on)) == 0 && on {
		i := info()
		return errors.New("tracing could not be switched on: " + C.GoString(&i.error[0]))
	}
	return nil
}

func (src *source) Done(st pump.State) {
	if st == pump.Exit {
		cfg.Logf("exit: %d records, counters %+v", src.dec.Stats().Records, src.b.counters)
		C.rlk_exit_done()
	}
}

func boolInt(b bool) C.int {
	if b {
		return 1
	}
	return 0
}
