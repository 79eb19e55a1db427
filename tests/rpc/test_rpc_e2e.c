/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_rpc_e2e.c - homa-rpc end to end on loopback: a server of the
 * services of rpctest.proto and clients, checking every status the library
 * gives (OK, UNIMPLEMENTED, INVALID_ARGUMENT, RESOURCE_EXHAUSTED,
 * DEADLINE_EXCEEDED, CANCELLED, UNAVAILABLE, and the method's own), the
 * protobuf-c service stubs, metadata, asynchronous calls completing on the
 * descriptor, many threads at once, IPv6, graceful shutdown and the
 * counters.  Requests the client library would never send (malformed
 * headers, bodies that do not parse, deadlines already passed) are sent
 * from plain Homa sockets.  Tests check statuses and counters, never times.
 */
#include "e2e_util.h"

#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "homa-rpc.h"
#include "rpc_wire.h"
#include "rpctest.pb-c.h"

/* Method indices of rpctest.Tester, in the order of the .proto file. */
enum { M_ECHO, M_HOLD, M_FAIL, M_SILENT };

/* Guard of the waits for a state: a hang fails the test instead. */
#define GUARD_MS 20000

/* ------------------------------------------------------------------ */
/* The service                                                         */
/* ------------------------------------------------------------------ */

/* What Hold waits for: the test opens the gate. */
static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool open;
	atomic_int entered;   /* Hold calls running */
} gate = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false, 0 };

/* gate_set - open (@open) or close the gate. */
static void gate_set(bool open)
{
	pthread_mutex_lock(&gate.lock);
	gate.open = open;
	pthread_cond_broadcast(&gate.cond);
	pthread_mutex_unlock(&gate.lock);
}

/* tester_echo - text and blob back (or a blob of resp_bytes bytes), and
 * the request's x-echo metadata as response metadata. */
static void tester_echo(Rpctest__Tester_Service *svc, const Rpctest__Req *in,
			Rpctest__Resp_Closure closure, void *call)
{
	Rpctest__Resp out = RPCTEST__RESP__INIT;
	uint8_t *big = NULL;
	size_t len;
	const void *v = homa_rpc_call_metadata(call, "x-echo", &len);

	(void)svc;
	if (v)
		(void)homa_rpc_call_add_metadata(call, "x-echo", v, len);
	out.text = in->text;
	out.blob = in->blob;
	if (in->resp_bytes) {
		big = calloc(1, in->resp_bytes);
		out.blob.data = big;
		out.blob.len = big ? in->resp_bytes : 0;
	}
	closure(&out, call);
	free(big);
}

/* tester_hold - wait until the gate opens or the server cancels the call;
 * a cancelled call ends CANCELLED. */
static void tester_hold(Rpctest__Tester_Service *svc, const Rpctest__Req *in,
			Rpctest__Resp_Closure closure, void *call)
{
	Rpctest__Resp out = RPCTEST__RESP__INIT;
	bool cancelled = false;

	(void)svc;
	(void)in;
	atomic_fetch_add(&gate.entered, 1);
	pthread_mutex_lock(&gate.lock);
	while (!gate.open && !cancelled) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 2000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&gate.cond, &gate.lock, &ts);
		cancelled = homa_rpc_call_cancelled(call);
	}
	pthread_mutex_unlock(&gate.lock);
	atomic_fetch_sub(&gate.entered, 1);
	if (cancelled) {
		homa_rpc_call_set_status(call, HOMA_RPC_CANCELLED,
					 "server shutting down");
		closure(NULL, call);
		return;
	}
	out.text = "released";
	closure(&out, call);
}

/* tester_fail - end with status in->code and message in->text. */
static void tester_fail(Rpctest__Tester_Service *svc, const Rpctest__Req *in,
			Rpctest__Resp_Closure closure, void *call)
{
	(void)svc;
	homa_rpc_call_set_status(call, (int)in->code, in->text);
	closure(NULL, call);
}

