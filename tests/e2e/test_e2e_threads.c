/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_e2e_threads.c - end-to-end RPCs from several threads: each thread with
 * its own client sockets against one or more servers (IPv4 and IPv6),
 * pipelined RPCs per thread, threads sharing one client socket and waiting
 * for their own ids, multi-threaded servers, concurrent 1 MB messages, and
 * a sender that keeps its CPU while the library's progress thread waits for
 * it.
 */
#include "e2e_blocked.h"
#include "e2e_util.h"

#include <sched.h>
#include <stdlib.h>
#include <time.h>

#define MAX_WORKERS 8

/* One client thread and its outcome. */
struct worker {
	pthread_t t;
	int idx;                               /* worker number */
	int nsocks;                            /* sockets it uses, 1..2 */
	struct e2e_sock *socks[2];             /* its client sockets */
	union sockaddr_in_union dest[2];       /* server of each socket */
	size_t srv_default[2];                 /* their default responses */
	int nrpcs;                             /* RPCs to do */
	int pipeline;                          /* RPCs outstanding per batch */
	const size_t *req_sizes;               /* sizes to cycle through */
	const uint32_t *resp_sizes;
	int nsizes;
	int shared;                            /* socks[0] shared with others */
	struct e2e_bpages *ret;                /* own return list if shared */
	uint64_t k;                            /* seed base */
	int ok_rpcs;                           /* RPCs that completed right */
	char why[256];                         /* first failure, "" if none */
};

