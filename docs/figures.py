#!/usr/bin/env python3
"""Turns measured tables under docs/results/ into the SVG figures the lessons show.

    python3 docs/figures.py            (or ./gpulab figures, or cmake --build B --target figures)

Each figure is one function below, registered in FIGURES with the table it reads and the SVG it
writes (under docs/figures/). The tables are tab-separated with a header row; lines starting
with '#' are comments (where the numbers came from). Output is deterministic for a given table
(fixed size, no dates in the SVG), so a regenerated figure only shows up in `git diff` when its
data changed.
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


def lab01_sectors(rows, plt):
    """Diagram, not a measurement: which 32-byte sector each lane of one warp-wide load touches.

    Computed from the parameters in the table (lanes, bytes per lane, distance between neighbouring
    lanes' addresses, sector size): lane i reads bytes [i * stride, i * stride + bytes_per_lane) and
    touches the sectors those bytes fall in. The count per pattern must equal the sectors per
    request the emulator measured (column emulator_sectors_per_request), else the script stops."""
    from matplotlib.patches import Rectangle

    fig, axes = plt.subplots(len(rows), 1, figsize=(8, 1.9 * len(rows)))
    if len(rows) == 1:
        axes = [axes]
    for ax, r in zip(axes, rows):
        lanes = int(r["lanes"])
        size = int(r["bytes_per_lane"])
        stride = int(r["lane_stride_bytes"])
        sector = int(r["sector_bytes"])
        touched = {}  # sector number -> bytes of it the lanes use
        lane_sector = []
        for lane in range(lanes):
            first, last = lane * stride // sector, (lane * stride + size - 1) // sector
            lane_sector.append(first)
            for s in range(first, last + 1):
                lo, hi = max(lane * stride, s * sector), min(lane * stride + size, (s + 1) * sector)
                touched[s] = touched.get(s, 0) + hi - lo
        count = len(touched)
        if count != int(r["emulator_sectors_per_request"]):
            sys.exit(f"figures: {r['pattern']}: {count} sectors computed, the emulator measured "
                     f"{r['emulator_sectors_per_request']}")
        # Lanes on top, one box each; the touched sectors below, drawn side by side in address
        # order (sectors far apart in memory are drawn with a gap and the distance written).
        sectors = sorted(touched)
        lane_w = 1.0
        sec_w = lanes * lane_w / max(len(sectors), 4) * 0.9
        gap = sec_w * 0.1 if len(sectors) > 4 else 0.0
        sec_x = {s: i * (sec_w + gap) for i, s in enumerate(sectors)}
        total_w = len(sectors) * (sec_w + gap) - gap
        offset = (lanes * lane_w - total_w) / 2
        for lane in range(lanes):
            ax.add_patch(Rectangle((lane * lane_w, 2.0), lane_w * 0.9, 0.6, facecolor="#4c72b0",
                                   edgecolor="none"))
            if lane % 8 == 0 or lane == lanes - 1:
                ax.text(lane * lane_w + 0.45, 2.7, str(lane), ha="center", va="bottom", fontsize=6)
            s = lane_sector[lane]
            used_x = offset + sec_x[s] + sec_w * ((lane * stride) % sector) / sector
            ax.plot([lane * lane_w + 0.45, used_x + sec_w * size / sector / 2], [2.0, 0.8],
                    color="#4c72b0", linewidth=0.4)
        for s in sectors:
            x = offset + sec_x[s]
            used = touched[s]
            start = min((lane * stride) % sector for lane in range(lanes) if lane_sector[lane] == s)
            ax.add_patch(Rectangle((x + sec_w * start / sector, 0.2), sec_w * used / sector, 0.6,
                                   facecolor="#dd8452", edgecolor="none"))
            ax.add_patch(Rectangle((x, 0.2), sec_w, 0.6, facecolor="none", edgecolor="black",
                                   linewidth=0.8))
        if gap:
            ax.text(lanes * lane_w / 2, 0.1, f"(in memory each sector lies {sector * (sectors[1] - sectors[0])}"
                    " bytes after the previous one; drawn side by side)", ha="center", va="top",
                    fontsize=6.5)
        moved = count * sector
        needed = lanes * size
        apart = f"{stride} bytes apart" if stride != size else "neighbouring floats"
        ax.text(-0.5, 1.4, "lanes", ha="right", va="center", fontsize=7)
        ax.text(-0.5, 0.5, "sectors", ha="right", va="center", fontsize=7)
        ax.set_title(f"{r['pattern']}: lanes read {apart} -> {count} sectors of {sector} B per request, "
                     f"{needed} of {moved} bytes used ({100 * needed / moved:.1f}%)", fontsize=8,
                     loc="left")
        ax.set_xlim(-4.5, lanes * lane_w + 0.5)
        ax.set_ylim(-0.3, 3.1)
        ax.axis("off")
    axes[-1].text(lanes * lane_w / 2, 0.05, "orange: the bytes of a sector that a lane asked for; "
                  "white: bytes moved but not used", ha="center", va="top", fontsize=7)
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
# ("H200 measurements" in labs/03-bank-conflicts/README.md). tile[32][34] is the hand-in
# padded_by_two.cu, not a step; the reference until 2026-11-30 was step 3's tile[32][33], not drawn.
LAB03_VERSIONS = {
    "naive (the stub)": "1 naive (the stub; its doubles: an unpadded tile)",
    "tile[32][32]": "2 tile[32][32], unpadded",
    "tile[32][32], XOR swizzle": "4 tile[32][32], XOR swizzle",
    "tile[32][34] (the old reference, padded by two)": "tile[32][34], padded by two (a hand-in, not a step)",
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


FIGURES = [
    # (table under docs/results, SVG under docs/figures, function)
    ("lab01-h200.tsv", "lab01-bandwidth.svg", lab01_bandwidth),
    ("lab01-access-patterns.tsv", "lab01-sectors.svg", lab01_sectors),
    ("lab02-emu.tsv", "lab02-bytes-used.svg", lab02_bytes_used),
    ("lab05-emu.tsv", "lab05-density-reorder.svg", lab05_density_and_reorder),
    ("sgemm-h200-ladder.tsv", "lab06-ladder.svg", sgemm_ladder),
    ("sgemm-h200-ladder.tsv", "lab06-roofline.svg", sgemm_roofline),
    ("lab04-emu.tsv", "lab04-shared-work.svg", lab04_shared_work),
    ("lab04-warp64.tsv", "lab04-warp64-error.svg", lab04_warp64_error),
    ("lab02-h200.tsv", "lab02-h200.svg", lab02_h200),
    ("lab03-h200.tsv", "lab03-h200.svg", lab03_h200),
]


def main():
    try:
        import matplotlib
    except ImportError:
        sys.exit("figures: python3-matplotlib is missing (sudo apt-get install python3-matplotlib;"
                 " cmake/packages.txt, group docs)")
    matplotlib.use("Agg")
    matplotlib.rcParams["svg.hashsalt"] = "gpulab"  # stable ids in the SVG
    matplotlib.rcParams["svg.fonttype"] = "none"    # text stays text
    import matplotlib.pyplot as plt

    out_dir = os.path.join(ROOT, "docs", "figures")
    os.makedirs(out_dir, exist_ok=True)
    for table, svg, draw in FIGURES:
        rows = read_tsv(os.path.join(ROOT, "docs", "results", table))
        fig = draw(rows, plt)
        path = os.path.join(out_dir, svg)
        fig.savefig(path, format="svg", metadata={"Date": None, "Creator": "gpulab docs/figures.py"})
        plt.close(fig)
        print(f"figures: docs/results/{table} -> docs/figures/{svg}")


if __name__ == "__main__":
    main()
