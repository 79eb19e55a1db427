/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * workload_dist - message-size distributions (W1..W5 of the Homa papers or
 * any file of the same format): one point a line, "size_bytes
 * cumulative_fraction", '#' starts a comment.  Sizes above the cap (Homa's
 * 1,000,000-byte limit) are cut to the cap.  Samples are drawn by inverse
 * CDF over the listed points: size i is drawn with probability
 * cum[i] - cum[i-1].
 */
#ifndef WORKLOAD_DIST_H
#define WORKLOAD_DIST_H

#include <stddef.h>
#include <stdint.h>

struct workload_dist {
	char name[64];       /* "w4", or the file's name */
	uint32_t *sizes;     /* increasing, each <= cap */
	double *cum;         /* increasing, last == 1 */
	size_t n;            /* points (>= 1) */
	double mean;         /* mean size in bytes (after the cap) */
};

/*
 * workload_dist_parse - read a distribution from text.
 * Takes: the text (NUL-terminated), the cap (>= 1), a name for messages.
 * Returns 0 and fills w (free with workload_dist_free); -EINVAL with a
 * message in err (line number and reason) for malformed text: no points, a
 * size < 1, a fraction outside [0, 1], fractions or sizes that decrease, a
 * last fraction of 0; -ENOMEM.
 */
int workload_dist_parse(struct workload_dist *w, const char *text,
			uint32_t cap, const char *name, char *err,
			size_t errcap);

/*
 * workload_dist_load - read "w1".."w5" (any case) from dir/wN.cdf, or any
 * other spec as a file path.  Returns 0, -ENOENT (cannot read; err says
 * which file), or what workload_dist_parse returns.
 */
int workload_dist_load(struct workload_dist *w, const char *spec,
		       const char *dir, uint32_t cap, char *err, size_t errcap);

/* workload_dist_free - free w's arrays. */
void workload_dist_free(struct workload_dist *w);

/* workload_dist_sample - the size for a uniform u in [0, 1): the smallest
 * listed size whose cumulative fraction exceeds u. */
uint32_t workload_dist_sample(const struct workload_dist *w, double u);

/* workload_dist_expect - the mean of f(size) over the distribution. */
double workload_dist_expect(const struct workload_dist *w,
			    double (*f)(uint32_t size, const void *ctx),
			    const void *ctx);

#endif /* WORKLOAD_DIST_H */
