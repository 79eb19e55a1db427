// SPDX-License-Identifier: BSD-2-Clause
/* JSON output of the tools: see tool_json.h. */

#include <math.h>

#include "tool_json.h"

void tool_json_num(FILE *f, double v)
{
	if (isnan(v) || isinf(v))
		fprintf(f, "null");
	else
		fprintf(f, "%.3f", v);
}

void tool_json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", (unsigned char)*s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

void tool_json_counters(FILE *f, const struct tool_counters *c,
			int nonzero_only)
{
	int i, first = 1;

	fprintf(f, "{");
	for (i = 0; i < c->n; i++) {
		if (nonzero_only && c->values[i] == 0)
			continue;
		fprintf(f, "%s", first ? "" : ",");
		tool_json_string(f, c->names[i]);
		fprintf(f, ":%llu", (unsigned long long)c->values[i]);
		first = 0;
	}
	fprintf(f, "}");
}
