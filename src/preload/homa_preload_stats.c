/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * homa_preload_stats - HOMA_PRELOAD_STATS=FILE: as the shim closes a Homa
 * socket, it appends the socket's counters (homa_stats_get) to FILE, so
 * that a test can read what a program under the shim dropped and why
 * (docs/preload.md).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "homa_preload.h"

/* append - add one counter "name=value" to line at *len (of size cap);
 * false when it does not fit. */
static bool append(char *line, size_t cap, size_t *len, const char *name,
		   uint64_t value)
{
	int n = snprintf(line + *len, cap - *len, " %s=%llu", name,
			 (unsigned long long)value);

	if (n < 0 || (size_t)n >= cap - *len)
		return false;
	*len += (size_t)n;
	return true;
}

/* See homa_preload.h. */
void pl_stats_dump(int nfd)
{
	const char *path = getenv("HOMA_PRELOAD_STATS");
	const char *names[128];
	uint64_t values[128];
	struct pl_engine_info info = { 0 };
	char line[4096];
	size_t len;
	int n, fd;

	if (!path || !*path)
		return;
	n = homa_stats_get(nfd, names, values, 128);
	if (n < 0 || pl_engine_info(nfd, &info) != 0)
		return;
	if (n > 128)
		n = 128;
	len = (size_t)snprintf(line, sizeof(line), "homa_preload_stats pid=%d port=%u",
			       (int)getpid(), (unsigned)info.port);
	for (int i = 0; i < n; i++)
		if (values[i] && !append(line, sizeof(line) - 1, &len,
					 names[i], values[i]))
			break;
	line[len++] = '\n';
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	/* One write: lines of several processes do not interleave; a short
	 * or failed write loses the line, nothing else. */
	ssize_t w = pl_next.write(fd, line, len);

	(void)w;
	pl_next.close(fd);
}
