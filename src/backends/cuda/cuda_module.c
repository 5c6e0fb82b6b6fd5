/* The GPU module's one exported function: the table of the CUDA side's
 * functions (cuda_device.cu, the engines' kernels, dfa_cuda.cu), for the library's loader (cuda_module.h). */
#include "backends/cuda/cuda_module.h"

static const sm_cuda_module module = {
    .abi = SM_CUDA_MODULE_ABI,
    .size = sizeof(sm_cuda_module),
    .device_count = sm_cuda_device_count,
    .prepare = sm_cuda_prepare,
    .reserve = sm_cuda_reserve,
    .device_name = sm_cuda_device_name,
    .tables_open = sm_cuda_tables_open,
    .tables_close = sm_cuda_tables_close,
    .tables_chunk = sm_cuda_tables_chunk,
    .slot_open = sm_cuda_slot_open,
    .slot_close = sm_cuda_slot_close,
    .slot_text = sm_cuda_slot_text,
    .slot_chunks = sm_cuda_slot_chunks,
    .slot_launch = sm_cuda_slot_launch,
    .slot_wait = sm_cuda_slot_wait,
    .slot_time_scan = sm_cuda_slot_time_scan,
    .dfa_device = sm_dfa_cuda_device,
    .dfa_open = sm_dfa_cuda_open,
    .dfa_close = sm_dfa_cuda_close,
    .dfa_text = sm_dfa_cuda_text,
    .dfa_chunks = sm_dfa_cuda_chunks,
    .dfa_segments = sm_dfa_cuda_segments,
    .dfa_launch = sm_dfa_cuda_launch,
    .dfa_wait = sm_dfa_cuda_wait,
    .dfa_time = sm_dfa_cuda_time,
    .section_build = sm_cuda_section_build,
    .inflate_open = sm_cuda_inflate_open,
    .inflate_run = sm_cuda_inflate_run,
    .inflate_close = sm_cuda_inflate_close,
};

__attribute__((visibility("default"))) const sm_cuda_module *sm_cuda_module_entry(void);
const sm_cuda_module *sm_cuda_module_entry(void) { return &module; }
