/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * sim_internal - the simulator's state and the helpers its modules share
 * (sim_net.c: packets, links, switches; sim_host.c: hosts, NICs, the
 * application; sim_driver.c: traffic and the event loop).  Not an
 * interface: use sim.h.
 */
#ifndef SIM_INTERNAL_H
#define SIM_INTERNAL_H

#include "homa_endpoint.h"
#include "sim.h"
#include "sim_check.h"
#include "sim_events.h"
#include "sim_fault.h"
#include "workload_rng.h"

/* Levels of priority a port can have. */
#define SIM_MAX_QUEUES 8

/* Bytes a packet occupies on an Ethernet link besides its IP packet:
 * header 14 + FCS 4 + preamble 8 + inter-frame gap 12; IP packets shorter
 * than 46 bytes are padded to 46. */
#define SIM_ETH_OVERHEAD 38
#define SIM_ETH_MIN_PAYLOAD 46
#define SIM_IPV4_HEADER 20

/* Event kinds. */
enum sim_ev_kind {
	SIM_EV_ARRIVAL = 1,   /* index: host; a new request is due */
	SIM_EV_NIC_FREE,      /* index: host; its NIC finished a packet */
	SIM_EV_DELIVER,       /* index: node; ptr: the packet arrives */
	SIM_EV_PORT_FREE,     /* index: port; it finished a packet */
	SIM_EV_TIMER,         /* index: host; its endpoint's timer is due */
	SIM_EV_HOST_DOWN,     /* index: host; it crashes (state lost) */
	SIM_EV_HOST_UP,       /* index: host; it starts again */
	SIM_EV_HEAL,          /* the fault phase ends */
	SIM_EV_APP,           /* index: host; its slow application is free */
	SIM_EV_RX,            /* index: host; its slow receiver finished the
			       * packet at the head of its FIFO */
};

/* A packet in the network. */
struct sim_pkt {
	struct sim_pkt *next;      /* queue or free list */
	uint32_t src, dst;         /* host indexes (dst UINT32_MAX: none) */
	uint32_t len;              /* Homa packet bytes */
	uint32_t wire;             /* bytes on the wire */
	uint8_t prio;              /* 0..7 as the core chose */
	uint16_t csum;             /* the sender's checksum (with faults) */
	uint64_t queued_at;        /* when it joined its current queue */
	uint8_t data[];            /* sim->pkt_cap bytes */
};

/* An egress port of a switch and the link behind it. */
struct sim_port {
	struct sim_pkt *head[SIM_MAX_QUEUES], *tail[SIM_MAX_QUEUES];
	uint64_t queued;           /* bytes waiting (not the one on the link) */
	uint32_t mbps;
	uint64_t done;             /* end of its last packet (sim_tx_end) */
	uint32_t to;               /* node at the other end */
	uint32_t sw;               /* switch it belongs to */
	bool busy;
};

/* A FIFO of packets (a host's NIC queue, a slow receiver's queue),
 * counting the wire bytes it holds. */
struct sim_pktq {
	struct sim_pkt *head, *tail;
	uint64_t bytes;
};

/* A switch: its ports are s->ports[first_port .. first_port + nports). */
struct sim_switch {
	uint32_t first_port;
	uint32_t nports;
	int rack;                  /* ToR: its rack; spine: -1 */
};

/* A host: one endpoint, its NIC and its traffic. */
struct sim_host {
	struct homa_ep *ep;        /* NULL while the host is down */
	void *region;
	union sockaddr_in_union addr;
	uint32_t tor;              /* node of its switch */
	uint32_t incarnation;      /* 0, then one more per restart */
	bool down;                 /* crashed, not yet started again */
	bool nic_busy;
	uint64_t nic_done;         /* end of its NIC's last packet
				    * (sim_tx_end) */
	bool arrival_pending;      /* an SIM_EV_ARRIVAL is queued */
	bool over_limit;           /* a memory limit violation was logged */
	uint64_t app_free_at;      /* slow server application: when it may
				    * take the next request */
	uint64_t timer_at;         /* time of the live timer event */
	struct workload_rng rng;   /* sizes and destinations */
	double next_arrival;       /* ns, unrounded */
	/* The NIC's transmit queue: every packet the endpoint released,
	 * waiting for the link in FIFO order (no limit; the core's pacer
	 * keeps it short). */
	struct sim_pktq nicq;
	/* rx_ns: packets that reached the host, waiting for its CPU. */
	struct sim_pktq rxq;
	bool rx_busy;              /* an SIM_EV_RX is queued */
};

