// The few ROCm SMI declarations rlktop uses, so that building needs no
// ROCm package: values and layouts as in rocm_smi.h (librocm-smi-dev
// 5.2.3 and ROCm 6.x). TestDeclsMatchHeader compiles a probe against the
// real header, when installed, and compares.
#ifndef RLK_RSMI_DECLS_H
#define RLK_RSMI_DECLS_H
#include <stdint.h>

typedef int rsmi_status_t;
#define RSMI_STATUS_SUCCESS 0
#define RSMI_STATUS_NOT_SUPPORTED 2

typedef int rsmi_memory_type_t;
#define RSMI_MEM_TYPE_VRAM 0

typedef int rsmi_clk_type_t;
#define RSMI_CLK_TYPE_SYS 0
#define RSMI_CLK_TYPE_MEM 4

typedef int rsmi_temperature_metric_t;
#define RSMI_TEMP_CURRENT 0
#define RSMI_TEMP_TYPE_EDGE 0
#define RSMI_TEMP_TYPE_JUNCTION 1

typedef int rsmi_sw_component_t;
#define RSMI_SW_COMP_DRIVER 0

typedef struct {
	uint32_t major;
	uint32_t minor;
	uint32_t patch;
	const char *build;
} rsmi_version_t;

typedef struct {
	uint32_t process_id;
	uint32_t pasid;
	uint64_t vram_usage;
	uint64_t sdma_usage;
	uint32_t cu_occupancy;
} rsmi_process_info_t;

#endif
