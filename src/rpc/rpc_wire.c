/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rpc_wire - encoding and decoding of the homa-rpc header (docs/rpc.md).
 * Big-endian integers; variable parts follow the 32-byte fixed part in the
 * order path, status message, metadata entries.
 */
#include "rpc_wire.h"

#include <string.h>

/* Offsets of the fixed part. */
enum {
	OFF_MAGIC = 0,
	OFF_VERSION = 2,
	OFF_KIND = 3,
	OFF_FLAGS = 4,
	OFF_HDR_LEN = 6,
	OFF_BODY_LEN = 8,
	OFF_STATUS = 12,
	OFF_DEADLINE = 16,
	OFF_PATH_LEN = 24,
	OFF_MSG_LEN = 26,
	OFF_N_MD = 28,
	OFF_RESERVED = 30,
};

static const char *const error_names[RPCW_ERR_COUNT] = {
	[RPCW_OK] = "ok",
	[RPCW_ERR_SHORT] = "truncated header",
	[RPCW_ERR_MAGIC] = "bad magic",
	[RPCW_ERR_VERSION] = "unknown version",
	[RPCW_ERR_KIND] = "unknown kind",
	[RPCW_ERR_FLAGS] = "bad flags",
	[RPCW_ERR_HDR_LEN] = "bad header length",
	[RPCW_ERR_BODY_LEN] = "bad body length",
	[RPCW_ERR_STATUS] = "bad status code",
	[RPCW_ERR_PATH] = "bad method path",
	[RPCW_ERR_STATUS_MSG] = "bad status message",
	[RPCW_ERR_MD] = "bad metadata",
	[RPCW_ERR_RESERVED] = "reserved field not zero",
};

/* See rpc_wire.h. */
const char *rpcw_error_name(enum rpcw_error err)
{
	if ((unsigned)err >= RPCW_ERR_COUNT)
		return "unknown error";
	return error_names[err];
}

/* get16/get32/get64 - big-endian integers at @p. */
static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)get16(p) << 16 | get16(p + 2);
}

static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) << 32 | get32(p + 4);
}

/* put16/put32/put64 - write big-endian integers at @p. */
static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)(v >> 16));
	put16(p + 2, (uint16_t)v);
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)(v >> 32));
	put32(p + 4, (uint32_t)v);
}

/* See rpc_wire.h. */
bool rpcw_path_ok(const uint8_t *p, size_t len)
{
	size_t slashes = 0, last = 0;

	if (len < 4 || len > RPCW_MAX_PATH || p[0] != '/')
		return false;
	for (size_t i = 0; i < len; i++) {
		if (p[i] <= ' ' || p[i] >= 0x7f)
			return false;
		if (p[i] == '/') {
			slashes++;
			last = i;
		}
	}
	/* "/S/M": exactly two slashes, neither part empty. */
	return slashes == 2 && last > 1 && last < len - 1;
}

/* See rpc_wire.h. */
bool rpcw_md_key_ok(const uint8_t *k, size_t len)
{
	if (len == 0 || len > RPCW_MAX_MD_KEY)
		return false;
	for (size_t i = 0; i < len; i++) {
		uint8_t c = k[i];

		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		      c == '-' || c == '_' || c == '.'))
			return false;
	}
	return true;
}

/* check_kind_fields - the rules that depend on the kind: a request has a
 * path, status 0 and no status message; a response has no path and no
 * deadline flag, and a code up to RPCW_MAX_CODE. */
static enum rpcw_error check_kind_fields(const struct rpcw_hdr *h)
{
	if (h->kind == RPCW_KIND_REQUEST) {
		if (h->status != 0)
			return RPCW_ERR_STATUS;
		if (h->status_msg_len != 0)
			return RPCW_ERR_STATUS_MSG;
		if (!rpcw_path_ok(h->path, h->path_len))
			return RPCW_ERR_PATH;
		return RPCW_OK;
	}
	if (h->kind != RPCW_KIND_RESPONSE)
		return RPCW_ERR_KIND;
	if (h->flags & RPCW_FLAG_DEADLINE)
		return RPCW_ERR_FLAGS;
	if (h->status > RPCW_MAX_CODE)
		return RPCW_ERR_STATUS;
	if (h->path_len != 0)
		return RPCW_ERR_PATH;
	if (h->status_msg_len > RPCW_MAX_STATUS_MSG)
		return RPCW_ERR_STATUS_MSG;
	return RPCW_OK;
}

