/*
 * rlk_rocprofiler.h — the subset of the rocprofiler-sdk ABI that rlktop's
 * tool library uses, declared by rlktop (no rocprofiler-sdk headers exist in
 * Debian). Layouts follow the public headers of rocprofiler-sdk 0.5.0
 * (ROCm 6.3; ROCm/rocprofiler-sdk source/include/rocprofiler-sdk: fwd.h,
 * registration.h, context.h, buffer.h, buffer_tracing.h, callback_tracing.h,
 * marker/api_args.h, rocprofiler.h) for x86-64 Linux: enums are 4 bytes,
 * pointers and size_t 8.
 *
 * Records grow by version (new fields are appended; each record starts with
 * its uint64_t size), so rlktop reads only the prefix declared here and
 * checks the size field first. Enum values listed here are stable: later
 * releases append kinds and operations after them.
 *
 * One break is not an append: rocprofiler-sdk 0.7.0 (released as 1.0.0,
 * ROCm 7.0) added `uint64_t ancestor` to rocprofiler_correlation_id_t, which
 * API records and callback records embed (asynchronous records -- kernel
 * dispatch, memory copy -- use the unchanged 16-byte
 * rocprofiler_async_correlation_id_t). Both layouts are declared (v0: before
 * 0.7.0; v1: 0.7.0 and later) and the tool picks by the version that
 * rocprofiler_configure receives (RLK_RP_VERSION_ANCESTOR).
 *
 * tracer/rocprof's tests compile this header and compare sizeof/offsetof
 * with the offsets the Go decoder uses (abi.go).
 */
#ifndef RLKTOP_ROCPROFILER_H
#define RLKTOP_ROCPROFILER_H

#include <stddef.h>
#include <stdint.h>

#define RLK_ROCPROFILER_SDK_VERSION "0.5.0"
/* major*10000 + minor*100 + patch, as rocprofiler_configure's version. */
#define RLK_RP_VERSION_ANCESTOR 700 /* 0.7.0: correlation ids gain "ancestor" */

/* ---- status, kinds, operations ---- */
typedef int rlk_rp_status_t; /* rocprofiler_status_t; 0 = success */
#define RLK_RP_SUCCESS 0

/* rocprofiler_buffer_category_t */
#define RLK_RP_BUFFER_CATEGORY_TRACING 1

/* rocprofiler_buffer_tracing_kind_t */
#define RLK_RP_BUFFER_TRACING_HIP_RUNTIME_API 5
#define RLK_RP_BUFFER_TRACING_MEMORY_COPY 10
#define RLK_RP_BUFFER_TRACING_KERNEL_DISPATCH 11
#define RLK_RP_BUFFER_TRACING_MEMORY_ALLOCATION 17 /* rocprofiler-sdk 0.6.0 and later */

/* rocprofiler_callback_tracing_kind_t */
#define RLK_RP_CALLBACK_TRACING_MARKER_CORE_API 7
#define RLK_RP_CALLBACK_TRACING_CODE_OBJECT 10

/* rocprofiler_callback_phase_t */
#define RLK_RP_PHASE_ENTER 1 /* also "load" for code objects */
#define RLK_RP_PHASE_EXIT 2  /* also "unload" */

/* rocprofiler_code_object_operation_t */
#define RLK_RP_CODE_OBJECT_DEVICE_KERNEL_SYMBOL_REGISTER 2

/* rocprofiler_marker_core_api_id_t */
#define RLK_RP_MARKER_roctxMarkA 0
#define RLK_RP_MARKER_roctxRangePushA 1
#define RLK_RP_MARKER_roctxRangePop 2
#define RLK_RP_MARKER_roctxRangeStartA 3
#define RLK_RP_MARKER_roctxRangeStop 4

