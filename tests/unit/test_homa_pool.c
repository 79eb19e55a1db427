/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests of homa_pool (src/core/homa_pool.c), in the order of the
 * functions there; each test is named <function>__<case>.
 *
 * Build: cc -std=c11 -Iinclude -Isrc/core src/core/homa_pool.c \
 *        tests/unit/test_homa_pool.c -lcmocka
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "homa.h"
#include "homa_alloc.h"
#include "homa_pool.h"

/* fail_next - the n-th allocation from now fails (fail_next(0): none
 * fails any more). */
static void fail_next(uint64_t n)
{
	static struct homa_alloc_faults f;

	f = (struct homa_alloc_faults){ .fail_nth = n };
	homa_alloc_set_faults(n ? &f : NULL);
}

#define BP ((uint32_t)HOMA_BPAGE_SIZE)

/* A pool with a real region (so its bytes can be written). */
struct fix {
	struct homa_pool *pool;
	char *region;
	uint32_t nb;
};

/* fix_init - a pool of nb bpages, cores cores, the given lease. */
static void fix_init(struct fix *f, uint32_t nb, int cores, uint64_t lease)
{
	f->nb = nb;
	f->pool = homa_pool_create(cores, lease);
	assert_non_null(f->pool);
	f->region = aligned_alloc(4096, (size_t)nb * BP);
	assert_non_null(f->region);
	assert_int_equal(homa_pool_set_region(f->pool, f->region,
					      (size_t)nb * BP), 0);
}

/* fix_done - free what fix_init made. */
static void fix_done(struct fix *f)
{
	homa_pool_destroy(f->pool);
	free(f->region);
}

/* alloc_ok - allocate length bytes and insist on success; returns num. */
static uint32_t alloc_ok(struct fix *f, uint32_t length, int core,
			 uint64_t now, uint32_t *offsets)
{
	uint32_t num = 99;

	assert_int_equal(homa_pool_alloc_msg(f->pool, length, core, now,
					     offsets, &num), 0);
	assert_int_equal(num, homa_pool_bpages_needed(length));
	return num;
}

/* ---- homa_pool_create ---- */

static void homa_pool_create__bad_num_cores(void **state)
{
	(void)state;
	assert_null(homa_pool_create(0, 1000));
	assert_null(homa_pool_create(-3, 1000));
}

static void homa_pool_create__out_of_memory(void **state)
{
	(void)state;
	fail_next(1);                    /* the pool itself */
	assert_null(homa_pool_create(4, 1000));
	fail_next(2);                    /* its per-core state */
	assert_null(homa_pool_create(4, 1000));
	fail_next(0);
}

static void homa_pool_create__no_region_yet(void **state)
{
	struct homa_pool *pool = homa_pool_create(2, 1000);

	(void)state;
	assert_non_null(pool);
	assert_false(homa_pool_has_region(pool));
	assert_int_equal(homa_pool_num_bpages(pool), 0);
	assert_int_equal(homa_pool_free_bpages(pool), 0);
	assert_int_equal(homa_pool_app_owned(pool), 0);
	homa_pool_destroy(pool);
}

/* ---- homa_pool_destroy ---- */

static void homa_pool_destroy__null_ignored(void **state)
{
	(void)state;
	homa_pool_destroy(NULL);
}

/* ---- homa_pool_set_region ---- */

static void homa_pool_set_region__null_start(void **state)
{
	struct homa_pool *pool = homa_pool_create(1, 1000);

	(void)state;
	assert_int_equal(homa_pool_set_region(pool, NULL, 4 * BP), -EINVAL);
	assert_false(homa_pool_has_region(pool));
	homa_pool_destroy(pool);
}

static void homa_pool_set_region__misaligned(void **state)
{
	struct homa_pool *pool = homa_pool_create(1, 1000);
	char *region = aligned_alloc(4096, 5 * BP);

	(void)state;
	assert_int_equal(homa_pool_set_region(pool, region + 1, 4 * BP),
			 -EINVAL);
	assert_int_equal(homa_pool_set_region(pool, region + 2048, 4 * BP),
			 -EINVAL);
	assert_false(homa_pool_has_region(pool));
	assert_int_equal(homa_pool_set_region(pool, region + 4096, 4 * BP), 0);
	assert_true(homa_pool_has_region(pool));
	homa_pool_destroy(pool);
	free(region);
}

static void homa_pool_set_region__too_small(void **state)
{
	struct homa_pool *pool = homa_pool_create(1, 1000);
	char *region = aligned_alloc(4096, 2 * BP);

	(void)state;
	assert_int_equal(homa_pool_set_region(pool, region, 0), -EINVAL);
	assert_int_equal(homa_pool_set_region(pool, region, BP), -EINVAL);
	assert_int_equal(homa_pool_set_region(pool, region, 2 * BP - 1),
			 -EINVAL);
	assert_false(homa_pool_has_region(pool));
	assert_int_equal(homa_pool_set_region(pool, region, 2 * BP), 0);
	assert_int_equal(homa_pool_num_bpages(pool), 2);
	homa_pool_destroy(pool);
	free(region);
}

/* The pool never touches the region's bytes, so a made-up (aligned)
 * address can stand for a 4 GiB region. */
static void homa_pool_set_region__too_large(void **state)
{
	void *fake = (void *)(uintptr_t)0x100000000000ull;
	struct homa_pool *pool = homa_pool_create(1, 1000);
	size_t four_gib = (size_t)1 << 32;

	(void)state;
	assert_int_equal(homa_pool_set_region(pool, fake, four_gib + BP),
			 -EINVAL);
	assert_false(homa_pool_has_region(pool));
	/* 2^32 bytes of bpages (the tail is rounded away) is the largest. */
	assert_int_equal(homa_pool_set_region(pool, fake, four_gib + BP - 1),
			 0);
	assert_int_equal(homa_pool_num_bpages(pool), 65536);
	assert_int_equal(homa_pool_free_bpages(pool), 65536);
	homa_pool_destroy(pool);
}

static void homa_pool_set_region__twice(void **state)
{
	struct homa_pool *pool = homa_pool_create(1, 1000);
	char *r1 = aligned_alloc(4096, 2 * BP);
	char *r2 = aligned_alloc(4096, 3 * BP);
	struct homa_rcvbuf_args args;

	(void)state;
	assert_int_equal(homa_pool_set_region(pool, r1, 2 * BP), 0);
	assert_int_equal(homa_pool_set_region(pool, r2, 3 * BP), -EINVAL);
	homa_pool_get_rcvbuf(pool, &args);
	assert_int_equal(args.start, (uintptr_t)r1);
	assert_int_equal(args.length, 2 * BP);
	homa_pool_destroy(pool);
	free(r1);
	free(r2);
}

