/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef PA_PKT_INLINE_H
#define PA_PKT_INLINE_H

/**
 * @file
 * Hot-path inlines of the packet parser. Include pa_pkt.h, not this file.
 *
 * Two parsers, one contract
 * -------------------------
 * pa_pkt_parse() is a straight-line fast path for the common packets: an
 * untagged Ethernet frame carrying IPv4 without options, not fragmented,
 * or IPv6 without extension headers, with a well-formed TCP or UDP header
 * in the first segment. Everything else (VLAN tags, IPv4 options and
 * fragments, IPv6 extension headers, ICMP, SCTP, other protocols, non-IP,
 * every error) is handed to pa_pkt_parse_full(), the
 * general parser (lib/pkt/pkt.c), which starts over from the Ethernet
 * header. Both produce the same result and the same metadata for any input;
 * the unit tests check this on mutated frames.
 *
 * What the parser reads, and SEGMENT
 * ----------------------------------
 * It reads the Ethernet header, the VLAN tags, the IP header (IPv4 options
 * and IPv6 extension headers included, whole) and the fixed part of the L4
 * header: 20 bytes of TCP (not its options), 8 of UDP, 12 of SCTP, 4 of
 * ICMP/ICMPv6. It never reads a byte at or past @p seg_len, and bytes at or
 * past @p pkt_len never affect the result (a @p seg_len larger than
 * @p pkt_len counts as @p pkt_len). A header that
 * ends past @p seg_len but within the frame gives PA_PKT_ERR_SEGMENT; one
 * that ends past the frame (or, for L4 and extension headers, past the IP
 * length) gives the error of its layer. pa_pkt_parse_mbuf() answers SEGMENT
 * by gathering the first PA_PKT_HDR_MAX bytes of the chain on the stack and
 * parsing them again (pa_pkt_parse_gather()); headers longer than that can
 * only come from an IPv6 extension chain and give PA_PKT_ERR_EXT. After a
 * gathered parse the L4 header may lie in a further segment: read it with
 * rte_pktmbuf_read() (pa_pkt_flow_key() does).
 *
 * Checks, in the order they are made
 * ----------------------------------
 * - Ethernet: fewer than 14 bytes: RUNT. Tags 0x8100, 0x88a8 and 0x9100
 *   are VLAN tags, any order; a third tag or a tag cut short: ERR_VLAN.
 *   Ethertype 0x0800 is IPv4, 0x86DD IPv6, anything else is a non-IP frame
 *   (OK, PA_PKT_F_NON_IP, l3_off at the payload, hashed on the two MAC
 *   addresses).
 * - IPv4: fewer than 20 bytes: L3_TRUNC; version not 4: L3_VERSION;
 *   IHL < 5, IHL * 4 > total length, or IHL * 4 bytes not in the frame:
 *   L3_HDRLEN; total length beyond the frame: L3_LEN (bytes after the
 *   datagram are Ethernet padding and are ignored). MF or a non-zero
 *   offset sets PA_PKT_F_FRAG, a non-zero offset also PA_PKT_F_FRAG_LATER.
 * - IPv6: fewer than 40 bytes: L3_TRUNC; version not 6: L3_VERSION;
 *   payload length beyond the frame: L3_LEN. Jumbograms (payload length 0
 *   followed by a hop-by-hop header) are not supported: L3_LEN. Extension
 *   headers followed: hop-by-hop (0), routing (43), destination options
 *   (60) of (len + 1) * 8 bytes, fragment (44) of 8 bytes, AH (51) of
 *   (len + 2) * 4 bytes; ESP (50), no-next-header (59) and anything else end
 *   the chain. More than PA_PKT_MAX_EXT_HDRS of them, or one that runs past
 *   the payload length: ERR_EXT. Any of them sets PA_PKT_F_IPV6_EXT. A
 *   fragment header with M set or a non-zero offset sets PA_PKT_F_FRAG; a
 *   non-zero offset also PA_PKT_F_FRAG_LATER and ends the chain there
 *   (l4_proto is the fragment header's next header). An atomic fragment
 *   (offset 0, M clear) is not a fragment.
 * - L4 (not for later fragments), bounded by the IP length: TCP needs 20
 *   bytes (L4_TRUNC) and 5 <= data offset, data offset * 4 <= IP payload
 *   (L4_LEN); UDP needs 8 bytes (L4_TRUNC) and 8 <= length <= IP payload
 *   (L4_LEN; a first fragment only needs length >= 8, as its datagram goes
 *   on in the later fragments); SCTP needs 12 bytes, ICMP (IPv4, 1) and
 *   ICMPv6 (IPv6, 58) 4 bytes (L4_TRUNC). These set PA_PKT_F_L4; TCP, UDP
 *   and SCTP give ports. Other protocols: no L4 flag, no ports, OK.
 * - The quote of an ICMP error (IPv4 types 3, 11, 12; ICMPv6 1 to 4; not
 *   in a fragment), for the flow hash only: its IP header and 8 bytes
 *   after the 8-byte ICMP header, when they lie within the IP length and
 *   the first PA_PKT_HDR_MAX bytes of the frame; past @p seg_len they
 *   give SEGMENT like any header. A quote cut short, beyond
 *   PA_PKT_HDR_MAX, or one pa_pkt_hash_quote() refuses is no error: the
 *   packet keeps its own hash.
 *
 * On success every field but out_port and the rx timestamp is written; l4_off is
 * where the IP payload starts (after extension headers) even when
 * PA_PKT_F_L4 is clear, and 0 for non-IP frames. On error the metadata is
 * partly written and meaningless.
 *
 * The flow hash
 * -------------
 * Symmetric by ordering, not by mixing: the two endpoints, each an
 * (address, port) pair, are put in a canonical order (lower first) and the
 * ordered tuple goes through CRC32-C (the SSE4.2 crc32 instruction, the
 * hash DPDK's rte_hash uses). IPv4: two 64-bit CRC steps over
 * (low address << 16 | its port) and (high address << 16 | its port |
 * protocol << 56), about 6 cycles of latency; a cheaper sum or XOR of the
 * endpoints would be symmetric too but makes every pair (a, b), (c, d)
 * with a ^ b == c ^ d collide. IPv6: two independent CRC chains over the
 * ordered addresses (the high one seeded with the protocol) joined by a
 * third step with the ordered ports. Non-IP: the two MAC addresses,
 * ordered. Fragments (PA_PKT_F_FRAG) hash with ports zero, so all
 * fragments of a datagram (which carry ports in the first only) hash
 * alike; for IPv6 fragments the protocol hashed is the fragment header's
 * next header, the same in every fragment. An ICMP error with a usable
 * quote takes the quoted packet's hash (pa_pkt_hash_quote()): the quote
 * is a packet of the flow the error is about, in either direction, so
 * the error reaches that flow's lcores (the lb stage's flow table is per
 * lcore). Only the general parser sees ICMP: TCP and UDP pay nothing.
 * CRC is linear over GF(2): fine
 * to spread flows over rings and buckets (any bits of it), not a defence
 * against chosen collisions. The value is the same on every x86-64 build
 * (the software CRC32-C fallback of rte_hash_crc.h gives the same bits).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <rte_branch_prediction.h>
#include <rte_byteorder.h>
#include <rte_common.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_tcp.h>
#include <rte_udp.h>

#if defined(RTE_ARCH_X86_64) && defined(__SSE4_2__)
#include <nmmintrin.h>
#define PA_PKT_CRC_HW 1
#else
#include <rte_hash_crc.h>
#endif

#include "pa_pkt.h"

/** Seed of the flow hash. */
#define PA_PKT_HASH_SEED	0x5bd1e995u

