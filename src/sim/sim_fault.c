// SPDX-License-Identifier: BSD-2-Clause
/* Seeded faults: the plan, and the per-packet hook.  See sim_fault.h. */

#include <string.h>

#include "homa_wire.h"
#include "sim_internal.h"

/* Stream numbers of the seed: the plan, and the hook's choices. */
#define SIM_STREAM_FAULT_PLAN 5
#define SIM_STREAM_FAULT 3

/* between - a uniform double in [lo, hi). */
static double between(struct workload_rng *r, double lo, double hi)
{
	return lo + (hi - lo) * workload_rng_uniform(r);
}

/* chance - true with probability p. */
static bool chance(struct workload_rng *r, double p)
{
	return workload_rng_uniform(r) < p;
}

/* pick_side - a random set of hosts, neither empty nor all of them. */
static uint64_t pick_side(struct workload_rng *r, uint32_t hosts)
{
	uint64_t all = hosts >= 64 ? ~0ull : (1ull << hosts) - 1, side;

	do
		side = workload_rng_next(r) & all;
	while (side == 0 || side == all);
	return side;
}

/* derive_packet_faults - which per-packet faults the plan has, and how
 * strong they are. */
static void derive_packet_faults(struct sim_fault_plan *f,
				 struct workload_rng *r)
{
	if (chance(r, 0.6))
		f->drop = between(r, 0.002, 0.10);
	if (chance(r, 0.4))
		f->duplicate = between(r, 0.002, 0.05);
	if (chance(r, 0.4)) {
		f->reorder = between(r, 0.01, 0.3);
		f->reorder_max_ns = 1000 + workload_rng_below(r, 50000);
	}
	if (chance(r, 0.4)) {
		f->delay = between(r, 0.001, 0.03);
		f->delay_max_ns = 1000000 + workload_rng_below(r, 60000000);
	}
	if (chance(r, 0.3))
		f->corrupt_payload = between(r, 0.002, 0.03);
	if (chance(r, 0.3))
		f->corrupt_header = between(r, 0.002, 0.03);
	if ((f->corrupt_payload > 0 || f->corrupt_header > 0) &&
	    chance(r, 0.5))
		f->escape = between(r, 0.05, 0.5);
}

void sim_fault_plan_derive(struct sim_fault_plan *f, uint64_t seed,
			   uint32_t hosts, uint64_t heal_ns, bool quiet_restarts)
{
	uint64_t lifetime;
	struct workload_rng r;
	int i;

	memset(f, 0, sizeof(*f));
	f->seed = seed;
	f->heal_ns = heal_ns;
	if (hosts > SIM_FAULT_MAX_HOSTS)
		hosts = SIM_FAULT_MAX_HOSTS;
	workload_rng_seed(&r, seed, SIM_STREAM_FAULT_PLAN);
	derive_packet_faults(f, &r);
	lifetime = f->delay_max_ns + f->reorder_max_ns +
		   SIM_FAULT_QUEUE_SLACK_NS;
	for (i = 0; i < SIM_FAULT_MAX_PARTITIONS - 1 && hosts >= 2; i++) {
		struct sim_partition *p = &f->part[f->npartitions];
		uint64_t len;

		if (!chance(&r, 0.3))
			continue;
		p->start_ns = workload_rng_below(&r, heal_ns);
		len = 500000 + workload_rng_below(&r, 150000000);
		p->end_ns = p->start_ns + len < heal_ns ? p->start_ns + len :
			    heal_ns;
		p->side = pick_side(&r, hosts);
		p->one_way = chance(&r, 0.33);
		f->npartitions++;
	}
	for (i = 0; i < SIM_FAULT_MAX_RESTARTS - 1 && hosts >= 2; i++) {
		struct sim_restart *x = &f->restart[f->nrestarts];
		int k;

		if (!chance(&r, 0.25))
			continue;
		x->host = (uint32_t)workload_rng_below(&r, hosts);
		x->down_ns = chance(&r, 0.5) ? 0 :
			     workload_rng_below(&r, 20000000);
		if (quiet_restarts && x->down_ns < lifetime)
			x->down_ns = lifetime;
		if (x->down_ns >= heal_ns) {
			if (quiet_restarts)
				continue;  /* no time for a quiet restart */
			x->down_ns = heal_ns / 2;
		}
		x->at_ns = workload_rng_below(&r, heal_ns - x->down_ns);
		/* One restart of a host at a time: drop an overlapping one. */
		for (k = 0; k < f->nrestarts; k++) {
			const struct sim_restart *y = &f->restart[k];

			if (y->host == x->host &&
			    x->at_ns <= y->at_ns + y->down_ns &&
			    y->at_ns <= x->at_ns + x->down_ns)
				break;
		}
		if (k == f->nrestarts)
			f->nrestarts++;
	}
}

