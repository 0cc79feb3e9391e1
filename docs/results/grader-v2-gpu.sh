#!/usr/bin/env bash
# Grader v2 on the GPU machine (repository root, cuda preset): the references three times in a
# row, the stubs, the grader's unit tests (sandbox, vetting, reports), the verdict suite and the
# adversarial suite on cuda. Logs go to $OUT (or ./out).
# Usage: bash docs/results/grader-v2-gpu.sh [all|grade|suites|adversarial]   (grade: build + grading
# + unit tests; suites: the verdict and adversarial suites; adversarial: that suite alone)
set -uo pipefail
what="${1:-all}"
out="${OUT:-$PWD/out}"
export GPULAB_NO_INSTALL=1   # no network there: never try apt-get
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$out/gpu.txt"
t0=$(date +%s)
cmake --preset cuda > "$out/configure.log" 2>&1 && cmake --build build/cuda -j "$(nproc)" > "$out/build.log" 2>&1 \
  || { grep -E "error" "$out/build.log" | head -30; exit 1; }
echo "built in $(( $(date +%s) - t0 )) s"
if [[ "$what" != suites && "$what" != adversarial ]]; then
summary() { python3 -c '
import json,sys
r=json.load(open(sys.argv[1]))
for l in r["labs"]:
    perf=[c for c in l["checks"] if c["kind"]=="performance"]
    print(l["lab"], l["impl"], "%.2f/%.2f" % (l["score"], l["max_score"]), "isolation=" + str(l.get("isolation")),
          "; ".join("%s %s %s" % (c["name"], "pass" if c["passed"] else "FAIL", c.get("value")) for c in perf))
' "$1"; }
for run in 1 2 3; do
  for lab in 01 06; do
    ./gpulab grade "$lab" --impl solution --json "$out/ref$lab-$run.json" > "$out/ref$lab-$run.txt" 2>&1
    echo "run $run: grade $lab --impl solution: exit $? :: $(summary "$out/ref$lab-$run.json")"
  done
done
for lab in 01 06; do
  ./gpulab grade "$lab" --json "$out/stub$lab.json" > "$out/stub$lab.txt" 2>&1
  echo "grade $lab (stub): exit $? :: $(summary "$out/stub$lab.json")"
done
echo "after grading: $(( $(date +%s) - t0 )) s"
ctest --test-dir build/cuda -L grader -E "Verdict|Adversarial|new_lab" -j 8 > "$out/unit.log" 2>&1
echo "grader unit tests (sandbox, vetting, reports): exit $? :: $(grep -E 'tests passed|tests failed' "$out/unit.log")"
grep -E "\*\*\*Failed|Timeout" "$out/unit.log" | head -20
fi
[[ "$what" == grade ]] && exit 0
if [[ "$what" != adversarial ]]; then
# Verdicts: performance-sensitive cases (solution/student) ran above; the rest in parallel.
timeout 240 ctest --test-dir build/cuda -R "Submissions/Verdict" -E "solution|student" -j 8 --output-on-failure \
  > "$out/verdicts.log" 2>&1
echo "verdict suite: exit $? :: $(grep -E 'tests passed|tests failed' "$out/verdicts.log")"
grep -E "\*\*\*Failed|Timeout" "$out/verdicts.log" | head -20
fi
timeout 420 ctest --test-dir build/cuda -L adversarial -j 8 --timeout 150 --output-on-failure > "$out/adversarial.log" 2>&1
echo "adversarial suite: exit $? :: $(grep -E 'tests passed|tests failed' "$out/adversarial.log")"
grep -E "\*\*\*Failed|Timeout" "$out/adversarial.log" | head -30
echo "total $(( $(date +%s) - t0 )) s"