/**
 * General parser: same contract as pa_pkt_parse(), every case handled,
 * out of line. pa_pkt_parse() calls it for all but the common case.
 */
int pa_pkt_parse_full(const uint8_t *data, uint32_t seg_len, uint32_t pkt_len,
		struct pa_pkt_meta *meta);

/**
 * Parse a chained mbuf whose headers cross its first segment: gathers the
 * first PA_PKT_HDR_MAX bytes on the stack and parses them. Called by
 * pa_pkt_parse_mbuf(); fills @p meta, never returns PA_PKT_ERR_SEGMENT
 * (headers longer than PA_PKT_HDR_MAX give PA_PKT_ERR_EXT).
 */
int pa_pkt_parse_gather(const struct rte_mbuf *m, struct pa_pkt_meta *meta);

/** One CRC32-C step over 8 bytes. */
static __rte_always_inline uint32_t
pa_pkt_crc64(uint64_t v, uint32_t init)
{
#ifdef PA_PKT_CRC_HW
	return (uint32_t)_mm_crc32_u64(init, v);
#else
	return rte_hash_crc_8byte(v, init);
#endif
}

/**
 * Symmetric IPv4 flow hash, as the parser computes it.
 *
 * @param src, dst  addresses as read from the header (network order)
 * @param ports     source port << 16 | destination port, host order;
 *                  0 for fragments and port-less protocols
 * @param proto     IP protocol
 */
