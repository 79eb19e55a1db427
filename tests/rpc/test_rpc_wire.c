/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests of rpc_wire (src/rpc/rpc_wire.c), the homa-rpc header, named
 * <function>__<case>.
 *
 * The golden vectors were written by hand from the table in docs/rpc.md
 * (not produced by the encoder).  Decode tests run on malloc'd copies of
 * exactly the message's length, so that AddressSanitizer reports any read
 * past it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rpc_wire.h"

/* A request: path "/a.B/C", deadline 5000 us, metadata k=v1, body "xyz". */
static const uint8_t golden_req[] = {
	0x48, 0x52,                         /*  0 magic "HR" */
	0x01,                               /*  2 version 1 */
	0x01,                               /*  3 kind request */
	0x00, 0x01,                         /*  4 flags: deadline */
	0x00, 0x2d,                         /*  6 header length 45 */
	0x00, 0x00, 0x00, 0x03,             /*  8 body length 3 */
	0x00, 0x00, 0x00, 0x00,             /* 12 status 0 */
	0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x13, 0x88,             /* 16 deadline 5000 us */
	0x00, 0x06,                         /* 24 path length 6 */
	0x00, 0x00,                         /* 26 status message length 0 */
	0x00, 0x01,                         /* 28 metadata entries 1 */
	0x00, 0x00,                         /* 30 reserved */
	'/', 'a', '.', 'B', '/', 'C',       /* 32 path */
	0x00, 0x01, 0x00, 0x02,             /* 38 key length 1, value 2 */
	'k', 'v', '1',                      /* 42 key, value */
	'x', 'y', 'z',                      /* 45 body */
};

/* A response: status 5 (NOT_FOUND), message "no", no metadata, no body. */
static const uint8_t golden_resp[] = {
	0x48, 0x52, 0x01, 0x02,             /*  0 magic, version, response */
	0x00, 0x00,                         /*  4 flags */
	0x00, 0x22,                         /*  6 header length 34 */
	0x00, 0x00, 0x00, 0x00,             /*  8 body length 0 */
	0x00, 0x00, 0x00, 0x05,             /* 12 status 5 */
	0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00,             /* 16 deadline */
	0x00, 0x00,                         /* 24 path length 0 */
	0x00, 0x02,                         /* 26 status message length 2 */
	0x00, 0x00,                         /* 28 metadata entries 0 */
	0x00, 0x00,                         /* 30 reserved */
	'n', 'o',                           /* 32 status message */
};

/* decode_copy - rpcw_decode of a malloc'd copy of @buf (@len bytes); the
 * copy is freed (the header's pointers then dangle: only fields are
 * compared after it). */
static enum rpcw_error decode_copy(const uint8_t *buf, size_t len,
				   struct rpcw_hdr *h)
{
	uint8_t *copy = malloc(len ? len : 1);
	enum rpcw_error err;

	assert_non_null(copy);
	memcpy(copy, buf, len);
	err = rpcw_decode(copy, len, h);
	free(copy);
	return err;
}

/* mutated - rpcw_decode of golden_req with byte @at set to @v. */
static enum rpcw_error mutated(size_t at, uint8_t v)
{
	uint8_t buf[sizeof(golden_req)];
	struct rpcw_hdr h;

	memcpy(buf, golden_req, sizeof(buf));
	buf[at] = v;
	return decode_copy(buf, sizeof(buf), &h);
}

/* req_hdr - the header of golden_req, to encode. */
static void req_hdr(struct rpcw_hdr *h)
{
	memset(h, 0, sizeof(*h));
	h->kind = RPCW_KIND_REQUEST;
	h->flags = RPCW_FLAG_DEADLINE;
	h->deadline_us = 5000;
	h->path = (const uint8_t *)"/a.B/C";
	h->path_len = 6;
	h->n_md = 1;
	h->md[0].key = (const uint8_t *)"k";
	h->md[0].key_len = 1;
	h->md[0].value = (const uint8_t *)"v1";
	h->md[0].value_len = 2;
	h->body_len = 3;
}

static void rpcw_error_name__every_error_has_a_name(void **state)
{
	(void)state;
	for (int e = 0; e < RPCW_ERR_COUNT; e++)
		assert_non_null(rpcw_error_name((enum rpcw_error)e));
	assert_string_equal(rpcw_error_name(RPCW_OK), "ok");
	assert_string_equal(rpcw_error_name(RPCW_ERR_COUNT), "unknown error");
}

