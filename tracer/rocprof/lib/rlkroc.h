/*
 * rlkroc.h — the C layer of rlktop's rocprofiler-sdk tool library, as seen
 * from Go.
 *
 * The C layer owns everything rocprofiler-sdk calls into
 * (rocprofiler_configure, the tool's initialize/finalize, the buffer and
 * callback tracing callbacks). It copies each record, by the size field the
 * record carries, into chunks of tagged entries (see ../abi.go, Tag*); a
 * bounded ring of full chunks waits for Go. One Go goroutine calls
 * rlkroc_next in a loop: one cgo crossing per chunk.
 */
#ifndef RLKTOP_RLKROC_H
#define RLKTOP_RLKROC_H

#include <stddef.h>
#include <stdint.h>

enum {
	RLKROC_TIMEOUT = 0, /* nothing within the timeout */
	RLKROC_CHUNK = 1,   /* buf/len describe one chunk */
	RLKROC_EXIT = 2,    /* finalize: ring drained; call rlkroc_exit_done */
	RLKROC_INERT = 3,   /* forked child or failed init: stop draining */
};

/* Counters, cumulative since initialize. */
typedef struct {
	uint64_t sdk_dropped;  /* records rocprofiler-sdk reported dropped (buffer callbacks' drop_count) */
	uint64_t ring_dropped; /* entries discarded because the chunk ring was full */
	uint64_t truncated;    /* records longer than RLKTOP_ROCPROF_MAX_RECORD, cut to it */
	uint64_t entries;      /* entries written */
	uint64_t chunks;       /* chunks queued for Go */
} rlkroc_counters;

typedef struct {
	int32_t status;
	uint32_t entries;
	const uint8_t *buf; /* valid until the next rlkroc_next */
	uint64_t len;
	rlkroc_counters counters;
} rlkroc_batch;

typedef struct {
	int32_t configured;      /* rocprofiler_configure accepted (RLKTOP_SOCKET set) */
	int32_t initialized;     /* the tool's initialize ran and every service was configured */
	int32_t tracing;         /* context started */
	uint32_t sdk_version;    /* the version rocprofiler_configure received (major*10000+minor*100+patch) */
	int32_t hip_api;         /* HIP runtime API tracing on */
	int64_t clock_offset_ns; /* CLOCK_REALTIME - CLOCK_BOOTTIME when initialize ran */
	int64_t start_real_ns;   /* CLOCK_REALTIME then */
	uint64_t buffer_bytes;   /* rocprofiler buffer size */
	uint64_t chunk_bytes;    /* chunk size */
	uint32_t ring_cap;       /* chunks the ring holds */
	char runtime_version[64];
	char error[256]; /* why tracing is off, "" when it is on */
} rlkroc_info;

/* One agent from rocprofiler_query_available_agents. */
typedef struct {
	uint64_t handle;
	int32_t type;    /* 1 CPU, 2 GPU */
	int32_t type_id; /* logical_node_type_id: index among agents of its type */
	uint32_t cu_count;
	char name[64];     /* "gfx942" */
	char product[128]; /* "AMD Instinct MI300X" */
} rlkroc_agent;

int rlkroc_next(rlkroc_batch *out, int timeout_ms);
int rlkroc_agents(rlkroc_agent *out, int max); /* returns how many were copied */
/* rlkroc_set_tracing stops (after flushing the buffer) or restarts the
 * tool's rocprofiler context; 1 when tracing is now as asked. */
int rlkroc_set_tracing(int on);
void rlkroc_exit_done(void);
void rlkroc_get_info(rlkroc_info *out);
const char *rlkroc_op_name(int32_t kind, int32_t op);

#endif
