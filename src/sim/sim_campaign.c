// SPDX-License-Identifier: BSD-2-Clause
/* One seeded fault run with its invariants: see sim_campaign.h. */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "homa.h"
#include "sim_campaign.h"
#include "workload_rng.h"

/* Stream of the seed for the run's settings (the traffic, the plan and the
 * hook have their own). */
#define SIM_STREAM_CAMPAIGN 7

/* Request sizes: single bytes, the edges of packets (1424 bytes of
 * payload at MTU 1500), of the unscheduled bytes (40000) and of bpages
 * (65536), and long messages up to the 1 MB limit. */
static const char request_sizes[] =
	"1 0.04\n100 0.12\n1423 0.18\n1424 0.22\n1425 0.26\n2849 0.30\n"
	"10000 0.40\n39999 0.46\n40000 0.50\n40001 0.54\n65535 0.58\n"
	"65536 0.62\n65537 0.66\n100000 0.76\n200000 0.86\n500000 0.95\n"
	"1000000 1\n";

/* Response sizes: mostly short, some long. */
static const char reply_sizes[] =
	"1 0.30\n100 0.55\n1424 0.65\n5000 0.75\n65537 0.85\n200000 0.95\n"
	"1000000 1\n";

void sim_campaign_defaults(struct sim_campaign_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->hosts = 4;
	o->messages = 40;
	o->heal_messages = 10;
	o->priorities = 8;
}

int sim_campaign_workloads(struct workload_dist *requests,
			   struct workload_dist *replies)
{
	char err[128];

	if (workload_dist_parse(requests, request_sizes,
				HOMA_MAX_MESSAGE_LENGTH, "fault-requests", err,
				sizeof(err)) != 0)
		return -ENOMEM;
	if (workload_dist_parse(replies, reply_sizes, HOMA_MAX_MESSAGE_LENGTH,
				"fault-replies", err, sizeof(err)) != 0) {
		workload_dist_free(requests);
		return -ENOMEM;
	}
	return 0;
}

/* between - a uniform integer in [lo, hi]. */
static uint64_t between(struct workload_rng *r, uint64_t lo, uint64_t hi)
{
	return lo + workload_rng_below(r, hi - lo + 1);
}

/* derive_settings - the seed's network and core settings: small receive
 * regions (messages wait for buffer space), other unscheduled byte counts,
 * few gap records, less overcommitment, small switch buffers. */
static void derive_settings(struct sim_params *p, struct workload_rng *r)
{
	uint64_t bpages = HOMA_MAX_BPAGES + 2;

	switch (workload_rng_below(r, 3)) {
	case 0:
		p->region_bytes = (size_t)bpages * HOMA_BPAGE_SIZE;
		break;
	case 1:
		p->region_bytes = (size_t)(bpages + between(r, 1, 16)) *
				  HOMA_BPAGE_SIZE;
		break;
	default:
		p->region_bytes = (size_t)64 << 20;
		break;
	}
	if (workload_rng_below(r, 3) == 0)
		p->core.unsched_bytes = (int64_t)between(r, 1, 60000);
	if (workload_rng_below(r, 4) == 0)
		p->core.max_gaps = (int64_t)between(r, 1, 6);
	if (workload_rng_below(r, 4) == 0)
		p->core.max_overcommit = (int64_t)between(r, 1, 8);
	if (workload_rng_below(r, 4) == 0)
		p->buffer_bytes = between(r, 8, 128) * 1024;
}

int sim_campaign_run(const struct sim_campaign_opts *o, uint64_t seed,
		     struct sim_campaign_result *r, char *err, size_t errcap)
{
	struct sim_params *p = &r->params;
	uint64_t timeout_ns, quiet_ns, heal_ns, spread;
	struct workload_rng rng;
	struct sim *s;
	int rc, i;