static void rpcw_path_ok__accepts_service_and_method(void **state)
{
	(void)state;
	assert_true(rpcw_path_ok((const uint8_t *)"/a/b", 4));
	assert_true(rpcw_path_ok((const uint8_t *)"/pkg.Svc/Get_1", 14));
}

static void rpcw_path_ok__refuses_malformed_paths(void **state)
{
	static const char *const bad[] = {
		"", "/", "//", "/a/", "//b", "a/b/", "/a/b/c", "/a b/c",
		"/a/b\x7f", "/ab", "/a\n/b",
	};
	char longp[RPCW_MAX_PATH + 2];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_false(rpcw_path_ok((const uint8_t *)bad[i],
					  strlen(bad[i])));
	memset(longp, 'x', sizeof(longp));
	longp[0] = '/';
	longp[5] = '/';
	assert_true(rpcw_path_ok((const uint8_t *)longp, RPCW_MAX_PATH));
	assert_false(rpcw_path_ok((const uint8_t *)longp, RPCW_MAX_PATH + 1));
}

static void rpcw_md_key_ok__lowercase_digits_and_marks_only(void **state)
{
	char k[RPCW_MAX_MD_KEY + 1];

	(void)state;
	assert_true(rpcw_md_key_ok((const uint8_t *)"x-trace_id.2", 12));
	assert_false(rpcw_md_key_ok((const uint8_t *)"", 0));
	assert_false(rpcw_md_key_ok((const uint8_t *)"Upper", 5));
	assert_false(rpcw_md_key_ok((const uint8_t *)"a b", 3));
	assert_false(rpcw_md_key_ok((const uint8_t *)"a:b", 3));
	memset(k, 'a', sizeof(k));
	assert_true(rpcw_md_key_ok((const uint8_t *)k, RPCW_MAX_MD_KEY));
	assert_false(rpcw_md_key_ok((const uint8_t *)k, RPCW_MAX_MD_KEY + 1));
}

static void rpcw_encode__request_golden_bytes(void **state)
{
	uint8_t buf[sizeof(golden_req)];
	struct rpcw_hdr h;

	(void)state;
	req_hdr(&h);
	assert_int_equal(rpcw_hdr_len(&h), 45);
	assert_int_equal(rpcw_encode(&h, buf, sizeof(buf)), 45);
	memcpy(buf + 45, "xyz", 3);
	assert_memory_equal(buf, golden_req, sizeof(golden_req));
}

static void rpcw_encode__response_golden_bytes(void **state)
{
	uint8_t buf[64];
	struct rpcw_hdr h;

	(void)state;
	memset(&h, 0, sizeof(h));
	h.kind = RPCW_KIND_RESPONSE;
	h.status = 5;
	h.status_msg = (const uint8_t *)"no";
	h.status_msg_len = 2;
	assert_int_equal(rpcw_encode(&h, buf, sizeof(buf)),
			 sizeof(golden_resp));
	assert_memory_equal(buf, golden_resp, sizeof(golden_resp));
}

static void rpcw_encode__too_small_buffer_writes_nothing(void **state)
{
	uint8_t buf[44];
	struct rpcw_hdr h;

	(void)state;
	req_hdr(&h);
	assert_int_equal(rpcw_encode(&h, buf, sizeof(buf)), 0);
}

static void rpcw_encode__refuses_invalid_headers(void **state)
{
	uint8_t buf[256];
	struct rpcw_hdr h;

	(void)state;
	req_hdr(&h);
	h.status = 1;                      /* status in a request */
	assert_int_equal(rpcw_encode(&h, buf, sizeof(buf)), 0);
	req_hdr(&h);
	h.md[0].key = (const uint8_t *)"K";
	assert_int_equal(rpcw_encode(&h, buf, sizeof(buf)), 0);
	req_hdr(&h);
	h.body_len = RPCW_MAX_MSG;         /* header + body over 1 MB */
	assert_int_equal(rpcw_encode(&h, buf, sizeof(buf)), 0);
	req_hdr(&h);
	h.kind = RPCW_KIND_RESPONSE;       /* path and deadline */
	assert_int_equal(rpcw_encode(&h, buf, sizeof(buf)), 0);
	req_hdr(&h);
	h.flags = 0;                       /* deadline without its flag */
	assert_int_equal(rpcw_encode(&h, buf, sizeof(buf)), 0);
}

