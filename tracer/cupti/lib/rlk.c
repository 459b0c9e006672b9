//go:build cupti && cgo

/*
 * rlk.c — the C layer of rlktop's CUPTI injection library.
 *
 * Loaded into someone else's training process by the CUDA driver
 * (CUDA_INJECTION64_PATH) or by NVTX (NVTX_INJECTION64_PATH). Rules it keeps
 * (DESIGN.md, "Facts about the tracing interfaces"):
 *   - InitializeInjection runs once, calls no CUDA API, only CUPTI;
 *   - CUPTI's threads never wait on Go or on the socket: completed buffers go
 *     into a bounded ring; a full ring counts the buffer's records as dropped
 *     and recycles it; an exhausted buffer pool answers CUPTI with NULL (CUPTI
 *     then drops and counts);
 *   - no lock of ours is held across cuptiActivityFlushAll (the completion
 *     callback runs re-entrantly inside it);
 *   - a forked child goes inert (no Go runs there, no buffers kept);
 *   - libcupti is opened with dlopen at run time and its functions found
 *     with dlsym, so one build works with CUPTI from CUDA 11.8 to 13.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <glob.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Types and constants only; the functions are looked up with dlsym. */
#include <cupti_activity.h>
#include <cupti_callbacks.h>

#include "rlk.h"
#define RLK_RING_MAX 1024 /* RLKTOP_CUPTI_RING's upper bound */
#include "rlk_handoff.h" /* ../../pump/include */

extern void rlkGoStart(void); /* exported by main.go */

/* ---- CUPTI entry points (dlsym) ---- */
typedef CUptiResult (*fn_register)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc);
typedef CUptiResult (*fn_kind)(CUpti_ActivityKind);
typedef CUptiResult (*fn_next)(uint8_t *, size_t, CUpti_Activity **);
typedef CUptiResult (*fn_dropped)(CUcontext, uint32_t, size_t *);
typedef CUptiResult (*fn_flush)(uint32_t);
typedef CUptiResult (*fn_ts)(uint64_t *);
typedef CUptiResult (*fn_subscribe)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
typedef CUptiResult (*fn_unsubscribe)(CUpti_SubscriberHandle);
typedef CUptiResult (*fn_void)(void);
typedef CUptiResult (*fn_domain)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain);
typedef CUptiResult (*fn_version)(uint32_t *);
typedef int (*fn_nvtx2)(const void *);
typedef CUptiResult (*fn_cbname)(CUpti_CallbackDomain, uint32_t, const char **);

static struct {
	void *h;
	fn_register reg;
	fn_kind enable, disable;
	fn_next next;
	fn_dropped dropped;
	fn_flush flush;
	fn_ts ts;
	fn_subscribe subscribe;
	fn_unsubscribe unsubscribe;
	fn_void finalize;
	fn_domain domain;
	fn_version version;
	fn_cbname cbname;
} C;

static const CUpti_ActivityKind kinds[] = {
	CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
	CUPTI_ACTIVITY_KIND_MEMCPY,
	CUPTI_ACTIVITY_KIND_MEMSET,
	CUPTI_ACTIVITY_KIND_RUNTIME,
	CUPTI_ACTIVITY_KIND_DRIVER,
	CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
	CUPTI_ACTIVITY_KIND_OVERHEAD,
	CUPTI_ACTIVITY_KIND_MARKER,
	CUPTI_ACTIVITY_KIND_MEMORY2, /* cudaMalloc/cudaFree and pools: the memory model's device allocations */
};
#define NKINDS (sizeof kinds / sizeof kinds[0])

/* ---- state ---- */

/* The ring of completed buffers; H.mu also guards the pool and go_running,
 * and is never held across a CUPTI call. */
static rlk_handoff H = RLK_HANDOFF_INIT;
static pthread_mutex_t ctl_mu = PTHREAD_MUTEX_INITIALIZER; /* serialises rlk_set_tracing */

static uint8_t **pool;      /* free buffers */
static unsigned pool_len;   /* free buffers in pool */
static unsigned pool_alloc; /* buffers allocated so far */
static unsigned pool_max;
static size_t buf_bytes;

static int inert;           /* forked child or init failure: do nothing */
static int go_running;
static pid_t owner_pid;
static int detach_pending;  /* finalize at the next API exit callback */
static CUpti_SubscriberHandle sub;

