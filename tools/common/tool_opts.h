/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tool_opts - command-line checks the tools share.  A mistake prints
 * "PROGRAM: what is wrong" and "Try 'PROGRAM --help'." on stderr and
 * exits with status 2.
 */
#ifndef TOOL_OPTS_H
#define TOOL_OPTS_H

#include <getopt.h>

/* tool_opt_program - the name the messages start with ("homa-perf"); set
 * it before any other call.  name must stay valid. */
void tool_opt_program(const char *name);

/* tool_opt_fail - print the printf-style complaint and exit 2. */
_Noreturn void tool_opt_fail(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

/* tool_opt_long - the value of option --name given as arg: an integer in
 * lo..hi, or exit 2. */
long tool_opt_long(const char *name, const char *arg, long lo, long hi);

/* tool_opt_double - the value of option --name given as arg: a number in
 * [lo, hi] (above lo when open is set), or exit 2. */
double tool_opt_double(const char *name, const char *arg, double lo,
		       double hi, int open);

/* tool_opt_check_value - exit 2 when option --name got an option ("--x")
 * as its value: it was most likely given none. */
void tool_opt_check_value(const char *name, const char *arg);

/*
 * tool_opt_reject - exit 2 for what getopt_long answered with '?': an
 * option of longs (the one whose val is optopt) that needs a value or
 * takes none, else the unknown word (argv[optind - 1]).
 */
_Noreturn void tool_opt_reject(const struct option *longs, int optopt,
			       const char *word);

#endif /* TOOL_OPTS_H */
