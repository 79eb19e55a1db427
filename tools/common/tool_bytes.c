// SPDX-License-Identifier: BSD-2-Clause
/* Big-endian numbers at a byte pointer: see tool_bytes.h. */

#include "tool_bytes.h"

void tool_put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

void tool_put_be32(uint8_t *p, uint32_t v)
{
	tool_put_be16(p, (uint16_t)(v >> 16));
	tool_put_be16(p + 2, (uint16_t)v);
}

void tool_put_be64(uint8_t *p, uint64_t v)
{
	tool_put_be32(p, (uint32_t)(v >> 32));
	tool_put_be32(p + 4, (uint32_t)v);
}

uint32_t tool_get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | (uint32_t)p[3];
}
