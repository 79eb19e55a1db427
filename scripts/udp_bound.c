// SPDX-License-Identifier: BSD-2-Clause
/*
 * udp_bound - how fast plain UDP moves 1 MB messages between two threads
 * on loopback, one message at a time, as Homa does with one RPC in flight:
 * each message goes as datagrams of up to 64 KB sent with one sendmmsg, a
 * receiving thread that polls reads them and answers with 100 bytes when
 * it has all.  The bound for any UDP-based transport of this machine, with
 * or without the copies such a transport adds:
 *
 *   --keep-copy   the sender first copies the message into a buffer of its
 *                 own (the copy a transport keeps for retransmission) and
 *                 sends from there
 *   --copy-after  with --keep-copy: send from the caller's buffer first
 *                 and make the kept copy after (while the receiver reads
 *                 the last datagrams and answers)
 *   --place-copy  the receiver copies each datagram's payload on into a
 *                 message buffer (a copy that placement saves)
 *   --seconds S   measured time (default 3)
 *
 * Build and run (no library needed):
 *   cc -O2 -pthread -o udp-bound scripts/udp_bound.c && ./udp-bound
 * Prints one line: the options, Gbit/s of message bytes, us per message.
 * Exit status 0, 1 when something failed (a datagram lost: no answer
 * within 1 s), 2 for bad options.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MSG_BYTES 1000000
#define DGRAM_BYTES 65000        /* datagram, as Homa's loopback packets */
#define HDR_BYTES 56             /* a Homa DATA header's room */
#define MAX_DGRAMS 32

struct bound {
	int srv, cli;                    /* the receiver's and sender's */
	struct sockaddr_in srv_addr, cli_addr;
	bool place_copy;
};

/* now_s - the monotonic clock in seconds. */
static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* udp_socket - a UDP socket bound to 127.0.0.1 (any port) with 8 MB
 * buffers, its address in *addr; exits on failure. */
static int udp_socket(struct sockaddr_in *addr)
{
	int fd = socket(AF_INET, SOCK_DGRAM, 0), big = 8 << 20;
	socklen_t len = sizeof(*addr);

	if (fd < 0) {
		perror("udp-bound: socket");
		exit(1);
	}
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big));
	(void)setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &big, sizeof(big));
	memset(addr, 0, sizeof(*addr));
	addr->sin_family = AF_INET;
	addr->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)addr, sizeof(*addr)) < 0 ||
	    getsockname(fd, (struct sockaddr *)addr, &len) < 0) {
		perror("udp-bound: bind");
		exit(1);
	}
	return fd;
}

/* receiver - read datagrams (polling), optionally copy their payload into
 * a message buffer, answer each whole message with 100 bytes; runs until
 * the process exits. */
static void *receiver(void *arg)
{
	struct bound *b = arg;
	static char buf[65536], msg[MSG_BYTES + 65536];
	size_t got = 0;

	for (;;) {
		ssize_t n = recv(b->srv, buf, sizeof(buf), MSG_DONTWAIT);

		if (n < 0) {
			sched_yield();
			continue;
		}
		if (n <= HDR_BYTES)
			continue;
		if (b->place_copy)
			memcpy(msg + got, buf + HDR_BYTES, (size_t)n - HDR_BYTES);
		got += (size_t)n - HDR_BYTES;
		if (got >= MSG_BYTES) {
			got = 0;
			(void)sendto(b->srv, buf, 100, 0,
				     (struct sockaddr *)&b->cli_addr,
				     sizeof(b->cli_addr));
		}
	}
	return NULL;
}

/* send_message - one message from src as datagrams of DGRAM_BYTES (a
 * header's room, then payload), all in one sendmmsg. */
