/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_e2e_pool.c - end-to-end behaviour of the receive buffer pool: small
 * regions receiving messages that do not all fit at once (responses and
 * requests), an application slow to hand bpages back, messages held while
 * others arrive, and the bpage layout of large and exact-bpage messages.
 */
#include "e2e_util.h"

#include <stdlib.h>

/* A one-thread IPv4 server with a region of @region_len bytes answering
 * @default_resp bytes. */
static struct e2e_server *start_server(size_t region_len, size_t default_resp)
{
	return e2e_must_server(AF_INET, region_len, default_resp, 1);
}

/* An IPv4 client socket with a region of @region_len bytes. */
static struct e2e_sock *client(size_t region_len)
{
	return e2e_must_socket(AF_INET, region_len);
}

/*
 * Sends @n requests from @c to @srv (request @req_len bytes, response sizes
 * from @resp[i % nresp], service delay @delay_ms), all before reading; then
 * receives every response (any order), checks it, and, after holding it
 * @hold_ms, hands its bpages back with the next receive.  Fails the test on
 * any error.
 */
static void outstanding_then_read(struct e2e_sock *c, struct e2e_server *srv,
				  int n, size_t req_len, const uint32_t *resp,
				  int nresp, unsigned delay_ms,
				  unsigned hold_ms, uint64_t k)
{
	union sockaddr_in_union dest = e2e_server_addr(srv);
	struct e2e_req *r = e2e_alloc((size_t)n * sizeof *r);
	char why[256];

	assert_non_null(r);
	for (int i = 0; i < n; i++) {
		r[i].seed = e2e_seed(k + (uint64_t)i);
		r[i].cookie = k * 1000 + (uint64_t)i;
		r[i].req_len = req_len;
		r[i].resp_len = resp[i % nresp];
		r[i].delay_ms = delay_ms;
		r[i].srv_default = srv->default_resp;
		if (e2e_req_send(c, &dest, &r[i]) != 0)
			fail_msg("send %d: %s", i, strerror(errno));
	}
	for (int got = 0; got < n; got++) {
		struct e2e_msg m;
		int hit = -1;

		e2e_recv_wait(c, 0, HOMA_RECVMSG_RESPONSE, &m, 5000);
		if (m.len < 0)
			fail_msg("response %d of %d: errno %d (%s), id %llu",
				 got + 1, n, m.err, strerror(m.err),
				 (unsigned long long)m.id);
		for (int i = 0; i < n; i++)
			if (r[i].id == m.id)
				hit = i;
		if (hit < 0 || r[hit].done)
			fail_msg("unexpected response id %llu",
				 (unsigned long long)m.id);
		if (e2e_resp_check(c, &r[hit], &m, why, sizeof why) != 0)
			fail_msg("RPC %d: %s", hit, why);
		r[hit].done = 1;
		if (hold_ms)
			e2e_sleep_ms(hold_ms);
		e2e_release(c, &m);
	}
}

/* A 4-bpage (256 KiB) client region and three 200,000-byte responses (each
 * needs all 4 bpages): all arrive intact as the bpages are handed back. */
static void pool__four_bpages_three_200k_responses(void **state)
{
	static const uint32_t resp[] = { 200000 };
	struct e2e_server *srv = start_server(E2E_REGION_DEFAULT, 0);
	struct e2e_sock *c = client(4 * HOMA_BPAGE_SIZE);

	(void)state;
	outstanding_then_read(c, srv, 3, 100, resp, 1, 0, 0, 10);
	E2E_ASSERT_SERVER_OK(srv);
}

/* Three 200,000-byte responses into a 5-bpage region: each message still
 * needs 4 of the 5 bpages, so they arrive one at a time. */
static void pool__five_bpages_three_200k_responses(void **state)
{
	static const uint32_t resp[] = { 200000 };
	struct e2e_server *srv = start_server(E2E_REGION_DEFAULT, 0);
	struct e2e_sock *c = client(5 * HOMA_BPAGE_SIZE);

	(void)state;
	outstanding_then_read(c, srv, 3, 100, resp, 1, 0, 0, 15);
	E2E_ASSERT_SERVER_OK(srv);
}

/* The 5-bpage case while the application keeps each message 250 ms (longer
 * than the 100 ms timeout) before handing its bpages back: the RPCs waiting
 * for buffer space do not time out. */
static void pool__slow_application_returns_bpages_late(void **state)
{
	static const uint32_t resp[] = { 200000 };
	struct e2e_server *srv = start_server(E2E_REGION_DEFAULT, 0);
	struct e2e_sock *c = client(5 * HOMA_BPAGE_SIZE);

	(void)state;
	outstanding_then_read(c, srv, 3, 100, resp, 1, 0, 250, 20);
	E2E_ASSERT_SERVER_OK(srv);
}

