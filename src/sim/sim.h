/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * sim - a deterministic network simulator that drives the real Homa core
 * (src/core) in virtual time.
 *
 * Hosts each run one endpoint (a server on port 1 that also sends
 * requests) behind a NIC that transmits at the host link rate from a FIFO
 * queue into which the host moves every packet homa_ep_output releases:
 * the core's pacer (link_mbps = the host link rate, max_nic_queue_ns)
 * keeps that queue short; with the pacer off the core does not throttle
 * and the queue takes everything at once.  Links have a
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
 * Checking: every request and response carries a pattern derived from its
 * message and offset; the receiving application checks every byte, that a
 * response belongs to the RPC it completes, that each client RPC completes
 * once, and (sim_check.h) logs every violation.  With a fault plan
 * (sim_fault.h) the run has a fault phase and then a healed phase.
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
#include <stdio.h>

#include "homa_config.h"
#include "homa_stats.h"
#include "sim_check.h"
#include "sim_fault.h"
#include "workload_dist.h"

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
	uint32_t bottleneck_mbps;  /* not 0: the switch ports towards hosts
				    * run at this rate while host NICs and
				    * the core's link_mbps stay at
				    * link_mbps (a slow path the hosts do
				    * not know of); load is a fraction of
				    * it */
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
	const struct workload_dist *reply_workload;  /* not NULL: response
				    * sizes drawn from it instead */
	size_t region_bytes;       /* receive buffer region per host */
	bool pacer_off;            /* the core does not throttle (flag
				    * HOMA_FLAG_DONT_THROTTLE) */
	bool check_content;        /* fill and check every byte [true] */
	bool wait_responses;       /* the run ends when every client RPC
				    * has its response or error [false] */
	uint64_t mean_gap_ns;      /* not 0: mean gap between a host's
				    * requests (instead of from load) */
	uint64_t service_ns;       /* not 0: a slow server application:
				    * after taking a request it takes the
				    * next only service_ns later (requests
				    * wait in the endpoint meanwhile) */
	uint32_t service_hosts;    /* with service_ns: hosts 0..N-1 are
				    * slow (0: every host) */
	uint64_t rx_ns;            /* not 0: a receiver slower than its
				    * link: CPU time per packet before the
				    * endpoint sees it; packets wait in a
				    * FIFO (a socket buffer) meanwhile */
	uint64_t rx_queue_bytes;   /* with rx_ns: most wire bytes waiting;
				    * more are dropped, as a full socket
				    * buffer drops them */
	uint32_t rx_hosts;         /* with rx_ns: hosts 0..N-1 are slow
				    * (0: every host) */
	bool rx_backlog_quiet;     /* slow receivers do not tell their
				    * endpoint when packets wait in their
				    * FIFO (homa_rx_batch.behind): an
				    * ablation [false] */
	uint32_t server_hosts;     /* not 0: only hosts N..hosts-1 send
				    * requests, each to one of hosts 0..N-1
				    * (incast); 0: every host sends to the
				    * others */
	const struct sim_fault_plan *faults;  /* NULL: none (copied) */
	uint64_t heal_messages;    /* with faults: requests sent after the
				    * fault phase, besides `messages` */
	FILE *trace;               /* not NULL: print packets and RPC events
				    * (of one RPC when trace_id != 0) */
	uint32_t trace_host;       /* the traced RPC: its client host */
	uint64_t trace_id;         /* and client id (0: everything) */
	struct homa_config core;   /* endpoint settings; sim_params_check
				    * applies priorities and cutoffs */
	const struct workload_dist *workload;  /* not owned */
};

/* What became of a client RPC. */
enum sim_msg_state {
	SIM_MSG_PENDING = 0,       /* no response or error yet */
	SIM_MSG_OK = 1,            /* the response arrived */
	SIM_MSG_FAILED = 2,        /* the RPC failed (error) */
	SIM_MSG_LOST = 3,          /* its client host restarted first */
};

