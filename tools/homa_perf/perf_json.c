// SPDX-License-Identifier: BSD-2-Clause
/* homa-perf: the report as JSON (see perf.h). */

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "homa_config.h"
#include "perf.h"
#include "tool_addr.h"
#include "tool_json.h"

/* json_hist - {"count","min","max","p50","p99","p999","b":[[low,width,
 * count],...]} of h, values divided by scale. */
static void json_hist(FILE *f, const struct homa_histogram *h, double scale)
{
	size_t i;
	int first = 1;

	fprintf(f, "{\"count\":%llu,\"scale\":%g", (unsigned long long)h->count,
		scale);
	if (h->count) {
		fprintf(f, ",\"min\":%llu,\"max\":%llu,\"p50\":",
			(unsigned long long)h->min,
			(unsigned long long)h->max);
		tool_json_num(f, (double)homa_histogram_percentile(h, 50) /
			      scale);
		fprintf(f, ",\"p99\":");
		tool_json_num(f, (double)homa_histogram_percentile(h, 99) /
			      scale);
		fprintf(f, ",\"p999\":");
		tool_json_num(f, (double)homa_histogram_percentile(h, 99.9) /
			    scale);
	}
	fprintf(f, ",\"b\":[");
	for (i = 0; i < HOMA_HIST_BUCKETS; i++) {
		if (!h->buckets[i])
			continue;
		fprintf(f, "%s[%llu,%llu,%llu]", first ? "" : ",",
			(unsigned long long)homa_histogram_bucket_low(i),
			(unsigned long long)homa_histogram_bucket_width(i),
			(unsigned long long)h->buckets[i]);
		first = 0;
	}
	fprintf(f, "]}");
}

/* json_bucket - one bucket object. */
static void json_bucket(FILE *f, const char *label, uint32_t lo, uint32_t hi,
			const struct bucket_stats *bs)
{
	fprintf(f, "{\"bucket\":\"%s\",\"lo\":%u,\"hi\":%u,\"rpcs\":%llu,"
		"\"req_bytes\":%llu,\"resp_bytes\":%llu,\"rtt_us\":", label,
		lo, hi, (unsigned long long)bs->rtt.count,
		(unsigned long long)bs->req_bytes,
		(unsigned long long)bs->resp_bytes);
	json_hist(f, &bs->rtt, 1000.0);
	fprintf(f, ",\"slowdown\":");
	json_hist(f, &bs->slow, SLOW_SCALE);
	fprintf(f, "}");
}

/* json_errnos - ,"failed_by_errno":{"ETIMEDOUT":n,...}: st's measured
 * failures by errno (those that happened). */
static void json_errnos(FILE *f, const struct stats *st)
{
	char buf[32];
	int i, n = 0;

	fprintf(f, ",\"failed_by_errno\":{");
	for (i = 0; i < MAX_ERRNO; i++) {
		if (!st->by_errno[i])
			continue;
		fprintf(f, "%s", n++ ? "," : "");
		tool_json_string(f, errno_label(i, buf, sizeof(buf)));
		fprintf(f, ":%llu", (unsigned long long)st->by_errno[i]);
	}
	fprintf(f, "}");
}

