// SPDX-License-Identifier: BSD-2-Clause
/* homa-perf: the report as text (see perf.h). */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "homa_config.h"
#include "perf.h"
#include "tool_addr.h"

/* us_at - percentile q of h (ns) in microseconds. */
static double us_at(const struct homa_histogram *h, double q)
{
	return (double)homa_histogram_percentile(h, q) / 1000.0;
}

/* sd_at - percentile q of a slowdown histogram. */
static double sd_at(const struct homa_histogram *h, double q)
{
	return (double)homa_histogram_percentile(h, q) / SLOW_SCALE;
}

/* load_text - the offered load of o, for people, into buf. */
static const char *load_text(const struct options *o,
			     const struct workload *wl, char *buf, size_t cap)
{
	if (o->open_loop)
		snprintf(buf, cap, "open loop, Poisson arrivals at %.1f RPC/s "
			 "(%.3f Gbit/s of requests)%s, %d TCP connection%s "
			 "per thread", o->rate, o->rate * wl->mean * 8 / 1e9,
			 o->client_poll ? ", Homa clients polling" : "",
			 o->tcp_conns, o->tcp_conns == 1 ? "" : "s");
	else
		snprintf(buf, cap, "closed loop, %d RPC%s outstanding",
			 o->outstanding, o->outstanding == 1 ? "" : "s");
	return buf;
}

/* print_counter_group - the nonzero counters of c whose names start with
 * prefix (NULL: those no other group takes), prefix cut off. */
static void print_counter_group(FILE *f, const struct tool_counters *c,
				const char *label, const char *prefix)
{
	static const char *const groups[] = { "packets_sent_",
					      "packets_rcvd_", "drop_" };
	int i, g, any = 0, mine;

	fprintf(f, "  %-18s", label);
	for (i = 0; i < c->n; i++) {
		if (prefix) {
			mine = strncmp(c->names[i], prefix,
				       strlen(prefix)) == 0;
		} else {
			mine = 1;
			for (g = 0; g < 3; g++)
				if (strncmp(c->names[i], groups[g],
					    strlen(groups[g])) == 0)
					mine = 0;
		}
		if (!mine || c->values[i] == 0)
			continue;
		fprintf(f, " %s=%llu", c->names[i] + (prefix ? strlen(prefix)
							    : 0),
			(unsigned long long)c->values[i]);
		any = 1;
	}
	fprintf(f, "%s\n", any ? "" : " (none)");
}

void print_counters(FILE *f, const char *who, const struct tool_counters *c)
{
	fprintf(f, "Homa engine counters, %s (nonzero; names as the kernel "
		"module's metrics):\n", who);
	print_counter_group(f, c, "packets sent:", "packets_sent_");
	print_counter_group(f, c, "packets received:", "packets_rcvd_");
	print_counter_group(f, c, "drops:", "drop_");
	print_counter_group(f, c, "other:", NULL);
}

/* print_baseline - the unloaded RTT table. */
static void print_baseline(FILE *f, const struct report *r)
{
	const struct baseline *b = r->b;
	uint32_t sizes[2 * MAX_CAL];
	int n = 0, p, i, j;

	for (p = 0; p < NPROTO; p++)
		for (i = 0; i < b->n[p]; i++) {
			for (j = 0; j < n && sizes[j] != b->size[p][i]; j++)
				;
			if (j == n)
				sizes[n++] = b->size[p][i];
		}
	for (i = 1; i < n; i++)         /* insertion sort: n is small */
		for (j = i; j > 0 && sizes[j - 1] > sizes[j]; j--) {
			uint32_t t = sizes[j];

			sizes[j] = sizes[j - 1];
			sizes[j - 1] = t;
		}
	fprintf(f, "unloaded RTT, us (%s; median of up to %d RPCs sent one "
		"at a time):\n  %9s %9s %9s\n", b->from_file ?
		r->o->baseline_in : "measured now", r->o->calib_rpcs,
		"size (B)", "homa", "tcp");
	for (i = 0; i < n; i++) {
		fprintf(f, "  %9u", sizes[i]);
		for (p = 0; p < NPROTO; p++) {
			for (j = 0; j < b->n[p] && b->size[p][j] != sizes[i];
			     j++)
				;
			if (j < b->n[p])
				fprintf(f, " %9.1f", b->rtt_ns[p][j] / 1000);
			else
				fprintf(f, " %9s", "-");
		}
		fprintf(f, "\n");
	}
	fprintf(f, "slowdown = RTT / %s unloaded RTT of the message's size "
		"(linear between the sizes above)\n\n", b->own ?
		"the protocol's own" : "the lowest");
}

