// SPDX-License-Identifier: BSD-2-Clause
/*
 * The simulated network: packet buffers, links, switches with
 * strict-priority egress queues sharing one buffer per port, and routing
 * for the two topologies.  See sim.h and sim_internal.h.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"

struct sim_pkt *sim_pkt_alloc(struct sim *s)
{
	struct sim_pkt *pkt = s->free_pkts;

	if (pkt) {
		s->free_pkts = pkt->next;
	} else {
		pkt = malloc(sizeof(*pkt) + s->pkt_cap);
		if (!pkt) {
			s->oom = true;
			return NULL;
		}
	}
	pkt->next = NULL;
	return pkt;
}

void sim_pkt_free(struct sim *s, struct sim_pkt *pkt)
{
	pkt->next = s->free_pkts;
	s->free_pkts = pkt;
}

uint32_t sim_wire_bytes(uint32_t len)
{
	uint32_t ip = len + SIM_IPV4_HEADER;

	if (ip < SIM_ETH_MIN_PAYLOAD)
		ip = SIM_ETH_MIN_PAYLOAD;
	return ip + SIM_ETH_OVERHEAD;
}

uint64_t sim_tx_end(uint64_t *done, uint64_t now, uint32_t wire,
		    uint32_t mbps)
{
	uint64_t start = now * mbps;

	/* The previous packet ended in (now - 1, now]: no gap between. */
	if (*done <= start && *done + mbps > start)
		start = *done;
	/* bits * 1000 = ns * (Mbit/s). */
	*done = start + (uint64_t)wire * 8000;
	return (*done + mbps - 1) / mbps;
}

/* add_switch - a switch with nports ports (filled by the caller). */
static struct sim_switch *add_switch(struct sim *s, uint32_t nports,
				     int rack)
{
	struct sim_switch *sw = &s->sw[s->nsw++];

	sw->first_port = s->nports;
	sw->nports = nports;
	sw->rack = rack;
	s->nports += nports;
	return sw;
}

/* set_port - port i of switch sw leads to node `to` at mbps. */
static void set_port(struct sim *s, struct sim_switch *sw, uint32_t i,
		     uint32_t to, uint32_t mbps)
{
	struct sim_port *port = &s->ports[sw->first_port + i];

	memset(port, 0, sizeof(*port));
	port->to = to;
	port->mbps = mbps;
	port->sw = (uint32_t)(sw - s->sw);
}

/* host_port_mbps - the rate of a switch port towards a host: the
 * bottleneck when one is set, else the host link rate. */
static uint32_t host_port_mbps(const struct sim *s)
{
	return s->p.bottleneck_mbps ? s->p.bottleneck_mbps : s->p.link_mbps;
}

/* build_one_switch - one switch, port i leads to host i. */
static void build_one_switch(struct sim *s)
{
	struct sim_switch *sw = add_switch(s, s->nhosts, 0);
	uint32_t h;

	for (h = 0; h < s->nhosts; h++) {
		set_port(s, sw, h, h, host_port_mbps(s));
		s->hosts[h].tor = s->nhosts;
	}
}

/* build_two_tier - ToR r has ports 0..hpr-1 to its hosts and hpr.. to
 * each spine; spine k has port r to ToR r. */
static void build_two_tier(struct sim *s)
{
	uint32_t racks = (uint32_t)s->p.racks, spines = (uint32_t)s->p.spines;
	uint32_t hpr = (uint32_t)s->p.hosts_per_rack, r, k, j;

	for (r = 0; r < racks; r++) {
		struct sim_switch *tor = add_switch(s, hpr + spines, (int)r);

		for (j = 0; j < hpr; j++) {
			set_port(s, tor, j, r * hpr + j, host_port_mbps(s));
			s->hosts[r * hpr + j].tor = s->nhosts + r;
		}
		for (k = 0; k < spines; k++)
			set_port(s, tor, hpr + k, s->nhosts + racks + k,
				 s->p.uplink_mbps);
	}
	for (k = 0; k < spines; k++) {
		struct sim_switch *spine = add_switch(s, racks, -1);

		for (r = 0; r < racks; r++)
			set_port(s, spine, r, s->nhosts + r, s->p.uplink_mbps);
	}
}

int sim_net_build(struct sim *s)
{
	uint32_t nsw = 1, nports = s->nhosts;

	if (s->p.topology == SIM_TOPO_TWO_TIER) {
		nsw = (uint32_t)(s->p.racks + s->p.spines);
		nports = (uint32_t)(s->p.racks * (s->p.hosts_per_rack +
						  s->p.spines) +
				    s->p.spines * s->p.racks);
	}
	s->sw = calloc(nsw, sizeof(*s->sw));
	s->ports = calloc(nports, sizeof(*s->ports));
	if (!s->sw || !s->ports)
		return -ENOMEM;
	s->nsw = 0;
	s->nports = 0;
	if (s->p.topology == SIM_TOPO_TWO_TIER)
		build_two_tier(s);
	else
		build_one_switch(s);
	return 0;
}

/* free_chain - free a list of packets linked by next. */
static void free_chain(struct sim_pkt *pkt)
{
	while (pkt) {
		struct sim_pkt *next = pkt->next;

		free(pkt);
		pkt = next;
	}
}

