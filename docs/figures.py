#!/usr/bin/env python3
"""Turns measured tables under docs/results/ into the SVG figures the lessons show.

    python3 docs/figures.py            (or ./gpulab figures, or cmake --build B --target figures)

Each figure is one function below, registered in FIGURES with the table it reads and the SVG it
writes (under docs/figures/). The tables are tab-separated with a header row; lines starting
with '#' are comments (where the numbers came from). The algorithm diagrams (section "Algorithm
diagrams") compute their geometry from the parameters the code runs with; those without a table
have None in FIGURES and say in their docstring where their parameters come from (constants
below, or the reference's source for lab 06). Output is deterministic for a given table and
source (fixed size, no dates in the SVG), so a regenerated figure only shows up in `git diff`
when its data changed.
"""
import csv
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def read_tsv(path):
    with open(path, newline="") as f:
        rows = [line for line in f if line.strip() and not line.startswith("#")]
    return list(csv.DictReader(rows, delimiter="\t"))


def distinct(rows, column):
    """The values of a column, each once, in the order the table first gives them."""
    return list(dict.fromkeys(r[column] for r in rows))


def grouped_bars(rows, plt, group_column, series_column, value_column, *, ylabel, title, ylim,
                 figsize=(8, 3.6), value_fontsize=7, legend_columns=None, legend_offset=-0.14):
    """Grouped bars: one group per value of `group_column` (in table order), one bar per value of
    `series_column`, each labelled with its value; a grey line at 1."""
    groups = distinct(rows, group_column)
    series = distinct(rows, series_column)
    value = {(r[series_column], r[group_column]): float(r[value_column]) for r in rows}
    fig, ax = plt.subplots(figsize=figsize)
    width = 0.8 / len(series)
    for j, name in enumerate(series):
        xs, ys = [], []
        for i, g in enumerate(groups):
            if (name, g) in value:
                xs.append(i - 0.4 + width * (j + 0.5))
                ys.append(value[(name, g)])
        ax.bar(xs, ys, width, label=name)
        for x, y in zip(xs, ys):
            ax.text(x, y + 0.02, f"{y:.2f}", ha="center", va="bottom", fontsize=value_fontsize)
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels(groups, fontsize=8)
    ax.set_ylim(0, ylim)
    ax.set_ylabel(ylabel)
    ax.axhline(1.0, color="grey", linewidth=0.5)
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7, ncol=legend_columns or len(series), loc="upper center",
              bbox_to_anchor=(0.5, legend_offset), frameon=False)
    fig.tight_layout()
    return fig


def lab02_bytes_used(rows, plt):
    """Grouped bars: bytes used per byte moved, one group per kernel, one bar per layout."""
    return grouped_bars(rows, plt, "kernel", "layout", "bytes_used_per_byte_moved", ylabel="bytes used per byte moved",
                        ylim=1.15, figsize=(9, 3.8), legend_columns=3, legend_offset=-0.12,
                        title="Lab 02 on the emulator (n = 32768, warp size 32): bytes used per byte moved"
                              " in 32-byte sectors")


def lab05_density_and_reorder(rows, plt):
    """Two panels: the density kernel's load sectors per particle (each version and the grader's
    indirection kernel), and the reorder's store sectors per request against the ideal."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.6), gridspec_kw={"width_ratios": [3, 2]})
    names = ["through the index (grader)"] + [r["version"] for r in rows]
    values = [float(rows[0]["indirection_load_sectors_per_particle"])]
    values += [float(r["density_load_sectors_per_particle"]) for r in rows]
    left.barh(range(len(names)), values, color=["grey"] + ["C0"] * (len(names) - 1))
    for i, v in enumerate(values):
        left.text(v + 0.5, i, f"{v:.1f}", va="center", fontsize=7)
    left.set_yticks(range(len(names)))
    left.set_yticklabels(names, fontsize=7)
    left.invert_yaxis()
    left.set_xlabel("density: global load sectors per particle", fontsize=8)
    left.set_xlim(0, max(values) * 1.2)
    seen, labels, stores = set(), [], []
    for r in rows:
        kind = "scatter" if float(r["reorder_store_sectors_per_request"]) > float(r["reorder_store_ideal"]) * 1.25 else "gather"
        if kind in seen:
            continue
        seen.add(kind)
        labels.append(kind)
        stores.append((float(r["reorder_store_sectors_per_request"]), float(r["reorder_load_sectors_per_request"]),
                       float(r["reorder_store_ideal"])))
    xs = range(len(labels))
    right.bar([x - 0.2 for x in xs], [s[0] for s in stores], 0.4, label="stores")
    right.bar([x + 0.2 for x in xs], [s[1] for s in stores], 0.4, label="loads")
    for x, s in zip(xs, stores):
        right.text(x - 0.2, s[0] + 0.3, f"{s[0]:.1f}", ha="center", fontsize=7)
        right.text(x + 0.2, s[1] + 0.3, f"{s[1]:.1f}", ha="center", fontsize=7)
    right.axhline(stores[0][2], color="grey", linewidth=0.5, linestyle="--", label=f"ideal stores ({stores[0][2]:.1f})")
    right.set_xticks(list(xs))
    right.set_xticklabels(labels, fontsize=8)
    right.set_ylim(0, max(max(s[0], s[1]) for s in stores) * 1.35)
    right.set_ylabel("reorder: sectors per warp-wide request", fontsize=8)
    right.legend(fontsize=7, frameon=False)
    fig.suptitle("Lab 05 on the emulator (n = 3000, warp size 32): 32-byte sectors of global memory,"
                 " per particle (left) and per warp-wide request (right)", fontsize=9)
    fig.tight_layout()
    return fig


def lab01_bandwidth(rows, plt):
    """Grouped bars: fraction of the float4 copy kernel (same process) per kernel, one group per n.

    Each bar is labelled with its bandwidth; the copy ceiling is the line at 1.0."""
    sizes = distinct(rows, "n")
    kernels = distinct(rows, "kernel")
    row = {(r["n"], r["kernel"]): r for r in rows}
    fig, ax = plt.subplots(figsize=(8, 3.8))
    width = 0.8 / len(kernels)
    for j, kernel in enumerate(kernels):
        xs, ys, labels = [], [], []
        for i, n in enumerate(sizes):
            r = row.get((n, kernel))
            if r is None:
                continue
            xs.append(i - 0.4 + width * (j + 0.5))
            ys.append(float(r["fraction_of_copy"]))
            gbps = float(r["bandwidth_gbps"])
            unit = f"{gbps:.0f} GB/s" if gbps < 1000 else f"{gbps / 1000:.2f} TB/s"
            labels.append(f"{r['fraction_of_copy']}\n{unit}")
        ax.bar(xs, ys, width, label=kernel)
        for x, y, text in zip(xs, ys, labels):
            ax.text(x, y + 0.02, text, ha="center", va="bottom", fontsize=7)
    ax.axhline(1.0, color="grey", linewidth=0.8, linestyle="--")
    ax.text(-0.47, 1.0, "ceiling: float4 copy in the same process", ha="left", va="bottom",
            fontsize=7, color="grey")
    ax.set_xticks(range(len(sizes)))
    ax.set_xticklabels([f"n = {n}" for n in sizes], fontsize=8)
    ax.set_xlim(-0.5, len(sizes) - 0.5)
    ax.set_ylim(0, 1.35)
    ax.set_ylabel("fraction of the copy bandwidth")
    ax.set_title("Lab 01 on an NVIDIA H200: row sums of an n x n float matrix, graded on the cuda back-end",
                 fontsize=9)
    ax.legend(fontsize=7, ncol=len(kernels), loc="upper center", bbox_to_anchor=(0.5, -0.1), frameon=False)
    fig.tight_layout()
    return fig


def _ladder_label(r):
    return r["step"] if r["step"] == "cuBLAS" else f"{r['step']} {r['kernel']}"


def sgemm_ladder(rows, plt):
    """Horizontal bars: % of cuBLAS of every step of lab 06's ladder at 4096^3, with the 75% pass line."""
    at = [r for r in rows if r["n"] == "4096"]
    fig, ax = plt.subplots(figsize=(8, 4.2))
    labels = [_ladder_label(r) for r in at]
    pct = [float(r["pct_of_cublas"]) for r in at]
    ys = list(range(len(at)))[::-1]
    colors = ["grey" if r["step"] == "cuBLAS" else "#4c72b0" for r in at]
    ax.barh(ys, pct, 0.7, color=colors)
    for y, p, r in zip(ys, pct, at):
        ax.text(p + 0.8, y, f"{r['pct_of_cublas']}%  ({r['tflops']} TFLOP/s)", va="center", fontsize=7,
                bbox=dict(facecolor="white", edgecolor="none", pad=0.5))  # hides the pass line behind it
    ax.axvline(75, color="#c44e52", linewidth=0.8, linestyle="--")
    ax.text(75.8, len(at) - 0.35, "pass line of the lab: 75%", color="#c44e52", fontsize=7, va="bottom")
    ax.set_yticks(ys)
    ax.set_yticklabels(labels, fontsize=8)
    ax.set_xlim(0, 125)
    ax.set_ylim(-0.6, len(at) + 0.2)
    ax.set_xlabel("% of cuBLAS (FP32, same process), 4096 x 4096 x 4096")
    ax.set_title("Lab 06's ladder on an NVIDIA H200 (sgemm_ladder)", fontsize=9)
    fig.tight_layout()
    return fig


