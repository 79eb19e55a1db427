// SPDX-License-Identifier: BSD-2-Clause
/*
 * Simulated hosts: one Homa endpoint each (port 1, accepting requests,
 * address 10.0.0.0 + index + 1), a NIC that pulls packets from the
 * endpoint only when it is free to transmit, the endpoint's timer, and
 * the application: a server takes each request at once, returns its
 * bpages and answers with a reply_bytes response; a client takes each
 * response and returns its bpages.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/mman.h>

#include "homa_addr.h"
#include "sim_internal.h"

/* Every endpoint listens on this port. */
#define SIM_PORT 1

/* First address: host h is SIM_BASE_ADDR + h. */
#define SIM_BASE_ADDR 0x0a000001u

/* The bytes of every message (the core copies them). */
static const uint8_t zeros[HOMA_MAX_MESSAGE_LENGTH];

/* host_addr - the address and port of host h. */
static void host_addr(uint32_t h, union sockaddr_in_union *a)
{
	memset(a, 0, sizeof(*a));
	a->in4.sin_family = AF_INET;
	a->in4.sin_port = htons(SIM_PORT);
	a->in4.sin_addr.s_addr = htonl(SIM_BASE_ADDR + h);
}

uint32_t sim_host_index(const struct sim *s,
			const union sockaddr_in_union *addr)
{
	uint32_t a;

	if (addr->sa.sa_family != AF_INET)
		return UINT32_MAX;
	a = ntohl(addr->in4.sin_addr.s_addr);
	if (a < SIM_BASE_ADDR || a - SIM_BASE_ADDR >= s->nhosts)
		return UINT32_MAX;
	return a - SIM_BASE_ADDR;
}

/* host_create - the endpoint and region of host h.  Returns 0 or -errno
 * (message in err). */
