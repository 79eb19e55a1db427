// SPDX-License-Identifier: BSD-2-Clause
/* The fault hook: see sim_fault.h.  No faults yet. */

#include <stddef.h>

#include "sim_fault.h"

enum sim_fault_verdict sim_fault_at_link(struct sim_fault *f,
					 struct sim_pkt *pkt, uint32_t from,
					 uint32_t to, uint64_t now,
					 uint64_t *extra_delay_ns)
{
	(void)pkt;
	(void)from;
	(void)to;
	(void)now;
	(void)extra_delay_ns;
	if (f == NULL)
		return SIM_FAULT_PASS;
	/* Fault models come with issue #4. */
	return SIM_FAULT_PASS;
}
