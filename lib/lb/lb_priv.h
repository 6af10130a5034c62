/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef PA_LB_PRIV_H
#define PA_LB_PRIV_H

/* Internal structures of lib/lb, shared by its control side (lb.c,
 * lb_build.c, lb_update.c, lb_hc.c, lb_trace.c, lb_stats.c), its data path
 * (lb_dp.c, lb_icmp.c) and lb_sched.c. */

#include <pthread.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

#include <rte_ether.h>
#include <rte_hash.h>
#include <rte_hash_crc.h>
#include <rte_log.h>

#include "lb_csum.h"
#include "pa_lb.h"
#include "pa_protect_src.h"

/** A flow: the 5-tuple as it arrives (client to VIP), padded to 48
 * bytes (whole words to compare; rte_hash, which keys the NAT reply
 * table, compares 16/32/48/64-byte keys with SIMD, other sizes with
 * memcmp), padding zero. Also the key of the NAT reply table (backend to
 * client). */
struct lb_flow_key {
	uint8_t family;			/* 4 or 6 */
	uint8_t proto;
	uint16_t sport;			/* network order */
	uint16_t dport;			/* network order */
	uint16_t pad;
	uint8_t src[16];
	uint8_t dst[16];
	uint8_t pad2[8];
};

/* The bytes of a key the flow table stores and compares (pad2, zero in
 * every key, is left out so that a key and its entry share a line). */
#define LB_FLOW_KEY_LEN	40
_Static_assert(offsetof(struct lb_flow_key, pad2) == LB_FLOW_KEY_LEN &&
	sizeof(struct lb_flow_key) == LB_FLOW_KEY_LEN + 8,
	"lb_flow_key: its last 8 bytes are padding");

/*
 * The service table: (VIP, port, protocol) -> slot, open addressing with
 * linear probing, at most half full, immutable once published. Port 0 is
 * the entry that fragments to (VIP, protocol) use. A purpose-built table
 * rather than an rte_hash: a burst's lookups cost a CRC step or two and
 * one cache line each here, against ~20 cycles a key for rte_hash's bulk
 * lookup of a 32-byte key (measured: perf/NOTES.md).
 */
struct lb_svc_ent {
	uint8_t family;			/* 4 or 6; 0 = empty */
	uint8_t proto;
	uint16_t port;			/* network order; 0 = fragments */
	uint16_t slot;
	uint16_t pad;
	uint8_t addr[16];		/* IPv4: first 4 bytes, rest zero */
	uint8_t pad2[8];
};

struct lb_svc_map {
	uint32_t mask;			/* entries - 1 (a power of two) */
	struct lb_svc_ent ent[];
};

#define LB_SVC_SEED	0x5bd1e995u

static __rte_always_inline uint32_t
lb_svc_hash(uint8_t family, uint8_t proto, uint16_t port, const uint8_t *addr)
{
	uint32_t h = rte_hash_crc_4byte((uint32_t)port | (uint32_t)proto << 16 |
		(uint32_t)family << 24, LB_SVC_SEED);
	uint64_t a, b;
	uint32_t x;

	if (family == 4) {
		memcpy(&x, addr, 4);
		return rte_hash_crc_4byte(x, h);
	}
	memcpy(&a, addr, 8);
	memcpy(&b, addr + 8, 8);
	return rte_hash_crc_8byte(b, rte_hash_crc_8byte(a, h));
}

/* Same address? Fixed-size loads, no memcmp call. */
static __rte_always_inline bool
lb_addr_eq(const uint8_t *a, const uint8_t *b, uint8_t family)
{
	uint64_t x[2], y[2];
	uint32_t u, v;

	if (family == 4) {
		memcpy(&u, a, 4);
		memcpy(&v, b, 4);
		return u == v;
	}
	memcpy(x, a, 16);
	memcpy(y, b, 16);
	return ((x[0] ^ y[0]) | (x[1] ^ y[1])) == 0;
}

/* The service map also holds one entry per VIP under this protocol
 * number (port 0): "some service has this address" (ICMP). */
#define LB_SVC_PROTO_VIP	0

/** Slot of the service (family, proto, port, addr), or -1. */
static __rte_always_inline int
lb_svc_find(const struct lb_svc_map *m, uint8_t family, uint8_t proto,
		uint16_t port, const uint8_t *addr)
{
	uint32_t i = lb_svc_hash(family, proto, port, addr) & m->mask;
	const struct lb_svc_ent *e;

	for (;; i = (i + 1) & m->mask) {
		e = &m->ent[i];
		if (e->family == 0)
			return -1;
		if (e->family == family && e->proto == proto &&
		    e->port == port && lb_addr_eq(e->addr, addr, family))
			return e->slot;
	}
}

/* ------------------------------------------------------------------ */
/* Checksums (RFC 1624: HC' = ~(~HC + ~m + m'))                        */
/* ------------------------------------------------------------------ */

/* A 16-bit byte swap the compiler sees through: DPDK's rte_bswap16() of
 * a variable is an asm xchg that it can neither fold into a load or a
 * store nor schedule around (the data path's swaps, issue 16). */
