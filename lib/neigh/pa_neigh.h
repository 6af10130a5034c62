/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef PA_NEIGH_H
#define PA_NEIGH_H

/**
 * @file
 * Neighbours: ARP (IPv4) and IPv6 neighbour discovery.
 *
 * The appliance answers ARP requests and neighbour solicitations for its
 * own addresses: each port's "addr" (on that port), the LB's VIPs,
 * lb.local_addr / local_addr6 and the full-NAT pool lb.fnat.addrs (on
 * every port). It resolves, on each port,
 * the port's "gateway" and the LB backends (without a configured "mac")
 * that sit on one of the port's connected subnets, keeps a bounded cache
 * that ages and re-resolves, and publishes the MACs to the data path
 * (pa_lb_neigh_set(), pa_lb_gateway_set()).
 *
 * Data path (rx stage, pa_neigh_inline.h): a frame is recognised as ours
 * by pa_neigh_rx_classify() with one lookup in a read-only address table
 * (RCU-published by the control side) and handed, with no lock, syscall or
 * allocation, to the control side through a multi-producer ring. The rx
 * stage counts it as dropped with reason "local" (it leaves the data path
 * there; whatever the control side sends back is counted under "neigh"),
 * or "neigh_ring_full" when the ring is full (live mode; replay waits).
 *
 * Control side (pa_neigh_poll(), one thread at a time, under an internal
 * mutex shared with the views): validates each frame strictly
 * (pa_neigh_parse()), answers, learns, runs the timers, and queues the
 * frames it sends on a per-port ring that one TX-capable lcore drains onto
 * its own TX queue of that port (pa_neigh_tx_ring()).
 *
 * Cache states (RFC 4861 names): incomplete (asked, no answer yet),
 * reachable (confirmed within reachable_ms), stale (a MAC learned or
 * aged, still used), probe (stale target being confirmed by unicast
 * requests), failed (no answer to the last probes: the data path falls
 * back). Targets (gateways, backends) are re-resolved: reachable -> stale
 * at reachable_ms, then probed at once every retrans_ms, up to probes
 * times, the MAC staying in use meanwhile; failed targets are asked again
 * after failed_retry_ms. Other entries (hosts that asked for us) are
 * forgotten gc_ms after their last update. In replay mode no timer runs:
 * one request is sent for each target when it appears and entries never
 * age, so that the output depends only on the input.
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>
#include <rte_rcu_qsbr.h>
#include <rte_ring.h>

#include <jansson.h>

#include "pa_capture.h"
#include "pa_config.h"
#include "pa_net.h"
#include "pa_port.h"
#include "pa_stats.h"

#define PA_NEIGH_RX_RING	512	/**< frames waiting for the control side */
#define PA_NEIGH_TX_RING	256	/**< frames waiting for a port's TX, per port */
/** Mbufs of the ports' pools the neighbour rings can hold at once. */
#define PA_NEIGH_INFLIGHT(n_ports) \
	(PA_NEIGH_RX_RING + (n_ports) * PA_NEIGH_TX_RING)

#define PA_NEIGH_DEF_REACHABLE_MS	30000
#define PA_NEIGH_DEF_RETRANS_MS		1000
#define PA_NEIGH_DEF_PROBES		3
#define PA_NEIGH_DEF_FAILED_RETRY_MS	10000
#define PA_NEIGH_DEF_GC_MS		60000
#define PA_NEIGH_DEF_MAX_ENTRIES	1024

/** Cache entry states. */
enum pa_neigh_state {
	PA_NEIGH_INCOMPLETE = 0,
	PA_NEIGH_REACHABLE,
	PA_NEIGH_STALE,
	PA_NEIGH_PROBE,
	PA_NEIGH_FAILED,
};

struct pa_lb;
struct pa_neigh;

