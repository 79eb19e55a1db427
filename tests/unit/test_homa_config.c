/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests of homa_config (src/core/homa_config.c) and of the counter
 * names of homa_stats (src/core/homa_stats.c), in code order, named
 * <function>__<case>.  homa_config_apply_vars is mostly tested over the
 * environment, as the socket layer's homa_config_load_env uses it (its
 * own tests: test_homa_sockconfig.c).
 *
 * Every test starts with no HOMA_<NAME> variable in the environment.
 *
 * Build: cc -std=c11 -D_GNU_SOURCE -Iinclude -Isrc/core \
 *        src/core/homa_config.c src/core/homa_stats.c \
 *        tests/unit/test_homa_config.c -lcmocka
 */
#include <ctype.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "env_test_util.h"
#include "homa.h"
#include "homa_config.h"
#include "homa_stats.h"

/* assert_defaults - cfg equals the defaults field by field. */
static void assert_defaults(const struct homa_config *cfg)
{
	struct homa_config def;

	homa_config_defaults(&def);
	assert_memory_equal(cfg, &def, sizeof(def));
}

/* env_lookup - a homa_config_lookup_fn over the environment (the socket
 * layer's homa_config_load_env reads it so). */
static const char *env_lookup(void *arg, const char *var)
{
	(void)arg;
	return getenv(var);
}

/* count_report - a homa_config_report_fn counting into *(int *)arg. */
static void count_report(void *arg, const struct homa_config_reject *r)
{
	(void)r;
	(*(int *)arg)++;
}

/* load_env - homa_config_apply_vars over the environment; each rejection
 * it counts was reported once. */
static int load_env(struct homa_config *cfg)
{
	int reports = 0;
	int rejected = homa_config_apply_vars(cfg, env_lookup, count_report,
					      &reports);

	assert_int_equal(reports, rejected);
	return rejected;
}

/* ---- homa_config_defaults ---- */

static void homa_config_defaults__kernel_values(void **state)
{
	struct homa_config cfg;

	(void)state;
	memset(&cfg, 0xff, sizeof(cfg));
	homa_config_defaults(&cfg);
	assert_int_equal(cfg.unsched_bytes, 40000);
	assert_int_equal(cfg.max_overcommit, 8);
	assert_int_equal(cfg.max_incoming, 400000);
	assert_int_equal(cfg.timeout_ticks, 100);
	assert_int_equal(cfg.resend_ticks, 5);
	assert_int_equal(cfg.resend_interval, 5);
	assert_int_equal(cfg.request_ack_ticks, 2);
	assert_int_equal(cfg.mtu, 1500);
	assert_int_equal(cfg.unsched_cutoffs[7], 200);
	assert_int_equal(cfg.unsched_cutoffs[6], 2800);
	assert_int_equal(cfg.unsched_cutoffs[5], 15000);
	assert_int_equal(cfg.link_mbps, 25000);
	assert_int_equal(cfg.poll_usecs, 50);
	assert_int_equal(cfg.max_nic_queue_ns, 5000);
	assert_int_equal(cfg.throttle_min_bytes, 1000);
	assert_int_equal(cfg.grant_fifo_fraction, 50);
	assert_int_equal(cfg.pacer_fifo_fraction, 50);
	assert_int_equal(cfg.tick_usecs, 1000);
	/* One active message per host first, priority 6 before a host's
	 * CUTOFFS, control packets at 7, CUTOFFS once per host a tick. */
	assert_int_equal(cfg.max_rpcs_per_peer, 1);
	assert_int_equal(cfg.unknown_peer_priority, 6);
	assert_int_equal(cfg.control_priority, 7);
	assert_int_equal(cfg.cutoffs_interval, 1);
}

static void homa_config_defaults__other_values(void **state)
{
	struct homa_config cfg;
	int i;

	(void)state;
	homa_config_defaults(&cfg);
	/* 50,000-byte fifo grants, 8 levels, scheduled data on 0..3. */
	assert_int_equal(cfg.grant_increment, 50000);
	assert_int_equal(cfg.num_priorities, 8);
	assert_int_equal(cfg.max_sched_prio, 3);
	/* Lengths above 15000 use priority 4: entries 0..4 unlimited. */
	for (i = 0; i <= 4; i++)
		assert_int_equal(cfg.unsched_cutoffs[i],
				 HOMA_MAX_MESSAGE_LENGTH);
	assert_int_equal(cfg.cutoff_version, 1);
	assert_int_equal(cfg.transport, HOMA_TRANSPORT_UDP);
	/* The kernel's send-memory limit: 100 MB per socket. */
	assert_int_equal(cfg.wmem_max, 100000000);
}

/* wmem_max: 1 byte (every send after the first waits for memory) up to
 * 10^12; HOMA_WMEM_MAX sets it, out of range is ignored. */
