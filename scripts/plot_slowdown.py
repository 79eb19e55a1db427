#!/usr/bin/python3
# SPDX-License-Identifier: BSD-2-Clause
"""Draw slowdown against message size for W1-W5 from homa-sim runs.

For each workload, runs `homa-sim --json` at the given load (and, with
--ablations, the same run with --priorities 1, --overcommit 1, --pacer
off and --set max_nic_queue_ns=5000, the kernel's 5 us NIC allowance,
which simulated hosts do not have by default) and writes
OUT/slowdown_wN.png: a log-scale x axis of
message-size buckets (the deciles of the workload, each drawn at its
largest size), a log-scale y axis of slowdown, one line for P50 and one
for P99 (ablations: P99 only, dashed).  The JSON of every run is kept
next to the images (OUT/slowdown_wN.json) so that the numbers under a
picture can be read.

Needs python3-matplotlib (Debian).  Example, from the repository root
after `make` (homa-sim in build/tools):

    scripts/plot_slowdown.py --load 0.8 --ablations
"""

import argparse
import json
import os
import shutil
import subprocess
import sys

# Messages per run: enough for stable P99s in the smallest buckets; the
# long-message workloads cost far more simulation per message.
DEFAULT_MESSAGES = {"w1": 100000, "w2": 100000, "w3": 50000,
                    "w4": 20000, "w5": 10000}

ABLATIONS = [
    ("one priority (--priorities 1)", ["--priorities", "1"]),
    ("overcommit 1 (--overcommit 1)", ["--overcommit", "1"]),
    ("pacer off (--pacer off)", ["--pacer", "off"]),
    ("kernel's 5 us NIC allowance (--set max_nic_queue_ns=5000)",
     ["--set", "max_nic_queue_ns=5000"]),
]


def find_sim(root):
    """The homa-sim binary: build/tools/homa-sim under root, else PATH."""
    for cand in (os.path.join(root, "build", "tools", "homa-sim"),
                 shutil.which("homa-sim")):
        if cand and os.access(cand, os.X_OK):
            return cand
    return None


