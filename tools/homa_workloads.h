/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * homa_workloads - the workloads W1-W5 of the Homa papers (workloads/
 * w1..w5.cdf of the source tree), built into the tools that use them, so
 * an installed homa-sim or homa-perf needs no file to run them.  The data
 * are generated at build time (cmake/embed_workloads.cmake writes
 * homa_workloads_data.c into the build tree); this header is all a tool
 * includes.
 */
#ifndef HOMA_WORKLOADS_H
#define HOMA_WORKLOADS_H

#include <stddef.h>

/* One built-in workload: its name ("w1") and the text of its .cdf file. */
struct homa_workload_text {
	const char *name;
	const char *text;              /* NUL-terminated */
};

/* The built-in workloads, in name order, and their number. */
extern const struct homa_workload_text homa_workload_texts[];
extern const size_t homa_num_workload_texts;

/*
 * homa_workload_builtin - the text of built-in workload name ("w1".."w5",
 * either case), or NULL for any other name.  The text is static: never
 * freed, never changed.
 */
static inline const char *homa_workload_builtin(const char *name)
{
	size_t i;

	if (!name || (name[0] != 'w' && name[0] != 'W') || !name[1] ||
	    name[2])
		return NULL;
	for (i = 0; i < homa_num_workload_texts; i++)
		if (homa_workload_texts[i].name[1] == name[1])
			return homa_workload_texts[i].text;
	return NULL;
}

#endif /* HOMA_WORKLOADS_H */