static void homa_config_wmem_max__range_and_env(void **state)
{
	struct homa_config cfg;
	int64_t v;

	(void)state;
	homa_config_defaults(&cfg);
	assert_int_equal(homa_config_set_value(&cfg, "wmem_max", 0), -EINVAL);
	assert_int_equal(homa_config_set_value(&cfg, "wmem_max", -5), -EINVAL);
	assert_int_equal(homa_config_set_value(&cfg, "wmem_max",
					       1000000000001LL), -EINVAL);
	assert_int_equal(cfg.wmem_max, 100000000);
	assert_int_equal(homa_config_set_value(&cfg, "wmem_max", 1), 0);
	assert_int_equal(homa_config_get_value(&cfg, "wmem_max", &v), 0);
	assert_int_equal(v, 1);
	set_env("HOMA_WMEM_MAX", "50000");
	homa_config_defaults(&cfg);
	assert_int_equal(load_env(&cfg), 0);
	assert_int_equal(cfg.wmem_max, 50000);
	set_env("HOMA_WMEM_MAX", "0");
	homa_config_defaults(&cfg);
	assert_int_equal(load_env(&cfg), 1);
	assert_int_equal(cfg.wmem_max, 100000000);
	unsetenv("HOMA_WMEM_MAX");
}

static void homa_config_defaults__consistent(void **state)
{
	struct homa_config cfg;

	(void)state;
	homa_config_defaults(&cfg);
	assert_int_equal(homa_config_check(&cfg), 0);
}

/* ---- homa_config_set_value ---- */

static void homa_config_set_value__changes_one(void **state)
{
	struct homa_config cfg, before;

	(void)state;
	homa_config_defaults(&cfg);
	before = cfg;
	assert_int_equal(homa_config_set_value(&cfg, "unsched_bytes", 12345),
			 0);
	assert_int_equal(cfg.unsched_bytes, 12345);
	before.unsched_bytes = 12345;
	assert_memory_equal(&cfg, &before, sizeof(cfg));
}

static void homa_config_set_value__cutoffs_by_index(void **state)
{
	struct homa_config cfg;
	char name[32];
	int i;

	(void)state;
	homa_config_defaults(&cfg);
	for (i = 0; i < HOMA_NUM_PRIORITIES; i++) {
		snprintf(name, sizeof(name), "unsched_cutoff%d", i);
		assert_int_equal(homa_config_set_value(&cfg, name,
						       1000 + i), 0);
	}
	for (i = 0; i < HOMA_NUM_PRIORITIES; i++)
		assert_int_equal(cfg.unsched_cutoffs[i], 1000 + i);
	assert_int_equal(homa_config_set_value(&cfg, "unsched_cutoff8", 5),
			 -EINVAL);
}

static void homa_config_set_value__bounds(void **state)
{
	struct homa_config cfg;

	(void)state;
	homa_config_defaults(&cfg);
	assert_int_equal(homa_config_set_value(&cfg, "max_overcommit", 1), 0);
	assert_int_equal(cfg.max_overcommit, 1);
	assert_int_equal(homa_config_set_value(&cfg, "max_overcommit", 64), 0);
	assert_int_equal(cfg.max_overcommit, 64);
	assert_int_equal(homa_config_set_value(&cfg, "max_overcommit", 0),
			 -EINVAL);
	assert_int_equal(homa_config_set_value(&cfg, "max_overcommit", 65),
			 -EINVAL);
	assert_int_equal(homa_config_set_value(&cfg, "max_overcommit", -1),
			 -EINVAL);
	assert_int_equal(homa_config_set_value(&cfg, "max_overcommit",
					       INT64_MIN), -EINVAL);
	assert_int_equal(homa_config_set_value(&cfg, "max_overcommit",
					       INT64_MAX), -EINVAL);
	assert_int_equal(cfg.max_overcommit, 64);
	assert_int_equal(homa_config_set_value(&cfg, "unsched_bytes",
					       HOMA_MAX_MESSAGE_LENGTH + 1),
			 -EINVAL);
	assert_int_equal(cfg.unsched_bytes, 40000);
}

static void homa_config_set_value__scheduling_ranges(void **state)
{
	static const struct {
		const char *name;
		int64_t min, max;
	} r[] = {
		{ "max_rpcs_per_peer", 1, 64 },
		{ "unknown_peer_priority", 0, 7 },
		{ "control_priority", 0, 7 },
		{ "cutoffs_interval", 1, 1000000 },
	};
	struct homa_config cfg;
	int64_t v;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(r) / sizeof(r[0]); i++) {
		homa_config_defaults(&cfg);
		assert_int_equal(homa_config_set_value(&cfg, r[i].name,
						       r[i].min), 0);
		assert_int_equal(homa_config_set_value(&cfg, r[i].name,
						       r[i].max), 0);
		assert_int_equal(homa_config_get_value(&cfg, r[i].name, &v),
				 0);
		assert_int_equal(v, r[i].max);
		assert_int_equal(homa_config_set_value(&cfg, r[i].name,
						       r[i].min - 1), -EINVAL);
		assert_int_equal(homa_config_set_value(&cfg, r[i].name,
						       r[i].max + 1), -EINVAL);
		assert_int_equal(homa_config_get_value(&cfg, r[i].name, &v),
				 0);
		assert_int_equal(v, r[i].max);
	}
}

