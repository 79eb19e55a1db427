// SPDX-License-Identifier: BSD-2-Clause
/*
 * homa-faults - fault campaigns in the simulator: runs the real
 * Homa core under seeded faults (drop, duplicate, reorder, delay, corrupt,
 * partitions, host restarts), one run per seed, and checks the invariants
 * of src/sim/sim_campaign.h on every run.  A violation prints the seed and
 * the exact command that reproduces it; the exit status is then 1.  Bad
 * options: a message on stderr and exit status 2.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sim_campaign.h"
#include "sim_stats.h"

struct options {
	struct sim_campaign_opts c;
	uint64_t first, count;
	unsigned seed_timeout;     /* wall-clock seconds per seed (0: none) */
	bool verbose;
};

/* What the handlers print when a seed runs too long or crashes
 * (formatted before the seed starts: a handler may only write them). */
static char watchdog_text[1024], crash_text[1024];
static size_t watchdog_len, crash_len;

/* on_alarm - a seed ran past --seed-timeout: the core (or the simulator)
 * loops.  Print the seed and its command, exit 1. */
static void on_alarm(int sig)
{
	ssize_t n;

	(void)sig;
	n = write(STDOUT_FILENO, watchdog_text, watchdog_len);
	(void)n;
	_exit(1);
}

/* on_crash - a seed crashed (memory corruption, an assertion): print the
 * seed and its command, then die of the signal as before. */
static void on_crash(int sig)
{
	ssize_t n = write(STDOUT_FILENO, crash_text, crash_len);

	(void)n;
	signal(sig, SIG_DFL);
	raise(sig);
}

/* set_text - copy the formatted length n of buf (cap bytes) into *len. */
static void set_text(size_t *len, int n, size_t cap)
{
	*len = n < 0 ? 0 : (size_t)n < cap ? (size_t)n : cap - 1;
}

/* usage - the help text to f. */
static void usage(FILE *f)
{
	fprintf(f,
"usage: homa-faults [options]\n"
"Runs the Homa core in the network simulator under seeded faults and\n"
"checks invariants on every run.  One seed derives everything: the faults\n"
"(drop, duplicate, reorder, delay, corrupted payloads and headers,\n"
"partitions, host restarts with their state lost), their timing, the\n"
"traffic and a few settings.  Each run has a fault phase, then a healed\n"
"phase whose requests must all complete, then a quiet period after which\n"
"nothing may be left over.  Invariants: every RPC completes exactly once,\n"
"with exactly its bytes, or fails with ETIMEDOUT (fault phase only), or is\n"
"lost with its restarted client; no response reaches another RPC; no\n"
"request is executed twice by one server incarnation while it may hold\n"
"the RPC; no endpoint exceeds max_rpcs; at the end no RPC, bpage or\n"
"packet is left.\n"
"\n"
"Seeds:\n"
"  --seed N            one seed\n"
"  --seeds A..B        seeds A to B, both included\n"
"  --from A --count N  seeds A to A+N-1 [--from 1 --count 100]\n"
"Each run:\n"
"  --hosts N           hosts on one switch, 2..64 [4]\n"
"  --messages N        requests in the fault phase [40]\n"
"  --heal-messages N   requests in the healed phase [10]\n"
"  --priorities N      1..8 [8]\n"
"  --pacer on|off      as in homa-sim [on]\n"
"  --quiet-restarts on|off  on: a restarted host stays down longer than\n"
"                      any packet can live in the network (TCP's quiet\n"
"                      time), so no packet of its previous life reaches\n"
"                      it or its peers after it starts again; off: it may\n"
"                      come back at once [on]\n"
"  --set NAME=VALUE    a core setting for every seed, over the seed's own\n"
"                      (homa-config lists names); up to 8\n"
"  --escapes on|off    off: no corruption is let past the receiver's\n"
"                      checksum on purpose, as with the UDP datapath (a\n"
"                      change that keeps the checksum still passes) [on]\n"
"Output:\n"
"  --verbose           each run's settings, faults and counters\n"
"  --seed-timeout S    wall-clock seconds a seed may take before it is\n"
"                      reported as hanging (0: no limit) [60]\n"
"  --trace HOST:ID     print every packet and event of the RPC with that\n"
"                      client host and client id (as a violation names\n"
"                      it); --trace all prints every packet\n"
"  --help              this text\n"
"Exit status: 0 no violation, 1 a violation (its seed and the command to\n"
"reproduce it are printed), 2 bad options.  A seed that hangs or crashes\n"
"ends the run after its seed and command are printed.\n");
}

/* fail - report a bad command line and exit 2. */
static void fail(const char *what, const char *arg)
{
	fprintf(stderr, "homa-faults: %s '%s'\nTry 'homa-faults --help'.\n",
		what, arg);
	exit(2);
}

