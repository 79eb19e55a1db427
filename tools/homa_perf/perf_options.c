// SPDX-License-Identifier: BSD-2-Clause
/* homa-perf: the command line (see perf.h). */

#include <arpa/inet.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "homa_workloads.h"
#include "perf.h"
#include "tool_opts.h"

/* file_readable - 1 when path names a readable regular file. */
static int file_readable(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
	       access(path, R_OK) == 0;
}

/* usage - the --help text. */
static void usage(FILE *f)
{
	fprintf(f,
"usage: homa-perf server   --port P [--tcp-port Q | --no-tcp] [--threads T]\n"
"                          [--server-epoll] [--duration S] [--json]\n"
"                          [--sample-every S]\n"
"       homa-perf client   --server ADDR:P (--workload W | --size B) [load]\n"
"                          [options]\n"
"       homa-perf loopback (--workload W | --size B) [load] [options]\n"
"\n"
"Homa RPCs under a workload, with TCP measured by the same workload in the\n"
"same run: p50/p99/p999 RTT and slowdown per message-size bucket, RPCs/s,\n"
"Gbit/s, CPU time per RPC, and the Homa engine's counters.\n"
"\n"
"server: answers Homa requests on port P (T threads, default 2) and TCP on\n"
"  Q (default P; one thread per connection) until SIGINT/SIGTERM or S\n"
"  seconds (default 0: no limit); prints \"ready\" on stderr when serving.\n"
"client: loads a server (IPv4 ADDR).  loopback: starts a server in this\n"
"  process on 127.0.0.1:P (--port, default 4000; --server-threads T) and\n"
"  loads it.\n"
"--server-epoll (server, loopback): the Homa server threads wait in\n"
"  epoll_wait on the socket and then read it without blocking until it is\n"
"  empty, as an event-driven server does (default: blocking homa_recvmsg).\n"
"--client-poll (client, loopback; open loop): each Homa client thread\n"
"  sends, waits in ppoll on its socket and takes responses without\n"
"  blocking, as an event-driven client does; a send that finds the\n"
"  socket's send memory full is skipped.  Default: the generator hands\n"
"  each request to a sending thread (which waits for send memory) and a\n"
"  receiving thread takes the responses.\n"
"\n"
"What to send:\n"
"  --workload W       w1..w5 (the Homa papers' workloads, built in) or a CDF\n"
"                     file (\"size cum\" lines); sizes over 1,000,000 bytes\n"
"                     are cut to it\n"
"  --workload-dir D   read w1..w5 from D/wN.cdf instead (default\n"
"                     $HOMA_WORKLOAD_DIR, else the built-in copies)\n"
"  --size B           every request B bytes (1..1000000)\n"
"  --buckets N        size buckets of a workload: N quantiles of messages\n"
"                     by size (1..%d; default 10: bucket 1 = shortest 10%%)\n"
"  --resp-size B      response bytes (1..1000000; default 100)\n"
"  --echo             responses echo the request\n"
"Load (one of):\n"
"  --outstanding N    closed loop, N RPCs in flight in total (default 1)\n"
"  --rate R           open loop, Poisson arrivals of R RPCs/s in total\n"
"  --load-gbps G      open loop, R = G Gbit/s of request payload / mean size\n"
"  --max-outstanding M  open loop: at most M RPCs in flight per thread;\n"
"                     arrivals beyond are skipped and counted (default 1000)\n"
"Run:\n"
"  --proto homa|tcp|both  protocols, measured one after the other (default\n"
"                     both)\n"
"  --threads T        client threads (1..%d; default 1), each with its own\n"
"                     Homa socket or TCP connections; load split evenly\n"
"  --tcp-conns K      TCP connections per thread (1..256).  Open loop: a pool\n"
"                     of K (default %d), each with a writing and a reading\n"
"                     thread; the generator queues each request on the one\n"
"                     with the fewest outstanding and never writes itself.\n"
"                     Closed loop: K (default 1) served by the thread in\n"
"                     ppoll.  Requests are pipelined on a connection.\n"
"  --tcp-port Q       the server's TCP port (default: the Homa port)\n"
"  --duration S       measured seconds per protocol (up to 3600; default 5;\n"
"                     0: only calibrate)\n"
"  --warmup S         seconds before that, not measured (default: duration/5,\n"
"                     at most 1)\n"
"  --drain S          seconds allowed afterwards for RPCs in flight (default\n"
"                     5); those still open are counted as unfinished\n"
"  --seed N           random seed (default 1)\n"
"Slowdown:\n"
"  Before loading, the unloaded RTT is measured per protocol at sizes\n"
"  spanning the workload (median of up to --calib-rpcs RPCs one at a time,\n"
"  default 100, at most 1 s per size); an RPC's slowdown is its RTT over\n"
"  the unloaded RTT of its size, interpolated linearly between those sizes.\n"
"  --slowdown-base best|own  divide by the lowest unloaded RTT of the\n"
"                     protocols measured (default) or the protocol's own\n"
"  --baseline FILE    read the unloaded RTTs from FILE instead\n"
"  --baseline-out FILE  write them to FILE\n"
"Output:\n"
"  --json             one JSON object (with the histograms) instead of tables\n"
"  --sample-every S   (any mode) every S seconds a line on stderr:\n"
"                     \"sample t=SECONDS rss_kb=K fds=N homa_socks=H\n"
"                     num_rpcs=R\": the process's resident memory, open\n"
"                     descriptors, Homa sockets and the RPCs they hold\n"
"                     (for long runs: scripts/soak.sh)\n"
"  --help             this text\n"
"Validity:\n"
"  An open-loop generator hands each request to a sending thread at its\n"
"  Poisson arrival time, at real-time priority (SCHED_FIFO) when the\n"
"  process may.  Arrivals handed over more than 1 ms after their\n"
"  time are \"late\"; a protocol with more than 1%% of its arrivals late is\n"
"  marked INVALID (its generator fell behind, so its load was not the one\n"
"  asked for) and no tcp/homa ratio is printed for the run.\n"
"  --test-stall homa|tcp  for tests: that protocol's generator sleeps 2 ms\n"
"                     before every 10th arrival, so its run is invalid\n"
"\n"
"Requests carry in their first 4 bytes the response length the server\n"
"sends (0xffffffff: echo; 0 is answered with 1 byte).  Homa settings come from HOMA_* variables (for\n"
"example HOMA_LINK_MBPS); the report names those not at their defaults.\n"
"Every stage has a time budget (watchdog).\n"
"Exit status: 0 every measured RPC completed; 1 an RPC failed or was left\n"
"unfinished, or set-up failed; 2 bad options (an invalid run exits 0).\n",
		MAX_BUCKETS, MAX_THREADS, OPEN_TCP_CONNS);
}

