// SPDX-License-Identifier: BSD-2-Clause
/*
 * copy_bench - the cost of libhoma's fault-safe payload copies
 * (homa_sock_copy, src/sock/homa_sockcopy.c) next to plain memcpy: a
 * 1,000,000-byte message copied in pieces of SEG bytes, BATCH pieces per
 * call, 20 times per run; 41 rounds alternate the two and the best run of
 * each is printed (hot caches: the copy's own cost, not memory's).
 *
 *   gcc -O2 -o copy_bench scripts/copy_bench.c build/libhoma.a -lpthread -lm
 *   ./copy_bench [SEG [BATCH]]          (default 1424 64)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* From src/core/homa_endpoint.h and src/sock/homa_sock.h (internal). */
struct homa_ep_copy {
	void *dst;
	const void *src;
	size_t len;
};
uint32_t homa_sock_copy(void *ctx, const struct homa_ep_copy *c, uint32_t n);

#define MSG 1000000u

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* run - one run of variant v (0: memcpy, 1: homa_sock_copy); seconds per
 * message. */
static double run(int v, const struct homa_ep_copy *c, uint32_t n,
		  uint32_t batch)
{
	double t0 = now_s();

	for (int rep = 0; rep < 20; rep++) {
		for (uint32_t i = 0; i < n; i += batch) {
			uint32_t k = n - i < batch ? n - i : batch;

			if (v) {
				homa_sock_copy(NULL, c + i, k);
				continue;
			}
			for (uint32_t j = 0; j < k; j++)
				memcpy(c[i + j].dst, c[i + j].src, c[i + j].len);
		}
	}
	return (now_s() - t0) / 20;
}

int main(int argc, char **argv)
{
	uint32_t seg = argc > 1 ? (uint32_t)atoi(argv[1]) : 1424;
	uint32_t batch = argc > 2 ? (uint32_t)atoi(argv[2]) : 64;
	uint32_t n;
	uint8_t *src = malloc(MSG), *dst = malloc(MSG);
	struct homa_ep_copy *c;
	double best[2] = { 1e9, 1e9 };

	if (seg == 0 || batch == 0 || !src || !dst) {
		fprintf(stderr, "usage: copy_bench [SEG [BATCH]] (both > 0)\n");
		return 2;
	}
	n = (MSG + seg - 1) / seg;
	c = calloc(n, sizeof(*c));
	if (!c)
		return 1;
	memset(src, 1, MSG);
	memset(dst, 2, MSG);
	for (uint32_t i = 0; i < n; i++) {
		size_t at = (size_t)i * seg;

		c[i].dst = dst + at;
		c[i].src = src + at;
		c[i].len = at + seg <= MSG ? seg : MSG - at;
	}
	for (int round = 0; round < 41; round++) {
		for (int v = 0; v < 2; v++) {
			double t = run(v, c, n, batch);

			if (t < best[v])
				best[v] = t;
		}
	}
	printf("seg %u batch %u: memcpy %.1f us per MB, homa_sock_copy %.1f us "
	       "per MB, ratio %.3f\n", seg, batch, best[0] * 1e6,
	       best[1] * 1e6, best[1] / best[0]);
	free(c);
	free(src);
	free(dst);
	return 0;
}
