/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rpc_scall - one call on the server: the request as received, what the
 * implementation sets (status, response metadata, response), and the
 * response message built from them.  Its address is the closure_data the
 * implementation gets.
 */
#ifndef RPC_SCALL_H
#define RPC_SCALL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "homa.h"
#include "rpc_msg.h"
#include "rpc_registry.h"
#include "rpc_wire.h"

#define RPCSC_MAGIC 0x53434c4cu  /* "SCLL" */

/* A call received by a server. */
struct rpcsc {
	uint32_t magic;                  /* RPCSC_MAGIC while alive */
	uint64_t id;                     /* Homa RPC id of the request */
	union sockaddr_in_union peer;    /* the client */
	struct rpcm_in in;               /* the request: an owned copy, or
					  * in place in bpages the call holds */
	int fd;                          /* the server's socket */
	uint32_t n_bpages;               /* bpages held (in place) */
	uint32_t bpages[HOMA_MAX_BPAGES];
	struct rpcw_hdr hdr;             /* decoded; points into in */
	struct rpcr_method *method;
	int64_t expiry_us;               /* CLOCK_MONOTONIC; 0: none */
	int code;                        /* set by the implementation */
	char *status_msg;                /* owned, or NULL */
	struct homa_rpc_md md[RPCW_MAX_MD]; /* response metadata (owned) */
	size_t n_md;
	bool answered;                   /* the closure has run */
	struct rpcm_out out;             /* the response, once built */
	atomic_int cancelled;
};

/*
 * rpcsc_new - a call for the request @in (ownership passes to the call,
 * also on failure) with RPC id @id from @peer, received at @now_us.
 * Decodes the header; on success (returns 0) hdr and expiry are set;
 * returns ENOMEM or EPROTO (*@err: why the header was refused; the call
 * exists and can answer with an error).  *@call is NULL only on ENOMEM.
 */
int rpcsc_new(struct rpcm_in *in, uint64_t id,
	      const union sockaddr_in_union *peer, int64_t now_us,
	      struct rpcsc **call, enum rpcw_error *err);

/*
 * rpcsc_hold_bpages - the request of @call lies in place in the bpages
 * @offs[0..@n) of socket @fd: the call holds them and hands them back when
 * it is freed.
 */
void rpcsc_hold_bpages(struct rpcsc *call, int fd, const uint32_t *offs,
		       uint32_t n);

/* rpcsc_free - free @call and what it owns, handing back the bpages it
 * holds. */
void rpcsc_free(struct rpcsc *call);

/*
 * rpcsc_set_error - make @call's response an error: status @code with
 * message @text, no metadata, no body.  Returns 0 or ENOMEM.
 */
int rpcsc_set_error(struct rpcsc *call, int code, const char *text);

/*
 * rpcsc_run - unpack the request body and invoke the method's
 * implementation; builds @call's response (the implementation's, or
 * INVALID_ARGUMENT when the body does not parse, UNKNOWN when it answered
 * nothing, RESOURCE_EXHAUSTED when its response does not fit).  Counts in
 * the method's counters.
 */
void rpcsc_run(struct rpcsc *call);

/*
 * rpcsc_reply - send @call's response on socket @fd.  Returns 0 or the
 * errno of homa_reply.
 */
int rpcsc_reply(struct rpcsc *call, int fd);

#endif /* RPC_SCALL_H */
