#!/usr/bin/env bash
# The benchmark class of ./gpulab grade-class: 40 generated hand-ins (20 for lab 01, 20 for lab 06)
# drawn from the verdict suite's known submissions (correct, slow, wrong, crashing, hanging,
# cheating), graded
#   1. as a class with --jobs JOBS (default 2),
#   2. one by one with the same seed (the verdicts must be equal),
#   3. as a class again, killed part-way and re-run (it must finish without re-grading what was
#      graded, into the same gradebook).
# Prints the times and writes OUT/summary.md. A hanging hand-in costs the lab time limit, here
# --lab-timeout 60 s for every run alike.
# Usage (repository root, after ./gpulab grade --help has built the grader):
#   bash docs/results/class-benchmark.sh [OUT] [JOBS]
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
out="${1:-$root/build/class-benchmark}"
jobs="${2:-2}"
backend="${GPULAB_BACKEND:-emu}"
grader="$root/build/$backend/grader/gpulab-grade"
[[ -x "$grader" ]] || { echo "no grader at $grader: run ./gpulab grade --help first" >&2; exit 2; }
seed=20261130
limit=60
rm -rf "$out"
mkdir -p "$out/class"
s1="$root/grader/tests/submissions/01-coalescing"
s6="$root/grader/tests/submissions/06-sgemm"
pool01=("$root/solutions/01-coalescing/row_sum.cu" "$s1/stub/row_sum.cu" "$s1/good_warp_shuffle.cu" "$s1/launch_syntax.cu"
        "$s1/wrong_answer.cu" "$s1/missing_tail.cu" "$s1/crash.cu" "$s1/infinite_loop.cu" "$s1/caches_results.cu"
        "$s1/race_missing_syncthreads.cu" "$s1/out_of_bounds_write.cu" "$s1/hard_coded_warp_size.cu"
        "$s1/does_not_compile.cu" "$s1/all_zero.cu" "$s1/nan_for_some_rows.cu" "$s1/exits_early.cu"
        "$root/solutions/01-coalescing/row_sum.cu" "$s1/stub/row_sum.cu" "$s1/off_by_one_rows.cu" "$s1/partial_result.cu")
# A student hands in one file: the lab 06 reference with its own headers inlined (each once).
inline() {
  python3 - "$1" <<'PY'
import os, re, sys
seen = set()
def emit(path):
    if path in seen:
        return ""
    seen.add(path)
    out = []
    for line in open(path):
        m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
        local = m and os.path.exists(os.path.join(os.path.dirname(path), m.group(1)))
        if local:
            out.append(emit(os.path.join(os.path.dirname(path), m.group(1))))
        elif not re.match(r"\s*#\s*pragma\s+once", line):
            out.append(line)
    return "".join(out)
sys.stdout.write(emit(os.path.abspath(sys.argv[1])))
PY
}
inline "$root/solutions/06-sgemm/sgemm.cu" > "$out/sgemm_reference_one_file.cu"
pool06=("$out/sgemm_reference_one_file.cu" "$s6/stub/sgemm.cu" "$s6/calls_vendor_library.cu" "$s6/only_multiples_of_128.cu"
        "$s6/race_in_shared_tiles.cu" "$s6/reads_c_when_beta_is_zero.cu" "$s6/skips_partial_edge_tiles.cu")
for i in $(seq 0 19); do
  d="$out/class/s$(printf %02d "$i")-01/labs/01-coalescing"; mkdir -p "$d"; cp "${pool01[$i]}" "$d/row_sum.cu"
  d="$out/class/s$(printf %02d "$i")-06/labs/06-sgemm"; mkdir -p "$d"; cp "${pool06[$((i % ${#pool06[@]}))]}" "$d/sgemm.cu"
done
class() { GPULAB_GRADER="$grader" GPULAB_BACKEND="$backend" python3 "$root/grader/class/grade_class.py" "$out/class" \
            --seed "$seed" --lab-timeout "$limit" --jobs "$jobs" "$@"; }

t0=$(date +%s.%N)
class --out "$out/class-run" > "$out/class-run.log" 2>&1
t1=$(date +%s.%N)
tail -1 "$out/class-run.log"

# One by one, the same seed.
same=0; differ=0
: > "$out/alone.log"
t2=$(date +%s.%N)
while IFS=, read -r student lab score max passed _; do
  "$grader" grade "${lab:0:2}" --submission "$out/class/$student" --seed "$seed" --timeout "$limit" \
    --json "$out/alone.json" > /dev/null 2>&1
  alone="$(python3 -c "import json,sys; l=json.load(open(sys.argv[1]))['labs'][0]; print(l['score'], str(l['passed']).lower())" "$out/alone.json")"
  if [[ "$alone" == "$score $passed" ]]; then same=$((same + 1)); else differ=$((differ + 1)); echo "$student $lab: class '$score $passed', alone '$alone'" >> "$out/alone.log"; fi
done < <(tail -n +2 "$out/class-run/gradebook.csv")
t3=$(date +%s.%N)

# Killed part-way, then re-run.
part=$(python3 -c "print(int(($t1 - $t0) * 0.4))")
GPULAB_GRADER="$grader" GPULAB_BACKEND="$backend" timeout -s TERM "$part" python3 "$root/grader/class/grade_class.py" "$out/class" \
  --seed "$seed" --lab-timeout "$limit" --jobs "$jobs" --out "$out/resumed" > "$out/killed.log" 2>&1
done_before=$(ls "$out"/resumed/students/*/*.json 2>/dev/null | wc -l)
class --out "$out/resumed" > "$out/resume.log" 2>&1
cut -d, -f1-5 "$out/class-run/gradebook.csv" > "$out/a.csv"; cut -d, -f1-5 "$out/resumed/gradebook.csv" > "$out/b.csv"
resumed_same=$(cmp -s "$out/a.csv" "$out/b.csv" && echo yes || echo no)

class_s=$(python3 -c "print(round($t1 - $t0, 1))"); alone_s=$(python3 -c "print(round($t3 - $t2, 1))")
{
  echo "| what | value |"
  echo "|---|---|"
  echo "| hand-ins | 40 (20 lab 01, 20 lab 06), seed $seed, lab time limit $limit s, back-end $backend, $(nproc) cores |"
  echo "| class, --jobs $jobs | $class_s s ($(python3 -c "print(round(($t1 - $t0) / 40, 1))") s per hand-in) |"
  echo "| one by one | $alone_s s ($(python3 -c "print(round(($t3 - $t2) / 40, 1))") s per hand-in) |"
  echo "| class / one by one | $(python3 -c "print(round(($t1 - $t0) / ($t3 - $t2), 2))") |"
  echo "| verdicts equal to grading alone | $same of $((same + differ)) |"
  echo "| killed after ${part} s, then re-run | $done_before graded before the kill; the re-run: $(grep -o '[0-9]* of [0-9]* already graded' "$out/resume.log" || echo 'graded everything again'); gradebook equal: $resumed_same |"
  echo "| passed / graded | $(tail -1 "$out/class-run.log" | grep -o '[0-9]* of [0-9]* graded, [0-9]* passed') |"
} > "$out/summary.md"
cat "$out/summary.md"
[[ $differ -eq 0 && "$resumed_same" == yes ]]