/* check_md - the metadata entries of @h: count, keys, value lengths. */
static enum rpcw_error check_md(const struct rpcw_hdr *h)
{
	if (h->n_md > RPCW_MAX_MD)
		return RPCW_ERR_MD;
	for (unsigned i = 0; i < h->n_md; i++) {
		if (!rpcw_md_key_ok(h->md[i].key, h->md[i].key_len) ||
		    h->md[i].value_len > RPCW_MAX_MD_VALUE)
			return RPCW_ERR_MD;
	}
	return RPCW_OK;
}

/* See rpc_wire.h. */
size_t rpcw_hdr_len(const struct rpcw_hdr *h)
{
	size_t n = RPCW_FIXED_LEN + h->path_len + h->status_msg_len;

	for (unsigned i = 0; i < h->n_md && i < RPCW_MAX_MD; i++)
		n += 4u + h->md[i].key_len + h->md[i].value_len;
	return n;
}

/* See rpc_wire.h. */
enum rpcw_error rpcw_check(const struct rpcw_hdr *h)
{
	enum rpcw_error err;
	size_t hdr_len;

	if (h->kind != RPCW_KIND_REQUEST && h->kind != RPCW_KIND_RESPONSE)
		return RPCW_ERR_KIND;
	if (h->flags & ~RPCW_FLAGS_KNOWN)
		return RPCW_ERR_FLAGS;
	if (!(h->flags & RPCW_FLAG_DEADLINE) && h->deadline_us != 0)
		return RPCW_ERR_FLAGS;
	err = check_kind_fields(h);
	if (err == RPCW_OK)
		err = check_md(h);
	if (err != RPCW_OK)
		return err;
	hdr_len = rpcw_hdr_len(h);
	if (hdr_len > RPCW_MAX_HDR)
		return RPCW_ERR_HDR_LEN;
	if (h->body_len > RPCW_MAX_MSG - hdr_len)
		return RPCW_ERR_BODY_LEN;
	return RPCW_OK;
}

/* decode_fixed - the fixed part of the header in @buf (at least
 * RPCW_FIXED_LEN bytes) into @h; checks magic, version and reserved. */
static enum rpcw_error decode_fixed(const uint8_t *buf, struct rpcw_hdr *h)
{
	if (get16(buf + OFF_MAGIC) != RPCW_MAGIC)
		return RPCW_ERR_MAGIC;
	if (buf[OFF_VERSION] != RPCW_VERSION)
		return RPCW_ERR_VERSION;
	h->kind = buf[OFF_KIND];
	h->flags = get16(buf + OFF_FLAGS);
	h->hdr_len = get16(buf + OFF_HDR_LEN);
	h->body_len = get32(buf + OFF_BODY_LEN);
	h->status = get32(buf + OFF_STATUS);
	h->deadline_us = get64(buf + OFF_DEADLINE);
	h->path_len = get16(buf + OFF_PATH_LEN);
	h->status_msg_len = get16(buf + OFF_MSG_LEN);
	h->n_md = get16(buf + OFF_N_MD);
	if (get16(buf + OFF_RESERVED) != 0)
		return RPCW_ERR_RESERVED;
	if (h->n_md > RPCW_MAX_MD)
		return RPCW_ERR_MD;
	return RPCW_OK;
}

/* decode_md - the @h->n_md metadata entries at @p, which has @left bytes
 * of the header left; each length is checked before its bytes are used.
 * Returns RPCW_OK with *@used the bytes they take. */
static enum rpcw_error decode_md(const uint8_t *p, size_t left,
				 struct rpcw_hdr *h, size_t *used)
{
	size_t off = 0;

