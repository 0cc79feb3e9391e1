#!/usr/bin/env bash
# Builds lab 06's CUDA programs (sgemm_ladder, sgemm_tune, sgemm_steps_test) with nvcc alone,
# without the project's CMake: what the H200 numbers in docs/results/sgemm-h200.md were
# measured with. Usage: solutions/06-sgemm/bench/build_nvcc.sh [OUT_DIR] (default build/sgemm-h200)
# The project's own build does the same: cmake --preset cuda; targets sgemm_ladder, sgemm_tune.
set -euo pipefail
cd "$(dirname "$0")/../../.."
out=${1:-build/sgemm-h200}
mkdir -p "$out/obj"
flags=(-O3 -std=c++17 -arch=sm_90 -Icommon/include -Ilabs/06-sgemm -Isolutions/06-sgemm
       -Isolutions/06-sgemm/steps -Isolutions/06-sgemm/bench)
srcs=(common/src/host_gpu.cpp common/src/launch_config.cpp solutions/06-sgemm/sgemm.cu
      solutions/06-sgemm/steps/*.cu solutions/06-sgemm/bench/sgemm_ladder.cu
      solutions/06-sgemm/bench/sgemm_tune.cu solutions/06-sgemm/tests/sgemm_steps_test.cu)
pids=()
for src in "${srcs[@]}"; do
  # common/src/*.cpp include gpulab/gpu.hpp, so they are compiled as CUDA too (-x cu).
  nvcc "${flags[@]}" -x cu -c "$src" -o "$out/obj/$(basename "$src").o" & pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
o="$out/obj"
common=("$o/host_gpu.cpp.o" "$o/launch_config.cpp.o")
steps=("$o"/[01][0-9]_*.cu.o "$o/sgemm.cu.o")
nvcc -arch=sm_90 "${common[@]}" "${steps[@]}" "$o/sgemm_ladder.cu.o" -lcublas -o "$out/sgemm_ladder"
nvcc -arch=sm_90 "${common[@]}" "$o/sgemm_tune.cu.o" -lcublas -o "$out/sgemm_tune"
nvcc -arch=sm_90 "${common[@]}" "${steps[@]}" "$o/sgemm_steps_test.cu.o" -o "$out/sgemm_steps_test"
echo "built $out/sgemm_ladder $out/sgemm_tune $out/sgemm_steps_test"
