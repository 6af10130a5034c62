/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef PA_LB_XLAT_H
#define PA_LB_XLAT_H

/**
 * @file
 * IPv4 <-> IPv6 header translation for full NAT (forward "fnat") services
 * whose backends are of the other family than their VIP: the stateless
 * part of RFC 7915 (SIIT), with the addresses and ports given by the
 * caller (the flow's: no RFC 6052 prefix is involved).
 *
 * Every function works in place on a parsed packet (struct pa_pkt_meta of
 * lib/pkt) whose headers are in the mbuf's first segment; it allocates
 * nothing, takes no lock and may run on any lcore. On an error the packet
 * is left unchanged (and the caller counts its drop).
 *
 * Choices where RFC 7915 leaves room or where full NAT differs from a
 * translating router:
 * - TTL <-> hop limit is copied, not decremented. The appliance is the
 *   flow's end (the VIP and the pool addresses are its own), not a router
 *   between client and backend, and the load balancer's other rewrites
 *   (nat) leave the TTL alone: a translated flow must not lose one hop
 *   more than an untranslated one. (A router-like SIIT decrements: RFC
 *   7915 4.1; a caller that wants that decrements before translating.)
 * - Traffic class <-> type of service: all 8 bits copied (RFC 7915's
 *   default). Flow label: 0 (RFC 7915 4.1); a caller that wants ECMP
 *   entropy writes its own (no checksum covers it).
 * - IPv6 -> IPv4: identification from the caller (RFC 7915 5.1 wants one
 *   generated as RFC 7739 says: a per-lcore counter will do), MF 0, DF set
 *   only when the IPv4 packet is longer than LB_XLAT_DF_MAX bytes, so
 *   that IPv4 routers may fragment smaller ones (an IPv6 host does not go
 *   below 1280 bytes whatever ICMP tells it).
 * - Not translated (-EINVAL): IPv4 with options, IPv6 with extension
 *   headers, fragments, protocols other than TCP and UDP (and, by
 *   lb_xlat_icmp(), ICMP errors about them). A DF-clear IPv4 packet that
 *   grows past the IPv6 path's MTU is not fragmented here (RFC 7915 4.1
 *   says SHOULD): the caller's MTU check applies to it as to any packet.
 * - Ethernet padding after the IP datagram is removed; the NIC pads a
 *   short frame again.
 *
 * TCP MSS: a packet translated from IPv4 to IPv6 grows by LB_XLAT_GROWTH
 * bytes. A caller that translates TCP clamps the MSS option of every
 * translated SYN (both directions) to at most
 * (the smaller of the two sides' link MTUs) - 40 - LB_XLAT_GROWTH, so that
 * a full-size IPv4 segment still fits once it is an IPv6 packet.
 */

#include <stdint.h>

#include <rte_mbuf.h>

#include "pa_pkt.h"

/** Bytes an IPv4 packet grows by in IPv6 (IPv6 header 40, IPv4 20). */
#define LB_XLAT_GROWTH		20
/** IPv6 -> IPv4: DF is set on translated packets longer than this
 *  (RFC 7915 5.1: 1280 - LB_XLAT_GROWTH). */
#define LB_XLAT_DF_MAX		1260
/** Longest ICMPv6 error built by translation (IPv6 packet, RFC 4443
 *  2.4 (c)): the quote is cut to fit. */
#define LB_XLAT_ICMP6_MAX	1280
/** Longest ICMPv4 error built by translation (IPv4 packet, RFC 1812
 *  4.3.2.3): the quote is cut to fit. */
#define LB_XLAT_ICMP4_MAX	576

/**
 * Translate the TCP/UDP IPv4 packet @p m into IPv6, in place. The IP
 * header grows by LB_XLAT_GROWTH bytes into the headroom: the Ethernet
 * header and its VLAN tags move to the new front, the last ethertype
 * becomes IPv6; the L4 header and payload do not move.
 *
 * @param src6, dst6  the new addresses (16 bytes each)
 * @param sport, dport  the new ports (network order)
 *
 * Written: version, traffic class (the TOS), flow label 0, payload length,
 * next header (the protocol), hop limit (the TTL), the addresses, the
 * ports; the TCP/UDP checksum updated incrementally (RFC 1624) for the
 * pseudo-header and the ports, except that an IPv4 UDP datagram without
 * checksum (0) gets one computed over the whole datagram (IPv6 requires
 * it; the payload may span segments). @p meta: PA_PKT_F_IPV4 becomes
 * PA_PKT_F_IPV6, l4_off moves, sport/dport are the new ports; l3_off,
 * hash and the other fields stay.
 *
 * @return 0; -EINVAL (not IPv4, options, a fragment, not TCP/UDP, lengths
 *         that disagree with the frame, headers past the first segment);
 *         -ENOSPC (less than LB_XLAT_GROWTH bytes of headroom). The packet
 *         is unchanged on an error.
 */
