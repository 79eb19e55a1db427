/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests of homa_rpc (src/core/homa_rpc.c): the RPC table and RPC
 * allocation, in code order, named <function>__<case>.  (The lifecycle of
 * an RPC in its endpoint, also in homa_rpc.c, is tested through the
 * endpoint: test_homa_endpoint.c, test_homa_incoming.c, ...)
 *
 * Build (homa_rpc.c links with the rest of the core):
 *   cc -std=c11 -D_GNU_SOURCE -Iinclude -Isrc/core \
 *      tests/unit/test_homa_rpc.c build/libhoma_core.a -lcmocka
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include <cmocka.h>

#include "homa.h"
#include "homa_list.h"
#include "homa_rpc.h"

#define MAX_RPCS 20000

/* A table and every RPC a test made (freed by teardown). */
struct fix {
	struct homa_rpc_table t;
	struct homa_rpc *rpcs[MAX_RPCS];
	int n;
};

static int setup(void **state)
{
	struct fix *f = calloc(1, sizeof(*f));

	if (!f || homa_rpc_table_init(&f->t) != 0) {
		free(f);
		return -1;
	}
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fix *f = *state;
	int i;

	homa_rpc_table_destroy(&f->t);
	for (i = 0; i < f->n; i++)
		free(f->rpcs[i]);
	free(f);
	return 0;
}

/* v4 - the IPv4 address host (host byte order), port. */
static union sockaddr_in_union v4(uint32_t host, uint16_t port)
{
	union sockaddr_in_union a;

	memset(&a, 0, sizeof(a));
	a.in4.sin_family = AF_INET;
	a.in4.sin_addr.s_addr = htonl(host);
	a.in4.sin_port = htons(port);
	return a;
}

/* v6 - the IPv6 address fd00::host, port. */
static union sockaddr_in_union v6(uint32_t host, uint16_t port)
{
	union sockaddr_in_union a;
	uint32_t be = htonl(host);

	memset(&a, 0, sizeof(a));
	a.in6.sin6_family = AF_INET6;
	a.in6.sin6_addr.s6_addr[0] = 0xfd;
	memcpy(&a.in6.sin6_addr.s6_addr[12], &be, 4);
	a.in6.sin6_port = htons(port);
	return a;
}

/* new_rpc - an RPC owned by the fixture (not in the table). */
static struct homa_rpc *new_rpc(struct fix *f)
{
	struct homa_rpc *r = homa_rpc_alloc();

	assert_non_null(r);
	assert_true(f->n < MAX_RPCS);
	f->rpcs[f->n++] = r;
	return r;
}

/* client - a client RPC with id, inserted into the table. */
static struct homa_rpc *client(struct fix *f, uint64_t id,
			       const union sockaddr_in_union *server)
{
	struct homa_rpc *r = new_rpc(f);

	r->id = id;
	r->is_client = true;
	r->dest = *server;
	homa_rpc_table_insert(&f->t, r);
	return r;
}

/* server - a server RPC with id from src, inserted into the table. */
static struct homa_rpc *server(struct fix *f, uint64_t id,
			       const union sockaddr_in_union *src)
{
	struct homa_rpc *r = new_rpc(f);

	r->id = id;
	r->is_client = false;
	r->dest = *src;
	homa_rpc_table_insert(&f->t, r);
	return r;
}

/* ---- homa_rpc_table_init ---- */

static void homa_rpc_table_init__empty(void **state)
{
	struct fix *f = *state;
	union sockaddr_in_union a = v4(0x0a000001, 40000);
	uint32_t i;

	assert_non_null(f->t.hash.buckets);
	assert_int_equal(f->t.hash.count, 0);
	assert_true(f->t.hash.num_buckets > 0);
	assert_int_equal(f->t.hash.num_buckets &
			 (f->t.hash.num_buckets - 1), 0);
	for (i = 0; i < f->t.hash.num_buckets; i++)
		assert_null(f->t.hash.buckets[i]);
	assert_null(homa_rpc_find_client(&f->t, 2));
	assert_null(homa_rpc_find_server(&f->t, 3, &a));
}

/* ---- homa_rpc_table_destroy ---- */