static void homa_config_set_value__every_row_bounds(void **state)
{
	const struct homa_config_info *rows;
	struct homa_config cfg, before;
	int64_t v;
	int n, i;

	(void)state;
	rows = homa_config_table(&n);
	for (i = 0; i < n; i++) {
		homa_config_defaults(&cfg);
		assert_int_equal(homa_config_set_value(&cfg, rows[i].name,
						       rows[i].min), 0);
		assert_int_equal(homa_config_get_value(&cfg, rows[i].name,
						       &v), 0);
		assert_int_equal(v, rows[i].min);
		assert_int_equal(homa_config_set_value(&cfg, rows[i].name,
						       rows[i].max), 0);
		assert_int_equal(homa_config_get_value(&cfg, rows[i].name,
						       &v), 0);
		assert_int_equal(v, rows[i].max);
		before = cfg;
		assert_int_equal(homa_config_set_value(&cfg, rows[i].name,
						       rows[i].min - 1),
				 -EINVAL);
		assert_int_equal(homa_config_set_value(&cfg, rows[i].name,
						       rows[i].max + 1),
				 -EINVAL);
		assert_memory_equal(&cfg, &before, sizeof(cfg));
	}
}

static void homa_config_set_value__unknown_name(void **state)
{
	struct homa_config cfg;

	(void)state;
	homa_config_defaults(&cfg);
	assert_int_equal(homa_config_set_value(&cfg, "no_such_setting", 1),
			 -EINVAL);
	assert_int_equal(homa_config_set_value(&cfg, "", 1), -EINVAL);
	assert_int_equal(homa_config_set_value(&cfg, "unsched_bytes ", 1),
			 -EINVAL);
	assert_int_equal(homa_config_set_value(&cfg, "unsched", 1), -EINVAL);
	assert_int_equal(homa_config_set_value(&cfg, NULL, 1), -EINVAL);
	assert_defaults(&cfg);
}

static void homa_config_set_value__transport(void **state)
{
	struct homa_config cfg;

	(void)state;
	homa_config_defaults(&cfg);
	assert_int_equal(homa_config_set_value(&cfg, "transport",
					       HOMA_TRANSPORT_IP), 0);
	assert_int_equal(cfg.transport, HOMA_TRANSPORT_IP);
	assert_int_equal(homa_config_set_value(&cfg, "transport", 2),
			 -EINVAL);
	assert_int_equal(cfg.transport, HOMA_TRANSPORT_IP);
}

/* ---- homa_config_get_value ---- */

static void homa_config_get_value__reads(void **state)
{
	struct homa_config cfg;
	int64_t v = -1;

	(void)state;
	homa_config_defaults(&cfg);
	assert_int_equal(homa_config_get_value(&cfg, "max_incoming", &v), 0);
	assert_int_equal(v, 400000);
	assert_int_equal(homa_config_get_value(&cfg, "unsched_cutoff6", &v),
			 0);
	assert_int_equal(v, 2800);
	cfg.mtu = 9000;
	assert_int_equal(homa_config_get_value(&cfg, "mtu", &v), 0);
	assert_int_equal(v, 9000);
}

static void homa_config_get_value__unknown_name(void **state)
{
	struct homa_config cfg;
	int64_t v = 77;

	(void)state;
	homa_config_defaults(&cfg);
	assert_int_equal(homa_config_get_value(&cfg, "nope", &v), -EINVAL);
	assert_int_equal(v, 77);
	assert_int_equal(homa_config_get_value(&cfg, NULL, &v), -EINVAL);
	assert_int_equal(v, 77);
	assert_int_equal(homa_config_get_value(&cfg, "mtu", NULL), -EINVAL);
}

/* ---- homa_config_check ---- */

static void homa_config_check__cutoffs_increasing(void **state)
{
	struct homa_config cfg;

	(void)state;
	homa_config_defaults(&cfg);
	cfg.unsched_cutoffs[7] = 2801;        /* above entry 6 */
	assert_int_equal(homa_config_check(&cfg), -EINVAL);
	cfg.unsched_cutoffs[7] = 2800;        /* equal is fine */
	assert_int_equal(homa_config_check(&cfg), 0);
	homa_config_defaults(&cfg);
	cfg.unsched_cutoffs[5] = HOMA_MAX_MESSAGE_LENGTH;
	cfg.unsched_cutoffs[4] = 20000;       /* entry 4 below entry 5 */
	assert_int_equal(homa_config_check(&cfg), -EINVAL);
}

