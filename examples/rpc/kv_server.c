/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * kv_server - serves kv.KeyValue (kv.proto) from memory on a Homa port
 * until SIGINT or SIGTERM.  The workers share the table under a lock.
 *
 *   kv_server PORT
 */
#include <pthread.h>

#include "example_util.h"
#include "kv.pb-c.h"

/* One key and its value. */
struct entry {
	char *key;
	uint8_t *value;
	size_t len;
	struct entry *next;
};

static struct entry *table;
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;

/* find - the entry of @key, or NULL (lock held). */
static struct entry *find(const char *key)
{
	for (struct entry *e = table; e; e = e->next)
		if (strcmp(e->key, key) == 0)
			return e;
	return NULL;
}

/* kv_get - the value of a key, NOT_FOUND when absent. */
static void kv_get(Kv__KeyValue_Service *service, const Kv__GetRequest *in,
		   Kv__GetReply_Closure closure, void *call)
{
	Kv__GetReply reply = KV__GET_REPLY__INIT;
	struct entry *e;

	(void)service;
	pthread_mutex_lock(&table_lock);
	e = find(in->key);
	if (e) {
		reply.value.data = e->value;
		reply.value.len = e->len;
		closure(&reply, call);
	} else {
		homa_rpc_call_set_status(call, HOMA_RPC_NOT_FOUND, in->key);
		closure(NULL, call);
	}
	pthread_mutex_unlock(&table_lock);
}

/* set_value - copy @v into @e's value.  Returns 0, or -1 out of memory. */
static int set_value(struct entry *e, const ProtobufCBinaryData *v)
{
	uint8_t *copy = malloc(v->len ? v->len : 1);

	if (!copy)
		return -1;
	memcpy(copy, v->data, v->len);
	free(e->value);
	e->value = copy;
	e->len = v->len;
	return 0;
}

/* kv_put - set a key's value; created tells whether it was new. */
static void kv_put(Kv__KeyValue_Service *service, const Kv__PutRequest *in,
		   Kv__PutReply_Closure closure, void *call)
{
	Kv__PutReply reply = KV__PUT_REPLY__INIT;
	struct entry *e;

	(void)service;
	pthread_mutex_lock(&table_lock);
	e = find(in->key);
	if (!e && (e = calloc(1, sizeof(*e))) != NULL) {
		e->key = strdup(in->key);
		e->next = table;
		table = e;
		reply.created = 1;
	}
	if (!e || !e->key || set_value(e, &in->value) < 0) {
		homa_rpc_call_set_status(call, HOMA_RPC_RESOURCE_EXHAUSTED,
					 "out of memory");
		closure(NULL, call);
	} else {
		closure(&reply, call);
	}
	pthread_mutex_unlock(&table_lock);
}

/* kv_delete - remove a key, NOT_FOUND when absent. */
static void kv_delete(Kv__KeyValue_Service *service,
		      const Kv__DeleteRequest *in,
		      Kv__DeleteReply_Closure closure, void *call)
{
	Kv__DeleteReply reply = KV__DELETE_REPLY__INIT;
	struct entry **pp, *e = NULL;

	(void)service;
	pthread_mutex_lock(&table_lock);
	for (pp = &table; *pp; pp = &(*pp)->next) {
		if (strcmp((*pp)->key, in->key) == 0) {
			e = *pp;
			*pp = e->next;
			break;
		}
	}
	pthread_mutex_unlock(&table_lock);
	if (!e) {
		homa_rpc_call_set_status(call, HOMA_RPC_NOT_FOUND, in->key);
		closure(NULL, call);
		return;
	}
	free(e->key);
	free(e->value);
	free(e);
	closure(&reply, call);
}

static Kv__KeyValue_Service kv_service = KV__KEY_VALUE__INIT(kv_);

int main(int argc, char **argv)
{
	union sockaddr_in_union addr;
	struct homa_rpc_server *srv;
	sigset_t set;

	if (argc != 2) {
		fprintf(stderr, "usage: %s PORT\n", argv[0]);
		return 2;
	}
	addr = example_addr(argv[1], 1);
	example_block_signals(&set);
	srv = homa_rpc_server_new(&addr, NULL);
	if (!srv || homa_rpc_server_add(srv, &kv_service.base) < 0 ||
	    homa_rpc_server_start(srv) < 0) {
		perror("homa_rpc_server");
		return 1;
	}
	printf("serving kv.KeyValue on port %s\n", argv[1]);
	fflush(stdout);
	example_wait_signal(&set);
	homa_rpc_server_stop(srv, 1000);
	return 0;
}
