// SPDX-License-Identifier: BSD-2-Clause
/*
 * homa-sim - run the Homa core in the deterministic network simulator
 * (src/sim) and print slowdown statistics: a table, or one JSON object
 * with --json.  The same options and seed print the same JSON, byte for
 * byte (wall-clock figures only with --timing).  Bad options: a message
 * on stderr and exit status 2.  The workloads W1-W5 are built in
 * (homa_workloads.h); --workload-dir reads them from files instead.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "homa.h"
#include "sim.h"
#include "sim_stats.h"
#include "workload_dist.h"
#include "homa_workloads.h"

/* Everything the command line says. */
struct options {
	struct sim_params p;
	const char *workload;
	const char *workload_dir;  /* NULL: w1..w5 built in */
	bool json, timing, hosts_given;
	bool load_given;           /* --load (excludes --gap-ns) */
	double drop;               /* --drop: chance of losing a packet */
	struct sim_fault_plan loss; /* the plan --drop gives */
};

/* usage - the help text to f. */
static void usage(FILE *f)
{
	fprintf(f,
"usage: homa-sim [options]\n"
"Simulates Homa (the real protocol core) on a network of hosts and\n"
"switches in virtual time and prints slowdown = completion time / time on\n"
"an idle network, per message-size bucket (deciles of the workload).\n"
"\n"
"Traffic:\n"
"  --workload W        w1..w5 (the Homa papers' workloads) or a CDF file\n"
"                      (\"size fraction\" lines) [w4]\n"
"  --workload-dir DIR  read w1..w5 from DIR/wN.cdf [$HOMA_SIM_WORKLOAD_DIR;\n"
"                      else the copies built into homa-sim]\n"
"  --load F            fraction of the host link, 0 < F <= 1 [0.5]\n"
"  --messages N        requests to send in all [1000]\n"
"  --warmup N          first N requests left out of the statistics [0]\n"
"  --seed N            the seed of every random choice [1]\n"
"  --reply-bytes N     size of each response [1]\n"
"  --until-ms T        stop at virtual time T ms even if not done [none]\n"
"  --gap-ns N          mean gap between two requests of a host instead\n"
"                      of the one --load gives (the output shows the\n"
"                      load that gap works out to) [from --load]\n"
"  --wait-responses on|off\n"
"                      on: the run ends when every client RPC has its\n"
"                      response or error; off: when every request has\n"
"                      reached its server or failed [off]\n"
"Network:\n"
"  --topology T        one-switch or two-tier [one-switch]\n"
"  --hosts N           hosts (two-tier: a multiple of --racks) [16; 144]\n"
"  --racks N           two-tier: racks [9]\n"
"  --spines N          two-tier: spine switches [4]\n"
"  --link-gbps G       host link rate [10]\n"
"  --uplink-gbps G     two-tier: ToR-spine link rate [40]\n"
"  --bottleneck-gbps G a slow path the hosts do not know of: the switch\n"
"                      ports towards hosts run at G while host NICs and\n"
"                      the core's link_mbps stay at --link-gbps; --load\n"
"                      is a fraction of G [--link-gbps]\n"
"  --delay-ns N        propagation delay of every link [1000]\n"
"  --drop F            every packet a host sends is lost with chance F\n"
"                      (0 < F <= 0.5), all through the run; failed RPCs\n"
"                      (ETIMEDOUT) are no violation then [no loss]\n"
"  --buffer-kb N       buffer of each switch egress port, shared by its\n"
"                      priority queues [1024]\n"
"  --priorities N      1..8 priority levels: switch queues and the core's\n"
"                      num_priorities (1 = one FIFO queue) [8]\n"
"  --pacer on|off      on: the core's pacer meters paced DATA into the\n"
"                      NIC's FIFO: a packet leaves when the estimated\n"
"                      backlog of the link is at most max_nic_queue_ns;\n"
"                      simulated hosts default to 0 (their pacer wakes\n"
"                      exactly when the link goes idle), --set\n"
"                      max_nic_queue_ns=5000 gives the kernel's 5 us\n"
"                      allowance; off: the core does not throttle\n"
"                      (flag HOMA_FLAG_DONT_THROTTLE) and the host moves\n"
"                      every packet the endpoint produces into the NIC's\n"
"                      FIFO at once [on]\n"
"Protocol (the core's settings):\n"
"  --overcommit K      max_overcommit [8]\n"
"  --unsched-bytes N   unsched_bytes [40000]\n"
"  --max-incoming N    max_incoming [400000]\n"
"  --cutoffs C         unscheduled priorities by length: core (the\n"
"                      core's cutoffs), workload (equal unscheduled bytes\n"
"                      per level) or auto (core with 8 priorities, else\n"
"                      workload) [auto]\n"
"  --region-mb N       receive buffer region per host [64]\n"
"  --set NAME=VALUE    any core setting by name, as HOMA_<NAME> takes it\n"
"                      (decimal or 0x hex); repeatable; homa-config lists\n"
"                      names and ranges.  Not link_mbps, num_priorities,\n"
"                      max_sched_prio, unsched_cutoff0..7 (from the\n"
"                      options above); --pacer sets the flag\n"
"                      HOMA_FLAG_DONT_THROTTLE.  homa-sim's defaults are\n"
"                      the core's but max_nic_queue_ns 0 (--pacer).\n"
"                      E.g. --set alive_timeout_ticks=100 --set\n"
"                      max_peer_probes=64\n"
"Ablations: --priorities 1 (no priorities), --overcommit 1 (one message\n"
"granted at a time), --pacer off (no sender pacing), --set\n"
"max_nic_queue_ns=5000 (the kernel's 5 us NIC allowance).\n"
"Slow receivers (a CPU slower than the link, packets waiting for it in a\n"
"FIFO like a socket buffer):\n"
"  --rx-ns N           CPU time per packet at a slow receiver, 0..1e9;\n"
"                      0: receivers as fast as their links [0]\n"
"  --rx-queue-kb N     its FIFO of wire bytes; a packet that does not fit\n"
"                      is dropped; at least one full packet [32768]\n"
"  --rx-hosts N        hosts 0..N-1 are slow; 0: every host [0]\n"
"  --rx-backlog on|off on: a slow receiver tells its endpoint when\n"
"                      packets wait in its FIFO, as the socket layer does;\n"
"                      off: an ablation (its own backlog looks like\n"
"                      silence) [on]\n"
"  --server-hosts N    incast: only hosts N.. send requests, each to one\n"
"                      of hosts 0..N-1; 0: every host to the others [0]\n"
"Slow servers (an application that takes a while per request; requests\n"
"wait in the endpoint meanwhile, answered with BUSY when clients ask):\n"
"  --service-ns N      time a server application takes per request,\n"
"                      0..1e12; 0: it answers at once [0]\n"
"  --service-hosts N   hosts 0..N-1 are slow; 0: every host [0]\n"
"Checking:\n"
"  --check on|off      fill every message with a pattern and check each\n"
"                      byte, and that each response completes its own RPC\n"
"                      once; a violation is printed and makes the exit\n"
"                      status 1 [on]\n"
"Output:\n"
"  --json              one JSON object instead of the table (failed:\n"
"                      requests that failed before their server took them;\n"
"                      client_errors: client RPCs that ended in an error;\n"
"                      rx_drops, max_rx_queue_bytes: the slow receivers'\n"
"                      FIFO drops and peak; core_settings: the settings\n"
"                      off the core's defaults)\n"
"  --timing            add wall-clock time and events per second to the\n"
"                      JSON (the table always shows them)\n"
"  --help              this text\n"
"Exit status: 0 the run ended (the output counts what completed), 1 an\n"
"invariant violation (printed) or a run that could not start, 2 bad\n"
"options.\n");
}