/* tester_silent - answer nothing. */
static void tester_silent(Rpctest__Tester_Service *svc,
			  const Rpctest__Req *in,
			  Rpctest__Resp_Closure closure, void *call)
{
	(void)svc;
	(void)in;
	(void)closure;
	(void)call;
}

static Rpctest__Tester_Service tester = RPCTEST__TESTER__INIT(tester_);

/* ------------------------------------------------------------------ */
/* Helpers                                                             */
/* ------------------------------------------------------------------ */

/* A running server and its address. */
struct srv {
	struct homa_rpc_server *s;
	union sockaddr_in_union addr;
};

/* must_server - a server of Tester on a free loopback port of @family
 * with @workers (0: default); stopped by the test. */
static struct srv must_server(int family, int workers)
{
	struct homa_rpc_server_config cfg = { .workers = workers };
	struct srv r;

	for (int i = 0; i < 50; i++) {
		e2e_addr(family, e2e_next_port(), &r.addr);
		r.s = homa_rpc_server_new(&r.addr, &cfg);
		if (r.s || errno != EADDRINUSE)
			break;
	}
	if (!r.s)
		fail_msg("homa_rpc_server_new: %s", strerror(errno));
	assert_int_equal(homa_rpc_server_add(r.s, &tester.base), 0);
	assert_int_equal(homa_rpc_server_start(r.s), 0);
	return r;
}

/* must_client - a client of @desc at @addr. */
static struct homa_rpc_client *must_client(
	const ProtobufCServiceDescriptor *desc,
	const union sockaddr_in_union *addr)
{
	struct homa_rpc_client *c = homa_rpc_client_new(desc, addr, NULL);

	if (!c)
		fail_msg("homa_rpc_client_new: %s", strerror(errno));
	return c;
}

/* stats_of - the counters of Tester's method @name. */
static struct homa_rpc_method_stats stats_of(struct srv *s, const char *name)
{
	struct homa_rpc_method_stats st;
	char path[64];

	snprintf(path, sizeof(path), "/rpctest.Tester/%s", name);
	assert_int_equal(homa_rpc_server_method_stats(s->s, path, &st), 0);
	return st;
}

/* server_stats - the server's counters. */
static struct homa_rpc_server_stats server_stats(struct srv *s)
{
	struct homa_rpc_server_stats st;

	homa_rpc_server_stats(s->s, &st);
	return st;
}

/* wait_entered - wait until @n Hold calls are running. */
static void wait_entered(int n)
{
	uint64_t end = e2e_now_ms() + GUARD_MS;

	while (atomic_load(&gate.entered) != n) {
		if (e2e_now_ms() > end)
			fail_msg("Hold calls running: %d, want %d",
				 atomic_load(&gate.entered), n);
		e2e_sleep_ms(1);
	}
}

/* wait_received - wait until the server has taken @n requests. */
static void wait_received(struct srv *s, uint64_t n)
{
	uint64_t end = e2e_now_ms() + GUARD_MS;

	while (server_stats(s).received < n) {
		if (e2e_now_ms() > end)
			fail_msg("server took %lu requests, want %lu",
				 (unsigned long)server_stats(s).received,
				 (unsigned long)n);
		e2e_sleep_ms(1);
	}
}

/* echo_call - a synchronous Echo of @text with @opts; returns the code,
 * with @r filled (the caller clears it). */
static int echo_call(struct homa_rpc_client *c, const char *text,
		     const struct homa_rpc_opts *opts,
		     struct homa_rpc_result *r)
{
	Rpctest__Req req = RPCTEST__REQ__INIT;

	req.text = (char *)text;
	return homa_rpc_call(c, M_ECHO, &req.base, opts, r);
}

/* assert_code - fail unless @r ended with @code (naming both). */
#define assert_code(r, want) do {                                        \
		if ((r)->code != (want))                                  \
			fail_msg("status %s (%s), want %s",               \
				 homa_rpc_code_name((r)->code),           \
				 (r)->message ? (r)->message : "",        \
				 homa_rpc_code_name(want));               \
	} while (0)

