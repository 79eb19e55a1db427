// SPDX-License-Identifier: BSD-2-Clause
/*
 * homa-hostile - a hostile host: sends malformed, random and unwanted Homa
 * packets at a steady rate to Homa sockets (servers or clients) over UDP
 * or raw IP (protocol 146), to test that a real deployment survives them
 * (scripts/soak.sh runs it from a third host of its testbed).
 *
 * Each packet is one of these kinds, drawn at random with equal weight
 * (--kinds keeps some):
 *   random     0..120 random bytes
 *   truncated  the start of a well-formed header of a random type, cut
 *              below that type's header length
 *   bad-type   a 28-byte common header of a type outside 0x10..0x18
 *   bad-data   DATA with a random message length (0, over 1,000,000, or
 *              any), offset and payload length: mostly inconsistent
 *   half-open  the first DATA packet of a request of 10,000..1,000,000
 *              bytes with a fresh id, never continued
 *   request    a whole small request (4..1,000 bytes, offset 0) with a
 *              fresh id, which a server answers and then holds until it
 *              times out (its client never acknowledges); its first 4
 *              bytes are a number 0..--ask-max (the response length a
 *              homa-perf server reads there)
 *   control    a full-length GRANT, RESEND, RPC_UNKNOWN, BUSY, CUTOFFS,
 *              FREEZE, NEED_ACK or ACK with a random id and random fields
 * The header's source port is the sending socket's own (UDP) in 3 packets
 * of 4 and random otherwise.  The wire format is docs/protocol.md's,
 * encoded here on its own (not with the library's encoder), so that a
 * mistake of the encoder cannot hide one of the decoder.
 *
 * Options: --help.  Exit status 0 when the run ended (duration or SIGINT /
 * SIGTERM); 1 when the sockets cannot be made; 2 on bad options.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tool_bytes.h"
#include "tool_clock.h"
#include "tool_opts.h"
#include "workload_rng.h"

#define PROG            "homa-hostile"
#define MAX_TARGETS     32
#define UDP_SOCKS       4
#define IPPROTO_HOMA    146
#define COMMON_LEN      28
#define DATA_HDR        56
#define MAX_PKT         1500
#define MAX_MSG_LEN     1000000u

/* Type codes and full header lengths of docs/protocol.md, section 2. */
enum { T_DATA = 0x10, T_GRANT, T_RESEND, T_RPC_UNKNOWN, T_BUSY, T_CUTOFFS,
       T_FREEZE, T_NEED_ACK, T_ACK, T_END };
static const size_t hdr_len[T_END - T_DATA] = { DATA_HDR, 33, 37, 28, 28,
						 62, 28, 28, 80 };

enum kind { K_RANDOM, K_TRUNCATED, K_BAD_TYPE, K_BAD_DATA, K_HALF_OPEN,
	    K_REQUEST, K_CONTROL, K_COUNT };
static const char *const kind_name[K_COUNT] = {
	"random", "truncated", "bad-type", "bad-data", "half-open",
	"request", "control"
};

struct options {
	struct sockaddr_in target[MAX_TARGETS];
	int ntargets;
	double rate;            /* packets per second */
	double duration;        /* seconds; 0: until a signal */
	uint64_t seed;
	uint32_t ask_max;       /* a request's first 4 bytes: 0..ask_max */
	int kinds[K_COUNT];     /* the kinds to send (--kinds) */
	int nkinds;
	int raw_ip;             /* 1: IP protocol 146; 0: UDP */
};

static volatile sig_atomic_t stop;

/* on_signal - SIGINT/SIGTERM: end the run after the current packet. */
static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* usage - the help text to f. */
static void usage(FILE *f)
{
	fprintf(f,
"usage: homa-hostile --target ADDR:PORT [--target ADDR:PORT ...]\n"
"                    [--rate N] [--duration S] [--seed N]\n"
"                    [--transport udp|ip]\n"
"Sends malformed, random and unwanted Homa packets to the targets (IPv4\n"
"Homa sockets: servers or clients), each packet to a target drawn at\n"
"random, at a steady rate: random bytes, truncated headers, unknown types,\n"
"inconsistent DATA, half-open requests, whole small requests nobody\n"
"acknowledges, and control packets with random ids and fields.\n"
"\n"
"  --target ADDR:PORT  a Homa socket to send to (up to %d)\n"
"  --rate N            packets per second (default 1000)\n"
"  --duration S        seconds to run (default 0: until SIGINT/SIGTERM)\n"
"  --seed N            random seed (default 1): the same seed sends the\n"
"                      same packets in the same order\n"
"  --transport udp|ip  Homa over UDP (default), or as IP protocol 146 (a\n"
"                      raw socket: root or CAP_NET_RAW)\n"
"  --kinds K,K,...     send only these kinds (default all: random,\n"
"                      truncated, bad-type, bad-data, half-open, request,\n"
"                      control)\n"
"  --ask-max N         the first 4 bytes of a request (big-endian) are a\n"
"                      random number 0..N (default 1000): homa-perf's\n"
"                      server answers with that many bytes, so a large N\n"
"                      makes each request ask for a large response\n"
"  --help              this text\n"
"At the end it prints one line: packets sent by kind and send errors.\n"
"Exit status: 0 the run ended (duration or signal); 1 the sockets could\n"
"not be made; 2 bad options.\n", MAX_TARGETS);
}