/* print_bucket_row - one line of a result table. */
static void print_bucket_row(FILE *f, const char *label, uint32_t lo,
			     uint32_t hi, const struct bucket_stats *bs)
{
	char range[40];

	snprintf(range, sizeof(range), lo == hi ? "%u" : "%u-%u", lo, hi);
	fprintf(f, "  %-6s %-16s %9llu", label, range,
		(unsigned long long)bs->rtt.count);
	if (bs->rtt.count == 0) {
		fprintf(f, "\n");
		return;
	}
	fprintf(f, " %9.1f %9.1f %9.1f", us_at(&bs->rtt, 50),
		us_at(&bs->rtt, 99), us_at(&bs->rtt, 99.9));
	if (bs->slow.count)
		fprintf(f, " %7.2f %7.2f %7.2f\n", sd_at(&bs->slow, 50),
			sd_at(&bs->slow, 99), sd_at(&bs->slow, 99.9));
	else
		fprintf(f, " %7s %7s %7s\n", "-", "-", "-");
}

bool report_valid(const struct report *r, char *why, size_t cap)
{
	size_t used = 0;
	bool valid = true;
	int p;

	if (cap)
		why[0] = '\0';
	for (p = 0; p < NPROTO; p++) {
		const struct stats *st = r->res[p].st;

		if (!r->res[p].ran || stats_valid(st))
			continue;
		if (used < cap)
			used += (size_t)snprintf(why + used, cap - used,
						 "%s%s %.1f%% late",
						 valid ? "" : ", ",
						 proto_name[p],
						 100 * stats_late_fraction(st));
		valid = false;
	}
	return valid;
}

/* print_late - the late arrivals of res (open loop) and the priority its
 * generators ran at; when there were too many, that its protocol's
 * numbers are invalid. */
static void print_late(FILE *f, const struct result *res, int threads)
{
	const struct stats *st = res->st;

	if (!st->arrivals)
		return;
	fprintf(f, "  arrivals %llu, late %llu (%.2f%%; handed to a sending "
		"thread > 1 ms after their time); generator%s at %s\n",
		(unsigned long long)st->arrivals,
		(unsigned long long)st->late, 100 * stats_late_fraction(st),
		threads == 1 ? "" : "s", res->generators_rt == threads ?
		"real-time priority" : res->generators_rt ?
		"real-time priority in part" : "normal priority");
	if (!stats_valid(st))
		fprintf(f, "  INVALID: more than %.0f%% of the arrivals were "
			"late: the generator fell behind, so the load was not "
			"the one asked for\n", 100 * LATE_LIMIT);
}


const char *errno_label(int i, char *buf, size_t cap)
{
	const char *name;

	if (i == MAX_ERRNO - 1)
		return "other";
	name = strerrorname_np(i);
	if (name)
		return name;
	snprintf(buf, cap, "E%d", i);
	return buf;
}

/* print_errnos - "  failed by errno: ETIMEDOUT 3, ENOTCONN 1" when st
 * has measured failures. */
static void print_errnos(FILE *f, const struct stats *st)
{
	char buf[32];
	int i, n = 0;

	for (i = 0; i < MAX_ERRNO; i++) {
		if (!st->by_errno[i])
			continue;
		fprintf(f, "%s%s %llu", n++ ? ", " : "  failed by errno: ",
			errno_label(i, buf, sizeof(buf)),
			(unsigned long long)st->by_errno[i]);
	}
	if (n)
		fprintf(f, "\n");
}

