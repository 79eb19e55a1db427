// SPDX-License-Identifier: BSD-2-Clause
/* homa-perf: a load phase: its workers and what they measure (see perf.h). */

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perf.h"
#include "tool_clock.h"
#include "tool_watchdog.h"

void stats_note_error(struct stats *st, int measured, int err,
		      const char *fmt, ...)
{
	va_list ap;

	if (measured) {
		st->failed++;
		st->by_errno[err >= 0 && err < MAX_ERRNO - 1 ? err
							    : MAX_ERRNO - 1]++;
	}
	if (st->first_error[0] != '\0')
		return;
	st->first_errno = err;
	va_start(ap, fmt);
	vsnprintf(st->first_error, sizeof(st->first_error), fmt, ap);
	va_end(ap);
}

struct stats *stats_new(void)
{
	struct stats *st = calloc(1, sizeof(*st));
	int i;

	if (!st)
		return NULL;
	for (i = 0; i < MAX_BUCKETS; i++) {
		homa_histogram_reset(&st->b[i].rtt);
		homa_histogram_reset(&st->b[i].slow);
	}
	return st;
}

void stats_merge(struct stats *dst, const struct stats *src)
{
	int i;

	for (i = 0; i < MAX_BUCKETS; i++) {
		homa_histogram_merge(&dst->b[i].rtt, &src->b[i].rtt);
		homa_histogram_merge(&dst->b[i].slow, &src->b[i].slow);
		dst->b[i].req_bytes += src->b[i].req_bytes;
		dst->b[i].resp_bytes += src->b[i].resp_bytes;
	}
	dst->sent += src->sent;
	dst->sent_bytes += src->sent_bytes;
	dst->completed += src->completed;
	dst->failed += src->failed;
	dst->unfinished += src->unfinished;
	dst->arrivals += src->arrivals;
	dst->skipped += src->skipped;
	dst->late += src->late;
	for (i = 0; i < MAX_POOL_CONNS; i++)
		dst->conn_sent[i] += src->conn_sent[i];
	for (i = 0; i < MAX_ERRNO; i++)
		dst->by_errno[i] += src->by_errno[i];
	dst->warm += src->warm;
	if (dst->first_error[0] == '\0' && src->first_error[0] != '\0') {
		dst->first_errno = src->first_errno;
		memcpy(dst->first_error, src->first_error,
		       sizeof(dst->first_error));
	}
}

double stats_late_fraction(const struct stats *st)
{
	return st->arrivals ? (double)st->late / (double)st->arrivals : 0.0;
}

bool stats_valid(const struct stats *st)
{
	return stats_late_fraction(st) <= LATE_LIMIT;
}

void worker_record(struct worker *w, uint64_t t0, uint64_t t1,
		   uint32_t size, int bucket, uint64_t resp,
		   uint32_t want)
{
	const struct phase *ph = w->ph;
	struct bucket_stats *b = &w->st->b[bucket];
	double base;
	uint64_t rtt = t1 > t0 ? t1 - t0 : 0;

	if (t0 < ph->measure_from) {
		w->st->warm++;
		return;
	}
	if (resp != want) {
		stats_note_error(w->st, 1, EPROTO, "%s response of %llu bytes "
				 "to a %u-byte request, expected %u",
				 proto_name[ph->proto],
				 (unsigned long long)resp, size, want);
		return;
	}
	w->st->completed++;
	homa_histogram_record(&b->rtt, rtt);
	base = baseline_rtt(ph->base, ph->proto, size);
	if (base > 0)
		homa_histogram_record(&b->slow, (uint64_t)llround(
			(double)rtt / base * SLOW_SCALE));
	b->req_bytes += size;
	b->resp_bytes += resp;
}

void worker_count_sent(struct worker *w, uint64_t t0, uint32_t size)
{
	if (t0 >= w->ph->measure_from) {
		w->st->sent++;
		w->st->sent_bytes += size;
	}
}