static void send_message(struct bound *b, char *src)
{
	struct mmsghdr mm[MAX_DGRAMS];
	struct iovec iov[MAX_DGRAMS];
	size_t off = 0, pay = DGRAM_BYTES - HDR_BYTES;
	int k = 0;

	memset(mm, 0, sizeof(mm));
	for (; off < MSG_BYTES; off += pay, k++) {
		size_t len = MSG_BYTES - off < pay ? MSG_BYTES - off : pay;

		/* The header room is the bytes before the payload. */
		iov[k].iov_base = src + off;
		iov[k].iov_len = len + HDR_BYTES;
		mm[k].msg_hdr.msg_iov = &iov[k];
		mm[k].msg_hdr.msg_iovlen = 1;
		mm[k].msg_hdr.msg_name = &b->srv_addr;
		mm[k].msg_hdr.msg_namelen = sizeof(b->srv_addr);
	}
	for (int sent = 0; sent < k;) {
		int r = sendmmsg(b->cli, mm + sent, (unsigned)(k - sent), 0);

		if (r < 0 && errno != EINTR) {
			perror("udp-bound: sendmmsg");
			exit(1);
		}
		sent += r > 0 ? r : 0;
	}
}

int main(int argc, char **argv)
{
	static struct bound b;
	bool keep_copy = false, copy_after = false;
	double seconds = 3, t0, dt;
	char *user, *kept, answer[200];
	pthread_t t;
	long n = 0;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--keep-copy") == 0) {
			keep_copy = true;
		} else if (strcmp(argv[i], "--copy-after") == 0) {
			copy_after = true;
		} else if (strcmp(argv[i], "--place-copy") == 0) {
			b.place_copy = true;
		} else if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) {
			seconds = atof(argv[++i]);
		} else {
			fprintf(stderr, "usage: udp-bound [--keep-copy "
				"[--copy-after]] [--place-copy] "
				"[--seconds S]\n");
			return strcmp(argv[i], "--help") == 0 ? 0 : 2;
		}
	}
	if (!(seconds > 0 && seconds <= 600)) {
		fprintf(stderr, "udp-bound: --seconds takes 0 < S <= 600\n");
		return 2;
	}
	b.srv = udp_socket(&b.srv_addr);
	b.cli = udp_socket(&b.cli_addr);
	user = malloc(MSG_BYTES + DGRAM_BYTES);
	kept = malloc(MSG_BYTES + DGRAM_BYTES);
	if (!user || !kept) {
		fprintf(stderr, "udp-bound: out of memory\n");
		free(user);
		free(kept);
		return 1;
	}
	memset(user, 1, MSG_BYTES + DGRAM_BYTES);
	memset(kept, 1, MSG_BYTES + DGRAM_BYTES);
	if (pthread_create(&t, NULL, receiver, &b) != 0) {
		fprintf(stderr, "udp-bound: no thread\n");
		free(user);
		free(kept);
		return 1;
	}
	t0 = now_s();
	do {
		if (keep_copy && !copy_after)
			memcpy(kept, user, MSG_BYTES);
		send_message(&b, keep_copy && !copy_after ? kept : user);
		if (keep_copy && copy_after)
			memcpy(kept, user, MSG_BYTES);
		for (double sent = now_s();
		     recv(b.cli, answer, sizeof(answer), MSG_DONTWAIT) <= 0;
		     sched_yield()) {
			if (now_s() - sent > 1) {
				fprintf(stderr, "udp-bound: no answer in 1 s "
					"(a datagram was dropped)\n");
				free(user);
				free(kept);
				return 1;
			}
		}
		n++;
	} while (now_s() - t0 < seconds);
	dt = now_s() - t0;
	printf("udp-bound%s%s%s: %.1f Gbit/s, %.1f us per 1 MB message "
	       "(%ld messages)\n", keep_copy ? " --keep-copy" : "",
	       keep_copy && copy_after ? " --copy-after" : "",
	       b.place_copy ? " --place-copy" : "",
	       (double)n * MSG_BYTES * 8 / dt / 1e9, dt / (double)n * 1e6, n);
	free(user);
	free(kept);
	return 0;
}
