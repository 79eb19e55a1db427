/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * kapi_region - a buffer region the application takes away from a live
 * socket, with nothing but libc (on libhoma: under
 * LD_PRELOAD=libhoma_preload.so).
 *
 *   usage: kapi_region PORT
 *
 * A server socket on PORT takes a request and answers it with 1 MB after
 * the client has:
 *   unmapped its region: recvmsg reports the RPC failed with EFAULT (the
 *                kernel's copy_to_user fails so) and the process lives;
 *                then close succeeds (the unmap-then-close order of
 *                grpc_homa's clean-up);
 *   made its region read-only: EFAULT again; writable again, the same
 *                socket receives the next 1 MB response intact.
 * Prints "kapi_region: PASS" and exits 0, else "FAIL ..." and exits 1.
 */
#include "kapi_util.h"

#define RESP_LEN 1000000

static struct kapi_sock srv;
static struct sockaddr_storage dest;
static socklen_t dlen;
static char *resp;

/* rpc_to_answer - cli sends a request and the server takes it; the
 * server's id and the client's come back. */
static void rpc_to_answer(struct kapi_sock *cli, uint64_t *cid, uint64_t *sid,
			  struct sockaddr_storage *peer, socklen_t *plen)
{
	struct homa_recvmsg_args a;

	*cid = kapi_send(cli->fd, (struct sockaddr *)&dest, dlen, "1 MB please",
			 12, 0, 7, 0);
	CHECK(*cid, "sendmsg: %s", strerror(errno));
	memset(&a, 0, sizeof(a));
	CHECK(kapi_recv(srv.fd, &a, 0, peer, plen) == 12 && (a.id & 1),
	      "server recvmsg: %s", strerror(errno));
	*sid = a.id;
}

/* answer - the server sends the 1 MB response of request sid. */
static void answer(uint64_t sid, struct sockaddr_storage *peer,
		   socklen_t plen)
{
	CHECK(kapi_send(srv.fd, (struct sockaddr *)peer, plen, resp, RESP_LEN,
			sid, 0, 0) == sid, "reply: %s", strerror(errno));
}

/* expect_efault - the client's next message is RPC cid, failed with
 * EFAULT. */
static void expect_efault(struct kapi_sock *cli, uint64_t cid)
{
	struct homa_recvmsg_args a;
	ssize_t r;

	memset(&a, 0, sizeof(a));
	r = kapi_recv(cli->fd, &a, 0, NULL, NULL);
	CHECK(r == -1 && errno == EFAULT, "recvmsg: %zd, errno %d (%s); "
	      "want EFAULT", r, errno, strerror(errno));
	CHECK(a.id == cid && a.num_bpages == 0, "failed RPC reported as id "
	      "%llu with %u bpages, want %llu", (unsigned long long)a.id,
	      a.num_bpages, (unsigned long long)cid);
}

/* unmapped_then_closed - the region goes before the response comes. */
static void unmapped_then_closed(void)
{
	struct kapi_sock cli = kapi_open(AF_INET, 0, 0);
	struct sockaddr_storage peer;
	socklen_t plen = sizeof(peer);
	uint64_t cid, sid;

	rpc_to_answer(&cli, &cid, &sid, &peer, &plen);
	CHECK(munmap(cli.region, cli.region_len) == 0, "munmap: %s",
	      strerror(errno));
	answer(sid, &peer, plen);
	expect_efault(&cli, cid);
	CHECK(close(cli.fd) == 0, "close after munmap: %s", strerror(errno));
}

/* read_only - the region is read-only while the response comes, then
 * writable again. */
static void read_only(void)
{
	struct kapi_sock cli = kapi_open(AF_INET, 0, 0);
	struct sockaddr_storage peer;
	socklen_t plen = sizeof(peer);
	struct homa_recvmsg_args a;
	struct iovec iov[HOMA_MAX_BPAGES];
	size_t at = 0;
	uint64_t cid, sid;
	int n;

	rpc_to_answer(&cli, &cid, &sid, &peer, &plen);
	CHECK(mprotect(cli.region, cli.region_len, PROT_READ) == 0,
	      "mprotect: %s", strerror(errno));
	answer(sid, &peer, plen);
	expect_efault(&cli, cid);
	CHECK(mprotect(cli.region, cli.region_len,
		       PROT_READ | PROT_WRITE) == 0, "mprotect: %s",
	      strerror(errno));
	rpc_to_answer(&cli, &cid, &sid, &peer, &plen);
	answer(sid, &peer, plen);
	memset(&a, 0, sizeof(a));
	CHECK(kapi_recv(cli.fd, &a, 0, NULL, NULL) == RESP_LEN && a.id == cid,
	      "recvmsg after mprotect back: %s", strerror(errno));
	n = kapi_msg_iov(cli.region, &a, RESP_LEN, iov);
	for (int i = 0; i < n; i++) {
		CHECK(memcmp(iov[i].iov_base, resp + at, iov[i].iov_len) == 0,
		      "response bytes differ in piece %d", i);
		at += iov[i].iov_len;
	}
	kapi_close(&cli);
}

int main(int argc, char **argv)
{
	int port = kapi_port(argc, argv, 1, 4600);

#if defined(__SANITIZE_THREAD__)
	/* Under ThreadSanitizer libhoma copies with plain memcpy (its
	 * src/sock/homa_sockcopy.c says why): nothing to check. */
	printf("kapi_region: PASS (skipped under ThreadSanitizer)\n");
	return 0;
#endif
	resp = malloc(RESP_LEN);
	CHECK(resp, "malloc");
	kapi_fill(resp, RESP_LEN, 5);
	srv = kapi_open(AF_INET, port, 0);
	dlen = kapi_addr(AF_INET, port, &dest);
	unmapped_then_closed();
	read_only();
	kapi_close(&srv);
	free(resp);
	printf("kapi_region: PASS\n");
	return 0;
}