/* Which option may be given in which mode (bit per mode). */
#define IN_SERVER   (1u << M_SERVER)
#define IN_CLIENT   (1u << M_CLIENT)
#define IN_LOOP     (1u << M_LOOPBACK)
#define IN_LOAD     (IN_CLIENT | IN_LOOP)
#define IN_ANY      (IN_SERVER | IN_LOAD)

enum opt_id {
	O_SERVER = 256, O_PORT, O_TCP_PORT, O_NO_TCP, O_THREADS,
	O_SERVER_THREADS, O_SERVER_EPOLL, O_CLIENT_POLL, O_WORKLOAD,
	O_WORKLOAD_DIR, O_SIZE, O_BUCKETS, O_RESP_SIZE, O_ECHO, O_RATE, O_LOAD_GBPS, O_OUTSTANDING,
	O_MAX_OUTSTANDING, O_TCP_CONNS, O_DURATION, O_WARMUP, O_DRAIN,
	O_PROTO, O_BASELINE, O_BASELINE_OUT, O_CALIB_RPCS, O_SLOWDOWN_BASE,
	O_SEED, O_JSON, O_SAMPLE_EVERY, O_TEST_STALL, O_HELP, O_END
};

/* In the order of enum opt_id (long_opts[id - O_SERVER] is id's). */
static const struct option long_opts[] = {
	{ "server", required_argument, NULL, O_SERVER },
	{ "port", required_argument, NULL, O_PORT },
	{ "tcp-port", required_argument, NULL, O_TCP_PORT },
	{ "no-tcp", no_argument, NULL, O_NO_TCP },
	{ "threads", required_argument, NULL, O_THREADS },
	{ "server-threads", required_argument, NULL, O_SERVER_THREADS },
	{ "server-epoll", no_argument, NULL, O_SERVER_EPOLL },
	{ "client-poll", no_argument, NULL, O_CLIENT_POLL },
	{ "workload", required_argument, NULL, O_WORKLOAD },
	{ "workload-dir", required_argument, NULL, O_WORKLOAD_DIR },
	{ "size", required_argument, NULL, O_SIZE },
	{ "buckets", required_argument, NULL, O_BUCKETS },
	{ "resp-size", required_argument, NULL, O_RESP_SIZE },
	{ "echo", no_argument, NULL, O_ECHO },
	{ "rate", required_argument, NULL, O_RATE },
	{ "load-gbps", required_argument, NULL, O_LOAD_GBPS },
	{ "outstanding", required_argument, NULL, O_OUTSTANDING },
	{ "max-outstanding", required_argument, NULL, O_MAX_OUTSTANDING },
	{ "tcp-conns", required_argument, NULL, O_TCP_CONNS },
	{ "duration", required_argument, NULL, O_DURATION },
	{ "warmup", required_argument, NULL, O_WARMUP },
	{ "drain", required_argument, NULL, O_DRAIN },
	{ "proto", required_argument, NULL, O_PROTO },
	{ "baseline", required_argument, NULL, O_BASELINE },
	{ "baseline-out", required_argument, NULL, O_BASELINE_OUT },
	{ "calib-rpcs", required_argument, NULL, O_CALIB_RPCS },
	{ "slowdown-base", required_argument, NULL, O_SLOWDOWN_BASE },
	{ "seed", required_argument, NULL, O_SEED },
	{ "json", no_argument, NULL, O_JSON },
	{ "sample-every", required_argument, NULL, O_SAMPLE_EVERY },
	{ "test-stall", required_argument, NULL, O_TEST_STALL },
	{ "help", no_argument, NULL, O_HELP },
	{ NULL, 0, NULL, 0 },
};