static void homa_config_check__max_sched_prio(void **state)
{
	struct homa_config cfg;

	(void)state;
	homa_config_defaults(&cfg);
	cfg.num_priorities = 4;
	cfg.max_sched_prio = 3;
	assert_int_equal(homa_config_check(&cfg), 0);
	cfg.max_sched_prio = 4;
	assert_int_equal(homa_config_check(&cfg), -EINVAL);
	cfg.num_priorities = 8;
	cfg.max_sched_prio = 7;
	assert_int_equal(homa_config_check(&cfg), 0);
	cfg.num_priorities = 2;
	assert_int_equal(homa_config_check(&cfg), -EINVAL);
	cfg.max_sched_prio = 1;
	assert_int_equal(homa_config_check(&cfg), 0);
}

static void homa_config_check__levels_above_num_priorities(void **state)
{
	struct homa_config cfg;

	(void)state;
	/* Lowering num_priorities alone is consistent: the default levels
	 * of control packets (7) and of unknown peers (6) are clamped. */
	homa_config_defaults(&cfg);
	cfg.num_priorities = 4;
	assert_int_equal(homa_config_check(&cfg), 0);
	cfg.control_priority = 7;
	cfg.unknown_peer_priority = 7;
	assert_int_equal(homa_config_check(&cfg), 0);
}

static void homa_config_check__smallest_mtu(void **state)
{
	const struct homa_config_info *rows;
	struct homa_config cfg;
	int n, i;

	(void)state;
	rows = homa_config_table(&n);
	homa_config_defaults(&cfg);
	for (i = 0; i < n; i++)
		if (strcmp(rows[i].name, "mtu") == 0)
			cfg.mtu = rows[i].min;
	/* The smallest MTU accepted still leaves room for an IPv6 header,
	 * the 56-byte DATA header and some payload. */
	assert_true(cfg.mtu > 40 + 56);
	assert_int_equal(homa_config_check(&cfg), 0);
}

/* ---- homa_config_level ---- */

static void homa_config_level__within_levels_in_use(void **state)
{
	struct homa_config cfg;

	(void)state;
	homa_config_defaults(&cfg);
	assert_int_equal(homa_config_level(&cfg, cfg.control_priority), 7);
	assert_int_equal(homa_config_level(&cfg, cfg.unknown_peer_priority),
			 6);
	assert_int_equal(homa_config_level(&cfg, 0), 0);
	assert_int_equal(homa_config_level(&cfg, -3), 0);
	cfg.num_priorities = 4;
	assert_int_equal(homa_config_level(&cfg, 7), 3);
	assert_int_equal(homa_config_level(&cfg, 2), 2);
	cfg.num_priorities = 1;
	assert_int_equal(homa_config_level(&cfg, 7), 0);
	cfg.num_priorities = 0;                /* out of range: no level */
	assert_int_equal(homa_config_level(&cfg, 5), 0);
	cfg.num_priorities = 100;              /* out of range: 8 levels */
	assert_int_equal(homa_config_level(&cfg, 50), 7);
}

/* ---- homa_config_apply_vars ---- */

static void homa_config_apply_vars__nothing_set(void **state)
{
	struct homa_config cfg;

	(void)state;
	homa_config_defaults(&cfg);
	assert_int_equal(load_env(&cfg), 0);
	assert_defaults(&cfg);
}

static void homa_config_apply_vars__valid_values(void **state)
{
	struct homa_config cfg;

	(void)state;
	set_env("HOMA_UNSCHED_BYTES", "20000");
	set_env("HOMA_MAX_OVERCOMMIT", "0x10");
	set_env("HOMA_UNSCHED_CUTOFF7", "100");
	set_env("HOMA_TIMEOUT_TICKS", "2");
	set_env("HOMA_LINK_MBPS", "1000000");
	homa_config_defaults(&cfg);
	assert_int_equal(load_env(&cfg), 0);
	assert_int_equal(cfg.unsched_bytes, 20000);
	assert_int_equal(cfg.max_overcommit, 16);
	assert_int_equal(cfg.unsched_cutoffs[7], 100);
	assert_int_equal(cfg.timeout_ticks, 2);
	assert_int_equal(cfg.link_mbps, 1000000);
	assert_int_equal(cfg.max_incoming, 400000);   /* untouched */
}

static void homa_config_apply_vars__keeps_caller_values(void **state)
{
	struct homa_config cfg;

	(void)state;
	set_env("HOMA_POLL_USECS", "0");
	homa_config_defaults(&cfg);
	assert_int_equal(homa_config_set_value(&cfg, "mtu", 9000), 0);
	assert_int_equal(load_env(&cfg), 0);
	assert_int_equal(cfg.mtu, 9000);
	assert_int_equal(cfg.poll_usecs, 0);
}

