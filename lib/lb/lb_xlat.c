/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * IPv4 <-> IPv6 translation for full NAT (lb_xlat.h): RFC 7915's header
 * and ICMP rules, in place. Checksums are updated incrementally (RFC
 * 1624) where the old one covers the same bytes, and computed afresh
 * only for what has no old one (IPv4 UDP without checksum, the IPv4
 * headers built here, ICMP messages whose types and lengths changed).
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

#include "lb_csum.h"
#include "lb_xlat.h"

#define IP4_HDR		20
#define IP6_HDR		40
#define ICMP_HDR	8
#define IP4_DF		0x4000
#define IP4_MF_OFF	0x3fff		/* MF and the fragment offset */
#define IP6_MIN_MTU	1280

#define ICMP4_UNREACH		3
#define ICMP4_TIME_EXCEEDED	11
#define ICMP4_PARAM_PROBLEM	12
#define ICMP6_UNREACH		1
#define ICMP6_TOO_BIG		2
#define ICMP6_TIME_EXCEEDED	3
#define ICMP6_PARAM_PROBLEM	4

static uint16_t
get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t
get32(const uint8_t *p)
{
	return (uint32_t)get16(p) << 16 | get16(p + 2);
}

static void
put16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void
put32(uint8_t *p, uint32_t v)
{
	put16(p, v >> 16);
	put16(p + 2, v);
}

/* ------------------------------------------------------------------ */
/* Checksums                                                           */
/* ------------------------------------------------------------------ */

/* The one's complement sum of @p len bytes (an odd last byte padded
 * with zero), folded to 16 bits, in memory order. */
static uint16_t
sum16(const void *p, unsigned int len)
{
	return __rte_raw_cksum_reduce(__rte_raw_cksum(p, len, 0));
}

/* RFC 1624 eqn. 3: a checksum's difference accumulates ~m + m' for every
 * field m that becomes m'; fields may differ in length (the addresses of
 * a pseudo-header across families). */
static uint32_t
diff_sub(uint32_t d, const void *old, unsigned int len)
{
	return d + (uint16_t)~sum16(old, len);
}

static uint32_t
diff_add(uint32_t d, const void *new, unsigned int len)
{
	return d + sum16(new, len);
}

/* The IPv4 header checksum of the 20 bytes at @p ip, written there. */
static void
ip4_csum_set(uint8_t *ip)
{
	uint16_t sum;

	ip[10] = 0;
	ip[11] = 0;
	sum = (uint16_t)~sum16(ip, IP4_HDR);
	memcpy(ip + 10, &sum, 2);
}

/* Where a TCP/UDP header keeps its checksum. */
static unsigned int
l4_csum_off(uint8_t proto)
{
	return proto == IPPROTO_TCP ? 16 : 6;
}

/* Update the checksum of the TCP/UDP header at @p l4 (@p avail bytes of
 * it present: a quote may stop before the checksum, or in it) for the
 * pseudo-header difference @p d and new ports @p ports (4 bytes, network
 * order), and write the ports. A UDP checksum of 0 means none (IPv4, and
 * IPv6 tunnels, RFC 6935) and stays so. */
static void
l4_update(uint8_t *l4, uint32_t avail, uint8_t proto, uint32_t d,
		const uint8_t ports[4])
{
	unsigned int off = l4_csum_off(proto);
	uint16_t sum;

	d = diff_sub(d, l4, 4);
	d = diff_add(d, ports, 4);
	if (avail >= off + 2) {
		memcpy(&sum, l4 + off, 2);
		if (!(proto == IPPROTO_UDP && sum == 0)) {
			lb_csum_apply(l4 + off, d);
			memcpy(&sum, l4 + off, 2);
			if (proto == IPPROTO_UDP && sum == 0)
				memset(l4 + off, 0xff, 2);
		}
	}
	memcpy(l4, ports, 4);
}

