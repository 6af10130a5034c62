/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ICMP for VIPs and the TCP MSS clamp: the message builders and the
 * quote parser the lb stage calls out of line (only for ICMP to a VIP,
 * packets too big for the tunnel and SYNs of clamped services), so that
 * ordinary TCP/UDP packets never come here. Every function works in
 * place on a parsed packet: nothing is allocated.
 */
#include <errno.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

#include "lb_priv.h"

#define ICMP4_ECHO_REPLY	0
#define ICMP4_UNREACH		3
#define ICMP4_FRAG_NEEDED	4	/* its code */
#define ICMP4_ECHO		8
#define ICMP4_TIME_EXCEEDED	11
#define ICMP4_PARAM_PROBLEM	12
#define ICMP6_UNREACH		1
#define ICMP6_TOO_BIG		2
#define ICMP6_TIME_EXCEEDED	3
#define ICMP6_PARAM_PROBLEM	4
#define ICMP6_ECHO		128
#define ICMP6_ECHO_REPLY	129
#define ICMP6_MIN_MTU		1280
#define ICMP_HDR_LEN		8
#define REPLY_TTL		64

static uint16_t
get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* End of the IP datagram (frame offset); the parser checked it is
 * within the frame. */
static uint32_t
ip_end(const struct rte_mbuf *m, const struct pa_pkt_meta *meta)
{
	const uint8_t *l3 = rte_pktmbuf_mtod_offset(m, const uint8_t *,
		meta->l3_off);

	if (meta->flags & PA_PKT_F_IPV4)
		return meta->l3_off + (uint32_t)get16(l3 + 2);
	return meta->l3_off + 40u + get16(l3 + 4);
}

enum lb_icmp_kind
lb_icmp_kind(const struct rte_mbuf *m, const struct pa_pkt_meta *meta)
{
	const uint8_t *icmp;

	if (rte_pktmbuf_data_len(m) < meta->l4_off + 4u)
		return LB_ICMP_OTHER;
	icmp = rte_pktmbuf_mtod_offset(m, const uint8_t *, meta->l4_off);
	if ((meta->flags & PA_PKT_F_IPV4) && meta->l4_proto == IPPROTO_ICMP) {
		if (icmp[0] == ICMP4_ECHO && icmp[1] == 0)
			return LB_ICMP_ECHO;
		if (icmp[0] == ICMP4_UNREACH ||
		    icmp[0] == ICMP4_TIME_EXCEEDED ||
		    icmp[0] == ICMP4_PARAM_PROBLEM)
			return LB_ICMP_ERROR;
	} else if ((meta->flags & PA_PKT_F_IPV6) &&
		   meta->l4_proto == IPPROTO_ICMPV6) {
		if (icmp[0] == ICMP6_ECHO && icmp[1] == 0)
			return LB_ICMP_ECHO;
		if (icmp[0] >= ICMP6_UNREACH && icmp[0] <= ICMP6_PARAM_PROBLEM)
			return LB_ICMP_ERROR;
	}
	return LB_ICMP_OTHER;
}

