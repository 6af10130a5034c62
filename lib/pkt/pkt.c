/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Packet metadata: the dynfield, the general parser behind the inline fast
 * path (pa_pkt_inline.h), the gather path for chained mbufs and flow keys.
 */

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <netinet/in.h>

#include <rte_branch_prediction.h>
#include <rte_byteorder.h>
#include <rte_common.h>
#include <rte_errno.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_log.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>
#include <rte_sctp.h>

#include "pa_pkt.h"

RTE_LOG_REGISTER(pa_pkt_logtype, pa.pkt, INFO);
#define PA_PKT_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, pa_pkt_logtype, "pa.pkt: " fmt "\n", \
		##__VA_ARGS__)

#define PA_PKT_DYNFIELD_NAME	"pktaccel_meta"

/* IPv6 extension headers (RFC 8200) not named in netinet/in.h everywhere */
#define PA_IP6_HOPOPTS		0
#define PA_IP6_ROUTING		43
#define PA_IP6_FRAGMENT		44
#define PA_IP6_AH		51
#define PA_IP6_DSTOPTS		60
#define PA_IP6_EXT_MIN		8	/* every extension header is >= 8 bytes */
#define PA_IP6_FRAG_OFF_MASK	0xfff8
#define PA_IP6_FRAG_M		0x0001

int pa_pkt_meta_offset = -1;

/* 24 bytes: with a PMD's 8-byte rx timestamp field (net_pcap registers
 * one) it still fits the 36 bytes of dynfield1. */
_Static_assert(sizeof(struct pa_pkt_meta) <= 24,
	"pa_pkt_meta must fit the mbuf dynfield area beside a timestamp");

int
pa_pkt_init(void)
{
	static const struct rte_mbuf_dynfield desc = {
		.name = PA_PKT_DYNFIELD_NAME,
		.size = sizeof(struct pa_pkt_meta),
		.align = __alignof__(struct pa_pkt_meta),
	};
	int off;

	off = rte_mbuf_dynfield_register(&desc);
	if (off < 0) {
		int err = rte_errno;

		PA_PKT_LOG(ERR, "cannot register mbuf dynfield %s: %s",
			PA_PKT_DYNFIELD_NAME, rte_strerror(err));
		return err > 0 ? -err : -ENOMEM;
	}
	pa_pkt_meta_offset = off;
	return 0;
}

static inline uint16_t
rd_be16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return rte_be_to_cpu_16(v);
}

static inline uint32_t
rd_be32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return rte_be_to_cpu_32(v);
}

static inline uint32_t
rd_raw32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/*
 * A header [off, end) of the frame: @p err when it ends past @p limit (the
 * frame or the IP length), SEGMENT when past the first segment, else 0.
 */
static inline int
hdr_check(uint32_t end, uint32_t limit, uint32_t seg_len, int err)
{
	if (end > limit)
		return err;
	if (end > seg_len)
		return PA_PKT_ERR_SEGMENT;
	return 0;
}

static inline int
is_vlan_tpid(uint16_t etype)
{
	return etype == RTE_ETHER_TYPE_VLAN || etype == RTE_ETHER_TYPE_QINQ ||
		etype == RTE_ETHER_TYPE_QINQ1;
}

/*
 * L4 header at l4_off, IP payload ending at ip_end (ip_end >= l4_off).
 * Sets *ports and PA_PKT_F_L4 for the protocols it knows.
 */
static int
parse_l4(const uint8_t *data, uint32_t seg_len, uint32_t l4_off,
		uint32_t ip_end, uint8_t proto, int v6, uint16_t *flags,
		uint32_t *ports)
{
	uint32_t pl = ip_end - l4_off;
	uint32_t need, len;
	const uint8_t *p;
	int ret;

	switch (proto) {
	case IPPROTO_TCP:
		need = sizeof(struct rte_tcp_hdr);
		break;
	case IPPROTO_UDP:
		need = sizeof(struct rte_udp_hdr);
		break;
	case IPPROTO_SCTP:
		need = sizeof(struct rte_sctp_hdr);
		break;
	case IPPROTO_ICMP:
		if (v6)
			return 0;
		need = 4;
		break;
	case IPPROTO_ICMPV6:
		if (!v6)
			return 0;
		need = 4;
		break;
	default:
		return 0;
	}

	ret = hdr_check(l4_off + need, ip_end, seg_len, PA_PKT_ERR_L4_TRUNC);
	if (ret != 0)
		return ret;
	p = data + l4_off;

	if (proto == IPPROTO_TCP) {
		len = (p[12] >> 4) * 4u;
		if (len < sizeof(struct rte_tcp_hdr) || len > pl)
			return PA_PKT_ERR_L4_LEN;
	} else if (proto == IPPROTO_UDP) {
		/* a first fragment holds only the start of the datagram */
		len = rd_be16(p + 4);
		if (len < sizeof(struct rte_udp_hdr) ||
				(len > pl && !(*flags & PA_PKT_F_FRAG)))
			return PA_PKT_ERR_L4_LEN;
	}
	if (proto != IPPROTO_ICMP && proto != IPPROTO_ICMPV6)
		*ports = rd_be32(p);
	*flags |= PA_PKT_F_L4;
	return 0;
}