/* json_result - one protocol's result object. */
static void json_result(FILE *f, const struct report *r, enum proto p)
{
	const struct result *res = &r->res[p];
	const struct stats *st = res->st;
	struct bucket_stats *all = malloc(sizeof(*all));
	double w = res->window_s;
	char label[16];
	int i;

	if (!all)
		return;
	merged_all(st, r->wl->nbuckets, all);
	fprintf(f, "{\"window_s\":");
	tool_json_num(f, w);
	fprintf(f, ",\"issued\":%llu,\"completed\":%llu,\"failed\":%llu,"
		"\"unfinished\":%llu,\"skipped\":%llu,\"arrivals\":%llu,"
		"\"late\":%llu,\"late_fraction\":",
		(unsigned long long)st->sent,
		(unsigned long long)st->completed,
		(unsigned long long)st->failed,
		(unsigned long long)st->unfinished,
		(unsigned long long)st->skipped,
		(unsigned long long)st->arrivals,
		(unsigned long long)st->late);
	tool_json_num(f, stats_late_fraction(st));
	fprintf(f, ",\"valid\":%s,\"generators_rt\":%d,\"warmup_rpcs\":%llu,"
		"\"rpcs_per_s\":", stats_valid(st) ? "true" : "false",
		res->generators_rt, (unsigned long long)st->warm);
	tool_json_num(f, st->completed / w);
	fprintf(f, ",\"issued_gbps\":");
	tool_json_num(f, st->sent_bytes * 8 / w / 1e9);
	fprintf(f, ",\"req_gbps\":");
	tool_json_num(f, all->req_bytes * 8 / w / 1e9);
	fprintf(f, ",\"total_gbps\":");
	tool_json_num(f, (all->req_bytes + all->resp_bytes) * 8 / w / 1e9);
	fprintf(f, ",\"cpu_s\":");
	tool_json_num(f, res->cpu_s);
	fprintf(f, ",\"cpu_us_per_rpc\":");
	tool_json_num(f, st->completed ? res->cpu_s * 1e6 / st->completed
				       : NAN);
	fprintf(f, ",\"first_error\":");
	tool_json_string(f, st->first_error);
	json_errnos(f, st);
	fprintf(f, ",\"setup_error\":");
	tool_json_string(f, res->setup_error);
	fprintf(f, ",\"buckets\":[");
	for (i = 0; i < r->wl->nbuckets; i++) {
		snprintf(label, sizeof(label), "%d", i + 1);
		fprintf(f, "%s", i ? "," : "");
		json_bucket(f, label, r->wl->lo[i], r->wl->hi[i], &st->b[i]);
	}
	fprintf(f, "],\"all\":");
	json_bucket(f, "all", r->wl->min, r->wl->max, all);
	if (p == P_HOMA) {
		fprintf(f, ",\"counters\":");
		tool_json_counters(f, &res->ctr, 0);
	}
	if (p == P_TCP && r->o->open_loop) {
		fprintf(f, ",\"conn_issued\":[");
		for (i = 0; i < r->o->tcp_conns; i++)
			fprintf(f, "%s%llu", i ? "," : "",
				(unsigned long long)st->conn_sent[i]);
		fprintf(f, "]");
	}
	fprintf(f, "}");
	free(all);
}

void json_settings(FILE *f)
{
	static const char *const names[] = {
		"link_mbps", "unsched_bytes", "mtu", "poll_usecs",
		"max_overcommit", "max_incoming", "num_priorities",
		"transport", "flags",
	};
	int64_t v;
	size_t i;

	fprintf(f, "{");
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (homa_config_get(names[i], &v) < 0)
			continue;
		fprintf(f, "%s\"%s\":%lld", i ? "," : "", names[i],
			(long long)v);
	}
	fprintf(f, "}");
}

/* json_host - facts about this machine. */
static void json_host(FILE *f)
{
	struct utsname u;

	fprintf(f, "{\"nproc\":%ld,\"kernel\":", sysconf(_SC_NPROCESSORS_ONLN));
	tool_json_string(f, uname(&u) == 0 ? u.release : "");
	fprintf(f, "}");
}

/* json_run - the fields that say what was run: mode, addresses, workload,
 * load, settings, host (the first fields of the report). */
