/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tool_bytes - numbers in network byte order (big-endian) at a byte
 * pointer, as the tools and the tests write Homa headers and frame
 * lengths: no alignment needed, no bounds checked (the caller owns room
 * for 2, 4 or 8 bytes at p).  The library's own wire code is in
 * src/core/homa_wire.c; homa-rpc keeps its own (public API only).
 */
#ifndef TOOL_BYTES_H
#define TOOL_BYTES_H

#include <stdint.h>

/* tool_put_be16, tool_put_be32, tool_put_be64 - write v at p, most
 * significant byte first (2, 4 or 8 bytes). */
void tool_put_be16(uint8_t *p, uint16_t v);
void tool_put_be32(uint8_t *p, uint32_t v);
void tool_put_be64(uint8_t *p, uint64_t v);

/* tool_get_be32 - the 4-byte big-endian number at p. */
uint32_t tool_get_be32(const uint8_t *p);

#endif /* TOOL_BYTES_H */