/* rocprofiler_memory_copy_operation_t */
#define RLK_RP_MEMORY_COPY_HOST_TO_HOST 1
#define RLK_RP_MEMORY_COPY_HOST_TO_DEVICE 2
#define RLK_RP_MEMORY_COPY_DEVICE_TO_HOST 3
#define RLK_RP_MEMORY_COPY_DEVICE_TO_DEVICE 4

/* rocprofiler_buffer_policy_t */
#define RLK_RP_BUFFER_POLICY_DISCARD 1

/* ---- handles and small structs ---- */
typedef struct { uint64_t handle; } rlk_rp_context_id_t;
typedef struct { uint64_t handle; } rlk_rp_buffer_id_t;
typedef struct { uint64_t handle; } rlk_rp_agent_id_t;
typedef struct { uint64_t handle; } rlk_rp_queue_id_t;

typedef union {
	uint64_t value;
	void *ptr;
} rlk_rp_user_data_t;

typedef struct {
	uint64_t internal;
	rlk_rp_user_data_t external;
} rlk_rp_correlation_id_t; /* 16 bytes: before 0.7.0; rocprofiler_async_correlation_id_t since */

typedef struct {
	uint64_t internal;
	rlk_rp_user_data_t external;
	uint64_t ancestor;
} rlk_rp_correlation_id_v1_t; /* 24 bytes: rocprofiler_correlation_id_t since 0.7.0 */

typedef struct {
	uint32_t x, y, z;
} rlk_rp_dim3_t;

/* rocprofiler_record_header_t: what a buffer callback receives. */
typedef struct {
	union {
		struct {
			uint32_t category;
			uint32_t kind;
		};
		uint64_t hash;
	};
	void *payload;
} rlk_rp_record_header_t;

/* rocprofiler_kernel_dispatch_info_t: fixed at 128 bytes by the SDK. */
typedef struct {
	uint64_t size;
	rlk_rp_agent_id_t agent_id;
	rlk_rp_queue_id_t queue_id;
	uint64_t kernel_id;
	uint64_t dispatch_id;
	uint32_t private_segment_size;
	uint32_t group_segment_size;
	rlk_rp_dim3_t workgroup_size;
	rlk_rp_dim3_t grid_size;
	uint8_t reserved_padding[56];
} rlk_rp_kernel_dispatch_info_t;

/* rocprofiler_buffer_tracing_kernel_dispatch_record_t */
typedef struct {
	uint64_t size;
	uint32_t kind;
	uint32_t operation;
	rlk_rp_correlation_id_t correlation_id;
	uint64_t thread_id;
	uint64_t start_timestamp; /* ns, CLOCK_BOOTTIME */
	uint64_t end_timestamp;
	rlk_rp_kernel_dispatch_info_t dispatch_info;
} rlk_rp_kernel_dispatch_record_t;

/* rocprofiler_buffer_tracing_hip_api_record_t (the HSA, marker and RCCL
 * API records share this layout; note the thread id comes last). */
typedef struct {
	uint64_t size;
	uint32_t kind;
	int32_t operation;
	rlk_rp_correlation_id_t correlation_id;
	uint64_t start_timestamp;
	uint64_t end_timestamp;
	uint64_t thread_id;
} rlk_rp_api_record_t;

/* The same record since 0.7.0 (24-byte correlation id). */
typedef struct {
	uint64_t size;
	uint32_t kind;
	int32_t operation;
	rlk_rp_correlation_id_v1_t correlation_id;
	uint64_t start_timestamp;
	uint64_t end_timestamp;
	uint64_t thread_id;
} rlk_rp_api_record_v1_t;

/* rocprofiler_buffer_tracing_memory_copy_record_t */
typedef struct {
	uint64_t size;
	uint32_t kind;
	uint32_t operation; /* RLK_RP_MEMORY_COPY_* */
	rlk_rp_correlation_id_t correlation_id;
	uint64_t thread_id;
	uint64_t start_timestamp;
	uint64_t end_timestamp;
	rlk_rp_agent_id_t dst_agent_id;
	rlk_rp_agent_id_t src_agent_id;
	uint64_t bytes;
} rlk_rp_memory_copy_record_t;

