/*
 * fakecupti.c — a stand-in libcupti for rlktop's end-to-end test
 * (tracer/cupti/e2e_test.go). Built by the test from the real CUPTI headers.
 *
 * It implements the CUPTI calls rlktop's injection library makes, with
 * CUPTI's contracts as the 11.8 headers document them: buffers come from
 * the client's request callback and go back through its completion
 * callback (also re-entrantly inside cuptiActivityFlushAll); records are
 * walked with cuptiActivityGetNextRecord; dropped counts reset when read;
 * one subscriber at a time. Records are real-layout structs
 * (CUpti_ActivityKernel8, Memcpy5, API, Marker2).
 *
 * The test host drives it through fake_* functions and it writes, for every
 * record it placed in a buffer, the event rlktop should show into a
 * manifest (FAKE_MANIFEST): one line "kind|name|start_ns|dur_ns|corr|tid|
 * device|stream|value" with times already on the host CLOCK_MONOTONIC
 * (cuptiGetTimestamp here is CLOCK_MONOTONIC + FAKE_OFFSET_NS).
 */
#define _GNU_SOURCE
#include <cupti_activity.h>
#include <cupti_callbacks.h>
#include <cupti_version.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define FAKE_OFFSET_NS 500000000000ull

static CUpti_BuffersCallbackRequestFunc req_fn;
static CUpti_BuffersCallbackCompleteFunc done_fn;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static FILE *manifest;

/* One open buffer per stream, as CUPTI keeps per-context/stream buffers. */
#define NSTREAMS 2
static struct {
	uint8_t *buf;
	size_t size, used, nrec;
} open_buf[NSTREAMS];
static size_t records_per_buffer = 100;

static uint64_t dropped_pending[NSTREAMS]; /* reported by GetNumDroppedRecords, then reset */
static uint64_t enabled_mask, register_calls, enable_calls, disable_calls, finalize_calls, flush_calls;
static int subscribed;
static CUpti_CallbackFunc sub_fn;
static void *sub_ud;
static int domain_on[8];
static uint64_t max_cb_ns, cb_calls, null_buffers;

