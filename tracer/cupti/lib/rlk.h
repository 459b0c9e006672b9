/*
 * rlk.h — the C layer of rlktop's CUPTI injection library, as seen from Go.
 *
 * The C layer owns everything the CUDA driver and CUPTI call into:
 * InitializeInjection, InitializeInjectionNvtx2, the activity buffer
 * callbacks and the ring of completed buffers. Go never runs on a CUPTI or
 * user thread: one Go goroutine calls rlk_next in a loop (one cgo crossing
 * per completed buffer) and decodes the records in place.
 */
#ifndef RLKTOP_RLK_H
#define RLKTOP_RLK_H

#include <stddef.h>
#include <stdint.h>

/* Status values of rlk_batch.status. */
enum {
	RLK_TIMEOUT = 0, /* nothing completed within the timeout */
	RLK_BUFFER = 1,  /* buf/valid/offs/nrec describe one completed buffer */
	RLK_EXIT = 2,    /* process exit: ring drained; call rlk_exit_done */
	RLK_INERT = 3,   /* a forked child or a failed init: stop draining */
};

/* Counters, cumulative since InitializeInjection. */
typedef struct {
	uint64_t cupti_dropped;   /* records CUPTI reported dropped (cuptiActivityGetNumDroppedRecords) */
	uint64_t ring_dropped;    /* records in completed buffers discarded because the ring was full */
	uint64_t null_buffers;    /* buffer requests answered with NULL (pool exhausted; CUPTI drops) */
	uint64_t buffers;         /* completed buffers queued for Go */
	uint64_t allocated_bytes; /* bytes of activity buffers allocated */
} rlk_counters;

/* One call's result. Memory behind buf and offs stays valid until the next
 * rlk_next call. */
typedef struct {
	int32_t status;
	uint32_t nrec;           /* number of records */
	const uint8_t *buf;      /* the buffer CUPTI filled */
	uint64_t valid;          /* bytes of buf holding records */
	const uint32_t *offs;    /* nrec offsets of records within buf, in CUPTI order */
	uint64_t pair_cupti_ns;  /* cuptiGetTimestamp ... */
	uint64_t pair_mono_ns;   /* ... and CLOCK_MONOTONIC ... */
	uint64_t pair_real_ns;   /* ... and CLOCK_REALTIME, taken together in this call */
	rlk_counters counters;
} rlk_batch;

/* Configuration and state reported in the hello. */
typedef struct {
	int32_t initialized;     /* InitializeInjection (or the NVTX entry) ran and found CUPTI */
	int32_t subscribed;      /* cuptiSubscribe succeeded */
	int32_t subscribe_result;/* CUptiResult of cuptiSubscribe (39 = another subscriber holds CUPTI) */
	int32_t activity_result; /* first failing CUptiResult enabling activity kinds, 0 if none */
	uint32_t cupti_version;  /* cuptiGetVersion, 0 when unknown */
	int32_t nvtx;            /* InitializeInjectionNvtx2 forwarded to CUPTI */
	int32_t tracing;         /* activity collection on */
	uint64_t buffer_bytes;   /* size of each activity buffer */
	uint32_t max_buffers;    /* pool limit */
	char cupti_path[512];    /* where libcupti was loaded from */
	char how[64];            /* which search step found it */
	char error[256];         /* why initialisation failed, "" if it did not */
} rlk_info;

int rlk_next(rlk_batch *out, int timeout_ms);
void rlk_exit_done(void);
void rlk_get_info(rlk_info *out);
int rlk_set_tracing(int on);
void rlk_counters_now(rlk_counters *out);
void rlk_clock_pair(uint64_t *cupti_ns, uint64_t *mono_ns, uint64_t *real_ns);
const char *rlk_callback_name(uint32_t domain, uint32_t cbid);

#endif