/* parse_u64 - text as a whole decimal number in [min, max], or exit 2. */
static uint64_t parse_u64(const char *opt, const char *text, uint64_t min,
			  uint64_t max)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(text, &end, 10);
	if (errno || end == text || *end || text[0] == '-' || v < min ||
	    v > max) {
		fprintf(stderr, "homa-faults: %s: '%s' is not a whole number "
			"in %llu..%llu\nTry 'homa-faults --help'.\n", opt, text,
			(unsigned long long)min, (unsigned long long)max);
		exit(2);
	}
	return v;
}

/* parse_trace - "HOST:ID" or "all" into the campaign options. */
static void parse_trace(struct sim_campaign_opts *c, const char *text)
{
	const char *colon = strchr(text, ':');
	char h[16];

	c->trace = stdout;
	if (strcmp(text, "all") == 0)
		return;
	if (!colon || (size_t)(colon - text) >= sizeof(h))
		fail("--trace: neither HOST:ID nor all:", text);
	memcpy(h, text, (size_t)(colon - text));
	h[colon - text] = '\0';
	c->trace_host = (uint32_t)parse_u64("--trace", h, 0, 65535);
	c->trace_id = parse_u64("--trace", colon + 1, 1, UINT64_MAX);
}

/* parse_set - "NAME=VALUE", a core setting for every seed, or exit 2 (the
 * name is copied to static storage). */
static void parse_set(struct sim_campaign_opts *c, const char *text)
{
	static char names[SIM_CAMPAIGN_MAX_SETS][64];
	const struct homa_config_info *info;
	const char *eq = strchr(text, '=');
	size_t len = eq ? (size_t)(eq - text) : 0;
	char *name;

	if (c->nsets == SIM_CAMPAIGN_MAX_SETS)
		fail("--set: too many settings at", text);
	if (!eq || len == 0 || len >= sizeof(names[0]))
		fail("--set: not NAME=VALUE:", text);
	name = names[c->nsets];
	memcpy(name, text, len);
	name[len] = '\0';
	info = homa_config_info_find(name);
	if (!info)
		fail("--set: unknown core setting", name);
	c->set_name[c->nsets] = name;
	c->set_value[c->nsets] = (int64_t)parse_u64("--set", eq + 1,
						   (uint64_t)info->min,
						   (uint64_t)info->max);
	c->nsets++;
}

/* parse_range - "A..B" into first and count, or exit 2. */
static void parse_range(struct options *o, const char *text)
{
	const char *dots = strstr(text, "..");
	char a[32];
	uint64_t first, last;

	if (!dots || (size_t)(dots - text) >= sizeof(a))
		fail("--seeds: not a range A..B:", text);
	memcpy(a, text, (size_t)(dots - text));
	a[dots - text] = '\0';
	first = parse_u64("--seeds", a, 0, UINT64_MAX - 1);
	last = parse_u64("--seeds", dots + 2, first, UINT64_MAX - 1);
	o->first = first;
	o->count = last - first + 1;
}

/* apply - one option with its value; returns false when opt is unknown. */
static bool apply(struct options *o, const char *opt, const char *v)
{
	if (strcmp(opt, "--seed") == 0) {
		o->first = parse_u64(opt, v, 0, UINT64_MAX - 1);
		o->count = 1;
	} else if (strcmp(opt, "--seeds") == 0) {
		parse_range(o, v);
	} else if (strcmp(opt, "--from") == 0) {
		o->first = parse_u64(opt, v, 0, UINT64_MAX - 1);
	} else if (strcmp(opt, "--count") == 0) {
		o->count = parse_u64(opt, v, 1, 100000000);
	} else if (strcmp(opt, "--hosts") == 0) {
		o->c.hosts = (uint32_t)parse_u64(opt, v, 2,
						 SIM_FAULT_MAX_HOSTS);
	} else if (strcmp(opt, "--messages") == 0) {
		o->c.messages = parse_u64(opt, v, 1, 100000);
	} else if (strcmp(opt, "--heal-messages") == 0) {
		o->c.heal_messages = parse_u64(opt, v, 0, 100000);
	} else if (strcmp(opt, "--priorities") == 0) {
		o->c.priorities = (int)parse_u64(opt, v, 1, 8);
	} else if (strcmp(opt, "--seed-timeout") == 0) {
		o->seed_timeout = (unsigned)parse_u64(opt, v, 0, 86400);
	} else if (strcmp(opt, "--quiet-restarts") == 0) {
		if (strcmp(v, "on") != 0 && strcmp(v, "off") != 0)
			fail("--quiet-restarts: neither on nor off:", v);
		o->c.fast_restarts = strcmp(v, "off") == 0;
	} else if (strcmp(opt, "--escapes") == 0) {
		if (strcmp(v, "on") != 0 && strcmp(v, "off") != 0)
			fail("--escapes: neither on nor off:", v);
		o->c.no_escapes = strcmp(v, "off") == 0;
	} else if (strcmp(opt, "--set") == 0) {
		parse_set(&o->c, v);
	} else if (strcmp(opt, "--trace") == 0) {
		parse_trace(&o->c, v);
	} else if (strcmp(opt, "--pacer") == 0) {
		if (strcmp(v, "on") != 0 && strcmp(v, "off") != 0)
			fail("--pacer: neither on nor off:", v);
		o->c.pacer_off = strcmp(v, "off") == 0;
	} else {
		return false;
	}
	return true;
}