static void homa_rpc_table_destroy__leaves_rpcs(void **state)
{
	struct fix *f = *state;
	union sockaddr_in_union a = v4(0x0a000001, 99);
	struct homa_rpc *r = client(f, 2, &a);

	homa_rpc_table_destroy(&f->t);
	assert_null(f->t.hash.buckets);
	assert_int_equal(f->t.hash.count, 0);
	/* The RPC itself is still the caller's and intact. */
	assert_int_equal(r->id, 2);
	assert_true(homa_list_empty(&r->all_links));
	homa_rpc_table_destroy(&f->t);      /* harmless twice */
	assert_int_equal(homa_rpc_table_init(&f->t), 0);
}

/* ---- homa_rpc_table_insert ---- */

static void homa_rpc_table_insert__client_found_by_id(void **state)
{
	struct fix *f = *state;
	union sockaddr_in_union a = v4(0x0a000001, 99);
	union sockaddr_in_union b = v4(0x0a000002, 100);
	struct homa_rpc *r2 = client(f, 2, &a);
	struct homa_rpc *r4 = client(f, 4, &a);
	struct homa_rpc *r6 = client(f, 6, &b);

	assert_int_equal(f->t.hash.count, 3);
	assert_ptr_equal(homa_rpc_find_client(&f->t, 2), r2);
	assert_ptr_equal(homa_rpc_find_client(&f->t, 4), r4);
	assert_ptr_equal(homa_rpc_find_client(&f->t, 6), r6);
	assert_null(homa_rpc_find_client(&f->t, 8));
	assert_null(homa_rpc_find_client(&f->t, 0));
	assert_null(homa_rpc_find_client(&f->t, 3));
}

static void homa_rpc_table_insert__growth_keeps_everything(void **state)
{
	enum { N = 6000 };
	struct fix *f = *state;
	uint32_t first = f->t.hash.num_buckets;
	struct homa_rpc **c = calloc(N, sizeof(*c));
	struct homa_rpc **s = calloc(N, sizeof(*s));
	int i;

	assert_non_null(c);
	assert_non_null(s);
	for (i = 0; i < N; i++) {
		union sockaddr_in_union src = (i % 3 == 0) ?
			v6((uint32_t)i % 17, (uint16_t)(32768 + i % 5)) :
			v4(0x0a000000 + (uint32_t)i % 17,
			   (uint16_t)(32768 + i % 5));
		union sockaddr_in_union dst = v4(0x0a000099, 99);

		c[i] = client(f, (uint64_t)i * 2 + 2, &dst);
		/* Few distinct server ids: the address and port matter. */
		s[i] = server(f, (uint64_t)(i / 85) * 2 + 1, &src);
	}
	assert_int_equal(f->t.hash.count, 2 * N);
	assert_true(f->t.hash.num_buckets > first);
	for (i = 0; i < N; i++) {
		assert_ptr_equal(homa_rpc_find_client(&f->t,
						      (uint64_t)i * 2 + 2),
				 c[i]);
		assert_ptr_equal(homa_rpc_find_server(&f->t, s[i]->id,
						      &s[i]->dest), s[i]);
	}
	/* Remove every other one: the rest are still found. */
	for (i = 0; i < N; i += 2) {
		homa_rpc_table_remove(&f->t, c[i]);
		homa_rpc_table_remove(&f->t, s[i]);
	}
	assert_int_equal(f->t.hash.count, N);
	for (i = 0; i < N; i++) {
		struct homa_rpc *fc = homa_rpc_find_client(&f->t,
			(uint64_t)i * 2 + 2);
		struct homa_rpc *fs = homa_rpc_find_server(&f->t, s[i]->id,
							   &s[i]->dest);

		if (i % 2 == 0) {
			assert_null(fc);
			assert_null(fs);
		} else {
			assert_ptr_equal(fc, c[i]);
			assert_ptr_equal(fs, s[i]);
		}
	}
	free(c);
	free(s);
}

static void homa_rpc_table_insert__server_keys_distinct(void **state)
{
	struct fix *f = *state;
	int i;

	/* 85 server RPCs with the same id from 17 hosts x 5 ports: all
	 * distinct entries. */
	for (i = 0; i < 85; i++) {
		union sockaddr_in_union src = v4(0x0a000000 + (uint32_t)i % 17,
						 (uint16_t)(32768 + i / 17));

		server(f, 1, &src);
	}
	for (i = 0; i < 85; i++) {
		union sockaddr_in_union src = v4(0x0a000000 + (uint32_t)i % 17,
						 (uint16_t)(32768 + i / 17));

		assert_ptr_equal(homa_rpc_find_server(&f->t, 1, &src),
				 f->rpcs[i]);
	}
}

