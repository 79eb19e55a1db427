/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * homa_datapath - the choice between datapath implementations.
 */
#include <errno.h>

#include "homa_datapath.h"

/* See homa_datapath.h. */
uint32_t homa_dp_encap_bytes(enum homa_dp_kind kind)
{
	return kind == HOMA_DP_UDP ? 8 : 0;
}

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
