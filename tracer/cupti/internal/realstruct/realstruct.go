//go:build cupti && cgo

// Package realstruct builds CUPTI activity records with the structs of the
// real CUPTI headers, for tests of the decoder (the offsets come from the C
// compiler, not from rlktop's layout tables). Built only with the cupti tag.
package realstruct

/*
#include <cupti_activity.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define OFF(T, f) (int)offsetof(T, f)

static int off_table(int *o) {
	int i = 0;
	o[i++] = sizeof(CUpti_ActivityKernel8);
	o[i++] = OFF(CUpti_ActivityKernel8, registersPerThread);
	o[i++] = OFF(CUpti_ActivityKernel8, start);
	o[i++] = OFF(CUpti_ActivityKernel8, end);
	o[i++] = OFF(CUpti_ActivityKernel8, deviceId);
	o[i++] = OFF(CUpti_ActivityKernel8, contextId);
	o[i++] = OFF(CUpti_ActivityKernel8, streamId);
	o[i++] = OFF(CUpti_ActivityKernel8, gridX);
	o[i++] = OFF(CUpti_ActivityKernel8, gridY);
	o[i++] = OFF(CUpti_ActivityKernel8, gridZ);
	o[i++] = OFF(CUpti_ActivityKernel8, blockX);
	o[i++] = OFF(CUpti_ActivityKernel8, blockY);
	o[i++] = OFF(CUpti_ActivityKernel8, blockZ);
	o[i++] = OFF(CUpti_ActivityKernel8, staticSharedMemory);
	o[i++] = OFF(CUpti_ActivityKernel8, dynamicSharedMemory);
	o[i++] = OFF(CUpti_ActivityKernel8, correlationId);
	o[i++] = OFF(CUpti_ActivityKernel8, name);
	o[i++] = OFF(CUpti_ActivityKernel8, graphNodeId);
	o[i++] = OFF(CUpti_ActivityKernel8, graphId);
	o[i++] = sizeof(CUpti_ActivityMemcpy5);
	o[i++] = OFF(CUpti_ActivityMemcpy5, copyKind);
	o[i++] = OFF(CUpti_ActivityMemcpy5, srcKind);
	o[i++] = OFF(CUpti_ActivityMemcpy5, dstKind);
	o[i++] = OFF(CUpti_ActivityMemcpy5, bytes);
	o[i++] = OFF(CUpti_ActivityMemcpy5, start);
	o[i++] = OFF(CUpti_ActivityMemcpy5, end);
	o[i++] = OFF(CUpti_ActivityMemcpy5, deviceId);
	o[i++] = OFF(CUpti_ActivityMemcpy5, contextId);
	o[i++] = OFF(CUpti_ActivityMemcpy5, streamId);
	o[i++] = OFF(CUpti_ActivityMemcpy5, correlationId);
	o[i++] = OFF(CUpti_ActivityMemcpy5, graphNodeId);
	o[i++] = OFF(CUpti_ActivityMemcpy5, graphId);
	o[i++] = sizeof(CUpti_ActivityMemset4);
	o[i++] = OFF(CUpti_ActivityMemset4, bytes);
	o[i++] = OFF(CUpti_ActivityMemset4, start);
	o[i++] = OFF(CUpti_ActivityMemset4, end);
	o[i++] = OFF(CUpti_ActivityMemset4, deviceId);
	o[i++] = OFF(CUpti_ActivityMemset4, contextId);
	o[i++] = OFF(CUpti_ActivityMemset4, streamId);
	o[i++] = OFF(CUpti_ActivityMemset4, correlationId);
	o[i++] = OFF(CUpti_ActivityMemset4, memoryKind);
	o[i++] = OFF(CUpti_ActivityMemset4, graphNodeId);
	o[i++] = OFF(CUpti_ActivityMemset4, graphId);
	o[i++] = sizeof(CUpti_ActivityAPI);
	o[i++] = OFF(CUpti_ActivityAPI, cbid);
	o[i++] = OFF(CUpti_ActivityAPI, start);
	o[i++] = OFF(CUpti_ActivityAPI, end);
	o[i++] = OFF(CUpti_ActivityAPI, processId);
	o[i++] = OFF(CUpti_ActivityAPI, threadId);
	o[i++] = OFF(CUpti_ActivityAPI, correlationId);
	o[i++] = sizeof(CUpti_ActivitySynchronization);
	o[i++] = OFF(CUpti_ActivitySynchronization, type);
	o[i++] = OFF(CUpti_ActivitySynchronization, start);
	o[i++] = OFF(CUpti_ActivitySynchronization, end);
	o[i++] = OFF(CUpti_ActivitySynchronization, correlationId);
	o[i++] = OFF(CUpti_ActivitySynchronization, contextId);
	o[i++] = OFF(CUpti_ActivitySynchronization, streamId);
	o[i++] = sizeof(CUpti_ActivityOverhead);
	o[i++] = OFF(CUpti_ActivityOverhead, overheadKind);
	o[i++] = OFF(CUpti_ActivityOverhead, objectKind);
	o[i++] = OFF(CUpti_ActivityOverhead, objectId.pt.threadId);
	o[i++] = OFF(CUpti_ActivityOverhead, start);
	o[i++] = OFF(CUpti_ActivityOverhead, end);
	o[i++] = sizeof(CUpti_ActivityMarker2);
	o[i++] = OFF(CUpti_ActivityMarker2, flags);
	o[i++] = OFF(CUpti_ActivityMarker2, timestamp);
	o[i++] = OFF(CUpti_ActivityMarker2, id);
	o[i++] = OFF(CUpti_ActivityMarker2, objectKind);
	o[i++] = OFF(CUpti_ActivityMarker2, objectId.pt.threadId);
	o[i++] = OFF(CUpti_ActivityMarker2, name);
	o[i++] = sizeof(CUpti_ActivityMemory3);
	o[i++] = OFF(CUpti_ActivityMemory3, memoryOperationType);
	o[i++] = OFF(CUpti_ActivityMemory3, memoryKind);
	o[i++] = OFF(CUpti_ActivityMemory3, correlationId);
	o[i++] = OFF(CUpti_ActivityMemory3, address);
	o[i++] = OFF(CUpti_ActivityMemory3, bytes);
	o[i++] = OFF(CUpti_ActivityMemory3, timestamp);
	o[i++] = OFF(CUpti_ActivityMemory3, processId);
	o[i++] = OFF(CUpti_ActivityMemory3, deviceId);
	return i;
}

// The buffer: records appended back to back, 8-byte aligned like CUPTI's.
typedef struct { uint8_t *p; size_t len, cap; } rbuf;

static void *grow(rbuf *b, size_t n) {
	n = (n + 7) & ~(size_t)7;
	if (b->len + n > b->cap) {
		size_t c = b->cap ? b->cap * 2 : 4096;
		while (c < b->len + n) c *= 2;
		b->p = realloc(b->p, c);
		b->cap = c;
	}
	void *r = b->p + b->len;
	memset(r, 0, n);
	b->len += n;
	return r;
}

static size_t add_kernel(rbuf *b, uint64_t start, uint64_t end, uint32_t dev, uint32_t ctx, uint32_t stream,
		int32_t gx, int32_t gy, int32_t gz, int32_t bx, int32_t by, int32_t bz, int32_t ssm, int32_t dsm,
		uint16_t regs, uint32_t corr, const char *name, uint32_t graph, uint64_t node) {
	size_t at = b->len;
	CUpti_ActivityKernel8 *k = grow(b, sizeof *k);
	k->kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k->start = start; k->end = end; k->completed = end;
	k->deviceId = dev; k->contextId = ctx; k->streamId = stream;
	k->gridX = gx; k->gridY = gy; k->gridZ = gz; k->blockX = bx; k->blockY = by; k->blockZ = bz;
	k->staticSharedMemory = ssm; k->dynamicSharedMemory = dsm; k->registersPerThread = regs;
	k->correlationId = corr; k->name = name; k->graphId = graph; k->graphNodeId = node;
	k->gridId = 77; k->queued = 1; k->submitted = 2; k->localMemoryTotal = 0xdeadbeef;
	return at;
}

static size_t add_memcpy(rbuf *b, uint8_t copyKind, uint8_t src, uint8_t dst, uint64_t bytes, uint64_t start,
		uint64_t end, uint32_t dev, uint32_t ctx, uint32_t stream, uint32_t corr) {
	size_t at = b->len;
	CUpti_ActivityMemcpy5 *m = grow(b, sizeof *m);
	m->kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	m->copyKind = copyKind; m->srcKind = src; m->dstKind = dst; m->bytes = bytes;
	m->start = start; m->end = end; m->deviceId = dev; m->contextId = ctx; m->streamId = stream;
	m->correlationId = corr; m->runtimeCorrelationId = 0xffff;
	return at;
}

static size_t add_memset(rbuf *b, uint64_t bytes, uint64_t start, uint64_t end, uint32_t dev, uint32_t ctx,
		uint32_t stream, uint32_t corr, uint16_t memKind) {
	size_t at = b->len;
	CUpti_ActivityMemset4 *m = grow(b, sizeof *m);
	m->kind = CUPTI_ACTIVITY_KIND_MEMSET;
	m->value = 0x55; m->bytes = bytes; m->start = start; m->end = end;
	m->deviceId = dev; m->contextId = ctx; m->streamId = stream; m->correlationId = corr; m->memoryKind = memKind;
	return at;
}

static size_t add_api(rbuf *b, int driver, uint32_t cbid, uint64_t start, uint64_t end, uint32_t pid,
		uint32_t tid, uint32_t corr) {
	size_t at = b->len;
	CUpti_ActivityAPI *a = grow(b, sizeof *a);
	a->kind = driver ? CUPTI_ACTIVITY_KIND_DRIVER : CUPTI_ACTIVITY_KIND_RUNTIME;
	a->cbid = cbid; a->start = start; a->end = end; a->processId = pid; a->threadId = tid;
	a->correlationId = corr; a->returnValue = 0;
	return at;
}

static size_t add_sync(rbuf *b, uint32_t type, uint64_t start, uint64_t end, uint32_t corr, uint32_t ctx,
		uint32_t stream) {
	size_t at = b->len;
	CUpti_ActivitySynchronization *s = grow(b, sizeof *s);
	s->kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
	s->type = type; s->start = start; s->end = end; s->correlationId = corr; s->contextId = ctx;
	s->streamId = stream; s->cudaEventId = 9;
	return at;
}

static size_t add_overhead(rbuf *b, uint32_t kind, uint32_t tid, uint64_t start, uint64_t end) {
	size_t at = b->len;
	CUpti_ActivityOverhead *o = grow(b, sizeof *o);
	o->kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
	o->overheadKind = kind; o->objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
	o->objectId.pt.processId = 1; o->objectId.pt.threadId = tid; o->start = start; o->end = end;
	return at;
}

static size_t add_memory(rbuf *b, int release, uint64_t addr, uint64_t bytes, uint64_t ts, uint32_t pid, uint32_t dev, uint32_t corr) {
	size_t at = b->len;
	CUpti_ActivityMemory3 *m = grow(b, sizeof *m);
	m->kind = CUPTI_ACTIVITY_KIND_MEMORY2;
	m->memoryOperationType = release ? CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE : CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
	m->memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	m->correlationId = corr; m->address = addr; m->bytes = bytes; m->timestamp = ts; m->PC = 0x1234;
	m->processId = pid; m->deviceId = dev; m->contextId = 1; m->streamId = 7; m->name = NULL;
	return at;
}

static size_t add_marker(rbuf *b, uint32_t flags, uint64_t ts, uint32_t id, uint32_t tid, const char *name) {
	size_t at = b->len;
	CUpti_ActivityMarker2 *m = grow(b, sizeof *m);
	m->kind = CUPTI_ACTIVITY_KIND_MARKER;
	m->flags = flags; m->timestamp = ts; m->id = id; m->objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
	m->objectId.pt.processId = 1; m->objectId.pt.threadId = tid; m->name = name; m->domain = NULL;
	return at;
}
*/
import "C"