static __rte_always_inline uint32_t
pa_pkt_hash_v4(uint32_t src, uint32_t dst, uint32_t ports, uint8_t proto)
{
	uint64_t a = (uint64_t)src << 16 | (ports >> 16);
	uint64_t b = (uint64_t)dst << 16 | (ports & 0xffff);
	uint64_t lo = a < b ? a : b;
	uint64_t hi = a < b ? b : a;

	return pa_pkt_crc64(hi | (uint64_t)proto << 56,
			pa_pkt_crc64(lo, PA_PKT_HASH_SEED));
}

/**
 * Symmetric IPv6 flow hash, as the parser computes it.
 *
 * @param src, dst  16-byte addresses as in the header
 * @param ports     as for pa_pkt_hash_v4()
 * @param proto     the protocol (for fragments, the fragment header's
 *                  next header)
 */
static __rte_always_inline uint32_t
pa_pkt_hash_v6(const uint8_t *src, const uint8_t *dst, uint32_t ports,
		uint8_t proto)
{
	uint64_t s0, s1, d0, d1;
	uint32_t sp = ports >> 16, dp = ports & 0xffff;
	uint32_t lo, hi, p;
	int s_first;

	memcpy(&s0, src, 8);
	memcpy(&s1, src + 8, 8);
	memcpy(&d0, dst, 8);
	memcpy(&d1, dst + 8, 8);
	if (s0 != d0)
		s_first = s0 < d0;
	else if (s1 != d1)
		s_first = s1 < d1;
	else
		s_first = sp <= dp;
	if (s_first) {
		lo = pa_pkt_crc64(s1, pa_pkt_crc64(s0, PA_PKT_HASH_SEED));
		hi = pa_pkt_crc64(d1, pa_pkt_crc64(d0, proto));
		p = sp << 16 | dp;
	} else {
		lo = pa_pkt_crc64(d1, pa_pkt_crc64(d0, PA_PKT_HASH_SEED));
		hi = pa_pkt_crc64(s1, pa_pkt_crc64(s0, proto));
		p = dp << 16 | sp;
	}
	return pa_pkt_crc64((uint64_t)hi << 32 | p, lo);
}

/** Symmetric hash of a non-IP frame over its two MAC addresses. */
static __rte_always_inline uint32_t
pa_pkt_hash_mac(const uint8_t *eth)
{
	uint64_t a = 0, b = 0;

	memcpy(&a, eth, RTE_ETHER_ADDR_LEN);
	memcpy(&b, eth + RTE_ETHER_ADDR_LEN, RTE_ETHER_ADDR_LEN);
	return pa_pkt_crc64(a < b ? b : a,
			pa_pkt_crc64(a < b ? a : b, PA_PKT_HASH_SEED));
}

/* Ethernet + IPv4 without options + UDP: the fast path's minimum. */
#define PA_PKT_FAST_L3		RTE_ETHER_HDR_LEN
#define PA_PKT_FAST_L4		(PA_PKT_FAST_L3 + 20)
#define PA_PKT_FAST_MIN		(PA_PKT_FAST_L4 + 8)
#define PA_PKT_FAST_TCP_MIN	(PA_PKT_FAST_L4 + 20)
/* Ethernet + IPv6 without extension headers + UDP: the IPv6 fast path's. */
#define PA_PKT_FAST6_L4		(PA_PKT_FAST_L3 + 40)
#define PA_PKT_FAST6_MIN	(PA_PKT_FAST6_L4 + 8)
#define PA_PKT_FAST6_TCP_MIN	(PA_PKT_FAST6_L4 + 20)

/* Big-endian 16 and 32-bit loads. The compiler's byte swaps, not
 * rte_byteorder.h's inline assembly, so that it can fold them into the
 * load (movbe) and into what follows. */
