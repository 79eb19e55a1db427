// SPDX-License-Identifier: BSD-2-Clause
/* The engine's settings: see homa_config.h. */

#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "homa.h"
#include "homa_config.h"

/* One setting: its documentation row and where it lives. */
struct setting {
	struct homa_config_info info;
	size_t offset;
};

#define F(field) offsetof(struct homa_config, field)
#define CUT(i) offsetof(struct homa_config, unsched_cutoffs) + \
	(i) * sizeof(int64_t)
#define MAXLEN HOMA_MAX_MESSAGE_LENGTH

static const struct setting settings[] = {
	{ { "link_mbps", 1, 1000000, 25000, "Mbit/s",
	    "link speed the pacer assumes" }, F(link_mbps) },
	{ { "unsched_bytes", 1, MAXLEN, 40000, "bytes",
	    "bytes of a message sent before any grant" }, F(unsched_bytes) },
	{ { "loopback_unsched_bytes", 0, MAXLEN, MAXLEN, "bytes",
	    "unsched_bytes of messages to and from a loopback address (no "
	    "network queue to keep short: a message goes whole at once; "
	    "0: unsched_bytes)" }, F(loopback_unsched_bytes) },
	{ { "max_overcommit", 1, 64, 8, "messages",
	    "incoming messages granted at once" }, F(max_overcommit) },
	{ { "max_rpcs_per_peer", 1, 64, 1, "messages",
	    "incoming messages from one host granted at once before any "
	    "host gets one more (kernel max_rpcs_per_peer); the rest of "
	    "max_overcommit then goes shortest first" },
	  F(max_rpcs_per_peer) },
	{ { "max_incoming", 1, 100000000, 400000, "bytes",
	    "total granted-but-unreceived bytes" }, F(max_incoming) },
	{ { "loopback_max_incoming", 0, 100000000, 4000000, "bytes",
	    "max_incoming while every message being granted comes from a "
	    "loopback address (no network queue to keep short; 0: "
	    "max_incoming)" }, F(loopback_max_incoming) },
	{ { "grant_increment", 1, MAXLEN, 50000, "bytes",
	    "size of one grant to the oldest message" }, F(grant_increment) },
	{ { "grant_min_bytes", 0, MAXLEN, 10000, "bytes",
	    "a GRANT is sent when it allows at least this many more bytes "
	    "(or the rest of the message, or a whole window of "
	    "max_incoming / (granted messages + 1) when that is less)" },
	  F(grant_min_bytes) },
	{ { "grant_fifo_fraction", 0, 500, 50, "per mille",
	    "share of grants given to the oldest message" },
	  F(grant_fifo_fraction) },
	{ { "num_priorities", 1, 8, 8, "levels",
	    "priority levels in use" }, F(num_priorities) },
	{ { "max_sched_prio", 0, 7, 3, "level",
	    "highest priority of scheduled (granted) data" },
	  F(max_sched_prio) },
	{ { "unknown_peer_priority", 0, 7, 6, "level",
	    "priority of unscheduled DATA to a host whose CUTOFFS have not "
	    "arrived, and with resend_priority=message of RESENDs for a "
	    "message of which nothing has arrived (at most "
	    "num_priorities - 1)" },
	  F(unknown_peer_priority) },
	{ { "control_priority", 0, 7, 7, "level",
	    "priority of control packets, and with resend_priority=control "
	    "of the DATA RESENDs ask for (at most num_priorities - 1)" },
	  F(control_priority) },
	{ { "unsched_cutoff0", 0, MAXLEN, MAXLEN, "bytes",
	    "largest message using priority 0 unscheduled (unlimited)" },
	  CUT(0) },
	{ { "unsched_cutoff1", 0, MAXLEN, MAXLEN, "bytes",
	    "largest message using priority 1 unscheduled" }, CUT(1) },
	{ { "unsched_cutoff2", 0, MAXLEN, MAXLEN, "bytes",
	    "largest message using priority 2 unscheduled" }, CUT(2) },
	{ { "unsched_cutoff3", 0, MAXLEN, MAXLEN, "bytes",
	    "largest message using priority 3 unscheduled" }, CUT(3) },
	{ { "unsched_cutoff4", 0, MAXLEN, MAXLEN, "bytes",
	    "largest message using priority 4 unscheduled" }, CUT(4) },
	{ { "unsched_cutoff5", 0, MAXLEN, 15000, "bytes",
	    "largest message using priority 5 unscheduled" }, CUT(5) },
	{ { "unsched_cutoff6", 0, MAXLEN, 2800, "bytes",
	    "largest message using priority 6 unscheduled" }, CUT(6) },
	{ { "unsched_cutoff7", 0, MAXLEN, 200, "bytes",
	    "largest message using priority 7 unscheduled" }, CUT(7) },
	{ { "cutoff_version", 1, 65535, 1, "",
	    "version of this host's cutoffs, echoed by senders" },
	  F(cutoff_version) },
	{ { "cutoffs_interval", 1, 1000000, 1, "ticks",
	    "CUTOFFS go to one host at most once in this many ticks, "
	    "however many of its DATA packets carry a stale cutoff_version" },
	  F(cutoffs_interval) },
	{ { "tick_usecs", 100, 1000000, 1000, "us",
	    "timer tick" }, F(tick_usecs) },
	{ { "resend_ticks", 1, 10000, 5, "ticks",
	    "silent ticks before the first RESEND" }, F(resend_ticks) },
	{ { "resend_interval", 1, 10000, 5, "ticks",
	    "ticks between the first RESENDs (doubling while unanswered)" },
	  F(resend_interval) },
	{ { "resend_max_interval", 1, 10000, 32, "ticks",
	    "most ticks between RESENDs, and between NEED_ACKs, of one RPC "
	    "(at most timeout_ticks / 3)" }, F(resend_max_interval) },
	{ { "timeout_ticks", 2, 1000000, 100, "ticks",
	    "silent ticks before an RPC fails with ETIMEDOUT" },
	  F(timeout_ticks) },
	{ { "alive_timeout_ticks", 2, 1000000, 1000, "ticks",
	    "silent ticks before an RPC fails with ETIMEDOUT while its peer's "
	    "socket was heard from in the last timeout_ticks, or after the "
	    "server answered the request with BUSY (overload or a stall, not "
	    "death; never less than timeout_ticks)" }, F(alive_timeout_ticks) },
	{ { "max_peer_probes", 1, 1000000, 16, "RESENDs",
	    "RESENDs the timer sends to one host per tick; more wait for "
	    "later ticks, those kept waiting first" }, F(max_peer_probes) },
	{ { "probe_after_wait", 0, 1, 1, "bool",
	    "1: a client's first RESEND for a response waits at least as long "
	    "as that host's responses lately took to begin (smoothed wait + 4 "
	    "mean deviations, up to resend_max_interval), so a live server "
	    "still working on a request is not asked after it; 0: "
	    "resend_ticks always" }, F(probe_after_wait) },
	{ { "resend_priority", 0, 1, 0, "0=message 1=control",
	    "level a RESEND asks the retransmitted DATA at: message "
	    "(HOMA_RESEND_PRIORITY=message) is the message's own level (its "
	    "unscheduled bytes at the level unscheduled bytes of its length "
	    "use, the rest at its last grant's level, or its unscheduled level "
	    "after two probes without progress; when nothing of it has "
	    "arrived, unknown_peer_priority), so repairs of long messages "
	    "never pass short ones; control is control_priority (the kernel "
	    "module's rule)" }, F(resend_priority) },
	{ { "resend_floor_packets", 0, 1000, 2, "packets",
	    "loss-recovery budget: the RESENDs the timer sends one host in "
	    "a tick ask for at most as many bytes as arrived from that host "
	    "since the previous such round, but at least this many packets; "
	    "shortest remaining message first, a range too large asked for "
	    "in part; not towards loopback addresses, whose packets cross no "
	    "network queue (0: no budget, every gap in full as the kernel "
	    "module asks)" }, F(resend_floor_packets) },
	{ { "resend_tail_probe", 0, 1, 0, "bool",
	    "ablation: 1 asks for the granted tail of a message past its last "
	    "arrival one packet first, the rest once that packet comes back "
	    "retransmitted; 0 asks for all of the tail at once" },
	  F(resend_tail_probe) },
	{ { "request_ack_ticks", 1, 10000, 2, "ticks",
	    "ticks after a response is sent before NEED_ACK" },
	  F(request_ack_ticks) },
	{ { "max_peer_need_acks", 1, 1000000, 1, "NEED_ACKs",
	    "NEED_ACKs the timer sends to one host per tick (the host's ACK "
	    "answers for every response it has received); more wait for "
	    "later ticks, those kept waiting first" },
	  F(max_peer_need_acks) },
	{ { "mtu", 576, 65000, 1500, "bytes",
	    "largest IP datagram: IP header, UDP header (over UDP) and Homa "
	    "packet; set it to the link's MTU" }, F(mtu) },
	{ { "loopback_mtu", 0, 65535, 65000, "bytes",
	    "largest IP datagram of DATA to a loopback address (its own "
	    "host: no link, as the kernel sizes packets from the route's "
	    "MTU); 0 = mtu, else at least 576" }, F(loopback_mtu) },
	{ { "max_nic_queue_ns", 0, 100000000, 5000, "ns",
	    "pacer: most estimated link backlog" }, F(max_nic_queue_ns) },
	{ { "throttle_min_bytes", 0, MAXLEN, 1000, "bytes",
	    "messages shorter than this bypass the pacer" },
	  F(throttle_min_bytes) },
	{ { "pacer_fifo_fraction", 0, 500, 50, "per mille",
	    "share of paced output given to the oldest message" },
	  F(pacer_fifo_fraction) },
	{ { "poll_usecs", 0, 1000000, 50, "us",
	    "busy-polling before a receiver sleeps, again when a wake-up "
	    "moves a transfer; none while the host's CPUs are contended" },
	  F(poll_usecs) },
	{ { "wake_slice_usecs", 0, 100000, 100, "us",
	    "scheduler slice asked for the threads that wait in "
	    "homa_recvmsg and the progress thread (Linux 6.12+; the kernel "
	    "takes at least 100), so their wake-ups preempt CPU-bound "
	    "threads; 0 = leave the threads' scheduling alone" },
	  F(wake_slice_usecs) },
	{ { "bpage_lease_usecs", 1, 10000000, 10000, "us",
	    "lease of a core's partly used bpage" }, F(bpage_lease_usecs) },
	{ { "max_gaps", 1, 64, 32, "records",
	    "gap records kept per incoming message" }, F(max_gaps) },
	{ { "flags", 0, 0xffff, 0, "bits",
	    "HOMA_FLAG_* bits (2 = no pacer)" }, F(flags) },
	{ { "max_rpcs", 16, 10000000, 100000, "RPCs",
	    "RPCs one socket may hold; more requests are dropped" },
	  F(max_rpcs) },
	{ { "max_half_open", 1, 10000000, 10000, "RPCs",
	    "incomplete incoming requests per socket; beyond it the oldest "
	    "stalled one is dropped, or else the new one" },
	  F(max_half_open) },
	{ { "max_peer_rpcs", 1, 10000000, 2000, "RPCs",
	    "incomplete incoming requests from one host; beyond it that "
	    "host's oldest that sent one packet only is dropped, or else the "
	    "new one" },
	  F(max_peer_rpcs) },
	{ { "max_peers", 16, 10000000, 100000, "hosts",
	    "hosts a socket keeps state for; idle ones are forgotten first" },
	  F(max_peers) },
	{ { "peer_buffer_percent", 1, 100, 50, "percent",
	    "share of the buffer pool one host's incomplete requests may "
	    "hold (a host holding nothing may always start one)" },
	  F(peer_buffer_percent) },
	{ { "transport", 0, 1, 0, "0=udp 1=ip",
	    "datapath: udp (HOMA_TRANSPORT=udp) or raw IP protocol 146 "
	    "(ip)" }, F(transport) },
	{ { "rx_bands", 1, 2, 1, "sockets",
	    "UDP: kernel sockets a Homa socket receives on; 2: DATA and GRANT "
	    "packets at rx_band_prio and above (short messages at the default "
	    "cutoffs, retransmissions, grants) go to a high band read before "
	    "the other, so that they do not queue behind bulk data in the "
	    "kernel (SO_REUSEPORT, a BPF program choosing the socket; raw IP: "
	    "always 1)" },
	  F(rx_bands) },
	{ { "rx_band_prio", 1, 7, 6, "level",
	    "with rx_bands 2: the lowest priority of DATA and GRANT packets "
	    "received in the high band" },
	  F(rx_band_prio) },
	{ { "max_ctrl_queue", 64, 1000000, 65536, "packets",
	    "control packets waiting for output; the timer's RESENDs and "
	    "NEED_ACKs wait for a later tick while the queue is half full, "
	    "answers (BUSY, GRANT, RPC_UNKNOWN, ACK) use the rest" },
	  F(max_ctrl_queue) },
	{ { "max_admitted", 0, 1000000000, 4000000, "bytes",
	    "bytes still to come of the incoming messages granted so far; "
	    "while they reach it, messages never granted get no first grant "
	    "(their senders wait) (0: no limit)" }, F(max_admitted) },
	{ { "request_window", 0, 100000000, 240000, "bytes",
	    "unscheduled bytes of a client's requests to one host that the "
	    "host has not answered yet (with a GRANT or its response); "
	    "further requests wait in the client, shortest first, until "
	    "answers come (0: no limit)" }, F(request_window) },
	{ { "loopback_request_window", 0, 100000000, 8000000, "bytes",
	    "request_window towards a loopback address (its requests go "
	    "whole, see loopback_unsched_bytes; 0: request_window)" },
	  F(loopback_request_window) },
	{ { "request_buffer_window", 0, 1000000000, 2000000, "bytes",
	    "message bytes of a client's requests to one host that the host "
	    "has not answered yet (the buffer space they take there); "
	    "further requests wait in the client as for request_window "
	    "(0: no limit)" }, F(request_buffer_window) },
	{ { "wmem_max", 1, 1000000000000, 100000000, "bytes",
	    "bytes of outgoing messages one socket may hold (a request until "
	    "its RPC ends, a response until acknowledged); a send waits, or "
	    "fails with EAGAIN, while the socket holds this many or more, "
	    "and the socket is not writable (POLLOUT)" }, F(wmem_max) },
};

