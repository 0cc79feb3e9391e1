#!/usr/bin/env bash
# The launcher's command line: `./gpulab --help` is the whole text (it ends with a full sentence
# and says what run's exit statuses mean); `./gpulab run` on a missing file says so (exit 2);
# a kernel that spins forever is stopped at --timeout with a message (exit 124), after lines of
# progress (every third of a limit under 45 s); a program whose sanitizer finds something exits 3; each launch's row of the
# report names its kernel.
# Usage: grader/tests/cli/run_cli_test.sh REPO_ROOT BUILD_DIR
# shellcheck source=grader/tests/cli/test_env.sh
source "$(dirname "${BASH_SOURCE[0]}")/test_env.sh"
exec 9>"$build/.gpulab-build.lock"  # the playground targets live in the shared build tree
flock 9
gpulab() { GPULAB_NO_INSTALL=1 GPULAB_BACKEND=emu "$root/gpulab" "$@"; }

gpulab --help > "$tmp/help.txt" 2>&1 || fail "--help exited $?"
last="$(grep -v '^\s*$' "$tmp/help.txt" | tail -1)"
[[ "$last" == *. ]] || fail "--help stops mid-sentence: '$last'"
grep -q "Exit status" "$tmp/help.txt" || fail "--help does not document run's exit statuses"
grep -q -- "--timeout" "$tmp/help.txt" || fail "--help does not mention --timeout"

gpulab run "$tmp/nosuch.cu" > "$tmp/missing.txt" 2>&1; rc=$?
[[ $rc -eq 2 ]] || fail "a missing file: exit $rc, expected 2"
grep -q "nosuch.cu: no such file" "$tmp/missing.txt" || fail "a missing file is not named: $(cat "$tmp/missing.txt")"

cat > "$tmp/spin.cu" <<'CU'
#include <cstdio>
__global__ void spin(volatile int* flag) {
  while (*flag == 0) {
  }
}
int main() {
  int* flag = nullptr;
  cudaMalloc(&flag, sizeof(int));
  cudaMemset(flag, 0, sizeof(int));
  spin<<<1, 1>>>(flag);
  cudaDeviceSynchronize();
  std::printf("never printed\n");
  return 0;
}
CU
gpulab run --no-checks "$tmp/spin.cu" --timeout 1 > /dev/null 2>&1  # builds it: not timed below
start=$SECONDS
gpulab run --no-checks --timeout 6 "$tmp/spin.cu" > "$tmp/spin.txt" 2>&1; rc=$?
took=$((SECONDS - start))
[[ $rc -eq 124 ]] || fail "a spinning kernel: exit $rc, expected 124: $(tail -5 "$tmp/spin.txt")"
(( took < 40 )) || fail "a spinning kernel with --timeout 6 ran $took s"
grep -q "stopped after 6 s" "$tmp/spin.txt" || fail "no time-limit message: $(tail -5 "$tmp/spin.txt")"
grep -q "still running after .*stopped at 6 s" "$tmp/spin.txt" || fail "no sign of life during 6 s: $(cat "$tmp/spin.txt")"

cat > "$tmp/host_reads.cu" <<'CU'
#include <cstdio>
__global__ void fill(float* p) { p[threadIdx.x] = 1.0f; }
int main() {
  float* d = nullptr;
  cudaMalloc(&d, 32 * sizeof(float));
  fill<<<1, 32>>>(d);
  cudaDeviceSynchronize();
  std::printf("%f\n", d[0]);  // host code reading device memory: a finding
  return 0;
}
CU
gpulab run "$tmp/host_reads.cu" > "$tmp/host.txt" 2>&1; rc=$?
[[ $rc -eq 3 ]] || fail "a sanitizer finding: exit $rc, expected 3: $(tail -5 "$tmp/host.txt")"
grep -q "host-access.*host_reads.cu:8" "$tmp/host.txt" || fail "the host access is not reported at its line: $(tail -5 "$tmp/host.txt")"
grep -q "^launch 1: fill launched at .*host_reads.cu:6" "$tmp/host.txt" || fail "the launch row does not name the kernel: $(grep launch "$tmp/host.txt")"
echo "run_cli: ok"
