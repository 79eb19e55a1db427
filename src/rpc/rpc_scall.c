/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rpc_scall - a call on the server (see rpc_scall.h), and the functions an
 * implementation calls on it (homa_rpc_call_*).
 */
#include "rpc_scall.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "homa-rpc.h"
#include "rpc_md.h"

/* Deadlines further ahead count as this far (a year). */
#define RPCSC_MAX_DEADLINE_US (365ull * 86400 * 1000000)

/* See rpc_scall.h. */
int rpcsc_new(struct rpcm_in *in, uint64_t id,
	      const union sockaddr_in_union *peer, int64_t now_us,
	      struct rpcsc **call, enum rpcw_error *err)
{
	struct rpcsc *c = calloc(1, sizeof(*c));

	*call = c;
	if (!c) {
		rpcm_in_free(in);
		return ENOMEM;
	}
	c->magic = RPCSC_MAGIC;
	c->id = id;
	c->peer = *peer;
	c->in = *in;
	*err = rpcw_decode(c->in.data, c->in.len, &c->hdr);
	if (*err == RPCW_OK && c->hdr.kind != RPCW_KIND_REQUEST)
		*err = RPCW_ERR_KIND;
	if (*err != RPCW_OK)
		return EPROTO;
	if (c->hdr.flags & RPCW_FLAG_DEADLINE) {
		uint64_t left = c->hdr.deadline_us;

		if (left > RPCSC_MAX_DEADLINE_US)
			left = RPCSC_MAX_DEADLINE_US;
		c->expiry_us = now_us + (int64_t)left;
	}
	return 0;
}

/* clear_md - free the response metadata of @c. */
static void clear_md(struct rpcsc *c)
{
	for (size_t i = 0; i < c->n_md; i++) {
		free((void *)c->md[i].key);
		free((void *)c->md[i].value);
	}
	c->n_md = 0;
}

/* See rpc_scall.h. */
void rpcsc_hold_bpages(struct rpcsc *call, int fd, const uint32_t *offs,
		       uint32_t n)
{
	call->fd = fd;
	call->n_bpages = n;
	memcpy(call->bpages, offs, n * sizeof(offs[0]));
}

/* See rpc_scall.h. */
void rpcsc_free(struct rpcsc *call)
{
	if (!call)
		return;
	call->magic = 0;
	rpcm_in_free(&call->in);
	/* A server socket has no client RPC: id 2 names none, so the call
	 * only takes the bpages back. */
	rpcm_give_back(call->fd, call->bpages, call->n_bpages, 2);
	free(call->status_msg);
	clear_md(call);
	rpcm_out_free(&call->out);
	free(call);
}

/* build - the response of @c with status @code, its message and metadata,
 * and @body (NULL: none) into c->out.  Returns a code as rpcm_build. */
static int build(struct rpcsc *c, int code, const ProtobufCMessage *body)
{
	struct rpcw_hdr h;
	const char *msg = c->status_msg ? c->status_msg : "";
	int ret;

	memset(&h, 0, sizeof(h));
	h.kind = RPCW_KIND_RESPONSE;
	h.status = (uint32_t)code;
	h.status_msg = (const uint8_t *)msg;
	h.status_msg_len = (uint16_t)strlen(msg);
	ret = rpcmd_to_wire(c->md, c->n_md, &h);
	if (ret == HOMA_RPC_OK)
		ret = rpcm_build(&h, code == HOMA_RPC_OK ? body : NULL,
				 &c->out);
	return ret;
}

/* See rpc_scall.h. */
int rpcsc_set_error(struct rpcsc *call, int code, const char *text)
{
	rpcm_out_free(&call->out);
	clear_md(call);
	free(call->status_msg);
	call->status_msg = strdup(text);
	call->code = code;
	if (!call->status_msg)
		return ENOMEM;
	return build(call, code, NULL) == HOMA_RPC_OK ? 0 : ENOMEM;
}

/* closure - the ProtobufCClosure of every call: builds the response from
 * @msg and what the implementation set before. */
