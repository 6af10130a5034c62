/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The stages and the lcore loop. Every packet that enters here leaves
 * through exactly one of: a TX queue (tx_packets), the next stage's ring,
 * or pa_drop() with a reason.
 */
#include <sched.h>
#include <sys/prctl.h>

#include <rte_branch_prediction.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_rcu_qsbr.h>
#include <rte_ring.h>

#include "pa_pkt.h"
#include "pipeline_priv.h"

#define PA_OUT_UNKNOWN		UINT32_MAX
/* A burst whose packets may have different rx timestamps: read each. */
#define PA_STAMP_MIXED		UINT64_MAX
#define REPLAY_IDLE_POLLS	1024
#define REPLAY_IDLE_NAP_US	100

static __rte_always_inline void
wait_a_little(const struct pa_worker *w)
{
	if (w->shared_cpu)
		sched_yield();
	else
		rte_pause();
}

/* A dropped packet being captured goes to the capture ring; when it is
 * full, replay waits (its outcome never depends on timing) and live mode
 * frees the packet and counts it lost to the capture. */
static void
capture_drop(struct pa_worker *w, struct rte_mbuf *m, enum pa_drop_reason r)
{
	struct pa_capture_tap *t = w->capture;

	while (!pa_capture_offer(t, m, r)) {
		if (!pa_capture_should_wait(t) || w->pl->abort) {
			pa_capture_count_lost(t, w->widx, r);
			rte_pktmbuf_free(m);
			return;
		}
		wait_a_little(w);
	}
}

/* Counted once it is on the capture ring: when the replay sees every
 * packet counted, every captured one is there for the final drain. */
static __rte_always_inline void
pa_drop(struct pa_worker *w, struct rte_mbuf *m, enum pa_drop_reason r)
{
	if (unlikely(pa_capture_wanted(w->capture, r)))
		capture_drop(w, m, r);
	else
		rte_pktmbuf_free(m);
	w->stats.drops[r]++;
}

static void
drop_bulk(struct pa_worker *w, struct rte_mbuf **pkts, unsigned int n,
		enum pa_drop_reason r)
{
	unsigned int i;

	if (likely(!pa_capture_wanted(w->capture, r))) {
		w->stats.drops[r] += n;
		rte_pktmbuf_free_bulk(pkts, n);
		return;
	}
	for (i = 0; i < n; i++)
		pa_drop(w, pkts[i], r);
}

/* The frames the control side (lib/neigh) sends on the ports this lcore
 * serves for it: on the lcore's own TX queue, not counted in tx_packets
 * (they were never received). */
static void
ctrl_tx(struct pa_worker *w)
{
	struct rte_mbuf *pkts[32];
	unsigned int i, n, sent;

	for (i = 0; i < w->n_ctrl; i++) {
		const struct pa_txbuf *b = &w->txb[w->ctrl[i].port_index];

		if (rte_ring_empty(w->ctrl[i].ring))
			continue;
		n = rte_ring_sc_dequeue_burst(w->ctrl[i].ring, (void **)pkts,
			RTE_DIM(pkts), NULL);
		for (sent = 0; sent < n;) {
			if (unlikely(b->shared))
				rte_spinlock_lock(b->lock);
			sent += rte_eth_tx_burst(b->port_id, b->queue,
				pkts + sent, (uint16_t)(n - sent));
			if (unlikely(b->shared))
				rte_spinlock_unlock(b->lock);
			if (sent == n)
				break;
			if (!w->replay || w->pl->abort) {
				rte_pktmbuf_free_bulk(pkts + sent, n - sent);
				if (w->ctrl[i].gen)
					w->stats.icmp_tx_dropped += n - sent;
				else
					w->stats.ctrl_tx_dropped += n - sent;
				break;
			}
			wait_a_little(w);
		}
		if (w->ctrl[i].gen)
			w->stats.icmp_tx_packets += RTE_MIN(sent, n);
		else
			w->stats.ctrl_tx_packets += RTE_MIN(sent, n);
	}
}

/* Whether the control side queued anything for ctrl_tx() to send: two
 * loads and a compare a ring (its producer's and consumer's tails), so
 * that the worker loop pays neither the call nor a dequeue on empty
 * rings. A frame queued just after the test goes out at the next loop. */
static __rte_always_inline bool
ctrl_pending(const struct pa_worker *w)
{
	unsigned int i;

	for (i = 0; i < w->n_ctrl; i++)
		if (!rte_ring_empty(w->ctrl[i].ring))
			return true;
	return false;
}

/* Hand ARP/ND for the appliance to the control side: counted as left
 * here ("local"); a full ring drops (live) or waits (replay, meanwhile
 * sending what the control side queued and reporting quiescence: it may
 * be waiting for either). */
static void
neigh_put(struct pa_worker *w, struct rte_mbuf **pkts, unsigned int n)
{
	unsigned int sent = 0;

	for (;;) {
		sent += rte_ring_mp_enqueue_burst(w->neigh->rx,
			(void **)(pkts + sent), n - sent, NULL);
		if (likely(sent == n))
			break;
		if (!w->replay || w->pl->abort) {
			drop_bulk(w, pkts + sent, n - sent, w->replay ?
				PA_DROP_SHUTDOWN : PA_DROP_NEIGH_RING_FULL);
			break;
		}
		ctrl_tx(w);
		rte_rcu_qsbr_quiescent(w->pl->rcu, w->lcore_id);
		wait_a_little(w);
	}
	w->stats.drops[PA_DROP_LOCAL] += RTE_MIN(sent, n);
}

/* The exception path's hook: a frame for the receiving port's own
 * address that lib/neigh does not take and the load balancer does not
 * keep (lb.local_addr or a pool address shared with the port) goes to
 * the port's kernel_if (lib/excp, pa_excp_inline.h); counted "local"
 * once on its ring, else dropped "excp_full" / "excp_rate".
 * @return true: it left here. */
static __rte_always_inline bool
excp_punt(struct pa_worker *w, const struct pa_rxq *q, struct rte_mbuf *m,
		int nv)
{
	int v = pa_excp_punt(w->excp, w->widx, m, pa_pkt_meta(m),
		q->port_index, nv);

	if (likely(v == PA_EXCP_PASS))
		return false;
	if (v == PA_EXCP_TAKEN)
		w->stats.drops[PA_DROP_LOCAL]++;
	else
		pa_drop(w, m, v == PA_EXCP_FULL ? PA_DROP_EXCP_FULL :
			PA_DROP_EXCP_RATE);
	return true;
}

/*
 * A frame for a routed port itself (its addresses, broadcast, the
 * multicast it handles) that nothing consumed: not lib/neigh, and not the
 * port's kernel_if (excp_punt() above takes what is for the port's own
 * addresses when the port has one). Dropped as "to_self": never
 * forwarded, never reflected.
 */
static __rte_always_inline void
to_self(struct pa_worker *w, const struct pa_rxq *q, struct rte_mbuf *m)
{
	RTE_SET_USED(q);
	pa_drop(w, m, PA_DROP_TO_SELF);
}

/* Is this unicast IP packet, on routed port @p q, for the port itself
 * (pa_port_local4/6)? */