static void homa_pool_set_region__out_of_memory(void **state)
{
	struct homa_pool *pool = homa_pool_create(1, 1000);
	char *region = aligned_alloc(4096, 2 * BP);

	(void)state;
	fail_next(1);
	assert_int_equal(homa_pool_set_region(pool, region, 2 * BP), -ENOMEM);
	fail_next(0);
	assert_false(homa_pool_has_region(pool));
	assert_int_equal(homa_pool_set_region(pool, region, 2 * BP), 0);
	homa_pool_destroy(pool);
	free(region);
}

static void homa_pool_set_region__rounds_down(void **state)
{
	struct homa_pool *pool = homa_pool_create(1, 1000);
	char *region = aligned_alloc(4096, 4 * BP);

	(void)state;
	assert_int_equal(homa_pool_set_region(pool, region, 3 * BP + 5000), 0);
	assert_int_equal(homa_pool_num_bpages(pool), 3);
	assert_int_equal(homa_pool_free_bpages(pool), 3);
	homa_pool_destroy(pool);
	free(region);
}

/* ---- homa_pool_get_rcvbuf ---- */

static void homa_pool_get_rcvbuf__no_region(void **state)
{
	struct homa_pool *pool = homa_pool_create(1, 1000);
	struct homa_rcvbuf_args args = { 77, 77 };

	(void)state;
	homa_pool_get_rcvbuf(pool, &args);
	assert_int_equal(args.start, 0);
	assert_int_equal(args.length, 0);
	homa_pool_destroy(pool);
}

static void homa_pool_get_rcvbuf__region(void **state)
{
	struct homa_pool *pool = homa_pool_create(1, 1000);
	char *region = aligned_alloc(4096, 6 * BP);
	struct homa_rcvbuf_args args;

	(void)state;
	assert_int_equal(homa_pool_set_region(pool, region, 5 * BP + 100), 0);
	homa_pool_get_rcvbuf(pool, &args);
	assert_int_equal(args.start, (uintptr_t)region);
	assert_int_equal(args.length, 5 * BP);
	homa_pool_destroy(pool);
	free(region);
}

/* ---- homa_pool_bpages_needed ---- */

static void homa_pool_bpages_needed__values(void **state)
{
	(void)state;
	assert_int_equal(homa_pool_bpages_needed(0), 0);
	assert_int_equal(homa_pool_bpages_needed(1), 1);
	assert_int_equal(homa_pool_bpages_needed(BP - 1), 1);
	assert_int_equal(homa_pool_bpages_needed(BP), 1);
	assert_int_equal(homa_pool_bpages_needed(BP + 1), 2);
	assert_int_equal(homa_pool_bpages_needed(HOMA_MAX_MESSAGE_LENGTH),
			 HOMA_MAX_BPAGES);
	assert_int_equal(homa_pool_bpages_needed(UINT32_MAX), 65536);
}

/* ---- homa_pool_alloc_msg ---- */

static void homa_pool_alloc_msg__no_region(void **state)
{
	struct homa_pool *pool = homa_pool_create(1, 1000);
	uint32_t offsets[HOMA_MAX_BPAGES];
	uint32_t num = 5;

	(void)state;
	assert_int_equal(homa_pool_alloc_msg(pool, 100, 0, 0, offsets, &num),
			 -ENOMEM);
	assert_int_equal(num, 0);
	homa_pool_destroy(pool);
}

static void homa_pool_alloc_msg__bad_length(void **state)
{
	uint32_t offsets[HOMA_MAX_BPAGES];
	uint32_t num = 5;
	struct fix f;

	(void)state;
	fix_init(&f, 4, 1, 1000);
	assert_int_equal(homa_pool_alloc_msg(f.pool, 0, 0, 0, offsets, &num),
			 -EINVAL);
	assert_int_equal(num, 0);
	assert_int_equal(homa_pool_alloc_msg(f.pool,
					     HOMA_MAX_MESSAGE_LENGTH + 1, 0, 0,
					     offsets, &num), -EINVAL);
	assert_int_equal(homa_pool_free_bpages(f.pool), 4);
	fix_done(&f);
}

static void homa_pool_alloc_msg__small_message(void **state)
{
	uint32_t offsets[HOMA_MAX_BPAGES];
	struct fix f;

	(void)state;
	fix_init(&f, 8, 1, 1000);
	assert_int_equal(alloc_ok(&f, 100, 0, 0, offsets), 1);
	assert_int_equal(offsets[0], 0);
	assert_int_equal(homa_pool_free_bpages(f.pool), 7);
	fix_done(&f);
}

static void homa_pool_alloc_msg__exact_multiple(void **state)
{
	uint32_t offsets[HOMA_MAX_BPAGES];
	struct fix f;
	uint32_t i;

	(void)state;
	fix_init(&f, 8, 1, 1000);
	assert_int_equal(alloc_ok(&f, 3 * BP, 0, 0, offsets), 3);
	for (i = 0; i < 3; i++)
		assert_int_equal(offsets[i], i * BP);
	/* No chunk bpage was taken: exactly 3 bpages are in use. */
	assert_int_equal(homa_pool_free_bpages(f.pool), 5);
	assert_int_equal(alloc_ok(&f, BP, 0, 0, offsets), 1);
	assert_int_equal(offsets[0], 3 * BP);
	assert_int_equal(homa_pool_free_bpages(f.pool), 4);
	fix_done(&f);
}

static void homa_pool_alloc_msg__one_million(void **state)
{
	uint32_t offsets[HOMA_MAX_BPAGES];
	bool seen[32] = { false };
	struct fix f;
	uint32_t i;

	(void)state;
	fix_init(&f, 32, 1, 1000);
	assert_int_equal(alloc_ok(&f, 1000000, 0, 0, offsets), 16);
	for (i = 0; i < 15; i++) {
		assert_int_equal(offsets[i] % BP, 0);
		assert_true(offsets[i] / BP < 32);
		assert_false(seen[offsets[i] / BP]);
		seen[offsets[i] / BP] = true;
	}
	/* The 16960-byte remainder starts a chunk bpage of its own. */
	assert_int_equal(offsets[15] % BP, 0);
	assert_false(seen[offsets[15] / BP]);
	assert_int_equal(homa_pool_free_bpages(f.pool), 32 - 16);
	fix_done(&f);
}

static void homa_pool_alloc_msg__chunks_share_bpage(void **state)
{
	uint32_t a[HOMA_MAX_BPAGES], b[HOMA_MAX_BPAGES], c[HOMA_MAX_BPAGES];
	struct fix f;

	(void)state;
	fix_init(&f, 8, 1, 1000);
	alloc_ok(&f, 1000, 0, 0, a);
	alloc_ok(&f, 2000, 0, 0, b);
	alloc_ok(&f, 3000, 0, 0, c);
	assert_int_equal(b[0], a[0] + 1000);
	assert_int_equal(c[0], b[0] + 2000);
	assert_int_equal(homa_pool_free_bpages(f.pool), 7);
	/* Releasing the messages leaves the bpage with its core. */
	homa_pool_release(f.pool, a, 1);
	homa_pool_release(f.pool, b, 1);
	homa_pool_release(f.pool, c, 1);
	assert_int_equal(homa_pool_free_bpages(f.pool), 7);
	fix_done(&f);
}

