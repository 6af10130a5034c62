/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef PA_PKT_H
#define PA_PKT_H

/**
 * @file
 * Per-packet metadata, filled once by the rx stage's parser and read by
 * every later stage.
 *
 * The metadata lives in an mbuf dynamic field (second cache line of the
 * mbuf, which the PMD has just written, so reading it costs no miss). It
 * does not copy the addresses: it records where the L3 and L4 headers
 * are, the L4 protocol and ports, and a symmetric flow hash. Stages that
 * need the full 5-tuple build it with pa_pkt_flow_key().
 */

#include <stdint.h>

#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>
#include <rte_prefetch.h>

/** Packet flags (pa_pkt_meta.flags). */
#define PA_PKT_F_IPV4		(1u << 0)  /**< L3 is IPv4 */
#define PA_PKT_F_IPV6		(1u << 1)  /**< L3 is IPv6 */
#define PA_PKT_F_NON_IP		(1u << 2)  /**< neither IPv4 nor IPv6 */
#define PA_PKT_F_VLAN		(1u << 3)  /**< at least one VLAN tag */
#define PA_PKT_F_QINQ		(1u << 4)  /**< two VLAN tags */
#define PA_PKT_F_FRAG		(1u << 5)  /**< an IP fragment (any) */
#define PA_PKT_F_FRAG_LATER	(1u << 6)  /**< a non-first fragment: no L4 */
#define PA_PKT_F_L4		(1u << 7)  /**< L4 header present and parsed */
#define PA_PKT_F_IPV6_EXT	(1u << 8)  /**< IPv6 extension headers seen */
/** Set by the rx stage (not the parser) on a unicast IP packet a routed
 * port takes for transit; cleared when the LB sets its MACs. What still
 * has it after the lb stage is routed: TTL / hop limit decremented, sent
 * to the out port's gateway (lib/pipeline stages.c). */
#define PA_PKT_F_ROUTE		(1u << 9)
/** An ICMP error whose hash is its quote's (pa_pkt_hash_quote()): the
 * quoted IP header is at l4_off + 8, within the first PA_PKT_HDR_MAX
 * bytes, and holds a TCP, UDP or SCTP header's ports. */
#define PA_PKT_F_QUOTE		(1u << 10)
/** The hash is not computed yet: pa_pkt_parse_nohash() leaves it to
 * pa_pkt_hash_later(), which computes it and clears the flag. Only the
 * fast path's packets (untagged IPv4 without options or IPv6 without
 * extension headers, TCP or UDP, not fragmented) have it. */
#define PA_PKT_F_HASH_LATER	(1u << 11)

/** Most VLAN tags parsed (802.1Q inside 802.1ad). More is malformed. */
#define PA_PKT_MAX_VLAN		2
/** Most IPv6 extension headers followed. More is malformed. */
#define PA_PKT_MAX_EXT_HDRS	8
/** Bytes of headers that pa_pkt_parse_mbuf() gathers from a chain. */
#define PA_PKT_HDR_MAX		512

/** Parser results: 0 or one of these (negative). */
enum pa_pkt_err {
	PA_PKT_OK = 0,
	PA_PKT_ERR_RUNT = -1,		/**< shorter than an Ethernet header */
	PA_PKT_ERR_VLAN = -2,		/**< truncated or too many VLAN tags */
	PA_PKT_ERR_L3_TRUNC = -3,	/**< IP header cut short */
	PA_PKT_ERR_L3_VERSION = -4,	/**< version field disagrees with ethertype */
	PA_PKT_ERR_L3_HDRLEN = -5,	/**< IPv4 IHL < 5 or beyond total length */
	PA_PKT_ERR_L3_LEN = -6,		/**< IP length beyond the frame */
	PA_PKT_ERR_EXT = -7,		/**< IPv6 extension chain bad or too long */
	PA_PKT_ERR_L4_TRUNC = -8,	/**< L4 header cut short */
	PA_PKT_ERR_L4_LEN = -9,		/**< TCP data offset / UDP length bad */
	PA_PKT_ERR_SEGMENT = -10,	/**< headers continue in a further segment */
};

/**
 * Parsed view of a packet. Offsets are from the start of the frame
 * (rte_pktmbuf_mtod()). Ports are in host byte order; zero when the packet
 * has no ports (ICMP, other protocols, non-first fragments).
 */