# Roofs of the H200 for sgemm_roofline (the lesson's section 1 and docs/results/sgemm-h200.md):
# FP32 without tensor cores: 132 SMs x 128 FMA lanes x 2 FLOP x 1.98 GHz = 66.9 TFLOP/s (NVIDIA's
# H200 datasheet says 67 TFLOPS, https://www.nvidia.com/en-us/data-center/h200/); HBM3e: 4.8 TB/s
# (same datasheet). The ridge point is 66.9 / 4.8 = 13.9 FLOP per byte.
H200_FP32_TFLOPS = 66.9
H200_DRAM_TBPS = 4.8


def sgemm_roofline(rows, plt):
    """Roofline of the H200 with the ladder's measured TFLOP/s at each n.

    x is the compulsory intensity 2n^3 / (4 * 3n^2) = n/6 FLOP per byte: A and B read once and
    C written once, the least DRAM traffic any kernel can have. The repository has no per-step
    DRAM or L2 traffic, so every step is drawn at the same x for a given n; a step that moves
    more bytes sits further left than drawn, by an amount that was not measured."""
    fig, ax = plt.subplots(figsize=(8, 4.6))
    xs = [0.05, 5000.0]
    ridge = H200_FP32_TFLOPS / H200_DRAM_TBPS
    roof_x = [xs[0], ridge, xs[1]]
    roof_y = [H200_DRAM_TBPS * xs[0], H200_FP32_TFLOPS, H200_FP32_TFLOPS]
    ax.plot(roof_x, roof_y, color="black", linewidth=1.0)
    ax.text(0.3, H200_DRAM_TBPS * 0.3 / 3, f"HBM3e {H200_DRAM_TBPS} TB/s (datasheet)", rotation=0, fontsize=7,
            ha="left", va="top")
    ax.text(xs[1] * 0.9, H200_FP32_TFLOPS * 1.08, f"FP32 peak {H200_FP32_TFLOPS} TFLOP/s", fontsize=7,
            ha="right", va="bottom")
    ax.axvline(ridge, color="grey", linewidth=0.5, linestyle=":")
    ax.text(ridge * 1.1, 1.5, "all steps of one n share its x:\nper-step traffic not measured",
            fontsize=6.5, color="grey", ha="left", va="bottom")
    ax.text(ridge * 1.1, 0.15, f"ridge {ridge:.1f} FLOP/B", fontsize=7, color="grey")
    steps = distinct(rows, "step")
    markers = "os^vD<>ph*X"
    cmap = plt.get_cmap("tab10")
    for k, step in enumerate(steps):
        sel = [r for r in rows if r["step"] == step]
        x = [int(r["n"]) / 6 for r in sel]
        y = [float(r["tflops"]) for r in sel]
        color = "black" if step == "cuBLAS" else cmap((k - 1) % 10)
        ax.plot(x, y, color=color, linewidth=0.7, marker=markers[k % len(markers)], markersize=4,
                label=_ladder_label(sel[0]))
    sizes = sorted({int(r["n"]) for r in rows})
    for n in sizes:
        ax.text(n / 6, 0.12, f"{n}^3", ha="center", va="bottom", fontsize=6, rotation=90)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(*xs)
    ax.set_ylim(0.1, 200)
    ax.set_xlabel("compulsory arithmetic intensity n/6, FLOP per DRAM byte (per-step traffic not measured)",
                  fontsize=8)
    ax.set_ylabel("TFLOP/s (measured)")
    ax.set_title("Lab 06's ladder on the H200 roofline (sgemm_ladder, n = 1024..8192)", fontsize=9)
    ax.legend(fontsize=6.5, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    ax.grid(True, which="major", linewidth=0.3, color="#dddddd")
    fig.tight_layout()
    return fig


def lab04_shared_work(rows, plt):
    """Horizontal bars (log scale): shared-memory wavefronts per 1024 elements, one per version."""
    names = [r["version"] for r in rows]
    values = [max(float(r["shared_wavefronts_per_1024"]), 0.001) for r in rows]
    fig, ax = plt.subplots(figsize=(8, 2.8))
    ys = range(len(names))
    ax.barh(ys, values, color="tab:blue")
    for y, r, v in zip(ys, rows, values):
        ax.text(v * 1.2, y, f"{v:.3g}  ({r['atomic_requests']} atomics,"
                f" {r['launches']} launch{'es' if r['launches'] != '1' else ''})", va="center", fontsize=7)
    ax.set_yticks(list(ys))
    ax.set_yticklabels(names, fontsize=8)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlim(0.001, 2000000)
    ax.set_xlabel("shared-memory wavefronts per 1024 elements (log scale)")
    ax.set_title("Lab 04 on the emulator: the work of combining, n = 4194307, warp 32", fontsize=9)
    fig.tight_layout()
    return fig


def lab04_warp64_error(rows, plt):
    """Relative error of 32-lane reductions against n, at warp 32 and 64."""
    fig, ax = plt.subplots(figsize=(8, 3.4))
    styles = {("shuffles_from_16", "32"): ("tab:blue", "o", ":"), ("shuffles_from_16", "64"): ("tab:blue", "o", "-"),
              ("volatile_tail", "32"): ("tab:red", "s", ":"), ("volatile_tail", "64"): ("tab:red", "s", "-")}
    labels = {"shuffles_from_16": "shuffle offsets from 16", "volatile_tail": "volatile warp tail"}
    for (col, warp), (color, marker, line) in styles.items():
        xs = [int(r["n"]) for r in rows if r["warp_size"] == warp]
        ys = [abs(float(r[col + "_error_pct"])) for r in rows if r["warp_size"] == warp]
        ax.plot(xs, ys, line, color=color, marker=marker, markersize=3, label=f"{labels[col]}, warp {warp}")
    ax.axhline(3, color="grey", linewidth=0.6, linestyle="--")
    ax.text(1.2e6, 4.5, "the \"off by ~3%\" claim", fontsize=7, color="grey", ha="right")
    ax.set_xscale("log")
    ax.set_xlabel("n (integer values 1..4; the exact sum is known)")
    ax.set_ylabel("|error| in % of the exact sum")
    ax.set_ylim(-3, 100)
    ax.set_title("32-lane code on the emulator: the shuffles from 16 go wrong at warp 64, the volatile tail"
                 " at warp 32 and 64", fontsize=9)
    ax.legend(fontsize=7, loc="center right", bbox_to_anchor=(1.0, 0.3))
    fig.tight_layout()
    return fig


def fraction_of_copy_bars(rows, plt, group_column, title, **layout):
    """Grouped bars: fraction of the copy kernel's bandwidth, one group per `group_column` value
    (a call, a matrix shape), one bar per version; the copy kernel is the line at 1. `layout`
    overrides grouped_bars' size and legend arguments."""
    options = dict(figsize=(8.5, 3.8), value_fontsize=6, legend_columns=3, legend_offset=-0.1)
    options.update(layout)
    return grouped_bars(rows, plt, group_column, "version", "fraction_of_copy", ylabel="fraction of the copy kernel's bandwidth",
                        ylim=1.25, title=title, **options)


def lab02_h200(rows, plt):
    return fraction_of_copy_bars(rows, plt, "call", "Lab 02 on the H200: each call of the pipeline, 8M particles")


# Lab 03's legend: the table's versions under the names and step numbers of the lesson's table
# ("What the H200 measured" in docs/deeper/03-bank-conflicts.md). tile[32][34] is the hand-in
# padded_by_two.cu (step 3's tile padded by two words), not a step and never the reference; the
# reference until 2026-11-30 was step 3's tile[32][33], not drawn (not graded on 2026-12-01).
LAB03_VERSIONS = {
    "naive (the stub)": "1 naive (the stub; its doubles: an unpadded tile)",
    "tile[32][32]": "2 tile[32][32], unpadded",
    "tile[32][32], XOR swizzle": "4 tile[32][32], XOR swizzle",
    "tile[32][34], padded by two (the hand-in padded_by_two.cu)": "tile[32][34], padded by two (hand-in padded_by_two.cu, not a step)",
    "tile[64][65] (the reference)": "5 tile[64][65], padded, 32 x 16 threads (the reference)",
}


def lab03_h200(rows, plt):
    """The transposes at the rubric's three sizes, each labelled with its size in MiB."""
    def shape(s):
        kind, r, _, c = s.split()
        return f"{s}\n{int(r) * int(c) * {'floats': 4, 'doubles': 8}[kind] / 2**20:.0f} MiB"
    rows = [dict(r, version=LAB03_VERSIONS.get(r["version"], r["version"]), shape=shape(r["shape"])) for r in rows]
    return fraction_of_copy_bars(rows, plt, "shape", "Lab 03 on the H200 (2026-12-01): the transposes at the grader's"
                                 " three matrix sizes", figsize=(8.5, 4.3), legend_columns=2, legend_offset=-0.17)


# ---- Algorithm diagrams ------------------------------------------------------------------------
# Not measurements: pictures of what an algorithm does, with every position computed below from
# the parameters it runs with. Those without a table (FIGURES entry None) take them from these
# constants or, for lab 06, from the reference's source.
WARP_LANES = 32   # threads of a warp on NVIDIA (the emulator's default warp size)
BANKS = 32        # shared memory: 32 banks of 4-byte words (NVIDIA; common/emu/include/gpulab/emu/metrics.hpp)
BANK_BYTES = 4


def _box(ax, x, y, w, h, face, edge="black", lw=0.5, **kw):
    from matplotlib.patches import Rectangle
    ax.add_patch(Rectangle((x, y), w, h, facecolor=face, edgecolor=edge, linewidth=lw, **kw))


def _arrow(ax, start, end, color="black", lw=0.6, style="-|>", mutation=5, **kw):
    ax.annotate("", xy=end, xytext=start, arrowprops=dict(arrowstyle=style, color=color, lw=lw, shrinkA=0, shrinkB=0,
                                                          mutation_scale=mutation, **kw))


def lab00_grid_stride(_, plt):
    """Which thread takes which element, from the launch's numbers (lab 00's lesson, sections 1
    and 5). (a) A grid sized to the array: ceil(n / blockDim.x) blocks, thread i = blockIdx.x *
    blockDim.x + threadIdx.x takes element i, threads with i >= n do nothing. (b) A grid-stride
    loop on a fixed grid: thread t takes t, t + stride, t + 2 stride, ... while < n, with stride =
    blockDim.x * gridDim.x; each trip drawn over the stretch of elements it covers."""
    from matplotlib.patches import Patch
    from matplotlib.lines import Line2D

    threads_a, n_a = 4, 10                       # (a): blockDim.x, n; the grid is sized to n
    blocks_a = (n_a + threads_a - 1) // threads_a
    threads_b, blocks_b, n_b = 4, 2, 19          # (b): the caller's grid, and a larger n
    stride = threads_b * blocks_b
    trips = (n_b + stride - 1) // stride

    live, idle, idle_edge = "#8fb8de", "#eeeeee", "#bbbbbb"
    palette = [plt.get_cmap("tab10")(c) for c in (0, 1, 2, 3, 4, 5, 6, 8, 9)]  # no grey
    if stride > len(palette):
        sys.exit(f"figures: lab00_grid_stride: {stride} threads, {len(palette)} colours")
    light = [tuple(0.5 + 0.5 * v for v in palette[t][:3]) for t in range(stride)]

    w, h = 0.9, 0.55                              # a box; columns are 1 apart
    y_trip, y_block, y_thread, y_i, y_elem = 3.95, 3.55, 2.75, 2.5, 0.55
    margin = 3.2                                  # room for the row labels, left of column 0
    span_a, span_b = blocks_a * threads_a + 1.6, trips * stride + 0.3
    fig, (ax_a, ax_b) = plt.subplots(1, 2, figsize=(8, 3.5),
                                     gridspec_kw={"width_ratios": [span_a + margin, span_b + margin]})

    def thread_box(ax, x, idx, face, edge, color="black"):
        _box(ax, x + (1 - w) / 2, y_thread, w, h, face, edge=edge)
        ax.text(x + 0.5, y_thread + h / 2, str(idx), ha="center", va="center", fontsize=6, color=color)

    def element_box(ax, x, i, face, edge="black", color="black", **kw):
        _box(ax, x + (1 - w) / 2, y_elem, w, h, face, edge=edge, **kw)
        if i is not None:
            ax.text(x + 0.5, y_elem + h / 2, str(i), ha="center", va="center", fontsize=6, color=color)

    def block_bracket(ax, x0, count, label):
        y = y_block - 0.1
        ax.plot([x0 + 0.1, x0 + 0.1, x0 + count - 0.1, x0 + count - 0.1], [y - 0.12, y, y, y - 0.12],
                color="grey", linewidth=0.5)
        ax.text(x0 + count / 2, y + 0.05, label, ha="center", va="bottom", fontsize=5.5, color="grey")

    def row_labels(ax, labels):
        for y, label in labels:
            ax.text(-0.3, y, label, ha="right", va="center", fontsize=6.5)

    # (a) one thread per element; the last block runs past n.
    for b in range(blocks_a):
        block_bracket(ax_a, b * threads_a, threads_a, f"block {b}")
        for t in range(threads_a):
            i = b * threads_a + t
            inside = i < n_a
            thread_box(ax_a, i, t, live if inside else idle, "black" if inside else idle_edge,
                       "black" if inside else "grey")
            ax_a.text(i + 0.5, y_i, str(i), ha="center", va="top", fontsize=6, color="black" if inside else "grey")
            if inside:
                _arrow(ax_a, (i + 0.5, y_i - 0.3), (i + 0.5, y_elem + h + 0.03), color="#4c72b0", lw=0.6)
                element_box(ax_a, i, i, live)
    idle_a = list(range(n_a, blocks_a * threads_a))
    if idle_a:
        x = (idle_a[0] + idle_a[-1] + 1) / 2
        ax_a.text(x, (y_i + y_elem + h) / 2 - 0.15, "i >= n:\nnothing\nto do", ha="center", va="center",
                  fontsize=5.5, color="grey")
    row_labels(ax_a, [(y_thread + h / 2, "threadIdx.x"), (y_i - 0.12, "i"), (y_elem + h / 2, "element i")])
    ax_a.text(n_a / 2, y_elem - 0.15, f"n = {n_a} elements", ha="center", va="top", fontsize=6)
    ax_a.set_title(f"(a) a grid sized to the array: ceil({n_a} / {threads_a}) =\n{blocks_a} blocks of {threads_a}"
                   f" threads for n = {n_a}; thread i =\nblockIdx.x * blockDim.x + threadIdx.x takes element i",
                   fontsize=7, loc="left")

    # (b) the grid-stride loop: trip k puts the grid over elements k * stride .. k * stride + stride - 1.
    stopped = []
    for k in range(trips):
        x0 = k * stride
        ax_b.text(x0 + stride / 2, y_trip, f"trip {k + 1}: i = t" + (f" + {x0}" if x0 else ""),
                  ha="center", va="bottom", fontsize=6.5)
        if k:
            ax_b.plot([x0, x0], [y_elem - 0.1, y_trip + 0.3], color="#999999", linewidth=0.5, linestyle=":")
        for b in range(blocks_b):
            block_bracket(ax_b, x0 + b * threads_b, threads_b, f"block {b}")
        for t in range(stride):
            i = x0 + t
            inside = i < n_b
            if not inside:
                stopped.append(t)
            thread_box(ax_b, i, t % threads_b, light[t] if inside else idle, "black" if inside else idle_edge,
                       "black" if inside else "grey")
            ax_b.text(i + 0.5, y_i, str(i), ha="center", va="top", fontsize=6, color="black" if inside else "grey")
            if inside:
                _arrow(ax_b, (i + 0.5, y_i - 0.3), (i + 0.5, y_elem + h + 0.03), color=palette[t], lw=0.8)
                element_box(ax_b, i, i, light[t])
    covered = sorted(k * stride + t for k in range(trips) for t in range(stride) if k * stride + t < n_b)
    assert covered == list(range(n_b)), "every element exactly once"
    if stopped:
        first, last = n_b, trips * stride
        ax_b.text((first + last) / 2, (y_i + y_elem + h) / 2 - 0.15,
                  f"i >= n:\nthreads\n{stopped[0]}..{stopped[-1]}\nstop", ha="center", va="center",
                  fontsize=5.5, color="grey")
    # The stride: from an element to the one the same thread takes next.
    y_dim = y_elem - 0.3
    for k in range(trips - 1):
        _arrow(ax_b, (k * stride + 0.5, y_dim), ((k + 1) * stride + 0.5, y_dim), color=palette[0], lw=0.6,
               style="-|>", mutation=5)
        label = f"+ blockDim.x * gridDim.x = {stride}" if k == 0 else f"+ {stride}"
        ax_b.text(k * stride + 0.5 + stride / 2, y_dim - 0.1, label, ha="center", va="top", fontsize=6,
                  color=palette[0])
    last = (trips - 1) * stride
    ax_b.text(last + (n_b - last) / 2, y_dim - 0.1, f"last trip: {last}..{n_b - 1}", ha="center", va="top", fontsize=6)
    row_labels(ax_b, [(y_block, "blockIdx.x"), (y_thread + h / 2, "threadIdx.x"), (y_i - 0.12, "i"),
                      (y_elem + h / 2, "element i")])
    ax_b.set_title(f"(b) a grid-stride loop: the caller's grid, {blocks_b} blocks of {threads_b} threads ({stride}"
                   f" threads), for n = {n_b};\nthread t takes t, then i += blockDim.x * gridDim.x = {stride} while"
                   f" i < n: {trips} trips;\nthe last trip covers only {last}..{n_b - 1}, and threads "
                   f"{stopped[0]}..{stopped[-1]} stop", fontsize=7, loc="left")
    row_labels(ax_a, [(y_block, "blockIdx.x")])

    for ax, span in ((ax_a, span_a), (ax_b, span_b)):
        ax.set_xlim(-margin, span)
        ax.set_ylim(-0.25, 4.35)
        ax.axis("off")
    handles = [Patch(facecolor=live, edgecolor="black", linewidth=0.5, label="(a) a thread and its element"),
               Patch(facecolor=light[1], edgecolor="black", linewidth=0.5,
                     label="(b) one colour per thread t = blockIdx.x * blockDim.x + threadIdx.x, and its elements"),
               Patch(facecolor=idle, edgecolor=idle_edge, linewidth=0.5, label="i >= n: no element"),
               Line2D([], [], color="#4c72b0", linewidth=0.8, label="thread -> element i")]
    fig.legend(handles=handles, loc="lower center", ncol=4, fontsize=6, frameon=False)
    fig.suptitle("Lab 00: which thread takes which element — one thread per element, or a grid-stride loop",
                 fontsize=9)
    fig.subplots_adjust(left=0.01, right=0.99, top=0.78, bottom=0.07, wspace=0.04)
    return fig


def lab01_warp_sectors(rows, plt):
    """One warp-wide load of floats: each lane's byte offset, and the 32-byte sectors the load moves.

    The parameters are lab01-access-patterns.tsv's (a diagram, not a measurement): lane i reads
    bytes [i * lane_stride_bytes, + bytes_per_lane) from the first lane's address; the matrix is
    row-major n x n with n = the thread-per-row stride / 4 bytes. The count of sectors per pattern
    must equal what the emulator measured (emulator_sectors_per_request), else the script stops."""
    from matplotlib.patches import Patch
    from matplotlib.lines import Line2D

    n = max(int(r["lane_stride_bytes"]) for r in rows) // int(rows[0]["bytes_per_lane"])
    fig, axes = plt.subplots(len(rows), 1, figsize=(8, 3.9))
    for ax, r, letter in zip(axes, rows, "abcdefgh"):
        lanes, size = int(r["lanes"]), int(r["bytes_per_lane"])
        stride, sector = int(r["lane_stride_bytes"]), int(r["sector_bytes"])
        offsets = [lane * stride for lane in range(lanes)]
        sectors = sorted({o // sector for o in offsets} | {(o + size - 1) // sector for o in offsets})
        if len(sectors) != int(r["emulator_sectors_per_request"]):
            sys.exit(f"figures: {r['pattern']}: {len(sectors)} sectors computed, the emulator measured "
                     f"{r['emulator_sectors_per_request']}")
        # Lanes: boxes 1 unit apart at y 2.75..3.25. Sectors: side by side in address order, as
        # wide together as the lanes, at y 0.55..1.05; each split into its 4-byte words.
        width = lanes / len(sectors)
        sector_x = {s: k * width for k, s in enumerate(sectors)}
        gap = 0.08
        used = {}
        for lane, o in enumerate(offsets):
            _box(ax, lane + 0.05, 2.75, 0.9, 0.5, "#4c72b0", edge="none")
            if lane % 4 == 0 or lane == lanes - 1:
                ax.text(lane + 0.5, 3.3, str(lane), ha="center", va="bottom", fontsize=6)
                ax.text(lane + 0.5, 2.68, f"+{o}", ha="center", va="top", fontsize=5.5)
            s = o // sector
            x = sector_x[s] + gap / 2 + (width - gap) * (o % sector) / sector
            w = (width - gap) * size / sector
            used[s] = used.get(s, 0) + size
            _box(ax, x, 0.55, w, 0.5, "#dd8452", edge="none")
            ax.plot([lane + 0.5, x + w / 2], [2.2, 1.08], color="#4c72b0", linewidth=0.45)
        for s in sectors:
            x = sector_x[s] + gap / 2
            for word in range(1, sector // size):  # the sector's 4-byte words
                wx = x + (width - gap) * word * size / sector
                ax.plot([wx, wx], [0.55, 1.05], color="#bbbbbb", linewidth=0.25)
            _box(ax, x, 0.55, width - gap, 0.5, "none", lw=0.7)
        moved = len(sectors) * sector
        needed = lanes * size
        if stride >= sector:
            ax.text(lanes / 2, 0.45, f"drawn side by side: in memory each sector lies {stride} bytes (one row of "
                    f"{n} floats) after the previous one", ha="center", va="top", fontsize=6.5)
            what = f"lane i reads A[i][j] (row i), {stride} bytes apart"
        else:
            ax.text(lanes / 2, 0.45, f"{sector // size} consecutive floats per sector: every byte moved is used",
                    ha="center", va="top", fontsize=6.5)
            what = f"lane i reads A[r][j + i] (one row r), {stride} bytes apart"
        for y, label in ((3.0, "lane"), (2.58, "byte offset"), (0.8, f"{sector}-byte sectors")):
            ax.text(-0.6, y, label, ha="right", va="center", fontsize=7)
        ax.set_title(f"({letter}) {r['pattern']}: {what} -> {len(sectors)} sectors per request; {needed} of "
                     f"{moved} bytes used ({100 * needed / moved:.1f}%)", fontsize=7.5, loc="left")
        ax.set_xlim(-5.2, lanes + 0.2)
        ax.set_ylim(0.05, 3.75)
        ax.axis("off")
    handles = [Patch(facecolor="#4c72b0", label="a lane of the warp"),
               Line2D([], [], color="#4c72b0", linewidth=0.8, label="the sector its 4-byte float lies in"),
               Patch(facecolor="#dd8452", label="bytes a lane asked for"),
               Patch(facecolor="white", edgecolor="black", linewidth=0.7, label="bytes moved but not used")]
    fig.legend(handles=handles, loc="lower center", ncol=4, fontsize=7, frameon=False)
    fig.suptitle(f"Lab 01: one warp of {WARP_LANES} threads loads one float each from a row-major "
                 f"{n} x {n} float matrix A", fontsize=9)
    fig.subplots_adjust(left=0.01, right=0.99, top=0.88, bottom=0.09, hspace=0.35)
    return fig


def lab03_banks_padding(_, plt):
    """A 32 x 32 float tile, each word coloured by its bank, unpadded and padded by one word per
    row; the column a warp reads in the transpose's store phase (lane x reads tile[x][j])
    outlined, and under each tile the lanes of that read per bank. The bank of tile[r][c] in
    tile[R][P] is its word index r * P + c mod 32 (words of 4 bytes)."""
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Rectangle

    rows, j = 32, 3  # tile rows (= lanes), and the column the warp reads
    # Cyclic hues, mixed with white so that the outline and the text stay readable.
    cmap = ListedColormap([tuple(0.45 + 0.55 * v for v in plt.get_cmap("hsv")(b / BANKS)[:3])
                           for b in range(BANKS)])
    width, height = 8, 3.8
    fig = plt.figure(figsize=(width, height))
    cell = 2.2 / 33  # inches per word
    for k, pitch in enumerate((32, 33)):
        left = 0.85 + k * 3.4
        ax = fig.add_axes([left / width, 1.0 / height, pitch * cell / width, rows * cell / height])
        bank = [[(r * pitch + c) % BANKS for c in range(pitch)] for r in range(rows)]
        image = ax.imshow(bank, cmap=cmap, vmin=-0.5, vmax=BANKS - 0.5, extent=(-0.5, pitch - 0.5, rows - 0.5, -0.5),
                          interpolation="nearest", aspect="auto")
        if pitch > 32:  # the padding words: they exist, have banks, and are never read
            ax.add_patch(Rectangle((31.5, -0.5), pitch - 32, rows, facecolor="white", alpha=0.7, edgecolor="black",
                                   linewidth=0.4, hatch="/////"))
        ax.add_patch(Rectangle((j - 0.5, -0.5), 1, rows, facecolor="none", edgecolor="black", linewidth=1.5))
        ax.set_xticks([0, 8, 16, 24, pitch - 1])
        ax.set_yticks([0, 8, 16, 24, 31])
        ax.tick_params(labelsize=6, length=2, pad=1)
        ax.set_xlabel("column c", fontsize=6.5, labelpad=0)
        ax.set_ylabel("row r" + (" (lane r reads tile[r][%d])" % j if k == 0 else ""), fontsize=6.5, labelpad=1)
        pad = "" if pitch == 32 else ", one word of padding per row (hatched)"
        rule = "column c is bank c in every row" if pitch == 32 else f"tile[r][c] is in bank (r + c) % {BANKS}"
        ax.set_title(f"({'ab'[k]}) float tile[32][{pitch}]{pad}\nrow r starts at word {pitch}r: {rule}",
                     fontsize=7.5, loc="left")
        # Under the tile, aligned with its columns: the lanes of the column read in each bank.
        hits = [0] * BANKS
        for r in range(rows):
            hits[bank[r][j]] += 1
        strip = fig.add_axes([left / width, 0.42 / height, BANKS * cell / width, cell * 1.6 / height])
        for b in range(BANKS):
            strip.add_patch(Rectangle((b - 0.5, 0), 1, 1, facecolor=cmap(b) if hits[b] else "white",
                                      edgecolor="#888888", linewidth=0.3))
            if hits[b]:
                strip.text(b, 0.5, str(hits[b]), ha="center", va="center", fontsize=5 if hits[b] > 9 else 5.5)
        strip.set_xlim(-0.5, BANKS - 0.5)
        strip.set_ylim(0, 1)
        strip.set_xticks([0, 8, 16, 24, 31])
        strip.set_yticks([])
        strip.tick_params(labelsize=6, length=2, pad=1)
        strip.set_ylabel("lanes", fontsize=6, rotation=0, ha="right", va="center", labelpad=2)
        worst = max(hits)
        verdict = (f"bank: all {rows} lanes in bank {bank[0][j]}, a {worst}-way conflict: {worst} wavefronts"
                   if worst > 1 else f"bank: {rows} lanes in {sum(1 for h in hits if h)} banks, no conflict:"
                   " 1 wavefront")
        strip.set_xlabel(verdict, fontsize=6.5, labelpad=1)
    bar = fig.add_axes([7.15 / width, 1.0 / height, 0.12 / width, rows * cell / height])
    colorbar = fig.colorbar(image, cax=bar, ticks=[0, 8, 16, 24, 31])
    colorbar.ax.tick_params(labelsize=6, length=2)
    colorbar.set_label(f"bank (word index mod {BANKS})", fontsize=6.5)
    fig.suptitle(f"Lab 03: a 32 x 32 float tile in shared memory, {BANKS} banks of {BANK_BYTES} bytes; colour = bank,"
                 " outlined = the column one warp reads", fontsize=8.5, y=0.975)
    return fig


def lab04_reduction_tree(_, plt):
    """Left: the shared-memory tree with sequential addressing for 16 values (step 2's loop: at
    stride s thread t < s adds partial[t + s]; a barrier after each level). Right: the warp sum of
    the reference, __shfl_down_sync at offsets 16, 8, 4, 2, 1: lane i adds the value of lane
    i + offset. The values are a fixed example; every sum drawn is computed."""
    from matplotlib.patches import Patch
    from matplotlib.lines import Line2D

    fig, (tree, warp) = plt.subplots(1, 2, figsize=(8, 3.9), gridspec_kw={"width_ratios": [16 + 3.5, 32 + 4]})
    live, idle, arrow_color = "#8fb8de", "#eeeeee", "#c44e52"
    step = 1.25  # vertical distance between levels

    values = [(7 * i + 3) % 10 for i in range(16)]
    level, y = list(values), 0.0
    for t, v in enumerate(level):
        _box(tree, t + 0.05, y, 0.9, 0.55, live)
        tree.text(t + 0.5, y + 0.27, str(v), ha="center", va="center", fontsize=6)
        tree.text(t + 0.5, y + 0.62, str(t), ha="center", va="bottom", fontsize=5.5, color="grey")
    tree.text(-0.3, y + 0.27, "partial[t]", ha="right", va="center", fontsize=6.5)
    s, levels = len(values) // 2, 0
    while s >= 1:
        y_above, y = y, y - step
        tree.plot([0, len(values)], [y + 0.85, y + 0.85], color="grey", linewidth=0.5, linestyle="--")
        level = [level[t] + level[t + s] if t < s else level[t] for t in range(len(values))]
        for t in range(len(values)):
            _box(tree, t + 0.05, y, 0.9, 0.55, live if t < s else idle, edge="black" if t < s else "#cccccc")
            if t < s:
                tree.text(t + 0.5, y + 0.27, str(level[t]), ha="center", va="center", fontsize=6)
                _arrow(tree, (t + s + 0.5, y_above), (t + 0.6, y + 0.55), color=arrow_color, lw=0.5)
                tree.plot([t + 0.4, t + 0.4], [y_above, y + 0.55], color="black", linewidth=0.4)
        tree.text(-0.3, y + 0.27, f"s = {s}", ha="right", va="center", fontsize=6.5)
        s //= 2
        levels += 1
    assert level[0] == sum(values)
    tree.text(len(values), y + 0.85 + 0.05, "__syncthreads()", ha="right", va="bottom", fontsize=5.5, color="grey")
    tree.text(0.5, y - 0.12, f"partial[0] = {level[0]}, the block's sum", ha="left", va="top", fontsize=6.5)
    tree.set_xlim(-3.5, len(values) + 0.1)
    tree.set_ylim(y - 0.75, 1.25)
    tree.axis("off")
    tree.set_title(f"(a) a block's tree in shared memory, sequential\naddressing, {len(values)} values drawn: thread"
                   f" t < s adds\npartial[t + s]; a barrier after each of the {levels} levels\n(a block of 256 threads:"
                   " 8 levels, s = 128, 64, .., 1)", fontsize=7, loc="left")

    offsets = []
    offset = WARP_LANES // 2
    while offset >= 1:
        offsets.append(offset)
        offset //= 2
    lane_values = [(3 * i + 1) % 7 for i in range(WARP_LANES)]  # an example; only the sums' places matter
    y = 0.0
    for lane in range(WARP_LANES):
        _box(warp, lane + 0.05, y, 0.9, 0.55, live)
        if lane % 4 == 0 or lane == WARP_LANES - 1:
            warp.text(lane + 0.5, y + 0.62, str(lane), ha="center", va="bottom", fontsize=5.5, color="grey")
    warp.text(-0.3, y + 0.27, "v (a register)", ha="right", va="center", fontsize=6.5)
    for offset in offsets:
        y_above, y = y, y - step
        # __shfl_down_sync: lane i gets v of lane i + offset (its own v where that is past the
        # warp); every lane adds, but only lanes below the offset hold sums still needed.
        lane_values = [lane_values[i] + (lane_values[i + offset] if i + offset < WARP_LANES else lane_values[i])
                       for i in range(WARP_LANES)]
        for lane in range(WARP_LANES):
            needed = lane < offset
            _box(warp, lane + 0.05, y, 0.9, 0.55, live if needed else idle, edge="black" if needed else "#cccccc")
            if needed:
                _arrow(warp, (lane + offset + 0.5, y_above), (lane + 0.6, y + 0.55), color=arrow_color, lw=0.5)
                warp.plot([lane + 0.4, lane + 0.4], [y_above, y + 0.55], color="black", linewidth=0.4)
        warp.text(-0.3, y + 0.27, f"offset {offset}", ha="right", va="center", fontsize=6.5)
    warp.text(0.5, y - 0.12, "lane 0: the warp's sum", ha="left", va="top", fontsize=6.5)
    warp.set_xlim(-4, WARP_LANES + 0.1)
    warp.set_ylim(y - 0.75, 1.25)
    warp.axis("off")
    warp.set_title(f"(b) the last {WARP_LANES} values, one warp: v += __shfl_down_sync(mask, v, offset),\noffset ="
                   f" warpSize / 2 .. 1 = {', '.join(map(str, offsets))}: lane i adds the v of lane i + offset;\n"
                   "no shared memory, no barrier: the lanes read each other's registers", fontsize=7, loc="left")
    handles = [Patch(facecolor=live, edgecolor="black", linewidth=0.5, label="a partial sum still needed"),
               Patch(facecolor=idle, edgecolor="#cccccc", linewidth=0.5,
                     label="not needed (lanes >= offset add too, unused)"),
               Line2D([], [], color=arrow_color, linewidth=0.8, label="the value added"),
               Line2D([], [], color="grey", linewidth=0.6, linestyle="--", label="barrier: __syncthreads()")]
    fig.legend(handles=handles, loc="lower center", ncol=4, fontsize=6, frameon=False)
    fig.suptitle("Lab 04: the sum of a block — a tree in shared memory, then a warp's shuffles", fontsize=9)
    fig.subplots_adjust(left=0.01, right=0.99, top=0.76, bottom=0.07, wspace=0.12)
    return fig


def lab05_scan(_, plt):
    """The counting sort of lab 05 on a small example: per-cell counts, their exclusive scan
    (num_keys + 1 entries, the last one n), and the sorted array where cell c's particles occupy
    slots cell_start[c] .. cell_start[c + 1] - 1 (drawn in input order; the atomics may order
    them otherwise within a cell)."""
    keys = [3, 0, 5, 3, 7, 2, 0, 3, 5, 6, 2, 3, 0, 7]  # each particle's cell, an example
    num_keys = 8
    n = len(keys)
    counts = [keys.count(c) for c in range(num_keys)] + [0]
    start = [0]
    for c in counts[:-1]:
        start.append(start[-1] + c)  # exclusive scan: start[c] = particles with a key below c
    assert start[-1] == n
    order = sorted(range(n), key=lambda i: keys[i])  # sorted_index; stable, for the drawing
    assert all(start[keys[i]] <= k < start[keys[i] + 1] for k, i in enumerate(order))
    colors = [plt.get_cmap("tab10")(c) for c in (0, 1, 2, 3, 4, 5, 6, 8, 9)][:num_keys]  # no grey

    fig, ax = plt.subplots(figsize=(8, 3.9))
    w, h = 0.9, 0.5
    y_particles, y_counts, y_start, y_sorted = 4.6, 3.1, 1.85, 0.0
    cell_x = [0.3 + c * 1.6 for c in range(num_keys + 1)]  # counts and starts: one box per counter
    for i, key in enumerate(keys):
        _box(ax, i, y_particles, w, h, colors[key], alpha=0.45)
        ax.text(i + w / 2, y_particles + h / 2, str(key), ha="center", va="center", fontsize=7)
        ax.text(i + w / 2, y_particles + h + 0.05, f"{i}", ha="center", va="bottom", fontsize=6, color="grey")
    for c in range(num_keys + 1):
        face = colors[c] if c < num_keys else "white"
        _box(ax, cell_x[c], y_counts, w, h, face, alpha=0.45 if c < num_keys else 1)
        ax.text(cell_x[c] + w / 2, y_counts + h / 2, str(counts[c]), ha="center", va="center", fontsize=7)
        ax.text(cell_x[c] + w / 2, y_counts + h + 0.05, f"c = {c}", ha="center", va="bottom", fontsize=6,
                color="grey")
        _box(ax, cell_x[c], y_start, w, h, face, alpha=0.45 if c < num_keys else 1)
        ax.text(cell_x[c] + w / 2, y_start + h / 2, str(start[c]), ha="center", va="center", fontsize=7,
                fontweight="bold")
        if c < num_keys:  # start[c + 1] = start[c] + count[c]
            _arrow(ax, (cell_x[c] + w / 2, y_counts), (cell_x[c + 1] + 0.25, y_start + h), color="grey", lw=0.5)
            _arrow(ax, (cell_x[c] + w, y_start + h / 2), (cell_x[c + 1], y_start + h / 2), color="grey", lw=0.5)
    for k, i in enumerate(order):
        _box(ax, k, y_sorted, w, h, colors[keys[i]], alpha=0.45)
        ax.text(k + w / 2, y_sorted + h / 2, str(i), ha="center", va="center", fontsize=7)
        ax.text(k + w / 2, y_sorted - 0.05, str(k), ha="center", va="top", fontsize=6, color="grey")
    for c in range(num_keys):
        target = (start[c] + 0.05, y_sorted + h + 0.02)
        if counts[c]:
            _arrow(ax, (cell_x[c] + w / 2, y_start), target, color=colors[c], lw=1.0, mutation=7)
            ax.plot([start[c] + 0.05, start[c + 1] - 0.15], [y_sorted + h + 0.1] * 2, color=colors[c], linewidth=1.5)
        else:
            _arrow(ax, (cell_x[c] + w / 2, y_start), target, color="grey", lw=0.6, mutation=6, linestyle=":")
    empty = [str(c) for c in range(num_keys) if counts[c] == 0]
    labels = [(y_particles, "cell of particle i\n(i above)"), (y_counts, "count[c]: particles\nin cell c (histogram)"),
              (y_start, "cell_start[c]:\nexclusive scan"), (y_sorted, "sorted_index[k]\n(slot k below)")]
    for y, label in labels:
        ax.text(-0.4, y + h / 2, label, ha="right", va="center", fontsize=7)
    ax.text(cell_x[num_keys] + w + 0.3, y_start + h / 2,
            f"cell_start[{num_keys}] = n = {n}\n(a last counter of 0)", ha="left", va="center", fontsize=6.5)
    ax.text(cell_x[num_keys] + w + 0.3, y_counts + h / 2,
            "cell_start[c + 1] =\ncell_start[c] + count[c]", ha="left", va="center", fontsize=6.5, color="grey")
    ax.text(n + 0.2, y_sorted + h / 2, f"cell c's particles: slots\ncell_start[c] .. cell_start[c + 1] - 1;\n"
            f"empty cells ({' and '.join(empty)}, dotted):\ncell_start[c] = cell_start[c + 1]",
            ha="left", va="center", fontsize=6.5)
    ax.set_xlim(-4.3, 20.6)
    ax.set_ylim(-0.45, 5.45)
    ax.axis("off")
    ax.set_title(f"Lab 05: the counting sort by cell on {n} particles in {num_keys} cells: the counts, their exclusive"
                 "\nscan (each cell's start), and where each cell's particles land in the sorted array", fontsize=8.5)
    fig.subplots_adjust(left=0.01, right=0.99, top=0.88, bottom=0.02)
    return fig


def _spread_bits(v, bits, every):
    """Bit b of v moved to bit every * b (lab 05's spread_bits with every = 3; 2 in the 2D drawing)."""
    return sum(((v >> b) & 1) << (every * b) for b in range(bits))


def lab05_cells_morton(_, plt):
    """An 8 x 8 grid of cells keyed in linear (row-major) and in Morton order, the path through the
    keys, and one cell's 3 x 3 neighbourhood with the keys it covers. 2D: key = x + 8y, and the
    Morton key interleaves the bits of x (even bits) and y (odd bits), as lab 05 does in 3D
    (spread_bits in solutions/05-particle-reorder/particle_reorder.cu)."""
    from matplotlib.patches import Rectangle

    g, bits = 8, 3
    orders = [("(a) linear (row-major): key = x + 8y", lambda x, y: x + g * y),
              ("(b) Morton (Z): key = bits of x, y interleaved: y2 x2 y1 x1 y0 x0", lambda x, y: _spread_bits(x, bits, 2) | (_spread_bits(y, bits, 2) << 1))]
    px, py = 2, 2  # the particle's cell

    def keys_around(key, x, y):
        return sorted(key(x + dx, y + dy) for dx in (-1, 0, 1) for dy in (-1, 0, 1))

    width, height = 8, 3.9
    fig = plt.figure(figsize=(width, height))
    side = 2.3  # inches per grid
    for k, (name, key) in enumerate(orders):
        left = 0.85 + k * 3.85
        ax = fig.add_axes([left / width, 0.78 / height, side / width, side / height])
        neighbours = keys_around(key, px, py)
        for y in range(g):
            for x in range(g):
                near = abs(x - px) <= 1 and abs(y - py) <= 1
                face = "#dd8452" if (x, y) == (px, py) else "#f5c6a5" if near else "white"
                ax.add_patch(Rectangle((x, y), 1, 1, facecolor=face, edgecolor="#999999", linewidth=0.4))
        path = sorted(((key(x, y), x + 0.5, y + 0.5) for y in range(g) for x in range(g)))
        ax.plot([p[1] for p in path], [p[2] for p in path], color="#4c72b0", linewidth=0.6, alpha=0.7)
        ax.plot(path[0][1], path[0][2], "o", color="#4c72b0", markersize=2.5)
        for y in range(g):
            for x in range(g):
                near = abs(x - px) <= 1 and abs(y - py) <= 1
                ax.text(x + 0.06, y + 0.06, str(key(x, y)), ha="left", va="top", fontsize=5.5,
                        fontweight="bold" if near else "normal",
                        bbox=dict(facecolor="white", edgecolor="none", pad=0.2, alpha=0.8) if not near else None)
        ax.add_patch(Rectangle((px - 1, py - 1), 3, 3, facecolor="none", edgecolor="#c44e52", linewidth=1.2))
        ax.set_xlim(0, g)
        ax.set_ylim(g, 0)
        ticks = [i + 0.5 for i in range(g)]
        ax.set_xticks(ticks)
        ax.set_xticklabels([str(i) for i in range(g)])
        ax.set_yticks(ticks)
        ax.set_yticklabels([str(i) for i in range(g)])
        ax.tick_params(labelsize=6, length=0, pad=1)
        ax.set_xlabel("x", fontsize=7, labelpad=0)
        ax.set_ylabel("y", fontsize=7, labelpad=1, rotation=0)
        runs = 1 + sum(1 for a, b in zip(neighbours, neighbours[1:]) if b != a + 1)
        spans = sorted({keys_around(key, x, y)[-1] - keys_around(key, x, y)[0] + 1
                        for y in range(1, g - 1) for x in range(1, g - 1)})
        spread = f"{spans[0]}" if len(spans) == 1 else f"{spans[0]} to {spans[-1]}"
        ax.set_title(f"{name}\naround ({px}, {py}): keys {neighbours[0]}..{neighbours[-1]}, {runs} runs of consecutive"
                     f" keys;\nover all interior cells the 9 keys span {spread} keys", fontsize=6.5, loc="left")
        # The keys 0..63 on a line (the order in memory after the sort): where the 9 lie.
        line = fig.add_axes([(left - 0.4) / width, 0.24 / height, (side + 0.8) / width, 0.14 / height])
        for c in range(g * g):
            line.add_patch(Rectangle((c, 0), 1, 1, facecolor="#dd8452" if c == key(px, py) else
                                     "#f5c6a5" if c in neighbours else "white", edgecolor="#bbbbbb", linewidth=0.3))
        line.set_xlim(0, g * g)
        line.set_ylim(0, 1)
        line.set_yticks([])
        line.set_xticks([0.5, 16.5, 32.5, 48.5, 63.5])
        line.set_xticklabels(["0", "16", "32", "48", "63"])
        line.tick_params(labelsize=5.5, length=2, pad=1)
        line.set_ylabel("keys", fontsize=6, rotation=0, ha="right", va="center", labelpad=2)
    fig.suptitle("Lab 05: cell keys in linear vs Morton order on an 8 x 8 grid (a 2D drawing of lab 05's 3D keys),"
                 " the path through them,\nand one particle's 3 x 3 neighbourhood; under each grid, the keys 0..63 in"
                 " memory order after the sort", fontsize=8, y=0.985)
    return fig


def _sgemm_config(name):
    """The TileConfig<...> arguments of `using NAME = TileConfig<...>;` in the reference's
    sgemm_configs.hpp, named after the template's parameters in sgemm_tiled_kernel.cuh."""
    import re
    folder = os.path.join(ROOT, "solutions", "06-sgemm")
    with open(os.path.join(folder, "sgemm_tiled_kernel.cuh")) as f:
        template = re.search(r"template <((?:int \w+_,? ?)+)>\s*struct TileConfig", f.read())
    params = [p.split()[1].rstrip("_") for p in template.group(1).split(",")]
    with open(os.path.join(folder, "sgemm_configs.hpp")) as f:
        values = re.search(rf"using {name} = TileConfig<([^>]*)>;", f.read()).group(1)
    return dict(zip(params, (int(v) for v in values.split(","))))


def lab06_tiles(_, plt):
    """The reference SGEMM's tiling, from its parameters (LargeConfig of sgemm_configs.hpp, the
    shape sgemm.cu picks when the 128 x 128 tiles fill the GPU): a block's BM x BN tile of C and
    the BK-wide panels of A and B it walks K with; the warp tiles WM x WN; the outputs of each lane
    of a warp: TM x TN as 4 x 4 pieces kStepM rows and kStepN columns apart (the kernel's row0, col0
    and epilogue)."""
    from matplotlib.patches import Patch, Rectangle

    cfg = _sgemm_config("LargeConfig")
    small = _sgemm_config("SmallConfig")
    BM, BN, BK, WM, WN, TM, TN = (cfg[p] for p in ("BM", "BN", "BK", "WM", "WN", "TM", "TN"))
    warps_m, warps_n = BM // WM, BN // WN
    lanes_n = WN // TN                  # kLanesN
    lanes_m = WM // TM
    step_m, step_n = WM // (TM // 4), WN // (TN // 4)  # kStepM, kStepN
    assert lanes_m * lanes_n == WARP_LANES
    threads = warps_m * warps_n * WARP_LANES

    width, height = 8, 4.0
    fig = plt.figure(figsize=(width, height))
    axes = [fig.add_axes([(0.15 + 2.65 * k) / width, 0.5 / height, 2.3 / width, 2.3 / height]) for k in range(3)]
    c_tile, a_col, b_col, k_col = "#dd8452", "#8fb8de", "#9fd39f", "#2f5f8f"

    # (1) C = A B, drawn for M = N = 2 BM, K = BM / 2: A left of C, B above it.
    ax = axes[0]
    M, N, K = 2 * BM, 2 * BN, BM // 2
    tm, tn, k0 = 1, 0, 2 * BK   # the block's tile of C, and the K step drawn
    ax.add_patch(Rectangle((K + 8, 0), N, M, facecolor="white", edgecolor="black", linewidth=0.6))  # C
    ax.add_patch(Rectangle((K + 8 + tn * BN, tm * BM), BN, BM, facecolor=c_tile, edgecolor="black", linewidth=0.6))
    ax.add_patch(Rectangle((0, 0), K, M, facecolor="white", edgecolor="black", linewidth=0.6))  # A
    ax.add_patch(Rectangle((0, tm * BM), K, BM, facecolor=a_col, edgecolor="black", linewidth=0.5))
    ax.add_patch(Rectangle((k0, tm * BM), BK, BM, facecolor=k_col, edgecolor="none"))
    ax.add_patch(Rectangle((K + 8, -K - 8), N, K, facecolor="white", edgecolor="black", linewidth=0.6))  # B
    ax.add_patch(Rectangle((K + 8 + tn * BN, -K - 8), BN, K, facecolor=b_col, edgecolor="black", linewidth=0.5))
    ax.add_patch(Rectangle((K + 8 + tn * BN, -K - 8 + k0), BN, BK, facecolor=k_col, edgecolor="none"))
    ax.text(K / 2, M + 6, "A (M x K)", ha="center", va="top", fontsize=6.5)
    ax.text(K + 8 + (tn + 1) * BN + (N - (tn + 1) * BN) / 2, -K / 2 - 8, "B (K x N)", ha="center", va="center",
            fontsize=6.5)
    ax.text(K + 8 + N / 2, M + 6, "C (M x N)", ha="center", va="top", fontsize=6.5)
    ax.text(K + 8 + tn * BN + BN / 2, tm * BM + BM / 2, f"block's tile\n{BM} x {BN}", ha="center", va="center",
            fontsize=6.5)
    ax.text(-3, tm * BM + BM / 2, f"{BM}", ha="right", va="center", fontsize=6)
    ax.text(k0 + BK / 2, tm * BM - 3, f"BK = {BK}", ha="center", va="bottom", fontsize=6, color=k_col)
    ax.text(K + 8 + tn * BN - 3, -K - 8 + k0 + BK / 2, f"BK = {BK}", ha="right", va="center", fontsize=6, color=k_col)
    ax.set_xlim(-14, K + 8 + N + 2)
    ax.set_ylim(M + 14, -K - 16)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_title(f"(a) C = A B: a block computes a {BM} x {BN} tile\nof C, walking K in panels of BK = {BK} (A {BM}"
                 f" x {BK},\nB {BK} x {BN}); drawn for M = N = {M}, K = {K}", fontsize=7, loc="left")

    # (2) The block's tile: warp tiles.
    ax = axes[1]
    for wm in range(warps_m):
        for wn in range(warps_n):
            warp_index = wm * warps_n + wn
            face = "#f0a878" if warp_index == 0 else "#fbe0cc"
            ax.add_patch(Rectangle((wn * WN, wm * WM), WN, WM, facecolor=face, edgecolor="black", linewidth=0.7))
            ax.text(wn * WN + WN / 2, wm * WM + WM / 2, f"warp {warp_index}\n{WM} x {WN}", ha="center",
                    va="center", fontsize=6.5)
    ax.set_xlim(-4, BN + 4)
    ax.set_ylim(BM + 4, -4)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_title(f"(b) the block's {BM} x {BN} tile: {warps_m} x {warps_n} warp tiles\nof {WM} x {WN},"
                 f" {warps_m * warps_n} warps = {threads} threads", fontsize=7, loc="left")

    # (3) Warp 0's tile: 4 x 4 pieces, each owned by one lane.
    ax = axes[2]
    cmap = plt.get_cmap("tab20")
    lane_drawn = lanes_n + 1  # a lane away from the corner
    for lane in range(WARP_LANES):
        row0, col0 = (lane // lanes_n) * 4, (lane % lanes_n) * 4
        for p in range(TM // 4):
            for q in range(TN // 4):
                r, c = row0 + p * step_m, col0 + q * step_n
                mine = lane == lane_drawn
                ax.add_patch(Rectangle((c, r), 4, 4, facecolor="#c44e52" if mine else cmap(lane % 20),
                                       alpha=1 if mine else 0.35, edgecolor="white", linewidth=0.3))
                if p == 0 and q == 0:
                    ax.text(c + 2, r + 2, str(lane), ha="center", va="center", fontsize=4.5,
                            color="white" if mine else "black")
    ax.add_patch(Rectangle((0, 0), WN, WM, facecolor="none", edgecolor="black", linewidth=0.7))
    for q in range(1, TN // 4):
        ax.plot([q * step_n] * 2, [0, WM], color="black", linewidth=0.3, linestyle=":")
    for p in range(1, TM // 4):
        ax.plot([0, WN], [p * step_m] * 2, color="black", linewidth=0.3, linestyle=":")
    ax.set_xlim(-4, WN + 4)
    ax.set_ylim(WM + 4, -4)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_title(f"(c) warp 0's {WM} x {WN} tile: each lane owns TM x TN\n= {TM} x {TN} outputs, {TM // 4} x {TN // 4}"
                 f" pieces of 4 x 4 that lie\n{step_m} rows and {step_n} columns apart (red: lane {lane_drawn})",
                 fontsize=7, loc="left")

    handles = [Patch(facecolor=c_tile, edgecolor="black", linewidth=0.5, label="the block's tile of C"),
               Patch(facecolor=a_col, edgecolor="black", linewidth=0.5, label=f"A rows it reads ({BM} x K)"),
               Patch(facecolor=b_col, edgecolor="black", linewidth=0.5, label=f"B columns it reads (K x {BN})"),
               Patch(facecolor=k_col, label="the panels in shared memory at one K step"),
               Patch(facecolor="#c44e52", label=f"one thread's {TM} x {TN} outputs")]
    fig.legend(handles=handles, loc="lower center", ncol=5, fontsize=6, frameon=False)
    fig.suptitle(f"Lab 06: the reference SGEMM's tiles (LargeConfig in solutions/06-sgemm/sgemm_configs.hpp): BM x BN"
                 f" = {BM} x {BN},\nBK = {BK}, warp tiles WM x WN = {WM} x {WN}, TM x TN = {TM} x {TN} outputs per"
                 f" thread\n(sgemm.cu takes SmallConfig when the {BM} x {BN} tiles are fewer than the SMs:"
                 f" {small['BM']} x {small['BN']}, BK = {small['BK']}, warps {small['WM']} x {small['WN']},"
                 f" {small['TM']} x {small['TN']} per thread)", fontsize=8, y=0.985)
    return fig


FIGURES = [
    # (table under docs/results, SVG under docs/figures, function)
    ("lab01-h200.tsv", "lab01-bandwidth.svg", lab01_bandwidth),
    ("lab02-emu.tsv", "lab02-bytes-used.svg", lab02_bytes_used),
    ("lab05-emu.tsv", "lab05-density-reorder.svg", lab05_density_and_reorder),
    ("sgemm-h200-ladder.tsv", "lab06-ladder.svg", sgemm_ladder),
    ("sgemm-h200-ladder.tsv", "lab06-roofline.svg", sgemm_roofline),
    ("lab04-emu.tsv", "lab04-shared-work.svg", lab04_shared_work),
    ("lab04-warp64.tsv", "lab04-warp64-error.svg", lab04_warp64_error),
    ("lab02-h200.tsv", "lab02-h200.svg", lab02_h200),
    ("lab03-h200.tsv", "lab03-h200.svg", lab03_h200),
    # Algorithm diagrams: the geometry computed from the parameters (None: no table; the function
    # says where its parameters come from).
    (None, "lab00-grid-stride.svg", lab00_grid_stride),
    ("lab01-access-patterns.tsv", "lab01-warp-sectors.svg", lab01_warp_sectors),
    (None, "lab03-banks-padding.svg", lab03_banks_padding),
    (None, "lab04-reduction-tree.svg", lab04_reduction_tree),
    (None, "lab05-scan.svg", lab05_scan),
    (None, "lab05-cells-morton.svg", lab05_cells_morton),
    (None, "lab06-tiles.svg", lab06_tiles),
]


def main():
    try:
        import matplotlib
    except ImportError:
        # The Debian package installs matplotlib for the system interpreter, which the python3
        # that ran this script (pyenv, a venv, the one CMake found) may not see: try that one.
        system = "/usr/bin/python3"
        if os.path.exists(system) and os.path.realpath(sys.executable) != os.path.realpath(system):
            os.execv(system, [system, os.path.abspath(__file__)] + sys.argv[1:])
        sys.exit("figures: python3-matplotlib is missing (sudo apt-get install python3-matplotlib;"
                 " cmake/packages.txt, group docs)")
    matplotlib.use("Agg")
    matplotlib.rcParams["svg.hashsalt"] = "gpulab"  # stable ids in the SVG
    matplotlib.rcParams["svg.fonttype"] = "none"    # text stays text
    import matplotlib.pyplot as plt

    out_dir = os.path.join(ROOT, "docs", "figures")
    os.makedirs(out_dir, exist_ok=True)
    for table, svg, draw in FIGURES:
        rows = read_tsv(os.path.join(ROOT, "docs", "results", table)) if table else None
        fig = draw(rows, plt)
        path = os.path.join(out_dir, svg)
        fig.savefig(path, format="svg", metadata={"Date": None, "Creator": "gpulab docs/figures.py"})
        plt.close(fig)
        source = f"docs/results/{table}" if table else f"{draw.__name__} (a diagram, no table)"
        print(f"figures: {source} -> docs/figures/{svg}")


if __name__ == "__main__":
    main()
