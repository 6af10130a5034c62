/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What a routed port sends of its own: ICMP time exceeded. A pure
 * function over byte buffers (pa_port.h says what it builds and when it
 * refuses to).
 */
#include <netinet/in.h>
#include <string.h>

#include "pa_net.h"
#include "pa_port.h"

#define ETH_ALEN	6
#define IP4_HLEN	20
#define IP6_HLEN	40
#define ICMP_HLEN	8
#define IP4_MAX		576
#define IP6_MAX		1280
#define MAX_TAG_BYTES	8
#define ERR_TTL		64

static uint16_t
be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static void
put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

void
pa_port_link_local(const uint8_t mac[6], uint8_t out[16])
{
	memset(out, 0, 16);
	out[0] = 0xfe;
	out[1] = 0x80;
	out[8] = mac[0] ^ 0x02;
	out[9] = mac[1];
	out[10] = mac[2];
	out[11] = 0xff;
	out[12] = 0xfe;
	out[13] = mac[3];
	out[14] = mac[4];
	out[15] = mac[5];
}

/* May the packet at @p ip (IPv4, @p n bytes, n >= 20) get an ICMP error? */
static bool
may_answer4(const uint8_t *ip, uint32_t n)
{
	uint32_t ihl = (ip[0] & 0xf) * 4u;
	uint8_t a = ip[12];

	if (ihl < IP4_HLEN || ihl > n)
		return false;
	if ((be16(ip + 6) & 0x1fff) != 0)		/* non-first fragment */
		return false;
	if (a == 0 || a == 127 || a >= 224)		/* incl. 255.255.255.255 */
		return false;
	/* not about an ICMP error (echo and other queries are fine) */
	if (ip[9] == IPPROTO_ICMP) {
		if (n < ihl + 1)
			return false;
		switch (ip[ihl]) {
		case 0: case 8: case 13: case 14: case 15: case 16: case 17:
		case 18:
			return true;
		default:
			return false;
		}
	}
	return true;
}

/* The same for IPv6 (n >= 40): the source must be unicast; an ICMPv6
 * error (type < 128) or a non-first fragment gets no error. Extension
 * headers other than a fragment header are stepped over. */
static bool
may_answer6(const uint8_t *ip, uint32_t n)
{
	static const uint8_t zero[16];
	uint32_t off = IP6_HLEN;
	uint8_t nh = ip[6];
	unsigned int hops;

	if (ip[8] == 0xff || memcmp(ip + 8, zero, 16) == 0)
		return false;
	for (hops = 0; hops < 8; hops++) {
		switch (nh) {
		case 0: case 43: case 60:		/* hop-by-hop, routing, dest */
			if (n < off + 8)
				return true;
			nh = ip[off];
			off += (ip[off + 1] + 1u) * 8;
			continue;
		case 44:				/* fragment */
			if (n < off + 8)
				return true;
			if ((be16(ip + off + 2) & 0xfff8) != 0)
				return false;
			nh = ip[off];
			off += 8;
			continue;
		case IPPROTO_ICMPV6:
			return n < off + 1 || ip[off] >= 128;
		default:
			return true;
		}
	}
	return true;
}

uint32_t
pa_port_build_time_exceeded(uint8_t *buf, uint32_t room, const uint8_t *frame,
		uint32_t len, uint16_t l3_off, const uint8_t src_mac[6],
		const uint8_t *src_ip)
{
	uint32_t n, quote, tags, total, s;
	const uint8_t *ip;
	uint8_t *o, *icmp;
	bool v4;

	if (l3_off < 14 || l3_off > 14 + MAX_TAG_BYTES || len <= l3_off)
		return 0;
	/* back to a group, all-zero or our own Ethernet source: none (it
	 * would be sent to a group, or to the port itself) */
	if ((frame[ETH_ALEN] & 1) ||
	    memcmp(frame + ETH_ALEN, src_mac, ETH_ALEN) == 0 ||
	    memcmp(frame + ETH_ALEN, "\0\0\0\0\0\0", ETH_ALEN) == 0)
		return 0;
	ip = frame + l3_off;
	n = len - l3_off;
	v4 = (ip[0] >> 4) == 4;
	if (v4) {
		if (n < IP4_HLEN || !may_answer4(ip, n))
			return 0;
		n = RTE_MIN(n, (uint32_t)be16(ip + 2));	/* no padding */
		quote = RTE_MIN(n, (uint32_t)(IP4_MAX - IP4_HLEN - ICMP_HLEN));
	} else if ((ip[0] >> 4) == 6) {
		if (n < IP6_HLEN || !may_answer6(ip, n))
			return 0;
		n = RTE_MIN(n, IP6_HLEN + (uint32_t)be16(ip + 4));
		quote = RTE_MIN(n, (uint32_t)(IP6_MAX - IP6_HLEN - ICMP_HLEN));
	} else {
		return 0;
	}
	tags = l3_off - 14u;
	total = l3_off + (v4 ? IP4_HLEN : IP6_HLEN) + ICMP_HLEN + quote;
	if (total > room)
		return 0;

	/* Ethernet: back to the sender, with its VLAN tags */
	memcpy(buf, frame + ETH_ALEN, ETH_ALEN);
	memcpy(buf + ETH_ALEN, src_mac, ETH_ALEN);
	memcpy(buf + 12, frame + 12, tags + 2);
	o = buf + l3_off;
	if (v4) {
		o[0] = 0x45;
		o[1] = 0xc0;			/* internetwork control */
		put16(o + 2, (uint16_t)(IP4_HLEN + ICMP_HLEN + quote));
		put16(o + 4, 0);
		put16(o + 6, 0);
		o[8] = ERR_TTL;
		o[9] = IPPROTO_ICMP;
		put16(o + 10, 0);
		memcpy(o + 12, src_ip, 4);
		memcpy(o + 16, ip + 12, 4);
		put16(o + 10, pa_ip_csum_fold(pa_ip_csum_add(0, o, IP4_HLEN)));
		icmp = o + IP4_HLEN;
		icmp[0] = 11;
		icmp[1] = 0;
		memset(icmp + 2, 0, 6);
		memcpy(icmp + ICMP_HLEN, ip, quote);
		put16(icmp + 2, pa_ip_csum_fold(pa_ip_csum_add(0, icmp,
			ICMP_HLEN + quote)));
	} else {
		o[0] = 0x60;
		memset(o + 1, 0, 3);
		put16(o + 4, (uint16_t)(ICMP_HLEN + quote));
		o[6] = IPPROTO_ICMPV6;
		o[7] = ERR_TTL;
		memcpy(o + 8, src_ip, 16);
		memcpy(o + 24, ip + 8, 16);
		icmp = o + IP6_HLEN;
		icmp[0] = 3;
		icmp[1] = 0;
		memset(icmp + 2, 0, 6);
		memcpy(icmp + ICMP_HLEN, ip, quote);
		/* pseudo-header: addresses, length, next header */
		s = pa_ip_csum_add(0, o + 8, 32);
		s += ICMP_HLEN + quote;
		s += IPPROTO_ICMPV6;
		put16(icmp + 2, pa_ip_csum_fold(pa_ip_csum_add(s, icmp,
			ICMP_HLEN + quote)));
	}
	return total;
}