static __rte_always_inline uint16_t
lb_bswap16(uint16_t x)
{
	return __builtin_bswap16(x);
}

/** A backend as the data path sees it (read-only, per table version). */
struct lb_backend {
	uint32_t uid;			/* 0: hole (deleted slot) */
	uint32_t cslot;			/* its counters' index */
	uint8_t state;			/* enum pa_lb_state */
	bool has_mac;
	uint16_t port;			/* network order; service port if 0 */
	uint32_t weight;
	struct rte_ether_addr mac;
	struct pa_ip_addr addr;
	/* ipip over IPv4: the one's complement sum (unfolded, memory-order
	 * words) of the outer header's constant fields: version/IHL, TTL,
	 * protocol, source and destination */
	uint32_t ip4_sum;
};

struct lb_sched_ops;

/*
 * One earlier Maglev table of a service (lb.table_history_s, "Recovery
 * across table changes" in docs/architecture.md): the table as indexes
 * into be[] (slots are stable across rebuilds) and, per slot, the uid of
 * the backend it held then, current until @c until (TSC). One allocation:
 * maglev[m], then uid[n_be].
 */
struct lb_hist {
	uint64_t until;			/* TSC when it stopped being current */
	uint32_t m;
	uint32_t n_be;
	uint16_t *maglev;		/* NULL: no usable backend then */
	uint32_t *uid;			/* per slot; 0 = hole */
};

#define LB_HIST_MAX	8		/* generations kept at most */

/** A service, read-only once published. A change of any of its backends
 * publishes a new one. */
struct lb_svc {
	uint32_t uid;			/* unique over the process's life */
	uint16_t slot;			/* index in lb_table.svc[] */
	uint8_t family;			/* 4 or 6 */
	uint8_t proto;
	uint16_t port;			/* network order */
	uint8_t forward;		/* enum pa_lb_forward */
	uint8_t sched;			/* enum pa_lb_sched */
	uint16_t mss_clamp;		/* host order; 0 = off */
	bool syn_defer;			/* protect.syn_defer applies: Maglev,
					 * not nat nor fnat (a SYN takes no
					 * entry) */
	uint8_t proxy;			/* enum pa_lb_proxy (fnat, TCP) */
	uint32_t max_flows;		/* live flows at most; 0 = no limit */
	const struct lb_sched_ops *ops;
	struct pa_ip_addr vip;
	char name[PA_CONFIG_NAME_MAX];
	uint32_t m;			/* Maglev table size */
	uint16_t *maglev;		/* NULL when no backend is usable */
	unsigned int n_up;		/* usable for new flows */
	uint16_t *up;			/* their indexes in be[] */
	double build_ms;		/* Maglev build time */
	bool panic;			/* every backend down by health: the
					 * table ignores health */
	uint64_t table_hash;		/* of the table by backend address */
	/* the earlier tables of the last lb.table_history_s seconds, newest
	 * first (Maglev TCP services only; n_hist 0: none) */
	unsigned int n_hist;
	struct lb_hist *hist;
	unsigned int n_be;		/* slots in be[], holes included */
	struct lb_backend be[];
};

#define LB_SWEEP_BUSY_US	10	/* between two busy ageing sweeps */
/* ... and, while busy, one pass over the positions in use (the
 * high-water mark) per 1/8 of the shortest timeout (lb.c, sweep_period()),
 * but no more often than this, which is the pace while the table is short
 * of free positions (a flow past its timeout is never used: a hit checks
 * it; the sweep only reclaims) */
#define LB_SWEEP_PERIOD_MS	100
#define LB_OUTER_TTL	64	/* outer IPv4 TTL / IPv6 hop limit */

#define LB_BITMAP_BYTES	(65536 / 8)

/*
 * The NAT reply index: (family, protocol, backend port, backend address)
 * -> the nat services that have that backend, as (slot, backend index)
 * pairs. Built with each table (commit()), immutable once published,
 * freed with the table. Open addressing with linear probing like
 * lb_svc_map, at most half full; the pairs of one key are contiguous in
 * ref[]. The data path asks it about a backend's reply that matched no
 * flow (lb_nat_stateless()).
 */
struct lb_rev_ent {
	uint8_t family;			/* 4 or 6; 0 = empty */
	uint8_t proto;
	uint16_t port;			/* network order */
	uint16_t n;			/* services with this backend */
	uint16_t pad;
	uint32_t first;			/* their first pair in ref[] */
	uint8_t addr[16];		/* IPv4: first 4 bytes, rest zero */
	uint8_t pad2[4];
};

struct lb_rev_ref {
	uint16_t slot;			/* the service's slot */
	uint16_t be;			/* the backend's index in its be[] */
};

struct lb_rev_map {
	uint32_t mask;			/* entries - 1 (a power of two) */
	uint32_t n_ref;
	struct lb_rev_ref *ref;		/* in the same allocation */
	struct lb_rev_ent ent[];
};

