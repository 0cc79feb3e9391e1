#!/usr/bin/env python3
"""The emulator's counts of the SGEMM ladder against Nsight Compute's on the H200, step by step.

    python3 docs/results/perfmodel/compare_ncu.py [--predict EXE] docs/results/perfmodel-ladder-counts-256.tsv \
        docs/results/perfmodel-ncu-ladder-h200.tsv

The H200 side: queue phase `ncu06` of docs/results/gpu-queue.sh (the ladder at 4096^3 under
Nsight Compute, the first launch of each step), condensed to the metrics read here:

    python3 docs/results/perfmodel/compare_ncu.py condense [REV | LADDER.csv MORE.csv] \
        > docs/results/perfmodel-ncu-ladder-h200.tsv

reads the raw CSVs as git kept them at REV (default d98f299: perfmodel-h200/ncu-ladder.csv and
ncu-ladder-more.csv, `git show d98f299:docs/results/perfmodel-h200/ncu-ladder.csv`), or a new run's
(gpu-queue.sh's ncu06/ncu-ladder.csv and ncu-ladder-more.csv). The emulator
side: `perfmodel-ladder-counts 256`, every count scaled by (4096 / 256)^3; the model's warp
instructions are gpulab-perfmodel-predict's (model.py's header: EXE). Prints a markdown table: for
each quantity, the emulator's value over the H200's.
"""
import csv
import io
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model  # noqa: E402

STEP_OF_KERNEL = {
    "naive_kernel": "01", "coalesced_kernel": "02", "smem_tiling_kernel": "03",
    "register_1d_kernel": "04", "register_2d_kernel": "05", "float4_loads_kernel": "06",
    "transposed_a_kernel": "07", "double_buffer_kernel": "08", "warp_tiling_kernel": "09",
    "sgemm_tiled": "10",
}
RAW = ["docs/results/perfmodel-h200/ncu-ladder.csv", "docs/results/perfmodel-h200/ncu-ladder-more.csv"]
FMA = "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"
LOAD_REQUESTS = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"
LOAD_SECTORS = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
SHARED_LOADS = "smsp__sass_inst_executed_op_shared_ld.sum"
SHARED_WAVEFRONTS = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"
WARP_INSTRUCTIONS = "smsp__inst_executed.sum"
METRICS = [FMA, LOAD_REQUESTS, LOAD_SECTORS, SHARED_LOADS, SHARED_WAVEFRONTS, WARP_INSTRUCTIONS,
           "Registers Per Thread", "Achieved Occupancy", "Issue Slots Busy"]


def ncu_rows(text):
    """{step: {metric: value as printed, thousands separators dropped}} of the first launch of each
    step's kernel, and {step: (launch ID, kernel name)}."""
    lines = text.splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith('"ID"'))
    rows = list(csv.reader(io.StringIO("\n".join(lines[start:]))))
    idx = {h: j for j, h in enumerate(rows[0])}
    out, first_id = {}, {}
    for r in rows[1:]:
        if len(r) < len(rows[0]) - 6:
            continue
        name = r[idx["Kernel Name"]].split("(")[0].replace("<unnamed>::", "").split("<")[0].split("::")[-1].split(" ")[-1]
        step = STEP_OF_KERNEL.get(name)
        if step is None:
            continue
        launch = int(r[idx["ID"]])
        if first_id.setdefault(step, (launch, name))[0] != launch:
            continue
        value = r[idx["Metric Value"]].replace(",", "")
        try:
            float(value)
        except ValueError:
            continue
        out.setdefault(step, {})[r[idx["Metric Name"]]] = value
    return out, first_id


def condense(argv):
    rev = argv[0] if len(argv) == 1 else "d98f299"
    hw, launches = {}, {}
    for i, path in enumerate(RAW):
        if len(argv) == 2:
            with open(argv[i]) as f:
                text = f.read()
        else:
            text = subprocess.run(["git", "-C", model.ROOT, "show", "%s:%s" % (rev, path)], capture_output=True,
                                  text=True, check=True).stdout
        rows, first = ncu_rows(text)
        for step, m in rows.items():
            hw.setdefault(step, {}).update(m)
            launches.setdefault(step, first[step])
    print("# NVIDIA H200, Nsight Compute, the SGEMM ladder at 4096^3 (queue phase ncu06, 2026-12-01): the first")
    if len(argv) == 2:
        print("# launch of each step. Written by `python3 docs/results/perfmodel/compare_ncu.py condense %s`." % " ".join(argv))
    else:
        print("# launch of each step. Written by `python3 docs/results/perfmodel/compare_ncu.py condense %s` from" % rev)
        print("# `git show %s:%s` and `%s`." % (rev, RAW[0], RAW[1].split("/")[-1]))
    print("\t".join(["step", "kernel", "launch"] + METRICS))
    for step in sorted(hw):
        print("\t".join([step, launches[step][1], str(launches[step][0])] + [hw[step].get(m, "-") for m in METRICS]))
    return 0


def compare(exe, argv):
    counts_path = argv[0]
    counts = {r["step"]: r for r in model.read_tsv(counts_path)}
    warp = {r["step"]: r["warp_instructions"] for r in model.ladder(
        exe, counts_path, os.path.join(model.ROOT, "docs", "results", "perfmodel-ladder-resources.tsv"))}
    hw = {r["step"]: {k: float(v) for k, v in r.items() if k in METRICS and v != "-"}
          for r in model.read_tsv(argv[1])}
    big = 4096
    print("| step | FMAs | global load requests | global load sectors | shared load requests / LDS instructions "
          "| shared load wavefronts | warp instructions (model) / executed | registers | occupancy | issue slots busy |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for step in sorted(hw):
        if step not in counts:
            continue
        c, h = counts[step], hw[step]
        s = (big / int(c["n"])) ** 3

        def ratio(emu, metric):
            v = h.get(metric)
            if not v:
                return "- (0 on both)" if not emu else "-"
            return "%.3f" % (emu * s / v)
        print("| %s | %s | %s | %s | %s | %s | %s | %d | %.1f%% | %.1f%% |" % (
            step,
            ratio(float(c["fma"]), FMA),
            ratio(float(c["global_load_requests"]), LOAD_REQUESTS),
            ratio(float(c["global_load_sectors"]), LOAD_SECTORS),
            ratio(float(c.get("shared_load_requests", 0)), SHARED_LOADS),
            ratio(float(c.get("shared_load_wavefronts", 0)), SHARED_WAVEFRONTS),
            ratio(warp[step], WARP_INSTRUCTIONS),
            h.get("Registers Per Thread", 0), h.get("Achieved Occupancy", 0), h.get("Issue Slots Busy", 0)))
    return 0


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "condense":
        return condense(sys.argv[2:])
    exe, argv = model.predictor(sys.argv)
    if len(argv) != 3:
        sys.exit(__doc__)
    return compare(exe, argv[1:])


if __name__ == "__main__":
    sys.exit(main())