/* opt_modes - the modes option id is valid in. */
static unsigned int opt_modes(int id)
{
	switch (id) {
	case O_SERVER: return IN_CLIENT;
	case O_PORT: return IN_SERVER | IN_LOOP;
	case O_NO_TCP: return IN_SERVER;
	case O_SERVER_THREADS: return IN_LOOP;
	case O_SERVER_EPOLL: return IN_SERVER | IN_LOOP;
	case O_TCP_PORT: case O_THREADS: case O_DURATION: case O_JSON:
	case O_SAMPLE_EVERY: case O_HELP:
		return IN_ANY;
	default: return IN_LOAD;
	}
}

/* parse_server - "IPV4:PORT" into o->server, or exit 2. */
static void parse_server(struct options *o, const char *arg)
{
	char host[64];
	const char *colon = strrchr(arg, ':');
	size_t n = colon ? (size_t)(colon - arg) : 0;

	if (n == 0 || n >= sizeof(host))
		tool_opt_fail("--server: expected IPV4:PORT, got '%s'", arg);
	memcpy(host, arg, n);
	host[n] = '\0';
	memset(&o->server, 0, sizeof(o->server));
	o->server.in4.sin_family = AF_INET;
	if (inet_pton(AF_INET, host, &o->server.in4.sin_addr) != 1)
		tool_opt_fail("--server: '%s' is not an IPv4 address", host);
	o->server.in4.sin_port = htons((uint16_t)tool_opt_long("server port",
		colon + 1, 1, HOMA_MIN_DEFAULT_PORT - 1));
}

