/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * homa_cpuload.h - the numbers homa_cpuload.c judges by, and what its unit
 * test (tests/unit/test_homa_cpuload.c) reads of its state.  The calls
 * themselves are declared in homa_sock.h, with the rest of the socket
 * layer's.
 */
#ifndef HOMA_CPULOAD_H
#define HOMA_CPULOAD_H

#include <stdint.h>

/* The PSI sampling window: long enough that one sample averages many
 * scheduler slices, short enough to follow a load that comes and goes. */
#define CPULOAD_WINDOW_NS 10000000ull

/* How long one piece of evidence keeps spinning off: two windows, so a
 * load that persists is confirmed by the next sample before it lapses. */
#define CPULOAD_HOLD_NS (2 * CPULOAD_WINDOW_NS)

/* A window is contended when runnable threads waited for a CPU during
 * more than this share of it (percent): more often than not, no core was
 * free.  Measured on a 2-core host: two CPU-bound processes, 77-88%; a
 * guest under emulation using 1.2 cores, 16-26% (a spinner still finds a
 * free core there, and halves a round trip); our own threads on an idle
 * host, a few percent. */
#define CPULOAD_STALL_SHARE 50

/* A spin counts only when it lasted at least this long: shorter ones
 * say little (one slice boundary in it halves its share). */
#define CPULOAD_SPIN_MIN_NS 20000ull

/* Without PSI, a window is judged only when its spins lasted this long in
 * all (a tenth of the window): less is too little to go by. */
#define CPULOAD_SPIN_EVIDENCE_NS (CPULOAD_WINDOW_NS / 10)

/*
 * The kernel's struct sched_attr (sched_setattr(2)), declared here: the C
 * library has no wrapper, and <linux/sched/types.h> clashes with <sched.h>
 * on some systems.
 */
struct cpuload_sched_attr {
	uint32_t size;
	uint32_t sched_policy;
	uint64_t sched_flags;
	int32_t sched_nice;
	uint32_t sched_priority;
	uint64_t sched_runtime;  /* SCHED_OTHER: the slice asked for (ns) */
	uint64_t sched_deadline;
	uint64_t sched_period;
};

/* homa_cpuload_window_start - where the current sampling window began (ns;
 * 0 before the first sample).  The progress thread (and tests). */
uint64_t homa_cpuload_window_start(void);

#endif /* HOMA_CPULOAD_H */