/* parse_target - "A.B.C.D:PORT" into *a, or exit 2. */
static void parse_target(const char *arg, struct sockaddr_in *a)
{
	char host[32];
	const char *colon = strrchr(arg, ':');
	size_t n = colon ? (size_t)(colon - arg) : 0;

	if (n == 0 || n >= sizeof(host))
		tool_opt_fail("--target: expected ADDR:PORT, got '%s'", arg);
	memcpy(host, arg, n);
	host[n] = '\0';
	memset(a, 0, sizeof(*a));
	a->sin_family = AF_INET;
	if (inet_pton(AF_INET, host, &a->sin_addr) != 1)
		tool_opt_fail("--target: '%s' is not an IPv4 address", host);
	a->sin_port = htons((uint16_t)tool_opt_long("target port", colon + 1,
						    1, 65535));
}

/* parse_kinds - the comma-separated kind names of arg into o->kinds, or
 * exit 2. */
static void parse_kinds(const char *arg, struct options *o)
{
	char buf[256], *save = NULL, *w;
	int k;

	if (strlen(arg) >= sizeof(buf))
		tool_opt_fail("--kinds: too long");
	strcpy(buf, arg);
	o->nkinds = 0;
	for (w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		for (k = 0; k < K_COUNT && strcmp(w, kind_name[k]) != 0; k++)
			;
		if (k == K_COUNT)
			tool_opt_fail("--kinds: no kind '%s'", w);
		if (o->nkinds == K_COUNT)
			tool_opt_fail("--kinds: a kind given twice");
		o->kinds[o->nkinds++] = k;
	}
	if (o->nkinds == 0)
		tool_opt_fail("--kinds: empty");
}

/* known_option - whether a is one of the options that take a value. */
static int known_option(const char *a)
{
	static const char *const names[] = {
		"--target", "--rate", "--duration", "--seed", "--transport",
		"--ask-max", "--kinds"
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(a, names[i]) == 0)
			return 1;
	return 0;
}

/* parse_options - o from argv; exits 0 after --help, 2 on a mistake. */
static void parse_options(int argc, char **argv, struct options *o)
{
	int i;

	memset(o, 0, sizeof(*o));
	o->rate = 1000;
	o->seed = 1;
	o->ask_max = 1000;
	for (int k = 0; k < K_COUNT; k++)
		o->kinds[k] = k;
	o->nkinds = K_COUNT;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			usage(stdout);
			exit(0);
		}
		if (strncmp(a, "--", 2) != 0)
			tool_opt_fail("unexpected argument '%s'", a);
		if (!known_option(a))
			tool_opt_fail("unknown option '%s'", a);
		if (!v)
			tool_opt_fail("%s needs a value", a);
		tool_opt_check_value(a + 2, v);
		i++;
		if (strcmp(a, "--target") == 0) {
			if (o->ntargets == MAX_TARGETS)
				tool_opt_fail("--target: at most %d",
					      MAX_TARGETS);
			parse_target(v, &o->target[o->ntargets++]);
		} else if (strcmp(a, "--rate") == 0) {
			o->rate = tool_opt_double("rate", v, 0, 1e6, 1);
		} else if (strcmp(a, "--duration") == 0) {
			o->duration = tool_opt_double("duration", v, 0, 1e6,
						      0);
		} else if (strcmp(a, "--seed") == 0) {
			o->seed = (uint64_t)tool_opt_long("seed", v, 0,
							  0x7fffffffL);
		} else if (strcmp(a, "--transport") == 0) {
			if (strcmp(v, "udp") != 0 && strcmp(v, "ip") != 0)
				tool_opt_fail("--transport: udp or ip, not "
					      "'%s'", v);
			o->raw_ip = strcmp(v, "ip") == 0;
		} else if (strcmp(a, "--kinds") == 0) {
			parse_kinds(v, o);
		} else if (strcmp(a, "--ask-max") == 0) {
			o->ask_max = (uint32_t)tool_opt_long("ask-max", v, 0,
							     0xffffffffL);
		}
	}
	if (o->ntargets == 0)
		tool_opt_fail("give at least one --target ADDR:PORT");
}

