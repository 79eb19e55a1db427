// SPDX-License-Identifier: BSD-2-Clause
/* homa-perf: unloaded RTTs, the baseline of slowdowns (see perf.h). */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perf.h"
#include "tool_clock.h"
#include "tool_frame.h"
#include "tool_hsock.h"
#include "tool_tcp.h"

/* Sizes the unloaded RTT is measured at (those inside the workload's
 * range, plus its smallest and largest size). */
static const uint32_t cal_grid[] = {
	1, 100, 200, 500, 1000, 1400, 2000, 3000, 5000, 10000, 20000,
	50000, 100000, 200000, 500000, 1000000
};

/* baseline_add - add (size, rtt) to protocol p, kept sorted by size; a
 * size already present is replaced.  Returns 0, -1 when full. */
static int baseline_add(struct baseline *b, enum proto p, uint32_t size,
			double rtt_ns, long rpcs)
{
	int i, j;

	for (i = 0; i < b->n[p] && b->size[p][i] < size; i++)
		;
	if (i < b->n[p] && b->size[p][i] == size) {
		b->rtt_ns[p][i] = rtt_ns;
		b->rpcs[p][i] = rpcs;
		return 0;
	}
	if (b->n[p] == MAX_CAL)
		return -1;
	for (j = b->n[p]; j > i; j--) {
		b->size[p][j] = b->size[p][j - 1];
		b->rtt_ns[p][j] = b->rtt_ns[p][j - 1];
		b->rpcs[p][j] = b->rpcs[p][j - 1];
	}
	b->size[p][i] = size;
	b->rtt_ns[p][i] = rtt_ns;
	b->rpcs[p][i] = rpcs;
	b->n[p]++;
	return 0;
}

/*
 * baseline_proto_rtt - the unloaded RTT of size bytes under protocol p:
 * linear in size between the two nearest points; the first point's value
 * below them; above them the last segment's slope (never decreasing).
 * Returns 0 when p has no points.
 */
static double baseline_proto_rtt(const struct baseline *b, enum proto p,
				 uint32_t size)
{
	const uint32_t *s = b->size[p];
	const double *r = b->rtt_ns[p];
	int n = b->n[p], i;
	double slope;

	if (n == 0)
		return 0;
	if (size <= s[0] || n == 1)
		return size <= s[0] ? r[0] : r[n - 1];
	for (i = 1; i < n && s[i] < size; i++)
		;
	if (i == n) {
		slope = (r[n - 1] - r[n - 2]) / (double)(s[n - 1] - s[n - 2]);
		if (slope < 0)
			slope = 0;
		return r[n - 1] + slope * (double)(size - s[n - 1]);
	}
	return r[i - 1] + (r[i] - r[i - 1]) * (double)(size - s[i - 1]) /
			  (double)(s[i] - s[i - 1]);
}

double baseline_rtt(const struct baseline *b, enum proto p,
		    uint32_t size)
{
	double best = 0, v;
	int q;

	if (b->own)
		return baseline_proto_rtt(b, p, size);
	for (q = 0; q < NPROTO; q++) {
		v = baseline_proto_rtt(b, (enum proto)q, size);
		if (v > 0 && (best == 0 || v < best))
			best = v;
	}
	return best;
}

int baseline_write(const struct baseline *b, const char *path)
{
	FILE *f = fopen(path, "w");
	int p, i;

	if (!f) {
		fprintf(stderr, PROG ": --baseline-out %s: %s\n", path,
			strerror(errno));
		return -1;
	}
	fprintf(f, "# homa-perf unloaded RTTs: protocol size_bytes rtt_ns "
		"rpcs (median of rpcs RPCs sent one at a time)\n");
	for (p = 0; p < NPROTO; p++)
		for (i = 0; i < b->n[p]; i++)
			fprintf(f, "%s %u %.0f %ld\n", proto_name[p],
				b->size[p][i], b->rtt_ns[p][i],
				b->rpcs[p][i]);
	if (fclose(f) != 0) {
		fprintf(stderr, PROG ": --baseline-out %s: %s\n", path,
			strerror(errno));
		return -1;
	}
	return 0;
}

int baseline_read(struct baseline *b, const char *path)
{
	FILE *f = fopen(path, "r");
	char line[256], name[16];
	unsigned int size;
	double rtt;
	long rpcs;
	int lineno = 0, p, ok = 1;

	if (!f) {
		fprintf(stderr, PROG ": --baseline %s: %s\n", path,
			strerror(errno));
		return -1;
	}
	while (ok && fgets(line, sizeof(line), f)) {
		lineno++;
		if (line[0] == '#' || line[strspn(line, " \t\r\n")] == '\0')
			continue;
		ok = sscanf(line, "%15s %u %lf %ld", name, &size, &rtt,
			    &rpcs) == 4 && size >= 1 && size <= MAX_MSG &&
		     rtt > 0;
		for (p = 0; ok && p < NPROTO; p++)
			if (strcmp(name, proto_name[p]) == 0)
				break;
		ok = ok && p < NPROTO &&
		     baseline_add(b, (enum proto)p, size, rtt, rpcs) == 0;
	}
	fclose(f);
	if (!ok) {
		fprintf(stderr, PROG ": --baseline %s line %d: expected "
			"'homa|tcp SIZE RTT_NS RPCS' (at most %d sizes "
			"each)\n", path, lineno, MAX_CAL);
		return -1;
	}
	b->from_file = 1;
	return 0;
}

