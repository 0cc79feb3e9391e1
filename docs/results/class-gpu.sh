#!/usr/bin/env bash
# ./gpulab grade-class on a GPU: 10 lab 01 hand-ins (the reference twice, the stub, a warp-shuffle
# version, the <<<>>> form, a wrong answer, a crash, a result cache, a race, a hard-coded warp
# size) graded as a class with --jobs JOBS (compiles in parallel; the timed runs and the sanitizer
# take the GPU lock one hand-in at a time), then each alone with the same seed. Writes
# OUT/summary.md: per hand-in the score, the verdict and every performance ratio from both runs,
# and the two wall times.
# Usage (repository root, cuda preset built): GPULAB_BACKEND=cuda bash docs/results/class-gpu.sh OUT [JOBS]
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
out="${1:?usage: class-gpu.sh OUT [JOBS]}"
jobs="${2:-4}"
backend="${GPULAB_BACKEND:-cuda}"
grader="$root/build/$backend/grader/gpulab-grade"
[[ -x "$grader" ]] || { echo "no grader at $grader" >&2; exit 2; }
seed=20261130
s1="$root/grader/tests/submissions/01-coalescing"
pool=("$root/solutions/01-coalescing/row_sum.cu" "$s1/stub/row_sum.cu" "$s1/good_warp_shuffle.cu" "$s1/launch_syntax.cu"
      "$s1/wrong_answer.cu" "$s1/crash.cu" "$s1/caches_results.cu" "$s1/race_missing_syncthreads.cu"
      "$s1/hard_coded_warp_size.cu" "$root/solutions/01-coalescing/row_sum.cu")
rm -rf "$out"; mkdir -p "$out/class" "$out/alone"
for i in "${!pool[@]}"; do
  d="$out/class/s$(printf %02d "$i")/labs/01-coalescing"; mkdir -p "$d"; cp "${pool[$i]}" "$d/row_sum.cu"
done
t0=$(date +%s.%N)
GPULAB_GRADER="$grader" GPULAB_BACKEND="$backend" python3 "$root/grader/class/grade_class.py" "$out/class" --lab 01 \
  --seed "$seed" --jobs "$jobs" --out "$out/class-run" > "$out/class-run.log" 2>&1
t1=$(date +%s.%N)
for i in "${!pool[@]}"; do
  s="s$(printf %02d "$i")"
  "$grader" grade 01 --submission "$out/class/$s" --seed "$seed" --json "$out/alone/$s.json" > "$out/alone/$s.txt" 2>&1
done
t2=$(date +%s.%N)
python3 - "$out" "$(python3 -c "print($t1 - $t0)")" "$(python3 -c "print($t2 - $t1)")" "$jobs" <<'PY' | tee "$out/summary.md"
import json, os, sys
out, t_class, t_alone, jobs = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
def lab(path):
    try:
        return json.load(open(path))["labs"][0]
    except Exception as e:
        return None
def perf(l):
    return {c["name"]: c.get("value") for c in (l or {}).get("checks", []) if c.get("kind") == "performance"}
print(f"# grade-class on the GPU: 10 lab 01 hand-ins, --jobs {jobs}\n")
print(f"class: {t_class:.0f} s; one by one: {t_alone:.0f} s\n")
print("| hand-in | class score | alone score | same verdict | performance: class / alone |")
print("| --- | --- | --- | --- | --- |")
same = 0
worst = 0.0
for s in sorted(os.listdir(os.path.join(out, "class"))):
    c = lab(os.path.join(out, "class-run", "students", s, "01-coalescing.json"))
    a = lab(os.path.join(out, "alone", s + ".json"))
    cs = None if c is None else (c["score"], c["passed"])
    as_ = None if a is None else (a["score"], a["passed"])
    eq = cs == as_
    same += eq
    pc, pa = perf(c), perf(a)
    ratios = []
    for name in sorted(set(pc) & set(pa)):
        vc, va = pc[name], pa[name]
        if isinstance(vc, (int, float)) and isinstance(va, (int, float)) and va:
            ratios.append(f"{name.replace('performance.', '')}: {vc:.4g} / {va:.4g}")
            worst = max(worst, abs(vc / va - 1))
    print(f"| {s} | {cs} | {as_} | {'yes' if eq else 'NO'} | {'; '.join(ratios) or '-'} |")
print(f"\n{same} of 10 verdicts equal; largest relative difference of a performance value: {100 * worst:.1f}%")
PY