static void
ports_of(uint8_t ports[4], uint16_t sport, uint16_t dport)
{
	memcpy(ports, &sport, 2);
	memcpy(ports + 2, &dport, 2);
}

/* ------------------------------------------------------------------ */
/* Frame surgery                                                       */
/* ------------------------------------------------------------------ */

/* Remove what follows the IP datagram ending at frame offset @p end
 * (Ethernet padding). @return 0, or -EINVAL when the frame is shorter
 * or the tail cannot be cut (it spans segments). */
static int
cut_after(struct rte_mbuf *m, uint32_t end)
{
	uint32_t len = rte_pktmbuf_pkt_len(m);

	if (end > len)
		return -EINVAL;
	if (end == len)
		return 0;
	if (len - end > rte_pktmbuf_data_len(rte_pktmbuf_lastseg(m)))
		return -EINVAL;
	return rte_pktmbuf_trim(m, (uint16_t)(len - end)) == 0 ? 0 : -EINVAL;
}

/* Grow the header area before frame offset @p l3 by @p n bytes: the L2
 * header (and its tags) moves to the new front, its last ethertype
 * becomes @p etype. @return the new frame. The caller checked the
 * headroom. */
static uint8_t *
grow(struct rte_mbuf *m, uint16_t l3, uint16_t n, uint16_t etype)
{
	uint8_t *frame = (uint8_t *)rte_pktmbuf_prepend(m, n);

	memmove(frame, frame + n, l3);
	put16(frame + l3 - 2, etype);
	return frame;
}

/* Shrink it by @p n bytes. */
static uint8_t *
shrink(struct rte_mbuf *m, uint16_t l3, uint16_t n, uint16_t etype)
{
	uint8_t *frame = rte_pktmbuf_mtod(m, uint8_t *);

	memmove(frame + n, frame, l3);
	frame = (uint8_t *)rte_pktmbuf_adj(m, n);
	put16(frame + l3 - 2, etype);
	return frame;
}

/* An IPv6 header from the fields of an IPv4 one. */
static void
ip6_build(uint8_t *ip6, uint8_t tos, uint16_t plen, uint8_t nh,
		uint8_t hlim, const uint8_t *src, const uint8_t *dst)
{
	ip6[0] = (uint8_t)(0x60 | tos >> 4);
	ip6[1] = (uint8_t)(tos << 4);
	ip6[2] = 0;
	ip6[3] = 0;
	put16(ip6 + 4, plen);
	ip6[6] = nh;
	ip6[7] = hlim;
	memcpy(ip6 + 8, src, 16);
	memcpy(ip6 + 24, dst, 16);
}

/* An IPv4 header (checksum included) from the fields of an IPv6 one. */
static void
ip4_build(uint8_t *ip4, uint8_t tos, uint16_t tlen, uint16_t id,
		uint8_t ttl, uint8_t proto, const uint8_t *src,
		const uint8_t *dst)
{
	ip4[0] = 0x45;
	ip4[1] = tos;
	put16(ip4 + 2, tlen);
	memcpy(ip4 + 4, &id, 2);
	put16(ip4 + 6, tlen > LB_XLAT_DF_MAX ? IP4_DF : 0);
	ip4[8] = ttl;
	ip4[9] = proto;
	memcpy(ip4 + 12, src, 4);
	memcpy(ip4 + 16, dst, 4);
	ip4_csum_set(ip4);
}

static uint8_t
ip6_tclass(const uint8_t *ip6)
{
	return (uint8_t)((ip6[0] & 0xf) << 4 | ip6[1] >> 4);
}

static void
meta_family(struct pa_pkt_meta *meta, bool to6)
{
	meta->flags &= (uint16_t)~(PA_PKT_F_IPV4 | PA_PKT_F_IPV6);
	meta->flags |= to6 ? PA_PKT_F_IPV6 : PA_PKT_F_IPV4;
	meta->l4_off = (uint16_t)(meta->l3_off + (to6 ? IP6_HDR : IP4_HDR));
}

