/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * homa-rpc.h - typed RPC services over Homa (libhoma-rpc).
 *
 * Services are described in .proto files and compiled with protoc-c
 * (protobuf-c).  A server registers ProtobufCService implementations; a
 * client gets a ProtobufCService whose invoke makes a Homa RPC, or calls
 * methods by index, synchronously or asynchronously.  Calls carry gRPC's
 * meanings: method paths "/package.Service/Method", gRPC's status codes and
 * a status message, metadata as key/value pairs, and a deadline.  One request
 * message and one response message per call; the wire format is in
 * docs/rpc.md, the contract of every call in homa_rpc(3).
 *
 * Link with `pkg-config --libs homa-rpc` (libhoma-rpc, libhoma,
 * libprotobuf-c).
 */
#ifndef HOMA_RPC_H
#define HOMA_RPC_H

#include <stddef.h>
#include <stdint.h>
#include <protobuf-c/protobuf-c.h>

#include "homa.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Status codes: the numbers of gRPC's codes. */
enum homa_rpc_code {
	HOMA_RPC_OK = 0,
	HOMA_RPC_CANCELLED = 1,
	HOMA_RPC_UNKNOWN = 2,
	HOMA_RPC_INVALID_ARGUMENT = 3,
	HOMA_RPC_DEADLINE_EXCEEDED = 4,
	HOMA_RPC_NOT_FOUND = 5,
	HOMA_RPC_ALREADY_EXISTS = 6,
	HOMA_RPC_PERMISSION_DENIED = 7,
	HOMA_RPC_RESOURCE_EXHAUSTED = 8,
	HOMA_RPC_FAILED_PRECONDITION = 9,
	HOMA_RPC_ABORTED = 10,
	HOMA_RPC_OUT_OF_RANGE = 11,
	HOMA_RPC_UNIMPLEMENTED = 12,
	HOMA_RPC_INTERNAL = 13,
	HOMA_RPC_UNAVAILABLE = 14,
	HOMA_RPC_DATA_LOSS = 15,
	HOMA_RPC_UNAUTHENTICATED = 16,
};

/* The largest code defined (UNAUTHENTICATED). */
#define HOMA_RPC_CODE_MAX 16

/* homa_rpc_code_name - "OK", "CANCELLED", ... for a code, "?" for a number
 * outside 0..HOMA_RPC_CODE_MAX. */
const char *homa_rpc_code_name(int code);

/* One metadata entry.  Keys are 1..64 bytes of [a-z0-9-_.]; values are up to
 * 4096 bytes of anything. */
struct homa_rpc_md {
	const char *key;
	const void *value;
	size_t value_len;
};

/* ------------------------------------------------------------------ */
/* Client                                                              */
/* ------------------------------------------------------------------ */

struct homa_rpc_client;

/* Settings of a client; a NULL config or a zero field takes the default. */
struct homa_rpc_client_config {
	/* Deadline of calls whose options give none, in microseconds from
	 * the start of the call; 0: none. */
	int64_t default_timeout_us;
	/* Bytes of the socket's buffer region (default 16 MiB). */
	size_t region_bytes;
};

/* Options of one call; NULL options take the defaults. */
struct homa_rpc_opts {
	/* Deadline in microseconds from now: 0 takes the client's default;
	 * a negative value means none. */
	int64_t timeout_us;
	/* Request metadata (up to 32 entries). */
	const struct homa_rpc_md *md;
	size_t n_md;
	/* Returned in the result, for the application. */
	void *tag;
};

/* The outcome of a call. */
struct homa_rpc_result {
	uint64_t id;                  /* the call's id */
	void *tag;                    /* opts->tag of the call */
	int code;                     /* enum homa_rpc_code */
	const char *message;          /* status message; "" when none */
	ProtobufCMessage *response;   /* the response when code is OK, else
				       * NULL */
	const struct homa_rpc_md *md; /* response metadata (n_md entries;
				       * keys and values NUL-terminated) */
	size_t n_md;
	void *_mem;                   /* what homa_rpc_result_clear frees */
};

/*
 * homa_rpc_client_new - a client of @service at @server (its Homa port):
 * opens a Homa socket of the server address's family with a buffer region.
 * Returns the client, or NULL with errno (EINVAL: NULL service or address,
 * or an address that is not AF_INET/AF_INET6; ENOMEM; the errors of
 * homa_socket).  Free it with homa_rpc_client_free.
 */