static void homa_config_apply_vars__malformed_ignored(void **state)
{
	struct homa_config cfg;

	(void)state;
	set_env("HOMA_MTU", "12abc");
	set_env("HOMA_MAX_OVERCOMMIT", "12abc");         /* 12 alone is ok */
	set_env("HOMA_LINK_MBPS", "");
	set_env("HOMA_MAX_GAPS", "65");                  /* above 64 */
	set_env("HOMA_TIMEOUT_TICKS", "-1");             /* below 2 */
	set_env("HOMA_MAX_INCOMING", "99999999999999999999999");
	set_env("HOMA_UNSCHED_BYTES", "30000");          /* valid */
	homa_config_defaults(&cfg);
	assert_int_equal(load_env(&cfg), 6);
	assert_int_equal(cfg.mtu, 1500);
	assert_int_equal(cfg.max_overcommit, 8);
	assert_int_equal(cfg.link_mbps, 25000);
	assert_int_equal(cfg.max_gaps, 32);
	assert_int_equal(cfg.timeout_ticks, 100);
	assert_int_equal(cfg.max_incoming, 400000);
	assert_int_equal(cfg.unsched_bytes, 30000);
}

static void homa_config_apply_vars__transport(void **state)
{
	struct homa_config cfg;

	(void)state;
	set_env("HOMA_TRANSPORT", "ip");
	homa_config_defaults(&cfg);
	assert_int_equal(load_env(&cfg), 0);
	assert_int_equal(cfg.transport, HOMA_TRANSPORT_IP);
	set_env("HOMA_TRANSPORT", "udp");
	assert_int_equal(load_env(&cfg), 0);
	assert_int_equal(cfg.transport, HOMA_TRANSPORT_UDP);
	set_env("HOMA_TRANSPORT", "1");
	assert_int_equal(load_env(&cfg), 0);
	assert_int_equal(cfg.transport, HOMA_TRANSPORT_IP);
	set_env("HOMA_TRANSPORT", "tcp");
	assert_int_equal(load_env(&cfg), 1);
	assert_int_equal(cfg.transport, HOMA_TRANSPORT_IP);
	set_env("HOMA_TRANSPORT", "");
	assert_int_equal(load_env(&cfg), 1);
	assert_int_equal(cfg.transport, HOMA_TRANSPORT_IP);
}

/* resend_priority takes its names (message, control) or their numbers;
 * another name is rejected and the setting keeps its value. */
static void homa_config_apply_vars__resend_priority_names(void **state)
{
	struct homa_config cfg;

	(void)state;
	homa_config_defaults(&cfg);
	assert_int_equal(cfg.resend_priority, HOMA_RESEND_PRIO_MESSAGE);
	set_env("HOMA_RESEND_PRIORITY", "control");
	assert_int_equal(load_env(&cfg), 0);
	assert_int_equal(cfg.resend_priority, HOMA_RESEND_PRIO_CONTROL);
	set_env("HOMA_RESEND_PRIORITY", "message");
	assert_int_equal(load_env(&cfg), 0);
	assert_int_equal(cfg.resend_priority, HOMA_RESEND_PRIO_MESSAGE);
	set_env("HOMA_RESEND_PRIORITY", "1");
	assert_int_equal(load_env(&cfg), 0);
	assert_int_equal(cfg.resend_priority, HOMA_RESEND_PRIO_CONTROL);
	set_env("HOMA_RESEND_PRIORITY", "udp");
	assert_int_equal(load_env(&cfg), 1);
	assert_int_equal(cfg.resend_priority, HOMA_RESEND_PRIO_CONTROL);
	set_env("HOMA_RESEND_PRIORITY", "2");
	assert_int_equal(load_env(&cfg), 1);
	assert_int_equal(cfg.resend_priority, HOMA_RESEND_PRIO_CONTROL);
}

static void homa_config_apply_vars__inconsistent_cutoffs(void **state)
{
	struct homa_config cfg;

	(void)state;
	set_env("HOMA_UNSCHED_CUTOFF7", "5000");         /* > cutoff6 2800 */
	set_env("HOMA_UNSCHED_BYTES", "20000");
	homa_config_defaults(&cfg);
	assert_int_equal(load_env(&cfg), 1);
	assert_defaults(&cfg);
}

static void homa_config_apply_vars__inconsistent_priorities(void **state)
{
	struct homa_config cfg;

	(void)state;
	set_env("HOMA_NUM_PRIORITIES", "4");
	set_env("HOMA_MAX_SCHED_PRIO", "4");
	homa_config_defaults(&cfg);
	assert_int_equal(load_env(&cfg), 1);
	assert_defaults(&cfg);
	set_env("HOMA_MAX_SCHED_PRIO", "2");
	assert_int_equal(load_env(&cfg), 0);
	assert_int_equal(cfg.num_priorities, 4);
	assert_int_equal(cfg.max_sched_prio, 2);
}