/* ------------------------------------------------------------------ */
/* TCP and UDP                                                         */
/* ------------------------------------------------------------------ */

static bool
tcp_or_udp(uint8_t proto)
{
	return proto == IPPROTO_TCP || proto == IPPROTO_UDP;
}

static uint32_t
l4_min(uint8_t proto)
{
	return proto == IPPROTO_TCP ? 20 : 8;
}

int
lb_xlat_4to6(struct rte_mbuf *m, struct pa_pkt_meta *meta,
		const uint8_t *src6, const uint8_t *dst6, uint16_t sport,
		uint16_t dport)
{
	const uint16_t l3 = meta->l3_off;
	uint8_t *ip, *l4, ports[4], tos, ttl, proto;
	uint32_t d, s;
	uint16_t tlen, sum;
	bool udp0;

	if ((meta->flags & (PA_PKT_F_IPV4 | PA_PKT_F_L4 | PA_PKT_F_FRAG)) !=
			(PA_PKT_F_IPV4 | PA_PKT_F_L4) ||
	    meta->l4_off != l3 + IP4_HDR || l3 < RTE_ETHER_HDR_LEN ||
	    rte_pktmbuf_data_len(m) < (uint32_t)l3 + IP4_HDR + 8)
		return -EINVAL;
	ip = rte_pktmbuf_mtod_offset(m, uint8_t *, l3);
	proto = ip[9];
	tlen = get16(ip + 2);
	if (ip[0] != 0x45 || (get16(ip + 6) & IP4_MF_OFF) != 0 ||
	    !tcp_or_udp(proto) || tlen < IP4_HDR + l4_min(proto) ||
	    rte_pktmbuf_data_len(m) < (uint32_t)l3 + IP4_HDR + l4_min(proto) ||
	    (uint32_t)l3 + tlen > rte_pktmbuf_pkt_len(m))
		return -EINVAL;
	if (rte_pktmbuf_headroom(m) < LB_XLAT_GROWTH)
		return -ENOSPC;
	if (cut_after(m, (uint32_t)l3 + tlen) != 0)
		return -EINVAL;

	l4 = ip + IP4_HDR;
	memcpy(&sum, l4 + l4_csum_off(proto), 2);
	udp0 = proto == IPPROTO_UDP && sum == 0;
	ports_of(ports, sport, dport);
	/* the pseudo-header's protocol and length words are the same in
	 * both families: only the addresses change */
	d = diff_sub(0, ip + 12, 8);
	d = diff_add(d, src6, 16);
	d = diff_add(d, dst6, 16);
	l4_update(l4, tlen - IP4_HDR, proto, d, ports);
	tos = ip[1];
	ttl = ip[8];

	ip = grow(m, l3, LB_XLAT_GROWTH, RTE_ETHER_TYPE_IPV6) + l3;
	ip6_build(ip, tos, (uint16_t)(tlen - IP4_HDR), proto, ttl, src6, dst6);
	if (udp0) {
		/* IPv6 UDP must have one: the whole datagram's */
		s = rte_ipv6_phdr_cksum((const struct rte_ipv6_hdr *)ip, 0);
		s += lb_csum_mbuf(m, l3 + IP6_HDR, tlen - IP4_HDR);
		s = (s & 0xffff) + (s >> 16);
		s = (s & 0xffff) + (s >> 16);
		sum = (uint16_t)~s;
		if (sum == 0)
			sum = 0xffff;
		memcpy(ip + IP6_HDR + 6, &sum, 2);
	}
	meta_family(meta, true);
	meta->sport = rte_be_to_cpu_16(sport);
	meta->dport = rte_be_to_cpu_16(dport);
	return 0;
}