struct pa_pkt_meta {
	uint32_t hash;		/**< symmetric flow hash (see pa_pkt_parse) */
	uint16_t flags;		/**< PA_PKT_F_* */
	uint16_t l3_off;	/**< offset of the IPv4/IPv6 header */
	uint16_t l4_off;	/**< offset of the L4 header (PA_PKT_F_L4) */
	uint16_t out_port;	/**< ethdev port to transmit on */
	uint16_t sport;		/**< L4 source port, host order */
	uint16_t dport;		/**< L4 destination port, host order */
	uint8_t l4_proto;	/**< IP protocol of the payload (after ext hdrs) */
	uint8_t vlan_count;	/**< VLAN tags in front of L3 */
	uint16_t rx_tsc_hi;	/**< rx timestamp, bits 32..47 (pa_pkt_rx_tsc()) */
	uint32_t rx_tsc_lo;	/**< rx timestamp, bits 0..31 */
};

/*
 * The rx timestamp: the TSC when the packet's burst was received, kept in
 * 48 bits so that the metadata stays 24 bytes (with a PMD's 8-byte rx
 * timestamp dynfield it still fits the mbuf's dynfield area). 2^48 TSC
 * cycles are more than 24 hours at 3 GHz; differences are taken modulo
 * 2^48 (pa_pkt_tsc_since()). Written by the rx stage only when latency
 * measurement is on; not written by the parser.
 */
#define PA_PKT_TSC_MASK	((UINT64_C(1) << 48) - 1)

static inline void
pa_pkt_rx_tsc_set(struct pa_pkt_meta *meta, uint64_t tsc)
{
	meta->rx_tsc_lo = (uint32_t)tsc;
	meta->rx_tsc_hi = (uint16_t)(tsc >> 32);
}

/** The rx timestamp (48 bits). */
static inline uint64_t
pa_pkt_rx_tsc(const struct pa_pkt_meta *meta)
{
	return (uint64_t)meta->rx_tsc_hi << 32 | meta->rx_tsc_lo;
}

/** TSC cycles from @p stamp (48 or 64 bits) to @p now, modulo 2^48. */
static inline uint64_t
pa_pkt_tsc_since(uint64_t now, uint64_t stamp)
{
	return (now - stamp) & PA_PKT_TSC_MASK;
}

/** 5-tuple in network byte order, built on demand from the metadata. */
struct pa_flow_key {
	uint8_t family;		/**< 4 or 6; 0 for non-IP */
	uint8_t proto;
	uint16_t sport;		/**< network order */
	uint16_t dport;		/**< network order */
	union {
		struct { uint32_t src, dst; } v4;
		struct { uint8_t src[16], dst[16]; } v6;
	};
};

/** Offset of the metadata dynfield; valid after pa_pkt_init(). */
extern int pa_pkt_meta_offset;

/**
 * Register the metadata dynfield. Call once after rte_eal_init().
 * @return 0, or -errno.
 */
int pa_pkt_init(void);

static inline struct pa_pkt_meta *
pa_pkt_meta(struct rte_mbuf *m)
{
	return RTE_MBUF_DYNFIELD(m, pa_pkt_meta_offset, struct pa_pkt_meta *);
}

/**
 * Prefetch a burst's mbuf headers: each mbuf's first line (data_off,
 * lengths) and its metadata's line, all at once so that their transfers
 * overlap (a burst written on another CPU: a ring hop in pipeline mode).
 */
static __rte_always_inline void
pa_pkt_prefetch_hdrs(struct rte_mbuf **pkts, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		rte_prefetch0(pkts[i]);
		rte_prefetch0(pa_pkt_meta(pkts[i]));
	}
}

/**
 * Prefetch a burst's frames' first lines (the headers the stages read and
 * write), whose addresses need the mbufs' first lines.
 */
static __rte_always_inline void
pa_pkt_prefetch_data(struct rte_mbuf **pkts, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		rte_prefetch0(rte_pktmbuf_mtod(pkts[i], void *));
}

/**
 * Parse a frame.
 *
 * @param data     first byte of the Ethernet header
 * @param seg_len  bytes readable at @p data (first segment)
 * @param pkt_len  length of the whole frame (all segments)
 * @param meta     filled on success (hash, flags, offsets, ports, proto);
 *                 out_port is left untouched
 * @return PA_PKT_OK, or a negative enum pa_pkt_err. Non-IP frames are
 *         PA_PKT_OK with PA_PKT_F_NON_IP. PA_PKT_ERR_SEGMENT means the
 *         headers continue past @p seg_len: gather them and call again.
 *
 * The flow hash is symmetric: both directions of a flow hash the same.
 * It covers addresses, protocol and ports; for fragments (first or not)
 * it covers addresses and protocol only, so all fragments of a datagram
 * hash alike. Non-IP frames hash on their MAC addresses. An ICMP error
 * whose quote pa_pkt_hash_quote() accepts hashes as the quoted packet
 * does, so it reaches the lcores of the flow it is about.
 */