/* One request message of a run (and its RPC). */
struct sim_msg {
	uint32_t size;             /* bytes */
	uint32_t src, dst;         /* host indexes */
	uint64_t start_ns;         /* homa_ep_send_request */
	uint64_t done_ns;          /* the server took it (0: never) */
	bool failed;               /* the client RPC failed first */
	bool healed;               /* sent after the fault phase */
	uint8_t state;             /* enum sim_msg_state */
	int error;                 /* errno of a failed RPC */
	uint32_t reply_size;       /* bytes of its response */
	uint32_t client_inc;       /* incarnation of the client host */
	uint64_t id;               /* client RPC id */
	uint64_t resp_ns;          /* the client's result came (0: not yet) */
	uint32_t execs;            /* times a server application took it */
	uint32_t exec_inc;         /* server incarnation of the last one */
	uint32_t exec_mask;        /* bit i: incarnation i executed it (i
				    * above 31 counts as 31) */
	uint64_t exec_ns;          /* time of the last one */
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
	uint64_t max_nic_queue_bytes;  /* most wire bytes waiting in a NIC
				    * queue behind the packet on the link */
	uint64_t rx_drops;         /* packets a slow receiver's full FIFO
				    * dropped (rx_ns) */
	uint64_t max_rx_queue_bytes;   /* most wire bytes waiting there */
	uint64_t end_ns;           /* virtual time at the end */
	/* Client RPCs. */
	uint64_t responses;        /* completed with their response */
	uint64_t client_errors;    /* completed with an error */
	uint64_t lost;             /* lost with their restarted client */
	uint64_t executions;       /* requests taken by servers, all told */
	uint64_t reexecutions;     /* of them, allowed second executions */
	/* Faults. */
	uint64_t fault_dups;       /* packets delivered twice */
	uint64_t fault_reorders;   /* packets held back a little */
	uint64_t fault_delays;     /* packets held back a lot */
	uint64_t fault_corrupts;   /* packets with bytes changed */
	uint64_t fault_escapes;    /* of them, passed the checksum */
	uint64_t partition_drops;  /* packets a partition cut */
	uint64_t csum_drops;       /* packets the receiving datapath refused */
	uint64_t down_drops;       /* packets that reached a crashed host */
	uint64_t restarts;         /* hosts that crashed */
	uint64_t violations;       /* invariant violations (sim_check.h) */
	uint64_t core[HOMA_STAT_COUNT];  /* endpoint counters, all hosts */
};

struct sim;

/* sim_params_defaults - 16 hosts on one switch, 10 Gbit/s, 1 us links,
 * 1 MiB per port, 8 priorities, auto cutoffs, load 0.5, 1000 messages,
 * seed 1, 1-byte replies, 64 MiB regions, pacer on, contents checked,
 * receivers as fast as their links (a slow one would queue up to 32 MiB),
 * no faults, the core's defaults but max_nic_queue_ns 0 (a simulated
 * pacer wakes exactly when its link goes idle, so no allowance of paced
 * data waits at the NIC; sim_params.c); no workload (the caller must set
 * one). */
void sim_params_defaults(struct sim_params *p);

/*
 * sim_params_check - validate p and derive what follows from it: hosts of
 * a two-tier topology, the core's link_mbps, num_priorities,
 * max_sched_prio and unscheduled cutoffs.  Returns 0, or -EINVAL with the
 * reason in err.
 */
int sim_params_check(struct sim_params *p, char *err, size_t errcap);

/* sim_params_packet_wire_bytes - the bytes a packet of the core's mtu
 * occupies on a link: the least a port buffer or a slow receiver's FIFO
 * must hold. */
uint32_t sim_params_packet_wire_bytes(const struct sim_params *p);

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
 * completed or failed (and with wait_responses, every client RPC has its
 * result), or until until_ns.  Returns 0, or -ENOMEM.
 */
int sim_run(struct sim *s);

/*
 * sim_run_to - run events due up to virtual time t, after which the
 * virtual time is t; with stop_when_done, stop as soon as the run is
 * finished as for sim_run (the time is then that of the last event).
 * Returns 0, or -ENOMEM.
 */
int sim_run_to(struct sim *s, uint64_t t, bool stop_when_done);

/* sim_finished - true when the run is finished as for sim_run. */
bool sim_finished(const struct sim *s);

/* sim_now - the virtual time reached. */
uint64_t sim_now(const struct sim *s);

/* sim_get_violations - the invariant violations seen so far. */
const struct sim_violations *sim_get_violations(const struct sim *s);

/*
 * sim_check_quiet - the end-of-run checks, for a network that has been
 * left without traffic long enough for acks, timeouts and leases: every
 * client RPC has its result, every host is up, no endpoint holds an RPC,
 * the applications hold no bpages, the pools are whole (but for one
 * leased partial bpage per core), no packet is on a link, in a queue or
 * waiting at a NIC.  Violations go to the log.  Returns how many it
 * found.
 */
uint64_t sim_check_quiet(struct sim *s);

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

/* sim_offered_load - the fraction of a host link the requests and their
 * responses fill on average: load, or with mean_gap_ns what that gap
 * works out to (more than 1 when the hosts send faster than their links
 * carry).  Needs p->workload. */
double sim_offered_load(const struct sim_params *p);

/* sim_send_one - send one request of size bytes from host src to host dst
 * now (for tests and the unloaded measurement).  Returns the message index
 * or -1 (bad hosts, out of memory, the core refused). */
long sim_send_one(struct sim *s, uint32_t src, uint32_t dst, uint32_t size);

#endif /* SIM_H */