int
lb_xlat_6to4(struct rte_mbuf *m, struct pa_pkt_meta *meta,
		const uint8_t *src4, const uint8_t *dst4, uint16_t sport,
		uint16_t dport, uint16_t ip_id)
{
	const uint16_t l3 = meta->l3_off;
	uint8_t *ip, ports[4], hdr[IP4_HDR], proto;
	uint16_t plen;
	uint32_t d;

	if ((meta->flags & (PA_PKT_F_IPV6 | PA_PKT_F_L4 | PA_PKT_F_FRAG |
			PA_PKT_F_IPV6_EXT)) != (PA_PKT_F_IPV6 | PA_PKT_F_L4) ||
	    meta->l4_off != l3 + IP6_HDR || l3 < RTE_ETHER_HDR_LEN ||
	    rte_pktmbuf_data_len(m) < (uint32_t)l3 + IP6_HDR + 8)
		return -EINVAL;
	ip = rte_pktmbuf_mtod_offset(m, uint8_t *, l3);
	proto = ip[6];
	plen = get16(ip + 4);
	if ((ip[0] >> 4) != 6 || !tcp_or_udp(proto) ||
	    plen < l4_min(proto) || plen > UINT16_MAX - IP4_HDR ||
	    rte_pktmbuf_data_len(m) < (uint32_t)l3 + IP6_HDR + l4_min(proto) ||
	    (uint32_t)l3 + IP6_HDR + plen > rte_pktmbuf_pkt_len(m))
		return -EINVAL;
	if (cut_after(m, (uint32_t)l3 + IP6_HDR + plen) != 0)
		return -EINVAL;

	ports_of(ports, sport, dport);
	d = diff_sub(0, ip + 8, 32);
	d = diff_add(d, src4, 4);
	d = diff_add(d, dst4, 4);
	l4_update(ip + IP6_HDR, plen, proto, d, ports);
	ip4_build(hdr, ip6_tclass(ip), (uint16_t)(plen + IP4_HDR), ip_id,
		ip[7], proto, src4, dst4);

	ip = shrink(m, l3, LB_XLAT_GROWTH, RTE_ETHER_TYPE_IPV4) + l3;
	memcpy(ip, hdr, IP4_HDR);
	meta_family(meta, false);
	meta->sport = rte_be_to_cpu_16(sport);
	meta->dport = rte_be_to_cpu_16(dport);
	return 0;
}

/* ------------------------------------------------------------------ */
/* ICMP errors                                                         */
/* ------------------------------------------------------------------ */

/* An ICMP error, parsed. Offsets are from the frame. */
struct xicmp {
	bool v4;		/* outer (and quoted) family */
	uint16_t l3, l4;	/* outer IP header, ICMP header */
	uint32_t end;		/* end of the outer datagram */
	uint32_t q;		/* quoted IP header */
	uint32_t qhl;		/* its length */
	uint32_t ql4;		/* quoted L4 header */
	uint8_t qproto;
};

/* The ICMP (IPv4) or ICMPv6 checksum sum of the message at @p icmp
 * (@p len bytes) under the IPv6 header @p ip6 (NULL: ICMPv4), not
 * complemented: 0xffff when the message's own checksum is right. */
static uint16_t
icmp_sum(const uint8_t *ip6, const uint8_t *icmp, uint32_t len)
{
	uint32_t s = __rte_raw_cksum(icmp, len, 0);
	uint8_t ph[8] = { 0 };

	if (ip6 != NULL) {
		put32(ph, len);
		ph[7] = IPPROTO_ICMPV6;
		s = __rte_raw_cksum(ip6 + 8, 32, s);
		s = __rte_raw_cksum(ph, 8, s);
	}
	return __rte_raw_cksum_reduce(s);
}

static void
icmp_csum_set(const uint8_t *ip6, uint8_t *icmp, uint32_t len)
{
	uint16_t sum;

	icmp[2] = 0;
	icmp[3] = 0;
	sum = (uint16_t)~icmp_sum(ip6, icmp, len);
	memcpy(icmp + 2, &sum, 2);
}