/* ---- homa_rpc_table_remove ---- */

static void homa_rpc_table_remove__client(void **state)
{
	struct fix *f = *state;
	union sockaddr_in_union a = v4(0x0a000001, 99);
	struct homa_rpc *r2 = client(f, 2, &a);
	struct homa_rpc *r4 = client(f, 4, &a);

	homa_rpc_table_remove(&f->t, r2);
	assert_int_equal(f->t.hash.count, 1);
	assert_null(homa_rpc_find_client(&f->t, 2));
	assert_ptr_equal(homa_rpc_find_client(&f->t, 4), r4);
	assert_null(r2->hash_links.next);
	/* Twice is harmless. */
	homa_rpc_table_remove(&f->t, r2);
	assert_int_equal(f->t.hash.count, 1);
	assert_ptr_equal(homa_rpc_find_client(&f->t, 4), r4);
	/* And it can go back in. */
	homa_rpc_table_insert(&f->t, r2);
	assert_ptr_equal(homa_rpc_find_client(&f->t, 2), r2);
	assert_int_equal(f->t.hash.count, 2);
}

static void homa_rpc_table_remove__server_keeps_twin(void **state)
{
	struct fix *f = *state;
	union sockaddr_in_union a = v4(0x0a000001, 32768);
	union sockaddr_in_union b = v4(0x0a000001, 32769);
	struct homa_rpc *ra = server(f, 5, &a);
	struct homa_rpc *rb = server(f, 5, &b);

	homa_rpc_table_remove(&f->t, ra);
	assert_null(homa_rpc_find_server(&f->t, 5, &a));
	assert_ptr_equal(homa_rpc_find_server(&f->t, 5, &b), rb);
	assert_int_equal(f->t.hash.count, 1);
}

static void homa_rpc_table_remove__never_inserted(void **state)
{
	struct fix *f = *state;
	union sockaddr_in_union a = v4(0x0a000001, 99);
	struct homa_rpc *in = client(f, 2, &a);
	struct homa_rpc *out = new_rpc(f);

	out->id = 2;                       /* same key, other object */
	out->is_client = true;
	homa_rpc_table_remove(&f->t, out);
	assert_int_equal(f->t.hash.count, 1);
	assert_ptr_equal(homa_rpc_find_client(&f->t, 2), in);
}

static void homa_rpc_table_remove__middle_of_chain(void **state)
{
	struct fix *f = *state;
	union sockaddr_in_union a = v4(0x0a000001, 99);
	struct homa_rpc *r[3];
	int i;

	/* Same key three times: they share one chain. */
	for (i = 0; i < 3; i++)
		r[i] = client(f, 2, &a);
	homa_rpc_table_remove(&f->t, r[1]);
	assert_int_equal(f->t.hash.count, 2);
	homa_rpc_table_remove(&f->t, r[0]);
	homa_rpc_table_remove(&f->t, r[2]);
	assert_int_equal(f->t.hash.count, 0);
	assert_null(homa_rpc_find_client(&f->t, 2));
}

/* ---- homa_rpc_find_client ---- */

static void homa_rpc_find_client__large_ids(void **state)
{
	struct fix *f = *state;
	union sockaddr_in_union a = v4(0x0a000001, 99);
	struct homa_rpc *r1 = client(f, UINT64_MAX - 1, &a);
	struct homa_rpc *r2 = client(f, 1ull << 63, &a);

	assert_ptr_equal(homa_rpc_find_client(&f->t, UINT64_MAX - 1), r1);
	assert_ptr_equal(homa_rpc_find_client(&f->t, 1ull << 63), r2);
	assert_null(homa_rpc_find_client(&f->t, UINT64_MAX - 3));
}

static void homa_rpc_find_client__ignores_server_rpcs(void **state)
{
	struct fix *f = *state;
	uint64_t id;
	int i;

	/* Server RPCs whose id values look like client ids are not client
	 * RPCs.  Many sources per id, so that some of them share a bucket
	 * with the client key of their id. */
	for (i = 0; i < 8000; i++) {
		union sockaddr_in_union a = v4(0x0a000000 + (uint32_t)i / 8,
					       (uint16_t)(32768 + i % 8));

		server(f, 10 + (uint64_t)(i % 4) * 2, &a);
	}
	for (id = 10; id <= 16; id += 2)
		assert_null(homa_rpc_find_client(&f->t, id));
}