int
lb_icmp_quote_parse(const struct rte_mbuf *m, const struct pa_pkt_meta *meta,
		struct lb_icmp_quote *q)
{
	const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *), *ip;
	uint32_t end = ip_end(m, meta), off = meta->l4_off + ICMP_HDR_LEN;
	uint32_t ihl, len, l4;

	memset(q, 0, sizeof(*q));
	if (end > rte_pktmbuf_data_len(m) || end < off)
		return -EINVAL;
	ip = p + off;
	if (meta->flags & PA_PKT_F_IPV4) {
		if (end - off < 20 || (ip[0] >> 4) != 4)
			return -EINVAL;
		ihl = (ip[0] & 0xfu) * 4;
		len = get16(ip + 2);
		/* a header shorter than 20 bytes, longer than the datagram it
		 * heads, or whose 8 bytes of L4 the quote does not hold */
		if (ihl < 20 || len < ihl + 8 || end - off < ihl + 8)
			return -EINVAL;
		/* a later fragment carries no ports */
		if (get16(ip + 6) & RTE_IPV4_HDR_OFFSET_MASK)
			return -EINVAL;
		q->family = 4;
		q->proto = ip[9];
		q->src = ip + 12;
		q->dst = ip + 16;
		l4 = off + ihl;
		q->l4_len = (uint16_t)RTE_MIN(end - l4, len - ihl);
	} else {
		if (end - off < 40 + 8 || (ip[0] >> 4) != 6)
			return -EINVAL;
		len = get16(ip + 4);
		if (len < 8)
			return -EINVAL;
		/* extension headers in a quote are not followed */
		q->family = 6;
		q->proto = ip[6];
		q->src = ip + 8;
		q->dst = ip + 24;
		l4 = off + 40;
		q->l4_len = (uint16_t)RTE_MIN(end - l4, len);
	}
	if (q->proto != IPPROTO_TCP && q->proto != IPPROTO_UDP)
		return -EINVAL;
	if (q->proto == IPPROTO_UDP && get16(p + l4 + 4) < 8)
		return -EINVAL;
	q->ip_off = (uint16_t)off;
	q->l4_off = (uint16_t)l4;
	memcpy(&q->sport, p + l4, 2);
	memcpy(&q->dport, p + l4 + 2, 2);
	/* the hash the parser gave the error (the same checks, and more:
	 * it takes every quote this function takes) */
	if (pa_pkt_hash_quote(ip, end - off, q->family == 6, &q->hash) != 0)
		return -EINVAL;
	return 0;
}

/* Reply MACs: back to the sender, from @p mac (else the address the
 * frame was sent to). */
static void
swap_macs(struct rte_ether_hdr *eth, const struct rte_ether_addr *mac)
{
	struct rte_ether_addr d = eth->dst_addr;

	eth->dst_addr = eth->src_addr;
	eth->src_addr = mac != NULL ? *mac : d;
}

/* Change the 16-bit word at @p w (2-byte aligned in its checksummed
 * area) to @p nw and fix the checksum at @p sum. */
static void
word_set(uint8_t *w, const uint8_t nw[2], uint8_t *sum)
{
	uint16_t o, n, s;

	memcpy(&o, w, 2);
	memcpy(&n, nw, 2);
	memcpy(&s, sum, 2);
	s = lb_csum_finish(s, lb_csum_add_diff(0, &o, &n, 2));
	memcpy(sum, &s, 2);
	memcpy(w, nw, 2);
}

void
lb_icmp_echo_reply(struct rte_mbuf *m, const struct pa_pkt_meta *meta,
		const struct rte_ether_addr *mac)
{
	uint8_t *l3 = rte_pktmbuf_mtod_offset(m, uint8_t *, meta->l3_off);
	uint8_t *icmp = rte_pktmbuf_mtod_offset(m, uint8_t *, meta->l4_off);
	uint8_t a[16], w[2];

	swap_macs(rte_pktmbuf_mtod(m, struct rte_ether_hdr *), mac);
	if (meta->flags & PA_PKT_F_IPV4) {
		/* swapped addresses leave both sums alone */
		memcpy(a, l3 + 12, 4);
		memcpy(l3 + 12, l3 + 16, 4);
		memcpy(l3 + 16, a, 4);
		w[0] = REPLY_TTL;
		w[1] = l3[9];
		word_set(l3 + 8, w, l3 + 10);
		w[0] = ICMP4_ECHO_REPLY;
	} else {
		memcpy(a, l3 + 8, 16);
		memcpy(l3 + 8, l3 + 24, 16);
		memcpy(l3 + 24, a, 16);
		l3[7] = REPLY_TTL;
		w[0] = ICMP6_ECHO_REPLY;
	}
	w[1] = icmp[1];
	word_set(icmp, w, icmp + 2);
}

/* The ICMPv6 checksum of the message at @p l4 (@p len bytes, in the
 * first segment) under the IPv6 header @p ip6. */
static uint16_t
icmp6_csum(const uint8_t *ip6, const uint8_t *l4, uint32_t len)
{
	uint32_t s = 0, be_len = rte_cpu_to_be_32(len);
	uint8_t nh[4] = { 0, 0, 0, IPPROTO_ICMPV6 };
	uint16_t r;

	s = __rte_raw_cksum(ip6 + 8, 32, s);
	s = __rte_raw_cksum(&be_len, 4, s);
	s = __rte_raw_cksum(nh, 4, s);
	s = __rte_raw_cksum(l4, len, s);
	r = __rte_raw_cksum_reduce(s);
	return (uint16_t)~r;
}

