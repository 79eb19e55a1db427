// SPDX-License-Identifier: BSD-2-Clause
/*
 * The simulation driver: creation, Poisson arrivals of requests, the
 * event loop, and the unloaded (idle network) measurement.  See sim.h.
 */

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"

/* Stream numbers of the seed (hosts use 16 + host index). */
#define SIM_STREAM_SPRAY 1

void sim_push(struct sim *s, uint64_t time, enum sim_ev_kind kind,
	      uint32_t index, void *ptr)
{
	if (sim_events_push(&s->ev, time, (uint32_t)kind, index, ptr) != 0) {
		s->oom = true;
		if (kind == SIM_EV_DELIVER && ptr)
			sim_pkt_free(s, ptr);
	}
}

/* wire_of_message - bytes a message of size occupies on a link: its
 * payload plus one DATA header and frame overhead per packet. */
static double wire_of_message(uint32_t size, const void *ctx)
{
	const struct sim_params *p = ctx;
	uint32_t seg = (uint32_t)p->core.mtu - SIM_IPV4_HEADER -
		       HOMA_DATA_HDR_LEN;
	uint32_t pkts = (size + seg - 1) / seg;

	return (double)size + (double)pkts *
	       (sim_wire_bytes(HOMA_DATA_HDR_LEN + seg) - seg);
}

/* mean_gap - mean ns between two requests of one host: a host link
 * carries the host's requests and the responses to the requests it
 * serves (as many on average), which together fill `load` of it. */
static double mean_gap(const struct sim_params *p)
{
	double bytes = sim_workload_expect(p->workload, wire_of_message, p) +
		       wire_of_message(p->reply_bytes, p);

	return bytes * 8000.0 / (p->load * (double)p->link_mbps);
}

/* start_hosts - give every endpoint the time 0 and arm its timer; with
 * traffic, schedule every host's first request. */
static void start_hosts(struct sim *s)
{
	uint32_t h;

	for (h = 0; h < s->nhosts; h++) {
		struct sim_host *host = &s->hosts[h];

		homa_ep_timer(host->ep, 0);
		sim_host_react(s, h);
		if (!s->traffic)
			continue;
		host->next_arrival = sim_rng_exponential(&host->rng,
							 s->mean_gap_ns);
		sim_push(s, (uint64_t)llround(host->next_arrival),
			 SIM_EV_ARRIVAL, h, NULL);
	}
}

struct sim *sim_create(const struct sim_params *p, char *err, size_t errcap)
{
	struct sim *s = calloc(1, sizeof(*s));

	if (!s) {
		snprintf(err, errcap, "out of memory");
		return NULL;
	}
	s->p = *p;
	s->nhosts = (uint32_t)p->hosts;
	s->pkt_cap = (size_t)p->core.mtu;
	s->traffic = p->messages > 0;
	s->mean_gap_ns = mean_gap(p);
	sim_events_init(&s->ev);
	sim_rng_seed(&s->spray, p->seed, SIM_STREAM_SPRAY);
	if (sim_hosts_create(s, err, errcap) != 0)
		goto fail;
	if (sim_net_build(s) != 0) {
		snprintf(err, errcap, "out of memory");
		goto fail;
	}
	start_hosts(s);
	if (s->oom) {
		snprintf(err, errcap, "out of memory");
		goto fail;
	}
	return s;
fail:
	sim_destroy(s);
	return NULL;
}

void sim_destroy(struct sim *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->ev.count; i++)
		if (s->ev.heap[i].kind == SIM_EV_DELIVER)
			free(s->ev.heap[i].ptr);
	sim_events_free(&s->ev);
	sim_net_free(s);
	sim_hosts_free(s);
	free(s->msgs);
	free(s);
}

/* new_msg - a message record; returns its index or -1 (no memory). */
static long new_msg(struct sim *s, uint32_t size, uint32_t src, uint32_t dst)
{
	struct sim_msg *m;

	if (s->nmsgs == s->capmsgs) {
		size_t cap = s->capmsgs ? s->capmsgs * 2 :
			     (s->p.messages ? s->p.messages : 16);
		void *q = realloc(s->msgs, cap * sizeof(*s->msgs));

		if (!q) {
			s->oom = true;
			return -1;
		}
		s->msgs = q;
		s->capmsgs = cap;
	}
	m = &s->msgs[s->nmsgs];
	memset(m, 0, sizeof(*m));
	m->size = size;
	m->src = src;
	m->dst = dst;
	m->start_ns = s->now;
	return (long)s->nmsgs++;
}

long sim_send_one(struct sim *s, uint32_t src, uint32_t dst, uint32_t size)
{
	long idx;

	if (src >= s->nhosts || dst >= s->nhosts || src == dst || size < 1 ||
	    size > HOMA_MAX_MESSAGE_LENGTH)
		return -1;
	idx = new_msg(s, size, src, dst);
	if (idx < 0)
		return -1;
	if (sim_host_send(s, src, (uint32_t)idx) != 0) {
		s->msgs[idx].failed = true;
		s->c.failed++;
		return -1;
	}
	return idx;
}

