/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * homa_histogram - a log-linear histogram of unsigned 64-bit values that
 * does not keep samples.
 *
 * Values 0..255 each have a bucket of their own.  Above that, every
 * power-of-two range [2^e, 2^(e+1)) is split into HOMA_HIST_SUB_COUNT (128)
 * equal buckets, so a bucket is at most 1/128 of its lower bound wide: a
 * percentile is reported within 0.4% of a value that was recorded (the
 * middle of the bucket, clamped to the smallest and largest values seen).
 * The whole uint64_t range is covered; for latencies in nanoseconds that is
 * 1 ns .. 584 years with the same relative precision, in 58 KiB.
 *
 * Sans-IO and allocation-free: the caller owns the struct (static, on the
 * heap or embedded) and serialises calls on it; nothing here is thread-safe.
 */
#ifndef HOMA_HISTOGRAM_H
#define HOMA_HISTOGRAM_H

#include <stddef.h>
#include <stdint.h>

/* Linear buckets per power of two (a power of two itself). */
#define HOMA_HIST_SUB_BITS 7
#define HOMA_HIST_SUB_COUNT (1u << HOMA_HIST_SUB_BITS)

/* Buckets needed for the whole uint64_t range. */
#define HOMA_HIST_BUCKETS \
	((size_t)HOMA_HIST_SUB_COUNT * (64 - HOMA_HIST_SUB_BITS + 1))

struct homa_histogram {
	uint64_t count;     /* values recorded */
	uint64_t min;       /* smallest value (UINT64_MAX when empty) */
	uint64_t max;       /* largest value (0 when empty) */
	uint64_t sum;       /* sum of values, saturating at UINT64_MAX */
	uint64_t buckets[HOMA_HIST_BUCKETS];
};

/* homa_histogram_reset - make h empty.  Also serves as initialisation. */
void homa_histogram_reset(struct homa_histogram *h);

/* homa_histogram_record - add one value. */
void homa_histogram_record(struct homa_histogram *h, uint64_t value);

/*
 * homa_histogram_merge - add every value of src to dst (src unchanged).
 * dst and src may not be the same histogram.
 */
void homa_histogram_merge(struct homa_histogram *dst,
			  const struct homa_histogram *src);

/*
 * homa_histogram_percentile - the value at percentile q (0..100) of h.
 * Returns the value of rank ceil(q/100 * count) (at least 1): exactly the
 * minimum for rank 1, exactly the maximum for rank count, otherwise the
 * middle of the rank's bucket clamped to [min, max].  q below 0 counts as 0,
 * above 100 (or NaN) as 100.  Returns 0 when h is empty.
 */
uint64_t homa_histogram_percentile(const struct homa_histogram *h, double q);

/* homa_histogram_mean - the mean of the recorded values (0 when empty). */
double homa_histogram_mean(const struct homa_histogram *h);

/* homa_histogram_bucket_index - the bucket a value falls in
 * (0 .. HOMA_HIST_BUCKETS-1). */
size_t homa_histogram_bucket_index(uint64_t value);

/*
 * homa_histogram_bucket_low - the smallest value of bucket index
 * (< HOMA_HIST_BUCKETS); homa_histogram_bucket_width - how many values the
 * bucket holds (a power of two).
 */
uint64_t homa_histogram_bucket_low(size_t index);
uint64_t homa_histogram_bucket_width(size_t index);

#endif /* HOMA_HISTOGRAM_H */