/* fail - report a bad command line (printf-style) and exit 2. */
static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2),
						       noreturn));
static void fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "homa-sim: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'homa-sim --help'.\n");
	exit(2);
}

/* parse_u64 - text as a whole decimal number in [min, max], or exit 2. */
static uint64_t parse_u64(const char *opt, const char *text, uint64_t min,
			  uint64_t max)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(text, &end, 10);
	if (errno || end == text || *end || text[0] == '-' || v < min ||
	    v > max) {
		char range[64];

		snprintf(range, sizeof(range), "%llu..%llu",
			 (unsigned long long)min, (unsigned long long)max);
		fprintf(stderr, "homa-sim: %s: '%s' is not a whole number in "
			"%s\nTry 'homa-sim --help'.\n", opt, text, range);
		exit(2);
	}
	return v;
}

/* parse_double - text as a finite number in (min, max], or exit 2. */
static double parse_double(const char *opt, const char *text, double min,
			   double max)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(text, &end);
	if (errno || end == text || *end || !isfinite(v) || v <= min ||
	    v > max) {
		fprintf(stderr, "homa-sim: %s: '%s' is not a number in "
			"(%g, %g]\nTry 'homa-sim --help'.\n", opt, text, min,
			max);
		exit(2);
	}
	return v;
}