static void homa_pool_alloc_msg__chunk_does_not_fit_bpage_in_use(void **state)
{
	uint32_t a[HOMA_MAX_BPAGES], b[HOMA_MAX_BPAGES];
	struct fix f;

	(void)state;
	fix_init(&f, 8, 1, 1000);
	alloc_ok(&f, 40000, 0, 0, a);
	alloc_ok(&f, 30000, 0, 0, b);
	assert_int_equal(a[0], 0);
	assert_int_equal(b[0], BP);
	assert_int_equal(homa_pool_free_bpages(f.pool), 6);
	/* The first bpage was given up: its last message frees it. */
	homa_pool_release(f.pool, a, 1);
	assert_int_equal(homa_pool_free_bpages(f.pool), 7);
	fix_done(&f);
}

static void homa_pool_alloc_msg__chunk_restarts_when_idle(void **state)
{
	uint32_t a[HOMA_MAX_BPAGES], b[HOMA_MAX_BPAGES];
	struct fix f;

	(void)state;
	fix_init(&f, 8, 1, 1000);
	alloc_ok(&f, 40000, 0, 0, a);
	homa_pool_release(f.pool, a, 1);
	alloc_ok(&f, 30000, 0, 0, b);
	assert_int_equal(b[0], a[0]);
	assert_int_equal(homa_pool_free_bpages(f.pool), 7);
	fix_done(&f);
}

static void homa_pool_alloc_msg__cores_get_different_bpages(void **state)
{
	uint32_t a[HOMA_MAX_BPAGES], b[HOMA_MAX_BPAGES];
	uint32_t c[HOMA_MAX_BPAGES], d[HOMA_MAX_BPAGES];
	struct fix f;

	(void)state;
	fix_init(&f, 8, 2, 1000);
	alloc_ok(&f, 100, 0, 0, a);
	alloc_ok(&f, 100, 1, 0, b);
	assert_int_not_equal(a[0] / BP, b[0] / BP);
	assert_int_equal(homa_pool_free_bpages(f.pool), 6);
	/* Core numbers are taken modulo num_cores (negatives too). */
	alloc_ok(&f, 100, 2, 0, c);
	assert_int_equal(c[0], a[0] + 100);
	alloc_ok(&f, 100, -1, 0, d);
	assert_int_equal(d[0], b[0] + 100);
	assert_int_equal(homa_pool_free_bpages(f.pool), 6);
	fix_done(&f);
}

static void homa_pool_alloc_msg__lease_renewed_on_use(void **state)
{
	uint32_t a[HOMA_MAX_BPAGES], b[HOMA_MAX_BPAGES];
	struct fix f;

	(void)state;
	fix_init(&f, 4, 2, 1000);
	alloc_ok(&f, 100, 0, 0, a);
	homa_pool_release(f.pool, a, 1);
	alloc_ok(&f, 100, 0, 900, a);     /* lease now ends at 1900 */
	homa_pool_release(f.pool, a, 1);
	alloc_ok(&f, BP, 1, 1500, b);
	assert_int_not_equal(b[0], 0);
	fix_done(&f);
}

static void homa_pool_alloc_msg__steal_expired_for_whole(void **state)
{
	uint32_t a[HOMA_MAX_BPAGES], b[HOMA_MAX_BPAGES];
	struct fix f;

	(void)state;
	fix_init(&f, 4, 3, 1000);
	alloc_ok(&f, 100, 0, 0, a);        /* core 0 owns bpage 0 till 1000 */
	assert_int_equal(a[0], 0);
	homa_pool_release(f.pool, a, 1);
	assert_int_equal(homa_pool_free_bpages(f.pool), 3);

	/* Lease still running: bpage 0 is skipped. */
	alloc_ok(&f, BP, 1, 999, b);
	assert_int_equal(b[0], BP);
	homa_pool_release(f.pool, b, 1);
	assert_int_equal(homa_pool_free_bpages(f.pool), 3);

	/* Lease over: taken, and the free count stays right. */
	alloc_ok(&f, BP, 2, 1000, b);
	assert_int_equal(b[0], 0);
	assert_int_equal(homa_pool_free_bpages(f.pool), 3);

	/* Core 0 lost its bpage and takes another one. */
	alloc_ok(&f, 100, 0, 1000, a);
	assert_true(a[0] / BP != 0);
	assert_int_equal(homa_pool_free_bpages(f.pool), 2);
	homa_pool_release(f.pool, b, 1);
	assert_int_equal(homa_pool_free_bpages(f.pool), 3);
	fix_done(&f);
}

static void homa_pool_alloc_msg__steal_expired_for_chunk(void **state)
{
	uint32_t a[HOMA_MAX_BPAGES], b[HOMA_MAX_BPAGES], c[HOMA_MAX_BPAGES];
	struct fix f;

	(void)state;
	fix_init(&f, 4, 2, 1000);
	alloc_ok(&f, 100, 0, 0, a);
	homa_pool_release(f.pool, a, 1);
	alloc_ok(&f, 100, 1, 1000, b);      /* core 1 takes bpage 0 */
	assert_int_equal(b[0], 0);
	assert_int_equal(homa_pool_free_bpages(f.pool), 3);
	alloc_ok(&f, 200, 0, 1000, c);      /* core 0 needs a new one */
	assert_true(c[0] / BP != 0);
	assert_int_equal(c[0] % BP, 0);
	assert_int_equal(homa_pool_free_bpages(f.pool), 2);
	/* Core 1 keeps carving bpage 0 after its own chunk. */
	alloc_ok(&f, 100, 1, 1000, b);
	assert_int_equal(b[0], 100);
	fix_done(&f);
}

static void homa_pool_alloc_msg__no_steal_while_in_use(void **state)
{
	uint32_t a[HOMA_MAX_BPAGES], b[HOMA_MAX_BPAGES];
	struct fix f;

	(void)state;
	fix_init(&f, 4, 2, 1000);
	alloc_ok(&f, 100, 0, 0, a);         /* still live */
	alloc_ok(&f, BP, 1, 5000, b);
	assert_int_not_equal(b[0], 0);
	alloc_ok(&f, 100, 1, 5000, b);
	assert_int_not_equal(b[0] / BP, 0);
	fix_done(&f);
}

