/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz_input - what the fuzz targets share: a check that aborts naming its
 * place, and a cursor reading little-endian integers from the fuzzer's
 * input (bytes past its end read as 0).
 */
#ifndef FUZZ_INPUT_H
#define FUZZ_INPUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* fuzz_check - abort() unless cond holds, naming file and line. */
static inline void fuzz_check(int cond, const char *file, int line)
{
	if (!cond) {
		fprintf(stderr, "%s:%d: check failed\n", file, line);
		abort();
	}
}
#define check(cond) fuzz_check((cond), __FILE__, __LINE__)

/* A cursor over the input. */
struct reader {
	const uint8_t *p;
	size_t left;
};

/* rd_u8 .. rd_u64 - the next little-endian integer (missing bytes are 0). */
static inline uint8_t rd_u8(struct reader *r)
{
	uint8_t v = 0;

	if (r->left > 0) {
		v = *r->p++;
		r->left--;
	}
	return v;
}

static inline uint16_t rd_u16(struct reader *r)
{
	uint16_t lo = rd_u8(r);

	return (uint16_t)(lo | (uint16_t)rd_u8(r) << 8);
}

static inline uint32_t rd_u32(struct reader *r)
{
	uint32_t lo = rd_u16(r);

	return lo | (uint32_t)rd_u16(r) << 16;
}

static inline uint64_t rd_u64(struct reader *r)
{
	uint64_t lo = rd_u32(r);

	return lo | (uint64_t)rd_u32(r) << 32;
}

#endif /* FUZZ_INPUT_H */