static __rte_always_inline bool
for_port(const struct pa_rxq *q, const struct rte_mbuf *m,
		const struct pa_pkt_meta *meta)
{
	uint8_t buf[16];
	const uint8_t *d;
	uint32_t a;

	if (meta->flags & PA_PKT_F_IPV4) {
		d = rte_pktmbuf_read(m, meta->l3_off + 16, 4, buf);
		if (unlikely(d == NULL))
			return true;
		memcpy(&a, d, 4);
		return pa_port_local4(q->port->addr4, q->port->bcast4,
			q->port->n_addr4, a);
	}
	d = rte_pktmbuf_read(m, meta->l3_off + 24, 16, buf);
	if (unlikely(d == NULL))
		return true;
	return pa_port_local6((const uint8_t (*)[16])q->port->addr6,
		q->port->n_addr6, d);
}

/* Does the load balancer keep this IP packet for one of routed port
 * @p q's own addresses (for_port())? Only on lb.local_addr or a full-NAT
 * pool address shared with the port, what it owns there
 * (pa_neigh_dp_lb_keeps()): it goes on like a packet to an address of
 * the load balancer's own (the ACL, the LB, the route pass's
 * "no_service"); the rest is the port's. */
static __rte_always_inline bool
lb_keeps(const struct pa_worker *w, const struct rte_mbuf *m,
		const struct pa_pkt_meta *meta)
{
	const struct pa_neigh_dp_ent *e;
	const bool v4 = meta->flags & PA_PKT_F_IPV4;
	uint8_t buf[16];
	const uint8_t *d;

	if (w->addrs == NULL)
		return false;
	d = rte_pktmbuf_read(m, meta->l3_off + (v4 ? 16 : 24), v4 ? 4 : 16,
		buf);
	if (d == NULL)
		return false;
	e = pa_neigh_dp_find(__atomic_load_n(&w->addrs->dp, __ATOMIC_ACQUIRE),
		v4 ? 4 : 6, d);
	return e != NULL && (e->flags & PA_NEIGH_DP_LB_PART) &&
		pa_neigh_dp_lb_keeps(e, m, meta);
}

/* rx, the general pass over a parsed burst (@p bad: a bit per packet
 * whose parse failed): malformed frames leave here, and ARP/ND for the
 * appliance (to the control side). A routed port (pa_port.h) takes only
 * what its MAC filter lets in ("not_ours" for the rest); what it takes
 * for itself and nothing consumes leaves through to_self(); its transit
 * traffic is marked PA_PKT_F_ROUTE for the route pass. rx_parse() has
 * written the out ports (and the rx stamps, unless stamp_later). */
static uint16_t
rx_sort(struct pa_worker *w, const struct pa_rxq *q, struct rte_mbuf **pkts,
		uint16_t n, const uint64_t *bad)
{
	struct rte_mbuf *local[PA_PIPELINE_MAX_BURST];
	uint16_t i, kept = 0, n_local = 0;
	enum pa_port_l2 l2 = PA_PORT_L2_OURS;
	int nv;

	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		struct pa_pkt_meta *meta;

		if (unlikely(bad[i / 64] & UINT64_C(1) << (i % 64))) {
			pa_drop(w, m, PA_DROP_MALFORMED);
			continue;
		}
		meta = pa_pkt_meta(m);
		if (q->routed) {
			l2 = pa_port_l2_class(rte_pktmbuf_mtod(m, uint8_t *),
				q->mac64);
			if (unlikely(l2 == PA_PORT_L2_FOREIGN)) {
				pa_drop(w, m, PA_DROP_NOT_OURS);
				continue;
			}
		}
		if (w->neigh != NULL) {
			nv = pa_neigh_rx_classify(w->neigh, m, meta,
				q->port_index);
			if (unlikely(w->excp != NULL) && excp_punt(w, q, m, nv))
				continue;
			if (unlikely(nv != PA_NEIGH_RX_PASS)) {
				if (nv == PA_NEIGH_RX_LOCAL)
					local[n_local++] = m;
				else
					pa_drop(w, m, PA_DROP_MALFORMED);
				continue;
			}
		}
		if (q->routed) {
			if (unlikely(l2 != PA_PORT_L2_OURS ||
			    (meta->flags & PA_PKT_F_NON_IP) ||
			    (for_port(q, m, meta) && !lb_keeps(w, m, meta)))) {
				/* a solicited-node group carries nothing for
				 * us but the ND the neighbours took */
				if (l2 == PA_PORT_L2_SNM)
					pa_drop(w, m, PA_DROP_NOT_OURS);
				else
					to_self(w, q, m);
				continue;
			}
			meta->flags |= PA_PKT_F_ROUTE;
		}
		pkts[kept++] = m;
	}
	if (unlikely(n_local != 0))
		neigh_put(w, local, n_local);
	return kept;
}

#define PA_RX_BAD_WORDS		(PA_PIPELINE_MAX_BURST / 64)

/* rx's first pass (below): parse @p n packets, set their out port (and
 * rx stamp: @p lat), mark the ones that failed in @p bad. @return the OR
 * of their flags and of the IPv4 fast path's (PA_PKT_F_IPV4 |
 * PA_PKT_F_L4, and PA_PKT_F_HASH_LATER without @p hash) whatever the
 * burst holds: the caller tests PA_PKT_F_NON_IP and PA_PKT_F_IPV6 alone,
 * and the common packet then needs no OR. @p hash and @p lat are
 * constants at each call. The loop takes the parser's fast path alone
 * (pa_pkt_parse_try_out(): no call, so nothing of the loop's leaves its
 * registers); the frames it leaves (@p slow) get the general parser
 * after it. */
static __rte_always_inline unsigned int
rx_parse(struct rte_mbuf **pkts, uint16_t n, uint16_t out, uint64_t stamp,
		uint64_t *bad, bool *any_bad, bool *any_slow, const bool hash,
		const bool lat)
{
	uint64_t slow[PA_RX_BAD_WORDS] = { 0 };
	const int off = pa_pkt_meta_offset;
	struct rte_mbuf **const end = pkts + n;
	struct rte_mbuf **p;
	/* the IPv4 fast path's flags, in from the start: on that path f
	 * is this constant, and GCC drops the test below from it */
	const unsigned int f4 = PA_PKT_F_IPV4 | PA_PKT_F_L4 |
		(hash ? 0 : PA_PKT_F_HASH_LATER);
	unsigned int flags = f4, f;
	uint16_t i;

	/* by pointer: the index only where a frame is left (GCC kept a
	 * second copy of an index in a register move a packet) */
	for (p = pkts; p != end; p++) {
		struct rte_mbuf *m = *p;
		struct pa_pkt_meta *meta = RTE_MBUF_DYNFIELD(m, off,
			struct pa_pkt_meta *);

		/* the out port goes in with the fast path's metadata */
		f = pa_pkt_parse_try_out(rte_pktmbuf_mtod(m, const uint8_t *),
			rte_pktmbuf_data_len(m), rte_pktmbuf_pkt_len(m), meta,
			out, true, hash);
		if (unlikely(f != f4)) {
			if (f == 0) {
				i = (uint16_t)(p - pkts);
				slow[i / 64] |= UINT64_C(1) << (i % 64);
				*any_slow = true;
			}
			flags |= f;
		}
		if (lat)
			pa_pkt_rx_tsc_set(meta, stamp);
	}
	if (likely(!*any_slow))
		return flags;
	for (i = 0; i < n; i++) {
		struct rte_mbuf *m;
		struct pa_pkt_meta *meta;
		int r;

		if (!(slow[i / 64] & UINT64_C(1) << (i % 64)))
			continue;
		m = pkts[i];
		meta = pa_pkt_meta(m);
		/* pa_pkt_parse_mbuf()'s rest: what the fast path left */
		r = pa_pkt_parse_full(rte_pktmbuf_mtod(m, const uint8_t *),
			rte_pktmbuf_data_len(m), rte_pktmbuf_pkt_len(m), meta);
		if (unlikely(r == PA_PKT_ERR_SEGMENT))
			r = pa_pkt_parse_gather(m, meta);
		if (unlikely(r < 0)) {
			bad[i / 64] |= UINT64_C(1) << (i % 64);
			*any_bad = true;
			/* a failed parse's flags are whatever it left, and
			 * count for nothing */
			continue;
		}
		flags |= meta->flags;
	}
	return flags;
}

