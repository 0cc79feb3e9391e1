#!/usr/bin/env bash
# The emulator's grade asks nvcc whether a GPU build would compile the hand-in, and blames the
# hand-in only where that nvcc compiles the lab's reference. With an nvcc that compiles nothing
# (GPULAB_NVCC names a stand-in that fails every file: a toolkit too old for the flags), a hand-in
# that clang alone accepts is graded as without nvcc (full marks here), and the report says the
# check was not made and why; a GPULAB_NVCC that is not an absolute path to an executable is no
# nvcc. Where a real nvcc is installed, the same hand-in gets nothing, with nvcc's error at the
# hand-in's own file:line (the adversarial suite's std_min_in_kernel_only_clang_compiles holds the
# rest).
# Usage: gpu_compiler_test.sh SOURCE_DIR BUILD_DIR
source "$(dirname "$0")/test_env.sh"
grader="$build/grader/gpulab-grade"
[[ -x "$grader" ]] || fail "no grader at $build"
handin="$root/grader/tests/adversarial/03-bank-conflicts/std_min_in_kernel_only_clang_compiles.cu"
# The stand-in must be visible inside the grader's sandbox: the build tree is.
fake="$(cd "$build" && pwd)/grader/tests/nvcc-that-compiles-nothing-$$"
mkdir -p "$(dirname "$fake")"
printf '#!/bin/sh\necho "nvcc fatal: unsupported option" >&2\nexit 1\n' > "$fake"
chmod +x "$fake"
trap 'rm -rf "$tmp" "$fake"' EXIT

grade() {  # grade NAME [env...]: lab 03 of the hand-in, its JSON at $tmp/NAME.json
  local name="$1"; shift
  env "$@" "$grader" grade 03 --submission "$handin" --warp-size 32 --seed 7 --json "$tmp/$name.json" \
    > "$tmp/$name.log" 2>&1
}
field() {  # field NAME EXPR: a Python expression on the lab's report `l`
  python3 -c "import json,sys; l=json.load(open(sys.argv[1]))['labs'][0]; print($2)" "$tmp/$1.json"
}

grade unusable GPULAB_NVCC="$fake"
[[ "$(field unusable "l['score'] == l['max_score']")" == True ]] ||
  fail "with an nvcc that compiles nothing, the hand-in lost points: $(field unusable "l['score']") ($tmp/unusable.log)"
grep -q "does not compile the lab's reference" <<< "$(field unusable "l['info'].get('gpu_compiler', '')")" ||
  fail "the report does not say nvcc was not asked: $(field unusable "l['info']")"
echo "ok: an nvcc that compiles not even the reference blames no hand-in"

grade relative GPULAB_NVCC="nvcc"
grep -q "no nvcc" <<< "$(field relative "l['info'].get('gpu_compiler', '')")" ||
  fail "GPULAB_NVCC=nvcc (not an absolute path) was used: $(field relative "l['info']")"
echo "ok: a relative GPULAB_NVCC is no nvcc"

real="$(command -v nvcc || true)"
[[ -z "$real" && -x /usr/local/cuda/bin/nvcc ]] && real=/usr/local/cuda/bin/nvcc
if [[ -n "$real" ]]; then
  grade refused GPULAB_NVCC="$real"
  [[ "$(field refused "l['score']")" == 0 || "$(field refused "l['score']")" == 0.0 ]] ||
    fail "nvcc refuses the hand-in, yet it scored $(field refused "l['score']")"
  grep -q "/std_min_in_kernel_only_clang_compiles.cu([0-9]*): error" <<< "$(field refused "l['checks'][0]['message']")" ||
    fail "nvcc's error does not name the hand-in's file:line: $(field refused "l['checks'][0]['message']")"
  echo "ok: nvcc ($real) refuses the hand-in: 0 points, its error at the hand-in's file:line"
else
  echo "no nvcc here: the refusal itself is not checked"
fi
