/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rpc_client - the client of homa-rpc: one Homa socket per client, a call
 * is one Homa RPC whose completion cookie is its struct rpcf_call.  Calls
 * complete through homa_recvmsg (by id, or any for homa_rpc_next); the
 * deadline and cancellation end them with homa_abort (rpc_inflight).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "homa-rpc.h"
#include "rpc_clock.h"
#include "rpc_inflight.h"
#include "rpc_md.h"
#include "rpc_msg.h"
#include "rpc_status.h"
#include "rpc_wire.h"

#define DEFAULT_CLIENT_REGION (16u << 20)

struct homa_rpc_client {
	ProtobufCService base;         /* first: the client as a service */
	const ProtobufCServiceDescriptor *desc;
	union sockaddr_in_union server;
	int fd;
	uint8_t *region;
	size_t region_len;
	int64_t default_timeout_us;
	char **paths;                  /* "/<service>/<method>" per method */
	struct rpcf inflight;
};

/* The code of the last call of this thread through a client service. */
static _Thread_local int last_code;

/* make_paths - the method paths of @c's service.  Returns 0 or ENOMEM,
 * EINVAL (a name that makes no valid path). */
static int make_paths(struct homa_rpc_client *c)
{
	const ProtobufCServiceDescriptor *d = c->desc;

	c->paths = calloc(d->n_methods ? d->n_methods : 1, sizeof(char *));
	if (!c->paths)
		return ENOMEM;
	for (unsigned i = 0; i < d->n_methods; i++) {
		size_t n = strlen(d->name) + strlen(d->methods[i].name) + 3;

		c->paths[i] = malloc(n);
		if (!c->paths[i])
			return ENOMEM;
		snprintf(c->paths[i], n, "/%s/%s", d->name,
			 d->methods[i].name);
		if (!rpcw_path_ok((const uint8_t *)c->paths[i], n - 1))
			return EINVAL;
	}
	return 0;
}

/* free_paths - free @c's method paths. */
static void free_paths(struct homa_rpc_client *c)
{
	if (!c->paths)
		return;
	for (unsigned i = 0; i < c->desc->n_methods; i++)
		free(c->paths[i]);
	free(c->paths);
}

/* client_invoke - ProtobufCService.invoke: a synchronous call with the
 * defaults; closure gets the response, or NULL when the call failed. */
static void client_invoke(ProtobufCService *service, unsigned method,
			  const ProtobufCMessage *input,
			  ProtobufCClosure closure, void *closure_data)
{
	struct homa_rpc_client *c = (struct homa_rpc_client *)service;
	struct homa_rpc_result r;

	last_code = homa_rpc_call(c, method, input, NULL, &r);
	if (closure)
		closure(r.code == HOMA_RPC_OK ? r.response : NULL,
			closure_data);
	homa_rpc_result_clear(&r);
}

/* client_destroy - ProtobufCService.destroy: the client owns the service,
 * homa_rpc_client_free frees it. */
static void client_destroy(ProtobufCService *service)
{
	(void)service;
}

/* open_socket - @c's Homa socket and buffer region (@bytes).  Returns 0 or
 * an errno. */
static int open_socket(struct homa_rpc_client *c, size_t bytes)
{
	c->fd = homa_socket(c->server.sa.sa_family, SOCK_DGRAM, IPPROTO_HOMA);
	if (c->fd < 0)
		return errno;
	c->region = rpcm_region(c->fd, bytes, &c->region_len);
	if (!c->region)
		return errno;
	return 0;
}