struct sim {
	struct sim_params p;
	struct sim_events ev;
	uint64_t now;
	struct sim_host *hosts;
	uint32_t nhosts;
	struct sim_switch *sw;
	uint32_t nsw;
	struct sim_port *ports;
	uint32_t nports;
	struct sim_pkt *free_pkts;
	size_t pkt_cap;            /* payload bytes of a packet buffer */
	struct workload_rng spray; /* spine choice */
	struct sim_fault *fault;   /* NULL: no faults */
	/* client-id bases of new incarnations */
	struct workload_rng restart_rng;
	double mean_gap_ns;        /* mean time between a host's requests */
	bool traffic;              /* Poisson arrivals on */
	bool healed;               /* the fault phase is over */
	uint64_t msg_limit;        /* requests to generate so far */
	uint64_t reexec_ns;        /* a server may forget an RPC after this */
	struct sim_msg *msgs;
	size_t nmsgs, capmsgs;
	struct sim_idmap ids;      /* (client host, id) -> message */
	struct sim_idmap taint;    /* (client host, id) of tainted RPCs */
	struct sim_violations v;
	uint8_t *txbuf;            /* content of the message being sent */
	uint8_t scratch[4096];     /* for content checks */
	struct sim_counters c;
	uint64_t retired[HOMA_STAT_COUNT];  /* counters of destroyed
				    * endpoints (restarts) */
	bool oom;                  /* an allocation failed: stop */
};

/* Node numbers: hosts are 0..nhosts-1, switch i is nhosts + i. */
static inline bool sim_is_host(const struct sim *s, uint32_t node)
{
	return node < s->nhosts;
}

/* sim_push - schedule an event (an allocation failure sets s->oom). */
void sim_push(struct sim *s, uint64_t time, enum sim_ev_kind kind,
	      uint32_t index, void *ptr);

/* ---- sim_net.c ---- */

/* sim_net_build - the switches and ports of the topology, and each host's
 * switch.  Returns 0 or -ENOMEM. */
int sim_net_build(struct sim *s);

/* sim_net_free - free packets, ports and switches. */
void sim_net_free(struct sim *s);

/* sim_pkt_alloc - a packet buffer of s->pkt_cap bytes (NULL: no memory). */
struct sim_pkt *sim_pkt_alloc(struct sim *s);

/* sim_pkt_free - give a packet back to the free list. */
void sim_pkt_free(struct sim *s, struct sim_pkt *pkt);

/* sim_wire_bytes - bytes a Homa packet of len occupies on a link. */
uint32_t sim_wire_bytes(uint32_t len);

/*
 * sim_tx_end - a transmitter of mbps starts wire bytes at now.  *done is
 * when its previous packet ended, exactly, in units of 1/mbps ns (0 at
 * first); a packet started within the nanosecond the previous one ended
 * follows it back to back, so that a busy transmitter keeps its exact
 * rate instead of losing up to a nanosecond per packet.  Updates *done;
 * returns the end of the packet in ns, rounded up.  now * mbps must fit
 * in 64 bits (at 1 Tbit/s, five hours of virtual time).
 */
uint64_t sim_tx_end(uint64_t *done, uint64_t now, uint32_t wire,
		    uint32_t mbps);

