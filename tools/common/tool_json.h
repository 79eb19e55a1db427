/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tool_json - the pieces of the tools' JSON output: numbers, strings,
 * counters.
 */
#ifndef TOOL_JSON_H
#define TOOL_JSON_H

#include <stdio.h>

#include "tool_counters.h"

/* tool_json_num - v with 3 decimals, or null when v is NaN or infinite. */
void tool_json_num(FILE *f, double v);

/* tool_json_string - s quoted, with quotes, backslashes and control
 * characters escaped. */
void tool_json_string(FILE *f, const char *s);

/* tool_json_counters - {"name":value,...} of the counters of c, of those
 * not 0 only when nonzero_only is set. */
void tool_json_counters(FILE *f, const struct tool_counters *c,
			int nonzero_only);

#endif /* TOOL_JSON_H */
