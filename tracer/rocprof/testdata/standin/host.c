/*
 * host.c — a stand-in for rocprofiler-sdk, for rlktop's end-to-end test of
 * its tool library without a GPU.
 *
 * It implements the rocprofiler-sdk functions the tool calls (exported from
 * this executable with -rdynamic, where the tool's dlsym(RTLD_DEFAULT)
 * finds them), loads the tool as rocprofiler-sdk does (dlopen, then
 * rocprofiler_configure, initialize), delivers kernel-symbol and roctx
 * callbacks and buffered kernel-dispatch, memory-copy and HIP API records
 * in rocprofiler-sdk 0.5.0's layouts, then calls finalize.
 *
 * Records are written at explicit byte offsets (the documented layout), not
 * through rlktop's declared structs. It writes $FAKE_MANIFEST, one line per
 * record rlktop must receive (kind|name|start|dur|corr|tid|device|stream|value),
 * and $HOST_SUMMARY (key=value).
 *
 * Env: TOOL_LIB (the tool .so), FAKE_MANIFEST, HOST_SUMMARY, FAKE_DISPATCHES
 * (default 20000).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "rlk_rocprofiler.h" /* callback and function types only */

/* ---- the fake SDK ---- */
static rlk_rp_buffer_tracing_cb_t buffer_cb;
static void *buffer_data;
static rlk_rp_callback_tracing_cb_t code_cb, marker_cb;
static int kinds_on[32], started, flushes;
static __thread uint64_t fake_now;
static uint8_t **held; /* records delivered only when the tool flushes */
static size_t nheld;

rlk_rp_status_t rocprofiler_create_context(rlk_rp_context_id_t *c) {
	c->handle = 1;
	return 0;
}
rlk_rp_status_t rocprofiler_start_context(rlk_rp_context_id_t c) {
	(void)c;
	__atomic_store_n(&started, 1, __ATOMIC_RELEASE);
	return 0;
}
rlk_rp_status_t rocprofiler_stop_context(rlk_rp_context_id_t c) {
	(void)c;
	__atomic_store_n(&started, 0, __ATOMIC_RELEASE);
	return 0;
}
rlk_rp_status_t rocprofiler_create_buffer(rlk_rp_context_id_t c, size_t size, size_t watermark, int policy,
                                          rlk_rp_buffer_tracing_cb_t cb, void *data, rlk_rp_buffer_id_t *id) {
	(void)c, (void)size, (void)watermark, (void)policy;
	buffer_cb = cb;
	buffer_data = data;
	id->handle = 7;
	return 0;
}
static void deliver(uint8_t **recs, size_t n, uint64_t drops);
rlk_rp_status_t rocprofiler_flush_buffer(rlk_rp_buffer_id_t id) {
	(void)id;
	flushes++;
	if (nheld) deliver(held, nheld, 0);
	nheld = 0;
	return 0;
}
rlk_rp_status_t rocprofiler_configure_buffer_tracing_service(rlk_rp_context_id_t c, int kind, const int32_t *ops, size_t n,
                                                             rlk_rp_buffer_id_t b) {
	(void)c, (void)ops, (void)n, (void)b;
	if (kind >= 0 && kind < 32) kinds_on[kind] = 1;
	return 0;
}
rlk_rp_status_t rocprofiler_configure_callback_tracing_service(rlk_rp_context_id_t c, int kind, const int32_t *ops,
                                                               size_t n, rlk_rp_callback_tracing_cb_t cb, void *args) {
	(void)c, (void)ops, (void)n, (void)args;
	if (kind == 10) code_cb = cb;
	if (kind == 7) marker_cb = cb;
	return 0;
}
rlk_rp_status_t rocprofiler_get_timestamp(uint64_t *ts) {
	*ts = fake_now;
	return 0;
}
rlk_rp_status_t rocprofiler_query_buffer_tracing_kind_operation_name(int kind, int32_t op, const char **name,
                                                                     uint64_t *len) {
	static const char *hip[] = {"hipApiNone", "hipLaunchKernel", "hipMemcpyAsync"};
	if (kind != 5 || op < 0 || op > 2) return 1;
	*name = hip[op];
	*len = strlen(hip[op]);
	return 0;
}

