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

/* Stream numbers of the seed (hosts use 16 + host index; the fault plan
 * and the fault hook have their own, see sim_fault.c). */
#define SIM_STREAM_SPRAY 1
#define SIM_STREAM_RESTART 6

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

/* host_link_bytes - mean wire bytes one request puts on host links: the
 * request and the response to it. */
static double host_link_bytes(const struct sim_params *p)
{
	return workload_dist_expect(p->workload, wire_of_message, p) +
	       wire_of_message(p->reply_bytes, p);
}

/* path_mbps - the rate load is a fraction of: the bottleneck towards
 * hosts when one is set, else the host link rate. */
static double path_mbps(const struct sim_params *p)
{
	return (double)(p->bottleneck_mbps ? p->bottleneck_mbps :
			p->link_mbps);
}

/* mean_gap - mean ns between two requests of one host: a host link
 * carries the host's requests and the responses to the requests it
 * serves (as many on average), which together fill `load` of it (of the
 * bottleneck, when one is set). */
static double mean_gap(const struct sim_params *p)
{
	return host_link_bytes(p) * 8000.0 / (p->load * path_mbps(p));
}

double sim_offered_load(const struct sim_params *p)
{
	if (!p->mean_gap_ns)
		return p->load;
	return host_link_bytes(p) * 8000.0 /
	       ((double)p->mean_gap_ns * path_mbps(p));
}

/* schedule_arrival - host h's next request is due one exponential gap
 * after the previous one (not before now); none for a host that only
 * serves (server_hosts). */
static void schedule_arrival(struct sim *s, uint32_t h)
{
	struct sim_host *host = &s->hosts[h];
	uint64_t t;

	if (h < s->p.server_hosts)
		return;
	host->next_arrival += workload_rng_exponential(&host->rng,
							s->mean_gap_ns);
	t = (uint64_t)llround(host->next_arrival);
	host->arrival_pending = true;
	sim_push(s, t > s->now ? t : s->now, SIM_EV_ARRIVAL, h, NULL);
}

/* start_hosts - give every endpoint the time 0 and arm its timer; with
 * traffic, schedule every host's first request. */
static void start_hosts(struct sim *s)
{
	uint32_t h;

	for (h = 0; h < s->nhosts; h++) {
		homa_ep_timer(s->hosts[h].ep, 0);
		sim_host_react(s, h);
		if (s->traffic)
			schedule_arrival(s, h);
	}
}

/* start_faults - the fault state of the plan, and the events of its
 * restarts and of the end of the fault phase. */
static int start_faults(struct sim *s)
{
	const struct sim_fault_plan *f = s->p.faults;
	int i;

	s->fault = malloc(sizeof(*s->fault));
	if (!s->fault)
		return -ENOMEM;
	sim_fault_init(s->fault, f);
	s->p.faults = &s->fault->plan;
	for (i = 0; i < f->nrestarts; i++) {
		const struct sim_restart *r = &f->restart[i];

		if (r->host >= s->nhosts)
			continue;
		sim_push(s, r->at_ns, SIM_EV_HOST_DOWN, r->host, NULL);
		sim_push(s, r->at_ns + r->down_ns, SIM_EV_HOST_UP, r->host,
			 NULL);
	}
	sim_push(s, f->heal_ns, SIM_EV_HEAL, 0, NULL);
	return 0;
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
	s->msg_limit = p->messages;
	s->mean_gap_ns = p->mean_gap_ns ? (double)p->mean_gap_ns : mean_gap(p);
	s->reexec_ns = (uint64_t)(p->core.timeout_ticks - 1) *
		       (uint64_t)p->core.tick_usecs * 1000;
	sim_events_init(&s->ev);
	sim_idmap_init(&s->ids);
	sim_idmap_init(&s->taint);
	workload_rng_seed(&s->spray, p->seed, SIM_STREAM_SPRAY);
	workload_rng_seed(&s->restart_rng, p->seed, SIM_STREAM_RESTART);
	s->txbuf = calloc(1, HOMA_MAX_MESSAGE_LENGTH);
	if (!s->txbuf || (p->faults && start_faults(s) != 0)) {
		snprintf(err, errcap, "out of memory");
		goto fail;
	}
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
	sim_hosts_free(s);
	sim_net_free(s);
	sim_idmap_free(&s->ids);
	sim_idmap_free(&s->taint);
	free(s->fault);
	free(s->txbuf);
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
		s->msgs[idx].state = SIM_MSG_FAILED;
		s->c.failed++;
		s->c.client_errors++;
		return -1;
	}
	return idx;
}