static int
icmp_parse(const struct rte_mbuf *m, const struct pa_pkt_meta *meta,
		struct xicmp *x)
{
	const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *), *ip, *q;
	uint32_t avail;
	uint8_t type;

	x->v4 = (meta->flags & PA_PKT_F_IPV4) != 0;
	x->l3 = meta->l3_off;
	x->l4 = meta->l4_off;
	if (!(meta->flags & PA_PKT_F_L4) || (meta->flags & PA_PKT_F_FRAG) ||
	    meta->l4_proto != (x->v4 ? IPPROTO_ICMP : IPPROTO_ICMPV6) ||
	    x->l3 < RTE_ETHER_HDR_LEN ||
	    x->l4 < x->l3 + (x->v4 ? IP4_HDR : IP6_HDR) ||
	    rte_pktmbuf_data_len(m) < (uint32_t)x->l3 + IP6_HDR)
		return -EINVAL;
	ip = p + x->l3;
	x->end = x->v4 ? x->l3 + (uint32_t)get16(ip + 2) :
		x->l3 + IP6_HDR + (uint32_t)get16(ip + 4);
	x->q = x->l4 + ICMP_HDR;
	if (x->end > rte_pktmbuf_data_len(m) || x->end < x->q)
		return -EINVAL;
	type = p[x->l4];
	if (x->v4 ? type != ICMP4_UNREACH && type != ICMP4_TIME_EXCEEDED &&
			type != ICMP4_PARAM_PROBLEM :
		    type < ICMP6_UNREACH || type > ICMP6_PARAM_PROBLEM)
		return -EINVAL;
	if (icmp_sum(x->v4 ? NULL : ip, p + x->l4, x->end - x->l4) != 0xffff)
		return -EINVAL;
	q = p + x->q;
	avail = x->end - x->q;
	if (x->v4) {
		if (avail < IP4_HDR || (q[0] >> 4) != 4)
			return -EINVAL;
		x->qhl = (q[0] & 0xfu) * 4;
		x->qproto = q[9];
		/* a later fragment carries no ports */
		if (x->qhl < IP4_HDR || get16(q + 2) < x->qhl + 8 ||
		    (get16(q + 6) & 0x1fff) != 0)
			return -EINVAL;
	} else {
		if (avail < IP6_HDR || (q[0] >> 4) != 6)
			return -EINVAL;
		x->qhl = IP6_HDR;
		/* extension headers in a quote are not followed */
		x->qproto = q[6];
		if (get16(q + 4) < 8)
			return -EINVAL;
	}
	if (avail < x->qhl + 8 || !tcp_or_udp(x->qproto))
		return -EINVAL;
	x->ql4 = x->q + x->qhl;
	return 0;
}

/* The L4 bytes a quote holds (up to the quoted datagram's end). */
static uint32_t
quote_l4_len(const uint8_t *p, const struct xicmp *x)
{
	const uint8_t *q = p + x->q;
	uint32_t dgram = x->v4 ? get16(q + 2) - x->qhl : get16(q + 4);

	return RTE_MIN(x->end - x->ql4, dgram);
}

static int
icmp_same(struct rte_mbuf *m, const struct xicmp *x, const uint8_t *osrc,
		const uint8_t *odst, const uint8_t *qsrc, const uint8_t *qdst,
		const uint8_t ports[4])
{
	uint8_t *p = rte_pktmbuf_mtod(m, uint8_t *);
	uint8_t *ip = p + x->l3, *q = p + x->q;
	const unsigned int alen = x->v4 ? 4 : 16;
	uint8_t *qa = q + (x->v4 ? 12 : 8);
	uint32_t d;

	if (cut_after(m, x->end) != 0)
		return -EINVAL;
	if (x->v4) {
		d = diff_sub(0, ip + 12, 8);
		d = diff_add(d, osrc, 4);
		d = diff_add(d, odst, 4);
		lb_csum_apply(ip + 10, d);
	}
	memcpy(ip + (x->v4 ? 12 : 8), osrc, alen);
	memcpy(ip + (x->v4 ? 16 : 24), odst, alen);

	d = diff_sub(0, qa, 2 * alen);
	d = diff_add(d, qsrc, alen);
	d = diff_add(d, qdst, alen);
	if (x->v4)
		lb_csum_apply(q + 10, d);
	l4_update(p + x->ql4, quote_l4_len(p, x), x->qproto, d, ports);
	memcpy(qa, qsrc, alen);
	memcpy(qa + alen, qdst, alen);
	icmp_csum_set(x->v4 ? NULL : ip, p + x->l4, x->end - x->l4);
	return 0;
}