#define NUM_SETTINGS ((int)(sizeof(settings) / sizeof(settings[0])))

/* field - the storage of setting s in cfg. */
static int64_t *field(struct homa_config *cfg, const struct setting *s)
{
	return (int64_t *)((char *)cfg + s->offset);
}

/* find - the setting called name, or NULL. */
static const struct setting *find(const char *name)
{
	int i;

	for (i = 0; i < NUM_SETTINGS; i++)
		if (strcmp(settings[i].info.name, name) == 0)
			return &settings[i];
	return NULL;
}

void homa_config_defaults(struct homa_config *cfg)
{
	int i;

	memset(cfg, 0, sizeof(*cfg));
	for (i = 0; i < NUM_SETTINGS; i++)
		*field(cfg, &settings[i]) = settings[i].info.def;
}

int homa_config_set_value(struct homa_config *cfg, const char *name,
			  int64_t value)
{
	const struct setting *s = name ? find(name) : NULL;

	if (!s || value < s->info.min || value > s->info.max)
		return -EINVAL;
	*field(cfg, s) = value;
	return 0;
}

int homa_config_get_value(const struct homa_config *cfg, const char *name,
			  int64_t *value)
{
	const struct setting *s = name ? find(name) : NULL;

	if (!s || !value)
		return -EINVAL;
	*value = *field((struct homa_config *)cfg, s);
	return 0;
}

