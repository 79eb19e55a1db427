/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * homa_datapath - the choice between datapath implementations.
 */
#include <errno.h>

#include "homa_datapath.h"

/*
 * homa_ip_open - homa_dp_open for the raw IP protocol 146 datapath (same
 * contract; -EPERM, with a message on stderr, without CAP_NET_RAW).
 * Defined in homa_ip.c.
 */
int homa_ip_open(int family, uint16_t port, struct homa_dp **out);

/* See homa_datapath.h. */
int homa_dp_open(enum homa_dp_kind kind, int family, uint16_t port,
		 struct homa_dp **out)
{
	*out = NULL;
	switch (kind) {
	case HOMA_DP_UDP:
		return homa_udp_open(family, port, out);
	case HOMA_DP_IP:
		return homa_ip_open(family, port, out);
	}
	return -EPROTONOSUPPORT;
}