/* rocprofiler_callback_tracing_record_t: passed by value to callbacks
 * (on x86-64, in memory at the same stack address whatever its size). */
typedef struct {
	rlk_rp_context_id_t context_id;
	uint64_t thread_id;
	rlk_rp_correlation_id_t correlation_id;
	uint32_t kind;
	int32_t operation;
	uint32_t phase;
	void *payload;
} rlk_rp_callback_record_t; /* before 0.7.0: 56 bytes */

typedef struct {
	rlk_rp_context_id_t context_id;
	uint64_t thread_id;
	rlk_rp_correlation_id_v1_t correlation_id;
	uint32_t kind;
	int32_t operation;
	uint32_t phase;
	void *payload;
} rlk_rp_callback_record_v1_t; /* since 0.7.0: 64 bytes */

/* rocprofiler_callback_tracing_code_object_kernel_symbol_register_data_t */
typedef struct {
	uint64_t size;
	uint64_t kernel_id;
	uint64_t code_object_id;
	const char *kernel_name;
	uint64_t kernel_object;
	uint32_t kernarg_segment_size;
	uint32_t kernarg_segment_alignment;
	uint32_t group_segment_size;
	uint32_t private_segment_size;
	uint32_t sgpr_count;
	uint32_t arch_vgpr_count;
	uint32_t accum_vgpr_count;
} rlk_rp_kernel_symbol_data_t;

/* rocprofiler_callback_tracing_marker_api_data_t: args is a union of
 * per-function structs (16 bytes; the message pointer first for roctxMarkA,
 * roctxRangePushA and roctxRangeStartA, the range id first for
 * roctxRangeStop), retval a union of int32/int64/roctx_range_id_t. */
typedef struct {
	uint64_t size;
	union {
		const char *message;
		uint64_t range_id;
		uint8_t bytes[16];
	} args;
	union {
		int32_t i32;
		int64_t i64;
		uint64_t range_id;
	} retval;
} rlk_rp_marker_api_data_t;

/* rocprofiler_agent_v0_t (agent.h), queried with
 * rocprofiler_query_available_agents(ROCPROFILER_AGENT_INFO_VERSION_0 = 1).
 * The three HSA_* members are 32-bit unions in hsakmttypes.h; declared here
 * as uint32_t. rlktop reads id, type, cu_count, name, product_name and
 * logical_node_type_id (the GPU's index among GPUs). */
#define RLK_RP_AGENT_INFO_VERSION_0 1
#define RLK_RP_AGENT_TYPE_GPU 2
typedef struct {
	uint64_t size;
	rlk_rp_agent_id_t id;
	uint32_t type; /* 1 CPU, 2 GPU */
	uint32_t cpu_cores_count, simd_count, mem_banks_count, caches_count, io_links_count;
	uint32_t cpu_core_id_base, simd_id_base, max_waves_per_simd, lds_size_in_kb, gds_size_in_kb, num_gws;
	uint32_t wave_front_size, num_xcc, cu_count, array_count, num_shader_banks, simd_arrays_per_engine;
	uint32_t cu_per_simd_array, simd_per_cu, max_slots_scratch_cu, gfx_target_version;
	uint16_t vendor_id, device_id;
	uint32_t location_id, domain, drm_render_minor, num_sdma_engines, num_sdma_xgmi_engines;
	uint32_t num_sdma_queues_per_engine, num_cp_queues, max_engine_clk_ccompute, max_engine_clk_fcompute;
	uint32_t sdma_fw_version; /* HSA_ENGINE_VERSION */
	uint32_t fw_version;      /* HSA_ENGINE_ID */
	uint32_t capability;      /* HSA_CAPABILITY */
	uint32_t cu_per_engine, max_waves_per_cu, family_id, workgroup_max_size, grid_max_size;
	uint64_t local_mem_size, hive_id, gpu_id;
	rlk_rp_dim3_t workgroup_max_dim, grid_max_dim;
	const void *mem_banks, *caches, *io_links;
	const char *name; /* "gfx942" */
	const char *vendor_name, *product_name, *model_name;
	uint32_t node_id;
	int32_t logical_node_id;
	int32_t logical_node_type_id;
	int32_t reserved_padding0;
} rlk_rp_agent_v0_t;