/* mode_of - the mode a subcommand names, or M_NONE. */
static enum mode mode_of(const char *s)
{
	if (strcmp(s, "server") == 0)
		return M_SERVER;
	if (strcmp(s, "client") == 0)
		return M_CLIENT;
	if (strcmp(s, "loopback") == 0)
		return M_LOOPBACK;
	return M_NONE;
}

/* parse_one - apply option id with argument arg to o. */
static void parse_one(struct options *o, int id, const char *arg)
{
	switch (id) {
	case O_SERVER: parse_server(o, arg); break;
	case O_PORT:
		o->port = (int)tool_opt_long("port", arg, 1,
					     HOMA_MIN_DEFAULT_PORT - 1);
		break;
	case O_TCP_PORT:
		o->tcp_port = (int)tool_opt_long("tcp-port", arg, 1, 65535);
		break;
	case O_NO_TCP: o->no_tcp_server = 1; break;
	case O_THREADS:
		o->threads = (int)tool_opt_long("threads", arg, 1, MAX_THREADS);
		break;
	case O_SERVER_THREADS:
		o->server_threads = (int)tool_opt_long("server-threads", arg, 1,
						       MAX_THREADS);
		break;
	case O_SERVER_EPOLL: o->server_epoll = 1; break;
	case O_CLIENT_POLL: o->client_poll = 1; break;
	case O_WORKLOAD: o->workload = arg; break;
	case O_WORKLOAD_DIR: o->workload_dir = arg; break;
	case O_SIZE:
		o->size = (uint32_t)tool_opt_long("size", arg, 1, MAX_MSG);
		break;
	case O_BUCKETS:
		o->buckets = (int)tool_opt_long("buckets", arg, 1, MAX_BUCKETS);
		break;
	case O_RESP_SIZE:
		o->resp_size = (uint32_t)tool_opt_long("resp-size", arg, 1,
						       MAX_MSG);
		break;
	case O_ECHO: o->resp_size = SPEC_ECHO; break;
	case O_RATE:
		o->rate = tool_opt_double("rate", arg, 0, 1e8, 1);
		break;
	case O_LOAD_GBPS:
		o->load_gbps = tool_opt_double("load-gbps", arg, 0, 1000, 1);
		break;
	case O_OUTSTANDING:
		o->outstanding = (int)tool_opt_long("outstanding", arg, 1,
						    100000);
		break;
	case O_MAX_OUTSTANDING:
		o->max_outstanding = (int)tool_opt_long("max-outstanding", arg,
							1, 100000);
		break;
	case O_TCP_CONNS:
		o->tcp_conns = (int)tool_opt_long("tcp-conns", arg, 1, 256);
		break;
	case O_DURATION:
		o->duration = tool_opt_double("duration", arg, 0, 86400, 0);
		break;
	case O_WARMUP:
		o->warmup = tool_opt_double("warmup", arg, 0, 60, 0);
		break;
	case O_DRAIN:
		o->drain = tool_opt_double("drain", arg, 0, 60, 0);
		break;
	case O_PROTO:
		if (strcmp(arg, "homa") == 0)
			o->protos = 1u << P_HOMA;
		else if (strcmp(arg, "tcp") == 0)
			o->protos = 1u << P_TCP;
		else if (strcmp(arg, "both") == 0)
			o->protos = (1u << P_HOMA) | (1u << P_TCP);
		else
			tool_opt_fail("--proto: expected homa, tcp or both, "
				      "got '%s'", arg);
		break;
	case O_BASELINE: o->baseline_in = arg; break;
	case O_BASELINE_OUT: o->baseline_out = arg; break;
	case O_CALIB_RPCS:
		o->calib_rpcs = (int)tool_opt_long("calib-rpcs", arg, 3,
						   100000);
		break;
	case O_SLOWDOWN_BASE:
		if (strcmp(arg, "best") == 0)
			o->slowdown_own = 0;
		else if (strcmp(arg, "own") == 0)
			o->slowdown_own = 1;
		else
			tool_opt_fail("--slowdown-base: expected best or own, "
				      "got '%s'", arg);
		break;
	case O_SEED:
		o->seed = (uint64_t)tool_opt_long("seed", arg, 0, LONG_MAX);
		break;
	case O_JSON: o->json = 1; break;
	case O_SAMPLE_EVERY:
		o->sample_every = tool_opt_double("sample-every", arg, 0.1,
						  3600, 0);
		break;
	case O_TEST_STALL:
		if (strcmp(arg, "homa") == 0)
			o->test_stall = P_HOMA;
		else if (strcmp(arg, "tcp") == 0)
			o->test_stall = P_TCP;
		else
			tool_opt_fail("--test-stall: expected homa or tcp, got "
				      "'%s'", arg);
		break;
	default: break;
	}
}