static void homa_pool_alloc_msg__reclaims_expired_when_full(void **state)
{
	uint32_t a[HOMA_MAX_BPAGES], b[HOMA_MAX_BPAGES];
	uint32_t num = 9;
	struct fix f;

	(void)state;
	fix_init(&f, 2, 2, 1000);
	alloc_ok(&f, 100, 0, 0, a);
	alloc_ok(&f, 100, 1, 0, b);
	homa_pool_release(f.pool, a, 1);
	homa_pool_release(f.pool, b, 1);
	/* Both bpages are idle chunk bpages: none is free. */
	assert_int_equal(homa_pool_free_bpages(f.pool), 0);
	assert_int_equal(homa_pool_alloc_msg(f.pool, BP + 100, 0, 999, a,
					     &num), -ENOSPC);
	assert_int_equal(num, 0);
	assert_int_equal(homa_pool_free_bpages(f.pool), 0);
	/* Once the leases are over they are reclaimed. */
	alloc_ok(&f, BP + 100, 0, 1000, a);
	assert_int_not_equal(a[0] / BP, a[1] / BP);
	assert_int_equal(homa_pool_free_bpages(f.pool), 0);
	fix_done(&f);
}

static void homa_pool_alloc_msg__prefers_low_indexes(void **state)
{
	uint32_t held[100][HOMA_MAX_BPAGES];
	uint32_t offsets[HOMA_MAX_BPAGES];
	struct fix f;
	uint32_t i;

	(void)state;
	fix_init(&f, 1000, 1, 1000);
	/* One bpage in use at a time: only the first few are ever used. */
	for (i = 0; i < 200; i++) {
		alloc_ok(&f, BP, 0, 0, offsets);
		assert_true(offsets[0] / BP < 5);
		homa_pool_release(f.pool, offsets, 1);
	}
	/* Held messages pack densely from the start. */
	for (i = 0; i < 100; i++) {
		alloc_ok(&f, BP, 0, 0, held[i]);
		assert_true(held[i][0] / BP < 100);
	}
	for (i = 0; i < 100; i += 2)
		homa_pool_release(f.pool, held[i], 1);
	for (i = 0; i < 100; i += 2) {
		alloc_ok(&f, BP, 0, 0, held[i]);
		assert_true(held[i][0] / BP < 100);
	}
	assert_int_equal(homa_pool_free_bpages(f.pool), 900);
	fix_done(&f);
}

static void homa_pool_alloc_msg__enospc_whole_leaves_nothing(void **state)
{
	uint32_t a[HOMA_MAX_BPAGES], b[HOMA_MAX_BPAGES];
	uint32_t num = 9;
	struct fix f;

	(void)state;
	fix_init(&f, 4, 1, 1000);
	assert_int_equal(homa_pool_alloc_msg(f.pool, 5 * BP, 0, 0, b, &num),
			 -ENOSPC);
	assert_int_equal(num, 0);
	assert_int_equal(homa_pool_free_bpages(f.pool), 4);
	alloc_ok(&f, 3 * BP, 0, 0, a);
	assert_int_equal(homa_pool_free_bpages(f.pool), 1);
	num = 9;
	assert_int_equal(homa_pool_alloc_msg(f.pool, 2 * BP, 0, 0, b, &num),
			 -ENOSPC);
	assert_int_equal(num, 0);
	assert_int_equal(homa_pool_free_bpages(f.pool), 1);
	/* The last bpage is still there to take. */
	alloc_ok(&f, BP, 0, 0, b);
	assert_int_equal(homa_pool_free_bpages(f.pool), 0);
	fix_done(&f);
}

static void homa_pool_alloc_msg__enospc_chunk_releases_whole(void **state)
{
	uint32_t a[HOMA_MAX_BPAGES], b[HOMA_MAX_BPAGES];
	uint32_t num = 9;
	struct fix f;

	(void)state;
	fix_init(&f, 2, 2, 1000);
	alloc_ok(&f, 100, 0, 0, a);      /* bpage 0, live */
	assert_int_equal(homa_pool_free_bpages(f.pool), 1);
	/* The whole bpage fits, the remainder then does not. */
	assert_int_equal(homa_pool_alloc_msg(f.pool, BP + 100, 1, 0, b, &num),
			 -ENOSPC);
	assert_int_equal(num, 0);
	assert_int_equal(homa_pool_free_bpages(f.pool), 1);
	alloc_ok(&f, BP, 1, 0, b);
	assert_int_equal(b[0], BP);
	assert_int_equal(homa_pool_free_bpages(f.pool), 0);
	fix_done(&f);
}

static void homa_pool_alloc_msg__enospc_chunk_gives_up_full_bpage(void **state)
{
	uint32_t a[HOMA_MAX_BPAGES], b[HOMA_MAX_BPAGES], c[HOMA_MAX_BPAGES];
	uint32_t num = 9;
	struct fix f;

	(void)state;
	fix_init(&f, 2, 1, 1000);
	alloc_ok(&f, 60000, 0, 0, a);       /* bpage 0 */
	alloc_ok(&f, BP, 0, 0, b);          /* bpage 1 */
	assert_int_equal(homa_pool_free_bpages(f.pool), 0);
	/* Does not fit in bpage 0, no other bpage: fails, takes nothing. */
	assert_int_equal(homa_pool_alloc_msg(f.pool, 10000, 0, 0, c, &num),
			 -ENOSPC);
	assert_int_equal(num, 0);
	assert_int_equal(homa_pool_free_bpages(f.pool), 0);
	/* Bpage 0 was given up, so its last message frees it. */
	homa_pool_release(f.pool, a, 1);
	assert_int_equal(homa_pool_free_bpages(f.pool), 1);
	alloc_ok(&f, 10000, 0, 0, c);
	assert_int_equal(c[0], 0);
	fix_done(&f);
}

/* ---- randomized: allocation never hands out a byte twice ---- */

#define RND_BPAGES 48
#define RND_CORES 3
#define RND_LEASE 2000
#define RND_LIVE 400
#define RND_OPS 30000
#define RND_SEED 0x5eed1234abcdULL

struct rnd_msg {
	uint32_t length;
	uint32_t num;
	uint32_t offsets[HOMA_MAX_BPAGES];
	bool given;
	unsigned char tag;
};

static uint64_t rnd_state;

/* rnd - xorshift64*; deterministic from RND_SEED. */
static uint32_t rnd(void)
{
	rnd_state ^= rnd_state >> 12;
	rnd_state ^= rnd_state << 25;
	rnd_state ^= rnd_state >> 27;
	return (uint32_t)((rnd_state * 0x2545F4914F6CDD1DULL) >> 32);
}

/* rnd_range_len - bytes of message m held at offsets[i]. */
static uint32_t rnd_range_len(const struct rnd_msg *m, uint32_t i)
{
	uint32_t left = m->length - i * BP;

	return left < BP ? left : BP;
}