static rlk_counters cnt;    /* updated with __atomic */
static rlk_info info;

static uint8_t *cur_buf;    /* handed to Go by the last rlk_next */
static uint32_t *offs;
static size_t offs_cap;

/* A variable outside its range is clamped to the nearer bound. */
#define env_long(name, def, lo, hi) rlkh_env_long((name), (def), (lo), (hi), RLKH_CLAMP)

/* ---- buffers ---- */

static void recycle(uint8_t *b) {
	pthread_mutex_lock(&H.mu);
	if (pool_len < pool_max) {
		pool[pool_len++] = b;
		b = NULL;
	}
	pthread_mutex_unlock(&H.mu);
	free(b); /* only when the pool is somehow full: keep memory bounded */
}

static void CUPTIAPI buf_requested(uint8_t **buffer, size_t *size, size_t *max_records) {
	*max_records = 0;
	*buffer = NULL;
	*size = 0;
	if (LOAD(&inert)) return;
	uint8_t *b = NULL;
	int grow = 0;
	pthread_mutex_lock(&H.mu);
	if (pool_len > 0) {
		b = pool[--pool_len];
	} else if (pool_alloc < pool_max) {
		pool_alloc++;
		grow = 1;
	}
	pthread_mutex_unlock(&H.mu);
	if (grow) {
		b = aligned_alloc(8, buf_bytes);
		if (!b) {
			pthread_mutex_lock(&H.mu);
			pool_alloc--;
			pthread_mutex_unlock(&H.mu);
		} else {
			ADD(&cnt.allocated_bytes, buf_bytes);
		}
	}
	if (!b) {
		ADD(&cnt.null_buffers, 1);
		return;
	}
	*buffer = b;
	*size = buf_bytes;
}

static uint64_t count_records(uint8_t *b, size_t valid) {
	uint64_t n = 0;
	CUpti_Activity *rec = NULL;
	while (C.next(b, valid, &rec) == CUPTI_SUCCESS) n++;
	return n;
}

static void CUPTIAPI buf_completed(CUcontext ctx, uint32_t stream, uint8_t *b, size_t size, size_t valid) {
	(void)size;
	size_t dropped = 0;
	if (LOAD(&inert)) {
		/* Forked child: CUDA cannot run here; nothing is kept. */
		free(b);
		return;
	}
	if (C.dropped && C.dropped(ctx, stream, &dropped) == CUPTI_SUCCESS && dropped) ADD(&cnt.cupti_dropped, dropped);
	if (!b) return;
	if (valid == 0) {
		recycle(b);
		return;
	}
	pthread_mutex_lock(&H.mu);
	int queued = rlkh_put(&H, (rlk_chunk){.buf = b, .len = valid});
	pthread_mutex_unlock(&H.mu);
	if (queued) {
		ADD(&cnt.buffers, 1);
		return;
	}
	ADD(&cnt.ring_dropped, count_records(b, valid));
	recycle(b);
}

/* ---- subscriber: used only to detach at an API exit ---- */

static void CUPTIAPI on_callback(void *ud, CUpti_CallbackDomain dom, CUpti_CallbackId cbid, const void *data) {
	(void)ud;
	(void)cbid;
	if (dom != CUPTI_CB_DOMAIN_RUNTIME_API && dom != CUPTI_CB_DOMAIN_DRIVER_API) return;
	const CUpti_CallbackData *cb = data;
	if (!cb || cb->callbackSite != CUPTI_API_EXIT) return;
	if (__atomic_exchange_n(&detach_pending, 0, __ATOMIC_ACQ_REL)) {
		if (C.finalize) C.finalize();
		STORE(&info.subscribed, 0);
	}
}

static int try_subscribe(void) {
	if (!C.subscribe || env_long("RLKTOP_CUPTI_SUBSCRIBE", 1, 0, 1) == 0) return 0;
	CUptiResult r = C.subscribe(&sub, (CUpti_CallbackFunc)on_callback, NULL);
	info.subscribe_result = (int32_t)r;
	STORE(&info.subscribed, r == CUPTI_SUCCESS);
	return r == CUPTI_SUCCESS;
}

/* start_tracing registers the buffer callbacks and enables the kinds.
 * Caller holds ctl_mu. */