/* raw_call - send @len bytes of @msg as a request from a plain Homa
 * socket to @addr and decode the response header into @h (its bytes are
 * copied into @resp, room for @cap).  Fails the test on any error. */
static void raw_call(const union sockaddr_in_union *addr, const uint8_t *msg,
		     size_t len, uint8_t *resp, size_t cap, struct rpcw_hdr *h)
{
	struct e2e_sock *c = e2e_must_socket(addr->sa.sa_family,
					     E2E_REGION_DEFAULT);
	struct e2e_msg m;
	char why[256];
	uint64_t id;

	assert_int_equal(e2e_send(c, addr, msg, len, 0, &id), 0);
	if (e2e_recv_wait(c, id, HOMA_RECVMSG_RESPONSE, &m, GUARD_MS) < 0)
		fail_msg("no response: %s", strerror(m.err));
	assert_true((size_t)m.len <= cap);
	if (e2e_collect(c, &m, resp, why, sizeof(why)) != 0)
		fail_msg("collect: %s", why);
	assert_int_equal(rpcw_decode(resp, (size_t)m.len, h), RPCW_OK);
	assert_int_equal(h->kind, RPCW_KIND_RESPONSE);
	e2e_release(c, &m);
}

/* raw_request - encode a request for @path with @body (@body_len bytes),
 * and a deadline of @deadline_us when @with_deadline, into @buf (room for
 * @cap).  Returns its length. */
static size_t raw_request(const char *path, const void *body, size_t body_len,
			  bool with_deadline, uint64_t deadline_us,
			  uint8_t *buf, size_t cap)
{
	struct rpcw_hdr h;
	size_t n;

	memset(&h, 0, sizeof(h));
	h.kind = RPCW_KIND_REQUEST;
	h.path = (const uint8_t *)path;
	h.path_len = (uint16_t)strlen(path);
	h.flags = with_deadline ? RPCW_FLAG_DEADLINE : 0;
	h.deadline_us = deadline_us;
	h.body_len = (uint32_t)body_len;
	n = rpcw_encode(&h, buf, cap);
	assert_true(n > 0 && n + body_len <= cap);
	memcpy(buf + n, body, body_len);
	return n + body_len;
}

/* ------------------------------------------------------------------ */
/* Tests                                                               */
/* ------------------------------------------------------------------ */

/* OK: text, blob and metadata come back; the method's counters count. */
static void rpc__ok_echo_with_metadata(void **state)
{
	struct srv s = must_server(AF_INET, 0);
	struct homa_rpc_client *c = must_client(&rpctest__tester__descriptor,
						&s.addr);
	const struct homa_rpc_md md[] = { { "x-echo", "abc", 3 } };
	struct homa_rpc_opts opts = { .md = md, .n_md = 1, .tag = &s };
	Rpctest__Req req = RPCTEST__REQ__INIT;
	struct homa_rpc_result r;
	Rpctest__Resp *resp;
	uint8_t blob[3000];

	(void)state;
	for (size_t i = 0; i < sizeof(blob); i++)
		blob[i] = (uint8_t)(i * 7);
	req.text = "hello";
	req.blob.data = blob;
	req.blob.len = sizeof(blob);
	assert_int_equal(homa_rpc_call(c, M_ECHO, &req.base, &opts, &r),
			 HOMA_RPC_OK);
	assert_code(&r, HOMA_RPC_OK);
	assert_ptr_equal(r.tag, &s);
	assert_true(r.id != 0);
	resp = (Rpctest__Resp *)r.response;
	assert_non_null(resp);
	assert_string_equal(resp->text, "hello");
	assert_int_equal(resp->blob.len, sizeof(blob));
	assert_memory_equal(resp->blob.data, blob, sizeof(blob));
	assert_int_equal(r.n_md, 1);
	assert_string_equal(r.md[0].key, "x-echo");
	assert_string_equal((const char *)r.md[0].value, "abc");
	assert_string_equal(r.message, "");
	homa_rpc_result_clear(&r);
	assert_int_equal(stats_of(&s, "Echo").started, 1);
	assert_int_equal(stats_of(&s, "Echo").ok, 1);
	homa_rpc_client_free(c);
	homa_rpc_server_stop(s.s, 1000);
}

