/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ARP and neighbour discovery frames: a strict parser of untrusted input
 * (RFC 826, RFC 4861 sections 7.1.1 and 7.1.2) and the builders of what
 * the appliance sends. Pure functions over byte buffers (fuzzed by
 * tests/fuzz/fuzz_neigh.c).
 */
#include <string.h>

#include "pa_neigh.h"
#include "pa_net.h"

#define ETH_HLEN	14
#define ARP_LEN		28
#define IP6_HLEN	40
#define ND_HLEN		24
#define ND_OPT_SLLA	1
#define ND_OPT_TLLA	2
#define MAX_TAGS	2
#define MIN_FRAME	60

static const char *const bad_names[PA_NEIGH_BAD_MAX] = {
	[PA_NEIGH_BAD_TRUNCATED] = "truncated",
	[PA_NEIGH_BAD_HEADER] = "header",
	[PA_NEIGH_BAD_TYPE] = "type",
	[PA_NEIGH_BAD_HOP_LIMIT] = "hop_limit",
	[PA_NEIGH_BAD_CHECKSUM] = "checksum",
	[PA_NEIGH_BAD_OPTION] = "option",
	[PA_NEIGH_BAD_SENDER] = "sender",
	[PA_NEIGH_BAD_TARGET] = "target",
	[PA_NEIGH_BAD_MAC_MISMATCH] = "mac_mismatch",
	[PA_NEIGH_BAD_DAD] = "dad",
	[PA_NEIGH_BAD_NA_MCAST_SOLICITED] = "na_multicast_solicited",
};

const char *
pa_neigh_bad_name(int bad)
{
	if (bad < 0)
		bad = -bad;
	if (bad <= 0 || bad >= PA_NEIGH_BAD_MAX)
		return "unknown";
	return bad_names[bad];
}

static uint16_t
be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static bool
mac_unicast(const uint8_t *m)
{
	static const uint8_t zero[6];

	return (m[0] & 1) == 0 && memcmp(m, zero, 6) != 0;
}

/* A sender address a neighbour may have: not multicast, broadcast,
 * loopback or in 0/8 (0.0.0.0 itself is the caller's case). */
static bool
ip4_unicast(const uint8_t *a)
{
	if (a[0] >= 224 || a[0] == 127 || a[0] == 0)
		return false;
	return true;
}

static bool
ip6_unspecified(const uint8_t *a)
{
	static const uint8_t zero[16];

	return memcmp(a, zero, 16) == 0;
}

static bool
ip6_loopback(const uint8_t *a)
{
	static const uint8_t lo[16] = { [15] = 1 };

	return memcmp(a, lo, 16) == 0;
}

void
pa_neigh_solicited_node(const uint8_t target[16], uint8_t out[16])
{
	static const uint8_t pfx[13] = {
		0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, 0xff
	};

	memcpy(out, pfx, sizeof(pfx));
	memcpy(out + 13, target + 13, 3);
}

/* One's complement sum of the ICMPv6 pseudo-header and message. */
static uint16_t
icmp6_sum(const uint8_t *src, const uint8_t *dst, const uint8_t *msg,
		uint32_t len)
{
	uint32_t s;

	s = pa_ip_csum_add(0, src, 16);
	s = pa_ip_csum_add(s, dst, 16);
	s += (len >> 16) + (len & 0xffff) + IPPROTO_ICMPV6;
	return (uint16_t)pa_ip_csum_add(s, msg, len);
}

static int
parse_arp(const uint8_t *a, uint32_t len, struct pa_neigh_msg *msg)
{
	uint16_t op;

	if (len < 8)
		return -PA_NEIGH_BAD_TRUNCATED;
	if (be16(a) != 1 || be16(a + 2) != 0x0800 || a[4] != 6 || a[5] != 4)
		return -PA_NEIGH_BAD_HEADER;
	if (len < ARP_LEN)
		return -PA_NEIGH_BAD_TRUNCATED;
	op = be16(a + 6);
	if (op != 1 && op != 2)
		return -PA_NEIGH_BAD_HEADER;
	msg->type = op == 1 ? PA_NEIGH_MSG_ARP_REQUEST : PA_NEIGH_MSG_ARP_REPLY;
	msg->family = 4;
	memcpy(msg->sender_mac, a + 8, 6);
	msg->has_mac = true;
	memcpy(msg->sender_ip, a + 14, 4);
	memcpy(msg->target_ip, a + 24, 4);
	if (!mac_unicast(msg->sender_mac))
		return -PA_NEIGH_BAD_SENDER;
	/* 0.0.0.0 only in a probe (RFC 5227): a request, answered, never
	 * learned */
	if (!(op == 1 && memcmp(msg->sender_ip, "\0\0\0\0", 4) == 0) &&
	    !ip4_unicast(msg->sender_ip))
		return -PA_NEIGH_BAD_SENDER;
	/* 0.0.0.0 as a target only in the answer to a probe */
	if (!ip4_unicast(msg->target_ip) &&
	    !(op == 2 && memcmp(msg->target_ip, "\0\0\0\0", 4) == 0))
		return -PA_NEIGH_BAD_TARGET;
	if (memcmp(msg->eth_src, msg->sender_mac, 6) != 0)
		return -PA_NEIGH_BAD_MAC_MISMATCH;
	return 0;
}

