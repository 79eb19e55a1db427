/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tool_clock - time for the tools: the monotonic clock in nanoseconds,
 * sleeping until a point of it, the CPU time the process has used, and
 * deadlines on the real-time clock.
 */
#ifndef TOOL_CLOCK_H
#define TOOL_CLOCK_H

#include <stdint.h>
#include <time.h>

#define TOOL_NS_PER_S 1000000000ull

/* tool_now_ns - CLOCK_MONOTONIC in nanoseconds. */
uint64_t tool_now_ns(void);

/* tool_sleep_until - sleep until CLOCK_MONOTONIC reaches t (ns); returns
 * at once when t has passed.  Signals do not cut the sleep short. */
void tool_sleep_until(uint64_t t);

/* tool_cpu_ns - user + system CPU time of the whole process in ns (0 when
 * getrusage fails). */
uint64_t tool_cpu_ns(void);

/* tool_realtime_deadline - CLOCK_REALTIME ms milliseconds from now, as
 * absolute timeouts (pthread_timedjoin_np, ...) take it. */
struct timespec tool_realtime_deadline(unsigned int ms);

#endif /* TOOL_CLOCK_H */
