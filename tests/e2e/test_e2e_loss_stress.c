/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_e2e_loss_stress.c - many RPCs of mixed sizes between one client and
 * one server of the same process, every byte checked.
 *
 * It runs in the normal end-to-end suite (on a clean loopback, in a few
 * seconds) and, through test_loss.sh, inside network namespaces whose
 * loopback drops a random share of the UDP packets.  What it asserts holds
 * at any loss rate below the point where a whole RESEND cycle of 100 ms is
 * lost (which at 5% random loss does not happen in practice):
 *   - every RPC completes, with no error (the peer is alive: ETIMEDOUT or
 *     any other failure is a bug);
 *   - every response is the right one, byte for byte, in a sound bpage
 *     layout, and arrives exactly once (no response for an id that is not
 *     outstanding, nothing left to receive at the end);
 *   - the server executes each request exactly once (its request count
 *     equals the number of RPCs) and finds every request intact.
 *
 * Sizes are drawn from a seeded generator (1 byte .. 1,000,000 bytes, with
 * the packet, unscheduled and bpage boundaries drawn on purpose), requests
 * and responses independently; each request names the response size it
 * wants.  A window of RPCs is kept outstanding.
 *
 * Environment (all optional):
 *   LOSS_STRESS_RPCS    RPCs of the IPv4 test (default 2000, or 500 under
 *                       AddressSanitizer and 200 under ThreadSanitizer,
 *                       which slow the engine down 3-15 times; the IPv6
 *                       test runs a quarter of them)
 *   LOSS_STRESS_SEED    seed of the size generator (default 1); printed
 *   LOSS_STRESS_WINDOW  RPCs outstanding at once, 1..256 (default 16)
 * At the end of each test one line starting "[ LOSS-STRESS ]" gives the
 * counts, the time and the retransmission counters of both sockets.
 */
#include "e2e_util.h"

#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>

/* Default RPC count: 2000 takes 1-2 s on this machine, 10-25 s under
 * AddressSanitizer and about a minute under ThreadSanitizer. */
#if defined(__SANITIZE_THREAD__)
#define STRESS_DEFAULT_RPCS 200
#elif defined(__SANITIZE_ADDRESS__)
#define STRESS_DEFAULT_RPCS 500
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define STRESS_DEFAULT_RPCS 200
#elif __has_feature(address_sanitizer)
#define STRESS_DEFAULT_RPCS 500
#endif
#endif
#ifndef STRESS_DEFAULT_RPCS
#define STRESS_DEFAULT_RPCS 2000
#endif
#define STRESS_DEFAULT_SEED 1
#define STRESS_DEFAULT_WINDOW 16
#define STRESS_MAX_WINDOW 256

/* Longest wait for the next response before the test fails with a
 * diagnosis (the library times an RPC out after 100 ms of silence, so a
 * healthy run never gets near it). */
#define STRESS_RECV_WAIT_MS 20000

/* Sizes drawn on purpose: packet payload (1416 over UDP at mtu 1500, 1424
 * over raw IP), unscheduled bytes (40,000), bpage (65,536) and message
 * limits. */
static const uint32_t k_boundaries[] = {
	1, 7, 8, 11, 12, 16, 1415, 1416, 1417, 2832, 2833, 1423, 1424, 1425,
	2848, 2849, 39999, 40000,
	40001, 65535, 65536, 65537, 131072, 999999, 1000000,
};
#define NBOUNDARIES (sizeof k_boundaries / sizeof k_boundaries[0])

/* env_num - the environment variable @name as an unsigned number in
 * [@lo, @hi], or @def when it is unset; an invalid value fails the test. */
static unsigned long env_num(const char *name, unsigned long def,
			     unsigned long lo, unsigned long hi)
{
	const char *s = getenv(name);
	char *end;
	unsigned long v;

	if (!s || !*s)
		return def;
	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || *end || v < lo || v > hi)
		fail_msg("%s=%s: want a number in %lu..%lu", name, s, lo, hi);
	return v;
}

/* rng_next - the next value of splitmix64 with state *@s. */
static uint64_t rng_next(uint64_t *s)
{
	uint64_t x = (*s += 0x9E3779B97F4A7C15ull);

	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
	return x ^ (x >> 31);
}

/* rng_range - a value in [@lo, @hi] from state *@s. */
static uint32_t rng_range(uint64_t *s, uint32_t lo, uint32_t hi)
{
	return lo + (uint32_t)(rng_next(s) % ((uint64_t)hi - lo + 1));
}

