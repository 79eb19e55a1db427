// SPDX-License-Identifier: BSD-2-Clause
/*
 * Simulated hosts: one Homa endpoint each (port 1, accepting requests,
 * address 10.0.0.0 + index + 1), a NIC, the endpoint's timer, and the
 * application.
 *
 * NIC: after every event at a host, the host moves every packet its
 * endpoint releases into the NIC's FIFO queue (no limit), and the NIC
 * sends from it at the link rate, as a real NIC's transmit ring.  What
 * keeps that queue short is the core's own pacer (link_mbps set to the
 * host link rate, max_nic_queue_ns): the host pulls the output again
 * whenever the endpoint asks (homa_ep_next_timer: its tick, or the time
 * its pacer lets held-back DATA go).  Simulated hosts default to
 * max_nic_queue_ns 0 (sim_params.c): their pacer wakes exactly when the
 * link goes idle, so each paced packet reaches the NIC just as it frees
 * up, and the kernel's 5 us allowance (for a pacer that wakes late and
 * NIC completions that come asynchronously) would only add queueing;
 * --set max_nic_queue_ns=5000 restores it.  With the pacer off the core
 * does not throttle (HOMA_FLAG_DONT_THROTTLE) and releases everything at
 * once.
 *
 * Application: a server takes each request at once, checks its bytes,
 * returns its bpages and answers with the response of that request; a
 * client takes each response (or error), checks that it belongs to the RPC
 * it completes and its bytes, and returns its bpages.  Every deviation is
 * logged as a violation (sim_check.h).
 *
 * Restarts: a crashed host has no endpoint; it drops what arrives.  The
 * new endpoint takes its client ids from a new base, so the ids of every
 * incarnation of a host are distinct.
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

/* id_base - the first client id of incarnation inc of host h: the
 * incarnation in the top bits, the host above bit 32, and for a restarted
 * host random bits below, so that no two incarnations share an id. */
static uint64_t id_base(struct sim *s, uint32_t h, uint32_t inc)
{
	uint64_t base = (uint64_t)inc << 52 | ((uint64_t)h + 1) << 32;

	if (inc > 0)
		base |= (workload_rng_next(&s->restart_rng) & 0x7fff) << 17;
	return base;
}

/* host_endpoint - a new endpoint for host h (its current incarnation) on
 * its region.  Returns 0 or -errno (message in err). */
static int host_endpoint(struct sim *s, uint32_t h, char *err, size_t errcap)
{
	struct sim_host *host = &s->hosts[h];
	struct homa_ep_params ep = {
		.cfg = &s->p.core, .family = AF_INET, .port = SIM_PORT,
		.is_server = true, .num_cores = 1,
	};
	struct homa_ep_info info;
	int rc;

	ep.first_client_id = id_base(s, h, host->incarnation);
	host->ep = homa_ep_create(&ep);
	if (!host->ep) {
		snprintf(err, errcap, "the core refused the endpoint settings "
			 "(or out of memory)");
		return -EINVAL;
	}
	homa_ep_info(host->ep, &info);
	rc = homa_pool_set_region(info.pool, host->region,
				  s->p.region_bytes);
	if (rc)
		snprintf(err, errcap, "buffer region refused (%d)", rc);
	return rc;
}

/* host_create - the address, region and endpoint of host h.  Returns 0 or
 * -errno (message in err). */
static int host_create(struct sim *s, uint32_t h, char *err, size_t errcap)
{
	struct sim_host *host = &s->hosts[h];

	host_addr(h, &host->addr);
	host->timer_at = UINT64_MAX;
	/* Mapped, not allocated: pages cost memory only once touched, and
	 * go back to the system as soon as the host is freed. */
	host->region = mmap(NULL, s->p.region_bytes, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (host->region == MAP_FAILED) {
		host->region = NULL;
		snprintf(err, errcap, "out of memory for buffer regions");
		return -ENOMEM;
	}
	return host_endpoint(s, h, err, errcap);
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
		workload_rng_seed(&s->hosts[h].rng, s->p.seed,
				  16 + (uint64_t)h);
		rc = host_create(s, h, err, errcap);
		if (rc)
			return rc;
	}
	return 0;
}