int homa_config_check(const struct homa_config *cfg)
{
	int i;

	for (i = 1; i < HOMA_NUM_PRIORITIES; i++)
		if (cfg->unsched_cutoffs[i] > cfg->unsched_cutoffs[i - 1])
			return -EINVAL;
	if (cfg->max_sched_prio >= cfg->num_priorities &&
	    cfg->num_priorities > 1)
		return -EINVAL;
	if (cfg->loopback_mtu != 0 && cfg->loopback_mtu < 576)
		return -EINVAL;
	return 0;
}

uint8_t homa_config_level(const struct homa_config *cfg, int64_t level)
{
	int64_t top = cfg->num_priorities < HOMA_NUM_PRIORITIES ?
		      cfg->num_priorities - 1 : HOMA_NUM_PRIORITIES - 1;

	if (level > top)
		level = top;
	return level > 0 ? (uint8_t)level : 0;
}

/* The settings whose values also have names, and those names. */
static const struct {
	const char *setting, *word;
	int64_t value;
} value_names[] = {
	{ "transport", "udp", HOMA_TRANSPORT_UDP },
	{ "transport", "ip", HOMA_TRANSPORT_IP },
	{ "resend_priority", "message", HOMA_RESEND_PRIO_MESSAGE },
	{ "resend_priority", "control", HOMA_RESEND_PRIO_CONTROL },
};

