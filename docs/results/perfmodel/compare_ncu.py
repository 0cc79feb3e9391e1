#!/usr/bin/env python3
"""The emulator's counts of the SGEMM ladder against Nsight Compute's on the H200, step by step.

    python3 docs/results/perfmodel/compare_ncu.py docs/results/perfmodel-ladder-counts-256.tsv \
        docs/results/perfmodel-h200/ncu-ladder.csv docs/results/perfmodel-h200/ncu-ladder-more.csv

The H200 side: queue phase `ncu06` of docs/results/gpu-queue.sh (the ladder at 4096^3 under
Nsight Compute, the first launch of each step). The emulator side: `perfmodel-ladder-counts 256`,
every count scaled by (4096 / 256)^3 (global stores by (4096 / 256)^2). Prints a markdown table:
for each quantity, the emulator's value over the H200's.
"""
import csv
import io
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from model import read_tsv, warp_instructions  # noqa: E402  (the model's own definitions)

STEP_OF_KERNEL = {
    "naive_kernel": "01", "coalesced_kernel": "02", "smem_tiling_kernel": "03",
    "register_1d_kernel": "04", "register_2d_kernel": "05", "float4_loads_kernel": "06",
    "transposed_a_kernel": "07", "double_buffer_kernel": "08", "warp_tiling_kernel": "09",
    "sgemm_tiled": "10",
}


def ncu_rows(path):
    """{step: {metric: value}} of the first launch of each step's kernel."""
    lines = open(path).read().splitlines()
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
        if first_id.setdefault(step, launch) != launch:
            continue
        value = r[idx["Metric Value"]].replace(",", "")
        try:
            out.setdefault(step, {})[r[idx["Metric Name"]]] = float(value)
        except ValueError:
            pass
    return out


def main():
    counts = {r["step"]: r for r in read_tsv(sys.argv[1])}
    hw = ncu_rows(sys.argv[2])
    for path in sys.argv[3:]:
        for step, m in ncu_rows(path).items():
            hw.setdefault(step, {}).update(m)
    big = 4096
    print("| step | FMAs | global load requests | global load sectors | shared load requests / LDS instructions "
          "| shared load wavefronts | warp instructions (model) / executed | registers | occupancy | issue slots busy |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for step in sorted(hw):
        if step not in counts:
            continue
        c, h = counts[step], hw[step]
        s = (big / int(c["n"])) ** 3
        warp_model = warp_instructions(c)

        def ratio(emu, metric):
            v = h.get(metric)
            if not v:
                return "- (0 on both)" if not emu else "-"
            return "%.3f" % (emu * s / v)
        print("| %s | %s | %s | %s | %s | %s | %s | %d | %.1f%% | %.1f%% |" % (
            step,
            ratio(float(c["fma"]), "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"),
            ratio(float(c["global_load_requests"]), "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"),
            ratio(float(c["global_load_sectors"]), "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"),
            ratio(float(c.get("shared_load_requests", 0)), "smsp__sass_inst_executed_op_shared_ld.sum"),
            ratio(float(c.get("shared_load_wavefronts", 0)), "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"),
            ratio(warp_model, "smsp__inst_executed.sum"),
            h.get("Registers Per Thread", 0), h.get("Achieved Occupancy", 0), h.get("Issue Slots Busy", 0)))


if __name__ == "__main__":
    main()