struct pa_neigh_opts {
	/** Ports' addr and gateway; lb.local_addr / local_addr6, lb.fnat.
	 * Borrowed. */
	const struct pa_config *cfg;
	/** Port ids, MACs and pools (frames sent on a port come from its
	 * pool). Borrowed. */
	const struct pa_port_set *ports;
	/** The data path's QSBR variable (NULL: tables are freed at once,
	 * unit tests without lcores). */
	struct rte_rcu_qsbr *rcu;
	/** VIPs and backends, and where resolved MACs go (NULL: none). */
	struct pa_lb *lb;
	/** Replay: no timers (see above). */
	bool replay;
	/** If set, the frames handed to the control side go to this
	 * capture tap once handled (drop reason "local") while that reason
	 * is captured (the replay's drops file, capture_start); else they
	 * are freed. In replay mode (the tap waits) they are kept for the
	 * next poll while its ring is full. */
	struct pa_capture_tap *capture;
	int socket;
	/* Timers and size; 0 = the PA_NEIGH_DEF_* value. */
	uint32_t reachable_ms;
	uint32_t retrans_ms;
	uint32_t probes;
	uint32_t failed_retry_ms;
	uint32_t gc_ms;
	uint32_t max_entries;
};

/**
 * Create the neighbour subsystem: rings, cache, the address table, and an
 * incomplete entry (with its first request queued) for every target.
 * @param now_ms  the caller's clock (milliseconds, monotonic)
 * @return it, or NULL with the reason in @p err.
 */
struct pa_neigh *pa_neigh_create(const struct pa_neigh_opts *o,
		uint64_t now_ms, char *err, size_t err_len);

/** Free everything, every mbuf still queued included (data path
 * stopped). NULL is fine. */
void pa_neigh_destroy(struct pa_neigh *n);

/**
 * Control side's work: handle the frames waiting (at most a few hundred),
 * follow LB changes (VIPs, backends), run the timers, free retired
 * tables. Any one thread at a time (takes the internal mutex).
 * @return frames handled.
 */
unsigned int pa_neigh_poll(struct pa_neigh *n, uint64_t now_ms);

/** Nothing waiting for the control side, nothing waiting to be sent. */
bool pa_neigh_idle(struct pa_neigh *n);

/** The ring the rx stage hands frames to (multi-producer). */
struct rte_ring *pa_neigh_rx_ring(const struct pa_neigh *n);

/** The ring of frames to send on port @p port_index (single consumer:
 * the port's TX lcore; multi-producer: the control thread's
 * pa_neigh_poll() and lib/excp's thread), or NULL. */
struct rte_ring *pa_neigh_tx_ring(const struct pa_neigh *n,
		unsigned int port_index);

struct pa_neigh_fast;

/** What the rx stage reads (see pa_neigh_inline.h). */
const struct pa_neigh_fast *pa_neigh_fast(const struct pa_neigh *n);

/**
 * neigh_list: [{"address", "mac" (null until known), "port", "state",
 * "age" (seconds since the entry last changed or was confirmed),
 * "target" ("gateway", "backend", or null), "probes"}], sorted by port
 * then address.
 * @param now_ms  the same clock as pa_neigh_poll()
 */
json_t *pa_neigh_list_json(struct pa_neigh *n, uint64_t now_ms);

/** Look an entry up (tests, tools). @return 0 and the state/MAC, or
 * -ENOENT. */
int pa_neigh_lookup(struct pa_neigh *n, const struct pa_ip_addr *addr,
		unsigned int port_index, enum pa_neigh_state *state,
		uint8_t mac[6]);

/** Name of a state ("reachable", ...). */
const char *pa_neigh_state_name(enum pa_neigh_state s);

/* ---- frames (pure functions; neigh_pkt.c) ---- */

/** Kinds of frame the control side handles. */
enum pa_neigh_msg_type {
	PA_NEIGH_MSG_ARP_REQUEST = 1,
	PA_NEIGH_MSG_ARP_REPLY,
	PA_NEIGH_MSG_NS,
	PA_NEIGH_MSG_NA,
};