/* pktq_push - append pkt to q. */
static void pktq_push(struct sim_pktq *q, struct sim_pkt *pkt)
{
	pkt->next = NULL;
	if (q->tail)
		q->tail->next = pkt;
	else
		q->head = pkt;
	q->tail = pkt;
	q->bytes += pkt->wire;
}

/* pktq_pop - remove and return the head of q (NULL when q is empty). */
static struct sim_pkt *pktq_pop(struct sim_pktq *q)
{
	struct sim_pkt *pkt = q->head;

	if (!pkt)
		return NULL;
	q->head = pkt->next;
	if (!q->head)
		q->tail = NULL;
	q->bytes -= pkt->wire;
	pkt->next = NULL;
	return pkt;
}

/* pktq_flush - free every packet of q. */
static void pktq_flush(struct sim *s, struct sim_pktq *q)
{
	struct sim_pkt *pkt;

	while ((pkt = pktq_pop(q)) != NULL)
		sim_pkt_free(s, pkt);
}

void sim_hosts_free(struct sim *s)
{
	uint32_t h;

	for (h = 0; s->hosts && h < s->nhosts; h++) {
		homa_ep_destroy(s->hosts[h].ep);
		pktq_flush(s, &s->hosts[h].nicq);
		pktq_flush(s, &s->hosts[h].rxq);
		if (s->hosts[h].region)
			munmap(s->hosts[h].region, s->p.region_bytes);
	}
	free(s->hosts);
	s->hosts = NULL;
}

void sim_taint(struct sim *s, uint32_t client, uint64_t id)
{
	if (client >= s->nhosts || id == 0 || sim_tainted(s, client, id))
		return;
	if (sim_idmap_put(&s->taint, client, id, 1) != 0)
		s->oom = true;
}

bool sim_tainted(const struct sim *s, uint32_t client, uint64_t id)
{
	return sim_idmap_get(&s->taint, client, id) != UINT32_MAX;
}

/* msg_tainted - true when message m's RPC is tainted. */
static bool msg_tainted(const struct sim *s, const struct sim_msg *m)
{
	return m->id != 0 && sim_tainted(s, m->src, m->id);
}

/* reply_size - the response size of a new request of host h. */
static uint32_t reply_size(struct sim *s, uint32_t h)
{
	if (!s->p.reply_workload)
		return s->p.reply_bytes;
	return workload_dist_sample(s->p.reply_workload,
				    workload_rng_uniform(&s->hosts[h].rng));
}

/* content - the bytes of a message of len with content key key, in
 * s->txbuf (zeros when content is not checked). */
static const uint8_t *content(struct sim *s, uint64_t key, uint32_t len)
{
	if (s->p.check_content)
		sim_pattern(key, 0, s->txbuf, len);
	return s->txbuf;
}

int sim_host_send(struct sim *s, uint32_t h, uint32_t msg)
{
	struct sim_host *host = &s->hosts[h];
	struct sim_msg *m = &s->msgs[msg];
	struct iovec iov;
	uint64_t id;
	int rc;

	if (host->down)
		return -ENOTCONN;
	m->reply_size = reply_size(s, h);
	iov.iov_base = (void *)content(s, sim_msg_key(s->p.seed, msg, false),
				       m->size);
	iov.iov_len = m->size;
	rc = homa_ep_send_request(host->ep, &s->hosts[m->dst].addr, &iov, 1,
				  msg, 0, &id, s->now);
	if (rc)
		return rc;
	m->start_ns = s->now;
	m->id = id;
	m->client_inc = host->incarnation;
	m->healed = s->healed;
	sim_trace_rpc(s, h, id, "request %u of %u bytes to host %u", msg,
		      m->size, m->dst);
	if (sim_idmap_get(&s->ids, h, id) != UINT32_MAX)
		sim_violation_add(&s->v, s->now, "host %u gave client id %llu "
				  "twice", h, (unsigned long long)id);
	if (sim_idmap_put(&s->ids, h, id, msg) != 0) {
		s->oom = true;
		return -ENOMEM;
	}
	s->c.generated++;
	sim_host_react(s, h);
	return 0;
}

