/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rpc_registry - the methods of a server (see rpc_registry.h).
 */
#include "rpc_registry.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpc_wire.h"

/* service_known - whether a method of a service named @name is there. */
static bool service_known(const struct rpcr *r, const char *name)
{
	size_t n = strlen(name);

	for (size_t i = 0; i < r->n; i++) {
		const char *p = r->methods[i].path + 1;

		if (strncmp(p, name, n) == 0 && p[n] == '/')
			return true;
	}
	return false;
}

/* fill_method - entry @m for method @i of @service.  Returns 0, ENOMEM or
 * EINVAL (no valid path). */
static int fill_method(struct rpcr_method *m, ProtobufCService *service,
		       unsigned i)
{
	const ProtobufCServiceDescriptor *d = service->descriptor;
	size_t n = strlen(d->name) + strlen(d->methods[i].name) + 3;

	memset(m, 0, sizeof(*m));
	m->path = malloc(n);
	if (!m->path)
		return ENOMEM;
	m->path_len = (size_t)snprintf(m->path, n, "/%s/%s", d->name,
				       d->methods[i].name);
	m->service = service;
	m->index = i;
	m->input = d->methods[i].input;
	if (!rpcw_path_ok((const uint8_t *)m->path, m->path_len))
		return EINVAL;
	return 0;
}

/* See rpc_registry.h. */
int rpcr_add(struct rpcr *r, ProtobufCService *service)
{
	const ProtobufCServiceDescriptor *d;
	struct rpcr_method *grown;
	size_t old = r->n;
	int err = 0;

	if (!service || !service->descriptor || !service->invoke)
		return EINVAL;
	d = service->descriptor;
	if (service_known(r, d->name))
		return EEXIST;
	grown = realloc(r->methods, (old + d->n_methods + 1) * sizeof(*grown));
	if (!grown)
		return ENOMEM;
	r->methods = grown;
	for (unsigned i = 0; i < d->n_methods && !err; i++) {
		err = fill_method(&r->methods[old + i], service, i);
		r->n = old + i + 1;
	}
	if (err) {
		while (r->n > old)
			free(r->methods[--r->n].path);
	}
	return err;
}

/* See rpc_registry.h. */
struct rpcr_method *rpcr_find(struct rpcr *r, const uint8_t *path,
			      size_t len)
{
	for (size_t i = 0; i < r->n; i++) {
		struct rpcr_method *m = &r->methods[i];

		if (m->path_len == len && memcmp(m->path, path, len) == 0)
			return m;
	}
	return NULL;
}

/* See rpc_registry.h. */
void rpcr_stats(const struct rpcr_method *m,
		struct homa_rpc_method_stats *st)
{
	st->started = atomic_load(&m->started);
	st->ok = atomic_load(&m->ok);
	st->failed = atomic_load(&m->failed);
	st->bad_request = atomic_load(&m->bad_request);
	st->expired = atomic_load(&m->expired);
	st->shed = atomic_load(&m->shed);
}

/* See rpc_registry.h. */
void rpcr_free(struct rpcr *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->methods[i].path);
	free(r->methods);
	r->methods = NULL;
	r->n = 0;
}