/*
 * draw_size - a message size in 1..1,000,000 from state *@s: 5% boundary
 * sizes, 35% up to 200 bytes, 25% up to two packets, 17% up to the
 * unscheduled limit, 12% up to 200 kB, 6% up to 1 MB (mean about 60 kB).
 */
static uint32_t draw_size(uint64_t *s)
{
	uint32_t c = (uint32_t)(rng_next(s) % 100);

	if (c < 5)
		return k_boundaries[rng_next(s) % NBOUNDARIES];
	if (c < 40)
		return rng_range(s, 1, 200);
	if (c < 65)
		return rng_range(s, 201, 2848);
	if (c < 82)
		return rng_range(s, 2849, 40000);
	if (c < 94)
		return rng_range(s, 40001, 200000);
	return rng_range(s, 200001, HOMA_MAX_MESSAGE_LENGTH);
}

/* Counters printed for each socket at the end of a run. */
static const char *const k_report_stats[] = {
	"packets_sent_DATA", "packets_rcvd_DATA", "resent_packets",
	"resend_requests", "packets_sent_RESEND", "packets_rcvd_RESEND", "packets_sent_BUSY", "packets_sent_NEED_ACK",
	"packets_rcvd_RPC_UNKNOWN", "drop_duplicate_data", "rpc_timeouts",
	"client_rpc_errors", "server_rpcs_timed_out", "rpc_restarts",
};
#define NREPORT (sizeof k_report_stats / sizeof k_report_stats[0])

/* format_stats - " name=value" for each of k_report_stats on socket @fd,
 * into @buf (@len bytes). */
static void format_stats(int fd, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = 0;
	for (size_t i = 0; i < NREPORT && used < len; i++) {
		int w = snprintf(buf + used, len - used, " %s=%" PRIu64,
				 k_report_stats[i],
				 e2e_stat(fd, k_report_stats[i]));

		if (w < 0)
			break;
		used += (size_t)w;
	}
}

/* One outstanding RPC of the window. */
struct slot {
	int busy;
	unsigned index;         /* which RPC of the run (0..n-1) */
	struct e2e_req req;
};

/*
 * run_stress - @n RPCs from a fresh client socket of @family to a fresh
 * two-thread server, at most @window outstanding, sizes drawn from @seed.
 * Fails the test (with the RPC, the reason and both sockets' counters) on
 * any lost, failed, wrong or duplicated response, or any server problem;
 * prints the "[ LOSS-STRESS ]" line on success.
 */
