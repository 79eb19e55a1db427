#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""trace_rpc.py - read a libhoma event trace (HOMA_TRACE_FILE, see
docs/benchmarking.md) and print what each thread did and, for a closed
loop with one RPC in flight (homa-perf loopback --outstanding 1), where
each round trip's time went.

Usage: scripts/trace_rpc.py [-h] [--client TID] [--skip N] TRACE

Per thread: its events by name, the CPUs it ran on, and how often it slept.
Per round trip of the client thread (the thread whose homa_sendmsg calls
sent the most datagrams, or --client), from one homa_sendmsg to the next:
  send      homa_sendmsg entered .. the request's send system calls done
  server    .. the server's homa_recvmsg returned the request
  reply     .. the server's next send system call done (the response out)
  notice    .. the client's first receive that brought packets
  deliver   .. the client's homa_recvmsg returned
  next      .. the client's next homa_sendmsg
as median, mean and 90th percentile in microseconds, then the round trips
split by whether the server thread read the request on the client's CPU,
then the slowest 1% of round trips: each phase's mean over them, and in
how many of them each phase was the longest.
The first N round trips (--skip, default 20) are left out (warm-up).
"""
import argparse
import collections
import statistics
import sys

PHASES = ["send", "server", "reply", "notice", "deliver", "next"]


def read_trace(path):
    """The events of the trace at path: (ns, tid, cpu, name, value)."""
    events = []
    with open(path) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            ns, tid, cpu, name, value = line.split()
            events.append((int(ns), int(tid), int(cpu), name, int(value)))
    events.sort()
    return events


def pick_client(events):
    """The thread whose homa_sendmsg calls sent the most datagrams."""
    sent = collections.Counter()
    in_send = {}
    for _, tid, _, name, value in events:
        if name == "send_enter":
            in_send[tid] = True
        elif name in ("recv_enter", "settle_step"):
            in_send[tid] = False
        elif name == "dp_send" and in_send.get(tid):
            sent[tid] += value
    if not sent:
        return None
    return sent.most_common(1)[0][0]


def quantiles(xs):
    """Median, mean and 90th percentile of xs (ns) in us, as text."""
    xs = sorted(xs)
    return "%8.1f %8.1f %8.1f" % (statistics.median(xs) / 1000,
                                  statistics.fmean(xs) / 1000,
                                  xs[int(0.9 * (len(xs) - 1))] / 1000)


def thread_summary(events):
    """Print per thread: events by name, CPUs, sleeps."""
    names = collections.defaultdict(collections.Counter)
    cpus = collections.defaultdict(collections.Counter)
    for _, tid, cpu, name, _ in events:
        names[tid][name] += 1
        cpus[tid][cpu] += 1
    print("threads:")
    for tid in sorted(names, key=lambda t: -sum(names[t].values())):
        c = names[tid]
        print("  %d: %d events, CPUs %s; %s" % (
            tid, sum(c.values()),
            " ".join("%d:%d" % kv for kv in sorted(cpus[tid].items())),
            ", ".join("%s %d" % kv for kv in sorted(c.items()))))


def first(events, start, stop, pred):
    """Index of the first event in [start, stop) for which pred holds, or
    None."""
    for i in range(start, stop):
        if pred(events[i]):
            return i
    return None


def round_trip(events, client, i, j):
    """The phase ends (ns) of the round trip from client send_enter i to
    the next one j, and whether the client's send and the server's first
    read ran on one CPU; None when some event is missing."""
    ends = {}
    k = i + 1
    out = None
    # The request's send calls: the client's dp_sent before any other of
    # its events.
    while k < j:
        e = events[k]
        if e[1] == client:
            if e[3] == "dp_sent":
                out = k
            elif e[3] != "dp_send":
                break
        k += 1
    if out is None:
        return None
    ends["send"] = events[out][0]
    srv = first(events, i + 1, j, lambda e: e[1] != client and
                e[3] == "recv_leave" and e[4] >= 0)
    if srv is None:
        return None
    server = events[srv][1]
    ends["server"] = events[srv][0]
    rep = first(events, srv, j,
                lambda e: e[1] == server and e[3] == "dp_sent")
    if rep is None:
        return None
    ends["reply"] = events[rep][0]
    got = first(events, rep, j, lambda e: e[1] == client and
                e[3] == "dp_recv" and e[4] > 0)
    if got is None:
        return None
    ends["notice"] = events[got][0]
    done = first(events, got, j, lambda e: e[1] == client and
                 e[3] == "recv_leave")
    if done is None:
        return None
    ends["deliver"] = events[done][0]
    ends["next"] = events[j][0]
    send_cpu = first(events, i, j, lambda e: e[1] == client and
                     e[3] == "dp_send")
    read_cpu = first(events, i, j, lambda e: e[1] == server and
                     e[3] == "dp_recv" and e[4] > 0)
    same = (send_cpu is not None and read_cpu is not None and
            events[send_cpu][2] == events[read_cpu][2])
    return ends, same


def phases(events, client, skip):
    """Print the round-trip phases of client's closed loop."""
    starts = [i for i, e in enumerate(events)
              if e[1] == client and e[3] == "send_enter"]
    rows = collections.defaultdict(list)
    trips = []
    periods = {True: [], False: []}
    for i, j in list(zip(starts, starts[1:]))[skip:]:
        r = round_trip(events, client, i, j)
        if r is None:
            continue
        ends, same = r
        prev = events[i][0]
        for p in PHASES:
            rows[p].append(ends[p] - prev)
            prev = ends[p]
        rows["round trip"].append(ends["next"] - events[i][0])
        trips.append([rows[p][-1] for p in PHASES + ["round trip"]])
        periods[same].append(ends["next"] - events[i][0])
    if not rows:
        print("no complete round trip of thread %d found" % client)
        return
    print("round trips of client thread %d: %d" % (
        client, len(rows["round trip"])))
    print("  %-10s %8s %8s %8s   (us)" % ("phase", "median", "mean", "p90"))
    for p in PHASES + ["round trip"]:
        print("  %-10s %s" % (p, quantiles(rows[p])))
    for same, label in ((False, "on different CPUs"), (True, "on one CPU")):
        if periods[same]:
            print("  client send and server read %s: %d, round trip %s"
                  % (label, len(periods[same]),
                     quantiles(periods[same])))
    slow_tail(trips)


