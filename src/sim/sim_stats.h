/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * sim_stats - slowdown statistics of a run: every completed message
 * (after the warm-up) has slowdown = its completion time / the completion
 * time of a message of its size alone on an idle network (measured with
 * sim_unloaded_ns, once per distinct size and path).  Percentiles are
 * exact (nearest rank over the sorted slowdowns).  Buckets are the
 * deciles of the workload's size distribution (equal bounds merged).
 */
#ifndef SIM_STATS_H
#define SIM_STATS_H

#include <stdint.h>
#include <stdio.h>

#include "sim.h"

#define SIM_MAX_BUCKETS 10

struct sim_bucket {
	uint32_t max_bytes;     /* sizes up to this (above the last bound) */
	uint64_t count;
	double p50, p99;        /* slowdowns; 0 when count is 0 */
};

struct sim_report {
	uint64_t messages;      /* requests generated */
	uint64_t completed;     /* of them, completed */
	uint64_t failed;
	uint64_t measured;      /* completed and past the warm-up */
	uint64_t unloaded_failures;  /* sizes whose idle run failed */
	double p50, p99, mean;  /* over the measured messages */
	double short_p99;       /* P99 of the shortest 10% by size */
	double half_p99;        /* P99 of the shortest 50% by size */
	int nbuckets;
	struct sim_bucket buckets[SIM_MAX_BUCKETS];
};

/*
 * sim_report_build - compute r from a run's messages (params as checked
 * for the run).  Runs the idle-network measurements it needs.  Returns 0
 * or -ENOMEM.
 */
int sim_report_build(struct sim_report *r, const struct sim_params *p,
		     const struct sim_msg *msgs, size_t n,
		     const struct sim_counters *c);

/* sim_percentile - the nearest-rank percentile (permille 1..1000) of
 * sorted v[0..n) (n >= 1). */
double sim_percentile(const double *v, size_t n, unsigned permille);

/* Wall-clock figures, printed only when asked (never part of a result
 * that must repeat). */
struct sim_timing {
	double wall_seconds;
	double events_per_second;
};

/* sim_ctrl_packets - the control packets every endpoint sent (each type
 * but DATA). */
uint64_t sim_ctrl_packets(const struct sim_counters *c);

/*
 * sim_report_json - print one JSON object (and a newline) to f.  The
 * output depends only on its arguments; timing may be NULL (left out).
 */
void sim_report_json(FILE *f, const struct sim_report *r,
		     const struct sim_params *p, const struct sim_counters *c,
		     const struct sim_timing *timing);

/* sim_report_table - print the human-readable table to f (timing may be
 * NULL). */
void sim_report_table(FILE *f, const struct sim_report *r,
		      const struct sim_params *p, const struct sim_counters *c,
		      const struct sim_timing *timing);

#endif /* SIM_STATS_H */
