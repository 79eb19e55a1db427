// SPDX-License-Identifier: BSD-2-Clause
/* The simulator's checking helpers: see sim_check.h. */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_check.h"

/* mix64 - the splitmix64 finaliser: a bijection that spreads every input
 * bit over the output. */
static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void sim_idmap_init(struct sim_idmap *m)
{
	memset(m, 0, sizeof(*m));
}

void sim_idmap_free(struct sim_idmap *m)
{
	free(m->slots);
	sim_idmap_init(m);
}

/* slot_of - the first slot to probe for (host, id) in a map of cap. */
static size_t slot_of(size_t cap, uint32_t host, uint64_t id)
{
	return (size_t)(mix64(id ^ ((uint64_t)host << 40) ^
			      ((uint64_t)host >> 24)) & (cap - 1));
}

/* find - the slot holding (host, id), or the empty slot where it would
 * go (cap > count). */
static struct sim_idmap_slot *find(const struct sim_idmap *m, uint32_t host,
				   uint64_t id)
{
	size_t i = slot_of(m->cap, host, id);

	for (;;) {
		struct sim_idmap_slot *s = &m->slots[i];

		if (s->id == 0 || (s->id == id && s->host == host))
			return s;
		i = (i + 1) & (m->cap - 1);
	}
}

/* grow - double the table (or create it).  Returns 0 or -ENOMEM. */
static int grow(struct sim_idmap *m)
{
	size_t cap = m->cap ? m->cap * 2 : 64, i;
	struct sim_idmap old = *m;

	m->slots = calloc(cap, sizeof(*m->slots));
	if (!m->slots) {
		*m = old;
		return -ENOMEM;
	}
	m->cap = cap;
	for (i = 0; i < old.cap; i++)
		if (old.slots[i].id != 0)
			*find(m, old.slots[i].host, old.slots[i].id) =
				old.slots[i];
	free(old.slots);
	return 0;
}

int sim_idmap_put(struct sim_idmap *m, uint32_t host, uint64_t id,
		  uint32_t value)
{
	struct sim_idmap_slot *s;

	if (id == 0)
		return -EINVAL;
	if ((m->count + 1) * 2 > m->cap && grow(m) != 0)
		return -ENOMEM;
	s = find(m, host, id);
	if (s->id == 0) {
		s->id = id;
		s->host = host;
		m->count++;
	}
	s->value = value;
	return 0;
}

uint32_t sim_idmap_get(const struct sim_idmap *m, uint32_t host, uint64_t id)
{
	const struct sim_idmap_slot *s;

	if (m->cap == 0 || id == 0)
		return UINT32_MAX;
	s = find(m, host, id);
	return s->id == 0 ? UINT32_MAX : s->value;
}

void sim_pattern(uint64_t key, uint32_t offset, uint8_t *out, uint32_t len)
{
	/* Word i of the content is a + i * b (b odd): distinct words at
	 * distinct offsets of one message, and sequences unrelated between
	 * keys; one addition a word keeps filling and checking cheap. */
	uint64_t a = mix64(key), b = mix64(key ^ 0x5851f42d4c957f2dull) | 1;
	uint64_t w = a + (uint64_t)(offset / 8) * b;
	uint32_t done = 0;

	while (len - done >= 8) {
		memcpy(out + done, &w, 8);
		done += 8;
		w += b;
	}
	if (done < len)
		memcpy(out + done, &w, len - done);
}

int64_t sim_pattern_check(uint64_t key, uint32_t offset, const uint8_t *buf,
			  uint32_t len, uint8_t *scratch)
{
	uint32_t done = 0, i;

	while (done < len) {
		uint32_t n = len - done < 4096 ? len - done : 4096;

		sim_pattern(key, offset + done, scratch, n);
		if (memcmp(scratch, buf + done, n) != 0) {
			for (i = 0; i < n && scratch[i] == buf[done + i]; i++)
				;
			return (int64_t)offset + done + i;
		}
		done += n;
	}
	return -1;
}

uint64_t sim_msg_key(uint64_t seed, uint32_t msg, bool response)
{
	return mix64(mix64(seed) ^ ((uint64_t)msg << 1 | (response ? 1 : 0)));
}

uint16_t sim_inet_csum(const uint8_t *buf, size_t len)
{
	uint64_t sum = 0;
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)buf[i] << 8 | buf[i + 1];
	if (len & 1)
		sum += (uint32_t)buf[len - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

void sim_violation_add(struct sim_violations *v, uint64_t now,
		       const char *fmt, ...)
{
	va_list ap;
	int n;

	v->count++;
	if (v->kept >= SIM_VIOLATIONS_KEPT)
		return;
	n = snprintf(v->text[v->kept], SIM_VIOLATION_TEXT, "t=%.3f ms: ",
		     now / 1e6);
	if (n < 0 || n >= SIM_VIOLATION_TEXT)
		n = 0;
	va_start(ap, fmt);
	vsnprintf(v->text[v->kept] + n, SIM_VIOLATION_TEXT - (size_t)n, fmt,
		  ap);
	va_end(ap);
	v->kept++;
}
