// SPDX-License-Identifier: BSD-2-Clause
/* The settings from the process environment: see homa_sockconfig.h. */

#include <stdio.h>
#include <stdlib.h>

#include "homa_sockconfig.h"

/* env_lookup - a homa_config_lookup_fn over the process environment. */
static const char *env_lookup(void *arg, const char *var)
{
	(void)arg;
	return getenv(var);
}

/* report_stderr - a homa_config_report_fn that tells stderr. */
static void report_stderr(void *arg, const struct homa_config_reject *r)
{
	(void)arg;
	if (r->var) {
		fprintf(stderr, "libhoma: ignoring %s=%s (expected %lld"
			"..%lld)\n", r->var, r->text, (long long)r->min,
			(long long)r->max);
		return;
	}
	fprintf(stderr, "libhoma: inconsistent HOMA_* settings "
		"(cutoffs must not increase with priority, "
		"max_sched_prio < num_priorities, loopback_mtu 0 or "
		"at least 576); using defaults\n");
}

int homa_config_load_env(struct homa_config *cfg)
{
	return homa_config_apply_vars(cfg, env_lookup, report_stderr, NULL);
}
