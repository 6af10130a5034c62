/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef PA_LB_INLINE_H
#define PA_LB_INLINE_H

/**
 * @file
 * What the worker loop asks of lib/lb once a pass without a call: is
 * there a service (pa_lb_active()), and has pa_lb_poll() anything to do
 * on this lcore (pa_lb_poll_due()); and what the load balancer owns on
 * an address it shares with a port (pa_lb_local_owns(), pa_lb_pool_owns()).
 * Include pa_lb.h, not this file.
 */

#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_mbuf.h>

#include "pa_pkt.h"

/**
 * The first member of struct pa_lb, kept by lib/lb alone (the data path
 * only reads it).
 */
struct pa_lb_dp {
	/** the live table has a service: stored with each publication,
	 * before the lcores are waited for (like the table itself) */
	bool active;
	/**
	 * By lcore: non-zero while pa_lb_poll() may have something to do
	 * there. Set when the lcore's flow table is made, by its
	 * pa_lb_process() (flows), and by pa_lb_trace() after it asks the
	 * lcore (each question adds one); the lcore's own pa_lb_poll()
	 * sets it to 0, unless it changed meanwhile, when it finds no flow,
	 * no question, no deferred free and no resize of its flow index
	 * due or under way.
	 */
	uint32_t poll[PA_LB_MAX_LCORES];
	/**
	 * Full NAT's replies, for pa_lb_fnat_owner() (set at create, then
	 * read only): the pool's port range (fnat_hi 0: no pool), the
	 * ports of each lb lcore's share, lb rank -> lcore index, and the
	 * pool's addresses by family.
	 */
	uint16_t fnat_lo, fnat_hi;
	uint32_t fnat_share;
	uint8_t fnat_n_lb;
	uint8_t fnat_n4, fnat_n6;
	uint8_t fnat_lcore[PA_LB_MAX_LCORES];
	uint32_t fnat_v4[PA_CONFIG_FNAT_MAX_ADDRS];
	uint8_t fnat_v6[PA_CONFIG_FNAT_MAX_ADDRS][16];
};

/** True when the LB has at least one service (the stage can be skipped
 * otherwise; one load). */
static inline bool
pa_lb_active(const struct pa_lb *lb)
{
	return lb != NULL && __atomic_load_n(&((const struct pa_lb_dp *)
		(const void *)lb)->active, __ATOMIC_RELAXED);
}

/** True when pa_lb_poll() has something to do on lcore @p lcore_idx
 * (else the call may be left out; one load). */
static inline bool
pa_lb_poll_due(const struct pa_lb *lb, unsigned int lcore_idx)
{
	return __atomic_load_n(&((const struct pa_lb_dp *)(const void *)lb)->
		poll[lcore_idx], __ATOMIC_ACQUIRE) != 0;
}

/**
 * The port a packet to a full-NAT pool address is about, as
 * pa_lb_pool_owns() and pa_lb_fnat_owner() read it: a TCP or UDP
 * packet's destination port (not a later fragment's), or the quoted
 * source port of an ICMP error (IPv4 3, 11, 12; ICMPv6 1-4) that quotes
 * a TCP or UDP packet (its first fragment; IPv4 options skipped, no IPv6
 * extension header) from the packet's destination. Host order; -1: none.
 */
