#!/usr/bin/env bash
# `./gpulab new-lab` on a copy of the repository: it must touch only the new lab's folders and the
# README's lab table, and the skeleton must build, pass its correctness checks (reference and
# stub) and fail its performance check with the stub. Usage: new_lab_test.sh SOURCE_DIR BACKEND
set -euo pipefail
src="$1"
backend="${2:-emu}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# A copy of the working tree as it is (tracked and new files), made into a fresh repository.
(cd "$src" && git ls-files -co --exclude-standard -z) | (cd "$src" && xargs -0 cp --parents -t "$work" 2>/dev/null) || true
cd "$work"
git init -q && git add -A && git -c user.email=t@t -c user.name=t commit -qm base
./gpulab new-lab 42-vector-scale "Vector scale" >/dev/null
changed="$(git status --porcelain --untracked-files=all | awk '{print $2}' | sort)"
unexpected="$(printf '%s\n' "$changed" | grep -vE '^(labs|solutions|grader/labs|grader/tests/submissions)/42-vector-scale/|^README\.md$' || true)"
if [[ -n "$unexpected" ]]; then echo "new-lab touched files outside the lab: $unexpected"; exit 1; fi
for f in labs/42-vector-scale/README.md labs/42-vector-scale/vector_scale.hpp labs/42-vector-scale/vector_scale.cu \
         solutions/42-vector-scale/vector_scale.cu grader/labs/42-vector-scale/checks.cpp \
         grader/labs/42-vector-scale/rubric.ini grader/labs/42-vector-scale/CMakeLists.txt \
         grader/tests/submissions/42-vector-scale/solution.expect grader/tests/submissions/42-vector-scale/student.expect \
         grader/tests/submissions/42-vector-scale/stub/vector_scale.cu; do
  [[ -f "$f" ]] || { echo "new-lab did not create $f"; exit 1; }
done
grep -q '^| \[42-vector-scale\](labs/42-vector-scale/README.md) | Vector scale |' README.md || { echo "no README row"; exit 1; }
if ./gpulab new-lab 42-vector-scale >/dev/null 2>&1; then echo "new-lab overwrote an existing lab"; exit 1; fi
if ./gpulab new-lab "Bad Name" >/dev/null 2>&1; then echo "new-lab accepted a bad name"; exit 1; fi
# The skeleton builds and grades: the reference passes, the stub fails performance only.
./gpulab --backend "$backend" grade 42 --impl solution --json ref.json > ref.log 2>&1 || { cat ref.log; echo "reference failed"; exit 1; }
if ./gpulab --backend "$backend" grade 42 --json stub.json > stub.log 2>&1; then echo "the stub passed"; exit 1; fi
python3 - <<'PY'
import json
lab = json.load(open("stub.json"))["labs"][0]
bad = [c["name"] for c in lab["checks"] if not c["passed"] and c["kind"] != "performance"]
perf = [c for c in lab["checks"] if c["kind"] == "performance"]
assert not bad, "stub fails non-performance checks: %s" % bad
assert perf and not any(c["passed"] for c in perf), "the stub's performance check did not fail"
print("new-lab: skeleton ok (reference passes; stub fails performance only)")
PY
