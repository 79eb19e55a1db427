/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rpc_md - metadata conversions (see rpc_md.h).
 */
#include "rpc_md.h"

#include <stdlib.h>
#include <string.h>

/* See rpc_md.h. */
int rpcmd_to_wire(const struct homa_rpc_md *md, size_t n, struct rpcw_hdr *h)
{
	h->n_md = 0;
	if (n > RPCW_MAX_MD || (n > 0 && !md))
		return HOMA_RPC_INVALID_ARGUMENT;
	for (size_t i = 0; i < n; i++) {
		size_t klen = md[i].key ? strlen(md[i].key) : 0;

		if (!rpcw_md_key_ok((const uint8_t *)md[i].key, klen) ||
		    md[i].value_len > RPCW_MAX_MD_VALUE ||
		    (md[i].value_len > 0 && !md[i].value))
			return HOMA_RPC_INVALID_ARGUMENT;
		h->md[i].key = (const uint8_t *)md[i].key;
		h->md[i].key_len = (uint16_t)klen;
		h->md[i].value = md[i].value;
		h->md[i].value_len = (uint16_t)md[i].value_len;
	}
	h->n_md = (uint16_t)n;
	return HOMA_RPC_OK;
}

/* See rpc_md.h. */
const void *rpcmd_lookup(const struct rpcw_hdr *h, const char *key,
			 size_t *len)
{
	size_t klen = strlen(key);

	for (unsigned i = 0; i < h->n_md; i++) {
		const struct rpcw_md *m = &h->md[i];

		if (m->key_len == klen && memcmp(m->key, key, klen) == 0) {
			if (len)
				*len = m->value_len;
			return m->value;
		}
	}
	return NULL;
}

/* copy_str - copy @n bytes of @src to @dst with a NUL after them; returns
 * the byte after the NUL. */
static char *copy_str(char *dst, const uint8_t *src, size_t n)
{
	if (n)
		memcpy(dst, src, n);
	dst[n] = '\0';
	return dst + n + 1;
}

/* See rpc_md.h. */
void *rpcmd_result_mem(const struct rpcw_hdr *h, const char **msg,
		       const struct homa_rpc_md **md, size_t *n_md)
{
	size_t bytes = h->n_md * sizeof(struct homa_rpc_md) +
		       h->status_msg_len + 1u;
	struct homa_rpc_md *arr;
	char *p;

	for (unsigned i = 0; i < h->n_md; i++)
		bytes += h->md[i].key_len + h->md[i].value_len + 2u;
	arr = malloc(bytes);
	if (!arr)
		return NULL;
	p = (char *)(arr + h->n_md);
	*msg = p;
	p = copy_str(p, h->status_msg, h->status_msg_len);
	for (unsigned i = 0; i < h->n_md; i++) {
		arr[i].key = p;
		p = copy_str(p, h->md[i].key, h->md[i].key_len);
		arr[i].value = p;
		arr[i].value_len = h->md[i].value_len;
		p = copy_str(p, h->md[i].value, h->md[i].value_len);
	}
	*md = arr;
	*n_md = h->n_md;
	return arr;
}