static uint16_t
icmp4_csum(const uint8_t *l4, uint32_t len)
{
	return (uint16_t)~rte_raw_cksum(l4, len);
}

int
lb_icmp_too_big(struct rte_mbuf *m, struct pa_pkt_meta *meta, uint32_t mtu,
		const struct rte_ether_addr *mac)
{
	const uint16_t l2 = meta->l3_off;
	const bool v4 = (meta->flags & PA_PKT_F_IPV4) != 0;
	const unsigned int iph = v4 ? 20 : 40, hlen = iph + ICMP_HDR_LEN;
	const uint8_t *in;
	uint32_t ilen, qlen;
	uint8_t *frame, *out, *icmp;

	if (!rte_pktmbuf_is_contiguous(m) || rte_pktmbuf_headroom(m) < hlen)
		return -ENOSPC;
	in = rte_pktmbuf_mtod_offset(m, const uint8_t *, l2);
	ilen = v4 ? get16(in + 2) : 40u + get16(in + 4);
	qlen = RTE_MIN(ilen, (v4 ? LB_ICMP4_MAX : LB_ICMP6_MAX) - hlen);
	/* the quote, and nothing after it (rest, Ethernet padding) */
	if (rte_pktmbuf_trim(m, (uint16_t)(rte_pktmbuf_pkt_len(m) -
			(l2 + qlen))) != 0)
		return -ENOSPC;
	frame = (uint8_t *)rte_pktmbuf_prepend(m, (uint16_t)hlen);
	if (frame == NULL)
		return -ENOSPC;
	memmove(frame, frame + hlen, l2);
	swap_macs((struct rte_ether_hdr *)frame, mac);
	out = frame + l2;
	in = out + hlen;
	icmp = out + iph;
	memset(out, 0, hlen);
	if (v4) {
		out[0] = 0x45;
		out[2] = (uint8_t)((hlen + qlen) >> 8);
		out[3] = (uint8_t)(hlen + qlen);
		out[8] = REPLY_TTL;
		out[9] = IPPROTO_ICMP;
		memcpy(out + 12, in + 16, 4);	/* from the VIP */
		memcpy(out + 16, in + 12, 4);	/* to the client */
		((struct rte_ipv4_hdr *)out)->hdr_checksum =
			rte_ipv4_cksum((const struct rte_ipv4_hdr *)out);
		icmp[0] = ICMP4_UNREACH;
		icmp[1] = ICMP4_FRAG_NEEDED;
		mtu = RTE_MIN(mtu, 0xffffu);
		icmp[6] = (uint8_t)(mtu >> 8);
		icmp[7] = (uint8_t)mtu;
		*(uint16_t *)(icmp + 2) = icmp4_csum(icmp, ICMP_HDR_LEN + qlen);
	} else {
		out[0] = 0x60;
		out[4] = (uint8_t)((ICMP_HDR_LEN + qlen) >> 8);
		out[5] = (uint8_t)(ICMP_HDR_LEN + qlen);
		out[6] = IPPROTO_ICMPV6;
		out[7] = REPLY_TTL;
		memcpy(out + 8, in + 24, 16);
		memcpy(out + 24, in + 8, 16);
		icmp[0] = ICMP6_TOO_BIG;
		mtu = RTE_MAX(mtu, (uint32_t)ICMP6_MIN_MTU);
		icmp[4] = (uint8_t)(mtu >> 24);
		icmp[5] = (uint8_t)(mtu >> 16);
		icmp[6] = (uint8_t)(mtu >> 8);
		icmp[7] = (uint8_t)mtu;
		*(uint16_t *)(icmp + 2) = icmp6_csum(out, icmp,
			ICMP_HDR_LEN + qlen);
	}
	meta->flags &= PA_PKT_F_IPV4 | PA_PKT_F_IPV6 | PA_PKT_F_VLAN |
		PA_PKT_F_QINQ;
	meta->flags |= PA_PKT_F_L4;
	meta->l4_off = (uint16_t)(l2 + iph);
	meta->l4_proto = v4 ? IPPROTO_ICMP : IPPROTO_ICMPV6;
	meta->sport = 0;
	meta->dport = 0;
	return 0;
}

