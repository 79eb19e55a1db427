// SPDX-License-Identifier: BSD-2-Clause
/* homa-demo: Homa: the server, the client's phases (see demo.h). */

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>

#include "demo.h"
#include "tool_addr.h"
#include "tool_clock.h"

/* homa_msg_equals - true when the received message (length len) holds
 * exactly want[0..len). */
static int homa_msg_equals(const struct tool_hsock *h, size_t len,
			   const uint8_t *want)
{
	struct iovec iov[HOMA_MAX_BPAGES];
	int i, n = tool_hsock_iov(h, len, iov);

	if (n < 0)
		return 0;
	for (i = 0; i < n; i++) {
		if (memcmp(iov[i].iov_base, want, iov[i].iov_len) != 0)
			return 0;
		want += iov[i].iov_len;
	}
	return 1;
}

/* answer - how the server answers (a tool_homa_answer_fn): as the
 * atomic_long at ctx says, ECHO or that many bytes. */
static uint32_t answer(void *ctx, const uint8_t *head, size_t head_len,
		       size_t len)
{
	long resp = atomic_load((atomic_long *)ctx);

	(void)head;
	(void)head_len;
	(void)len;
	return resp == ECHO ? TOOL_ANSWER_ECHO : (uint32_t)resp;
}

int homa_server_begin(struct demo *d)
{
	struct tool_homa_server_config cfg = {
		.addr = tool_addr_loopback(AF_INET, homa_port(d)),
		.region_len = REGION_BYTES,
		.nthreads = 1,
		.answer = answer,
		.answer_ctx = &d->homa_resp_len,
		.pattern = d->pattern,
	};
	char why[160];

	atomic_init(&d->homa_resp_len, 0);
	if (tool_homa_server_start(&d->hs, &cfg, why, sizeof(why)) == 0)
		return 0;
	fprintf(stderr, PROG ": %s%s\n", why, errno == EADDRINUSE ?
		" (choose another with --port)" : "");
	return -1;
}

int homa_server_end(struct demo *d)
{
	if (tool_homa_server_stop(&d->hs, 2000) < 0) {
		fprintf(stderr, PROG ": Homa server thread did not stop: %s\n",
			strerror(errno));
		return -1;
	}
	tool_homa_server_close(&d->hs);
	return 0;
}

int homa_client_open(struct demo *d)
{
	char why[160];

	if (tool_hsock_open(&d->hc, AF_INET, NULL, REGION_BYTES, why,
			    sizeof(why)) == 0)
		return 0;
	fprintf(stderr, PROG ": %s\n", why);
	return -1;
}

void homa_client_close(struct demo *d)
{
	if (tool_hsock_close(&d->hc) < 0)
		perror(PROG ": homa_close");
}

/* One RPC in flight. */
struct slot {
	uint64_t id;
	uint64_t cookie;
	uint64_t t0;
};

/* homa_abort_all - discard the RPCs still in flight (a phase ended
 * early), so that their responses do not reach the next phase. */
static void homa_abort_all(struct tool_hsock *c, struct slot *fl, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (homa_abort(c->fd, fl[i].id, 0) < 0)
			perror("homa-demo: homa_abort");
}

/*
 * homa_check_response - find the slot of the response h->args names and
 * check its length (and bytes, if asked).  Returns the slot index, or -1
 * with res->why set.
 */
static int homa_check_response(const struct tool_hsock *c, struct slot *fl,
			       int nfl, ssize_t len, const struct run_spec *s,
			       const uint8_t *want, struct run_result *res)
{
	int j;

	for (j = 0; j < nfl; j++)
		if (fl[j].id == c->args.id)
			break;
	if (j == nfl)
		return fail(res, "Homa response with unknown id %llu",
			    (unsigned long long)c->args.id);
	if (c->args.completion_cookie != fl[j].cookie)
		return fail(res, "Homa response id %llu: cookie %llu, "
			    "expected %llu", (unsigned long long)c->args.id,
			    (unsigned long long)c->args.completion_cookie,
			    (unsigned long long)fl[j].cookie);
	if (len != resp_bytes(s))
		return fail(res, "Homa response id %llu: %zd bytes, "
			    "expected %ld", (unsigned long long)c->args.id,
			    len, resp_bytes(s));
	if (s->verify && !homa_msg_equals(c, (size_t)len, want))
		return fail(res, "Homa response id %llu: bytes differ",
			    (unsigned long long)c->args.id);
	return j;
}

/*
 * homa_phase - s->rpcs RPCs from client c to dest, s->outstanding at a
 * time on the one socket.  Each RTT (send to response) goes into s->hist.
 * Returns 0 with res filled, or -1 with res->why (in-flight RPCs aborted).
 */
static int homa_phase(struct tool_hsock *c, const union sockaddr_in_union *dest,
		      const struct run_spec *s, const uint8_t *pattern,
		      const uint8_t *echo_want, struct run_result *res)
{
	struct slot fl[MAX_OUT];
	int nfl = 0, j;
	long sent = 0;
	uint64_t start = tool_now_ns(), t1;
	ssize_t len;

	while (res->done < s->rpcs) {
		while (nfl < s->outstanding && sent < s->rpcs) {
			fl[nfl].id = 0;
			fl[nfl].cookie = (uint64_t)sent + 1;
			fl[nfl].t0 = tool_now_ns();
			if (homa_send(c->fd, pattern, (size_t)s->req_len, dest,
				      &fl[nfl].id, fl[nfl].cookie) < 0) {
				fail(res, "homa_send: %s", strerror(errno));
				goto out_abort;
			}
			nfl++;
			sent++;
		}
		len = tool_hsock_recv(c, HOMA_RECVMSG_RESPONSE,
				      s->outstanding == 1 ? fl[0].id : 0);
		t1 = tool_now_ns();
		if (len < 0) {
			fail(res, "homa_recvmsg: RPC id %llu failed: %s",
			     (unsigned long long)c->args.id, strerror(errno));
			goto out_abort;
		}
		j = homa_check_response(c, fl, nfl, len, s, echo_want, res);
		if (j < 0)
			goto out_abort;
		if (s->hist)
			homa_histogram_record(s->hist, t1 - fl[j].t0);
		fl[j] = fl[--nfl];
		res->done++;
		if (t1 - start > PHASE_BUDGET_NS && res->done < s->rpcs) {
			res->truncated = 1;
			homa_abort_all(c, fl, nfl);
			break;
		}
	}
	res->elapsed_ns = tool_now_ns() - start;
	return 0;

out_abort:
	homa_abort_all(c, fl, nfl);
	return -1;
}

int run_homa(struct demo *d, const struct run_spec *s,
	     struct run_result *res)
{
	struct run_spec w = warm_spec(s);

	atomic_store(&d->homa_resp_len, s->resp_len);
	if (homa_phase(&d->hc, &d->homa_dest, &w, d->pattern, d->pattern,
		       res) < 0)
		return -1;
	memset(res, 0, sizeof(*res));
	return homa_phase(&d->hc, &d->homa_dest, s, d->pattern, d->pattern,
			  res);
}
