/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * sim - a deterministic network simulator that drives the real Homa core
 * (src/core) in virtual time.
 *
 * Hosts each run one endpoint (a server on port 1 that also sends
 * requests) behind a NIC that transmits at the host link rate and pulls
 * the next packet from homa_ep_output only when it is free.  Links have a
 * rate and a propagation delay.  Switches are store-and-forward; each
 * egress port has up to 8 strict-priority queues sharing one buffer, and a
 * packet that does not fit in the buffer is dropped.  Topologies: one
 * top-of-rack switch with every host on it, or two tiers (racks of hosts
 * under ToR switches, ToRs connected to every spine switch, packets sprayed
 * across the spines one by one).
 *
 * Traffic: every host sends requests to hosts chosen uniformly among the
 * others, with Poisson arrivals whose mean gap makes the requests and their
 * responses occupy `load` of the host link on average; sizes are drawn from
 * a workload.  A server takes a request at once and answers with a
 * reply_bytes response.  A message's completion time runs from
 * homa_ep_send_request at the client to the moment homa_ep_receive hands
 * the whole request to the server application.
 *
 * Determinism: the only inputs are the parameters and the seed; events at
 * equal times run in the order they were scheduled; no wall clock is read.
 * The same parameters give the same messages and times, bit for bit.
 */
#ifndef SIM_H
#define SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "homa_config.h"
#include "homa_stats.h"
#include "sim_workload.h"

enum sim_topology {
	SIM_TOPO_ONE_SWITCH = 0,   /* every host on one ToR switch */
	SIM_TOPO_TWO_TIER = 1,     /* racks under ToRs, ToRs under spines */
};

/* How unscheduled priorities are cut by message length. */
enum sim_cutoffs {
	SIM_CUTOFFS_AUTO = 0,      /* CORE with 8 priorities, else WORKLOAD */
	SIM_CUTOFFS_CORE = 1,      /* the core's cutoffs on the top levels */
	SIM_CUTOFFS_WORKLOAD = 2,  /* equal unscheduled bytes per level */
};

struct sim_params {
	enum sim_topology topology;
	int hosts;                 /* one-switch: hosts (>= 2); two-tier:
				    * set by sim_params_check to racks *
				    * hosts_per_rack */
	int racks;                 /* two-tier: racks (>= 2) */
	int hosts_per_rack;        /* two-tier: hosts under each ToR */
	int spines;                /* two-tier: spine switches (>= 1) */
	uint32_t link_mbps;        /* host links */
	uint32_t uplink_mbps;      /* ToR-spine links (two-tier) */
	uint64_t delay_ns;         /* propagation delay of every link */
	uint64_t buffer_bytes;     /* per egress port, shared by its queues */
	int priorities;            /* 1..8: switch queues and core levels */
	enum sim_cutoffs cutoffs;
	double load;               /* (0, 1]: fraction of the host link */
	uint64_t messages;         /* requests to send in all */
	uint64_t warmup;           /* first messages left out of statistics */
	uint64_t seed;
	uint64_t until_ns;         /* stop at this virtual time (0: never) */
	uint32_t reply_bytes;      /* response size (>= 1) */
	size_t region_bytes;       /* receive buffer region per host */
	struct homa_config core;   /* endpoint settings; sim_params_check
				    * applies priorities and cutoffs */
	const struct sim_workload *workload;  /* not owned */
};

/* One request message of a run. */
struct sim_msg {
	uint32_t size;             /* bytes */
	uint32_t src, dst;         /* host indexes */
	uint64_t start_ns;         /* homa_ep_send_request */
	uint64_t done_ns;          /* the server took it (0: never) */
	bool failed;               /* the client RPC failed first */
};

/* What a run did. */
struct sim_counters {
	uint64_t generated;        /* requests sent */
	uint64_t completed;        /* requests the servers took */
	uint64_t failed;           /* client RPCs that failed before that */
	uint64_t events;           /* events processed */
	uint64_t packets;          /* packets put on host links */
	uint64_t switch_drops;     /* packets dropped: port buffer full */
	uint64_t unroutable;       /* packets to no host */
	uint64_t fault_drops;      /* packets the fault hook dropped */
	uint64_t max_port_bytes;   /* most bytes queued at one port */
	uint64_t max_wait_ns;      /* longest a packet waited in a queue */
	uint64_t end_ns;           /* virtual time at the end */
	uint64_t core[HOMA_STAT_COUNT];  /* endpoint counters, all hosts */
};

struct sim;

/* sim_params_defaults - 16 hosts on one switch, 10 Gbit/s, 1 us links,
 * 1 MiB per port, 8 priorities, auto cutoffs, load 0.5, 1000 messages,
 * seed 1, 1-byte replies, 64 MiB regions, the core's defaults; no
 * workload (the caller must set one). */
void sim_params_defaults(struct sim_params *p);

/*
 * sim_params_check - validate p and derive what follows from it: hosts of
 * a two-tier topology, the core's link_mbps, num_priorities,
 * max_sched_prio and unscheduled cutoffs.  Returns 0, or -EINVAL with the
 * reason in err.
 */
int sim_params_check(struct sim_params *p, char *err, size_t errcap);

/*
 * sim_create - build the network, hosts and endpoints for checked
 * parameters.  Returns the simulation (free with sim_destroy) or NULL with
 * the reason in err (out of memory, an endpoint the core refused).
 */
struct sim *sim_create(const struct sim_params *p, char *err, size_t errcap);

/* sim_destroy - free everything of s (NULL ignored). */
void sim_destroy(struct sim *s);

/*
 * sim_run - run the traffic of the parameters until every request has
 * completed or failed, or until until_ns.  Returns 0, or -ENOMEM.
 */
int sim_run(struct sim *s);

/* sim_messages - the run's messages in the order they were generated. */
const struct sim_msg *sim_messages(const struct sim *s, size_t *count);

/* sim_counters - the run's counters. */
const struct sim_counters *sim_get_counters(const struct sim *s);

/* sim_same_rack - true when hosts a and b hang under the same switch. */
bool sim_same_rack(const struct sim_params *p, uint32_t a, uint32_t b);

/*
 * sim_unloaded_ns - the completion time of one message of size bytes on an
 * idle network of the same kind (same links, switches and settings), sent
 * between two hosts of one rack (same_rack) or of two racks.  Returns the
 * time in ns, or 0 when it failed (out of memory; the message did not
 * complete).
 */
uint64_t sim_unloaded_ns(const struct sim_params *p, uint32_t size,
			 bool same_rack);

/* sim_send_one - send one request of size bytes from host src to host dst
 * now (for tests and the unloaded measurement).  Returns the message index
 * or -1 (bad hosts, out of memory, the core refused). */
long sim_send_one(struct sim *s, uint32_t src, uint32_t dst, uint32_t size);

#endif /* SIM_H */
