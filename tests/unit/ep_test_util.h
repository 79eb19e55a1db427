/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ep_test_util - what the unit tests of the endpoint and of its modules
 * (test_homa_endpoint.c, test_homa_incoming.c, test_homa_output.c,
 * test_homa_timer.c, test_homa_bufwait.c, test_homa_resend.c,
 * test_hostile.c, ...) share: an in-memory network in which endpoints
 * exchange packets through one queue, driven by a fake clock, with loss
 * chosen by a filter; an application side (send, serve, check); and
 * builders of single packets handed straight to one endpoint.
 *
 * Every helper fails the running cmocka test when an expectation breaks;
 * every packet an endpoint sends through the network must decode.
 * Include <cmocka.h> (with its prerequisites) before this header.
 */
#ifndef EP_TEST_UTIL_H
#define EP_TEST_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "homa_endpoint.h"
#include "homa_wire.h"

/* cfg - the settings the tests hand to net_new (&cfg); ep_default_settings
 * puts them back to the defaults. */
extern struct homa_config cfg;

/* ep_default_settings - a cmocka setup: cfg set to homa_config_defaults;
 * returns 0. */
int ep_default_settings(void **state);

/* ep_free_networks - a cmocka teardown: net_free every network net_new
 * made that is still there (a test an assertion ended early leaves its
 * network behind); returns 0. */
int ep_free_networks(void **state);

/* T - a test run with the default settings (ep_default_settings) before
 * it and its networks freed after it (ep_free_networks). */
#define T(fn) cmocka_unit_test_setup_teardown(fn, ep_default_settings, \
					      ep_free_networks)

/* Endpoints one network holds. */
#define NET_MAX_EPS 4

/* A packet in flight (internal to the network). */
struct flight;

/* An endpoint's RPC (homa_rpc.h). */
struct homa_rpc;

/* The in-memory network.  Endpoint i is at 10.0.0.(i+1) on its port. */
struct net {
	struct homa_ep *ep[NET_MAX_EPS];
	union sockaddr_in_union addr[NET_MAX_EPS];
	void *region[NET_MAX_EPS];      /* each endpoint's buffer region */
	int n;                          /* endpoints added */
	uint64_t now;                   /* the clock (ns) */
	const struct homa_config *cfg;  /* read by net_add (not copied) */
	struct flight *q;
	size_t qhead, qlen;
	/* Return false to drop a packet (NULL: nothing is lost). */
	bool (*filter)(struct net *net, const uint8_t *pkt, size_t len,
		       int from, int to);
	int drops, delivered;
	int counter;                    /* free for filters */
	uint32_t bpages[NET_MAX_EPS];   /* each region's size in bpages */
	struct net *next_live;          /* networks not freed yet */
	uint32_t gather_segs;           /* most packets collected as one
					 * gathered run (0: whole packets) */
	bool defer_mode;                /* deliver as the socket layer does:
					 * copies deferred, the receiver's
					 * output (its GRANTs) collected
					 * before they are made, and the
					 * packet's bytes wiped once they
					 * are */
	homa_copier copier;             /* of the endpoints net_add makes
					 * from now on (homa_ep_params) */
	void *copier_ctx;
};

/* net_new - an empty network at time 1 ms whose endpoints net_add creates
 * with the settings *cfg as they are then (cfg must outlive the network).
 * Free it with net_free. */
struct net *net_new(const struct homa_config *cfg);

/* net_free - destroy every endpoint, its region and the queued packets. */
void net_free(struct net *net);

/* net_add - add an endpoint on 10.0.0.(n+1):port (a server when server),
 * with a buffer region of bpages bpages (0 = none).  Returns its index. */
int net_add(struct net *net, uint16_t port, bool server, int bpages);

/* net_pair - a new network (net_new(settings)) with a client endpoint
 * (*c, port 40000) and a server (*s, port 99), bpages bpages each. */
struct net *net_pair(const struct homa_config *settings, int bpages, int *c,
		     int *s);

/* net_server - a new network (net_new(settings)) holding a server endpoint
 * (*s, port 99) with bpages bpages. */
struct net *net_server(const struct homa_config *settings, int bpages,
		       int *s);

/* dead_pair - net_pair with 8 bpages each on a dead network: every packet
 * is lost (filter drop_all). */
struct net *dead_pair(const struct homa_config *settings, int *c, int *s);

