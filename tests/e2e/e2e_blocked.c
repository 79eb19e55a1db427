/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * e2e_blocked.c - other threads blocked in the library, seen through
 * /proc/self/task/TID (see e2e_blocked.h).
 */
#include "e2e_blocked.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Threads e2e_catch_fresh_sleep watches at most. */
#define WATCH_MAX 8

/* Time between two looks at the watched threads (ns). */
#define LOOK_NS 200000

/* What one look at a thread shows. */
struct thread_look {
	bool blocked;            /* asleep in a wait of the library */
	uint64_t switches;       /* voluntary context switches so far */
};

/* A watched thread (e2e_catch_fresh_sleep). */
struct watched {
	pid_t tid;
	uint64_t switches;       /* at the previous look */
	uint64_t prev_ns;        /* time of the previous look, 0 = none */
	uint64_t since_ns;       /* its sleep began after this; 0 = unknown */
};

pid_t e2e_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* now_ns - CLOCK_MONOTONIC in ns (e2e_now_ms's clock). */
static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* is_wait_call - whether system call number nr is one the library sleeps
 * in: ppoll (a receiver reading the socket) or futex (a condition
 * variable or a lock). */
static bool is_wait_call(long nr)
{
	if (nr == SYS_ppoll || nr == SYS_futex)
		return true;
#ifdef SYS_ppoll_time64
	if (nr == SYS_ppoll_time64)
		return true;
#endif
#ifdef SYS_futex_time64
	if (nr == SYS_futex_time64)
		return true;
#endif
	return false;
}

/* task_file - open /proc/self/task/tid/name for reading (NULL when it
 * cannot be). */
static FILE *task_file(pid_t tid, const char *name)
{
	char path[64];

	snprintf(path, sizeof path, "/proc/self/task/%d/%s", (int)tid, name);
	return fopen(path, "r");
}

int e2e_threads_named(const char *name, pid_t *first)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int found = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)) != NULL) {
		pid_t tid = (pid_t)atoi(e->d_name);
		char comm[32] = "";
		FILE *f;

		if (tid <= 0)
			continue;
		f = task_file(tid, "comm");
		if (!f)
			continue;
		if (fgets(comm, sizeof comm, f)) {
			comm[strcspn(comm, "\n")] = '\0';
			if (strcmp(comm, name) == 0 && found++ == 0 && first)
				*first = tid;
		}
		fclose(f);
	}
	closedir(d);
	return found;
}

/* read_status - from thread tid's status: whether it is sleeping (state
 * S) and its voluntary context switches.  Returns false when unreadable. */
static bool read_status(pid_t tid, bool *sleeping, uint64_t *switches)
{
	FILE *f = task_file(tid, "status");
	char line[256];
	unsigned long long n;
	char state;
	int found = 0;

	if (!f)
		return false;
	while (fgets(line, sizeof line, f)) {
		if (sscanf(line, "State: %c", &state) == 1) {
			*sleeping = state == 'S';
			found |= 1;
		} else if (sscanf(line, "voluntary_ctxt_switches: %llu",
				  &n) == 1) {
			*switches = n;
			found |= 2;
		}
	}
	fclose(f);
	return found == 3;
}

/* in_wait_call - whether thread tid is inside a system call the library
 * sleeps in (its syscall file starts with that call's number; "running"
 * or an unreadable file say no). */
static bool in_wait_call(pid_t tid)
{
	FILE *f = task_file(tid, "syscall");
	long nr;
	bool in = false;

	if (!f)
		return false;
	if (fscanf(f, "%ld", &nr) == 1)
		in = is_wait_call(nr);
	fclose(f);
	return in;
}

/* look_at - one look at thread tid.  Returns false when /proc cannot
 * tell. */
static bool look_at(pid_t tid, struct thread_look *l)
{
	bool sleeping = false;

	if (!read_status(tid, &sleeping, &l->switches))
		return false;
	l->blocked = sleeping && in_wait_call(tid);
	return true;
}

bool e2e_thread_blocked(pid_t tid)
{
	struct thread_look l;

	return look_at(tid, &l) && l.blocked;
}

/* watch_update - look at w at time now: note when its current sleep
 * began (the previous look, if it went to sleep again since; unknown when
 * it is not asleep in a wait).  Returns whether it is blocked. */
static bool watch_update(struct watched *w, uint64_t now)
{
	struct thread_look l;

	if (!look_at(w->tid, &l) || !l.blocked) {
		w->since_ns = 0;
	} else if (w->prev_ns && l.switches != w->switches) {
		w->since_ns = w->prev_ns;
	}
	w->switches = l.switches;
	w->prev_ns = now;
	return w->since_ns != 0;
}

/* oldest_sleep_ms - the age (ms, rounded up) at now of the oldest of the
 * n threads' current sleeps; UINT32_MAX when one is not known to be
 * blocked.  Looks at every thread. */
static uint32_t oldest_sleep_ms(struct watched *w, int n, uint64_t now)
{
	uint64_t oldest = 0;
	bool all = true;

	for (int i = 0; i < n; i++) {
		if (!watch_update(&w[i], now))
			all = false;
		else if (now - w[i].since_ns > oldest)
			oldest = now - w[i].since_ns;
	}
	return all ? (uint32_t)((oldest + 999999) / 1000000) : UINT32_MAX;
}

int e2e_catch_fresh_sleep(const pid_t *tids, int n, unsigned ms,
			  struct e2e_fresh_sleep *caught)
{
	const struct timespec pause = { 0, LOOK_NS };
	struct watched w[WATCH_MAX];
	uint64_t start = now_ns();

	if (n < 1 || n > WATCH_MAX)
		return -1;
	memset(w, 0, sizeof w);
	for (int i = 0; i < n; i++)
		w[i].tid = tids[i];
	for (;;) {
		uint64_t now = now_ns();
		uint64_t waited_ms = (now - start) / 1000000;
		uint32_t age = oldest_sleep_ms(w, n, now);

		if (age <= 5 + waited_ms / 10) {
			caught->at_ms = now / 1000000;
			caught->age_ms = age;
			return 0;
		}
		if (waited_ms >= ms)
			return -1;
		nanosleep(&pause, NULL);
	}
}
