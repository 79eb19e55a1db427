// SPDX-License-Identifier: BSD-2-Clause
/* Time for the tools: see tool_clock.h. */

#include <errno.h>
#include <sys/resource.h>

#include "tool_clock.h"

uint64_t tool_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * TOOL_NS_PER_S + (uint64_t)ts.tv_nsec;
}

void tool_sleep_until(uint64_t t)
{
	struct timespec ts = { .tv_sec = (time_t)(t / TOOL_NS_PER_S),
			       .tv_nsec = (long)(t % TOOL_NS_PER_S) };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL)
	       == EINTR)
		;
}

uint64_t tool_cpu_ns(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) < 0)
		return 0;
	return ((uint64_t)ru.ru_utime.tv_sec + (uint64_t)ru.ru_stime.tv_sec)
	       * TOOL_NS_PER_S + ((uint64_t)ru.ru_utime.tv_usec +
				  (uint64_t)ru.ru_stime.tv_usec) * 1000u;
}

struct timespec tool_realtime_deadline(unsigned int ms)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	t.tv_sec += ms / 1000;
	t.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (t.tv_nsec >= 1000000000L) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000L;
	}
	return t;
}
