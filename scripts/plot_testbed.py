#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""plot_testbed.py - tables and plots of a scripts/testbed.sh run.

Usage: plot_testbed.py --raw DIR --out DIR

Reads what testbed.sh left in the raw folder: facts.txt, and one homa-perf
--json output per client and run, named W_LOAD_PROTO_cN.json.  The clients'
histograms of a run (log-linear buckets, [low, width, count] each) are
merged bucket by bucket, so the percentiles are those of all the run's RPCs,
computed with homa_histogram_percentile's rule: the value of rank
ceil(q/100 * count), reported as the middle of its bucket clamped to the
smallest and largest values recorded.

Writes into the out folder:
  tables.md     per workload and load: throughput, failures, late
                arrivals and CPU per protocol, then P50/P99 slowdown (and
                RTT) per size bucket, Homa next to TCP; the target check
                (W4 at 80%: shortest 10% of messages, Homa P99 slowdown
                <= 1/5 of TCP's)
  summary.json  the same numbers, and "all_completed": every RPC issued
                in every run was answered

A run is invalid when either protocol's generators handed more than 1% of
their arrivals over more than 1 ms after their time (summed over the
clients): the load offered was not the one asked for, so its table gives
no Homa/TCP ratio and the target check no verdict.
  testbed_RATE_W.png  slowdown per size bucket, one panel per load (needs
                matplotlib; skipped with a note without it)
Exit status: 0, or 1 when there are no results or a file cannot be read.
"""

import argparse
import glob
import json
import math
import os
import re
import sys

PROTOS = ("homa", "tcp")
LATE_LIMIT = 0.01      # more late arrivals than this share: invalid
RUN_RE = re.compile(r"^(w[1-5])_([0-9.]+)_(homa|tcp)_c([0-9]+)\.json$")


def read_facts(path):
    """The key=value lines of facts.txt as a dict (empty if missing)."""
    facts = {}
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            for line in f:
                if "=" in line:
                    k, v = line.rstrip("\n").split("=", 1)
                    facts[k] = v
    return facts


class Hist:
    """A merge of homa-perf histograms (as in its JSON output)."""

    def __init__(self):
        self.count = 0
        self.min = None
        self.max = None
        self.scale = 1.0
        self.buckets = {}          # low -> [width, count]

    def add(self, h):
        """Merge one JSON histogram object into this one."""
        if not h or h.get("count", 0) == 0:
            return
        self.scale = h["scale"]
        self.count += h["count"]
        self.min = h["min"] if self.min is None else min(self.min, h["min"])
        self.max = h["max"] if self.max is None else max(self.max, h["max"])
        for low, width, n in h["b"]:
            if low in self.buckets:
                self.buckets[low][1] += n
            else:
                self.buckets[low] = [width, n]

    def percentile(self, q):
        """Value at percentile q (0..100), divided by the scale; None
        when empty."""
        if self.count == 0:
            return None
        exact = q / 100.0 * self.count
        rank = int(exact)
        if rank < exact - exact * 1e-9:
            rank += 1
        rank = max(1, min(rank, self.count))
        if rank == 1:
            return self.min / self.scale
        if rank == self.count:
            return self.max / self.scale
        seen = 0
        for low in sorted(self.buckets):
            width, n = self.buckets[low]
            seen += n
            if seen >= rank:
                mid = low + (width - 1) // 2
                return min(max(mid, self.min), self.max) / self.scale
        return self.max / self.scale


class Run:
    """One workload, load and protocol: every client's result merged."""

    def __init__(self, workload, load, proto):
        self.workload = workload
        self.load = load
        self.proto = proto
        self.clients = 0
        self.totals = {k: 0 for k in ("issued", "completed", "failed",
                                      "unfinished", "skipped", "late",
                                      "arrivals")}
        self.req_gbps = 0.0
        self.issued_gbps = 0.0
        self.rpcs_per_s = 0.0
        self.cpu_s = 0.0
        self.errors = []
        self.buckets = []          # [lo, hi, rtt Hist, slowdown Hist]
        self.all = [None, None, Hist(), Hist()]
        self.counters = {}
        self.machine_cpu = None    # busy fraction of all CPUs, whole run
        self.machine_cpu_s = None  # busy CPU-seconds of the machine, same

    def add(self, doc, name):
        """Merge one client's homa-perf JSON document."""
        res = doc.get("results", {}).get(self.proto)
        if res is None:
            self.errors.append(f"{name}: no {self.proto} result")
            return
        self.clients += 1
        for k in self.totals:
            self.totals[k] += res.get(k, 0)
        self.req_gbps += res.get("req_gbps") or 0.0
        self.issued_gbps += res.get("issued_gbps") or 0.0
        self.rpcs_per_s += res.get("rpcs_per_s") or 0.0
        self.cpu_s += res.get("cpu_s") or 0.0
        for key in ("first_error", "setup_error"):
            if res.get(key):
                self.errors.append(f"{name}: {res[key]}")
        for i, b in enumerate(res["buckets"]):
            if i == len(self.buckets):
                self.buckets.append([b["lo"], b["hi"], Hist(), Hist()])
            self.buckets[i][2].add(b["rtt_us"])
            self.buckets[i][3].add(b["slowdown"])
        self.all[0], self.all[1] = res["all"]["lo"], res["all"]["hi"]
        self.all[2].add(res["all"]["rtt_us"])
        self.all[3].add(res["all"]["slowdown"])
        for k, v in res.get("counters", {}).items():
            self.counters[k] = self.counters.get(k, 0) + v

    def late_fraction(self):
        """The share of the clients' arrivals that were late, or None
        when they reported no arrivals (closed loop, older outputs)."""
        if self.totals["arrivals"] == 0:
            return None
        return self.totals["late"] / self.totals["arrivals"]

    def valid(self):
        """Whether the generators kept to their schedule."""
        f = self.late_fraction()
        return f is None or f <= LATE_LIMIT

    def late_text(self):
        """Late arrivals for a table: 'N of M (x%)'."""
        f = self.late_fraction()
        if f is None:
            return str(self.totals["late"])
        return (f"{self.totals['late']} of {self.totals['arrivals']} "
                f"({f * 100:.1f}%)" + ("" if self.valid() else " INVALID"))

    def cpu_us_per_rpc(self):
        """CPU time of the client processes per RPC, or None."""
        if self.totals["completed"] == 0:
            return None
        return self.cpu_s * 1e6 / self.totals["completed"]

    def machine_us_per_rpc(self):
        """Busy CPU time of the whole machine (every host, the switch and
        the kernel's network work, warm-up included) per measured RPC, or
        None."""
        if self.totals["completed"] == 0 or self.machine_cpu_s is None:
            return None
        return self.machine_cpu_s * 1e6 / self.totals["completed"]


def load_runs(raw):
    """Every run found in the raw folder: {(workload, load, proto): Run}."""
    runs = {}
    for path in sorted(glob.glob(os.path.join(raw, "*.json"))):
        name = os.path.basename(path)
        m = RUN_RE.match(name)
        if not m:
            continue
        key = (m.group(1), m.group(2), m.group(3))
        run = runs.setdefault(key, Run(*key))
        try:
            with open(path, encoding="utf-8") as f:
                doc = json.load(f)
        except (OSError, ValueError) as e:
            run.errors.append(f"{name}: unreadable ({e})")
            continue
        run.add(doc, name)
    for run in runs.values():
        path = os.path.join(raw, f"{run.workload}_{run.load}_{run.proto}.cpu")
        try:
            with open(path, encoding="utf-8") as f:
                fields = f.read().split()
            run.machine_cpu = float(fields[0])
            if len(fields) > 1:       # older runs wrote the fraction only
                run.machine_cpu_s = float(fields[1])
        except (OSError, ValueError, IndexError):
            pass
    return runs


def fmt(v, digits=2):
    """A number for a table, '-' for None."""
    if v is None:
        return "-"
    if v >= 1000:
        return f"{v:.0f}"
    return f"{v:.{digits}f}"


def size_text(n):
    """A byte count in short form: 315, 6.4K, 1M."""
    if n >= 1000000:
        return f"{n / 1e6:g}M"
    if n >= 1000:
        return f"{n / 1e3:.3g}K"
    return str(n)


def ratio(a, b):
    """a / b, or None."""
    if a is None or b is None or b == 0:
        return None
    return a / b


def invalid_reason(runs):
    """Why a pair of runs (None where missing) gives no ratio: 'Homa 9.4%
    late', or None when both are valid."""
    why = [f"{'Homa' if r.proto == 'homa' else 'TCP'} "
           f"{r.late_fraction() * 100:.1f}% late"
           for r in runs if r and not r.valid()]
    return ", ".join(why) or None


def target_check(runs):
    """The issue's target: W4 at 80%, shortest 10% of messages (bucket 1),
    Homa P99 slowdown at most 1/5 of TCP's.  None when not measured."""
    h = runs.get(("w4", "0.8", "homa"))
    t = runs.get(("w4", "0.8", "tcp"))
    if not h or not t or not h.buckets or not t.buckets:
        return None
    hp = h.buckets[0][3].percentile(99)
    tp = t.buckets[0][3].percentile(99)
    r = ratio(hp, tp)
    # A verdict only when both runs completed every RPC (percentiles of
    # the RPCs that survived a collapse say nothing) and both generators
    # kept to their schedule.
    completed = all(x.totals["failed"] == 0 and x.totals["unfinished"] == 0
                    and x.totals["completed"] > 0 for x in (h, t))
    late = invalid_reason((h, t))
    valid = completed and late is None
    return {"homa_p99": hp, "tcp_p99": tp,
            "homa_over_tcp": r if late is None else None,
            "valid": valid, "completed": completed, "invalid_reason": late,
            "met": valid and r is not None and r <= 0.2,
            "sizes": [h.buckets[0][0], h.buckets[0][1]]}


def write_tables(out, facts, runs, combos):
    """tables.md."""
    mbps = float(facts.get("rate_mbps", "0") or 0)
    lines = ["# Testbed results", ""]
    lines.append(
        f"{facts.get('clients', '?')} client hosts -> 1 server host through "
        f"a switch port of {mbps / 1000:g} Gbit/s (htb, 8 priority classes "
        f"by DSCP, {facts.get('buffer', '?')} bytes per class), MTU "
        f"{facts.get('mtu', '?')}; {facts.get('duration', '?')} s measured "
        f"per run; Poisson arrivals; 100-byte responses; messages capped at "
        f"1,000,000 bytes; TCP: {facts.get('tcp_conns', '?')} connections "
        f"per client thread, each with a writing and a reading thread, a "
        f"request on the one with the fewest outstanding, requests "
        f"pipelined, TCP_NODELAY; Homa: one socket per client thread with "
        f"a sending and a receiving thread; in both a generator thread "
        f"hands the arrivals over. Homa "
        f"settings: HOMA_LINK_MBPS={facts.get('rate_mbps', '?')} "
        f"HOMA_MTU={facts.get('homa_mtu', '?')}"
        f"{(' ' + facts['homa_env']) if facts.get('homa_env') else ''}"
        f"{'; Homa clients polling (--client-poll)' if facts.get('client_poll') else ''}.")
    lines.append(
        f"Machine: {facts.get('nproc', '?')} CPUs ({facts.get('cpu', '?')}), "
        f"Linux {facts.get('kernel', '?')}; {facts.get('date', '')}.")
    lines.append("")
    lines.append(
        "Slowdown = RTT / unloaded RTT of the message's size (the lower of "
        "Homa's and TCP's, measured through the same switch one RPC at a "
        "time before the runs). Buckets: deciles of the workload's messages "
        "by size (bucket 1 = the shortest 10%). P50/P99 over all clients' "
        "RPCs, from merged histograms.")
    lines.append("")
    tc = target_check(runs)
    if tc:
        lines.append(
            f"**Target** (W4, 80% load, shortest 10% of messages, "
            f"{tc['sizes'][0]}-{tc['sizes'][1]} B): Homa P99 slowdown "
            f"{fmt(tc['homa_p99'])}, TCP {fmt(tc['tcp_p99'])}, Homa/TCP "
            f"{fmt(tc['homa_over_tcp'], 3)} (target <= 0.2): **"
            + ("; ".join(
                (["no verdict: RPCs failed or were left unfinished"]
                 if not tc["completed"] else []) +
                ([f"no verdict: invalid run ({tc['invalid_reason']})"]
                 if tc["invalid_reason"] else []))
               or ("met" if tc["met"] else "not met"))
            + "**.")
        lines.append("")
    for w, load in combos:
        lines.append(f"## {w.upper()} at {float(load) * 100:g}% load "
                     f"({float(load) * mbps / 1000:.3g} Gbit/s of requests "
                     f"offered)")
        lines.append("")
        rs = [runs.get((w, load, p)) for p in PROTOS]
        late = invalid_reason(rs)
        if late:
            lines.append(f"**INVALID run** ({late}): more than "
                         f"{LATE_LIMIT * 100:g}% of a protocol's arrivals "
                         f"were handed over more than 1 ms late, so its "
                         f"load was not the one asked for; no Homa/TCP "
                         f"ratio is given.")
            lines.append("")
        lines.append("| | Homa | TCP |")
        lines.append("|---|---|---|")

        def row(label, f):
            lines.append(f"| {label} | " + " | ".join(
                f(r) if r else "-" for r in rs) + " |")

        row("RPCs measured", lambda r: str(r.totals["completed"]))
        row("requests issued, Gbit/s", lambda r: f"{r.issued_gbps:.3f}")
        row("requests answered, Gbit/s", lambda r: f"{r.req_gbps:.3f}")
        row("RPCs/s", lambda r: f"{r.rpcs_per_s:.0f}")
        row("failed / unfinished / skipped",
            lambda r: "{failed} / {unfinished} / {skipped}".format(
                **r.totals))
        row("arrivals > 1 ms late", lambda r: r.late_text())
        row("client CPU, us/RPC", lambda r: fmt(r.cpu_us_per_rpc(), 1))
        row("machine CPU busy (all cores, whole run)",
            lambda r: "-" if r.machine_cpu is None
            else f"{r.machine_cpu * 100:.0f}%")
        row("machine CPU, us/RPC (all hosts and the switch, whole run)",
            lambda r: fmt(r.machine_us_per_rpc(), 1))
        lines.append("")
        lines.append("| bucket | sizes (B) | Homa P50 | Homa P99 | TCP P50 | "
                     "TCP P99 | P99 Homa/TCP | Homa RTT P99 us | TCP RTT "
                     "P99 us |")
        lines.append("|---|---|---|---|---|---|---|---|---|")
        h, t = rs
        n = max(len(h.buckets) if h else 0, len(t.buckets) if t else 0)
        for i in range(n + 1):
            cells = []
            for r in rs:
                if r is None or (i < n and i >= len(r.buckets)):
                    cells.append(None)
                else:
                    cells.append(r.buckets[i] if i < n else r.all)
            ref = next(c for c in cells if c is not None)
            label = str(i + 1) if i < n else "all"
            sd = [(c[3].percentile(50), c[3].percentile(99)) if c else
                  (None, None) for c in cells]
            rtt = [c[2].percentile(99) if c else None for c in cells]
            cmp = (f"invalid ({late})" if late
                   else fmt(ratio(sd[0][1], sd[1][1]), 3))
            lines.append(
                f"| {label} | {ref[0]}-{ref[1]} | {fmt(sd[0][0])} | "
                f"{fmt(sd[0][1])} | {fmt(sd[1][0])} | {fmt(sd[1][1])} | "
                f"{cmp} | {fmt(rtt[0], 1)} | {fmt(rtt[1], 1)} |")
        lines.append("")
        errors = [e for r in rs if r for e in r.errors]
        for e in errors[:5]:
            lines.append(f"- error: {e}")
        if errors:
            lines.append("")
        hr = rs[0]
        if hr and hr.counters:
            nz = {k: v for k, v in hr.counters.items() if v}
            lines.append("Homa client counters (all clients): " + ", ".join(
                f"{k}={v}" for k, v in sorted(nz.items())))
            lines.append("")
    with open(os.path.join(out, "tables.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines))


def write_summary(out, facts, runs):
    """summary.json; returns whether every RPC of every run completed."""
    doc = {"facts": facts, "runs": [], "target": target_check(runs)}
    ok = bool(runs)
    for (w, load, proto), r in sorted(runs.items()):
        t = r.totals
        done = (r.clients > 0 and t["completed"] > 0 and t["failed"] == 0
                and t["unfinished"] == 0 and not r.errors)
        ok = ok and done
        doc["runs"].append({
            "workload": w, "load": float(load), "proto": proto,
            "clients": r.clients, **t, "all_completed": done,
            "late_fraction": r.late_fraction(), "valid": r.valid(),
            "req_gbps": r.req_gbps, "rpcs_per_s": r.rpcs_per_s,
            "cpu_us_per_rpc": r.cpu_us_per_rpc(),
            "machine_cpu_busy": r.machine_cpu,
            "machine_cpu_us_per_rpc": r.machine_us_per_rpc(),
            "errors": r.errors,
            "buckets": [{"lo": b[0], "hi": b[1], "rpcs": b[2].count,
                         "slowdown_p50": b[3].percentile(50),
                         "slowdown_p99": b[3].percentile(99),
                         "rtt_p50_us": b[2].percentile(50),
                         "rtt_p99_us": b[2].percentile(99)}
                        for b in r.buckets]})
    doc["all_completed"] = ok
    with open(os.path.join(out, "summary.json"), "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1)
    return ok


def write_plots(out, facts, runs, combos):
    """testbed_RATE_W.png per workload; returns the files written."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot_testbed.py: matplotlib not installed (Debian package "
              "python3-matplotlib): no plots", file=sys.stderr)
        return []
    mbps = float(facts.get("rate_mbps", "0") or 0)
    rate = f"{mbps / 1000:g}gbit" if mbps >= 1000 else f"{mbps:g}mbit"
    files = []
    workloads = []
    for w, _ in combos:
        if w not in workloads:
            workloads.append(w)
    style = {"homa": ("tab:blue", "Homa"), "tcp": ("tab:orange", "TCP")}
    for w in workloads:
        loads = [l for ww, l in combos if ww == w]
        fig, axes = plt.subplots(1, len(loads), figsize=(5.2 * len(loads),
                                                         4.2), squeeze=False)
        for ax, load in zip(axes[0], loads):
            labels = None
            for proto in PROTOS:
                r = runs.get((w, load, proto))
                if not r or not r.buckets:
                    continue
                x = list(range(1, len(r.buckets) + 1))
                labels = [size_text(b[1]) for b in r.buckets]
                color, name = style[proto]
                for q, ls in ((50, "-"), (99, "--")):
                    y = [b[3].percentile(q) for b in r.buckets]
                    y = [v if v is not None else math.nan for v in y]
                    ax.plot(x, y, ls, marker="o", ms=3, color=color,
                            label=f"{name} P{q}")
            notes = []
            for proto in PROTOS:
                r = runs.get((w, load, proto))
                if r and (r.totals["failed"] or r.totals["unfinished"]):
                    notes.append(f"{style[proto][1]}: {r.totals['failed']} "
                                 f"failed, {r.totals['unfinished']} "
                                 f"unfinished of {r.totals['issued']}")
            late = invalid_reason([runs.get((w, load, p)) for p in PROTOS])
            if late:
                notes.append(f"INVALID: {late}")
            if notes:
                ax.text(0.02, 0.02, "\n".join(notes), transform=ax.transAxes,
                        fontsize=7, color="tab:red", va="bottom")
            ax.set_yscale("log")
            ax.set_title(f"{w.upper()}, {float(load) * 100:g}% of "
                         f"{mbps / 1000:g} Gbit/s")
            ax.set_xlabel("message size bucket (decile; largest size)")
            ax.set_ylabel("slowdown")
            if labels:
                ax.set_xticks(range(1, len(labels) + 1))
                ax.set_xticklabels(labels, rotation=45, fontsize=8)
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=8)
        fig.suptitle(f"Homa vs TCP, {facts.get('clients', '?')} clients -> "
                     f"1 server, slowdown per size bucket", fontsize=10)
        fig.tight_layout()
        path = os.path.join(out, f"testbed_{rate}_{w}.png")
        fig.savefig(path, dpi=110)
        plt.close(fig)
        files.append(path)
    return files


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--raw", required=True, help="testbed.sh's raw folder")
    ap.add_argument("--out", required=True, help="where to write")
    a = ap.parse_args()
    facts = read_facts(os.path.join(a.raw, "facts.txt"))
    runs = load_runs(a.raw)
    if not runs:
        print(f"plot_testbed.py: no results in {a.raw}", file=sys.stderr)
        return 1
    combos = []
    for w, load, _ in sorted(runs, key=lambda k: (k[0], float(k[1]))):
        if (w, load) not in combos:
            combos.append((w, load))
    os.makedirs(a.out, exist_ok=True)
    write_tables(a.out, facts, runs, combos)
    ok = write_summary(a.out, facts, runs)
    files = write_plots(a.out, facts, runs, combos)
    print("plot_testbed.py: wrote tables.md, summary.json"
          + "".join(f", {os.path.basename(p)}" for p in files)
          + ("" if ok else " (some RPCs did not complete)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
