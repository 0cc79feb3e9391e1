#!/usr/bin/env bash
# On an NVIDIA GPU: profiles the validation kernels with Nsight Compute and writes the metrics the
# emulator's are compared with. Usage: common/emu/validation/ncu.sh BUILD_DIR OUTPUT.csv
set -euo pipefail
build="${1:?build dir of the cuda preset}"
out="${2:?output csv}"
metrics=l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum
metrics+=,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum
metrics+=,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,smsp__sass_inst_executed_op_shared_ld.sum
metrics+=,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,smsp__sass_inst_executed_op_shared_st.sum
ncu --clock-control none --metrics "$metrics" --csv --print-units base \
  "$build/common/emu/validation/gpulab-validation-kernels" > "$out"
