/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The unit suites' frame builder (pa_test_frame.h): headers appended into
 * a byte array, lengths and checksums filled from what was built.
 */

#include <stdlib.h>
#include <string.h>

#include <netinet/in.h>

#include <check.h>

#include "pa_test_frame.h"

uint8_t *
pa_test_frame_grow(struct pa_test_frame *f, uint32_t n)
{
	uint8_t *p;

	/* not ck_assert: it records its location even when it holds */
	if (f->len + n > PA_TEST_FRAME_MAX)
		ck_abort_msg("frame of %u + %u bytes: more than %u", f->len, n,
			PA_TEST_FRAME_MAX);
	p = f->b + f->len;
	memset(p, 0, n);
	f->len += n;
	return p;
}

void
pa_test_frame_l2(struct pa_test_frame *f, const uint8_t dst[6],
		const uint8_t src[6], unsigned int ntags, const uint16_t *tpids,
		uint16_t tci, uint16_t etype)
{
	uint8_t *p;
	unsigned int i;

	memset(f, 0, sizeof(*f));
	f->l3 = -1;
	f->l4 = -1;
	p = pa_test_frame_grow(f, 12);
	memcpy(p, dst, 6);
	memcpy(p + 6, src, 6);
	for (i = 0; i < ntags; i++) {
		p = pa_test_frame_grow(f, 4);
		pa_test_put16(p, tpids[i]);
		pa_test_put16(p + 2, (uint16_t)(tci + i));
	}
	pa_test_put16(pa_test_frame_grow(f, 2), etype);
}

void
pa_test_frame_ipv4(struct pa_test_frame *f, const uint8_t src[4],
		const uint8_t dst[4], uint8_t proto, uint8_t tos, unsigned int ihl,
		uint16_t frag, uint16_t id, uint8_t ttl)
{
	unsigned int hl = ihl < 5 ? 20 : ihl * 4;
	uint8_t *p;

	f->l3 = (int)f->len;
	f->ver = 4;
	p = pa_test_frame_grow(f, hl);
	p[0] = (uint8_t)(0x40 | (ihl & 0xf));
	p[1] = tos;
	pa_test_put16(p + 4, id);
	pa_test_put16(p + 6, frag);
	p[8] = ttl;
	p[9] = proto;
	memcpy(p + 12, src, 4);
	memcpy(p + 16, dst, 4);
	if (hl > 20)
		memset(p + 20, 1, hl - 20);
	f->l4_proto = proto;
	f->frag = (frag & 0x3fff) != 0;
}

void
pa_test_frame_ipv6(struct pa_test_frame *f, const uint8_t src[16],
		const uint8_t dst[16], uint8_t nh, uint8_t tc, uint32_t flow,
		uint8_t hlim)
{
	uint8_t *p;

	f->l3 = (int)f->len;
	f->ver = 6;
	p = pa_test_frame_grow(f, 40);
	pa_test_put32(p, 6u << 28 | (uint32_t)tc << 20 | (flow & 0xfffff));
	p[6] = nh;
	p[7] = hlim;
	memcpy(p + 8, src, 16);
	memcpy(p + 24, dst, 16);
	f->l4_proto = nh;
}

void
pa_test_frame_quote(struct pa_test_frame *f, int ver, uint8_t proto,
		const uint8_t *src, const uint8_t *dst)
{
	uint8_t *p = pa_test_frame_grow(f, (ver == 4 ? 20u : 40u) + 8u);

	if (ver == 4) {
		p[0] = 0x45;
		pa_test_put16(p + 2, 1500);
		p[8] = 63;
		p[9] = proto;
		memcpy(p + 12, src, 4);
		memcpy(p + 16, dst, 4);
		pa_test_put16(p + 10, pa_test_ip4_csum(p));
	} else {
		pa_test_put32(p, 6u << 28);
		pa_test_put16(p + 4, 1500 - 40);
		p[6] = proto;
		p[7] = 63;
		memcpy(p + 8, src, 16);
		memcpy(p + 24, dst, 16);
	}
}

void
pa_test_frame_ext(struct pa_test_frame *f, uint8_t type, uint8_t nh,
		unsigned int len)
{
	uint8_t *p = pa_test_frame_grow(f, len);

	p[0] = nh;
	if (type == IPPROTO_AH)
		p[1] = (uint8_t)(len / 4 - 2);
	else
		p[1] = (uint8_t)(len / 8 - 1);
	f->l4_proto = nh;
}

void
pa_test_frame_frag6(struct pa_test_frame *f, uint8_t nh, uint16_t offset,
		bool more, uint32_t ident)
{
	uint8_t *p = pa_test_frame_grow(f, 8);

	p[0] = nh;
	pa_test_put16(p + 2, (uint16_t)(offset << 3 | (more ? 1 : 0)));
	pa_test_put32(p + 4, ident);
	f->l4_proto = nh;
	f->frag = true;
}

void
pa_test_frame_tcp(struct pa_test_frame *f, uint16_t sport, uint16_t dport,
		unsigned int doff, uint8_t flags, uint32_t seq, uint16_t window)
{
	unsigned int hl = doff < 5 ? 20 : doff * 4;
	uint8_t *p;

	f->l4 = (int)f->len;
	p = pa_test_frame_grow(f, hl);
	pa_test_put16(p, sport);
	pa_test_put16(p + 2, dport);
	pa_test_put32(p + 4, seq);
	p[12] = (uint8_t)((doff & 0xf) << 4);
	p[13] = flags;
	pa_test_put16(p + 14, window);
}

