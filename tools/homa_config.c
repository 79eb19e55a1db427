// SPDX-License-Identifier: BSD-2-Clause
/*
 * homa-config - print libhoma's settings: every name with its default,
 * range and meaning, and the value in effect given the HOMA_* environment.
 * `homa-config --markdown` prints the table of docs/settings.md.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "homa_config.h"
#include "homa_sockconfig.h" /* homa_config_load_env */

/* usage - print help to f. */
static void usage(FILE *f)
{
	fprintf(f,
		"usage: homa-config [--markdown | --env | --help]\n"
		"  (no option)  every setting: name, value in effect (after\n"
		"               HOMA_<NAME> environment variables), default,\n"
		"               range, unit, meaning\n"
		"  --markdown   the settings table as Markdown (docs/settings.md)\n"
		"  --env        the effective values as HOMA_<NAME>=value lines\n");
}

/* upper - name in upper case, into buf. */
static const char *upper(const char *name, char *buf, size_t cap)
{
	size_t i;

	for (i = 0; name[i] && i + 1 < cap; i++)
		buf[i] = (char)(name[i] >= 'a' && name[i] <= 'z' ?
				name[i] - 'a' + 'A' : name[i]);
	buf[i] = '\0';
	return buf;
}

/* print_markdown - the settings table for the documentation. */
static void print_markdown(const struct homa_config_info *rows, int n)
{
	char up[64];
	int i;

	printf("| setting | environment | default | range | unit | meaning |\n");
	printf("|---|---|---|---|---|---|\n");
	for (i = 0; i < n; i++)
		printf("| `%s` | `HOMA_%s` | %lld | %lld..%lld | %s | %s |\n",
		       rows[i].name, upper(rows[i].name, up, sizeof(up)),
		       (long long)rows[i].def, (long long)rows[i].min,
		       (long long)rows[i].max, rows[i].unit, rows[i].meaning);
}

/* print_effective - each setting's value with the environment applied. */
static void print_effective(const struct homa_config_info *rows, int n,
			    bool env_lines)
{
	struct homa_config cfg;
	char up[64];
	int64_t v;
	int i;

	homa_config_defaults(&cfg);
	homa_config_load_env(&cfg);
	if (!env_lines)
		printf("%-22s %10s %10s  %-24s %s\n", "setting", "value",
		       "default", "range", "meaning");
	for (i = 0; i < n; i++) {
		char range[48];

		homa_config_get_value(&cfg, rows[i].name, &v);
		if (env_lines) {
			printf("HOMA_%s=%lld\n",
			       upper(rows[i].name, up, sizeof(up)),
			       (long long)v);
			continue;
		}
		snprintf(range, sizeof(range), "%lld..%lld %s",
			 (long long)rows[i].min, (long long)rows[i].max,
			 rows[i].unit);
		printf("%-22s %10lld %10lld  %-24s %s\n", rows[i].name,
		       (long long)v, (long long)rows[i].def, range,
		       rows[i].meaning);
	}
}

int main(int argc, char **argv)
{
	int n;
	const struct homa_config_info *rows = homa_config_table(&n);

	if (argc > 2) {
		usage(stderr);
		return 2;
	}
	if (argc == 1) {
		print_effective(rows, n, false);
		return 0;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(argv[1], "--markdown") == 0) {
		print_markdown(rows, n);
		return 0;
	}
	if (strcmp(argv[1], "--env") == 0) {
		print_effective(rows, n, true);
		return 0;
	}
	fprintf(stderr, "homa-config: unknown option '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