static void homa_config_apply_vars__scheduling_settings(void **state)
{
	struct homa_config cfg;

	(void)state;
	set_env("HOMA_MAX_RPCS_PER_PEER", "3");
	set_env("HOMA_UNKNOWN_PEER_PRIORITY", "5");
	set_env("HOMA_CONTROL_PRIORITY", "6");
	set_env("HOMA_CUTOFFS_INTERVAL", "10");
	homa_config_defaults(&cfg);
	assert_int_equal(load_env(&cfg), 0);
	assert_int_equal(cfg.max_rpcs_per_peer, 3);
	assert_int_equal(cfg.unknown_peer_priority, 5);
	assert_int_equal(cfg.control_priority, 6);
	assert_int_equal(cfg.cutoffs_interval, 10);
	/* Out of range: reported and ignored, one by one. */
	set_env("HOMA_MAX_RPCS_PER_PEER", "0");
	set_env("HOMA_UNKNOWN_PEER_PRIORITY", "8");
	set_env("HOMA_CONTROL_PRIORITY", "-1");
	set_env("HOMA_CUTOFFS_INTERVAL", "0");
	homa_config_defaults(&cfg);
	assert_int_equal(load_env(&cfg), 4);
	assert_defaults(&cfg);
}

static void homa_config_apply_vars__every_setting_named(void **state)
{
	const struct homa_config_info *rows;
	struct homa_config cfg;
	char var[96], text[32];
	int64_t v;
	int n, i;

	(void)state;
	/* Each setting's own variable sets it (to its minimum, which for the
	 * cutoffs, priorities and transport stays consistent). */
	rows = homa_config_table(&n);
	for (i = 0; i < n; i++) {
		int64_t want = rows[i].min;

		if (strncmp(rows[i].name, "unsched_cutoff", 14) == 0 ||
		    strcmp(rows[i].name, "max_sched_prio") == 0)
			want = rows[i].def;
		else if (strcmp(rows[i].name, "num_priorities") == 0)
			want = rows[i].max;
		env_var(rows[i].name, var, sizeof(var));
		snprintf(text, sizeof(text), "%lld", (long long)want);
		set_env(var, text);
		homa_config_defaults(&cfg);
		assert_int_equal(load_env(&cfg), 0);
		assert_int_equal(homa_config_get_value(&cfg, rows[i].name,
						       &v), 0);
		assert_int_equal(v, want);
		unsetenv(var);
	}
}

/* A source of variables other than the environment: name=value pairs. */
struct table_source {
	const char *const *pairs;       /* var, text, var, text, ..., NULL */
	struct homa_config_reject got[4]; /* the reports (var, text copied
					   * out: valid during the call only) */
	char vars[4][64], texts[4][64];
	int reports;
};

/* table_lookup - a homa_config_lookup_fn over a struct table_source. */
static const char *table_lookup(void *arg, const char *var)
{
	const struct table_source *src = arg;

	for (int i = 0; src->pairs[i]; i += 2)
		if (strcmp(src->pairs[i], var) == 0)
			return src->pairs[i + 1];
	return NULL;
}

/* table_report - a homa_config_report_fn keeping the first four reports
 * in the struct table_source. */
static void table_report(void *arg, const struct homa_config_reject *r)
{
	struct table_source *src = arg;
	int k = src->reports++;

	if (k >= 4)
		return;
	src->got[k] = *r;
	if (r->var) {
		snprintf(src->vars[k], sizeof(src->vars[k]), "%s", r->var);
		snprintf(src->texts[k], sizeof(src->texts[k]), "%s", r->text);
	}
}

/* Any source will do (the environment plays no part); each rejection is
 * reported with the variable, its text and the setting's range, in the
 * order of the settings table. */
static void homa_config_apply_vars__reports_from_any_source(void **state)
{
	static const char *const pairs[] = {
		"HOMA_MAX_GAPS", "65", "HOMA_MTU", "9000",
		"HOMA_UNSCHED_BYTES", "abc", NULL };
	struct table_source src = { .pairs = pairs };
	struct homa_config cfg;

	(void)state;
	set_env("HOMA_MTU", "1400");            /* not the source: unused */
	homa_config_defaults(&cfg);
	assert_int_equal(homa_config_apply_vars(&cfg, table_lookup,
						table_report, &src), 2);
	assert_int_equal(cfg.mtu, 9000);
	assert_int_equal(cfg.max_gaps, 32);
	assert_int_equal(cfg.unsched_bytes, 40000);
	assert_int_equal(src.reports, 2);
	assert_string_equal(src.vars[0], "HOMA_UNSCHED_BYTES");
	assert_string_equal(src.texts[0], "abc");
	assert_int_equal(src.got[0].min, 1);
	assert_int_equal(src.got[0].max, HOMA_MAX_MESSAGE_LENGTH);
	assert_string_equal(src.vars[1], "HOMA_MAX_GAPS");
	assert_string_equal(src.texts[1], "65");
	assert_int_equal(src.got[1].min, 1);
	assert_int_equal(src.got[1].max, 64);
}