/** The entry of backend (family, proto, port, addr), or NULL. */
static __rte_always_inline const struct lb_rev_ent *
lb_rev_find(const struct lb_rev_map *m, uint8_t family, uint8_t proto,
		uint16_t port, const uint8_t *addr)
{
	uint32_t i = lb_svc_hash(family, proto, port, addr) & m->mask;
	const struct lb_rev_ent *e;

	for (;; i = (i + 1) & m->mask) {
		e = &m->ent[i];
		if (e->family == 0)
			return NULL;
		if (e->family == family && e->proto == proto &&
		    e->port == port && lb_addr_eq(e->addr, addr, family))
			return e;
	}
}

/** The published table: services by slot and the key -> slot hash. */
struct lb_table {
	struct lb_svc_map *svc_map;	/* (vip, port, proto) -> slot */
	struct lb_rev_map *rev;		/* nat backends -> services; NULL
					 * without nat services */
	uint32_t n_services;
	bool has_nat;			/* some service forwards by nat */
	bool has_fnat;			/* ... by fnat */
	uint8_t dport_map[LB_BITMAP_BYTES];	/* service ports (host order) */
	uint8_t reply_map[LB_BITMAP_BYTES];	/* nat backend ports */
	struct lb_svc *svc[PA_LB_MAX_SERVICES];
};

static inline bool
lb_bit(const uint8_t *map, uint16_t bit)
{
	return (map[bit >> 3] >> (bit & 7)) & 1;
}

/** One flow table entry: the 24 bytes that share a line with the
 * flow's key in the flow table (lb_ftab_line; the flow's hash, for
 * deletes, and its NAT reply position are kept apart, by position:
 * a hit reads neither). */
struct lb_flow {
	uint64_t last;			/* TSC of its last packet */
	uint32_t svc_uid;
	uint32_t be_uid;
	uint16_t cslot;
	uint16_t svc_slot;
	uint16_t be_idx;
	uint8_t in_use;			/* LB_FLOW_* flags; 0: free */
	uint8_t tmo;			/* enum lb_timeout */
};

#define LB_FLOW_IN_USE	0x01
#define LB_FLOW_NAT	0x02	/* has a NAT reply entry (lb_worker.nat_pos) */
#define LB_FLOW_FNAT	0x04	/* holds a pool port (lb_worker.fx) */

#include "lb_ftab.h"
#include "lb_fnat.h"

/* LB_TMO_SYN: a TCP flow that has seen nothing but SYNs from its client
 * (protect.syn_timeout_s; tcp_timeout when not set). */
enum lb_timeout { LB_TMO_TCP = 0, LB_TMO_TCP_FIN, LB_TMO_UDP, LB_TMO_SYN,
	LB_TMO_MAX };

/** Live flows of one service on one lcore (max_flows). A slot met with
 * another service's uid starts afresh: slots are reused. */
struct lb_svc_ctr {
	uint32_t uid;
	uint32_t flows;
};

/** Per-backend counters of one lcore. An lcore that meets a counter slot
 * with another backend's uid starts it afresh: slots are reused. */
struct lb_ctr {
	uint32_t uid;
	uint32_t pad;
	uint64_t flows;			/* active flows of this lcore */
	uint64_t packets;
	uint64_t bytes;
};

/** Counters of one lcore's lb stage. */
struct lb_lcore_stats {
	uint64_t balanced;		/* packets sent to a backend */
	uint64_t flows_created;
	uint64_t flows_expired;
	uint64_t flows_rescheduled;	/* backend down or gone */
	uint64_t flow_table_full;
	uint64_t fragments;
	uint64_t nat_replies;
	uint64_t nat_table_full;
	uint64_t nat_reply_stateless;	/* replies matching no flow, translated
					 * by the one service whose Maglev
					 * choice is their backend */
	uint64_t nat_reply_unmatched;	/* ... from a nat backend, no service
					 * agreeing: passed unchanged */
	uint64_t nat_reply_ambiguous;	/* ... several agreeing: dropped */
	uint64_t no_backend;
	uint64_t mtu;
	uint64_t no_room;
	uint64_t flows_backend_gone;	/* reaped: backend down or deleted */
	uint64_t nat_stale;		/* reply entries left for lack of room
					 * in the deferred-free queue */
	uint64_t neigh_unresolved;	/* sent with a fallback MAC: next hop
					 * wanted but not resolved yet */
	uint64_t icmp_echo_replies;	/* echo requests to VIPs answered */
	uint64_t icmp_errors_forwarded;	/* errors quoting a flow, sent to
					 * the flow's backend */
	uint64_t icmp_bad_quote;	/* errors to a VIP quoting garbage */
	uint64_t icmp_no_service;	/* ... quoting no service's flow */
	uint64_t icmp_too_big_sent;	/* frag needed / packet too big sent */
	uint64_t icmp_rate_limited;	/* ... not sent: over the rate */
	uint64_t mss_clamped;		/* SYNs whose MSS option was lowered */
	uint64_t flows_peak;		/* most entries in use at once (the
					 * sum over lcores: an upper bound of
					 * the appliance's peak) */
	uint64_t syn_stateless;		/* SYNs balanced without an entry
					 * (protect.syn_defer) */
	uint64_t src_limited;		/* new flows over their source's
					 * bucket: dropped (src_limit) */
	uint64_t max_flows_dropped;	/* new flows of a service at its
					 * max_flows: dropped (max_flows) */
	uint64_t fnat_flows;		/* fnat flows made (a pool port each) */
	uint64_t fnat_no_port;		/* new fnat flows without a free port
					 * of the backend's family: dropped */
	uint64_t fnat_table_full;	/* ... without room in the flow table
					 * (no stateless fallback: dropped) */
	uint64_t fnat_fragments;	/* fragments to an fnat service
					 * (no reassembly): dropped */
	uint64_t fnat_replies;		/* backend replies translated back */
	uint64_t fnat_reply_unmatched;	/* to a pool port, matching no flow:
					 * dropped (fnat_unmatched) */
	uint64_t fnat_xlat_failed;	/* not translatable, or no room for
					 * the PROXY header: dropped */
	uint64_t fnat_proxy_failed;	/* no room for the PROXY header, or
					 * over the MTU with it: dropped */
	uint64_t fnat_time_wait;	/* ports passed over: freed by a flow to
					 * the same backend under time_wait_s
					 * ago */
	uint64_t flows_recovered;	/* new flows without SYN sent to an
					 * earlier table's choice, not the
					 * current one (lb.table_history_s) */
};

