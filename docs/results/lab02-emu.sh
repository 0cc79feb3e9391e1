#!/usr/bin/env bash
# Lab 02's emulator table: grades the AoS stub, the intermediate versions and the reference on
# the emulator and writes, per version and call of the pipeline, the bytes the call needs, the
# bytes its kernels moved (32-byte sectors of global loads + stores) and their ratio, the bytes
# they touched in 64-byte granules, and the grade: the fraction of copy predicted for an H200 and
# what bounds it, to docs/results/lab02-emu.tsv (the table of the lesson and its figure:
# ./gpulab figures).
# Deterministic: the metrics do not depend on the seed or the number of workers.
# Usage (from the repository root): bash docs/results/lab02-emu.sh
set -euo pipefail
subs=grader/tests/submissions/02-aos-soa
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
versions=(
  "AoS (stub)=$subs/stub/aos_soa.cu"
  "hot/cold split=$subs/hot_cold_split.cu"
  "SoA, thread-per-particle conversions=$subs/thread_per_particle_conversion.cu"
  "SoA, per-component loads=$subs/scalar_component_loads.cu"
  "SoA, tiled conversions (reference)=solutions/02-aos-soa/aos_soa.cu"
)
for v in "${versions[@]}"; do
  name="${v%%=*}" file="${v#*=}"
  ./gpulab --backend emu grade 02 --submission "$file" --json "$tmp/$(echo "$name" | tr -c 'a-zA-Z0-9' _).json" >/dev/null 2>&1 || true
  echo "$name" > "$tmp/$(echo "$name" | tr -c 'a-zA-Z0-9' _).name"
done
python3 - "$tmp" "${versions[@]}" > docs/results/lab02-emu.tsv <<'PY'
import json, re, sys, os
tmp, versions = sys.argv[1], sys.argv[2:]
line = re.compile(r"^(\w+)\(n = (\d+)\), measured: predicted ([0-9.e+-]+) of a copy kernel's bandwidth on an \w+ "
                  r"\(bound by (\w+)\); the kernels touched (\d+) bytes in 64-byte granules for (\d+) bytes needed, "
                  r"and moved (\d+) \+ (\d+) sectors")
short = {"particles_to_layout": "to layout", "particle_distances": "positions only",
         "particle_step": "all fields (step)", "particles_from_layout": "from layout"}
order = ["particles_to_layout", "particle_distances", "particle_step", "particles_from_layout"]
print("# Lab 02 on the emulator (n = 32768, warp size 32): written by docs/results/lab02-emu.sh.")
print("# bytes_moved = 32 x (sectors of the call's global loads + stores), counted per warp-wide request.")
print("# touched_bytes: the 64-byte granules the kernels touched; predicted: the grade, the fraction of copy on an H200.")
print("layout\tkernel\tfunction\tload_sectors\tstore_sectors\tbytes_needed\tbytes_moved\tbytes_used_per_byte_moved"
      "\ttouched_bytes\tpredicted_fraction_of_copy\tbound")
for v in versions:
    name = v.split("=", 1)[0]
    key = re.sub(r"[^a-zA-Z0-9]", "_", name + "\n")
    report = json.load(open(os.path.join(tmp, key + ".json")))
    rows = {}
    for check in report["labs"][0]["checks"]:
        if not check["name"].startswith("performance."):
            continue
        for text in check.get("message", "").split("\n"):
            m = line.match(text)
            if m:
                rows[m.group(1)] = m.groups()
    for f in order:
        func, n, predicted, bound, touched, needed, loads, stores = rows[f]
        moved = 32 * (int(loads) + int(stores))
        print(f"{name}\t{short[f]}\t{func}\t{loads}\t{stores}\t{needed}\t{moved}\t{min(1.0, int(needed) / moved):.3f}"
              f"\t{touched}\t{float(predicted):.3f}\t{bound}")
PY
echo "wrote docs/results/lab02-emu.tsv"