/* Values each in range but inconsistent together: one report with no
 * variable, after those of single values; cfg goes back to the
 * defaults.  Without a report function the count is the same. */
static void homa_config_apply_vars__reports_inconsistency(void **state)
{
	static const char *const pairs[] = {
		"HOMA_UNSCHED_CUTOFF7", "5000", "HOMA_MAX_GAPS", "0", NULL };
	struct table_source src = { .pairs = pairs };
	struct homa_config cfg;

	(void)state;
	homa_config_defaults(&cfg);
	assert_int_equal(homa_config_apply_vars(&cfg, table_lookup,
						table_report, &src), 2);
	assert_defaults(&cfg);
	assert_int_equal(src.reports, 2);
	assert_string_equal(src.vars[0], "HOMA_MAX_GAPS");
	assert_null(src.got[1].var);
	assert_null(src.got[1].text);
	src.reports = 0;
	assert_int_equal(homa_config_apply_vars(&cfg, table_lookup, NULL,
						&src), 2);
	assert_int_equal(src.reports, 0);
	assert_defaults(&cfg);
}

/* ---- homa_config_table ---- */

static void homa_config_table__rows(void **state)
{
	const struct homa_config_info *rows;
	struct homa_config cfg;
	int64_t v;
	int n, i, j;

	(void)state;
	rows = homa_config_table(&n);
	assert_non_null(rows);
	assert_true(n > 0);
	homa_config_defaults(&cfg);
	for (i = 0; i < n; i++) {
		assert_non_null(rows[i].name);
		assert_true(rows[i].name[0] != '\0');
		assert_non_null(rows[i].meaning);
		assert_true(rows[i].meaning[0] != '\0');
		assert_non_null(rows[i].unit);
		assert_true(rows[i].min <= rows[i].max);
		assert_true(rows[i].def >= rows[i].min);
		assert_true(rows[i].def <= rows[i].max);
		/* The default of the row is the default of the setting. */
		assert_int_equal(homa_config_get_value(&cfg, rows[i].name,
						       &v), 0);
		assert_int_equal(v, rows[i].def);
		for (j = 0; j < i; j++)
			assert_string_not_equal(rows[i].name, rows[j].name);
	}
}

static void homa_config_table__covers_every_field(void **state)
{
	const struct homa_config_info *rows;
	struct homa_config cfg;
	int n, i;

	(void)state;
	/* Setting every row to a marker value through its name reaches every
	 * int64_t of struct homa_config exactly once. */
	rows = homa_config_table(&n);
	assert_int_equal((size_t)n * sizeof(int64_t), sizeof(cfg));
	memset(&cfg, 0, sizeof(cfg));
	for (i = 0; i < n; i++) {
		const int64_t *f = (const int64_t *)&cfg;
		size_t k, marked = 0;

		assert_int_equal(homa_config_set_value(&cfg, rows[i].name,
						       rows[i].max), 0);
		for (k = 0; k < sizeof(cfg) / sizeof(int64_t); k++)
			if (f[k] != 0)
				marked++;
		assert_int_equal(marked, (size_t)i + 1);
	}
}

static void homa_config_table__listed_names(void **state)
{
	static const char *const names[] = {
		"unsched_bytes", "max_overcommit", "max_incoming",
		"timeout_ticks", "resend_ticks", "resend_interval",
		"request_ack_ticks", "mtu", "unsched_cutoff0",
		"unsched_cutoff7", "link_mbps", "poll_usecs",
		"max_nic_queue_ns", "throttle_min_bytes",
		"grant_fifo_fraction", "pacer_fifo_fraction", "tick_usecs",
		"grant_increment", "num_priorities", "max_sched_prio",
		"transport", "max_rpcs_per_peer", "unknown_peer_priority",
		"control_priority", "cutoffs_interval",
	};
	const struct homa_config_info *rows;
	size_t k;
	int n, i, found;

	(void)state;
	rows = homa_config_table(&n);
	for (k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
		found = 0;
		for (i = 0; i < n; i++)
			if (strcmp(rows[i].name, names[k]) == 0)
				found++;
		assert_int_equal(found, 1);
	}
}

/* ---- homa_stat_name ---- */

static void homa_stat_name__every_counter(void **state)
{
	int i, j;

	(void)state;
	assert_true(HOMA_STAT_COUNT > 0);
	for (i = 0; i < HOMA_STAT_COUNT; i++) {
		const char *name = homa_stat_name((enum homa_stat)i);

		assert_non_null(name);
		assert_true(name[0] != '\0');
		assert_string_not_equal(name, "unknown");
		for (j = 0; j < i; j++)
			assert_string_not_equal(name,
				homa_stat_name((enum homa_stat)j));
	}
}

