#!/usr/bin/env python3
"""Plot bench/device_bench's CSV (--csv FILE): speed-up over CUB and share of the bandwidth.

Usage: scripts/plot_device_bench.py CSV PNG [MACHINE]   (needs matplotlib)
  device_bench.csv                 reduce and the scans, per n
  device_bench_copy_if.csv         copy_if, copy_flagged, copy_if_unordered, per n
  device_bench_histogram_even.csv  histogram_even, per bin count
  device_bench_group_by.csv        group_by, per number of distinct keys
MACHINE (default H200) names the GPU the CSV was measured on, in the title.
"""
import csv
import math
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def series_of(rows, a, b):
    """The distinct (row[a], row[b]) pairs, in the order of the table."""
    series = []
    for r in rows:
        if (r[a], r[b]) not in series:
            series.append((r[a], r[b]))
    return series


def points(rows, x, **match):
    """(int(row[x]), row) of the rows whose columns hold the values in match, sorted by x."""
    return sorted((int(r[x]), r) for r in rows if all(r[k] == v for k, v in match.items()))


def finish(fig, axes, xlabel, title, dst, legend_size=6):
    """Labels, grids and legends on every panel, the figure's title, and the file."""
    for ax in fig.axes:
        ax.set_xlabel(xlabel)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=legend_size)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(dst, dpi=90)


def histogram(rows, dst, machine):
    fig, axes = plt.subplots(1, 2, figsize=(12, 5))
    for i, (samples, data) in enumerate(series_of(rows, "samples", "data")):
        pts = points(rows, "bins", samples=samples, data=data)
        x = [math.log2(b) for b, _ in pts]
        label, color = f"{samples} {data}", f"C{i}"
        vs = [(xi, r) for xi, (_, r) in zip(x, pts) if r["cub_us"] != "-"]  # CUB ran
        axes[0].plot([a for a, _ in vs], [float(r["speedup"]) for _, r in vs], marker="o", color=color, label=label)
        axes[1].plot(x, [float(r["ours_pct_read"]) for _, r in pts], marker="o", color=color, label=f"{label} ours")
        axes[1].plot([a for a, _ in vs], [float(r["cub_pct_read"]) for _, r in vs], linestyle="--", color=color,
                     label=f"{label} CUB")
    axes[0].axhline(1.0, color="gray", linewidth=0.8)
    axes[0].set_yscale("log")
    axes[0].set_title("histogram_even: CUB time / tilewise time (CUB does not run at 2^24 bins)")
    axes[1].set_title("histogram_even: % of the read bandwidth")
    finish(fig, axes, "log2(bins)", f"tilewise histogram_even vs CUB HistogramEven, 2^28 samples "
           f"({machine}, read {rows[0]['read_gbs']} GB/s measured in the same run)", dst)


def compaction(rows, dst, machine):
    algos = [a for a in ["copy_if", "copy_flagged", "copy_if_unordered"] if any(r["algorithm"] == a for r in rows)]
    types = ["int32", "int64", "float", "double"]
    styles = {"1": ":", "50": "-", "99": "-."}
    fig, axes = plt.subplots(2, len(algos), figsize=(6 * len(algos), 8), squeeze=False)
    for col, algo in enumerate(algos):
        for i, t in enumerate(types):
            for pct, style in styles.items():
                pts = points(rows, "n", algorithm=algo, type=t, percent=pct)
                if not pts:
                    continue
                x = [math.log2(n) for n, _ in pts]
                axes[0][col].plot(x, [float(r["speedup"]) for _, r in pts], marker="o", linestyle=style,
                                  color=f"C{i}", label=f"{t} {pct} %")
                if pct == "50":
                    axes[1][col].plot(x, [float(r["ours_pct_copy"]) for _, r in pts], marker="o", color=f"C{i}",
                                      label=f"{t} ours")
                    axes[1][col].plot(x, [float(r["cub_pct_copy"]) for _, r in pts], linestyle="--", color=f"C{i}",
                                      label=f"{t} CUB")
        cub = "DeviceSelect::Flagged" if algo == "copy_flagged" else "DeviceSelect::If"
        axes[0][col].axhline(1.0, color="gray", linewidth=0.8)
        axes[0][col].set_title(f"{algo}: {cub} time / ours", fontsize=10)
        axes[1][col].set_title(f"{algo}, 50 % kept: % of copy bandwidth", fontsize=10)
    finish(fig, axes, "log2(n)", f"tilewise compaction vs CUB, 1 / 50 / 99 % kept "
           f"({machine}, copy {rows[0]['copy_gbs']} GB/s measured in the same run)", dst)


