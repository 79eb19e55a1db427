// SPDX-License-Identifier: BSD-2-Clause
/* The settings' environment for the unit tests: see env_test_util.h. */
#include <ctype.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "env_test_util.h"
#include "homa_config.h"

void env_var(const char *name, char *buf, size_t cap)
{
	size_t i;

	snprintf(buf, cap, "HOMA_%s", name);
	for (i = 0; buf[i]; i++)
		buf[i] = (char)toupper((unsigned char)buf[i]);
}

int clear_env(void **state)
{
	const struct homa_config_info *rows;
	char var[96];
	int n, i;

	(void)state;
	rows = homa_config_table(&n);
	for (i = 0; i < n; i++) {
		env_var(rows[i].name, var, sizeof(var));
		unsetenv(var);
	}
	return 0;
}

void set_env(const char *var, const char *value)
{
	assert_int_equal(setenv(var, value, 1), 0);
}
