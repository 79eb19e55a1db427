// SPDX-License-Identifier: BSD-2-Clause
/* homa-demo: the command line (see demo.h). */

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "demo.h"
#include "tool_opts.h"

/* usage - the --help text to f. */
static void usage(FILE *f)
{
	fprintf(f,
"usage: homa-demo [options]\n"
"Homa, TCP and UDP side by side on loopback (127.0.0.1), in one run:\n"
"  - RTT of small RPCs, one outstanding: Homa, TCP (TCP_NODELAY, one\n"
"    persistent connection), UDP ping-pong (blocking, and a spinning\n"
"    client: the floor); p50/p99/p999 in microseconds;\n"
"  - goodput of 1,000,000-byte requests (100-byte responses) with 1 and\n"
"    4 outstanding, and of 1,000,000-byte echoes: Homa vs TCP in Gbit/s.\n"
"Each measurement runs in R rounds, the systems interleaved; the table\n"
"shows the median of the rounds, and every round's value follows.\n"
"\n"
"options:\n"
"  --rounds R     rounds of every measurement (1..%d; default 3)\n"
"  --rpcs N       RPCs per round of the RTT test (default 20000); unless\n"
"                 --big-rpcs is given, also sets the 1 MB tests to N/100\n"
"  --big-rpcs N   RPCs per round of each 1 MB test (default 200)\n"
"  --size B       request and response bytes of the RTT test (1..%ld;\n"
"                 default 100; UDP is skipped above %ld)\n"
"  --port P       Homa server port (1..32767; default 4100); TCP uses\n"
"                 P+1 and UDP P+2\n"
"  --quick        a short smoke run: 1 round, 300 and 8 RPCs\n"
"  --json         print one JSON object with every number instead\n"
"  --stats        also print the Homa sockets' nonzero engine counters\n"
"  --verbose      report each measurement on stderr as it ends\n"
"  --rtt-only     only the RTT test (no 1 MB goodput tests)\n"
"  --help         this text\n"
"\n"
"Every stage is watched: no progress for %d s aborts the run.\n"
"Exit status: 0 all measurements completed, 1 one failed or set-up\n"
"failed, 2 bad options.\n", MAX_ROUNDS, (long)HOMA_MAX_MESSAGE_LENGTH,
		UDP_MAX, WATCHDOG_S);
}

void parse_options(int argc, char **argv, struct options *o)
{
	static const struct option longs[] = {
		{ "rounds", required_argument, NULL, 'r' },
		{ "rpcs", required_argument, NULL, 'n' },
		{ "big-rpcs", required_argument, NULL, 'b' },
		{ "size", required_argument, NULL, 's' },
		{ "port", required_argument, NULL, 'p' },
		{ "quick", no_argument, NULL, 'q' },
		{ "json", no_argument, NULL, 'j' },
		{ "stats", no_argument, NULL, 'S' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "rtt-only", no_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, idx = 0, rounds = 0;
	long rpcs = 0, big = 0;

	memset(o, 0, sizeof(*o));
	tool_opt_program(PROG);
	o->size = 100;
	o->port = 4100;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", longs, &idx)) != -1) {
		if (c == '?')   /* optopt: a known option, value wrong */
			tool_opt_reject(longs, optopt, argv[optind - 1]);
		tool_opt_check_value(longs[idx].name, optarg);
		switch (c) {
		case 'r': rounds = (int)tool_opt_long("rounds", optarg, 1,
						      MAX_ROUNDS); break;
		case 'n': rpcs = tool_opt_long("rpcs", optarg, 1, 10000000);
			  break;
		case 'b': big = tool_opt_long("big-rpcs", optarg, 1, 100000);
			  break;
		case 's': o->size = tool_opt_long("size", optarg, 1,
					HOMA_MAX_MESSAGE_LENGTH); break;
		case 'p': o->port = (int)tool_opt_long("port", optarg, 1,
					HOMA_MIN_DEFAULT_PORT - 1);
			  break;
		case 'q': o->quick = 1; break;
		case 'j': o->json = 1; break;
		case 'S': o->stats = 1; break;
		case 'v': o->verbose = 1; break;
		case 'R': o->rtt_only = 1; break;
		case 'h': usage(stdout); exit(0);
		}
	}
	if (optind < argc)
		tool_opt_fail("unexpected argument '%s'", argv[optind]);
	o->rounds = rounds ? rounds : o->quick ? 1 : 3;
	o->rpcs = rpcs ? rpcs : o->quick ? 300 : 20000;
	o->big_rpcs = big ? big : rpcs ? (rpcs / 100 ? rpcs / 100 : 1)
					: o->quick ? 8 : 200;
}