static uint64_t mono(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void timed_done(CUcontext ctx, uint32_t stream, uint8_t *b, size_t size, size_t valid) {
	uint64_t t0 = mono();
	done_fn(ctx, stream, b, size, valid);
	uint64_t d = mono() - t0;
	if (d > max_cb_ns) max_cb_ns = d;
	cb_calls++;
}

static void complete(int s) {
	if (!open_buf[s].buf) return;
	uint8_t *b = open_buf[s].buf;
	size_t size = open_buf[s].size, used = open_buf[s].used;
	open_buf[s].buf = NULL;
	open_buf[s].used = open_buf[s].nrec = 0;
	timed_done((CUcontext)(uintptr_t)(s + 1), (uint32_t)s, b, size, used);
}

/* reserve returns room for n bytes in stream s's buffer, or NULL when the
 * client gave no buffer (the record is then dropped and counted). Called
 * with mu held. */
static void *reserve(int s, size_t n) {
	if (!(enabled_mask) || !req_fn) return NULL;
	if (open_buf[s].buf && (open_buf[s].used + n > open_buf[s].size || open_buf[s].nrec >= records_per_buffer)) complete(s);
	if (!open_buf[s].buf) {
		uint8_t *b = NULL;
		size_t size = 0, maxrec = 0;
		uint64_t t0 = mono();
		req_fn(&b, &size, &maxrec);
		uint64_t d = mono() - t0;
		if (d > max_cb_ns) max_cb_ns = d;
		cb_calls++;
		if (!b || size < n) {
			null_buffers++;
			dropped_pending[s]++;
			return NULL;
		}
		open_buf[s].buf = b;
		open_buf[s].size = size;
	}
	void *r = open_buf[s].buf + open_buf[s].used;
	memset(r, 0, n);
	open_buf[s].used += n;
	open_buf[s].nrec++;
	return r;
}

static size_t record_size(uint32_t kind) {
	switch (kind) {
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
	case CUPTI_ACTIVITY_KIND_KERNEL: return sizeof(CUpti_ActivityKernel8);
	case CUPTI_ACTIVITY_KIND_MEMCPY: return sizeof(CUpti_ActivityMemcpy5);
	case CUPTI_ACTIVITY_KIND_RUNTIME:
	case CUPTI_ACTIVITY_KIND_DRIVER: return sizeof(CUpti_ActivityAPI);
	case CUPTI_ACTIVITY_KIND_MARKER: return sizeof(CUpti_ActivityMarker2);
	case CUPTI_ACTIVITY_KIND_MEMORY2: return sizeof(CUpti_ActivityMemory3);
	}
	return 0;
}

/* ---- the CUPTI API ---- */

CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc r, CUpti_BuffersCallbackCompleteFunc c) {
	pthread_mutex_lock(&mu);
	req_fn = r;
	done_fn = c;
	register_calls++;
	pthread_mutex_unlock(&mu);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityEnable(CUpti_ActivityKind k) {
	__atomic_fetch_or(&enabled_mask, 1ull << (k & 63), __ATOMIC_SEQ_CST);
	__atomic_fetch_add(&enable_calls, 1, __ATOMIC_SEQ_CST);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityDisable(CUpti_ActivityKind k) {
	__atomic_fetch_and(&enabled_mask, ~(1ull << (k & 63)), __ATOMIC_SEQ_CST);
	__atomic_fetch_add(&disable_calls, 1, __ATOMIC_SEQ_CST);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid, CUpti_Activity **rec) {
	size_t off = 0;
	if (*rec) {
		off = (size_t)((uint8_t *)*rec - buffer);
		size_t n = record_size((*rec)->kind);
		if (!n) return CUPTI_ERROR_INVALID_KIND;
		off += n;
	}
	if (off + sizeof(CUpti_Activity) > valid) return CUPTI_ERROR_MAX_LIMIT_REACHED;
	*rec = (CUpti_Activity *)(buffer + off);
	if (off + record_size((*rec)->kind) > valid) return CUPTI_ERROR_INVALID_KIND;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext ctx, uint32_t stream, size_t *dropped) {
	(void)ctx;
	*dropped = stream < NSTREAMS ? __atomic_exchange_n(&dropped_pending[stream], 0, __ATOMIC_SEQ_CST) : 0;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityFlushAll(uint32_t flag) {
	(void)flag;
	pthread_mutex_lock(&mu);
	flush_calls++;
	for (int s = 0; s < NSTREAMS; s++) complete(s); /* re-entrant completion, as CUPTI does */
	pthread_mutex_unlock(&mu);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiGetTimestamp(uint64_t *ts) {
	*ts = mono() + FAKE_OFFSET_NS;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *h, CUpti_CallbackFunc fn, void *ud) {
	const char *busy = getenv("FAKE_CUPTI_SUBSCRIBE_BUSY");
	if (busy && *busy == '1') return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
	if (subscribed) return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
	subscribed = 1;
	sub_fn = fn;
	sub_ud = ud;
	*h = (CUpti_SubscriberHandle)(uintptr_t)0x5b;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle h) {
	(void)h;
	subscribed = 0;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiEnableDomain(uint32_t on, CUpti_SubscriberHandle h, CUpti_CallbackDomain d) {
	(void)h;
	if ((unsigned)d < 8) domain_on[d] = (int)on;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiFinalize(void) {
	/* Detach: CUPTI forgets the client's callbacks and kinds. */
	pthread_mutex_lock(&mu);
	req_fn = NULL;
	done_fn = NULL;
	pthread_mutex_unlock(&mu);
	__atomic_store_n(&enabled_mask, 0, __ATOMIC_SEQ_CST);
	finalize_calls++;
	subscribed = 0;
	memset(domain_on, 0, sizeof domain_on);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiGetVersion(uint32_t *v) {
	*v = CUPTI_API_VERSION;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiGetCallbackName(CUpti_CallbackDomain d, uint32_t cbid, const char **name) {
	if (d == CUPTI_CB_DOMAIN_RUNTIME_API && cbid == 211) *name = "cudaLaunchKernel_v7000";
	else if (d == CUPTI_CB_DOMAIN_DRIVER_API && cbid == 307) *name = "cuLaunchKernel";
	else return CUPTI_ERROR_INVALID_PARAMETER;
	return CUPTI_SUCCESS;
}

/* ---- test driver ---- */

void fake_set_manifest(const char *path) { manifest = fopen(path, "w"); }
void fake_set_records_per_buffer(size_t n) { records_per_buffer = n; }
void fake_flush_manifest(void) {
	if (manifest) fflush(manifest);
}

/* fake_api_exit simulates the exit of a CUDA API call: a subscriber with
 * the runtime domain enabled gets its callback (rlktop detaches there). */
void fake_api_exit(void) {
	if (!subscribed || !sub_fn || !domain_on[CUPTI_CB_DOMAIN_RUNTIME_API]) return;
	CUpti_CallbackData cb;
	memset(&cb, 0, sizeof cb);
	cb.callbackSite = CUPTI_API_EXIT;
	cb.functionName = "cudaLaunchKernel";
	sub_fn(sub_ud, CUPTI_CB_DOMAIN_RUNTIME_API, 211, &cb);
}

static const char *kernel_names[] = {
	"_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_15CUDAFunctor_addIfEENS_6detail5ArrayIPcLi3EEEEEviT0_T1_",
	"ampere_sgemm_128x64_tn",
	"_ZN7cutlass7Kernel2I50cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4EEvNT_6ParamsE",
	"void cunn_SoftMaxForward<4, float, float, float, cunn::SoftMaxForwardEpilogue>(float*, float const*, int)",
};

static uint32_t next_corr = 1, next_marker = 1;

static void mline(const char *kind, const char *name, uint64_t start, uint64_t end, uint32_t corr, uint32_t tid,
                  int dev, int stream, uint64_t value) {
	if (!manifest) return;
	fprintf(manifest, "%s|%s|%llu|%llu|%u|%d|%d|%d|%llu\n", kind, name, (unsigned long long)(start - FAKE_OFFSET_NS),
	        (unsigned long long)(end - start), corr, (int32_t)tid, dev, stream, (unsigned long long)value);
}

/* fake_round emits one step's worth of activity on the calling thread's
 * behalf: an NVTX range "step" (optional) around a nested "forward" with
 * nkernels launches (runtime API record + kernel record, correlated), one
 * driver-API launch of a CUDA-graph kernel, and one H2D memcpy. Returns the
 * number of records placed. */
static uint64_t mem_records; /* MEMORY2 records placed (fake_summary) */

/* put_memory places one MEMORY2 record (an allocation or a release) on
 * stream 0, now, for device 0 of this process. Called with mu held. */
static void put_memory(CUpti_ActivityMemoryOperationType op, uint64_t addr, uint64_t bytes) {
	CUpti_ActivityMemory3 *mr = reserve(0, sizeof *mr);
	if (!mr) return;
	mr->kind = CUPTI_ACTIVITY_KIND_MEMORY2;
	mr->memoryOperationType = op;
	mr->memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	mr->address = addr;
	mr->bytes = bytes;
	mr->timestamp = mono() + FAKE_OFFSET_NS;
	mr->processId = (uint32_t)getpid();
	mr->deviceId = 0;
	mem_records++;
}

int fake_round(int step, int nkernels, int markers) {
	pthread_mutex_lock(&mu);
	uint32_t tid = (uint32_t)pthread_self();
	int placed = 0;
	uint64_t t_step = mono() + FAKE_OFFSET_NS;
	uint32_t mid_step = next_marker++, mid_fwd = next_marker++;
	char step_name[32];
	snprintf(step_name, sizeof step_name, "step#%d", step);
	int ok_step = 0, ok_fwd = 0;
	CUpti_ActivityMarker2 *m;
	if (markers && (m = reserve(0, sizeof *m))) {
		m->kind = CUPTI_ACTIVITY_KIND_MARKER;
		m->flags = CUPTI_ACTIVITY_FLAG_MARKER_START;
		m->timestamp = t_step;
		m->id = mid_step;
		m->objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
		m->objectId.pt.threadId = tid;
		m->name = strdup(step_name); /* CUPTI owns marker names; kept alive like CUPTI's */
		ok_step = 1;
		placed++;
	}
	uint64_t t_fwd = mono() + FAKE_OFFSET_NS;
	if (markers && (m = reserve(0, sizeof *m))) {
		m->kind = CUPTI_ACTIVITY_KIND_MARKER;
		m->flags = CUPTI_ACTIVITY_FLAG_MARKER_START;
		m->timestamp = t_fwd;
		m->id = mid_fwd;
		m->objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
		m->objectId.pt.threadId = tid;
		m->name = "forward";
		ok_fwd = 1;
		placed++;
	}
	/* A (step+1) MiB cudaMalloc at the start of "forward", released at
	 * its end (below), when MEMORY2 is enabled and FAKE_MEMORY=1; address
	 * 0x7f00_0000_0000 + step MiB. Neither in the manifest nor in placed
	 * (the other tests count events): memory_records counts them. */
	uint64_t mem_addr = 0x7f0000000000ull + ((uint64_t)step << 20), mem_bytes = (uint64_t)(step + 1) << 20;
	static int mem_env = -1;
	if (mem_env < 0) mem_env = getenv("FAKE_MEMORY") && !strcmp(getenv("FAKE_MEMORY"), "1");
	int mem_on = mem_env && ((enabled_mask >> CUPTI_ACTIVITY_KIND_MEMORY2) & 1);
	if (mem_on) put_memory(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, mem_addr, mem_bytes);
	for (int k = 0; k < nkernels; k++) {
		uint32_t corr = next_corr++;
		uint64_t a0 = mono() + FAKE_OFFSET_NS, a1 = a0 + 3000 + (uint64_t)k * 10;
		uint64_t k0 = a1 + 20000, k1 = k0 + 1000 + (uint64_t)(k % 4) * 12345;
		const char *kn = kernel_names[(step + k) % 4];
		int rok = 0;
		CUpti_ActivityAPI *a = reserve(0, sizeof *a);
		if (a) {
			a->kind = CUPTI_ACTIVITY_KIND_RUNTIME;
			a->cbid = 211;
			a->start = a0;
			a->end = a1;
			a->processId = (uint32_t)getpid();
			a->threadId = tid;
			a->correlationId = corr;
			rok = 1;
			placed++;
		}
		CUpti_ActivityKernel8 *kr = reserve(1, sizeof *kr);
		if (kr) {
			kr->kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
			kr->start = k0;
			kr->end = k1;
			kr->completed = k1;
			kr->deviceId = 0;
			kr->contextId = 1;
			kr->streamId = 7;
			kr->gridX = 80 + k;
			kr->gridY = kr->gridZ = 1;
			kr->blockX = 256;
			kr->blockY = kr->blockZ = 1;
			kr->registersPerThread = 32;
			kr->correlationId = corr;
			kr->name = kn;
			placed++;
			mline("kernel", kn, k0, k1, corr, (uint32_t)-1, 0, 7, 0);
		}
		if (rok) mline("runtime", "cudaLaunchKernel", a0, a1, corr, tid, -1, 0, 0);
	}
	/* A graph kernel launched through the driver API. */
	{
		uint32_t corr = next_corr++;
		uint64_t a0 = mono() + FAKE_OFFSET_NS, a1 = a0 + 2500;
		CUpti_ActivityAPI *a = reserve(0, sizeof *a);
		if (a) {
			a->kind = CUPTI_ACTIVITY_KIND_DRIVER;
			a->cbid = 307;
			a->start = a0;
			a->end = a1;
			a->threadId = tid;
			a->correlationId = corr;
			placed++;
			mline("driver", "cuLaunchKernel", a0, a1, corr, tid, -1, 0, 0);
		}
		CUpti_ActivityKernel8 *kr = reserve(1, sizeof *kr);
		if (kr) {
			kr->kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
			kr->start = a1 + 5000;
			kr->end = a1 + 9000;
			kr->deviceId = 0;
			kr->contextId = 1;
			kr->streamId = 9;
			kr->correlationId = corr;
			kr->name = "triton_poi_fused_add_0";
			kr->graphId = 3;
			kr->graphNodeId = 1000 + (uint64_t)step;
			placed++;
			mline("kernel", "triton_poi_fused_add_0", a1 + 5000, a1 + 9000, corr, (uint32_t)-1, 0, 9, 0);
		}
	}
	/* One H2D copy of step*4096 bytes. */
	{
		uint32_t corr = next_corr++;
		uint64_t c0 = mono() + FAKE_OFFSET_NS, c1 = c0 + 7777;
		CUpti_ActivityMemcpy5 *c = reserve(1, sizeof *c);
		if (c) {
			c->kind = CUPTI_ACTIVITY_KIND_MEMCPY;
			c->copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
			c->srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
			c->dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
			c->bytes = (uint64_t)(step + 1) * 4096;
			c->start = c0;
			c->end = c1;
			c->deviceId = 0;
			c->contextId = 1;
			c->streamId = 7;
			c->correlationId = corr;
			placed++;
			mline("memcpy", "Memcpy HtoD (Pinned -> Device)", c0, c1, corr, (uint32_t)-1, 0, 7, c->bytes);
		}
	}
	if (mem_on) put_memory(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE, mem_addr, mem_bytes);
	uint64_t t_fwd_end = mono() + FAKE_OFFSET_NS;
	if (ok_fwd && (m = reserve(0, sizeof *m))) {
		m->kind = CUPTI_ACTIVITY_KIND_MARKER;
		m->flags = CUPTI_ACTIVITY_FLAG_MARKER_END;
		m->timestamp = t_fwd_end;
		m->id = mid_fwd;
		m->objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
		m->objectId.pt.threadId = tid;
		placed++;
		mline("range", "forward", t_fwd, t_fwd_end, 0, tid, -1, 0, 0);
	}
	uint64_t t_step_end = mono() + FAKE_OFFSET_NS;
	if (ok_step && (m = reserve(0, sizeof *m))) {
		m->kind = CUPTI_ACTIVITY_KIND_MARKER;
		m->flags = CUPTI_ACTIVITY_FLAG_MARKER_END;
		m->timestamp = t_step_end;
		m->id = mid_step;
		m->objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
		m->objectId.pt.threadId = tid;
		placed++;
		mline("step", step_name, t_step, t_step_end, 0, tid, -1, 0, (uint64_t)step); /* a step range: KindStep */
	}
	pthread_mutex_unlock(&mu);
	return placed;
}

/* fake_inject_dropped makes the next GetNumDroppedRecords on stream 0
 * report n more records CUPTI dropped internally. */
void fake_inject_dropped(uint64_t n) { __atomic_fetch_add(&dropped_pending[0], n, __ATOMIC_SEQ_CST); }

void fake_summary(FILE *f) {
	if (manifest) fflush(manifest);
	fprintf(f, "register_calls=%llu\nenable_calls=%llu\ndisable_calls=%llu\nfinalize_calls=%llu\nflush_calls=%llu\n"
	           "max_callback_ns=%llu\ncallback_calls=%llu\nnull_buffers=%llu\nenabled_mask=%llu\nsubscribed=%d\nmemory_records=%llu\n",
	        (unsigned long long)register_calls, (unsigned long long)enable_calls, (unsigned long long)disable_calls,
	        (unsigned long long)finalize_calls, (unsigned long long)flush_calls, (unsigned long long)max_cb_ns,
	        (unsigned long long)cb_calls, (unsigned long long)null_buffers, (unsigned long long)enabled_mask, subscribed,
	        (unsigned long long)mem_records);
}
