#!/usr/bin/env bash
# Compares the emulator's memory metrics with Nsight Compute's for the validation kernels.
#   1. on a GPU machine:   cmake --preset cuda && cmake --build build/cuda &&
#                          common/emu/validation/ncu.sh build/cuda ncu.csv
#   2. here (emu build):   common/emu/validation/validate.sh ncu.csv
# Prints, per launch and access, the comparison docs/emulator-metrics.md condenses; exits non-zero if any row differs by over 10%.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
ncu_csv="${1:?the ncu csv from common/emu/validation/ncu.sh}"
cmake --build "$root/build/emu" --target gpulab-validation-kernels >/dev/null
tsv="$(mktemp)"
labels="$(mktemp)"
GPULAB_METRICS_TSV="$tsv" "$root/build/emu/common/emu/validation/gpulab-validation-kernels" > "$labels"
python3 "$root/common/emu/validation/compare.py" "$tsv" "$ncu_csv" --labels "$labels" "${@:2}"