/* ---- homa_rpc_find_server ---- */

static void homa_rpc_find_server__by_id_address_port(void **state)
{
	struct fix *f = *state;
	union sockaddr_in_union a = v4(0x0a000001, 32768);
	union sockaddr_in_union other_port = v4(0x0a000001, 32769);
	union sockaddr_in_union other_host = v4(0x0a000002, 32768);
	struct homa_rpc *r = server(f, 7, &a);

	assert_ptr_equal(homa_rpc_find_server(&f->t, 7, &a), r);
	assert_null(homa_rpc_find_server(&f->t, 9, &a));
	assert_null(homa_rpc_find_server(&f->t, 7, &other_port));
	assert_null(homa_rpc_find_server(&f->t, 7, &other_host));
}

static void homa_rpc_find_server__no_other_port_matches(void **state)
{
	struct fix *f = *state;
	union sockaddr_in_union a = v4(0x0a000001, 40000);
	uint32_t port;

	server(f, 7, &a);
	/* Whichever bucket another port hashes to, it must not match. */
	for (port = 0; port <= 65535; port++) {
		union sockaddr_in_union b = v4(0x0a000001, (uint16_t)port);

		if (port == 40000)
			assert_non_null(homa_rpc_find_server(&f->t, 7, &b));
		else
			assert_null(homa_rpc_find_server(&f->t, 7, &b));
	}
}

static void homa_rpc_find_server__no_other_host_matches(void **state)
{
	struct fix *f = *state;
	union sockaddr_in_union a = v4(0x0a000001, 40000);
	uint32_t host;

	server(f, 7, &a);
	for (host = 0x0a000000; host < 0x0a010000; host++) {
		union sockaddr_in_union b = v4(host, 40000);

		if (host == 0x0a000001)
			assert_non_null(homa_rpc_find_server(&f->t, 7, &b));
		else
			assert_null(homa_rpc_find_server(&f->t, 7, &b));
	}
}

static void homa_rpc_find_server__same_id_two_peers(void **state)
{
	struct fix *f = *state;
	union sockaddr_in_union a = v4(0x0a000001, 32768);
	union sockaddr_in_union b = v4(0x0a000002, 32768);
	struct homa_rpc *ra = server(f, 101, &a);
	struct homa_rpc *rb = server(f, 101, &b);

	assert_ptr_not_equal(ra, rb);
	assert_int_equal(f->t.hash.count, 2);
	assert_ptr_equal(homa_rpc_find_server(&f->t, 101, &a), ra);
	assert_ptr_equal(homa_rpc_find_server(&f->t, 101, &b), rb);
}

static void homa_rpc_find_server__same_id_two_ports(void **state)
{
	struct fix *f = *state;
	union sockaddr_in_union a = v4(0x0a000001, 32768);
	union sockaddr_in_union b = v4(0x0a000001, 40000);
	struct homa_rpc *ra = server(f, 101, &a);
	struct homa_rpc *rb = server(f, 101, &b);

	assert_ptr_equal(homa_rpc_find_server(&f->t, 101, &a), ra);
	assert_ptr_equal(homa_rpc_find_server(&f->t, 101, &b), rb);
}

static void homa_rpc_find_server__ipv6(void **state)
{
	struct fix *f = *state;
	union sockaddr_in_union a6 = v6(0x0a000001, 32768);
	union sockaddr_in_union a4 = v4(0x0a000001, 32768);
	union sockaddr_in_union b6 = v6(0x0a000002, 32768);
	struct homa_rpc *r6 = server(f, 11, &a6);
	struct homa_rpc *r4 = server(f, 11, &a4);

	assert_ptr_equal(homa_rpc_find_server(&f->t, 11, &a6), r6);
	assert_ptr_equal(homa_rpc_find_server(&f->t, 11, &a4), r4);
	assert_null(homa_rpc_find_server(&f->t, 11, &b6));
}

static void homa_rpc_find_server__ignores_client_rpcs(void **state)
{
	struct fix *f = *state;
	int i;

	/* Client RPCs with the same id value and address as the lookup are
	 * not server RPCs (many of them, so some share the bucket). */
	for (i = 0; i < 8000; i++) {
		union sockaddr_in_union a = v4(0x0a000000 + (uint32_t)i / 8,
					       (uint16_t)(99 + i % 8));

		client(f, 2 + (uint64_t)i * 2, &a);
	}
	for (i = 0; i < 8000; i++)
		assert_null(homa_rpc_find_server(&f->t, f->rpcs[i]->id,
						 &f->rpcs[i]->dest));
}