/* ---- records at explicit offsets ---- */
static void put64(uint8_t *b, int off, uint64_t v) { memcpy(b + off, &v, 8); }
static void put32(uint8_t *b, int off, uint32_t v) { memcpy(b + off, &v, 4); }
static void putptr(uint8_t *b, int off, const void *p) { memcpy(b + off, &p, 8); }

/* Agents: a CPU and two GPUs whose GPU indices (logical_node_type_id) are
 * not their order in the list, so that the test sees the query used.
 * rocprofiler_agent_v0_t offsets (0.5.0): size 0, id 8, type 16, cu_count
 * 72, name 248, product_name 264, logical_node_type_id 288; 296 bytes. */
static const uint64_t AGENT_A = 0xA000, AGENT_B = 0xB000;
static int agent_dev(uint64_t h) { return h == AGENT_A ? 1 : h == AGENT_B ? 0 : -1; }
static int agent_queries;
rlk_rp_status_t rocprofiler_query_available_agents(int version, rlk_rp_query_agents_cb_t cb, size_t agent_size, void *ud) {
	static uint8_t a[3][296];
	static const void *list[3];
	const uint64_t handles[3] = {0x1, AGENT_A, AGENT_B};
	const uint32_t types[3] = {1, 2, 2}, cus[3] = {0, 304, 40};
	const int32_t type_ids[3] = {0, 1, 0};
	static const char *names[3] = {"AMD EPYC 9654", "gfx942", "gfx1151"};
	static const char *products[3] = {"AMD EPYC 9654", "AMD Instinct MI300X", "AMD Radeon 8060S Graphics"};
	agent_queries++;
	if (version != 1 || agent_size < 296) return 1;
	for (int i = 0; i < 3; i++) {
		memset(a[i], 0, sizeof a[i]);
		put64(a[i], 0, 296);
		put64(a[i], 8, handles[i]);
		put32(a[i], 16, types[i]);
		put32(a[i], 72, cus[i]);
		putptr(a[i], 248, names[i]);
		putptr(a[i], 264, products[i]);
		put32(a[i], 288, (uint32_t)type_ids[i]);
		list[i] = a[i];
	}
	return cb(version, list, 3, ud);
}

static FILE *manifest;
static uint64_t queue_seen[16];
static int nqueues;
static int ordinal(uint64_t *seen, int *n, uint64_t h) {
	for (int i = 0; i < *n; i++)
		if (seen[i] == h) return i;
	seen[*n] = h;
	return (*n)++;
}

static const char *names[] = {"", "attn_fwd", "Cijk_Ailk_Bljk_HHS_BH_MT128x128x32",
                              "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_"};

static uint8_t *dispatch(int size, uint64_t corr, uint64_t tid, uint64_t start, uint64_t end, uint64_t agent, uint64_t queue,
                         uint64_t kid) {
	uint8_t *b = calloc(1, size < 184 ? 184 : size);
	put64(b, 0, size);
	put32(b, 8, 11); /* KERNEL_DISPATCH */
	put32(b, 12, 2); /* COMPLETE */
	put64(b, 16, corr);
	put64(b, 32, tid);
	put64(b, 40, start);
	put64(b, 48, end);
	put64(b, 56, 128);
	put64(b, 64, agent);
	put64(b, 72, queue);
	put64(b, 80, kid);
	put64(b, 88, corr + 100000);
	put32(b, 104, 256);
	put32(b, 116, 65536);
	for (int i = 184; i < size; i++) b[i] = 0xEE; /* fields a newer SDK appended */
	return b;
}

