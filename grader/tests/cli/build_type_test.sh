#!/usr/bin/env bash
# A grade must not depend on the build type of the emulator tree. A Debug tree (-O0) once failed
# every hand-in of every lab: the kernel file's inline header functions (dim3's constructor) came
# out of -O0 as definitions of the hand-in's own, which the vetting refuses, and the performance
# model would have counted unoptimised code. Kernel files are compiled at -O2 whatever the build
# type (cmake/GpulabBackend.cmake, gpulab_kernel_sources).
#
#   bash grader/tests/cli/build_type_test.sh [REFERENCE_TREE] [WORK_DIR]
#
# Configures and builds a Debug emulator tree in WORK_DIR (default: a temporary directory; the
# grader and lab 01 only, about 30 s on 2 cores), grades lab 01's stub there and in
# REFERENCE_TREE (default build/emu, built) with one seed, and compares the two reports check by
# check: the same verdict, points and value. Exit status 0 when they agree.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
ref="${1:-$root/build/emu}"
work="${2:-$(mktemp -d)}"
mkdir -p "$work"
seed=20261204
stub="$root/grader/tests/submissions/01-coalescing/stub/row_sum.cu"  # the stub as shipped

if [[ ! -x $ref/grader/gpulab-grade ]]; then
  echo "build_type_test: $ref/grader/gpulab-grade is not built (build the emu tree first: ./gpulab grade 01)" >&2
  exit 2
fi
cmake --preset emu -S "$root" -B "$work/debug" -DCMAKE_BUILD_TYPE=Debug > "$work/configure.log" 2>&1 ||
  { cat "$work/configure.log" >&2; exit 1; }
cmake --build "$work/debug" --target gpulab-grade lab-01-coalescing-solution lab-01-coalescing-stub \
  > "$work/build.log" 2>&1 || { tail -30 "$work/build.log" >&2; exit 1; }

for tree in debug reference; do
  dir="$work/debug"; [[ $tree == reference ]] && dir="$ref"
  "$dir/grader/gpulab-grade" grade 01 --submission "$stub" --seed "$seed" --json "$work/$tree.json" \
    > "$work/$tree.txt" 2>&1 || true  # the stub fails its speed checks: a non-zero exit is expected
done

python3 - "$work/debug.json" "$work/reference.json" <<'EOF'
import json, sys
debug, reference = (json.load(open(f))["labs"][0] for f in sys.argv[1:3])
bad = 0
if len(debug["checks"]) != len(reference["checks"]) or not reference["checks"]:
    print(f"build_type_test: {len(debug['checks'])} checks in the Debug tree's report, "
          f"{len(reference['checks'])} in the reference tree's")
    sys.exit(1)
for d, r in zip(debug["checks"], reference["checks"]):
    same = all(d.get(k) == r.get(k) for k in ("name", "passed", "points", "value"))
    if not same:
        bad += 1
        print(f"build_type_test: {r['name']}: reference tree {r.get('passed')} {r.get('value')} "
              f"({r.get('points')} points), Debug tree {d.get('passed')} {d.get('value')} "
              f"({d.get('points')} points): {d.get('message', '')[:300]}")
print(f"build_type_test: {len(reference['checks']) - bad} of {len(reference['checks'])} checks the same "
      f"in a Debug tree and in the reference tree (lab 01's stub: {debug['score']} / {reference['score']} points)")
sys.exit(1 if bad else 0)
EOF