struct homa_rpc_client *homa_rpc_client_new(
	const ProtobufCServiceDescriptor *service,
	const union sockaddr_in_union *server,
	const struct homa_rpc_client_config *config);

/*
 * homa_rpc_client_free - abort the client's calls still in flight (their
 * results are lost), close its socket and free it.  NULL is ignored.
 */
void homa_rpc_client_free(struct homa_rpc_client *c);

/*
 * homa_rpc_client_service - the client as a ProtobufCService: the stubs
 * protoc-c generates (package__service__method(service, input, closure,
 * data)) make a synchronous call with the client's default deadline and no
 * metadata, then call closure with the response, or with NULL when the call
 * did not end OK; homa_rpc_last_code tells the status.  The service belongs
 * to the client (its destroy does nothing).
 */
ProtobufCService *homa_rpc_client_service(struct homa_rpc_client *c);

/* homa_rpc_last_code - the status code of the calling thread's last call
 * made through a client's ProtobufCService (HOMA_RPC_OK before any). */
int homa_rpc_last_code(void);

/*
 * homa_rpc_call - a synchronous call of method @method (index in the
 * service's descriptor) with request @input and options @opts: sends the
 * request and waits for the response, the deadline or a cancellation.
 * Fills @result (clear it with homa_rpc_result_clear) and returns its code.
 * Local failures are statuses too: INVALID_ARGUMENT (no such method, an
 * input of another type, bad metadata), RESOURCE_EXHAUSTED (the request
 * does not fit in a Homa message), DEADLINE_EXCEEDED, CANCELLED,
 * UNAVAILABLE (the server is gone or the send failed), INTERNAL (a response
 * that does not parse).
 */
int homa_rpc_call(struct homa_rpc_client *c, unsigned method,
		  const ProtobufCMessage *input,
		  const struct homa_rpc_opts *opts,
		  struct homa_rpc_result *result);

/*
 * homa_rpc_start - start an asynchronous call (as homa_rpc_call) and return
 * at once.  On HOMA_RPC_OK, *@id is the call's id, and the call completes
 * with homa_rpc_wait (by id) or homa_rpc_next (any call); otherwise the call
 * did not start and the code says why (as homa_rpc_call's local failures).
 */
int homa_rpc_start(struct homa_rpc_client *c, unsigned method,
		   const ProtobufCMessage *input,
		   const struct homa_rpc_opts *opts, uint64_t *id);

/*
 * homa_rpc_wait - wait for call @id of this client to complete and fill
 * @result.  Returns its code, or -1 with errno EINVAL when @id names no call
 * in flight.
 */
int homa_rpc_wait(struct homa_rpc_client *c, uint64_t id,
		  struct homa_rpc_result *result);

/*
 * homa_rpc_client_fd - the client's descriptor: poll/epoll report it
 * readable when a call has completed (response, deadline, cancellation or
 * failure) and homa_rpc_next has something to return.
 */
int homa_rpc_client_fd(const struct homa_rpc_client *c);

/*
 * homa_rpc_next - without waiting, take any completed call of the client
 * and fill @result.  Returns 1 with @result filled, 0 when none has
 * completed, -1 with errno on a failure of the socket.  Do not mix with
 * homa_rpc_wait on one client: either may take the other's call.
 */
int homa_rpc_next(struct homa_rpc_client *c, struct homa_rpc_result *result);

/*
 * homa_rpc_cancel - cancel call @id: it completes at once with CANCELLED
 * (from any thread).  The server is not told.  Returns 0, or -1 with errno
 * EINVAL when the call has completed already or never existed.
 */
int homa_rpc_cancel(struct homa_rpc_client *c, uint64_t id);

/* homa_rpc_result_clear - free what @result holds and zero it. */
void homa_rpc_result_clear(struct homa_rpc_result *result);

/* ------------------------------------------------------------------ */
/* Server                                                              */
/* ------------------------------------------------------------------ */

struct homa_rpc_server;

/* Settings of a server; a NULL config or a zero field takes the default. */
struct homa_rpc_server_config {
	int workers;          /* threads that run calls (default 4; -1: none,
			       * the receiving thread runs each call) */
	int queue_max;        /* calls received but not started, at most
			       * (default 1024); more get RESOURCE_EXHAUSTED */
	size_t region_bytes;  /* buffer region (default 64 MiB) */
};