static void homa_rpc_find_server__client_and_server_coexist(void **state)
{
	struct fix *f = *state;
	union sockaddr_in_union a = v4(0x0a000001, 99);
	struct homa_rpc *c = client(f, 20, &a);
	struct homa_rpc *s = server(f, 21, &a);

	/* The client RPC 20 and the server RPC 21 (its peer's id 20 XOR 1)
	 * are told apart. */
	assert_ptr_equal(homa_rpc_find_client(&f->t, 20), c);
	assert_ptr_equal(homa_rpc_find_server(&f->t, 21, &a), s);
	assert_null(homa_rpc_find_client(&f->t, 21));
	assert_null(homa_rpc_find_server(&f->t, 20, &a));
}

/* ---- homa_rpc_alloc ---- */

static void homa_rpc_alloc__zeroed_and_unlinked(void **state)
{
	struct fix *f = *state;
	struct homa_rpc *r = new_rpc(f);
	struct homa_list *lists[] = {
		&r->all_links, &r->ready_links, &r->send_links,
		&r->grant_links, &r->wait_links,
	};
	size_t i;

	assert_int_equal(r->id, 0);
	assert_false(r->is_client);
	assert_int_equal(r->state, 0);
	assert_null(r->peer);
	assert_null(r->hash_links.next);
	assert_false(r->has_in);
	assert_false(r->has_out);
	assert_int_equal(r->num_bpages, 0);
	assert_int_equal(r->error, 0);
	for (i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
		assert_ptr_equal(lists[i]->next, lists[i]);
		assert_ptr_equal(lists[i]->prev, lists[i]);
		assert_true(homa_list_empty(lists[i]));
	}
}

static void homa_rpc_alloc__lists_usable(void **state)
{
	struct fix *f = *state;
	struct homa_rpc *a = new_rpc(f), *b = new_rpc(f);
	struct homa_list head;

	homa_list_init(&head);
	homa_list_del(&a->ready_links);        /* unlinked: harmless */
	homa_list_add_tail(&head, &a->ready_links);
	homa_list_add_tail(&head, &b->ready_links);
	assert_ptr_equal(homa_container(head.next, struct homa_rpc,
					ready_links), a);
	assert_ptr_equal(homa_container(head.prev, struct homa_rpc,
					ready_links), b);
	/* The other lists of a are still unlinked. */
	assert_true(homa_list_empty(&a->send_links));
	homa_list_del(&a->ready_links);
	homa_list_del(&b->ready_links);
	assert_true(homa_list_empty(&head));
	assert_true(homa_list_empty(&a->ready_links));
}

static void homa_rpc_alloc__distinct(void **state)
{
	struct fix *f = *state;
	struct homa_rpc *a = new_rpc(f), *b = new_rpc(f);

	assert_ptr_not_equal(a, b);
	a->id = 2;
	assert_int_equal(b->id, 0);
}

/* T - a test run with a fresh table. */
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(homa_rpc_table_init__empty),
		T(homa_rpc_table_destroy__leaves_rpcs),
		T(homa_rpc_table_insert__client_found_by_id),
		T(homa_rpc_table_insert__growth_keeps_everything),
		T(homa_rpc_table_insert__server_keys_distinct),
		T(homa_rpc_table_remove__client),
		T(homa_rpc_table_remove__server_keeps_twin),
		T(homa_rpc_table_remove__never_inserted),
		T(homa_rpc_table_remove__middle_of_chain),
		T(homa_rpc_find_client__large_ids),
		T(homa_rpc_find_client__ignores_server_rpcs),
		T(homa_rpc_find_server__by_id_address_port),
		T(homa_rpc_find_server__no_other_port_matches),
		T(homa_rpc_find_server__no_other_host_matches),
		T(homa_rpc_find_server__same_id_two_peers),
		T(homa_rpc_find_server__same_id_two_ports),
		T(homa_rpc_find_server__ipv6),
		T(homa_rpc_find_server__ignores_client_rpcs),
		T(homa_rpc_find_server__client_and_server_coexist),
		T(homa_rpc_alloc__zeroed_and_unlinked),
		T(homa_rpc_alloc__lists_usable),
		T(homa_rpc_alloc__distinct),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