/* ---- packets (docs/protocol.md) ---- */

/* fill_random - n random bytes from r into p. */
static void fill_random(struct workload_rng *r, uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)workload_rng_next(r);
}

/* common - the common header of type with sender_id id into b (zeroed up
 * to the type's header length, or 28 bytes for an unknown type); returns
 * that length. */
static size_t common(uint8_t *b, uint16_t sport, uint16_t dport,
		     uint8_t type, uint64_t id, uint32_t seq)
{
	size_t len = type >= T_DATA && type < T_END ? hdr_len[type - T_DATA]
						    : COMMON_LEN;

	memset(b, 0, len);
	tool_put_be16(b, sport);
	tool_put_be16(b + 2, dport);
	tool_put_be32(b + 4, seq);
	b[11] = type;
	b[12] = type == T_DATA ? 0xE0 : 0x50;
	b[13] = 6;
	tool_put_be16(b + 18, 0xb97d);
	tool_put_be64(b + 20, id);
	return len;
}

/* data - a DATA header (message msg_len, payload at off) and plen random
 * payload bytes into b; returns the packet's length. */
static size_t data(struct workload_rng *r, uint8_t *b, uint16_t sport,
		   uint16_t dport, uint64_t id, uint32_t msg_len,
		   uint32_t off, size_t plen)
{
	common(b, sport, dport, T_DATA, id, off);
	tool_put_be32(b + 28, msg_len);
	tool_put_be32(b + 32, msg_len < 10000 ? msg_len : 10000);
	tool_put_be32(b + 52, off);
	fill_random(r, b + DATA_HDR, plen);
	return DATA_HDR + plen;
}

/* fresh_id - an even (request) id not likely to be any real RPC's. */
static uint64_t fresh_id(struct workload_rng *r)
{
	return workload_rng_next(r) & ~(uint64_t)1;
}

/* make_packet - a packet of kind k from sport to dport into b (MAX_PKT
 * bytes; a request's first 4 payload bytes at most ask_max); returns its
 * length. */
static size_t make_packet(struct workload_rng *r, enum kind k, uint8_t *b,
			  uint16_t sport, uint16_t dport, uint32_t ask_max)
{
	uint8_t type = (uint8_t)(T_DATA + workload_rng_below(r,
							     T_END - T_DATA));
	uint32_t len, off;
	size_t n, plen;

	switch (k) {
	case K_RANDOM:
		n = (size_t)workload_rng_below(r, 121);
		fill_random(r, b, n);
		return n;
	case K_TRUNCATED:
		n = common(b, sport, dport, type, workload_rng_next(r), 0);
		fill_random(r, b + COMMON_LEN, n - COMMON_LEN);
		return (size_t)workload_rng_below(r, n);
	case K_BAD_TYPE:
		type = (uint8_t)workload_rng_below(r, 256 - 9);
		if (type >= T_DATA)
			type += 9;
		return common(b, sport, dport, type, workload_rng_next(r), 0);
	case K_BAD_DATA:
		switch (workload_rng_below(r, 3)) {
		case 0: len = 0; break;
		case 1: len = MAX_MSG_LEN + 1 +
			      (uint32_t)workload_rng_below(r, 1u << 30); break;
		default: len = (uint32_t)workload_rng_next(r); break;
		}
		off = (uint32_t)workload_rng_next(r) >> workload_rng_below(r, 32);
		plen = (size_t)workload_rng_below(r, MAX_PKT - DATA_HDR + 1);
		return data(r, b, sport, dport, workload_rng_next(r), len, off,
			    plen);
	case K_HALF_OPEN:
		len = 10000 + (uint32_t)workload_rng_below(r, MAX_MSG_LEN -
							    10000 + 1);
		return data(r, b, sport, dport, fresh_id(r), len, 0, 1000);
	case K_REQUEST:
		len = 4 + (uint32_t)workload_rng_below(r, 997);
		n = data(r, b, sport, dport, fresh_id(r), len, 0, len);
		tool_put_be32(b + DATA_HDR, (uint32_t)workload_rng_below(r,
					(uint64_t)ask_max + 1));
		return n;
	default:
		type = (uint8_t)(T_GRANT + workload_rng_below(r,
							      T_END - T_GRANT));
		n = common(b, sport, dport, type, workload_rng_next(r), 0);
		fill_random(r, b + COMMON_LEN, n - COMMON_LEN);
		return n;
	}
}