static inline int
pa_lb_pool_port(const struct rte_mbuf *m, const struct pa_pkt_meta *meta)
{
	const bool v4 = meta->flags & PA_PKT_F_IPV4;
	const unsigned int alen = v4 ? 4 : 16;
	uint8_t buf[8 + 40], dbuf[16], pbuf[2];
	const uint8_t *icmp, *q, *dst, *sp;
	unsigned int qlen;

	if ((meta->flags & (PA_PKT_F_L4 | PA_PKT_F_FRAG_LATER)) !=
	    PA_PKT_F_L4)
		return -1;
	if (meta->l4_proto == IPPROTO_TCP || meta->l4_proto == IPPROTO_UDP)
		return meta->dport;
	if (meta->l4_proto != (v4 ? IPPROTO_ICMP : IPPROTO_ICMPV6))
		return -1;
	icmp = rte_pktmbuf_read(m, meta->l4_off, 8u + (v4 ? 20u : 40u), buf);
	if (icmp == NULL)
		return -1;
	if (v4 ? (icmp[0] != 3 && icmp[0] != 11 && icmp[0] != 12) :
	    (icmp[0] < 1 || icmp[0] > 4))
		return -1;
	q = icmp + 8;
	if ((q[0] >> 4) != (v4 ? 4 : 6))
		return -1;
	if (v4) {
		qlen = (q[0] & 0xfu) * 4u;
		/* options too short, or a later fragment: no ports */
		if (qlen < 20 || ((q[6] & 0x1fu) | q[7]) != 0)
			return -1;
	} else {
		qlen = 40;
	}
	if ((v4 ? q[9] : q[6]) != IPPROTO_TCP &&
	    (v4 ? q[9] : q[6]) != IPPROTO_UDP)
		return -1;
	dst = rte_pktmbuf_read(m, meta->l3_off + (v4 ? 16u : 24u), alen, dbuf);
	if (dst == NULL || memcmp(q + (v4 ? 12 : 8), dst, alen) != 0)
		return -1;
	sp = rte_pktmbuf_read(m, meta->l4_off + 8u + qlen, 2, pbuf);
	if (sp == NULL)
		return -1;
	return sp[0] << 8 | sp[1];
}

/**
 * What the load balancer owns on an address of its full-NAT pool
 * (lb.fnat.addrs), which may also be a routed port's own address or
 * lb.local_addr (docs/configuration.md, "One address, shared"): the rx
 * stage keeps these packets in the data path, unchanged, for the lb
 * stage; the rest for that address goes to the port's kernel_if
 * (lib/excp), or, on an address that is no port's, on to the route pass
 * that does not send it back out (as for lb.local_addr).
 *
 * - TCP and UDP packets (not a later fragment) whose destination port is
 *   in the pool's range [@p lo, @p hi]: the backends' replies to a
 *   translated flow;
 * - ICMP errors (IPv4 destination unreachable, time exceeded, parameter
 *   problem; ICMPv6 types 1-4) that quote a TCP or UDP packet (its first
 *   fragment) whose source is the packet's destination and whose source
 *   port is in [@p lo, @p hi]: errors about what the load balancer sent
 *   from the pool (an IPv6 quote with extension headers is not matched:
 *   the load balancer sends none).
 * The kernel's own connections from a shared address should use ports
 * outside the range (its ip_local_port_range, its listening ports).
 *
 * @param m     a parsed IP packet (its headers in the first segment
 *              or not: read with rte_pktmbuf_read())
 * @param meta  its metadata; the caller knows its destination is a pool
 *              address
 * @param lo    the pool's first port (host order)
 * @param hi    its last port
 * @return true: the load balancer's.
 */
static inline bool
pa_lb_pool_owns(const struct rte_mbuf *m, const struct pa_pkt_meta *meta,
		uint16_t lo, uint16_t hi)
{
	int port = pa_lb_pool_port(m, meta);

	return port >= lo && port <= hi;
}

/**
 * What the load balancer owns on lb.local_addr / local_addr6, which may
 * also be a routed port's own address (docs/configuration.md, "One
 * address, shared"): the rx stage keeps these packets in the data path
 * and gives the rest for that address to the port's kernel_if (lib/excp),
 * exactly as if local_addr were an address of its own.
 *
 * Today: the ICMP errors about its own packets, i.e. an ICMP error
 * (IPv4 destination unreachable, time exceeded, parameter problem;
 * ICMPv6 types 1-4) whose quoted IP header has the packet's destination
 * as source and IPIP (4) or IPv6 (41) as protocol: the outer header of
 * an ipip packet the LB sent (fragmentation needed / packet too big from
 * a router towards a backend, ...). The kernel sends nothing of the
 * kind from the port's address (it has no tunnel there), so nothing of
 * the kernel's is taken. Full NAT's pool addresses have their own test
 * (pa_lb_pool_owns()).
 *
 * @param m     a parsed IP packet (its headers in the first segment
 *              or not: read with rte_pktmbuf_read())
 * @param meta  its metadata; the caller knows its destination is one of
 *              lb.local_addr / local_addr6
 * @return true: the load balancer's.
 */