/* parse_word - the value called text of setting name (value_names).
 * Returns 0, or -ENOENT when there is none. */
static int parse_word(const char *name, const char *text, int64_t *out)
{
	size_t i;

	for (i = 0; i < sizeof(value_names) / sizeof(value_names[0]); i++)
		if (strcmp(value_names[i].setting, name) == 0 &&
		    strcmp(value_names[i].word, text) == 0) {
			*out = value_names[i].value;
			return 0;
		}
	return -ENOENT;
}

/* parse_value - the number in text (decimal or 0x hex; a name of
 * value_names: "udp"/"ip" for the transport, "message"/"control" for
 * resend_priority).  Returns 0 or -EINVAL. */
static int parse_value(const char *name, const char *text, int64_t *out)
{
	char *end;
	long long v;

	if (parse_word(name, text, out) == 0)
		return 0;
	errno = 0;
	v = strtoll(text, &end, 0);
	if (errno || end == text || *end != '\0')
		return -EINVAL;
	*out = v;
	return 0;
}

/* env_name - HOMA_<NAME> for a setting name, into buf (cap >= 1 bytes;
 * cut short to fit). */
static void env_name(const char *name, char *buf, size_t cap)
{
	static const char prefix[] = "HOMA_";
	size_t i = 0;

	for (; prefix[i] && i + 1 < cap; i++)
		buf[i] = prefix[i];
	for (; *name && i + 1 < cap; name++, i++)
		buf[i] = (char)toupper((unsigned char)*name);
	buf[i] = '\0';
}

