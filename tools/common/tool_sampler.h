/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tool_sampler - a thread that writes, every few seconds, one line of what
 * a long run needs watched for leaks: the process's resident memory, its
 * open descriptors and the RPCs its Homa sockets hold (the num_rpcs gauge
 * of homa_stats_get, summed over every Homa socket of the process):
 *
 *   sample t=12.0 rss_kb=10432 fds=9 homa_socks=2 num_rpcs=17
 *
 * (t: seconds since tool_sampler_start).
 */
#ifndef TOOL_SAMPLER_H
#define TOOL_SAMPLER_H

#include <stdint.h>
#include <stdio.h>

/* One sample of the calling process. */
struct tool_sample {
	long rss_kb;            /* VmRSS of /proc/self/status (-1: unknown) */
	int fds;                /* entries of /proc/self/fd (-1: unknown) */
	int homa_socks;         /* of those, Homa sockets */
	uint64_t num_rpcs;      /* RPCs those sockets hold */
};

/* tool_sample_take - measure the calling process now into *s. */
void tool_sample_take(struct tool_sample *s);

/*
 * tool_sampler_start - start a detached thread that writes a sample line
 * to f every interval_s seconds (the first at once), flushing each, until
 * the process ends.  f stays the caller's (not closed).  One sampler per
 * process.  Returns 0, or -1 with errno (EBUSY: one runs already; or
 * pthread_create's error).
 */
int tool_sampler_start(FILE *f, double interval_s);

#endif /* TOOL_SAMPLER_H */