/* arrival - host h's next request is due: draw its size and destination,
 * send it, and schedule the one after. */
static void arrival(struct sim *s, uint32_t h)
{
	struct sim_host *host = &s->hosts[h];
	uint32_t size, dst;
	long idx;

	if (s->nmsgs >= s->p.messages)
		return;
	size = sim_workload_sample(s->p.workload,
				   sim_rng_uniform(&host->rng));
	dst = (uint32_t)sim_rng_below(&host->rng, s->nhosts - 1);
	if (dst >= h)
		dst++;
	host->next_arrival += sim_rng_exponential(&host->rng, s->mean_gap_ns);
	idx = new_msg(s, size, h, dst);
	if (idx >= 0 && sim_host_send(s, h, (uint32_t)idx) != 0) {
		s->msgs[idx].failed = true;
		s->c.failed++;
	}
	if (s->nmsgs < s->p.messages) {
		uint64_t t = (uint64_t)llround(host->next_arrival);

		sim_push(s, t > s->now ? t : s->now, SIM_EV_ARRIVAL, h, NULL);
	}
}

/* dispatch - run one event. */
static void dispatch(struct sim *s, const struct sim_event *ev)
{
	switch (ev->kind) {
	case SIM_EV_ARRIVAL:
		arrival(s, ev->index);
		break;
	case SIM_EV_NIC_FREE:
		sim_host_nic_free(s, ev->index);
		break;
	case SIM_EV_DELIVER:
		if (sim_is_host(s, ev->index))
			sim_host_deliver(s, ev->index, ev->ptr);
		else
			sim_switch_receive(s, ev->index, ev->ptr);
		break;
	case SIM_EV_PORT_FREE:
		sim_port_free(s, ev->index);
		break;
	case SIM_EV_TIMER:
		sim_host_timer(s, ev->index, ev->time);
		break;
	default:
		break;
	}
}

/* finished - every request that will be sent has been, and each has
 * completed or failed. */
static bool finished(const struct sim *s)
{
	if (s->traffic && s->nmsgs < s->p.messages)
		return false;
	return s->c.completed + s->c.failed >= s->nmsgs;
}

/* sum_core_stats - add every endpoint's counters into s->c.core. */
static void sum_core_stats(struct sim *s)
{
	uint32_t h;
	int i;

	memset(s->c.core, 0, sizeof(s->c.core));
	for (h = 0; h < s->nhosts; h++) {
		const uint64_t *st = homa_ep_stats(s->hosts[h].ep);

		for (i = 0; i < HOMA_STAT_COUNT; i++)
			s->c.core[i] += st[i];
	}
}

int sim_run(struct sim *s)
{
	struct sim_event ev;

	while (!finished(s) && !s->oom) {
		if (s->p.until_ns &&
		    sim_events_peek_time(&s->ev) > s->p.until_ns)
			break;
		if (!sim_events_pop(&s->ev, &ev))
			break;
		s->now = ev.time;
		s->c.events++;
		dispatch(s, &ev);
	}
	s->c.end_ns = s->now;
	sum_core_stats(s);
	return s->oom ? -ENOMEM : 0;
}

const struct sim_msg *sim_messages(const struct sim *s, size_t *count)
{
	*count = s->nmsgs;
	return s->msgs;
}

const struct sim_counters *sim_get_counters(const struct sim *s)
{
	return &s->c;
}

/* Virtual time after which an unloaded measurement gives up (10 s). */
#define SIM_UNLOADED_LIMIT_NS 10000000000ull

uint64_t sim_unloaded_ns(const struct sim_params *p, uint32_t size,
			 bool same_rack)
{
	struct sim_params q = *p;
	uint32_t dst = 1;
	char err[128];
	uint64_t t = 0;
	struct sim *s;
	long idx;

	q.messages = 0;
	q.warmup = 0;
	q.until_ns = SIM_UNLOADED_LIMIT_NS;
	/* Room for one message of the largest size is all it needs. */
	q.region_bytes = (size_t)HOMA_BPAGE_SIZE * (HOMA_MAX_BPAGES + 2);
	if (q.topology == SIM_TOPO_TWO_TIER) {
		q.racks = 2;
		q.hosts_per_rack = 2;
		dst = same_rack ? 1 : 2;
	} else {
		q.hosts = 2;
	}
	if (sim_params_check(&q, err, sizeof(err)) != 0)
		return 0;
	q.core = p->core;      /* exactly the settings of the loaded run */
	s = sim_create(&q, err, sizeof(err));
	if (!s)
		return 0;
	idx = sim_send_one(s, 0, dst, size);
	if (idx >= 0 && sim_run(s) == 0 && s->msgs[idx].done_ns)
		t = s->msgs[idx].done_ns - s->msgs[idx].start_ns;
	sim_destroy(s);
	return t;
}