/* rnd_fill - write the message's tag over all its bytes, through
 * homa_pool_buffer, checking what it returns. */
static void rnd_fill(struct homa_pool *pool, const struct rnd_msg *m)
{
	uint32_t offset = 0;

	while (offset < m->length) {
		uint32_t avail = 0;
		char *p = homa_pool_buffer(pool, m->offsets, m->num,
					   m->length, offset, &avail);

		assert_non_null(p);
		assert_true(avail > 0 && avail <= m->length - offset);
		assert_true(avail <= BP - (offset % BP));
		memset(p, m->tag, avail);
		offset += avail;
	}
}

/* rnd_check - the message's bytes still all hold its tag. */
static void rnd_check(struct homa_pool *pool, const struct rnd_msg *m,
		      const unsigned char *ref)
{
	uint32_t offset = 0;

	while (offset < m->length) {
		uint32_t avail = 0;
		char *p = homa_pool_buffer(pool, m->offsets, m->num,
					   m->length, offset, &avail);

		assert_non_null(p);
		assert_memory_equal(p, ref + (m->tag - 1) * BP, avail);
		offset += avail;
	}
}

static void homa_pool_alloc_msg__randomized_no_overlap(void **state)
{
	static struct rnd_msg live[RND_LIVE];
	uint32_t cnt[RND_BPAGES] = { 0 };
	uint32_t nonempty = 0, n_live = 0, app = 0;
	unsigned char *shadow, *ref;
	uint32_t allocs = 0, nospc = 0, takes = 0;
	uint64_t now = 0;
	struct fix f;
	uint32_t op, i, k;

	(void)state;
	print_message("randomized seed %#llx\n", (unsigned long long)RND_SEED);
	rnd_state = RND_SEED;
	fix_init(&f, RND_BPAGES, RND_CORES, RND_LEASE);
	shadow = calloc((size_t)RND_BPAGES * BP, 1);
	ref = malloc((size_t)255 * BP);
	assert_non_null(shadow);
	assert_non_null(ref);
	for (i = 0; i < 255; i++)
		memset(ref + (size_t)i * BP, (int)(i + 1), BP);

	for (op = 0; op < RND_OPS; op++) {
		uint32_t r = rnd() % 100;

		now += rnd() % 300;
		if (n_live < RND_LIVE && (n_live == 0 || r < 55)) {
			struct rnd_msg *m = &live[n_live];
			uint32_t before = homa_pool_free_bpages(f.pool);
			uint32_t kind = rnd() % 100;
			int core = (int)(rnd() % 5) - 1;
			int rc;

			if (kind < 50)
				m->length = 1 + rnd() % 3000;
			else if (kind < 75)
				m->length = 1 + rnd() % BP;
			else if (kind < 85)
				m->length = BP * (1 + rnd() % 4);
			else
				m->length = 1 + rnd() % HOMA_MAX_MESSAGE_LENGTH;
			m->num = 77;
			rc = homa_pool_alloc_msg(f.pool, m->length, core, now,
						 m->offsets, &m->num);
			if (rc == -ENOSPC) {
				/* Nothing taken (idle bpages may have been
				 * freed on the way). */
				assert_int_equal(m->num, 0);
				assert_true(homa_pool_free_bpages(f.pool) >=
					    before);
				nospc++;
				continue;
			}
			assert_int_equal(rc, 0);
			allocs++;
			assert_int_equal(m->num,
					 homa_pool_bpages_needed(m->length));
			for (i = 0; i < m->num; i++) {
				uint32_t off = m->offsets[i];
				uint32_t len = rnd_range_len(m, i);

				assert_true(off / BP < RND_BPAGES);
				assert_true(off % BP + len <= BP);
				if (i + 1 < m->num)
					assert_int_equal(off % BP, 0);
				/* No byte may belong to two live messages. */
				assert_null(memchr(shadow + off, 1, len));
				memset(shadow + off, 1, len);
				if (cnt[off / BP]++ == 0)
					nonempty++;
			}
			m->tag = (unsigned char)(1 + allocs % 255);
			rnd_fill(f.pool, m);
			m->given = rnd() % 2;
			if (m->given) {
				assert_int_equal(homa_pool_give_to_app(
					f.pool, m->offsets, m->num), 0);
				app += m->num;
			}
			n_live++;
		} else if (r < 97) {
			/* Free one message, or a batch of given ones. */
			uint32_t batch[3 * HOMA_MAX_BPAGES];
			uint32_t pick[3];
			uint32_t npick = 1, nb = 0;

			pick[0] = rnd() % n_live;
			if (live[pick[0]].given) {
				for (i = 0; i < n_live && npick < 3; i++) {
					if (i != pick[0] && live[i].given &&
					    rnd() % 8 == 0)
						pick[npick++] = i;
				}
			}
			for (k = 0; k < npick; k++) {
				struct rnd_msg *m = &live[pick[k]];

				rnd_check(f.pool, m, ref);
				for (i = 0; i < m->num; i++) {
					uint32_t off = m->offsets[i];

					memset(shadow + off, 0,
					       rnd_range_len(m, i));
					if (--cnt[off / BP] == 0)
						nonempty--;
					batch[nb++] = off;
				}
			}
			if (live[pick[0]].given) {
				assert_int_equal(homa_pool_take_from_app(
					f.pool, batch, nb), 0);
				app -= nb;
				takes++;
			} else {
				homa_pool_release(f.pool, batch, nb);
			}
			/* Remove the picked entries, highest index first. */
			for (k = 0; k < npick; k++) {
				uint32_t hi = k;

				for (i = k + 1; i < npick; i++)
					if (pick[i] > pick[hi])
						hi = i;
				i = pick[hi];
				pick[hi] = pick[k];
				pick[k] = i;
				live[i] = live[--n_live];
			}
		} else {
			/* A bad hand-back changes nothing. */
			struct rnd_msg *m = &live[rnd() % n_live];
			uint32_t before = homa_pool_free_bpages(f.pool);
			uint32_t bad[2 * HOMA_MAX_BPAGES];

			memcpy(bad, m->offsets, m->num * sizeof(bad[0]));
			if (m->given) {
				/* Named twice in one call. */
				memcpy(bad + m->num, m->offsets,
				       sizeof(bad[0]));
				assert_int_equal(homa_pool_take_from_app(
					f.pool, bad, m->num + 1), -EINVAL);
			} else {
				assert_int_equal(homa_pool_take_from_app(
					f.pool, bad, m->num), -EINVAL);
			}
			assert_int_equal(homa_pool_free_bpages(f.pool), before);
		}
		/* Free count: bpages holding live bytes are never free; the
		 * rest are free, or idle chunk bpages (one per core at most). */
		assert_true(homa_pool_free_bpages(f.pool) <=
			    RND_BPAGES - nonempty);
		assert_true(homa_pool_free_bpages(f.pool) + RND_CORES >=
			    RND_BPAGES - nonempty);
		assert_int_equal(homa_pool_app_owned(f.pool), app);
	}
	print_message("%u allocations, %u ENOSPC, %u take_from_app\n",
		      allocs, nospc, takes);
	assert_true(allocs > RND_OPS / 4);
	assert_true(nospc > 0);

	/* Free everything. */
	while (n_live > 0) {
		struct rnd_msg *m = &live[--n_live];

		rnd_check(f.pool, m, ref);
		if (m->given)
			assert_int_equal(homa_pool_take_from_app(
				f.pool, m->offsets, m->num), 0);
		else
			homa_pool_release(f.pool, m->offsets, m->num);
	}
	assert_int_equal(homa_pool_app_owned(f.pool), 0);
	assert_true(homa_pool_free_bpages(f.pool) + RND_CORES >= RND_BPAGES);

	/* After the leases end, every bpage can be had again. */
	now += 10 * RND_LEASE;
	for (i = 0; i < RND_BPAGES; i++)
		alloc_ok(&f, BP, (int)i, now, live[i].offsets);
	k = 9;
	assert_int_equal(homa_pool_alloc_msg(f.pool, BP, 0, now,
					     live[RND_BPAGES].offsets, &k),
			 -ENOSPC);
	assert_int_equal(homa_pool_free_bpages(f.pool), 0);
	for (i = 0; i < RND_BPAGES; i++)
		homa_pool_release(f.pool, live[i].offsets, 1);
	assert_int_equal(homa_pool_free_bpages(f.pool), RND_BPAGES);

	free(shadow);
	free(ref);
	fix_done(&f);
}

