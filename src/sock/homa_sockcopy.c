// SPDX-License-Identifier: BSD-2-Clause
/*
 * Payload copies into the application's buffer region that survive the
 * application taking the memory away (unmapping it, or making it
 * read-only, while the socket is open): a copy that faults returns to the
 * copier instead of killing the process, as the kernel's copy_to_user
 * fails with EFAULT for kernel Homa.  The core then fails the RPC with
 * EFAULT (homa_ep_params.copier).
 *
 * How: each batch of copies runs under sigsetjmp (without saving the
 * signal mask: no system call), with the thread's current destination
 * range in thread-local variables.  A SIGSEGV or SIGBUS handler
 * (SA_NODEFER, so that leaving it by siglongjmp leaves no signal blocked)
 * jumps back when the faulting address lies in the range of the copy this
 * thread is making; any other fault goes to the handler that was there
 * before (or, with none, to the default action, which then ends the
 * process as it would have without this one).  Each thread checks the
 * SIGSEGV handler (one sigaction call) before a batch at most once per
 * millisecond, and both are put back on top when the application
 * installed its own since: the application's then gets every fault but
 * those of the copies.  (Checking before every batch cost a receiver
 * reading one packet at a time enough that the end-to-end loss-stress
 * test, 16 RPCs of up to 1 MB in flight on a loaded 2-core machine, lost
 * packets in its socket buffers and timed out; with the clock check it
 * passes as with memcpy.)
 */

#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>

#include "homa_sock.h"

/* The copy this thread makes now (copy_jmp NULL: none).  Volatile: the
 * handler reads them, which the compiler cannot see (memcpy is a builtin
 * it knows reads none of them, so the stores would be dropped). */
static _Thread_local sigjmp_buf *volatile copy_jmp;
static _Thread_local const char *volatile copy_lo;
static _Thread_local const char *volatile copy_hi;

/* The handlers found at installation, for faults that are not ours. */
static struct sigaction old_segv, old_bus;
static pthread_mutex_t install_lock = PTHREAD_MUTEX_INITIALIZER;

/* pass_on - a fault that is not a guarded copy's: to the handler that was
 * installed before ours, or to the default action (the fault happens
 * again once the handler returns, and then ends the process). */
static void pass_on(int sig, siginfo_t *si, void *uc)
{
	const struct sigaction *old = sig == SIGSEGV ? &old_segv : &old_bus;

	if (old->sa_flags & SA_SIGINFO) {
		old->sa_sigaction(sig, si, uc);
		return;
	}
	if (old->sa_handler != SIG_DFL && old->sa_handler != SIG_IGN) {
		old->sa_handler(sig);
		return;
	}
	signal(sig, SIG_DFL);
}

/* on_fault - the SIGSEGV and SIGBUS handler. */
static void on_fault(int sig, siginfo_t *si, void *uc)
{
	sigjmp_buf *j = copy_jmp;
	const char *a = si->si_addr;

	if (j && a >= copy_lo && a < copy_hi) {
		copy_jmp = NULL;
		siglongjmp(*j, 1);
	}
	pass_on(sig, si, uc);
}

/* ours - true when on_fault handles sig now. */
static bool ours(int sig)
{
	struct sigaction cur;

	return sigaction(sig, NULL, &cur) == 0 &&
	       (cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_fault;
}

/* install_one - put on_fault on top of sig's handler (kept in *old for
 * the faults that are not ours), unless it is there. */
static void install_one(int sig, struct sigaction *old)
{
	struct sigaction sa, prev;

	if (ours(sig))
		return;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_fault;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	if (sigaction(sig, &sa, &prev) == 0)
		*old = prev;
}

/* install - make sure the handlers are on top (see the head comment). */
static void install(void)
{
	if (ours(SIGSEGV))
		return;
	pthread_mutex_lock(&install_lock);
	install_one(SIGSEGV, &old_segv);
	install_one(SIGBUS, &old_bus);
	pthread_mutex_unlock(&install_lock);
}

/* CHECK_NS - how often a thread checks that the handlers are on top. */
#define CHECK_NS 1000000ull

/* install_due - install, at most once per CHECK_NS per thread. */
static void install_due(void)
{
	static _Thread_local uint64_t next;
	struct timespec t;
	uint64_t now;

	clock_gettime(CLOCK_MONOTONIC, &t);
	now = (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
	if (now < next)
		return;
	next = now + CHECK_NS;
	install();
}

#if defined(__SANITIZE_THREAD__)
/* Under ThreadSanitizer, whose signal interception crashed when a copy's
 * handler was left by siglongjmp (test_e2e_region's read-only case after
 * the others, kapi_region), the copies are plain memcpy: a region taken
 * away then kills the process, as before. */
uint32_t homa_sock_copy(void *ctx, const struct homa_ep_copy *c, uint32_t n)
{
	(void)ctx;
	(void)install_due;
	for (uint32_t i = 0; i < n; i++)
		memcpy(c[i].dst, c[i].src, c[i].len);
	return n;
}
#else
/* See homa_sock.h. */
uint32_t homa_sock_copy(void *ctx, const struct homa_ep_copy *c, uint32_t n)
{
	volatile uint32_t i = 0;
	sigjmp_buf jb;

	(void)ctx;
	install_due();
	if (sigsetjmp(jb, 0) != 0)
		return i;               /* copy i faulted (copy_jmp cleared) */
	copy_jmp = &jb;
	for (; i < n; i++) {
		copy_lo = c[i].dst;
		copy_hi = copy_lo + c[i].len;
		memcpy(c[i].dst, c[i].src, c[i].len);
	}
	copy_jmp = NULL;
	return n;
}
#endif