static void json_run(FILE *f, const struct report *r)
{
	const struct options *o = r->o;
	char a[64], t[64];

	fprintf(f, "{\"tool\":\"homa-perf\",\"mode\":\"%s\",\"server\":",
		o->mode == M_LOOPBACK ? "loopback" : "client");
	tool_json_string(f, tool_addr_text(&r->homa_dest, a, sizeof(a)));
	fprintf(f, ",\"tcp_server\":");
	tool_json_string(f, tool_addr_text(&r->tcp_dest, t, sizeof(t)));
	fprintf(f, ",\"workload\":");
	tool_json_string(f, r->wl->name);
	fprintf(f, ",\"mean_size\":");
	tool_json_num(f, r->wl->mean);
	fprintf(f, ",\"loop\":\"%s\",\"rate\":", o->open_loop ? "open"
							   : "closed");
	tool_json_num(f, o->open_loop ? o->rate : NAN);
	fprintf(f, ",\"offered_gbps\":");
	tool_json_num(f, o->open_loop ? o->rate * r->wl->mean * 8 / 1e9 : NAN);
	fprintf(f, ",\"outstanding\":%d,\"threads\":%d,\"tcp_conns\":%d,"
		"\"client_poll\":%s,"
		"\"echo\":%s,\"response_bytes\":%u,\"duration_s\":",
		o->open_loop ? 0 : o->outstanding, o->threads, o->tcp_conns,
		o->client_poll ? "true" : "false",
		o->resp_size == SPEC_ECHO ? "true" : "false",
		o->resp_size == SPEC_ECHO ? 0 : o->resp_size);
	tool_json_num(f, o->duration);
	fprintf(f, ",\"warmup_s\":");
	tool_json_num(f, o->warmup);
	fprintf(f, ",\"seed\":%llu,\"slowdown_base\":\"%s\",\"settings\":",
		(unsigned long long)o->seed, r->b->own ? "own" : "best");
	json_settings(f);
	fprintf(f, ",\"host\":");
	json_host(f);
}

/* json_baseline - ,"baseline":{"homa":[[size,rtt_ns,rpcs],...],...} of the
 * protocols with unloaded RTTs. */
static void json_baseline(FILE *f, const struct baseline *b)
{
	int p, i, first = 1;

	fprintf(f, ",\"baseline\":{");
	for (p = 0; p < NPROTO; p++) {
		if (b->n[p] == 0)
			continue;
		fprintf(f, "%s\"%s\":[", first ? "" : ",", proto_name[p]);
		first = 0;
		for (i = 0; i < b->n[p]; i++)
			fprintf(f, "%s[%u,%.0f,%ld]", i ? "," : "",
				b->size[p][i], b->rtt_ns[p][i], b->rpcs[p][i]);
		fprintf(f, "]");
	}
	fprintf(f, "}");
}

/* json_results - ,"valid":...,"invalid_reason":...,"results":{...} with
 * the object of every protocol that ran. */
static void json_results(FILE *f, const struct report *r)
{
	char why[64];
	int p, first = 1;

	fprintf(f, ",\"valid\":%s,\"invalid_reason\":",
		report_valid(r, why, sizeof(why)) ? "true" : "false");
	tool_json_string(f, why);
	fprintf(f, ",\"results\":{");
	for (p = 0; p < NPROTO; p++) {
		if (!r->res[p].ran)
			continue;
		fprintf(f, "%s\"%s\":", first ? "" : ",", proto_name[p]);
		json_result(f, r, (enum proto)p);
		first = 0;
	}
	fprintf(f, "}");
}

void print_json(FILE *f, const struct report *r)
{
	json_run(f, r);
	json_baseline(f, r->b);
	json_results(f, r);
	if (r->have_server) {
		fprintf(f, ",\"server_side\":{\"homa_served\":%lu,"
			"\"tcp_served\":%lu,\"homa_errors\":%lu,"
			"\"tcp_errors\":%lu,\"counters\":", r->served[P_HOMA],
			r->served[P_TCP],
			r->server_errors[P_HOMA], r->server_errors[P_TCP]);
		tool_json_counters(f, &r->server_ctr, 0);
		fprintf(f, "}");
	}
	fprintf(f, "}\n");
}