/* gbps_to_mbps - a rate option in Gbit/s as Mbit/s. */
static uint32_t gbps_to_mbps(const char *opt, const char *text)
{
	return (uint32_t)llround(parse_double(opt, text, 0.0009, 1000.0) *
				 1000.0);
}

/* set_core - the core setting name to text, a whole number (in base 10,
 * or as strtoll's base 0 reads it when any_base) in the setting's range;
 * else exit 2 with a message that starts with what (the option) and
 * names the setting and its range. */
static void set_core(struct options *o, const char *what, const char *name,
		     const char *text, bool any_base)
{
	const struct homa_config_info *row = homa_config_info_find(name);
	long long v;
	char *end;

	if (!row)
		fail("%s: unknown core setting '%s' (homa-config lists them)",
		     what, name);
	errno = 0;
	v = strtoll(text, &end, any_base ? 0 : 10);
	if (errno || end == text || *end || v < row->min || v > row->max ||
	    homa_config_set_value(&o->p.core, name, v) != 0)
		fail("%s: '%s' is not a whole number in %lld..%lld (%s%s%s)",
		     what, text, (long long)row->min, (long long)row->max,
		     name, *row->unit ? ", " : "", row->unit);
}

/* option_of_derived - the option a core setting follows from in homa-sim
 * (which overwrites it), or NULL when --set may change it. */
static const char *option_of_derived(const char *name)
{
	static const struct {
		const char *prefix, *option;
	} derived[] = {
		{ "link_mbps", "--link-gbps" },
		{ "num_priorities", "--priorities" },
		{ "max_sched_prio", "--priorities" },
		{ "unsched_cutoff", "--cutoffs" },
	};
	size_t i;

	for (i = 0; i < sizeof(derived) / sizeof(derived[0]); i++)
		if (strncmp(name, derived[i].prefix,
			    strlen(derived[i].prefix)) == 0)
			return derived[i].option;
	return NULL;
}

/* set_by_name - --set NAME=VALUE: the core setting NAME, or exit 2 (not
 * NAME=VALUE, an unknown name, one homa-sim derives, a bad value). */
static void set_by_name(struct options *o, const char *assignment)
{
	const char *eq = strchr(assignment, '=');
	char name[64], what[80];
	size_t len = eq ? (size_t)(eq - assignment) : 0;
	const char *option;

	if (!eq || len == 0 || len >= sizeof(name))
		fail("--set: '%s' is not NAME=VALUE", assignment);
	memcpy(name, assignment, len);
	name[len] = '\0';
	if (!homa_config_info_find(name))
		fail("--set: unknown core setting '%s' (homa-config lists "
		     "them)", name);
	option = option_of_derived(name);
	if (option)
		fail("--set: homa-sim sets %s from %s", name, option);
	snprintf(what, sizeof(what), "--set %s", name);
	set_core(o, what, name, eq + 1, true);
}

/* on_off - 1 for "on", 0 for "off", else exit 2. */
static int on_off(const char *opt, const char *v)
{
	if (strcmp(v, "on") == 0)
		return 1;
	if (strcmp(v, "off") == 0)
		return 0;
	fail("%s: '%s' is neither on nor off", opt, v);
}

