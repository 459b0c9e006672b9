//go:build rocm && cgo

/*
 * rlkroc.c — the C layer of rlktop's rocprofiler-sdk tool library.
 *
 * rocprofiler-sdk finds rocprofiler_configure in this library (loaded
 * through ROCP_TOOL_LIBRARIES or LD_PRELOAD) and calls the initialize and
 * finalize functions it returns. Rules kept (DESIGN.md, AMD facts):
 *   - no HIP/HSA call inside initialize; only rocprofiler-sdk calls, looked
 *     up with dlsym in the already loaded SDK, so that nothing links
 *     against librocprofiler-sdk at build time;
 *   - the SDK's threads and the application's threads never wait on Go or
 *     the socket: records go into chunks under a short mutex; when the ring
 *     of full chunks is full, the chunk being filled is discarded and its
 *     entries counted (ring_dropped);
 *   - records are copied by the size field they carry (newer SDKs append
 *     fields), at most RLKTOP_ROCPROF_MAX_RECORD bytes;
 *   - a forked child goes inert (no Go runs there).
 * Layouts: ../include/rlk_rocprofiler.h (rocprofiler-sdk 0.5.0).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rlk_rocprofiler.h"
#include "rlkroc.h"
#define RLK_RING_MAX 4096 /* RLKTOP_ROCPROF_RING's upper bound */
#include "rlk_handoff.h" /* ../../pump/include */

extern void rlkrocGoStart(void); /* exported by main.go */

/* Entry tags (../abi.go). */
enum { TAG_DISPATCH = 1, TAG_COPY = 2, TAG_SYMBOL = 3, TAG_MARKER = 4, TAG_API = 6, TAG_MEMORY = 7 };

static struct {
	rlk_rp_create_context_fn create_context;
	rlk_rp_start_context_fn start_context;
	rlk_rp_stop_context_fn stop_context;
	rlk_rp_create_buffer_fn create_buffer;
	rlk_rp_flush_buffer_fn flush_buffer;
	rlk_rp_configure_buffer_tracing_fn configure_buffer;
	rlk_rp_configure_callback_tracing_fn configure_callback;
	rlk_rp_get_timestamp_fn get_timestamp;
	rlk_rp_op_name_fn op_name;
	rlk_rp_query_agents_fn query_agents;
} S;

#define MAX_AGENTS 64
static rlkroc_agent agents[MAX_AGENTS];
static int nagents;

/* The ring of full chunks; H.mu also guards cur and handed. */
static rlk_handoff H = RLK_HANDOFF_INIT;
static rlk_chunk cur;       /* being filled; under H.mu */
static uint8_t *handed;     /* the chunk Go holds */
static size_t chunk_bytes, max_record;
static int inert, go_started, finalized;
static int finish_once; /* finish ran */
#define finish_once_flag finish_once
static pid_t owner_pid;
static rlk_rp_context_id_t ctx;
static rlk_rp_buffer_id_t buf_id;
static rlkroc_counters cnt;
static rlkroc_info info;

/* A variable outside its range takes its default. */
#define env_long(name, def, lo, hi) rlkh_env_long((name), (def), (lo), (hi), RLKH_DEFAULT)

/* push_cur queues the chunk being filled; H.mu held. */
static void push_cur(void) {
	if (!cur.buf || cur.entries == 0) return;
	if (!rlkh_put(&H, cur)) {
		ADD(&cnt.ring_dropped, cur.entries);
		cur.len = 0;
		cur.entries = 0;
		return; /* reuse the buffer */
	}
	ADD(&cnt.chunks, 1);
	cur.buf = NULL;
	cur.len = 0;
	cur.entries = 0;
}

/* append writes one entry: tag, len, a then b, padding. */
static void append(uint32_t tag, const void *a, size_t alen, const void *b, size_t blen) {
	if (LOAD(&inert) || LOAD(&finalized)) return;
	if (alen + blen > max_record) {
		ADD(&cnt.truncated, 1);
		if (alen > max_record) alen = max_record;
		blen = max_record - alen;
	}
	size_t n = alen + blen;
	size_t total = 8 + ((n + 7) & ~(size_t)7);
	pthread_mutex_lock(&H.mu);
	if (cur.buf && cur.len + total > chunk_bytes) push_cur();
	if (!cur.buf) {
		cur.buf = malloc(chunk_bytes);
		if (!cur.buf) {
			ADD(&cnt.ring_dropped, 1);
			pthread_mutex_unlock(&H.mu);
			return;
		}
		cur.len = 0;
		cur.entries = 0;
	}
	uint8_t *p = cur.buf + cur.len;
	uint32_t hdr[2] = {tag, (uint32_t)n};
	memcpy(p, hdr, 8);
	memcpy(p + 8, a, alen);
	if (blen) memcpy(p + 8 + alen, b, blen);
	memset(p + 8 + n, 0, total - 8 - n);
	cur.len += total;
	cur.entries++;
	ADD(&cnt.entries, 1);
	pthread_mutex_unlock(&H.mu);
}