static int
parse_nd(const uint8_t *ip, uint32_t len, struct pa_neigh_msg *msg)
{
	const uint8_t *icmp, *opt = NULL;
	uint32_t plen, off;
	uint8_t type, want_opt, sol[16];
	bool mcast_dst;

	if (len < IP6_HLEN)
		return -PA_NEIGH_BAD_TRUNCATED;
	if ((ip[0] >> 4) != 6 || ip[6] != IPPROTO_ICMPV6)
		return -PA_NEIGH_BAD_HEADER;
	plen = be16(ip + 4);
	if (plen > len - IP6_HLEN)
		return -PA_NEIGH_BAD_TRUNCATED;
	if (plen < ND_HLEN)
		return -PA_NEIGH_BAD_TRUNCATED;
	icmp = ip + IP6_HLEN;
	type = icmp[0];
	if ((type != 135 && type != 136) || icmp[1] != 0)
		return -PA_NEIGH_BAD_TYPE;
	if (ip[7] != 255)
		return -PA_NEIGH_BAD_HOP_LIMIT;
	if (icmp6_sum(ip + 8, ip + 24, icmp, plen) != 0xffff)
		return -PA_NEIGH_BAD_CHECKSUM;
	msg->type = type == 135 ? PA_NEIGH_MSG_NS : PA_NEIGH_MSG_NA;
	msg->family = 6;
	memcpy(msg->sender_ip, ip + 8, 16);
	memcpy(msg->dst_ip, ip + 24, 16);
	memcpy(msg->target_ip, icmp + 8, 16);
	msg->nd_flags = type == 136 ? icmp[4] & 0xe0 : 0;
	want_opt = type == 135 ? ND_OPT_SLLA : ND_OPT_TLLA;
	for (off = ND_HLEN; off < plen; off += (uint32_t)opt[1] * 8) {
		opt = icmp + off;
		if (plen - off < 2 || opt[1] == 0 ||
		    (uint32_t)opt[1] * 8 > plen - off)
			return -PA_NEIGH_BAD_OPTION;
		if (opt[0] != want_opt)
			continue;
		if (opt[1] != 1 || msg->has_mac)
			return -PA_NEIGH_BAD_OPTION;
		memcpy(msg->sender_mac, opt + 2, 6);
		msg->has_mac = true;
	}
	if (msg->target_ip[0] == 0xff || ip6_unspecified(msg->target_ip) ||
	    ip6_loopback(msg->target_ip))
		return -PA_NEIGH_BAD_TARGET;
	if (msg->sender_ip[0] == 0xff || ip6_loopback(msg->sender_ip))
		return -PA_NEIGH_BAD_SENDER;
	if (msg->has_mac && !mac_unicast(msg->sender_mac))
		return -PA_NEIGH_BAD_SENDER;
	mcast_dst = msg->dst_ip[0] == 0xff;
	if (type == 135) {
		if (ip6_unspecified(msg->sender_ip)) {
			pa_neigh_solicited_node(msg->target_ip, sol);
			if (memcmp(msg->dst_ip, sol, 16) != 0 || msg->has_mac)
				return -PA_NEIGH_BAD_DAD;
		}
	} else {
		if (ip6_unspecified(msg->sender_ip))
			return -PA_NEIGH_BAD_SENDER;
		if (mcast_dst && (msg->nd_flags & PA_NEIGH_NA_S))
			return -PA_NEIGH_BAD_NA_MCAST_SOLICITED;
	}
	if (msg->has_mac && memcmp(msg->eth_src, msg->sender_mac, 6) != 0)
		return -PA_NEIGH_BAD_MAC_MISMATCH;
	return 0;
}