void
lb_icmp_nat(struct rte_mbuf *m, const struct pa_pkt_meta *meta,
		const struct lb_icmp_quote *q, const uint8_t *addr,
		uint16_t port)
{
	uint8_t *p = rte_pktmbuf_mtod(m, uint8_t *);
	uint8_t *l3 = p + meta->l3_off, *icmp = p + meta->l4_off;
	uint8_t *qip = p + q->ip_off, *ql4 = p + q->l4_off;
	uint8_t *qsrc = p + (q->src - (const uint8_t *)p);
	const unsigned int alen = q->family == 4 ? 4 : 16;
	uint32_t d, len = ip_end(m, meta) - meta->l4_off;
	uint16_t sum;
	unsigned int off;

	/* outer destination: the backend */
	if (q->family == 4) {
		d = lb_csum_add_diff(0, l3 + 16, addr, 4);
		memcpy(&sum, l3 + 10, 2);
		sum = lb_csum_finish(sum, d);
		memcpy(l3 + 10, &sum, 2);
		memcpy(l3 + 16, addr, 4);
	} else {
		memcpy(l3 + 24, addr, 16);
	}
	/* the quoted source: as the backend sent it */
	d = lb_csum_add_diff(0, qsrc, addr, alen);
	if (q->family == 4) {
		memcpy(&sum, qip + 10, 2);
		sum = lb_csum_finish(sum, d);
		memcpy(qip + 10, &sum, 2);
	}
	d = lb_csum_add_diff(d, ql4, &port, 2);
	off = q->proto == IPPROTO_TCP ? 16 : 6;
	if (q->l4_len >= off + 2) {
		memcpy(&sum, ql4 + off, 2);
		/* IPv4 UDP without checksum stays without */
		if (!(q->proto == IPPROTO_UDP && q->family == 4 && sum == 0)) {
			sum = lb_csum_finish(sum, d);
			if (sum == 0 && q->proto == IPPROTO_UDP)
				sum = 0xffff;
			memcpy(ql4 + off, &sum, 2);
		}
	}
	memcpy(qsrc, addr, alen);
	memcpy(ql4, &port, 2);
	/* the message changed in several places: sum it afresh */
	icmp[2] = 0;
	icmp[3] = 0;
	sum = q->family == 4 ? icmp4_csum(icmp, len) : icmp6_csum(l3, icmp, len);
	memcpy(icmp + 2, &sum, 2);
}

bool
lb_mss_clamp(uint8_t *tcp, uint32_t len, uint16_t clamp)
{
	uint32_t doff = (tcp[12] >> 4) * 4u, i = 20, v, start, n;
	uint16_t o[2], w[2], sum;
	uint8_t olen;

	if (doff > len)
		return false;
	while (i < doff) {
		if (tcp[i] == 0)			/* end of options */
			break;
		if (tcp[i] == 1) {			/* no-operation */
			i++;
			continue;
		}
		if (i + 1 >= doff)
			break;
		olen = tcp[i + 1];
		if (olen < 2 || i + olen > doff)
			break;
		if (tcp[i] == 2 && olen == 4) {
			if (get16(tcp + i + 2) <= clamp)
				return false;
			/* the checksum's words are 2-byte aligned from the
			 * header's start: an MSS at an odd offset straddles
			 * two of them (within the header: doff is even) */
			v = i + 2;
			start = v & ~1u;
			n = (v & 1) ? 4 : 2;
			memcpy(o, tcp + start, n);
			tcp[v] = (uint8_t)(clamp >> 8);
			tcp[v + 1] = (uint8_t)clamp;
			memcpy(w, tcp + start, n);
			memcpy(&sum, tcp + 16, 2);
			sum = lb_csum_finish(sum, lb_csum_add_diff(0, o, w, n));
			memcpy(tcp + 16, &sum, 2);
			return true;
		}
		i += olen;
	}
	return false;
}