/* apply_net - the network options; returns false when opt is not one. */
static bool apply_net(struct options *o, const char *opt, const char *v)
{
	struct sim_params *p = &o->p;

	if (strcmp(opt, "--topology") == 0) {
		if (strcmp(v, "one-switch") == 0)
			p->topology = SIM_TOPO_ONE_SWITCH;
		else if (strcmp(v, "two-tier") == 0)
			p->topology = SIM_TOPO_TWO_TIER;
		else
			fail("--topology: '%s' is neither one-switch nor "
			     "two-tier", v);
	} else if (strcmp(opt, "--hosts") == 0) {
		p->hosts = (int)parse_u64(opt, v, 2, 65536);
		o->hosts_given = true;
	} else if (strcmp(opt, "--racks") == 0) {
		p->racks = (int)parse_u64(opt, v, 2, 4096);
	} else if (strcmp(opt, "--spines") == 0) {
		p->spines = (int)parse_u64(opt, v, 1, 256);
	} else if (strcmp(opt, "--link-gbps") == 0) {
		p->link_mbps = gbps_to_mbps(opt, v);
	} else if (strcmp(opt, "--uplink-gbps") == 0) {
		p->uplink_mbps = gbps_to_mbps(opt, v);
	} else if (strcmp(opt, "--bottleneck-gbps") == 0) {
		p->bottleneck_mbps = gbps_to_mbps(opt, v);
	} else if (strcmp(opt, "--delay-ns") == 0) {
		p->delay_ns = parse_u64(opt, v, 0, 1000000000);
	} else if (strcmp(opt, "--buffer-kb") == 0) {
		p->buffer_bytes = parse_u64(opt, v, 2, 1u << 30) * 1024;
	} else if (strcmp(opt, "--priorities") == 0) {
		p->priorities = (int)parse_u64(opt, v, 1, 8);
	} else if (strcmp(opt, "--pacer") == 0) {
		p->pacer_off = on_off(opt, v) == 0;
	} else if (strcmp(opt, "--check") == 0) {
		p->check_content = on_off(opt, v) == 1;
	} else {
		return false;
	}
	return true;
}

/* apply_traffic - the traffic and output options; returns false when
 * opt is not one. */
static bool apply_traffic(struct options *o, const char *opt, const char *v)
{
	struct sim_params *p = &o->p;

	if (strcmp(opt, "--workload") == 0)
		o->workload = v;
	else if (strcmp(opt, "--workload-dir") == 0)
		o->workload_dir = v;
	else if (strcmp(opt, "--load") == 0) {
		p->load = parse_double(opt, v, 0.0, 1.0);
		o->load_given = true;
	} else if (strcmp(opt, "--gap-ns") == 0)
		p->mean_gap_ns = parse_u64(opt, v, 1, 1000000000000ull);
	else if (strcmp(opt, "--wait-responses") == 0)
		p->wait_responses = on_off(opt, v) == 1;
	else if (strcmp(opt, "--messages") == 0)
		p->messages = parse_u64(opt, v, 1, 100000000);
	else if (strcmp(opt, "--warmup") == 0)
		p->warmup = parse_u64(opt, v, 0, 100000000);
	else if (strcmp(opt, "--seed") == 0)
		p->seed = parse_u64(opt, v, 0, UINT64_MAX);
	else if (strcmp(opt, "--reply-bytes") == 0)
		p->reply_bytes = (uint32_t)parse_u64(opt, v, 1,
						     HOMA_MAX_MESSAGE_LENGTH);
	else if (strcmp(opt, "--until-ms") == 0)
		p->until_ns = parse_u64(opt, v, 1, 1000000000) * 1000000;
	else if (strcmp(opt, "--drop") == 0)
		o->drop = parse_double(opt, v, 0.0, 0.5);
	else if (strcmp(opt, "--region-mb") == 0)
		p->region_bytes = (size_t)parse_u64(opt, v, 2, 4095) << 20;
	else
		return false;
	return true;
}

/* apply_core - the protocol options; returns false when opt is not one. */
static bool apply_core(struct options *o, const char *opt, const char *v)
{
	if (strcmp(opt, "--overcommit") == 0) {
		set_core(o, opt, "max_overcommit", v, false);
	} else if (strcmp(opt, "--unsched-bytes") == 0) {
		set_core(o, opt, "unsched_bytes", v, false);
	} else if (strcmp(opt, "--max-incoming") == 0) {
		set_core(o, opt, "max_incoming", v, false);
	} else if (strcmp(opt, "--set") == 0) {
		set_by_name(o, v);
	} else if (strcmp(opt, "--cutoffs") == 0) {
		if (strcmp(v, "auto") == 0)
			o->p.cutoffs = SIM_CUTOFFS_AUTO;
		else if (strcmp(v, "core") == 0)
			o->p.cutoffs = SIM_CUTOFFS_CORE;
		else if (strcmp(v, "workload") == 0)
			o->p.cutoffs = SIM_CUTOFFS_WORKLOAD;
		else
			fail("--cutoffs: '%s' is not auto, core or "
			     "workload", v);
	} else {
		return false;
	}
	return true;
}

/* apply_receiver - the slow-receiver and slow-server options; returns
 * false when opt is not one. */
