#!/usr/bin/env bash
# Grades every idiom of the legitimate-idioms corpus (grader/tests/idioms/<lab>/*.cu) with the
# real grader on a GPU back-end, and prints one verdict line per idiom:
#
#   PASS  01-coalescing/template_deduced_launch  11.00 / 11.00
#   FAIL  04-reductions/occupancy_grid  10.00 / 11.00  performance.fraction_of_vendor: ...
#
# Every idiom must get full marks (it is correct CUDA, as fast as the lab's reference). Run from
# anywhere on a CUDA machine (the H200); the reports go to OUT_DIR (default: a new temporary
# folder), one <lab>_<idiom>.json and .txt each. Exit status 0 when every idiom got full marks.
#
# Usage: grader/tests/idioms/run-gpu.sh [OUT_DIR] [BACKEND] [IDIOM.cu ...]
#   BACKEND: cuda (default) or rocm; emu works too (what ctest -L idioms does on the emulator).
set -u
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
out="${1:-$(mktemp -d /tmp/gpulab-idioms-XXXXXX)}"
backend="${2:-cuda}"
shift $(( $# > 2 ? 2 : $# ))
mkdir -p "$out"
files=("$@")
if [ ${#files[@]} -eq 0 ]; then
  mapfile -t files < <(find "$here" -mindepth 2 -name '*.cu' | sort)
fi

# One line from a report: "PASS|FAIL lab/name score / max [failing checks]".
verdict() {
  python3 - "$1" "$2" <<'PY'
import json, sys
path, name = sys.argv[1], sys.argv[2]
try:
    lab = json.load(open(path))["labs"][0]
except Exception as e:  # no report: the grader itself failed
    print(f"FAIL  {name}  no report ({e.__class__.__name__})")
    sys.exit(1)
failed = [c for c in lab.get("checks", []) if not c.get("passed")]
full = lab.get("status") == "graded" and not failed and lab.get("score") == lab.get("max_score")
why = "; ".join(f"{c['name']}: {c.get('message', '').splitlines()[0] if c.get('message') else ''}"[:160] for c in failed[:3])
print(f"{'PASS' if full else 'FAIL'}  {name}  {lab.get('score', 0):.2f} / {lab.get('max_score', 0):.2f}" + (f"  {why}" if why else ""))
sys.exit(0 if full else 1)
PY
}

failed=0
for f in "${files[@]}"; do
  f="$(cd "$(dirname "$f")" && pwd)/$(basename "$f")"
  lab="$(basename "$(dirname "$f")")"
  name="$lab/$(basename "$f" .cu)"
  base="$out/${lab}_$(basename "$f" .cu)"
  (cd "$root" && ./gpulab grade "${lab%%-*}" --backend "$backend" --submission "$f" --json "$base.json") \
    > "$base.txt" 2>&1
  verdict "$base.json" "$name" || failed=$((failed + 1))
done
echo "${#files[@]} idioms on $backend, $failed without full marks (reports in $out)"
[ "$failed" -eq 0 ]