/* deliver_some - take what every endpoint sends (each packet must fit
 * homa_ep_info.max_output, have a priority 0..7 and decode) and deliver at most
 * max queued packets (and what they cause) at the current time; returns
 * the number delivered.  The rest stays queued. */
int deliver_some(struct net *net, int max);

/* deliver_all - deliver every queued packet (and what they cause) at the
 * current time; returns the number delivered. */
int deliver_all(struct net *net);

/* settle - deliver until no endpoint sends anything more, moving the clock
 * 20 us forward after each round (a pacer lets DATA go meanwhile; timers
 * do not run). */
void settle(struct net *net);

/* tick_all - move the clock by one tick of the settings (net->cfg), run
 * every endpoint's timer, then settle. */
void tick_all(struct net *net);

/* step - deliver packets until the network is quiet, moving the clock
 * forward to wherever a pacer holds DATA back; returns the number
 * delivered. */
int step(struct net *net);

/* advance - move the clock by us microseconds in steps of 100 us, running
 * every endpoint's timer at each and delivering what follows. */
void advance(struct net *net, uint64_t us);

/* tick_ep - move the clock by one tick of the settings (net->cfg) and run
 * endpoint i's timer alone; its output stays where it is. */
void tick_ep(struct net *net, int i);

/* fill - n bytes at p of the pattern of seed (byte i depends on i and
 * seed). */
void fill(uint8_t *p, size_t n, uint32_t seed);

/* gather - a malloc'd copy of the delivered message m of endpoint i, read
 * out of its bpages (the caller frees it).  The message must have one
 * bpage per HOMA_BPAGE_SIZE bytes begun, each inside i's region. */
uint8_t *gather(struct net *net, int i, const struct homa_msg_ready *m);

/* send_req - client c sends a request of len bytes, filled with seed's
 * pattern and with cookie seed, to endpoint s.  Returns its id (even). */
uint64_t send_req(struct net *net, int c, int s, uint32_t len, uint32_t seed);

/* serve - server s takes one request, hands back its bpages and answers
 * with resp_len bytes of the pattern seeded by the request's first byte;
 * returns 1, or 0 when no request was ready. */
int serve(struct net *net, int s, uint32_t resp_len);

/* request_seed - the first byte of a request filled with seed (serve
 * answers with that byte as its seed). */
uint32_t request_seed(uint32_t seed);

/* check_rpc - one RPC from c to s with the given sizes: the response
 * arrives with the cookie and the bytes serve puts in it; its bpages go
 * back to c's pool. */
void check_rpc(struct net *net, int c, int s, uint32_t req_len,
	       uint32_t resp_len, uint32_t seed);

/* hold_request - client c sends a 100-byte request to s; the server takes
 * it (and hands back its bpages) into *m but does not answer yet.  Returns
 * the client's RPC id. */
uint64_t hold_request(struct net *net, int c, int s,
		      struct homa_msg_ready *m);

/* drop_all - a filter: a dead network. */
bool drop_all(struct net *net, const uint8_t *pkt, size_t len, int from,
	      int to);

/* drop_every_7th - a filter: lose one packet in seven. */
bool drop_every_7th(struct net *net, const uint8_t *pkt, size_t len,
		    int from, int to);

/* ep_counter - endpoint i's counter called name; fails the test when no
 * counter has that name. */
uint64_t ep_counter(struct net *net, int i, const char *name);

/* used_bpages - bpages of endpoint i's pool in use (not free). */
uint32_t used_bpages(struct net *net, int i);

/* ---- single packets handed to one endpoint ---- */

/* data_packet - the DATA packet with header *h (its type set to DATA) and
 * len payload bytes, byte k being (h->offset + k) & 0xff, written to pkt
 * (HOMA_DATA_HDR_LEN + len bytes); returns its length. */
size_t data_packet(uint8_t *pkt, struct homa_pkt *h, uint32_t len);

/* data_pkt - DATA of request id (message_length bytes) from 10.0.0.9:5000
 * to endpoint s: len bytes at offset, each byte (offset + k) & 0xff, built
 * in pkt (HOMA_DATA_HDR_LEN + len bytes). */
void data_pkt(struct net *net, int s, uint8_t *pkt, uint64_t id,
	      uint32_t message_length, uint32_t offset, uint32_t len);

/* from_peer9 - the address data_pkt's packets come from. */
union sockaddr_in_union from_peer9(void);

/* check_pattern - the request s's application takes now holds byte
 * k & 0xff at every position k and is length bytes long; its bpages go
 * back. */