/** A NAT reply entry waiting for quiescence before its slot is freed. */
struct lb_deferred {
	uint64_t token;
	int32_t pos;
};

#define LB_DEFER_MAX	4096

/** The lb context of one data-path lcore (owned and written by it). */
struct lb_worker {
	struct lb_lcore_stats st;
	struct lb_ftab ftab;		/* lb_flow_key -> position, entry */
	int32_t *nat_pos;		/* by position: the NAT reply entry of
					 * a flow with LB_FLOW_NAT */
	uint32_t sweep;			/* aging cursor */
	uint32_t n_flows;		/* entries in use */
	uint64_t now;			/* TSC of its last burst */
	uint64_t last_sweep;		/* TSC of its last busy sweep */
	uint16_t ip_id;			/* outer IPv4 ids */
	/* ICMP too-big token bucket: tokens and the TSC of the last fill */
	uint32_t icmp_tokens;
	uint64_t icmp_last;
	uint32_t *cursor;		/* rr / wrr position per service slot */
	struct lb_ctr *ctr;		/* PA_LB_MAX_BACKENDS */
	struct lb_svc_ctr *svc_ctr;	/* PA_LB_MAX_SERVICES, by slot */
	struct pa_protect_src *src;	/* new flows per source; NULL: off */
	uint32_t n_lb;			/* lb lcores (max_flows shares) */
	/* full NAT: this lcore's share of each pool address (NULL: no
	 * pool), the flows' side entries by position, and the address
	 * to try first for the next flow */
	struct lb_fnat_share *fshare;
	struct lb_fnat_ext *fx;
	uint32_t fnat_next;
	uint32_t lb_ord;		/* this one's rank among them */
	/* NAT reply slots to free once the data path is quiescent */
	uint32_t defer_head, defer_tail;
	struct lb_deferred defer[LB_DEFER_MAX];

	/* trace_packet mailbox: the control thread writes the key (or,
	 * trace_pos >= 0, the position of a pool port's flow) and bumps
	 * req; the lcore answers (the flow, its side entry, its key) and
	 * sets done = req. */
	volatile bool running;
	volatile uint32_t trace_req;
	volatile uint32_t trace_done;
	struct lb_flow_key trace_key;
	hash_sig_t trace_sig;
	int32_t trace_pos;
	bool trace_hit;
	struct lb_flow trace_flow;
	struct lb_fnat_ext trace_fx;	/* pport 0: not an fnat flow */
	uint8_t trace_line[LB_FLOW_KEY_LEN];	/* the flow's key */
} __rte_cache_aligned;

/*
 * A next hop published by lib/neigh: one 64-bit word, stored and loaded
 * atomically. Bits 0-47: the MAC (memory order); 48-55: the output port
 * (backends: the one it was resolved on); LB_NH_WANTED: being resolved;
 * LB_NH_VALID: the MAC is good.
 */
#define LB_NH_VALID	(1ULL << 63)
#define LB_NH_WANTED	(1ULL << 62)
#define LB_NH_MAC_MASK	((1ULL << 48) - 1)

static inline uint64_t
lb_nh_word(const uint8_t *mac, uint16_t port_id, bool wanted)
{
	uint64_t w = (uint64_t)(port_id & 0xff) << 48;

	if (mac != NULL) {
		uint64_t m = 0;

		memcpy(&m, mac, RTE_ETHER_ADDR_LEN);
		w |= (m & LB_NH_MAC_MASK) | LB_NH_VALID;
	}
	if (wanted)
		w |= LB_NH_WANTED;
	return w;
}