int
pa_pkt_hash_quote(const uint8_t *ip, uint32_t len, int v6, uint32_t *hash)
{
	uint32_t hlen, ports;
	uint8_t proto;

	if (!v6) {
		if (len < 20 || (ip[0] >> 4) != 4)
			return -EINVAL;
		hlen = (ip[0] & 0xfu) * 4;
		/* a header under 20 bytes, longer than the datagram it heads,
		 * or without its 8 bytes of L4 in the quote; a later fragment
		 * carries no ports */
		if (hlen < 20 || rd_be16(ip + 2) < hlen + 8 || len < hlen + 8 ||
		    (rd_be16(ip + 6) & RTE_IPV4_HDR_OFFSET_MASK) != 0)
			return -EINVAL;
		proto = ip[9];
	} else {
		/* extension headers in a quote are not followed */
		hlen = sizeof(struct rte_ipv6_hdr);
		if (len < hlen + 8 || (ip[0] >> 4) != 6 || rd_be16(ip + 4) < 8)
			return -EINVAL;
		proto = ip[6];
	}
	if (proto != IPPROTO_TCP && proto != IPPROTO_UDP &&
	    proto != IPPROTO_SCTP)
		return -EINVAL;
	ports = rd_be32(ip + hlen);
	*hash = v6 ? pa_pkt_hash_v6(ip + 8, ip + 24, ports, proto) :
		pa_pkt_hash_v4(rd_raw32(ip + 12), rd_raw32(ip + 16), ports,
			proto);
	return 0;
}

/*
 * An ICMP error (not a fragment, its 4-byte header parsed) at l4_off:
 * replace *hash with its quote's (and set PA_PKT_F_QUOTE in *flags)
 * when the quote's headers are in the
 * datagram and within PA_PKT_HDR_MAX bytes of the frame. Returns 0 or
 * SEGMENT (those headers are past the first segment). Whether the
 * quote counts depends on the frame only, never on seg_len.
 */
static int
icmp_error_hash(const uint8_t *data, uint32_t seg_len, uint32_t l4_off,
		uint32_t ip_end, int v6, uint32_t *hash, uint16_t *flags)
{
	const uint32_t q = l4_off + 8;	/* the ICMP header is 8 bytes */
	const uint8_t type = data[l4_off];
	uint32_t end;

	if (v6 ? type < 1 || type > 4 : type != 3 && type != 11 && type != 12)
		return 0;
	end = q + (v6 ? sizeof(struct rte_ipv6_hdr) + 8 : 20 + 8);
	if (end > ip_end || end > PA_PKT_HDR_MAX)
		return 0;
	if (!v6) {
		if (q >= seg_len)
			return PA_PKT_ERR_SEGMENT;
		if ((data[q] & 0xfu) < 5)
			return 0;
		end = q + (data[q] & 0xfu) * 4u + 8;
		if (end > ip_end || end > PA_PKT_HDR_MAX)
			return 0;
	}
	if (end > seg_len)
		return PA_PKT_ERR_SEGMENT;
	/* the quote's checks read nothing at or past end */
	if (pa_pkt_hash_quote(data + q, end - q, v6, hash) == 0)
		*flags |= PA_PKT_F_QUOTE;
	return 0;
}

int
pa_pkt_parse_full(const uint8_t *data, uint32_t seg_len, uint32_t pkt_len,
		struct pa_pkt_meta *meta)
{
	uint32_t off, hlen, ip_end, l4_off = 0, ports = 0;
	uint16_t etype, flags = 0, fo;
	uint8_t proto = 0, hash_proto = 0, nh;
	unsigned int vlans = 0, n_ext = 0;
	const uint8_t *ip;
	uint32_t hash;
	int ret;

	if (seg_len > pkt_len)
		seg_len = pkt_len;
	if (pkt_len < RTE_ETHER_HDR_LEN)
		return PA_PKT_ERR_RUNT;
	if (seg_len < RTE_ETHER_HDR_LEN)
		return PA_PKT_ERR_SEGMENT;

