/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * sim_fault - the place where faults will enter the simulator (issue #4:
 * drop, duplicate, reorder, corrupt, partition, host restart).  Every
 * packet that enters a link passes sim_fault_at_link, which sees the
 * packet, both ends and the time and decides what the link does with it.
 * No fault is implemented yet: with no fault model (NULL) every packet
 * passes unchanged.
 *
 * Intended extensions, all derived from the run's seed (one RNG stream of
 * their own, so that faults never shift the traffic's random choices):
 *   drop       return SIM_FAULT_DROP;
 *   corrupt    flip bytes of pkt->data[0 .. pkt->len) and pass;
 *   reorder    pass with *extra_delay_ns > 0;
 *   duplicate  a verdict SIM_FAULT_DUPLICATE that sim_link_send answers by
 *              delivering a copy as well;
 *   partition  drop every packet between two sets of nodes for a while;
 *   restart    not per packet: the driver would destroy and re-create a
 *              host's endpoint (sim_host.c) at a chosen time.
 */
#ifndef SIM_FAULT_H
#define SIM_FAULT_H

#include <stdint.h>

struct sim_fault;   /* the fault model (none yet) */
struct sim_pkt;

enum sim_fault_verdict {
	SIM_FAULT_PASS = 0,   /* deliver (after *extra_delay_ns more) */
	SIM_FAULT_DROP = 1,   /* the packet is lost */
};

/*
 * sim_fault_at_link - the fault model's verdict on pkt entering the link
 * from node `from` to node `to` at time now.  May change pkt's bytes and
 * set *extra_delay_ns (0 on entry).  The caller keeps ownership of pkt and
 * frees it on SIM_FAULT_DROP.  f == NULL: always SIM_FAULT_PASS.
 */
enum sim_fault_verdict sim_fault_at_link(struct sim_fault *f,
					 struct sim_pkt *pkt, uint32_t from,
					 uint32_t to, uint64_t now,
					 uint64_t *extra_delay_ns);

#endif /* SIM_FAULT_H */