static void deliver(uint8_t **recs, size_t n, uint64_t drops) {
	rlk_rp_record_header_t *hs = calloc(n + 2, sizeof *hs);
	rlk_rp_record_header_t **ptrs = calloc(n + 2, sizeof *ptrs);
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		uint32_t kind;
		memcpy(&kind, recs[i] + 8, 4);
		hs[k].category = 1;
		hs[k].kind = kind;
		hs[k].payload = recs[i];
		ptrs[k] = &hs[k];
		k++;
	}
	/* Records of other categories / kinds the tool did not ask for. */
	static uint8_t other[64] = {64};
	hs[k].category = 2, hs[k].kind = 11, hs[k].payload = other, ptrs[k] = &hs[k], k++;
	hs[k].category = 1, hs[k].kind = 12, hs[k].payload = other, ptrs[k] = &hs[k], k++;
	rlk_rp_context_id_t c = {1};
	rlk_rp_buffer_id_t b = {7};
	buffer_cb(c, b, ptrs, k, buffer_data, drops);
	free(hs);
	free(ptrs);
}

/* ---- callbacks ----
 * rocprofiler_callback_tracing_record_t is passed by value; its layout
 * depends on the SDK version emulated (FAKE_SDK_VERSION, default 500 =
 * 0.5.0): before 0.7.0 the correlation id is 16 bytes (thread 8, corr 16,
 * kind 32, operation 36, phase 40, payload 48; 56 bytes), from 0.7.0 on 24
 * (kind 40, operation 44, phase 48, payload 56; 64 bytes). */
static int sdk_version = 500;
typedef struct { uint64_t w[7]; } rec56;
typedef struct { uint64_t w[8]; } rec64;
typedef void (*cb56)(rec56, rlk_rp_user_data_t *, void *);
typedef void (*cb64)(rec64, rlk_rp_user_data_t *, void *);

static void call(rlk_rp_callback_tracing_cb_t cb, uint64_t tid, uint64_t corr, uint32_t kind, int32_t op, uint32_t phase,
                 void *payload) {
	uint8_t b[64] = {0};
	int v1 = sdk_version >= 700;
	put64(b, 8, tid);
	put64(b, 16, corr);
	put32(b, v1 ? 40 : 32, kind);
	put32(b, v1 ? 44 : 36, (uint32_t)op);
	put32(b, v1 ? 48 : 40, phase);
	putptr(b, v1 ? 56 : 48, payload);
	rlk_rp_user_data_t ud = {0};
	if (v1) {
		rec64 r;
		memcpy(&r, b, sizeof r);
		((cb64)(void *)cb)(r, &ud, NULL);
	} else {
		rec56 r;
		memcpy(&r, b, sizeof r);
		((cb56)(void *)cb)(r, &ud, NULL);
	}
}

static void code_object(uint64_t kid, const char *name, int op, int phase) {
	rlk_rp_kernel_symbol_data_t s;
	memset(&s, 0, sizeof s);
	uint8_t *p = (uint8_t *)&s;
	put64(p, 0, 72);
	put64(p, 8, kid);
	put64(p, 16, 1);
	memcpy(p + 24, &name, 8);
	call(code_cb, 1, 0, 10, op, phase, &s);
}

static void roctx(uint64_t tid, uint64_t now, int op, const char *msg, uint64_t range_id) {
	uint8_t data[32] = {0};
	put64(data, 0, 32);
	if (msg) memcpy(data + 8, &msg, 8);
	if (op == 4) put64(data, 8, range_id);
	fake_now = now;
	call(marker_cb, tid, 900 + (uint64_t)op, 7, op, 1, data); /* enter */
	if (op == 3) put64(data, 24, range_id);                 /* roctxRangeStartA returns the id */
	fake_now = now + 1;
	call(marker_cb, tid, 900 + (uint64_t)op, 7, op, 2, data); /* exit */
}