typedef rlk_rp_status_t (*rlk_rp_query_agents_cb_t)(int version, const void **agents, size_t num_agents, void *user_data);

/* ---- registration ---- */
typedef struct {
	const char *name;
	const uint32_t handle;
} rlk_rp_client_id_t;

typedef void (*rlk_rp_client_finalize_t)(rlk_rp_client_id_t);
typedef int (*rlk_rp_tool_initialize_t)(rlk_rp_client_finalize_t finalize_func, void *tool_data);
typedef void (*rlk_rp_tool_finalize_t)(void *tool_data);

typedef struct {
	size_t size;
	rlk_rp_tool_initialize_t initialize;
	rlk_rp_tool_finalize_t finalize;
	void *tool_data;
} rlk_rp_tool_configure_result_t;

/* ---- callbacks the tool gives the SDK ---- */
typedef void (*rlk_rp_buffer_tracing_cb_t)(rlk_rp_context_id_t context, rlk_rp_buffer_id_t buffer_id,
                                           rlk_rp_record_header_t **headers, size_t num_headers, void *data,
                                           uint64_t drop_count);
/* The tool declares its callbacks with the larger (v1) record: with a v0
 * SDK the 56 bytes it passes are the v1 struct's first 56 (read as v0), and
 * the 8 bytes after them are the caller's stack, read but unused. */
typedef void (*rlk_rp_callback_tracing_cb_t)(rlk_rp_callback_record_v1_t record, rlk_rp_user_data_t *user_data,
                                             void *callback_data);

/* ---- SDK functions the tool calls (looked up with dlsym) ---- */
typedef rlk_rp_status_t (*rlk_rp_create_context_fn)(rlk_rp_context_id_t *context_id);
typedef rlk_rp_status_t (*rlk_rp_start_context_fn)(rlk_rp_context_id_t context_id);
typedef rlk_rp_status_t (*rlk_rp_stop_context_fn)(rlk_rp_context_id_t context_id);
typedef rlk_rp_status_t (*rlk_rp_create_buffer_fn)(rlk_rp_context_id_t context, size_t size, size_t watermark,
                                                  int policy, rlk_rp_buffer_tracing_cb_t callback,
                                                  void *callback_data, rlk_rp_buffer_id_t *buffer_id);
typedef rlk_rp_status_t (*rlk_rp_flush_buffer_fn)(rlk_rp_buffer_id_t buffer_id);
typedef rlk_rp_status_t (*rlk_rp_configure_buffer_tracing_fn)(rlk_rp_context_id_t context_id, int kind,
                                                             const int32_t *operations, size_t operations_count,
                                                             rlk_rp_buffer_id_t buffer_id);
typedef rlk_rp_status_t (*rlk_rp_configure_callback_tracing_fn)(rlk_rp_context_id_t context_id, int kind,
                                                               const int32_t *operations, size_t operations_count,
                                                               rlk_rp_callback_tracing_cb_t callback,
                                                               void *callback_args);
typedef rlk_rp_status_t (*rlk_rp_get_timestamp_fn)(uint64_t *ts);
typedef rlk_rp_status_t (*rlk_rp_query_agents_fn)(int version, rlk_rp_query_agents_cb_t callback, size_t agent_size,
                                                  void *user_data);
typedef rlk_rp_status_t (*rlk_rp_op_name_fn)(int kind, int32_t operation, const char **name, uint64_t *name_len);

#endif