/* parse_args - fill o from argv, or exit 2 on a bad option. */
static void parse_args(struct options *o, int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		const char *arg = argv[i], *eq = strchr(arg, '='), *val;
		char opt[32];
		size_t len = eq ? (size_t)(eq - arg) : strlen(arg);

		if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
			usage(stdout);
			exit(0);
		}
		if (strcmp(arg, "--verbose") == 0) {
			o->verbose = true;
			continue;
		}
		if (strncmp(arg, "--", 2) != 0 || len >= sizeof(opt))
			fail("unknown argument", arg);
		memcpy(opt, arg, len);
		opt[len] = '\0';
		if (eq)
			val = eq + 1;
		else if (i + 1 < argc)
			val = argv[++i];
		else
			fail("option needs a value:", opt);
		if (strncmp(val, "--", 2) == 0)
			fail("option needs a value:", opt);
		if (!apply(o, opt, val))
			fail("unknown option", opt);
	}
}

/* format_command - the command line that repeats seed with o's settings,
 * into buf (cap bytes). */
static void format_command(char *buf, size_t cap, const struct options *o,
			   uint64_t seed)
{
	size_t n;
	int i;

	n = (size_t)snprintf(buf, cap, "homa-faults --seed %llu --hosts %u "
		"--messages %llu --heal-messages %llu --priorities %d --pacer "
		"%s --escapes %s --quiet-restarts %s",
		(unsigned long long)seed, o->c.hosts,
		(unsigned long long)o->c.messages,
		(unsigned long long)o->c.heal_messages, o->c.priorities,
		o->c.pacer_off ? "off" : "on", o->c.no_escapes ? "off" : "on",
		o->c.fast_restarts ? "off" : "on");
	for (i = 0; i < o->c.nsets && n < cap; i++)
		n += (size_t)snprintf(buf + n, cap - n, " --set %s=%lld",
				      o->c.set_name[i],
				      (long long)o->c.set_value[i]);
	if (n < cap)
		snprintf(buf + n, cap - n, " --verbose\n");
}

/* arm_watchdog - before seed: the messages of a hang and of a crash, and
 * the alarm. */
static void arm_watchdog(const struct options *o, uint64_t seed)
{
	char cmd[768];

	format_command(cmd, sizeof(cmd), o, seed);
	set_text(&watchdog_len, snprintf(watchdog_text, sizeof(watchdog_text),
		 "VIOLATION seed %llu: still running after %u s of wall-clock "
		 "time (a loop in the core or the simulator)\n  reproduce: "
		 "%s", (unsigned long long)seed, o->seed_timeout, cmd),
		 sizeof(watchdog_text));
	set_text(&crash_len, snprintf(crash_text, sizeof(crash_text),
		 "VIOLATION seed %llu: crashed (memory corruption or a failed "
		 "assertion; run it under a sanitizer build)\n  reproduce: %s",
		 (unsigned long long)seed, cmd), sizeof(crash_text));
	fflush(stdout);
	if (o->seed_timeout)
		alarm(o->seed_timeout);
}

/* Totals over the seeds. */
struct totals {
	uint64_t runs, bad, violations, rpcs, ok, failed, lost, again;
	uint64_t drops, dups, corrupts, escapes, partitioned, restarts;
	uint64_t events;
	uint64_t resent, resends, ctrl, dup_data;  /* core counters */
	uint64_t done_runs, done_after_heal_ns;    /* runs all done in time;
						    * their heal-to-done sum */
};