static inline uint16_t
lb_nh_port(uint64_t w)
{
	return (uint16_t)((w >> 48) & 0xff);
}

/** What the data path needs of an output port. */
struct lb_port {
	bool known;
	bool has_gw;
	struct rte_ether_addr mac;
	struct rte_ether_addr gw;
	uint16_t mtu;			/* 0: no check */
	uint64_t gw_nh[2];		/* resolved "gateway", [0] IPv4, [1]
					 * IPv6 (atomic) */
};

/* What the health checks last said of a backend (pa_lb_backend_health()). */
struct lb_be_health {
	uint8_t health;			/* enum pa_lb_health */
	uint8_t last;			/* index in lb_health_results[] */
	uint16_t code;			/* http status of the last probe */
	uint32_t latency_us;
	uint64_t probes, failures;
	int8_t agent_pct;		/* weight % the agent set; -1: none */
	uint8_t agent_state;		/* enum pa_lb_agent_state */
	uint8_t grace;			/* enum lb_grace */
	uint64_t grace_end_ms;		/* LB_GRACE_ON: when it ends (the
					 * clock of pa_lb_health_publish()) */
};

/* A backend down by the checks with the service's health.grace_ms > 0
 * drains first (lb_be_health.grace). */
enum lb_grace {
	LB_GRACE_NONE = 0,		/* not down, or its grace is over */
	LB_GRACE_START,			/* just down: its grace starts at the
					 * next pa_lb_health_publish() */
	LB_GRACE_ON,			/* until grace_end_ms */
};

/* Control-side record of a service (the configuration, and the slots its
 * backends hold). */
struct lb_svc_ctl {
	bool used;
	uint32_t uid;
	struct pa_config_service cfg;	/* backends in slot order, holes
					 * have weight 0 and family 0 */
	uint32_t *be_uid;		/* per slot; 0 = hole */
	uint32_t *be_cslot;		/* per slot */
	struct lb_be_health *be_hc;	/* per slot */
	unsigned int n_slots, cap_slots;
	bool panic;			/* as last published */
	bool hc_dirty;			/* health changes not published yet */
	uint64_t hc_pub_ms;		/* their last publication */
	uint64_t panics;		/* times it went into panic */
};

/* How long stats_get waits for the LB lock before it reads the counters
 * without it (pa_lb_snapshot()). */
#define LB_STATS_WAIT_MS	5

/* The control state's counts in stats_get: as the last snapshot under the
 * lock saw them (for a stats_get that finds a build holding the lock). */
struct lb_shape {
	uint64_t services, backends, health_down, health_grace;
	uint64_t panic_services, panics, version, builds;
	double build_ms, build_ms_max;
};

struct pa_lb {
	struct pa_lb_dp dp;		/* first: pa_lb_inline.h */
	pthread_mutex_t lock;
	/* the last shape and the reads that used it (stats_lock_busy) */
	pthread_mutex_t shape_lock;
	struct lb_shape shape;
	uint64_t stats_lock_busy;
	struct rte_rcu_qsbr *rcu;
	int socket;
	unsigned int n_lcores;
	uint64_t tsc_hz;
	uint64_t tmo_tsc[LB_TMO_MAX];
	uint64_t sweep_tsc;		/* between two busy sweeps */
	uint64_t sweep_period_tsc;	/* LB_SWEEP_PERIOD_MS */
	struct pa_config_flow_table ft;
	struct pa_config_protect protect; /* syn_timeout_s, syn_defer,
					 * src_new_flows (no blocklist) */
	bool has_local4, has_local6;
	struct pa_ip_addr local4, local6;
	bool icmp_echo;			/* lb.icmp_echo */
	uint64_t hist_tsc;		/* lb.table_history_s in TSC cycles;
					 * 0 = off */
	uint64_t icmp_tsc_per_token;	/* ICMP too-big rate limit */

	struct lb_fnat_pool fnat;	/* lb.fnat (n_addrs 0: none) */
	/* lb rank -> lcore index (pa_lb_fnat_owner()) */
	uint8_t rank_lcore[PA_LB_MAX_LCORES];
	struct lb_table *live;		/* published (RCU) */
	struct rte_hash *nat;		/* reply key -> (svc uid, slot); shared */
	uint32_t nat_size;
	uint64_t ft_bytes;		/* heap taken by the flow tables */

	struct lb_worker *w[PA_LB_MAX_LCORES];
	bool runs_lb[PA_LB_MAX_LCORES];
	uint32_t per_lcore;		/* flows per lcore table */
	unsigned int n_lb;		/* lcores that run the lb stage */
	bool tables_made;		/* with the first service */
	struct lb_port port[RTE_MAX_ETHPORTS];
	/* resolved backend next hops by counter slot (atomic words) */
	uint64_t *be_nh;