/** Why a frame was refused (negative return of pa_neigh_parse()). */
enum pa_neigh_bad {
	PA_NEIGH_BAD_TRUNCATED = 1,	/**< shorter than its headers say */
	PA_NEIGH_BAD_HEADER,		/**< not Ethernet/IPv4 ARP, op not 1/2;
					 * IPv6 version, next header not ICMPv6 */
	PA_NEIGH_BAD_TYPE,		/**< ICMPv6 type not NS/NA, code not 0 */
	PA_NEIGH_BAD_HOP_LIMIT,		/**< IPv6 hop limit not 255 */
	PA_NEIGH_BAD_CHECKSUM,		/**< ICMPv6 checksum */
	PA_NEIGH_BAD_OPTION,		/**< zero-length, overrunning or
					 * malformed link-layer option */
	PA_NEIGH_BAD_SENDER,		/**< multicast/zero sender MAC or
					 * multicast/broadcast/loopback sender
					 * address */
	PA_NEIGH_BAD_TARGET,		/**< multicast/unspecified target */
	PA_NEIGH_BAD_MAC_MISMATCH,	/**< Ethernet source differs from the
					 * sender hardware address / option */
	PA_NEIGH_BAD_DAD,		/**< NS from :: not to the target's
					 * solicited-node group, or with SLLA */
	PA_NEIGH_BAD_NA_MCAST_SOLICITED, /**< solicited NA to a multicast group */
	PA_NEIGH_BAD_MAX
};

/* ---- counters (filled in neigh.c, rendered in neigh_stats.c) ---- */

/** Number of cache entry states (enum pa_neigh_state). */
#define PA_NEIGH_STATE_MAX	(PA_NEIGH_FAILED + 1)

/**
 * The neighbour subsystem's counters at one moment: what stats_get
 * ("neigh"), the Prometheus exporter and the replay summary report.
 * Counters count since start; plain values owned by the caller.
 */
struct pa_neigh_snapshot {
	uint64_t rx;			/**< ARP/ND frames for the appliance
					 * handled by the control side */
	uint64_t arp_requests_in;	/**< valid ARP requests received */
	uint64_t arp_replies_in;	/**< valid ARP replies received */
	uint64_t ns_in;			/**< valid solicitations received */
	uint64_t na_in;			/**< valid advertisements received */
	uint64_t arp_replies_out;	/**< ARP replies sent */
	uint64_t arp_requests_out;	/**< ARP requests sent */
	uint64_t na_out;		/**< advertisements sent */
	uint64_t ns_out;		/**< solicitations sent */
	uint64_t learned;		/**< entries made for hosts that asked */
	uint64_t resolved;		/**< targets that got a (new) MAC */
	uint64_t failed;		/**< resolutions/probe rounds unanswered */
	uint64_t unsolicited;		/**< answers never asked for (ignored) */
	uint64_t conflicts;		/**< frames claiming our addresses */
	uint64_t not_ours;		/**< valid frames not about the appliance */
	uint64_t cache_full;		/**< entries not made for lack of room */
	uint64_t no_source_address;	/**< targets a port could not ask for */
	uint64_t tx_no_mbuf;		/**< frames not sent: no mbuf */
	uint64_t tx_ring_full;		/**< frames not sent: TX ring full */
	uint64_t unknown_port;		/**< frames from an unknown port */
	/** Frames refused by pa_neigh_parse(), by enum pa_neigh_bad
	 * (index 0 unused). */
	uint64_t invalid[PA_NEIGH_BAD_MAX];
	uint64_t entries;		/**< cache entries */
	uint64_t states[PA_NEIGH_STATE_MAX]; /**< entries by state */
	/** tx_sent and tx_dropped are filled (from the lcores' counters). */
	bool has_lcore_tx;
	uint64_t tx_sent;		/**< frames the lcores sent for it */
	uint64_t tx_dropped;		/**< ... a full TX queue refused */
};

/**
 * Fill @p s with @p n's counters and, when @p sum (the lcores' counters)
 * is not NULL, the frames the lcores sent for it and dropped for lack of
 * TX room. Control thread (takes the subsystem's lock).
 */
void pa_neigh_snapshot(struct pa_neigh *n, const struct pa_lcore_stats *sum,
		struct pa_neigh_snapshot *s);

