/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef PA_NEIGH_INLINE_H
#define PA_NEIGH_INLINE_H

/**
 * @file
 * The data path's side of lib/neigh: the rx stage's classification of
 * ARP and ND, and the route stage's next hops. Include pa_neigh.h, not
 * this file.
 *
 * Which frames go to the control side (PA_NEIGH_RX_LOCAL)
 * --------------------------------------------------------
 * - ARP (ethertype 0x0806, behind VLAN tags too) for Ethernet/IPv4
 *   (htype 1, ptype 0x0800, hlen 6, plen 4) whose target protocol address
 *   is the appliance's: a VIP, lb.local_addr or a full-NAT pool address
 *   (any port), or an address of the receiving port; and gratuitous ARP
 *   (sender address = target address) from a neighbour the receiving
 *   port resolves. An address that is both lb.local_addr (or a pool
 *   address) and a port's own is answered as both are
 *   (one answer, on every port): the kernel_if never answers ARP/ND,
 *   it gets the replies to its own questions (lib/excp).
 * - ICMPv6 neighbour solicitations (135) whose target is the appliance's
 *   (as above), and advertisements (136) whose target is the appliance's
 *   (a conflict, counted) or a neighbour the receiving port resolves.
 *
 * Which are malformed (PA_NEIGH_RX_MALFORMED, dropped "malformed")
 * ---------------------------------------------------------------
 * - ARP shorter than its 8-byte fixed part, or than 8 + 2 * (hlen + plen);
 * - NS and NA whose ICMPv6 message (bounded by the IPv6 payload length)
 *   is shorter than 24 bytes.
 *
 * Everything else passes (PA_NEIGH_RX_PASS) and follows the old path:
 * other ARP frames are non-IP frames (acl.non_ip), other ICMPv6 (router
 * solicitations and advertisements, redirects, ND not for the appliance)
 * goes through the ACL like any IPv6 packet. The control side validates
 * what it gets (pa_neigh_parse(): hop limit 255, checksum, options,
 * senders...) and counts what it refuses.
 */

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_branch_prediction.h>
#include <rte_ether.h>
#include <rte_hash_crc.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "pa_lb.h"
#include "pa_pkt.h"

/** Verdicts of pa_neigh_rx_classify(). */
enum pa_neigh_rx {
	PA_NEIGH_RX_PASS = 0,
	PA_NEIGH_RX_LOCAL,
	PA_NEIGH_RX_MALFORMED,
};

#define PA_NEIGH_DP_OURS_ANY	0x01	/**< VIP, lb.local_addr, pool: every port */
/** A VIP: every packet to it is the load balancer's. */
#define PA_NEIGH_DP_VIP		0x02
/** lb.local_addr / local_addr6: the load balancer owns only part of what
 * comes to it (pa_lb_local_owns()); when it is also a port's own address
 * ("ours_ports"), the rest is that port's (its kernel_if's). */
#define PA_NEIGH_DP_LB_LOCAL	0x04
/** An address of the full-NAT pool (lb.fnat.addrs): the load balancer
 * owns the replies to the pool's ports (pool_lo..pool_hi) and the ICMP
 * errors about them (pa_lb_pool_owns()); when it is also a port's own
 * address, the rest is that port's (its kernel_if's). May be set with
 * PA_NEIGH_DP_LB_LOCAL (an address in both). */
#define PA_NEIGH_DP_LB_POOL	0x08
/** The load balancer owns part of the address (pa_neigh_dp_lb_keeps()
 * tells which): lb.local_addr, a pool address. */
#define PA_NEIGH_DP_LB_PART	(PA_NEIGH_DP_LB_LOCAL | PA_NEIGH_DP_LB_POOL)

/** One address of the data path's table. */
struct pa_neigh_dp_ent {
	uint8_t family;			/**< 4 or 6; 0 = empty slot */
	uint8_t flags;			/**< PA_NEIGH_DP_* */
	uint16_t pad;
	uint32_t ours_ports;		/**< ports (by index) it is ours on */
	uint32_t watch_ports;		/**< ports resolving it */
	uint8_t addr[16];		/**< IPv4: first 4 bytes */
	/** PA_NEIGH_DP_LB_POOL: the pool's ports (host order) */
	uint16_t pool_lo;
	uint16_t pool_hi;
};

/** The published address table: open addressing, linear probing, at
 * most half full, immutable once published. */
struct pa_neigh_dp {
	uint32_t mask;			/**< slots - 1 (a power of two) */
	uint32_t n;			/**< addresses */
	struct pa_neigh_dp_ent ent[];
};

/** A resolved next hop: one word, stored and loaded atomically. Bits
 * 0-47: the MAC (memory order); PA_NEIGH_NH_VALID: the MAC is good. */
#define PA_NEIGH_NH_VALID	(1ULL << 63)
#define PA_NEIGH_NH_MAC_MASK	((1ULL << 48) - 1)

/** How a routed port addresses the transit frames it sends
 * (pa_neigh_route_macs()). */