/* check_bytes - the application of host h got a message of len bytes at
 * offsets[0..num) of its region, which should be the content of key:
 * check the layout (every bpage but the last whole, each inside the
 * region) and every byte.  Returns NULL, or what is wrong. */
static const char *check_bytes(struct sim *s, uint32_t h, uint64_t key,
			       uint32_t len, const uint32_t *offsets,
			       uint32_t num, int64_t *where)
{
	const uint8_t *region = s->hosts[h].region;
	uint32_t i, done = 0;

	*where = -1;
	if (num != (len + HOMA_BPAGE_SIZE - 1) / HOMA_BPAGE_SIZE)
		return "wrong number of bpages";
	for (i = 0; i < num; i++) {
		uint32_t n = len - done < HOMA_BPAGE_SIZE ? len - done :
			     HOMA_BPAGE_SIZE;

		if (offsets[i] > s->p.region_bytes - n ||
		    (i + 1 < num && offsets[i] % HOMA_BPAGE_SIZE != 0))
			return "bpage offset outside the region or unaligned";
		if (s->p.check_content) {
			*where = sim_pattern_check(key, done,
						   region + offsets[i], n,
						   s->scratch);
			if (*where >= 0)
				return "bytes differ";
		}
		done += n;
	}
	return NULL;
}

/* record_execution - the server application of host h takes request m:
 * a second execution by the same incarnation is allowed only once the
 * server may have forgotten the RPC (timed out), once the client RPC has
 * ended (a late duplicate), or for a tainted RPC. */
static void record_execution(struct sim *s, uint32_t h, struct sim_msg *m,
			     uint32_t idx)
{
	struct sim_host *host = &s->hosts[h];

	s->c.executions++;
	if (m->execs > 0 && m->exec_inc == host->incarnation) {
		if (m->state != SIM_MSG_PENDING || msg_tainted(s, m) ||
		    s->now - m->exec_ns >= s->reexec_ns)
			s->c.reexecutions++;
		else
			sim_violation_add(&s->v, s->now, "request %u (host %u "
					  "id %llu) executed twice by host %u "
					  "incarnation %u, %.3f ms apart",
					  idx, m->src,
					  (unsigned long long)m->id, h,
					  host->incarnation,
					  (s->now - m->exec_ns) / 1e6);
	}
	sim_trace_rpc(s, m->src, m->id, "executed by host %u incarnation %u",
		      h, host->incarnation);
	m->execs++;
	m->exec_inc = host->incarnation;
	m->exec_mask |= 1u << (host->incarnation < 31 ? host->incarnation : 31);
	m->exec_ns = s->now;
	if (m->done_ns == 0 && !m->failed) {
		m->done_ns = s->now;
		s->c.completed++;
	}
}

/* response_key - the content key of the response to request idx from
 * server incarnation inc: responses of different incarnations differ, so
 * that a response made of parts of two of them is caught. */
static uint64_t response_key(const struct sim *s, uint32_t idx, uint32_t inc)
{
	return sim_msg_key(s->p.seed, idx, true) +
	       (uint64_t)(inc < 31 ? inc : 31) * 0x9e3779b97f4a7c15ull;
}

