#!/usr/bin/env bash
# Compiles every idiom of this folder with nvcc as the cuda back-end compiles a hand-in
# (-std=c++17 --extended-lambda, the lab's folder and common/include on the include path), for one architecture:
# each must be CUDA that nvcc accepts, whatever the emulator makes of it. Compile only: no GPU is
# needed. Usage: nvcc-compile.sh [source dir] [arch] [idiom ...]  (default: the repository, sm_90,
# every idiom). Exit status 0 when every file compiles; each failure is printed with nvcc's errors.
set -u
here="$(cd "$(dirname "$0")" && pwd)"
root="${1:-$(cd "$here/../../.." && pwd)}"
arch="${2:-sm_90}"
shift $(( $# > 2 ? 2 : $# ))
nvcc="$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)"
if [ ! -x "$nvcc" ]; then
  echo "nvcc not found: install the CUDA Toolkit (compiling needs no GPU)" >&2
  exit 77
fi
files=("$@")
if [ ${#files[@]} -eq 0 ]; then
  mapfile -t files < <(find "$root/grader/tests/idioms" -mindepth 2 -name '*.cu' | sort)
fi
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
failed=0
for f in "${files[@]}"; do
  lab="$(basename "$(dirname "$f")")"
  name="$lab/$(basename "$f")"
  if log="$("$nvcc" -std=c++17 --extended-lambda -O3 -arch="$arch" -c -I "$root/common/include" -I "$root/labs/$lab" \
               -x cu "$f" -o "$out/idiom.o" 2>&1)"; then
    echo "ok      $name"
  else
    echo "FAILED  $name"
    printf '%s\n' "$log" | sed 's/^/    /' | head -40
    failed=$((failed + 1))
  fi
done
echo "${#files[@]} idioms, $failed failed to compile with nvcc -arch=$arch"
[ "$failed" -eq 0 ]