/* The closure of the stub test: copies the text out of the response. */
static void stub_done(const Rpctest__Resp *resp, void *data)
{
	char *out = data;

	snprintf(out, 64, "%s", resp ? resp->text : "(null)");
}

/* The stubs protoc-c generates make calls through the client's service;
 * a failed call gives the closure NULL and homa_rpc_last_code the code. */
static void rpc__protobuf_c_stubs(void **state)
{
	struct srv s = must_server(AF_INET, 0);
	struct homa_rpc_client *c = must_client(&rpctest__tester__descriptor,
						&s.addr);
	ProtobufCService *svc = homa_rpc_client_service(c);
	Rpctest__Req req = RPCTEST__REQ__INIT;
	char got[64] = "";

	(void)state;
	req.text = "stub";
	rpctest__tester__echo(svc, &req, stub_done, got);
	assert_string_equal(got, "stub");
	assert_int_equal(homa_rpc_last_code(), HOMA_RPC_OK);
	req.code = HOMA_RPC_NOT_FOUND;
	rpctest__tester__fail(svc, &req, stub_done, got);
	assert_string_equal(got, "(null)");
	assert_int_equal(homa_rpc_last_code(), HOMA_RPC_NOT_FOUND);
	homa_rpc_client_free(c);
	homa_rpc_server_stop(s.s, 1000);
}

/* The method's own status and message; no response and no status is
 * UNKNOWN. */
static void rpc__method_status_and_unknown(void **state)
{
	struct srv s = must_server(AF_INET, 0);
	struct homa_rpc_client *c = must_client(&rpctest__tester__descriptor,
						&s.addr);
	Rpctest__Req req = RPCTEST__REQ__INIT;
	struct homa_rpc_result r;

	(void)state;
	req.text = "no such key";
	req.code = HOMA_RPC_NOT_FOUND;
	homa_rpc_call(c, M_FAIL, &req.base, NULL, &r);
	assert_code(&r, HOMA_RPC_NOT_FOUND);
	assert_string_equal(r.message, "no such key");
	assert_null(r.response);
	homa_rpc_result_clear(&r);
	homa_rpc_call(c, M_SILENT, &req.base, NULL, &r);
	assert_code(&r, HOMA_RPC_UNKNOWN);
	homa_rpc_result_clear(&r);
	assert_int_equal(stats_of(&s, "Fail").failed, 1);
	assert_int_equal(stats_of(&s, "Silent").failed, 1);
	homa_rpc_client_free(c);
	homa_rpc_server_stop(s.s, 1000);
}

/* UNIMPLEMENTED: a service the server does not serve. */
static void rpc__unimplemented_unknown_method(void **state)
{
	struct srv s = must_server(AF_INET, 0);
	struct homa_rpc_client *c = must_client(&rpctest__absent__descriptor,
						&s.addr);
	Rpctest__Req req = RPCTEST__REQ__INIT;
	struct homa_rpc_result r;

	(void)state;
	assert_int_equal(homa_rpc_call(c, 0, &req.base, NULL, &r),
			 HOMA_RPC_UNIMPLEMENTED);
	assert_non_null(strstr(r.message, "/rpctest.Absent/Nothing"));
	homa_rpc_result_clear(&r);
	assert_int_equal(server_stats(&s).unimplemented, 1);
	homa_rpc_client_free(c);
	homa_rpc_server_stop(s.s, 1000);
}

/* INVALID_ARGUMENT from the server: a body that does not parse, and a
 * header that does not; the server goes on serving. */