/* serve - host h's application took request r: check it, answer. */
static void serve(struct sim *s, uint32_t h, const struct homa_msg_ready *r)
{
	uint32_t c = sim_host_index(s, &r->peer), idx, len = 1;
	uint64_t cid = r->id ^ 1, key = 0;
	struct iovec iov;
	const char *why;
	int64_t where;

	idx = c == UINT32_MAX ? UINT32_MAX : sim_idmap_get(&s->ids, c, cid);
	if (idx == UINT32_MAX || s->msgs[idx].dst != h) {
		if (c == UINT32_MAX || !sim_tainted(s, c, cid))
			sim_violation_add(&s->v, s->now, "host %u got a "
					  "request (id %llu from host %u) "
					  "that no client sent it", h,
					  (unsigned long long)cid, c);
		idx = UINT32_MAX;
	} else {
		struct sim_msg *m = &s->msgs[idx];
		bool tainted = msg_tainted(s, m);

		why = r->length != m->size ? "wrong length" :
		      check_bytes(s, h, sim_msg_key(s->p.seed, idx, false),
				  r->length, r->bpage_offsets, r->num_bpages,
				  &where);
		if (why && !tainted)
			sim_violation_add(&s->v, s->now, "request %u (host %u "
					  "id %llu, %u bytes) at host %u: %s "
					  "(length %u, offset %lld)", idx, c,
					  (unsigned long long)cid, m->size, h,
					  why, r->length, (long long)where);
		record_execution(s, h, m, idx);
		len = m->reply_size;
		key = response_key(s, idx, s->hosts[h].incarnation);
	}
	iov.iov_base = (void *)content(s, key, len);
	iov.iov_len = len;
	homa_ep_send_reply(s->hosts[h].ep, &r->peer, r->id, &iov, 1, 0,
			   s->now);
}

/* check_response - the response r to request idx (message m) has the
 * length and bytes of the response of one of the incarnations that
 * executed it.  Returns NULL or what is wrong (*where: first bad offset
 * for the last incarnation tried). */
static const char *check_response(struct sim *s, uint32_t h, uint32_t idx,
				  const struct sim_msg *m,
				  const struct homa_msg_ready *r,
				  int64_t *where)
{
	const char *why = "no server executed the request";
	uint32_t inc;

	*where = -1;
	if (r->length != m->reply_size)
		return m->execs ? "wrong response length" : why;
	for (inc = 0; inc < 32; inc++) {
		if (!(m->exec_mask & (1u << inc)))
			continue;
		why = check_bytes(s, h, response_key(s, idx, inc), r->length,
				  r->bpage_offsets, r->num_bpages, where);
		if (!why)
			return NULL;
	}
	return why;
}

/* allowed_error - true when a client RPC of m may fail with err. */
static bool allowed_error(const struct sim *s, const struct sim_msg *m,
			  int err)
{
	if (msg_tainted(s, m))
		return true;
	if (err != ETIMEDOUT)
		return false;
	return !s->fault || !m->healed;
}

/* client_done - host h's application took the response (or failure) r of
 * one of its requests. */
static void client_done(struct sim *s, uint32_t h,
			const struct homa_msg_ready *r)
{
	struct sim_msg *m = r->cookie < s->nmsgs ? &s->msgs[r->cookie] : NULL;
	const char *why;
	int64_t where;

	if (!m || m->src != h || m->id != r->id ||
	    m->client_inc != s->hosts[h].incarnation) {
		sim_violation_add(&s->v, s->now, "host %u got a result (id "
				  "%llu, cookie %llu) of no RPC of its own", h,
				  (unsigned long long)r->id,
				  (unsigned long long)r->cookie);
		return;
	}
	if (m->state != SIM_MSG_PENDING) {
		sim_violation_add(&s->v, s->now, "request %llu (host %u id "
				  "%llu) completed twice",
				  (unsigned long long)r->cookie, h,
				  (unsigned long long)r->id);
		return;
	}
	m->resp_ns = s->now;
	sim_trace_rpc(s, h, r->id, "result: %s, %u bytes",
		      r->error ? strerror(r->error) : "response", r->length);
	if (r->error) {
		m->state = SIM_MSG_FAILED;
		m->error = r->error;
		s->c.client_errors++;
		if (!allowed_error(s, m, r->error))
			sim_violation_add(&s->v, s->now, "request %llu (host "
					  "%u id %llu%s) failed: %s",
					  (unsigned long long)r->cookie, h,
					  (unsigned long long)r->id,
					  m->healed ? ", healed phase" : "",
					  strerror(r->error));
		if (m->done_ns == 0 && !m->failed) {
			m->failed = true;
			s->c.failed++;
		}
		return;
	}
	m->state = SIM_MSG_OK;
	s->c.responses++;
	if (msg_tainted(s, m))
		return;
	why = check_response(s, h, (uint32_t)r->cookie, m, r, &where);
	if (why)
		sim_violation_add(&s->v, s->now, "response of request %llu "
				  "(host %u id %llu, %u bytes): %s (length %u, "
				  "offset %lld)", (unsigned long long)r->cookie,
				  h, (unsigned long long)r->id, m->reply_size,
				  why, r->length, (long long)where);
}

