/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * echo_server - serves echo.Echo (echo.proto) on a Homa port until SIGINT
 * or SIGTERM, then shuts down gracefully and prints the method's counters.
 *
 *   echo_server PORT [WORKERS]
 */
#include <pthread.h>

#include "echo.pb-c.h"
#include "example_util.h"

/* echo_say - the method: the text and payload back. */
static void echo_say(Echo__Echo_Service *service,
		     const Echo__EchoRequest *input,
		     Echo__EchoReply_Closure closure, void *call)
{
	Echo__EchoReply reply = ECHO__ECHO_REPLY__INIT;

	(void)service;
	reply.text = input->text;
	reply.payload = input->payload;
	closure(&reply, call);
}

/* echo_sink - the method Sink: the text back, the payload dropped. */
static void echo_sink(Echo__Echo_Service *service,
		      const Echo__EchoRequest *input,
		      Echo__EchoReply_Closure closure, void *call)
{
	Echo__EchoReply reply = ECHO__ECHO_REPLY__INIT;

	(void)service;
	reply.text = input->text;
	closure(&reply, call);
}

static Echo__Echo_Service echo_service = ECHO__ECHO__INIT(echo_);

int main(int argc, char **argv)
{
	struct homa_rpc_server_config cfg = { 0 };
	struct homa_rpc_method_stats st;
	union sockaddr_in_union addr;
	struct homa_rpc_server *srv;
	sigset_t set;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: %s PORT [WORKERS]\n", argv[0]);
		return 2;
	}
	addr = example_addr(argv[1], 1);
	if (argc == 3)
		cfg.workers = atoi(argv[2]);
	example_block_signals(&set);
	srv = homa_rpc_server_new(&addr, &cfg);
	if (!srv) {
		perror("homa_rpc_server_new");
		return 1;
	}
	if (homa_rpc_server_add(srv, &echo_service.base) < 0 ||
	    homa_rpc_server_start(srv) < 0) {
		perror("homa_rpc_server");
		return 1;
	}
	printf("serving /echo.Echo/Say on port %s\n", argv[1]);
	fflush(stdout);
	example_wait_signal(&set);
	homa_rpc_server_method_stats(srv, "/echo.Echo/Say", &st);
	homa_rpc_server_stop(srv, 1000);
	printf("calls: %llu started, %llu ok, %llu failed\n",
	       (unsigned long long)st.started, (unsigned long long)st.ok,
	       (unsigned long long)st.failed);
	return 0;
}