/* ---- homa_pool_buffer ---- */

static void homa_pool_buffer__across_bpages(void **state)
{
	uint32_t offsets[HOMA_MAX_BPAGES];
	uint32_t avail = 0;
	struct fix f;
	char *p;

	(void)state;
	fix_init(&f, 32, 1, 1000);
	alloc_ok(&f, 1000000, 0, 0, offsets);

	p = homa_pool_buffer(f.pool, offsets, 16, 1000000, 0, &avail);
	assert_ptr_equal(p, f.region + offsets[0]);
	assert_int_equal(avail, BP);
	p = homa_pool_buffer(f.pool, offsets, 16, 1000000, BP - 1, &avail);
	assert_ptr_equal(p, f.region + offsets[0] + BP - 1);
	assert_int_equal(avail, 1);
	p = homa_pool_buffer(f.pool, offsets, 16, 1000000, BP, &avail);
	assert_ptr_equal(p, f.region + offsets[1]);
	assert_int_equal(avail, BP);
	p = homa_pool_buffer(f.pool, offsets, 16, 1000000, 3 * BP + 10,
			     &avail);
	assert_ptr_equal(p, f.region + offsets[3] + 10);
	assert_int_equal(avail, BP - 10);
	/* The last chunk: only up to the end of the message. */
	p = homa_pool_buffer(f.pool, offsets, 16, 1000000, 15 * BP, &avail);
	assert_ptr_equal(p, f.region + offsets[15]);
	assert_int_equal(avail, 1000000 - 15 * BP);
	p = homa_pool_buffer(f.pool, offsets, 16, 1000000, 999999, &avail);
	assert_ptr_equal(p, f.region + offsets[15] + (999999 - 15 * BP));
	assert_int_equal(avail, 1);
	avail = 5;
	assert_null(homa_pool_buffer(f.pool, offsets, 16, 1000000, 1000000,
				     &avail));
	assert_int_equal(avail, 0);
	fix_done(&f);
}

static void homa_pool_buffer__exact_multiple(void **state)
{
	uint32_t offsets[HOMA_MAX_BPAGES];
	uint32_t avail = 0;
	struct fix f;
	char *p;

	(void)state;
	fix_init(&f, 8, 1, 1000);
	alloc_ok(&f, 2 * BP, 0, 0, offsets);
	p = homa_pool_buffer(f.pool, offsets, 2, 2 * BP, BP + 10, &avail);
	assert_ptr_equal(p, f.region + offsets[1] + 10);
	assert_int_equal(avail, BP - 10);
	assert_null(homa_pool_buffer(f.pool, offsets, 2, 2 * BP, 2 * BP,
				     &avail));
	assert_int_equal(avail, 0);
	fix_done(&f);
}

static void homa_pool_buffer__small_message(void **state)
{
	uint32_t a[HOMA_MAX_BPAGES], b[HOMA_MAX_BPAGES];
	uint32_t avail = 0;
	struct fix f;
	char *p;

	(void)state;
	fix_init(&f, 8, 1, 1000);
	alloc_ok(&f, 300, 0, 0, a);
	alloc_ok(&f, 100, 0, 0, b);
	p = homa_pool_buffer(f.pool, b, 1, 100, 0, &avail);
	assert_ptr_equal(p, f.region + 300);
	assert_int_equal(avail, 100);
	p = homa_pool_buffer(f.pool, b, 1, 100, 50, &avail);
	assert_ptr_equal(p, f.region + 350);
	assert_int_equal(avail, 50);
	fix_done(&f);
}

static void homa_pool_buffer__bad_inputs(void **state)
{
	struct homa_pool *pool = homa_pool_create(1, 1000);
	uint32_t offsets[2] = { 0, 8 * BP };
	uint32_t avail = 5;
	struct fix f;

	(void)state;
	assert_null(homa_pool_buffer(pool, offsets, 1, 100, 0, &avail));
	assert_int_equal(avail, 0);
	homa_pool_destroy(pool);

	fix_init(&f, 8, 1, 1000);
	avail = 5;
	/* Fewer entries than the offset needs. */
	assert_null(homa_pool_buffer(f.pool, offsets, 1, 2 * BP, BP, &avail));
	assert_int_equal(avail, 0);
	/* An entry outside the region. */
	avail = 5;
	assert_null(homa_pool_buffer(f.pool, offsets, 2, 2 * BP, BP, &avail));
	assert_int_equal(avail, 0);
	fix_done(&f);
}

/* ---- homa_pool_release ---- */

static void homa_pool_release__frees_bpages(void **state)
{
	uint32_t offsets[HOMA_MAX_BPAGES];
	struct fix f;

	(void)state;
	fix_init(&f, 8, 1, 1000);
	alloc_ok(&f, 3 * BP + 500, 0, 0, offsets);
	assert_int_equal(homa_pool_free_bpages(f.pool), 4);
	homa_pool_release(f.pool, offsets, 4);
	/* The chunk bpage stays with the core. */
	assert_int_equal(homa_pool_free_bpages(f.pool), 7);
	fix_done(&f);
}

