/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * sim_campaign - one seeded fault run with every invariant checked (issue
 * #4), the unit that homa-faults repeats over a range of seeds.
 *
 * The seed derives everything: the fault plan (sim_fault.h), the length
 * of the fault phase, the traffic's timing, sizes and destinations, and a
 * few core settings (receive region size, unscheduled bytes, gap records,
 * overcommitment, switch buffers).  A run has three parts:
 *
 *   1. the fault phase: `messages` requests over the hosts while the
 *      faults of the plan act;
 *   2. the healed phase: no more faults; `heal_messages` more requests,
 *      each of which must complete with its response.  Every request,
 *      of either phase, must have its result within SIM_CAMPAIGN_LIVENESS_NS
 *      of the heal;
 *   3. a quiet period without traffic (acks, timeouts, leases run out),
 *      then the leak checks of sim_check_quiet.
 *
 * Invariants (violations are logged by the simulator, see sim_host.c):
 *   - each client RPC completes exactly once: its response, with exactly
 *     the bytes of the response to its request (every byte checked), or
 *     the error ETIMEDOUT, and only in the fault phase; or it is lost with
 *     its client host when that host restarts;
 *   - a response only ever completes the RPC whose request it answers
 *     (cookie, id, incarnation and content agree);
 *   - a request reaches a server application only if a client sent it,
 *     with exactly its bytes, and one server incarnation executes it at
 *     most once while it may still hold the RPC: again only after the
 *     timeout (timeout_ticks - 1 ticks later), once the client RPC has
 *     ended (a late duplicate), or for a tainted RPC;
 *   - an endpoint never holds more than max_rpcs RPCs;
 *   - at the end: no RPC in any endpoint, no bpage with the application,
 *     every bpage free but at most one leased partial bpage, no packet
 *     anywhere.
 * RPCs named by a corrupted packet that escaped the checksum are exempt
 * from the content checks and may fail with any error; they must still
 * complete exactly once.
 */
#ifndef SIM_CAMPAIGN_H
#define SIM_CAMPAIGN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "sim.h"

/* Virtual time after the heal within which everything must be done. */
#define SIM_CAMPAIGN_LIVENESS_NS 3000000000ull

/* Core settings a campaign may set over the seeds' own. */
#define SIM_CAMPAIGN_MAX_SETS 8

struct sim_campaign_opts {
	uint32_t hosts;            /* 2..64 [4] */
	uint64_t messages;         /* fault-phase requests [40] */
	uint64_t heal_messages;    /* healed-phase requests [10] */
	int priorities;            /* 1..8 [8] */
	bool pacer_off;
	bool no_escapes;           /* every corruption is caught by the
				    * checksum (except collisions) */
	bool fast_restarts;        /* restarts need not outlast packets
				    * (sim_fault_plan_derive) */
	const struct workload_dist *requests;  /* request sizes (not owned) */
	const struct workload_dist *replies;   /* response sizes (not owned) */
	/* Core settings set for every seed after the seed's own (--set);
	 * names are homa_config names, not owned. */
	int nsets;
	const char *set_name[SIM_CAMPAIGN_MAX_SETS];
	int64_t set_value[SIM_CAMPAIGN_MAX_SETS];
	FILE *trace;               /* as in sim_params */
	uint32_t trace_host;
	uint64_t trace_id;
};

/* sim_campaign_defaults - the defaults above; the caller sets the
 * workloads (sim_campaign_workloads gives the built-in ones). */
void sim_campaign_defaults(struct sim_campaign_opts *o);

/*
 * sim_campaign_workloads - the built-in size mixes: requests from 1 byte
 * to 1 MB (single packets, a few packets, grants, long messages), and
 * responses mostly small.  Returns 0 or -ENOMEM; free both with
 * workload_dist_free.
 */
int sim_campaign_workloads(struct workload_dist *requests,
			   struct workload_dist *replies);

/* What one seed did. */
struct sim_campaign_result {
	uint64_t seed;
	struct sim_fault_plan plan;
	struct sim_params params;      /* as run (workload pointers kept) */
	struct sim_counters c;
	struct sim_violations v;
	uint64_t heal_ns, done_ns;     /* the heal; every RPC done (0: not) */
	uint64_t end_ns;               /* end of the quiet period */
};

/*
 * sim_campaign_run - run seed with the options and check every invariant.
 * Returns 0 (r filled; r->v.count == 0 when no invariant was violated),
 * -EINVAL (bad options; message in err), or -ENOMEM.
 */
int sim_campaign_run(const struct sim_campaign_opts *o, uint64_t seed,
		     struct sim_campaign_result *r, char *err, size_t errcap);

/* sim_campaign_print - a few lines on what the run did (settings, plan,
 * counters). */
void sim_campaign_print(FILE *out, const struct sim_campaign_result *r);

#endif /* SIM_CAMPAIGN_H */
