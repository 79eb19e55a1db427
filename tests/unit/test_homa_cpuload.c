// SPDX-License-Identifier: BSD-2-Clause
/*
 * Unit tests of homa_cpuload (src/sock/homa_cpuload.c): when the library's
 * threads may busy-poll (the evidence of contention and how long it
 * holds), the parsing of the host's CPU pressure, and the scheduler slice
 * of waiting threads.  The test links the socket layer (homa_io); the
 * numbers it judges by are in homa_cpuload.h.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmocka.h>

#include "homa_cpuload.h"
#include "homa_sock.h"

#define MS 1000000ull

static int reset(void **state)
{
	(void)state;
	homa_cpuload_reset();
	return 0;
}

static void homa_cpuload_spin_ok__without_evidence(void **state)
{
	(void)state;
	assert_true(homa_cpuload_spin_ok(1));
	assert_true(homa_cpuload_spin_ok(1000 * MS));
}

static void homa_cpuload_account_spins__descheduled_spins(void **state)
{
	int i;

	(void)state;
	/* 20 spins of 100 us (2 ms) that got 30 us of CPU each. */
	for (i = 0; i < 20; i++)
		homa_cpuload_spin_report(100000, 30000);
	homa_cpuload_account_spins(50 * MS);
	assert_false(homa_cpuload_spin_ok(50 * MS));
	assert_false(homa_cpuload_spin_ok(50 * MS + CPULOAD_HOLD_NS - 1));
	/* No new evidence: it lapses. */
	assert_true(homa_cpuload_spin_ok(50 * MS + CPULOAD_HOLD_NS));
}

static void homa_cpuload_account_spins__spins_that_got_their_cpu(void **state)
{
	int i;

	(void)state;
	/* Half or more in all: one spin that lost its core among many that
	 * kept it is not contention. */
	homa_cpuload_spin_report(500000, 0);
	for (i = 0; i < 10; i++)
		homa_cpuload_spin_report(100000, 90000);
	homa_cpuload_account_spins(50 * MS);
	assert_true(homa_cpuload_spin_ok(50 * MS));
}

static void homa_cpuload_account_spins__too_little_spinning(void **state)
{
	(void)state;
	/* Less than CPULOAD_SPIN_EVIDENCE_NS of spinning is not judged. */
	homa_cpuload_spin_report(CPULOAD_SPIN_EVIDENCE_NS - 1, 0);
	homa_cpuload_account_spins(50 * MS);
	assert_true(homa_cpuload_spin_ok(50 * MS));
}

static void homa_cpuload_account_spins__window_starts_empty(void **state)
{
	int i;

	(void)state;
	for (i = 0; i < 20; i++)
		homa_cpuload_spin_report(100000, 0);
	homa_cpuload_account_spins(50 * MS);
	/* The next window has no evidence of its own. */
	homa_cpuload_account_spins(50 * MS + CPULOAD_HOLD_NS);
	assert_true(homa_cpuload_spin_ok(50 * MS + CPULOAD_HOLD_NS));
}

static void homa_cpuload_spin_report__short_spin_proves_nothing(void **state)
{
	int i;

	(void)state;
	for (i = 0; i < 1000; i++)
		homa_cpuload_spin_report(CPULOAD_SPIN_MIN_NS - 1, 0);
	homa_cpuload_account_spins(50 * MS);
	assert_true(homa_cpuload_spin_ok(50 * MS));
}

static void homa_cpuload_psi_total__some_line(void **state)
{
	uint64_t us = 0;

	(void)state;
	assert_true(homa_cpuload_psi_total(
		"some avg10=1.50 avg60=0.20 avg300=0.00 total=123456789\n"
		"full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n", &us));
	assert_int_equal(us, 123456789);
}

static void homa_cpuload_psi_total__not_a_psi_file(void **state)
{
	uint64_t us = 7;

	(void)state;
	assert_false(homa_cpuload_psi_total("", &us));
	assert_false(homa_cpuload_psi_total("full avg10=0 total=5\n", &us));
	assert_false(homa_cpuload_psi_total("some avg10=0.00\n", &us));
	/* total= of the second line is not the "some" total. */
	assert_false(homa_cpuload_psi_total(
		"some avg10=0.00\nfull total=5\n", &us));
	assert_false(homa_cpuload_psi_total("some total=x\n", &us));
	assert_int_equal(us, 7);
}

static void homa_cpuload_account__first_sample_starts_a_window(void **state)
{
	(void)state;
	/* A huge total at the first sample is the time since boot. */
	homa_cpuload_account(10 * MS, 1000000000);
	assert_true(homa_cpuload_spin_ok(10 * MS));
}

