/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * homa_config - the engine's settings, with the kernel module's defaults.
 * Every setting has a name; homa_config_set_value changes one from code,
 * and homa_config_apply_vars applies variables HOMA_<NAME> from a source
 * the caller reads (the socket layer: the environment, through
 * homa_config_load_env in src/sock/homa_sockconfig.h).  The table in
 * homa_config.c is the single place where names, ranges, defaults and
 * meanings are listed; docs/settings.md is checked against it by a test.
 */
#ifndef HOMA_CONFIG_H
#define HOMA_CONFIG_H

#include <stdint.h>

#include "homa_wire.h"

struct homa_config {
	int64_t link_mbps;           /* link speed the pacer assumes */
	int64_t unsched_bytes;       /* bytes sent before any grant */
	int64_t loopback_unsched_bytes; /* the same to and from loopback
					 * peers; 0 = unsched_bytes */
	int64_t max_overcommit;      /* messages granted at once */
	int64_t max_rpcs_per_peer;   /* granted messages of one host before
				      * any host gets one more */
	int64_t max_incoming;        /* granted-but-unreceived bytes, total */
	int64_t loopback_max_incoming; /* the same while every message
					* granted is from a loopback peer;
					* 0 = max_incoming */
	int64_t grant_increment;     /* grant step of the oldest message */
	int64_t grant_min_bytes;     /* smallest growth of a grant */
	int64_t grant_fifo_fraction; /* per mille of grants to the oldest */
	int64_t num_priorities;      /* priority levels in use (1..8) */
	int64_t max_sched_prio;      /* highest level for scheduled data */
	int64_t unknown_peer_priority; /* unscheduled level before a host's
					* CUTOFFS arrive */
	int64_t control_priority;    /* level of control packets */
	int64_t unsched_cutoffs[HOMA_NUM_PRIORITIES];
	int64_t cutoff_version;      /* version of our cutoffs */
	int64_t cutoffs_interval;    /* ticks between CUTOFFS to one host */
	int64_t tick_usecs;          /* timer tick */
	int64_t resend_ticks;        /* silent ticks before the first RESEND */
	int64_t resend_interval;     /* ticks between the first RESENDs */
	int64_t resend_max_interval; /* most ticks between RESENDs and
				      * between NEED_ACKs (backoff) */
	int64_t timeout_ticks;       /* silent ticks before ETIMEDOUT */
	int64_t alive_timeout_ticks; /* the same while the peer's socket
				      * is still heard from */
	int64_t max_peer_probes;     /* timer RESENDs to one host a tick */
	int64_t probe_after_wait;    /* a client's first RESEND waits for
				      * its server host's usual response
				      * wait (homa_peer_wait_bound) */
	int64_t resend_priority;     /* level of retransmitted DATA a
				      * RESEND asks for (enum
				      * homa_resend_priority) */
	int64_t resend_floor_packets; /* least a round of RESENDs to one
				       * host may ask for, in packets;
				       * 0 = no budget */
	int64_t resend_tail_probe;   /* tail asked for one packet first */
	int64_t request_ack_ticks;   /* ticks after a response before NEED_ACK */
	int64_t max_peer_need_acks;  /* timer NEED_ACKs to one host a tick */
	int64_t mtu;                 /* packet size: IP header + Homa packet */
	int64_t loopback_mtu;        /* the same to loopback peers; 0 = mtu */
	int64_t max_nic_queue_ns;    /* pacer: most estimated link backlog */
	int64_t throttle_min_bytes;  /* messages shorter bypass the pacer */
	int64_t pacer_fifo_fraction; /* per mille of pacer output, oldest */
	int64_t poll_usecs;          /* busy-poll before sleeping */
	int64_t wake_slice_usecs;    /* scheduler slice of waiting threads */
	int64_t bpage_lease_usecs;   /* lease of a core's partial bpage */
	int64_t max_gaps;            /* gap records per incoming message */
	int64_t flags;               /* HOMA_FLAG_* bits */
	int64_t max_rpcs;            /* RPCs per socket */
	int64_t max_half_open;       /* incomplete incoming requests */
	int64_t max_peer_rpcs;       /* ... of them from one peer host */
	int64_t max_peers;           /* peer records per socket */
	int64_t peer_buffer_percent; /* pool share of one peer's incomplete
				      * requests */
	int64_t transport;           /* 0 = udp, 1 = ip */
	int64_t rx_bands;            /* receive sockets (UDP): 1 or 2 */
	int64_t rx_band_prio;        /* lowest priority of the high band */
	int64_t max_ctrl_queue;      /* control packets waiting for output */
	int64_t max_admitted;        /* bytes still to come of granted
				      * incoming messages before new ones
				      * get their first grant */
	int64_t request_window;      /* unanswered unscheduled request bytes
				      * to one host; 0 = no limit */
	int64_t loopback_request_window; /* the same to a loopback host;
					  * 0 = request_window */
	int64_t request_buffer_window; /* their message bytes; 0 = no
					* limit */
	int64_t wmem_max;            /* bytes of outgoing messages a socket
				      * holds before sends wait */
};