static void homa_pool_release__outside_region_ignored(void **state)
{
	struct homa_pool *pool = homa_pool_create(1, 1000);
	uint32_t bad[2] = { 8 * BP, UINT32_MAX };
	struct fix f;

	(void)state;
	homa_pool_release(pool, bad, 2);         /* no region */
	homa_pool_destroy(pool);

	fix_init(&f, 8, 1, 1000);
	homa_pool_release(f.pool, bad, 2);
	assert_int_equal(homa_pool_free_bpages(f.pool), 8);
	fix_done(&f);
}

/* ---- homa_pool_give_to_app ---- */

static void homa_pool_give_to_app__records(void **state)
{
	uint32_t a[HOMA_MAX_BPAGES], b[HOMA_MAX_BPAGES];
	struct fix f;

	(void)state;
	fix_init(&f, 32, 1, 1000);
	alloc_ok(&f, 1000000, 0, 0, a);
	alloc_ok(&f, 100, 0, 0, b);
	assert_int_equal(homa_pool_give_to_app(f.pool, a, 16), 0);
	assert_int_equal(homa_pool_give_to_app(f.pool, b, 1), 0);
	assert_int_equal(homa_pool_app_owned(f.pool), 17);
	assert_int_equal(homa_pool_give_to_app(f.pool, b, 0), 0);
	assert_int_equal(homa_pool_app_owned(f.pool), 17);
	fix_done(&f);
}

static void homa_pool_give_to_app__out_of_memory(void **state)
{
	uint32_t a[HOMA_MAX_BPAGES];
	struct fix f;

	(void)state;
	fix_init(&f, 8, 1, 1000);
	alloc_ok(&f, 2 * BP, 0, 0, a);
	assert_int_equal(homa_pool_free_bpages(f.pool), 6);
	fail_next(1);
	assert_int_equal(homa_pool_give_to_app(f.pool, a, 2), -ENOMEM);
	fail_next(0);
	/* Nothing recorded; the space went back to the pool. */
	assert_int_equal(homa_pool_app_owned(f.pool), 0);
	assert_int_equal(homa_pool_free_bpages(f.pool), 8);
	assert_int_equal(homa_pool_take_from_app(f.pool, a, 2), -EINVAL);
	fix_done(&f);
}

static void homa_pool_give_to_app__grows(void **state)
{
	static uint32_t offs[3000];
	struct fix f;
	uint32_t i;

	(void)state;
	/* Irregular sizes give irregular offsets, so the hash set sees
	 * collisions and its deletions must move entries. */
	rnd_state = 42;
	fix_init(&f, 16, 1, 1000);
	for (i = 0; i < 3000; i++) {
		alloc_ok(&f, 1 + rnd() % 200, 0, 0, &offs[i]);
		assert_int_equal(homa_pool_give_to_app(f.pool, &offs[i], 1),
				 0);
	}
	assert_int_equal(homa_pool_app_owned(f.pool), 3000);
	assert_true(homa_pool_free_bpages(f.pool) < 13);
	/* Hand back in a shuffled order, in batches. */
	for (i = 2999; i > 0; i--) {
		uint32_t j = rnd() % (i + 1), t = offs[i];

		offs[i] = offs[j];
		offs[j] = t;
	}
	for (i = 0; i < 3000; i += 3) {
		assert_int_equal(homa_pool_take_from_app(f.pool, &offs[i], 3),
				 0);
		assert_int_equal(homa_pool_app_owned(f.pool), 3000 - i - 3);
	}
	/* Only the core's chunk bpage is left in use. */
	assert_int_equal(homa_pool_free_bpages(f.pool), 15);
	fix_done(&f);
}

/* ---- homa_pool_take_from_app ---- */

static void homa_pool_take_from_app__returns_space(void **state)
{
	uint32_t a[HOMA_MAX_BPAGES];
	struct fix f;

	(void)state;
	fix_init(&f, 8, 1, 1000);
	alloc_ok(&f, 3 * BP + 1, 0, 0, a);
	assert_int_equal(homa_pool_give_to_app(f.pool, a, 4), 0);
	assert_int_equal(homa_pool_free_bpages(f.pool), 4);
	assert_int_equal(homa_pool_take_from_app(f.pool, a, 4), 0);
	assert_int_equal(homa_pool_app_owned(f.pool), 0);
	assert_int_equal(homa_pool_free_bpages(f.pool), 7);
	assert_int_equal(homa_pool_take_from_app(f.pool, a, 0), 0);
	fix_done(&f);
}

static void homa_pool_take_from_app__double_return(void **state)
{
	uint32_t a[HOMA_MAX_BPAGES], b[HOMA_MAX_BPAGES];
	struct fix f;

	(void)state;
	fix_init(&f, 8, 1, 1000);
	alloc_ok(&f, 2 * BP, 0, 0, a);
	assert_int_equal(homa_pool_give_to_app(f.pool, a, 2), 0);
	assert_int_equal(homa_pool_take_from_app(f.pool, a, 2), 0);
	assert_int_equal(homa_pool_free_bpages(f.pool), 8);
	/* The space is reused by another message ... */
	alloc_ok(&f, 2 * BP, 0, 0, b);
	assert_int_equal(homa_pool_give_to_app(f.pool, b, 2), 0);
	assert_int_equal(homa_pool_take_from_app(f.pool, b, 2), 0);
	alloc_ok(&f, BP, 0, 0, b);
	/* ... and a second return of the old offsets frees nothing. */
	assert_int_equal(homa_pool_take_from_app(f.pool, a, 2), -EINVAL);
	assert_int_equal(homa_pool_free_bpages(f.pool), 7);
	fix_done(&f);
}

static void homa_pool_take_from_app__repeated_in_one_call(void **state)
{
	uint32_t a[HOMA_MAX_BPAGES], b[HOMA_MAX_BPAGES];
	uint32_t twice[3];
	struct fix f;

	(void)state;
	fix_init(&f, 8, 1, 1000);
	alloc_ok(&f, BP, 0, 0, a);
	alloc_ok(&f, BP, 0, 0, b);
	assert_int_equal(homa_pool_give_to_app(f.pool, a, 1), 0);
	assert_int_equal(homa_pool_give_to_app(f.pool, b, 1), 0);
	twice[0] = a[0];
	twice[1] = b[0];
	twice[2] = a[0];
	assert_int_equal(homa_pool_take_from_app(f.pool, twice, 3), -EINVAL);
	assert_int_equal(homa_pool_app_owned(f.pool), 2);
	assert_int_equal(homa_pool_free_bpages(f.pool), 6);
	/* Nothing was left half-claimed. */
	assert_int_equal(homa_pool_take_from_app(f.pool, twice, 2), 0);
	assert_int_equal(homa_pool_free_bpages(f.pool), 8);
	fix_done(&f);
}

