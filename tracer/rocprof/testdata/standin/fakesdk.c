/*
 * fakesdk.c — the stand-in rocprofiler-sdk both stand-ins share (included,
 * not linked): the SDK functions rlktop's tool library calls (found by its
 * dlsym(RTLD_DEFAULT), so whatever includes this must export them: an
 * executable built with -rdynamic, or a shared library loaded
 * RTLD_GLOBAL), the agents it lists, and records and callbacks written at
 * the explicit byte offsets of rocprofiler-sdk 0.5.0's layouts (0.7.0's
 * where FAKE_SDK_VERSION says so), never through rlktop's declared structs.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rlk_rocprofiler.h" /* callback and function types only */
/* ---- the fake SDK ---- */
static rlk_rp_buffer_tracing_cb_t buffer_cb;
static void *buffer_data;
static rlk_rp_callback_tracing_cb_t code_cb, marker_cb;
/* started: the context runs now; ever_started: it was started once (the
 * tool stops it again as soon as its connection to rlktop fails, which can
 * come before the host checks the configuration). */
static int kinds_on[32], started, ever_started, flushes;
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
	__atomic_store_n(&ever_started, 1, __ATOMIC_RELEASE);
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
