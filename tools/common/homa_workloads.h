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

#include <stdio.h>
#include <stddef.h>

#include "workload_dist.h"

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

/*
 * homa_workload_read - load workload spec into w: a built-in name
 * ("w1".."w5", either case) from the copy built in when dir is NULL, else
 * what workload_dist_load reads (dir/wN.cdf for those names, any other spec
 * as a file path).  cap, err and errcap as workload_dist_load takes them;
 * returns what it returns.
 */
static inline int homa_workload_read(struct workload_dist *w, const char *spec,
				     const char *dir, uint32_t cap, char *err,
				     size_t errcap)
{
	const char *text = homa_workload_builtin(spec);
	char name[4];

	if (!text || dir)
		return workload_dist_load(w, spec, dir, cap, err, errcap);
	snprintf(name, sizeof(name), "w%c", spec[1]);
	return workload_dist_parse(w, text, cap, name, err, errcap);
}

#endif /* HOMA_WORKLOADS_H */