	for (unsigned i = 0; i < h->n_md; i++) {
		struct rpcw_md *m = &h->md[i];

		if (left - off < 4)
			return RPCW_ERR_HDR_LEN;
		m->key_len = get16(p + off);
		m->value_len = get16(p + off + 2);
		off += 4;
		if (left - off < (size_t)m->key_len + m->value_len)
			return RPCW_ERR_HDR_LEN;
		m->key = p + off;
		m->value = p + off + m->key_len;
		off += (size_t)m->key_len + m->value_len;
	}
	*used = off;
	return RPCW_OK;
}

/* decode_variable - the path, status message and metadata of @h from the
 * header's bytes after the fixed part (@p, @left bytes). */
static enum rpcw_error decode_variable(const uint8_t *p, size_t left,
				       struct rpcw_hdr *h)
{
	size_t fixed_strings = (size_t)h->path_len + h->status_msg_len;
	size_t used = 0;
	enum rpcw_error err;

	if (left < fixed_strings)
		return RPCW_ERR_HDR_LEN;
	h->path = h->path_len ? p : NULL;
	h->status_msg = h->status_msg_len ? p + h->path_len : NULL;
	err = decode_md(p + fixed_strings, left - fixed_strings, h, &used);
	if (err != RPCW_OK)
		return err;
	if (fixed_strings + used != left)
		return RPCW_ERR_HDR_LEN;
	return RPCW_OK;
}

/* See rpc_wire.h. */
enum rpcw_error rpcw_decode(const uint8_t *buf, size_t len,
			    struct rpcw_hdr *h)
{
	enum rpcw_error err;

	memset(h, 0, sizeof(*h));
	if (len < RPCW_FIXED_LEN)
		return RPCW_ERR_SHORT;
	if (len > RPCW_MAX_MSG)
		return RPCW_ERR_BODY_LEN;
	err = decode_fixed(buf, h);
	if (err != RPCW_OK)
		return err;
	if (h->hdr_len < RPCW_FIXED_LEN)
		return RPCW_ERR_HDR_LEN;
	if (h->hdr_len > len)
		return RPCW_ERR_SHORT;
	if (h->body_len != len - h->hdr_len)
		return RPCW_ERR_BODY_LEN;
	err = decode_variable(buf + RPCW_FIXED_LEN,
			      h->hdr_len - RPCW_FIXED_LEN, h);
	if (err != RPCW_OK)
		return err;
	return rpcw_check(h);
}

/* encode_variable - write the path, status message and metadata of @h at
 * @p (room checked by the caller). */
static void encode_variable(const struct rpcw_hdr *h, uint8_t *p)
{
	if (h->path_len)
		memcpy(p, h->path, h->path_len);
	p += h->path_len;
	if (h->status_msg_len)
		memcpy(p, h->status_msg, h->status_msg_len);
	p += h->status_msg_len;
	for (unsigned i = 0; i < h->n_md; i++) {
		const struct rpcw_md *m = &h->md[i];

		put16(p, m->key_len);
		put16(p + 2, m->value_len);
		memcpy(p + 4, m->key, m->key_len);
		if (m->value_len)
			memcpy(p + 4 + m->key_len, m->value, m->value_len);
		p += 4u + m->key_len + m->value_len;
	}
}

/* See rpc_wire.h. */
size_t rpcw_encode(const struct rpcw_hdr *h, uint8_t *buf, size_t cap)
{
	size_t len;

	if (rpcw_check(h) != RPCW_OK)
		return 0;
	len = rpcw_hdr_len(h);
	if (len > cap)
		return 0;
	put16(buf + OFF_MAGIC, RPCW_MAGIC);
	buf[OFF_VERSION] = RPCW_VERSION;
	buf[OFF_KIND] = h->kind;
	put16(buf + OFF_FLAGS, h->flags);
	put16(buf + OFF_HDR_LEN, (uint16_t)len);
	put32(buf + OFF_BODY_LEN, h->body_len);
	put32(buf + OFF_STATUS, h->status);
	put64(buf + OFF_DEADLINE, h->deadline_us);
	put16(buf + OFF_PATH_LEN, h->path_len);
	put16(buf + OFF_MSG_LEN, h->status_msg_len);
	put16(buf + OFF_N_MD, h->n_md);
	put16(buf + OFF_RESERVED, 0);
	encode_variable(h, buf + RPCW_FIXED_LEN);
	return len;
}