	off = RTE_ETHER_HDR_LEN;
	etype = rd_be16(data + 2 * RTE_ETHER_ADDR_LEN);
	while (is_vlan_tpid(etype)) {
		if (vlans == PA_PKT_MAX_VLAN)
			return PA_PKT_ERR_VLAN;
		ret = hdr_check(off + sizeof(struct rte_vlan_hdr), pkt_len,
				seg_len, PA_PKT_ERR_VLAN);
		if (ret != 0)
			return ret;
		etype = rd_be16(data + off + 2);
		off += sizeof(struct rte_vlan_hdr);
		vlans++;
	}
	if (vlans > 0)
		flags |= PA_PKT_F_VLAN;
	if (vlans > 1)
		flags |= PA_PKT_F_QINQ;
	ip = data + off;

	if (etype == RTE_ETHER_TYPE_IPV4) {
		uint32_t tot;

		ret = hdr_check(off + 20, pkt_len, seg_len,
				PA_PKT_ERR_L3_TRUNC);
		if (ret != 0)
			return ret;
		if ((ip[0] >> 4) != 4)
			return PA_PKT_ERR_L3_VERSION;
		hlen = (ip[0] & 0xf) * 4u;
		tot = rd_be16(ip + 2);
		if (hlen < 20 || hlen > tot || off + hlen > pkt_len)
			return PA_PKT_ERR_L3_HDRLEN;
		if (off + tot > pkt_len)
			return PA_PKT_ERR_L3_LEN;
		if (off + hlen > seg_len)
			return PA_PKT_ERR_SEGMENT;

		flags |= PA_PKT_F_IPV4;
		fo = rd_be16(ip + 6);
		if (fo & (RTE_IPV4_HDR_MF_FLAG | RTE_IPV4_HDR_OFFSET_MASK))
			flags |= PA_PKT_F_FRAG;
		if (fo & RTE_IPV4_HDR_OFFSET_MASK)
			flags |= PA_PKT_F_FRAG_LATER;
		proto = ip[9];
		hash_proto = proto;
		l4_off = off + hlen;
		ip_end = off + tot;
	} else if (etype == RTE_ETHER_TYPE_IPV6) {
		uint32_t plen;

		ret = hdr_check(off + sizeof(struct rte_ipv6_hdr), pkt_len,
				seg_len, PA_PKT_ERR_L3_TRUNC);
		if (ret != 0)
			return ret;
		if ((ip[0] >> 4) != 6)
			return PA_PKT_ERR_L3_VERSION;
		plen = rd_be16(ip + 4);
		nh = ip[6];
		/* jumbogram (RFC 2675): not supported */
		if (plen == 0 && nh == PA_IP6_HOPOPTS)
			return PA_PKT_ERR_L3_LEN;
		l4_off = off + sizeof(struct rte_ipv6_hdr);
		ip_end = l4_off + plen;
		if (ip_end > pkt_len)
			return PA_PKT_ERR_L3_LEN;

		flags |= PA_PKT_F_IPV6;
		hash_proto = 0;
		for (;;) {
			const uint8_t *x = data + l4_off;

			if (nh != PA_IP6_HOPOPTS && nh != PA_IP6_ROUTING &&
					nh != PA_IP6_DSTOPTS && nh != PA_IP6_AH &&
					nh != PA_IP6_FRAGMENT)
				break;
			if (++n_ext > PA_PKT_MAX_EXT_HDRS)
				return PA_PKT_ERR_EXT;
			ret = hdr_check(l4_off + PA_IP6_EXT_MIN, ip_end,
					seg_len, PA_PKT_ERR_EXT);
			if (ret != 0)
				return ret;
			if (nh == PA_IP6_FRAGMENT) {
				hlen = PA_IP6_EXT_MIN;
				fo = rd_be16(x + 2);
				if (fo & (PA_IP6_FRAG_OFF_MASK | PA_IP6_FRAG_M)) {
					flags |= PA_PKT_F_FRAG;
					hash_proto = x[0];
				}
				if (fo & PA_IP6_FRAG_OFF_MASK) {
					/* the rest of the chain is not here */
					flags |= PA_PKT_F_FRAG_LATER;
					nh = x[0];
					l4_off += hlen;
					break;
				}
			} else if (nh == PA_IP6_AH) {
				hlen = (x[1] + 2u) * 4;
			} else {
				hlen = (x[1] + 1u) * 8;
			}
			ret = hdr_check(l4_off + hlen, ip_end, seg_len,
					PA_PKT_ERR_EXT);
			if (ret != 0)
				return ret;
			nh = x[0];
			l4_off += hlen;
		}
		if (n_ext > 0)
			flags |= PA_PKT_F_IPV6_EXT;
		proto = nh;
		if (!(flags & PA_PKT_F_FRAG))
			hash_proto = proto;
	} else {
		meta->hash = pa_pkt_hash_mac(data);
		meta->flags = flags | PA_PKT_F_NON_IP;
		meta->l3_off = off;
		meta->l4_off = 0;
		meta->sport = 0;
		meta->dport = 0;
		meta->l4_proto = 0;
		meta->vlan_count = vlans;
		return PA_PKT_OK;
	}