/* RFC 1191's plateaus, for an MTU of 0 (a router before RFC 1191). */
static uint32_t
plateau_below(uint32_t len)
{
	static const uint16_t plateau[] = { 65535, 32000, 17914, 8166, 4352,
		2002, 1492, 1006, 508, 296, 68 };
	unsigned int i;

	for (i = 0; i < RTE_DIM(plateau); i++)
		if (plateau[i] < len)
			return plateau[i];
	return 68;
}

/* ICMPv4 type, code and second word -> ICMPv6 (RFC 7915 4.2). @p qlen:
 * the quoted datagram's total length. @return 0 or -EINVAL. */
static int
map_4to6(const uint8_t *in, uint32_t qlen, uint8_t out[8])
{
	/* Figure 3: IPv4 header byte -> IPv6 header byte, 0xff none */
	static const uint8_t ptr46[IP4_HDR] = { 0, 1, 4, 4, 0xff, 0xff,
		0xff, 0xff, 7, 6, 0xff, 0xff, 8, 8, 8, 8, 24, 24, 24, 24 };
	uint32_t mtu;

	memset(out, 0, 8);
	switch (in[0]) {
	case ICMP4_UNREACH:
		switch (in[1]) {
		case 0: case 1: case 5: case 6: case 7: case 8: case 11:
		case 12:
			out[0] = ICMP6_UNREACH;		/* no route */
			return 0;
		case 9: case 10: case 13: case 15:
			out[0] = ICMP6_UNREACH;
			out[1] = 1;			/* prohibited */
			return 0;
		case 3:
			out[0] = ICMP6_UNREACH;
			out[1] = 4;			/* port */
			return 0;
		case 2:					/* protocol */
			out[0] = ICMP6_PARAM_PROBLEM;
			out[1] = 1;			/* next header */
			put32(out + 4, 6);
			return 0;
		case 4:
			out[0] = ICMP6_TOO_BIG;
			mtu = get16(in + 6);
			if (mtu == 0)
				mtu = plateau_below(qlen);
			put32(out + 4, RTE_MAX(mtu + LB_XLAT_GROWTH,
				(uint32_t)IP6_MIN_MTU));
			return 0;
		}
		return -EINVAL;	/* 14, precedence violation, and unknown */
	case ICMP4_TIME_EXCEEDED:
		if (in[1] > 1)
			return -EINVAL;
		out[0] = ICMP6_TIME_EXCEEDED;
		out[1] = in[1];
		return 0;
	case ICMP4_PARAM_PROBLEM:
		/* 0: pointer, 2: bad length; 1 (missing option): none */
		if ((in[1] != 0 && in[1] != 2) || in[4] >= IP4_HDR ||
		    ptr46[in[4]] == 0xff)
			return -EINVAL;
		out[0] = ICMP6_PARAM_PROBLEM;
		put32(out + 4, ptr46[in[4]]);
		return 0;
	}
	return -EINVAL;
}