static void rpc__invalid_argument_from_server(void **state)
{
	struct srv s = must_server(AF_INET, 0);
	static const uint8_t junk[] = { 0xff, 0xff, 0xff, 0xff, 0x0f };
	uint8_t *buf = e2e_alloc(4096), *resp = e2e_alloc(4096);
	struct homa_rpc_client *c;
	struct homa_rpc_result r;
	struct rpcw_hdr h;
	size_t n;

	(void)state;
	n = raw_request("/rpctest.Tester/Echo", junk, sizeof(junk), false, 0,
			buf, 4096);
	raw_call(&s.addr, buf, n, resp, 4096, &h);
	assert_int_equal(h.status, HOMA_RPC_INVALID_ARGUMENT);
	assert_int_equal(stats_of(&s, "Echo").bad_request, 1);
	assert_int_equal(stats_of(&s, "Echo").started, 0);
	buf[2] = 9;                                   /* version 9 */
	raw_call(&s.addr, buf, n, resp, 4096, &h);
	assert_int_equal(h.status, HOMA_RPC_INVALID_ARGUMENT);
	assert_true(h.status_msg_len > 0);
	assert_int_equal(server_stats(&s).malformed, 1);
	c = must_client(&rpctest__tester__descriptor, &s.addr);
	assert_int_equal(echo_call(c, "still there", NULL, &r), HOMA_RPC_OK);
	homa_rpc_result_clear(&r);
	homa_rpc_client_free(c);
	homa_rpc_server_stop(s.s, 1000);
}

/* INVALID_ARGUMENT on the client: nothing is sent. */
static void rpc__invalid_argument_local(void **state)
{
	struct srv s = must_server(AF_INET, 0);
	struct homa_rpc_client *c = must_client(&rpctest__tester__descriptor,
						&s.addr);
	const struct homa_rpc_md bad[] = { { "Upper", "v", 1 } };
	struct homa_rpc_opts opts = { .md = bad, .n_md = 1 };
	Rpctest__Req req = RPCTEST__REQ__INIT;
	Rpctest__Resp wrong = RPCTEST__RESP__INIT;
	struct homa_rpc_result r;

	(void)state;
	assert_int_equal(homa_rpc_call(c, 99, &req.base, NULL, &r),
			 HOMA_RPC_INVALID_ARGUMENT);
	homa_rpc_result_clear(&r);
	assert_int_equal(homa_rpc_call(c, M_ECHO, &wrong.base, NULL, &r),
			 HOMA_RPC_INVALID_ARGUMENT);
	homa_rpc_result_clear(&r);
	assert_int_equal(homa_rpc_call(c, M_ECHO, &req.base, &opts, &r),
			 HOMA_RPC_INVALID_ARGUMENT);
	homa_rpc_result_clear(&r);
	assert_int_equal(server_stats(&s).received, 0);
	homa_rpc_client_free(c);
	homa_rpc_server_stop(s.s, 1000);
}

/* RESOURCE_EXHAUSTED: a request over 1 MB is not sent; a response over
 * 1 MB is not truncated; just under the limit works both ways. */
static void rpc__resource_exhausted_over_a_megabyte(void **state)
{
	struct srv s = must_server(AF_INET, 0);
	struct homa_rpc_client *c = must_client(&rpctest__tester__descriptor,
						&s.addr);
	Rpctest__Req req = RPCTEST__REQ__INIT;
	struct homa_rpc_result r;
	Rpctest__Resp *resp;

	(void)state;
	req.blob.data = e2e_alloc(HOMA_MAX_MESSAGE_LENGTH);
	req.blob.len = HOMA_MAX_MESSAGE_LENGTH;
	assert_int_equal(homa_rpc_call(c, M_ECHO, &req.base, NULL, &r),
			 HOMA_RPC_RESOURCE_EXHAUSTED);
	homa_rpc_result_clear(&r);
	assert_int_equal(server_stats(&s).received, 0);

	req.blob.len = 990000;
	homa_rpc_call(c, M_ECHO, &req.base, NULL, &r);
	assert_code(&r, HOMA_RPC_OK);
	resp = (Rpctest__Resp *)r.response;
	assert_int_equal(resp->blob.len, 990000);
	homa_rpc_result_clear(&r);

	req.blob.len = 0;
	req.resp_bytes = HOMA_MAX_MESSAGE_LENGTH;
	homa_rpc_call(c, M_ECHO, &req.base, NULL, &r);
	assert_code(&r, HOMA_RPC_RESOURCE_EXHAUSTED);
	homa_rpc_result_clear(&r);
	homa_rpc_client_free(c);
	homa_rpc_server_stop(s.s, 1000);
}