int
pa_neigh_parse(const uint8_t *frame, uint32_t len, struct pa_neigh_msg *msg)
{
	uint32_t off = 2 * 6;
	unsigned int tags = 0;
	uint16_t et;

	memset(msg, 0, sizeof(*msg));
	if (len < ETH_HLEN)
		return -PA_NEIGH_BAD_TRUNCATED;
	memcpy(msg->eth_dst, frame, 6);
	memcpy(msg->eth_src, frame + 6, 6);
	for (;;) {
		if (len - off < 2)
			return -PA_NEIGH_BAD_TRUNCATED;
		et = be16(frame + off);
		if (et != 0x8100 && et != 0x88a8 && et != 0x9100)
			break;
		if (++tags > MAX_TAGS || len - off < 6)
			return -PA_NEIGH_BAD_HEADER;
		off += 4;
	}
	off += 2;
	msg->l3_off = (uint16_t)off;
	if (et == 0x0806)
		return parse_arp(frame + off, len - off, msg);
	if (et == 0x86dd)
		return parse_nd(frame + off, len - off, msg);
	return -PA_NEIGH_BAD_HEADER;
}

/* Ethernet header (tags included); @return its length or 0. */
static uint32_t
put_eth(uint8_t *buf, uint32_t room, const uint8_t *tags, uint16_t n_tag,
		const uint8_t *dst, const uint8_t *src, uint16_t et)
{
	uint32_t n = 12 + (uint32_t)n_tag + 2;

	if (room < n || (n_tag % 4) != 0 || n_tag > 4 * MAX_TAGS)
		return 0;
	memcpy(buf, dst, 6);
	memcpy(buf + 6, src, 6);
	if (n_tag != 0)
		memcpy(buf + 12, tags, n_tag);
	buf[n - 2] = (uint8_t)(et >> 8);
	buf[n - 1] = (uint8_t)et;
	return n;
}

uint32_t
pa_neigh_build_arp(uint8_t *buf, uint32_t room, const uint8_t *tags,
		uint16_t n_tag_bytes, uint16_t op, const uint8_t eth_dst[6],
		const uint8_t sha[6], const uint8_t spa[4], const uint8_t tha[6],
		const uint8_t tpa[4])
{
	uint32_t off = put_eth(buf, room, tags, n_tag_bytes, eth_dst, sha,
		0x0806);
	uint32_t total;
	uint8_t *a;

	if (off == 0)
		return 0;
	total = RTE_MAX(off + ARP_LEN, (uint32_t)MIN_FRAME);
	if (room < total)
		return 0;
	a = buf + off;
	a[0] = 0;
	a[1] = 1;
	a[2] = 0x08;
	a[3] = 0x00;
	a[4] = 6;
	a[5] = 4;
	a[6] = (uint8_t)(op >> 8);
	a[7] = (uint8_t)op;
	memcpy(a + 8, sha, 6);
	memcpy(a + 14, spa, 4);
	memcpy(a + 18, tha, 6);
	memcpy(a + 24, tpa, 4);
	memset(buf + off + ARP_LEN, 0, total - off - ARP_LEN);
	return total;
}

uint32_t
pa_neigh_build_nd(uint8_t *buf, uint32_t room, const uint8_t *tags,
		uint16_t n_tag_bytes, uint8_t type, const uint8_t eth_dst[6],
		const uint8_t eth_src[6], const uint8_t src[16],
		const uint8_t dst[16], const uint8_t target[16], uint8_t flags,
		const uint8_t *lla)
{
	uint32_t off = put_eth(buf, room, tags, n_tag_bytes, eth_dst, eth_src,
		0x86dd);
	uint32_t plen = ND_HLEN + (lla != NULL ? 8 : 0);
	uint8_t *ip, *icmp;
	uint16_t sum;

	if (off == 0 || room < off + IP6_HLEN + plen)
		return 0;
	ip = buf + off;
	icmp = ip + IP6_HLEN;
	memset(ip, 0, IP6_HLEN + plen);
	ip[0] = 0x60;
	ip[4] = (uint8_t)(plen >> 8);
	ip[5] = (uint8_t)plen;
	ip[6] = IPPROTO_ICMPV6;
	ip[7] = 255;
	memcpy(ip + 8, src, 16);
	memcpy(ip + 24, dst, 16);
	icmp[0] = type;
	icmp[4] = flags;
	memcpy(icmp + 8, target, 16);
	if (lla != NULL) {
		icmp[ND_HLEN] = type == 135 ? ND_OPT_SLLA : ND_OPT_TLLA;
		icmp[ND_HLEN + 1] = 1;
		memcpy(icmp + ND_HLEN + 2, lla, 6);
	}
	sum = pa_ip_csum_fold(icmp6_sum(src, dst, icmp, plen));
	icmp[2] = (uint8_t)(sum >> 8);
	icmp[3] = (uint8_t)sum;
	return off + IP6_HLEN + plen;
}