static void row(const char *kind, const char *name, uint64_t start, uint64_t end, uint64_t corr, long tid, int dev,
                int stream, uint64_t value) {
	fprintf(manifest, "%s|%s|%llu|%llu|%llu|%ld|%d|%d|%llu\n", kind, name, (unsigned long long)start,
	        (unsigned long long)(end - start), (unsigned long long)corr, tid, dev, stream, (unsigned long long)value);
}

static void *thread_a(void *arg) {
	(void)arg;
	roctx(5001, 1000, 1, "rollout", 0);
	roctx(5001, 1100, 1, "forward", 0);
	roctx(5001, 1150, 0, "checkpoint", 0);
	roctx(5001, 1200, 3, "prefetch", 9);
	roctx(5001, 1300, 2, NULL, 0);
	return NULL;
}

static void *thread_b(void *arg) {
	(void)arg;
	roctx(5002, 1050, 1, "loader", 0);
	roctx(5002, 1500, 4, NULL, 9);
	roctx(5002, 1400, 2, NULL, 0);
	roctx(5003, 1600, 2, NULL, 0); /* a pop with nothing pushed: counted, not sent */
	return NULL;
}

int main(void) {
	const char *lib = getenv("TOOL_LIB"), *mpath = getenv("FAKE_MANIFEST"), *spath = getenv("HOST_SUMMARY");
	int ndisp = getenv("FAKE_DISPATCHES") ? atoi(getenv("FAKE_DISPATCHES")) : 20000;
	if (!lib || !mpath || !spath) {
		fprintf(stderr, "host: TOOL_LIB, FAKE_MANIFEST and HOST_SUMMARY must be set\n");
		return 2;
	}
	FILE *summary = fopen(spath, "w");
	/* FAKE_LATE_SOCKET: the socket is set in C's environment only now, just
	 * before the load, as an agent does before loading the tool late into
	 * a running process. */
	if (getenv("FAKE_LATE_SOCKET")) setenv("RLKTOP_SOCKET", getenv("FAKE_LATE_SOCKET"), 1);
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "host: dlopen %s: %s\n", lib, dlerror());
		return 2;
	}
	typedef rlk_rp_tool_configure_result_t *(*configure_fn)(uint32_t, const char *, uint32_t, rlk_rp_client_id_t *);
	configure_fn configure = (configure_fn)dlsym(h, "rocprofiler_configure");
	if (!configure) {
		fprintf(stderr, "host: rocprofiler_configure not exported\n");
		return 2;
	}
	if (getenv("FAKE_SDK_VERSION")) sdk_version = atoi(getenv("FAKE_SDK_VERSION"));
	char rtver[32];
	snprintf(rtver, sizeof rtver, "%d.%d.%d", sdk_version / 10000, sdk_version / 100 % 100, sdk_version % 100);
	rlk_rp_client_id_t client = {NULL, 1};
	rlk_rp_tool_configure_result_t *res = configure(sdk_version, rtver, 0, &client); /* 0.5.0 = 0*10000 + 5*100 + 0 */
	if (!res) {
		fprintf(summary, "declined=1\n");
		fclose(summary);
		return 0;
	}
	if (res->size < sizeof *res || !res->initialize || !res->finalize) {
		fprintf(stderr, "host: bad configure result\n");
		return 2;
	}
	fprintf(summary, "client=%s\n", client.name ? client.name : "");
	if (res->initialize(NULL, res->tool_data) != 0) {
		fprintf(stderr, "host: tool initialize failed\n");
		return 2;
	}
	if (!started || !kinds_on[11] || !kinds_on[10] || !code_cb || !marker_cb) {
		fprintf(stderr, "host: tool did not configure kernel dispatch, memory copy, code object and marker tracing\n");
		return 2;
	}
	fprintf(summary, "agent_queries=%d\n", agent_queries);
	if (getenv("FAKE_WAIT_PAUSE")) {
		/* rlktop pauses, then resumes: the tool stops and restarts its context. */
		int paused = 0, resumed = 0;
		for (int i = 0; i < 5000 && !paused; i++) {
			paused = !__atomic_load_n(&started, __ATOMIC_ACQUIRE);
			if (!paused) usleep(1000);
		}
		for (int i = 0; i < 5000 && paused && !resumed; i++) {
			resumed = __atomic_load_n(&started, __ATOMIC_ACQUIRE);
			if (!resumed) usleep(1000);
		}
		fprintf(summary, "paused=%d\nresumed=%d\n", paused, resumed);
	}
	manifest = fopen(mpath, "w");

	/* Kernel symbols, plus callbacks the tool must ignore. */
	code_object(1, names[1], 2, 1);
	code_object(2, names[2], 2, 1);
	code_object(3, names[3], 2, 1);
	code_object(3, names[3], 2, 2); /* unregister */
	code_object(99, "code object load", 1, 1);

	/* roctx on two threads. */
	pthread_t ta, tb;
	pthread_create(&ta, NULL, thread_a, NULL);
	pthread_join(ta, NULL);
	pthread_create(&tb, NULL, thread_b, NULL);
	pthread_join(tb, NULL);
	roctx(5001, 5000, 2, NULL, 0); /* pop "rollout" */
	row("instant", "checkpoint", 1150, 1150, 0, 5001, -1, 0, 0);
	row("range", "forward", 1100, 1300, 0, 5001, -1, 0, 0);
	row("range", "loader", 1050, 1400, 0, 5002, -1, 0, 0);
	row("range", "prefetch", 1201, 1500, 0, 5001, -1, 0, 0); /* started at the exit phase, owned by its starter */
	row("range", "rollout", 1000, 5000, 0, 5001, -1, 0, 0);

	if (getenv("FAKE_FORK")) {
		/* A forked child (a DataLoader worker) keeps calling into the
		 * tool: it must stay inert -- no Go runs there, nothing is sent. */
		pid_t pid = fork();
		if (pid == 0) {
			uint8_t *r = dispatch(184, 777777, 6001, 1, 2, AGENT_A, 0x100, 1);
			deliver(&r, 1, 0);
			roctx(6001, 10, 1, "in child", 0);
			roctx(6001, 20, 2, NULL, 0);
			_exit(0);
		}
		int st = 0;
		waitpid(pid, &st, 0);
		fprintf(summary, "child_exit=%d\n", WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
	}

	/* Buffered records. */
	const uint64_t A = AGENT_A, B = AGENT_B, Q[3] = {0x100, 0x200, 0x300};
	size_t cap = 256, n = 0;
	uint8_t **batch = calloc(cap, sizeof *batch);
	uint64_t dropped = 0, delivered = 0, short_recs = 0;
	int batches = 0;
	for (int i = 0; i < ndisp; i++) {
		uint64_t start = 10000 + (uint64_t)i * 100, end = start + 50 + i % 7;
		uint64_t agent = i % 5 == 4 ? B : A, q = Q[i % 3], kid = 1 + i % 3, corr = 10 + i;
		int size = i % 1000 == 999 ? 200 : 184;
		if (i == 7) size = 64; /* shorter than any SDK's record: skipped */
		batch[n++] = dispatch(size, corr, 5001, start, end, agent, q, kid);
		if (size >= 96) {
			int dev = agent_dev(agent), st = ordinal(queue_seen, &nqueues, q);
			row("kernel", names[kid], start, end, corr, 5001, dev, st, 0);
		} else {
			short_recs++;
		}
		if (i < 100) {
			/* HIP API record: the 0.7.0+ layout has a 24-byte correlation id. */
			int v1 = sdk_version >= 700, sz = v1 ? 64 : 56, o = v1 ? 8 : 0;
			uint8_t *r = calloc(1, sz);
			put64(r, 0, sz);
			put32(r, 8, 5);
			put32(r, 12, 1);
			put64(r, 16, corr);
			if (v1) put64(r, 32, 77); /* ancestor */
			put64(r, 32 + o, start - 30);
			put64(r, 40 + o, start - 25);
			put64(r, 48 + o, 5001);
			batch[n++] = r;
			row("runtime", "hipLaunchKernel", start - 30, start - 25, corr, 5001, -1, 0, 0);
		}
		if (n >= cap - 2) {
			uint64_t d = ++batches % 10 == 0 ? 3 : 0;
			dropped += d;
			delivered += n;
			deliver(batch, n, d);
			for (size_t k = 0; k < n; k++) free(batch[k]);
			n = 0;
		}
	}
	for (int i = 0; i < 40; i++) {
		uint8_t *r = calloc(1, 80);
		int op = i % 2 ? 3 : 2; /* device to host : host to device */
		uint64_t start = 3000000000ULL + (uint64_t)i * 1000, end = start + 400 + i, bytes = 4096ULL * (i + 1);
		put64(r, 0, 80);
		put32(r, 8, 10);
		put32(r, 12, op);
		put64(r, 16, 50000 + i);
		put64(r, 32, 5001);
		put64(r, 40, start);
		put64(r, 48, end);
		put64(r, 56, op == 2 ? A : 0x1);
		put64(r, 64, op == 2 ? 0x1 : B);
		put64(r, 72, bytes);
		batch[n++] = r;
		int dev = agent_dev(op == 2 ? A : B);
		row("memcpy", op == 2 ? "MEMORY_COPY_HOST_TO_DEVICE" : "MEMORY_COPY_DEVICE_TO_HOST", start, end, 50000 + i, 5001, dev,
		    0, bytes);
	}
	/* FAKE_MEMORY=1 and the tool asked for MEMORY_ALLOCATION (kind 17,
	 * SDK 0.6.0+): 10 allocations of (i+1) MiB on agent A at
	 * 0x7f0000000000 + i MiB, each freed (allocation_size 0, as the SDK
	 * writes frees) 500 ns later; not in the manifest nor in delivered,
	 * counted as memory_records. */
	int memory_records = 0;
	if (getenv("FAKE_MEMORY") && kinds_on[17]) {
		for (int i = 0; i < 20; i++) {
			uint8_t *r = calloc(1, 80);
			int k = i / 2, fr = i % 2;
			uint64_t t0 = 3500000000ULL + (uint64_t)k * 1000 + (fr ? 500 : 0);
			put64(r, 0, 80);
			put32(r, 8, 17);
			put32(r, 12, fr ? 3 : 1); /* FREE : ALLOCATE */
			put64(r, 16, 70000 + i);
			put64(r, 32, 5001);
			put64(r, 40, t0);
			put64(r, 48, t0 + 50);
			put64(r, 56, A);
			put64(r, 64, 0x7f0000000000ULL + ((uint64_t)k << 20));
			put64(r, 72, fr ? 0 : (uint64_t)(k + 1) << 20);
			batch[n++] = r;
			memory_records++;
		}
	}
	dropped += 5;
	delivered += n - memory_records;
	deliver(batch, n, 5);
	for (size_t k = 0; k < n; k++) free(batch[k]);
	n = 0;

	/* Held until the tool flushes at finalize. */
	held = calloc(10, sizeof *held);
	for (int i = 0; i < 10; i++) {
		uint64_t start = 4000000000ULL + (uint64_t)i * 100, corr = 90000 + i;
		held[nheld++] = dispatch(184, corr, 5001, start, start + 60, B, Q[0], 1);
		row("kernel", names[1], start, start + 60, corr, 5001, agent_dev(B),
		    ordinal(queue_seen, &nqueues, Q[0]), 0);
	}
	delivered += nheld;
	fclose(manifest);

	res->finalize(res->tool_data);
	fprintf(summary, "delivered=%llu\ndropped=%llu\nshort=%llu\nflushes=%d\nstarted_after=%d\nmemory_records=%d\n",
	        (unsigned long long)delivered, (unsigned long long)dropped, (unsigned long long)short_recs, flushes, started,
	        memory_records);
	fclose(summary);
	return 0;
}