static bool apply_receiver(struct options *o, const char *opt, const char *v)
{
	struct sim_params *p = &o->p;

	if (strcmp(opt, "--rx-ns") == 0)
		p->rx_ns = parse_u64(opt, v, 0, 1000000000);
	else if (strcmp(opt, "--rx-queue-kb") == 0)
		p->rx_queue_bytes = parse_u64(opt, v, 1, 1u << 30) * 1024;
	else if (strcmp(opt, "--rx-hosts") == 0)
		p->rx_hosts = (uint32_t)parse_u64(opt, v, 0, 65536);
	else if (strcmp(opt, "--rx-backlog") == 0)
		p->rx_backlog_quiet = on_off(opt, v) == 0;
	else if (strcmp(opt, "--server-hosts") == 0)
		p->server_hosts = (uint32_t)parse_u64(opt, v, 0, 65535);
	else if (strcmp(opt, "--service-ns") == 0)
		p->service_ns = parse_u64(opt, v, 0, 1000000000000ull);
	else if (strcmp(opt, "--service-hosts") == 0)
		p->service_hosts = (uint32_t)parse_u64(opt, v, 0, 65536);
	else
		return false;
	return true;
}

/* flag - a option without a value; returns false when opt is not one. */
static bool flag(struct options *o, const char *opt)
{
	if (strcmp(opt, "--json") == 0)
		o->json = true;
	else if (strcmp(opt, "--timing") == 0)
		o->timing = true;
	else if (strcmp(opt, "--help") == 0 || strcmp(opt, "-h") == 0) {
		usage(stdout);
		exit(0);
	} else
		return false;
	return true;
}

/* parse_args - fill o from argv, or exit 2 on a bad option. */
static void parse_args(struct options *o, int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		char opt[64];
		const char *val, *eq = strchr(argv[i], '=');
		size_t len = eq ? (size_t)(eq - argv[i]) : strlen(argv[i]);

		if (len >= sizeof(opt) || strncmp(argv[i], "--", 2) != 0) {
			if (strcmp(argv[i], "-h") == 0)
				flag(o, "-h");
			fail("unknown argument '%s'", argv[i]);
		}
		memcpy(opt, argv[i], len);
		opt[len] = '\0';
		if (!eq && flag(o, opt))
			continue;
		if (eq)
			val = eq + 1;
		else if (i + 1 < argc)
			val = argv[++i];
		else
			fail("option %s needs a value", opt);
		if (strncmp(val, "--", 2) == 0)
			fail("option %s needs a value (not '%s')", opt, val);
		if (!apply_net(o, opt, val) && !apply_traffic(o, opt, val) &&
		    !apply_core(o, opt, val) && !apply_receiver(o, opt, val))
			fail("unknown option '%s'", opt);
	}
}

/* fix_hosts - for two tiers, hosts per rack from --hosts (a multiple of
 * the racks) or the default 16. */
static void fix_hosts(struct options *o)
{
	struct sim_params *p = &o->p;

	if (p->topology != SIM_TOPO_TWO_TIER)
		return;
	if (!o->hosts_given) {
		p->hosts_per_rack = 16;
		return;
	}
	if (p->hosts % p->racks != 0)
		fail("--hosts %d is not a multiple of --racks %d", p->hosts,
		     p->racks);
	p->hosts_per_rack = p->hosts / p->racks;
}

/* check_combination - what single options cannot say: --load and
 * --gap-ns together, a slow receiver's FIFO without room for one full
 * packet (of the mtu, which --set may change).  Exits 2. */
static void check_combination(const struct options *o)
{
	const struct sim_params *p = &o->p;
	uint32_t packet = sim_params_packet_wire_bytes(p);

	if (o->load_given && p->mean_gap_ns)
		fail("--load and --gap-ns both say how often hosts send; "
		     "give one");
	if (p->rx_ns && p->rx_queue_bytes < packet)
		fail("--rx-queue-kb %llu: a slow receiver's FIFO of %llu "
		     "bytes cannot hold one full packet (%u bytes on the "
		     "wire, mtu %lld)",
		     (unsigned long long)(p->rx_queue_bytes / 1024),
		     (unsigned long long)p->rx_queue_bytes, packet,
		     (long long)p->core.mtu);
}

/* check_rx_hosts - after sim_params_check (which knows the hosts of two
 * tiers): no more slow receivers or servers than hosts, or exit 2. */
