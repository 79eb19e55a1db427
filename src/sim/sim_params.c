// SPDX-License-Identifier: BSD-2-Clause
/*
 * Simulation parameters: defaults, validation, and the core settings that
 * follow from them (link speed, priority levels, unscheduled cutoffs).
 * See sim.h.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "homa.h"
#include "sim_internal.h"

void sim_params_defaults(struct sim_params *p)
{
	memset(p, 0, sizeof(*p));
	p->topology = SIM_TOPO_ONE_SWITCH;
	p->hosts = 16;
	p->racks = 9;
	p->hosts_per_rack = 16;
	p->spines = 4;
	p->link_mbps = 10000;
	p->uplink_mbps = 40000;
	p->delay_ns = 1000;
	p->buffer_bytes = 1024 * 1024;
	p->priorities = 8;
	p->cutoffs = SIM_CUTOFFS_AUTO;
	p->load = 0.5;
	p->messages = 1000;
	p->seed = 1;
	p->reply_bytes = 1;
	p->region_bytes = (size_t)64 << 20;
	p->rx_queue_bytes = (uint64_t)32 << 20;
	p->check_content = true;
	homa_config_defaults(&p->core);
	/* The kernel lets 5 us of paced data wait at the NIC because a real
	 * pacer wakes late and NIC completions come asynchronously; a
	 * simulated host's pacer wakes exactly when its link goes idle, so
	 * the allowance would only add queueing (the Homa paper's simulated
	 * senders hand a packet to the link when it is free).  Callers may
	 * set it again after this (homa-sim --set max_nic_queue_ns=5000). */
	p->core.max_nic_queue_ns = 0;
}

/* Most hosts a simulation may have (addresses 10.0.0.1 and up). */
#define SIM_MAX_HOSTS 65536

/* check_topology - hosts, racks and spines make sense; sets p->hosts for
 * two tiers.  Returns NULL or the reason. */
static const char *check_topology(struct sim_params *p)
{
	if (p->topology == SIM_TOPO_TWO_TIER) {
		if (p->racks < 2 || p->racks > 4096)
			return "two-tier: racks must be 2..4096";
		if (p->hosts_per_rack < 1 ||
		    p->hosts_per_rack > SIM_MAX_HOSTS / p->racks)
			return "two-tier: too many or too few hosts per rack";
		if (p->spines < 1 || p->spines > 256)
			return "two-tier: spines must be 1..256";
		p->hosts = p->racks * p->hosts_per_rack;
	} else if (p->topology != SIM_TOPO_ONE_SWITCH) {
		return "unknown topology";
	}
	if (p->hosts < 2 || p->hosts > SIM_MAX_HOSTS)
		return "hosts must be 2..65536";
	if (p->server_hosts >= (uint32_t)p->hosts)
		return "server hosts must be fewer than the hosts";
	return NULL;
}

uint32_t sim_params_packet_wire_bytes(const struct sim_params *p)
{
	return sim_wire_bytes((uint32_t)p->core.mtu);
}

/* check_traffic - load, sizes and limits.  Returns NULL or the reason. */
static const char *check_traffic(const struct sim_params *p)
{
	uint32_t max_wire = sim_params_packet_wire_bytes(p);

	if (!p->workload)
		return "no workload";
	if (!(p->load > 0.0 && p->load <= 1.0))
		return "load must be in (0, 1]";
	if (p->link_mbps < 1 || p->uplink_mbps < 1)
		return "link rates must be at least 1 Mbit/s";
	if (p->link_mbps > 1000000 || p->uplink_mbps > 1000000 ||
	    p->bottleneck_mbps > 1000000)
		return "link rates must be at most 1000 Gbit/s";
	if (p->buffer_bytes < max_wire)
		return "port buffer smaller than one packet";
	if (p->priorities < 1 || p->priorities > SIM_MAX_QUEUES)
		return "priorities must be 1..8";
	if (p->reply_bytes < 1 || p->reply_bytes > HOMA_MAX_MESSAGE_LENGTH)
		return "reply size must be 1..1000000";
	if (p->region_bytes < (size_t)HOMA_BPAGE_SIZE * (HOMA_MAX_BPAGES + 2))
		return "buffer region too small for a 1 MB message";
	if (p->warmup > p->messages)
		return "warm-up longer than the run";
	if (p->faults && p->faults->heal_ns == 0)
		return "a fault plan needs a fault phase (heal time > 0)";
	if (p->rx_ns != 0 && p->rx_queue_bytes < max_wire)
		return "a slow receiver's FIFO must hold one packet";
	return NULL;
}

