#!/usr/bin/env bash
# Lab 05's emulator table: grades the stub, the intermediate versions and the reference on the
# emulator (warp size 32) and writes, per version, what the performance checks measured: the
# density kernel's global load sectors per particle (and the grader's indirection kernel's on the
# same particles), the hottest load's sectors per request, the reorder's store and load sectors
# per request, and the sort's atomics per particle and narrowest access line, to
# docs/results/lab05-emu.tsv (the lesson's tables and its figure: ./gpulab figures).
# Deterministic up to the random particles of the run (the seed is fixed here: --seed 5).
# Usage (from the repository root): bash docs/results/lab05-emu.sh
set -euo pipefail
subs=grader/tests/submissions/05-particle-reorder
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
versions=(
  "stub (through the index, scatter, serial scan)=$subs/stub/particle_reorder.cu"
  "reference with a scatter=$subs/scatter_reorder.cu"
  "reordered, 27 cells (intermediate)=$subs/reordered_27_cells.cu"
  "reordered, rows of 3 cells (reference)=solutions/05-particle-reorder/particle_reorder.cu"
)
i=0
for v in "${versions[@]}"; do
  ./gpulab --backend emu grade 05 --warp-size 32 --seed 5 --submission "${v#*=}" --json "$tmp/$i.json" >/dev/null 2>&1 || true
  i=$((i + 1))
done
python3 - "$tmp" "${versions[@]}" > docs/results/lab05-emu.tsv <<'PY'
import json, re, sys, os
tmp, versions = sys.argv[1], sys.argv[2:]
pats = {
    "density": re.compile(r"measured: the density kernel loaded (\d+) sectors of 32 bytes \(([\d.]+) per particle\); "
                          r"the grader's kernel that reads position\[sorted_index\[j\]\] loaded (\d+) \(([\d.]+) per particle\)"),
    "hot": re.compile(r"the hottest load, ([\d.]+) sectors per request"),
    "reorder": re.compile(r"stores use ([\d.]+) sectors per request \(ideal ([\d.]+)\), loads ([\d.]+) \(ideal ([\d.]+)\)"),
    "sort": re.compile(r"([\d.]+) atomics per particle .*moves ([\d.]+) bytes per request"),
}
print("# Lab 05 on the emulator (n = 3000, warp size 32, --seed 5): written by docs/results/lab05-emu.sh.")
print("# Sectors: 32-byte sectors of global loads/stores, counted per warp-wide request (docs/emulator-metrics.md).")
print("version\tdensity_load_sectors_per_particle\tindirection_load_sectors_per_particle\tdensity_ratio"
      "\thottest_load_sectors_per_request\treorder_store_sectors_per_request\treorder_store_ideal"
      "\treorder_load_sectors_per_request\tsort_atomics_per_particle\tsort_narrowest_bytes_per_request")
for i, v in enumerate(versions):
    name = v.split("=", 1)[0]
    report = json.load(open(os.path.join(tmp, f"{i}.json")))
    text = "\n".join(c.get("message", "") for c in report["labs"][0]["checks"] if c["name"].startswith("performance."))
    got = {k: p.search(text) for k, p in pats.items()}
    if not all(got.values()):
        sys.exit(f"lab05-emu: no measurement for {name}: {[k for k, m in got.items() if not m]}")
    d, h, r, s = got["density"], got["hot"], got["reorder"], got["sort"]
    print(f"{name}\t{d.group(2)}\t{d.group(4)}\t{float(d.group(4)) / float(d.group(2)):.2f}\t{h.group(1)}"
          f"\t{r.group(1)}\t{r.group(2)}\t{r.group(3)}\t{s.group(1)}\t{s.group(2)}")
PY
cat docs/results/lab05-emu.tsv