uint64_t rel_now(const struct phase *ph)
{
	return tool_now_ns() - ph->epoch;
}

uint64_t phase_wait_ns(const struct phase *ph, uint64_t now, double next)
{
	double deadline = (double)ph->drain_end;
	uint64_t wait;

	if (ph->o->open_loop && next < (double)ph->end && next < deadline)
		deadline = next;
	wait = deadline > (double)now
	       ? (uint64_t)ceil(deadline - (double)now) : 0;
	return wait > 100000000 ? 100000000 : wait;
}

void phase_generator_priority(struct worker *w)
{
	struct sched_param sp = { .sched_priority = 1 };

	w->generator_rt = pthread_setschedparam(pthread_self(), SCHED_FIFO,
						&sp) == 0;
}

uint64_t phase_stall(struct worker *w, uint64_t now)
{
	const struct phase *ph = w->ph;

	if (ph->o->test_stall != (int)ph->proto ||
	    ++w->stall_count % STALL_EVERY != 0)
		return now;
	tool_sleep_until(tool_now_ns() + STALL_NS);
	return rel_now(ph);
}

bool phase_arrival_admit(struct worker *w, uint64_t now, double due,
			 uint64_t inflight)
{
	const struct phase *ph = w->ph;
	bool measured = now >= ph->measure_from;

	if (measured)
		w->st->arrivals++;
	if (measured && now - (uint64_t)due > LATE_NS)
		w->st->late++;
	if (inflight < (uint64_t)ph->o->max_outstanding)
		return true;
	if (measured)
		w->st->skipped++;
	return false;
}

/* worker_main_for - the thread function of a worker of protocol p under
 * o. */
static void *(*worker_main_for(enum proto p, const struct options *o))(void *)
{
	if (p == P_TCP)
		return o->open_loop ? tcp_pool_main : tcp_closed_main;
	if (!o->open_loop)
		return homa_closed_main;
	return o->client_poll ? homa_open_poll_main : homa_open_main;
}

/* phase_init - ph for a load phase of protocol p under o: the timeline
 * (ns after the epoch, which the caller sets) and what the workers share. */
static void phase_init(struct phase *ph, const struct options *o,
		       enum proto p, const struct workload *wl,
		       const struct baseline *b,
		       const union sockaddr_in_union *homa_dest,
		       const union sockaddr_in_union *tcp_dest)
{
	memset(ph, 0, sizeof(*ph));
	ph->proto = p;
	ph->o = o;
	ph->wl = wl;
	ph->base = b;
	ph->homa_dest = *homa_dest;
	ph->tcp_dest = *tcp_dest;
	/* On a multiple of the cookie's 4 ns unit (perf_homa.c). */
	ph->measure_from = (uint64_t)(o->warmup * 1e9) / 4 * 4;
	ph->end = ph->measure_from + (uint64_t)(o->duration * 1e9);
	ph->drain_end = ph->end + (uint64_t)(o->drain * 1e9);
	if (o->open_loop)
		ph->gap_ns = 1e9 * o->threads / o->rate;
}

/*
 * workers_init - the o->threads workers w[] of phase ph: each with its
 * share of the RPCs in flight, its stats, its request buffer and its
 * random stream.  Returns 0, or -1 when out of memory (printed; what was
 * allocated stays in w[] for the caller to free).
 */
static int workers_init(struct worker *w, const struct phase *ph)
{
	const struct options *o = ph->o;
	int i;

	for (i = 0; i < o->threads; i++) {
		w[i].ph = ph;
		w[i].index = i;
		w[i].outstanding = o->outstanding / o->threads +
				   (i < o->outstanding % o->threads);
		w[i].st = stats_new();
		w[i].req = request_buffer(o);
		/* The same stream for every protocol: each sees the same
		 * sizes and arrival gaps. */
		workload_rng_seed(&w[i].rng, o->seed, (uint64_t)i + 1u);
		if (!w[i].st || !w[i].req) {
			fprintf(stderr, PROG ": out of memory\n");
			return -1;
		}
	}
	return 0;
}