enum homa_transport_kind { HOMA_TRANSPORT_UDP = 0, HOMA_TRANSPORT_IP = 1 };

/* Values of resend_priority: the message's own level (its unscheduled
 * level for its unscheduled bytes, its last grant level past them), or
 * control_priority (the kernel module's rule). */
enum homa_resend_priority {
	HOMA_RESEND_PRIO_MESSAGE = 0,
	HOMA_RESEND_PRIO_CONTROL = 1,
};

/* homa_config_defaults - fill cfg with the defaults (kernel values). */
void homa_config_defaults(struct homa_config *cfg);

/* homa_config_lookup_fn - the text of the variable called var (HOMA_<NAME>)
 * in the caller's source (arg), or NULL when it is not set. */
typedef const char *homa_config_lookup_fn(void *arg, const char *var);

/* What homa_config_apply_vars rejected: the variable var with its text,
 * and the range of its setting; or, with var and text NULL, the values
 * together (each in range) are inconsistent (homa_config_check). */
struct homa_config_reject {
	const char *var;
	const char *text;
	int64_t min, max;
};

/* homa_config_report_fn - told of one rejection r (valid during the call
 * only); arg is the caller's. */
typedef void homa_config_report_fn(void *arg,
				   const struct homa_config_reject *r);

/*
 * homa_config_apply_vars - apply to cfg every variable HOMA_<NAME> (the
 * setting's name in upper case) that lookup finds: a number (decimal, or
 * hex with 0x; "udp" or "ip" for transport, "message" or "control" for
 * resend_priority).  A variable that does not
 * parse or is out of range is reported once and ignored; when the result
 * fails homa_config_check, that is reported too and cfg goes back to the
 * defaults.  Returns the number of rejections (reports; report may be
 * NULL).  Does no I/O of its own: lookup and report do whatever reading
 * and telling there is.
 */
int homa_config_apply_vars(struct homa_config *cfg,
			   homa_config_lookup_fn *lookup,
			   homa_config_report_fn *report, void *arg);

/*
 * homa_config_set_value / homa_config_get_value - one numeric setting by
 * name ("unsched_bytes"; the cutoffs are "unsched_cutoff0".."unsched_cutoff7";
 * "transport" takes 0 = udp or 1 = ip).  Return 0, or -EINVAL for an unknown
 * name or a value outside the setting's range.
 */
int homa_config_set_value(struct homa_config *cfg, const char *name,
			  int64_t value);
int homa_config_get_value(const struct homa_config *cfg, const char *name,
			  int64_t *value);

/*
 * homa_config_check - cross-field consistency: cutoffs non-increasing with
 * priority, and max_sched_prio < num_priorities when num_priorities > 1
 * (with one level everything uses priority 0), and loopback_mtu 0 or at
 * least 576.  The mtu needs no check: its range keeps packets large enough.  control_priority and
 * unknown_peer_priority above num_priorities - 1 are no error: they are
 * used as num_priorities - 1 (homa_config_level).  Returns 0 or -EINVAL.
 */
int homa_config_check(const struct homa_config *cfg);

/*
 * homa_config_level - level as the priority levels in use allow it:
 * min(level, num_priorities - 1), and 0 when either is below 1.  The
 * settings that name a level (control_priority, unknown_peer_priority)
 * are used through it, as the kernel uses its top level for control
 * packets, so lowering num_priorities alone needs no other change.
 */
uint8_t homa_config_level(const struct homa_config *cfg, int64_t level);

/* One row of the settings table, for documentation and tools. */
struct homa_config_info {
	const char *name;
	int64_t min, max, def;
	const char *unit;
	const char *meaning;
};

/* homa_config_table - the table and its number of rows. */
const struct homa_config_info *homa_config_table(int *count);

/* homa_config_info_find - the row of the setting called name, or NULL. */
const struct homa_config_info *homa_config_info_find(const char *name);

#endif /* HOMA_CONFIG_H */
