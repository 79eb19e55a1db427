/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * kapi_echo_server - an echo server written for the Linux kernel Homa
 * module's user API (tests/preload/homa_kernel_uapi.h), with nothing
 * but libc: it runs unchanged on libhoma under
 *     LD_PRELOAD=libhoma_preload.so kapi_echo_server PORT [4|6 [DELAY_MS]]
 *
 * It binds PORT (1..32767) on the loopback of IPv4 (default) or IPv6,
 * checks that the socket reports SO_HOMA_SERVER = 1, prints
 * "kapi_echo_server: serving port PORT" and answers every request with its
 * own bytes, sent straight from the bpages the request arrived in; those
 * bpages go back to the socket in the next recvmsg.  With DELAY_MS
 * (0..10000, default 0) it waits that long before each response: a slow
 * server, whose clients ask after their responses (RESEND) and are told
 * to wait (BUSY); it then prints "kapi_echo_server: request ID of N
 * bytes" as each request arrives.  It serves until killed; SIGTERM or
 * SIGINT end it cleanly: it closes its socket, prints "kapi_echo_server:
 * served N requests" and exits 0 (a request it holds gets no response).
 * Exit status 1 when a call fails (the message says which), 2 on bad
 * arguments.
 */
#include <poll.h>
#include <signal.h>
#include <time.h>

#include "kapi_util.h"

static volatile sig_atomic_t stopping;

/* on_stop - SIGTERM/SIGINT: the loop ends at its next check. */
static void on_stop(int sig)
{
	(void)sig;
	stopping = 1;
}

int main(int argc, char **argv)
{
	int port = kapi_port(argc, argv, 1, 4000);
	int family = argc > 2 && strcmp(argv[2], "6") == 0 ? AF_INET6
							   : AF_INET;
	long delay_ms = 0;
	char *end = NULL;
	struct homa_recvmsg_args args;
	struct kapi_sock k;
	int server = 0;
	socklen_t len = sizeof(server);
	uint64_t served = 0;

	if (argc > 3) {
		errno = 0;
		delay_ms = strtol(argv[3], &end, 10);
	}
	if (port >= HOMA_MIN_DEFAULT_PORT || argc > 4 ||
	    (argc > 3 && (errno || end == argv[3] || *end || delay_ms < 0 ||
			  delay_ms > 10000))) {
		fprintf(stderr, "usage: kapi_echo_server PORT [4|6 [DELAY_MS]]"
			"  (PORT 1..32767, DELAY_MS 0..10000)\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	struct sigaction sa = { .sa_handler = on_stop };  /* no SA_RESTART */

	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	k = kapi_open(family, port, 0);
	CHECK(getsockopt(k.fd, IPPROTO_HOMA, SO_HOMA_SERVER, &server,
			 &len) == 0 && len == sizeof(server) && server == 1,
	      "getsockopt SO_HOMA_SERVER after bind: %d (%s)", server,
	      strerror(errno));
	printf("kapi_echo_server: serving port %d\n", port);
	fflush(stdout);

	memset(&args, 0, sizeof(args));
	for (;;) {
		struct iovec iov[HOMA_MAX_BPAGES];
		struct sockaddr_storage peer;
		socklen_t plen;
		ssize_t n;
		int pieces;

		struct pollfd pf = { .fd = k.fd, .events = POLLIN };

		/* Waits in poll, which a signal interrupts, and checks the
		 * flag at least every 200 ms. */
		if (poll(&pf, 1, 200) <= 0 && !stopping)
			continue;
		if (stopping)
			break;
		args.id = 0;            /* any request */
		n = kapi_recv(k.fd, &args, MSG_DONTWAIT, &peer, &plen);
		if (n < 0 && errno == EAGAIN)
			continue;
		CHECK(n >= 0, "recvmsg: %s", strerror(errno));
		CHECK((args.id & 1) == 1, "a response (id %llu) on a server",
		      (unsigned long long)args.id);
		CHECK(plen == (family == AF_INET6
			       ? sizeof(struct sockaddr_in6)
			       : sizeof(struct sockaddr_in)) &&
		      peer.ss_family == family,
		      "recvmsg: peer address of length %u family %d",
		      (unsigned)plen, peer.ss_family);
		if (delay_ms > 0) {
			printf("kapi_echo_server: request %llu of %zd bytes\n",
			       (unsigned long long)args.id, n);
			fflush(stdout);
		}
		if (delay_ms > 0) {
			struct timespec ts = { .tv_sec = delay_ms / 1000,
				.tv_nsec = (delay_ms % 1000) * 1000000L };

			while (!stopping && nanosleep(&ts, &ts) != 0 &&
			       errno == EINTR)
				;
			if (stopping)
				break;
		}
		pieces = kapi_msg_iov(k.region, &args, (size_t)n, iov);
		CHECK(kapi_sendv(k.fd, (struct sockaddr *)&peer, plen, iov,
				 pieces, args.id, 0, 0) == args.id,
		      "sendmsg (response to %llu): %s",
		      (unsigned long long)args.id, strerror(errno));
		/* args still lists the request's bpages: the next recvmsg
		 * hands them back. */
		served++;
	}
	kapi_close(&k);
	printf("kapi_echo_server: served %llu requests\n",
	       (unsigned long long)served);
	return 0;
}