/* ICMPv6 -> ICMPv4 (RFC 7915 5.2). */
static int
map_6to4(const uint8_t *in, uint8_t out[8])
{
	uint32_t v = get32(in + 4);

	memset(out, 0, 8);
	switch (in[0]) {
	case ICMP6_UNREACH:
		out[0] = ICMP4_UNREACH;
		switch (in[1]) {
		case 0: case 2: case 3:
			out[1] = 1;			/* host */
			return 0;
		case 1:
			out[1] = 10;			/* host prohibited */
			return 0;
		case 4:
			out[1] = 3;			/* port */
			return 0;
		}
		return -EINVAL;
	case ICMP6_TOO_BIG:
		out[0] = ICMP4_UNREACH;
		out[1] = 4;
		/* an IPv6 link is at least 1280: less is not believed */
		v = RTE_MAX(v, (uint32_t)IP6_MIN_MTU) - LB_XLAT_GROWTH;
		put16(out + 6, RTE_MIN(v, (uint32_t)UINT16_MAX));
		return 0;
	case ICMP6_TIME_EXCEEDED:
		if (in[1] > 1)
			return -EINVAL;
		out[0] = ICMP4_TIME_EXCEEDED;
		out[1] = in[1];
		return 0;
	case ICMP6_PARAM_PROBLEM:
		if (in[1] == 1) {		/* unrecognised next header */
			out[0] = ICMP4_UNREACH;
			out[1] = 2;		/* protocol */
			return 0;
		}
		if (in[1] != 0)		/* 2: unrecognised option: none */
			return -EINVAL;
		out[0] = ICMP4_PARAM_PROBLEM;
		/* Figure 6 */
		if (v <= 1)
			out[4] = (uint8_t)v;
		else if (v == 4 || v == 5)
			out[4] = 2;
		else if (v == 6)
			out[4] = 9;
		else if (v == 7)
			out[4] = 8;
		else if (v >= 8 && v < 24)
			out[4] = 12;
		else if (v >= 24 && v < IP6_HDR)
			out[4] = 16;
		else
			return -EINVAL;		/* flow label, beyond */
		return 0;
	}
	return -EINVAL;
}

static int
icmp_4to6(struct rte_mbuf *m, const struct xicmp *x, const uint8_t *osrc,
		const uint8_t *odst, const uint8_t *qsrc, const uint8_t *qdst,
		const uint8_t ports[4])
{
	const uint16_t l3 = x->l3;
	uint8_t *p = rte_pktmbuf_mtod(m, uint8_t *);
	uint8_t *ip = p + l3, *q = p + x->q, head[ICMP_HDR];
	uint8_t tos, ttl, qtos, qttl;
	uint32_t d, len;
	uint16_t qtlen;

	if (x->l4 != l3 + IP4_HDR || ip[0] != 0x45 || x->qhl != IP4_HDR)
		return -EINVAL;
	qtlen = get16(q + 2);
	if (map_4to6(p + x->l4, qtlen, head) != 0)
		return -EINVAL;
	if (rte_pktmbuf_headroom(m) < 2 * LB_XLAT_GROWTH)
		return -ENOSPC;
	if (cut_after(m, x->end) != 0)
		return -EINVAL;

	d = diff_sub(0, q + 12, 8);
	d = diff_add(d, qsrc, 16);
	d = diff_add(d, qdst, 16);
	l4_update(p + x->ql4, quote_l4_len(p, x), x->qproto, d, ports);
	tos = ip[1];
	ttl = ip[8];
	qtos = q[1];
	qttl = q[8];
	/* the message grows by the quoted header's 20 bytes */
	len = x->end - x->l4 + LB_XLAT_GROWTH;

	p = grow(m, l3, 2 * LB_XLAT_GROWTH, RTE_ETHER_TYPE_IPV6);
	ip = p + l3;
	if (IP6_HDR + len > LB_XLAT_ICMP6_MAX) {
		rte_pktmbuf_trim(m, (uint16_t)(IP6_HDR + len -
			LB_XLAT_ICMP6_MAX));
		len = LB_XLAT_ICMP6_MAX - IP6_HDR;
	}
	ip6_build(ip, tos, (uint16_t)len, IPPROTO_ICMPV6, ttl, osrc, odst);
	memcpy(ip + IP6_HDR, head, ICMP_HDR);
	ip6_build(ip + IP6_HDR + ICMP_HDR, qtos, (uint16_t)(qtlen - IP4_HDR),
		x->qproto, qttl, qsrc, qdst);
	icmp_csum_set(ip, ip + IP6_HDR, len);
	return 0;
}

