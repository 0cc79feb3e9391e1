#!/usr/bin/env bash
# ./gpulab doctor on a machine without a GPU: it lists the compilers with their versions, the
# sandbox the grader will use, the GPU (none) and what each back-end lacks; choosing cuda or rocm
# there is refused at once (exit 2, no build), by doctor, by grade and by tune. Skipped (77) on a machine
# with an NVIDIA or AMD GPU.
# Usage: grader/tests/cli/doctor_test.sh REPO_ROOT
set -uo pipefail
root="$1"
fail() { echo "FAIL: $*" >&2; exit 1; }
if { command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; } || [[ -e /dev/kfd ]]; then
  echo "a GPU is here: this test is for machines without one"; exit 77
fi
gpulab() { GPULAB_NO_INSTALL=1 "$root/gpulab" "$@"; }
out="$(GPULAB_BACKEND=emu gpulab doctor 2>&1)" || fail "doctor on emu exited $?: $out"
for want in "compilers  *g[+][+] [0-9]" "sandbox  " "GPU  *none" "emu  " "cuda  *lacks: an NVIDIA GPU" "rocm  *lacks: an AMD GPU"; do
  grep -qE "^  $want" <<<"$out" || fail "doctor does not say '$want':
$out"
done
# The nvcc the emulator's grade asks: the one GPULAB_NVCC names (an absolute path), none for a
# relative name.
out="$(GPULAB_BACKEND=emu GPULAB_NVCC=/bin/true gpulab doctor 2>&1)"
grep -qE "^ +nvcc /bin/true: a hand-in a GPU build would refuse" <<<"$out" || fail "doctor does not name GPULAB_NVCC's nvcc:
$out"
out="$(GPULAB_BACKEND=emu GPULAB_NVCC=nvcc gpulab doctor 2>&1)"
grep -qE "^ +no nvcc" <<<"$out" || fail "doctor takes a relative GPULAB_NVCC:
$out"
for b in cuda rocm; do
  start=$SECONDS
  out="$(gpulab --backend "$b" doctor 2>&1)"; rc=$?
  [[ $rc -eq 2 ]] || fail "doctor --backend $b without that GPU: exit $rc, expected 2"
  grep -q "cannot grade here" <<<"$out" || fail "doctor --backend $b does not say it cannot grade: $out"
  out="$(gpulab --backend "$b" grade 01 2>&1)"; rc=$?
  [[ $rc -eq 2 ]] || fail "grade --backend $b without that GPU: exit $rc, expected 2: $out"
  grep -q "needs what this machine lacks" <<<"$out" || fail "grade --backend $b does not say what is missing: $out"
  (( SECONDS - start < 30 )) || fail "--backend $b took $((SECONDS - start)) s to refuse: it must not build first"
done
# Lab 06's tile search needs cuBLAS on a GPU: refused at once on the emulator and without the GPU.
for b in emu cuda; do
  out="$(gpulab --backend "$b" tune 2>&1)"; rc=$?
  [[ $rc -eq 2 ]] || fail "tune --backend $b without a GPU: exit $rc, expected 2: $out"
  grep -qE "cuBLAS|lacks" <<<"$out" || fail "tune --backend $b does not say why: $out"
done
echo "doctor: ok"