/* print_result - one protocol's summary line and table. */
static void print_result(FILE *f, const struct report *r, enum proto p)
{
	const struct result *res = &r->res[p];
	const struct stats *st = res->st;
	const struct workload *wl = r->wl;
	struct bucket_stats *all = malloc(sizeof(*all));
	char label[16];
	double w = res->window_s;
	int i;

	if (!all)
		return;
	merged_all(st, wl->nbuckets, all);
	fprintf(f, "%s: %llu RPCs in %.1f s measured: %.1f RPC/s, %.3f "
		"Gbit/s of requests, %.3f Gbit/s requests+responses, CPU "
		"%.1f us/RPC (process)\n", proto_name[p],
		(unsigned long long)st->completed, w, st->completed / w,
		all->req_bytes * 8 / w / 1e9,
		(all->req_bytes + all->resp_bytes) * 8 / w / 1e9,
		st->completed ? res->cpu_s * 1e6 / st->completed : 0.0);
	fprintf(f, "  issued %llu (%.3f Gbit/s), failed %llu, unfinished "
		"%llu, skipped %llu (at --max-outstanding or a full send "
		"memory), warm-up %llu\n",
		(unsigned long long)st->sent, st->sent_bytes * 8 / w / 1e9,
		(unsigned long long)st->failed,
		(unsigned long long)st->unfinished,
		(unsigned long long)st->skipped, (unsigned long long)st->warm);
	print_late(f, res, r->o->threads);
	if (st->first_error[0])
		fprintf(f, "  first error: %s\n", st->first_error);
	print_errnos(f, st);
	fprintf(f, "  %-6s %-16s %9s %9s %9s %9s %7s %7s %7s\n", "bucket",
		"sizes (B)", "RPCs", "p50 us", "p99 us", "p999 us", "sd p50",
		"sd p99", "sd p999");
	for (i = 0; i < wl->nbuckets; i++) {
		snprintf(label, sizeof(label), "%d", i + 1);
		print_bucket_row(f, label, wl->lo[i], wl->hi[i], &st->b[i]);
	}
	if (wl->nbuckets > 1)
		print_bucket_row(f, "all", wl->min, wl->max, all);
	fprintf(f, "\n");
	free(all);
}

/*
 * print_settings - one line naming the engine settings not at their
 * defaults (from HOMA_<NAME> variables), so that a result says what it
 * was measured with.
 */
static void print_settings(FILE *f)
{
	const struct homa_config_info *t;
	int n, shown = 0;
	int64_t v;

	t = homa_config_table(&n);
	for (int i = 0; i < n; i++) {
		if (homa_config_get(t[i].name, &v) < 0 || v == t[i].def)
			continue;
		fprintf(f, "%s%s=%lld (default %lld)",
			shown++ ? ", " : "engine settings not at their defaults: ",
			t[i].name, (long long)v, (long long)t[i].def);
	}
	fprintf(f, shown ? "\n\n" : "engine settings: all at their defaults\n\n");
}

void print_text(FILE *f, const struct report *r)
{
	const struct options *o = r->o;
	char a[64], t[64], load[192], resp[32], why[64];
	int p, i;

	if (o->resp_size == SPEC_ECHO)
		snprintf(resp, sizeof(resp), "echoed");
	else
		snprintf(resp, sizeof(resp), "%u B", o->resp_size);
	fprintf(f, PROG " %s: server %s (TCP %s), workload %s (mean %.0f B, "
		"%d bucket%s), %s,\n  %d thread%s, responses %s, %.1f s "
		"warm-up + %.1f s measured per protocol\n\n",
		o->mode == M_LOOPBACK ? "loopback" : "client",
		tool_addr_text(&r->homa_dest, a, sizeof(a)),
		tool_addr_text(&r->tcp_dest, t, sizeof(t)), r->wl->name,
		r->wl->mean, r->wl->nbuckets, r->wl->nbuckets == 1 ? "" : "s",
		load_text(o, r->wl, load, sizeof(load)), o->threads,
		o->threads == 1 ? "" : "s", resp, o->warmup, o->duration);
	print_settings(f);
	print_baseline(f, r);
	for (p = 0; p < NPROTO; p++)
		if (r->res[p].ran)
			print_result(f, r, (enum proto)p);
	if (r->res[P_HOMA].ran && r->res[P_TCP].ran &&
	    !report_valid(r, why, sizeof(why))) {
		fprintf(f, "P99 slowdown, tcp / homa, per bucket: invalid (%s)"
			"\n\n", why);
	} else if (r->res[P_HOMA].ran && r->res[P_TCP].ran) {
		fprintf(f, "P99 slowdown, tcp / homa, per bucket:");
		for (i = 0; i < r->wl->nbuckets; i++) {
			const struct homa_histogram *h =
				&r->res[P_HOMA].st->b[i].slow;
			const struct homa_histogram *c =
				&r->res[P_TCP].st->b[i].slow;

			if (h->count && c->count)
				fprintf(f, " %d:%.3g", i + 1,
					sd_at(c, 99) / sd_at(h, 99));
			else
				fprintf(f, " %d:-", i + 1);
		}
		fprintf(f, "\n\n");
	}
	if (r->res[P_HOMA].ran)
		print_counters(f, "client sockets", &r->res[P_HOMA].ctr);
	if (r->have_server) {
		fprintf(f, "server: %lu Homa and %lu TCP requests answered, "
			"%lu and %lu errors\n", r->served[P_HOMA],
			r->served[P_TCP], r->server_errors[P_HOMA],
			r->server_errors[P_TCP]);
		print_counters(f, "server socket", &r->server_ctr);
	}
}