/* pick_server - a destination for a request of host h: uniform among
 * hosts 0..server_hosts-1 with server_hosts, else among the others. */
static uint32_t pick_server(struct sim *s, uint32_t h)
{
	struct sim_host *host = &s->hosts[h];
	uint32_t dst;

	if (s->p.server_hosts)
		return (uint32_t)workload_rng_below(&host->rng,
							  s->p.server_hosts);
	dst = (uint32_t)workload_rng_below(&host->rng, s->nhosts - 1);
	return dst >= h ? dst + 1 : dst;
}

/* arrival - host h's next request is due: draw its size and destination,
 * send it (unless the host is down), and schedule the one after. */
static void arrival(struct sim *s, uint32_t h)
{
	struct sim_host *host = &s->hosts[h];
	uint32_t size, dst;
	long idx;

	host->arrival_pending = false;
	if (s->nmsgs >= s->msg_limit)
		return;
	size = workload_dist_sample(s->p.workload,
				    workload_rng_uniform(&host->rng));
	dst = pick_server(s, h);
	if (!host->down) {
		idx = new_msg(s, size, h, dst);
		if (idx >= 0 && sim_host_send(s, h, (uint32_t)idx) != 0) {
			s->msgs[idx].failed = true;
			s->msgs[idx].state = SIM_MSG_FAILED;
			s->c.failed++;
			s->c.client_errors++;
			sim_violation_add(&s->v, s->now, "host %u could not "
					  "send request %ld", h, idx);
		}
	}
	if (s->nmsgs < s->msg_limit)
		schedule_arrival(s, h);
}

/* heal - the fault phase ends: the healed phase's requests start. */
static void heal(struct sim *s)
{
	uint32_t h;

	s->healed = true;
	s->msg_limit = s->p.messages + s->p.heal_messages;
	if (!s->traffic || s->nmsgs >= s->msg_limit)
		return;
	for (h = 0; h < s->nhosts; h++) {
		if (s->hosts[h].arrival_pending)
			continue;
		s->hosts[h].next_arrival = (double)s->now;
		schedule_arrival(s, h);
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
	case SIM_EV_HOST_DOWN:
		sim_host_down(s, ev->index);
		break;
	case SIM_EV_HOST_UP:
		sim_host_up(s, ev->index);
		break;
	case SIM_EV_HEAL:
		heal(s);
		break;
	case SIM_EV_APP:
		sim_host_react(s, ev->index);
		break;
	case SIM_EV_RX:
		sim_host_rx_done(s, ev->index);
		break;
	default:
		break;
	}
}

bool sim_finished(const struct sim *s)
{
	uint64_t total = s->p.messages +
			 (s->p.faults ? s->p.heal_messages : 0);

	if (s->traffic && s->nmsgs < total)
		return false;
	if (s->c.completed + s->c.failed < s->nmsgs)
		return false;
	return !s->p.wait_responses ||
	       s->c.responses + s->c.client_errors + s->c.lost >= s->nmsgs;
}

/* sum_core_stats - add every endpoint's counters into s->c.core. */
static void sum_core_stats(struct sim *s)
{
	uint32_t h;
	int i;

	memcpy(s->c.core, s->retired, sizeof(s->c.core));
	for (h = 0; h < s->nhosts; h++) {
		struct homa_ep_info info;

		if (!s->hosts[h].ep)
			continue;
		homa_ep_info(s->hosts[h].ep, &info);
		for (i = 0; i < HOMA_STAT_COUNT; i++)
			s->c.core[i] += info.stats[i];
	}
}

