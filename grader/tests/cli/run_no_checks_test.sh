#!/usr/bin/env bash
# ./gpulab run --no-checks and --checks=sample: the same program gives the same output as with all
# checks (a gpulab kernel file and plain CUDA files through the <<<>>> translator; three have kernels
# that run as block loops where the twin pass is built, one of them with barriers, one of them as
# a jam copy: several threads' inner loops together); without checks
# the report says so and has no metrics, and a barrier fault is still reported (the same as a
# block loop as with the fibers); with sampled
# checks the report says how many blocks were checked, the per-request metrics of a uniform
# kernel equal the full run's, a shared-memory race in the first block and an out-of-bounds read in
# the last are still found (both are always checked); an unknown --checks value is refused.
# Usage: grader/tests/cli/run_no_checks_test.sh REPO_ROOT BUILD_DIR
# shellcheck source=grader/tests/cli/test_env.sh
source "$(dirname "${BASH_SOURCE[0]}")/test_env.sh"
# The playground targets live in the shared build tree: take the grader's build lock.
exec 9>"$build/.gpulab-build.lock"
flock 9
run() { GPULAB_NO_INSTALL=1 GPULAB_BACKEND=emu "$root/gpulab" run "$@"; }

for f in "$root/docs/examples/transpose.cu" "$root/common/emu/tests/cuda-corpus/matmul_tiled.cu" "$root/common/emu/tests/cuda-corpus/streams_two.cu" \
         "$root/common/emu/tests/cuda-corpus/matvec_cache_hints.cu"; do
  run "$f" > "$tmp/checked.txt" 2>&1; c=$?
  run --no-checks "$f" > "$tmp/plain.txt" 2>&1; p=$?
  [[ $c -eq 0 && $p -eq 0 ]] || fail "$(basename "$f"): exit $c with checks, $p without: $(tail -5 "$tmp/plain.txt")"
  # The program's own lines (before the report) are the same, but for the times it prints.
  sed '/== gpulab emulator report/,$d; / ms$/d' "$tmp/checked.txt" > "$tmp/a"
  sed '/== gpulab emulator report/,$d; / ms$/d' "$tmp/plain.txt" > "$tmp/b"
  cmp -s "$tmp/a" "$tmp/b" || fail "$(basename "$f"): output differs without checks: $(diff "$tmp/a" "$tmp/b" | head -5)"
  grep -q "checks off (--no-checks)" "$tmp/plain.txt" || fail "$(basename "$f"): the report does not say the checks were off"
  grep -q "sectors" "$tmp/plain.txt" && fail "$(basename "$f"): metrics printed without checks"
  grep -q "sectors" "$tmp/checked.txt" || fail "$(basename "$f"): no metrics with the checks"
  echo "ok: $(basename "$f"): same output with and without checks"
  # streams_two.cu's scale_shift has no barrier, warp collective or call: a block loop where the
  # twin pass is built (common/emu/passes/twin_pass.cpp); its output was compared above.
  # matmul_tiled.cu's kernel has __syncthreads: its block loop runs phase by phase.
  if [[ ("$f" == */streams_two.cu || "$f" == */matmul_tiled.cu) && -f "$build/common/emu/passes/libgpulab_twin_pass.so" ]]; then
    grep -qE "block loops: [1-9][0-9]* of [0-9]+ blocks ran as loops over their threads" "$tmp/plain.txt" \
      || fail "$(basename "$f"): no block ran as a block loop without checks: $(tail -8 "$tmp/plain.txt")"
    echo "ok: $(basename "$f"): block loops ran, with the same output"
  fi
  # matvec_cache_hints.cu's row kernel loops over a row in each thread: its jam copy runs
  # several threads' loops together (its matrix, vector and output in different allocations).
  if [[ "$f" == */matvec_cache_hints.cu && -f "$build/common/emu/passes/libgpulab_twin_pass.so" ]]; then
    grep -qE "jam copies: [1-9][0-9]* blocks ran threads' inner loops side by side" "$tmp/plain.txt" \
      || fail "$(basename "$f"): no block ran its jam copy without checks: $(tail -8 "$tmp/plain.txt")"
    echo "ok: $(basename "$f"): jam copies ran, with the same output"
  fi
done