static void homa_stat_name__matches_enum(void **state)
{
	(void)state;
	assert_string_equal(homa_stat_name(HOMA_STAT_packets_sent_DATA),
			    "packets_sent_DATA");
	assert_string_equal(homa_stat_name(HOMA_STAT_drop_duplicate_data),
			    "drop_duplicate_data");
	assert_string_equal(homa_stat_name(HOMA_STAT_rpc_restarts),
			    "rpc_restarts");
	assert_string_equal(homa_stat_name(HOMA_STAT_drop_too_many_peers),
			    "drop_too_many_peers");
	assert_string_equal(homa_stat_name(HOMA_STAT_grant_stalls),
			    "grant_stalls");
	assert_string_equal(homa_stat_name(HOMA_STAT_resend_during_response),
			    "resend_during_response");
	assert_string_equal(homa_stat_name(HOMA_STAT_drop_half_open_busy),
			    "drop_half_open_busy");
	assert_string_equal(homa_stat_name(HOMA_STAT_requests_held),
			    "requests_held");
	assert_string_equal(homa_stat_name(HOMA_STAT_ticks_behind),
			    "ticks_behind");
	assert_string_equal(homa_stat_name(HOMA_STAT_rx_placed), "rx_placed");
	assert_string_equal(homa_stat_name(HOMA_STAT_rx_misplaced),
			    "rx_misplaced");
	assert_string_equal(homa_stat_name(HOMA_STAT_tx_copies_skipped),
			    "tx_copies_skipped");
	assert_string_equal(homa_stat_name(HOMA_STAT_grant_no_memory),
			    "grant_no_memory");
	assert_string_equal(homa_stat_name(HOMA_STAT_copy_faults),
			    "copy_faults");
	assert_int_equal(HOMA_STAT_copy_faults, HOMA_STAT_COUNT - 1);
}

static void homa_stat_name__out_of_range(void **state)
{
	(void)state;
	assert_string_equal(homa_stat_name(HOMA_STAT_COUNT), "unknown");
	assert_string_equal(homa_stat_name((enum homa_stat)(HOMA_STAT_COUNT +
							    100)),
			    "unknown");
	assert_string_equal(homa_stat_name((enum homa_stat)-1), "unknown");
}

static void homa_config_info_find__rows_by_name(void **state)
{
	const struct homa_config_info *row;

	(void)state;
	row = homa_config_info_find("max_overcommit");
	assert_non_null(row);
	assert_string_equal(row->name, "max_overcommit");
	assert_int_equal(row->def, 8);
	assert_int_equal(row->min, 1);
	assert_int_equal(row->max, 64);
	assert_null(homa_config_info_find("no_such_setting"));
	assert_null(homa_config_info_find(NULL));
}

/* T - a test run with a clean HOMA_* environment (before and after). */
#define T(f) cmocka_unit_test_setup_teardown(f, clear_env, clear_env)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(homa_config_defaults__kernel_values),
		T(homa_config_defaults__other_values),
		T(homa_config_wmem_max__range_and_env),
		T(homa_config_defaults__consistent),
		T(homa_config_set_value__changes_one),
		T(homa_config_set_value__cutoffs_by_index),
		T(homa_config_set_value__bounds),
		T(homa_config_set_value__scheduling_ranges),
		T(homa_config_set_value__every_row_bounds),
		T(homa_config_set_value__unknown_name),
		T(homa_config_set_value__transport),
		T(homa_config_get_value__reads),
		T(homa_config_get_value__unknown_name),
		T(homa_config_info_find__rows_by_name),
		T(homa_config_check__cutoffs_increasing),
		T(homa_config_check__max_sched_prio),
		T(homa_config_check__levels_above_num_priorities),
		T(homa_config_check__smallest_mtu),
		T(homa_config_level__within_levels_in_use),
		T(homa_config_apply_vars__nothing_set),
		T(homa_config_apply_vars__valid_values),
		T(homa_config_apply_vars__keeps_caller_values),
		T(homa_config_apply_vars__malformed_ignored),
		T(homa_config_apply_vars__transport),
		T(homa_config_apply_vars__resend_priority_names),
		T(homa_config_apply_vars__inconsistent_cutoffs),
		T(homa_config_apply_vars__inconsistent_priorities),
		T(homa_config_apply_vars__scheduling_settings),
		T(homa_config_apply_vars__every_setting_named),
		T(homa_config_apply_vars__reports_from_any_source),
		T(homa_config_apply_vars__reports_inconsistency),
		T(homa_config_table__rows),
		T(homa_config_table__covers_every_field),
		T(homa_config_table__listed_names),
		T(homa_stat_name__every_counter),
		T(homa_stat_name__matches_enum),
		T(homa_stat_name__out_of_range),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