/*
 * rx: parse each frame once, in two passes. The first parses the whole
 * burst and writes every packet's out port; it is a tight loop that
 * keeps no state across packets but the OR of their results and flags,
 * so that the CPU overlaps the packets' work. The common burst ends
 * there: every frame parsed, none of them one lib/neigh may take (ARP,
 * ND: none when the parser's fast path took every frame, else none
 * non-IP or IPv6), the port not routed, no exception path.
 * Otherwise rx_sort() makes the second pass, packet by packet. What
 * leaves here leaves in packet order either way (the capture sees the
 * same sequence).
 *
 * Where this lcore runs the whole path (rtc), the first pass leaves out
 * what only some bursts need: the common packet's flow hash goes to the
 * lb stage, the one that reads it, and is computed only when a service
 * exists (hash_later); the rx stamp (@p stamp, latency on) stays the
 * burst's, written into a packet only when it leaves the burst
 * (stamp_later). Otherwise (rings follow) both are written here.
 */
static __rte_always_inline uint16_t
stage_rx(struct pa_worker *w, const struct pa_rxq *q, struct rte_mbuf **pkts,
		uint16_t n, uint64_t stamp, bool *all_ip)
{
	uint64_t bad[PA_RX_BAD_WORDS] = { 0 };
	const uint16_t out = q->peer_port_id;
	unsigned int flags;
	bool any_bad = false, any_slow = false;

	w->stats.rx_packets += n;
	w->stats.stage_packets[PA_STAGE_RX] += n;
	/* rtc's: no hash, no stamps (a loop of its own, no tests in it) */
	if (likely(w->rx_bare))
		flags = rx_parse(pkts, n, out, stamp, bad, &any_bad,
			&any_slow, false, false);
	else
		flags = rx_parse(pkts, n, out, stamp, bad, &any_bad,
			&any_slow, !w->hash_later,
			w->latency && !w->stamp_later);
	/* lib/neigh takes ARP (non-IP) and ICMPv6 (ND) alone
	 * (pa_neigh_rx_classify()): a burst the fast path parsed whole
	 * (IPv4 and IPv6 TCP/UDP) holds none */
	if (likely(!any_bad && !q->routed && w->excp == NULL &&
	    (w->neigh == NULL || !any_slow ||
	     !(flags & (PA_PKT_F_NON_IP | PA_PKT_F_IPV6))))) {
		/* every packet parsed: each is IPv4, IPv6 or non-IP */
		*all_ip = !(flags & PA_PKT_F_NON_IP);
		return n;
	}
	*all_ip = false;
	return rx_sort(w, q, pkts, n, bad);
}

/* The source blocklist, before the ACL: hits leave with reason
 * "blocklist" (the ACL neither sees nor counts them). */
static __rte_always_inline uint16_t
blocklist_drop(struct pa_worker *w, struct rte_mbuf **pkts, uint16_t n)
{
	uint8_t hit[PA_PIPELINE_MAX_BURST];
	uint16_t i, kept = 0;

	if (likely(pa_blocklist_filter(w->blocklist, w->widx, pkts, n,
			hit) == 0))
		return n;
	for (i = 0; i < n; i++) {
		if (likely(!hit[i]))
			pkts[kept++] = pkts[i];
		else
			pa_drop(w, pkts[i], PA_DROP_BLOCKLIST);
	}
	return kept;
}

/* classify: the blocklist, then the ACL decides; drops leave here with
 * their reason. @p all_ip: rx knows every packet is IPv4 or IPv6. */
static __rte_always_inline uint16_t
stage_classify(struct pa_worker *w, struct rte_mbuf **pkts, uint16_t n,
		bool all_ip)
{
	static const uint8_t reason[] = {
		[PA_ACL_V_DROP_ACL] = PA_DROP_ACL,
		[PA_ACL_V_DROP_POLICE] = PA_DROP_POLICE,
		[PA_ACL_V_DROP_NON_IP] = PA_DROP_NON_IP,
	};
	uint8_t verdict[PA_PIPELINE_MAX_BURST];
	unsigned int i, kept = 0;

	w->stats.stage_packets[PA_STAGE_CLASSIFY] += n;
	if (w->blocklist != NULL && n != 0 &&
	    !pa_blocklist_empty(w->blocklist))
		n = blocklist_drop(w, pkts, n);
	if (w->acl == NULL || n == 0)
		return n;
	/* a table without rules that permits decides nothing: the burst
	 * is counted, and the verdicts are read only when some packet is
	 * stopped */
	if (all_ip && pa_acl_forward_all(w->acl, w->widx, n))
		return n;
	if (likely((all_ip ? pa_acl_classify_ip(w->acl, w->widx, pkts, n,
			verdict) : pa_acl_classify(w->acl, w->widx, pkts, n,
			verdict)) == 0))
		return n;
	for (i = 0; i < n; i++) {
		if (likely(verdict[i] == PA_ACL_V_FORWARD))
			pkts[kept++] = pkts[i];
		else
			pa_drop(w, pkts[i], (enum pa_drop_reason)reason[verdict[i]]);
	}
	return (uint16_t)kept;
}

static void too_big_send(struct pa_worker *w, struct rte_mbuf *m);

/* lb: packets to a service go to a backend; the rest pass unchanged. */
static __rte_always_inline uint16_t
stage_lb(struct pa_worker *w, struct rte_mbuf **pkts, uint16_t n,
		uint64_t now)
{
	static const uint8_t reason[] = {
		[PA_LB_V_NO_BACKEND] = PA_DROP_NO_BACKEND,
		[PA_LB_V_MTU] = PA_DROP_MTU,
		[PA_LB_V_NO_ROOM] = PA_DROP_MALFORMED,
		[PA_LB_V_ICMP_BAD_QUOTE] = PA_DROP_ICMP_BAD_QUOTE,
		[PA_LB_V_ICMP_NO_SERVICE] = PA_DROP_ICMP_NO_SERVICE,
		[PA_LB_V_NAT_AMBIGUOUS] = PA_DROP_NAT_AMBIGUOUS,
		[PA_LB_V_SRC_LIMIT] = PA_DROP_SRC_LIMIT,
		[PA_LB_V_MAX_FLOWS] = PA_DROP_MAX_FLOWS,
		[PA_LB_V_FNAT_NO_PORT] = PA_DROP_FNAT_NO_PORT,
		[PA_LB_V_FNAT_TABLE_FULL] = PA_DROP_FNAT_TABLE_FULL,
		[PA_LB_V_FNAT_FRAGMENT] = PA_DROP_FNAT_FRAGMENT,
		[PA_LB_V_FNAT_UNMATCHED] = PA_DROP_FNAT_UNMATCHED,
		[PA_LB_V_FNAT_XLAT] = PA_DROP_FNAT_XLAT,
	};
	uint8_t verdict[PA_PIPELINE_MAX_BURST];
	uint16_t i, kept = 0;

	w->stats.stage_packets[PA_STAGE_LB] += n;
	if (w->lb == NULL || n == 0 || !pa_lb_active(w->lb))
		return n;
	/* the flow hash the rx stage left for later (pa_worker.hash_later)
	 * is computed by pa_lb_process() for the packets it balances, in
	 * the pass that first reads their headers */
	pa_lb_process(w->lb, w->widx, pkts, n, now, verdict);
	for (i = 0; i < n; i++) {
		if (likely(verdict[i] == PA_LB_V_FORWARD)) {
			pkts[kept++] = pkts[i];
		} else if (verdict[i] == PA_LB_V_MTU_ICMP) {
			/* dropped ("mtu"), and made into the ICMP error its
			 * source gets: the mbuf is reused, nothing to capture */
			w->stats.drops[PA_DROP_MTU]++;
			too_big_send(w, pkts[i]);
		} else {
			pa_drop(w, pkts[i], (enum pa_drop_reason)reason[verdict[i]]);
		}
	}
	return kept;
}