/* SEEN - whether option id was given (seen: counts by id - O_SERVER). */
#define SEEN(id) (seen[(id) - O_SERVER] > 0)

/* parse_mode - o->mode from argv[1]; prints --help and exits 0 when it
 * asks for help; exits 2 without it or when it names no mode. */
static void parse_mode(int argc, char **argv, struct options *o)
{
	if (argc < 2) {
		usage(stderr);
		exit(2);
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		usage(stdout);
		exit(0);
	}
	o->mode = mode_of(argv[1]);
	if (o->mode == M_NONE)
		tool_opt_fail("the first argument must be server, client or "
			      "loopback, not '%s'", argv[1]);
}

/* set_defaults - the values of the options not given (those that depend
 * on others are set once all are read). */
static void set_defaults(struct options *o)
{
	o->port = 4000;
	o->buckets = 10;
	o->resp_size = 100;
	o->outstanding = 1;
	o->max_outstanding = 1000;
	o->test_stall = -1;
	o->warmup = -1;
	o->drain = 5;
	o->protos = (1u << P_HOMA) | (1u << P_TCP);
	o->calib_rpcs = 100;
	o->seed = 1;
}

/* read_options - apply the options argv[2..] to o, counting each in
 * seen[id - O_SERVER]; exits 0 for --help, 2 on any mistake. */
static void read_options(int argc, char **argv, struct options *o, int *seen)
{
	static const char *const mode_name[] = {
		"", "server", "client", "loopback"
	};
	int c;

	opterr = 0;
	optind = 2;
	while ((c = getopt_long(argc, argv, "h", long_opts, NULL)) != -1) {
		if (c == 'h')
			c = O_HELP;
		if (c < O_SERVER || c >= O_END)
			tool_opt_reject(long_opts, c == '?' ? optopt : 0,
					argv[optind - 1]);
		tool_opt_check_value(long_opts[c - O_SERVER].name, optarg);
		if (c == O_HELP) {
			usage(stdout);
			exit(0);
		}
		if (!(opt_modes(c) & (1u << o->mode)))
			tool_opt_fail("--%s is not an option of '%s'",
				      long_opts[c - O_SERVER].name,
				      mode_name[o->mode]);
		if (seen[c - O_SERVER]++)
			tool_opt_fail("--%s given twice",
				      long_opts[c - O_SERVER].name);
		parse_one(o, c, optarg);
	}
	if (optind < argc)
		tool_opt_fail("unexpected argument '%s'", argv[optind]);
}

/* finish_server - check the options of server mode and fill in the
 * defaults that depend on others; exits 2 on a mistake. */
static void finish_server(struct options *o, const int *seen)
{
	if (!SEEN(O_PORT))
		tool_opt_fail("server needs --port");
	if (SEEN(O_TCP_PORT) && o->no_tcp_server)
		tool_opt_fail("--tcp-port and --no-tcp exclude each other");
	if (!SEEN(O_THREADS))
		o->threads = 2;
	if (!o->tcp_port)
		o->tcp_port = o->port;
}

