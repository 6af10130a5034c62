/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Frame builder for the unit suites: Ethernet frames built header by
 * header into a byte array, the way the suites feed lib/pkt, lib/acl,
 * lib/lb and lib/neigh. One copy for every suite (it used to be three).
 *
 * A frame is started by pa_test_frame_l2() (which clears it), headers are
 * appended in wire order, and pa_test_frame_fix() fills the length fields
 * (and, on request, the checksums) from what was built. Every field a
 * suite cares about is a parameter: the builder has no addresses, MACs,
 * TTLs or payload patterns of its own, so each suite keeps its own
 * conventions in a few short wrappers.
 *
 * Multi-byte values are given in host order and written in network order.
 * Addresses are byte arrays in network order. A frame that would grow past
 * PA_TEST_FRAME_MAX fails the running check test.
 */

#ifndef PA_TEST_FRAME_H
#define PA_TEST_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** Largest frame the builder holds, in bytes. */
#define PA_TEST_FRAME_MAX	4096

/** pa_test_frame_fix(): also write the IPv4 header checksum. */
#define PA_TEST_FIX_IP4_CSUM	0x1u
/** pa_test_frame_fix(): also write the TCP/UDP checksum (not of fragments,
 *  nor of an IPv4 UDP datagram marked udp_no_csum). */
#define PA_TEST_FIX_L4_CSUM	0x2u

struct pa_test_frame {
	uint8_t b[PA_TEST_FRAME_MAX];	/**< the bytes, from the MAC header */
	uint32_t len;		/**< bytes built so far */
	int l3;			/**< offset of the IP header, -1: none */
	int l4;			/**< offset of the L4 header, -1: none */
	int ver;		/**< IP version: 4, 6, or 0 (none) */
	uint8_t l4_proto;	/**< next header after the last IP/extension header */
	bool frag;		/**< an IP fragment (set by the IPv4 frag field or a
				 *   fragment header): no L4 checksum */
	bool udp_no_csum;	/**< IPv4 UDP sent with checksum 0 (set by hand) */
};

/** @p v at @p p, network order. */
static inline void
pa_test_put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/** @p v at @p p, network order. */
static inline void
pa_test_put32(uint8_t *p, uint32_t v)
{
	pa_test_put16(p, (uint16_t)(v >> 16));
	pa_test_put16(p + 2, (uint16_t)v);
}

/** The network-order 16-bit value at @p p. */
static inline uint16_t
pa_test_get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/** Append @p n zero bytes; @return where they start. */
/** A copy of @p s (JSON as test sources write it, in single quotes) with
 * its single quotes made double; the caller frees it. */
char *pa_test_dq(const char *s);

uint8_t *pa_test_frame_grow(struct pa_test_frame *f, uint32_t n);

/**
 * Start @p f: clear it, then the MAC header @p dst, @p src, @p ntags VLAN
 * tags (tag i has TPID @p tpids[i] and TCI @p tci + i) and @p etype.
 */
void pa_test_frame_l2(struct pa_test_frame *f, const uint8_t dst[6],
		const uint8_t src[6], unsigned int ntags, const uint16_t *tpids,
		uint16_t tci, uint16_t etype);

/**
 * IPv4 header. @p ihl: header length in 32-bit words, 5 or more (options
 * are bytes of 1, NOPs); below 5 the version/IHL byte says @p ihl but 20
 * bytes are built (for malformed-header tests). @p frag: the raw
 * flags/fragment-offset field. Total length and checksum: 0 until
 * pa_test_frame_fix().
 */
void pa_test_frame_ipv4(struct pa_test_frame *f, const uint8_t src[4],
		const uint8_t dst[4], uint8_t proto, uint8_t tos, unsigned int ihl,
		uint16_t frag, uint16_t id, uint8_t ttl);

/**
 * The quote of an ICMP error, after pa_test_frame_icmp(): an IP header of
 * version @p ver (4: 20 bytes; 6: 40), protocol @p proto, from @p src to
 * @p dst, total length 1500, followed by 8 bytes of its payload (zeros).
 * The frame's own L3/L4 offsets stay the outer ones.
 */
void pa_test_frame_quote(struct pa_test_frame *f, int ver, uint8_t proto,
		const uint8_t *src, const uint8_t *dst);

/** IPv6 header: traffic class @p tc, flow label @p flow (20 bits). */
void pa_test_frame_ipv6(struct pa_test_frame *f, const uint8_t src[16],
		const uint8_t dst[16], uint8_t nh, uint8_t tc, uint32_t flow,
		uint8_t hlim);

/** IPv6 extension header @p type of @p len bytes (a multiple of 8, or of
 *  4 for AH), next header @p nh. */
void pa_test_frame_ext(struct pa_test_frame *f, uint8_t type, uint8_t nh,
		unsigned int len);

/** IPv6 fragment header: @p offset in 8-byte units, @p more the M flag. */
void pa_test_frame_frag6(struct pa_test_frame *f, uint8_t nh,
		uint16_t offset, bool more, uint32_t ident);

/** TCP header: @p doff in 32-bit words (below 5: 20 bytes built, the
 *  field says @p doff), @p flags the flag byte. */
void pa_test_frame_tcp(struct pa_test_frame *f, uint16_t sport,
		uint16_t dport, unsigned int doff, uint8_t flags, uint32_t seq,
		uint16_t window);

/** UDP header (length: pa_test_frame_fix()). */
void pa_test_frame_udp(struct pa_test_frame *f, uint16_t sport,
		uint16_t dport);

/** SCTP common header (12 bytes, checksum 0). */
void pa_test_frame_sctp(struct pa_test_frame *f, uint16_t sport,
		uint16_t dport);

/** ICMP or ICMPv6 header of @p type, code 0, identifier @p ident. */
void pa_test_frame_icmp(struct pa_test_frame *f, uint8_t type,
		uint16_t ident);

/** @p n bytes of payload, byte i being @p seed + i * @p step. */
void pa_test_frame_payload(struct pa_test_frame *f, unsigned int n,
		uint8_t seed, uint8_t step);

/** @p n bytes of payload made of 16-bit words @p word (an odd last byte
 *  is 0). */
void pa_test_frame_payload16(struct pa_test_frame *f, unsigned int n,
		uint16_t word);

/**
 * Fill the IP total (IPv4) or payload (IPv6) length and the UDP length
 * from what was built; with @p flags (PA_TEST_FIX_*) the checksums too.
 * Call it before pa_test_frame_pad().
 */
void pa_test_frame_fix(struct pa_test_frame *f, unsigned int flags);

/** Ethernet padding (zeros) up to @p total bytes. */
void pa_test_frame_pad(struct pa_test_frame *f, uint32_t total);

/** Overwrite the L4 ports. */
void pa_test_frame_set_ports(struct pa_test_frame *f, uint16_t sport,
		uint16_t dport);

/** Ones' complement sum of @p n bytes at @p p added to @p s (not folded). */
uint32_t pa_test_sum16(const uint8_t *p, size_t n, uint32_t s);

/** @p s folded to 16 bits and complemented: a checksum. */
uint16_t pa_test_csum_fold(uint32_t s);

/** The IPv4 header checksum of the header at @p l3, computed afresh. */
uint16_t pa_test_ip4_csum(const uint8_t *l3);

/**
 * The TCP/UDP checksum of the packet at @p l3 (no IPv6 extension headers;
 * lengths from the IP header), computed afresh over the pseudo-header and
 * the whole segment; a UDP checksum of 0 is sent as 0xffff.
 */
uint16_t pa_test_l4_csum(const uint8_t *l3);

#endif /* PA_TEST_FRAME_H */
