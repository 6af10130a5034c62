/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef PA_LB_PROXY_H
#define PA_LB_PROXY_H

/*
 * The PROXY protocol (haproxy.org's proxy-protocol.txt, versions 1 and 2)
 * for full-NAT TCP services: the header that tells a backend the client's
 * address and port, put before the client's first byte, and the shift of
 * the sequence space that follows from it.
 *
 * The appliance inserts hlen bytes into the client's byte stream at the
 * client's ISN + 1 (isn1). The backend's receive sequence space is
 * therefore the client's shifted by hlen from isn1 on:
 *   client -> backend: seq s >= isn1 (after the insert) becomes s + hlen;
 *   backend -> client: ack a >= isn1 + hlen becomes a - hlen, an ack
 *   inside the header (isn1 < a < isn1 + hlen) becomes isn1, and SACK
 *   blocks alike.
 * The backend's own sequence space is left alone. All comparisons are
 * modulo 2^32 (signed differences), so sequence numbers may wrap.
 *
 * Until the backend acknowledges the whole header, every client segment
 * that starts at isn1 (the handshake's final ACK, the first data segment
 * and its retransmissions, a FIN sent before any data, the client's ACKs
 * while it has sent nothing: server-speaks-first protocols) carries the
 * header again; the backend's TCP trims what it already has. Once the
 * backend has acknowledged it (LB_PROXY_F_ACKED), segments at isn1 are
 * only shifted.
 *
 * The state of a flow is 8 bytes (struct lb_proxy_state), kept in the
 * flow's entry; both directions of a flow are handled on the lcore that
 * owns it, so it needs no lock. The functions allocate nothing, take no
 * lock and never print.
 */

#include <stdint.h>

#include <rte_mbuf.h>

#include "pa_config.h"
#include "pa_pkt.h"

/**
 * The longest header lb_proxy_build() makes: the v1 line of an IPv6
 * client with eight 4-digit groups in both addresses and 5-digit ports,
 * "PROXY TCP6 <39> <39> 65535 65535\r\n", 104 bytes (the spec's 108-byte
 * buffer also holds "UNKNOWN" lines and a NUL, neither of which is sent
 * here). A v2 header is 28 (IPv4) or 52 (IPv6) bytes.
 */
#define LB_PROXY_MAX	104

/** lb_proxy_state.flags: the backend acknowledged the whole header. */
#define LB_PROXY_F_ACKED	0x01
/** lb_proxy_state.flags: the header has been inserted at least once. */
#define LB_PROXY_F_SENT		0x02

/** lb_proxy_to_backend(): the segment needs the header; build it with
 *  lb_proxy_build() and call again with it (nothing was changed). */
#define LB_PROXY_NEED_HDR	1

/**
 * A PROXY flow's state, zeroed when the flow is made, then owned by
 * lb_proxy_to_backend() and lb_proxy_to_client().
 */
struct lb_proxy_state {
	uint32_t isn1;		/**< client's ISN + 1, host order: where the
				 *   header goes */
	uint8_t hlen;		/**< header length; 0: no SYN seen (the flow
				 *   is left alone) */
	uint8_t flags;		/**< LB_PROXY_F_* */
	uint16_t pad;
};

_Static_assert(sizeof(struct lb_proxy_state) == 8,
	"lb_proxy_state fits a flow entry's 8 bytes");

/**
 * Build the PROXY header of a TCP connection from the client
 * (@p src, @p sport) to the address it connected to (@p dst, @p dport):
 * v1 "PROXY TCP4 a b p q\r\n" / "PROXY TCP6 ..." (IPv4 in dotted decimal,
 * IPv6 in RFC 5952 text: lower case, no leading zeros, the longest run of
 * two or more zero groups as "::", never dotted) or v2 (signature,
 * version 2 command PROXY 0x21, TCP over IPv4 0x11 or over IPv6 0x21,
 * address block length, addresses, ports; no TLVs).
 *
 * @param buf     at least LB_PROXY_MAX bytes
 * @param v       PA_LB_PROXY_V1 or PA_LB_PROXY_V2
 * @param family  4 or 6: the client's (and @p dst's) family
 * @param src     the client's address (4 or 16 bytes, network order)
 * @param dst     the address it connected to (the VIP)
 * @param sport   the client's port, network order
 * @param dport   the VIP's port, network order
 * @return the header's length (1..LB_PROXY_MAX), or 0 for
 *         PA_LB_PROXY_NONE, another version or a family other than 4
 *         and 6 (nothing written).
 */
