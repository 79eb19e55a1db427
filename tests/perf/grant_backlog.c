// SPDX-License-Identifier: BSD-2-Clause
/*
 * grant-backlog - the CPU a server endpoint spends per completed request
 * while it holds a backlog: --backlog messages that still need grants
 * (first packets of requests of --length bytes from one host, never
 * continued, as a flood of half-open requests leaves them), while one-
 * packet requests from a second host arrive and complete, --batch at a
 * time, the endpoint's output read after each batch (as the socket layer
 * flushes after a read).  The completed requests stay held (no thread
 * answers them), so the endpoint's RPC count grows as well.
 *
 * Prints one line:
 *   grant-backlog: backlog N, M requests: X ns CPU per request
 * The core runs in memory (the endpoint tests' network, no sockets, no
 * clock): the number is the engine's own cost.  Compare builds with
 * interleaved runs; a single number on a shared machine says little.
 *
 * Options: --backlog N (default 2000), --requests M (default 20000),
 * --length L (default 10000), --batch B (default 16).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "ep_test_util.h"

/* cpu_ns - this process's CPU time in nanoseconds. */
static uint64_t cpu_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* drain_output - read every packet the endpoint s has to send. */
static void drain_output(struct net *net, int s)
{
	struct sent_pkt p;

	while (next_out(net, s, &p))
		;
}

/* arg_long - the value of option argv[*i] (its next word), at least min,
 * or exit 2. */
static long arg_long(int argc, char **argv, int *i, long min)
{
	char *end;
	long v;

	if (*i + 1 >= argc) {
		fprintf(stderr, "grant-backlog: %s needs a value\n", argv[*i]);
		exit(2);
	}
	v = strtol(argv[++*i], &end, 10);
	if (*end || v < min || v > 10000000) {
		fprintf(stderr, "grant-backlog: bad value '%s'\n", argv[*i]);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	long backlog = 2000, requests = 20000, length = 10000, batch = 16;
	struct net *net;
	uint64_t t0, t1;
	int s;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--backlog") == 0)
			backlog = arg_long(argc, argv, &i, 0);
		else if (strcmp(argv[i], "--requests") == 0)
			requests = arg_long(argc, argv, &i, 1);
		else if (strcmp(argv[i], "--length") == 0)
			length = arg_long(argc, argv, &i, 1);
		else if (strcmp(argv[i], "--batch") == 0)
			batch = arg_long(argc, argv, &i, 1);
		else {
			fprintf(stderr, "usage: grant-backlog [--backlog N] "
				"[--requests M] [--length L] [--batch B]\n");
			return 2;
		}
	}
	ep_default_settings(NULL);
	/* Each backlog message needs grants beyond its first packet. */
	cfg.unsched_bytes = 5000;
	net = net_server(&cfg, (int)(backlog * length / 60000 + 64), &s);
	for (long k = 0; k < backlog; k++)
		inject_request(net, s, 0x0b000200, (uint16_t)(1000 + k % 50000),
			       2 * (uint64_t)k + 2, (uint32_t)length);
	drain_output(net, s);
	t0 = cpu_ns();
	for (long k = 0; k < requests; k++) {
		inject_request(net, s, 0x0b000300, 7000,
			       2 * (uint64_t)k + 2, 500);
		if ((k + 1) % batch == 0)
			drain_output(net, s);
	}
	drain_output(net, s);
	t1 = cpu_ns();
	printf("grant-backlog: backlog %ld, %ld requests: %.0f ns CPU per "
	       "request\n", backlog, requests,
	       (double)(t1 - t0) / (double)requests);
	net_free(net);
	return 0;
}
