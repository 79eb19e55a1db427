// SPDX-License-Identifier: BSD-2-Clause
/* Samples of memory, descriptors and live RPCs: see tool_sampler.h. */

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "homa.h"
#include "tool_clock.h"
#include "tool_sampler.h"

/* rss_kb - VmRSS of the calling process in KB, or -1. */
static long rss_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kb = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "VmRSS:", 6) == 0) {
			kb = strtol(line + 6, NULL, 10);
			break;
		}
	fclose(f);
	return kb;
}

/* homa_rpcs - the num_rpcs gauge of fd when it is a Homa socket into *v.
 * Returns 1 for a Homa socket, 0 for any other descriptor. */
static int homa_rpcs(int fd, uint64_t *v)
{
	const char *names[256];
	uint64_t values[256];
	int i, n = homa_stats_get(fd, names, values, 256);

	if (n < 0)
		return 0;
	*v = 0;
	for (i = 0; i < n && i < 256; i++)
		if (names[i] && strcmp(names[i], "num_rpcs") == 0)
			*v = values[i];
	return 1;
}

void tool_sample_take(struct tool_sample *s)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	uint64_t v;
	int fd;

	s->rss_kb = rss_kb();
	s->fds = d ? 0 : -1;
	s->homa_socks = 0;
	s->num_rpcs = 0;
	if (!d)
		return;
	while ((e = readdir(d))) {
		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		fd = atoi(e->d_name);
		if (fd == dirfd(d))
			continue;       /* the listing's own descriptor */
		s->fds++;
		if (homa_rpcs(fd, &v)) {
			s->homa_socks++;
			s->num_rpcs += v;
		}
	}
	closedir(d);
}

/* The one sampler of the process (its thread runs until the end). */
static struct sampler {
	FILE *f;
	uint64_t interval_ns;
	uint64_t t0;
	int started;
} the_sampler;

/* sampler_main - the sampling thread: a line every interval, for ever. */
static void *sampler_main(void *arg)
{
	struct sampler *sp = arg;
	struct tool_sample s;
	uint64_t next = sp->t0;

	for (;;) {
		tool_sleep_until(next);
		tool_sample_take(&s);
		fprintf(sp->f, "sample t=%.1f rss_kb=%ld fds=%d homa_socks=%d "
			"num_rpcs=%llu\n", (double)(tool_now_ns() - sp->t0) / 1e9,
			s.rss_kb, s.fds, s.homa_socks,
			(unsigned long long)s.num_rpcs);
		fflush(sp->f);
		next += sp->interval_ns;
	}
	return NULL;
}

int tool_sampler_start(FILE *f, double interval_s)
{
	struct sampler *sp = &the_sampler;
	pthread_attr_t attr;
	pthread_t t;
	int err;

	if (sp->started) {
		errno = EBUSY;
		return -1;
	}
	sp->f = f;
	sp->interval_ns = (uint64_t)(interval_s * 1e9);
	if (sp->interval_ns == 0)
		sp->interval_ns = 1;
	sp->t0 = tool_now_ns();
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	err = pthread_create(&t, &attr, sampler_main, sp);
	pthread_attr_destroy(&attr);
	if (err != 0) {
		errno = err;
		return -1;
	}
	sp->started = 1;
	(void)pthread_setname_np(t, "sampler");
	return 0;
}