	/* control state */
	struct lb_svc_ctl ctl[PA_LB_MAX_SERVICES];
	unsigned int n_services;
	uint32_t next_uid;
	/* owner of each counter slot: service slot and backend slot
	 * (health reports find their backend in O(1)) */
	uint16_t *cs_svc;
	uint32_t *cs_be;
	uint64_t panics;		/* services that went into panic */
	bool hc_pending;		/* some service has hc_dirty */
	/* the earliest grace_end_ms of any backend, 0 when one is
	 * LB_GRACE_START, UINT64_MAX when none is in grace (may be early,
	 * never late: pa_lb_health_publish() recomputes it) */
	uint64_t grace_next_ms;
	/* the last now_ms of pa_lb_health_publish() and pa_clock_ms() then
	 * (what is left of a grace, between two calls) */
	uint64_t hc_clock_ms;
	int64_t hc_clock_at;
	uint32_t *cslot_free;		/* stack of free counter slots */
	unsigned int n_cslot_free;
	uint64_t builds;
	double last_build_ms, max_build_ms;
	uint64_t version;
	uint64_t cfg_version;		/* services and backends (not health) */
	unsigned int seq;		/* rte_hash names */
};

/* The library's log (lb.c registers the type). */
#define LB_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, pa_lb_logtype, "pa.lb: " fmt "\n", \
		##__VA_ARGS__)

/* ---- lb_build.c: the published objects ---- */

/* A backend's weight scaled by its agent's percentage. */
uint32_t lb_effective_weight(const struct lb_svc_ctl *c, unsigned int i);
/* Takes new flows by its admin record: uid, state up, weight > 0. */
bool lb_be_usable(const struct pa_config_backend *b, uint32_t uid);
/* Down by the checks: health, or the agent said "down". */
bool lb_be_down_hc(const struct lb_svc_ctl *c, unsigned int i);
/* Every backend that would take new flows is down by the checks. */
bool lb_ctl_panic(const struct lb_svc_ctl *c);
/* A new read-only service from its control record (NULL: @p err). */
struct lb_svc *lb_svc_build(struct pa_lb *lb, const struct lb_svc_ctl *c,
		unsigned int slot, char *err, size_t err_len);
void lb_svc_free(struct lb_svc *s);
/* Give @p s, about to replace @p prev (NULL: none) at TSC @p now, its
 * history of earlier tables (lb.table_history_s): @p prev's table when
 * it differs from @p s's, then @p prev's own history still in the
 * window. @return 0 or -ENOMEM (then @p s has none). Lock held. */
int lb_svc_history(struct pa_lb *lb, struct lb_svc *s,
		const struct lb_svc *prev, uint64_t now);
/* Publish @p s (NULL: none) in @p slot with new maps, wait for the
 * lcores, free what was replaced. Lock held. */
int lb_commit(struct pa_lb *lb, unsigned int slot, struct lb_svc *s,
		bool set_changed, char *err, size_t err_len);

/* ---- lb_update.c: services and backends ---- */

/* Slot of service @p name, or -1. Lock held. */
int lb_find_service(const struct pa_lb *lb, const char *name);
/* Backends in use (not holes). */
unsigned int lb_live_backends(const struct lb_svc_ctl *c);
/* Free a control record's backends and counter slots. Lock held. */
void lb_ctl_clear(struct pa_lb *lb, struct lb_svc_ctl *c);
/* Rebuild the service in @p slot from its record and publish it. */
int lb_rebuild_publish(struct pa_lb *lb, unsigned int slot,
		bool set_changed, char *err, size_t err_len);

/* ---- lb_hc.c: health ---- */

/* Names of the probe results (index: lb_be_health.last). */
const char *lb_health_result_name(uint8_t i);

/* ---- lb.c: life cycle ---- */

/* The published table and the per-lcore flow tables, at create. */
int lb_tables_make(struct pa_lb *lb, char *err, size_t err_len);
/* A real as jansson's json_dumps() writes it (lb_stats.c). */
void lb_real_text(double v, char *buf, size_t len);

/* lb_sched.c */
struct lb_sched_ops {
	const char *name;
	/** Backend index for a new flow, or -1 when none is usable. */
	int (*pick)(const struct lb_svc *s, struct lb_worker *w,
			uint32_t hash);
};

extern const struct lb_sched_ops *const lb_sched_table[];

/** Maglev choice (the stateless one every scheduler falls back to). */
static inline int
lb_maglev_pick(const struct lb_svc *s, uint32_t hash)
{
	if (s->maglev == NULL)
		return -1;
	return s->maglev[hash % s->m];
}

/* lb_sched.c: what the NAT reply index says of a reply that matched no
 * flow */

/** What the NAT reply index says of a reply that matched no flow. */
enum lb_nat_guess {
	LB_NAT_NOT_BACKEND = 0,		/* no nat service has its source */
	LB_NAT_ONE,			/* exactly one service agrees */
	LB_NAT_NO_AGREE,		/* services have the backend, none agrees */
	LB_NAT_AMBIGUOUS,		/* several may have sent the flow there */
};