/*
 * Queue ICMP error @p e (a whole frame, MACs set) on ring @p r of the port
 * it leaves by; the port's TX lcore sends it (ctrl_tx(): icmp_tx_packets,
 * never tx_packets). A full ring costs it (icmp_not_sent) in live mode
 * and is waited on in replay.
 */
static void
gen_put(struct pa_worker *w, struct rte_ring *r, struct rte_mbuf *e)
{
	while (rte_ring_mp_enqueue(r, e) != 0) {
		if (!w->replay || w->pl->abort) {
			rte_pktmbuf_free(e);
			w->stats.icmp_not_sent++;
			return;
		}
		/* replay: the TX lcore drains it (this one, in rtc) */
		if (w->run_tx)
			ctrl_tx(w);
		wait_a_little(w);
	}
}

/*
 * The lb stage made dropped packet @p m into the fragmentation needed /
 * packet too big its source gets (lib/lb: addresses, MACs, checksums):
 * back out of the port it came in on, like time exceeded.
 */
static void
too_big_send(struct pa_worker *w, struct rte_mbuf *m)
{
	int idx = pa_port_index(w->pl->ports, m->port);

	if (unlikely(idx < 0 || w->pl->gen[idx] == NULL)) {
		rte_pktmbuf_free(m);
		w->stats.icmp_not_sent++;
		return;
	}
	gen_put(w, w->pl->gen[idx], m);
}

/*
 * Send the ICMP time exceeded that answers @p m (TTL / hop limit ran out
 * in transit) back out of the port it came in on: built in an mbuf of
 * that port's pool, handed to the TX lcore of that port through the
 * port's gen ring. At most PA_PORT_ICMP_RATE a second per lcore (replay:
 * all of them). The caller drops @p m ("ttl").
 */
static void
time_exceeded(struct pa_worker *w, struct rte_mbuf *m,
		const struct pa_pkt_meta *meta)
{
	uint8_t buf[PA_PORT_ICMP_FRAME_MAX];
	const struct pa_port *in;
	const uint8_t *frame, *src;
	struct rte_mbuf *e;
	struct rte_ring *r;
	uint32_t len, n;
	int idx;

	idx = pa_port_index(w->pl->ports, m->port);
	if (idx < 0 || (r = w->pl->gen[idx]) == NULL) {
		w->stats.icmp_not_sent++;
		return;
	}
	in = &w->pl->ports->port[idx];
	src = (meta->flags & PA_PKT_F_IPV4) ?
		(in->n_addr4 != 0 ? (const uint8_t *)&in->addr4[0] : NULL) :
		(in->n_addr6 != 0 ? in->addr6[0] : NULL);
	if (src == NULL) {
		w->stats.icmp_not_sent++;
		return;
	}
	if (!pa_port_bucket_take(&w->icmp_bucket, rte_rdtsc())) {
		w->stats.icmp_rate_limited++;
		return;
	}
	len = RTE_MIN(rte_pktmbuf_pkt_len(m), (uint32_t)sizeof(buf));
	frame = rte_pktmbuf_read(m, 0, len, buf);
	e = frame != NULL ? rte_pktmbuf_alloc(m->pool) : NULL;
	if (e == NULL) {
		w->stats.icmp_not_sent++;
		return;
	}
	n = pa_port_build_time_exceeded(rte_pktmbuf_mtod(e, uint8_t *),
		rte_pktmbuf_tailroom(e), frame, len, meta->l3_off,
		in->mac.addr_bytes, src);
	if (n == 0) {
		rte_pktmbuf_free(e);
		w->stats.icmp_not_sent++;
		return;
	}
	e->data_len = (uint16_t)n;
	e->pkt_len = n;
	gen_put(w, r, e);
}

/* Is the destination of this IP header one of the appliance's own, a VIP,
 * lb.local_addr or a full-NAT pool address (lib/neigh's table)? Such a
 * packet reached the route pass because it matched no service or flow
 * (or is what the LB keeps of an address shared with a port, and did
 * nothing with): it must not be
 * routed back out (a one-armed port's gateway would send it straight
 * back, until its TTL ran out). */
static __rte_always_inline bool
for_appliance(const struct pa_worker *w, const uint8_t *l3, bool v4)
{
	const struct pa_neigh_dp *t;
	const struct pa_neigh_dp_ent *e;

	if (w->addrs == NULL)
		return false;
	t = __atomic_load_n(&w->addrs->dp, __ATOMIC_ACQUIRE);
	e = pa_neigh_dp_find(t, v4 ? 4 : 6, l3 + (v4 ? 16 : 24));
	return e != NULL && (e->flags & PA_NEIGH_DP_OURS_ANY);
}

/* Route one transit packet: not to the appliance's own addresses, then
 * TTL / hop limit, then the out port's gateway. @return 0, or the drop
 * reason. */
static int
route_one(struct pa_worker *w, struct rte_mbuf *m, struct pa_pkt_meta *meta)
{
	const bool v4 = meta->flags & PA_PKT_F_IPV4;
	uint8_t *l3;

	if (unlikely(rte_pktmbuf_data_len(m) < meta->l3_off + (v4 ? 20 : 40)))
		return PA_DROP_MALFORMED;
	l3 = rte_pktmbuf_mtod_offset(m, uint8_t *, meta->l3_off);
	if (unlikely(for_appliance(w, l3, v4)))
		return PA_DROP_NO_SERVICE;
	if (unlikely((v4 ? l3[8] : l3[7]) <= 1)) {
		time_exceeded(w, m, meta);
		return PA_DROP_TTL;
	}
	if (unlikely(pa_neigh_route_macs(w->addrs, rte_pktmbuf_mtod(m,
			struct rte_ether_hdr *), meta->out_port, !v4) < 0))
		return PA_DROP_NO_ROUTE;
	if (v4)
		pa_port_ttl_dec4(l3);
	else
		l3[7]--;
	return 0;
}

/* route: what a routed port took for transit and the LB did not address
 * (still PA_PKT_F_ROUTE). One flag test for every other packet, none
 * when the pipeline has no routed port. */
static __rte_always_inline uint16_t
stage_route(struct pa_worker *w, struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t i, kept = 0;
	int r;

	/* no routed port: no packet has the flag */
	if (!w->route)
		return n;
	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		struct pa_pkt_meta *meta = pa_pkt_meta(m);

		if (likely(!(meta->flags & PA_PKT_F_ROUTE))) {
			pkts[kept++] = m;
			continue;
		}
		r = route_one(w, m, meta);
		if (r == 0)
			pkts[kept++] = m;
		else
			pa_drop(w, m, (enum pa_drop_reason)r);
	}
	return kept;
}

/* Cycles from an rx stamp to @p now; a stamp taken on another lcore whose
 * TSC runs a little ahead counts as 0, not as 2^48. */
