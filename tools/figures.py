#!/usr/bin/env python3
"""Turns measured tables under docs/results/ into the SVG figures the lessons show.

    python3 tools/figures.py            (or ./gpulab figures, or cmake --build B --target figures)

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


def lab02_bytes_used(rows, plt):
    """Grouped bars: bytes used per byte moved, one group per kernel, one bar per layout."""
    kernels = []
    layouts = []
    for r in rows:
        if r["kernel"] not in kernels:
            kernels.append(r["kernel"])
        if r["layout"] not in layouts:
            layouts.append(r["layout"])
    value = {(r["layout"], r["kernel"]): float(r["bytes_used_per_byte_moved"]) for r in rows}
    fig, ax = plt.subplots(figsize=(8, 3.6))
    width = 0.8 / len(layouts)
    for j, layout in enumerate(layouts):
        xs, ys = [], []
        for i, k in enumerate(kernels):
            if (layout, k) in value:
                xs.append(i - 0.4 + width * (j + 0.5))
                ys.append(value[(layout, k)])
        bars = ax.bar(xs, ys, width, label=layout)
        for x, y in zip(xs, ys):
            ax.text(x, y + 0.02, f"{y:.2f}", ha="center", va="bottom", fontsize=7)
    ax.set_xticks(range(len(kernels)))
    ax.set_xticklabels(kernels, fontsize=8)
    ax.set_ylim(0, 1.15)
    ax.set_ylabel("bytes used per byte moved")
    ax.axhline(1.0, color="grey", linewidth=0.5)
    ax.set_title("Lab 02 on the emulator: 32-byte sectors per warp-wide request, n = 32768", fontsize=9)
    ax.legend(fontsize=7, ncol=len(layouts), loc="upper center", bbox_to_anchor=(0.5, -0.14), frameon=False)
    fig.tight_layout()
    return fig


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
    right.axhline(stores[0][2], color="grey", linewidth=0.5, linestyle="--")
    right.text(-0.45, stores[0][2] + 0.3, "ideal stores", fontsize=7, ha="left", color="grey")
    right.set_xticks(list(xs))
    right.set_xticklabels(labels, fontsize=8)
    right.set_ylabel("reorder: sectors per request", fontsize=8)
    right.legend(fontsize=7, frameon=False)
    fig.suptitle("Lab 05 on the emulator (n = 3000, warp size 32): 32-byte sectors per warp-wide request", fontsize=9)
    fig.tight_layout()
    return fig


FIGURES = [
    # (table under docs/results, SVG under docs/figures, function)
    ("lab02-emu.tsv", "lab02-bytes-used.svg", lab02_bytes_used),
    ("lab05-emu.tsv", "lab05-density-reorder.svg", lab05_density_and_reorder),
]


def main():
    try:
        import matplotlib
    except ImportError:
        sys.exit("figures: python3-matplotlib is missing (sudo apt-get install python3-matplotlib;"
                 " tools/packages.txt, group docs)")
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
        fig.savefig(path, format="svg", metadata={"Date": None, "Creator": "gpulab tools/figures.py"})
        plt.close(fig)
        print(f"figures: docs/results/{table} -> docs/figures/{svg}")


if __name__ == "__main__":
    main()