/* Records the first failure of @w. */
static void worker_fail(struct worker *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void worker_fail(struct worker *w, const char *fmt, ...)
{
	va_list ap;

	if (w->why[0])
		return;
	va_start(ap, fmt);
	vsnprintf(w->why, sizeof w->why, fmt, ap);
	va_end(ap);
}

/* Thread body: w->nrpcs RPCs in batches of w->pipeline (all of a batch
 * sent before any is read), round-robin over the worker's sockets; on a
 * shared socket each response is awaited by id with the worker's own
 * bpage list.  Stops at the first failure. */
static void *worker_main(void *arg)
{
	struct worker *w = arg;
	int batch = w->pipeline > 0 ? w->pipeline : 1;
	struct e2e_req *r = calloc((size_t)batch, sizeof *r);
	int *sock_of = calloc((size_t)batch, sizeof *sock_of);
	char why[256];

	if (!r || !sock_of) {
		worker_fail(w, "out of memory");
		goto out;
	}
	for (int base = 0; base < w->nrpcs && !w->why[0]; base += batch) {
		int n = w->nrpcs - base < batch ? w->nrpcs - base : batch;

		for (int j = 0; j < n; j++) {
			int i = base + j, si = i % w->nsocks;

			memset(&r[j], 0, sizeof r[j]);
			r[j].seed = e2e_seed(w->k + (uint64_t)i);
			r[j].cookie = ((uint64_t)w->idx << 32) | (uint64_t)i;
			r[j].req_len = w->req_sizes[(i + w->idx) % w->nsizes];
			r[j].resp_len = w->resp_sizes[(i + 3 * w->idx) %
						      w->nsizes];
			r[j].srv_default = w->srv_default[si];
			sock_of[j] = si;
			if (e2e_req_send(w->socks[si], &w->dest[si], &r[j])) {
				worker_fail(w, "send %d: %s", i,
					    strerror(errno));
				goto out;
			}
		}
		/* Shared socket: wait for each RPC by id.  Own sockets: take
		 * each socket's responses in any order. */
		for (int si = 0; si < w->nsocks; si++) {
			for (int got = 0; got < n; got++) {
				struct e2e_msg m;
				int hit = -1;

				if (sock_of[got] != si)
					continue;
				if (w->shared) {
					hit = got;
					e2e_recv_r(w->socks[0], w->ret,
						   r[hit].id,
						   HOMA_RECVMSG_RESPONSE, 0,
						   &m);
				} else {
					e2e_recv(w->socks[si], 0,
						 HOMA_RECVMSG_RESPONSE, 0, &m);
					for (int j = 0; j < n; j++)
						if (sock_of[j] == si &&
						    r[j].id == m.id &&
						    !r[j].done)
							hit = j;
				}
				if (m.len < 0 || hit < 0) {
					worker_fail(w, "worker %d: response "
						    "%zd errno %d (%s) id %llu",
						    w->idx, m.len, m.err,
						    strerror(m.err),
						    (unsigned long long)m.id);
					goto out;
				}
				if (e2e_resp_check(w->socks[si], &r[hit], &m,
						   why, sizeof why) != 0) {
					worker_fail(w, "worker %d RPC %d: %s",
						    w->idx, base + hit, why);
					goto out;
				}
				r[hit].done = 1;
				if (w->shared)
					e2e_release_r(w->ret, &m);
				else
					e2e_release(w->socks[si], &m);
				w->ok_rpcs++;
			}
		}
	}
out:
	free(r);
	free(sock_of);
	return NULL;
}

/* Starts @n workers, joins them all, then fails the test with the first
 * failure; also checks that every worker did all its RPCs. */
static void run_workers(struct worker *w, int n)
{
	for (int i = 0; i < n; i++)
		if (pthread_create(&w[i].t, NULL, worker_main, &w[i]) != 0)
			fail_msg("pthread_create failed");
	for (int i = 0; i < n; i++)
		pthread_join(w[i].t, NULL);
	for (int i = 0; i < n; i++)
		if (w[i].why[0])
			fail_msg("%s", w[i].why);
	for (int i = 0; i < n; i++)
		assert_int_equal(w[i].ok_rpcs, w[i].nrpcs);
}

static const size_t k_req[] = { 1, 100, 1416, 1417, 2833, 40001, 65537,
				 150000 };
static const uint32_t k_resp[] = { E2E_RESP_ECHO, 1, 3000, 40000,
				   E2E_RESP_ECHO, 131073, 500, 100 };
#define NK 8

/* An echo server of @family with @nthreads threads. */
static struct e2e_server *start_server(int family, int nthreads)
{
	return e2e_must_server(family, E2E_REGION_DEFAULT, 0, nthreads);
}

/* A client socket of @family with the default region. */
static struct e2e_sock *client(int family)
{
	return e2e_must_socket(family, E2E_REGION_DEFAULT);
}

/* Four threads, each with its own client socket, 40 sequential RPCs of
 * mixed sizes each against one two-thread server. */
static void threads__own_sockets_one_server(void **state)
{
	struct e2e_server *srv = start_server(AF_INET, 2);
	struct worker w[4];

	(void)state;
	memset(w, 0, sizeof w);
	for (int i = 0; i < 4; i++) {
		w[i].idx = i;
		w[i].nsocks = 1;
		w[i].socks[0] = client(AF_INET);
		w[i].dest[0] = e2e_server_addr(srv);
		w[i].nrpcs = 40;
		w[i].pipeline = 1;
		w[i].req_sizes = k_req;
		w[i].resp_sizes = k_resp;
		w[i].nsizes = NK;
		w[i].k = 10000 + (uint64_t)i * 1000;
	}
	run_workers(w, 4);
	E2E_ASSERT_SERVER_OK(srv);
	assert_int_equal(atomic_load(&srv->requests), 160);
}

/* Three threads, each with an IPv4 socket to one server and an IPv6 socket
 * to another, RPCs alternating between them, 4 outstanding at a time. */
static void threads__own_sockets_two_servers_both_families(void **state)
{
	struct e2e_server *s4 = start_server(AF_INET, 1);
	struct e2e_server *s6 = e2e_server_start(AF_INET6, E2E_REGION_DEFAULT,
						 2000, 0, 1);
	struct worker w[3];

	(void)state;
	assert_non_null(s6);
	memset(w, 0, sizeof w);
	for (int i = 0; i < 3; i++) {
		w[i].idx = i;
		w[i].nsocks = 2;
		w[i].socks[0] = client(AF_INET);
		w[i].dest[0] = e2e_server_addr(s4);
		w[i].socks[1] = client(AF_INET6);
		w[i].dest[1] = e2e_server_addr(s6);
		w[i].srv_default[1] = 2000;
		w[i].nrpcs = 24;
		w[i].pipeline = 4;
		w[i].req_sizes = k_req;
		w[i].resp_sizes = k_resp;
		w[i].nsizes = NK;
		w[i].k = 20000 + (uint64_t)i * 1000;
	}
	run_workers(w, 3);
	E2E_ASSERT_SERVER_OK(s4);
	E2E_ASSERT_SERVER_OK(s6);
}

/* Three threads each keep 10 RPCs outstanding on their own socket. */
static void threads__pipelined_per_thread(void **state)
{
	struct e2e_server *srv = start_server(AF_INET, 2);
	struct worker w[3];

	(void)state;
	memset(w, 0, sizeof w);
	for (int i = 0; i < 3; i++) {
		w[i].idx = i;
		w[i].nsocks = 1;
		w[i].socks[0] = client(AF_INET);
		w[i].dest[0] = e2e_server_addr(srv);
		w[i].nrpcs = 40;
		w[i].pipeline = 10;
		w[i].req_sizes = k_req;
		w[i].resp_sizes = k_resp;
		w[i].nsizes = NK;
		w[i].k = 30000 + (uint64_t)i * 1000;
	}
	run_workers(w, 3);
	E2E_ASSERT_SERVER_OK(srv);
}

/* Three threads share one client socket; each sends its own RPCs (3 at a
 * time) and waits for each by id, handing bpages back on its own calls. */
static void threads__shared_socket_wait_by_id(void **state)
{
	struct e2e_server *srv = start_server(AF_INET, 2);
	struct e2e_sock *c = client(AF_INET);
	struct worker w[3];
	struct e2e_bpages *ret = e2e_alloc(3 * sizeof *ret);

	(void)state;
	assert_non_null(ret);
	memset(w, 0, sizeof w);
	for (int i = 0; i < 3; i++) {
		w[i].idx = i;
		w[i].nsocks = 1;
		w[i].socks[0] = c;
		w[i].dest[0] = e2e_server_addr(srv);
		w[i].shared = 1;
		w[i].ret = &ret[i];
		w[i].nrpcs = 30;
		w[i].pipeline = 3;
		w[i].req_sizes = k_req;
		w[i].resp_sizes = k_resp;
		w[i].nsizes = NK;
		w[i].k = 40000 + (uint64_t)i * 1000;
	}
	run_workers(w, 3);
	E2E_ASSERT_SERVER_OK(srv);
}

/* A four-thread server with 100 ms service times: eight clients in four
 * threads (two sockets each) all get their answers. */
static void threads__multithreaded_server(void **state)
{
	static const size_t req[] = { 16, 3000, 70000, 16 };
	static const uint32_t resp[] = { 5000, E2E_RESP_ECHO, 100, 200000 };
	struct e2e_server *srv = e2e_server_start(AF_INET, E2E_REGION_DEFAULT,
						  0, 100, 4);
	struct worker w[4];

	(void)state;
	assert_non_null(srv);
	memset(w, 0, sizeof w);
	for (int i = 0; i < 4; i++) {
		w[i].idx = i;
		w[i].nsocks = 2;
		for (int j = 0; j < 2; j++) {
			w[i].socks[j] = client(AF_INET);
			w[i].dest[j] = e2e_server_addr(srv);
		}
		w[i].nrpcs = 6;
		w[i].pipeline = 2;
		w[i].req_sizes = req;
		w[i].resp_sizes = resp;
		w[i].nsizes = 4;
		w[i].k = 50000 + (uint64_t)i * 1000;
	}
	run_workers(w, 4);
	E2E_ASSERT_SERVER_OK(srv);
	assert_int_equal(atomic_load(&srv->requests), 24);
}

/* Three threads each echo three 1,000,000-byte messages at the same time
 * through a three-thread server (several large messages granted at once). */
static void threads__concurrent_1mb_messages(void **state)
{
	static const size_t req[] = { HOMA_MAX_MESSAGE_LENGTH };
	static const uint32_t resp[] = { E2E_RESP_ECHO };
	struct e2e_server *srv = start_server(AF_INET, 3);
	struct worker w[3];

	(void)state;
	memset(w, 0, sizeof w);
	for (int i = 0; i < 3; i++) {
		w[i].idx = i;
		w[i].nsocks = 1;
		w[i].socks[0] = client(AF_INET);
		w[i].dest[0] = e2e_server_addr(srv);
		w[i].nrpcs = 3;
		w[i].pipeline = 1;
		w[i].req_sizes = req;
		w[i].resp_sizes = resp;
		w[i].nsizes = 1;
		w[i].k = 60000 + (uint64_t)i * 1000;
	}
	run_workers(w, 3);
	E2E_ASSERT_SERVER_OK(srv);
}

/* spin_ms - keep the CPU for @ms milliseconds without a system call. */
static void spin_ms(unsigned ms)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do
		clock_gettime(CLOCK_MONOTONIC, &t);
	while ((t.tv_sec - t0.tv_sec) * 1000 +
	       (t.tv_nsec - t0.tv_nsec) / 1000000 < (long)ms);
}