/** The service of NAT reply key @p k by its entry in @p nat (the flow's,
 * made at its first packet), or NULL: no entry, or its service is gone
 * (another uid in its slot). Lock-free for readers. */
static __rte_always_inline const struct lb_svc *
lb_nat_entry_svc(const struct lb_table *t, struct rte_hash *nat,
		const struct lb_flow_key *k)
{
	const struct lb_svc *s;
	void *data;
	uint64_t d;

	if (rte_hash_lookup_data(nat, k, &data) < 0)
		return NULL;
	d = (uint64_t)(uintptr_t)data;
	s = t->svc[d & 0xffff];
	return s != NULL && s->uid == (uint32_t)(d >> 16) ? s : NULL;
}

/**
 * The stateless translation of a NAT reply (backend @p be:@p be_port to
 * client @p cl:@p cl_port, protocol @p proto; addresses as in the
 * header, ports in network order): the nat services that have the
 * backend (t->rev) are asked whether their Maglev choice for the
 * client's flow (client -> VIP:port, hashed as the parser hashes that
 * flow's packets, pa_pkt_hash_v4/v6) is this backend. Services with
 * another scheduler cannot say (their choice is not a function of the
 * flow): they count as "may have", never as agreeing.
 * @return LB_NAT_ONE with *@p out the one agreeing service when exactly
 * one agrees and no other may have; LB_NAT_AMBIGUOUS when one agrees and
 * another agrees or may have; LB_NAT_NO_AGREE when none agrees;
 * LB_NAT_NOT_BACKEND when no nat service has the backend.
 */
enum lb_nat_guess lb_nat_stateless(const struct lb_table *t, uint8_t family,
		uint8_t proto, const uint8_t *be, uint16_t be_port,
		const uint8_t *cl, uint16_t cl_port, const struct lb_svc **out);

/** The Maglev hash of the flow client -> VIP:port of service @p s: the
 * hash the parser gives that flow's packets. Ports in network order. */
uint32_t lb_client_hash(const struct lb_svc *s, uint8_t proto,
		const uint8_t *cl, uint16_t cl_port);

/* lb_icmp.c: ICMP for VIPs and the TCP MSS clamp (out of line: only
 * ICMP packets and SYNs of clamped services get there) */

/** ICMP too-big messages: LB_ICMP_RATE a second per lcore, bursts of
 * LB_ICMP_BURST (token bucket). */
#define LB_ICMP_RATE	1000
#define LB_ICMP_BURST	50
/** Bytes of the offending packet quoted: a frag-needed is at most 576
 * bytes (RFC 1812 4.3.2.3), a packet-too-big at most 1280 (RFC 4443). */
#define LB_ICMP4_MAX	576
#define LB_ICMP6_MAX	1280

/** What an ICMP error quotes (the packet that caused it). */
struct lb_icmp_quote {
	uint8_t family;			/* 4 or 6 */
	uint8_t proto;			/* TCP or UDP */
	uint16_t sport, dport;		/* network order, as quoted */
	uint16_t ip_off;		/* quoted IP header, from the frame */
	uint16_t l4_off;		/* quoted L4 header, from the frame */
	uint16_t l4_len;		/* quoted L4 bytes (>= 8) */
	const uint8_t *src, *dst;	/* quoted addresses (in the frame) */
	uint32_t hash;			/* the flow's hash: pa_pkt_hash_quote(),
					 * as the parser hashed the error */
};

/** What an ICMP packet to a VIP is. */
enum lb_icmp_kind {
	LB_ICMP_OTHER = 0,		/* leave it alone */
	LB_ICMP_ECHO,			/* an echo request */
	LB_ICMP_ERROR,			/* an error that quotes a packet */
};

/** Kind of the ICMP (IPv4) / ICMPv6 (IPv6) message of a parsed packet
 * whose ICMP header is in the first segment. */
enum lb_icmp_kind lb_icmp_kind(const struct rte_mbuf *m,
		const struct pa_pkt_meta *meta);

/** Parse the quote of an ICMP error (whole packet in the first
 * segment). @return 0, or -EINVAL for garbage: quoted header truncated,
 * of the other family, with lengths that lie, a later fragment, options
 * or extension headers, a protocol other than TCP/UDP, fewer than 8
 * bytes of L4. */
int lb_icmp_quote_parse(const struct rte_mbuf *m,
		const struct pa_pkt_meta *meta, struct lb_icmp_quote *q);

/** Turn an echo request into its reply in place: addresses swapped,
 * TTL / hop limit 64, type 0 / 129, checksums updated; MACs swapped
 * (source @p mac when not NULL). */
void lb_icmp_echo_reply(struct rte_mbuf *m, const struct pa_pkt_meta *meta,
		const struct rte_ether_addr *mac);

/**
 * Turn a packet that is too big for the tunnel into the ICMP error its
 * source gets (in place): fragmentation needed (type 3 code 4) with
 * next-hop MTU @p mtu, or ICMPv6 packet too big with MTU
 * max(@p mtu, 1280), from the packet's destination to its source,
 * quoting as much of it as fits LB_ICMP4_MAX / LB_ICMP6_MAX; MACs
 * swapped (source @p mac when not NULL). meta is updated.
 * @return 0, or -ENOSPC without headroom (the packet is unchanged).
 */
