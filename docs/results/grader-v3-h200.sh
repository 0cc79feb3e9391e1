#!/usr/bin/env bash
# Grader v3 on the GPU machine (repository root): builds the cuda preset and runs, in a detached
# queue that survives the command that starts it, the references of every lab, the
# legitimate-idioms corpus, the adversarial suite, the verdict suite and the grader's unit tests,
# all on cuda. Results page: docs/results/grader-v3-h200.md.
#
# Usage: bash docs/results/grader-v3-h200.sh start  [LOGDIR]   # starts the queue, returns at once
#        bash docs/results/grader-v3-h200.sh status [LOGDIR]   # the queue's progress so far
#        bash docs/results/grader-v3-h200.sh wait SECONDS [LOGDIR]   # waits for it (a machine that
#                                                       # goes idle is given back: keep a call open)
#        bash docs/results/grader-v3-h200.sh run    [LOGDIR]   # the queue itself, in the foreground
# LOGDIR defaults to build/grader-v3-logs.
set -uo pipefail
what="${1:-run}"
if [ "$what" = wait ]; then logdir="${3:-}"; else logdir="${2:-}"; fi
logs="$(realpath -m "${logdir:-build/grader-v3-logs}")"
here="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$here"
export GPULAB_NO_INSTALL=1  # no network there: never try apt-get
mkdir -p "$logs"
# The queue runs from a private copy of the tree (SRC, default /tmp/gpulab-grader-v3): the
# device tool copies the working tree again at each call, which must not touch a running queue.
src="${SRC:-/tmp/gpulab-grader-v3}"

case "$what" in
  start)
    setsid nohup bash "$0" run "$logs" > "$logs/queue.log" 2>&1 < /dev/null &
    echo "queue started (pid $!), logs in $logs"
    exit 0 ;;
  status)
    cat "$logs/queue.log" "$logs"/lane*.log 2>/dev/null
    exit 0 ;;
  wait)  # waits up to $2 seconds for the queue to end, printing progress; LOGDIR is $3
    end=$(( $(date +%s) + ${2:-540} ))
    while [ "$(date +%s)" -lt "$end" ] && ! grep -q "done in" "$logs/queue.log" 2>/dev/null; do sleep 15; done
    cat "$logs/queue.log" "$logs"/lane*.log 2>/dev/null
    for f in "$logs"/*.log; do echo "$(basename "$f"): $(grep -c "Test *#" "$f") tests ended"; done
    exit 0 ;;
esac

stamp() { echo "[$(date +%H:%M:%S)] $*"; }
summary() { python3 -c '
import json,sys
try:
    r=json.load(open(sys.argv[1]))
except Exception as e:
    print("no report:", e); sys.exit(0)
for l in r["labs"]:
    bad=[c["name"] for c in l["checks"] if not c["passed"]]
    perf=["%s=%s" % (c["name"].split(".")[-1], c.get("value")) for c in l["checks"] if c["kind"]=="performance"]
    print(l["lab"], "%.2f/%.2f" % (l["score"], l["max_score"]), "failed:", ",".join(bad) or "none", "|", " ".join(perf))
' "$1"; }

mkdir -p "$src" && tar --exclude=./build --exclude=./.git -cf - . | tar -xf - -C "$src" && cd "$src"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > "$logs/gpu.txt"
stamp "GPU: $(cat "$logs/gpu.txt")"
t0=$(date +%s)
if ! { cmake --preset cuda > "$logs/configure.log" 2>&1 && cmake --build build/cuda -j "$(nproc)" > "$logs/build.log" 2>&1; }; then
  stamp "build failed"; grep -E "error" "$logs/build.log" | head -30; exit 1
fi
stamp "built in $(( $(date +%s) - t0 )) s"
# The emulator every GPU grade runs beside it (where the work happened, portability), as
# ./gpulab grade builds it: g++ there (no clang).
if ! { cmake --preset emu-gcc > "$logs/configure-emu.log" 2>&1 &&
       cmake --build build/emu-gcc -j "$(nproc)" --target gpulab-grade > "$logs/build-emu.log" 2>&1; }; then
  stamp "the emulator (emu-gcc) did not build"; grep -E "error" "$logs/build-emu.log" | head -30; exit 1
fi
stamp "emulator built after $(( $(date +%s) - t0 )) s"

# Three lanes at once; every grade takes the GPU lock (build/cuda/.gpulab-gpu.lock) for its
# timed runs and sanitizer runs, so no timing shares the GPU: (1) the adversarial cases named by
# FIRST (the timing and forged-record defences), then the references; (2) the verdict suite;
# (3) the legitimate-idioms corpus (less those matching IDIOMS_DONE, if set), then the rest of
# the adversarial suite.
first="${FIRST:-forges_device_name_in_report|timed_work_on_own_stream|l2_persisting_window|sum_cached_by_size|timed_calls_reuse_cached_results|forges_measured_call_then_aborts|forges_runner_record_at_exit}"
(
  ctest --test-dir build/cuda -L adversarial -R "$first" -j 3 --timeout 900 --output-on-failure > "$logs/adversarial-first.log" 2>&1
  stamp "adversarial (timing, forged records): exit $? :: $(grep -E 'tests passed|tests failed' "$logs/adversarial-first.log")"
  grep -E "\*\*\*Failed|Timeout|Passed|Skipped" "$logs/adversarial-first.log" | head -20
  for lab in 01 02 03 04 05 06; do
    ./gpulab grade "$lab" --impl solution --json "$logs/ref$lab.json" > "$logs/ref$lab.txt" 2>&1
    stamp "reference $lab: exit $? :: $(summary "$logs/ref$lab.json")"
  done
) > "$logs/lane1.log" 2>&1 &
lane1=$!
(
  ctest --test-dir build/cuda -R "Submissions/Verdict" -j 3 --timeout 900 --output-on-failure > "$logs/verdicts.log" 2>&1
  stamp "verdict suite: exit $? :: $(grep -E 'tests passed|tests failed' "$logs/verdicts.log")"
  grep -E "\*\*\*Failed|Timeout" "$logs/verdicts.log" | head -20
) > "$logs/lane2.log" 2>&1 &
lane2=$!
(
  ctest --test-dir build/cuda -L idioms ${IDIOMS_DONE:+-E "$IDIOMS_DONE"} -j 3 --timeout 900 --output-on-failure > "$logs/idioms.log" 2>&1
  stamp "idioms: exit $? :: $(grep -E 'tests passed|tests failed' "$logs/idioms.log")"
  grep -E "\*\*\*Failed|Timeout" "$logs/idioms.log" | head -20
  ctest --test-dir build/cuda -L adversarial -E "$first" -j 3 --timeout 900 --output-on-failure > "$logs/adversarial.log" 2>&1
  stamp "adversarial suite (the rest): exit $? :: $(grep -E 'tests passed|tests failed' "$logs/adversarial.log")"
  grep -E "\*\*\*Failed|Timeout" "$logs/adversarial.log" | head -40
) > "$logs/lane3.log" 2>&1 &
lane3=$!
wait $lane1 $lane2 $lane3
cat "$logs/lane1.log" "$logs/lane2.log" "$logs/lane3.log"
stamp "done in $(( $(date +%s) - t0 )) s"