	memset(r, 0, sizeof(*r));
	r->seed = seed;
	if (o->hosts < 2 || o->hosts > SIM_FAULT_MAX_HOSTS ||
	    o->messages < 1 || !o->requests || !o->replies) {
		snprintf(err, errcap, "hosts must be 2..%d, messages >= 1",
			 SIM_FAULT_MAX_HOSTS);
		return -EINVAL;
	}
	workload_rng_seed(&rng, seed, SIM_STREAM_CAMPAIGN);
	sim_params_defaults(p);
	p->hosts = (int)o->hosts;
	p->priorities = o->priorities;
	p->pacer_off = o->pacer_off;
	p->workload = o->requests;
	p->reply_workload = o->replies;
	p->messages = o->messages;
	p->heal_messages = o->heal_messages;
	p->seed = seed;
	p->wait_responses = true;
	p->check_content = true;
	p->trace = o->trace;
	p->trace_host = o->trace_host;
	p->trace_id = o->trace_id;
	/* The fault phase lasts 5..155 ms; its requests come over all of
	 * it or crowd into its start. */
	heal_ns = between(&rng, 5000000, 155000000);
	spread = heal_ns * o->hosts / o->messages;
	p->mean_gap_ns = 1 + spread / between(&rng, 1, 20);
	derive_settings(p, &rng);
	for (i = 0; i < o->nsets; i++)
		if (homa_config_set_value(&p->core, o->set_name[i],
					  o->set_value[i]) != 0) {
			snprintf(err, errcap, "cannot set %s", o->set_name[i]);
			return -EINVAL;
		}
	sim_fault_plan_derive(&r->plan, seed, o->hosts, heal_ns,
			      !o->fast_restarts);
	if (o->no_escapes)
		r->plan.escape = 0.0;
	p->faults = &r->plan;
	if (sim_params_check(p, err, errcap) != 0)
		return -EINVAL;
	s = sim_create(p, err, errcap);
	if (!s)
		return -ENOMEM;
	r->heal_ns = heal_ns;
	rc = sim_run_to(s, heal_ns + SIM_CAMPAIGN_LIVENESS_NS, true);
	if (rc == 0 && sim_finished(s))
		r->done_ns = sim_now(s);
	/* Quiet: the longest a delayed packet can still be on its way, then
	 * enough for a server to time out a forgotten RPC twice over and
	 * for leases to run out. */
	timeout_ns = (uint64_t)p->core.timeout_ticks *
		     (uint64_t)p->core.tick_usecs * 1000;
	quiet_ns = r->plan.delay_max_ns + 2 * timeout_ns +
		   2 * (uint64_t)p->core.bpage_lease_usecs * 1000 + 50000000;
	if (rc == 0)
		rc = sim_run_to(s, sim_now(s) + quiet_ns, false);
	r->end_ns = sim_now(s);
	if (rc == 0)
		sim_check_quiet(s);
	r->c = *sim_get_counters(s);
	r->v = *sim_get_violations(s);
	p->faults = NULL;
	sim_destroy(s);
	if (rc) {
		snprintf(err, errcap, "out of memory");
		return rc;
	}
	return 0;
}

void sim_campaign_print(FILE *out, const struct sim_campaign_result *r)
{
	const struct sim_params *p = &r->params;
	const struct sim_counters *c = &r->c;

	fprintf(out, "seed %llu: %d hosts, region %zu KiB, unsched_bytes "
		"%lld, max_gaps %lld, overcommit %lld, port buffer %llu KiB, "
		"mean gap %.3f ms\n", (unsigned long long)r->seed, p->hosts,
		p->region_bytes >> 10, (long long)p->core.unsched_bytes,
		(long long)p->core.max_gaps, (long long)p->core.max_overcommit,
		(unsigned long long)(p->buffer_bytes >> 10),
		p->mean_gap_ns / 1e6);
	sim_fault_plan_print(out, &r->plan);
	fprintf(out, "  requests %llu: ok %llu, failed %llu, lost in restarts "
		"%llu; executions %llu (again: %llu); all done at %.3f ms, "
		"checked at %.3f ms\n", (unsigned long long)c->generated,
		(unsigned long long)c->responses,
		(unsigned long long)c->client_errors,
		(unsigned long long)c->lost,
		(unsigned long long)c->executions,
		(unsigned long long)c->reexecutions, r->done_ns / 1e6,
		r->end_ns / 1e6);
	fprintf(out, "  packets %llu: dropped %llu, partitioned %llu, "
		"duplicated %llu, reordered %llu, delayed %llu, corrupted %llu "
		"(%llu past the checksum), checksum drops %llu, at crashed "
		"hosts %llu, switch drops %llu; restarts %llu; events %llu\n",
		(unsigned long long)c->packets,
		(unsigned long long)c->fault_drops,
		(unsigned long long)c->partition_drops,
		(unsigned long long)c->fault_dups,
		(unsigned long long)c->fault_reorders,
		(unsigned long long)c->fault_delays,
		(unsigned long long)c->fault_corrupts,
		(unsigned long long)c->fault_escapes,
		(unsigned long long)c->csum_drops,
		(unsigned long long)c->down_drops,
		(unsigned long long)c->switch_drops,
		(unsigned long long)c->restarts,
		(unsigned long long)c->events);
}