static int host_create(struct sim *s, uint32_t h, char *err, size_t errcap)
{
	struct sim_host *host = &s->hosts[h];
	struct homa_ep_params ep = {
		.cfg = &s->p.core, .family = AF_INET, .port = SIM_PORT,
		.is_server = true, .num_cores = 1,
	};
	int rc;

	host->first_id = ((uint64_t)h + 1) << 32;
	ep.first_client_id = host->first_id;
	host_addr(h, &host->addr);
	host->timer_at = UINT64_MAX;
	host->ep = homa_ep_create(&ep);
	if (!host->ep) {
		snprintf(err, errcap, "the core refused the endpoint settings "
			 "(or out of memory)");
		return -EINVAL;
	}
	/* Mapped, not allocated: pages cost memory only once touched, and
	 * go back to the system as soon as the host is freed. */
	host->region = mmap(NULL, s->p.region_bytes, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (host->region == MAP_FAILED) {
		host->region = NULL;
		snprintf(err, errcap, "out of memory for buffer regions");
		return -ENOMEM;
	}
	rc = homa_pool_set_region(homa_ep_pool(host->ep), host->region,
				  s->p.region_bytes);
	if (rc)
		snprintf(err, errcap, "buffer region refused (%d)", rc);
	return rc;
}

int sim_hosts_create(struct sim *s, char *err, size_t errcap)
{
	uint32_t h;
	int rc;

	s->hosts = calloc(s->nhosts, sizeof(*s->hosts));
	if (!s->hosts) {
		snprintf(err, errcap, "out of memory");
		return -ENOMEM;
	}
	for (h = 0; h < s->nhosts; h++) {
		sim_rng_seed(&s->hosts[h].rng, s->p.seed, 16 + (uint64_t)h);
		rc = host_create(s, h, err, errcap);
		if (rc)
			return rc;
	}
	return 0;
}

void sim_hosts_free(struct sim *s)
{
	uint32_t h;

	for (h = 0; s->hosts && h < s->nhosts; h++) {
		homa_ep_destroy(s->hosts[h].ep);
		if (s->hosts[h].region)
			munmap(s->hosts[h].region, s->p.region_bytes);
		free(s->hosts[h].sent);
	}
	free(s->hosts);
	s->hosts = NULL;
}

/* record_sent - remember that host's request id carries message msg.
 * Returns 0 or -ENOMEM. */
static int record_sent(struct sim_host *host, uint64_t id, uint32_t msg)
{
	size_t slot = (size_t)((id - host->first_id) / 2);

	while (host->nsent <= slot) {
		if (host->nsent == host->capsent) {
			size_t cap = host->capsent ? host->capsent * 2 : 64;
			uint32_t *p = realloc(host->sent, cap * sizeof(*p));

			if (!p)
				return -ENOMEM;
			host->sent = p;
			host->capsent = cap;
		}
		host->sent[host->nsent++] = UINT32_MAX;
	}
	host->sent[slot] = msg;
	return 0;
}

int sim_host_send(struct sim *s, uint32_t h, uint32_t msg)
{
	struct sim_host *host = &s->hosts[h];
	struct sim_msg *m = &s->msgs[msg];
	struct iovec iov = { (void *)zeros, m->size };
	uint64_t id;
	int rc;

	rc = homa_ep_send_request(host->ep, &s->hosts[m->dst].addr, &iov, 1,
				  msg, &id, s->now);
	if (rc)
		return rc;
	m->start_ns = s->now;
	if (record_sent(host, id, msg) != 0) {
		s->oom = true;
		return -ENOMEM;
	}
	s->c.generated++;
	sim_host_react(s, h);
	return 0;
}

/* request_msg - the message a request from client host c with client id
 * cid carries, or NULL. */
static struct sim_msg *request_msg(struct sim *s, uint32_t c, uint64_t cid)
{
	struct sim_host *client = &s->hosts[c];
	size_t slot;

	if (cid < client->first_id)
		return NULL;
	slot = (size_t)((cid - client->first_id) / 2);
	if (slot >= client->nsent || client->sent[slot] == UINT32_MAX)
		return NULL;
	return &s->msgs[client->sent[slot]];
}

/* serve - host h's application took request m: record it, answer. */
static void serve(struct sim *s, uint32_t h, const struct homa_msg_ready *m)
{
	uint32_t c = sim_host_index(s, &m->peer);
	struct iovec iov = { (void *)zeros, s->p.reply_bytes };
	struct sim_msg *msg;

	if (c == UINT32_MAX)
		return;
	msg = request_msg(s, c, m->id ^ 1);
	if (msg && msg->done_ns == 0 && !msg->failed) {
		msg->done_ns = s->now;
		s->c.completed++;
	}
	homa_ep_send_reply(s->hosts[h].ep, &m->peer, m->id, &iov, 1, s->now);
}

/* client_done - host h's application took the response (or failure) of
 * its request m. */
static void client_done(struct sim *s, const struct homa_msg_ready *m)
{
	struct sim_msg *msg;

	if (m->error == 0 || m->cookie >= s->nmsgs)
		return;
	msg = &s->msgs[m->cookie];
	if (msg->done_ns == 0 && !msg->failed) {
		msg->failed = true;
		s->c.failed++;
	}
}

/* drain - the application of host h takes every ready message. */
static void drain(struct sim *s, uint32_t h)
{
	struct homa_ep *ep = s->hosts[h].ep;
	struct homa_msg_ready m;

	while (homa_ep_receive(ep, 0, HOMA_RECVMSG_REQUEST |
			       HOMA_RECVMSG_RESPONSE, &m) == 0) {
		if (m.num_bpages)
			homa_ep_return_bpages(ep, m.bpage_offsets,
					      m.num_bpages, 0, s->now);
		if (m.id & 1)
			serve(s, h, &m);
		else
			client_done(s, &m);
	}
}

/* nic_start - if host h's NIC is idle, put the endpoint's next packet on
 * the link. */
static void nic_start(struct sim *s, uint32_t h)
{
	struct sim_host *host = &s->hosts[h];
	struct homa_out out;
	struct sim_pkt *pkt;
	uint64_t tx;

	if (host->nic_busy)
		return;
	pkt = sim_pkt_alloc(s);
	if (!pkt)
		return;
	out.buf = pkt->data;
	if (!homa_ep_output(host->ep, s->now, &out)) {
		sim_pkt_free(s, pkt);
		return;
	}
	pkt->src = h;
	pkt->dst = sim_host_index(s, &out.dest);
	pkt->len = (uint32_t)out.len;
	pkt->wire = sim_wire_bytes(pkt->len);
	pkt->prio = out.priority;
	host->nic_busy = true;
	s->c.packets++;
	tx = sim_tx_ns(pkt->wire, s->p.link_mbps);
	host->nic_free_at = s->now + tx;
	sim_push(s, s->now + tx, SIM_EV_NIC_FREE, h, NULL);
	sim_link_send(s, pkt, h, host->tor, s->now + tx);
}

/* arm_timer - make sure a timer event of host h is due no later than the
 * endpoint asks.  A later event left behind is recognised as stale.
 * While the NIC is busy, nothing earlier than the NIC's next free time is
 * armed: that event reacts anyway (a pacer wake-up before it is moot, and
 * a timer tick waits at most one packet time). */
static void arm_timer(struct sim *s, uint32_t h)
{
	struct sim_host *host = &s->hosts[h];
	uint64_t at = homa_ep_next_timer(host->ep);

	if (host->nic_busy && at <= host->nic_free_at)
		return;
	if (at <= s->now)
		at = s->now + 1;
	if (at >= host->timer_at)
		return;
	host->timer_at = at;
	sim_push(s, at, SIM_EV_TIMER, h, NULL);
}

void sim_host_react(struct sim *s, uint32_t h)
{
	drain(s, h);
	nic_start(s, h);
	arm_timer(s, h);
}

void sim_host_deliver(struct sim *s, uint32_t h, struct sim_pkt *pkt)
{
	union sockaddr_in_union src;

	if (pkt->src < s->nhosts) {
		src = s->hosts[pkt->src].addr;
		homa_ep_input(s->hosts[h].ep, pkt->data, pkt->len, &src, 0,
			      s->now);
	}
	sim_pkt_free(s, pkt);
	sim_host_react(s, h);
}

void sim_host_nic_free(struct sim *s, uint32_t h)
{
	s->hosts[h].nic_busy = false;
	sim_host_react(s, h);
}

void sim_host_timer(struct sim *s, uint32_t h, uint64_t t)
{
	struct sim_host *host = &s->hosts[h];

	if (t != host->timer_at)
		return;            /* replaced by an earlier one */
	host->timer_at = UINT64_MAX;
	homa_ep_timer(host->ep, s->now);
	sim_host_react(s, h);
}
