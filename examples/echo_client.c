/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * echo_client - the smallest Homa client: send messages to an echo server,
 * check that each comes back unchanged, print each round-trip time.
 *
 *   usage: echo_client [host [port [count [size]]]]
 *
 * Defaults: 127.0.0.1, port 4000, 10 messages of 100 bytes (size
 * 1..1000000).  Exit status 0 when every echo matched, 1 when a call failed
 * or an echo differed, 2 on bad arguments.
 */
#include <errno.h>
#include <netdb.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>

#include "homa.h"

#define REGION_BYTES ((size_t)HOMA_BPAGE_SIZE * 64)     /* 4 MiB */

/* arg_long - argv[i] as an integer in lo..hi, def when absent; exits 2
 * with a message when it is not one. */
static long arg_long(int argc, char **argv, int i, long lo, long hi, long def)
{
	char *end;
	long v;

	if (i >= argc)
		return def;
	errno = 0;
	v = strtol(argv[i], &end, 10);
	if (errno || end == argv[i] || *end || v < lo || v > hi) {
		fprintf(stderr, "echo_client: '%s' is not a number in "
			"%ld..%ld\nusage: echo_client [host [port [count "
			"[size]]]]\n", argv[i], lo, hi);
		exit(2);
	}
	return v;
}

/* resolve - the address of host:port (IPv4 or IPv6) in *dest.  Returns 0,
 * or -1 after a message. */
static int resolve(const char *host, int port, union sockaddr_in_union *dest)
{
	struct addrinfo hints, *ai;
	int err;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_DGRAM;
	err = getaddrinfo(host, NULL, &hints, &ai);
	if (err != 0) {
		fprintf(stderr, "echo_client: %s: %s\n", host,
			gai_strerror(err));
		return -1;
	}
	memset(dest, 0, sizeof(*dest));
	memcpy(dest, ai->ai_addr, ai->ai_addrlen);
	if (dest->sa.sa_family == AF_INET6)
		dest->in6.sin6_port = htons((uint16_t)port);
	else
		dest->in4.sin_port = htons((uint16_t)port);
	freeaddrinfo(ai);
	return 0;
}

/* open_client - a Homa socket of the given family with a buffer region
 * from mmap in *region.  Returns the descriptor, or -1 after perror. */
static int open_client(int family, void **region)
{
	struct homa_set_buf_args buf;
	int fd = homa_socket(family, SOCK_DGRAM, IPPROTO_HOMA);

	if (fd < 0) {
		perror("homa_socket");
		return -1;
	}
	*region = mmap(NULL, REGION_BYTES, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (*region == MAP_FAILED) {
		perror("mmap");
		homa_close(fd);
		return -1;
	}
	buf.start = *region;
	buf.length = REGION_BYTES;
	if (homa_setsockopt(fd, IPPROTO_HOMA, SO_HOMA_SET_BUF, &buf,
			    sizeof(buf)) < 0) {
		perror("setsockopt SO_HOMA_SET_BUF");
		munmap(*region, REGION_BYTES);
		homa_close(fd);
		return -1;
	}
	return fd;
}

/* same_bytes - true when the len-byte message that args describes (in
 * region, every bpage full but the last) equals want[0..len). */
static int same_bytes(const char *region, const struct homa_recvmsg_args *args,
		      const char *want, size_t len)
{
	uint32_t i;
	size_t chunk;

	for (i = 0; i < args->num_bpages && len > 0; i++) {
		chunk = len > HOMA_BPAGE_SIZE ? HOMA_BPAGE_SIZE : len;
		if (memcmp(region + args->bpage_offsets[i], want, chunk) != 0)
			return 0;
		want += chunk;
		len -= chunk;
	}
	return len == 0;
}

/* fill - message number n: letters that shift along the message and from
 * one message to the next, so a misplaced or stale chunk shows. */
static void fill(char *msg, size_t size, long n)
{
	size_t j;

	for (j = 0; j < size; j++)
		msg[j] = (char)('a' + (j + (size_t)n) % 26);
}

/* now_us - a monotonic clock in microseconds. */
static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/*
 * echo_once - send msg[0..size) as a request to dest and wait for its
 * response (args keeps the previous response's bpages and gives them back).
 * Returns 0 when the echo matched, -1 after a message.
 */
static int echo_once(int fd, char *region, const union sockaddr_in_union *dest,
		     const char *msg, size_t size,
		     struct homa_recvmsg_args *args)
{
	struct msghdr mh;
	uint64_t id = 0;
	ssize_t len;

	if (homa_send(fd, msg, size, dest, &id, 0) < 0) {
		perror("homa_send");
		return -1;
	}
	memset(&mh, 0, sizeof(mh));
	mh.msg_control = args;
	mh.msg_controllen = sizeof(*args);
	do {
		args->id = id;
		args->flags = HOMA_RECVMSG_RESPONSE;
		len = homa_recvmsg(fd, &mh, 0);
	} while (len < 0 && errno == EINTR);
	if (len < 0) {
		perror("homa_recvmsg");
		return -1;
	}
	if ((size_t)len != size || !same_bytes(region, args, msg, size)) {
		fprintf(stderr, "echo_client: echo of RPC %llu differs "
			"(%zd bytes back, %zu sent)\n",
			(unsigned long long)id, len, size);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *host = argc > 1 ? argv[1] : "127.0.0.1";
	union sockaddr_in_union dest;
	struct homa_recvmsg_args args;
	long i, count, size;
	int port, fd, rc = 0;
	void *region;
	char *msg;
	double t0;

	if (argc > 5) {
		fprintf(stderr, "usage: echo_client [host [port [count "
			"[size]]]]\n");
		return 2;
	}
	port = (int)arg_long(argc, argv, 2, 1, HOMA_MIN_DEFAULT_PORT - 1, 4000);
	count = arg_long(argc, argv, 3, 1, 1000000000L, 10);
	size = arg_long(argc, argv, 4, 1, HOMA_MAX_MESSAGE_LENGTH, 100);
	msg = malloc((size_t)size);
	if (msg == NULL) {
		perror("malloc");
		return 1;
	}
	if (resolve(host, port, &dest) < 0) {
		free(msg);
		return 1;
	}
	fd = open_client(dest.sa.sa_family, &region);
	if (fd < 0) {
		free(msg);
		return 1;
	}
	memset(&args, 0, sizeof(args));
	for (i = 0; i < count && rc == 0; i++) {
		fill(msg, (size_t)size, i);
		t0 = now_us();
		rc = echo_once(fd, region, &dest, msg, (size_t)size, &args);
		if (rc == 0)
			printf("echo %ld: %ld bytes, round trip %.1f us\n",
			       i + 1, size, now_us() - t0);
	}
	homa_close(fd);
	munmap(region, REGION_BYTES);
	free(msg);
	return rc < 0 ? 1 : 0;
}