import (
	"unsafe"
)

// Offsets returns sizeof and offsetof values from the real headers, in the
// order of OffsetNames.
func Offsets() []int {
	var o [128]C.int
	n := int(C.off_table(&o[0]))
	r := make([]int, n)
	for i := range r {
		r[i] = int(o[i])
	}
	return r
}

// OffsetNames names the values Offsets returns.
var OffsetNames = []string{
	"sizeof Kernel8", "Kernel8.registersPerThread", "Kernel8.start", "Kernel8.end", "Kernel8.deviceId", "Kernel8.contextId", "Kernel8.streamId",
	"Kernel8.gridX", "Kernel8.gridY", "Kernel8.gridZ", "Kernel8.blockX", "Kernel8.blockY", "Kernel8.blockZ",
	"Kernel8.staticSharedMemory", "Kernel8.dynamicSharedMemory", "Kernel8.correlationId", "Kernel8.name", "Kernel8.graphNodeId", "Kernel8.graphId",
	"sizeof Memcpy5", "Memcpy5.copyKind", "Memcpy5.srcKind", "Memcpy5.dstKind", "Memcpy5.bytes", "Memcpy5.start", "Memcpy5.end", "Memcpy5.deviceId",
	"Memcpy5.contextId", "Memcpy5.streamId", "Memcpy5.correlationId", "Memcpy5.graphNodeId", "Memcpy5.graphId",
	"sizeof Memset4", "Memset4.bytes", "Memset4.start", "Memset4.end", "Memset4.deviceId", "Memset4.contextId", "Memset4.streamId",
	"Memset4.correlationId", "Memset4.memoryKind", "Memset4.graphNodeId", "Memset4.graphId",
	"sizeof API", "API.cbid", "API.start", "API.end", "API.processId", "API.threadId", "API.correlationId",
	"sizeof Synchronization", "Sync.type", "Sync.start", "Sync.end", "Sync.correlationId", "Sync.contextId", "Sync.streamId",
	"sizeof Overhead", "Overhead.overheadKind", "Overhead.objectKind", "Overhead.objectId.pt.threadId", "Overhead.start", "Overhead.end",
	"sizeof Marker2", "Marker2.flags", "Marker2.timestamp", "Marker2.id", "Marker2.objectKind", "Marker2.objectId.pt.threadId", "Marker2.name",
	"sizeof Memory3", "Memory3.memoryOperationType", "Memory3.memoryKind", "Memory3.correlationId", "Memory3.address", "Memory3.bytes",
	"Memory3.timestamp", "Memory3.processId", "Memory3.deviceId",
}