/* DEADLINE_EXCEEDED on the client: the call is aborted while the server
 * still holds it. */
static void rpc__deadline_exceeded_client_aborts(void **state)
{
	struct srv s = must_server(AF_INET, 0);
	struct homa_rpc_client *c = must_client(&rpctest__tester__descriptor,
						&s.addr);
	struct homa_rpc_opts opts = { .timeout_us = 20000 };
	Rpctest__Req req = RPCTEST__REQ__INIT;
	struct homa_rpc_result r;

	(void)state;
	gate_set(false);
	homa_rpc_call(c, M_HOLD, &req.base, &opts, &r);
	assert_code(&r, HOMA_RPC_DEADLINE_EXCEEDED);
	homa_rpc_result_clear(&r);
	gate_set(true);
	wait_entered(0);
	/* The client goes on. */
	assert_int_equal(echo_call(c, "after", NULL, &r), HOMA_RPC_OK);
	homa_rpc_result_clear(&r);
	homa_rpc_client_free(c);
	homa_rpc_server_stop(s.s, 1000);
}

/* DEADLINE_EXCEEDED on the server: a request whose deadline has passed
 * when a worker takes it is answered without running the method. */
static void rpc__deadline_passed_call_not_started(void **state)
{
	struct srv s = must_server(AF_INET, 0);
	uint8_t *buf = e2e_alloc(4096), *resp = e2e_alloc(4096);
	struct rpcw_hdr h;
	size_t n;

	(void)state;
	n = raw_request("/rpctest.Tester/Echo", "", 0, true, 0, buf, 4096);
	raw_call(&s.addr, buf, n, resp, 4096, &h);
	assert_int_equal(h.status, HOMA_RPC_DEADLINE_EXCEEDED);
	assert_int_equal(stats_of(&s, "Echo").expired, 1);
	assert_int_equal(stats_of(&s, "Echo").started, 0);
	/* With time left, the same request runs. */
	n = raw_request("/rpctest.Tester/Echo", "", 0, true, 60000000, buf,
			4096);
	raw_call(&s.addr, buf, n, resp, 4096, &h);
	assert_int_equal(h.status, HOMA_RPC_OK);
	assert_int_equal(stats_of(&s, "Echo").started, 1);
	homa_rpc_server_stop(s.s, 1000);
}

/* CANCELLED: homa_rpc_cancel ends a call the server holds. */
static void rpc__cancelled(void **state)
{
	struct srv s = must_server(AF_INET, 0);
	struct homa_rpc_client *c = must_client(&rpctest__tester__descriptor,
						&s.addr);
	Rpctest__Req req = RPCTEST__REQ__INIT;
	struct homa_rpc_result r;
	uint64_t id;

	(void)state;
	gate_set(false);
	assert_int_equal(homa_rpc_start(c, M_HOLD, &req.base, NULL, &id),
			 HOMA_RPC_OK);
	wait_entered(1);
	assert_int_equal(homa_rpc_cancel(c, id), 0);
	assert_int_equal(homa_rpc_wait(c, id, &r), HOMA_RPC_CANCELLED);
	assert_int_equal(r.id, id);
	homa_rpc_result_clear(&r);
	E2E_ASSERT_ERRNO(homa_rpc_cancel(c, id), EINVAL);
	E2E_ASSERT_ERRNO(homa_rpc_wait(c, id, &r), EINVAL);
	gate_set(true);
	wait_entered(0);
	homa_rpc_client_free(c);
	homa_rpc_server_stop(s.s, 1000);
}

