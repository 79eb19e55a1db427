/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * kapi_echo_client - the client of kapi_echo_server, written for the Linux
 * kernel Homa module's user API with nothing but libc; on libhoma it runs
 * under LD_PRELOAD=libhoma_preload.so.
 *
 *   usage: kapi_echo_client PORT [4|6] [RANDOM_RPCS]
 *
 * Against the echo server on the loopback PORT it checks, byte for byte:
 *   1. one RPC at a time, for lengths from 1 byte to 1,000,000 (the packet
 *      and bpage boundaries among them) and RANDOM_RPCS (default 40) more of
 *      random length: the response has the request's id, cookie, length and
 *      bytes, spread over bpages as the API says (all but the last full and
 *      64 KiB-aligned);
 *   2. 8 RPCs in flight at once, received in any order, told apart by their
 *      completion cookies;
 *   3. private RPCs (HOMA_SENDMSG_PRIVATE) mixed with shared ones: recvmsg
 *      with id 0 returns only the shared responses, never a private one;
 *      while only private responses wait the socket is not readable (poll);
 *      recvmsg with a private id returns that response; asking again for it
 *      is EINVAL.
 * The bpages of each response are handed back in the next recvmsg.  Prints
 * "kapi_echo_client: PASS ..." and exits 0; on a failure prints "FAIL ..."
 * and exits 1.
 */
#include <poll.h>
#include <time.h>

#include "kapi_util.h"

#define WINDOW 8

static struct kapi_sock k;
static struct sockaddr_storage server;
static socklen_t server_len;
static struct homa_recvmsg_args args;   /* keeps the bpages to hand back */
static uint64_t rpcs, bytes;

/* check_bytes - the message of len bytes args describes equals seed's. */
static void check_bytes(size_t len, uint64_t seed, char *expect)
{
	struct iovec iov[HOMA_MAX_BPAGES];
	size_t off = 0;
	int n;

	kapi_fill(expect, len, seed);
	CHECK(args.num_bpages == (len + HOMA_BPAGE_SIZE - 1) /
	      HOMA_BPAGE_SIZE, "%zu bytes in %u bpages", len,
	      args.num_bpages);
	for (uint32_t i = 0; i + 1 < args.num_bpages; i++)
		CHECK(args.bpage_offsets[i] % HOMA_BPAGE_SIZE == 0,
		      "bpage %u at offset %u is not aligned", i,
		      args.bpage_offsets[i]);
	n = kapi_msg_iov(k.region, &args, len, iov);
	for (int i = 0; i < n; i++) {
		CHECK((size_t)args.bpage_offsets[i] + iov[i].iov_len <=
		      k.region_len, "bpage offset %u outside the region",
		      args.bpage_offsets[i]);
		CHECK(memcmp(iov[i].iov_base, expect + off,
			     iov[i].iov_len) == 0,
		      "response of %zu bytes differs in piece %d", len, i);
		off += iov[i].iov_len;
	}
	CHECK(off == len, "pieces cover %zu of %zu bytes", off, len);
}

/* send_one - send a request of len bytes (content from seed = cookie). */
static uint64_t send_one(size_t len, uint64_t cookie, uint32_t flags,
			 char *buf)
{
	uint64_t id;

	kapi_fill(buf, len, cookie);
	id = kapi_send(k.fd, (struct sockaddr *)&server, server_len, buf, len,
		       0, cookie, flags);
	CHECK(id != 0 && (id & 1) == 0, "sendmsg of %zu bytes: id %llu, %s",
	      len, (unsigned long long)id, strerror(errno));
	return id;
}

/* recv_one - receive (id 0: any shared; else that private RPC); returns
 * the length and sets *cookie; checks the id when want_id is not 0. */
static size_t recv_one(uint64_t id, uint64_t want_id, uint64_t *cookie)
{
	struct sockaddr_storage peer;
	socklen_t plen;
	ssize_t n;

	args.id = id;
	n = kapi_recv(k.fd, &args, 0, &peer, &plen);
	CHECK(n > 0, "recvmsg(id %llu): %s", (unsigned long long)id,
	      strerror(errno));
	CHECK((args.id & 1) == 0, "recvmsg returned request %llu",
	      (unsigned long long)args.id);
	CHECK(!want_id || args.id == want_id, "response id %llu, want %llu",
	      (unsigned long long)args.id, (unsigned long long)want_id);
	CHECK(plen == server_len && memcmp(&peer, &server, plen) == 0,
	      "response from another address");
	*cookie = args.completion_cookie;
	rpcs++;
	bytes += (uint64_t)n;
	return (size_t)n;
}

/* one_at_a_time - phase 1. */
static void one_at_a_time(int random_rpcs, char *buf, char *expect)
{
	static const size_t fixed[] = {
		1, 2, 100, 1000, 1399, 1400, 1424, 1425, 2800, 2801, 4096,
		10000, 15000, 15001, 39999, 40000, 40001, 65535, 65536, 65537,
		100000, 131072, 131073, 200000, 500000, 999999, 1000000,
	};
	int total = (int)(sizeof(fixed) / sizeof(fixed[0])) + random_rpcs;

	for (int i = 0; i < total; i++) {
		size_t len = i < (int)(sizeof(fixed) / sizeof(fixed[0]))
			     ? fixed[i]
			     : 1 + (size_t)rand() % HOMA_MAX_MESSAGE_LENGTH;
		uint64_t cookie = 1000 + (uint64_t)i, got;
		uint64_t id = send_one(len, cookie, 0, buf);

		CHECK(recv_one(0, id, &got) == len, "length differs for %zu",
		      len);
		CHECK(got == cookie, "cookie %llu, want %llu",
		      (unsigned long long)got, (unsigned long long)cookie);
		check_bytes(len, cookie, expect);
	}
}