/* unsched_of - the unscheduled bytes of a message of size. */
static double unsched_of(uint32_t size, uint64_t unsched)
{
	return (double)(size < unsched ? size : unsched);
}

/* workload_cutoffs - into bound[0..levels-1), the largest sizes of the
 * levels above the lowest unscheduled one (bound[0]: the highest level):
 * each level carries about the same share of unscheduled bytes. */
static void workload_cutoffs(const struct sim_params *p, int levels,
			     int64_t *bound)
{
	const struct workload_dist *w = p->workload;
	uint64_t unsched = (uint64_t)p->core.unsched_bytes;
	double total = 0.0, acc = 0.0, prev = 0.0;
	size_t i;
	int k = 1;

	for (i = 0; i < w->n; i++) {
		total += (w->cum[i] - prev) * unsched_of(w->sizes[i], unsched);
		prev = w->cum[i];
	}
	prev = 0.0;
	for (i = 0; i < w->n && k < levels; i++) {
		acc += (w->cum[i] - prev) * unsched_of(w->sizes[i], unsched);
		prev = w->cum[i];
		while (k < levels && acc >= total * k / levels)
			bound[k++ - 1] = w->sizes[i];
	}
	while (k < levels)
		bound[k++ - 1] = HOMA_MAX_MESSAGE_LENGTH;
}

/*
 * apply_priorities - the core's priority settings for n levels: the lower
 * half (at least one level) carries scheduled data, the upper half
 * unscheduled data cut by length.  Core cutoffs keep the core's values
 * for the top unscheduled levels (n = 8 gives the core's defaults); auto
 * takes them for n = 8 only, since with fewer levels the lowest
 * unscheduled one would mix short messages with the unscheduled bytes of
 * long ones.
 */
static void apply_priorities(struct sim_params *p)
{
	struct homa_config *c = &p->core;
	int n = p->priorities, sched = n / 2 > 0 ? n / 2 : 1;
	int levels = n - sched, i;
	int64_t bound[SIM_MAX_QUEUES], core_cut[SIM_MAX_QUEUES];

	memcpy(core_cut, c->unsched_cutoffs, sizeof(core_cut));
	c->num_priorities = n;
	c->max_sched_prio = n == 1 ? 0 : sched - 1;
	for (i = 0; i < SIM_MAX_QUEUES; i++)
		c->unsched_cutoffs[i] = i < n ? HOMA_MAX_MESSAGE_LENGTH : 0;
	if (levels <= 1)
		return;
	if (p->cutoffs == SIM_CUTOFFS_WORKLOAD ||
	    (p->cutoffs == SIM_CUTOFFS_AUTO && n != SIM_MAX_QUEUES))
		workload_cutoffs(p, levels, bound);
	else
		for (i = 0; i < levels - 1; i++)
			bound[i] = core_cut[SIM_MAX_QUEUES - 1 - i];
	for (i = 0; i < levels - 1; i++)
		c->unsched_cutoffs[n - 1 - i] = bound[i];
}

int sim_params_check(struct sim_params *p, char *err, size_t errcap)
{
	const char *why = check_topology(p);

	if (!why)
		why = check_traffic(p);
	if (why) {
		snprintf(err, errcap, "%s", why);
		return -EINVAL;
	}
	p->core.link_mbps = p->link_mbps;
	if (p->pacer_off)
		p->core.flags |= HOMA_FLAG_DONT_THROTTLE;
	else
		p->core.flags &= ~(int64_t)HOMA_FLAG_DONT_THROTTLE;
	apply_priorities(p);
	if (homa_config_check(&p->core) != 0) {
		snprintf(err, errcap, "inconsistent core settings (cutoffs "
			 "or priorities)");
		return -EINVAL;
	}
	return 0;
}

bool sim_same_rack(const struct sim_params *p, uint32_t a, uint32_t b)
{
	if (p->topology != SIM_TOPO_TWO_TIER)
		return true;
	return a / (uint32_t)p->hosts_per_rack ==
	       b / (uint32_t)p->hosts_per_rack;
}