static __rte_always_inline uint16_t
pa_pkt_rd_be16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
#if RTE_BYTE_ORDER == RTE_LITTLE_ENDIAN
	v = __builtin_bswap16(v);
#endif
	return v;
}

static __rte_always_inline uint32_t
pa_pkt_rd_be32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
#if RTE_BYTE_ORDER == RTE_LITTLE_ENDIAN
	v = __builtin_bswap32(v);
#endif
	return v;
}

/*
 * The L4 checks of the fast paths, the general parser's for a TCP or UDP
 * header that is not in a fragment: @p l4 at the header, @p pl bytes of
 * IP payload (all within pkt_len; negative for an IPv4 total length
 * under 20), @p seg_len at least the UDP header's end. @return false for
 * what the general parser must see; else true, the ports (source << 16 |
 * destination, host order) in @p ports.
 */
static __rte_always_inline bool
pa_pkt_fast_l4(const uint8_t *l4, int32_t pl, uint32_t seg_len,
		uint32_t tcp_min, uint8_t proto, uint32_t *ports)
{
	int32_t ulen, doff;

	/* (8 <= length <= pl and 20 <= data offset <= pl also say that
	 * the IP payload holds the header) */
	if (likely(proto == IPPROTO_UDP)) {
		/* the caller's seg_len check covers the 8 bytes */
		ulen = pa_pkt_rd_be16(l4 + 4);
		if (unlikely(ulen < 8 || ulen > pl))
			return false;
	} else if (likely(proto == IPPROTO_TCP)) {
		if (unlikely(seg_len < tcp_min))
			return false;
		doff = (l4[12] >> 2) & 0x3c;
		if (unlikely(doff < 20 || doff > pl))
			return false;
	} else {
		return false;
	}
	*ports = pa_pkt_rd_be32(l4);
	return true;
}

/* The metadata of a fast path's packet (no VLAN tag, L4 with ports);
 * @p set_out (a constant): its out port @p out too. */
static __rte_always_inline void
pa_pkt_fast_meta(struct pa_pkt_meta *meta, uint16_t flags, uint16_t l4_off,
		uint32_t ports, uint8_t proto, uint16_t out, const bool set_out)
{
	/* l4_proto, and vlan_count 0, in one store */
	const uint16_t pv = rte_cpu_to_le_16(proto);

	RTE_BUILD_BUG_ON(offsetof(struct pa_pkt_meta, vlan_count) !=
		offsetof(struct pa_pkt_meta, l4_proto) + 1);
#if RTE_BYTE_ORDER == RTE_LITTLE_ENDIAN
	if (set_out) {
		/* flags, l3_off, l4_off and out_port: one store of what is
		 * the same for every packet of a path and burst */
		const uint64_t w = flags |
			(uint64_t)PA_PKT_FAST_L3 << 16 |
			(uint64_t)l4_off << 32 | (uint64_t)out << 48;

		RTE_BUILD_BUG_ON(offsetof(struct pa_pkt_meta, l3_off) !=
			offsetof(struct pa_pkt_meta, flags) + 2 ||
			offsetof(struct pa_pkt_meta, l4_off) !=
			offsetof(struct pa_pkt_meta, flags) + 4 ||
			offsetof(struct pa_pkt_meta, out_port) !=
			offsetof(struct pa_pkt_meta, flags) + 6);
		memcpy((uint8_t *)meta + offsetof(struct pa_pkt_meta, flags),
			&w, sizeof(w));
	} else
#endif
	{
		meta->flags = flags;
		meta->l3_off = PA_PKT_FAST_L3;
		meta->l4_off = l4_off;
		if (set_out)
			meta->out_port = out;
	}
#if RTE_BYTE_ORDER == RTE_LITTLE_ENDIAN
	{
		/* sport and dport (adjacent) in one store */
		const uint32_t sd = ports >> 16 | ports << 16;

		RTE_BUILD_BUG_ON(offsetof(struct pa_pkt_meta, dport) !=
			offsetof(struct pa_pkt_meta, sport) + 2);
		memcpy(&meta->sport, &sd, sizeof(sd));
	}
#else
	meta->sport = ports >> 16;
	meta->dport = ports & 0xffff;
#endif
	memcpy((uint8_t *)meta + offsetof(struct pa_pkt_meta, l4_proto), &pv,
		sizeof(pv));
}

