// SPDX-License-Identifier: BSD-2-Clause
/* homa-demo: the table, every round, the problems; JSON (see demo.h). */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "demo.h"
#include "tool_json.h"

/* cmp_double - qsort order of doubles. */
static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 * summary - the median over rounds of value vi of test t, system y.
 * Returns NAN when the system did not take part or any round failed.
 */
static double summary(const struct demo *d, enum test t, enum sys y, int vi)
{
	double v[MAX_ROUNDS];
	int r, n = d->opt.rounds;

	for (r = 0; r < n; r++) {
		const struct cell *c = &d->cells[t][y][r];

		if (!c->ran || !c->ok)
			return NAN;
		v[r] = c->v[vi];
	}
	qsort(v, (size_t)n, sizeof(v[0]), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

/* cell_text - a table entry: the value, "n/a" or "FAIL". */
static void cell_text(const struct demo *d, enum test t, enum sys y, int vi,
		      char *buf, size_t len)
{
	double v = summary(d, t, y, vi);

	if (!sys_applies(d, t, y))
		snprintf(buf, len, "n/a");
	else if (isnan(v))
		snprintf(buf, len, "FAIL");
	else
		snprintf(buf, len, tests[t].is_rtt ? "%.1f" : "%.2f", v);
}

/* ratio - a / b, NAN when either is missing. */
static double ratio(double a, double b)
{
	return isnan(a) || isnan(b) || b == 0.0 ? NAN : a / b;
}

/* Rows of the table: (test, value index). */
static const struct { enum test t; int vi; } rows[] = {
	{ T_RTT, 0 }, { T_RTT, 1 }, { T_RTT, 2 },
	{ T_BIG1, 0 }, { T_BIG4, 0 }, { T_ECHO, 0 },
};
#define NROWS (sizeof(rows) / sizeof(rows[0]))

/* Ratio lines: Homa against another system for one row. */
static const struct {
	enum test t;
	int vi;
	enum sys other;
	const char *hint;
} ratios[] = {
	{ T_RTT, 0, SYS_TCP, "below 1: Homa faster" },
	{ T_RTT, 1, SYS_TCP, "below 1: Homa faster" },
	{ T_RTT, 0, SYS_UDP_SPIN, "Homa's distance from the UDP floor" },
	{ T_BIG1, 0, SYS_TCP, "above 1: Homa faster" },
	{ T_BIG4, 0, SYS_TCP, "above 1: Homa faster" },
	{ T_ECHO, 0, SYS_TCP, "above 1: Homa faster" },
};
#define NRATIOS (sizeof(ratios) / sizeof(ratios[0]))

/* ratio_value - ratio line i: Homa over the other system, from the
 * medians; NAN when either is missing. */
static double ratio_value(const struct demo *d, size_t i)
{
	return ratio(summary(d, ratios[i].t, SYS_HOMA, ratios[i].vi),
		     summary(d, ratios[i].t, ratios[i].other, ratios[i].vi));
}

/* print_table - the medians, one row per measurement, one column per
 * system. */
static void print_table(const struct demo *d)
{
	char label[64], v[32];
	size_t i;
	int y;

	printf("%-34s", "test");
	for (y = 0; y < NSYS; y++)
		printf("%14s", sys_name[y]);
	printf("\n");
	for (i = 0; i < NROWS; i++) {
		test_label(d, rows[i].t, rows[i].vi, label, sizeof(label));
		printf("%-34s", label);
		for (y = 0; y < NSYS; y++) {
			cell_text(d, rows[i].t, (enum sys)y, rows[i].vi, v,
				  sizeof(v));
			printf("%14s", v);
		}
		printf("\n");
	}
}

/* print_ratios - Homa over the other system, from the medians. */
static void print_ratios(const struct demo *d)
{
	char label[64];
	double q;
	size_t i;

	printf("\n");
	for (i = 0; i < NRATIOS; i++) {
		test_label(d, ratios[i].t, ratios[i].vi, label, sizeof(label));
		q = ratio_value(d, i);
		if (isnan(q))
			printf("ratio homa/%-13s %-34s    n/a\n",
			       sys_name[ratios[i].other], label);
		else
			printf("ratio homa/%-13s %-34s %6.2f  (%s)\n",
			       sys_name[ratios[i].other], label, q,
			       ratios[i].hint);
	}
}

/* print_rounds - every round's value, and every failure's reason. */
static void print_rounds(const struct demo *d)
{
	char label[64];
	size_t i;
	int y, r;

	printf("\nevery round, in run order:\n");
	for (i = 0; i < NROWS; i++) {
		test_label(d, rows[i].t, rows[i].vi, label, sizeof(label));
		for (y = 0; y < NSYS; y++) {
			if (!sys_applies(d, rows[i].t, (enum sys)y))
				continue;
			printf("  %-34s %-13s", label, sys_name[y]);
			for (r = 0; r < d->opt.rounds; r++) {
				const struct cell *c =
					&d->cells[rows[i].t][y][r];

				if (c->ok)
					printf(rows[i].t == T_RTT ? " %7.1f%s"
					       : " %7.2f%s", c->v[rows[i].vi],
					       c->truncated ? "*" : "");
				else
					printf(" %7s", "FAIL");
			}
			printf("\n");
		}
	}
}

/* print_problems - failures, truncations, UDP losses and Homa server
 * errors, if any. */
static void print_problems(const struct demo *d)
{
	char label[64];
	int t, y, r;

	if (atomic_load(&d->hs.errors))
		printf("note: the Homa server thread met %ld error(s); the "
		       "first: %s\n", (long)atomic_load(&d->hs.errors),
		       d->hs.first_error);

	for (t = 0; t < NTESTS; t++)
		for (y = 0; y < NSYS; y++)
			for (r = 0; r < d->opt.rounds; r++) {
				const struct cell *c = &d->cells[t][y][r];

				if (!c->ran || (c->ok && !c->truncated &&
						!c->lost))
					continue;
				test_label(d, (enum test)t, 0, label,
					   sizeof(label));
				printf("%s: %s, %s, round %d: ",
				       c->ok ? "note" : "FAILED", label,
				       sys_name[y], r + 1);
				if (!c->ok)
					printf("%s\n", c->why);
				else
					printf("%ld RPCs measured%s, %ld UDP "
					       "datagrams lost\n", c->done,
					       c->truncated ? " (*: stopped "
					       "by the 20 s budget)" : "",
					       c->lost);
			}
}

void read_counters(int fd, struct tool_counters *k)
{
	if (tool_counters_read(k, fd) < 0)
		perror(PROG ": homa_stats_get");
}

/* print_counters - the nonzero counters of k, on one line. */
static void print_counters(const char *who, const struct tool_counters *k)
{
	int i;

	printf("homa %s counters:", who);
	for (i = 0; i < k->n; i++)
		if (k->values[i] != 0)
			printf(" %s=%llu", k->names[i],
			       (unsigned long long)k->values[i]);
	printf("\n");
}

void print_text(const struct demo *d, const struct tool_counters *kc,
		const struct tool_counters *ks)
{
	printf("homa-demo: loopback 127.0.0.1, %d round%s (table: median of "
	       "the rounds), %ld RPCs of %ld B and %ld RPCs of 1 MB per "
	       "round\n\n", d->opt.rounds, d->opt.rounds == 1 ? "" : "s",
	       d->opt.rpcs, d->opt.size, d->opt.big_rpcs);
	print_table(d);
	print_ratios(d);
	print_rounds(d);
	printf("\nHoma: one client socket, 4 out = 4 RPCs in flight on it; "
	       "one server thread.\nTCP: TCP_NODELAY, 4-byte length prefix; "
	       "RTT on one blocking connection;\n     goodput on one "
	       "connection per outstanding RPC (4 out = 4 connections,\n"
	       "     one client thread with poll, one server thread each).\n"
	       "UDP: one datagram each way; spin = client polls with "
	       "MSG_DONTWAIT.\nGoodput counts request + response payload "
	       "bytes over the measured time.\n");
	print_problems(d);
	if (d->opt.stats) {
		print_counters("client", kc);
		print_counters("server", ks);
	}
}

/* json_system - the object of system y in test t: medians, rounds. */
static void json_system(const struct demo *d, enum test t, enum sys y)
{
	static const char *const key[3] = { "p50_us", "p99_us", "p999_us" };
	int nv = tests[t].is_rtt ? 3 : 1, vi, r;

	printf("\"%s\":{", sys_json[y]);
	for (vi = 0; vi < nv; vi++) {
		printf("\"%s\":", tests[t].is_rtt ? key[vi] : "gbps");
		tool_json_num(stdout, summary(d, t, y, vi));
		printf(",");
	}
	printf("\"rounds\":[");
	for (r = 0; r < d->opt.rounds; r++) {
		const struct cell *c = &d->cells[t][y][r];

		printf("%s{\"ok\":%s,\"rpcs\":%ld,\"lost\":%ld,"
		       "\"truncated\":%s", r ? "," : "",
		       c->ok ? "true" : "false", c->done, c->lost,
		       c->truncated ? "true" : "false");
		for (vi = 0; vi < nv; vi++) {
			printf(",\"%s\":", tests[t].is_rtt ? key[vi] : "gbps");
			tool_json_num(stdout, c->ok ? c->v[vi] : NAN);
		}
		if (!c->ok) {
			printf(",\"error\":");
			tool_json_string(stdout, c->why);
		}
		printf("}");
	}
	printf("]}");
}

/* json_test - "name":{"outstanding":N,...} of test t, with the object of
 * every system that takes part. */
static void json_test(const struct demo *d, enum test t)
{
	int y;

	printf("\"%s\":{\"outstanding\":%d", tests[t].json,
	       tests[t].outstanding);
	for (y = 0; y < NSYS; y++)
		if (sys_applies(d, t, (enum sys)y)) {
			printf(",");
			json_system(d, t, (enum sys)y);
		}
	printf("}");
}

/* json_ratios - ,"ratios":[{"what":"homa/SYSTEM ROW","value":V},...]. */
static void json_ratios(const struct demo *d)
{
	char label[64];
	size_t i;

	printf(",\"ratios\":[");
	for (i = 0; i < NRATIOS; i++) {
		test_label(d, ratios[i].t, ratios[i].vi, label, sizeof(label));
		printf("%s{\"what\":\"homa/%s %s\",\"value\":", i ? "," : "",
		       sys_json[ratios[i].other], label);
		tool_json_num(stdout, ratio_value(d, i));
		printf("}");
	}
	printf("]");
}

void print_json(const struct demo *d, const struct tool_counters *kc,
		const struct tool_counters *ks)
{
	int t;

	printf("{\"tool\":\"homa-demo\",\"host\":\"127.0.0.1\",\"rounds\":%d,"
	       "\"rpcs\":%ld,\"big_rpcs\":%ld,\"size\":%ld,\"big_size\":%ld,"
	       "\"tests\":{", d->opt.rounds, d->opt.rpcs, d->opt.big_rpcs,
	       d->opt.size, BIG_SIZE);
	for (t = 0; t < NTESTS; t++) {
		printf("%s", t ? "," : "");
		json_test(d, (enum test)t);
	}
	printf("}");
	json_ratios(d);
	printf(",\"homa_server_errors\":%ld",
	       (long)atomic_load(&d->hs.errors));
	if (atomic_load(&d->hs.errors)) {
		printf(",\"homa_server_first_error\":");
		tool_json_string(stdout, d->hs.first_error);
	}
	if (d->opt.stats) {
		printf(",\"homa_counters\":{\"client\":");
		tool_json_counters(stdout, kc, 1);
		printf(",\"server\":");
		tool_json_counters(stdout, ks, 1);
		printf("}");
	}
	printf("}\n");
}

int all_ok(const struct demo *d)
{
	int t, y, r;

	for (t = 0; t < NTESTS; t++)
		for (y = 0; y < NSYS; y++)
			for (r = 0; r < d->opt.rounds; r++)
				if (d->cells[t][y][r].ran &&
				    !d->cells[t][y][r].ok)
					return 0;
	return 1;
}
