/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rpc_wire - the header of homa-rpc messages, byte for byte as in
 * docs/rpc.md: encoding and strict decoding.  Pure functions: no allocation,
 * no I/O; a decoded header points into the bytes it was decoded from.
 */
#ifndef RPC_WIRE_H
#define RPC_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RPCW_MAGIC 0x4852u        /* "HR" */
#define RPCW_VERSION 1u
#define RPCW_FIXED_LEN 32u        /* the fixed part of the header */

#define RPCW_KIND_REQUEST 1u
#define RPCW_KIND_RESPONSE 2u

#define RPCW_FLAG_DEADLINE 0x0001u  /* deadline_us is valid */
#define RPCW_FLAGS_KNOWN RPCW_FLAG_DEADLINE

/* Limits (docs/rpc.md). */
#define RPCW_MAX_PATH 256u
#define RPCW_MAX_STATUS_MSG 1024u
#define RPCW_MAX_MD 32u
#define RPCW_MAX_MD_KEY 64u
#define RPCW_MAX_MD_VALUE 4096u
#define RPCW_MAX_HDR 65535u
#define RPCW_MAX_CODE 16u
#define RPCW_MAX_MSG 1000000u     /* HOMA_MAX_MESSAGE_LENGTH */

/* One metadata entry (not NUL-terminated). */
struct rpcw_md {
	const uint8_t *key;
	uint16_t key_len;
	const uint8_t *value;
	uint16_t value_len;
};

/* A header, decoded or to encode. */
struct rpcw_hdr {
	uint8_t kind;             /* RPCW_KIND_* */
	uint16_t flags;           /* RPCW_FLAG_* */
	uint32_t status;          /* response: status code; request: 0 */
	uint64_t deadline_us;     /* request with RPCW_FLAG_DEADLINE */
	const uint8_t *path;      /* request: method path; response: none */
	uint16_t path_len;
	const uint8_t *status_msg; /* response: status message; request: none */
	uint16_t status_msg_len;
	uint16_t n_md;
	struct rpcw_md md[RPCW_MAX_MD];
	uint32_t hdr_len;         /* decode: bytes of the header */
	uint32_t body_len;        /* bytes of the body after the header */
};

/* Why a header was refused. */
enum rpcw_error {
	RPCW_OK = 0,
	RPCW_ERR_SHORT,           /* fewer bytes than the header says */
	RPCW_ERR_MAGIC,
	RPCW_ERR_VERSION,
	RPCW_ERR_KIND,
	RPCW_ERR_FLAGS,           /* unknown flag, or flag of the other kind */
	RPCW_ERR_HDR_LEN,         /* header length inconsistent */
	RPCW_ERR_BODY_LEN,        /* header + body is not the message */
	RPCW_ERR_STATUS,          /* code above 16, or nonzero in a request */
	RPCW_ERR_PATH,            /* missing, too long or not /pkg.Svc/Method */
	RPCW_ERR_STATUS_MSG,      /* too long, or present in a request */
	RPCW_ERR_MD,              /* too many entries, bad key or value */
	RPCW_ERR_RESERVED,        /* reserved field not zero */
	RPCW_ERR_COUNT
};

/* rpcw_error_name - a short text for @err ("ok", "truncated header", ...);
 * never NULL. */
const char *rpcw_error_name(enum rpcw_error err);

/*
 * rpcw_decode - decode the header at the start of the message @buf of
 * @len bytes (the whole message: header and body).  On RPCW_OK, @h is
 * filled (its pointers point into @buf) and h->hdr_len + h->body_len ==
 * @len.  Every length is checked against @len before any byte it covers is
 * read; on an error, @h is partly filled and must not be used.
 */
enum rpcw_error rpcw_decode(const uint8_t *buf, size_t len,
			    struct rpcw_hdr *h);

/*
 * rpcw_check - whether @h (kind, flags, status, path, status message,
 * metadata, body length) is a header rpcw_decode would accept.  Returns
 * RPCW_OK or the error rpcw_decode would give; ignores h->hdr_len.
 */
enum rpcw_error rpcw_check(const struct rpcw_hdr *h);

/* rpcw_hdr_len - the bytes rpcw_encode writes for @h (may exceed
 * RPCW_MAX_HDR, which rpcw_check refuses). */
size_t rpcw_hdr_len(const struct rpcw_hdr *h);

/*
 * rpcw_encode - write the header @h (without the body, h->body_len bytes
 * that follow it in the message) into @buf of @cap bytes.  Returns the
 * bytes written, or 0 when @h fails rpcw_check or @cap is too small.
 */
size_t rpcw_encode(const struct rpcw_hdr *h, uint8_t *buf, size_t cap);

/* rpcw_path_ok - whether @p (@len bytes) is a method path:
 * "/" service "/" method, service and method nonempty, printable ASCII
 * without spaces or further '/', at most RPCW_MAX_PATH bytes. */
bool rpcw_path_ok(const uint8_t *p, size_t len);

/* rpcw_md_key_ok - whether @k (@len bytes) is a metadata key: 1 to
 * RPCW_MAX_MD_KEY bytes of [a-z0-9-_.]. */
bool rpcw_md_key_ok(const uint8_t *k, size_t len);

#endif /* RPC_WIRE_H */
