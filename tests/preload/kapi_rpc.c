/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * kapi_rpc - one client socket, RPCs one at a time to an echo server
 * (kapi_echo_server), written for the Linux kernel Homa module's user API
 * with nothing but libc; on libhoma it runs under
 * LD_PRELOAD=libhoma_preload.so.
 *
 *   usage: kapi_rpc PORT 4|6 LENGTH COUNT [ERRNO...]
 *
 * Sends COUNT requests of LENGTH bytes (1..1,000,000) to PORT on the
 * loopback (or KAPI_ADDR4 / KAPI_ADDR6, kapi_util.h), each after the
 * previous response, and checks each response byte for byte (id, cookie,
 * length, bytes).  Prints "kapi_rpc: PASS COUNT RPCs of LENGTH bytes" and
 * exits 0.
 * With ERRNO names (ENOTCONN, ETIMEDOUT, ...) the first RPC must fail
 * instead, with one of them: prints "kapi_rpc: PASS failed with NAME" and
 * exits 0.  Any other outcome prints "FAIL ..." and exits 1; bad
 * arguments exit 2.
 */
#include "kapi_util.h"

/* errno_name - the symbolic name of the errnos these tests expect. */
static const char *errno_name(int e)
{
	switch (e) {
	case ENOTCONN: return "ENOTCONN";
	case ETIMEDOUT: return "ETIMEDOUT";
	case ECONNREFUSED: return "ECONNREFUSED";
	case EHOSTUNREACH: return "EHOSTUNREACH";
	case ENETUNREACH: return "ENETUNREACH";
	case ECONNRESET: return "ECONNRESET";
	case ENOMEM: return "ENOMEM";
	case EINTR: return "EINTR";
	default: return "other";
	}
}

/* one_rpc - send len bytes (seeded by cookie) and check the echo; returns
 * 0, or the errno of a failed RPC (sending failures end the program). */
static int one_rpc(struct kapi_sock *k, const struct sockaddr_storage *to,
		   socklen_t to_len, size_t len, uint64_t cookie, char *buf,
		   char *expect, struct homa_recvmsg_args *args)
{
	struct iovec iov[HOMA_MAX_BPAGES];
	size_t off = 0;
	uint64_t id;
	ssize_t n;
	int pieces;

	kapi_fill(buf, len, cookie);
	id = kapi_send(k->fd, (const struct sockaddr *)to, to_len, buf, len,
		       0, cookie, 0);
	CHECK(id != 0, "sendmsg of %zu bytes: %s", len, strerror(errno));
	args->id = 0;
	n = kapi_recv(k->fd, args, 0, NULL, NULL);
	if (n < 0)
		return errno;
	CHECK(args->id == id && args->completion_cookie == cookie,
	      "response id %llu cookie %llu, want %llu and %llu",
	      (unsigned long long)args->id,
	      (unsigned long long)args->completion_cookie,
	      (unsigned long long)id, (unsigned long long)cookie);
	CHECK((size_t)n == len, "response of %zd bytes, want %zu", n, len);
	kapi_fill(expect, len, cookie);
	pieces = kapi_msg_iov(k->region, args, len, iov);
	for (int i = 0; i < pieces; i++) {
		CHECK(memcmp(iov[i].iov_base, expect + off, iov[i].iov_len) == 0,
		      "response of %zu bytes differs in piece %d", len, i);
		off += iov[i].iov_len;
	}
	CHECK(off == len, "pieces cover %zu of %zu bytes", off, len);
	return 0;
}

int main(int argc, char **argv)
{
	struct homa_recvmsg_args args;
	struct sockaddr_storage to;
	socklen_t to_len;
	struct kapi_sock k;
	long len, count;
	char *buf, *expect;
	int family, port;

	if (argc < 5 || (strcmp(argv[2], "4") && strcmp(argv[2], "6"))) {
		fprintf(stderr, "usage: kapi_rpc PORT 4|6 LENGTH COUNT "
			"[ERRNO...]\n");
		return 2;
	}
	port = kapi_port(argc, argv, 1, 4000);
	family = strcmp(argv[2], "6") == 0 ? AF_INET6 : AF_INET;
	len = strtol(argv[3], NULL, 10);
	count = strtol(argv[4], NULL, 10);
	if (len < 1 || len > HOMA_MAX_MESSAGE_LENGTH || count < 1) {
		fprintf(stderr, "kapi_rpc: LENGTH 1..%d, COUNT 1 or more\n",
			HOMA_MAX_MESSAGE_LENGTH);
		return 2;
	}
	buf = malloc((size_t)len);
	expect = malloc((size_t)len);
	CHECK(buf && expect, "out of memory");
	k = kapi_open(family, 0, 0);
	to_len = kapi_addr(family, port, &to);
	memset(&args, 0, sizeof(args));
	const char *failed_with = NULL;

	for (long i = 0; i < count && !failed_with; i++) {
		int err = one_rpc(&k, &to, to_len, (size_t)len,
				  100 + (uint64_t)i, buf, expect, &args);

		if (argc > 5) {
			for (int a = 5; a < argc && err; a++)
				if (strcmp(argv[a], errno_name(err)) == 0)
					failed_with = argv[a];
			CHECK(err != 0, "RPC %ld of %ld bytes succeeded; want "
			      "it to fail with %s%s", i, len, argv[5],
			      argc > 6 ? " or another listed" : "");
			CHECK(failed_with, "RPC %ld failed with %s (%s), not "
			      "one listed", i, errno_name(err), strerror(err));
		}
		CHECK(err == 0 || failed_with, "RPC %ld of %ld bytes: %s (%s)",
		      i, len, errno_name(err), strerror(err));
	}
	kapi_close(&k);
	if (failed_with)
		printf("kapi_rpc: PASS failed with %s\n", failed_with);
	else
		printf("kapi_rpc: PASS %ld RPCs of %ld bytes\n", count, len);
	free(buf);
	free(expect);
	return 0;
}
