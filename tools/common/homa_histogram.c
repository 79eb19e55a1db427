/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * homa_histogram.c - log-linear histogram (see homa_histogram.h).
 *
 * Bucket layout: a value v below 2 * HOMA_HIST_SUB_COUNT is its own index.
 * Above, with e the index of v's highest set bit and
 * shift = e - HOMA_HIST_SUB_BITS, the index is
 * (shift + 1) * SUB_COUNT + (v >> shift) - SUB_COUNT: the top
 * HOMA_HIST_SUB_BITS + 1 bits of v select the bucket.  For shift 0 that
 * formula also gives v itself, so the two cases meet without a gap.
 */
#include "homa_histogram.h"

#include <string.h>

/* highest_bit - index of the highest set bit of v (v != 0). */
static unsigned int highest_bit(uint64_t v)
{
	return 63u - (unsigned int)__builtin_clzll(v);
}

void homa_histogram_reset(struct homa_histogram *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

size_t homa_histogram_bucket_index(uint64_t value)
{
	unsigned int shift;

	if (value < HOMA_HIST_SUB_COUNT)
		return (size_t)value;
	shift = highest_bit(value) - HOMA_HIST_SUB_BITS;
	return (size_t)(shift + 1) * HOMA_HIST_SUB_COUNT
	       + (size_t)(value >> shift) - HOMA_HIST_SUB_COUNT;
}

/* bucket_shift - log2 of the width of bucket index (>= SUB_COUNT). */
static unsigned int bucket_shift(size_t index)
{
	return (unsigned int)(index / HOMA_HIST_SUB_COUNT) - 1u;
}

uint64_t homa_histogram_bucket_low(size_t index)
{
	if (index < HOMA_HIST_SUB_COUNT)
		return (uint64_t)index;
	return (uint64_t)(HOMA_HIST_SUB_COUNT + index % HOMA_HIST_SUB_COUNT)
	       << bucket_shift(index);
}

uint64_t homa_histogram_bucket_width(size_t index)
{
	if (index < HOMA_HIST_SUB_COUNT)
		return 1;
	return (uint64_t)1 << bucket_shift(index);
}

/* add_saturating - a + b, or UINT64_MAX when that overflows. */
static uint64_t add_saturating(uint64_t a, uint64_t b)
{
	return b > UINT64_MAX - a ? UINT64_MAX : a + b;
}

void homa_histogram_record(struct homa_histogram *h, uint64_t value)
{
	h->buckets[homa_histogram_bucket_index(value)]++;
	h->count++;
	h->sum = add_saturating(h->sum, value);
	if (value < h->min)
		h->min = value;
	if (value > h->max)
		h->max = value;
}

void homa_histogram_merge(struct homa_histogram *dst,
			  const struct homa_histogram *src)
{
	size_t i;

	if (src->count == 0)
		return;
	for (i = 0; i < HOMA_HIST_BUCKETS; i++)
		dst->buckets[i] += src->buckets[i];
	dst->count += src->count;
	dst->sum = add_saturating(dst->sum, src->sum);
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
}

/*
 * percentile_rank - ceil(q/100 * count) in 1..count (count > 0), with a
 * tolerance of one part in 1e9 so that 99.9% of 1000 is 999, not 1000.
 */
static uint64_t percentile_rank(double q, uint64_t count)
{
	double exact;
	uint64_t rank;

	if (!(q <= 100.0))      /* also NaN */
		q = 100.0;
	if (q < 0.0)
		q = 0.0;
	exact = q / 100.0 * (double)count;
	rank = (uint64_t)exact;
	if ((double)rank < exact - exact * 1e-9)
		rank++;
	if (rank < 1)
		rank = 1;
	if (rank > count)
		rank = count;
	return rank;
}

uint64_t homa_histogram_percentile(const struct homa_histogram *h, double q)
{
	uint64_t rank, seen = 0, mid;
	size_t i;

	if (h->count == 0)
		return 0;
	rank = percentile_rank(q, h->count);
	if (rank == 1)
		return h->min;
	if (rank == h->count)
		return h->max;
	for (i = 0; i < HOMA_HIST_BUCKETS; i++) {
		seen += h->buckets[i];
		if (seen >= rank)
			break;
	}
	if (i == HOMA_HIST_BUCKETS)     /* counts inconsistent: be safe */
		return h->max;
	mid = homa_histogram_bucket_low(i)
	      + (homa_histogram_bucket_width(i) - 1) / 2;
	if (mid < h->min)
		return h->min;
	if (mid > h->max)
		return h->max;
	return mid;
}

double homa_histogram_mean(const struct homa_histogram *h)
{
	if (h->count == 0)
		return 0.0;
	return (double)h->sum / (double)h->count;
}
