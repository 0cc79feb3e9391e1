#!/usr/bin/env python3
"""Compares the emulator's memory metrics with Nsight Compute's, kernel by kernel.

usage: compare.py EMULATOR.tsv NCU.csv [--labels PROGRAM_OUTPUT] [--markdown OUT.md]

EMULATOR.tsv: GPULAB_METRICS_TSV output of the validation program on the emu back-end.
NCU.csv:      common/emu/validation/ncu.sh output on a GPU.
PROGRAM_OUTPUT: the validation program's standard output; its `launch<TAB>label` lines name the
last launches (the shared-memory width patterns), in order.
Launches are paired in order (the program launches each kernel once, in source order); ncu rows
of kernels that are not ours (none expected) are skipped.
"""
import csv
import io
import sys
from collections import defaultdict

OURS = ("row_sum_thread_per_row", "row_sum_cooperative", "strided_read", "misaligned_read",
        "positions_aos", "positions_soa", "transpose_naive", "transpose_shared", "copy_float4",
        "shared_width_load", "shared_width_store")
PAIRS = {  # (space, access) -> (units metric, requests metric)
    ("global", "load"): ("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"),
    ("global", "store"): ("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"),
    ("shared", "load"): ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "smsp__sass_inst_executed_op_shared_ld.sum"),
    ("shared", "store"): ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", "smsp__sass_inst_executed_op_shared_st.sum"),
}


def read_emulator(path):
    launches = defaultdict(lambda: defaultdict(lambda: [0, 0]))  # id -> (space, access) -> [units, requests]
    sites = {}
    with open(path) as f:
        for row in csv.DictReader(f, delimiter="\t"):
            lid = int(row["launch_id"])
            sites[lid] = row["launch"].rsplit("/", 1)[-1]
            acc = launches[lid][(row["space"], row["access"])]
            acc[0] += int(row["units"])
            acc[1] += int(row["requests"])
    return [(sites[k], launches[k]) for k in sorted(launches)]


def read_ncu(path):
    text = open(path).read()
    start = text.find('"ID"')
    rows = csv.DictReader(io.StringIO(text[start:]))
    kernels = {}
    for row in rows:
        kid = int(row["ID"])
        k = kernels.setdefault(kid, {"name": row["Kernel Name"], "m": {}})
        value = row["Metric Value"].replace(",", "")
        k["m"][row["Metric Name"]] = float(value) if value not in ("", "n/a") else 0.0
    out = []
    for kid in sorted(kernels):
        name = kernels[kid]["name"]
        if any(o in name for o in OURS):
            out.append((name, kernels[kid]["m"]))
    return out


def main():
    args = sys.argv[1:]
    md = labels_path = None
    if "--markdown" in args:
        i = args.index("--markdown")
        md = args[i + 1]
        del args[i:i + 2]
    if "--labels" in args:
        i = args.index("--labels")
        labels_path = args[i + 1]
        del args[i:i + 2]
    emu, ncu = read_emulator(args[0]), read_ncu(args[1])
    labels = []
    if labels_path:
        labels = [l.split("\t", 1)[1].strip() for l in open(labels_path) if l.startswith("launch\t")]
    first_labelled = len(emu) - len(labels)
    if len(emu) != len(ncu):
        print(f"warning: {len(emu)} emulator launches, {len(ncu)} ncu kernels; pairing the first {min(len(emu), len(ncu))}")
    lines = ["| # | kernel (ncu name) | launch | access | emulator per request | ncu per request | difference |",
             "|---|---|---|---|---|---|---|"]
    worst = 0.0
    for i, ((site, e), (name, m)) in enumerate(zip(emu, ncu), 1):
        short = name.split("(")[0].replace("void ", "")
        if labels and i - 1 >= first_labelled:
            site = labels[i - 1 - first_labelled]
        for key, (units, reqs) in PAIRS.items():
            eu, er = e.get(key, [0, 0])
            nu, nr = m.get(units, 0.0), m.get(reqs, 0.0)
            if er == 0 and nr == 0:
                continue
            ev = eu / er if er else 0.0
            nv = nu / nr if nr else 0.0
            diff = abs(ev - nv) / nv if nv else (0.0 if ev == 0 else 1.0)
            worst = max(worst, diff)
            unit = "sectors" if key[0] == "global" else "wavefronts"
            lines.append(f"| {i} | {short} | {site} | {key[0]} {key[1]} | {ev:.2f} {unit} | {nv:.2f} {unit} | {100 * diff:.1f}% |")
    lines.append("")
    lines.append(f"Largest difference: {100 * worst:.1f}%")
    text = "\n".join(lines) + "\n"
    print(text)
    if md:
        open(md, "w").write(text)
    return 0 if worst <= 0.10 else 1


if __name__ == "__main__":
    sys.exit(main())
