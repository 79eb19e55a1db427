/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * kv_client - one operation on a kv_server:
 *
 *   kv_client PORT get KEY
 *   kv_client PORT put KEY VALUE
 *   kv_client PORT delete KEY
 *
 * Prints the outcome; the exit status is 0 for OK, 1 for another status.
 */
#include "example_util.h"
#include "kv.pb-c.h"

/* Method indices of kv.KeyValue, in the order of kv.proto. */
enum { KV_GET, KV_PUT, KV_DELETE };

/* call - one call of @method with @in; prints the outcome and @r stays
 * filled.  Returns the code. */
static int call(struct homa_rpc_client *c, unsigned method,
		const ProtobufCMessage *in, struct homa_rpc_result *r)
{
	struct homa_rpc_opts opts = { .timeout_us = 1000000 };
	int code = homa_rpc_call(c, method, in, &opts, r);

	if (code != HOMA_RPC_OK)
		printf("%s: %s\n", homa_rpc_code_name(code), r->message);
	return code;
}

/* run - the operation of argv[2..]; returns the code. */
static int run(struct homa_rpc_client *c, int argc, char **argv)
{
	struct homa_rpc_result r;
	int code = HOMA_RPC_INVALID_ARGUMENT;

	if (argc == 4 && strcmp(argv[2], "get") == 0) {
		Kv__GetRequest req = KV__GET_REQUEST__INIT;

		req.key = argv[3];
		code = call(c, KV_GET, &req.base, &r);
		if (code == HOMA_RPC_OK) {
			Kv__GetReply *rep = (Kv__GetReply *)r.response;

			printf("%.*s\n", (int)rep->value.len,
			       (const char *)rep->value.data);
		}
	} else if (argc == 5 && strcmp(argv[2], "put") == 0) {
		Kv__PutRequest req = KV__PUT_REQUEST__INIT;

		req.key = argv[3];
		req.value.data = (uint8_t *)argv[4];
		req.value.len = strlen(argv[4]);
		code = call(c, KV_PUT, &req.base, &r);
		if (code == HOMA_RPC_OK)
			printf("%s\n", ((Kv__PutReply *)r.response)->created
				       ? "created" : "replaced");
	} else if (argc == 4 && strcmp(argv[2], "delete") == 0) {
		Kv__DeleteRequest req = KV__DELETE_REQUEST__INIT;

		req.key = argv[3];
		code = call(c, KV_DELETE, &req.base, &r);
		if (code == HOMA_RPC_OK)
			printf("deleted\n");
	} else {
		fprintf(stderr, "usage: %s PORT get KEY | put KEY VALUE | "
			"delete KEY\n", argv[0]);
		return HOMA_RPC_INVALID_ARGUMENT;
	}
	homa_rpc_result_clear(&r);
	return code;
}

int main(int argc, char **argv)
{
	union sockaddr_in_union addr;
	struct homa_rpc_client *c;
	int code;

	if (argc < 4) {
		fprintf(stderr, "usage: %s PORT get KEY | put KEY VALUE | "
			"delete KEY\n", argv[0]);
		return 2;
	}
	addr = example_addr(argv[1], 0);
	c = homa_rpc_client_new(&kv__key_value__descriptor, &addr, NULL);
	if (!c) {
		perror("homa_rpc_client_new");
		return 1;
	}
	code = run(c, argc, argv);
	homa_rpc_client_free(c);
	return code == HOMA_RPC_OK ? 0 : 1;
}
