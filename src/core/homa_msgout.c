// SPDX-License-Identifier: BSD-2-Clause
/* Outgoing messages: see homa_msgout.h. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "homa_alloc.h"
#include "homa_msgout.h"
#include "homa_wire.h"

/* round_cap - the allocation for a message of length bytes: a power of
 * two when the buffer is worth caching, else exactly length. */
static uint32_t round_cap(uint32_t length)
{
	uint32_t cap = HOMA_MSGOUT_CACHE_MIN;

	if (length < HOMA_MSGOUT_CACHE_MIN)
		return length;
	while (cap < length && cap < (1u << 31))
		cap <<= 1;
	return cap < length ? length : cap;
}

/* cache_take - a buffer of at least length bytes from cache (the smallest
 * that fits), or NULL; *cap gets its size. */
static uint8_t *cache_take(struct homa_msgout_cache *cache, uint32_t length,
			   uint32_t *cap)
{
	int best = -1;
	uint8_t *buf;

	if (!cache)
		return NULL;
	for (uint32_t i = 0; i < cache->n; i++)
		if (cache->caps[i] >= length &&
		    (best < 0 || cache->caps[i] < cache->caps[best]))
			best = (int)i;
	if (best < 0)
		return NULL;
	buf = cache->bufs[best];
	*cap = cache->caps[best];
	cache->n--;
	cache->bufs[best] = cache->bufs[cache->n];
	cache->caps[best] = cache->caps[cache->n];
	return buf;
}

/* copy_framed - copy the iovec's bytes into m's frames: each packet's seg
 * bytes (the last's fewer) after frame bytes of room; without frames, the
 * bytes in order, one copy per iovec piece. */
static void copy_framed(struct homa_msgout *m, const struct iovec *iov,
			int iovcnt)
{
	uint8_t *dst = m->data + m->frame;
	/* Bytes left in the current packet (no cut without frames: messages
	 * are far shorter than UINT32_MAX). */
	uint32_t room = m->frame ? m->seg : UINT32_MAX;

	for (int i = 0; i < iovcnt; i++) {
		const uint8_t *src = iov[i].iov_base;
		size_t left = iov[i].iov_len;

		while (left > 0) {
			size_t n = left < room ? left : room;

			memcpy(dst, src, n);
			dst += n;
			src += n;
			left -= n;
			room -= (uint32_t)n;
			if (room == 0) {
				dst += m->frame;
				room = m->seg;
			}
		}
	}
}

/* framed_size - bytes of a message of length bytes in frames. */
static size_t framed_size(uint32_t length, uint32_t seg, uint32_t frame)
{
	return (size_t)length + (size_t)((length + seg - 1) / seg) * frame;
}

/* alloc_framed - m's buffer for a message of length bytes in frames (from
 * cache when one fits) and its shape; the bytes are not written.  Returns
 * 0 or -ENOMEM (m is then empty). */
static int alloc_framed(struct homa_msgout *m, struct homa_msgout_cache *cache,
			uint32_t length, uint32_t seg, uint32_t unsched,
			uint32_t frame)
{
	size_t size = framed_size(length, seg, frame);

	memset(m, 0, sizeof(*m));
	if (size > UINT32_MAX / 2)
		return -ENOMEM;
	m->data = cache_take(cache, (uint32_t)size, &m->cap);
	if (!m->data) {
		m->cap = round_cap((uint32_t)size);
		m->data = homa_malloc(HOMA_ALLOC_MESSAGE, m->cap);
	}
	if (!m->data)
		return -ENOMEM;
	m->frame = frame;
	m->seg = seg;
	m->cache = cache;
	m->length = length;
	m->unscheduled = unsched < length ? unsched : length;
	m->granted = m->unscheduled;
	return 0;
}

int homa_msgout_init_framed(struct homa_msgout *m,
			    struct homa_msgout_cache *cache,
			    const struct iovec *iov, int iovcnt,
			    uint32_t length, uint32_t seg, uint32_t unsched,
			    uint32_t frame)
{
	int err = alloc_framed(m, cache, length, seg, unsched, frame);

	if (err)
		return err;
	copy_framed(m, iov, iovcnt);
	return 0;
}

int homa_msgout_init_lent(struct homa_msgout *m,
			  struct homa_msgout_cache *cache, const uint8_t *src,
			  uint32_t length, uint32_t seg, uint32_t unsched,
			  uint32_t frame)
{
	int err = alloc_framed(m, cache, length, seg, unsched, frame);

	if (err)
		return err;
	m->lent = src;
	return 0;
}

void homa_msgout_settle(struct homa_msgout *m)
{
	while (!homa_msgout_settle_part(m, UINT32_MAX))
		;
}

bool homa_msgout_settle_part(struct homa_msgout *m, uint32_t max_bytes)
{
	uint32_t copied = 0;

	if (!m->lent)
		return true;
	while (m->settled < m->length && copied < max_bytes) {
		uint32_t len = m->length - m->settled < m->seg ?
			       m->length - m->settled : m->seg;

		memcpy(homa_msgout_frame(m, m->settled) + m->frame,
		       m->lent + m->settled, len);
		m->settled += len;
		copied += len;
	}
	if (m->settled < m->length)
		return false;
	m->lent = NULL;
	return true;
}

void homa_msgout_forget_lent(struct homa_msgout *m)
{
	m->lent = NULL;
	m->forgotten = true;
	m->num_resends = 0;
	m->next_offset = m->length;
	m->granted = m->length;
}