/* Responses of mixed sizes, 16 outstanding, into a 4-bpage region. */
static void pool__four_bpages_mixed_responses(void **state)
{
	static const uint32_t resp[] = { 1000, 70000, 130000, 200000, 5000,
					 65536, 131072, 40001 };
	struct e2e_server *srv = start_server(E2E_REGION_DEFAULT, 0);
	struct e2e_sock *c = client(4 * HOMA_BPAGE_SIZE);

	(void)state;
	outstanding_then_read(c, srv, 16, 2000, resp, 8, 0, 0, 30);
	E2E_ASSERT_SERVER_OK(srv);
}

/* A server with a 4-bpage region receives three 200,000-byte requests sent
 * at once: all are served, the server checking each byte. */
static void pool__four_bpages_three_200k_requests(void **state)
{
	static const uint32_t resp[] = { 16 };
	struct e2e_server *srv = start_server(4 * HOMA_BPAGE_SIZE, 16);
	struct e2e_sock *c = client(E2E_REGION_DEFAULT);

	(void)state;
	outstanding_then_read(c, srv, 3, 200000, resp, 1, 0, 0, 40);
	E2E_ASSERT_SERVER_OK(srv);
	assert_int_equal(atomic_load(&srv->requests), 3);
}

/* The same with each request from a different client socket. */
static void pool__four_bpages_requests_from_three_clients(void **state)
{
	static const uint32_t resp[] = { 16 };
	struct e2e_server *srv = start_server(4 * HOMA_BPAGE_SIZE, 16);
	union sockaddr_in_union dest = e2e_server_addr(srv);
	struct e2e_sock *c[3];
	struct e2e_req r[3];
	char why[256];

	(void)state;
	memset(r, 0, sizeof r);
	for (int i = 0; i < 3; i++) {
		c[i] = client(E2E_REGION_DEFAULT);
		r[i].seed = e2e_seed(50 + (uint64_t)i);
		r[i].cookie = (uint64_t)i + 1;
		r[i].req_len = 200000;
		r[i].resp_len = resp[0];
		r[i].srv_default = 16;
		assert_int_equal(e2e_req_send(c[i], &dest, &r[i]), 0);
	}
	for (int i = 0; i < 3; i++) {
		struct e2e_msg m;

		if (e2e_recv_wait(c[i], r[i].id, HOMA_RECVMSG_RESPONSE, &m,
				  5000) < 0 && m.err == ETIME) {
			e2e_log_stats(srv->sock->fd, "server");
			fail_msg("client %d: no response within 5 s", i);
		}
		if (e2e_resp_check(c[i], &r[i], &m, why, sizeof why) != 0)
			fail_msg("client %d: %s", i, why);
		e2e_release(c[i], &m);
	}
	E2E_ASSERT_SERVER_OK(srv);
}

#define HELD 12

/* Messages the application holds are not overwritten while others arrive
 * in the same 4-bpage region; after all are handed back the region serves
 * a second round. */
static void pool__held_messages_stay_intact(void **state)
{
	struct e2e_server *srv = start_server(E2E_REGION_DEFAULT, 0);
	struct e2e_sock *c = client(4 * HOMA_BPAGE_SIZE);
	union sockaddr_in_union dest = e2e_server_addr(srv);
	struct e2e_req r[HELD];
	struct e2e_msg *m = e2e_alloc(HELD * sizeof *m);
	char why[256];

	(void)state;
	assert_non_null(m);
	for (int round = 0; round < 2; round++) {
		memset(r, 0, sizeof r);
		for (int i = 0; i < HELD; i++) {
			r[i].seed = e2e_seed(60 + (uint64_t)(round * HELD + i));
			r[i].cookie = (uint64_t)i;
			r[i].req_len = 20;
			r[i].resp_len = 10000;
			assert_int_equal(e2e_req_send(c, &dest, &r[i]), 0);
			e2e_recv(c, r[i].id, HOMA_RECVMSG_RESPONSE, 0, &m[i]);
			if (e2e_resp_check(c, &r[i], &m[i], why, sizeof why))
				fail_msg("round %d RPC %d: %s", round, i, why);
		}
		/* All still intact while held together. */
		for (int i = 0; i < HELD; i++)
			if (e2e_resp_check(c, &r[i], &m[i], why, sizeof why))
				fail_msg("round %d, held message %d changed: "
					 "%s", round, i, why);
		for (int i = 0; i < HELD; i++)
			assert_int_equal(e2e_release(c, &m[i]), 0);
	}
	E2E_ASSERT_SERVER_OK(srv);
}

/* A 1,000,000-byte response fills a 16-bpage (1 MiB) region exactly:
 * 16 entries, 15 whole aligned distinct bpages; three times in a row. */