static void homa_cpuload_account__waits_above_half(void **state)
{
	(void)state;
	homa_cpuload_account(10 * MS, 5000);
	/* 10 ms window, 5.5 ms of waiting (55%). */
	homa_cpuload_account(20 * MS, 10500);
	assert_false(homa_cpuload_spin_ok(20 * MS));
	assert_true(homa_cpuload_spin_ok(20 * MS + CPULOAD_HOLD_NS));
}

static void homa_cpuload_account__waits_below_half(void **state)
{
	(void)state;
	homa_cpuload_account(10 * MS, 5000);
	/* 10 ms window, 4.5 ms of waiting (45%). */
	homa_cpuload_account(20 * MS, 9500);
	assert_true(homa_cpuload_spin_ok(20 * MS));
	/* The next window starts where this one ended. */
	homa_cpuload_account(30 * MS, 9500 + 6000);
	assert_false(homa_cpuload_spin_ok(30 * MS));
}

static void homa_cpuload_account__total_going_back(void **state)
{
	(void)state;
	homa_cpuload_account(10 * MS, 900000);
	homa_cpuload_account(20 * MS, 100);
	assert_true(homa_cpuload_spin_ok(20 * MS));
}

static void homa_cpuload_sample__once_per_window(void **state)
{
	(void)state;
	/* Whatever the host's pressure: a window only ends when it is
	 * CPULOAD_WINDOW_NS long. */
	homa_cpuload_sample(10 * MS);
	homa_cpuload_sample(10 * MS + CPULOAD_WINDOW_NS - 1);
	assert_int_equal(homa_cpuload_window_start(), 10 * MS);
	homa_cpuload_sample(10 * MS + CPULOAD_WINDOW_NS);
	assert_int_equal(homa_cpuload_window_start(),
			 10 * MS + CPULOAD_WINDOW_NS);
}

/* slice_now - the calling thread's scheduler slice in ns (0 when the
 * kernel reports none). */
static uint64_t slice_now(void)
{
	struct cpuload_sched_attr a;

	memset(&a, 0, sizeof(a));
	if (syscall(SYS_sched_getattr, 0, &a, sizeof(a), 0) != 0)
		return 0;
	return a.sched_runtime;
}

/* slice_thread - homa_cpuload_wake_slice(300), then (0): reports the
 * slices seen after each into arg[0] and arg[1]. */
static void *slice_thread(void *arg)
{
	uint64_t *seen = arg;

	seen[2] = slice_now();
	homa_cpuload_wake_slice(300);
	seen[0] = slice_now();
	homa_cpuload_wake_slice(0);
	seen[1] = slice_now();
	return NULL;
}

static void homa_cpuload_wake_slice__asks_the_kernel(void **state)
{
	uint64_t seen[3] = { 0, 0, 0 };
	pthread_t t;

	(void)state;
	assert_int_equal(pthread_create(&t, NULL, slice_thread, seen), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	if (seen[2] == 0)
		skip(); /* a kernel before 6.12 reports no slice */
	assert_int_equal(seen[0], 300000);
	/* 0 leaves the thread as it is. */
	assert_int_equal(seen[1], 300000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(homa_cpuload_spin_ok__without_evidence,
				       reset),
		cmocka_unit_test_setup(
			homa_cpuload_account_spins__descheduled_spins, reset),
		cmocka_unit_test_setup(
			homa_cpuload_account_spins__spins_that_got_their_cpu,
			reset),
		cmocka_unit_test_setup(
			homa_cpuload_account_spins__too_little_spinning, reset),
		cmocka_unit_test_setup(
			homa_cpuload_account_spins__window_starts_empty, reset),
		cmocka_unit_test_setup(
			homa_cpuload_spin_report__short_spin_proves_nothing,
			reset),
		cmocka_unit_test(homa_cpuload_psi_total__some_line),
		cmocka_unit_test(homa_cpuload_psi_total__not_a_psi_file),
		cmocka_unit_test_setup(
			homa_cpuload_account__first_sample_starts_a_window,
			reset),
		cmocka_unit_test_setup(
			homa_cpuload_account__waits_above_half, reset),
		cmocka_unit_test_setup(
			homa_cpuload_account__waits_below_half, reset),
		cmocka_unit_test_setup(
			homa_cpuload_account__total_going_back, reset),
		cmocka_unit_test_setup(homa_cpuload_sample__once_per_window,
				       reset),
		cmocka_unit_test(homa_cpuload_wake_slice__asks_the_kernel),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