/* UNAVAILABLE: the server is gone. */
static void rpc__unavailable_server_gone(void **state)
{
	struct srv s = must_server(AF_INET, 0);
	struct homa_rpc_client *c = must_client(&rpctest__tester__descriptor,
						&s.addr);
	struct homa_rpc_result r;

	(void)state;
	assert_int_equal(echo_call(c, "first", NULL, &r), HOMA_RPC_OK);
	homa_rpc_result_clear(&r);
	homa_rpc_server_stop(s.s, 1000);
	echo_call(c, "second", NULL, &r);
	assert_code(&r, HOMA_RPC_UNAVAILABLE);
	homa_rpc_result_clear(&r);
	homa_rpc_client_free(c);
}

/* Asynchronous calls complete on the descriptor: poll, then take them. */
static void rpc__async_completes_on_descriptor(void **state)
{
	enum { N = 16 };
	struct srv s = must_server(AF_INET, 0);
	struct homa_rpc_client *c = must_client(&rpctest__tester__descriptor,
						&s.addr);
	Rpctest__Req req = RPCTEST__REQ__INIT;
	char texts[N][16];
	int done[N] = { 0 }, ndone = 0;
	uint64_t end = e2e_now_ms() + GUARD_MS;

	(void)state;
	for (int i = 0; i < N; i++) {
		struct homa_rpc_opts opts = { .tag = texts[i] };
		uint64_t id;

		snprintf(texts[i], sizeof(texts[i]), "call %d", i);
		req.text = texts[i];
		assert_int_equal(homa_rpc_start(c, M_ECHO, &req.base, &opts,
						&id), HOMA_RPC_OK);
	}
	while (ndone < N) {
		struct pollfd p = { .fd = homa_rpc_client_fd(c),
				    .events = POLLIN };
		struct homa_rpc_result r;
		int k;

		if (e2e_now_ms() > end)
			fail_msg("%d of %d calls completed", ndone, N);
		if (poll(&p, 1, 1000) <= 0)
			continue;
		while ((k = homa_rpc_next(c, &r)) == 1) {
			int i = (int)(((char (*)[16])r.tag) - texts);

			assert_code(&r, HOMA_RPC_OK);
			assert_true(i >= 0 && i < N && !done[i]);
			assert_string_equal(
				((Rpctest__Resp *)r.response)->text, texts[i]);
			done[i] = 1;
			ndone++;
			homa_rpc_result_clear(&r);
		}
		assert_int_equal(k, 0);
	}
	homa_rpc_client_free(c);
	homa_rpc_server_stop(s.s, 1000);
}

/* Many threads call through one client at once. */
#define THREADS 8
#define CALLS 100

struct caller {
	struct homa_rpc_client *c;
	int index;
	int bad;              /* calls that did not come back right */
	int first_code;       /* the first wrong status */
};

/* caller_main - CALLS synchronous Echos with texts of its own. */
static void *caller_main(void *arg)
{
	struct caller *k = arg;

	for (int i = 0; i < CALLS; i++) {
		struct homa_rpc_result r;
		char text[32];

		snprintf(text, sizeof(text), "t%d-%d", k->index, i);
		if (echo_call(k->c, text, NULL, &r) != HOMA_RPC_OK ||
		    strcmp(((Rpctest__Resp *)r.response)->text, text) != 0) {
			if (k->bad++ == 0)
				k->first_code = r.code;
		}
		homa_rpc_result_clear(&r);
	}
	return NULL;
}

/* run_threads - THREADS callers on one client of a server of @family. */
static void run_threads(int family)
{
	struct srv s = must_server(family, 4);
	struct homa_rpc_client *c = must_client(&rpctest__tester__descriptor,
						&s.addr);
	struct caller k[THREADS];
	pthread_t t[THREADS];

	for (int i = 0; i < THREADS; i++) {
		k[i] = (struct caller){ .c = c, .index = i };
		assert_int_equal(pthread_create(&t[i], NULL, caller_main,
						&k[i]), 0);
	}
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < THREADS; i++)
		if (k[i].bad)
			fail_msg("thread %d: %d bad calls, first %s", i,
				 k[i].bad, homa_rpc_code_name(k[i].first_code));
	assert_int_equal(stats_of(&s, "Echo").ok, THREADS * CALLS);
	homa_rpc_client_free(c);
	homa_rpc_server_stop(s.s, 1000);
}