static __rte_always_inline uint64_t
lat_cycles(uint64_t now, uint64_t stamp)
{
	uint64_t d = pa_pkt_tsc_since(now, stamp);

	return likely(d <= PA_PKT_TSC_MASK >> 1) ? d : 0;
}

/* Split a burst into runs of equal rx stamps (packets of one rx burst
 * share theirs). Read before the TX queue owns the mbufs. */
static __rte_always_inline unsigned int
lat_runs(struct rte_mbuf **pkts, uint16_t n, uint64_t *run_stamp,
		uint16_t *run_end)
{
	uint64_t prev = pa_pkt_rx_tsc(pa_pkt_meta(pkts[0])), st;
	unsigned int r = 0;
	uint16_t i;

	for (i = 1; i < n; i++) {
		st = pa_pkt_rx_tsc(pa_pkt_meta(pkts[i]));
		if (st != prev) {
			run_stamp[r] = prev;
			run_end[r++] = i;
			prev = st;
		}
	}
	run_stamp[r] = prev;
	run_end[r++] = n;
	return r;
}

/* Record the latency of the first @p sent packets of a burst of mixed
 * stamps. */
static __rte_always_inline void
lat_record(struct pa_worker *w, uint64_t now, const uint64_t *run_stamp,
		const uint16_t *run_end, unsigned int n_runs, uint16_t sent)
{
	uint16_t start = 0, end;
	unsigned int r;

	for (r = 0; r < n_runs && start < sent; r++) {
		end = RTE_MIN(run_end[r], sent);
		pa_stats_latency_add(&w->lat, lat_cycles(now, run_stamp[r]),
			end - start);
		start = run_end[r];
	}
}

/* Record the packets sent this loop pass with its rx stamp (rtc),
 * @p now being the TSC at the end of the pass. */
static __rte_always_inline void
lat_pend_flush(struct pa_worker *w, uint64_t now)
{
	pa_stats_latency_add(&w->lat, lat_cycles(now, w->lat_pend_stamp),
		w->lat_pend);
	w->lat_pend = 0;
}

/* What the TX queue refused of a burst (after the @p sent it took): waited
 * for (replay) or dropped and counted (live). @return the packets sent in
 * all. */
static uint16_t
tx_rest(struct pa_worker *w, const struct pa_txbuf *b, struct rte_mbuf **pkts,
		uint16_t n, uint16_t sent)
{
	for (;;) {
		if (!w->replay || w->pl->abort) {
			drop_bulk(w, pkts + sent, n - sent,
				w->replay ? PA_DROP_SHUTDOWN : PA_DROP_TX_FULL);
			return sent;
		}
		wait_a_little(w);
		if (unlikely(b->shared))
			rte_spinlock_lock(b->lock);
		sent += rte_eth_tx_burst(b->port_id, b->queue, pkts + sent,
			n - sent);
		if (unlikely(b->shared))
			rte_spinlock_unlock(b->lock);
		if (likely(sent == n))
			return sent;
	}
}

/* Hand @p n packets to a TX queue (tx_rest() for what it refuses).
 * @return the packets it took. */
static __rte_always_inline uint16_t
tx_burst(struct pa_worker *w, const struct pa_txbuf *b,
		struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t sent;

	if (unlikely(b->shared))
		rte_spinlock_lock(b->lock);
	sent = rte_eth_tx_burst(b->port_id, b->queue, pkts, n);
	if (unlikely(b->shared))
		rte_spinlock_unlock(b->lock);
	if (unlikely(sent != n))
		sent = tx_rest(w, b, pkts, n, sent);
	return sent;
}

/* tx_send() of a burst of mixed stamps: each packet's own, recorded
 * against a TSC read here, before the TX queue owns the mbufs. */
static void
tx_send_mixed(struct pa_worker *w, const struct pa_txbuf *b,
		struct rte_mbuf **pkts, uint16_t n)
{
	uint64_t run_stamp[PA_PIPELINE_MAX_BURST];
	uint16_t run_end[PA_PIPELINE_MAX_BURST];
	unsigned int n_runs = 0;
	uint64_t now = 0;
	uint16_t sent;

	if (w->latency) {
		n_runs = lat_runs(pkts, n, run_stamp, run_end);
		now = rte_rdtsc();
	}
	sent = tx_burst(w, b, pkts, n);
	w->stats.tx_packets += sent;
	if (w->latency && sent != 0)
		lat_record(w, now, run_stamp, run_end, n_runs, sent);
}

/* Hand @p n packets to a TX queue; what the queue refuses is waited for
 * (replay) or dropped and counted (live). With latency on, the packets
 * the queue takes are recorded: now - rx stamp. @p stamp for the whole
 * burst (rtc: the loop pass's TSC, read at its start) is recorded at the
 * next pass's TSC read, which ends this pass (lat_pend, no TSC read
 * here; inline: the rtc loop's one send a burst); PA_STAMP_MIXED: each
 * packet's own, against a TSC read here (tx_send_mixed()). */
static __rte_always_inline void
tx_send(struct pa_worker *w, const struct pa_txbuf *b, struct rte_mbuf **pkts,
		uint16_t n, uint64_t stamp)
{
	uint16_t sent;

	if (stamp == PA_STAMP_MIXED) {
		tx_send_mixed(w, b, pkts, n);
		return;
	}
	sent = tx_burst(w, b, pkts, n);
	w->stats.tx_packets += sent;
	if (!w->latency || sent == 0)
		return;
	/* every uniform stamp of a pass is the pass's: one pending record
	 * (another one, never expected, is recorded now) */
	if (unlikely(w->lat_pend != 0 && w->lat_pend_stamp != stamp))
		lat_pend_flush(w, rte_rdtsc());
	w->lat_pend_stamp = stamp;
	w->lat_pend += sent;
}

static void
txbuf_flush(struct pa_worker *w, struct pa_txbuf *b)
{
	if (b->count == 0)
		return;
	tx_send(w, b, b->pkts, b->count, PA_STAMP_MIXED);
	b->count = 0;
}

/* @p uniform_out: the out port every packet of the burst has, when a
 * stage before knows it (rx sets the input port's peer on a whole burst),
 * or PA_OUT_UNKNOWN. @p stamp: the rx stamp the whole burst shares (rtc:
 * one rx burst), or PA_STAMP_MIXED. */
static __rte_always_inline void
stage_tx(struct pa_worker *w, struct rte_mbuf **pkts, uint16_t n,
		uint32_t uniform_out, uint64_t stamp)
{
	const uint16_t *index_of = w->port_index_of;
	uint16_t i, out, first;
	struct pa_txbuf *b;

	if (unlikely(n == 0))
		return;
	w->stats.stage_packets[PA_STAGE_TX] += n;

	/* A burst bound for one port with nothing waiting before it there
	 * goes out as it is (l3fwd's send_packetsx4 does the same); the
	 * buffers gather mixed or small bursts. */
	if (uniform_out != PA_OUT_UNKNOWN) {
		first = (uint16_t)uniform_out;
		i = n;
	} else {
		first = pa_pkt_meta(pkts[0])->out_port;
		for (i = 1; i < n; i++)
			if (pa_pkt_meta(pkts[i])->out_port != first)
				break;
	}
	if (likely(i == n && first < RTE_MAX_ETHPORTS &&
	    index_of[first] < w->n_txb)) {
		b = &w->txb[index_of[first]];
		if (likely(b->count == 0)) {
			tx_send(w, b, pkts, n, stamp);
			return;
		}
	}

	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		struct pa_pkt_meta *meta = pa_pkt_meta(m);

		out = meta->out_port;
		if (unlikely(out >= RTE_MAX_ETHPORTS ||
		    index_of[out] >= w->n_txb)) {
			pa_drop(w, m, PA_DROP_MALFORMED);
			continue;
		}
		/* a buffered packet leaves the burst: it carries its stamp
		 * (pa_worker.stamp_later) */
		if (stamp != PA_STAMP_MIXED && w->latency)
			pa_pkt_rx_tsc_set(meta, stamp);
		b = &w->txb[index_of[out]];
		b->pkts[b->count++] = m;
		if (b->count == w->burst)
			txbuf_flush(w, b);
	}
}

