#!/usr/bin/env python3
"""Plots the scaling benchmark's JSON (src/bin/scaling.rs): one PNG per axis.

    python3 plot_scaling.py OUT_DIR RUN.json [RUN.json ...]
    python3 plot_scaling.py --tables RUN.json [RUN.json ...]   (markdown tables, no plots)

Several JSON files (e.g. one run per axis) are merged: their points are plotted together.

Each PNG has four panels against the axis (log scale): client CPU per unit of work, wall time,
peak RSS of the point's process, and bytes allocated during the read, one line per client.
"Per unit of work" is per million values read (rows x columns), so a flat line is linear cost.

Bench-only dependency: matplotlib. It is not part of the project's requirements; install it
into the test server's venv (the one scripts/server.sh uses):
    ~/.cache/chnative/venv-chdb-26.9.0/bin/pip install matplotlib
and run the script with that venv's python.
"""

import json
import os
import sys


LABELS = {
    "chnative": "chnative (native TCP, columns)",
    "official-rowbinary": "clickhouse 0.15.3 (HTTP, RowBinary rows)",
    "official-native": "clickhouse 0.15.3 (HTTP, Native blocks)",
    "clickhouse-rs": "clickhouse-rs 1.1.0-alpha.1 (native TCP, blocks)",
}
STYLE = {
    "chnative": ("tab:blue", "o"),
    "official-rowbinary": ("tab:orange", "s"),
    "official-native": ("tab:green", "^"),
    "clickhouse-rs": ("tab:red", "D"),
}
AXES = {
    "rows": ("rows read (one UInt64 column)", "rows"),
    "columns": ("UInt64 columns (100k rows)", "columns"),
    "streams": ("parallel streams sharing 10M rows (one column)", "streams"),
    "block": ("max_block_size, rows (10M rows, one column)", "block"),
}


def tables(paths):
    points = []
    for src in paths:
        with open(src) as f:
            points += json.load(f)["points"]
    for axis in AXES:
        pts = [p for p in points if p["axis"] == axis]
        if not pts:
            continue
        xs = sorted({p["x"] for p in pts})
        clients = [c for c in LABELS if any(p["client"] == c for p in pts)]
        print(f"\n{AXES[axis][0]}: client CPU ms per million values / peak RSS MiB / MiB allocated\n")
        print("| " + AXES[axis][1] + " | " + " | ".join(clients) + " |")
        print("|---:|" + "---:|" * len(clients))
        for x in xs:
            cells = []
            for c in clients:
                p = next((p for p in pts if p["x"] == x and p["client"] == c), None)
                if p is None:
                    cells.append("–")
                    continue
                per = p["cpu"] / (p["rows"] * p["cols"] / 1e6) * 1e3
                cells.append(f"{per:.1f} / {p['maxrss_kib'] / 1024:.0f} / {p['bytes'] / 2**20:.1f}")
            print(f"| {x:,} | " + " | ".join(cells) + " |")


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "--tables":
        return tables(sys.argv[2:])
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir = sys.argv[1]
    runs = []
    for src in sys.argv[2:]:
        with open(src) as f:
            runs.append(json.load(f))
    os.makedirs(out_dir, exist_ok=True)
    for axis in sorted({p["axis"] for r in runs for p in r["points"]}):
        # The run that measured this axis (the last one, if several did).
        data = [r for r in runs if any(p["axis"] == axis for p in r["points"])][-1]
        points = data["points"]
        title, stem = AXES.get(axis, (axis, axis))
        fig, panels = plt.subplots(2, 2, figsize=(12, 8.5))
        fig.suptitle(
            f"How a read's cost grows: {title}\n"
            f"{data['started']}, {data['reps']} rep(s) per point (median), loaded 2-core VM "
            f"(load {data['loadavg_start']}): compare clients at the same x, not runs",
            fontsize=10,
        )
        specs = [
            ("client CPU s per million values", lambda p: p["cpu"] / (p["rows"] * p["cols"] / 1e6), "linear"),
            ("wall s", lambda p: p["wall"], "log"),
            ("peak RSS of the process, MiB", lambda p: p["maxrss_kib"] / 1024, "log"),
            ("bytes allocated during the read, MiB", lambda p: max(p["bytes"], 1) / 2**20, "log"),
        ]
        for ax, (ylabel, fy, yscale) in zip(panels.flat, specs):
            for client in LABELS:
                pts = sorted((p for p in points if p["axis"] == axis and p["client"] == client), key=lambda p: p["x"])
                if not pts:
                    continue
                color, marker = STYLE[client]
                ax.plot([p["x"] for p in pts], [fy(p) for p in pts], marker=marker, color=color, label=LABELS[client])
            ax.set_xscale("log", base=2 if axis in ("streams", "block") else 10)
            ax.set_yscale(yscale)
            if yscale == "linear":
                ax.set_ylim(bottom=0)
            ax.set_xlabel(title)
            ax.set_ylabel(ylabel)
            ax.grid(True, which="both", alpha=0.3)
        panels.flat[0].legend(fontsize=8)
        fig.tight_layout()
        path = os.path.join(out_dir, f"scaling-{stem}.png")
        fig.savefig(path, dpi=90)
        plt.close(fig)
        print(path)


if __name__ == "__main__":
    main()
