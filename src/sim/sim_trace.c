// SPDX-License-Identifier: BSD-2-Clause
/*
 * Tracing: with params.trace set, every packet event (and the
 * application's events) of one RPC, or of all, printed one a line with the
 * virtual time, for reading what led to a violation.
 */

#include <stdarg.h>
#include <stdio.h>

#include "homa_wire.h"
#include "sim_internal.h"

/* rpc_key - the client host and client id of the RPC a decoded packet
 * from host a to host b belongs to. */
static void rpc_key(const struct homa_pkt *pkt, uint32_t a, uint32_t b,
		    uint32_t *client, uint64_t *id)
{
	if (pkt->sender_id & 1) {
		*client = b;
		*id = pkt->sender_id ^ 1;
	} else {
		*client = a;
		*id = pkt->sender_id;
	}
}

/* describe - the type-specific fields of pkt, into buf. */
static void describe(const struct homa_pkt *pkt, char *buf, size_t cap)
{
	switch (pkt->type) {
	case HOMA_PKT_DATA:
		snprintf(buf, cap, " offset %u len %u of %u incoming %u%s%s",
			 pkt->offset, pkt->payload_len, pkt->message_length,
			 pkt->incoming, pkt->retransmit ? " retransmit" : "",
			 pkt->num_acks ? " +ack" : "");
		break;
	case HOMA_PKT_GRANT:
		snprintf(buf, cap, " offset %u prio %u", pkt->offset,
			 pkt->priority);
		break;
	case HOMA_PKT_RESEND:
		snprintf(buf, cap, " offset %u length %u prio %u",
			 pkt->offset, pkt->length, pkt->priority);
		break;
	case HOMA_PKT_ACK:
		snprintf(buf, cap, " %u acks", pkt->num_acks);
		break;
	default:
		buf[0] = '\0';
		break;
	}
}

void sim_trace_pkt(struct sim *s, const struct sim_pkt *pkt,
		   const char *what)
{
	struct homa_pkt d;
	uint32_t client;
	uint64_t id;
	char more[96];

	if (!s->p.trace)
		return;
	if (homa_wire_decode(pkt->data, pkt->len, &d) != HOMA_WIRE_OK) {
		if (s->p.trace_id == 0)
			fprintf(s->p.trace, "%12.3f us  %u -> %u: undecodable "
				"%u bytes: %s\n", s->now / 1e3, pkt->src,
				pkt->dst, pkt->len, what);
		return;
	}
	rpc_key(&d, pkt->src, pkt->dst, &client, &id);
	if (s->p.trace_id && (client != s->p.trace_host ||
			      id != s->p.trace_id))
		return;
	describe(&d, more, sizeof(more));
	fprintf(s->p.trace, "%12.3f us  %u -> %u: %s id %llu%s (prio %u): "
		"%s\n", s->now / 1e3, pkt->src, pkt->dst,
		homa_wire_type_name(d.type), (unsigned long long)d.sender_id,
		more, pkt->prio, what);
}

void sim_trace_rpc(struct sim *s, uint32_t client, uint64_t id,
		   const char *fmt, ...)
{
	va_list ap;

	if (!s->p.trace || (s->p.trace_id && (client != s->p.trace_host ||
					      id != s->p.trace_id)))
		return;
	fprintf(s->p.trace, "%12.3f us  rpc %u/%llu: ", s->now / 1e3, client,
		(unsigned long long)id);
	va_start(ap, fmt);
	vfprintf(s->p.trace, fmt, ap);
	va_end(ap);
	fputc('\n', s->p.trace);
}