int lb_icmp_too_big(struct rte_mbuf *m, struct pa_pkt_meta *meta,
		uint32_t mtu, const struct rte_ether_addr *mac);

/** NAT of an ICMP error about a NAT reply: outer destination and the
 * quoted source (address, port) become the backend's; the quoted IPv4
 * header checksum and UDP checksum are updated, the ICMP checksum
 * recomputed. */
void lb_icmp_nat(struct rte_mbuf *m, const struct pa_pkt_meta *meta,
		const struct lb_icmp_quote *q, const uint8_t *addr,
		uint16_t port);

/** Lower the MSS option of a TCP SYN (header at @p tcp, @p len bytes of
 * it readable) to @p clamp when larger, updating the checksum
 * incrementally. @return true when it was rewritten. */
bool lb_mss_clamp(uint8_t *tcp, uint32_t len, uint16_t clamp);

/* lb_fnat.c: the pool */

/** The pool of @p cfg (lb.fnat), its reply index included; shares come
 * with each lcore's table (lb_fnat_worker_init()). */
int lb_fnat_init(struct pa_lb *lb, const struct pa_config_fnat *cfg,
		char *err, size_t err_len);
void lb_fnat_fini(struct pa_lb *lb);
/** Lcore @p w's shares (rank w->lb_ord) and side entries. */
int lb_fnat_worker_init(struct pa_lb *lb, struct lb_worker *w);
void lb_fnat_worker_fini(struct lb_worker *w);
/** A pool port for a new flow to backend @p b (uid) of family
 * @p family, for the flow at @p pos (recorded in the reply index):
 * 0 with *@p paddr, *@p pport (host order) set; -ENOSPC when no port
 * is free. @p now_s: the pool's clock (lb_fnat_now()). */
int lb_fnat_take(struct pa_lb *lb, struct lb_worker *w, uint8_t family,
		uint32_t be_uid, uint32_t hash, uint32_t pos, uint32_t now_s,
		uint8_t *paddr, uint16_t *pport);
/** Give back the port of the flow at @p pos (its side entry). */
void lb_fnat_give(struct pa_lb *lb, struct lb_worker *w, uint32_t pos,
		uint32_t be_uid, uint32_t now_s);
/** Ports in use on pool address @p a (all lcores; racy reads). */
uint64_t lb_fnat_in_use(const struct pa_lb *lb, unsigned int a);

/** The pool's clock: seconds of TSC @p tsc. */
static inline uint32_t
lb_fnat_now(const struct pa_lb *lb, uint64_t tsc)
{
	return (uint32_t)(tsc / lb->tsc_hz);
}

/* lb.c: helpers for the data path and trace */
void lb_flow_key_from(struct lb_flow_key *k, const struct pa_flow_key *fk);
/** Is the flow's backend still its backend? @return its index or -1.
 * (Inline: the data path asks it of every packet of a known flow.) */
static __rte_always_inline int
lb_flow_backend(const struct lb_svc *s, const struct lb_flow *f)
{
	const struct lb_backend *b;

	if (f->svc_uid != s->uid || f->be_idx >= s->n_be)
		return -1;
	b = &s->be[f->be_idx];
	if (b->uid != f->be_uid || b->state == PA_LB_DOWN)
		return -1;
	return f->be_idx;
}
/** Forget a flow (counters, NAT reply entry, the table entry). */
void lb_flow_forget(struct pa_lb *lb, struct lb_worker *w, int32_t pos);
/** trace_packet: the position of the flow at @p pos of @p ft when one
 * is there (a pool port's flow, lb_fnat_addr.rpos), else -1. */
static inline int32_t
lb_trace_at(const struct lb_ftab *ft, int32_t pos)
{
	if (pos < 0 || (uint32_t)pos >= ft->n_pos ||
	    ft->line[pos].key[0] == 0 || ft->line[pos].f.in_use == 0)
		return -1;
	return pos;
}
/** trace_packet: copy what the flow at @p pos (of lcore @p w) is, for
 * the control thread to read: its entry, side entry and key. */
static inline void
lb_trace_copy(struct lb_worker *w, int32_t pos)
{
	const struct lb_flow *f = lb_ftab_flow(&w->ftab, (uint32_t)pos);

	w->trace_flow = *f;
	if (w->fx != NULL && (f->in_use & LB_FLOW_FNAT))
		w->trace_fx = w->fx[pos];
	else
		memset(&w->trace_fx, 0, sizeof(w->trace_fx));
	memcpy(w->trace_line, w->ftab.line[pos].key, LB_FLOW_KEY_LEN);
}
void lb_worker_reclaim(struct pa_lb *lb, struct lb_worker *w);
uint32_t lb_trace_hash(const struct pa_flow_key *fk, bool fragment);

#endif /* PA_LB_PRIV_H */