/**
 * The "neigh" object of stats_get rendered from a snapshot: the counters,
 * "invalid" (by reason name), "entries", "states" (by state name), and
 * "tx_sent"/"tx_dropped" when the snapshot has them.
 * @return new reference, or NULL on allocation failure.
 */
json_t *pa_neigh_snapshot_json(const struct pa_neigh_snapshot *s);

/**
 * The "neigh" object of stats_get: pa_neigh_snapshot() rendered by
 * pa_neigh_snapshot_json(); an empty object when @p n is NULL.
 */
json_t *pa_neigh_stats_json(struct pa_neigh *n,
		const struct pa_lcore_stats *sum);

/* ---- frames, continued ---- */

/** A parsed, validated frame. Addresses in network order. */
struct pa_neigh_msg {
	uint8_t type;			/**< enum pa_neigh_msg_type */
	uint8_t family;			/**< 4 (ARP) or 6 (ND) */
	uint16_t l3_off;		/**< Ethernet header and VLAN tags */
	uint8_t eth_dst[6];
	uint8_t eth_src[6];
	bool has_mac;			/**< sender_mac valid */
	uint8_t sender_mac[6];		/**< ARP sha; NS SLLA; NA TLLA */
	uint8_t sender_ip[16];		/**< ARP spa; IPv6 source */
	uint8_t target_ip[16];		/**< ARP tpa; ND target */
	uint8_t dst_ip[16];		/**< IPv6 destination */
	uint8_t nd_flags;		/**< NA: R 0x80, S 0x40, O 0x20 */
};

#define PA_NEIGH_NA_R	0x80
#define PA_NEIGH_NA_S	0x40
#define PA_NEIGH_NA_O	0x20

/**
 * Parse and validate an ARP or NS/NA frame (Ethernet, up to two VLAN tags
 * as lib/pkt reads them). Reads nothing at or past @p len.
 * @return 0, or -enum pa_neigh_bad.
 */
int pa_neigh_parse(const uint8_t *frame, uint32_t len,
		struct pa_neigh_msg *msg);

/** Name of a refusal reason ("truncated", "hop_limit", ...). */
const char *pa_neigh_bad_name(int bad);

/**
 * Build an ARP frame: Ethernet (with @p n_tag_bytes of VLAN tags copied
 * from @p tags, 4 bytes each, ethertype last), the 28-byte ARP body,
 * padded to 60 bytes.
 * @return the frame's length, or 0 when @p room is too small.
 */
uint32_t pa_neigh_build_arp(uint8_t *buf, uint32_t room, const uint8_t *tags,
		uint16_t n_tag_bytes, uint16_t op, const uint8_t eth_dst[6],
		const uint8_t sha[6], const uint8_t spa[4], const uint8_t tha[6],
		const uint8_t tpa[4]);

/**
 * Build a neighbour solicitation (135, with a source link-layer option)
 * or advertisement (136, with a target link-layer option): hop limit 255,
 * checksum computed. @p lla NULL: no option.
 * @return the frame's length, or 0 when @p room is too small.
 */
uint32_t pa_neigh_build_nd(uint8_t *buf, uint32_t room, const uint8_t *tags,
		uint16_t n_tag_bytes, uint8_t type, const uint8_t eth_dst[6],
		const uint8_t eth_src[6], const uint8_t src[16],
		const uint8_t dst[16], const uint8_t target[16], uint8_t flags,
		const uint8_t *lla);

/** Solicited-node multicast address of @p target (ff02::1:ffXX:XXXX). */
void pa_neigh_solicited_node(const uint8_t target[16], uint8_t out[16]);

/* ---- RPC ---- */

/* neigh_list is the RPC subsystem "neigh": bind the neighbour subsystem
 * with pa_rpc_bind("neigh", n). */

/** Milliseconds of CLOCK_MONOTONIC: the clock the daemon polls with. */
uint64_t pa_neigh_now_ms(void);

extern int pa_neigh_logtype;

#include "pa_neigh_inline.h"

#endif /* PA_NEIGH_H */
