/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * echo_client - calls /echo.Echo/Say through the stub protoc-c generated,
 * then once more with a deadline and metadata through homa_rpc_call.
 *
 *   echo_client PORT TEXT
 */
#include "echo.pb-c.h"
#include "example_util.h"

/* said - the closure of the stub: prints the reply (NULL on failure). */
static void said(const Echo__EchoReply *reply, void *data)
{
	(void)data;
	if (reply)
		printf("reply: %s\n", reply->text);
	else
		printf("failed: %s\n", homa_rpc_code_name(homa_rpc_last_code()));
}

int main(int argc, char **argv)
{
	Echo__EchoRequest req = ECHO__ECHO_REQUEST__INIT;
	const struct homa_rpc_md md[] = { { "x-client", "example", 7 } };
	struct homa_rpc_opts opts = { .timeout_us = 100000, .md = md,
				      .n_md = 1 };
	struct homa_rpc_client *c;
	struct homa_rpc_result r;
	union sockaddr_in_union addr;

	if (argc != 3) {
		fprintf(stderr, "usage: %s PORT TEXT\n", argv[0]);
		return 2;
	}
	addr = example_addr(argv[1], 0);
	c = homa_rpc_client_new(&echo__echo__descriptor, &addr, NULL);
	if (!c) {
		perror("homa_rpc_client_new");
		return 1;
	}
	req.text = argv[2];
	echo__echo__say(homa_rpc_client_service(c), &req, said, NULL);
	if (homa_rpc_call(c, 0, &req.base, &opts, &r) != HOMA_RPC_OK)
		printf("with a 100 ms deadline: %s (%s)\n",
		       homa_rpc_code_name(r.code), r.message);
	else
		printf("with a 100 ms deadline: %s\n",
		       ((Echo__EchoReply *)r.response)->text);
	homa_rpc_result_clear(&r);
	homa_rpc_client_free(c);
	return homa_rpc_last_code() == HOMA_RPC_OK ? 0 : 1;
}
