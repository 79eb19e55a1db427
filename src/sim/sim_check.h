/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * sim_check - what the simulator uses to check the core from outside:
 *
 *   - an id map from (client host, client RPC id) to the run's message
 *     index, over every incarnation of every host (ids of a new
 *     incarnation start from a fresh base, so keys never repeat);
 *   - a key set of the same keys, for RPCs whose packets a fault changed
 *     in a way no checksum caught ("tainted": their bytes are not checked);
 *   - message contents: every request and response is filled with a
 *     pattern derived from (message key, byte offset), so the receiving
 *     application can verify every byte it gets and tell whose bytes they
 *     are;
 *   - the Internet checksum (RFC 1071) the UDP datapath would check;
 *   - the violation log: a count and the first few descriptions.
 */
#ifndef SIM_CHECK_H
#define SIM_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One (client host, client id) entry of an id map or key set. */
struct sim_idmap_slot {
	uint64_t id;        /* 0: empty slot (client ids are never 0) */
	uint32_t host;
	uint32_t value;
};

/* Open addressing with linear probing; grows at half full. */
struct sim_idmap {
	struct sim_idmap_slot *slots;
	size_t cap, count;  /* cap: a power of two, or 0 */
};

/* sim_idmap_init - an empty map (no allocation yet). */
void sim_idmap_init(struct sim_idmap *m);

/* sim_idmap_free - free m's storage; m is empty afterwards. */
void sim_idmap_free(struct sim_idmap *m);

/*
 * sim_idmap_put - map (host, id) to value (id != 0), replacing an earlier
 * value of the same key.  Returns 0, or -ENOMEM (m unchanged).
 */
int sim_idmap_put(struct sim_idmap *m, uint32_t host, uint64_t id,
		  uint32_t value);

/* sim_idmap_get - the value of (host, id), or UINT32_MAX when absent. */
uint32_t sim_idmap_get(const struct sim_idmap *m, uint32_t host, uint64_t id);

/*
 * sim_pattern - bytes [offset, offset + len) of the content of the message
 * with this key, into out.  offset must be a multiple of 8.  Every byte
 * depends on the key and its offset, so bytes of another message or of
 * another place in the same message differ (except by chance, 1 in 256
 * per byte).
 */
void sim_pattern(uint64_t key, uint32_t offset, uint8_t *out, uint32_t len);

/*
 * sim_pattern_check - compare buf[0..len) with bytes [offset, offset +
 * len) of the key's content (offset a multiple of 8); scratch holds at
 * least 4096 bytes.  Returns -1 when all match, else the offset (within
 * the message) of the first byte that differs.
 */
int64_t sim_pattern_check(uint64_t key, uint32_t offset, const uint8_t *buf,
			  uint32_t len, uint8_t *scratch);

/* sim_msg_key - the content key of message index msg of a run with this
 * seed; response selects the response's content. */
uint64_t sim_msg_key(uint64_t seed, uint32_t msg, bool response);

/* sim_inet_csum - the 16-bit one's-complement sum of buf[0..len) (RFC
 * 1071), as UDP computes it over its payload (no pseudo-header). */
uint16_t sim_inet_csum(const uint8_t *buf, size_t len);

/* How many violation descriptions are kept. */
#define SIM_VIOLATIONS_KEPT 8
#define SIM_VIOLATION_TEXT 200

struct sim_violations {
	uint64_t count;
	int kept;
	char text[SIM_VIOLATIONS_KEPT][SIM_VIOLATION_TEXT];
};

/* sim_violation_add - count a violation at virtual time now; keep its
 * description (printf format) while fewer than SIM_VIOLATIONS_KEPT are
 * kept. */
void sim_violation_add(struct sim_violations *v, uint64_t now,
		       const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif /* SIM_CHECK_H */