int homa_msgout_init_cached(struct homa_msgout *m,
			    struct homa_msgout_cache *cache,
			    const struct iovec *iov, int iovcnt,
			    uint32_t length, uint32_t seg, uint32_t unsched)
{
	return homa_msgout_init_framed(m, cache, iov, iovcnt, length, seg,
				       unsched, 0);
}

int homa_msgout_init(struct homa_msgout *m, const struct iovec *iov,
		     int iovcnt, uint32_t length, uint32_t seg,
		     uint32_t unsched)
{
	return homa_msgout_init_cached(m, NULL, iov, iovcnt, length, seg,
				       unsched);
}

void homa_msgout_free(struct homa_msgout *m)
{
	struct homa_msgout_cache *cache = m->cache;

	if (cache && m->data && m->cap >= HOMA_MSGOUT_CACHE_MIN &&
	    cache->n < HOMA_MSGOUT_CACHE) {
		cache->bufs[cache->n] = m->data;
		cache->caps[cache->n] = m->cap;
		cache->n++;
	} else {
		homa_free(m->data);
	}
	memset(m, 0, sizeof(*m));
}

void homa_msgout_cache_drain(struct homa_msgout_cache *cache)
{
	for (uint32_t i = 0; i < cache->n; i++)
		homa_free(cache->bufs[i]);
	cache->n = 0;
}

bool homa_msgout_grant(struct homa_msgout *m, uint32_t offset)
{
	if (offset > m->length)
		offset = m->length;
	if (offset <= m->granted)
		return false;
	m->granted = offset;
	return true;
}

/* remove_range - delete resend range i, keeping order. */
static void remove_range(struct homa_msgout *m, int i)
{
	memmove(&m->resends[i], &m->resends[i + 1],
		(size_t)(m->num_resends - i - 1) * sizeof(m->resends[0]));
	m->num_resends--;
}

/* absorb - widen range i to cover [start, end). */
static void absorb(struct homa_msgout *m, int i, uint32_t start, uint32_t end)
{
	if (start < m->resends[i].start)
		m->resends[i].start = start;
	if (end > m->resends[i].end)
		m->resends[i].end = end;
}

/* add_range - queue [start, end) for retransmission, merging every range
 * it overlaps or touches (or, when all slots are taken, the last one). */
static void add_range(struct homa_msgout *m, uint32_t start, uint32_t end)
{
	int i, into = -1;

	for (i = 0; i < m->num_resends; i++) {
		if (start > m->resends[i].end || end < m->resends[i].start)
			continue;
		if (into < 0) {
			into = i;
			absorb(m, i, start, end);
		} else {
			absorb(m, into, m->resends[i].start,
			       m->resends[i].end);
			remove_range(m, i);
			i--;
		}
	}
	if (into >= 0)
		return;
	if (m->num_resends == HOMA_MSGOUT_RESENDS) {
		absorb(m, HOMA_MSGOUT_RESENDS - 1, start, end);
		return;
	}
	m->resends[m->num_resends].start = start;
	m->resends[m->num_resends].end = end;
	m->num_resends++;
}

uint32_t homa_msgout_request_resend(struct homa_msgout *m, uint32_t offset,
				    uint32_t len)
{
	uint32_t end;

	if (m->forgotten || offset >= m->next_offset)
		return 0;
	if (len == HOMA_RESEND_ALL || len > m->next_offset - offset)
		end = m->next_offset;
	else
		end = offset + len;
	if (end <= offset)
		return 0;
	offset -= offset % m->seg;
	if (end % m->seg) {
		uint32_t up = m->seg - end % m->seg;

		end = up < m->next_offset - end ? end + up : m->next_offset;
	}
	add_range(m, offset, end);
	return end - offset;
}

void homa_msgout_restart(struct homa_msgout *m)
{
	if (m->forgotten)
		return;
	m->next_offset = 0;
	m->num_resends = 0;
	m->granted = m->unscheduled;
}

bool homa_msgout_has_work(const struct homa_msgout *m)
{
	return m->num_resends > 0 ||
	       (m->next_offset < m->granted && m->next_offset < m->length);
}

bool homa_msgout_fully_sent(const struct homa_msgout *m)
{
	return m->next_offset >= m->length && m->num_resends == 0;
}

/* seg_len - bytes of the packet starting at offset (a packet boundary). */
static uint32_t seg_len(const struct homa_msgout *m, uint32_t offset)
{
	uint32_t left = m->length - offset;

	return left < m->seg ? left : m->seg;
}

bool homa_msgout_next(struct homa_msgout *m, struct homa_segment *s)
{
	if (m->num_resends > 0) {
		s->offset = m->resends[0].start;
		s->len = seg_len(m, s->offset);
		s->count = 1;
		s->retransmit = true;
		m->resends[0].start += s->len;
		if (m->resends[0].start >= m->resends[0].end)
			remove_range(m, 0);
		return true;
	}
	if (m->next_offset >= m->granted || m->next_offset >= m->length)
		return false;
	s->offset = m->next_offset;
	s->len = seg_len(m, s->offset);
	s->count = 1;
	s->retransmit = false;
	m->next_offset += s->len;
	return true;
}

bool homa_msgout_next_run(struct homa_msgout *m, uint32_t max_segs,
			  struct homa_segment *s)
{
	bool unsched;

	if (!homa_msgout_next(m, s))
		return false;
	if (s->retransmit)
		return true;
	unsched = s->offset < m->unscheduled;
	while (s->count < max_segs && m->next_offset < m->granted &&
	       m->next_offset < m->length &&
	       (m->next_offset < m->unscheduled) == unsched) {
		uint32_t len = seg_len(m, m->next_offset);

		s->len += len;
		s->count++;
		m->next_offset += len;
	}
	return true;
}
