/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * homa_stats - the engine's counters.  One array of uint64_t per endpoint,
 * indexed by enum homa_stat; names follow the kernel module's metrics where
 * one exists.
 */
#ifndef HOMA_STATS_H
#define HOMA_STATS_H

#include <stdint.h>

#define HOMA_STAT_LIST(X) \
	X(packets_sent_DATA) X(packets_sent_GRANT) X(packets_sent_RESEND) \
	X(packets_sent_RPC_UNKNOWN) X(packets_sent_BUSY) \
	X(packets_sent_CUTOFFS) X(packets_sent_FREEZE) \
	X(packets_sent_NEED_ACK) X(packets_sent_ACK) \
	X(packets_rcvd_DATA) X(packets_rcvd_GRANT) X(packets_rcvd_RESEND) \
	X(packets_rcvd_RPC_UNKNOWN) X(packets_rcvd_BUSY) \
	X(packets_rcvd_CUTOFFS) X(packets_rcvd_FREEZE) \
	X(packets_rcvd_NEED_ACK) X(packets_rcvd_ACK) \
	X(drop_short) X(drop_bad_type) X(drop_short_type) \
	X(drop_bad_length) X(drop_bad_offset) X(drop_wrong_port) \
	X(drop_unknown_rpc) X(drop_wrong_peer) X(drop_length_mismatch) \
	X(drop_duplicate_data) X(drop_too_many_gaps) X(drop_no_buffer) \
	X(drop_not_server) X(drop_ctrl_queue_full) X(drop_no_memory) \
	X(requests_sent) X(responses_sent) X(requests_received) \
	X(responses_received) X(resent_packets) X(resend_requests) \
	X(rpc_timeouts) X(client_rpc_errors) X(server_rpcs_acked) \
	X(server_rpcs_timed_out) X(acks_piggybacked) X(buffer_waits) \
	X(grants_sent_bytes) X(cutoffs_updates) X(rpc_restarts) \
	X(evicted_half_open) X(drop_peer_limit) X(drop_too_many_peers) \
	X(evicted_stalled) X(grant_stalls) X(resend_during_response) \
	X(drop_half_open_busy) X(requests_held) X(ticks_behind) \
	X(rx_placed) X(rx_misplaced) X(tx_copies_skipped) \
	X(grant_no_memory) X(copy_faults)

enum homa_stat {
#define HOMA_STAT_ENUM(name) HOMA_STAT_##name,
	HOMA_STAT_LIST(HOMA_STAT_ENUM)
#undef HOMA_STAT_ENUM
	HOMA_STAT_COUNT
};

/* homa_stat_name - the printable name of a counter (static string). */
const char *homa_stat_name(enum homa_stat stat);

#endif /* HOMA_STATS_H */