/* slow_app - true when host h's server application takes service_ns per
 * request. */
static bool slow_app(const struct sim *s, uint32_t h)
{
	return s->p.service_ns != 0 &&
	       (s->p.service_hosts == 0 || h < s->p.service_hosts);
}

/* take_flags - what host h's application takes now: responses always,
 * requests unless it is a slow one still busy with the last (it is woken
 * by an SIM_EV_APP when it is free). */
static int take_flags(struct sim *s, uint32_t h)
{
	struct sim_host *host = &s->hosts[h];

	if (!slow_app(s, h))
		return HOMA_RECVMSG_REQUEST | HOMA_RECVMSG_RESPONSE;
	if (s->now < host->app_free_at)
		return HOMA_RECVMSG_RESPONSE;
	return HOMA_RECVMSG_REQUEST | HOMA_RECVMSG_RESPONSE;
}

/* app_busy - host h's slow application took a request: it is busy for
 * service_ns. */
static void app_busy(struct sim *s, uint32_t h)
{
	if (!slow_app(s, h))
		return;
	s->hosts[h].app_free_at = s->now + s->p.service_ns;
	sim_push(s, s->hosts[h].app_free_at, SIM_EV_APP, h, NULL);
}

/* drain - the application of host h takes every ready message (a slow
 * server application: every response and at most one request). */
static void drain(struct sim *s, uint32_t h)
{
	struct homa_ep *ep = s->hosts[h].ep;
	struct homa_msg_ready m;

	while (homa_ep_receive(ep, 0, take_flags(s, h), &m) == 0) {
		if (m.id & 1)
			app_busy(s, h);
		if (m.id & 1)
			serve(s, h, &m);
		else
			client_done(s, h, &m);
		if (m.num_bpages &&
		    homa_ep_return_bpages(ep, m.bpage_offsets, m.num_bpages, 0,
					  s->now) != 0)
			sim_violation_add(&s->v, s->now, "host %u: the pool "
					  "refused bpages it handed out", h);
	}
}

/* pull - a packet of host h's endpoint, or NULL when it has none now. */
static struct sim_pkt *pull(struct sim *s, uint32_t h)
{
	struct homa_out out = { 0 };   /* max_segs 0: whole packets */
	struct sim_pkt *pkt = sim_pkt_alloc(s);

	if (!pkt)
		return NULL;
	out.buf = pkt->data;
	if (!homa_ep_output(s->hosts[h].ep, s->now, &out)) {
		sim_pkt_free(s, pkt);
		return NULL;
	}
	pkt->src = h;
	pkt->dst = sim_host_index(s, &out.dest);
	pkt->len = (uint32_t)out.len;
	pkt->wire = sim_wire_bytes(pkt->len);
	pkt->prio = out.priority;
	if (s->fault)
		pkt->csum = sim_inet_csum(pkt->data, pkt->len);
	return pkt;
}

/* nic_fill - move every packet the endpoint of host h releases now into
 * its NIC queue, as a datapath hands each packet to the NIC's transmit
 * ring at once: the core's pacer (link_mbps, max_nic_queue_ns) alone
 * decides how much waits there. */
static void nic_fill(struct sim *s, uint32_t h)
{
	struct sim_host *host = &s->hosts[h];
	struct sim_pkt *pkt;

	while ((pkt = pull(s, h)) != NULL)
		pktq_push(&host->nicq, pkt);
}

/* nic_start - if host h's NIC is idle, put the head of its queue on the
 * link; then record the bytes left waiting behind the packet on the link
 * (max_nic_queue_bytes). */
