/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * env_test_util - what the tests of the settings (test_homa_config.c,
 * test_homa_sockconfig.c) share: the HOMA_<NAME> variables of the
 * environment, named, set and cleared.
 *
 * Include <cmocka.h> (with its prerequisites) before this header.
 */
#ifndef ENV_TEST_UTIL_H
#define ENV_TEST_UTIL_H

#include <stddef.h>

/* env_var - HOMA_<NAME> of a setting name, into buf. */
void env_var(const char *name, char *buf, size_t cap);

/* clear_env - a cmocka setup and teardown: unset HOMA_<NAME> for every
 * setting; returns 0. */
int clear_env(void **state);

/* set_env - setenv that must work (fails the running test otherwise). */
void set_env(const char *var, const char *value);

#endif /* ENV_TEST_UTIL_H */