/* @p et4: the 4 bytes at an untagged frame's ethertype, as loaded. Are
 * they IPv4's ethertype and a version/IHL of 0x45 (the fourth byte, the
 * ToS, whatever it is)? */
static __rte_always_inline bool
pa_pkt_et4_is_v4_45(uint32_t et4)
{
#if RTE_BYTE_ORDER == RTE_LITTLE_ENDIAN
	return (et4 & 0xffffff) ==
		((uint32_t)0x45 << 16 | RTE_BE16(RTE_ETHER_TYPE_IPV4));
#else
	return (et4 >> 8) == ((uint32_t)RTE_ETHER_TYPE_IPV4 << 8 | 0x45);
#endif
}

/* pa_pkt_parse_try(); @p set_out (a constant): write @p out into the
 * metadata's out port too, whatever the result (the rx loop's store,
 * merged with the fast path's own). */
static __rte_always_inline unsigned int
pa_pkt_parse_try_out(const uint8_t *data, uint32_t seg_len, uint32_t pkt_len,
		struct pa_pkt_meta *meta, uint16_t out, const bool set_out,
		const bool hash)
{
	const uint8_t *l3 = data + PA_PKT_FAST_L3;
	uint32_t tot, ports, et4;
	uint16_t etype, f;
	int32_t pl;
	uint8_t proto;

	if (unlikely(seg_len < PA_PKT_FAST_MIN))
		goto other;
	/* IPv4 without options: the ethertype and the version/IHL byte
	 * in one compare (a load, a mask; the ethertype alone is loaded
	 * again below, off the IPv4 path, so that GCC keeps no copy) */
	memcpy(&et4, data + 2 * RTE_ETHER_ADDR_LEN, sizeof(et4));
	if (likely(pa_pkt_et4_is_v4_45(et4))) {
		const struct rte_ipv4_hdr *ip =
			(const struct rte_ipv4_hdr *)l3;

		tot = pa_pkt_rd_be16(l3 + 2);
		/* two tests: as one, GCC loaded the fragment field into a
		 * register first (a move more) */
		if (unlikely(tot + PA_PKT_FAST_L3 > pkt_len))
			goto other;
		if (unlikely((ip->fragment_offset &
				RTE_BE16(RTE_IPV4_HDR_MF_FLAG |
					RTE_IPV4_HDR_OFFSET_MASK)) != 0))
			goto other;
		/* pl: bytes of IP payload, all of them within pkt_len; a
		 * total length under 20 makes it negative, and the L4
		 * checks fail */
		pl = (int32_t)tot - 20;
		proto = ip->next_proto_id;
		if (unlikely(!pa_pkt_fast_l4(data + PA_PKT_FAST_L4, pl,
				seg_len, PA_PKT_FAST_TCP_MIN, proto, &ports)))
			goto other;
		f = PA_PKT_F_IPV4 | PA_PKT_F_L4;
		if (hash)
			meta->hash = pa_pkt_hash_v4(ip->src_addr, ip->dst_addr,
				ports, proto);
		else
			f |= PA_PKT_F_HASH_LATER;
		pa_pkt_fast_meta(meta, f, PA_PKT_FAST_L4, ports, proto, out,
			set_out);
		return f;
	}
	memcpy(&etype, data + 2 * RTE_ETHER_ADDR_LEN, sizeof(etype));
	if (etype == RTE_BE16(RTE_ETHER_TYPE_IPV6)) {
		/* version 6, the payload within the frame; a next header
		 * of TCP or UDP is no extension header and no jumbogram */
		if (unlikely(seg_len < PA_PKT_FAST6_MIN || (l3[0] >> 4) != 6))
			goto other;
		pl = pa_pkt_rd_be16(l3 + 4);
		if (unlikely((uint32_t)pl + PA_PKT_FAST6_L4 > pkt_len))
			goto other;
		proto = l3[6];
		if (unlikely(!pa_pkt_fast_l4(data + PA_PKT_FAST6_L4, pl,
				seg_len, PA_PKT_FAST6_TCP_MIN, proto, &ports)))
			goto other;
		f = PA_PKT_F_IPV6 | PA_PKT_F_L4;
		if (hash)
			meta->hash = pa_pkt_hash_v6(l3 + 8, l3 + 24, ports,
				proto);
		else
			f |= PA_PKT_F_HASH_LATER;
		pa_pkt_fast_meta(meta, f, PA_PKT_FAST6_L4, ports, proto, out,
			set_out);
		return f;
	}
other:
	if (set_out)
		meta->out_port = out;
	return 0;
}

