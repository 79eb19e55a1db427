// SPDX-License-Identifier: BSD-2-Clause
/* Helpers of the simulator tests: see sim_test_util.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "homa.h"
#include "sim_test_util.h"

/* has_w4 - true when dir holds w4.cdf. */
static int has_w4(const char *dir)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/w4.cdf", dir);
	return access(path, R_OK) == 0;
}

const char *sim_test_workload_dir(void)
{
	static char found[4096];
	const char *env = getenv("HOMA_SIM_WORKLOAD_DIR");
	char up[64] = "";
	int k;

	if (env && has_w4(env))
		return env;
#ifdef HOMA_SIM_WORKLOAD_DIR
	if (has_w4(HOMA_SIM_WORKLOAD_DIR))
		return HOMA_SIM_WORKLOAD_DIR;
#endif
	for (k = 0; k < 8; k++) {
		strcat(up, "../");
		snprintf(found, sizeof(found), "%sworkloads", up);
		if (has_w4(found))
			return found;
	}
	return NULL;
}

void sim_test_load(struct workload_dist *w, const char *name)
{
	const char *dir = sim_test_workload_dir();
	char err[512];

	if (!dir)
		fail_msg("no workloads folder found (set "
			 "HOMA_SIM_WORKLOAD_DIR)");
	if (workload_dist_load(w, name, dir, HOMA_MAX_MESSAGE_LENGTH, err,
			       sizeof(err)) != 0)
		fail_msg("%s", err);
}

void sim_test_run(struct sim_params *p, struct sim_report *r, char *json,
		  size_t cap, struct sim_counters *c)
{
	const struct sim_msg *msgs;
	char err[256];
	struct sim *s;
	size_t n;

	if (sim_params_check(p, err, sizeof(err)) != 0)
		fail_msg("parameters: %s", err);
	s = sim_create(p, err, sizeof(err));
	if (!s)
		fail_msg("sim_create: %s", err);
	assert_int_equal(sim_run(s), 0);
	msgs = sim_messages(s, &n);
	assert_int_equal(sim_report_build(r, p, msgs, n,
					  sim_get_counters(s)), 0);
	if (json) {
		FILE *f = fmemopen(json, cap, "w");

		assert_non_null(f);
		sim_report_json(f, r, p, sim_get_counters(s), NULL);
		assert_true(ftell(f) < (long)cap);
		fclose(f);
	}
	if (c)
		*c = *sim_get_counters(s);
	sim_destroy(s);
}