/* workers_start - a thread for each of the n workers w[] of protocol p
 * under o.
 * Returns how many started (a failure is printed). */
static int workers_start(struct worker *w, int n, enum proto p,
			 const struct options *o)
{
	int i, err;

	for (i = 0; i < n; i++) {
		err = pthread_create(&w[i].thread, NULL,
				     worker_main_for(p, o), &w[i]);
		if (err != 0) {
			fprintf(stderr, PROG ": pthread_create: %s\n",
				strerror(err));
			break;
		}
		(void)pthread_setname_np(w[i].thread, p == P_TCP ?
					 "tcp-client" : "homa-client");
	}
	return i;
}

/* workers_collect - join the first started workers of w[] and merge what
 * they measured, their sockets' counters and the first set-up error into
 * res. */
static void workers_collect(struct worker *w, int started,
			    struct result *res)
{
	int i;

	for (i = 0; i < started; i++) {
		pthread_join(w[i].thread, NULL);
		stats_merge(res->st, w[i].st);
		tool_counters_add(&res->ctr, &w[i].ctr);
		res->generators_rt += w[i].generator_rt;
		if (w[i].setup_error[0] && !res->setup_error[0])
			snprintf(res->setup_error, sizeof(res->setup_error),
				 "worker %d: %s", i, w[i].setup_error);
	}
}

int run_phase(const struct options *o, enum proto p,
	      const struct workload *wl, const struct baseline *b,
	      const union sockaddr_in_union *homa_dest,
	      const union sockaddr_in_union *tcp_dest, struct result *res)
{
	struct phase ph;
	struct worker *w = calloc((size_t)o->threads, sizeof(*w));
	uint64_t cpu0, cpu1;
	unsigned int budget;
	int i, started, rc = -1;

	memset(res, 0, sizeof(*res));
	res->st = stats_new();
	if (!w || !res->st) {
		fprintf(stderr, PROG ": out of memory\n");
		goto out;
	}
	phase_init(&ph, o, p, wl, b, homa_dest, tcp_dest);
	if (workers_init(w, &ph) < 0)
		goto out;
	budget = (unsigned int)(o->warmup + o->duration + o->drain) +
		 STAGE_SLACK_S;
	tool_watchdog_stage(budget, "%s load phase", proto_name[p]);
	ph.epoch = tool_now_ns() + 100000000ull;     /* workers set up first */
	started = workers_start(w, o->threads, p, o);
	tool_sleep_until(ph.epoch + ph.measure_from);
	cpu0 = tool_cpu_ns();
	tool_sleep_until(ph.epoch + ph.end);
	cpu1 = tool_cpu_ns();
	workers_collect(w, started, res);
	tool_watchdog_stage(0, "after the %s load phase", proto_name[p]);
	res->ran = started == o->threads;
	res->window_s = o->duration;
	res->cpu_s = (double)(cpu1 - cpu0) / 1e9;
	if (res->setup_error[0])
		fprintf(stderr, PROG ": %s: %s\n", proto_name[p],
			res->setup_error);
	rc = res->ran ? 0 : -1;
out:
	for (i = 0; w && i < o->threads; i++) {
		free(w[i].st);
		free(w[i].req);
	}
	free(w);
	return rc;
}

void merged_all(const struct stats *st, int nb, struct bucket_stats *out)
{
	int i;

	homa_histogram_reset(&out->rtt);
	homa_histogram_reset(&out->slow);
	out->req_bytes = out->resp_bytes = 0;
	for (i = 0; i < nb; i++) {
		homa_histogram_merge(&out->rtt, &st->b[i].rtt);
		homa_histogram_merge(&out->slow, &st->b[i].slow);
		out->req_bytes += st->b[i].req_bytes;
		out->resp_bytes += st->b[i].resp_bytes;
	}
}