/* check_load - the options of client and loopback modes that exclude or
 * need each other; exits 2 on a mistake. */
static void check_load(const struct options *o, const int *seen)
{
	if (o->duration > MAX_CLIENT_S)
		tool_opt_fail("--duration: at most %d seconds per protocol in "
			      "client and loopback modes", MAX_CLIENT_S);
	if (o->mode == M_CLIENT && !SEEN(O_SERVER))
		tool_opt_fail("client needs --server ADDR:PORT");
	if (SEEN(O_WORKLOAD) == SEEN(O_SIZE))
		tool_opt_fail("give exactly one of --workload and --size");
	if (o->workload && !homa_workload_builtin(o->workload) &&
	    !file_readable(o->workload))
		tool_opt_fail("--workload: '%s' is neither w1..w5 nor a "
			      "readable CDF file", o->workload);
	if (SEEN(O_ECHO) && SEEN(O_RESP_SIZE))
		tool_opt_fail("--echo and --resp-size exclude each other");
	if (SEEN(O_RATE) + SEEN(O_LOAD_GBPS) + SEEN(O_OUTSTANDING) > 1)
		tool_opt_fail("give at most one of --rate, --load-gbps and "
			      "--outstanding");
	if (SEEN(O_MAX_OUTSTANDING) && !SEEN(O_RATE) && !SEEN(O_LOAD_GBPS))
		tool_opt_fail("--max-outstanding applies to open loop only "
			      "(--rate or --load-gbps)");
	if (SEEN(O_CLIENT_POLL) && !SEEN(O_RATE) && !SEEN(O_LOAD_GBPS))
		tool_opt_fail("--client-poll applies to open loop only "
			      "(--rate or --load-gbps)");
	if (SEEN(O_TEST_STALL) && !SEEN(O_RATE) && !SEEN(O_LOAD_GBPS))
		tool_opt_fail("--test-stall applies to open loop only "
			      "(--rate or --load-gbps)");
	if (SEEN(O_BUCKETS) && !o->workload)
		tool_opt_fail("--buckets applies to --workload only");
	if (SEEN(O_BASELINE) && (SEEN(O_CALIB_RPCS)))
		tool_opt_fail("--calib-rpcs has no use with --baseline");
}

/* finish_load - check client or loopback options after check_load and
 * fill in the defaults that depend on others; exits 2 on a mistake. */
static void finish_load(struct options *o, const int *seen)
{
	o->open_loop = SEEN(O_RATE) || SEEN(O_LOAD_GBPS);
	if (!SEEN(O_THREADS))
		o->threads = 1;
	if (!SEEN(O_TCP_CONNS))
		o->tcp_conns = o->open_loop ? OPEN_TCP_CONNS : 1;
	if (!o->open_loop && o->outstanding < o->threads)
		tool_opt_fail("--outstanding %d is fewer than --threads %d: "
			      "every thread needs one", o->outstanding,
			      o->threads);
	if (o->mode == M_LOOPBACK && !SEEN(O_SERVER_THREADS))
		o->server_threads = 2;
	if (!SEEN(O_DURATION))
		o->duration = 5;
	if (o->warmup < 0)
		o->warmup = o->duration / 5 < 1 ? o->duration / 5 : 1;
	if (o->mode == M_CLIENT) {
		if (!o->tcp_port)
			o->tcp_port = ntohs(o->server.in4.sin_port);
	} else if (!o->tcp_port) {
		o->tcp_port = o->port;
	}
}

void parse_options(int argc, char **argv, struct options *o)
{
	int seen[O_END - O_SERVER] = { 0 };

	memset(o, 0, sizeof(*o));
	tool_opt_program(PROG);
	parse_mode(argc, argv, o);
	set_defaults(o);
	read_options(argc, argv, o, seen);
	if (o->mode == M_SERVER) {
		finish_server(o, seen);
		return;
	}
	check_load(o, seen);
	finish_load(o, seen);
}