run --no-checks "$root/grader/tests/cli/run/exit_at_barrier.cu" > "$tmp/barrier.txt" 2>&1
grep -q "returned while 16 thread(s) of its block wait at __syncthreads .*exit_at_barrier.cu:6" "$tmp/barrier.txt" \
  || fail "the barrier fault was not reported without checks: $(cat "$tmp/barrier.txt")"
grep -q "sync: unspecified launch failure" "$tmp/barrier.txt" || fail "the program did not get the launch failure"
echo "ok: a barrier fault is reported without checks"
if [[ -f "$build/common/emu/passes/libgpulab_twin_pass.so" ]]; then
  GPULAB_EMU_BLOCK_LOOPS=0 run --no-checks "$root/grader/tests/cli/run/exit_at_barrier.cu" > "$tmp/barrier-fibers.txt" 2>&1
  grep -qE "block loops: [1-9]" "$tmp/barrier.txt" || fail "exit_at_barrier.cu did not run as a block loop: $(cat "$tmp/barrier.txt")"
  cmp -s <(grep "exit-at-barrier" "$tmp/barrier.txt") <(grep "exit-at-barrier" "$tmp/barrier-fibers.txt") ||
    fail "the barrier fault is not reported the same with block loops: $(diff "$tmp/barrier.txt" "$tmp/barrier-fibers.txt")"
  echo "ok: the same barrier fault as a block loop"
fi

run --checks=all "$root/docs/examples/transpose.cu" > "$tmp/all.txt" 2>&1 || fail "transpose.cu with all checks failed"
run --checks=sample "$root/docs/examples/transpose.cu" > "$tmp/sample.txt" 2>&1 || fail "transpose.cu, sampled: $(tail -5 "$tmp/sample.txt")"
grep -qE "checks sampled \(--checks=sample\): [0-9]+ of [0-9]+ blocks" "$tmp/sample.txt" || fail "the sampled report does not say so"
# Per line: access kind, then per request (ideal) and efficiency (the request counts differ).
cols() { grep -E "^  transpose\.cu:[0-9]+ " "$1" | awk '{print $1, $2, $3, $5, $6, $7, $8, $9}'; }
[[ -n "$(cols "$tmp/all.txt")" ]] || fail "no metrics lines in the full run"
[[ "$(cols "$tmp/all.txt")" == "$(cols "$tmp/sample.txt")" ]] ||
  fail "sampled per-request metrics differ: $(diff <(cols "$tmp/all.txt") <(cols "$tmp/sample.txt"))"
echo "ok: sampled checks: the same per-request metrics on a uniform kernel"
for wk in 1 8; do
  GPULAB_EMU_WORKERS=$wk GPULAB_METRICS_TSV="$tmp/sampled-$wk.tsv" run --checks=sample "$root/docs/examples/transpose.cu" > /dev/null 2>&1
done
cmp -s "$tmp/sampled-1.tsv" "$tmp/sampled-8.tsv" || fail "sampled metrics differ between 1 and 8 workers"
echo "ok: sampled checks: the same blocks and metrics for 1 and 8 workers"
run --checks=sample "$root/grader/tests/cli/run/race_in_first_block.cu" > "$tmp/race.txt" 2>&1
grep -q "\[race\]" "$tmp/race.txt" || fail "the race was not found with sampled checks: $(cat "$tmp/race.txt")"
echo "ok: sampled checks still find a race in the first block"
run --checks=sample "$root/grader/tests/cli/run/oob_in_last_block.cu" > "$tmp/oob.txt" 2>&1
grep -q "\[out-of-bounds\].*oob_in_last_block.cu:8" "$tmp/oob.txt" || fail "the read past the end was not stopped with sampled checks: $(cat "$tmp/oob.txt")"
grep -q "the others run as with --no-checks" "$tmp/oob.txt" || fail "the sampled report does not say the other blocks run unchecked"
echo "ok: sampled checks stop an out-of-bounds read in the last block, and say the others run unchecked"

run --checks=bogus "$root/docs/examples/transpose.cu" > "$tmp/bogus.txt" 2>&1 && fail "--checks=bogus was accepted"
grep -q "takes all, sample or none" "$tmp/bogus.txt" || fail "--checks=bogus: $(cat "$tmp/bogus.txt")"
echo "ok: an unknown --checks value is refused with a reason"
