// SPDX-License-Identifier: BSD-2-Clause
/* Engine counters of Homa sockets: see tool_counters.h. */

#include <string.h>

#include "homa.h"
#include "tool_counters.h"

int tool_counters_read(struct tool_counters *c, int fd)
{
	c->n = homa_stats_get(fd, c->names, c->values, TOOL_MAX_COUNTERS);
	if (c->n < 0) {
		c->n = 0;
		return -1;
	}
	if (c->n > TOOL_MAX_COUNTERS)
		c->n = TOOL_MAX_COUNTERS;
	return 0;
}

/* index_of - the index of the counter called name in c, or -1. */
static int index_of(const struct tool_counters *c, const char *name)
{
	int i;

	for (i = 0; i < c->n; i++)
		if (c->names[i] && strcmp(c->names[i], name) == 0)
			return i;
	return -1;
}

void tool_counters_add(struct tool_counters *dst,
		       const struct tool_counters *src)
{
	int i, j;

	for (i = 0; i < src->n; i++) {
		j = index_of(dst, src->names[i]);
		if (j < 0) {
			if (dst->n == TOOL_MAX_COUNTERS)
				continue;
			j = dst->n++;
			dst->names[j] = src->names[i];
			dst->values[j] = 0;
		}
		dst->values[j] += src->values[i];
	}
}

int tool_counters_find(const struct tool_counters *c, const char *name,
		       uint64_t *value)
{
	int i = index_of(c, name);

	if (i < 0)
		return -1;
	*value = c->values[i];
	return 0;
}