/* apply_var - apply the variable lookup finds for setting s, if any, to
 * cfg; a value that does not parse or is out of range goes to report.
 * Returns 1 when it was rejected, else 0. */
static int apply_var(struct homa_config *cfg, const struct setting *s,
		     homa_config_lookup_fn *lookup,
		     homa_config_report_fn *report, void *arg)
{
	struct homa_config_reject r;
	char var[64];
	const char *text;
	int64_t v;

	env_name(s->info.name, var, sizeof(var));
	text = lookup(arg, var);
	if (!text)
		return 0;
	if (parse_value(s->info.name, text, &v) == 0 &&
	    homa_config_set_value(cfg, s->info.name, v) == 0)
		return 0;
	r.var = var;
	r.text = text;
	r.min = s->info.min;
	r.max = s->info.max;
	if (report)
		report(arg, &r);
	return 1;
}

int homa_config_apply_vars(struct homa_config *cfg,
			   homa_config_lookup_fn *lookup,
			   homa_config_report_fn *report, void *arg)
{
	struct homa_config trial;
	int rejected = 0, i;

	for (i = 0; i < NUM_SETTINGS; i++)
		rejected += apply_var(cfg, &settings[i], lookup, report, arg);
	trial = *cfg;
	if (homa_config_check(&trial) != 0) {
		struct homa_config_reject r = { NULL, NULL, 0, 0 };

		if (report)
			report(arg, &r);
		homa_config_defaults(cfg);
		rejected++;
	}
	return rejected;
}

const struct homa_config_info *homa_config_info_find(const char *name)
{
	const struct setting *s = name ? find(name) : NULL;

	return s ? &s->info : NULL;
}

const struct homa_config_info *homa_config_table(int *count)
{
	static struct homa_config_info rows[NUM_SETTINGS];
	int i;

	for (i = 0; i < NUM_SETTINGS; i++)
		rows[i] = settings[i].info;
	*count = NUM_SETTINGS;
	return rows;
}
