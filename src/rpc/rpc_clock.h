/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rpc_clock - the clock of deadlines: microseconds on CLOCK_MONOTONIC.
 */
#ifndef RPC_CLOCK_H
#define RPC_CLOCK_H

#include <stdint.h>
#include <time.h>

/* rpc_now_us - microseconds on CLOCK_MONOTONIC. */
static inline int64_t rpc_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* rpc_abs_timespec - the CLOCK_MONOTONIC time @us as a timespec (for
 * pthread_cond_timedwait on a condition using CLOCK_MONOTONIC). */
static inline struct timespec rpc_abs_timespec(int64_t us)
{
	struct timespec ts = { .tv_sec = us / 1000000,
			       .tv_nsec = (long)(us % 1000000) * 1000 };

	return ts;
}

#endif /* RPC_CLOCK_H */
