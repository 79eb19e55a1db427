/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * homa_cpuload - whether busy-polling pays right now.  A thread that spins
 * waiting for a packet gains a few microseconds on a host with a core to
 * spare; on a host whose cores are all wanted it takes a core from another
 * runnable thread (often the very peer it waits for), and the scheduler
 * charges it for the time: once it does sleep, its wake-up waits behind the
 * other threads' slices (milliseconds).  A thread that sleeps at once
 * keeps its claim and is run at once when woken, as a blocking TCP reader
 * is.  So the library's threads busy-poll only while the host is not
 * contended.
 *
 * The process holds one verdict, "contended until T", set by the progress
 * thread once per CPULOAD_WINDOW_NS from one of two kinds of evidence:
 *   - where Linux PSI is on, the host's CPU pressure (/proc/pressure/cpu:
 *     the time some runnable thread waited for a CPU): a window in which
 *     runnable threads waited more than CPULOAD_STALL_SHARE of the time is
 *     contended;
 *   - where it is off, the spins' own account: spinning threads add up
 *     their wall-clock and CPU time, and a window whose spins got less
 *     than half of their wall time as CPU time (over at least
 *     CPULOAD_SPIN_EVIDENCE_NS of spinning) is contended, because another
 *     thread wanted those cores.  One spin proves nothing: on an idle
 *     host an interrupt or one of our own threads takes a core from a
 *     spinner now and then.
 * A contended window sets the verdict for CPULOAD_HOLD_NS; it lapses by
 * itself when no new evidence comes, so spinning resumes within that time
 * after the load goes away.  Reading the verdict is one atomic load.
 */
#include <fcntl.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "homa_cpuload.h"
#include "homa_sock.h"

static struct {
	atomic_ullong contended_until; /* ns; 0 = never contended */
	atomic_ullong spin_wall_ns;    /* the window's spins: wall time ... */
	atomic_ullong spin_cpu_ns;     /* ... and the CPU time they got */
	/* The sampler's own state (the progress thread only). */
	int psi_fd;                    /* /proc/pressure/cpu, -1 = none */
	bool psi_opened;               /* the open was tried */
	uint64_t win_start;            /* ns, 0 = no window yet */
	uint64_t win_stall_us;         /* the PSI total at win_start */
} load = { .psi_fd = -1 };

/* mark_contended - spinning is off until now + CPULOAD_HOLD_NS. */
static void mark_contended(uint64_t now)
{
	atomic_store_explicit(&load.contended_until, now + CPULOAD_HOLD_NS,
			      memory_order_relaxed);
}

/* See homa_sock.h. */
bool homa_cpuload_spin_ok(uint64_t now)
{
	return atomic_load_explicit(&load.contended_until,
				    memory_order_relaxed) <= now;
}

/* See homa_sock.h. */
uint64_t homa_cpuload_thread_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* See homa_sock.h. */
void homa_cpuload_spin_report(uint64_t wall_ns, uint64_t cpu_ns)
{
	if (wall_ns < CPULOAD_SPIN_MIN_NS)
		return;
	atomic_fetch_add_explicit(&load.spin_wall_ns, wall_ns,
				  memory_order_relaxed);
	atomic_fetch_add_explicit(&load.spin_cpu_ns, cpu_ns < wall_ns ?
				  cpu_ns : wall_ns, memory_order_relaxed);
}

/* See homa_sock.h. */
void homa_cpuload_account_spins(uint64_t now)
{
	uint64_t wall = atomic_exchange(&load.spin_wall_ns, 0);
	uint64_t cpu = atomic_exchange(&load.spin_cpu_ns, 0);

	if (wall >= CPULOAD_SPIN_EVIDENCE_NS && cpu < wall / 2)
		mark_contended(now);
}

/* See homa_sock.h. */
bool homa_cpuload_psi_total(const char *text, uint64_t *out)
{
	const char *p, *eol;
	uint64_t v;
	char *end;

	/* "some avg10=0.00 avg60=0.00 avg300=0.00 total=12345\n..." */
	if (strncmp(text, "some ", 5) != 0)
		return false;
	p = strstr(text, "total=");
	eol = strchr(text, '\n');
	if (!p || (eol && p > eol))
		return false;
	v = strtoull(p + 6, &end, 10);
	if (end == p + 6)
		return false;
	*out = v;
	return true;
}

/*
 * psi_stall_us - the "some" total of /proc/pressure/cpu: microseconds
 * during which at least one runnable thread waited for a CPU, since boot.
 * Returns false when PSI is not available (no file, or psi=0 at boot: the
 * read fails with EOPNOTSUPP) or the text is not understood.
 */
static bool psi_stall_us(uint64_t *out)
{
	char buf[256];
	ssize_t n;

	if (!load.psi_opened) {
		load.psi_opened = true;
		load.psi_fd = open("/proc/pressure/cpu", O_RDONLY | O_CLOEXEC);
	}
	if (load.psi_fd < 0)
		return false;
	n = pread(load.psi_fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	return homa_cpuload_psi_total(buf, out);
}

/* See homa_sock.h. */
void homa_cpuload_account(uint64_t now, uint64_t stall_us)
{
	uint64_t wall = now - load.win_start;

	if (load.win_start && stall_us >= load.win_stall_us &&
	    (stall_us - load.win_stall_us) * 1000u * 100u >
	    wall * CPULOAD_STALL_SHARE)
		mark_contended(now);
	load.win_start = now;
	load.win_stall_us = stall_us;
}

/* See homa_sock.h. */
void homa_cpuload_sample(uint64_t now)
{
	uint64_t stall;

	if (load.win_start && now - load.win_start < CPULOAD_WINDOW_NS)
		return;
	if (psi_stall_us(&stall)) {
		homa_cpuload_account(now, stall);
		return;
	}
	if (load.win_start)
		homa_cpuload_account_spins(now);
	load.win_start = now;
}

/* See homa_sock.h. */
void homa_cpuload_reset(void)
{
	atomic_store(&load.contended_until, 0);
	atomic_store(&load.spin_wall_ns, 0);
	atomic_store(&load.spin_cpu_ns, 0);
	load.win_start = 0;
	load.win_stall_us = 0;
}

/* See homa_cpuload.h. */
uint64_t homa_cpuload_window_start(void)
{
	return load.win_start;
}

/* The slice this thread last asked for (us), 0 = none asked. */
static _Thread_local uint32_t thread_slice_us;

/* See homa_sock.h. */
void homa_cpuload_wake_slice(uint32_t usecs)
{
	struct cpuload_sched_attr a;

	/* Asked already (the common case: every wait asks): no system
	 * call. */
	if (usecs == 0 || usecs == thread_slice_us)
		return;
	thread_slice_us = usecs;
	/* Only a normal thread: a real-time or batch one keeps what the
	 * application chose. */
	if (sched_getscheduler(0) != SCHED_OTHER)
		return;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.sched_policy = SCHED_OTHER;
	a.sched_nice = getpriority(PRIO_PROCESS, 0);
	a.sched_runtime = (uint64_t)usecs * 1000u;
	(void)syscall(SYS_sched_setattr, 0, &a, 0);
}