/* See homa-rpc.h. */
struct homa_rpc_client *homa_rpc_client_new(
	const ProtobufCServiceDescriptor *service,
	const union sockaddr_in_union *server,
	const struct homa_rpc_client_config *config)
{
	struct homa_rpc_client *c;
	int err;

	if (!service || !server || (server->sa.sa_family != AF_INET &&
				    server->sa.sa_family != AF_INET6)) {
		errno = EINVAL;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->base.descriptor = service;
	c->base.invoke = client_invoke;
	c->base.destroy = client_destroy;
	c->desc = service;
	c->server = *server;
	c->fd = -1;
	if (config)
		c->default_timeout_us = config->default_timeout_us;
	err = make_paths(c);
	if (!err)
		err = open_socket(c, config && config->region_bytes
				     ? config->region_bytes
				     : DEFAULT_CLIENT_REGION);
	if (!err)
		err = rpcf_init(&c->inflight, c->fd);
	if (err) {
		if (c->fd >= 0)
			homa_close(c->fd);
		if (c->region)
			munmap(c->region, c->region_len);
		free_paths(c);
		free(c);
		errno = err;
		return NULL;
	}
	return c;
}

/* See homa-rpc.h. */
void homa_rpc_client_free(struct homa_rpc_client *c)
{
	if (!c)
		return;
	(void)homa_abort(c->fd, 0, 0);
	rpcf_destroy(&c->inflight);
	homa_close(c->fd);
	munmap(c->region, c->region_len);
	free_paths(c);
	free(c);
}

/* See homa-rpc.h. */
ProtobufCService *homa_rpc_client_service(struct homa_rpc_client *c)
{
	return &c->base;
}

/* See homa-rpc.h. */
int homa_rpc_last_code(void)
{
	return last_code;
}

/* See homa-rpc.h. */
int homa_rpc_client_fd(const struct homa_rpc_client *c)
{
	return c->fd;
}

/* local_result - fill @r with status @code and message @text, no
 * response.  Returns @code. */
static int local_result(struct homa_rpc_result *r, int code, const char *text)
{
	struct rpcw_hdr h;

	memset(&h, 0, sizeof(h));
	h.status_msg = (const uint8_t *)text;
	h.status_msg_len = (uint16_t)strlen(text);
	r->code = code;
	r->_mem = rpcmd_result_mem(&h, &r->message, &r->md, &r->n_md);
	if (!r->_mem) {
		r->message = "";
		r->md = NULL;
		r->n_md = 0;
	}
	return code;
}

/* deadline_of - the absolute deadline of a call with @opts on @c (0:
 * none). */
static int64_t deadline_of(const struct homa_rpc_client *c,
			   const struct homa_rpc_opts *opts)
{
	int64_t t = opts ? opts->timeout_us : 0;

	if (t == 0)
		t = c->default_timeout_us;
	if (t <= 0)
		return 0;
	return rpc_now_us() + t;
}

/* build_request - the request of a call of @method with @input, @opts and
 * @deadline into @out.  Returns HOMA_RPC_OK or the code of the local
 * failure, with a text in *@why. */
static int build_request(struct homa_rpc_client *c, unsigned method,
			 const ProtobufCMessage *input,
			 const struct homa_rpc_opts *opts, int64_t deadline,
			 struct rpcm_out *out, const char **why)
{
	struct rpcw_hdr h;
	int code;

	*why = "invalid argument";
	if (method >= c->desc->n_methods) {
		*why = "no such method";
		return HOMA_RPC_INVALID_ARGUMENT;
	}
	if (!input || input->descriptor != c->desc->methods[method].input) {
		*why = "input is not the method's request type";
		return HOMA_RPC_INVALID_ARGUMENT;
	}
	memset(&h, 0, sizeof(h));
	h.kind = RPCW_KIND_REQUEST;
	h.path = (const uint8_t *)c->paths[method];
	h.path_len = (uint16_t)strlen(c->paths[method]);
	if (deadline) {
		int64_t left = deadline - rpc_now_us();

		h.flags = RPCW_FLAG_DEADLINE;
		h.deadline_us = left > 0 ? (uint64_t)left : 0;
	}
	code = rpcmd_to_wire(opts ? opts->md : NULL, opts ? opts->n_md : 0,
			     &h);
	if (code == HOMA_RPC_OK)
		code = rpcm_build(&h, input, out);
	if (code == HOMA_RPC_RESOURCE_EXHAUSTED)
		*why = "request larger than a Homa message";
	else if (code != HOMA_RPC_OK)
		*why = "bad metadata";
	return code;
}

/* start - build and send a call; on HOMA_RPC_OK *@id is its RPC id.  On a
 * local failure, @r (when not NULL) gets its status. */
static int start(struct homa_rpc_client *c, unsigned method,
		 const ProtobufCMessage *input,
		 const struct homa_rpc_opts *opts, uint64_t *id,
		 struct homa_rpc_result *r)
{
	int64_t deadline = deadline_of(c, opts);
	struct rpcf_call *call;
	struct rpcm_out out;
	const char *why;
	int code, err;

	code = build_request(c, method, input, opts, deadline, &out, &why);
	if (code != HOMA_RPC_OK)
		return r ? local_result(r, code, why) : code;
	call = rpcf_call_new(method, opts ? opts->tag : NULL, deadline);
	if (!call) {
		rpcm_out_free(&out);
		return r ? local_result(r, HOMA_RPC_RESOURCE_EXHAUSTED,
					"out of memory")
			 : HOMA_RPC_RESOURCE_EXHAUSTED;
	}
	err = homa_send(c->fd, out.buf, out.len, &c->server, id,
			(uint64_t)(uintptr_t)call) < 0 ? errno : 0;
	rpcm_out_free(&out);
	if (err) {
		rpcf_put(call);
		rpcf_put(call);
		code = rpcs_from_errno(err);
		return r ? local_result(r, code, strerror(err)) : code;
	}
	(void)rpcf_link(&c->inflight, call, *id);
	rpcf_put(call);
	return HOMA_RPC_OK;
}

/* See homa-rpc.h. */
int homa_rpc_start(struct homa_rpc_client *c, unsigned method,
		   const ProtobufCMessage *input,
		   const struct homa_rpc_opts *opts, uint64_t *id)
{
	return start(c, method, input, opts, id, NULL);
}

/* failed_text - the status message of a call that failed with @err. */
static const char *failed_text(int err)
{
	switch (err) {
	case RPCS_ERR_DEADLINE:
		return "deadline exceeded";
	case RPCS_ERR_CANCEL:
		return "cancelled";
	default:
		return strerror(err);
	}
}

/* fill_from_response - @r from the response @in of a call of @method:
 * header, status, metadata, and the body unpacked on OK. */
static int fill_from_response(struct homa_rpc_client *c, unsigned method,
			      const struct rpcm_in *in,
			      struct homa_rpc_result *r)
{
	const ProtobufCMessageDescriptor *out_desc =
		c->desc->methods[method].output;
	struct rpcw_hdr h;
	enum rpcw_error e = rpcw_decode(in->data, in->len, &h);

	if (e == RPCW_OK && h.kind != RPCW_KIND_RESPONSE)
		e = RPCW_ERR_KIND;
	if (e != RPCW_OK) {
		char text[96];

		snprintf(text, sizeof(text), "malformed response: %s",
			 rpcw_error_name(e));
		return local_result(r, HOMA_RPC_INTERNAL, text);
	}
	r->_mem = rpcmd_result_mem(&h, &r->message, &r->md, &r->n_md);
	if (!r->_mem)
		return local_result(r, HOMA_RPC_RESOURCE_EXHAUSTED,
				    "out of memory");
	r->code = (int)h.status;
	if (r->code != HOMA_RPC_OK)
		return r->code;
	r->response = protobuf_c_message_unpack(out_desc, NULL, h.body_len,
						in->data + h.hdr_len);
	if (!r->response) {
		free(r->_mem);
		r->_mem = NULL;
		return local_result(r, HOMA_RPC_INTERNAL,
				    "response does not parse");
	}
	return HOMA_RPC_OK;
}

/*
 * complete - the result of a received message or failure: @len is
 * homa_recvmsg's result (@err its errno when negative), @args its
 * arguments.  Fills @r, hands the bpages back, releases the call.
 */
static int complete(struct homa_rpc_client *c, ssize_t len, int err,
		    struct homa_recvmsg_args *args, struct homa_rpc_result *r)
{
	struct rpcf_call *call =
		(struct rpcf_call *)(uintptr_t)args->completion_cookie;
	struct rpcm_in in;
	int code;

	memset(r, 0, sizeof(*r));
	r->id = args->id;
	r->tag = call->tag;
	(void)rpcf_complete(&c->inflight, call);
	if (len < 0) {
		code = local_result(r, rpcs_from_errno(err), failed_text(err));
	} else if (rpcm_gather(c->region, args->bpage_offsets,
			       args->num_bpages, (size_t)len, false, &in)) {
		code = local_result(r, HOMA_RPC_RESOURCE_EXHAUSTED,
				    "out of memory");
	} else {
		code = fill_from_response(c, call->method, &in, r);
		rpcm_in_free(&in);
	}
	rpcm_give_back(c->fd, args->bpage_offsets, args->num_bpages,
		       args->id);
	rpcf_put(call);
	return code;
}

/* receive - one homa_recvmsg of a response of @c: call @id (0: any),
 * @flags added to HOMA_RECVMSG_RESPONSE.  Returns its result with *@err
 * its errno, and @args filled; a failure that is about no RPC leaves
 * args->completion_cookie 0 (every call's cookie is its address). */
static ssize_t receive(struct homa_rpc_client *c, uint64_t id, int flags,
		       struct homa_recvmsg_args *args, int *err)
{
	struct msghdr msg;
	ssize_t len;

	memset(&msg, 0, sizeof(msg));
	args->id = id;
	args->completion_cookie = 0;
	args->flags = HOMA_RECVMSG_RESPONSE | flags;
	args->num_bpages = 0;
	msg.msg_control = args;
	msg.msg_controllen = sizeof(*args);
	len = homa_recvmsg(c->fd, &msg, 0);
	*err = len < 0 ? errno : 0;
	return len;
}

/* See homa-rpc.h. */
int homa_rpc_wait(struct homa_rpc_client *c, uint64_t id,
		  struct homa_rpc_result *result)
{
	struct homa_recvmsg_args args;
	ssize_t len;
	int err;

	memset(result, 0, sizeof(*result));
	if (id == 0) {
		errno = EINVAL;
		return -1;
	}
	len = receive(c, id, 0, &args, &err);
	if (len < 0 && args.completion_cookie == 0) {
		errno = err;
		return -1;
	}
	return complete(c, len, err, &args, result);
}

/* See homa-rpc.h. */
int homa_rpc_next(struct homa_rpc_client *c, struct homa_rpc_result *result)
{
	struct homa_recvmsg_args args;
	ssize_t len;
	int err;

	memset(result, 0, sizeof(*result));
	len = receive(c, 0, HOMA_RECVMSG_NONBLOCKING, &args, &err);
	if (len < 0 && args.completion_cookie == 0) {
		if (err == EAGAIN)
			return 0;
		errno = err;
		return -1;
	}
	(void)complete(c, len, err, &args, result);
	return 1;
}

/* See homa-rpc.h. */
int homa_rpc_call(struct homa_rpc_client *c, unsigned method,
		  const ProtobufCMessage *input,
		  const struct homa_rpc_opts *opts,
		  struct homa_rpc_result *result)
{
	uint64_t id = 0;
	int code;

	memset(result, 0, sizeof(*result));
	result->tag = opts ? opts->tag : NULL;
	code = start(c, method, input, opts, &id, result);
	if (code != HOMA_RPC_OK)
		return code;
	code = homa_rpc_wait(c, id, result);
	if (code < 0)
		return local_result(result, HOMA_RPC_INTERNAL, strerror(errno));
	return code;
}

/* See homa-rpc.h. */
int homa_rpc_cancel(struct homa_rpc_client *c, uint64_t id)
{
	int err = rpcf_cancel(&c->inflight, id);

	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}

/* See homa-rpc.h. */
void homa_rpc_result_clear(struct homa_rpc_result *result)
{
	if (result->response)
		protobuf_c_message_free_unpacked(result->response, NULL);
	free(result->_mem);
	memset(result, 0, sizeof(*result));
}