/* sim_link_send - pkt starts on the link from node from to node to and
 * its last bit leaves at tx_end: after the fault hook (links out of a
 * host only), it is delivered to `to` one propagation delay later, plus
 * the delay a fault added (or dropped, or delivered twice). */
void sim_link_send(struct sim *s, struct sim_pkt *pkt, uint32_t from,
		   uint32_t to, uint64_t tx_end);

/* sim_switch_receive - a switch (node) got pkt: queue it at the egress
 * port towards pkt->dst, or drop it. */
void sim_switch_receive(struct sim *s, uint32_t node, struct sim_pkt *pkt);

/* sim_port_free - port finished sending a packet: start the next one. */
void sim_port_free(struct sim *s, uint32_t port);

/* ---- sim_host.c ---- */

/* sim_hosts_create - endpoints, regions and addresses of every host.
 * Returns 0, or -ENOMEM / -EINVAL (message in err). */
int sim_hosts_create(struct sim *s, char *err, size_t errcap);

/* sim_hosts_free - destroy every endpoint and region. */
void sim_hosts_free(struct sim *s);

/* sim_host_index - the host with address addr, or UINT32_MAX. */
uint32_t sim_host_index(const struct sim *s,
			const union sockaddr_in_union *addr);

/* sim_host_deliver - pkt reached host h: feed it to the endpoint (pkt is
 * freed) and let the host react; a slow receiver (rx_ns) queues it for its
 * CPU first, or drops it when its FIFO is full. */
void sim_host_deliver(struct sim *s, uint32_t h, struct sim_pkt *pkt);

/* sim_host_rx_done - host h's slow receiver finished the packet at the
 * head of its FIFO: feed it to the endpoint, start the next. */
void sim_host_rx_done(struct sim *s, uint32_t h);

/* sim_host_nic_free - host h's NIC finished a packet. */
void sim_host_nic_free(struct sim *s, uint32_t h);

/* sim_host_timer - host h's timer event of time t fired. */
void sim_host_timer(struct sim *s, uint32_t h, uint64_t t);

/* sim_host_send - host h sends message msg (an index into s->msgs) now.
 * Returns 0 or a negative errno of the core. */
int sim_host_send(struct sim *s, uint32_t h, uint32_t msg);

/* sim_host_react - after anything touched host h's endpoint: hand ready
 * messages to the application, start the NIC, re-arm the timer, check the
 * endpoint's RPC count against max_rpcs. */
void sim_host_react(struct sim *s, uint32_t h);

/* sim_host_down - host h crashes: its endpoint (every RPC, its pool) is
 * destroyed, its waiting packets are lost, its outstanding client RPCs are
 * recorded as lost with it; it drops what arrives until sim_host_up. */
void sim_host_down(struct sim *s, uint32_t h);

/* sim_host_up - host h starts again: a new endpoint at the same address,
 * client ids from a new base.  Returns 0 or -ENOMEM / -EINVAL. */
int sim_host_up(struct sim *s, uint32_t h);

/* sim_taint - record that RPC (client host, client id) met a corruption
 * that escaped the checksum. */
void sim_taint(struct sim *s, uint32_t client, uint64_t id);

/* sim_tainted - true when (client host, client id) is tainted. */
bool sim_tainted(const struct sim *s, uint32_t client, uint64_t id);

/* sim_trace_pkt - with tracing on, print what happens to pkt (what:
 * "sent", "delivered", "dropped: ..."), when it concerns the traced RPC. */
void sim_trace_pkt(struct sim *s, const struct sim_pkt *pkt,
		   const char *what);

/* sim_trace_rpc - with tracing on, print an application event of RPC
 * (client host, client id) when it is the traced one. */
void sim_trace_rpc(struct sim *s, uint32_t client, uint64_t id,
		   const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* sim_pkt_copy - a new packet with pkt's addresses, sizes and bytes (NULL:
 * no memory). */
struct sim_pkt *sim_pkt_copy(struct sim *s, const struct sim_pkt *pkt);

#endif /* SIM_INTERNAL_H */
