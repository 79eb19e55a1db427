// SPDX-License-Identifier: BSD-2-Clause
/*
 * Unit tests of homa_sockconfig (src/sock/homa_sockconfig.c): the settings
 * from the process environment, with rejected variables reported on
 * stderr.  The parsing itself is the core's (homa_config_apply_vars,
 * test_homa_config.c).  The test links the socket layer (homa_io).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "env_test_util.h"
#include "homa_sockconfig.h"

/* load_env_captured - homa_config_load_env(cfg) with stderr going to a
 * temporary file, whose text comes back in buf (cap bytes, terminated).
 * Returns what homa_config_load_env returned. */
static int load_env_captured(struct homa_config *cfg, char *buf, size_t cap)
{
	FILE *tmp = tmpfile();
	int saved, rejected;
	size_t n;

	assert_non_null(tmp);
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	assert_true(saved >= 0);
	assert_true(dup2(fileno(tmp), STDERR_FILENO) >= 0);
	rejected = homa_config_load_env(cfg);
	fflush(stderr);
	assert_true(dup2(saved, STDERR_FILENO) >= 0);
	close(saved);
	rewind(tmp);
	n = fread(buf, 1, cap - 1, tmp);
	buf[n] = '\0';
	fclose(tmp);
	return rejected;
}

/* Nothing set: nothing changes, nothing is said. */
static void homa_config_load_env__nothing_set(void **state)
{
	struct homa_config cfg, def;
	char err[512];

	(void)state;
	homa_config_defaults(&cfg);
	homa_config_defaults(&def);
	assert_int_equal(load_env_captured(&cfg, err, sizeof(err)), 0);
	assert_memory_equal(&cfg, &def, sizeof(def));
	assert_string_equal(err, "");
}

/* A variable of the environment sets its setting; one out of range is
 * ignored and named on stderr with the range. */
static void homa_config_load_env__reports_on_stderr(void **state)
{
	struct homa_config cfg;
	char err[512];

	(void)state;
	set_env("HOMA_UNSCHED_BYTES", "20000");
	set_env("HOMA_MAX_GAPS", "65");
	homa_config_defaults(&cfg);
	assert_int_equal(load_env_captured(&cfg, err, sizeof(err)), 1);
	assert_int_equal(cfg.unsched_bytes, 20000);
	assert_int_equal(cfg.max_gaps, 32);
	assert_string_equal(err, "libhoma: ignoring HOMA_MAX_GAPS=65 "
			    "(expected 1..64)\n");
}

/* Values inconsistent together: the defaults, and stderr says why. */
static void homa_config_load_env__inconsistent_on_stderr(void **state)
{
	struct homa_config cfg, def;
	char err[512];

	(void)state;
	set_env("HOMA_UNSCHED_CUTOFF7", "5000");
	homa_config_defaults(&cfg);
	homa_config_defaults(&def);
	assert_int_equal(load_env_captured(&cfg, err, sizeof(err)), 1);
	assert_memory_equal(&cfg, &def, sizeof(def));
	assert_string_equal(err, "libhoma: inconsistent HOMA_* settings "
			    "(cutoffs must not increase with priority, "
			    "max_sched_prio < num_priorities, loopback_mtu 0 "
			    "or at least 576); using defaults\n");
}

/* T - a test run with a clean HOMA_* environment (before and after). */
#define T(f) cmocka_unit_test_setup_teardown(f, clear_env, clear_env)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(homa_config_load_env__nothing_set),
		T(homa_config_load_env__reports_on_stderr),
		T(homa_config_load_env__inconsistent_on_stderr),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
