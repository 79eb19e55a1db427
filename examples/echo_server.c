/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * echo_server - the smallest Homa server: answer every request with its own
 * bytes.
 *
 *   usage: echo_server [port]
 *
 * port: the Homa port to serve (1..32767, default 4000).  It serves until
 * killed (Ctrl-C).  Exit status 1 when a call fails (perror says which), 2
 * on a bad argument.
 *
 * Incoming messages land in a buffer region the server gives the socket
 * (SO_HOMA_SET_BUF), in 64 KiB "bpages".  The reply is sent straight from
 * those bpages (homa_replyv), and the next homa_recvmsg hands them back.
 *
 * Closing a Homa socket discards responses it is still sending, and the API
 * does not say when a client has its response: that is why this server has
 * no "exit after N requests" option.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "homa.h"

#define REGION_BYTES ((size_t)HOMA_BPAGE_SIZE * 256)    /* 16 MiB */

/* parse_port - the port argument (1..32767), 4000 when absent; exits 2
 * with a message when it is not one. */
static int parse_port(int argc, char **argv)
{
	char *end;
	long v;

	if (argc < 2)
		return 4000;
	errno = 0;
	v = strtol(argv[1], &end, 10);
	if (argc > 2 || errno || end == argv[1] || *end || v < 1 ||
	    v >= HOMA_MIN_DEFAULT_PORT) {
		fprintf(stderr, "usage: echo_server [port]   (port: 1..%d)\n",
			HOMA_MIN_DEFAULT_PORT - 1);
		exit(2);
	}
	return (int)v;
}

/* open_server - a Homa socket bound to port on every IPv4 address, with a
 * buffer region from mmap stored in *region.  Returns the descriptor, or
 * -1 after perror. */
static int open_server(int port, void **region)
{
	struct sockaddr_in addr;
	struct homa_set_buf_args buf;
	int fd = homa_socket(AF_INET, SOCK_DGRAM, IPPROTO_HOMA);

	if (fd < 0) {
		perror("homa_socket");
		return -1;
	}
	memset(&addr, 0, sizeof(addr));
	addr.sin_family = AF_INET;
	addr.sin_port = htons((uint16_t)port);
	addr.sin_addr.s_addr = htonl(INADDR_ANY);
	if (homa_bind(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		perror("homa_bind");
		homa_close(fd);
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

/* message_iov - iovecs over the len-byte message that args describes:
 * every bpage is full except the last.  Returns their count. */
static int message_iov(char *region, const struct homa_recvmsg_args *args,
		       size_t len, struct iovec *iov)
{
	uint32_t i;

	for (i = 0; i < args->num_bpages; i++) {
		iov[i].iov_base = region + args->bpage_offsets[i];
		iov[i].iov_len = len > HOMA_BPAGE_SIZE ? HOMA_BPAGE_SIZE : len;
		len -= iov[i].iov_len;
	}
	return (int)args->num_bpages;
}

/* serve - answer requests on fd; returns only when a call fails (after
 * perror). */
static void serve(int fd, char *region)
{
	struct homa_recvmsg_args args;
	struct msghdr msg;
	struct iovec iov[HOMA_MAX_BPAGES];
	ssize_t len;

	memset(&args, 0, sizeof(args));
	memset(&msg, 0, sizeof(msg));
	msg.msg_control = &args;
	msg.msg_controllen = sizeof(args);
	for (;;) {
		/* num_bpages/bpage_offsets still name the previous request's
		 * bpages: this call gives them back. */
		args.id = 0;
		args.flags = HOMA_RECVMSG_REQUEST;
		len = homa_recvmsg(fd, &msg, 0);
		if (len < 0) {
			if (errno == EINTR)
				continue;
			perror("homa_recvmsg");
			return;
		}
		if (homa_replyv(fd, iov, message_iov(region, &args,
				(size_t)len, iov), &args.peer_addr,
				args.id) < 0) {
			perror("homa_replyv");
			return;
		}
	}
}

int main(int argc, char **argv)
{
	int port = parse_port(argc, argv), fd;
	void *region;

	fd = open_server(port, &region);
	if (fd < 0)
		return 1;
	printf("echo_server: serving Homa port %d\n", port);
	fflush(stdout);
	serve(fd, region);
	homa_close(fd);
	munmap(region, REGION_BYTES);
	return 1;
}
