/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests of rpc_registry (src/rpc/rpc_registry.c), named
 * <function>__<case>, with the services of rpctest.proto.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "rpc_registry.h"
#include "rpctest.pb-c.h"

/* Services without implementations: never called here. */
static Rpctest__Tester_Service tester = { .base = RPCTEST__TESTER__BASE_INIT };
static Rpctest__Absent_Service absent = { .base = RPCTEST__ABSENT__BASE_INIT };

static void rpcr_add__one_entry_per_method(void **state)
{
	struct rpcr r = { 0 };

	(void)state;
	assert_int_equal(rpcr_add(&r, &tester.base), 0);
	assert_int_equal(r.n, 4);
	assert_string_equal(r.methods[0].path, "/rpctest.Tester/Echo");
	assert_string_equal(r.methods[3].path, "/rpctest.Tester/Silent");
	assert_int_equal(r.methods[2].index, 2);
	assert_ptr_equal(r.methods[0].input, &rpctest__req__descriptor);
	assert_ptr_equal(r.methods[0].service, &tester.base);
	rpcr_free(&r);
	assert_int_equal(r.n, 0);
}

static void rpcr_add__second_service_of_a_name_refused(void **state)
{
	struct rpcr r = { 0 };

	(void)state;
	assert_int_equal(rpcr_add(&r, &tester.base), 0);
	assert_int_equal(rpcr_add(&r, &absent.base), 0);
	assert_int_equal(rpcr_add(&r, &tester.base), EEXIST);
	assert_int_equal(r.n, 5);
	rpcr_free(&r);
}

static void rpcr_add__null_or_incomplete_service_refused(void **state)
{
	ProtobufCService no_invoke = { &rpctest__tester__descriptor, NULL,
				       NULL };
	struct rpcr r = { 0 };

	(void)state;
	assert_int_equal(rpcr_add(&r, NULL), EINVAL);
	assert_int_equal(rpcr_add(&r, &no_invoke), EINVAL);
	assert_int_equal(r.n, 0);
	rpcr_free(&r);
}

static void rpcr_find__exact_path_only(void **state)
{
	struct rpcr r = { 0 };
	const char *p = "/rpctest.Tester/Hold";

	(void)state;
	assert_int_equal(rpcr_add(&r, &tester.base), 0);
	assert_ptr_equal(rpcr_find(&r, (const uint8_t *)p, strlen(p)),
			 &r.methods[1]);
	assert_null(rpcr_find(&r, (const uint8_t *)p, strlen(p) - 1));
	assert_null(rpcr_find(&r, (const uint8_t *)"/rpctest.Tester/hold",
			      20));
	assert_null(rpcr_find(&r, (const uint8_t *)"/rpctest.Absent/Nothing",
			      23));
	rpcr_free(&r);
}

static void rpcr_stats__copies_the_counters(void **state)
{
	struct homa_rpc_method_stats st;
	struct rpcr r = { 0 };

	(void)state;
	assert_int_equal(rpcr_add(&r, &tester.base), 0);
	atomic_fetch_add(&r.methods[0].started, 3);
	atomic_fetch_add(&r.methods[0].ok, 2);
	atomic_fetch_add(&r.methods[0].expired, 1);
	rpcr_stats(&r.methods[0], &st);
	assert_int_equal(st.started, 3);
	assert_int_equal(st.ok, 2);
	assert_int_equal(st.failed, 0);
	assert_int_equal(st.expired, 1);
	rpcr_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rpcr_add__one_entry_per_method),
		cmocka_unit_test(rpcr_add__second_service_of_a_name_refused),
		cmocka_unit_test(rpcr_add__null_or_incomplete_service_refused),
		cmocka_unit_test(rpcr_find__exact_path_only),
		cmocka_unit_test(rpcr_stats__copies_the_counters),
	};

	return cmocka_run_group_tests_name("rpc_registry", tests, NULL, NULL);
}
