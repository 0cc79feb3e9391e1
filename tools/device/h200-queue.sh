#!/usr/bin/env bash
# Runs phases of the GPU machine's checks one after another, so that one lease can run longer than a
# single device call: start it detached, collect DIR (a tarball) in later calls.
#   setsid nohup bash tools/device/h200-queue.sh /tmp/gl build lab04 lab05 class ... > /dev/null 2>&1 &
# Each phase logs to DIR/PHASE/; DIR/progress gets a line per start and end (exit status, seconds).
# A polling call (each under the device's 10-minute limit, issued as soon as the last returns, so
# the machine stays held) sleeps, prints DIR/progress and packs DIR into $OUT:
#   sleep 540; cat /tmp/gl/progress; tar czf $OUT/gl.tgz --exclude='*/probe' --exclude='*/lab05_probes' \
#     --exclude='*/transpose_variants' --exclude='*/reduce_variants' --exclude='class/run/class' -C /tmp gl
# 2026-11-30: build 35 s, lab04 797 s, lab05 126 s, class 394 s, a lab 04 verdict test ~70 s each.
# Phases: build, lab04, lab05, class, verdictsNN (the verdict suite of lab NN on cuda), lab03 (the
# runs tools/device/h200-lab03.sh left), lab02 (tools/device/h200-lab02.sh: grades, calibrate, ncu,
# verdicts), probe04 (tools/probes/reduce_variants.cu: the lab 04 reference's variants vs CUB).
set -uo pipefail
dir="$1"; shift
mkdir -p "$dir"
export GPULAB_NO_INSTALL=1
for phase in "$@"; do
  mkdir -p "$dir/$phase"
  t0=$(date +%s)
  echo "$(date +%T) start $phase" >> "$dir/progress"
  case "$phase" in
    build) { nvidia-smi; cmake --preset cuda && cmake --build build/cuda -j "$(nproc)"; } > "$dir/build/build.log" 2>&1 ;;
    lab04) GPULAB_VERDICTS=0 OUT="$dir/lab04" bash tools/device/h200-lab04.sh > "$dir/lab04/summary.txt" 2>&1 ;;
    lab05) GPULAB_VERDICTS=0 OUT="$dir/lab05" bash tools/device/h200-lab05.sh > "$dir/lab05/summary.txt" 2>&1 ;;
    class) GPULAB_BACKEND=cuda bash tools/results/class-gpu.sh "$dir/class/run" 4 > "$dir/class/summary.txt" 2>&1 ;;
    verdicts0[0-9])
      build/cuda/grader/tests/grader_verdict_tests --gtest_filter="*/${phase#verdicts}_*" > "$dir/$phase/verdicts.log" 2>&1 ;;
    lab03) OUT="$dir/lab03" bash tools/device/h200-lab03-rest.sh > "$dir/lab03/summary.txt" 2>&1 ;;
    lab02) OUT="$dir/lab02" bash tools/device/h200-lab02.sh > "$dir/lab02/summary.txt" 2>&1 ;;
    probe04)
      nvcc -O3 -std=c++17 -arch=sm_90 tools/probes/reduce_variants.cu -o "$dir/probe04/reduce_variants" > "$dir/probe04/build.log" 2>&1 &&
        "$dir/probe04/reduce_variants" > "$dir/probe04/reduce_variants.tsv" 2>&1 ;;
    *) echo "unknown phase $phase" > "$dir/$phase/error" ;;
  esac
  echo "$(date +%T) end $phase exit $? $(( $(date +%s) - t0 )) s" >> "$dir/progress"
done
echo "$(date +%T) all done" >> "$dir/progress"