static void
txbuf_flush_all(struct pa_worker *w)
{
	unsigned int i;

	for (i = 0; i < w->n_txb; i++)
		txbuf_flush(w, &w->txb[i]);
}

static void drain_after(struct pa_worker *w, unsigned int stage);

/* Put @p n packets that leave stage @p from on ring @p r. A full ring
 * drops them (live) or is waited on (replay); an lcore that runs several
 * stages meanwhile takes in what its later stages' rings hold, sends
 * what it sends for the control side and reports quiescence, so that two
 * lcores feeding each other (rx+tx and classify+lb) never wait on each
 * other. */
static void
ring_put(struct pa_worker *w, struct rte_ring *r, struct rte_mbuf **pkts,
		unsigned int n, unsigned int from)
{
	unsigned int sent = 0;

	for (;;) {
		sent += rte_ring_sp_enqueue_burst(r, (void **)(pkts + sent),
			n - sent, NULL);
		if (likely(sent == n))
			return;
		if (!w->replay || w->pl->abort) {
			drop_bulk(w, pkts + sent, n - sent,
				w->replay ? PA_DROP_SHUTDOWN : PA_DROP_RING_FULL);
			return;
		}
		if (w->n_seg != 0 && w->seg[w->n_seg - 1].first > from) {
			drain_after(w, from);
			if (w->n_ctrl != 0)
				ctrl_tx(w);
			rte_rcu_qsbr_quiescent(w->pl->rcu, w->lcore_id);
		}
		wait_a_little(w);
	}
}

/* Hand a burst that leaves segment @p g to the next stage, the lcore
 * chosen by flow hash. */
static __rte_always_inline void
dispatch(struct pa_worker *w, const struct pa_seg *g, struct rte_mbuf **pkts,
		uint16_t n)
{
	struct rte_mbuf *bucket[PA_PIPELINE_MAX_STAGE][PA_PIPELINE_MAX_BURST];
	uint16_t count[PA_PIPELINE_MAX_STAGE];
	unsigned int i, d, n_out = *g->n_out;

	if (n == 0)
		return;
	if (n_out == 1) {
		ring_put(w, g->out[0], pkts, n, g->last);
		return;
	}
	memset(count, 0, sizeof(count[0]) * n_out);
	for (i = 0; i < n; i++) {
		const struct pa_pkt_meta *meta = pa_pkt_meta(pkts[i]);

		d = (unsigned int)(((uint64_t)meta->hash * n_out) >> 32);
		/* a full-NAT reply: to the lb lcore that holds its flow */
		if (unlikely(g->fnat_steer)) {
			int o = pa_lb_fnat_owner(w->pl->lb, pkts[i], meta);

			if (o >= 0 && g->fnat_out[o] != 0)
				d = g->fnat_out[o] - 1u;
		}
		bucket[d][count[d]++] = pkts[i];
	}
	for (d = 0; d < n_out; d++)
		if (count[d] != 0)
			ring_put(w, g->out[d], bucket[d], count[d], g->last);
}

/*
 * RSS steering (rtc). The worker whose RX queue receives the flow that
 * ICMP error @p m quotes (flagged PA_PKT_F_QUOTE by the parser): the
 * queue the input port's RSS model (lib/port) gives the quote reversed,
 * i.e. the flow's own packets (client -> VIP), as they arrive on this
 * port. NULL: this worker, or not known.
 */
static struct pa_worker *
quote_owner(struct pa_worker *w, struct rte_mbuf *m,
		const struct pa_pkt_meta *meta)
{
	struct pa_pipeline *pl = w->pl;
	const struct pa_port *p;
	uint8_t buf[40], pbuf[4], family, proto;
	const uint8_t *ip, *l4, *src, *dst;
	uint32_t off = meta->l4_off + 8u, ihl;
	uint16_t queue;
	uint8_t owner;
	int idx;

	idx = pa_port_index(pl->ports, m->port);
	if (idx < 0)
		return NULL;
	p = &pl->ports->port[idx];
	if (p->steer == PA_PORT_STEER_OFF)
		return NULL;
	if (meta->flags & PA_PKT_F_IPV4) {
		ip = rte_pktmbuf_read(m, off, 20, buf);
		if (ip == NULL)
			return NULL;
		family = 4;
		ihl = (ip[0] & 0xfu) * 4u;
		proto = ip[9];
		src = ip + 12;
		dst = ip + 16;
	} else {
		ip = rte_pktmbuf_read(m, off, 40, buf);
		if (ip == NULL)
			return NULL;
		family = 6;
		ihl = 40;
		proto = ip[6];
		src = ip + 8;
		dst = ip + 24;
	}
	l4 = rte_pktmbuf_read(m, off + ihl, 4, pbuf);
	if (l4 == NULL)
		return NULL;
	/* the quote reversed: the flow's packets as this port receives them */
	queue = pa_port_rss_queue(&p->rss_model, pa_port_rss_hash(
		&p->rss_model, family, proto, dst, src,
		(uint16_t)(l4[2] << 8 | l4[3]), (uint16_t)(l4[0] << 8 | l4[1])));
	if (queue >= PA_PORT_MAX_QUEUES)
		return NULL;
	owner = pl->queue_owner[idx][queue];
	if (owner == 0 || owner - 1u == w->widx)
		return NULL;
	return pl->workers[owner - 1];
}

static unsigned int handover_drain(struct pa_worker *w, uint64_t now);

/* Hand @p m to worker @p o's hand-over ring: counted handover_packets;
 * a full ring drops it (live: handover_full) or is waited on (replay,
 * meanwhile draining this worker's own ring, so that two workers
 * waiting on each other both move). */
static void
handover_put(struct pa_worker *w, struct pa_worker *o, struct rte_mbuf *m,
		uint64_t now)
{
	while (rte_ring_mp_enqueue(o->handover, m) != 0) {
		if (!w->replay || w->pl->abort) {
			pa_drop(w, m, w->replay ? PA_DROP_SHUTDOWN :
				PA_DROP_HANDOVER_FULL);
			return;
		}
		handover_drain(w, now);
		wait_a_little(w);
	}
	w->stats.handover_packets++;
}

/* rtc with RSS steering, after classify: a quoted ICMP error whose flow
 * another worker receives goes to that worker (its flow table holds the
 * flow). One flag test per packet. */
static __rte_always_inline uint16_t
steer_quotes(struct pa_worker *w, struct rte_mbuf **pkts, uint16_t n,
		uint64_t now, uint64_t stamp)
{
	struct pa_worker *o;
	uint16_t i, kept = 0;

	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		struct pa_pkt_meta *meta = pa_pkt_meta(m);

		if (likely(!(meta->flags & PA_PKT_F_QUOTE)) ||
		    (o = quote_owner(w, m, meta)) == NULL) {
			pkts[kept++] = m;
			continue;
		}
		/* it leaves the burst: it carries its stamp (stamp_later) */
		if (w->stamp_later && stamp != PA_STAMP_MIXED)
			pa_pkt_rx_tsc_set(meta, stamp);
		handover_put(w, o, m, now);
	}
	return kept;
}