void sim_fault_plan_print(FILE *out, const struct sim_fault_plan *f)
{
	int i;

	fprintf(out, "  faults until %.3f ms: drop %.4f, duplicate %.4f, "
		"reorder %.4f (up to %.1f us), delay %.4f (up to %.1f ms)\n",
		f->heal_ns / 1e6, f->drop, f->duplicate, f->reorder,
		f->reorder_max_ns / 1e3, f->delay, f->delay_max_ns / 1e6);
	fprintf(out, "  corrupt payload %.4f, header %.4f, escaping the "
		"checksum %.2f\n", f->corrupt_payload, f->corrupt_header,
		f->escape);
	for (i = 0; i < f->npartitions; i++)
		fprintf(out, "  partition %.3f..%.3f ms, hosts 0x%llx %s the "
			"others\n", f->part[i].start_ns / 1e6,
			f->part[i].end_ns / 1e6,
			(unsigned long long)f->part[i].side,
			f->part[i].one_way ? "cannot send to" : "cut from");
	for (i = 0; i < f->nrestarts; i++)
		fprintf(out, "  restart of host %u at %.3f ms, down %.3f ms\n",
			f->restart[i].host, f->restart[i].at_ns / 1e6,
			f->restart[i].down_ns / 1e6);
}

void sim_fault_init(struct sim_fault *f, const struct sim_fault_plan *plan)
{
	f->plan = *plan;
	workload_rng_seed(&f->rng, plan->seed, SIM_STREAM_FAULT);
}

bool sim_partitioned(const struct sim_fault_plan *f, uint32_t a, uint32_t b,
		     uint64_t now)
{
	int i;

	if (a >= SIM_FAULT_MAX_HOSTS || b >= SIM_FAULT_MAX_HOSTS)
		return false;
	for (i = 0; i < f->npartitions; i++) {
		const struct sim_partition *p = &f->part[i];
		bool in_a = (p->side >> a) & 1, in_b = (p->side >> b) & 1;

		if (now < p->start_ns || now >= p->end_ns || in_a == in_b)
			continue;
		if (!p->one_way || in_a)
			return true;
	}
	return false;
}

/* taint_names - taint every RPC the packet buf[0..len) from host a to
 * host b names, as the core would read it: the RPC of its sender_id, and
 * the client RPCs of its acks. */
static void taint_names(struct sim *s, const uint8_t *buf, uint32_t len,
			uint32_t a, uint32_t b)
{
	struct homa_pkt pkt;
	int i;

	if (homa_wire_decode(buf, len, &pkt) != HOMA_WIRE_OK)
		return;
	if (pkt.sender_id & 1)
		sim_taint(s, b, pkt.sender_id ^ 1);
	else
		sim_taint(s, a, pkt.sender_id);
	for (i = 0; i < pkt.num_acks && i < HOMA_MAX_ACKS; i++)
		sim_taint(s, a, pkt.acks[i].client_id);
	if (pkt.type == HOMA_PKT_ACK)
		sim_taint(s, a, pkt.sender_id);
}

