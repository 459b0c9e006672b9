/*
 * rlk_handoff.h — the C half of tracer/pump, shared by rlktop's two
 * injection libraries (tracer/cupti/lib/rlk.c, tracer/rocprof/lib/rlkroc.c).
 *
 * The GPU tool's threads (CUPTI's buffer callbacks, rocprofiler-sdk's
 * buffer and callback tracing) queue filled buffers into a bounded ring;
 * the one Go drain goroutine (pump.Run, through the library's rlk_next or
 * rlkroc_next: one cgo call per buffer) takes them out; at exit the process
 * waits, bounded, for that goroutine to send what is left. Rules kept:
 *   - the tool's threads never wait on Go: rlkh_put fails on a full ring
 *     and the caller counts the drop;
 *   - mu is never held across a call into the GPU tool (its callbacks run
 *     re-entrantly inside flushes);
 *   - no allocation here: the ring is a fixed array.
 *
 * Static inline functions only: cgo compiles just the .c files of a
 * package's own folder, so both libraries include this header through
 * `#cgo CFLAGS: -I${SRCDIR}/../../pump/include`. Go's build cache does not
 * notice edits to headers outside a package's folder (nor to ../include's):
 * the libraries' e2e tests put this file's hash into CGO_CFLAGS
 * (tracer/internal/injecttest.Build) and so rebuild; for scripts/build-*.sh
 * or a plain go build after changing it, use `go build -a` or run
 * `go clean -cache` first.
 *
 * Define RLK_RING_MAX (the most buffers the ring may hold) before including.
 */
#ifndef RLKTOP_RLK_HANDOFF_H
#define RLKTOP_RLK_HANDOFF_H

#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#ifndef RLK_RING_MAX
#error "define RLK_RING_MAX before including rlk_handoff.h"
#endif

/* Atomics for flags and counters read across threads. */
#define LOAD(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define ADD(p, v) __atomic_fetch_add((p), (v), __ATOMIC_RELAXED)

/* What rlkh_env_long does with a number outside [lo, hi]. */
enum {
	RLKH_DEFAULT = 0, /* return def (rocprofiler library) */
	RLKH_CLAMP = 1,   /* return the nearer bound (CUPTI library) */
};

/* rlkh_env_long reads the decimal integer in environment variable name:
 * def when it is unset, empty or not a whole number; outside [lo, hi] as
 * out_of_range says (RLKH_DEFAULT or RLKH_CLAMP). */
static inline long rlkh_env_long(const char *name, long def, long lo, long hi, int out_of_range) {
	const char *s = getenv(name);
	if (!s || !*s) return def;
	char *end;
	long v = strtol(s, &end, 10);
	if (*end) return def;
	if (v < lo) return out_of_range == RLKH_CLAMP ? lo : def;
	if (v > hi) return out_of_range == RLKH_CLAMP ? hi : def;
	return v;
}

/* rlkh_now_ns reads clock c in ns. */
static inline uint64_t rlkh_now_ns(clockid_t c) {
	struct timespec ts;
	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* rlkh_deadline sets *dl to CLOCK_REALTIME now + ms (ms >= 0), the
 * absolute time pthread_cond_timedwait takes. */
static inline void rlkh_deadline(struct timespec *dl, long ms) {
	clock_gettime(CLOCK_REALTIME, dl);
	dl->tv_sec += ms / 1000;
	dl->tv_nsec += (ms % 1000) * 1000000L;
	if (dl->tv_nsec >= 1000000000L) {
		dl->tv_sec++;
		dl->tv_nsec -= 1000000000L;
	}
}

/* One queued buffer: len bytes of buf hold records (CUPTI's activity
 * buffer) or entries tagged entries (rocprof's chunks; 0 for CUPTI). */
typedef struct {
	uint8_t *buf;
	size_t len;
	uint32_t entries;
} rlk_chunk;

/* The ring and the exit handshake. mu guards every field (and whatever
 * else the library says it guards); cap is set once, before the GPU tool
 * can call the library, to 1..RLK_RING_MAX. */
typedef struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;      /* a chunk was queued, or exiting */
	pthread_cond_t exit_cv; /* exit_done */
	rlk_chunk ring[RLK_RING_MAX];
	unsigned head, len, cap;
	int exiting;   /* the process is exiting: the drain sends what is left */
	int exit_done; /* the drain has finished (rlkh_exit_done) */
} rlk_handoff;

#define RLK_HANDOFF_INIT {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER, .exit_cv = PTHREAD_COND_INITIALIZER}

/* rlkh_put queues c and wakes the drain; 0 when the ring is full (nothing
 * queued: the caller counts the drop and keeps c). mu held. */
static inline int rlkh_put(rlk_handoff *h, rlk_chunk c) {
	if (h->len >= h->cap) return 0;
	h->ring[(h->head + h->len) % h->cap] = c;
	h->len++;
	pthread_cond_signal(&h->cv);
	return 1;
}

/* rlkh_wait waits up to timeout_ms until a chunk is queued or the process
 * exits; it returns 1 when it waited (the ring was empty, not exiting,
 * timeout_ms > 0), 0 when it returned at once. mu held (released while
 * waiting). */
static inline int rlkh_wait(rlk_handoff *h, int timeout_ms) {
	if (h->len > 0 || h->exiting || timeout_ms <= 0) return 0;
	struct timespec dl;
	rlkh_deadline(&dl, timeout_ms);
	while (h->len == 0 && !h->exiting)
		if (pthread_cond_timedwait(&h->cv, &h->mu, &dl) == ETIMEDOUT) break;
	return 1;
}

/* rlkh_take moves the oldest queued chunk to *c; 0 when none is queued
 * (*c untouched). mu held. */
static inline int rlkh_take(rlk_handoff *h, rlk_chunk *c) {
	if (h->len == 0) return 0;
	*c = h->ring[h->head];
	h->head = (h->head + 1) % h->cap;
	h->len--;
	return 1;
}

/* rlkh_exit marks the process exiting and wakes the drain; when wait (the
 * drain is running), it then waits up to wait_ms for rlkh_exit_done. mu
 * held (released while waiting). */
static inline void rlkh_exit(rlk_handoff *h, int wait, long wait_ms) {
	h->exiting = 1;
	pthread_cond_broadcast(&h->cv);
	if (!wait) return;
	struct timespec dl;
	rlkh_deadline(&dl, wait_ms);
	while (!h->exit_done)
		if (pthread_cond_timedwait(&h->exit_cv, &h->mu, &dl) == ETIMEDOUT) break;
}

/* rlkh_exit_done tells rlkh_exit the drain has finished. mu not held. */
static inline void rlkh_exit_done(rlk_handoff *h) {
	pthread_mutex_lock(&h->mu);
	h->exit_done = 1;
	pthread_cond_broadcast(&h->exit_cv);
	pthread_mutex_unlock(&h->mu);
}

#endif
