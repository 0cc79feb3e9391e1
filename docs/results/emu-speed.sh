#!/usr/bin/env bash
# The emulator's speed table: five kernels (32x32 tiled transpose 1024^2, shared-memory block reduce
# 2^22, shuffle reduce 2^22, naive and 16x16-tiled SGEMM 512^3), each as plain C++ loops, as a kernel
# without instrumentation, traced, traced during a watch, and traced on sampled blocks, in one run of emu_bench on one worker
# (the emulator's own parallelism over blocks aside: a per-core comparison). Every mode's output is
# checked against the loops' inside the benchmark. Writes docs/results/emulator-speed.md (Google
# Benchmark's raw JSON goes to a temporary file: the table is what is kept). Takes about three
# minutes here (the traced SGEMMs are the long ones).
# Usage (repository root, emu preset built): bash docs/results/emu-speed.sh [OUT_DIR]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
out="${1:-$root/docs/results}"
bench="$root/build/emu/common/emu/tests/emu_bench"
raw="$(mktemp)"; trap 'rm -f "$raw"' EXIT
cmake --build "$root/build/emu" --target emu_bench > /dev/null
GPULAB_EMU_WORKERS=1 "$bench" --benchmark_filter='kernel_speed/' --benchmark_format=json \
  --benchmark_out="$raw" --benchmark_out_format=json > /dev/null
python3 - "$raw" "$out/emulator-speed.md" <<'PY'
import json, sys, platform
data = json.load(open(sys.argv[1]))
rows = {}
for b in data["benchmarks"]:
    if b.get("error_occurred"):
        sys.exit(f"{b['name']}: {b.get('error_message')}")
    kernel, mode = b["label"].split(" | ")
    rows.setdefault(kernel, {})[mode] = b["real_time"] * {"ms": 1.0, "us": 1e-3, "ns": 1e-6}[b["time_unit"]]
modes = ["plain C++ loops", "kernel, no checks", "kernel, traced", "kernel, traced + watched", "kernel, traced, sampled blocks"]
ctx = data["context"]
# Notes written by hand after the marker survive a re-run.
notes = ""
try:
    old = open(sys.argv[2]).read()
    if "<!-- notes -->" in old:
        notes = old[old.index("<!-- notes -->"):]
except FileNotFoundError:
    pass
with open(sys.argv[2], "w") as f:
    f.write("# The emulator's speed against plain loops\n\n")
    f.write(f"Measured with `bash docs/results/emu-speed.sh` on {ctx.get('num_cpus')} x {ctx.get('mhz_per_cpu')} MHz "
            f"({platform.machine()}), one emulator worker, {ctx.get('date', '')[:10]}. Times are Google Benchmark's "
            "(real time per run); every mode's output equals the loops' (checked in the benchmark).\n\n")
    f.write("| kernel | loops (ms) | no checks (ms) | traced (ms) | traced + watched (ms) | sampled (ms) | no checks / loops | traced / no checks | watched / no checks | sampled / no checks |\n")
    f.write("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
    for kernel, m in rows.items():
        t = [m[k] for k in modes]
        f.write(f"| {kernel} | {t[0]:.3g} | {t[1]:.3g} | {t[2]:.4g} | {t[3]:.4g} | {t[4]:.4g} | {t[1]/t[0]:.1f}x | {t[2]/t[1]:.1f}x | {t[3]/t[1]:.1f}x | {t[4]/t[1]:.1f}x |\n")
    if notes:
        f.write("\n" + notes)
print(open(sys.argv[2]).read())
PY