static void rpcw_decode__request_golden_fields(void **state)
{
	uint8_t *copy = malloc(sizeof(golden_req));
	struct rpcw_hdr h;

	(void)state;
	assert_non_null(copy);
	memcpy(copy, golden_req, sizeof(golden_req));
	assert_int_equal(rpcw_decode(copy, sizeof(golden_req), &h), RPCW_OK);
	assert_int_equal(h.kind, RPCW_KIND_REQUEST);
	assert_int_equal(h.flags, RPCW_FLAG_DEADLINE);
	assert_int_equal(h.deadline_us, 5000);
	assert_int_equal(h.hdr_len, 45);
	assert_int_equal(h.body_len, 3);
	assert_int_equal(h.path_len, 6);
	assert_memory_equal(h.path, "/a.B/C", 6);
	assert_int_equal(h.n_md, 1);
	assert_int_equal(h.md[0].key_len, 1);
	assert_memory_equal(h.md[0].key, "k", 1);
	assert_int_equal(h.md[0].value_len, 2);
	assert_memory_equal(h.md[0].value, "v1", 2);
	assert_ptr_equal(h.path, copy + 32);
	free(copy);
}

static void rpcw_decode__response_golden_fields(void **state)
{
	struct rpcw_hdr h;
	uint8_t *copy = malloc(sizeof(golden_resp));

	(void)state;
	assert_non_null(copy);
	memcpy(copy, golden_resp, sizeof(golden_resp));
	assert_int_equal(rpcw_decode(copy, sizeof(golden_resp), &h), RPCW_OK);
	assert_int_equal(h.kind, RPCW_KIND_RESPONSE);
	assert_int_equal(h.status, 5);
	assert_int_equal(h.status_msg_len, 2);
	assert_memory_equal(h.status_msg, "no", 2);
	assert_int_equal(h.body_len, 0);
	assert_null(h.path);
	free(copy);
}

static void rpcw_decode__every_truncation_is_refused(void **state)
{
	struct rpcw_hdr h;

	(void)state;
	for (size_t len = 0; len < sizeof(golden_req); len++)
		assert_int_not_equal(decode_copy(golden_req, len, &h),
				     RPCW_OK);
}

static void rpcw_decode__fixed_field_errors(void **state)
{
	(void)state;
	assert_int_equal(mutated(0, 0x00), RPCW_ERR_MAGIC);
	assert_int_equal(mutated(2, 0x02), RPCW_ERR_VERSION);
	assert_int_equal(mutated(3, 0x03), RPCW_ERR_KIND);
	assert_int_equal(mutated(5, 0x03), RPCW_ERR_FLAGS);
	assert_int_equal(mutated(31, 0x01), RPCW_ERR_RESERVED);
	assert_int_equal(mutated(15, 0x01), RPCW_ERR_STATUS);
	assert_int_equal(mutated(29, 0x21), RPCW_ERR_MD);
}

static void rpcw_decode__length_errors(void **state)
{
	(void)state;
	assert_int_equal(mutated(7, 0x1f), RPCW_ERR_HDR_LEN);  /* < 32 */
	assert_int_equal(mutated(7, 0x31), RPCW_ERR_SHORT);    /* > len */
	assert_int_equal(mutated(11, 0x02), RPCW_ERR_BODY_LEN);
	/* A path longer than the header. */
	assert_int_equal(mutated(25, 0x20), RPCW_ERR_HDR_LEN);
	/* A metadata value running past the header. */
	assert_int_equal(mutated(41, 0x09), RPCW_ERR_HDR_LEN);
	/* Two entries announced, one there. */
	assert_int_equal(mutated(29, 0x02), RPCW_ERR_HDR_LEN);
	/* A status message announced in a request, eating the path. */
	assert_int_equal(mutated(27, 0x01), RPCW_ERR_HDR_LEN);
}

static void rpcw_decode__header_bytes_left_over(void **state)
{
	uint8_t buf[sizeof(golden_req)];
	struct rpcw_hdr h;

	(void)state;
	/* Header length 46: one byte of the body would be unaccounted for
	 * in the header, and the body one byte short. */
	memcpy(buf, golden_req, sizeof(buf));
	buf[7] = 0x2e;
	buf[11] = 0x02;
	assert_int_equal(decode_copy(buf, sizeof(buf), &h), RPCW_ERR_HDR_LEN);
}

static void rpcw_decode__content_errors(void **state)
{
	(void)state;
	assert_int_equal(mutated(32, 'x'), RPCW_ERR_PATH);    /* no '/' */
	assert_int_equal(mutated(34, '/'), RPCW_ERR_PATH);    /* 3 slashes */
	assert_int_equal(mutated(42, 'K'), RPCW_ERR_MD);      /* bad key */
}