static void rpc__concurrent_threads(void **state)
{
	(void)state;
	run_threads(AF_INET);
}

static void rpc__concurrent_threads_ipv6(void **state)
{
	(void)state;
	run_threads(AF_INET6);
}

/* Graceful shutdown: a queued call is answered UNAVAILABLE, a running one
 * is cancelled once the grace time is over and ends CANCELLED. */
static void rpc__graceful_shutdown(void **state)
{
	struct srv s = must_server(AF_INET, 1);
	struct homa_rpc_client *c = must_client(&rpctest__tester__descriptor,
						&s.addr);
	Rpctest__Req req = RPCTEST__REQ__INIT;
	struct homa_rpc_result r;
	uint64_t held, queued;

	(void)state;
	gate_set(false);
	assert_int_equal(homa_rpc_start(c, M_HOLD, &req.base, NULL, &held),
			 HOMA_RPC_OK);
	wait_entered(1);
	req.text = "queued";
	assert_int_equal(homa_rpc_start(c, M_ECHO, &req.base, NULL, &queued),
			 HOMA_RPC_OK);
	wait_received(&s, 2);
	homa_rpc_server_stop(s.s, 10);
	assert_int_equal(homa_rpc_wait(c, queued, &r), HOMA_RPC_UNAVAILABLE);
	homa_rpc_result_clear(&r);
	assert_int_equal(homa_rpc_wait(c, held, &r), HOMA_RPC_CANCELLED);
	assert_string_equal(r.message, "server shutting down");
	homa_rpc_result_clear(&r);
	assert_int_equal(atomic_load(&gate.entered), 0);
	homa_rpc_client_free(c);
}

/* A server refuses a second service of the same name, and services
 * after start. */
static void rpc__server_registration_rules(void **state)
{
	struct srv s = must_server(AF_INET, 0);
	struct homa_rpc_method_stats st;

	(void)state;
	E2E_ASSERT_ERRNO(homa_rpc_server_add(s.s, &tester.base), EBUSY);
	E2E_ASSERT_ERRNO(homa_rpc_server_method_stats(s.s, "/x.Y/Z", &st),
			 ENOENT);
	homa_rpc_server_stop(s.s, 1000);
}

int main(int argc, char **argv)
{
	static const struct e2e_test tests[] = {
		E2E_TEST(rpc__ok_echo_with_metadata, 60),
		E2E_TEST(rpc__protobuf_c_stubs, 60),
		E2E_TEST(rpc__method_status_and_unknown, 60),
		E2E_TEST(rpc__unimplemented_unknown_method, 60),
		E2E_TEST(rpc__invalid_argument_from_server, 60),
		E2E_TEST(rpc__invalid_argument_local, 60),
		E2E_TEST(rpc__resource_exhausted_over_a_megabyte, 60),
		E2E_TEST(rpc__deadline_exceeded_client_aborts, 60),
		E2E_TEST(rpc__deadline_passed_call_not_started, 60),
		E2E_TEST(rpc__cancelled, 60),
		E2E_TEST(rpc__unavailable_server_gone, 60),
		E2E_TEST(rpc__async_completes_on_descriptor, 60),
		E2E_TEST_NO_VALGRIND(rpc__concurrent_threads, 120),
		E2E_TEST_NO_VALGRIND(rpc__concurrent_threads_ipv6, 120),
		E2E_TEST(rpc__graceful_shutdown, 60),
		E2E_TEST(rpc__server_registration_rules, 60),
	};

	return e2e_main(argc, argv, "rpc_e2e", tests,
			sizeof(tests) / sizeof(tests[0]));
}
