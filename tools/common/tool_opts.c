// SPDX-License-Identifier: BSD-2-Clause
/* Command-line checks of the tools: see tool_opts.h. */

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tool_opts.h"

static const char *program = "tool";

void tool_opt_program(const char *name)
{
	program = name;
}

void tool_opt_fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", program);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry '%s --help'.\n", program);
	exit(2);
}

long tool_opt_long(const char *name, const char *arg, long lo, long hi)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno != 0 || end == arg || *end != '\0' || v < lo || v > hi)
		tool_opt_fail("--%s: expected an integer in %ld..%ld, got "
			      "'%s'", name, lo, hi, arg);
	return v;
}

double tool_opt_double(const char *name, const char *arg, double lo,
		       double hi, int open)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno != 0 || end == arg || *end != '\0' || isnan(v) || v < lo ||
	    v > hi || (open && v == lo))
		tool_opt_fail("--%s: expected a number %s %g and at most %g, "
			      "got '%s'", name, open ? "above" : "of at least",
			      lo, hi, arg);
	return v;
}

void tool_opt_check_value(const char *name, const char *arg)
{
	if (arg && strncmp(arg, "--", 2) == 0)
		tool_opt_fail("option --%s needs a value (not '%s')", name,
			      arg);
}

void tool_opt_reject(const struct option *longs, int optopt,
		     const char *word)
{
	int k;

	for (k = 0; optopt && longs[k].name; k++)
		if (longs[k].val == optopt)
			tool_opt_fail("option --%s %s", longs[k].name,
				      longs[k].has_arg ? "needs a value"
						       : "takes no value");
	tool_opt_fail("unknown option '%s'", word);
}