/* ---- rocprofiler-sdk callbacks ---- */

static void buffer_cb(rlk_rp_context_id_t c, rlk_rp_buffer_id_t b, rlk_rp_record_header_t **headers, size_t n,
                      void *data, uint64_t drop_count) {
	(void)c, (void)b, (void)data;
	if (drop_count) ADD(&cnt.sdk_dropped, drop_count);
	for (size_t i = 0; i < n; i++) {
		const rlk_rp_record_header_t *h = headers[i];
		if (!h || h->category != RLK_RP_BUFFER_CATEGORY_TRACING || !h->payload) continue;
		uint32_t tag;
		switch (h->kind) {
		case RLK_RP_BUFFER_TRACING_KERNEL_DISPATCH: tag = TAG_DISPATCH; break;
		case RLK_RP_BUFFER_TRACING_MEMORY_COPY: tag = TAG_COPY; break;
		case RLK_RP_BUFFER_TRACING_HIP_RUNTIME_API: tag = TAG_API; break;
		case RLK_RP_BUFFER_TRACING_MEMORY_ALLOCATION: tag = TAG_MEMORY; break;
		default: continue;
		}
		uint64_t size;
		memcpy(&size, h->payload, 8); /* every record starts with its size */
		if (size < 8) size = 8;
		append(tag, h->payload, (size_t)size, NULL, 0);
	}
}

/* cbrec is a callback record's fields whatever the SDK's layout. */
typedef struct {
	uint64_t thread_id, corr;
	uint32_t kind, phase;
	int32_t operation;
	void *payload;
} cbrec;

static cbrec read_record(const rlk_rp_callback_record_v1_t *raw) {
	cbrec c;
	if (info.sdk_version >= RLK_RP_VERSION_ANCESTOR) {
		c.thread_id = raw->thread_id;
		c.corr = raw->correlation_id.internal;
		c.kind = raw->kind;
		c.operation = raw->operation;
		c.phase = raw->phase;
		c.payload = raw->payload;
	} else {
		rlk_rp_callback_record_t v0;
		memcpy(&v0, raw, sizeof v0);
		c.thread_id = v0.thread_id;
		c.corr = v0.correlation_id.internal;
		c.kind = v0.kind;
		c.operation = v0.operation;
		c.phase = v0.phase;
		c.payload = v0.payload;
	}
	return c;
}

static void code_object_cb(rlk_rp_callback_record_v1_t raw, rlk_rp_user_data_t *ud, void *data) {
	(void)ud, (void)data;
	cbrec r = read_record(&raw);
	if (r.kind != RLK_RP_CALLBACK_TRACING_CODE_OBJECT ||
	    r.operation != RLK_RP_CODE_OBJECT_DEVICE_KERNEL_SYMBOL_REGISTER || r.phase != RLK_RP_PHASE_ENTER || !r.payload)
		return;
	const rlk_rp_kernel_symbol_data_t *s = r.payload;
	if (s->size < offsetof(rlk_rp_kernel_symbol_data_t, kernel_name) + sizeof(s->kernel_name) || !s->kernel_name) return;
	append(TAG_SYMBOL, &s->kernel_id, 8, s->kernel_name, strlen(s->kernel_name));
}

