#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""slow_path_matrix.py - loss recovery over a path slower than link_mbps,
in the simulator, over a matrix of seeds, bottleneck rates and workloads.

Hosts and the core's link_mbps stay at 25 Gbit/s; the switch ports towards
the hosts run at the bottleneck rate (homa-sim --bottleneck-gbps), 1 MiB
port buffers.  Two workloads:

  echo16  16 x 1 MB requests from one host to another, each echoed with a
          1 MB response, all at once (tests/sim/test_sim_slow_path.c)
  w5      W5 among 8 hosts at 0.8 of the bottleneck, MESSAGES requests

Per run it prints: responses of requests, timeouts, client errors, the
virtual end, goodput, DATA packets resent and received and their ratio,
duplicates and switch drops.  Goodput: echo16, the message bytes of one
direction over the run against the bottleneck rate; w5, the request bytes
over the run against the bottleneck rate of all 8 hosts (the offered load
is 0.8 of it).  A run passes when every RPC completes without a timeout or
an error, resent DATA is under 10% of received and, for echo16, goodput is
at least 0.8.  The summary gives per workload the worst and median of each.

Usage: scripts/slow_path_matrix.py [--sim PATH] [--seeds 1-5]
           [--mbps 100,150,250] [--workloads echo16,w5] [--messages 400]
           [--set NAME=VALUE ...] [--json]
Exit status 0 when every run passes, 1 otherwise.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile


def run(sim, wl, seed, mbps, messages, sets, cdf):
    args = [sim, "--link-gbps", "25", "--bottleneck-gbps",
            str(mbps / 1000.0), "--wait-responses", "on", "--seed",
            str(seed), "--json"]
    if wl == "echo16":
        args += ["--workload", cdf, "--hosts", "2", "--server-hosts", "1",
                 "--messages", "16", "--gap-ns", "1000",
                 "--reply-bytes", "1000000"]
    else:
        args += ["--workload", "w5", "--hosts", "8", "--load", "0.8",
                 "--messages", str(messages)]
    for s in sets:
        args += ["--set", s]
    out = subprocess.run(args, check=False, capture_output=True, text=True)
    if not out.stdout.strip():
        sys.exit("homa-sim failed: %s\n%s" % (" ".join(args), out.stderr))
    j = json.loads(out.stdout)
    end = j["simulated_ns"] / 1e9
    if wl == "echo16":
        goodput = 16e6 * 8 / end / (mbps * 1e6)
    else:
        goodput = j["request_bytes"] * 8 / end / (8 * mbps * 1e6)
    resent = j["resent_packets"] / max(1, j["data_packets_rcvd"])
    ok = (j["responses"] == j["messages"] and j["rpc_timeouts"] == 0 and
          j["client_errors"] == 0 and j["violations"] == 0 and
          resent < 0.10 and (wl != "echo16" or goodput >= 0.8))
    return {"workload": wl, "seed": seed, "mbps": mbps,
            "responses": j["responses"], "messages": j["messages"],
            "timeouts": j["rpc_timeouts"], "errors": j["client_errors"],
            "end_ms": end * 1e3, "goodput": goodput,
            "resent": j["resent_packets"], "rcvd": j["data_packets_rcvd"],
            "resent_frac": resent, "dups": j["duplicate_data"],
            "drops": j["switch_drops"], "ok": ok}


def seeds_of(text):
    if "-" in text:
        a, b = text.split("-")
        return list(range(int(a), int(b) + 1))
    return [int(x) for x in text.split(",")]


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(
        description="homa-sim slow-path matrix (see the head of this file)")
    ap.add_argument("--sim", default=os.path.join(here, "..", "build",
                                                  "tools", "homa-sim"))
    ap.add_argument("--seeds", default="1-5")
    ap.add_argument("--mbps", default="100,150,250")
    ap.add_argument("--workloads", default="echo16,w5")
    ap.add_argument("--messages", type=int, default=400)
    ap.add_argument("--set", action="append", default=[])
    ap.add_argument("--json", action="store_true",
                    help="one JSON object per run instead of the table")
    a = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        cdf = os.path.join(tmp, "1mb.cdf")
        with open(cdf, "w") as f:
            f.write("1000000 1\n")
        for wl in a.workloads.split(","):
            for mbps in [int(x) for x in a.mbps.split(",")]:
                for seed in seeds_of(a.seeds):
                    r = run(a.sim, wl, seed, mbps, a.messages, a.set, cdf)
                    rows.append(r)
                    if a.json:
                        print(json.dumps(r))
                    else:
                        print("%-6s %4d Mbit/s seed %d: %d/%d done, %d "
                              "timeouts, %d errors, %7.1f ms, goodput "
                              "%.3f, resent %5d / %6d = %5.1f%%, dups %5d, "
                              "drops %5d %s" %
                              (wl, mbps, seed, r["responses"],
                               r["messages"], r["timeouts"], r["errors"],
                               r["end_ms"], r["goodput"], r["resent"],
                               r["rcvd"], 100 * r["resent_frac"],
                               r["dups"], r["drops"],
                               "" if r["ok"] else "FAIL"), flush=True)
    if not a.json:
        for wl in a.workloads.split(","):
            sel = [r for r in rows if r["workload"] == wl]
            g = [r["goodput"] for r in sel]
            f = [100 * r["resent_frac"] for r in sel]
            print("%-6s %d runs, %d pass: goodput min %.3f median %.3f; "
                  "resent%% max %.1f median %.1f; timeouts %d, "
                  "unfinished %d" %
                  (wl, len(sel), sum(r["ok"] for r in sel), min(g),
                   statistics.median(g), max(f), statistics.median(f),
                   sum(r["timeouts"] for r in sel),
                   sum(r["messages"] - r["responses"] for r in sel)))
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