static void rpcw_decode__response_rules(void **state)
{
	uint8_t buf[sizeof(golden_resp)];
	struct rpcw_hdr h;

	(void)state;
	memcpy(buf, golden_resp, sizeof(buf));
	buf[15] = 17;                                /* code above 16 */
	assert_int_equal(decode_copy(buf, sizeof(buf), &h), RPCW_ERR_STATUS);
	memcpy(buf, golden_resp, sizeof(buf));
	buf[5] = 0x01;                               /* deadline flag */
	assert_int_equal(decode_copy(buf, sizeof(buf), &h), RPCW_ERR_FLAGS);
	memcpy(buf, golden_resp, sizeof(buf));
	buf[23] = 0x01;                              /* deadline, no flag */
	assert_int_equal(decode_copy(buf, sizeof(buf), &h), RPCW_ERR_FLAGS);
	memcpy(buf, golden_resp, sizeof(buf));
	buf[25] = 0x02;                              /* a path */
	buf[27] = 0x00;
	assert_int_equal(decode_copy(buf, sizeof(buf), &h), RPCW_ERR_PATH);
}

static void rpcw_decode__over_a_homa_message(void **state)
{
	struct rpcw_hdr h;
	uint8_t *big = calloc(1, RPCW_MAX_MSG + 1);

	(void)state;
	assert_non_null(big);
	memcpy(big, golden_req, sizeof(golden_req));
	assert_int_equal(rpcw_decode(big, RPCW_MAX_MSG + 1, &h),
			 RPCW_ERR_BODY_LEN);
	free(big);
}

static void rpcw_decode__encode_round_trip_max_metadata(void **state)
{
	static uint8_t value[64];
	uint8_t *buf = malloc(RPCW_MAX_HDR);
	struct rpcw_hdr h, d;
	char keys[RPCW_MAX_MD][8];
	size_t len;

	(void)state;
	assert_non_null(buf);
	req_hdr(&h);
	h.n_md = RPCW_MAX_MD;
	for (unsigned i = 0; i < RPCW_MAX_MD; i++) {
		int n = snprintf(keys[i], sizeof(keys[i]), "k%u", i);

		h.md[i].key = (const uint8_t *)keys[i];
		h.md[i].key_len = (uint16_t)n;
		h.md[i].value = value;
		h.md[i].value_len = (uint16_t)i;
	}
	h.body_len = 0;
	len = rpcw_encode(&h, buf, RPCW_MAX_HDR);
	assert_true(len > RPCW_FIXED_LEN);
	assert_int_equal(rpcw_decode(buf, len, &d), RPCW_OK);
	assert_int_equal(d.n_md, RPCW_MAX_MD);
	for (unsigned i = 0; i < RPCW_MAX_MD; i++) {
		assert_int_equal(d.md[i].key_len, h.md[i].key_len);
		assert_memory_equal(d.md[i].key, keys[i], d.md[i].key_len);
		assert_int_equal(d.md[i].value_len, i);
	}
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rpcw_error_name__every_error_has_a_name),
		cmocka_unit_test(rpcw_path_ok__accepts_service_and_method),
		cmocka_unit_test(rpcw_path_ok__refuses_malformed_paths),
		cmocka_unit_test(rpcw_md_key_ok__lowercase_digits_and_marks_only),
		cmocka_unit_test(rpcw_encode__request_golden_bytes),
		cmocka_unit_test(rpcw_encode__response_golden_bytes),
		cmocka_unit_test(rpcw_encode__too_small_buffer_writes_nothing),
		cmocka_unit_test(rpcw_encode__refuses_invalid_headers),
		cmocka_unit_test(rpcw_decode__request_golden_fields),
		cmocka_unit_test(rpcw_decode__response_golden_fields),
		cmocka_unit_test(rpcw_decode__every_truncation_is_refused),
		cmocka_unit_test(rpcw_decode__fixed_field_errors),
		cmocka_unit_test(rpcw_decode__length_errors),
		cmocka_unit_test(rpcw_decode__header_bytes_left_over),
		cmocka_unit_test(rpcw_decode__content_errors),
		cmocka_unit_test(rpcw_decode__response_rules),
		cmocka_unit_test(rpcw_decode__over_a_homa_message),
		cmocka_unit_test(rpcw_decode__encode_round_trip_max_metadata),
	};

	return cmocka_run_group_tests_name("rpc_wire", tests, NULL, NULL);
}