static void run_stress(int family, unsigned n, unsigned window, uint64_t seed)
{
	struct e2e_server *srv = e2e_server_start(family, E2E_REGION_DEFAULT,
						  0, 0, 2);
	struct e2e_sock *c = e2e_socket(family, E2E_REGION_DEFAULT);
	struct slot *slots = e2e_alloc(window * sizeof *slots);
	uint64_t *ids = e2e_alloc(n * sizeof *ids);
	union sockaddr_in_union dest;
	uint64_t rng = seed, req_bytes = 0, resp_bytes = 0;
	uint64_t start = e2e_now_ms();
	unsigned next = 0, done = 0, inflight = 0;
	char why[256], cst[768], sst[768];
	struct e2e_msg m;

	if (!srv || !c)
		fail_msg("cannot make the server or the client: %s",
			 strerror(errno));
	dest = e2e_server_addr(srv);
	while (done < n) {
		struct slot *sl = NULL;

		/* Fill the window. */
		for (unsigned i = 0; i < window && next < n; i++) {
			struct e2e_req *r = &slots[i].req;
			uint32_t want;

			if (slots[i].busy)
				continue;
			memset(r, 0, sizeof *r);
			r->req_len = draw_size(&rng);
			want = draw_size(&rng);
			/* One response in ten is an echo of the request. */
			r->resp_len = rng_next(&rng) % 10 == 0 ? E2E_RESP_ECHO
							       : want;
			r->seed = rng_next(&rng) | 1;
			r->cookie = ((uint64_t)next << 32) | 0xC0C0u;
			r->srv_default = 0;   /* echo when no header fits */
			if (e2e_req_send(c, &dest, r) != 0)
				fail_msg("RPC %u: sendmsg of %zu bytes: %s",
					 next, r->req_len, strerror(errno));
			slots[i].busy = 1;
			slots[i].index = next;
			ids[next++] = r->id;
			req_bytes += r->req_len;
			inflight++;
		}

		if (e2e_recv_wait(c, 0, HOMA_RECVMSG_RESPONSE, &m,
				  STRESS_RECV_WAIT_MS) < 0) {
			e2e_log_stats(c->fd, "client");
			e2e_log_stats(srv->sock->fd, "server");
			format_stats(c->fd, cst, sizeof cst);
			format_stats(srv->sock->fd, sst, sizeof sst);
			fail_msg("after %u of %u RPCs (%u outstanding): receive "
				 "failed for id %" PRIu64 ": errno %d (%s); "
				 "client:%s; server:%s", done, n, inflight,
				 m.id, m.err, strerror(m.err), cst, sst);
		}
		for (unsigned i = 0; i < window; i++)
			if (slots[i].busy && slots[i].req.id == m.id)
				sl = &slots[i];
		if (!sl) {
			int seen = 0;

			for (unsigned i = 0; i < next; i++)
				seen |= ids[i] == m.id;
			fail_msg("response for id %" PRIu64 " (%zd bytes): %s",
				 m.id, m.len, seen ? "already completed "
				 "(duplicate delivery)" : "never sent");
		}
		if (e2e_resp_check(c, &sl->req, &m, why, sizeof why) != 0)
			fail_msg("RPC %u (request %zu bytes, resp_len field "
				 "%u): %s", sl->index, sl->req.req_len,
				 sl->req.resp_len, why);
		resp_bytes += (uint64_t)m.len;
		if (e2e_release(c, &m) != 0)
			fail_msg("too many bpages pending");
		sl->busy = 0;
		inflight--;
		done++;
	}

	/* Nothing more may arrive: a duplicate response would make the
	 * socket readable.  Hand back the pending bpages first. */
	{
		ssize_t r = e2e_recv(c, 0, HOMA_RECVMSG_RESPONSE,
				     MSG_DONTWAIT, &m);

		if (r >= 0 || m.err != EAGAIN)
			fail_msg("extra message after the run: %zd bytes, "
				 "id %" PRIu64 ", errno %d", r, m.id, m.err);
		if (e2e_wait_readable(c->fd, 100))
			fail_msg("client socket readable after the run");
	}
	format_stats(c->fd, cst, sizeof cst);
	format_stats(srv->sock->fd, sst, sizeof sst);
	E2E_ASSERT_SERVER_OK(srv);
	if (atomic_load(&srv->requests) != n)
		fail_msg("server executed %lu requests for %u RPCs",
			 (unsigned long)atomic_load(&srv->requests), n);
	if (e2e_stat(c->fd, "client_rpc_errors") != 0 ||
	    e2e_stat(c->fd, "rpc_timeouts") != 0)
		fail_msg("client counted RPC failures:%s", cst);
	printf("[ LOSS-STRESS ] %s rpcs=%u window=%u seed=%" PRIu64
	       " req_bytes=%" PRIu64 " resp_bytes=%" PRIu64 " ms=%" PRIu64
	       " client:%s server:%s\n", family == AF_INET6 ? "ipv6" : "ipv4",
	       n, window, seed, req_bytes, resp_bytes, e2e_now_ms() - start,
	       cst, sst);
	if (e2e_server_stop(srv) != 0)
		fail_msg("server threads would not stop");
}

/* STRESS_DEFAULT_RPCS (LOSS_STRESS_RPCS) RPCs of mixed sizes over IPv4. */
static void stress__mixed_sizes_ipv4(void **state)
{
	(void)state;
	run_stress(AF_INET,
		   (unsigned)env_num("LOSS_STRESS_RPCS", STRESS_DEFAULT_RPCS,
				     1, 1000000),
		   (unsigned)env_num("LOSS_STRESS_WINDOW",
				     STRESS_DEFAULT_WINDOW, 1,
				     STRESS_MAX_WINDOW),
		   env_num("LOSS_STRESS_SEED", STRESS_DEFAULT_SEED, 0,
			   ULONG_MAX));
}

/* A quarter as many over IPv6 (the seed shifted by one). */
static void stress__mixed_sizes_ipv6(void **state)
{
	unsigned n = (unsigned)env_num("LOSS_STRESS_RPCS", STRESS_DEFAULT_RPCS,
				       1, 1000000);

	(void)state;
	run_stress(AF_INET6, n / 4 ? n / 4 : 1,
		   (unsigned)env_num("LOSS_STRESS_WINDOW",
				     STRESS_DEFAULT_WINDOW, 1,
				     STRESS_MAX_WINDOW),
		   env_num("LOSS_STRESS_SEED", STRESS_DEFAULT_SEED, 0,
			   ULONG_MAX) + 1);
}

static const struct e2e_test tests[] = {
	E2E_TEST(stress__mixed_sizes_ipv4, 120),
	E2E_TEST(stress__mixed_sizes_ipv6, 60),
};

int main(int argc, char **argv)
{
	return e2e_main(argc, argv, "e2e_loss_stress", tests,
			sizeof tests / sizeof tests[0]);
}