/* add - r's counts into t. */
static void add(struct totals *t, const struct sim_campaign_result *r)
{
	t->runs++;
	t->bad += r->v.count > 0;
	t->violations += r->v.count;
	t->rpcs += r->c.generated;
	t->ok += r->c.responses;
	t->failed += r->c.client_errors;
	t->lost += r->c.lost;
	t->again += r->c.reexecutions;
	t->drops += r->c.fault_drops;
	t->dups += r->c.fault_dups;
	t->corrupts += r->c.fault_corrupts;
	t->escapes += r->c.fault_escapes;
	t->partitioned += r->c.partition_drops;
	t->restarts += r->c.restarts;
	t->events += r->c.events;
	t->resent += r->c.core[HOMA_STAT_resent_packets];
	t->resends += r->c.core[HOMA_STAT_packets_sent_RESEND];
	t->ctrl += sim_ctrl_packets(&r->c);
	t->dup_data += r->c.core[HOMA_STAT_drop_duplicate_data];
	if (r->done_ns) {
		t->done_runs++;
		t->done_after_heal_ns += r->done_ns > r->heal_ns ?
					 r->done_ns - r->heal_ns : 0;
	}
}

/* wall_now - seconds on a monotonic clock. */
static double wall_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* run_seeds - run every seed of o; returns the exit status. */
static int run_seeds(const struct options *o)
{
	struct sim_campaign_result r;
	struct totals t;
	double t0 = wall_now();
	char err[256];
	uint64_t i;
	int k;

	memset(&t, 0, sizeof(t));
	for (i = 0; i < o->count; i++) {
		uint64_t seed = o->first + i;
		char cmd[768];
		int rc;

		arm_watchdog(o, seed);
		rc = sim_campaign_run(&o->c, seed, &r, err, sizeof(err));
		alarm(0);

		if (rc == -EINVAL) {
			fprintf(stderr, "homa-faults: %s\n", err);
			return 2;
		}
		if (rc) {
			fprintf(stderr, "homa-faults: seed %llu: %s\n",
				(unsigned long long)seed, err);
			return 1;
		}
		add(&t, &r);
		if (o->verbose)
			sim_campaign_print(stdout, &r);
		if (r.v.count == 0)
			continue;
		printf("VIOLATION seed %llu: %llu invariant violations\n",
		       (unsigned long long)seed,
		       (unsigned long long)r.v.count);
		for (k = 0; k < r.v.kept; k++)
			printf("  %s\n", r.v.text[k]);
		format_command(cmd, sizeof(cmd), o, seed);
		printf("  reproduce: %s", cmd);
		fflush(stdout);
	}
	printf("homa-faults: seeds %llu..%llu: %llu runs, %llu with "
	       "violations (%llu violations); %llu RPCs: %llu ok, %llu failed "
	       "(ETIMEDOUT), %llu lost in restarts, %llu executed again; "
	       "faults: %llu drops, %llu duplicates, %llu corruptions (%llu "
	       "past the checksum), %llu partitioned, %llu restarts; %llu "
	       "events in %.1f s\n",
	       (unsigned long long)o->first,
	       (unsigned long long)(o->first + o->count - 1),
	       (unsigned long long)t.runs, (unsigned long long)t.bad,
	       (unsigned long long)t.violations, (unsigned long long)t.rpcs,
	       (unsigned long long)t.ok, (unsigned long long)t.failed,
	       (unsigned long long)t.lost, (unsigned long long)t.again,
	       (unsigned long long)t.drops, (unsigned long long)t.dups,
	       (unsigned long long)t.corrupts, (unsigned long long)t.escapes,
	       (unsigned long long)t.partitioned,
	       (unsigned long long)t.restarts, (unsigned long long)t.events,
	       wall_now() - t0);
	printf("homa-faults: core: %llu DATA packets resent, %llu RESENDs, "
	       "%llu control packets, %llu duplicate DATA dropped; every RPC "
	       "done %.3f ms after the heal on average (%llu runs)\n",
	       (unsigned long long)t.resent, (unsigned long long)t.resends,
	       (unsigned long long)t.ctrl, (unsigned long long)t.dup_data,
	       t.done_runs ? t.done_after_heal_ns / 1e6 / t.done_runs : 0.0,
	       (unsigned long long)t.done_runs);
	return t.bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct workload_dist requests, replies;
	struct options o;
	int rc;

	memset(&o, 0, sizeof(o));
	sim_campaign_defaults(&o.c);
	o.first = 1;
	o.count = 100;
	o.seed_timeout = 60;
	parse_args(&o, argc, argv);
	signal(SIGALRM, on_alarm);
	signal(SIGSEGV, on_crash);
	signal(SIGBUS, on_crash);
	signal(SIGABRT, on_crash);
	signal(SIGFPE, on_crash);
	if (o.count > UINT64_MAX - o.first) {
		fprintf(stderr, "homa-faults: the seed range runs past "
			"2^64\nTry 'homa-faults --help'.\n");
		return 2;
	}
	if (sim_campaign_workloads(&requests, &replies) != 0) {
		fprintf(stderr, "homa-faults: out of memory\n");
		return 1;
	}
	o.c.requests = &requests;
	o.c.replies = &replies;
	rc = run_seeds(&o);
	workload_dist_free(&requests);
	workload_dist_free(&replies);
	return rc;
}