/* in_flight - phase 2: WINDOW requests at once, answers in any order. */
static void in_flight(char *buf, char *expect)
{
	size_t lens[WINDOW];
	bool seen[WINDOW] = { false };

	for (int i = 0; i < WINDOW; i++) {
		lens[i] = i % 2 ? 1 + (size_t)rand() % 3000
				: 1 + (size_t)rand() % HOMA_MAX_MESSAGE_LENGTH;
		send_one(lens[i], 5000 + (uint64_t)i, 0, buf);
	}
	for (int i = 0; i < WINDOW; i++) {
		uint64_t cookie;
		size_t len = recv_one(0, 0, &cookie);
		int j = (int)(cookie - 5000);

		CHECK(j >= 0 && j < WINDOW && !seen[j], "unexpected cookie %llu",
		      (unsigned long long)cookie);
		seen[j] = true;
		CHECK(len == lens[j], "cookie %llu: %zu bytes, want %zu",
		      (unsigned long long)cookie, len, lens[j]);
		check_bytes(len, cookie, expect);
	}
}

/* private_rpcs - phase 3. */
static void private_rpcs(char *buf, char *expect)
{
	uint64_t priv[3], shared[3];
	size_t plen[3] = { 10, 70000, 300 }, slen[3] = { 20, 1500, 90000 };
	struct timespec t0, t;

	for (int i = 0; i < 3; i++) {
		priv[i] = send_one(plen[i], 7000 + (uint64_t)i,
				   HOMA_SENDMSG_PRIVATE, buf);
		shared[i] = send_one(slen[i], 8000 + (uint64_t)i, 0, buf);
	}
	for (int i = 0; i < 3; i++) {
		uint64_t cookie;
		size_t len = recv_one(0, 0, &cookie);
		int j = (int)(cookie - 8000);

		CHECK(j >= 0 && j < 3 && args.id == shared[j],
		      "recvmsg(id 0) returned RPC %llu cookie %llu: not one "
		      "of the shared RPCs", (unsigned long long)args.id,
		      (unsigned long long)cookie);
		CHECK(len == slen[j], "shared response of %zu bytes", len);
		check_bytes(len, cookie, expect);
	}
	/* The private responses arrive meanwhile; a shared receive must
	 * still find nothing, and the socket must not be readable. */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		struct pollfd pf = { .fd = k.fd, .events = POLLIN };

		args.id = 0;
		EXPECT_ERR(kapi_recv(k.fd, &args, MSG_DONTWAIT, NULL, NULL),
			   EAGAIN, "recvmsg(id 0) with only private RPCs");
		CHECK(poll(&pf, 1, 10) == 0, "readable (revents %x) with "
		      "only private responses waiting", pf.revents);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000000000L +
		 (t.tv_nsec - t0.tv_nsec) < 300000000L);
	for (int i = 2; i >= 0; i--) {
		uint64_t cookie;
		size_t len = recv_one(priv[i], priv[i], &cookie);

		CHECK(cookie == 7000 + (uint64_t)i && len == plen[i],
		      "private RPC %d: cookie %llu, %zu bytes", i,
		      (unsigned long long)cookie, len);
		check_bytes(len, cookie, expect);
	}
	args.id = priv[0];
	EXPECT_ERR(kapi_recv(k.fd, &args, MSG_DONTWAIT, NULL, NULL), EINVAL,
		   "recvmsg of a private RPC already received");
}

int main(int argc, char **argv)
{
	int port = kapi_port(argc, argv, 1, 4000);
	int family = argc > 2 && strcmp(argv[2], "6") == 0 ? AF_INET6
							   : AF_INET;
	int random_rpcs = argc > 3 ? atoi(argv[3]) : 40;
	char *buf = malloc(HOMA_MAX_MESSAGE_LENGTH);
	char *expect = malloc(HOMA_MAX_MESSAGE_LENGTH);
	int is_server = -1;
	socklen_t len = sizeof(is_server);

	CHECK(buf && expect, "out of memory");
	srand(12345);
	k = kapi_open(family, 0, 0);
	CHECK(getsockopt(k.fd, IPPROTO_HOMA, SO_HOMA_SERVER, &is_server,
			 &len) == 0 && is_server == 0,
	      "an unbound socket reports SO_HOMA_SERVER %d", is_server);
	server_len = kapi_addr(family, port, &server);
	memset(&args, 0, sizeof(args));

	one_at_a_time(random_rpcs, buf, expect);
	in_flight(buf, expect);
	private_rpcs(buf, expect);

	kapi_close(&k);
	printf("kapi_echo_client: PASS %llu RPCs, %llu bytes echoed (IPv%c)\n",
	       (unsigned long long)rpcs, (unsigned long long)bytes,
	       family == AF_INET6 ? '6' : '4');
	free(buf);
	free(expect);
	return 0;
}