int lb_xlat_4to6(struct rte_mbuf *m, struct pa_pkt_meta *meta,
		const uint8_t *src6, const uint8_t *dst6, uint16_t sport,
		uint16_t dport);

/**
 * Translate the TCP/UDP IPv6 packet @p m into IPv4, in place: the IP
 * header shrinks by LB_XLAT_GROWTH bytes, the Ethernet header and VLAN
 * tags move up to it, the last ethertype becomes IPv4.
 *
 * @param src4, dst4  the new addresses (4 bytes each)
 * @param sport, dport  the new ports (network order)
 * @param ip_id  the IPv4 identification (network order, written as is)
 *
 * Written: version and IHL (5), TOS (the traffic class), total length,
 * @p ip_id, flags (DF when longer than LB_XLAT_DF_MAX), TTL (the hop
 * limit), protocol, header checksum, addresses, ports; the TCP/UDP
 * checksum updated incrementally (an IPv6 UDP checksum of 0, which IPv6
 * forbids but tunnels send, stays 0: IPv4's "no checksum"). @p meta as
 * lb_xlat_4to6() with the families swapped.
 *
 * @return 0; -EINVAL (not IPv6, extension headers, a fragment, not
 *         TCP/UDP, a jumbogram or a payload too long for IPv4, lengths
 *         that disagree with the frame, headers past the first segment).
 *         The packet is unchanged on an error.
 */
int lb_xlat_6to4(struct rte_mbuf *m, struct pa_pkt_meta *meta,
		const uint8_t *src4, const uint8_t *dst4, uint16_t sport,
		uint16_t dport, uint16_t ip_id);

/**
 * Rewrite an ICMP error about a TCP/UDP packet of a full-NAT flow for the
 * other side of the NAT, in the same family or translated.
 *
 * @p m is an ICMPv4 error (destination unreachable 3, time exceeded 11,
 * parameter problem 12) or an ICMPv6 error (1 to 4) whose whole message
 * is in the first segment, quoting at least the IP header and 8 bytes of
 * the TCP/UDP header of the packet it is about (the quote may be cut
 * anywhere after that). Its ICMP checksum must be right: a corrupted
 * error is not passed on with a fresh one.
 *
 * @param ofam  the family of the result, 4 or 6
 * @param osrc, odst  its outer source and destination
 * @param qsrc, qdst  the quoted packet's new addresses (family @p ofam)
 * @param qsport, qdport  the quoted packet's new ports (network order)
 * @param ip_id  the identification of an outer IPv4 header built here
 *               (network order; IPv6 -> IPv4 only; the quoted IPv4
 *               header gets 0)
 *
 * Same family: the outer addresses (the IPv4 header checksum updated),
 * the quoted addresses and ports (the quoted IPv4 header checksum and the
 * quoted L4 checksum, when the quote holds it, updated incrementally; a
 * quoted UDP checksum of 0 stays 0) and the ICMP checksum computed
 * afresh; types, codes and lengths unchanged.
 *
 * Translated (RFC 7915 4.2 and 5.2): the outer header and the quoted one
 * translated as by lb_xlat_4to6() / lb_xlat_6to4() (lengths from the
 * quoted header's own, not from what the quote holds), the quoted L4
 * checksum updated as the packet it quotes would have been (a quoted UDP
 * checksum of 0 stays 0), the type and
 * code mapped (those without an equivalent are refused: -EINVAL), the
 * parameter problem pointer mapped (a field without an equivalent is
 * refused), the MTU of fragmentation needed / packet too big adjusted by
 * LB_XLAT_GROWTH (4 -> 6: at least 1280, an MTU of 0 from a pre-RFC 1191
 * router read as the RFC 1191 plateau below the quoted length; 6 -> 4:
 * from at least 1280, at most 65535), the rest of the second word (RFC
 * 4884's length included) zero; the result cut to LB_XLAT_ICMP6_MAX /
 * LB_XLAT_ICMP4_MAX bytes; the ICMP checksum computed afresh (ICMPv6's
 * with its pseudo-header). IPv4 outer headers with options and IPv6 ones
 * with extension headers are refused. @p meta: the family flag, l4_off
 * and l4_proto follow.
 *
 * @return 0; -EINVAL (not such an error, garbage, a bad checksum, no
 *         equivalent in @p ofam); -ENOSPC (4 -> 6: less than 2 *
 *         LB_XLAT_GROWTH bytes of headroom). The packet is unchanged on
 *         an error.
 */
int lb_xlat_icmp(struct rte_mbuf *m, struct pa_pkt_meta *meta, uint8_t ofam,
		const uint8_t *osrc, const uint8_t *odst, const uint8_t *qsrc,
		const uint8_t *qdst, uint16_t qsport, uint16_t qdport,
		uint16_t ip_id);

#endif /* PA_LB_XLAT_H */
