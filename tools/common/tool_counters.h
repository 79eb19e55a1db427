/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tool_counters - the engine counters of Homa sockets (homa_stats_get):
 * read one socket's, sum several sockets' by name, look one up.
 */
#ifndef TOOL_COUNTERS_H
#define TOOL_COUNTERS_H

#include <stdint.h>

#define TOOL_MAX_COUNTERS 256

/* Named counters; the names are the library's (static, never freed). */
struct tool_counters {
	int n;
	const char *names[TOOL_MAX_COUNTERS];
	uint64_t values[TOOL_MAX_COUNTERS];
};

/* tool_counters_read - the counters of Homa socket fd into c.  Returns 0,
 * or -1 with errno (c->n is 0 then). */
int tool_counters_read(struct tool_counters *c, int fd);

/* tool_counters_add - add every counter of src to the one of the same
 * name in dst (names dst lacks are appended while there is room). */
void tool_counters_add(struct tool_counters *dst,
		       const struct tool_counters *src);

/* tool_counters_find - the value of the counter called name in c into
 * *value.  Returns 0, or -1 when c has no such counter. */
int tool_counters_find(const struct tool_counters *c, const char *name,
		       uint64_t *value);

#endif /* TOOL_COUNTERS_H */
