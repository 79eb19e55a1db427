/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * homa_preload - the base of the preload shim: the next definition of each
 * interposed call (dlsym RTLD_NEXT), the table from descriptors to Homa
 * sockets, and the fork handler.  See homa_preload.h for the design.
 *
 * The table is a directory of blocks of atomic slots indexed by descriptor,
 * so that the question every interposed call asks first ("is this
 * descriptor Homa?") costs two atomic loads and no lock; entries change
 * under one mutex.  A slot holds a struct pl_sock pointer, with the low bit
 * set for the socket's engine descriptor.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "homa_preload.h"

/* Descriptors the table covers: 0 .. PL_DIR_SIZE * PL_BLOCK_SIZE - 1
 * (4 Mi, more than any RLIMIT_NOFILE in practice). */
#define PL_BLOCK_BITS 10
#define PL_BLOCK_SIZE (1 << PL_BLOCK_BITS)
#define PL_DIR_SIZE   4096
#define PL_MAX_FD     (PL_DIR_SIZE * PL_BLOCK_SIZE)

/* Slot tag of an engine descriptor. */
#define PL_TAG_ENGINE ((uintptr_t)1)

struct pl_next pl_next;

static pthread_once_t pl_once = PTHREAD_ONCE_INIT;

/* The table: dir[i] is NULL or a block of PL_BLOCK_SIZE slots. */
static _Atomic(_Atomic(uintptr_t) *) pl_dir[PL_DIR_SIZE];
static pthread_mutex_t pl_table_lock = PTHREAD_MUTEX_INITIALIZER;

/* Set once a Homa socket exists, cleared in a forked child: while false
 * every call passes through at the cost of one load. */
static atomic_bool pl_active;

/* Set in the child of a fork. */
static atomic_bool pl_child;

/* next - the next definition of name after this library, or NULL. */
static void *next(const char *name)
{
	return dlsym(RTLD_NEXT, name);
}

/*
 * pl_fork_child - in the child of fork: the shim goes inert.  The engine
 * (its progress thread, its locks) did not come along, so every call now
 * passes through: the child's copies of the parent's Homa descriptors are
 * plain descriptors (closing them does not disturb the parent), and new
 * Homa sockets are not made.  The table is left as it is (nothing reads it
 * any more; its sockets stay reachable, which keeps leak checkers quiet).
 * The mutex is made anew in case another thread held it during fork.
 */
static void pl_fork_child(void)
{
	atomic_store(&pl_child, true);
	atomic_store(&pl_active, false);
	pthread_mutex_init(&pl_table_lock, NULL);
}

/* pl_resolve - fill pl_next and register the fork handler. */
static void pl_resolve(void)
{
	struct pl_next *n = &pl_next;

	n->socket = next("socket");
	n->bind = next("bind");
	n->connect = next("connect");
	n->listen = next("listen");
	n->accept = next("accept");
	n->accept4 = next("accept4");
	n->getsockname = next("getsockname");
	n->getpeername = next("getpeername");
	n->setsockopt = next("setsockopt");
	n->getsockopt = next("getsockopt");
	n->shutdown = next("shutdown");
	n->sendmsg = next("sendmsg");
	n->recvmsg = next("recvmsg");
	n->sendmmsg = next("sendmmsg");
	n->recvmmsg = next("recvmmsg");
	n->send = next("send");
	n->recv = next("recv");
	n->sendto = next("sendto");
	n->recvfrom = next("recvfrom");
	n->read = next("read");
	n->write = next("write");
	n->readv = next("readv");
	n->writev = next("writev");
	n->read_chk = next("__read_chk");
	n->recv_chk = next("__recv_chk");
	n->recvfrom_chk = next("__recvfrom_chk");
	n->ioctl = next("ioctl");
	n->close = next("close");
	n->close_range = next("close_range");
	n->dup = next("dup");
	n->dup2 = next("dup2");
	n->dup3 = next("dup3");
	n->fcntl = next("fcntl");
	n->fcntl64 = next("fcntl64");
	if (!n->fcntl64)
		n->fcntl64 = n->fcntl;
	pthread_atfork(NULL, NULL, pl_fork_child);
}

/* The constructor resolves early, before the program's first call. */
__attribute__((constructor)) static void pl_constructor(void)
{
	pl_init();
}

/* See homa_preload.h. */
void pl_init(void)
{
	pthread_once(&pl_once, pl_resolve);
}

/* See homa_preload.h. */
bool pl_in_child(void)
{
	return atomic_load_explicit(&pl_child, memory_order_relaxed);
}

/* See homa_preload.h. */
int pl_nosys(void)
{
	errno = ENOSYS;
	return -1;
}

/*
 * slot_of - the slot of fd; with create, its block is allocated if needed
 * (caller holds pl_table_lock).  NULL when fd is out of range or (without
 * create, or out of memory) its block does not exist.
 */
static _Atomic(uintptr_t) *slot_of(int fd, bool create)
{
	_Atomic(uintptr_t) *blk;

	if (fd < 0 || fd >= PL_MAX_FD)
		return NULL;
	blk = atomic_load_explicit(&pl_dir[fd >> PL_BLOCK_BITS],
				   memory_order_acquire);
	if (!blk && create) {
		blk = calloc(PL_BLOCK_SIZE, sizeof(*blk));
		if (!blk)
			return NULL;
		atomic_store_explicit(&pl_dir[fd >> PL_BLOCK_BITS], blk,
				      memory_order_release);
	}
	return blk ? &blk[fd & (PL_BLOCK_SIZE - 1)] : NULL;
}

/* slot_sock - the socket a slot value names. */
static struct pl_sock *slot_sock(uintptr_t v)
{
	return (struct pl_sock *)(v & ~PL_TAG_ENGINE);
}

/* See homa_preload.h. */
enum pl_kind pl_kind(int fd)
{
	_Atomic(uintptr_t) *slot;
	uintptr_t v;

	pl_init();
	if (!atomic_load_explicit(&pl_active, memory_order_relaxed))
		return PL_NONE;
	slot = slot_of(fd, false);
	if (!slot)
		return PL_NONE;
	v = atomic_load_explicit(slot, memory_order_acquire);
	if (!v)
		return PL_NONE;
	return (v & PL_TAG_ENGINE) ? PL_ENGINE : PL_APP;
}

/* See homa_preload.h. */
int pl_scan(int from, int to, enum pl_kind kind)
{
	if (!atomic_load(&pl_active) || from < 0)
		return -1;
	if (to >= PL_MAX_FD)
		to = PL_MAX_FD - 1;
	for (int fd = from; fd <= to;) {
		_Atomic(uintptr_t) *blk =
			atomic_load(&pl_dir[fd >> PL_BLOCK_BITS]);

		if (!blk) {
			fd = (fd | (PL_BLOCK_SIZE - 1)) + 1;
			continue;
		}
		uintptr_t v = atomic_load(&blk[fd & (PL_BLOCK_SIZE - 1)]);

		if (v && ((v & PL_TAG_ENGINE) ? PL_ENGINE : PL_APP) == kind)
			return fd;
		fd++;
	}
	return -1;
}

/* See homa_preload.h. */
struct pl_sock *pl_get(int fd)
{
	struct pl_sock *s = NULL;
	_Atomic(uintptr_t) *slot;
	uintptr_t v;

	if (pl_kind(fd) != PL_APP)
		return NULL;
	pthread_mutex_lock(&pl_table_lock);
	slot = slot_of(fd, false);
	v = slot ? atomic_load(slot) : 0;
	if (v && !(v & PL_TAG_ENGINE)) {
		s = slot_sock(v);
		atomic_fetch_add(&s->refs, 1);
	}
	pthread_mutex_unlock(&pl_table_lock);
	return s;
}

/* See homa_preload.h. */
void pl_put(struct pl_sock *s)
{
	if (atomic_fetch_sub(&s->refs, 1) != 1)
		return;
	pthread_mutex_destroy(&s->lock);
	free(s);
}

/*
 * forget_locked - clear the application entry at fd (caller holds the
 * table lock).  Returns its socket when that was the socket's last
 * application descriptor (its engine entry is cleared too; the caller
 * closes the engine socket and drops the table's reference), else NULL.
 * *was_app tells whether fd was an application descriptor at all.
 */
static struct pl_sock *forget_locked(int fd, bool *was_app)
{
	_Atomic(uintptr_t) *slot = slot_of(fd, false), *eslot;
	uintptr_t v = slot ? atomic_load(slot) : 0;
	struct pl_sock *s;

	*was_app = false;
	if (!v || (v & PL_TAG_ENGINE))
		return NULL;
	*was_app = true;
	s = slot_sock(v);
	atomic_store(slot, 0);
	if (--s->napp > 0)
		return NULL;
	eslot = slot_of(s->nfd, false);
	if (eslot && atomic_load(eslot) == ((uintptr_t)s | PL_TAG_ENGINE))
		atomic_store(eslot, 0);
	return s;
}

/* close_engine - the last application descriptor of s is gone: close the
 * engine socket and drop the table's reference. */
static void close_engine(struct pl_sock *s)
{
	pl_stats_dump(s->nfd);
	homa_close(s->nfd);
	pl_put(s);
}

/* See homa_preload.h. */
bool pl_forget(int fd)
{
	struct pl_sock *last;
	bool was_app;

	pthread_mutex_lock(&pl_table_lock);
	last = forget_locked(fd, &was_app);
	pthread_mutex_unlock(&pl_table_lock);
	if (last)
		close_engine(last);
	return was_app;
}

/*
 * add_locked - enter fd as an application descriptor of s (caller holds
 * the table lock).  A stale application entry there is forgotten first and
 * returned through *stale when that closes its socket.  Returns 0, ENOMEM
 * or EMFILE (fd beyond the table).
 */
static int add_locked(int fd, struct pl_sock *s, struct pl_sock **stale)
{
	_Atomic(uintptr_t) *slot;
	bool was_app;

	*stale = NULL;
	if (fd < 0 || fd >= PL_MAX_FD)
		return EMFILE;
	slot = slot_of(fd, true);
	if (!slot)
		return ENOMEM;
	if (atomic_load(slot) & PL_TAG_ENGINE)
		return EBADF; /* cannot happen: that number is open */
	*stale = forget_locked(fd, &was_app);
	atomic_store_explicit(slot, (uintptr_t)s, memory_order_release);
	s->napp++;
	return 0;
}

/* See homa_preload.h. */
int pl_add_app(int fd, struct pl_sock *s)
{
	struct pl_sock *stale;
	int err;

	pthread_mutex_lock(&pl_table_lock);
	err = add_locked(fd, s, &stale);
	pthread_mutex_unlock(&pl_table_lock);
	if (stale)
		close_engine(stale);
	return err;
}

/* See homa_preload.h. */
int pl_sock_new(int nfd, int afd, int family, bool nonblock)
{
	struct pl_sock *s = calloc(1, sizeof(*s));
	struct pl_sock *stale1 = NULL, *stale2 = NULL;
	_Atomic(uintptr_t) *eslot;
	int err;

	if (!s)
		return ENOMEM;
	if (pthread_mutex_init(&s->lock, NULL) != 0) {
		free(s);
		return ENOMEM;
	}
	atomic_init(&s->refs, 1);
	s->nfd = nfd;
	s->family = family;
	atomic_init(&s->nonblock, nonblock);
	atomic_init(&s->sndbuf, 212992);
	atomic_init(&s->rcvbuf, 212992);

	pthread_mutex_lock(&pl_table_lock);
	eslot = nfd < PL_MAX_FD ? slot_of(nfd, true) : NULL;
	if (!eslot) {
		err = nfd < PL_MAX_FD ? ENOMEM : EMFILE;
	} else {
		bool was_app;

		/* A stale entry at a fresh number: closed behind our back. */
		stale1 = forget_locked(nfd, &was_app);
		atomic_store(eslot, 0);
		err = add_locked(afd, s, &stale2);
		if (!err)
			atomic_store_explicit(eslot,
					      (uintptr_t)s | PL_TAG_ENGINE,
					      memory_order_release);
	}
	if (!err)
		atomic_store(&pl_active, true);
	pthread_mutex_unlock(&pl_table_lock);
	if (stale1)
		close_engine(stale1);
	if (stale2)
		close_engine(stale2);
	if (err)
		pl_put(s);
	return err;
}