static void marker_cb(rlk_rp_callback_record_v1_t raw, rlk_rp_user_data_t *ud, void *data) {
	(void)ud, (void)data;
	cbrec r = read_record(&raw);
	if (r.kind != RLK_RP_CALLBACK_TRACING_MARKER_CORE_API || !r.payload) return;
	const rlk_rp_marker_api_data_t *m = r.payload;
	int op = r.operation, phase = (int)r.phase;
	int want = (op == RLK_RP_MARKER_roctxMarkA && phase == RLK_RP_PHASE_ENTER) ||
	           (op == RLK_RP_MARKER_roctxRangePushA && phase == RLK_RP_PHASE_ENTER) ||
	           (op == RLK_RP_MARKER_roctxRangePop && phase == RLK_RP_PHASE_ENTER) ||
	           (op == RLK_RP_MARKER_roctxRangeStartA && phase == RLK_RP_PHASE_EXIT) ||
	           (op == RLK_RP_MARKER_roctxRangeStop && phase == RLK_RP_PHASE_ENTER);
	if (!want) return;
	uint64_t ts = 0;
	if (!S.get_timestamp || S.get_timestamp(&ts) != RLK_RP_SUCCESS) ts = rlkh_now_ns(CLOCK_BOOTTIME);
	const char *msg = NULL;
	uint64_t rid = 0;
	if ((op == RLK_RP_MARKER_roctxMarkA || op == RLK_RP_MARKER_roctxRangePushA || op == RLK_RP_MARKER_roctxRangeStartA) &&
	    m->size >= offsetof(rlk_rp_marker_api_data_t, args) + sizeof(m->args.message))
		msg = m->args.message;
	if (op == RLK_RP_MARKER_roctxRangeStop && m->size >= offsetof(rlk_rp_marker_api_data_t, args) + 8) rid = m->args.range_id;
	if (op == RLK_RP_MARKER_roctxRangeStartA && m->size >= offsetof(rlk_rp_marker_api_data_t, retval) + 8)
		rid = m->retval.range_id;
	uint8_t fixed[40];
	uint32_t opph[2] = {(uint32_t)op, (uint32_t)phase};
	uint64_t rest[4] = {r.thread_id, ts, r.corr, rid};
	memcpy(fixed, opph, 8);
	memcpy(fixed + 8, rest, 32);
	append(TAG_MARKER, fixed, sizeof fixed, msg, msg ? strlen(msg) : 0);
}

/* ---- agents ---- */

static rlk_rp_status_t agents_cb(int version, const void **list, size_t n, void *ud) {
	(void)version, (void)ud;
	for (size_t i = 0; i < n && nagents < MAX_AGENTS; i++) {
		const rlk_rp_agent_v0_t *a = list[i];
		if (!a || a->size < offsetof(rlk_rp_agent_v0_t, logical_node_type_id) + sizeof(a->logical_node_type_id)) continue;
		rlkroc_agent *o = &agents[nagents++];
		o->handle = a->id.handle;
		o->type = (int32_t)a->type;
		o->type_id = a->logical_node_type_id;
		o->cu_count = a->cu_count;
		snprintf(o->name, sizeof o->name, "%s", a->name ? a->name : "");
		snprintf(o->product, sizeof o->product, "%s", a->product_name ? a->product_name : "");
	}
	return RLK_RP_SUCCESS;
}

static pthread_mutex_t ctl_mu = PTHREAD_MUTEX_INITIALIZER; /* serialises start/stop */

int rlkroc_set_tracing(int on) {
	if (!LOAD(&info.initialized) || LOAD(&finish_once_flag)) return 0;
	pthread_mutex_lock(&ctl_mu);
	int ok = 1;
	if (on && !LOAD(&info.tracing)) {
		ok = S.start_context(ctx) == RLK_RP_SUCCESS;
		if (ok) STORE(&info.tracing, 1);
	} else if (!on && LOAD(&info.tracing)) {
		if (S.flush_buffer) S.flush_buffer(buf_id); /* deliver what was traced before the pause */
		ok = !S.stop_context || S.stop_context(ctx) == RLK_RP_SUCCESS;
		if (ok) STORE(&info.tracing, 0);
	}
	pthread_mutex_unlock(&ctl_mu);
	return ok;
}

int rlkroc_agents(rlkroc_agent *out, int max) {
	int n = nagents < max ? nagents : max;
	memcpy(out, agents, (size_t)n * sizeof *out);
	return n;
}

/* ---- registration ---- */

static void fail(const char *what, int status) {
	if (!info.error[0]) snprintf(info.error, sizeof info.error, "%s failed (rocprofiler_status_t %d)", what, status);
}

#define SYM(field, name) (S.field = (void *)dlsym(RTLD_DEFAULT, name))

static void atfork_child(void) { STORE(&inert, 1); }

static void start_go(void) {
	if (!__atomic_exchange_n(&go_started, 1, __ATOMIC_ACQ_REL)) rlkrocGoStart();
}

/* finish runs once, from the tool's finalize or at process exit: it makes
 * the SDK deliver what it holds, then waits (bounded) for Go to drain. */
