/* SPDX-License-Identifier: BSD-2-Clause */
/* Helpers of the simulator tests (linked into each tests/sim test). */
#ifndef SIM_TEST_UTIL_H
#define SIM_TEST_UTIL_H

#include <stddef.h>

#include "sim.h"
#include "sim_stats.h"
#include "workload_dist.h"

/*
 * sim_test_workload_dir - the folder of w1..w5.cdf: HOMA_SIM_WORKLOAD_DIR
 * from the environment, else the one the build names (the repository's
 * workloads/), else the first workloads/ found going up from the current
 * directory.  NULL when
 * none is found.
 */
const char *sim_test_workload_dir(void);

/* sim_test_load - load w1..w5 into w; fails the test when it cannot. */
void sim_test_load(struct workload_dist *w, const char *name);

/*
 * sim_test_run - check p, run it, build its report; the JSON of the
 * result goes into json (NUL-terminated, at most cap bytes) when json is
 * not NULL.  Fails the test on any error.  Returns the counters through
 * *c when c is not NULL.
 */
void sim_test_run(struct sim_params *p, struct sim_report *r, char *json,
		  size_t cap, struct sim_counters *c);

#endif /* SIM_TEST_UTIL_H */
