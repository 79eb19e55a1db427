/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_e2e_region.c - memory the application takes away from a live
 * socket: a buffer region unmapped (then the socket closed, the order of
 * grpc_homa's clean-up) or made read-only while a response is on its way.
 * The RPC fails with EFAULT, as with kernel Homa, and the process lives
 * on; once the memory is writable again the socket works as before.
 * (Not among scripts/valgrind.sh's programs: memcheck reports the caught
 * writes into the unmapped region as invalid.)
 */
#include "e2e_util.h"

#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* Under ThreadSanitizer libhoma copies with plain memcpy
 * (src/sock/homa_sockcopy.c says why): these tests cannot run. */
#if defined(__SANITIZE_THREAD__)
#define SKIP_UNDER_TSAN() skip()
#else
#define SKIP_UNDER_TSAN() do { } while (0)
#endif

/* A client socket with its own region, and an echo server. */
struct setup {
	struct e2e_server *srv;
	struct e2e_sock *c;
	union sockaddr_in_union dest;
};

static void setup_open(struct setup *s)
{
	s->srv = e2e_must_server(AF_INET, E2E_REGION_DEFAULT, 0, 1);
	s->c = e2e_must_socket(AF_INET, E2E_REGION_DEFAULT);
	s->dest = e2e_server_addr(s->srv);
}

/* send_slow - a request for a response of resp_len bytes that the server
 * sends after delay_ms; returns its id. */
static uint64_t send_slow(struct setup *s, uint32_t resp_len,
			  uint32_t delay_ms, uint64_t k)
{
	uint8_t req[64];
	uint64_t id = 0;

	e2e_fill(req, sizeof req, e2e_seed(k), resp_len, delay_ms);
	if (homa_send(s->c->fd, req, sizeof req, &s->dest, &id, k) != 0)
		fail_msg("homa_send: %s", strerror(errno));
	return id;
}

/* recv_errno - wait for the response of id on fd; returns the errno of
 * the failed homa_recvmsg (0 when it succeeded). */
static int recv_errno(int fd, uint64_t id)
{
	struct homa_recvmsg_args a;
	struct msghdr h;
	ssize_t r;

	memset(&a, 0, sizeof a);
	memset(&h, 0, sizeof h);
	a.id = id;
	a.flags = HOMA_RECVMSG_RESPONSE;
	h.msg_control = &a;
	h.msg_controllen = sizeof a;
	r = homa_recvmsg(fd, &h, 0);
	if (r >= 0)
		return 0;
	if (a.id != id)
		fail_msg("error for id %llu, want %llu",
			 (unsigned long long)a.id, (unsigned long long)id);
	return errno;
}

/* still_works - an RPC of a 1 MB response on c completes intact. */
static void still_works(struct setup *s, uint64_t k)
{
	char why[256];

	if (e2e_rpc(s->c, &s->dest, 2000, 1000000, 0, e2e_seed(k), 0, why,
		    sizeof why) != 0)
		fail_msg("the socket no longer works: %s", why);
}

/* The client unmaps its region while a 1 MB response is on its way, then
 * closes the socket (grpc_homa's clean-up order): the response's RPC
 * fails with EFAULT and the process lives on; a new socket works. */
static void region__unmapped_then_closed(void **state)
{
	struct setup s;
	uint64_t id;
	int e;

	(void)state;
	SKIP_UNDER_TSAN();
	setup_open(&s);
	id = send_slow(&s, 1000000, 100, 1);
	e2e_sleep_ms(20);
	if (munmap(s.c->region, s.c->region_len) != 0)
		fail_msg("munmap: %s", strerror(errno));
	s.c->region = NULL;
	e = recv_errno(s.c->fd, id);
	assert_int_equal(e, EFAULT);
	assert_true(e2e_stat(s.c->fd, "copy_faults") >= 1);
	assert_int_equal(e2e_sock_close(s.c), 0);
	s.c = e2e_must_socket(AF_INET, E2E_REGION_DEFAULT);
	still_works(&s, 2);
}

/* The region is unmapped while responses are on their way and the socket
 * is closed at once, nobody reading: no crash (the progress thread copies
 * into the region). */
static void region__unmapped_then_closed_unread(void **state)
{
	struct setup s;

	(void)state;
	SKIP_UNDER_TSAN();
	setup_open(&s);
	for (int k = 0; k < 4; k++)
		send_slow(&s, 1000000, 0, 10 + k);
	e2e_sleep_ms(2);
	munmap(s.c->region, s.c->region_len);
	s.c->region = NULL;
	e2e_sleep_ms(50);
	assert_int_equal(e2e_sock_close(s.c), 0);
	s.c = e2e_must_socket(AF_INET, E2E_REGION_DEFAULT);
	still_works(&s, 20);
}

/* The region is made read-only while a response is on its way: EFAULT;
 * writable again, the same socket works. */
static void region__read_only(void **state)
{
	struct setup s;
	uint64_t id;

	(void)state;
	SKIP_UNDER_TSAN();
	setup_open(&s);
	still_works(&s, 30);
	id = send_slow(&s, 300000, 100, 31);
	e2e_sleep_ms(20);
	if (mprotect(s.c->region, s.c->region_len, PROT_READ) != 0)
		fail_msg("mprotect: %s", strerror(errno));
	assert_int_equal(recv_errno(s.c->fd, id), EFAULT);
	if (mprotect(s.c->region, s.c->region_len,
		     PROT_READ | PROT_WRITE) != 0)
		fail_msg("mprotect: %s", strerror(errno));
	still_works(&s, 32);
}

static const struct e2e_test tests[] = {
	E2E_TEST(region__unmapped_then_closed, 20),
	E2E_TEST(region__unmapped_then_closed_unread, 20),
	E2E_TEST(region__read_only, 20),
};

int main(int argc, char **argv)
{
	return e2e_main(argc, argv, "e2e_region", tests,
			sizeof tests / sizeof tests[0]);
}