static int start_tracing(void) {
	CUptiResult r = C.reg(buf_requested, buf_completed);
	if (r != CUPTI_SUCCESS) {
		snprintf(info.error, sizeof info.error, "cuptiActivityRegisterCallbacks failed (CUptiResult %d)", (int)r);
		return 0;
	}
	if (!LOAD(&info.subscribed)) try_subscribe();
	int any = 0;
	info.activity_result = 0;
	for (size_t i = 0; i < NKINDS; i++) {
		r = C.enable(kinds[i]);
		if (r == CUPTI_SUCCESS) any = 1;
		else if (!info.activity_result) info.activity_result = (int32_t)r;
	}
	if (!any) {
		snprintf(info.error, sizeof info.error, "cuptiActivityEnable failed for every kind (CUptiResult %d)", info.activity_result);
		return 0;
	}
	STORE(&info.tracing, 1);
	return 1;
}

/* stop_tracing disables the kinds, flushes, and detaches CUPTI: through the
 * subscriber at the next API exit when we hold one, else directly.
 * Caller holds ctl_mu (never H.mu). */
static void stop_tracing(void) {
	for (size_t i = 0; i < NKINDS; i++) C.disable(kinds[i]);
	C.flush(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	STORE(&info.tracing, 0);
	if (LOAD(&info.subscribed) && C.domain) {
		STORE(&detach_pending, 1);
		C.domain(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API);
		C.domain(1, sub, CUPTI_CB_DOMAIN_DRIVER_API);
	} else if (C.finalize) {
		C.finalize();
	}
}

int rlk_set_tracing(int on) {
	if (LOAD(&inert) || !LOAD(&info.initialized)) return 0;
	pthread_mutex_lock(&ctl_mu);
	int ok = 1;
	if (on && !LOAD(&info.tracing)) {
		if (__atomic_exchange_n(&detach_pending, 0, __ATOMIC_ACQ_REL) && LOAD(&info.subscribed)) {
			/* Detach had not happened yet: cancel it. */
			C.domain(0, sub, CUPTI_CB_DOMAIN_RUNTIME_API);
			C.domain(0, sub, CUPTI_CB_DOMAIN_DRIVER_API);
		}
		ok = start_tracing();
	} else if (!on && LOAD(&info.tracing)) {
		stop_tracing();
	}
	pthread_mutex_unlock(&ctl_mu);
	return ok;
}

/* ---- finding libcupti ---- */

#define MAX_SP 8
static char sp_dirs[MAX_SP][512];
static int n_sp;

static int phdr_cb(struct dl_phdr_info *pi, size_t sz, void *data) {
	(void)sz;
	char *found = data;
	const char *name = pi->dlpi_name;
	if (!name || !*name) return 0;
	const char *base = strrchr(name, '/');
	base = base ? base + 1 : name;
	if (!found[0] && strncmp(base, "libcupti.so", 11) == 0 && strlen(name) < 512) strcpy(found, name);
	const char *keys[] = {"/site-packages/", "/dist-packages/"};
	for (int k = 0; k < 2; k++) {
		const char *p = strstr(name, keys[k]);
		if (!p) continue;
		size_t n = (size_t)(p - name) + strlen(keys[k]);
		if (n >= 512 || n_sp >= MAX_SP) continue;
		int dup = 0;
		for (int i = 0; i < n_sp; i++)
			if (strncmp(sp_dirs[i], name, n) == 0 && sp_dirs[i][n] == 0) dup = 1;
		if (!dup) {
			memcpy(sp_dirs[n_sp], name, n);
			sp_dirs[n_sp][n] = 0;
			n_sp++;
		}
	}
	return 0;
}

static const char *sonames[] = {"libcupti.so.13", "libcupti.so.12", "libcupti.so.11.8", "libcupti.so"};

static void *open_in_dir(const char *dir) {
	char path[1024];
	for (size_t i = 0; i < sizeof sonames / sizeof sonames[0]; i++) {
		snprintf(path, sizeof path, "%s/%s", dir, sonames[i]);
		if (access(path, R_OK) != 0) continue;
		void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		if (h) {
			snprintf(info.cupti_path, sizeof info.cupti_path, "%s", path);
			return h;
		}
	}
	/* Any other version in the folder (libcupti.so.2025.1.0 …). */
	snprintf(path, sizeof path, "%s/libcupti.so*", dir);
	glob_t g;
	void *h = NULL;
	if (glob(path, 0, NULL, &g) == 0) {
		for (size_t i = g.gl_pathc; i-- > 0 && !h;) {
			h = dlopen(g.gl_pathv[i], RTLD_NOW | RTLD_LOCAL);
			if (h) snprintf(info.cupti_path, sizeof info.cupti_path, "%s", g.gl_pathv[i]);
		}
		globfree(&g);
	}
	return h;
}

static void *find_cupti(void) {
	void *h;
	const char *explicit = getenv("RLKTOP_CUPTI_LIB");
	if (explicit && *explicit) {
		h = dlopen(explicit, RTLD_NOW | RTLD_LOCAL);
		if (h) {
			snprintf(info.cupti_path, sizeof info.cupti_path, "%s", explicit);
			snprintf(info.how, sizeof info.how, "RLKTOP_CUPTI_LIB");
		} else {
			snprintf(info.error, sizeof info.error, "RLKTOP_CUPTI_LIB=%s: %s", explicit, dlerror());
		}
		return h;
	}
	/* 1. Already loaded (libtorch links libcupti): share that instance. */
	char loaded[512] = {0};
	dl_iterate_phdr(phdr_cb, loaded);
	if (loaded[0] && (h = dlopen(loaded, RTLD_NOW | RTLD_NOLOAD))) {
		snprintf(info.cupti_path, sizeof info.cupti_path, "%s", loaded);
		snprintf(info.how, sizeof info.how, "already loaded");
		return h;
	}
	/* 2. pip wheels beside the Python packages this process loaded, and
	 * folders the launcher found (RLKTOP_CUPTI_SEARCH, colon-separated). */
	char dir[1024];
	const char *wheel[] = {"nvidia/cu13/lib", "nvidia/cuda_cupti/lib", "nvidia/cu12/lib"};
	for (int i = 0; i < n_sp; i++)
		for (int k = 0; k < 3; k++) {
			snprintf(dir, sizeof dir, "%s%s", sp_dirs[i], wheel[k]);
			if ((h = open_in_dir(dir))) {
				snprintf(info.how, sizeof info.how, "pip wheel");
				return h;
			}
		}
	const char *search = getenv("RLKTOP_CUPTI_SEARCH");
	if (search && *search) {
		char buf[4096];
		snprintf(buf, sizeof buf, "%s", search);
		for (char *save = NULL, *d = strtok_r(buf, ":", &save); d; d = strtok_r(NULL, ":", &save))
			if ((h = open_in_dir(d))) {
				snprintf(info.how, sizeof info.how, "RLKTOP_CUPTI_SEARCH");
				return h;
			}
	}
	/* 3. The toolkit. */
	const char *home = getenv("CUDA_HOME");
	if (!home || !*home) home = getenv("CUDA_PATH");
	const char *homes[] = {home, "/usr/local/cuda"};
	for (int i = 0; i < 2; i++) {
		if (!homes[i] || !*homes[i]) continue;
		snprintf(dir, sizeof dir, "%s/extras/CUPTI/lib64", homes[i]);
		if ((h = open_in_dir(dir))) {
			snprintf(info.how, sizeof info.how, "CUDA toolkit");
			return h;
		}
	}
	/* 4. The plain soname through the loader's search path. */
	for (size_t i = sizeof sonames / sizeof sonames[0]; i-- > 0;) {
		if ((h = dlopen(sonames[i], RTLD_NOW | RTLD_LOCAL))) {
			snprintf(info.cupti_path, sizeof info.cupti_path, "%s", sonames[i]);
			snprintf(info.how, sizeof info.how, "soname");
			return h;
		}
	}
	snprintf(info.error, sizeof info.error,
	         "libcupti not found (not loaded, not in pip wheels, CUDA_HOME or the loader path); set RLKTOP_CUPTI_LIB");
	return NULL;
}

/* ---- init, fork, exit ---- */

static void atfork_child(void) {
	/* Go's threads do not exist in the child: never let anything reach Go. */
	STORE(&inert, 1);
}

static void at_exit(void) {
	if (LOAD(&inert) || getpid() != owner_pid || !LOAD(&info.initialized)) return;
	if (LOAD(&info.tracing)) C.flush(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED); /* no lock of ours held */
	long wait_ms = env_long("RLKTOP_CUPTI_EXIT_WAIT_MS", 3000, 0, 60000);
	pthread_mutex_lock(&H.mu);
	rlkh_exit(&H, go_running, wait_ms);
	pthread_mutex_unlock(&H.mu);
}

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int go_started;

#define SYM(field, name) (C.field = (void *)dlsym(C.h, name))

static void init_once(void) {
	owner_pid = getpid();
	buf_bytes = (size_t)env_long("RLKTOP_CUPTI_BUFFER_MB", 4, 1, 10) << 20;
	H.cap = (unsigned)env_long("RLKTOP_CUPTI_RING", 16, 1, RLK_RING_MAX);
	pool_max = (unsigned)env_long("RLKTOP_CUPTI_MAX_BUFFERS", 32, 1, 4096);
	info.buffer_bytes = buf_bytes;
	info.max_buffers = pool_max;
	pool = calloc(pool_max, sizeof *pool);
	if (!pool) {
		snprintf(info.error, sizeof info.error, "out of memory");
		STORE(&inert, 1);
		return;
	}
	C.h = find_cupti();
	if (!C.h) {
		STORE(&inert, 1);
		return;
	}
	SYM(reg, "cuptiActivityRegisterCallbacks");
	SYM(enable, "cuptiActivityEnable");
	SYM(disable, "cuptiActivityDisable");
	SYM(next, "cuptiActivityGetNextRecord");
	SYM(dropped, "cuptiActivityGetNumDroppedRecords");
	SYM(flush, "cuptiActivityFlushAll");
	SYM(ts, "cuptiGetTimestamp");
	SYM(subscribe, "cuptiSubscribe");
	SYM(unsubscribe, "cuptiUnsubscribe");
	SYM(finalize, "cuptiFinalize");
	SYM(domain, "cuptiEnableDomain");
	SYM(version, "cuptiGetVersion");
	SYM(cbname, "cuptiGetCallbackName");
	if (!C.reg || !C.enable || !C.disable || !C.next || !C.flush || !C.ts) {
		snprintf(info.error, sizeof info.error, "%s lacks a required CUPTI activity function", info.cupti_path);
		STORE(&inert, 1);
		return;
	}
	if (C.version) C.version(&info.cupti_version);
	pthread_atfork(NULL, NULL, atfork_child);
	STORE(&info.initialized, 1);
	if (env_long("RLKTOP_CUPTI_START", 1, 0, 1)) {
		pthread_mutex_lock(&ctl_mu);
		start_tracing();
		pthread_mutex_unlock(&ctl_mu);
	}
	atexit(at_exit);
}

static void init_and_start_go(void) {
	pthread_once(&once, init_once);
	if (getpid() != owner_pid) return;
	/* Start the drain even when init failed: Go then reports why. */
	if (!__atomic_exchange_n(&go_started, 1, __ATOMIC_ACQ_REL)) {
		rlkGoStart();
		pthread_mutex_lock(&H.mu);
		go_running = 1;
		pthread_mutex_unlock(&H.mu);
	}
}

/* rlktop_cupti_detach switches tracing off for good (rlk_set_tracing(0):
 * kinds disabled, a forced flush, CUPTI finalized at the next API exit).
 * The Python agent calls it when it leaves a process rlktop attached to
 * and loaded this library into; the library itself stays loaded. */
__attribute__((visibility("default"))) int rlktop_cupti_detach(void) { return rlk_set_tracing(0); }

__attribute__((visibility("default"))) int InitializeInjection(void) {
	static int called;
	if (__atomic_exchange_n(&called, 1, __ATOMIC_ACQ_REL)) return 1;
	init_and_start_go();
	return 1;
}

__attribute__((visibility("default"))) int InitializeInjectionNvtx2(const void *get_export_table) {
	init_and_start_go();
	if (!C.h) return 0;
	fn_nvtx2 f = (fn_nvtx2)dlsym(C.h, "InitializeInjectionNvtx2");
	if (f) {
		info.nvtx = f(get_export_table) != 0;
		return info.nvtx;
	}
	f = (fn_nvtx2)dlsym(C.h, "cuptiNvtxInitialize2");
	if (f) {
		f(get_export_table);
		info.nvtx = 1;
		return 1;
	}
	return 0;
}

/* ---- the Go side's calls ---- */

/* take_pair reads CUPTI's clock between two CLOCK_MONOTONIC reads and
 * maps it to their midpoint. A preemption between the reads widens the
 * window and the midpoint's error with it (a 254 us offset was seen in a
 * test run), so up to 5 tries are made and the narrowest window is kept,
 * stopping at one under 4 us: the usual way two clocks are paired. */
static void take_pair(rlk_batch *out) {
	uint64_t best_c = 0, best_m1 = 0, best_m2 = 0;
	for (int i = 0; i < 5; i++) {
		uint64_t c = 0;
		uint64_t m1 = rlkh_now_ns(CLOCK_MONOTONIC);
		if (C.ts) C.ts(&c);
		uint64_t m2 = rlkh_now_ns(CLOCK_MONOTONIC);
		if (i == 0 || m2 - m1 < best_m2 - best_m1) {
			best_c = c;
			best_m1 = m1;
			best_m2 = m2;
		}
		if (best_m2 - best_m1 < 4000) break;
	}
	out->pair_cupti_ns = best_c;
	out->pair_mono_ns = best_m1 + (best_m2 - best_m1) / 2;
	out->pair_real_ns = rlkh_now_ns(CLOCK_REALTIME) - (rlkh_now_ns(CLOCK_MONOTONIC) - out->pair_mono_ns);
}

void rlk_clock_pair(uint64_t *c, uint64_t *m, uint64_t *r) {
	rlk_batch b;
	take_pair(&b);
	*c = b.pair_cupti_ns;
	*m = b.pair_mono_ns;
	*r = b.pair_real_ns;
}

const char *rlk_callback_name(uint32_t domain, uint32_t cbid) {
	const char *n = NULL;
	if (!C.cbname || C.cbname((CUpti_CallbackDomain)domain, cbid, &n) != CUPTI_SUCCESS) return NULL;
	return n;
}

void rlk_counters_now(rlk_counters *o) {
	o->cupti_dropped = LOAD(&cnt.cupti_dropped);
	o->ring_dropped = LOAD(&cnt.ring_dropped);
	o->null_buffers = LOAD(&cnt.null_buffers);
	o->buffers = LOAD(&cnt.buffers);
	o->allocated_bytes = LOAD(&cnt.allocated_bytes);
}

int rlk_next(rlk_batch *out, int timeout_ms) {
	memset(out, 0, sizeof *out);
	if (cur_buf) {
		recycle(cur_buf);
		cur_buf = NULL;
	}
	pthread_mutex_lock(&H.mu);
	go_running = 1;
	if (!LOAD(&inert)) rlkh_wait(&H, timeout_ms);
	rlk_chunk s = {0};
	if (rlkh_take(&H, &s)) {
		out->status = RLK_BUFFER;
	} else if (LOAD(&inert)) {
		out->status = RLK_INERT;
	} else if (H.exiting) {
		out->status = RLK_EXIT;
	}
	pthread_mutex_unlock(&H.mu);
	rlk_counters_now(&out->counters);
	take_pair(out);
	if (out->status != RLK_BUFFER) return out->status;

	cur_buf = s.buf;
	size_t n = 0;
	CUpti_Activity *rec = NULL;
	while (C.next(s.buf, s.len, &rec) == CUPTI_SUCCESS) {
		if (n == offs_cap) {
			size_t nc = offs_cap ? offs_cap * 2 : 4096;
			uint32_t *no = realloc(offs, nc * sizeof *offs);
			if (!no) break; /* keep what fits */
			offs = no;
			offs_cap = nc;
		}
		offs[n++] = (uint32_t)((uint8_t *)rec - s.buf);
	}
	out->buf = s.buf;
	out->valid = s.len;
	out->offs = offs;
	out->nrec = (uint32_t)n;
	return RLK_BUFFER;
}

void rlk_exit_done(void) { rlkh_exit_done(&H); }

void rlk_get_info(rlk_info *o) {
	*o = info;
	o->subscribed = LOAD(&info.subscribed);
	o->tracing = LOAD(&info.tracing);
	if (LOAD(&inert) && !o->error[0] && getpid() != owner_pid) snprintf(o->error, sizeof o->error, "forked child: inert");
}