/* An lcore that runs lb right after rx, beside others (pipeline.c,
 * fnat_steering()): a full-NAT reply whose flow another holds goes to
 * that one's hand-over ring. */
static __rte_noinline uint16_t
steer_fnat(struct pa_worker *w, struct rte_mbuf **pkts, uint16_t n,
		uint64_t now, uint64_t stamp)
{
	struct pa_pipeline *pl = w->pl;
	uint16_t i, kept = 0;
	int o;

	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		struct pa_pkt_meta *meta = pa_pkt_meta(m);

		o = pa_lb_fnat_owner(pl->lb, m, meta);
		if (likely(o < 0 || (unsigned int)o == w->widx ||
		    (unsigned int)o >= pl->n_workers ||
		    pl->workers[o]->handover == NULL)) {
			pkts[kept++] = m;
			continue;
		}
		if (w->stamp_later && stamp != PA_STAMP_MIXED)
			pa_pkt_rx_tsc_set(meta, stamp);
		handover_put(w, pl->workers[o], m, now);
	}
	return kept;
}

/* The stages of segment @p g after rx, up to its sink. @return the
 * packets still in @p pkts, in order. */
static __rte_always_inline uint16_t
run_stages(struct pa_worker *w, const struct pa_seg *g,
		struct rte_mbuf **pkts, uint16_t n, uint64_t now, uint64_t stamp,
		bool all_ip)
{
	if (g->run_classify)
		n = stage_classify(w, pkts, n, all_ip);
	/* what stays keeps the burst's stamp and out port */
	if (unlikely(w->steer))
		n = steer_quotes(w, pkts, n, now, stamp);
	if (g->run_lb) {
		if (unlikely(w->fnat_steer) && g == &w->rx_seg)
			n = steer_fnat(w, pkts, n, now, stamp);
		n = stage_lb(w, pkts, n, now);
		n = stage_route(w, pkts, n);
	}
	return n;
}

/* The stages of segment @p g after rx, then the sink: TX or the next
 * stage's ring. */
static __rte_always_inline void
process_rest(struct pa_worker *w, const struct pa_seg *g,
		struct rte_mbuf **pkts, uint16_t n, uint32_t uniform_out,
		uint64_t now, uint64_t stamp, bool all_ip)
{
	n = run_stages(w, g, pkts, n, now, stamp, all_ip);
	if (g->run_tx)
		stage_tx(w, pkts, n, uniform_out, stamp);
	else
		dispatch(w, g, pkts, n);
}

static __rte_always_inline bool
replay_room(const struct pa_worker *w, const struct pa_rxq *q)
{
	/* net_pcap consumes a record before allocating its mbuf: poll only
	 * when every packet of a burst is sure to get its buffers. */
	return rte_mempool_avail_count(q->pool) >=
		(unsigned int)w->burst * w->segs_per_pkt;
}

static __rte_always_inline unsigned int
poll_ports(struct pa_worker *w, struct rte_mbuf **pkts, uint64_t now)
{
	unsigned int i, total = 0;
	uint64_t stamp;
	bool all_ip;
	uint16_t n;

	for (i = 0; i < w->n_rxq; i++) {
		const struct pa_rxq *q = &w->rxq[i];

		if (unlikely(w->replay) && !replay_room(w, q))
			continue;
		n = rte_eth_rx_burst(q->port_id, q->queue, pkts, w->burst);
		if (n == 0)
			continue;
		total += n;
		/* the packets' time in the appliance starts with the loop
		 * pass that polled them: its TSC read (no read of its own) */
		stamp = now;
		n = stage_rx(w, q, pkts, n, stamp, &all_ip);
		process_rest(w, &w->rx_seg, pkts, n, q->peer_port_id, now,
			stamp, all_ip);
	}
	return total;
}

/* Take what the other workers handed over (quoted ICMP errors about
 * this worker's flows) through the lb stage, the route pass and TX. */
static unsigned int
handover_drain(struct pa_worker *w, uint64_t now)
{
	struct rte_mbuf *pkts[PA_PIPELINE_MAX_BURST];
	unsigned int n;
	uint16_t k;

	n = rte_ring_sc_dequeue_burst(w->handover, (void **)pkts, w->burst,
		NULL);
	if (n == 0)
		return 0;
	w->stats.handover_received += n;
	k = stage_lb(w, pkts, (uint16_t)n, now);
	k = stage_route(w, pkts, k);
	/* (the rx segment runs lb: rtc, or a pipeline's rx lcores that
	 * run lb, full NAT) */
	if (w->rx_seg.run_tx)
		stage_tx(w, pkts, k, PA_OUT_UNKNOWN, PA_STAMP_MIXED);
	else
		dispatch(w, &w->rx_seg, pkts, k);
	return n;
}

/*
 * One poll of the rings of segment @p g. A ring poll takes up to
 * PA_PIPELINE_RING_BURSTS bursts at once (one ring operation, the ring's
 * own lines crossing once for them all) and runs them through the stages
 * a burst at a time, in ring order; what leaves by ring leaves in one
 * operation too. Before classify or lb, every header is prefetched at
 * once and the next burst's frames while the stages run this one
 * (perf/ring_hop/bench_ring_hop.c, "ahead"); tx reads a header line or
 * two a packet and gains nothing from it.
 */
static __rte_always_inline unsigned int
poll_seg(struct pa_worker *w, const struct pa_seg *g, struct rte_mbuf **pkts,
		uint64_t now)
{
	const unsigned int take = RTE_MIN((unsigned int)w->burst *
		PA_PIPELINE_RING_BURSTS, (unsigned int)PA_PIPELINE_MAX_BURST);
	const bool data = g->run_classify || g->run_lb;
	unsigned int i, n, done, k, kept, total = 0;
	uint16_t left;

	for (i = 0; i < g->n_in; i++) {
		n = rte_ring_sc_dequeue_burst(g->in[i], (void **)pkts, take,
			NULL);
		if (n == 0)
			continue;
		total += n;
		if (!data) {
			/* tx alone (its TX buffers gather the bursts) */
			for (done = 0; done < n; done += k) {
				k = RTE_MIN(n - done, (unsigned int)w->burst);
				process_rest(w, g, pkts + done, (uint16_t)k,
					PA_OUT_UNKNOWN, now, PA_STAMP_MIXED,
					false);
			}
			continue;
		}
		/* written on another CPU: every header at once */
		pa_pkt_prefetch_hdrs(pkts, n);
		for (done = 0, kept = 0; done < n; done += k) {
			k = RTE_MIN(n - done, (unsigned int)w->burst);
			if (done + k < n)
				pa_pkt_prefetch_data(pkts + done + k,
					RTE_MIN(n - done - k,
						(unsigned int)w->burst));
			left = run_stages(w, g, pkts + done, (uint16_t)k, now,
				PA_STAMP_MIXED, false);
			if (g->run_tx) {
				stage_tx(w, pkts + done, left, PA_OUT_UNKNOWN,
					PA_STAMP_MIXED);
				continue;
			}
			/* what leaves by ring, together and in order */
			if (kept != done)
				memmove(pkts + kept, pkts + done,
					left * sizeof(pkts[0]));
			kept += left;
		}
		if (!g->run_tx)
			dispatch(w, g, pkts, (uint16_t)kept);
	}
	return total;
}

