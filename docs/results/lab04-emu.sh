#!/usr/bin/env bash
# Lab 04's emulator tables (the lesson's numbers and its figure: ./gpulab figures):
#   docs/results/lab04-emu.tsv          per version (stub, intermediate, single block, reference):
#                                       the grader's performance metrics at n = 4194307, warp 32
#   docs/results/lab04-warp64.tsv       32-lane code (shuffle offsets from 16, the volatile tail)
#                                       against the exact sum, at warp 32 and 64
#   docs/results/lab04-determinism-emu.tsv  atomics vs last block: distinct results of 20 runs
# The first two are deterministic; the third depends on how the emulator's 2 workers interleave.
# Usage (from the repository root): bash docs/results/lab04-emu.sh
set -euo pipefail
subs=grader/tests/submissions/04-reductions
probe=solutions/04-reductions/tools/probe.cu
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
versions=(
  "interleaved tree, atomics (stub)=$subs/stub/reduce.cu"
  "sequential tree, first add (step 2)=solutions/04-reductions/steps/02_sequential_tree.cu"
  "one block, shuffles=$subs/single_block.cu"
  "grid-stride float4, shuffles, last block (reference)=solutions/04-reductions/reduce.cu"
)
i=0
for v in "${versions[@]}"; do
  ./gpulab --backend emu grade 04 --warp-size 32 --submission "${v#*=}" --json "$tmp/$i.json" >/dev/null 2>&1 || true
  echo "${v%%=*}" > "$tmp/$i.name"
  i=$((i + 1))
done
python3 - "$tmp" "$i" > docs/results/lab04-emu.tsv <<'PY'
import json, re, sys, os
tmp, count = sys.argv[1], int(sys.argv[2])
shared = re.compile(r"measured\): (\d+) shared-memory wavefronts \((\d+) requests\) = ([\d.]+) per 1024 elements; (\d+) atomic requests; (\d+) kernel launch\(es\); (\d+) barriers and (\d+) warp shuffles")
loads = re.compile(r"measured\): global loads moved (\d+) sectors of 32 bytes where (\d+) would do")
per_req = re.compile(r": ([\d.]+) sectors per load request \(ideal ([\d.]+)\)")
print("# Lab 04 on the emulator (n = 4194307, integer-valued input, warp size 32): written by")
print("# docs/results/lab04-emu.sh from the grader's performance messages.")
print("version\tload_sectors\tleast_sectors\tsectors_per_load_request\tshared_wavefronts\tshared_wavefronts_per_1024\tatomic_requests\tlaunches\tbarriers\tshuffles")
for k in range(count):
    name = open(os.path.join(tmp, f"{k}.name")).read().strip()
    text = "\n".join(c.get("message", "") for c in json.load(open(os.path.join(tmp, f"{k}.json")))["labs"][0]["checks"])
    s, l, p = shared.search(text), loads.search(text), per_req.search(text)
    print(f"{name}\t{l.group(1)}\t{l.group(2)}\t{p.group(1)}\t{s.group(1)}\t{float(s.group(3)):.3g}\t{s.group(4)}\t{s.group(5)}\t{s.group(6)}\t{s.group(7)}")
PY
echo "wrote docs/results/lab04-emu.tsv"
# The probe's races make `./gpulab run` exit non-zero (it reports them): keep its tables anyway.
probe_run() { ./gpulab run "$probe" "$@" 2>/dev/null || true; }
{
  echo "# Lab 04: 32-lane reductions on the emulator at warp 32 and 64, integer inputs 1..4 (exact sums):"
  echo "# ./gpulab run $probe --warp-size W warp (written by docs/results/lab04-emu.sh)."
  echo "# shuffles_from_16: a mask of all the warp's lanes but offsets 16, 8, 4, 2, 1; volatile_tail: tree to 64 values,"
  echo "# then 32 threads without barriers. *_error_pct = 100 (result - exact) / exact."
  for w in 32 64; do probe_run --warp-size "$w" warp | grep -E '^#|^[0-9]' | sed '1s/^# //' | { [[ $w == 32 ]] && cat || tail -n +2; }; done
} > docs/results/lab04-warp64.tsv
echo "wrote docs/results/lab04-warp64.tsv"
{
  echo "# Lab 04: the same 2^22 random floats in [-1, 1) summed 20 times on the emulator (2 workers):"
  echo "# GPULAB_EMU_WORKERS=2 ./gpulab run $probe determinism 4194304 20 (docs/results/lab04-emu.sh)."
  GPULAB_EMU_WORKERS=2 probe_run determinism 4194304 20 | grep -E '^#|	' | sed '1s/^# //'
} > docs/results/lab04-determinism-emu.tsv
echo "wrote docs/results/lab04-determinism-emu.tsv"
