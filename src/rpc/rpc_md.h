/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rpc_md - metadata between the application's form (struct homa_rpc_md) and
 * the header's (struct rpcw_md), and the memory a call's result owns.
 */
#ifndef RPC_MD_H
#define RPC_MD_H

#include <stddef.h>

#include "homa-rpc.h"
#include "rpc_wire.h"

/*
 * rpcmd_to_wire - point the metadata of @h at the @n entries @md (which
 * must outlive @h's use).  Returns HOMA_RPC_OK, or INVALID_ARGUMENT for
 * more than RPCW_MAX_MD entries, a bad key (rpcw_md_key_ok) or a value over
 * RPCW_MAX_MD_VALUE bytes (@h's metadata is then empty).
 */
int rpcmd_to_wire(const struct homa_rpc_md *md, size_t n, struct rpcw_hdr *h);

/*
 * rpcmd_lookup - the value of key @key (NUL-terminated) among the metadata
 * of @h, with its length in *@len (when not NULL); NULL when absent.
 */
const void *rpcmd_lookup(const struct rpcw_hdr *h, const char *key,
			 size_t *len);

/*
 * rpcmd_result_mem - one block of memory holding the status message and the
 * metadata of @h as the result of a call shows them (NUL-terminated copies).
 * Sets *@msg (never NULL, "" when none), *@md and *@n_md to point into it.
 * Returns the block (the caller frees it), or NULL when out of memory.
 */
void *rpcmd_result_mem(const struct rpcw_hdr *h, const char **msg,
		       const struct homa_rpc_md **md, size_t *n_md);

#endif /* RPC_MD_H */