// Buffer is a C-allocated buffer of records built with the real structs.
// Names passed to it are copied into C memory owned by the Buffer.
type Buffer struct {
	b     C.rbuf
	offs  []uint32
	names []*C.char
}

// Free releases the C memory.
func (b *Buffer) Free() {
	C.free(unsafe.Pointer(b.b.p))
	for _, n := range b.names {
		C.free(unsafe.Pointer(n))
	}
	*b = Buffer{}
}

// Bytes returns the records' bytes (C memory; valid until Free or the next add).
func (b *Buffer) Bytes() []byte { return unsafe.Slice((*byte)(unsafe.Pointer(b.b.p)), int(b.b.len)) }

// Offsets returns the offset of each record.
func (b *Buffer) Offsets() []uint32 { return b.offs }

func (b *Buffer) cstr(s string) *C.char {
	if s == "" {
		return nil
	}
	c := C.CString(s)
	b.names = append(b.names, c)
	return c
}

func (b *Buffer) at(off C.size_t) { b.offs = append(b.offs, uint32(off)) }

// Kernel describes a CUpti_ActivityKernel8 record.
type Kernel struct {
	Start, End                    uint64
	Device, Context, Stream, Corr uint32
	Grid, Block                   [3]int32
	StaticShared, DynamicShared   int32
	Registers                     uint16
	Name                          string
	GraphID                       uint32
	GraphNodeID                   uint64
}