static __rte_always_inline unsigned int
poll_rings(struct pa_worker *w, struct rte_mbuf **pkts, uint64_t now)
{
	unsigned int i, total = 0;

	for (i = 0; i < w->n_seg; i++)
		total += poll_seg(w, &w->seg[i], pkts, now);
	return total;
}

/* ring_put() waiting (replay): one poll of the segments that start after
 * stage @p stage. What they pass on goes further down the stages, so
 * waits never form a cycle. */
static void
drain_after(struct pa_worker *w, unsigned int stage)
{
	struct rte_mbuf *pkts[PA_PIPELINE_MAX_BURST];
	uint64_t now = rte_rdtsc();
	unsigned int i;

	for (i = 0; i < w->n_seg; i++)
		if (w->seg[i].first > stage)
			poll_seg(w, &w->seg[i], pkts, now);
}

static bool
rings_empty(const struct pa_seg *g)
{
	unsigned int i;

	for (i = 0; i < g->n_in; i++)
		if (!rte_ring_empty(g->in[i]))
			return false;
	return true;
}

static const struct pa_seg *
seg_from(const struct pa_worker *w, unsigned int first)
{
	unsigned int i;

	for (i = 0; i < w->n_seg; i++)
		if (w->seg[i].first == first)
			return &w->seg[i];
	return NULL;
}

/*
 * May this lcore leave? Stage by stage (stopping, idle): rx once it polls
 * no port (and its hand-over ring can no longer fill), a later stage once
 * every lcore of the stage before has finished it and the rings into it
 * here are empty, so that nothing is stranded. Each finished stage is
 * counted in pl->done[] for the lcores downstream; stages go one way, so
 * two lcores feeding each other both finish.
 */
static bool
may_finish(struct pa_worker *w)
{
	struct pa_pipeline *pl = w->pl;
	const struct pa_seg *g;
	unsigned int s, bit;

	for (s = 0; s < PA_STAGE_MAX; s++) {
		bit = 1u << s;
		if (!(w->stages & bit) || (w->stages_done & bit))
			continue;
		if (s == PA_STAGE_RX) {
			/* a hand-over ring: once nobody can fill it, empty */
			if (w->handover != NULL &&
			    (__atomic_load_n(&pl->rx_stopped, __ATOMIC_ACQUIRE) !=
			     pl->n_stage[PA_STAGE_RX] ||
			     !rte_ring_empty(w->handover)))
				return false;
		} else if ((g = seg_from(w, s)) != NULL) {
			/* fed by rings (otherwise only by stage s - 1 here,
			 * finished) */
			if (__atomic_load_n(&pl->done[s - 1], __ATOMIC_ACQUIRE) <
			    pl->n_stage[s - 1] || !rings_empty(g))
				return false;
		}
		w->stages_done |= bit;
		__atomic_fetch_add(&pl->done[s], 1, __ATOMIC_RELEASE);
	}
	return true;
}

/*
 * Adaptive polling: the lcore has found no work for spin_polls polls.
 * Sleep @p nap_us (1 us, doubling each time, up to max_sleep_us), so a
 * packet that arrives meanwhile waits at most max_sleep_us (plus the
 * kernel's wake-up). Sleeping is a syscall, but only when there is no
 * work: any work resets the back-off. The lcore is offline for RCU while
 * it sleeps (it holds no table), so that no update waits for it.
 */
static void
idle_sleep(struct pa_worker *w, uint32_t *nap_us)
{
	struct pa_pipeline *pl = w->pl;
	uint64_t t0;

	/* nothing may wait in a TX buffer for the length of a sleep */
	if (w->run_tx) {
		txbuf_flush_all(w);
		w->last_drain = rte_rdtsc();
	}
	*nap_us = *nap_us == 0 ? 1 : RTE_MIN(*nap_us * 2, w->max_sleep_us);
	t0 = rte_rdtsc();
	rte_rcu_qsbr_thread_offline(pl->rcu, w->lcore_id);
	rte_delay_us_sleep(*nap_us);
	rte_rcu_qsbr_thread_online(pl->rcu, w->lcore_id);
	w->stats.sleeps++;
	w->stats.sleep_cycles += rte_rdtsc() - t0;
}

int
pa_worker_main(void *arg)
{
	struct pa_worker *w = arg;
	struct pa_pipeline *pl = w->pl;
	struct rte_mbuf *pkts[PA_PIPELINE_MAX_BURST];
	uint64_t now, prev;
	unsigned int got, idle_streak = 0;
	uint32_t nap_us = 0;
	bool busy = false;

	/* the kernel's default timer slack (50 us) would stretch every short
	 * sleep: make them as short as asked */
	if (w->adaptive)
		prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
	rte_rcu_qsbr_thread_register(pl->rcu, w->lcore_id);
	rte_rcu_qsbr_thread_online(pl->rcu, w->lcore_id);
	prev = rte_rdtsc();
	w->last_drain = prev;
	for (;;) {
		bool stopping = pl->stop;

		/* the loop's one TSC read: the end of the last pass (its
		 * busy cycles, the latency of what it sent with its own rx
		 * stamp) and the start of this one (the rx stamp) */
		now = rte_rdtsc();
		if (busy) {
			w->stats.busy_cycles += now - prev;
			w->stats.busy_polls++;
		} else {
			w->stats.idle_polls++;
		}
		prev = now;
		if (w->lat_pend != 0)
			lat_pend_flush(w, now);

		got = 0;
		if (likely(!stopping))
			got += poll_ports(w, pkts, now);
		else if (!w->rx_stopped) {
			/* no more hand-overs from this one */
			w->rx_stopped = true;
			__atomic_fetch_add(&pl->rx_stopped, 1, __ATOMIC_RELEASE);
		}
		got += poll_rings(w, pkts, now);
		if (unlikely(w->handover != NULL))
			got += handover_drain(w, now);
		if (w->run_tx && now - w->last_drain >= w->drain_tsc) {
			txbuf_flush_all(w);
			w->last_drain = now;
		}
		if (unlikely(ctrl_pending(w)))
			ctrl_tx(w);
		rte_rcu_qsbr_quiescent(pl->rcu, w->lcore_id);
		busy = got != 0;
		if (w->lb != NULL && pa_lb_poll_due(w->lb, w->widx))
			pa_lb_poll(w->lb, w->widx, now, !busy);
		if (busy) {
			idle_streak = 0;
			nap_us = 0;
			continue;
		}
		if (stopping && may_finish(w))
			break;
		if (idle_streak < UINT32_MAX)
			idle_streak++;
		if (w->adaptive) {
			if (idle_streak > w->spin_polls)
				idle_sleep(w, &nap_us);
			else
				wait_a_little(w);
		} else if (unlikely(w->replay) && idle_streak > REPLAY_IDLE_POLLS) {
			/* A replay that has run dry (--stay) need not spin. */
			uint64_t t0 = rte_rdtsc();

			rte_delay_us_sleep(REPLAY_IDLE_NAP_US);
			w->stats.sleeps++;
			w->stats.sleep_cycles += rte_rdtsc() - t0;
		} else {
			wait_a_little(w);
		}
	}
	if (w->run_tx)
		txbuf_flush_all(w);
	if (w->lat_pend != 0)
		lat_pend_flush(w, rte_rdtsc());
	ctrl_tx(w);
	pa_lb_lcore_exit(w->lb, w->widx);
	rte_rcu_qsbr_thread_offline(pl->rcu, w->lcore_id);
	rte_rcu_qsbr_thread_unregister(pl->rcu, w->lcore_id);
	return 0;
}