static void homa_pool_take_from_app__unknown_offset(void **state)
{
	uint32_t a[HOMA_MAX_BPAGES], b[HOMA_MAX_BPAGES];
	uint32_t inside;
	struct fix f;

	(void)state;
	fix_init(&f, 8, 1, 1000);
	alloc_ok(&f, BP, 0, 0, a);           /* given */
	alloc_ok(&f, 500, 0, 0, b);          /* live, not given */
	assert_int_equal(homa_pool_give_to_app(f.pool, a, 1), 0);
	assert_int_equal(homa_pool_take_from_app(f.pool, b, 1), -EINVAL);
	inside = a[0] + 8;
	assert_int_equal(homa_pool_take_from_app(f.pool, &inside, 1),
			 -EINVAL);
	assert_int_equal(homa_pool_free_bpages(f.pool), 6);
	assert_int_equal(homa_pool_app_owned(f.pool), 1);
	fix_done(&f);
}

static void homa_pool_take_from_app__outside_region(void **state)
{
	struct homa_pool *pool = homa_pool_create(1, 1000);
	uint32_t bad[2] = { 8 * BP, UINT32_MAX };
	struct fix f;

	(void)state;
	assert_int_equal(homa_pool_take_from_app(pool, bad, 1), -EINVAL);
	homa_pool_destroy(pool);

	fix_init(&f, 8, 1, 1000);
	assert_int_equal(homa_pool_take_from_app(f.pool, &bad[0], 1), -EINVAL);
	assert_int_equal(homa_pool_take_from_app(f.pool, &bad[1], 1), -EINVAL);
	assert_int_equal(homa_pool_free_bpages(f.pool), 8);
	fix_done(&f);
}

static void homa_pool_take_from_app__mixed_valid_invalid(void **state)
{
	uint32_t a[HOMA_MAX_BPAGES], b[HOMA_MAX_BPAGES];
	uint32_t mix[4];
	struct fix f;

	(void)state;
	fix_init(&f, 8, 1, 1000);
	alloc_ok(&f, 2 * BP, 0, 0, a);
	alloc_ok(&f, 700, 0, 0, b);
	assert_int_equal(homa_pool_give_to_app(f.pool, a, 2), 0);
	assert_int_equal(homa_pool_give_to_app(f.pool, b, 1), 0);
	assert_int_equal(homa_pool_free_bpages(f.pool), 5);
	mix[0] = a[0];
	mix[1] = b[0];
	mix[2] = 7 * BP;            /* in the region, never handed out */
	mix[3] = a[1];
	assert_int_equal(homa_pool_take_from_app(f.pool, mix, 4), -EINVAL);
	assert_int_equal(homa_pool_free_bpages(f.pool), 5);
	assert_int_equal(homa_pool_app_owned(f.pool), 3);
	mix[2] = a[1];
	assert_int_equal(homa_pool_take_from_app(f.pool, mix, 3), 0);
	assert_int_equal(homa_pool_free_bpages(f.pool), 7);
	assert_int_equal(homa_pool_app_owned(f.pool), 0);
	fix_done(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(homa_pool_create__bad_num_cores),
		cmocka_unit_test(homa_pool_create__out_of_memory),
		cmocka_unit_test(homa_pool_create__no_region_yet),
		cmocka_unit_test(homa_pool_destroy__null_ignored),
		cmocka_unit_test(homa_pool_set_region__null_start),
		cmocka_unit_test(homa_pool_set_region__misaligned),
		cmocka_unit_test(homa_pool_set_region__too_small),
		cmocka_unit_test(homa_pool_set_region__too_large),
		cmocka_unit_test(homa_pool_set_region__twice),
		cmocka_unit_test(homa_pool_set_region__out_of_memory),
		cmocka_unit_test(homa_pool_set_region__rounds_down),
		cmocka_unit_test(homa_pool_get_rcvbuf__no_region),
		cmocka_unit_test(homa_pool_get_rcvbuf__region),
		cmocka_unit_test(homa_pool_bpages_needed__values),
		cmocka_unit_test(homa_pool_alloc_msg__no_region),
		cmocka_unit_test(homa_pool_alloc_msg__bad_length),
		cmocka_unit_test(homa_pool_alloc_msg__small_message),
		cmocka_unit_test(homa_pool_alloc_msg__exact_multiple),
		cmocka_unit_test(homa_pool_alloc_msg__one_million),
		cmocka_unit_test(homa_pool_alloc_msg__chunks_share_bpage),
		cmocka_unit_test(
			homa_pool_alloc_msg__chunk_does_not_fit_bpage_in_use),
		cmocka_unit_test(homa_pool_alloc_msg__chunk_restarts_when_idle),
		cmocka_unit_test(homa_pool_alloc_msg__cores_get_different_bpages),
		cmocka_unit_test(homa_pool_alloc_msg__lease_renewed_on_use),
		cmocka_unit_test(homa_pool_alloc_msg__steal_expired_for_whole),
		cmocka_unit_test(homa_pool_alloc_msg__steal_expired_for_chunk),
		cmocka_unit_test(homa_pool_alloc_msg__no_steal_while_in_use),
		cmocka_unit_test(
			homa_pool_alloc_msg__reclaims_expired_when_full),
		cmocka_unit_test(homa_pool_alloc_msg__prefers_low_indexes),
		cmocka_unit_test(
			homa_pool_alloc_msg__enospc_whole_leaves_nothing),
		cmocka_unit_test(
			homa_pool_alloc_msg__enospc_chunk_releases_whole),
		cmocka_unit_test(
			homa_pool_alloc_msg__enospc_chunk_gives_up_full_bpage),
		cmocka_unit_test(homa_pool_alloc_msg__randomized_no_overlap),
		cmocka_unit_test(homa_pool_buffer__across_bpages),
		cmocka_unit_test(homa_pool_buffer__exact_multiple),
		cmocka_unit_test(homa_pool_buffer__small_message),
		cmocka_unit_test(homa_pool_buffer__bad_inputs),
		cmocka_unit_test(homa_pool_release__frees_bpages),
		cmocka_unit_test(homa_pool_release__outside_region_ignored),
		cmocka_unit_test(homa_pool_give_to_app__records),
		cmocka_unit_test(homa_pool_give_to_app__out_of_memory),
		cmocka_unit_test(homa_pool_give_to_app__grows),
		cmocka_unit_test(homa_pool_take_from_app__returns_space),
		cmocka_unit_test(homa_pool_take_from_app__double_return),
		cmocka_unit_test(homa_pool_take_from_app__repeated_in_one_call),
		cmocka_unit_test(homa_pool_take_from_app__unknown_offset),
		cmocka_unit_test(homa_pool_take_from_app__outside_region),
		cmocka_unit_test(homa_pool_take_from_app__mixed_valid_invalid),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