static int
icmp_6to4(struct rte_mbuf *m, const struct xicmp *x, const uint8_t *osrc,
		const uint8_t *odst, const uint8_t *qsrc, const uint8_t *qdst,
		const uint8_t ports[4], uint16_t ip_id)
{
	const uint16_t l3 = x->l3;
	uint8_t *p = rte_pktmbuf_mtod(m, uint8_t *);
	uint8_t *ip = p + l3, *q = p + x->q;
	uint8_t hdr[IP4_HDR + ICMP_HDR + IP4_HDR];
	uint32_t d, len, plen;

	if (x->l4 != l3 + IP6_HDR)
		return -EINVAL;
	plen = get16(q + 4);
	if (plen > UINT16_MAX - IP4_HDR ||
	    map_6to4(p + x->l4, hdr + IP4_HDR) != 0)
		return -EINVAL;
	if (cut_after(m, x->end) != 0)
		return -EINVAL;

	d = diff_sub(0, q + 8, 32);
	d = diff_add(d, qsrc, 4);
	d = diff_add(d, qdst, 4);
	l4_update(p + x->ql4, quote_l4_len(p, x), x->qproto, d, ports);
	/* the message shrinks by the quoted header's 20 bytes */
	len = x->end - x->l4 - LB_XLAT_GROWTH;
	if (IP4_HDR + len > LB_XLAT_ICMP4_MAX)
		len = LB_XLAT_ICMP4_MAX - IP4_HDR;
	ip4_build(hdr + IP4_HDR + ICMP_HDR, ip6_tclass(q), (uint16_t)(plen +
		IP4_HDR), 0, q[7], x->qproto, qsrc, qdst);
	ip4_build(hdr, ip6_tclass(ip), (uint16_t)(IP4_HDR + len), ip_id,
		ip[7], IPPROTO_ICMP, osrc, odst);

	p = shrink(m, l3, 2 * LB_XLAT_GROWTH, RTE_ETHER_TYPE_IPV4);
	ip = p + l3;
	if (rte_pktmbuf_pkt_len(m) > (uint32_t)l3 + IP4_HDR + len)
		rte_pktmbuf_trim(m, (uint16_t)(rte_pktmbuf_pkt_len(m) -
			(l3 + IP4_HDR + len)));
	memcpy(ip, hdr, sizeof(hdr));
	icmp_csum_set(NULL, ip + IP4_HDR, len);
	return 0;
}

int
lb_xlat_icmp(struct rte_mbuf *m, struct pa_pkt_meta *meta, uint8_t ofam,
		const uint8_t *osrc, const uint8_t *odst, const uint8_t *qsrc,
		const uint8_t *qdst, uint16_t qsport, uint16_t qdport,
		uint16_t ip_id)
{
	struct xicmp x;
	uint8_t ports[4];
	int rc;

	if ((ofam != 4 && ofam != 6) || icmp_parse(m, meta, &x) != 0)
		return -EINVAL;
	ports_of(ports, qsport, qdport);
	if (x.v4 == (ofam == 4))
		return icmp_same(m, &x, osrc, odst, qsrc, qdst, ports);
	rc = x.v4 ? icmp_4to6(m, &x, osrc, odst, qsrc, qdst, ports) :
		icmp_6to4(m, &x, osrc, odst, qsrc, qdst, ports, ip_id);
	if (rc != 0)
		return rc;
	meta_family(meta, ofam == 6);
	meta->l4_proto = ofam == 6 ? IPPROTO_ICMPV6 : IPPROTO_ICMP;
	return 0;
}
