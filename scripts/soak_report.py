#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""soak_report.py - the summary and verdict of a scripts/soak.sh run.

Reads the raw folder soak.sh wrote (manifest.txt, facts.txt, every
process's JSON report and its stderr with the "sample ..." lines,
restarts.txt, hostile.txt, loss_drops.txt, client_exit.txt) and writes
OUT/summary.md (also printed) and OUT/summary.json.

Every RPC a client issued is one of: completed; failed with an expected
error (ETIMEDOUT from either server; ENOTCONN, "nobody listening", only
from server B, which dies every minute); failed with an unexpected error;
lost (still open when the client gave up waiting, after its drain).  The
target: 0 lost, 0 unexpected; after --flat-after seconds no long-lived
process (the clients, server A) has more descriptors than at that point
nor more than --rss-slack KB more resident memory (the later half of
the samples after it against the earlier half's peak); each client holds no
RPC when it closes, and server A none at its last sample (after the
quiet period).  Exit status 0 when the target holds, 1 otherwise.
"""
import argparse
import json
import os
import re
import sys

EXPECTED = {"A": {"ETIMEDOUT"}, "B": {"ETIMEDOUT", "ENOTCONN"}}
SAMPLE = re.compile(r"^sample t=([0-9.]+) rss_kb=(-?\d+) fds=(-?\d+) "
                    r"homa_socks=(\d+) num_rpcs=(\d+)")


def read_facts(raw):
    facts = {}
    with open(os.path.join(raw, "facts.txt")) as f:
        for line in f:
            k, _, v = line.rstrip("\n").partition("=")
            facts[k] = v
    return facts


def read_samples(path):
    """[(t, rss_kb, fds, homa_socks, num_rpcs)] of a process's stderr."""
    out = []
    try:
        with open(path) as f:
            for line in f:
                m = SAMPLE.match(line)
                if m:
                    out.append((float(m.group(1)), int(m.group(2)),
                                int(m.group(3)), int(m.group(4)),
                                int(m.group(5))))
    except OSError:
        pass
    return out


def read_json(path):
    try:
        with open(path) as f:
            text = f.read().strip()
        return json.loads(text.splitlines()[-1]) if text else None
    except (OSError, ValueError, IndexError):
        return None


def flatness(samples, flat_after):
    """Whether a process's memory and descriptors stay flat after
    flat_after: the samples from then on are cut into two halves by time,
    and the growth is what the later half reached beyond the earlier
    half's peak (a leak grows on; a peak of a backlog, or a descriptor
    opened once, does not count again).  A dict, or None when the process
    has fewer than two samples that late."""
    later = [s for s in samples if s[0] >= flat_after]
    if len(later) < 2:
        return None
    mid = (later[0][0] + later[-1][0]) / 2
    first = [s for s in later if s[0] < mid] or later[:1]
    second = [s for s in later if s[0] >= mid]
    return {
        "t_ref": later[0][0], "t_mid": mid, "t_last": later[-1][0],
        "rss_ref_kb": later[0][1], "rss_last_kb": later[-1][1],
        "rss_first_max_kb": max(s[1] for s in first),
        "rss_second_max_kb": max(s[1] for s in second),
        "rss_growth_kb": max(s[1] for s in second) - max(s[1] for s in first),
        "fds_ref": later[0][2],
        "fds_first_max": max(s[2] for s in first),
        "fds_second_max": max(s[2] for s in second),
        "fds_growth": max(s[2] for s in second) - max(s[2] for s in first),
    }


def client_row(raw, name, workload, target):
    rep = read_json(os.path.join(raw, name + ".json"))
    row = {"name": name, "workload": workload, "server": target,
           "report": rep is not None}
    res = (rep or {}).get("results", {}).get("homa")
    if not res:
        row.update(issued=0, completed=0, expected=0, unexpected=0,
                   lost=0, errors={}, num_rpcs_at_close=None,
                   counters={})
        return row
    errs = res.get("failed_by_errno", {})
    exp = sum(n for e, n in errs.items() if e in EXPECTED[target])
    failed = res.get("failed", 0)
    issued = res.get("issued", 0)
    unfinished = res.get("unfinished", 0)
    accounted = res.get("completed", 0) + failed + unfinished
    ctr = res.get("counters", {})
    row.update(issued=issued, completed=res.get("completed", 0),
               expected=exp, unexpected=failed - exp,
               lost=unfinished + max(0, issued - accounted),
               errors=errs, num_rpcs_at_close=ctr.get("num_rpcs"),
               counters={k: ctr.get(k, 0) for k in
                         ("rpc_timeouts", "rpc_restarts", "resent_packets",
                          "client_rpc_errors")})
    return row


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--raw", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    raw = a.raw
    facts = read_facts(raw)
    flat_after = float(facts.get("flat_after", 60))
    slack = int(facts.get("rss_slack_kb", 8192))
    fds_slack = int(facts.get("fds_slack", 0))
    clients, servers_b, server_a = [], [], None
    with open(os.path.join(raw, "manifest.txt")) as f:
        for line in f:
            w = line.split()
            if w[0] == "client":
                clients.append(client_row(raw, w[1], w[2], w[3]))
            elif w[1] == "A":
                server_a = w[2]
            else:
                servers_b.append(w[2])
    why = []

    # -- RPCs --
    tot = {k: sum(c[k] for c in clients) for k in
           ("issued", "completed", "expected", "unexpected", "lost")}
    rpc_rows = []
    for c in clients:
        errs = ", ".join("%s %d" % (e, n) for e, n in sorted(c["errors"].items()))
        rpc_rows.append([c["name"], c["workload"].upper(), c["server"],
                         c["issued"], c["completed"], c["expected"],
                         c["unexpected"], c["lost"], errs or "-"])
        if not c["report"]:
            why.append("client %s wrote no report" % c["name"])
        if c["num_rpcs_at_close"] not in (0, None):
            why.append("client %s held %d RPCs when it closed" %
                       (c["name"], c["num_rpcs_at_close"]))
    rpc_rows.append(["all", "", "", tot["issued"], tot["completed"],
                     tot["expected"], tot["unexpected"], tot["lost"], ""])
    if tot["lost"]:
        why.append("%d RPCs lost" % tot["lost"])
    if tot["unexpected"]:
        why.append("%d RPCs failed with an unexpected error" %
                   tot["unexpected"])
    if tot["issued"] == 0:
        why.append("no RPC was issued")

    # -- memory, descriptors, RPCs held --
    procs = [(c["name"], c["num_rpcs_at_close"]) for c in clients]
    if server_a:
        procs.append((server_a, None))
    res_rows, res_json = [], {}
    for name, at_close in procs:
        smp = read_samples(os.path.join(raw, name + ".err"))
        fl = flatness(smp, flat_after)
        nmax = max((s[4] for s in smp), default=None)
        # A client's RPCs when it closed its socket; server A's at its
        # last sample.
        nlast = at_close if name != server_a else (
            smp[-1][4] if smp else None)
        res_json[name] = {"flat": fl, "num_rpcs_max": nmax,
                          "num_rpcs_last": nlast, "samples": len(smp)}
        if fl is None:
            why.append("%s: no sample after %g s" % (name, flat_after))
            res_rows.append([name, "-", "-", "-", "-", "-", nmax, nlast])
            continue
        res_rows.append([name, fl["rss_ref_kb"], fl["rss_first_max_kb"],
                         fl["rss_second_max_kb"], fl["rss_last_kb"],
                         "%d / %d" % (fl["fds_first_max"],
                                      fl["fds_second_max"]), nmax, nlast])
        if fl["rss_growth_kb"] > slack:
            why.append("%s: resident memory grew by %d KB in the second "
                       "half (allowed %d)" % (name, fl["rss_growth_kb"],
                                              slack))
        if fl["fds_growth"] > fds_slack:
            why.append("%s: %d more descriptors in the second half "
                       "(allowed %d)" % (name, fl["fds_growth"], fds_slack))
    if server_a:
        last = res_json[server_a]["num_rpcs_last"]
        if last is None or last != 0:
            why.append("server A held %s RPCs after the quiet period" % last)
    b_rss = b_fds = b_rpcs = 0
    for name in servers_b:
        smp = read_samples(os.path.join(raw, name + ".err"))
        b_rss = max([b_rss] + [s[1] for s in smp])
        b_fds = max([b_fds] + [s[2] for s in smp])
        b_rpcs = max([b_rpcs] + [s[4] for s in smp])
    res_rows.append(["serverB (%d lives)" % len(servers_b), "-", "-",
                     "max %d" % b_rss, "-", "max %d" % b_fds, b_rpcs, "-"])

    hostile = ""
    try:
        with open(os.path.join(raw, "hostile.txt")) as f:
            hostile = f.read().strip()
    except OSError:
        pass
    drops = {}
    try:
        with open(os.path.join(raw, "loss_drops.txt")) as f:
            for line in f:
                w = line.split()
                if len(w) == 2:
                    drops[w[0][-2:]] = int(w[1])
    except OSError:
        pass
    restarts = 0
    try:
        with open(os.path.join(raw, "restarts.txt")) as f:
            restarts = sum(1 for line in f if line.split()[-1] == "kill")
    except OSError:
        pass

    verdict = "PASS" if not why else "FAIL"
    md = []
    md.append("soak: %s, %s s of W3+W4 at %s of %s Mbit/s per server, "
              "%s%% loss, server B killed %d times (every %s s, down %s s), "
              "%s hostile packets/s; seed %s; %s; %s CPUs" % (
                  facts.get("transport"), facts.get("seconds"),
                  facts.get("load"), facts.get("rate_mbps"),
                  facts.get("loss_percent"), restarts,
                  facts.get("restart_every"), facts.get("down"),
                  facts.get("hostile_rate"), facts.get("seed"),
                  facts.get("date"), facts.get("nproc")))
    md.append("")
    md.append(table(["client", "workload", "server", "RPCs", "completed",
                     "failed, expected", "failed, unexpected", "lost",
                     "errors"], rpc_rows))
    md.append("")
    md.append(table(["process", "RSS at %g s (KB)" % flat_after,
                     "RSS peak, 1st half", "RSS peak, 2nd half",
                     "RSS at end", "fds peak, 1st / 2nd half",
                     "num_rpcs max", "num_rpcs at end"], res_rows))
    md.append("")
    md.append("Halves: the samples from %g s to each process's last, cut "
              "in two by time; RSS in KB. num_rpcs at end: a client's when "
              "it closed, server A's at its last sample." % flat_after)
    md.append("")
    if hostile:
        md.append(hostile)
    if drops:
        md.append("packets dropped by the loss rules: " + ", ".join(
            "%s %d" % (k, v) for k, v in sorted(drops.items())))
    md.append("")
    md.append("verdict: " + verdict + ("" if not why else ": " +
                                       "; ".join(why)))
    text = "\n".join(md) + "\n"
    with open(os.path.join(a.out, "summary.md"), "w") as f:
        f.write(text)
    with open(os.path.join(a.out, "summary.json"), "w") as f:
        json.dump({"facts": facts, "clients": clients, "processes": res_json,
                   "server_b": {"lives": len(servers_b), "rss_max_kb": b_rss,
                                "fds_max": b_fds, "num_rpcs_max": b_rpcs},
                   "restarts": restarts, "hostile": hostile,
                   "loss_drops": drops, "totals": tot, "verdict": verdict,
                   "why": why}, f, indent=1)
    sys.stdout.write(text)
    return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main())