def slow_tail(trips):
    """Print where the time of the slowest 1% of round trips went: each
    phase's mean over them, and how many each phase dominated."""
    trips = sorted(trips, key=lambda t: t[-1])
    tail = trips[int(0.99 * len(trips)):]
    if not tail:
        return
    print("slowest 1%%: %d round trips of %.1f us and more" % (
        len(tail), tail[0][-1] / 1000))
    print("  %-10s %8s %8s" % ("phase", "mean", "longest in"))
    for k, p in enumerate(PHASES):
        longest = sum(1 for t in tail
                      if max(range(len(PHASES)), key=lambda q: t[q]) == k)
        print("  %-10s %8.1f %8d" % (
            p, statistics.fmean(t[k] for t in tail) / 1000, longest))


def main():
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("trace")
    ap.add_argument("--client", type=int, help="the client thread's id")
    ap.add_argument("--skip", type=int, default=20,
                    help="round trips left out at the start (default 20)")
    args = ap.parse_args()
    try:
        events = read_trace(args.trace)
    except (OSError, ValueError) as e:
        print("trace_rpc.py: %s: %s" % (args.trace, e), file=sys.stderr)
        return 2
    if not events:
        print("trace_rpc.py: %s holds no event" % args.trace,
              file=sys.stderr)
        return 1
    thread_summary(events)
    client = args.client if args.client is not None else pick_client(events)
    if client is None:
        print("no homa_sendmsg sent anything: no round trips")
        return 0
    phases(events, client, args.skip)
    return 0


if __name__ == "__main__":
    sys.exit(main())