int sim_run_to(struct sim *s, uint64_t t, bool stop_when_done)
{
	struct sim_event ev;

	for (;;) {
		if ((stop_when_done && sim_finished(s)) || s->oom)
			break;
		if (sim_events_peek_time(&s->ev) > t) {
			/* Nothing more happens until t: time gets there. */
			if (t != UINT64_MAX && t > s->now)
				s->now = t;
			break;
		}
		sim_events_pop(&s->ev, &ev);
		s->now = ev.time;
		s->c.events++;
		dispatch(s, &ev);
	}
	s->c.end_ns = s->now;
	s->c.violations = s->v.count;
	sum_core_stats(s);
	return s->oom ? -ENOMEM : 0;
}

int sim_run(struct sim *s)
{
	return sim_run_to(s, s->p.until_ns ? s->p.until_ns : UINT64_MAX,
			  true);
}

uint64_t sim_now(const struct sim *s)
{
	return s->now;
}

const struct sim_violations *sim_get_violations(const struct sim *s)
{
	return &s->v;
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
	q.faults = NULL;
	q.heal_messages = 0;
	q.wait_responses = false;
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

/* quiet_hosts - the per-host end-of-run checks of sim_check_quiet. */
static void quiet_hosts(struct sim *s)
{
	uint32_t h;

	for (h = 0; h < s->nhosts; h++) {
		struct sim_host *host = &s->hosts[h];
		struct homa_ep_info info;
		struct homa_pool *pool;
		uint32_t held;

		if (host->down) {
			sim_violation_add(&s->v, s->now, "host %u is still "
					  "down", h);
			continue;
		}
		homa_ep_info(host->ep, &info);
		pool = info.pool;
		held = homa_pool_num_bpages(pool) - homa_pool_free_bpages(pool);
		if (info.num_rpcs != 0)
			sim_violation_add(&s->v, s->now, "host %u: %u RPCs "
					  "left (leak)", h, info.num_rpcs);
		if (homa_pool_app_owned(pool) != 0)
			sim_violation_add(&s->v, s->now, "host %u: the "
					  "application still holds %u bpages",
					  h, homa_pool_app_owned(pool));
		/* One partial bpage may stay leased to the (one) core. */
		if (held > 1)
			sim_violation_add(&s->v, s->now, "host %u: %u of %u "
					  "bpages still in use (leak)", h,
					  held, homa_pool_num_bpages(pool));
		if (host->nicq.head || host->nic_busy)
			sim_violation_add(&s->v, s->now, "host %u: packets "
					  "still at its NIC", h);
	}
}

uint64_t sim_check_quiet(struct sim *s)
{
	uint64_t before = s->v.count;
	size_t i, pending = 0;

	for (i = 0; i < s->nmsgs; i++) {
		const struct sim_msg *m = &s->msgs[i];

		if (m->state != SIM_MSG_PENDING)
			continue;
		if (pending++ < 3)
			sim_violation_add(&s->v, s->now, "request %zu (host %u "
					  "id %llu to host %u, %u bytes, sent "
					  "at %.3f ms%s%s) never completed",
					  i, m->src, (unsigned long long)m->id,
					  m->dst, m->size, m->start_ns / 1e6,
					  m->healed ? ", healed phase" : "",
					  sim_tainted(s, m->src, m->id) ?
					  ", tainted" : "");
	}
	if (pending > 3)
		sim_violation_add(&s->v, s->now, "%zu more requests never "
				  "completed", pending - 3);
	quiet_hosts(s);
	for (i = 0; i < s->ev.count; i++)
		if (s->ev.heap[i].kind == SIM_EV_DELIVER) {
			sim_violation_add(&s->v, s->now, "packets still on "
					  "the links");
			break;
		}
	for (i = 0; i < s->nports; i++)
		if (s->ports[i].busy || s->ports[i].queued) {
			sim_violation_add(&s->v, s->now, "packets still in "
					  "switch queues");
			break;
		}
	s->c.violations = s->v.count;
	return s->v.count - before;
}