unsigned int lb_proxy_build(uint8_t *buf, enum pa_lb_proxy v, uint8_t family,
		const uint8_t *src, const uint8_t *dst, uint16_t sport,
		uint16_t dport);

/**
 * A client -> backend TCP segment of a PROXY flow, after the full-NAT
 * rewrite (addresses and ports final, checksums valid; @p meta describes
 * it: l3_off, l4_off, flags PA_PKT_F_IPV4 / PA_PKT_F_IPV6, the TCP header
 * in the first segment).
 *
 * - A SYN (re)starts the flow's state: isn1 = seq + 1, hlen, flags 0; its
 *   seq is left alone (a SYN carrying data, TCP Fast Open, gets the
 *   header before its data).
 * - A segment at isn1 while the backend has not acknowledged the header
 *   gets the header inserted before its payload (seq unchanged): the
 *   handshake's final ACK, the first data segment, their retransmissions,
 *   a FIN. After the acknowledgement it gets seq += hlen instead.
 * - A RST at isn1 gets seq += hlen once the header was sent (the backend
 *   most likely has it), never the header.
 * - A later segment (seq after isn1: data, FIN, RST, ACK) gets seq += hlen;
 *   an earlier one (keepalive or window probe at isn1 - 1) is left alone.
 * - Nothing is done before a SYN was seen (hlen 0), nor to a packet that
 *   is not TCP or is a later IP fragment.
 *
 * Checksums (full ones, in the packet: not a TX offload's pseudo-header
 * sum) stay as valid as they were: the shift is incremental; the
 * insert updates the IPv4 total length and header checksum or the IPv6
 * payload length, and the TCP checksum from the inserted bytes and the
 * length (the payload is summed only when hlen is odd), so a segment that
 * arrived corrupted stays detectably corrupted. The inserted bytes are
 * made room for by moving the rest of the first segment up by hlen within
 * it (its tailroom); data_len and pkt_len grow by hlen and Ethernet
 * padding after the IP packet is dropped (single-segment mbufs).
 *
 * @param ps    the flow's state
 * @param m     the segment (may be a chain: later segments are not moved)
 * @param meta  its metadata (unchanged: offsets stay valid)
 * @param hdr   the header (lb_proxy_build()), or NULL: when the segment
 *              needs it (a SYN, or a segment at isn1 before the
 *              acknowledgement) nothing is done and LB_PROXY_NEED_HDR is
 *              returned. The caller builds it only then.
 * @param hlen  its length (at a SYN: sets the flow's; later: must equal it)
 * @param mtu   the output port's MTU (largest IP packet); 0: no check
 * @return 0 (done, or nothing to do); LB_PROXY_NEED_HDR; -EINVAL for a
 *         header length of 0, above LB_PROXY_MAX or not the flow's;
 *         -ENOSPC when the insert does not fit the first segment's
 *         tailroom, the mbuf is not direct, or the segment is an IP
 *         fragment; -EMSGSIZE when the insert would take the IP packet
 *         past @p mtu or 65535 bytes. On every error the packet is
 *         unchanged (the caller drops and counts it; the client
 *         retransmits).
 */
int lb_proxy_to_backend(struct lb_proxy_state *ps, struct rte_mbuf *m,
		const struct pa_pkt_meta *meta, const uint8_t *hdr,
		unsigned int hlen, uint32_t mtu);

/**
 * A backend -> client TCP segment of a PROXY flow, after the reverse
 * rewrite: an ack after isn1 is lowered by hlen (an ack inside the header
 * becomes isn1) and SACK blocks (option kind 5) likewise, a block that
 * falls inside the header being removed (the option shortened, NOPs
 * after it; none left: the option becomes NOPs); an ack of the whole
 * header sets LB_PROXY_F_ACKED; a SYN-ACK's MSS option is lowered by
 * hlen (not below 64) so that the client's first segment plus the header
 * fits the backend's MSS. Options are parsed as far as they are well
 * formed (NOP, EOL, lengths within the header); the rest is left alone.
 * Incremental checksum. Nothing is done before a SYN was seen, nor to a
 * packet that is not TCP, is a later IP fragment or whose TCP header is
 * not in the first segment.
 */
void lb_proxy_to_client(struct lb_proxy_state *ps, struct rte_mbuf *m,
		const struct pa_pkt_meta *meta);

#endif /* PA_LB_PROXY_H */