/* Per-method counters. */
struct homa_rpc_method_stats {
	uint64_t started;     /* calls handed to the implementation */
	uint64_t ok;          /* of them, answered OK */
	uint64_t failed;      /* of them, answered with another status */
	uint64_t bad_request; /* requests whose body did not parse */
	uint64_t expired;     /* not started: deadline passed in the queue */
	uint64_t shed;        /* not started: queue full or shutting down */
};

/* Counters of the whole server. */
struct homa_rpc_server_stats {
	uint64_t received;      /* requests taken from the socket */
	uint64_t malformed;     /* headers that did not parse */
	uint64_t unimplemented; /* unknown method paths */
	uint64_t replies_failed;/* responses homa_reply refused */
};

/*
 * homa_rpc_server_new - a server bound to @addr (a Homa port 1..32767).
 * Register services with homa_rpc_server_add, then homa_rpc_server_start.
 * Returns NULL with errno (EINVAL, ENOMEM, or the errors of homa_socket and
 * homa_bind, such as EADDRINUSE).
 */
struct homa_rpc_server *homa_rpc_server_new(
	const union sockaddr_in_union *addr,
	const struct homa_rpc_server_config *config);

/*
 * homa_rpc_server_add - serve @service (its methods become paths
 * "/<descriptor name>/<method>").  The service stays the caller's and
 * must outlive the server.  Returns 0, or -1 with errno: EBUSY after
 * start, EEXIST when a service of that name is registered, EINVAL, ENOMEM.
 */
int homa_rpc_server_add(struct homa_rpc_server *s, ProtobufCService *service);

/*
 * homa_rpc_server_start - start the receiving thread and the workers.
 * Returns 0, or -1 with errno (EBUSY: started already; pthread errors).
 */
int homa_rpc_server_start(struct homa_rpc_server *s);

/*
 * homa_rpc_server_stop - graceful shutdown: stop taking requests, answer
 * the calls not started with UNAVAILABLE, give running calls @grace_ms to
 * finish, then mark them cancelled (homa_rpc_call_cancelled) and wait for
 * them, close the socket and free the server.  NULL is ignored.
 */
void homa_rpc_server_stop(struct homa_rpc_server *s, int grace_ms);

/* homa_rpc_server_stats - copy the server's counters into @st. */
void homa_rpc_server_stats(struct homa_rpc_server *s,
			   struct homa_rpc_server_stats *st);

/*
 * homa_rpc_server_method_stats - copy the counters of method @path
 * ("/package.Service/Method") into @st.  Returns 0, or -1 with errno
 * ENOENT when no registered service has that method.
 */
int homa_rpc_server_method_stats(struct homa_rpc_server *s, const char *path,
				 struct homa_rpc_method_stats *st);

/*
 * Inside a method's implementation, closure_data is the call.  The
 * implementation calls closure(response, closure_data) before it returns:
 * with a response, the call ends OK unless it set another status; with NULL,
 * it ends with the status set, or UNKNOWN.
 */

/* homa_rpc_call_set_status - end the call with @code and message @msg
 * (NULL: none; at most 1024 bytes are kept).  Returns 0, or -1 with errno
 * EINVAL for a code outside 0..HOMA_RPC_CODE_MAX. */
int homa_rpc_call_set_status(void *call, int code, const char *msg);

/* homa_rpc_call_metadata - the value of request metadata @key (its length
 * in *@len when @len is not NULL), or NULL when the request has none. */
const void *homa_rpc_call_metadata(void *call, const char *key, size_t *len);

/* homa_rpc_call_add_metadata - add an entry to the response's metadata
 * (copied).  Returns 0, or -1 with errno EINVAL (bad key or value, more
 * than 32 entries) or ENOMEM. */
int homa_rpc_call_add_metadata(void *call, const char *key,
			       const void *value, size_t len);

/* homa_rpc_call_cancelled - nonzero once the server's shutdown has given up
 * waiting for the call; the implementation should end it soon. */
int homa_rpc_call_cancelled(void *call);

/* homa_rpc_call_path - the call's method path. */
const char *homa_rpc_call_path(void *call);

#ifdef __cplusplus
}
#endif

#endif /* HOMA_RPC_H */