struct pa_neigh_port_l2 {
	/** its resolved "gateway", [0] IPv4, [1] IPv6 (atomic words) */
	uint64_t gw_nh[2];
	struct rte_ether_addr mac;	/**< the port's own */
	struct rte_ether_addr gw;	/**< its gateway_mac (has_gw) */
	bool has_gw;
	bool known;			/**< a port of the appliance */
};

/** What the data path reads of the subsystem. */
struct pa_neigh_fast {
	struct pa_neigh_dp *dp;		/**< RCU: read with acquire */
	struct rte_ring *rx;		/**< to the control side */
	/** by ethdev port id: the route stage's next hops */
	struct pa_neigh_port_l2 l2[RTE_MAX_ETHPORTS];
};

static __rte_always_inline uint32_t
pa_neigh_dp_hash(uint8_t family, const uint8_t *addr)
{
	uint64_t a, b;
	uint32_t x;

	if (family == 4) {
		memcpy(&x, addr, 4);
		return rte_hash_crc_4byte(x, 0x9e3779b9u);
	}
	memcpy(&a, addr, 8);
	memcpy(&b, addr + 8, 8);
	return rte_hash_crc_8byte(b, rte_hash_crc_8byte(a, 0x9e3779b9u));
}

/** The entry of @p addr, or NULL. */
static __rte_always_inline const struct pa_neigh_dp_ent *
pa_neigh_dp_find(const struct pa_neigh_dp *t, uint8_t family,
		const uint8_t *addr)
{
	const unsigned int alen = family == 4 ? 4 : 16;
	uint32_t i;

	if (t == NULL || t->n == 0)
		return NULL;
	for (i = pa_neigh_dp_hash(family, addr) & t->mask;;
	     i = (i + 1) & t->mask) {
		const struct pa_neigh_dp_ent *e = &t->ent[i];

		if (e->family == 0)
			return NULL;
		if (e->family == family && memcmp(e->addr, addr, alen) == 0)
			return e;
	}
}

/**
 * Does the load balancer keep this IP packet, whose destination has
 * entry @p e in the table (NULL: none), for itself: a VIP's, or what it
 * owns on lb.local_addr (pa_lb_local_owns()) or on a full-NAT pool
 * address (pa_lb_pool_owns())? What it does not keep of a port's own
 * address is the port's (lib/excp: its kernel_if).
 */
static __rte_always_inline bool
pa_neigh_dp_lb_keeps(const struct pa_neigh_dp_ent *e,
		const struct rte_mbuf *m, const struct pa_pkt_meta *meta)
{
	if (e == NULL)
		return false;
	if (e->flags & PA_NEIGH_DP_VIP)
		return true;
	if ((e->flags & PA_NEIGH_DP_LB_LOCAL) && pa_lb_local_owns(m, meta))
		return true;
	return (e->flags & PA_NEIGH_DP_LB_POOL) &&
		pa_lb_pool_owns(m, meta, e->pool_lo, e->pool_hi);
}

/** Out-of-line halves (neigh_dp.c): ARP and ICMPv6 frames are rare. */
int pa_neigh_rx_arp(const struct pa_neigh_fast *nf, const struct rte_mbuf *m,
		const struct pa_pkt_meta *meta, uint16_t port_index);
int pa_neigh_rx_nd(const struct pa_neigh_fast *nf, const struct rte_mbuf *m,
		const struct pa_pkt_meta *meta, uint16_t port_index);

/**
 * Address a routed transit frame (not load-balanced, IPv6 if @p v6)
 * leaving port @p out (ethdev id): destination its gateway_mac, else its
 * resolved "gateway" of the frame's family; source its MAC. Data path,
 * any lcore, no lock (neigh_dp.c).
 * @return 0, or -EHOSTUNREACH (no gateway, or not resolved: the frame
 *         is untouched).
 */
int pa_neigh_route_macs(const struct pa_neigh_fast *nf,
		struct rte_ether_hdr *eth, uint16_t out, bool v6);

/**
 * Is this parsed frame for the control side? One flag test for all but
 * non-IP and ICMPv6 frames.
 * @param port_index  index of the receiving port
 * @return enum pa_neigh_rx
 */
static __rte_always_inline int
pa_neigh_rx_classify(const struct pa_neigh_fast *nf, const struct rte_mbuf *m,
		const struct pa_pkt_meta *meta, uint16_t port_index)
{
	if (likely(!(meta->flags & (PA_PKT_F_NON_IP | PA_PKT_F_IPV6))))
		return PA_NEIGH_RX_PASS;
	if (meta->flags & PA_PKT_F_NON_IP)
		return pa_neigh_rx_arp(nf, m, meta, port_index);
	if (meta->l4_proto != IPPROTO_ICMPV6)
		return PA_NEIGH_RX_PASS;
	return pa_neigh_rx_nd(nf, m, meta, port_index);
}

#endif /* PA_NEIGH_INLINE_H */
