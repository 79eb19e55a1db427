// SPDX-License-Identifier: BSD-2-Clause
/* Message-size distributions: see workload_dist.h. */

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workload_dist.h"

void workload_dist_free(struct workload_dist *w)
{
	free(w->sizes);
	free(w->cum);
	w->sizes = NULL;
	w->cum = NULL;
	w->n = 0;
}

/* add_point - append (size, cum) to w, merging with the last point when
 * the capped size repeats.  Returns 0 or -ENOMEM. */
static int add_point(struct workload_dist *w, size_t *cap, uint32_t size,
		     double cum)
{
	if (w->n > 0 && w->sizes[w->n - 1] == size) {
		w->cum[w->n - 1] = cum;
		return 0;
	}
	if (w->n == *cap) {
		size_t c = *cap ? *cap * 2 : 64;
		uint32_t *s = realloc(w->sizes, c * sizeof(*s));
		double *f;

		if (!s)
			return -ENOMEM;
		w->sizes = s;
		f = realloc(w->cum, c * sizeof(*f));
		if (!f)
			return -ENOMEM;
		w->cum = f;
		*cap = c;
	}
	w->sizes[w->n] = size;
	w->cum[w->n] = cum;
	w->n++;
	return 0;
}

/* parse_line - one line "size fraction" (leading blanks, a trailing
 * comment allowed).  Returns 1 with the values, 0 for a blank or comment
 * line, -1 when malformed. */
static int parse_line(const char *line, unsigned long long *size,
		      double *frac)
{
	const char *p = line;
	char *end;

	while (*p == ' ' || *p == '\t' || *p == '\r')
		p++;
	if (*p == '\0' || *p == '\n' || *p == '#')
		return 0;
	if (!isdigit((unsigned char)*p))
		return -1;
	errno = 0;
	*size = strtoull(p, &end, 10);
	if (errno || end == p || (*end != ' ' && *end != '\t'))
		return -1;
	p = end;
	*frac = strtod(p, &end);
	if (end == p)
		return -1;
	while (*end == ' ' || *end == '\t' || *end == '\r')
		end++;
	if (*end != '\0' && *end != '\n' && *end != '#')
		return -1;
	return 1;
}

/* check_point - the reason why (size, frac) cannot follow the points
 * already in w, or NULL when it can. */
static const char *check_point(const struct workload_dist *w,
			       unsigned long long size, double frac,
			       unsigned long long prev_size)
{
	if (size < 1)
		return "size must be at least 1";
	if (!(frac >= 0.0 && frac <= 1.0))
		return "fraction must be in [0, 1]";
	if (w->n > 0 && size < prev_size)
		return "sizes must not decrease";
	if (w->n > 0 && frac < w->cum[w->n - 1])
		return "fractions must not decrease";
	return NULL;
}

/* finish - normalise the fractions and compute the mean.  Returns 0 or
 * -EINVAL (message in err). */
static int finish(struct workload_dist *w, char *err, size_t errcap)
{
	double last, prev = 0.0, mean = 0.0;
	size_t i;

	if (w->n == 0) {
		snprintf(err, errcap, "%s: no points", w->name);
		return -EINVAL;
	}
	last = w->cum[w->n - 1];
	if (last <= 0.0) {
		snprintf(err, errcap, "%s: last fraction is 0", w->name);
		return -EINVAL;
	}
	for (i = 0; i < w->n; i++) {
		w->cum[i] = i + 1 == w->n ? 1.0 : w->cum[i] / last;
		mean += (w->cum[i] - prev) * w->sizes[i];
		prev = w->cum[i];
	}
	w->mean = mean;
	return 0;
}

int workload_dist_parse(struct workload_dist *w, const char *text,
			uint32_t cap, const char *name, char *err,
			size_t errcap)
{
	unsigned long long prev_size = 0;
	size_t have = 0;
	int lineno = 1, rc = 0;

	memset(w, 0, sizeof(*w));
	snprintf(w->name, sizeof(w->name), "%s", name ? name : "workload");
	for (const char *line = text; line && *line; lineno++) {
		unsigned long long size;
		const char *why;
		double frac;
		int k = parse_line(line, &size, &frac);

		if (k < 0) {
			snprintf(err, errcap, "%s:%d: expected \"size "
				 "fraction\"", w->name, lineno);
			rc = -EINVAL;
			break;
		}
		if (k > 0) {
			why = check_point(w, size, frac, prev_size);
			if (why) {
				snprintf(err, errcap, "%s:%d: %s", w->name,
					 lineno, why);
				rc = -EINVAL;
				break;
			}
			prev_size = size;
			rc = add_point(w, &have, size > cap ? cap :
				       (uint32_t)size, frac);
			if (rc)
				break;
		}
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	if (rc == 0)
		rc = finish(w, err, errcap);
	if (rc)
		workload_dist_free(w);
	return rc;
}

/* read_file - the whole file as a NUL-terminated string (caller frees), or
 * NULL. */
static char *read_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	size_t len = 0, cap = 65536, n;
	char *buf = NULL, *p;

	if (!f)
		return NULL;
	for (;;) {
		p = realloc(buf, cap + 1);
		if (!p)
			break;
		buf = p;
		n = fread(buf + len, 1, cap - len, f);
		len += n;
		if (len < cap)
			break;
		cap *= 2;
	}
	fclose(f);
	if (!p) {
		free(buf);
		return NULL;
	}
	buf[len] = '\0';
	return buf;
}

/* is_builtin - true when spec is w1..w5 (any case). */
static int is_builtin(const char *spec)
{
	return (spec[0] == 'w' || spec[0] == 'W') && spec[1] >= '1' &&
	       spec[1] <= '5' && spec[2] == '\0';
}

int workload_dist_load(struct workload_dist *w, const char *spec,
		       const char *dir, uint32_t cap, char *err, size_t errcap)
{
	char path[4096];
	const char *name = spec;
	char short_name[4];
	char *text;
	int rc;

	if (is_builtin(spec)) {
		snprintf(short_name, sizeof(short_name), "w%c", spec[1]);
		snprintf(path, sizeof(path), "%s/%s.cdf", dir ? dir : ".",
			 short_name);
		name = short_name;
	} else {
		snprintf(path, sizeof(path), "%s", spec);
		name = strrchr(spec, '/') ? strrchr(spec, '/') + 1 : spec;
	}
	text = read_file(path);
	if (!text) {
		snprintf(err, errcap, "cannot read workload file %s: %s", path,
			 strerror(errno ? errno : EIO));
		return -ENOENT;
	}
	rc = workload_dist_parse(w, text, cap, name, err, errcap);
	free(text);
	return rc;
}

uint32_t workload_dist_sample(const struct workload_dist *w, double u)
{
	size_t lo = 0, hi = w->n - 1;

	/* Smallest i with cum[i] > u; cum[n - 1] == 1 > u always. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (w->cum[mid] > u)
			hi = mid;
		else
			lo = mid + 1;
	}
	return w->sizes[lo];
}

double workload_dist_expect(const struct workload_dist *w,
			    double (*f)(uint32_t size, const void *ctx),
			    const void *ctx)
{
	double prev = 0.0, sum = 0.0;
	size_t i;

	for (i = 0; i < w->n; i++) {
		sum += (w->cum[i] - prev) * f(w->sizes[i], ctx);
		prev = w->cum[i];
	}
	return sum;
}