// AddKernel appends a CONCURRENT_KERNEL record.
func (b *Buffer) AddKernel(k Kernel) {
	b.at(C.add_kernel(&b.b, C.uint64_t(k.Start), C.uint64_t(k.End), C.uint32_t(k.Device), C.uint32_t(k.Context), C.uint32_t(k.Stream),
		C.int32_t(k.Grid[0]), C.int32_t(k.Grid[1]), C.int32_t(k.Grid[2]), C.int32_t(k.Block[0]), C.int32_t(k.Block[1]), C.int32_t(k.Block[2]),
		C.int32_t(k.StaticShared), C.int32_t(k.DynamicShared), C.uint16_t(k.Registers), C.uint32_t(k.Corr), b.cstr(k.Name),
		C.uint32_t(k.GraphID), C.uint64_t(k.GraphNodeID)))
}

// AddMemcpy appends a MEMCPY record.
func (b *Buffer) AddMemcpy(copyKind, src, dst uint8, bytes, start, end uint64, dev, ctx, stream, corr uint32) {
	b.at(C.add_memcpy(&b.b, C.uint8_t(copyKind), C.uint8_t(src), C.uint8_t(dst), C.uint64_t(bytes), C.uint64_t(start), C.uint64_t(end),
		C.uint32_t(dev), C.uint32_t(ctx), C.uint32_t(stream), C.uint32_t(corr)))
}