static void finish(void) {
	if (LOAD(&inert) || getpid() != owner_pid || __atomic_exchange_n(&finish_once, 1, __ATOMIC_ACQ_REL)) return;
	if (LOAD(&info.tracing) && S.flush_buffer) S.flush_buffer(buf_id); /* the buffer callback runs */
	if (LOAD(&info.tracing) && S.stop_context) S.stop_context(ctx);
	STORE(&info.tracing, 0);
	STORE(&finalized, 1);
	long wait_ms = env_long("RLKTOP_ROCPROF_EXIT_WAIT_MS", 3000, 0, 60000);
	pthread_mutex_lock(&H.mu);
	push_cur();
	rlkh_exit(&H, go_started, wait_ms);
	pthread_mutex_unlock(&H.mu);
}

static void tool_fini(void *tool_data) {
	(void)tool_data;
	finish();
}

static int tool_init(rlk_rp_client_finalize_t fini, void *tool_data) {
	(void)fini, (void)tool_data;
	static int called;
	if (__atomic_exchange_n(&called, 1, __ATOMIC_ACQ_REL)) return info.error[0] ? -1 : 0;
	owner_pid = getpid();
	chunk_bytes = (size_t)env_long("RLKTOP_ROCPROF_CHUNK_KB", 1024, 4, 65536) << 10;
	max_record = (size_t)env_long("RLKTOP_ROCPROF_MAX_RECORD", 4096, 64, 1 << 20);
	if (max_record + 8 > chunk_bytes) max_record = chunk_bytes - 8;
	max_record &= ~(size_t)7; /* an entry (8-byte header + padded payload) always fits a chunk */
	H.cap = (unsigned)env_long("RLKTOP_ROCPROF_RING", 64, 1, RLK_RING_MAX);
	info.chunk_bytes = chunk_bytes;
	info.ring_cap = H.cap;
	info.buffer_bytes = (uint64_t)env_long("RLKTOP_ROCPROF_BUFFER_MB", 8, 1, 1024) << 20;
	info.hip_api = env_long("RLKTOP_ROCPROF_HIP", 1, 0, 1) != 0;
	int64_t b1 = (int64_t)rlkh_now_ns(CLOCK_BOOTTIME), r = (int64_t)rlkh_now_ns(CLOCK_REALTIME),
	        b2 = (int64_t)rlkh_now_ns(CLOCK_BOOTTIME);
	info.clock_offset_ns = r - (b1 + (b2 - b1) / 2);
	info.start_real_ns = r;
	pthread_atfork(NULL, NULL, atfork_child);
	atexit(finish);

	SYM(create_context, "rocprofiler_create_context");
	SYM(start_context, "rocprofiler_start_context");
	SYM(stop_context, "rocprofiler_stop_context");
	SYM(create_buffer, "rocprofiler_create_buffer");
	SYM(flush_buffer, "rocprofiler_flush_buffer");
	SYM(configure_buffer, "rocprofiler_configure_buffer_tracing_service");
	SYM(configure_callback, "rocprofiler_configure_callback_tracing_service");
	SYM(get_timestamp, "rocprofiler_get_timestamp");
	SYM(op_name, "rocprofiler_query_buffer_tracing_kind_operation_name");
	SYM(query_agents, "rocprofiler_query_available_agents");
	if (!S.create_context || !S.start_context || !S.create_buffer || !S.configure_buffer || !S.configure_callback) {
		snprintf(info.error, sizeof info.error, "rocprofiler-sdk functions not found in the process (is librocprofiler-sdk.so loaded?)");
		start_go();
		return -1;
	}
	int st;
	/* Agents first (an SDK call, allowed in initialize): kernel records
	 * carry agent handles; the Go side maps them to GPU indices. */
	if (S.query_agents) S.query_agents(RLK_RP_AGENT_INFO_VERSION_0, agents_cb, sizeof(rlk_rp_agent_v0_t), NULL);
	if ((st = S.create_context(&ctx)) != RLK_RP_SUCCESS) fail("rocprofiler_create_context", st);
	if (!info.error[0] &&
	    (st = S.create_buffer(ctx, info.buffer_bytes, info.buffer_bytes - info.buffer_bytes / 8, RLK_RP_BUFFER_POLICY_DISCARD,
	                          buffer_cb, NULL, &buf_id)) != RLK_RP_SUCCESS)
		fail("rocprofiler_create_buffer", st);
	int kinds[3] = {RLK_RP_BUFFER_TRACING_KERNEL_DISPATCH, RLK_RP_BUFFER_TRACING_MEMORY_COPY, RLK_RP_BUFFER_TRACING_HIP_RUNTIME_API};
	for (int i = 0; i < (info.hip_api ? 3 : 2) && !info.error[0]; i++)
		if ((st = S.configure_buffer(ctx, kinds[i], NULL, 0, buf_id)) != RLK_RP_SUCCESS)
			fail("rocprofiler_configure_buffer_tracing_service", st);
	/* Memory allocations are optional: an SDK before 0.6.0 has no such
	 * kind and refuses it; tracing goes on without them. */
	if (!info.error[0]) S.configure_buffer(ctx, RLK_RP_BUFFER_TRACING_MEMORY_ALLOCATION, NULL, 0, buf_id);
	int32_t sym_op = RLK_RP_CODE_OBJECT_DEVICE_KERNEL_SYMBOL_REGISTER;
	if (!info.error[0] &&
	    (st = S.configure_callback(ctx, RLK_RP_CALLBACK_TRACING_CODE_OBJECT, &sym_op, 1, code_object_cb, NULL)) != RLK_RP_SUCCESS)
		fail("rocprofiler_configure_callback_tracing_service(CODE_OBJECT)", st);
	/* Markers are optional: without librocprofiler-sdk-roctx there are none. */
	if (!info.error[0]) S.configure_callback(ctx, RLK_RP_CALLBACK_TRACING_MARKER_CORE_API, NULL, 0, marker_cb, NULL);
	if (!info.error[0] && (st = S.start_context(ctx)) != RLK_RP_SUCCESS) fail("rocprofiler_start_context", st);
	if (!info.error[0]) {
		STORE(&info.initialized, 1);
		STORE(&info.tracing, 1);
	}
	start_go();
	return info.error[0] ? -1 : 0;
}