static void closure(const ProtobufCMessage *msg, void *data)
{
	struct rpcsc *c = data;
	int ret;

	if (c->answered)
		return;
	c->answered = true;
	if (c->code == HOMA_RPC_OK && !msg)
		c->code = HOMA_RPC_UNKNOWN;
	ret = build(c, c->code, msg);
	if (ret == HOMA_RPC_RESOURCE_EXHAUSTED)
		(void)rpcsc_set_error(c, HOMA_RPC_RESOURCE_EXHAUSTED,
				      "response larger than a Homa message");
	else if (ret != HOMA_RPC_OK)
		(void)rpcsc_set_error(c, HOMA_RPC_INTERNAL,
				      "response metadata refused");
}

/* See rpc_scall.h. */
void rpcsc_run(struct rpcsc *call)
{
	struct rpcr_method *m = call->method;
	ProtobufCMessage *input;

	input = protobuf_c_message_unpack(m->input, NULL, call->hdr.body_len,
					  call->in.data + call->hdr.hdr_len);
	if (!input) {
		atomic_fetch_add(&m->bad_request, 1);
		(void)rpcsc_set_error(call, HOMA_RPC_INVALID_ARGUMENT,
				      "request does not parse");
		return;
	}
	atomic_fetch_add(&m->started, 1);
	m->service->invoke(m->service, m->index, input, closure, call);
	protobuf_c_message_free_unpacked(input, NULL);
	if (!call->answered)
		(void)rpcsc_set_error(call, call->code ? call->code
						       : HOMA_RPC_UNKNOWN,
				      "the method gave no response");
	if (call->code == HOMA_RPC_OK)
		atomic_fetch_add(&m->ok, 1);
	else
		atomic_fetch_add(&m->failed, 1);
}

/* See rpc_scall.h. */
int rpcsc_reply(struct rpcsc *call, int fd)
{
	if (!call->out.buf &&
	    rpcsc_set_error(call, HOMA_RPC_INTERNAL, "no response") != 0)
		return ENOMEM;
	if (homa_reply(fd, call->out.buf, call->out.len, &call->peer,
		       call->id) < 0)
		return errno;
	return 0;
}

/* scall_of - @p as a live call, or NULL (errno EINVAL). */
static struct rpcsc *scall_of(void *p)
{
	struct rpcsc *c = p;

	if (!c || c->magic != RPCSC_MAGIC) {
		errno = EINVAL;
		return NULL;
	}
	return c;
}

/* See homa-rpc.h. */
int homa_rpc_call_set_status(void *call, int code, const char *msg)
{
	struct rpcsc *c = scall_of(call);
	size_t n;

	if (!c)
		return -1;
	if (code < 0 || code > HOMA_RPC_CODE_MAX) {
		errno = EINVAL;
		return -1;
	}
	free(c->status_msg);
	c->status_msg = NULL;
	c->code = code;
	if (!msg)
		return 0;
	n = strnlen(msg, RPCW_MAX_STATUS_MSG);
	c->status_msg = strndup(msg, n);
	return c->status_msg ? 0 : -1;
}

/* See homa-rpc.h. */
const void *homa_rpc_call_metadata(void *call, const char *key, size_t *len)
{
	struct rpcsc *c = scall_of(call);

	if (!c || !key)
		return NULL;
	return rpcmd_lookup(&c->hdr, key, len);
}

/* See homa-rpc.h. */
int homa_rpc_call_add_metadata(void *call, const char *key,
			       const void *value, size_t len)
{
	struct rpcsc *c = scall_of(call);
	struct homa_rpc_md *m;
	char *v;

	if (!c)
		return -1;
	if (!key || !rpcw_md_key_ok((const uint8_t *)key, strlen(key)) ||
	    len > RPCW_MAX_MD_VALUE || (len && !value) ||
	    c->n_md >= RPCW_MAX_MD) {
		errno = EINVAL;
		return -1;
	}
	m = &c->md[c->n_md];
	v = malloc(len ? len : 1);
	m->key = strdup(key);
	if (!v || !m->key) {
		free(v);
		free((void *)m->key);
		errno = ENOMEM;
		return -1;
	}
	if (len)
		memcpy(v, value, len);
	m->value = v;
	m->value_len = len;
	c->n_md++;
	return 0;
}

/* See homa-rpc.h. */
int homa_rpc_call_cancelled(void *call)
{
	struct rpcsc *c = scall_of(call);

	return c ? atomic_load(&c->cancelled) : 0;
}

/* See homa-rpc.h. */
const char *homa_rpc_call_path(void *call)
{
	struct rpcsc *c = scall_of(call);

	return c && c->method ? c->method->path : NULL;
}