/* The fast path alone: @return the packet's flags when it is one of the
 * fast path's packets (its metadata written as pa_pkt_parse() or, @p hash
 * false, pa_pkt_parse_nohash() writes it), else 0 and the metadata
 * untouched: the general parser's. @p hash: compute the flow hash, else
 * leave it for pa_pkt_hash_later() (PA_PKT_F_HASH_LATER); a constant at
 * every call. Two common packets: untagged IPv4 without options, not
 * fragmented, TCP or UDP; untagged IPv6 without extension headers, TCP or
 * UDP. */
static __rte_always_inline unsigned int
pa_pkt_parse_try(const uint8_t *data, uint32_t seg_len, uint32_t pkt_len,
		struct pa_pkt_meta *meta, const bool hash)
{
	return pa_pkt_parse_try_out(data, seg_len, pkt_len, meta, 0, false,
		hash);
}

/* The fast path, else the general parser. */
static __rte_always_inline int
pa_pkt_parse_fast(const uint8_t *data, uint32_t seg_len, uint32_t pkt_len,
		struct pa_pkt_meta *meta, const bool hash)
{
	if (likely(pa_pkt_parse_try(data, seg_len, pkt_len, meta, hash) != 0))
		return PA_PKT_OK;
	return pa_pkt_parse_full(data, seg_len, pkt_len, meta);
}

static __rte_always_inline int
pa_pkt_parse(const uint8_t *data, uint32_t seg_len, uint32_t pkt_len,
		struct pa_pkt_meta *meta)
{
	return pa_pkt_parse_fast(data, seg_len, pkt_len, meta, true);
}

static __rte_always_inline int
pa_pkt_parse_mbuf(struct rte_mbuf *m)
{
	struct pa_pkt_meta *meta = pa_pkt_meta(m);
	int ret;

	ret = pa_pkt_parse(rte_pktmbuf_mtod(m, const uint8_t *),
			rte_pktmbuf_data_len(m), rte_pktmbuf_pkt_len(m), meta);
	if (unlikely(ret == PA_PKT_ERR_SEGMENT))
		ret = pa_pkt_parse_gather(m, meta);
	return ret;
}

static __rte_always_inline int
pa_pkt_parse_mbuf_nohash(struct rte_mbuf *m)
{
	struct pa_pkt_meta *meta = pa_pkt_meta(m);
	int ret;

	ret = pa_pkt_parse_nohash(rte_pktmbuf_mtod(m, const uint8_t *),
			rte_pktmbuf_data_len(m), rte_pktmbuf_pkt_len(m), meta);
	if (unlikely(ret == PA_PKT_ERR_SEGMENT))
		ret = pa_pkt_parse_gather(m, meta);
	return ret;
}

static __rte_always_inline int
pa_pkt_parse_nohash(const uint8_t *data, uint32_t seg_len, uint32_t pkt_len,
		struct pa_pkt_meta *meta)
{
	return pa_pkt_parse_fast(data, seg_len, pkt_len, meta, false);
}

static __rte_always_inline void
pa_pkt_hash_later(const uint8_t *data, struct pa_pkt_meta *meta)
{
	const uint8_t *l3 = data + PA_PKT_FAST_L3;
	const uint32_t ports = (uint32_t)meta->sport << 16 | meta->dport;

	if (likely(!(meta->flags & PA_PKT_F_HASH_LATER)))
		return;
	/* a fast path's packet: IPv4 or IPv6 at PA_PKT_FAST_L3, its
	 * header in the first segment */
	if (likely(meta->flags & PA_PKT_F_IPV4)) {
		const struct rte_ipv4_hdr *ip =
			(const struct rte_ipv4_hdr *)l3;

		meta->hash = pa_pkt_hash_v4(ip->src_addr, ip->dst_addr, ports,
			meta->l4_proto);
	} else {
		meta->hash = pa_pkt_hash_v6(l3 + 8, l3 + 24, ports,
			meta->l4_proto);
	}
	meta->flags &= (uint16_t)~PA_PKT_F_HASH_LATER;
}

#endif /* PA_PKT_INLINE_H */
