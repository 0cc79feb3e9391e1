#!/usr/bin/env bash
# Sanitizer and portability checks of GPU grades, on the GPU machine (repository root): builds the
# cuda tree and the emulator with g++ (build/emu-gcc: the portability check's emulator where there
# is no clang), grades the fault cases (a race, a barrier in divergent code, an out-of-bounds write,
# a shuffle written for 32 lanes; lab 06's race) in parallel, then the references three times in a
# row. Logs and JSON reports go to $OUT (or ./out), packed in one archive.
# Usage: bash docs/results/sanitizer-portability-gpu.sh [all|cases|refs|verdicts]
set -uo pipefail
what="${1:-all}"
out="${OUT:-$PWD/out}"
export GPULAB_NO_INSTALL=1 GPULAB_KEEP_HANDINS=1
mkdir -p "$out/logs"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$out/gpu.txt"
t0=$(date +%s)
jobs=$(nproc)
{ cmake --preset cuda && cmake --build build/cuda -j "$jobs"; } > "$out/logs/build-cuda.log" 2>&1 \
  || { grep -E "error" "$out/logs/build-cuda.log" | head -30; exit 1; }
{ cmake --preset emu-gcc && cmake --build build/emu-gcc -j "$jobs" --target gpulab-grade lab-01-coalescing-solution \
    lab-06-sgemm-solution lab-01-coalescing-checks lab-06-sgemm-checks; } > "$out/logs/build-emu-gcc.log" 2>&1 \
  || { grep -E "error" "$out/logs/build-emu-gcc.log" | head -30; exit 1; }
echo "built (cuda + emu-gcc) in $(( $(date +%s) - t0 )) s"
grade=build/cuda/grader/gpulab-grade
summary() { python3 -c '
import json,sys
r=json.load(open(sys.argv[1]))
for l in r["labs"]:
    print(" ", l["lab"], l["impl"], "%.2f/%.2f" % (l["score"], l["max_score"]))
    for c in l["checks"]:
        if not c["passed"] or c["kind"] in ("performance", "portability", "sanitizer"):
            print("    %-4s %-46s %s" % ("pass" if c["passed"] else "FAIL", c["name"], c.get("value")))
            if not c["passed"]:
                for line in c["message"].splitlines()[:(2 if sys.argv[2] == "brief" else 4)]: print("         " + line[:220])
' "$1" "${2:-some}"; }
if [[ "$what" == all || "$what" == cases ]]; then
  for c in 01-coalescing/race_missing_syncthreads 01-coalescing/divergent_syncthreads 01-coalescing/out_of_bounds_write \
           01-coalescing/hard_coded_warp_size 06-sgemm/race_in_shared_tiles; do
    name=$(basename "$c")
    ( timeout 400 "$grade" grade "${c%%-*}" --submission "grader/tests/submissions/$c.cu" --json "$out/logs/case-$name.json" \
        > "$out/logs/case-$name.txt" 2>&1; echo "$?" > "$out/logs/case-$name.rc" ) &
  done
  wait
  for f in "$out"/logs/case-*.json; do
    echo "== $(basename "$f" .json) (exit $(cat "$out/logs/$(basename "$f" .json).rc"))"
    summary "$f"
  done
  echo "after the cases: $(( $(date +%s) - t0 )) s"
fi
if [[ "$what" == all || "$what" == refs ]]; then
  for run in $(seq "${RUNS_FROM:-1}" "${RUNS_TO:-3}"); do
    for lab in 01 06; do
      "$grade" grade "$lab" --impl solution --json "$out/logs/ref$lab-$run.json" > "$out/logs/ref$lab-$run.txt" 2>&1
      echo "run $run: grade $lab --impl solution: exit $?"
      summary "$out/logs/ref$lab-$run.json" brief
    done
  done
  echo "after the references: $(( $(date +%s) - t0 )) s"
fi
if [[ "$what" == verdicts ]]; then
  timeout 500 ctest --test-dir build/cuda -R "Submissions/Verdict" -j 6 --timeout 400 --output-on-failure \
    > "$out/logs/verdicts.log" 2>&1
  echo "verdict suite: exit $? :: $(grep -E 'tests passed|tests failed' "$out/logs/verdicts.log")"
  grep -E "\*\*\*Failed|Timeout" "$out/logs/verdicts.log" | head -20
fi
# compute-sanitizer's own reports, kept by GPULAB_KEEP_HANDINS
find build/cuda/handins -name 'sanitizer-*.log' -o -name portability.json 2>/dev/null | head -200 \
  | tar czf "$out/logs/handins.tgz" -T - 2>/dev/null
tar czf "$out/logs.tgz" -C "$out" logs && rm -rf "$out/logs"
echo "total $(( $(date +%s) - t0 )) s"
