/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef PA_EXCP_INLINE_H
#define PA_EXCP_INLINE_H

/**
 * @file
 * The rx stage's side of lib/excp. Include pa_excp.h, not this file.
 *
 * Which frames go to a kernel_if
 * ------------------------------
 * Only frames received on a port that has a kernel_if, after lib/neigh
 * has classified them (pa_neigh_rx_classify()):
 * - IPv4/IPv6 frames lib/neigh passes whose destination address is one
 *   of the receiving port's own addresses ("addr"), and that the load
 *   balancer does not keep (pa_neigh_dp_lb_keeps(): all of a VIP, and
 *   on lb.local_addr / local_addr6 or a full-NAT pool address shared
 *   with the port only what pa_lb_local_owns() / pa_lb_pool_owns()
 *   say): taken (PA_EXCP_TAKEN), or dropped when the
 *   port's ring is full (PA_EXCP_FULL) or the lcore's token bucket for
 *   the port is empty (PA_EXCP_RATE);
 * - ARP replies whose target address, and neighbour advertisements
 *   whose IPv6 destination, is one of the receiving port's own
 *   addresses (lb.local_addr or a pool address shared with it
 *   included, not a VIP), which
 *   lib/neigh takes (PA_NEIGH_RX_LOCAL): the kernel
 *   gets the same mbuf too (one more reference; both sides only read
 *   it), within the same ring and bucket. The verdict stays
 *   PA_EXCP_PASS: the frame is lib/neigh's; a copy that does not fit is
 *   counted (clones_skipped) and not made.
 * Everything else passes (PA_EXCP_PASS).
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_branch_prediction.h>
#include <rte_cycles.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "pa_config.h"
#include "pa_neigh.h"
#include "pa_pkt.h"

/** Verdicts of pa_excp_punt(). */
enum pa_excp_verdict {
	PA_EXCP_PASS = 0,	/**< not for the kernel: carry on */
	PA_EXCP_TAKEN,		/**< on the port's ring: the kernel's now */
	PA_EXCP_FULL,		/**< for the kernel, ring full: drop it */
	PA_EXCP_RATE,		/**< for the kernel, over the rate: drop it */
};

/** One data-path lcore's state: a token bucket per port (GCRA: the
 * theoretical arrival time, TSC) and its clone counters. Written by that
 * lcore only. */
struct pa_excp_row {
	uint64_t tat[PA_CONFIG_MAX_PORTS];
	uint64_t clones;		/**< ARP/NA copies given to the kernel */
	uint64_t clones_skipped;	/**< ... not made: ring full or rate */
} __rte_cache_aligned;

/** What the rx stage reads; immutable once the data path runs. */
struct pa_excp_fast {
	const struct pa_neigh_fast *neigh;	/**< the address table */
	uint32_t ports;			/**< bit i: port index i has a kernel_if */
	/** per port: TSC cycles per frame, per rx lcore */
	uint64_t interval[PA_CONFIG_MAX_PORTS];
	/** per port: (burst - 1) * interval */
	uint64_t tolerance[PA_CONFIG_MAX_PORTS];
	struct rte_ring *ring[PA_CONFIG_MAX_PORTS]; /**< MP/SC, per port */
	struct pa_excp_row *rows;	/**< one per data-path lcore (widx) */
};

/**
 * Token bucket as GCRA (one word of state): take one token at @p now if
 * the bucket, @p interval cycles a token and @p tolerance cycles deep
 * ((burst - 1) * interval), has one. Pure.
 * @param tat  theoretical arrival time; 0 for a full bucket
 * @return true if taken.
 */
static __rte_always_inline bool
pa_excp_tb_take(uint64_t *tat, uint64_t now, uint64_t interval,
		uint64_t tolerance)
{
	uint64_t t = *tat > now ? *tat : now;

	if (t - now > tolerance)
		return false;
	*tat = t + interval;
	return true;
}

/** Out of line (excp_dp.c): the rare frames, the ring and the bucket. */
int pa_excp_punt_frame(const struct pa_excp_fast *x, unsigned int widx,
		struct rte_mbuf *m, uint16_t port_index);
void pa_excp_punt_clone(const struct pa_excp_fast *x, unsigned int widx,
		struct rte_mbuf *m, const struct pa_pkt_meta *meta,
		uint16_t port_index);

/** The table's entry of @p addr if it is one of port @p bit's own
 * addresses and not a VIP (lb.local_addr or a pool address may be one),
 * else NULL. */
static __rte_always_inline const struct pa_neigh_dp_ent *
pa_excp_port_addr(const struct pa_excp_fast *x, uint8_t family,
		const uint8_t *addr, uint32_t bit)
{
	const struct pa_neigh_dp_ent *e;

	e = pa_neigh_dp_find(__atomic_load_n(&x->neigh->dp, __ATOMIC_ACQUIRE),
		family, addr);
	if (e == NULL || !(e->ours_ports & bit) ||
	    (e->flags & PA_NEIGH_DP_VIP))
		return NULL;
	return e;
}

/**
 * Should this parsed frame, received on port @p port_index, go to the
 * port's kernel_if? One bit test on ports without one; one address
 * lookup on IP frames of ports with one.
 * @param widx  the calling lcore's index among the data-path lcores
 * @param nv    lib/neigh's verdict on the frame (enum pa_neigh_rx)
 * @return enum pa_excp_verdict; on PA_EXCP_TAKEN the ring owns @p m,
 *         on PA_EXCP_FULL and PA_EXCP_RATE the caller drops it.
 */
static __rte_always_inline int
pa_excp_punt(const struct pa_excp_fast *x, unsigned int widx,
		struct rte_mbuf *m, const struct pa_pkt_meta *meta,
		uint16_t port_index, int nv)
{
	uint32_t bit = 1u << (port_index & 31);
	const struct pa_neigh_dp_ent *e;
	uint8_t buf[16];
	const uint8_t *a;

	if (likely(!(x->ports & bit)))
		return PA_EXCP_PASS;
	if (unlikely(nv != PA_NEIGH_RX_PASS)) {
		if (nv == PA_NEIGH_RX_LOCAL)
			pa_excp_punt_clone(x, widx, m, meta, port_index);
		return PA_EXCP_PASS;
	}
	if (meta->flags & PA_PKT_F_IPV4) {
		a = rte_pktmbuf_read(m, meta->l3_off + 16u, 4, buf);
		e = a != NULL ? pa_excp_port_addr(x, 4, a, bit) : NULL;
	} else if (meta->flags & PA_PKT_F_IPV6) {
		a = rte_pktmbuf_read(m, meta->l3_off + 24u, 16, buf);
		e = a != NULL ? pa_excp_port_addr(x, 6, a, bit) : NULL;
	} else {
		return PA_EXCP_PASS;
	}
	/* one address, shared: the load balancer's part stays */
	if (e == NULL || unlikely((e->flags & PA_NEIGH_DP_LB_PART) &&
	    pa_neigh_dp_lb_keeps(e, m, meta)))
		return PA_EXCP_PASS;
	return pa_excp_punt_frame(x, widx, m, port_index);
}

#endif /* PA_EXCP_INLINE_H */