static inline bool
pa_lb_local_owns(const struct rte_mbuf *m, const struct pa_pkt_meta *meta)
{
	const bool v4 = meta->flags & PA_PKT_F_IPV4;
	const unsigned int alen = v4 ? 4 : 16;
	uint8_t buf[8 + 40], dbuf[16];
	const uint8_t *icmp, *q, *dst;

	if ((meta->flags & (PA_PKT_F_L4 | PA_PKT_F_FRAG_LATER)) !=
	    PA_PKT_F_L4 || meta->l4_proto != (v4 ? IPPROTO_ICMP :
	    IPPROTO_ICMPV6))
		return false;
	icmp = rte_pktmbuf_read(m, meta->l4_off, 8u + (v4 ? 20u : 40u), buf);
	if (icmp == NULL)
		return false;
	if (v4 ? (icmp[0] != 3 && icmp[0] != 11 && icmp[0] != 12) :
	    (icmp[0] < 1 || icmp[0] > 4))
		return false;
	q = icmp + 8;
	if ((q[0] >> 4) != (v4 ? 4 : 6))
		return false;
	if (v4 ? (q[9] != IPPROTO_IPIP && q[9] != IPPROTO_IPV6) :
	    (q[6] != IPPROTO_IPIP && q[6] != IPPROTO_IPV6))
		return false;
	dst = rte_pktmbuf_read(m, meta->l3_off + (v4 ? 16u : 24u), alen, dbuf);
	return dst != NULL && memcmp(q + (v4 ? 12 : 8), dst, alen) == 0;
}

/** Has the LB a full-NAT pool with more than one lb lcore (replies may
 * arrive on an lcore that does not hold their flow)? */
static inline bool
pa_lb_fnat_steers(const struct pa_lb *lb)
{
	const struct pa_lb_dp *d = (const struct pa_lb_dp *)(const void *)lb;

	return lb != NULL && d->fnat_hi != 0 && d->fnat_n_lb > 1;
}

/**
 * The lcore (index among the data-path lcores) that holds the flow of a
 * full-NAT reply: a TCP/UDP packet to a pool address and port, or an
 * ICMP error to a pool address quoting a TCP/UDP packet from it and one
 * of its ports (the backend's error about an fnat packet). The pool's
 * ports are shared among the lb lcores by range (lib/lb/lb_fnat.h), so
 * the port says which. -1: not a full-NAT reply.
 */
static inline int
pa_lb_fnat_owner(const struct pa_lb *lb, const struct rte_mbuf *m,
		const struct pa_pkt_meta *meta)
{
	const struct pa_lb_dp *d = (const struct pa_lb_dp *)(const void *)lb;
	const bool v4 = meta->flags & PA_PKT_F_IPV4;
	const int port = pa_lb_pool_port(m, meta);
	uint8_t buf[16];
	const uint8_t *a;
	unsigned int i, r;

	if (port < d->fnat_lo || port > d->fnat_hi)
		return -1;
	a = rte_pktmbuf_read(m, meta->l3_off + (v4 ? 16u : 24u), v4 ? 4 : 16,
		buf);
	if (a == NULL)
		return -1;
	if (v4) {
		uint32_t x;

		memcpy(&x, a, 4);
		for (i = 0; i < d->fnat_n4; i++)
			if (d->fnat_v4[i] == x)
				break;
		if (i == d->fnat_n4)
			return -1;
	} else {
		for (i = 0; i < d->fnat_n6; i++)
			if (memcmp(d->fnat_v6[i], a, 16) == 0)
				break;
		if (i == d->fnat_n6)
			return -1;
	}
	r = (unsigned int)(port - d->fnat_lo) / d->fnat_share;
	if (r >= d->fnat_n_lb)
		r = d->fnat_n_lb - 1u;
	return d->fnat_lcore[r];
}

#endif /* PA_LB_INLINE_H */