// AddMemset appends a MEMSET record.
func (b *Buffer) AddMemset(bytes, start, end uint64, dev, ctx, stream, corr uint32, memKind uint16) {
	b.at(C.add_memset(&b.b, C.uint64_t(bytes), C.uint64_t(start), C.uint64_t(end), C.uint32_t(dev), C.uint32_t(ctx),
		C.uint32_t(stream), C.uint32_t(corr), C.uint16_t(memKind)))
}

// AddAPI appends a RUNTIME (driver=false) or DRIVER record.
func (b *Buffer) AddAPI(driver bool, cbid uint32, start, end uint64, pid, tid, corr uint32) {
	d := C.int(0)
	if driver {
		d = 1
	}
	b.at(C.add_api(&b.b, d, C.uint32_t(cbid), C.uint64_t(start), C.uint64_t(end), C.uint32_t(pid), C.uint32_t(tid), C.uint32_t(corr)))
}

// AddSync appends a SYNCHRONIZATION record.
func (b *Buffer) AddSync(typ uint32, start, end uint64, corr, ctx, stream uint32) {
	b.at(C.add_sync(&b.b, C.uint32_t(typ), C.uint64_t(start), C.uint64_t(end), C.uint32_t(corr), C.uint32_t(ctx), C.uint32_t(stream)))
}

// AddOverhead appends an OVERHEAD record on thread tid.
func (b *Buffer) AddOverhead(kind, tid uint32, start, end uint64) {
	b.at(C.add_overhead(&b.b, C.uint32_t(kind), C.uint32_t(tid), C.uint64_t(start), C.uint64_t(end)))
}

// AddMemory appends a MEMORY2 record (CUpti_ActivityMemory3): an
// allocation, or with release a release, of bytes at addr.
func (b *Buffer) AddMemory(release bool, addr, bytes, ts uint64, pid, dev, corr uint32) {
	r := C.int(0)
	if release {
		r = 1
	}
	b.at(C.add_memory(&b.b, r, C.uint64_t(addr), C.uint64_t(bytes), C.uint64_t(ts), C.uint32_t(pid), C.uint32_t(dev), C.uint32_t(corr)))
}

// AddMarker appends a MARKER record (flags: 1 instantaneous, 2 start, 4 end).
func (b *Buffer) AddMarker(flags uint32, ts uint64, id, tid uint32, name string) {
	b.at(C.add_marker(&b.b, C.uint32_t(flags), C.uint64_t(ts), C.uint32_t(id), C.uint32_t(tid), b.cstr(name)))
}