/* ---- sending ---- */

struct sender {
	int fd[UDP_SOCKS];      /* UDP: bound to ephemeral ports; IP: fd[0] */
	uint16_t port[UDP_SOCKS];
	int nfd;
};

/* sender_open - the sockets of o's transport into s.  Returns 0, or -1
 * after printing why (nothing left open). */
static int sender_open(const struct options *o, struct sender *s)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t alen = sizeof(a);
	int small = 4096, i, fd;

	s->nfd = 0;
	for (i = 0; i < (o->raw_ip ? 1 : UDP_SOCKS); i++) {
		fd = o->raw_ip ? socket(AF_INET, SOCK_RAW, IPPROTO_HOMA)
			       : socket(AF_INET, SOCK_DGRAM, 0);
		if (fd < 0) {
			fprintf(stderr, PROG ": socket: %s%s\n",
				strerror(errno), o->raw_ip && errno == EPERM
				? " (raw IP needs root or CAP_NET_RAW)" : "");
			goto fail;
		}
		s->fd[s->nfd] = fd;
		s->port[s->nfd++] = 0;
		/* What comes back (responses, errors) is not read. */
		(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small,
				 sizeof(small));
		if (o->raw_ip)
			continue;
		a.sin_port = 0;
		alen = sizeof(a);
		if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
		    getsockname(fd, (struct sockaddr *)&a, &alen) < 0) {
			fprintf(stderr, PROG ": bind: %s\n", strerror(errno));
			goto fail;
		}
		s->port[s->nfd - 1] = ntohs(a.sin_port);
	}
	return 0;
fail:
	while (s->nfd > 0)
		close(s->fd[--s->nfd]);
	return -1;
}

/* run - send until the duration is over or a signal came; counts packets
 * per kind into sent[] and failed sends into *errors. */
static void run(const struct options *o, struct sender *s,
		uint64_t *sent, uint64_t *errors)
{
	struct workload_rng r;
	uint8_t pkt[MAX_PKT];
	uint64_t t0 = tool_now_ns(), i;
	double gap = 1e9 / o->rate;

	workload_rng_seed(&r, o->seed, 0x486f7374696c65ull);
	for (i = 0; !stop; i++) {
		uint64_t due = t0 + (uint64_t)((double)i * gap);
		const struct sockaddr_in *t =
			&o->target[workload_rng_below(&r, (uint64_t)o->ntargets)];
		struct sockaddr_in to = *t;
		int j = (int)workload_rng_below(&r, (uint64_t)s->nfd);
		enum kind k = (enum kind)o->kinds[workload_rng_below(
			&r, (uint64_t)o->nkinds)];
		uint16_t sport = s->port[j];
		size_t n;

		if (o->duration > 0 && due - t0 >= (uint64_t)(o->duration * 1e9))
			break;
		if (sport == 0 || workload_rng_below(&r, 4) == 0)
			sport = (uint16_t)workload_rng_next(&r);
		n = make_packet(&r, k, pkt, sport, ntohs(t->sin_port),
				o->ask_max);
		if (o->raw_ip)
			to.sin_port = 0;        /* the port is in the header */
		tool_sleep_until(due);
		if (sendto(s->fd[j], pkt, n, 0, (const struct sockaddr *)&to,
			   sizeof(to)) < 0)
			(*errors)++;
		else
			sent[k]++;
	}
}

int main(int argc, char **argv)
{
	struct options o;
	struct sender s;
	uint64_t sent[K_COUNT] = { 0 }, errors = 0, total = 0;
	struct sigaction sa = { .sa_handler = on_signal };

	tool_opt_program(PROG);
	parse_options(argc, argv, &o);
	if (sender_open(&o, &s) < 0)
		return 1;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	run(&o, &s, sent, &errors);
	for (int k = 0; k < K_COUNT; k++)
		total += sent[k];
	printf(PROG ": sent %llu packets over %s (", (unsigned long long)total,
	       o.raw_ip ? "ip" : "udp");
	for (int k = 0; k < K_COUNT; k++)
		printf("%s%s %llu", k ? ", " : "", kind_name[k],
		       (unsigned long long)sent[k]);
	printf("); send errors %llu\n", (unsigned long long)errors);
	for (int i = 0; i < s.nfd; i++)
		close(s.fd[i]);
	return 0;
}