def group_by(rows, dst, machine):
    fig, axes = plt.subplots(1, 2, figsize=(12, 5))
    for i, (types, keys) in enumerate(series_of(rows, "types", "keys")):
        pts = points(rows, "distinct", types=types, keys=keys)
        x = [math.log2(d) for d, _ in pts]
        label, color = f"{types} {keys}", f"C{i}"
        axes[0].plot(x, [float(r["speedup"]) for _, r in pts], marker="o", color=color, label=label)
        read = [float(r["read_floor_us"]) for _, r in pts]
        ours = [float(r["ours_us"]) for _, r in pts]
        cub = [min(float(r["cub_all_bits_us"]), float(r["cub_used_bits_us"])) for _, r in pts]
        axes[1].plot(x, [100 * f / o for f, o in zip(read, ours)], marker="o", color=color, label=f"{label} ours")
        axes[1].plot(x, [100 * f / c for f, c in zip(read, cub)], linestyle="--", color=color, label=f"{label} CUB")
    n = int(rows[0]["n"])
    goals = [(64, 6.0), (4096, 5.0), (1 << 20, 2.0), (n, 1.0)]  # int32 pairs, uniform keys
    axes[0].plot([math.log2(d) for d, _ in goals], [g for _, g in goals], linestyle="none", marker="x",
                 markersize=9, color="red", label="goal (int32, uniform)")
    axes[0].axhline(1.0, color="gray", linewidth=0.8)
    axes[0].set_ylim(bottom=0)
    axes[0].set_title("group_by: faster CUB (SortPairs + ReduceByKey) time / tilewise time")
    axes[1].set_title("group_by: % of the read bandwidth (reading the pairs once)")
    finish(fig, axes, f"log2(distinct keys) of 2^{round(math.log2(n))} pairs",
           f"tilewise group_by vs CUB radix sort + reduce-by-key ({machine})", dst)


def main(src, dst, machine):
    rows = list(csv.DictReader(open(src)))
    if rows and "bins" in rows[0]:
        histogram(rows, dst, machine)
        return
    if rows and "percent" in rows[0]:
        compaction(rows, dst, machine)
        return
    if rows and "distinct" in rows[0]:
        group_by(rows, dst, machine)
        return
    algos = sorted({r["algorithm"] for r in rows}, key=["reduce", "inclusive_scan", "exclusive_scan"].index)
    types = ["int32", "int64", "float", "double"]
    fig, axes = plt.subplots(2, len(algos), figsize=(5 * len(algos), 8), squeeze=False)
    for col, algo in enumerate(algos):
        for t in types:
            pts = points(rows, "n", algorithm=algo, type=t)
            if not pts:
                continue
            x = [math.log2(n) for n, _ in pts]
            axes[0][col].plot(x, [float(r["speedup"]) for _, r in pts], marker="o", label=t)
            axes[1][col].plot(x, [float(r["ours_pct_copy"]) for _, r in pts], marker="o", label=f"{t} ours")
            axes[1][col].plot(x, [float(r["cub_pct_copy"]) for _, r in pts], linestyle="--", label=f"{t} CUB")
        axes[0][col].axhline(1.0, color="gray", linewidth=0.8)
        axes[0][col].set_title(f"{algo}: CUB time / tilewise time")
        axes[1][col].set_title(f"{algo}: % of device-to-device copy bandwidth")
    copy = rows[0].get("copy_gbs", "?")
    finish(fig, axes, "log2(n)",
           f"tilewise device-wide algorithms vs CUB ({machine}, copy {copy} GB/s measured in the same run)", dst,
           legend_size=7)


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2], sys.argv[3] if len(sys.argv) == 4 else "H200")