#define HOGGED_SENDS 400

/* A client thread that sends a request every millisecond for 400 ms (four
 * times timeout_ticks) on a CPU it never gives up (SCHED_FIFO), where the
 * library's progress thread is pinned and so cannot run: the sender's own
 * timer ticks must read the socket before counting silence, so the
 * responses that came meanwhile are taken and no RPC times out.  Skipped
 * (exit 77) where real-time scheduling is not allowed (a failure with
 * HOMA_TEST_REQUIRE_RT=1, which CI sets); left out under valgrind (one
 * thread at a time: the server would not run either). */
static void threads__sender_keeps_cpu_from_progress_thread(void **state)
{
	struct e2e_server *srv = start_server(AF_INET, 1);
	struct e2e_sock *c = client(AF_INET);
	union sockaddr_in_union dest = e2e_server_addr(srv);
	struct sched_param rt = { .sched_priority = 1 }, normal = { 0 };
	struct e2e_req *r = e2e_alloc(HOGGED_SENDS * sizeof *r);
	pid_t prog = -1;
	cpu_set_t one, all;

	(void)state;
	assert_non_null(r);
	/* The progress thread names itself once it runs: give it the
	 * time. */
	for (int ms = 0; !e2e_threads_named("homa-progress", &prog) &&
			 ms < 5000; ms++)
		e2e_sleep_ms(1);
	assert_true(prog > 0);
	assert_int_equal(sched_getaffinity(0, sizeof all, &all), 0);
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	assert_int_equal(sched_setaffinity(prog, sizeof one, &one), 0);
	assert_int_equal(sched_setaffinity(0, sizeof one, &one), 0);
	if (sched_setscheduler(0, SCHED_FIFO, &rt) != 0) {
		int err = errno;

		sched_setaffinity(0, sizeof all, &all);
		sched_setaffinity(prog, sizeof all, &all);
		e2e_skip("HOMA_TEST_REQUIRE_RT", "SCHED_FIFO not allowed (%s): "
			 "needs root or CAP_SYS_NICE and a real-time budget",
			 strerror(err));
	}
	for (int i = 0; i < HOGGED_SENDS; i++) {
		r[i].seed = e2e_seed(70000 + (uint64_t)i);
		r[i].cookie = (uint64_t)i + 1;
		r[i].req_len = 100;
		r[i].resp_len = E2E_RESP_ECHO;
		if (e2e_req_send(c, &dest, &r[i]) != 0)
			break;
		spin_ms(1);
	}
	sched_setscheduler(0, SCHED_OTHER, &normal);
	sched_setaffinity(0, sizeof all, &all);
	sched_setaffinity(prog, sizeof all, &all);
	e2e_must_recv_responses(c, r, HOGGED_SENDS);
	E2E_ASSERT_SERVER_OK(srv);
}

static const struct e2e_test tests[] = {
	E2E_TEST(threads__own_sockets_one_server, 40),
	E2E_TEST(threads__own_sockets_two_servers_both_families, 40),
	E2E_TEST(threads__pipelined_per_thread, 40),
	E2E_TEST(threads__shared_socket_wait_by_id, 40),
	E2E_TEST(threads__multithreaded_server, 20),
	E2E_TEST(threads__concurrent_1mb_messages, 40),
	E2E_TEST_NO_VALGRIND(threads__sender_keeps_cpu_from_progress_thread,
			     40),
};

int main(int argc, char **argv)
{
	return e2e_main(argc, argv, "e2e_threads", tests,
			sizeof tests / sizeof tests[0]);
}