static inline int pa_pkt_parse(const uint8_t *data, uint32_t seg_len,
		uint32_t pkt_len, struct pa_pkt_meta *meta);

/**
 * The flow hash of the packet an ICMP error quotes: the hash its flow's
 * own packets have (symmetric: the quote may be of either direction).
 *
 * @param ip   the quoted IP header (the ICMP / ICMPv6 error's body)
 * @param len  bytes of the quote readable at @p ip (within the error)
 * @param v6   0: an ICMP quote of IPv4, else an ICMPv6 quote of IPv6
 * @param hash set on success
 * @return 0, or -EINVAL for a quote that does not name a flow: shorter
 *         than its IP header plus 8 bytes, of the wrong version, an IPv4
 *         IHL under 5, a quoted length under header + 8, a later IPv4
 *         fragment, IPv6 extension headers, a protocol other than TCP,
 *         UDP and SCTP. Reads nothing past the header and 8 bytes.
 *
 * The parser (for the rx stage's dispatch) and the lb stage (for its
 * flow table and Maglev choice) both use it, so they agree.
 */
int pa_pkt_hash_quote(const uint8_t *ip, uint32_t len, int v6,
		uint32_t *hash);

/**
 * Parse an mbuf (chains included) into its dynfield metadata.
 * @return as pa_pkt_parse(), never PA_PKT_ERR_SEGMENT.
 */
static inline int pa_pkt_parse_mbuf(struct rte_mbuf *m);

/**
 * pa_pkt_parse() without the flow hash of the common packets (the fast
 * path's: untagged IPv4 without options or IPv6 without extension
 * headers, TCP or UDP, not fragmented): it sets PA_PKT_F_HASH_LATER
 * instead, and meta->hash is undefined until pa_pkt_hash_later(). For a
 * stage that may need no hash at all (the rx stage of an lcore that also
 * runs the lb stage and TX: the hash is for the LB and for dispatching
 * to rings). Every other packet is parsed and hashed as by
 * pa_pkt_parse(). Same results; after pa_pkt_hash_later(), the same
 * metadata.
 */
static inline int pa_pkt_parse_nohash(const uint8_t *data, uint32_t seg_len,
		uint32_t pkt_len, struct pa_pkt_meta *meta);

/**
 * The fast path alone, for a loop over a burst that leaves the rest for
 * a second pass: the common packets (untagged IPv4 without options, not
 * fragmented, or IPv6 without extension headers; TCP or UDP; the headers
 * in the first segment) are parsed as pa_pkt_parse() (@p hash true) or
 * pa_pkt_parse_nohash() (false) parses them, and their flags returned;
 * for every other frame it returns 0 and leaves @p meta untouched: parse
 * it with pa_pkt_parse_full() (pa_pkt_parse_gather() on SEGMENT). Never
 * calls out of line. @p hash must be a constant.
 */
static inline unsigned int pa_pkt_parse_try(const uint8_t *data,
		uint32_t seg_len, uint32_t pkt_len, struct pa_pkt_meta *meta,
		const bool hash);

/** pa_pkt_parse_mbuf() with pa_pkt_parse_nohash(). */
static inline int pa_pkt_parse_mbuf_nohash(struct rte_mbuf *m);

/**
 * The flow hash of a packet pa_pkt_parse_nohash() parsed, if it left it
 * for later (PA_PKT_F_HASH_LATER): computed from the frame at @p data
 * (its first segment), which must not have changed its addresses or
 * ports since; the flag cleared. The hash pa_pkt_parse() gives.
 */
static inline void pa_pkt_hash_later(const uint8_t *data,
		struct pa_pkt_meta *meta);

/**
 * Build the 5-tuple of a parsed packet.
 * @return 0, or -EINVAL for a non-IP packet (key->family = 0).
 */
int pa_pkt_flow_key(const struct rte_mbuf *m, const struct pa_pkt_meta *meta,
		struct pa_flow_key *key);

/** Same, from a contiguous frame (used by tests and trace_packet). */
int pa_pkt_flow_key_raw(const uint8_t *data, const struct pa_pkt_meta *meta,
		struct pa_flow_key *key);

#include "pa_pkt_inline.h"

#endif /* PA_PKT_H */