static void nic_start(struct sim *s, uint32_t h)
{
	struct sim_host *host = &s->hosts[h];
	struct sim_pkt *pkt;
	uint64_t end;

	if (!host->nic_busy && (pkt = pktq_pop(&host->nicq)) != NULL) {
		host->nic_busy = true;
		s->c.packets++;
		end = sim_tx_end(&host->nic_done, s->now, pkt->wire,
				 s->p.link_mbps);
		sim_push(s, end, SIM_EV_NIC_FREE, h, NULL);
		sim_link_send(s, pkt, h, host->tor, end);
	}
	if (host->nicq.bytes > s->c.max_nic_queue_bytes)
		s->c.max_nic_queue_bytes = host->nicq.bytes;
}

/* arm_timer - make sure a timer event of host h is due no later than the
 * endpoint asks (its next tick, or earlier when its pacer holds DATA back
 * until then: the host pulls the output again at that time).  A later
 * event left behind is recognised as stale. */
static void arm_timer(struct sim *s, uint32_t h)
{
	struct sim_host *host = &s->hosts[h];
	uint64_t at = homa_ep_next_timer(host->ep);

	if (at <= s->now)
		at = s->now + 1;
	if (at >= host->timer_at)
		return;
	host->timer_at = at;
	sim_push(s, at, SIM_EV_TIMER, h, NULL);
}

/* check_limits - the endpoint of host h holds no more RPCs than max_rpcs
 * allows (logged once per host). */
static void check_limits(struct sim *s, uint32_t h)
{
	struct sim_host *host = &s->hosts[h];
	struct homa_ep_info info;
	uint32_t n;

	homa_ep_info(host->ep, &info);
	n = info.num_rpcs;

	if (n <= (uint64_t)s->p.core.max_rpcs || host->over_limit)
		return;
	host->over_limit = true;
	sim_violation_add(&s->v, s->now, "host %u holds %u RPCs, more than "
			  "max_rpcs %lld", h, n,
			  (long long)s->p.core.max_rpcs);
}

void sim_host_react(struct sim *s, uint32_t h)
{
	if (s->hosts[h].down)
		return;
	drain(s, h);
	nic_fill(s, h);
	nic_start(s, h);
	arm_timer(s, h);
	check_limits(s, h);
}

/* slow_rx - true when host h's receiver takes rx_ns per packet. */
static bool slow_rx(const struct sim *s, uint32_t h)
{
	return s->p.rx_ns != 0 && (s->p.rx_hosts == 0 || h < s->p.rx_hosts);
}

/* host_input - pkt (NULL: none) into host's endpoint as a batch, and
 * whether more packets wait in host's receive FIFO (behind). */
static void host_input(struct sim *s, struct sim_host *host,
		       const struct sim_pkt *pkt, bool behind)
{
	struct homa_rx_pkt in;
	struct homa_rx_batch b;

	memset(&b, 0, sizeof(b));
	if (pkt) {
		memset(&in, 0, sizeof(in));
		in.buf = pkt->data;
		in.len = pkt->len;
		in.src = s->hosts[pkt->src].addr;
		in.place = -1;
		b.pkts = &in;
		b.n = 1;
	}
	b.behind = behind;
	homa_ep_input(host->ep, &b, 0, s->now);
}

/* rx_enqueue - pkt reached slow receiver h: it waits in the FIFO (its CPU
 * starts on it at once when idle), or is dropped when the FIFO holds
 * rx_queue_bytes already. */
static void rx_enqueue(struct sim *s, uint32_t h, struct sim_pkt *pkt)
{
	struct sim_host *host = &s->hosts[h];

	if (host->rxq.bytes + pkt->wire > s->p.rx_queue_bytes) {
		s->c.rx_drops++;
		sim_trace_pkt(s, pkt, "dropped: receiver's FIFO full");
		sim_pkt_free(s, pkt);
		return;
	}
	pktq_push(&host->rxq, pkt);
	if (!s->p.rx_backlog_quiet)
		host_input(s, host, NULL, true);
	if (host->rxq.bytes > s->c.max_rx_queue_bytes)
		s->c.max_rx_queue_bytes = host->rxq.bytes;
	if (!host->rx_busy) {
		host->rx_busy = true;
		sim_push(s, s->now + s->p.rx_ns, SIM_EV_RX, h, NULL);
	}
}