void check_pattern(struct net *net, int s, uint32_t length);

/* deferred_first_packet - a server endpoint (port 99, 4 bpages, region
 * zeroed) that is given, with its copies deferred, the first 1,000 bytes
 * (built in pkt) of request 2 of message_length bytes from
 * 10.0.0.9:5000; returns its index. */
int deferred_first_packet(struct net *net, uint8_t *pkt,
			  uint32_t message_length);

/* inject_request_at - the DATA packet at offset (1,000 bytes, or the rest
 * of the message) of a request of length bytes with id from src_ip, port
 * sport, to endpoint s. */
void inject_request_at(struct net *net, int s, uint32_t src_ip,
		       uint16_t sport, uint64_t id, uint32_t length,
		       uint32_t offset);

/* inject_request - the first DATA packet of a request (inject_request_at
 * offset 0). */
void inject_request(struct net *net, int s, uint32_t src_ip, uint16_t sport,
		    uint64_t id, uint32_t length);

/* requests_from_hosts - the first DATA packet (inject_request) of request 2
 * of length bytes from each of n hosts 11.0.1.0, 11.0.1.1, ... (port 5000)
 * to endpoint s, in that order. */
void requests_from_hosts(struct net *net, int s, uint32_t n, uint32_t length);

/* host_addr - the address ip (host order) with port. */
union sockaddr_in_union host_addr(uint32_t ip, uint16_t port);

/* inject_pkt - encode the control packet *p (its dport is set to endpoint
 * s's port, its sport to src's) and hand it to endpoint s as coming from
 * src. */
void inject_pkt(struct net *net, int s, const union sockaddr_in_union *src,
		struct homa_pkt *p);

/* inject_simple - a control packet of type naming sender_id from src to
 * endpoint s (RESENDs ask for everything, HOMA_RESEND_ALL). */
void inject_simple(struct net *net, int s, const union sockaddr_in_union *src,
		   uint8_t type, uint64_t sender_id);

/* A packet an endpoint sent, decoded (next_out). */
struct sent_pkt {
	struct homa_pkt pkt;            /* payload points into buf */
	union sockaddr_in_union dest;
	uint8_t priority;
	uint8_t buf[2048];
};

/* next_out - pull endpoint i's next packet (whole packets, no runs) into
 * *s and decode it.  Returns false when it has nothing to send now. */
bool next_out(struct net *net, int i, struct sent_pkt *s);

/* next_out_paced - next_out, first moving the clock forward to when
 * endpoint i's pacer lets DATA go each time it holds some back (timers do
 * not run).  Returns false when i has nothing more to send. */
bool next_out_paced(struct net *net, int i, struct sent_pkt *s);

/* count_type - output packets of type endpoint i sends now (all output is
 * taken and dropped). */
int count_type(struct net *net, int i, uint8_t type);

/* server_rpc - endpoint i's record of the server RPC for client RPC
 * client_id of src, or NULL. */
struct homa_rpc *server_rpc(struct net *net, int i, uint64_t client_id,
			    const union sockaddr_in_union *src);

/* same_addr - a and b are the same IPv4 address and port. */
bool same_addr(const union sockaddr_in_union *a,
	       const union sockaddr_in_union *b);

/* epi - homa_ep_info of ep, by value. */
struct homa_ep_info epi(const struct homa_ep *ep);

/* pkt_in - the datagram buf[0..len) from src (NULL: an empty address) into
 * ep as a batch of one: copies made at once, ep's backlog state (behind
 * its input or not) left as it is. */
void pkt_in(struct homa_ep *ep, const uint8_t *buf, size_t len,
	    const union sockaddr_in_union *src, int core, uint64_t now);

/* pkt_in_defer - pkt_in with the copies deferred (homa_rx_batch
 * defer_copies): the caller keeps buf until the copies are made (its next
 * input batch or homa_ep_lent_places). */
void pkt_in_defer(struct homa_ep *ep, const uint8_t *buf, size_t len,
		  const union sockaddr_in_union *src, uint64_t now);

/* backlog_in - an empty batch into ep that says whether packets wait
 * (homa_rx_batch.behind). */
void backlog_in(struct homa_ep *ep, bool behind);

/* lend_req - a lent request (HOMA_EP_SEND_LENT) of len bytes from src
 * (filled with seed); returns its id. */
uint64_t lend_req(struct net *net, int c, int s, uint8_t *src, uint32_t len,
		  uint32_t seed);

#endif /* EP_TEST_UTIL_H */
