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
#include <sys/wait.h>

#include "fakesdk.c"

static uint64_t queue_seen[16];
static int nqueues;
static int ordinal(uint64_t *seen, int *n, uint64_t h) {
	for (int i = 0; i < *n; i++)
		if (seen[i] == h) return i;
	seen[*n] = h;
	return (*n)++;
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
	if (!__atomic_load_n(&ever_started, __ATOMIC_ACQUIRE) || !kinds_on[11] || !kinds_on[10] || !code_cb || !marker_cb) {
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
