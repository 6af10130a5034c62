/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The PROXY protocol header and the sequence shift it implies
 * (lb_proxy.h). The header is built from the flow's addresses when a
 * segment needs it (the SYN, for its length; the segments at isn1 before
 * the backend acknowledged it), so a flow keeps 8 bytes of state.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <netinet/in.h>

#include <rte_byteorder.h>
#include <rte_common.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

#include "lb_csum.h"
#include "lb_proxy.h"

#define TCP_FIN		0x01
#define TCP_SYN		0x02
#define TCP_RST		0x04
#define TCP_ACK		0x10

#define TCPOPT_EOL	0
#define TCPOPT_NOP	1
#define TCPOPT_MSS	2
#define TCPOPT_SACK	5

#define TCP_HDR_MIN	20
#define TCP_OPT_MAX	40
#define MSS_FLOOR	64

static const uint8_t v2_sig[12] = {
	0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a
};

/* ------------------------------------------------------------------ */
/* The header                                                          */
/* ------------------------------------------------------------------ */

/* @p v in decimal, no leading zeros. @return its length. */
static unsigned int
put_dec(char *p, unsigned int v)
{
	char t[10];
	unsigned int n = 0, i;

	do {
		t[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	for (i = 0; i < n; i++)
		p[i] = t[n - 1 - i];
	return n;
}

/* @p v in lower-case hexadecimal, no leading zeros. */
static unsigned int
put_hex(char *p, unsigned int v)
{
	static const char digits[] = "0123456789abcdef";
	char t[4];
	unsigned int n = 0, i;

	do {
		t[n++] = digits[v & 0xf];
		v >>= 4;
	} while (v != 0);
	for (i = 0; i < n; i++)
		p[i] = t[n - 1 - i];
	return n;
}

static unsigned int
put_ip4(char *p, const uint8_t *a)
{
	unsigned int n = 0, i;

	for (i = 0; i < 4; i++) {
		if (i != 0)
			p[n++] = '.';
		n += put_dec(p + n, a[i]);
	}
	return n;
}

/* RFC 5952: the longest run of two or more zero groups (the first of
 * equals) as "::", groups without leading zeros, never a dotted tail
 * (the spec wants hexadecimal groups only). */
static unsigned int
put_ip6(char *p, const uint8_t *a)
{
	unsigned int g[8], i, n = 0;
	int best = -1, best_len = 1, run = -1;

	for (i = 0; i < 8; i++)
		g[i] = (unsigned int)a[2 * i] << 8 | a[2 * i + 1];
	for (i = 0; i <= 8; i++) {
		if (i < 8 && g[i] == 0) {
			if (run < 0)
				run = (int)i;
			continue;
		}
		if (run >= 0 && (int)i - run > best_len) {
			best = run;
			best_len = (int)i - run;
		}
		run = -1;
	}
	for (i = 0; i < 8; i++) {
		if (best >= 0 && (int)i == best) {
			p[n++] = ':';
			p[n++] = ':';
			i += (unsigned int)best_len - 1;
			continue;
		}
		if (i != 0 && !(best >= 0 && (int)i == best + best_len))
			p[n++] = ':';
		n += put_hex(p + n, g[i]);
	}
	return n;
}

unsigned int
lb_proxy_build(uint8_t *buf, enum pa_lb_proxy v, uint8_t family,
		const uint8_t *src, const uint8_t *dst, uint16_t sport,
		uint16_t dport)
{
	unsigned int alen, n;
	char *p = (char *)buf;

	if (family != 4 && family != 6)
		return 0;
	alen = family == 4 ? 4 : 16;
	switch (v) {
	case PA_LB_PROXY_V1:
		memcpy(p, family == 4 ? "PROXY TCP4 " : "PROXY TCP6 ", 11);
		n = 11;
		n += family == 4 ? put_ip4(p + n, src) : put_ip6(p + n, src);
		p[n++] = ' ';
		n += family == 4 ? put_ip4(p + n, dst) : put_ip6(p + n, dst);
		p[n++] = ' ';
		n += put_dec(p + n, rte_be_to_cpu_16(sport));
		p[n++] = ' ';
		n += put_dec(p + n, rte_be_to_cpu_16(dport));
		p[n++] = '\r';
		p[n++] = '\n';
		return n;
	case PA_LB_PROXY_V2:
		memcpy(buf, v2_sig, sizeof(v2_sig));
		buf[12] = 0x21;			/* version 2, PROXY */
		buf[13] = family == 4 ? 0x11 : 0x21;	/* TCP over IPv4 / IPv6 */
		buf[14] = 0;
		buf[15] = (uint8_t)(2 * alen + 4);
		memcpy(buf + 16, src, alen);
		memcpy(buf + 16 + alen, dst, alen);
		memcpy(buf + 16 + 2 * alen, &sport, 2);
		memcpy(buf + 18 + 2 * alen, &dport, 2);
		return 20 + 2 * alen;
	default:
		return 0;
	}
}

/* ------------------------------------------------------------------ */
/* Checksums (RFC 1624) and fields                                     */
/* ------------------------------------------------------------------ */

static inline uint32_t
get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return rte_be_to_cpu_32(v);
}

static inline void
put32(uint8_t *p, uint32_t v)
{
	v = rte_cpu_to_be_32(v);
	memcpy(p, &v, 4);
}

static inline uint16_t
get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline void
put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* Write the 32-bit field at @p p (a multiple of 2 from the TCP header's
 * start) and account for it in @p diff. */
static inline uint32_t
set32(uint8_t *p, uint32_t v, uint32_t diff)
{
	uint8_t old[4];

	memcpy(old, p, 4);
	put32(p, v);
	return lb_csum_add_diff(diff, old, p, 4);
}

/* A TCP segment whose header is in the first segment: its address, or
 * NULL. */
static inline uint8_t *
tcp_hdr_of(struct rte_mbuf *m, const struct pa_pkt_meta *meta)
{
	uint8_t *tcp;
	unsigned int doff;

	if ((meta->flags & (PA_PKT_F_L4 | PA_PKT_F_FRAG_LATER)) != PA_PKT_F_L4 ||
	    !(meta->flags & (PA_PKT_F_IPV4 | PA_PKT_F_IPV6)) ||
	    meta->l4_proto != IPPROTO_TCP ||
	    rte_pktmbuf_data_len(m) < meta->l4_off + TCP_HDR_MIN)
		return NULL;
	tcp = rte_pktmbuf_mtod_offset(m, uint8_t *, meta->l4_off);
	doff = (tcp[12] >> 4) * 4u;
	if (doff < TCP_HDR_MIN || meta->l4_off + doff > rte_pktmbuf_data_len(m))
		return NULL;
	return tcp;
}

/* ------------------------------------------------------------------ */
/* Client -> backend                                                   */
/* ------------------------------------------------------------------ */

/* The IP packet's length and its L4 length, from the IP header. */
static int
ip_lengths(const uint8_t *l3, const struct pa_pkt_meta *meta,
		uint32_t *l3len, uint32_t *l4len)
{
	uint32_t hl = meta->l4_off - meta->l3_off;

	if (meta->flags & PA_PKT_F_IPV4)
		*l3len = get16(l3 + 2);
	else
		*l3len = 40u + get16(l3 + 4);
	if (*l3len < hl)
		return -EINVAL;
	*l4len = *l3len - hl;
	return 0;
}

static void
shift_seq(uint8_t *tcp, uint32_t seq, unsigned int hlen)
{
	lb_csum_apply(tcp + 16, set32(tcp + 4, seq + hlen, 0));
}

static int
insert_hdr(struct lb_proxy_state *ps, struct rte_mbuf *m,
		const struct pa_pkt_meta *meta, uint8_t *tcp,
		const uint8_t *hdr, unsigned int hlen, uint32_t mtu)
{
	uint8_t *base = rte_pktmbuf_mtod(m, uint8_t *);
	uint8_t *l3 = base + meta->l3_off;
	uint32_t doff = (tcp[12] >> 4) * 4u, l3len, l4len, ins, end, move_end;
	uint32_t diff, dl = rte_pktmbuf_data_len(m);
	uint16_t psum = 0, o16, n16;
	bool single = m->nb_segs == 1;

	if (meta->flags & PA_PKT_F_FRAG)
		return -ENOSPC;
	if (!RTE_MBUF_DIRECT(m))
		return -ENOSPC;
	if (ip_lengths(l3, meta, &l3len, &l4len) != 0 || l4len < doff)
		return -EINVAL;
	end = meta->l3_off + l3len;
	if (end > rte_pktmbuf_pkt_len(m) || (single && end > dl))
		return -EINVAL;
	if (l4len + hlen > UINT16_MAX ||
	    ((meta->flags & PA_PKT_F_IPV4) && l3len + hlen > UINT16_MAX) ||
	    (mtu != 0 && l3len + hlen > mtu))
		return -EMSGSIZE;
	ins = meta->l4_off + doff;
	move_end = single ? end : dl;
	if ((uint64_t)move_end + hlen > (uint64_t)dl + rte_pktmbuf_tailroom(m))
		return -ENOSPC;

	/* the payload's words change alignment after an odd insert: its sum
	 * is rotated by 8 bits (multiplied by 2^8 modulo 2^16 - 1) */
	if (hlen & 1)
		psum = lb_csum_mbuf(m, ins, end - ins);

	memmove(base + ins + hlen, base + ins, move_end - ins);
	memcpy(base + ins, hdr, hlen);
	if (single) {
		m->data_len = (uint16_t)(end + hlen);
		m->pkt_len = end + hlen;
	} else {
		m->data_len = (uint16_t)(dl + hlen);
		m->pkt_len += hlen;
	}

	if (meta->flags & PA_PKT_F_IPV4) {
		o16 = rte_cpu_to_be_16((uint16_t)l3len);
		n16 = rte_cpu_to_be_16((uint16_t)(l3len + hlen));
		memcpy(l3 + 2, &n16, 2);
		lb_csum_apply(l3 + 10, lb_csum_add_diff(0, (uint8_t *)&o16,
			(uint8_t *)&n16, 2));
	} else {
		put16(l3 + 4, (uint16_t)(l3len - 40 + hlen));
	}

	/* the pseudo-header's length, the inserted bytes, the payload's
	 * realignment: the checksum stays right, or stays wrong */
	o16 = rte_cpu_to_be_16((uint16_t)l4len);
	n16 = rte_cpu_to_be_16((uint16_t)(l4len + hlen));
	diff = lb_csum_add_diff(0, (uint8_t *)&o16, (uint8_t *)&n16, 2);
	diff += rte_raw_cksum(hdr, hlen);
	if (hlen & 1) {
		diff += (uint16_t)~psum;
		diff += (uint16_t)(psum << 8 | psum >> 8);
	}
	lb_csum_apply(tcp + 16, diff);
	ps->flags |= LB_PROXY_F_SENT;
	return 0;
}

int
lb_proxy_to_backend(struct lb_proxy_state *ps, struct rte_mbuf *m,
		const struct pa_pkt_meta *meta, const uint8_t *hdr,
		unsigned int hlen, uint32_t mtu)
{
	uint8_t *tcp = tcp_hdr_of(m, meta);
	uint32_t seq, l3len, l4len;
	uint8_t fl;
	int32_t d;

	if (tcp == NULL)
		return 0;
	fl = tcp[13];
	seq = get32(tcp + 4);
	if (fl & TCP_SYN) {
		if (hdr == NULL)
			return LB_PROXY_NEED_HDR;
		if (hlen == 0 || hlen > LB_PROXY_MAX)
			return -EINVAL;
		ps->isn1 = seq + 1;
		ps->hlen = (uint8_t)hlen;
		ps->flags = 0;
		/* data on the SYN (Fast Open) starts at isn1 */
		if (ip_lengths(rte_pktmbuf_mtod_offset(m, uint8_t *,
				meta->l3_off), meta, &l3len, &l4len) != 0 ||
		    l4len <= (tcp[12] >> 4) * 4u)
			return 0;
		return insert_hdr(ps, m, meta, tcp, hdr, hlen, mtu);
	}
	if (ps->hlen == 0)
		return 0;
	d = (int32_t)(seq - ps->isn1);
	if (d < 0)
		return 0;
	if (d > 0 || (ps->flags & LB_PROXY_F_ACKED) ||
	    ((fl & TCP_RST) && (ps->flags & LB_PROXY_F_SENT))) {
		shift_seq(tcp, seq, ps->hlen);
		return 0;
	}
	if (fl & TCP_RST)
		return 0;
	if (hdr == NULL)
		return LB_PROXY_NEED_HDR;
	if (hlen != ps->hlen)
		return -EINVAL;
	return insert_hdr(ps, m, meta, tcp, hdr, hlen, mtu);
}

/* ------------------------------------------------------------------ */
/* Backend -> client                                                   */
/* ------------------------------------------------------------------ */

/* A sequence number of the backend's receive space in the client's. */
static inline uint32_t
unshift(const struct lb_proxy_state *ps, uint32_t x)
{
	int32_t d = (int32_t)(x - ps->isn1);

	if (d <= 0)
		return x;
	if (d < ps->hlen)
		return ps->isn1;
	return x - ps->hlen;
}

/* The SACK option at @p o (@p len bytes, well formed): its blocks
 * unshifted; those that become empty (inside the header) removed. */
static void
sack_unshift(const struct lb_proxy_state *ps, uint8_t *o, unsigned int len)
{
	unsigned int nb = (len - 2) / 8, i, out = 0;
	uint32_t l, r, nl, nr;

	for (i = 0; i < nb; i++) {
		l = get32(o + 2 + 8 * i);
		r = get32(o + 6 + 8 * i);
		nl = unshift(ps, l);
		nr = unshift(ps, r);
		if ((int32_t)(nr - nl) <= 0 && (int32_t)(r - l) > 0)
			continue;
		put32(o + 2 + 8 * out, nl);
		put32(o + 6 + 8 * out, nr);
		out++;
	}
	if (out == nb)
		return;
	if (out == 0) {
		memset(o, TCPOPT_NOP, len);
		return;
	}
	o[1] = (uint8_t)(2 + 8 * out);
	memset(o + 2 + 8 * out, TCPOPT_NOP, 8 * (nb - out));
}

static void
mss_lower(const struct lb_proxy_state *ps, uint8_t *o)
{
	uint16_t mss = get16(o + 2);

	if (mss <= MSS_FLOOR)
		return;
	mss = mss > ps->hlen + MSS_FLOOR ? (uint16_t)(mss - ps->hlen) :
		MSS_FLOOR;
	put16(o + 2, mss);
}

/* The options, as far as they are well formed; the checksum diff of what
 * changed added to @p diff. @return whether something changed. */
static bool
options_unshift(const struct lb_proxy_state *ps, uint8_t *tcp,
		unsigned int doff, uint8_t fl, uint32_t *diff)
{
	uint8_t old[TCP_OPT_MAX];
	unsigned int i = TCP_HDR_MIN, olen, n = doff - TCP_HDR_MIN;

	memcpy(old, tcp + TCP_HDR_MIN, n);
	while (i < doff) {
		if (tcp[i] == TCPOPT_EOL)
			break;
		if (tcp[i] == TCPOPT_NOP) {
			i++;
			continue;
		}
		if (i + 1 >= doff)
			break;
		olen = tcp[i + 1];
		if (olen < 2 || i + olen > doff)
			break;
		if (tcp[i] == TCPOPT_MSS && olen == 4 &&
		    (fl & (TCP_SYN | TCP_ACK)) == (TCP_SYN | TCP_ACK))
			mss_lower(ps, tcp + i);
		else if (tcp[i] == TCPOPT_SACK && (fl & TCP_ACK) &&
			 olen >= 10 && (olen - 2) % 8 == 0)
			sack_unshift(ps, tcp + i, olen);
		i += olen;
	}
	if (memcmp(old, tcp + TCP_HDR_MIN, n) == 0)
		return false;
	*diff = lb_csum_add_diff(*diff, old, tcp + TCP_HDR_MIN, n);
	return true;
}

void
lb_proxy_to_client(struct lb_proxy_state *ps, struct rte_mbuf *m,
		const struct pa_pkt_meta *meta)
{
	uint8_t *tcp;
	unsigned int doff;
	uint32_t ack, nack, diff = 0;
	bool changed = false;
	uint8_t fl;

	if (ps->hlen == 0)
		return;
	tcp = tcp_hdr_of(m, meta);
	if (tcp == NULL)
		return;
	fl = tcp[13];
	doff = (tcp[12] >> 4) * 4u;
	if (fl & TCP_ACK) {
		ack = get32(tcp + 8);
		if ((int32_t)(ack - ps->isn1) >= (int32_t)ps->hlen)
			ps->flags |= LB_PROXY_F_ACKED;
		nack = unshift(ps, ack);
		if (nack != ack) {
			diff = set32(tcp + 8, nack, diff);
			changed = true;
		}
	}
	if (doff > TCP_HDR_MIN && options_unshift(ps, tcp, doff, fl, &diff))
		changed = true;
	if (changed)
		lb_csum_apply(tcp + 16, diff);
}