/* feed - pkt is read by host h: the endpoint gets it (pkt is freed) and
 * the host reacts. */
static void feed(struct sim *s, uint32_t h, struct sim_pkt *pkt)
{
	struct sim_host *host = &s->hosts[h];

	if (host->down) {
		s->c.down_drops++;
		sim_trace_pkt(s, pkt, "reached a crashed host");
	} else if (s->fault && sim_inet_csum(pkt->data, pkt->len) !=
		   pkt->csum) {
		/* The datapath's checksum (UDP's) caught a corruption. */
		s->c.csum_drops++;
		sim_trace_pkt(s, pkt, "refused: bad checksum");
	} else if (pkt->src < s->nhosts) {
		sim_trace_pkt(s, pkt, "delivered");
		host_input(s, host, pkt, !s->p.rx_backlog_quiet &&
					 host->rxq.head != NULL);
	}
	sim_pkt_free(s, pkt);
	sim_host_react(s, h);
}

void sim_host_deliver(struct sim *s, uint32_t h, struct sim_pkt *pkt)
{
	if (slow_rx(s, h) && !s->hosts[h].down)
		rx_enqueue(s, h, pkt);
	else
		feed(s, h, pkt);
}

void sim_host_rx_done(struct sim *s, uint32_t h)
{
	struct sim_host *host = &s->hosts[h];
	struct sim_pkt *pkt = pktq_pop(&host->rxq);

	host->rx_busy = false;
	if (!pkt)
		return;                    /* flushed by a crash */
	if (host->rxq.head) {
		host->rx_busy = true;
		sim_push(s, s->now + s->p.rx_ns, SIM_EV_RX, h, NULL);
	}
	feed(s, h, pkt);
}

void sim_host_nic_free(struct sim *s, uint32_t h)
{
	s->hosts[h].nic_busy = false;
	sim_host_react(s, h);
}

void sim_host_timer(struct sim *s, uint32_t h, uint64_t t)
{
	struct sim_host *host = &s->hosts[h];

	if (t != host->timer_at || host->down)
		return;            /* replaced by an earlier one */
	host->timer_at = UINT64_MAX;
	homa_ep_timer(host->ep, s->now);
	sim_host_react(s, h);
}

void sim_host_down(struct sim *s, uint32_t h)
{
	struct sim_host *host = &s->hosts[h];
	struct homa_ep_info info;
	const uint64_t *st;
	size_t i;

	if (host->down)
		return;
	host->down = true;
	s->c.restarts++;
	homa_ep_info(host->ep, &info);
	st = info.stats;
	for (i = 0; i < HOMA_STAT_COUNT; i++)
		s->retired[i] += st[i];
	homa_ep_destroy(host->ep);
	host->ep = NULL;
	pktq_flush(s, &host->nicq);
	pktq_flush(s, &host->rxq);
	host->timer_at = UINT64_MAX;
	for (i = 0; i < s->nmsgs; i++) {
		struct sim_msg *m = &s->msgs[i];

		if (m->src != h || m->state != SIM_MSG_PENDING)
			continue;
		m->state = SIM_MSG_LOST;
		m->resp_ns = s->now;
		s->c.lost++;
		if (m->done_ns == 0 && !m->failed) {
			m->failed = true;
			s->c.failed++;
		}
	}
}

int sim_host_up(struct sim *s, uint32_t h)
{
	struct sim_host *host = &s->hosts[h];
	char err[128];
	int rc;

	if (!host->down)
		return 0;
	host->incarnation++;
	host->over_limit = false;
	rc = host_endpoint(s, h, err, sizeof(err));
	if (rc) {
		homa_ep_destroy(host->ep);
		host->ep = NULL;
		s->oom = true;
		return rc;
	}
	host->down = false;
	homa_ep_timer(host->ep, s->now);
	sim_host_react(s, h);
	return 0;
}
