/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests of the event trace (src/io/homa_trace.c, linked from
 * homa_io), in code order, named <function>__<case>.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <sys/syscall.h>
#include <unistd.h>

#include "homa_trace.h"

/* written - homa_trace_write into memory: the text, NUL-terminated (free
 * it), and the count it returned in *n. */
static char *written(long *n)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	*n = homa_trace_write(f);
	assert_int_equal(fclose(f), 0);
	return buf;
}

/* Every event has a name of its own; an unknown one is "?". */
static void homa_trace_name__every_event(void **state)
{
	(void)state;
	for (int ev = 0; ev < HOMA_TRACE_EVENT_COUNT; ev++) {
		const char *name = homa_trace_name(ev);

		assert_non_null(name);
		assert_true(name[0] != '\0');
		assert_string_not_equal(name, "?");
		for (int other = 0; other < ev; other++)
			assert_string_not_equal(homa_trace_name(other), name);
	}
	assert_string_equal(homa_trace_name(HOMA_TRACE_EVENT_COUNT), "?");
	assert_string_equal(homa_trace_name(HOMA_TRACE_DP_SEND), "dp_send");
}

/* Off (before any start, and after a stop) nothing is recorded. */
static void homa_trace__off_records_nothing(void **state)
{
	long n;
	char *text;

	(void)state;
	assert_false(atomic_load(&homa_trace_enabled));
	homa_trace(HOMA_TRACE_RECV_ENTER, 0);
	text = written(&n); /* neither kept nor counted as dropped */
	assert_int_equal(n, 0);
	assert_string_equal(text, "# libhoma trace: 0 events, 0 dropped\n");
	free(text);
	assert_int_equal(homa_trace_start(8), 0);
	homa_trace(HOMA_TRACE_RECV_ENTER, 0);
	homa_trace_stop();
	homa_trace(HOMA_TRACE_RECV_LEAVE, 5);
	text = written(&n);
	assert_int_equal(n, 1);
	assert_non_null(strstr(text, "# libhoma trace: 1 events, 0 dropped\n"));
	assert_non_null(strstr(text, " recv_enter 0\n"));
	assert_null(strstr(text, "recv_leave"));
	free(text);
}

/* Events come out in order with their values, thread and a time that
 * does not go back; past the capacity they are dropped and counted. */
static void homa_trace_write__events_in_order_then_dropped(void **state)
{
	unsigned long long t[4], last = 0;
	char name[32], *text, *line;
	int tid, cpu, got = 0;
	long n, value;

	(void)state;
	assert_int_equal(homa_trace_start(4), 0);
	for (int i = 0; i < 6; i++)
		homa_trace(HOMA_TRACE_DP_SENT, 100 + i);
	homa_trace_stop();
	text = written(&n);
	assert_int_equal(n, 4);
	line = strchr(text, '\n');
	assert_non_null(line);
	assert_memory_equal(text, "# libhoma trace: 4 events, 2 dropped",
			    line - text);
	for (line = line + 1; *line; line = strchr(line, '\n') + 1) {
		assert_int_equal(sscanf(line, "%llu %d %d %31s %ld", &t[got],
					&tid, &cpu, name, &value), 5);
		assert_string_equal(name, "dp_sent");
		assert_int_equal(value, 100 + got);
		assert_int_equal(tid, (int)syscall(SYS_gettid));
		assert_true(cpu >= 0);
		assert_true(t[got] >= last);
		last = t[got++];
	}
	assert_int_equal(got, 4);
	free(text);
}

/* A start drops the trace before it; 0 asks for the default capacity. */
static void homa_trace_start__anew_and_capped(void **state)
{
	long n;
	char *text;

	(void)state;
	assert_int_equal(homa_trace_start(4), 0);
	homa_trace(HOMA_TRACE_PASS, 1);
	assert_int_equal(homa_trace_start(0), 0);
	assert_int_equal(homa_trace_capacity(), HOMA_TRACE_DEFAULT_EVENTS);
	homa_trace(HOMA_TRACE_PASS_END, 1);
	homa_trace_stop();
	text = written(&n);
	assert_int_equal(n, 1);
	assert_non_null(strstr(text, " pass_end 1\n"));
	free(text);
	assert_int_equal(homa_trace_start(1), 0); /* small again */
	assert_int_equal(homa_trace_capacity(), 1);
	homa_trace_stop();
}

/* Recording keeps the caller's errno (the datapath reads the errno of
 * the system call it traced). */
static void homa_trace_record__keeps_errno(void **state)
{
	(void)state;
	assert_int_equal(homa_trace_start(2), 0);
	errno = EAGAIN;
	homa_trace(HOMA_TRACE_DP_RECV, -1);
	assert_int_equal(errno, EAGAIN);
	homa_trace_stop();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(homa_trace_name__every_event),
		cmocka_unit_test(homa_trace__off_records_nothing),
		cmocka_unit_test(homa_trace_write__events_in_order_then_dropped),
		cmocka_unit_test(homa_trace_start__anew_and_capped),
		cmocka_unit_test(homa_trace_record__keeps_errno),
	};

	return cmocka_run_group_tests_name("homa_trace", tests, NULL, NULL);
}