void
pa_test_frame_udp(struct pa_test_frame *f, uint16_t sport, uint16_t dport)
{
	uint8_t *p;

	f->l4 = (int)f->len;
	p = pa_test_frame_grow(f, 8);
	pa_test_put16(p, sport);
	pa_test_put16(p + 2, dport);
}

void
pa_test_frame_sctp(struct pa_test_frame *f, uint16_t sport, uint16_t dport)
{
	uint8_t *p;

	f->l4 = (int)f->len;
	p = pa_test_frame_grow(f, 12);
	pa_test_put16(p, sport);
	pa_test_put16(p + 2, dport);
}

void
pa_test_frame_icmp(struct pa_test_frame *f, uint8_t type, uint16_t ident)
{
	uint8_t *p;

	f->l4 = (int)f->len;
	p = pa_test_frame_grow(f, 8);
	p[0] = type;
	pa_test_put16(p + 4, ident);
}

void
pa_test_frame_payload(struct pa_test_frame *f, unsigned int n, uint8_t seed,
		uint8_t step)
{
	uint8_t *p = pa_test_frame_grow(f, n);
	unsigned int i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(seed + i * step);
}

void
pa_test_frame_payload16(struct pa_test_frame *f, unsigned int n,
		uint16_t word)
{
	uint8_t *p = pa_test_frame_grow(f, n);
	unsigned int i;

	for (i = 0; i + 1 < n; i += 2)
		pa_test_put16(p + i, word);
}

void
pa_test_frame_fix(struct pa_test_frame *f, unsigned int flags)
{
	uint8_t *l3 = f->b + f->l3;
	uint8_t *l4 = f->b + f->l4;

	if (f->ver == 4)
		pa_test_put16(l3 + 2, (uint16_t)(f->len - (uint32_t)f->l3));
	else if (f->ver == 6)
		pa_test_put16(l3 + 4,
			(uint16_t)(f->len - (uint32_t)f->l3 - 40));
	if (f->l4 >= 0 && f->l4_proto == IPPROTO_UDP)
		pa_test_put16(l4 + 4, (uint16_t)(f->len - (uint32_t)f->l4));
	if ((flags & PA_TEST_FIX_L4_CSUM) && f->l4 >= 0 && !f->frag &&
	    (f->l4_proto == IPPROTO_TCP || f->l4_proto == IPPROTO_UDP) &&
	    !(f->ver == 4 && f->udp_no_csum))
		pa_test_put16(l4 + (f->l4_proto == IPPROTO_TCP ? 16 : 6),
			pa_test_l4_csum(l3));
	if ((flags & PA_TEST_FIX_IP4_CSUM) && f->ver == 4)
		pa_test_put16(l3 + 10, pa_test_ip4_csum(l3));
}

void
pa_test_frame_pad(struct pa_test_frame *f, uint32_t total)
{
	if (f->len < total)
		pa_test_frame_grow(f, total - f->len);
}

void
pa_test_frame_set_ports(struct pa_test_frame *f, uint16_t sport,
		uint16_t dport)
{
	pa_test_put16(f->b + f->l4, sport);
	pa_test_put16(f->b + f->l4 + 2, dport);
}

uint32_t
pa_test_sum16(const uint8_t *p, size_t n, uint32_t s)
{
	size_t i;

	for (i = 0; i + 1 < n; i += 2)
		s += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (n & 1)
		s += (uint32_t)p[n - 1] << 8;
	return s;
}

uint16_t
pa_test_csum_fold(uint32_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

uint16_t
pa_test_ip4_csum(const uint8_t *l3)
{
	uint8_t h[60];
	unsigned int hl = (l3[0] & 0xf) * 4u;

	memcpy(h, l3, hl);
	h[10] = h[11] = 0;
	return pa_test_csum_fold(pa_test_sum16(h, hl, 0));
}

uint16_t
pa_test_l4_csum(const uint8_t *l3)
{
	uint8_t seg[PA_TEST_FRAME_MAX];
	const uint8_t *l4;
	uint32_t s, len;
	uint8_t proto;
	uint16_t c;

	if ((l3[0] >> 4) == 4) {
		unsigned int hl = (l3[0] & 0xf) * 4u;

		proto = l3[9];
		len = pa_test_get16(l3 + 2) - hl;
		l4 = l3 + hl;
		s = pa_test_sum16(l3 + 12, 8, 0);
	} else {
		proto = l3[6];
		len = pa_test_get16(l3 + 4);
		l4 = l3 + 40;
		s = pa_test_sum16(l3 + 8, 32, 0);
	}
	s += proto;
	s += len >> 16;
	s += len & 0xffff;
	if (len > sizeof(seg))
		ck_abort_msg("L4 segment of %u bytes: more than %zu", len,
			sizeof(seg));
	memcpy(seg, l4, len);
	if (proto == IPPROTO_TCP)
		seg[16] = seg[17] = 0;
	else
		seg[6] = seg[7] = 0;
	c = pa_test_csum_fold(pa_test_sum16(seg, len, s));
	if (proto == IPPROTO_UDP && c == 0)
		c = 0xffff;
	return c;
}

char *
pa_test_dq(const char *s)
{
	char *d = strdup(s), *p;

	ck_assert_ptr_nonnull(d);
	for (p = d; *p != '\0'; p++)
		if (*p == '\'')
			*p = '"';
	return d;
}
