/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * sim_fault - seeded faults of the simulated network and hosts.
 *
 * A fault plan is derived from one seed (sim_fault_plan_derive): which
 * kinds of fault happen, how often, how long, where and when.  During the
 * fault phase (virtual time below plan.heal_ns) every packet that leaves a
 * host passes sim_fault_at_link, which may:
 *
 *   drop       lose it;
 *   duplicate  deliver a second copy, after its own extra delay;
 *   reorder    hold it back a little (up to reorder_max_ns), so that
 *              packets sent after it overtake it;
 *   delay      hold it back a lot (up to delay_max_ns, far beyond RPC
 *              lifetimes: a stale packet that arrives after its RPC ended,
 *              or after its host restarted);
 *   corrupt    change bytes of the DATA payload with the headers intact,
 *              or bytes of the Homa header.  The receiving host's datapath
 *              checks an end-to-end checksum as UDP does and drops what
 *              fails it; a share `escape` of the corruptions is made to
 *              pass the checksum (as a raw-IP peer, which carries none, or
 *              a checksum collision would), so that the core sees damaged
 *              packets.  Every RPC such a packet names, before or after
 *              the change, is tainted: its bytes are not checked;
 *   partition  drop every packet between two sets of hosts (or in one
 *              direction only) for a while.
 *
 * Restarts are not per packet: the plan lists (host, time, downtime); the
 * driver destroys the host's endpoint at that time (the host drops what
 * arrives while down) and creates a new one, with a new client-id base, at
 * the same address when the downtime ends.  By default the downtime is
 * longer than any packet's life in the network (see quiet_restarts).
 *
 * The fault hook draws from its own RNG stream of the seed, so faults never
 * shift the traffic's random choices.
 */
#ifndef SIM_FAULT_H
#define SIM_FAULT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "workload_rng.h"

#define SIM_FAULT_MAX_PARTITIONS 3
#define SIM_FAULT_MAX_RESTARTS 3
/* Hosts a partition can name (bits of a mask). */
#define SIM_FAULT_MAX_HOSTS 64

struct sim_partition {
	uint64_t start_ns, end_ns;   /* cut during [start, end) */
	uint64_t side;               /* bit h set: host h is on side A */
	bool one_way;                /* only A -> B is cut */
};

struct sim_restart {
	uint64_t at_ns;              /* the endpoint is destroyed */
	uint64_t down_ns;            /* a new one starts this much later */
	uint32_t host;
};

struct sim_fault_plan {
	uint64_t seed;
	uint64_t heal_ns;            /* end of the fault phase */
	/* Chance of each per-packet fault (0..1). */
	double drop, duplicate, reorder, delay;
	double corrupt_payload, corrupt_header;
	double escape;               /* corruptions the checksum misses */
	uint64_t reorder_max_ns, delay_max_ns;
	int npartitions;
	struct sim_partition part[SIM_FAULT_MAX_PARTITIONS];
	int nrestarts;
	struct sim_restart restart[SIM_FAULT_MAX_RESTARTS];
};

/* What a packet may spend in queues besides the delays of the plan. */
#define SIM_FAULT_QUEUE_SLACK_NS 5000000ull

/*
 * sim_fault_plan_derive - the plan of seed for hosts hosts (2..64) and a
 * fault phase of heal_ns: each kind of fault is present or not, with
 * intensities, partitions and restarts drawn from the seed alone.
 * quiet_restarts: a restarted host stays down longer than any packet can
 * live in the network (the plan's longest delay and reordering, plus
 * SIM_FAULT_QUEUE_SLACK_NS), as TCP's quiet time after a crash asks, so
 * that no packet of its previous incarnation, nor one sent to it, arrives
 * after it starts again (a restart that does not fit in the fault phase is
 * left out).  Without it, packets from before a restart can meet the new
 * incarnation.
 */
void sim_fault_plan_derive(struct sim_fault_plan *f, uint64_t seed,
			   uint32_t hosts, uint64_t heal_ns,
			   bool quiet_restarts);

/* sim_fault_plan_print - the plan in a few human-readable lines. */
void sim_fault_plan_print(FILE *out, const struct sim_fault_plan *f);

/* The state of the faults during a run. */
struct sim_fault {
	struct sim_fault_plan plan;
	struct workload_rng rng;
};

/* sim_fault_init - start the faults of plan (its RNG from plan->seed). */
void sim_fault_init(struct sim_fault *f, const struct sim_fault_plan *plan);

struct sim;
struct sim_pkt;

/* What a link does with a packet. */
struct sim_fault_action {
	bool drop;                   /* lose it */
	bool duplicate;              /* deliver a copy too */
	uint64_t extra_ns;           /* added to its delivery time */
	uint64_t dup_extra_ns;       /* added to the copy's */
};

/*
 * sim_fault_at_link - the faults a packet meets leaving host `from`
 * towards node `to` at s->now; may change pkt's bytes (and, when the
 * change escapes the checksum, its checksum, tainting the RPCs the packet
 * names).  Counts what it does in s->c.  No faults when s->fault is NULL
 * or after the plan's heal time.
 */
void sim_fault_at_link(struct sim *s, struct sim_pkt *pkt, uint32_t from,
		       uint32_t to, struct sim_fault_action *act);

/* sim_partitioned - true when a packet from host a to host b is cut by a
 * partition of f at time now. */
bool sim_partitioned(const struct sim_fault_plan *f, uint32_t a, uint32_t b,
		     uint64_t now);

#endif /* SIM_FAULT_H */
