// SPDX-License-Identifier: BSD-2-Clause
/* homa-perf: the request format, request sizes and buckets (see perf.h). */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "homa_workloads.h"
#include "perf.h"
#include "tool_frame.h"

uint8_t *perf_pattern;

/* response_len - bytes a server answers to a request of len bytes whose
 * first bytes are head (SPEC_BYTES of them when len >= SPEC_BYTES); a
 * larger spec than the largest message is cut to it, a spec of 0 raised to
 * 1 (a message has at least one byte: homa_reply refuses 0 with EINVAL,
 * and a request left unanswered holds its server RPC until the socket
 * closes). */
static uint32_t response_len(const uint8_t *head, size_t len)
{
	uint32_t spec;

	if (len < SPEC_BYTES)
		return (uint32_t)len;
	spec = tool_get_be32(head);
	if (spec == SPEC_ECHO)
		return (uint32_t)len;
	if (spec == 0)
		return 1;
	return spec > MAX_MSG ? MAX_MSG : spec;
}

uint32_t expected_response(const struct options *o, uint32_t size)
{
	if (size < SPEC_BYTES || o->resp_size == SPEC_ECHO)
		return size;
	return o->resp_size;
}

int pattern_init(void)
{
	uint32_t i;

	perf_pattern = malloc(MAX_MSG);
	if (!perf_pattern)
		return -1;
	for (i = 0; i < MAX_MSG; i++)
		perf_pattern[i] = (uint8_t)(i * 7u + (i >> 10));
	return 0;
}

uint8_t *request_buffer(const struct options *o)
{
	uint8_t *b = malloc(MAX_MSG);

	if (b) {
		memcpy(b, perf_pattern, MAX_MSG);
		tool_put_be32(b, o->resp_size);
	}
	return b;
}

uint32_t request_answer(void *ctx, const uint8_t *head, size_t head_len,
			size_t len)
{
	uint32_t resp = response_len(head, len);

	(void)ctx;
	(void)head_len;
	if (resp == (uint32_t)len &&
	    (len < SPEC_BYTES || tool_get_be32(head) == SPEC_ECHO))
		return TOOL_ANSWER_ECHO;
	return resp;
}

/*
 * workload_dir_for - the folder to read "wN.cdf" of a builtin name from:
 * --workload-dir, else $HOMA_WORKLOAD_DIR, else NULL (the copy built into
 * the program, homa_workloads.h).
 */
static const char *workload_dir_for(const struct options *o)
{
	const char *env = getenv("HOMA_WORKLOAD_DIR");

	if (o->workload_dir)
		return o->workload_dir;
	return env && *env ? env : NULL;
}

/* workload_quantile - the size drawn for a uniform u in [0, 1). */
static uint32_t workload_quantile(const struct workload *wl, double u)
{
	return wl->fixed ? wl->size : workload_dist_sample(&wl->w, u);
}

int workload_open(struct workload *wl, const struct options *o)
{
	char err[256];
	const char *dir = NULL;
	int i, rc;

	memset(wl, 0, sizeof(*wl));
	if (!o->workload) {
		wl->fixed = 1;
		wl->size = o->size;
		wl->mean = o->size;
		wl->min = wl->max = o->size;
		wl->nbuckets = 1;
		wl->lo[0] = wl->hi[0] = o->size;
		snprintf(wl->name, sizeof(wl->name), "%u B", o->size);
		return 0;
	}
	if (homa_workload_builtin(o->workload))
		dir = workload_dir_for(o);
	rc = homa_workload_read(&wl->w, o->workload, dir, MAX_MSG, err,
				sizeof(err));
	if (rc < 0) {
		fprintf(stderr, PROG ": workload %s: %s%s\n", o->workload, err,
			dir ? " (set --workload-dir or HOMA_WORKLOAD_DIR)"
			    : "");
		return -1;
	}
	snprintf(wl->name, sizeof(wl->name), "%s", wl->w.name);
	wl->mean = wl->w.mean;
	wl->min = wl->w.sizes[0];
	wl->max = wl->w.sizes[wl->w.n - 1];
	wl->nbuckets = o->buckets;
	for (i = 0; i < wl->nbuckets; i++) {
		double u0 = (double)i / wl->nbuckets;
		double u1 = (double)(i + 1) / wl->nbuckets;

		wl->lo[i] = workload_quantile(wl, u0);
		wl->hi[i] = workload_quantile(wl, nextafter(u1, 0.0));
	}
	return 0;
}

void workload_close(struct workload *wl)
{
	if (!wl->fixed)
		workload_dist_free(&wl->w);
}

void workload_draw(const struct workload *wl, struct workload_rng *r,
		   uint32_t *size, int *bucket)
{
	double u;
	int b;

	if (wl->fixed) {
		*size = wl->size;
		*bucket = 0;
		return;
	}
	u = workload_rng_uniform(r);
	*size = workload_dist_sample(&wl->w, u);
	b = (int)(u * wl->nbuckets);
	*bucket = b < wl->nbuckets ? b : wl->nbuckets - 1;
}
