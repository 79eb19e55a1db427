/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rpc_registry - the methods a server serves: one entry per method of each
 * registered ProtobufCService, found by path, with its counters.
 */
#ifndef RPC_REGISTRY_H
#define RPC_REGISTRY_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <protobuf-c/protobuf-c.h>

#include "homa-rpc.h"

/* One method. */
struct rpcr_method {
	char *path;                      /* "/<service>/<method>" */
	size_t path_len;
	ProtobufCService *service;
	unsigned index;                  /* in the service's descriptor */
	const ProtobufCMessageDescriptor *input;
	_Atomic uint64_t started, ok, failed, bad_request, expired, shed;
};

/* The methods of a server. */
struct rpcr {
	struct rpcr_method *methods;
	size_t n;
};

/*
 * rpcr_add - add the methods of @service.  Returns 0, or EEXIST (a service
 * of the same name is there), EINVAL (NULL, or a name that makes no valid
 * path), ENOMEM; on an error nothing is added.
 */
int rpcr_add(struct rpcr *r, ProtobufCService *service);

/* rpcr_find - the method of path @path (@len bytes), or NULL. */
struct rpcr_method *rpcr_find(struct rpcr *r, const uint8_t *path,
			      size_t len);

/* rpcr_stats - the counters of @m into @st. */
void rpcr_stats(const struct rpcr_method *m,
		struct homa_rpc_method_stats *st);

/* rpcr_free - free the entries (not the services). */
void rpcr_free(struct rpcr *r);

#endif /* RPC_REGISTRY_H */
