// Prints the ROCm SMI constants and layouts rlktop relies on, from the real
// rocm_smi.h; TestDeclsMatchHeader compares them with rsmi_decls.h.
#include <stdio.h>
#include <stddef.h>
#include <rocm_smi/rocm_smi.h>
int main(){printf("SUCCESS=%d NOT_SUPPORTED=%d CLK_SYS=%d CLK_MEM=%d TEMP_EDGE=%d TEMP_JUNCTION=%d TEMP_CURRENT=%d MEM_VRAM=%d SW_DRIVER=%d PROC_SIZE=%zu PROC_VRAM_OFF=%zu VER_SIZE=%zu\n",
RSMI_STATUS_SUCCESS,RSMI_STATUS_NOT_SUPPORTED,RSMI_CLK_TYPE_SYS,RSMI_CLK_TYPE_MEM,RSMI_TEMP_TYPE_EDGE,RSMI_TEMP_TYPE_JUNCTION,RSMI_TEMP_CURRENT,RSMI_MEM_TYPE_VRAM,RSMI_SW_COMP_DRIVER,sizeof(rsmi_process_info_t),offsetof(rsmi_process_info_t,vram_usage),sizeof(rsmi_version_t));}