int cal_sizes(const struct workload *wl, uint32_t *out)
{
	size_t i;
	int n = 0;

	out[n++] = wl->min;
	for (i = 0; i < sizeof(cal_grid) / sizeof(cal_grid[0]); i++)
		if (cal_grid[i] > wl->min && cal_grid[i] < wl->max &&
		    n < MAX_CAL - 1)
			out[n++] = cal_grid[i];
	if (wl->max != wl->min)
		out[n++] = wl->max;
	return n;
}

/* cal_rpc_homa - one Homa RPC of size bytes from h to dest, waiting for
 * its response.  Returns the response length, or -1 with why set. */
static long cal_rpc_homa(struct tool_hsock *h,
			 const union sockaddr_in_union *dest,
			 const uint8_t *req, uint32_t size, char *why,
			 size_t whycap)
{
	uint64_t id = 0;
	ssize_t n;

	if (homa_send(h->fd, req, size, dest, &id, 0) < 0) {
		snprintf(why, whycap, "homa_send: %s", strerror(errno));
		return -1;
	}
	n = tool_hsock_recv(h, HOMA_RECVMSG_RESPONSE, id);
	if (n < 0) {
		snprintf(why, whycap, "Homa RPC of %u bytes: %s", size,
			 strerror(errno));
		return -1;
	}
	return (long)n;
}

/* cal_rpc_tcp - one request of size bytes on connection fd and its
 * response (read into rbuf).  Returns the response length, or -1 with
 * why set. */
static long cal_rpc_tcp(int fd, uint8_t *rbuf, const uint8_t *req,
			uint32_t size, char *why, size_t whycap)
{
	long n;

	if (tool_frame_write(fd, req, size) < 0) {
		snprintf(why, whycap, "TCP send: %s", strerror(errno));
		return -1;
	}
	n = tool_frame_read(fd, rbuf, MAX_MSG);
	if (n < 0)
		snprintf(why, whycap, "TCP receive: %s",
			 errno ? strerror(errno) : "connection closed");
	return n;
}

int calibrate(const struct options *o, enum proto p,
	      const union sockaddr_in_union *homa_dest,
	      const union sockaddr_in_union *tcp_dest,
	      const uint32_t *sizes, int n, struct baseline *b)
{
	struct homa_histogram *hist = malloc(sizeof(*hist));
	uint8_t *req = request_buffer(o), *rbuf = malloc(MAX_MSG);
	struct tool_hsock h;
	char why[200] = "";
	uint64_t t0, t1, start;
	long got, k, kept;
	int i, fd = -1, rc = -1;

	memset(&h, 0, sizeof(h));
	if (!hist || !req || !rbuf) {
		snprintf(why, sizeof(why), "out of memory");
		goto out_free;
	}
	if (p == P_HOMA) {
		if (tool_hsock_open(&h, homa_dest->sa.sa_family, NULL,
				    REGION_BYTES, why, sizeof(why)) < 0)
			goto out_free;
	} else {
		fd = tool_tcp_connect(tcp_dest);
		if (fd < 0) {
			snprintf(why, sizeof(why), "TCP connect: %s",
				 strerror(errno));
			goto out_free;
		}
	}
	for (i = 0; i < n; i++) {
		uint32_t want = expected_response(o, sizes[i]);

		homa_histogram_reset(hist);
		start = tool_now_ns();
		for (k = 0, kept = 0; k < CAL_WARM + o->calib_rpcs; k++) {
			if (kept >= 3 && tool_now_ns() - start > CAL_BUDGET_NS)
				break;
			t0 = tool_now_ns();
			got = p == P_HOMA
			      ? cal_rpc_homa(&h, homa_dest, req, sizes[i], why,
					     sizeof(why))
			      : cal_rpc_tcp(fd, rbuf, req, sizes[i], why,
					    sizeof(why));
			t1 = tool_now_ns();
			if (got < 0)
				goto out_close;
			if ((uint32_t)got != want) {
				snprintf(why, sizeof(why), "response of %ld "
					 "bytes to %u, expected %u", got,
					 sizes[i], want);
				goto out_close;
			}
			if (k >= CAL_WARM) {
				homa_histogram_record(hist, t1 - t0);
				kept++;
			}
		}
		if (baseline_add(b, p, sizes[i],
				 (double)homa_histogram_percentile(hist, 50),
				 kept) < 0) {
			snprintf(why, sizeof(why), "too many sizes");
			goto out_close;
		}
	}
	rc = 0;
out_close:
	if (p == P_HOMA)
		tool_hsock_close(&h);
	else
		close(fd);
out_free:
	if (rc < 0)
		fprintf(stderr, PROG ": %s calibration: %s\n", proto_name[p],
			why);
	free(hist);
	free(req);
	free(rbuf);
	return rc;
}
