// SPDX-License-Identifier: BSD-2-Clause
/* Time budgets of a tool's stages: see tool_watchdog.h. */

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tool_watchdog.h"

static const char *watchdog_message = "watchdog: ";
static char stage_name[160] = "start-up";

/* watchdog_fire - SIGALRM: name the stage that overran and exit 1 (only
 * async-signal-safe calls). */
static void watchdog_fire(int sig)
{
	ssize_t ignored;

	(void)sig;
	ignored = write(STDERR_FILENO, watchdog_message,
			strlen(watchdog_message));
	ignored = write(STDERR_FILENO, stage_name,
			strnlen(stage_name, sizeof(stage_name)));
	ignored = write(STDERR_FILENO, "\n", 1);
	(void)ignored;
	_exit(1);
}

void tool_watchdog_install(const char *message)
{
	struct sigaction sa;

	watchdog_message = message;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = watchdog_fire;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

void tool_watchdog_stage(unsigned int seconds, const char *fmt, ...)
{
	va_list ap;

	alarm(0);
	va_start(ap, fmt);
	vsnprintf(stage_name, sizeof(stage_name), fmt, ap);
	va_end(ap);
	alarm(seconds);
}