void sim_net_free(struct sim *s)
{
	uint32_t i;
	int q;

	for (i = 0; s->ports && i < s->nports; i++)
		for (q = 0; q < SIM_MAX_QUEUES; q++)
			free_chain(s->ports[i].head[q]);
	free_chain(s->free_pkts);
	s->free_pkts = NULL;
	free(s->ports);
	free(s->sw);
	s->ports = NULL;
	s->sw = NULL;
}

struct sim_pkt *sim_pkt_copy(struct sim *s, const struct sim_pkt *pkt)
{
	struct sim_pkt *copy = sim_pkt_alloc(s);

	if (!copy)
		return NULL;
	copy->src = pkt->src;
	copy->dst = pkt->dst;
	copy->len = pkt->len;
	copy->wire = pkt->wire;
	copy->prio = pkt->prio;
	copy->csum = pkt->csum;
	copy->queued_at = pkt->queued_at;
	memcpy(copy->data, pkt->data, pkt->len);
	return copy;
}

void sim_link_send(struct sim *s, struct sim_pkt *pkt, uint32_t from,
		   uint32_t to, uint64_t tx_end)
{
	struct sim_fault_action act;
	uint64_t at = tx_end + s->p.delay_ns;

	sim_fault_at_link(s, pkt, from, to, &act);
	if (s->p.trace && sim_is_host(s, from)) {
		char what[96];

		snprintf(what, sizeof(what), "sent%s, %s%s +%.3f us",
			 act.duplicate ? " twice" : "",
			 act.drop ? "lost" : "arrives", act.extra_ns ?
			 " late" : "", act.extra_ns / 1e3);
		sim_trace_pkt(s, pkt, what);
	}
	if (act.drop) {
		sim_pkt_free(s, pkt);
		return;
	}
	if (act.duplicate) {
		struct sim_pkt *copy = sim_pkt_copy(s, pkt);

		if (copy)
			sim_push(s, at + act.dup_extra_ns, SIM_EV_DELIVER, to,
				 copy);
	}
	sim_push(s, at + act.extra_ns, SIM_EV_DELIVER, to, pkt);
}

/* route - the port of switch sw towards host dst (dst valid). */
static uint32_t route(struct sim *s, const struct sim_switch *sw,
		      uint32_t dst)
{
	uint32_t hpr, rack;

	if (s->p.topology != SIM_TOPO_TWO_TIER)
		return sw->first_port + dst;
	hpr = (uint32_t)s->p.hosts_per_rack;
	rack = dst / hpr;
	if (sw->rack < 0)
		return sw->first_port + rack;
	if ((uint32_t)sw->rack == rack)
		return sw->first_port + dst % hpr;
	/* Spray: every packet picks a spine on its own. */
	return sw->first_port + hpr +
	       (uint32_t)workload_rng_below(&s->spray, (uint64_t)s->p.spines);
}

/* queue_of - the queue a packet of priority prio uses at a port with
 * nq queues: priorities beyond the top queue share it. */
static int queue_of(uint8_t prio, int nq)
{
	return prio >= nq ? nq - 1 : prio;
}

/* port_start - put the port's highest-priority waiting packet on its
 * link. */
static void port_start(struct sim *s, uint32_t idx)
{
	struct sim_port *port = &s->ports[idx];
	struct sim_pkt *pkt;
	uint64_t end;
	int q;

	for (q = SIM_MAX_QUEUES - 1; q >= 0 && !port->head[q]; q--)
		;
	if (q < 0)
		return;
	pkt = port->head[q];
	port->head[q] = pkt->next;
	if (!port->head[q])
		port->tail[q] = NULL;
	pkt->next = NULL;
	port->queued -= pkt->wire;
	if (s->now - pkt->queued_at > s->c.max_wait_ns)
		s->c.max_wait_ns = s->now - pkt->queued_at;
	port->busy = true;
	end = sim_tx_end(&port->done, s->now, pkt->wire, port->mbps);
	sim_push(s, end, SIM_EV_PORT_FREE, idx, NULL);
	sim_link_send(s, pkt, s->nhosts + port->sw, port->to, end);
}

void sim_switch_receive(struct sim *s, uint32_t node, struct sim_pkt *pkt)
{
	const struct sim_switch *sw = &s->sw[node - s->nhosts];
	struct sim_port *port;
	uint32_t idx;
	int q;

	if (pkt->dst >= s->nhosts) {
		s->c.unroutable++;
		sim_pkt_free(s, pkt);
		return;
	}
	idx = route(s, sw, pkt->dst);
	port = &s->ports[idx];
	if (port->queued + pkt->wire > s->p.buffer_bytes) {
		s->c.switch_drops++;
		sim_trace_pkt(s, pkt, "dropped by a full switch port");
		sim_pkt_free(s, pkt);
		return;
	}
	q = queue_of(pkt->prio, s->p.priorities);
	if (port->tail[q])
		port->tail[q]->next = pkt;
	else
		port->head[q] = pkt;
	port->tail[q] = pkt;
	pkt->queued_at = s->now;
	port->queued += pkt->wire;
	if (port->queued > s->c.max_port_bytes)
		s->c.max_port_bytes = port->queued;
	if (!port->busy)
		port_start(s, idx);
}

void sim_port_free(struct sim *s, uint32_t idx)
{
	s->ports[idx].busy = false;
	port_start(s, idx);
}
