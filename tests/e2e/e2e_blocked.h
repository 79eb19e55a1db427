/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * e2e_blocked.h - seeing from the test thread that other threads of the
 * process are blocked in the library, through /proc/self/task/TID, and
 * finding threads by name there.
 *
 * A test that checks that homa_shutdown or homa_close wakes a thread
 * blocked in homa_recvmsg must know that the thread really was blocked
 * (sleeping in the system call the library waits in: ppoll or futex) when
 * the call came.  A blocked call also wakes by itself every so often and
 * then sees the shutdown anyway; to tell the two apart, the test calls
 * homa_shutdown just after the threads began a sleep, when their own
 * wake-up is still far away (e2e_catch_fresh_sleep).
 */
#ifndef E2E_BLOCKED_H
#define E2E_BLOCKED_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* e2e_gettid - the kernel's id of the calling thread. */
pid_t e2e_gettid(void);

/* e2e_threads_named - the threads of this process whose name (comm, as
 * set by prctl PR_SET_NAME) is @name: returns how many there are, and the
 * id of the first one found in *@first (when not NULL and there is one). */
int e2e_threads_named(const char *name, pid_t *first);

/* e2e_thread_blocked - whether thread @tid of this process is asleep
 * (state S) in one of the system calls the library waits in (ppoll, futex).
 * False when /proc cannot tell. */
bool e2e_thread_blocked(pid_t tid);

/* When e2e_catch_fresh_sleep caught the threads. */
struct e2e_fresh_sleep {
	uint64_t at_ms;    /* e2e_now_ms() of the look that caught them */
	unsigned age_ms;   /* each began its sleep at most this long before
			    * at_ms */
};

/*
 * e2e_catch_fresh_sleep - wait up to @ms milliseconds for a moment at which
 * each of the @n threads @tids is blocked (e2e_thread_blocked) in a sleep it
 * began recently: at most 5 ms before at first, the bound growing by 1 ms
 * for every 10 ms of waiting (two threads that each sleep 100 ms at a time
 * are both at most 55 ms into a sleep at some moment of every 100 ms).  A
 * sleep's start is seen as a voluntary context switch since the previous
 * look (every 200 us), and taken to be that previous look.
 * Returns 0 with *@caught filled as soon as such a moment comes, or -1 when
 * none came in @ms.
 */
int e2e_catch_fresh_sleep(const pid_t *tids, int n, unsigned ms,
			  struct e2e_fresh_sleep *caught);

#endif /* E2E_BLOCKED_H */
