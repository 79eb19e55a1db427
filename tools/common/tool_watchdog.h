/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tool_watchdog - a time budget for each stage of a tool's run.  A stage
 * names itself and arms SIGALRM; when the alarm fires the stage overran:
 * the watchdog writes the tool's message and the stage's name to stderr
 * and ends the process with exit status 1 (a failed run, as the tools
 * document), without waiting for the threads that hang.
 */
#ifndef TOOL_WATCHDOG_H
#define TOOL_WATCHDOG_H

/*
 * tool_watchdog_install - route SIGALRM to the watchdog and ignore SIGPIPE
 * (a peer that went away shows as EPIPE).  message starts the line the
 * watchdog writes (e.g. "homa-perf: watchdog: stage over its time budget:
 * "); it must stay valid (a string literal).  No stage is armed yet.
 */
void tool_watchdog_install(const char *message);

/*
 * tool_watchdog_stage - a stage named by fmt (printf-style, cut at 159
 * characters) starts now and must end within seconds; 0 disarms the
 * watchdog.  Call from one thread only.
 */
void tool_watchdog_stage(unsigned int seconds, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif /* TOOL_WATCHDOG_H */
