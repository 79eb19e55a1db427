/* SPDX-License-Identifier: BSD-2-Clause */
/* The in-memory event trace: see homa_trace.h. */
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "homa_trace.h"

/* One recorded event; done is set (release) once the rest is written. */
struct trace_entry {
	uint64_t ns;
	int64_t value;
	int32_t tid;
	int16_t cpu;
	uint8_t event;
	atomic_uchar done;
};

atomic_bool homa_trace_enabled;

static struct trace_entry *entries;
static size_t capacity;
static atomic_size_t next_slot;
static atomic_size_t dropped;
static char *out_path;   /* HOMA_TRACE_FILE, written at exit */

static const char *const names[HOMA_TRACE_EVENT_COUNT] = {
	[HOMA_TRACE_DP_SEND] = "dp_send",
	[HOMA_TRACE_DP_SENT] = "dp_sent",
	[HOMA_TRACE_DP_RECV] = "dp_recv",
	[HOMA_TRACE_SEND_ENTER] = "send_enter",
	[HOMA_TRACE_SETTLE_STEP] = "settle_step",
	[HOMA_TRACE_RECV_ENTER] = "recv_enter",
	[HOMA_TRACE_RECV_LEAVE] = "recv_leave",
	[HOMA_TRACE_LEAD_SLEEP] = "lead_sleep",
	[HOMA_TRACE_LEAD_WAKE] = "lead_wake",
	[HOMA_TRACE_WAIT_SLEEP] = "wait_sleep",
	[HOMA_TRACE_WAIT_WAKE] = "wait_wake",
	[HOMA_TRACE_PASS] = "pass",
	[HOMA_TRACE_PASS_END] = "pass_end",
};

/* See homa_trace.h. */
const char *homa_trace_name(enum homa_trace_event ev)
{
	if ((unsigned)ev >= HOMA_TRACE_EVENT_COUNT)
		return "?";
	return names[ev];
}

/* thread_id - the calling thread's kernel id (one system call per
 * thread, then remembered). */
static int32_t thread_id(void)
{
	static __thread int32_t tid;

	if (tid == 0)
		tid = (int32_t)syscall(SYS_gettid);
	return tid;
}

/* See homa_trace.h. */
void homa_trace_record(enum homa_trace_event ev, long value)
{
	size_t i = atomic_fetch_add_explicit(&next_slot, 1,
					     memory_order_relaxed);
	int saved_errno = errno;
	struct trace_entry *e;
	struct timespec ts;

	if (i >= capacity) {
		atomic_fetch_add_explicit(&dropped, 1, memory_order_relaxed);
		return;
	}
	e = &entries[i];
	clock_gettime(CLOCK_MONOTONIC, &ts);
	e->ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	e->value = value;
	e->tid = thread_id();
	e->cpu = (int16_t)sched_getcpu();
	e->event = (uint8_t)ev;
	atomic_store_explicit(&e->done, 1, memory_order_release);
	errno = saved_errno; /* callers read the errno of their system call */
}

/* See homa_trace.h. */
int homa_trace_start(size_t want)
{
	struct trace_entry *e;

	atomic_store(&homa_trace_enabled, false);
	if (want == 0)
		want = HOMA_TRACE_DEFAULT_EVENTS;
	if (want > HOMA_TRACE_MAX_EVENTS)
		want = HOMA_TRACE_MAX_EVENTS;
	e = calloc(want, sizeof(*e));
	if (!e)
		return -ENOMEM;
	free(entries);
	entries = e;
	capacity = want;
	atomic_store(&next_slot, 0);
	atomic_store(&dropped, 0);
	atomic_store(&homa_trace_enabled, true);
	return 0;
}

/* See homa_trace.h. */
size_t homa_trace_capacity(void)
{
	return capacity;
}

/* See homa_trace.h. */
void homa_trace_stop(void)
{
	atomic_store(&homa_trace_enabled, false);
}

/* See homa_trace.h. */
long homa_trace_write(FILE *f)
{
	size_t n = atomic_load(&next_slot);
	long written = 0;

	if (n > capacity)
		n = capacity;
	if (fprintf(f, "# libhoma trace: %zu events, %zu dropped\n", n,
		    atomic_load(&dropped)) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		const struct trace_entry *e = &entries[i];

		if (!atomic_load_explicit(&e->done, memory_order_acquire))
			continue;
		if (fprintf(f, "%llu %d %d %s %lld\n",
			    (unsigned long long)e->ns, (int)e->tid, (int)e->cpu,
			    homa_trace_name((enum homa_trace_event)e->event),
			    (long long)e->value) < 0)
			return -1;
		written++;
	}
	return written;
}

/* write_at_exit - atexit handler: the trace into HOMA_TRACE_FILE. */
static void write_at_exit(void)
{
	FILE *f;

	homa_trace_stop();
	f = fopen(out_path, "w");
	if (!f || homa_trace_write(f) < 0 || fclose(f) != 0)
		fprintf(stderr, "libhoma: cannot write the trace to %s: %s\n",
			out_path, strerror(errno));
}

/* trace_from_env - at load time: trace when HOMA_TRACE_FILE names a file,
 * keeping HOMA_TRACE_EVENTS events (default HOMA_TRACE_DEFAULT_EVENTS). */
__attribute__((constructor)) static void trace_from_env(void)
{
	const char *path = getenv("HOMA_TRACE_FILE");
	const char *n = getenv("HOMA_TRACE_EVENTS");
	size_t want = 0;

	if (!path || !*path)
		return;
	if (n && *n) {
		char *end;
		unsigned long long v = strtoull(n, &end, 10);

		if (*end != '\0' || v == 0 || v > HOMA_TRACE_MAX_EVENTS)
			fprintf(stderr, "libhoma: ignoring HOMA_TRACE_EVENTS="
				"%s (expected 1..%u)\n", n,
				HOMA_TRACE_MAX_EVENTS);
		else
			want = (size_t)v;
	}
	out_path = strdup(path);
	if (!out_path || homa_trace_start(want) != 0) {
		fprintf(stderr, "libhoma: no memory for the trace\n");
		return;
	}
	if (atexit(write_at_exit) != 0)
		homa_trace_stop();
}