static void check_rx_hosts(const struct options *o)
{
	if (o->p.rx_hosts > (uint32_t)o->p.hosts)
		fail("--rx-hosts %u: there are only %d hosts", o->p.rx_hosts,
		     o->p.hosts);
	if (o->p.service_hosts > (uint32_t)o->p.hosts)
		fail("--service-hosts %u: there are only %d hosts",
		     o->p.service_hosts, o->p.hosts);
}

/* load_workload - o's workload into wl: w1..w5 from --workload-dir (or
 * $HOMA_SIM_WORKLOAD_DIR) when given, else the copy built in; any other
 * name is a CDF file.  Exits 2 with a message when it cannot. */
static void load_workload(const struct options *o, struct workload_dist *wl)
{
	bool builtin = homa_workload_builtin(o->workload) != NULL;
	char err[512];
	int rc;

	rc = homa_workload_read(wl, o->workload, o->workload_dir,
				HOMA_MAX_MESSAGE_LENGTH, err, sizeof(err));
	if (rc == -ENOENT && !builtin)
		fail("--workload: '%s' is neither w1..w5 nor a readable CDF "
		     "file (%s)", o->workload, err);
	if (rc)
		fail("--workload: %s", err);
}

/* wall_now - seconds on a monotonic clock (for --timing only). */
static double wall_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* print_violations - the violations of the run on stderr; returns the
 * exit status they call for (0 or 1). */
static int print_violations(const struct sim_violations *v)
{
	int i;

	if (v->count == 0)
		return 0;
	fprintf(stderr, "homa-sim: %llu invariant violations; the first:\n",
		(unsigned long long)v->count);
	for (i = 0; i < v->kept; i++)
		fprintf(stderr, "  %s\n", v->text[i]);
	return 1;
}

/* set_loss - with --drop, a fault plan of random loss alone, over the
 * whole run (its fault phase never heals). */
static void set_loss(struct options *o)
{
	if (o->drop <= 0.0)
		return;
	memset(&o->loss, 0, sizeof(o->loss));
	o->loss.seed = o->p.seed;
	o->loss.heal_ns = UINT64_MAX / 2;
	o->loss.drop = o->drop;
	o->p.faults = &o->loss;
}

/* run - simulate and print; returns the exit status. */
static int run(struct options *o)
{
	struct sim_timing timing;
	struct sim_report report;
	const struct sim_msg *msgs;
	char err[256];
	struct sim *s;
	double t0;
	size_t n;
	int rc;

	s = sim_create(&o->p, err, sizeof(err));
	if (!s) {
		fprintf(stderr, "homa-sim: %s\n", err);
		return 1;
	}
	t0 = wall_now();
	rc = sim_run(s);
	timing.wall_seconds = wall_now() - t0;
	timing.events_per_second = timing.wall_seconds > 0 ?
		sim_get_counters(s)->events / timing.wall_seconds : 0;
	msgs = sim_messages(s, &n);
	if (rc == 0)
		rc = sim_report_build(&report, &o->p, msgs, n,
				      sim_get_counters(s));
	if (rc) {
		fprintf(stderr, "homa-sim: out of memory\n");
		sim_destroy(s);
		return 1;
	}
	if (o->json)
		sim_report_json(stdout, &report, &o->p, sim_get_counters(s),
				o->timing ? &timing : NULL);
	else
		sim_report_table(stdout, &report, &o->p, sim_get_counters(s),
				 &timing);
	rc = print_violations(sim_get_violations(s));
	sim_destroy(s);
	return rc;
}

int main(int argc, char **argv)
{
	struct workload_dist wl;
	struct options o;
	char err[512];
	int rc;

	memset(&o, 0, sizeof(o));
	sim_params_defaults(&o.p);
	o.workload = "w4";
	o.workload_dir = getenv("HOMA_SIM_WORKLOAD_DIR");
	if (o.workload_dir && !*o.workload_dir)
		o.workload_dir = NULL;
	parse_args(&o, argc, argv);
	fix_hosts(&o);
	check_combination(&o);
	load_workload(&o, &wl);
	o.p.workload = &wl;
	set_loss(&o);
	if (sim_params_check(&o.p, err, sizeof(err)) != 0) {
		fprintf(stderr, "homa-sim: %s\nTry 'homa-sim --help'.\n", err);
		workload_dist_free(&wl);
		return 2;
	}
	check_rx_hosts(&o);
	rc = run(&o);
	workload_dist_free(&wl);
	return rc;
}