/* corrupt - change 1..3 bytes of pkt: in its Homa header (header) or in
 * the payload of a DATA packet.  The change escapes the checksum with the
 * plan's probability, or when it happens to leave the checksum as it was;
 * then the RPCs the packet names before and after are tainted.  Returns
 * false when the packet has no such bytes. */
static bool corrupt(struct sim *s, struct sim_fault *f, struct sim_pkt *pkt,
		    bool header)
{
	bool data = pkt->len > HOMA_DATA_HDR_LEN &&
		    pkt->data[11] == HOMA_PKT_DATA;
	uint32_t lo = 0, hi = pkt->len, n, k;
	bool escape = chance(&f->rng, f->plan.escape);
	struct sim_pkt *before;
	uint16_t sum;

	if (header && data)
		hi = HOMA_DATA_HDR_LEN;
	else if (!header && data)
		lo = HOMA_DATA_HDR_LEN;
	else if (!header)
		return false;
	if (hi <= lo)
		return false;
	before = sim_pkt_copy(s, pkt);
	if (!before)
		return false;
	n = 1 + (uint32_t)workload_rng_below(&f->rng, 3);
	for (k = 0; k < n; k++)
		pkt->data[lo + workload_rng_below(&f->rng, hi - lo)] ^=
			(uint8_t)(1 + workload_rng_below(&f->rng, 255));
	s->c.fault_corrupts++;
	sum = sim_inet_csum(pkt->data, pkt->len);
	sim_trace_pkt(s, before, header ? "header corrupted" :
		      "payload corrupted");
	if (escape || sum == pkt->csum) {
		/* The core will see the damaged packet. */
		sim_trace_pkt(s, pkt, "corrupted into this, passes checksum");
		s->c.fault_escapes++;
		pkt->csum = sum;
		if (pkt->src < s->nhosts && pkt->dst < s->nhosts) {
			taint_names(s, before->data, before->len, pkt->src,
				    pkt->dst);
			taint_names(s, pkt->data, pkt->len, pkt->src,
				    pkt->dst);
		}
	}
	sim_pkt_free(s, before);
	return true;
}

void sim_fault_at_link(struct sim *s, struct sim_pkt *pkt, uint32_t from,
		       uint32_t to, struct sim_fault_action *act)
{
	struct sim_fault *f = s->fault;
	const struct sim_fault_plan *p;

	(void)to;
	memset(act, 0, sizeof(*act));
	if (!f || s->now >= f->plan.heal_ns || !sim_is_host(s, from))
		return;
	p = &f->plan;
	if (pkt->dst < s->nhosts && sim_partitioned(p, from, pkt->dst,
						    s->now)) {
		act->drop = true;
		s->c.partition_drops++;
		sim_trace_pkt(s, pkt, "cut by a partition");
		return;
	}
	if (p->drop > 0 && chance(&f->rng, p->drop)) {
		act->drop = true;
		s->c.fault_drops++;
		return;
	}
	if (p->corrupt_payload > 0 && chance(&f->rng, p->corrupt_payload))
		corrupt(s, f, pkt, false);
	if (p->corrupt_header > 0 && chance(&f->rng, p->corrupt_header))
		corrupt(s, f, pkt, true);
	if (p->duplicate > 0 && chance(&f->rng, p->duplicate)) {
		act->duplicate = true;
		act->dup_extra_ns = p->reorder_max_ns ?
			workload_rng_below(&f->rng, p->reorder_max_ns + 1) : 0;
		s->c.fault_dups++;
	}
	if (p->reorder > 0 && chance(&f->rng, p->reorder)) {
		act->extra_ns += 1 + workload_rng_below(&f->rng,
							 p->reorder_max_ns);
		s->c.fault_reorders++;
	}
	if (p->delay > 0 && chance(&f->rng, p->delay)) {
		act->extra_ns += 1 + workload_rng_below(&f->rng,
							 p->delay_max_ns);
		s->c.fault_delays++;
	}
}
