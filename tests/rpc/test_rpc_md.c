/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests of rpc_md and rpc_status (src/rpc), named <function>__<case>.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rpc_md.h"
#include "rpc_status.h"

static void rpcmd_to_wire__points_at_entries(void **state)
{
	const struct homa_rpc_md md[2] = {
		{ "user", "ann", 3 }, { "x-empty", NULL, 0 },
	};
	struct rpcw_hdr h;

	(void)state;
	memset(&h, 0, sizeof(h));
	assert_int_equal(rpcmd_to_wire(md, 2, &h), HOMA_RPC_OK);
	assert_int_equal(h.n_md, 2);
	assert_int_equal(h.md[0].key_len, 4);
	assert_ptr_equal(h.md[0].value, md[0].value);
	assert_int_equal(h.md[1].value_len, 0);
}

static void rpcmd_to_wire__refuses_bad_entries(void **state)
{
	static char big[RPCW_MAX_MD_VALUE + 1];
	struct homa_rpc_md md[RPCW_MAX_MD + 1];
	struct rpcw_hdr h;

	(void)state;
	memset(&h, 0, sizeof(h));
	for (size_t i = 0; i < RPCW_MAX_MD + 1; i++)
		md[i] = (struct homa_rpc_md){ "k", "v", 1 };
	assert_int_equal(rpcmd_to_wire(md, RPCW_MAX_MD + 1, &h),
			 HOMA_RPC_INVALID_ARGUMENT);
	assert_int_equal(h.n_md, 0);
	md[0] = (struct homa_rpc_md){ "Bad", "v", 1 };
	assert_int_equal(rpcmd_to_wire(md, 1, &h), HOMA_RPC_INVALID_ARGUMENT);
	md[0] = (struct homa_rpc_md){ NULL, "v", 1 };
	assert_int_equal(rpcmd_to_wire(md, 1, &h), HOMA_RPC_INVALID_ARGUMENT);
	md[0] = (struct homa_rpc_md){ "k", big, sizeof(big) };
	assert_int_equal(rpcmd_to_wire(md, 1, &h), HOMA_RPC_INVALID_ARGUMENT);
	md[0] = (struct homa_rpc_md){ "k", NULL, 1 };
	assert_int_equal(rpcmd_to_wire(md, 1, &h), HOMA_RPC_INVALID_ARGUMENT);
	assert_int_equal(rpcmd_to_wire(NULL, 1, &h),
			 HOMA_RPC_INVALID_ARGUMENT);
}

static void rpcmd_lookup__finds_exact_key(void **state)
{
	const struct homa_rpc_md md[2] = {
		{ "ab", "1", 1 }, { "a", "22", 2 },
	};
	struct rpcw_hdr h;
	size_t len = 0;

	(void)state;
	memset(&h, 0, sizeof(h));
	assert_int_equal(rpcmd_to_wire(md, 2, &h), HOMA_RPC_OK);
	assert_memory_equal(rpcmd_lookup(&h, "a", &len), "22", 2);
	assert_int_equal(len, 2);
	assert_memory_equal(rpcmd_lookup(&h, "ab", NULL), "1", 1);
	assert_null(rpcmd_lookup(&h, "abc", &len));
}

static void rpcmd_result_mem__nul_terminated_copies(void **state)
{
	const struct homa_rpc_md md[1] = { { "k", "val", 3 } };
	const struct homa_rpc_md *out;
	const char *msg;
	struct rpcw_hdr h;
	size_t n;
	void *mem;

	(void)state;
	memset(&h, 0, sizeof(h));
	assert_int_equal(rpcmd_to_wire(md, 1, &h), HOMA_RPC_OK);
	h.status_msg = (const uint8_t *)"gone!";
	h.status_msg_len = 4;
	mem = rpcmd_result_mem(&h, &msg, &out, &n);
	assert_non_null(mem);
	assert_string_equal(msg, "gone");
	assert_int_equal(n, 1);
	assert_string_equal(out[0].key, "k");
	assert_string_equal((const char *)out[0].value, "val");
	assert_int_equal(out[0].value_len, 3);
	free(mem);
}

static void rpcmd_result_mem__empty_message(void **state)
{
	const struct homa_rpc_md *out;
	const char *msg;
	struct rpcw_hdr h;
	size_t n = 9;
	void *mem;

	(void)state;
	memset(&h, 0, sizeof(h));
	mem = rpcmd_result_mem(&h, &msg, &out, &n);
	assert_non_null(mem);
	assert_string_equal(msg, "");
	assert_int_equal(n, 0);
	free(mem);
}

static void homa_rpc_code_name__grpc_names(void **state)
{
	(void)state;
	assert_string_equal(homa_rpc_code_name(HOMA_RPC_OK), "OK");
	assert_string_equal(homa_rpc_code_name(4), "DEADLINE_EXCEEDED");
	assert_string_equal(homa_rpc_code_name(12), "UNIMPLEMENTED");
	assert_string_equal(homa_rpc_code_name(16), "UNAUTHENTICATED");
	assert_string_equal(homa_rpc_code_name(17), "?");
	assert_string_equal(homa_rpc_code_name(-1), "?");
}

static void rpcs_from_errno__failures_map_to_codes(void **state)
{
	(void)state;
	assert_int_equal(rpcs_from_errno(RPCS_ERR_DEADLINE),
			 HOMA_RPC_DEADLINE_EXCEEDED);
	assert_int_equal(rpcs_from_errno(RPCS_ERR_CANCEL), HOMA_RPC_CANCELLED);
	assert_int_equal(rpcs_from_errno(ESHUTDOWN), HOMA_RPC_CANCELLED);
	assert_int_equal(rpcs_from_errno(ETIMEDOUT), HOMA_RPC_UNAVAILABLE);
	assert_int_equal(rpcs_from_errno(ENOTCONN), HOMA_RPC_UNAVAILABLE);
	assert_int_equal(rpcs_from_errno(EHOSTUNREACH), HOMA_RPC_UNAVAILABLE);
	assert_int_equal(rpcs_from_errno(ENOMEM),
			 HOMA_RPC_RESOURCE_EXHAUSTED);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rpcmd_to_wire__points_at_entries),
		cmocka_unit_test(rpcmd_to_wire__refuses_bad_entries),
		cmocka_unit_test(rpcmd_lookup__finds_exact_key),
		cmocka_unit_test(rpcmd_result_mem__nul_terminated_copies),
		cmocka_unit_test(rpcmd_result_mem__empty_message),
		cmocka_unit_test(homa_rpc_code_name__grpc_names),
		cmocka_unit_test(rpcs_from_errno__failures_map_to_codes),
	};

	return cmocka_run_group_tests_name("rpc_md", tests, NULL, NULL);
}