def run_sim(args, workload, extra):
    """Run homa-sim for workload with extra options; return its JSON."""
    messages = args.messages or DEFAULT_MESSAGES.get(workload, 20000)
    cmd = [args.sim, "--json", "--workload", workload,
           "--load", str(args.load), "--hosts", str(args.hosts),
           "--messages", str(messages),
           "--warmup", str(messages // 10), "--seed", str(args.seed)]
    if args.workload_dir:
        cmd += ["--workload-dir", args.workload_dir]
    cmd += extra
    print("running:", " ".join(cmd), flush=True)
    out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE,
                         universal_newlines=True).stdout
    result = json.loads(out)
    result["command"] = " ".join(["homa-sim"] + cmd[1:])
    return result


def curve(result, key):
    """x (bucket bounds) and y (slowdowns) of the buckets with messages."""
    xs, ys = [], []
    for b in result["buckets"]:
        if b["count"] > 0:
            xs.append(b["max_bytes"])
            ys.append(b[key])
    return xs, ys


def plot(args, workload, base, ablations):
    """Write OUT/slowdown_<workload>.png from the runs."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FormatStrFormatter

    fig, ax = plt.subplots(figsize=(10, 4.8), dpi=110)
    xs, p50 = curve(base, "p50_slowdown")
    _, p99 = curve(base, "p99_slowdown")
    ax.plot(xs, p99, "o-", color="tab:red", label="P99")
    ax.plot(xs, p50, "s-", color="tab:blue", label="P50")
    colors = ["tab:purple", "tab:green", "tab:orange", "tab:brown"]
    for (name, res), color in zip(ablations, colors):
        axs, ays = curve(res, "p99_slowdown")
        ax.plot(axs, ays, "^--", color=color, label="P99, " + name)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("message size (bytes, largest of each decile bucket)")
    ax.set_ylabel("slowdown (completion time / idle network)")
    ax.set_title("%s, %d%% load, %d hosts, %s Gbit/s, seed %d: "
                 "short P99 %.2f" % (workload.upper(), round(args.load * 100),
                                     base["hosts"],
                                     "%g" % base["link_gbps"], args.seed,
                                     base["short_p99_slowdown"]),
                 fontsize=10)
    ax.grid(True, which="major", alpha=0.4)
    ax.grid(True, which="minor", alpha=0.15)
    ax.set_ylim(bottom=1.0)
    # Plain numbers on the slowdown axis (it often spans one decade).
    ax.yaxis.set_major_formatter(FormatStrFormatter("%g"))
    ax.yaxis.set_minor_formatter(FormatStrFormatter("%g"))
    ax.tick_params(axis="y", which="minor", labelsize=7)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    fig.tight_layout()
    path = os.path.join(args.out, "slowdown_%s.png" % workload)
    fig.savefig(path)
    plt.close(fig)
    print("wrote", path, flush=True)


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    p = argparse.ArgumentParser(
        description="Run homa-sim for W1-W5 and draw P50 and P99 "
        "slowdown against message size, one PNG per workload "
        "(OUT/slowdown_wN.png, with the runs' JSON beside it).")
    p.add_argument("--sim", help="homa-sim binary [build/tools/homa-sim, "
                   "else from PATH]")
    p.add_argument("--workload-dir", help="where w1..w5.cdf live "
                   "[homa-sim's default]")
    p.add_argument("--workloads", default="w1,w2,w3,w4,w5",
                   help="comma-separated list [w1,w2,w3,w4,w5]")
    p.add_argument("--load", type=float, default=0.8,
                   help="fraction of the host links [0.8]")
    p.add_argument("--hosts", type=int, default=16, help="hosts [16]")
    p.add_argument("--messages", type=int, default=0,
                   help="messages per run [w1, w2 100000; w3 50000; "
                   "w4 20000; w5 10000]; a tenth is warm-up")
    p.add_argument("--seed", type=int, default=1, help="seed [1]")
    p.add_argument("--ablations", action="store_true",
                   help="also run --priorities 1, --overcommit 1, "
                   "--pacer off and --set max_nic_queue_ns=5000 and draw "
                   "their P99")
    p.add_argument("--out", default=os.path.join(root, "docs", "img"),
                   help="output folder [docs/img]")
    p.add_argument("--replot", action="store_true",
                   help="draw again from the JSON kept in OUT by an "
                   "earlier run, without simulating")
    args = p.parse_args()

    args.sim = args.sim or find_sim(root)
    if not args.sim and not args.replot:
        p.error("homa-sim not found: build it (make) or pass --sim")
    if not 0.0 < args.load <= 1.0:
        p.error("--load must be in (0, 1]")
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        sys.exit("plot_slowdown.py: matplotlib is missing: install the "
                 "Debian package python3-matplotlib and run this script "
                 "with /usr/bin/python3")
    os.makedirs(args.out, exist_ok=True)
    for workload in [w.strip() for w in args.workloads.split(",") if w]:
        if args.replot:
            with open(os.path.join(args.out,
                                   "slowdown_%s.json" % workload)) as f:
                kept = json.load(f)
            args.load = kept["base"]["load"]
            args.seed = kept["base"]["seed"]
            plot(args, workload, kept["base"],
                 list(kept["ablations"].items()))
            continue
        base = run_sim(args, workload, [])
        ablations = []
        if args.ablations:
            for name, extra in ABLATIONS:
                ablations.append((name, run_sim(args, workload, extra)))
        with open(os.path.join(args.out, "slowdown_%s.json" % workload),
                  "w") as f:
            json.dump({"base": base,
                       "ablations": {n: r for n, r in ablations}}, f,
                      indent=1)
            f.write("\n")
        plot(args, workload, base, ablations)


if __name__ == "__main__":
    main()