static rlk_rp_tool_configure_result_t result = {sizeof(rlk_rp_tool_configure_result_t), tool_init, tool_fini, NULL};

__attribute__((visibility("default"))) rlk_rp_tool_configure_result_t *
rocprofiler_configure(uint32_t version, const char *runtime_version, uint32_t priority, rlk_rp_client_id_t *client_id) {
	(void)priority;
	/* Without rlktop listening, decline: the process then pays nothing. */
	if (!getenv("RLKTOP_SOCKET")) return NULL;
	if (client_id) client_id->name = "rlktop";
	info.sdk_version = version;
	if (runtime_version) snprintf(info.runtime_version, sizeof info.runtime_version, "%s", runtime_version);
	info.configured = 1;
	return &result;
}

/* ---- the Go side's calls ---- */

int rlkroc_next(rlkroc_batch *out, int timeout_ms) {
	memset(out, 0, sizeof *out);
	pthread_mutex_lock(&H.mu);
	if (handed) {
		free(handed);
		handed = NULL;
	}
	/* After a quiet period, hand over the partial chunk so markers and
	 * symbols do not wait for a full one. */
	if (!LOAD(&inert) && rlkh_wait(&H, timeout_ms) && H.len == 0 && cur.entries) push_cur();
	rlk_chunk c = {0};
	if (rlkh_take(&H, &c)) {
		out->status = RLKROC_CHUNK;
	} else if (LOAD(&inert)) {
		out->status = RLKROC_INERT;
	} else if (H.exiting) {
		out->status = RLKROC_EXIT;
	}
	handed = c.buf;
	pthread_mutex_unlock(&H.mu);
	out->buf = c.buf;
	out->len = c.len;
	out->entries = c.entries;
	out->counters.sdk_dropped = LOAD(&cnt.sdk_dropped);
	out->counters.ring_dropped = LOAD(&cnt.ring_dropped);
	out->counters.truncated = LOAD(&cnt.truncated);
	out->counters.entries = LOAD(&cnt.entries);
	out->counters.chunks = LOAD(&cnt.chunks);
	return out->status;
}

void rlkroc_exit_done(void) { rlkh_exit_done(&H); }

void rlkroc_get_info(rlkroc_info *o) {
	*o = info;
	o->initialized = LOAD(&info.initialized);
	o->tracing = LOAD(&info.tracing);
	if (LOAD(&inert) && !o->error[0]) snprintf(o->error, sizeof o->error, "forked child: inert");
}

const char *rlkroc_op_name(int32_t kind, int32_t op) {
	const char *n = NULL;
	uint64_t len = 0;
	if (!S.op_name || S.op_name(kind, op, &n, &len) != RLK_RP_SUCCESS) return NULL;
	return n;
}