static void pool__1mb_message_in_16_bpages(void **state)
{
	struct e2e_server *srv = start_server(E2E_REGION_DEFAULT, 0);
	struct e2e_sock *c = client(16 * HOMA_BPAGE_SIZE);
	union sockaddr_in_union dest = e2e_server_addr(srv);
	char why[256];

	(void)state;
	for (int i = 0; i < 3; i++) {
		struct e2e_req r = { .seed = e2e_seed(70 + (uint64_t)i),
				     .cookie = 7, .req_len = 16,
				     .resp_len = HOMA_MAX_MESSAGE_LENGTH };
		struct e2e_msg m;

		assert_int_equal(e2e_req_send(c, &dest, &r), 0);
		e2e_recv(c, r.id, HOMA_RECVMSG_RESPONSE, 0, &m);
		E2E_ASSERT_OK(e2e_resp_check(c, &r, &m, why, sizeof why), why);
		assert_int_equal(m.num_bpages, HOMA_MAX_BPAGES);
		for (int a = 0; a < HOMA_MAX_BPAGES - 1; a++)
			for (int b = a + 1; b < HOMA_MAX_BPAGES; b++)
				if (m.offs[a] / HOMA_BPAGE_SIZE ==
				    m.offs[b] / HOMA_BPAGE_SIZE)
					fail_msg("entries %d and %d share a "
						 "bpage", a, b);
		e2e_release(c, &m);
	}
	E2E_ASSERT_SERVER_OK(srv);
}

/* Messages of exactly one and two bpages use whole aligned bpages, in the
 * smallest region allowed (2 bpages), repeatedly; then messages with a
 * fragment.  (Two whole bpages come first: per the pool seed, a bpage kept
 * for fragments is not free for whole-bpage allocations.) */
static void pool__exact_bpage_sizes_in_2_bpages(void **state)
{
	static const uint32_t sizes[] = { 65536, 131072, 65536, 131072,
					  65535, 65537, 100000 };
	struct e2e_server *srv = start_server(E2E_REGION_DEFAULT, 0);
	struct e2e_sock *c = client(2 * HOMA_BPAGE_SIZE);
	union sockaddr_in_union dest = e2e_server_addr(srv);
	char why[256];

	(void)state;
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		struct e2e_req r = { .seed = e2e_seed(80 + i), .cookie = 8,
				     .req_len = 16, .resp_len = sizes[i] };
		struct e2e_msg m;

		assert_int_equal(e2e_req_send(c, &dest, &r), 0);
		e2e_recv(c, r.id, HOMA_RECVMSG_RESPONSE, 0, &m);
		if (e2e_resp_check(c, &r, &m, why, sizeof why) != 0)
			fail_msg("%u bytes: %s", sizes[i], why);
		if (sizes[i] % HOMA_BPAGE_SIZE == 0)
			for (uint32_t j = 0; j < m.num_bpages; j++)
				assert_int_equal(m.offs[j] % HOMA_BPAGE_SIZE,
						 0);
		e2e_release(c, &m);
	}
	E2E_ASSERT_SERVER_OK(srv);
}

/* Requests of 1,000,000 bytes into a server whose region is exactly 16
 * bpages, two outstanding: the second waits for the first's bpages. */
static void pool__server_1mb_requests_in_16_bpages(void **state)
{
	static const uint32_t resp[] = { 100 };
	struct e2e_server *srv = start_server(16 * HOMA_BPAGE_SIZE, 100);
	struct e2e_sock *c = client(E2E_REGION_DEFAULT);

	(void)state;
	outstanding_then_read(c, srv, 2, HOMA_MAX_MESSAGE_LENGTH, resp, 1, 0,
			      0, 90);
	E2E_ASSERT_SERVER_OK(srv);
}

static const struct e2e_test tests[] = {
	E2E_TEST(pool__four_bpages_three_200k_responses, 15),
	E2E_TEST(pool__five_bpages_three_200k_responses, 15),
	E2E_TEST(pool__slow_application_returns_bpages_late, 15),
	E2E_TEST(pool__four_bpages_mixed_responses, 20),
	E2E_TEST(pool__four_bpages_three_200k_requests, 15),
	E2E_TEST(pool__four_bpages_requests_from_three_clients, 15),
	E2E_TEST(pool__held_messages_stay_intact, 15),
	E2E_TEST(pool__1mb_message_in_16_bpages, 20),
	E2E_TEST(pool__exact_bpage_sizes_in_2_bpages, 15),
	E2E_TEST(pool__server_1mb_requests_in_16_bpages, 20),
};

int main(int argc, char **argv)
{
	return e2e_main(argc, argv, "e2e_pool", tests,
			sizeof tests / sizeof tests[0]);
}