	if (!(flags & PA_PKT_F_FRAG_LATER)) {
		ret = parse_l4(data, seg_len, l4_off, ip_end, proto,
				!!(flags & PA_PKT_F_IPV6), &flags, &ports);
		if (ret != 0)
			return ret;
	}

	if (flags & PA_PKT_F_IPV4)
		hash = pa_pkt_hash_v4(rd_raw32(ip + 12), rd_raw32(ip + 16),
				(flags & PA_PKT_F_FRAG) ? 0 : ports,
				hash_proto);
	else
		hash = pa_pkt_hash_v6(ip + 8, ip + 24,
				(flags & PA_PKT_F_FRAG) ? 0 : ports,
				hash_proto);

	/* an ICMP error goes where the flow it quotes goes */
	if (unlikely(proto == ((flags & PA_PKT_F_IPV6) ? IPPROTO_ICMPV6 :
			IPPROTO_ICMP)) &&
	    (flags & (PA_PKT_F_L4 | PA_PKT_F_FRAG)) == PA_PKT_F_L4) {
		ret = icmp_error_hash(data, seg_len, l4_off, ip_end,
				!!(flags & PA_PKT_F_IPV6), &hash, &flags);
		if (ret != 0)
			return ret;
	}

	meta->hash = hash;
	meta->flags = flags;
	meta->l3_off = off;
	meta->l4_off = l4_off;
	meta->sport = ports >> 16;
	meta->dport = ports & 0xffff;
	meta->l4_proto = proto;
	meta->vlan_count = vlans;
	return PA_PKT_OK;
}

int
pa_pkt_parse_gather(const struct rte_mbuf *m, struct pa_pkt_meta *meta)
{
	uint8_t buf[PA_PKT_HDR_MAX];
	uint32_t len = RTE_MIN(rte_pktmbuf_pkt_len(m), (uint32_t)PA_PKT_HDR_MAX);
	const uint8_t *p;
	int ret;

	p = rte_pktmbuf_read(m, 0, len, buf);
	if (p == NULL)
		return PA_PKT_ERR_RUNT;	/* pkt_len disagrees with the chain */
	ret = pa_pkt_parse_full(p, len, rte_pktmbuf_pkt_len(m), meta);
	/* only an IPv6 extension chain can outgrow PA_PKT_HDR_MAX */
	if (ret == PA_PKT_ERR_SEGMENT)
		ret = PA_PKT_ERR_EXT;
	return ret;
}

/* addr: the source address in the IP header; the destination follows it */
static int
flow_key_fill(const uint8_t *addr, const struct pa_pkt_meta *meta,
		struct pa_flow_key *key)
{
	if (meta->flags & PA_PKT_F_IPV4) {
		key->family = 4;
		memcpy(&key->v4.src, addr, 4);
		memcpy(&key->v4.dst, addr + 4, 4);
	} else {
		key->family = 6;
		memcpy(key->v6.src, addr, 16);
		memcpy(key->v6.dst, addr + 16, 16);
	}
	key->proto = meta->l4_proto;
	key->sport = rte_cpu_to_be_16(meta->sport);
	key->dport = rte_cpu_to_be_16(meta->dport);
	return 0;
}

/* where the addresses start and how long they are, or 0 for non-IP */
static uint32_t
flow_key_addr(const struct pa_pkt_meta *meta, uint32_t *off)
{
	if (meta->flags & PA_PKT_F_IPV4) {
		*off = meta->l3_off + offsetof(struct rte_ipv4_hdr, src_addr);
		return 8;
	}
	if (meta->flags & PA_PKT_F_IPV6) {
		*off = meta->l3_off + offsetof(struct rte_ipv6_hdr, src_addr);
		return 32;
	}
	return 0;
}

int
pa_pkt_flow_key(const struct rte_mbuf *m, const struct pa_pkt_meta *meta,
		struct pa_flow_key *key)
{
	uint8_t buf[32];
	const uint8_t *p;
	uint32_t off = 0, len;

	/* zeroed whole, padding included: keys are hashed and compared */
	memset(key, 0, sizeof(*key));
	len = flow_key_addr(meta, &off);
	if (len == 0)
		return -EINVAL;
	p = rte_pktmbuf_read(m, off, len, buf);
	if (p == NULL)
		return -EINVAL;
	return flow_key_fill(p, meta, key);
}

int
pa_pkt_flow_key_raw(const uint8_t *data, const struct pa_pkt_meta *meta,
		struct pa_flow_key *key)
{
	uint32_t off = 0, len;

	memset(key, 0, sizeof(*key));
	len = flow_key_addr(meta, &off);
	if (len == 0)
		return -EINVAL;
	return flow_key_fill(data + off, meta, key);
}
