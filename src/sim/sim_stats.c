// SPDX-License-Identifier: BSD-2-Clause
/* Slowdown statistics and their printing: see sim_stats.h. */

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "sim_stats.h"

/* One measured message: its size and slowdown, and its position in the
 * run for a stable order among equal sizes. */
struct sample {
	uint32_t size;
	uint32_t order;
	double slowdown;
};

/* One idle-network time, by size and path. */
struct unloaded {
	uint32_t size;
	uint32_t same_rack;
	uint64_t ns;
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int cmp_sample_size(const void *a, const void *b)
{
	const struct sample *x = a, *y = b;

	if (x->size != y->size)
		return x->size < y->size ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static int cmp_unloaded(const void *a, const void *b)
{
	const struct unloaded *x = a, *y = b;

	if (x->size != y->size)
		return x->size < y->size ? -1 : 1;
	return x->same_rack < y->same_rack ? -1 : x->same_rack > y->same_rack;
}

double sim_percentile(const double *v, size_t n, unsigned permille)
{
	/* Nearest rank: the smallest value with at least permille/1000 of
	 * the values at or below it. */
	size_t rank = (size_t)(((uint64_t)n * permille + 999) / 1000);

	if (rank < 1)
		rank = 1;
	return v[rank - 1];
}

/* is_measured - message i counts in the statistics. */
static bool is_measured(const struct sim_params *p, const struct sim_msg *m,
			size_t i)
{
	return i >= p->warmup && m->done_ns != 0 && !m->failed;
}

/*
 * unloaded_table - the idle-network time of every (size, path) among the
 * measured messages, sorted.  Returns the table (caller frees) and its
 * length in *count, or NULL (no memory, or nothing to measure).
 */
static struct unloaded *unloaded_table(const struct sim_params *p,
				       const struct sim_msg *msgs, size_t n,
				       size_t *count)
{
	struct unloaded *t = malloc((n ? n : 1) * sizeof(*t));
	size_t i, k = 0;

	*count = 0;
	if (!t)
		return NULL;
	for (i = 0; i < n; i++) {
		if (!is_measured(p, &msgs[i], i))
			continue;
		t[k].size = msgs[i].size;
		t[k].same_rack = sim_same_rack(p, msgs[i].src, msgs[i].dst);
		t[k++].ns = 0;
	}
	qsort(t, k, sizeof(*t), cmp_unloaded);
	for (i = 0, n = 0; i < k; i++)
		if (n == 0 || cmp_unloaded(&t[n - 1], &t[i]) != 0)
			t[n++] = t[i];
	for (i = 0; i < n; i++)
		t[i].ns = sim_unloaded_ns(p, t[i].size, t[i].same_rack);
	*count = n;
	return t;
}

/* lookup - the idle time of (size, same_rack) in the sorted table. */
static uint64_t lookup(const struct unloaded *t, size_t n, uint32_t size,
		       bool same_rack)
{
	struct unloaded key = { size, same_rack, 0 };
	const struct unloaded *hit = bsearch(&key, t, n, sizeof(*t),
					     cmp_unloaded);

	return hit ? hit->ns : 0;
}

/* quantile_size - the smallest size of w whose cumulative fraction
 * reaches q. */
static uint32_t quantile_size(const struct workload_dist *w, double q)
{
	size_t i;

	for (i = 0; i + 1 < w->n; i++)
		if (w->cum[i] >= q - 1e-12)
			break;
	return w->sizes[i];
}

/* set_bounds - the bucket bounds: deciles of the size distribution,
 * equal ones merged; the last is the largest size. */
static void set_bounds(struct sim_report *r, const struct workload_dist *w)
{
	int k;

	r->nbuckets = 0;
	for (k = 1; k <= SIM_MAX_BUCKETS; k++) {
		uint32_t b = k == SIM_MAX_BUCKETS ? w->sizes[w->n - 1] :
			     quantile_size(w, k / (double)SIM_MAX_BUCKETS);

		if (r->nbuckets > 0 &&
		    r->buckets[r->nbuckets - 1].max_bytes >= b)
			continue;
		r->buckets[r->nbuckets].max_bytes = b;
		r->buckets[r->nbuckets].count = 0;
		r->nbuckets++;
	}
}

/* bucket_stats - P50 and P99 of each bucket over samples sorted by size;
 * scratch holds n doubles. */
static void bucket_stats(struct sim_report *r, const struct sample *s,
			 size_t n, double *scratch)
{
	size_t i = 0;
	int b;

	for (b = 0; b < r->nbuckets; b++) {
		struct sim_bucket *bk = &r->buckets[b];
		size_t k = 0;

		while (i < n && (s[i].size <= bk->max_bytes ||
				 b == r->nbuckets - 1))
			scratch[k++] = s[i++].slowdown;
		bk->count = k;
		bk->p50 = bk->p99 = 0.0;
		if (k == 0)
			continue;
		qsort(scratch, k, sizeof(*scratch), cmp_double);
		bk->p50 = sim_percentile(scratch, k, 500);
		bk->p99 = sim_percentile(scratch, k, 990);
	}
}

/* shortest_p99 - P99 slowdown of the first (shortest) permille/1000 of
 * samples sorted by size (at least one). */
static double shortest_p99(const struct sample *s, size_t n,
			   unsigned permille, double *scratch)
{
	size_t k = (size_t)(((uint64_t)n * permille + 999) / 1000), i;

	if (k < 1)
		k = 1;
	for (i = 0; i < k; i++)
		scratch[i] = s[i].slowdown;
	qsort(scratch, k, sizeof(*scratch), cmp_double);
	return sim_percentile(scratch, k, 990);
}

/* collect - the measured messages as samples; returns their count. */
static size_t collect(struct sim_report *r, const struct sim_params *p,
		      const struct sim_msg *msgs, size_t n,
		      const struct unloaded *t, size_t nt, struct sample *s)
{
	size_t i, k = 0;

	for (i = 0; i < n; i++) {
		const struct sim_msg *m = &msgs[i];
		uint64_t base;

		if (!is_measured(p, m, i))
			continue;
		base = lookup(t, nt, m->size, sim_same_rack(p, m->src, m->dst));
		if (base == 0) {
			r->unloaded_failures++;
			continue;
		}
		s[k].size = m->size;
		s[k].order = (uint32_t)i;
		s[k++].slowdown = (double)(m->done_ns - m->start_ns) /
				  (double)base;
	}
	return k;
}

/* overall - P50, P99 and mean over all samples (scratch: n doubles). */
static void overall(struct sim_report *r, const struct sample *s, size_t n,
		    double *scratch)
{
	double sum = 0.0;
	size_t i;

	for (i = 0; i < n; i++) {
		scratch[i] = s[i].slowdown;
		sum += s[i].slowdown;
	}
	qsort(scratch, n, sizeof(*scratch), cmp_double);
	r->p50 = sim_percentile(scratch, n, 500);
	r->p99 = sim_percentile(scratch, n, 990);
	r->mean = sum / (double)n;
}

int sim_report_build(struct sim_report *r, const struct sim_params *p,
		     const struct sim_msg *msgs, size_t n,
		     const struct sim_counters *c)
{
	struct sample *s = malloc((n ? n : 1) * sizeof(*s));
	double *scratch = malloc((n ? n : 1) * sizeof(*scratch));
	struct unloaded *t = NULL;
	size_t nt = 0, k;

	memset(r, 0, sizeof(*r));
	r->messages = n;
	r->completed = c->completed;
	r->failed = c->failed;
	set_bounds(r, p->workload);
	if (s && scratch)
		t = unloaded_table(p, msgs, n, &nt);
	if (!s || !scratch || !t) {
		free(s);
		free(scratch);
		return -ENOMEM;
	}
	k = collect(r, p, msgs, n, t, nt, s);
	r->measured = k;
	if (k > 0) {
		qsort(s, k, sizeof(*s), cmp_sample_size);
		overall(r, s, k, scratch);
		r->short_p99 = shortest_p99(s, k, 100, scratch);
		r->half_p99 = shortest_p99(s, k, 500, scratch);
		bucket_stats(r, s, k, scratch);
	}
	free(t);
	free(s);
	free(scratch);
	return 0;
}

/* topology_name - "one-switch" or "two-tier". */
static const char *topology_name(const struct sim_params *p)
{
	return p->topology == SIM_TOPO_TWO_TIER ? "two-tier" : "one-switch";
}

/* json_rpcs_and_receivers - the keys after the buckets: how requests
 * were spaced and the run ended, what became of the client RPCs, the
 * slow receivers (rx_ns; 0: none) with their FIFO drops and peak, and the
 * slow servers (service_ns; 0: none). */
static void json_rpcs_and_receivers(FILE *f, const struct sim_params *p,
				    const struct sim_counters *c)
{
	fprintf(f, ",\"mean_gap_ns\":%llu,\"wait_responses\":\"%s\","
		"\"responses\":%llu,\"client_errors\":%llu,",
		(unsigned long long)p->mean_gap_ns,
		p->wait_responses ? "on" : "off",
		(unsigned long long)c->responses,
		(unsigned long long)c->client_errors);
	fprintf(f, "\"rx_ns\":%llu,\"rx_queue_bytes\":%llu,\"rx_hosts\":%u,"
		"\"rx_drops\":%llu,\"max_rx_queue_bytes\":%llu,"
		"\"service_ns\":%llu,\"service_hosts\":%u,"
		"\"server_hosts\":%u",
		(unsigned long long)p->rx_ns,
		(unsigned long long)p->rx_queue_bytes, p->rx_hosts,
		(unsigned long long)c->rx_drops,
		(unsigned long long)c->max_rx_queue_bytes,
		(unsigned long long)p->service_ns, p->service_hosts,
		p->server_hosts);
}

/* print_core_settings - each core setting of core that differs from the
 * core's defaults, in the settings table's order: "name":value pairs
 * separated by commas (json) or name=value words separated by spaces. */
static void print_core_settings(FILE *f, const struct homa_config *core,
				bool json)
{
	const struct homa_config_info *rows;
	struct homa_config defaults;
	const char *before = "";
	int n, i;

	homa_config_defaults(&defaults);
	rows = homa_config_table(&n);
	for (i = 0; i < n; i++) {
		int64_t v = 0, d = 0;

		homa_config_get_value(core, rows[i].name, &v);
		homa_config_get_value(&defaults, rows[i].name, &d);
		if (v == d)
			continue;
		fprintf(f, json ? "%s\"%s\":%lld" : "%s%s=%lld", before,
			rows[i].name, (long long)v);
		before = json ? "," : " ";
	}
}

/* json_core_settings - "core_settings": an object of the run's core
 * settings that differ from the core's defaults (those the simulator
 * derives, such as link_mbps, and those set by name). */
static void json_core_settings(FILE *f, const struct homa_config *core)
{
	fputs(",\"core_settings\":{", f);
	print_core_settings(f, core, true);
	fputs("}", f);
}

uint64_t sim_ctrl_packets(const struct sim_counters *c)
{
	uint64_t n = 0;
	int i;

	for (i = HOMA_STAT_packets_sent_GRANT;
	     i <= HOMA_STAT_packets_sent_ACK; i++)
		n += c->core[i];
	return n;
}

void sim_report_json(FILE *f, const struct sim_report *r,
		     const struct sim_params *p, const struct sim_counters *c,
		     const struct sim_timing *timing)
{
	int b;

	fprintf(f, "{\"workload\":\"%s\",\"topology\":\"%s\",\"hosts\":%d,"
		"\"link_gbps\":%.3f,\"load\":%.4f,\"priorities\":%d,"
		"\"overcommit\":%lld,\"pacer\":\"%s\",\"seed\":%llu,",
		p->workload->name, topology_name(p), p->hosts,
		p->link_mbps / 1000.0, sim_offered_load(p), p->priorities,
		(long long)p->core.max_overcommit, p->pacer_off ? "off" : "on",
		(unsigned long long)p->seed);
	if (p->bottleneck_mbps)
		fprintf(f, "\"bottleneck_gbps\":%.3f,",
			p->bottleneck_mbps / 1000.0);
	fprintf(f, "\"messages\":%llu,\"completed\":%llu,\"failed\":%llu,"
		"\"measured\":%llu,\"simulated_ns\":%llu,\"events\":%llu,",
		(unsigned long long)r->messages,
		(unsigned long long)r->completed,
		(unsigned long long)r->failed,
		(unsigned long long)r->measured,
		(unsigned long long)c->end_ns,
		(unsigned long long)c->events);
	fprintf(f, "\"short_p99_slowdown\":%.4f,\"half_p99_slowdown\":%.4f,"
		"\"p50_slowdown\":%.4f,\"p99_slowdown\":%.4f,"
		"\"mean_slowdown\":%.4f,", r->short_p99, r->half_p99, r->p50,
		r->p99, r->mean);
	fprintf(f, "\"switch_drops\":%llu,\"max_port_bytes\":%llu,"
		"\"max_nic_queue_bytes\":%llu,\"resent_packets\":%llu,"
		"\"rpc_timeouts\":%llu,\"violations\":%llu,",
		(unsigned long long)c->switch_drops,
		(unsigned long long)c->max_port_bytes,
		(unsigned long long)c->max_nic_queue_bytes,
		(unsigned long long)c->core[HOMA_STAT_resent_packets],
		(unsigned long long)c->core[HOMA_STAT_rpc_timeouts],
		(unsigned long long)c->violations);
	fprintf(f, "\"resends_sent\":%llu,\"ctrl_packets\":%llu,"
		"\"duplicate_data\":%llu,\"fault_drops\":%llu,\"buckets\":[",
		(unsigned long long)c->core[HOMA_STAT_packets_sent_RESEND],
		(unsigned long long)sim_ctrl_packets(c),
		(unsigned long long)c->core[HOMA_STAT_drop_duplicate_data],
		(unsigned long long)c->fault_drops);
	for (b = 0; b < r->nbuckets; b++)
		fprintf(f, "%s{\"max_bytes\":%u,\"count\":%llu,"
			"\"p50_slowdown\":%.4f,\"p99_slowdown\":%.4f}",
			b ? "," : "", r->buckets[b].max_bytes,
			(unsigned long long)r->buckets[b].count,
			r->buckets[b].p50, r->buckets[b].p99);
	fprintf(f, "]");
	json_rpcs_and_receivers(f, p, c);
	json_core_settings(f, &p->core);
	if (timing)
		fprintf(f, ",\"wall_seconds\":%.3f,\"events_per_second\":%.0f",
			timing->wall_seconds, timing->events_per_second);
	fprintf(f, "}\n");
}

/* table_rpcs_and_receivers - the table's lines on client RPCs, the slow
 * receivers (only with rx_ns) and the core settings off their defaults. */
static void table_rpcs_and_receivers(FILE *f, const struct sim_params *p,
				     const struct sim_counters *c)
{
	fprintf(f, "client RPCs: %llu responses, %llu errors%s\n",
		(unsigned long long)c->responses,
		(unsigned long long)c->client_errors,
		p->wait_responses ? "" : " (the run did not wait for all)");
	if (p->rx_ns) {
		if (p->rx_hosts == 1)
			fprintf(f, "slow receiver: host 0");
		else if (p->rx_hosts)
			fprintf(f, "slow receivers: hosts 0..%u",
				p->rx_hosts - 1);
		else
			fprintf(f, "slow receivers: every host");
		fprintf(f, ", %.1f us per packet, FIFO of %llu bytes: %llu "
			"packets dropped, most queued %llu bytes\n",
			p->rx_ns / 1e3, (unsigned long long)p->rx_queue_bytes,
			(unsigned long long)c->rx_drops,
			(unsigned long long)c->max_rx_queue_bytes);
	}
	fprintf(f, "core settings off their defaults: ");
	print_core_settings(f, &p->core, false);
	fprintf(f, "\n");
}

void sim_report_table(FILE *f, const struct sim_report *r,
		      const struct sim_params *p, const struct sim_counters *c,
		      const struct sim_timing *timing)
{
	int b;

	fprintf(f, "homa-sim: %s, %d hosts (%s), %.1f Gbit/s links, ",
		p->workload->name, p->hosts, topology_name(p),
		p->link_mbps / 1000.0);
	if (p->bottleneck_mbps)
		fprintf(f, "%.3f Gbit/s towards hosts, ",
			p->bottleneck_mbps / 1000.0);
	if (p->mean_gap_ns)
		fprintf(f, "mean gap %.1f us (load %.2f)",
			p->mean_gap_ns / 1e3, sim_offered_load(p));
	else
		fprintf(f, "load %.2f", p->load);
	fprintf(f, ", %d priorities, overcommit %lld, pacer %s, seed %llu\n",
		p->priorities, (long long)p->core.max_overcommit,
		p->pacer_off ? "off" : "on", (unsigned long long)p->seed);
	fprintf(f, "%14s %9s %13s %13s\n", "size <= bytes", "messages",
		"P50 slowdown", "P99 slowdown");
	for (b = 0; b < r->nbuckets; b++)
		fprintf(f, "%14u %9llu %13.2f %13.2f\n",
			r->buckets[b].max_bytes,
			(unsigned long long)r->buckets[b].count,
			r->buckets[b].p50, r->buckets[b].p99);
	fprintf(f, "%14s %9llu %13.2f %13.2f\n", "all",
		(unsigned long long)r->measured, r->p50, r->p99);
	fprintf(f, "short 10%% P99 slowdown %.2f, short 50%% P99 %.2f, "
		"mean %.2f\n", r->short_p99, r->half_p99, r->mean);
	fprintf(f, "messages %llu, completed %llu, failed %llu; simulated "
		"time %.3f ms\n", (unsigned long long)r->messages,
		(unsigned long long)r->completed,
		(unsigned long long)r->failed, c->end_ns / 1e6);
	fprintf(f, "switch drops %llu, most bytes queued at a port %llu, "
		"longest wait %.1f us, packets resent %llu\n",
		(unsigned long long)c->switch_drops,
		(unsigned long long)c->max_port_bytes, c->max_wait_ns / 1e3,
		(unsigned long long)c->core[HOMA_STAT_resent_packets]);
	fprintf(f, "RESENDs %llu, control packets %llu, duplicate DATA "
		"dropped %llu, packets lost (--drop) %llu, RPC timeouts %llu\n",
		(unsigned long long)c->core[HOMA_STAT_packets_sent_RESEND],
		(unsigned long long)sim_ctrl_packets(c),
		(unsigned long long)c->core[HOMA_STAT_drop_duplicate_data],
		(unsigned long long)c->fault_drops,
		(unsigned long long)c->core[HOMA_STAT_rpc_timeouts]);
	fprintf(f, "most bytes waiting at a NIC %llu\n",
		(unsigned long long)c->max_nic_queue_bytes);
	table_rpcs_and_receivers(f, p, c);
	fprintf(f, "invariant violations %llu\n",
		(unsigned long long)c->violations);
	if (timing)
		fprintf(f, "events %llu in %.2f s wall: %.2f M events/s\n",
			(unsigned long long)c->events, timing->wall_seconds,
			timing->events_per_second / 1e6);
	else
		fprintf(f, "events %llu\n", (unsigned long long)c->events);
}
