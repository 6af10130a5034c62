/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of lib/lb/lb_proxy.c: the PROXY protocol headers checked
 * byte for byte against the layout of haproxy.org's proxy-protocol.txt
 * (expected bytes written out by hand), then segments of a full-NAT flow
 * built from bytes, parsed by lib/pkt and passed through
 * lb_proxy_to_backend() / lb_proxy_to_client(): the header inserted at
 * the client's ISN + 1, sequence numbers, acknowledgements and SACK
 * blocks shifted, the SYN-ACK's MSS lowered, wrap-around, and the
 * refusals. Every result is compared with a frame built independently
 * (checksums by a full recomputation) and its TCP checksum recomputed.
 * Last, random segments (well formed or not, either direction): their
 * checksums and lengths stay right, a refused one is left unchanged.
 *
 * Its own executable (one EAL, --no-huge, for the mbufs); lb_proxy.c
 * needs nothing else of lib/lb.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <netinet/in.h>

#include <check.h>

#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "lb_proxy.h"
#include "pa_pkt.h"
#include "pa_test_frame.h"
#include "pa_test_main.h"

#define TCP_FIN		0x01
#define TCP_SYN		0x02
#define TCP_RST		0x04
#define TCP_PSH		0x08
#define TCP_ACK		0x10

#define IP4_DF		0x4000

#define ISN		1000u
#define ISN1		(ISN + 1)

static struct rte_mempool *pool;

static const uint8_t mac_a[6] = { 0x02, 0, 0, 0, 0, 0x0a };
static const uint8_t mac_b[6] = { 0x02, 0, 0, 0, 0, 0x0b };

/* the client and the VIP it connects to (what the header says) */
static const uint8_t client4[4] = { 192, 0, 2, 33 };
static const uint8_t vip4[4] = { 192, 0, 2, 10 };
static const uint8_t client6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 1,
	[15] = 1 };
static const uint8_t vip6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0xff, 0xff,
	[15] = 0x40 };
/* the backend side after the full-NAT rewrite: pool -> backend */
static const uint8_t pool4[4] = { 198, 51, 100, 50 };
static const uint8_t backend4[4] = { 10, 1, 0, 7 };
static const uint8_t pool6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 5,
	[15] = 0x50 };
static const uint8_t backend6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 7,
	[15] = 7 };

#define CPORT		40000
#define VPORT		80
#define PPORT		1024
#define BPORT		8443

/* The v1 header of client4:CPORT -> vip4:VPORT: 43 bytes, odd, so the
 * payload after it changes alignment (the checksum's hard case). */
static const char hdr1_4[] = "PROXY TCP4 192.0.2.33 192.0.2.10 40000 80\r\n";
#define HLEN1_4		(sizeof(hdr1_4) - 1)

static const uint8_t http_get[] = "GET / HTTP/1.0\r\nHost: x\r\n\r\n";
#define GET_LEN		(sizeof(http_get) - 1)

/* ------------------------------------------------------------------ */
/* Frames                                                              */
/* ------------------------------------------------------------------ */

struct seg {
	int ver;			/* 4 or 6 */
	bool to_backend;		/* pool -> backend, else VIP -> client */
	uint8_t flags;
	uint32_t seq;
	uint32_t ack;
	const uint8_t *opt;		/* TCP options, a multiple of 4 bytes */
	unsigned int optlen;
	const uint8_t *pre;		/* payload: pre (the header) ... */
	unsigned int prelen;
	const uint8_t *data;		/* ... then data */
	unsigned int dlen;
};

static void
frame(struct pa_test_frame *f, const struct seg *s)
{
	uint8_t *p;

	pa_test_frame_l2(f, mac_b, mac_a, 0, NULL, 0,
		s->ver == 4 ? 0x0800 : 0x86dd);
	if (s->ver == 4)
		pa_test_frame_ipv4(f, s->to_backend ? pool4 : vip4,
			s->to_backend ? backend4 : client4, IPPROTO_TCP, 0, 5,
			IP4_DF, 7, 64);
	else
		pa_test_frame_ipv6(f, s->to_backend ? pool6 : vip6,
			s->to_backend ? backend6 : client6, IPPROTO_TCP, 0, 0,
			64);
	ck_assert_uint_eq(s->optlen % 4, 0);
	pa_test_frame_tcp(f, s->to_backend ? PPORT : VPORT,
		s->to_backend ? BPORT : CPORT, 5 + s->optlen / 4, s->flags,
		s->seq, 29200);
	pa_test_put32(f->b + f->l4 + 8, s->ack);
	if (s->optlen != 0)
		memcpy(f->b + f->l4 + 20, s->opt, s->optlen);
	if (s->prelen != 0) {
		p = pa_test_frame_grow(f, s->prelen);
		memcpy(p, s->pre, s->prelen);
	}
	if (s->dlen != 0) {
		p = pa_test_frame_grow(f, s->dlen);
		memcpy(p, s->data, s->dlen);
	}
	pa_test_frame_fix(f, PA_TEST_FIX_IP4_CSUM | PA_TEST_FIX_L4_CSUM);
}

/* @p f in one mbuf with @p tailroom bytes after it (0: as allocated),
 * parsed into @p meta. */
static struct rte_mbuf *
mbuf_room(const struct pa_test_frame *f, struct pa_pkt_meta *meta,
		uint16_t tailroom)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	uint8_t *p;

	ck_assert_ptr_nonnull(m);
	if (tailroom != 0)
		m->data_off = (uint16_t)(m->buf_len - f->len - tailroom);
	p = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)f->len);
	ck_assert_ptr_nonnull(p);
	memcpy(p, f->b, f->len);
	ck_assert_int_eq(pa_pkt_parse(p, f->len, f->len, meta), PA_PKT_OK);
	ck_assert(meta->flags & PA_PKT_F_L4);
	return m;
}

static struct rte_mbuf *
mbuf_of(const struct pa_test_frame *f, struct pa_pkt_meta *meta)
{
	return mbuf_room(f, meta, 0);
}

/* @p m holds exactly @p want's bytes, and its checksums are what a full
 * recomputation gives. */
static void
frame_is(const struct rte_mbuf *m, const struct pa_test_frame *want)
{
	uint8_t buf[PA_TEST_FRAME_MAX];
	const uint8_t *p, *l3;

	ck_assert_uint_eq(rte_pktmbuf_pkt_len(m), want->len);
	p = rte_pktmbuf_read(m, 0, want->len, buf);
	ck_assert_ptr_nonnull(p);
	ck_assert_mem_eq(p, want->b, want->len);
	l3 = p + want->l3;
	ck_assert_uint_eq(pa_test_get16(p + want->l4 + 16),
		pa_test_l4_csum(l3));
	if (want->ver == 4)
		ck_assert_uint_eq(pa_test_get16(l3 + 10),
			pa_test_ip4_csum(l3));
}

/* The segment @p s through lb_proxy_to_backend() the way the data path
 * calls it: without the header first, with it when asked. @p asked: set
 * to whether it was. */
static int
to_backend(struct lb_proxy_state *ps, const struct seg *s, uint32_t mtu,
		struct rte_mbuf **mp, bool *asked)
{
	struct pa_test_frame f;
	struct pa_pkt_meta meta;
	struct rte_mbuf *m;
	int rc;

	frame(&f, s);
	m = mbuf_of(&f, &meta);
	rc = lb_proxy_to_backend(ps, m, &meta, NULL, 0, mtu);
	*asked = rc == LB_PROXY_NEED_HDR;
	if (*asked)
		rc = lb_proxy_to_backend(ps, m, &meta,
			(const uint8_t *)hdr1_4, HLEN1_4, mtu);
	*mp = m;
	return rc;
}

/* @p s to the backend: it gives 0 (asking for the header as
 * @p asks says) and the frame @p want. */
static void
backend_gets(struct lb_proxy_state *ps, const struct seg *s, bool asks,
		const struct seg *want)
{
	struct pa_test_frame wf;
	struct rte_mbuf *m;
	bool asked;

	ck_assert_int_eq(to_backend(ps, s, 0, &m, &asked), 0);
	ck_assert_int_eq(asked, asks);
	frame(&wf, want);
	frame_is(m, &wf);
	rte_pktmbuf_free(m);
}

/* @p s to the client gives the frame @p want. */
static void
client_gets(struct lb_proxy_state *ps, const struct seg *s,
		const struct seg *want)
{
	struct pa_test_frame f, wf;
	struct pa_pkt_meta meta;
	struct rte_mbuf *m;

	frame(&f, s);
	m = mbuf_of(&f, &meta);
	lb_proxy_to_client(ps, m, &meta);
	frame(&wf, want);
	frame_is(m, &wf);
	rte_pktmbuf_free(m);
}

/* A flow whose client SYN (ISN) has been through, IPv4, the v1 header. */
static void
flow_syn(struct lb_proxy_state *ps)
{
	const struct seg syn = { .ver = 4, .to_backend = true,
		.flags = TCP_SYN, .seq = ISN };

	memset(ps, 0, sizeof(*ps));
	backend_gets(ps, &syn, true, &syn);
	ck_assert_uint_eq(ps->isn1, ISN1);
	ck_assert_uint_eq(ps->hlen, HLEN1_4);
	ck_assert_uint_eq(ps->flags, 0);
}

/* The backend acknowledges @p ack (backend space); the client sees
 * @p seen. */
static void
backend_acks(struct lb_proxy_state *ps, uint32_t ack, uint32_t seen)
{
	const struct seg s = { .ver = 4, .flags = TCP_ACK, .seq = 7000,
		.ack = ack };
	const struct seg w = { .ver = 4, .flags = TCP_ACK, .seq = 7000,
		.ack = seen };

	client_gets(ps, &s, &w);
}

/* ------------------------------------------------------------------ */
/* The headers                                                         */
/* ------------------------------------------------------------------ */

START_TEST(build_v1_ipv4_is_the_spec_line)
{
	static const char want[] = "PROXY TCP4 192.0.2.1 192.0.2.10 40000 80\r\n";
	static const uint8_t c[4] = { 192, 0, 2, 1 };
	static const uint8_t d[4] = { 10, 0, 0, 255 };
	static const uint8_t ones[4] = { 255, 255, 255, 255 };
	uint8_t b[LB_PROXY_MAX + 8];
	unsigned int n;

	memset(b, 0xee, sizeof(b));
	n = lb_proxy_build(b, PA_LB_PROXY_V1, 4, c, vip4, htons(CPORT),
		htons(VPORT));
	ck_assert_uint_eq(n, sizeof(want) - 1);
	ck_assert_mem_eq(b, want, n);
	ck_assert_uint_eq(b[n], 0xee);		/* nothing written past it */

	/* no leading zeros, ports 0 and 65535, longest IPv4 line 56 */
	n = lb_proxy_build(b, PA_LB_PROXY_V1, 4, d, c, htons(0), htons(65535));
	ck_assert_uint_eq(n, 41);
	ck_assert_mem_eq(b, "PROXY TCP4 10.0.0.255 192.0.2.1 0 65535\r\n", n);
	n = lb_proxy_build(b, PA_LB_PROXY_V1, 4, ones, ones, 0xffff, 0xffff);
	ck_assert_uint_eq(n, 56);
	ck_assert_mem_eq(b,
		"PROXY TCP4 255.255.255.255 255.255.255.255 65535 65535\r\n",
		n);
}
END_TEST

START_TEST(build_v1_ipv6_is_rfc5952_text)
{
	static const struct {
		uint8_t a[16];
		const char *text;
	} c[] = {
		{ { 0 }, "::" },
		{ { [15] = 1 }, "::1" },
		{ { 0, 1 }, "1::" },
		/* longest run compressed; a single zero group is not */
		{ { 0xfe, 0x80, [9] = 1, [15] = 1 }, "fe80::1:0:0:1" },
		{ { 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1 },
		  "2001:db8:0:1:1:1:1:1" },
		{ { 0x20, 0x01, [7] = 1, [15] = 1 }, "2001:0:0:1::1" },
		/* equal runs: the first */
		{ { 0, 1, [7] = 1, [13] = 1, [15] = 1 }, "1::1:0:0:1:1" },
		/* IPv4-mapped: hexadecimal groups, never dotted */
		{ { [10] = 0xff, [11] = 0xff, 192, 0, 2, 1 },
		  "::ffff:c000:201" },
		{ { 0x0a, 0xbc, 0x00, 0x0d, 0xef, 0x01, 0x23, 0x45, 0x67, 0x89,
		    0xab, 0xcd, 0xef, 0x00, 0x00, 0x10 },
		  "abc:d:ef01:2345:6789:abcd:ef00:10" },
	};
	uint8_t b[LB_PROXY_MAX];
	char want[LB_PROXY_MAX + 1];
	unsigned int i, n;

	n = lb_proxy_build(b, PA_LB_PROXY_V1, 6, client6, vip6, htons(CPORT),
		htons(443));
	ck_assert_uint_eq(n, 54);
	ck_assert_mem_eq(b,
		"PROXY TCP6 2001:db8:1::1 2001:db8:ffff::40 40000 443\r\n", n);
	for (i = 0; i < RTE_DIM(c); i++) {
		n = lb_proxy_build(b, PA_LB_PROXY_V1, 6, c[i].a, vip6,
			htons(1), htons(2));
		snprintf(want, sizeof(want), "PROXY TCP6 %s 2001:db8:ffff::40 1 2\r\n",
			c[i].text);
		ck_assert_msg(n == strlen(want) && memcmp(b, want, n) == 0,
			"case %u: got '%.*s', want '%s'", i, (int)n,
			(const char *)b, want);
	}
}
END_TEST

START_TEST(build_v1_longest_is_lb_proxy_max)
{
	uint8_t a[16], b[LB_PROXY_MAX + 1];
	unsigned int n;

	memset(a, 0xff, sizeof(a));
	b[LB_PROXY_MAX] = 0xee;
	n = lb_proxy_build(b, PA_LB_PROXY_V1, 6, a, a, 0xffff, 0xffff);
	ck_assert_uint_eq(n, 104);
	ck_assert_uint_eq(n, LB_PROXY_MAX);
	ck_assert_mem_eq(b, "PROXY TCP6 ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff "
		"ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff 65535 65535\r\n", n);
	ck_assert_uint_eq(b[LB_PROXY_MAX], 0xee);
}
END_TEST

START_TEST(build_v2_ipv4_is_the_spec_layout)
{
	static const uint8_t want[28] = {
		/* signature */
		0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49,
		0x54, 0x0a,
		0x21,			/* version 2, command PROXY */
		0x11,			/* AF_INET, STREAM */
		0x00, 0x0c,		/* 12 address bytes */
		192, 0, 2, 33,		/* source */
		192, 0, 2, 10,		/* destination */
		0x9c, 0x40,		/* 40000 */
		0x00, 0x50,		/* 80 */
	};
	uint8_t b[LB_PROXY_MAX];

	ck_assert_uint_eq(lb_proxy_build(b, PA_LB_PROXY_V2, 4, client4, vip4,
		htons(CPORT), htons(VPORT)), sizeof(want));
	ck_assert_mem_eq(b, want, sizeof(want));
}
END_TEST

START_TEST(build_v2_ipv6_is_the_spec_layout)
{
	static const uint8_t want[52] = {
		0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49,
		0x54, 0x0a,
		0x21,			/* version 2, command PROXY */
		0x21,			/* AF_INET6, STREAM */
		0x00, 0x24,		/* 36 address bytes */
		0x20, 0x01, 0x0d, 0xb8, 0x00, 0x01, 0, 0, 0, 0, 0, 0, 0, 0,
		0, 0x01,		/* 2001:db8:1::1 */
		0x20, 0x01, 0x0d, 0xb8, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0,
		0, 0x40,		/* 2001:db8:ffff::40 */
		0x9c, 0x40,		/* 40000 */
		0x01, 0xbb,		/* 443 */
	};
	uint8_t b[LB_PROXY_MAX];

	ck_assert_uint_eq(lb_proxy_build(b, PA_LB_PROXY_V2, 6, client6, vip6,
		htons(CPORT), htons(443)), sizeof(want));
	ck_assert_mem_eq(b, want, sizeof(want));
}
END_TEST

START_TEST(build_refuses_none_and_unknown_families)
{
	uint8_t b[LB_PROXY_MAX];

	ck_assert_uint_eq(lb_proxy_build(b, PA_LB_PROXY_NONE, 4, client4,
		vip4, 1, 2), 0);
	ck_assert_uint_eq(lb_proxy_build(b, PA_LB_PROXY_V1, 0, client4,
		vip4, 1, 2), 0);
	ck_assert_uint_eq(lb_proxy_build(b, PA_LB_PROXY_V2, 5, client4,
		vip4, 1, 2), 0);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Client -> backend                                                   */
/* ------------------------------------------------------------------ */

START_TEST(syn_sets_the_state_and_passes_unchanged)
{
	struct lb_proxy_state ps;
	const uint8_t mss[4] = { 2, 4, 0x05, 0xb4 };
	const struct seg syn = { .ver = 4, .to_backend = true,
		.flags = TCP_SYN, .seq = ISN, .opt = mss, .optlen = 4 };

	memset(&ps, 0, sizeof(ps));
	backend_gets(&ps, &syn, true, &syn);	/* its MSS left alone too */
	ck_assert_uint_eq(ps.isn1, ISN1);
	ck_assert_uint_eq(ps.hlen, HLEN1_4);
	/* a retransmitted SYN: the same */
	ps.flags = LB_PROXY_F_SENT;
	backend_gets(&ps, &syn, true, &syn);
	ck_assert_uint_eq(ps.isn1, ISN1);
	ck_assert_uint_eq(ps.flags, 0);
}
END_TEST

START_TEST(nothing_is_done_before_a_syn)
{
	struct lb_proxy_state ps;
	const struct seg s = { .ver = 4, .to_backend = true,
		.flags = TCP_ACK | TCP_PSH, .seq = ISN1, .data = http_get,
		.dlen = GET_LEN };
	const struct seg r = { .ver = 4, .flags = TCP_ACK, .seq = 7000,
		.ack = ISN1 + 500 };

	memset(&ps, 0, sizeof(ps));
	backend_gets(&ps, &s, false, &s);
	client_gets(&ps, &r, &r);
	ck_assert_uint_eq(ps.flags, 0);
}
END_TEST

START_TEST(final_ack_of_the_handshake_carries_the_header)
{
	struct lb_proxy_state ps;
	const struct seg ack = { .ver = 4, .to_backend = true,
		.flags = TCP_ACK, .seq = ISN1, .ack = 5001 };
	const struct seg want = { .ver = 4, .to_backend = true,
		.flags = TCP_ACK, .seq = ISN1, .ack = 5001,
		.pre = (const uint8_t *)hdr1_4, .prelen = HLEN1_4 };

	flow_syn(&ps);
	backend_gets(&ps, &ack, true, &want);
	ck_assert_uint_eq(ps.flags, LB_PROXY_F_SENT);
}
END_TEST

START_TEST(first_data_segment_gets_the_header_before_its_payload)
{
	struct lb_proxy_state ps;
	const struct seg d = { .ver = 4, .to_backend = true,
		.flags = TCP_ACK | TCP_PSH, .seq = ISN1, .ack = 5001,
		.data = http_get, .dlen = GET_LEN };
	const struct seg want = { .ver = 4, .to_backend = true,
		.flags = TCP_ACK | TCP_PSH, .seq = ISN1, .ack = 5001,
		.pre = (const uint8_t *)hdr1_4, .prelen = HLEN1_4,
		.data = http_get, .dlen = GET_LEN };

	flow_syn(&ps);
	backend_gets(&ps, &d, true, &want);
	/* lost: the retransmission gets the header again */
	backend_gets(&ps, &d, true, &want);
	/* the backend acknowledged the header only: still again */
	backend_acks(&ps, ISN1 + 10, ISN1);
	ck_assert_uint_eq(ps.flags, LB_PROXY_F_SENT);
	backend_gets(&ps, &d, true, &want);
}
END_TEST

START_TEST(first_data_segment_of_ipv6_gets_a_v2_header)
{
	struct lb_proxy_state ps;
	uint8_t hdr[LB_PROXY_MAX];
	unsigned int hlen;
	struct pa_test_frame f, wf;
	struct pa_pkt_meta meta;
	struct rte_mbuf *m;
	const struct seg syn = { .ver = 6, .to_backend = true,
		.flags = TCP_SYN, .seq = ISN };
	struct seg d = { .ver = 6, .to_backend = true,
		.flags = TCP_ACK | TCP_PSH, .seq = ISN1, .ack = 5001,
		.data = http_get, .dlen = GET_LEN };
	struct seg want = d;

	hlen = lb_proxy_build(hdr, PA_LB_PROXY_V2, 6, client6, vip6,
		htons(CPORT), htons(443));
	ck_assert_uint_eq(hlen, 52);
	memset(&ps, 0, sizeof(ps));
	frame(&f, &syn);
	m = mbuf_of(&f, &meta);
	ck_assert_int_eq(lb_proxy_to_backend(&ps, m, &meta, hdr, hlen, 0), 0);
	rte_pktmbuf_free(m);

	frame(&f, &d);
	m = mbuf_of(&f, &meta);
	ck_assert_int_eq(lb_proxy_to_backend(&ps, m, &meta, NULL, 0, 0),
		LB_PROXY_NEED_HDR);
	ck_assert_int_eq(lb_proxy_to_backend(&ps, m, &meta, hdr, hlen, 0), 0);
	want.pre = hdr;
	want.prelen = hlen;
	frame(&wf, &want);
	frame_is(m, &wf);
	rte_pktmbuf_free(m);
}
END_TEST

START_TEST(later_segments_are_shifted_by_the_header)
{
	struct lb_proxy_state ps;
	const struct seg d = { .ver = 4, .to_backend = true,
		.flags = TCP_ACK, .seq = ISN1 + GET_LEN, .ack = 5001,
		.data = http_get, .dlen = GET_LEN };
	const struct seg wd = { .ver = 4, .to_backend = true,
		.flags = TCP_ACK, .seq = ISN1 + GET_LEN + HLEN1_4, .ack = 5001,
		.data = http_get, .dlen = GET_LEN };
	const struct seg fin = { .ver = 4, .to_backend = true,
		.flags = TCP_ACK | TCP_FIN, .seq = ISN1 + 2 * GET_LEN,
		.ack = 5001 };
	const struct seg wfin = { .ver = 4, .to_backend = true,
		.flags = TCP_ACK | TCP_FIN,
		.seq = ISN1 + 2 * GET_LEN + HLEN1_4, .ack = 5001 };
	const struct seg rst = { .ver = 4, .to_backend = true,
		.flags = TCP_RST, .seq = ISN1 + 2 * GET_LEN + 1 };
	const struct seg wrst = { .ver = 4, .to_backend = true,
		.flags = TCP_RST, .seq = ISN1 + 2 * GET_LEN + 1 + HLEN1_4 };
	/* a keepalive before isn1: left alone */
	const struct seg ka = { .ver = 4, .to_backend = true,
		.flags = TCP_ACK, .seq = ISN1 - 1, .ack = 5001 };

	flow_syn(&ps);
	backend_gets(&ps, &d, false, &wd);
	backend_gets(&ps, &fin, false, &wfin);
	backend_gets(&ps, &rst, false, &wrst);
	backend_gets(&ps, &ka, false, &ka);
}
END_TEST

START_TEST(after_the_ack_of_the_header_isn1_is_only_shifted)
{
	struct lb_proxy_state ps;
	const struct seg d = { .ver = 4, .to_backend = true,
		.flags = TCP_ACK | TCP_PSH, .seq = ISN1, .ack = 5001,
		.data = http_get, .dlen = GET_LEN };
	const struct seg wd = { .ver = 4, .to_backend = true,
		.flags = TCP_ACK | TCP_PSH, .seq = ISN1 + HLEN1_4, .ack = 5001,
		.data = http_get, .dlen = GET_LEN };
	const struct seg w_ins = { .ver = 4, .to_backend = true,
		.flags = TCP_ACK | TCP_PSH, .seq = ISN1, .ack = 5001,
		.pre = (const uint8_t *)hdr1_4, .prelen = HLEN1_4,
		.data = http_get, .dlen = GET_LEN };

	flow_syn(&ps);
	backend_gets(&ps, &d, true, &w_ins);
	/* header and data acknowledged; a late retransmission: shifted */
	backend_acks(&ps, ISN1 + HLEN1_4 + GET_LEN, ISN1 + GET_LEN);
	ck_assert_uint_eq(ps.flags, LB_PROXY_F_SENT | LB_PROXY_F_ACKED);
	backend_gets(&ps, &d, false, &wd);
}
END_TEST

START_TEST(server_speaks_first_header_rides_the_acks_at_isn1)
{
	struct lb_proxy_state ps;
	const struct seg ack = { .ver = 4, .to_backend = true,
		.flags = TCP_ACK, .seq = ISN1, .ack = 5001 };
	const struct seg w_ins = { .ver = 4, .to_backend = true,
		.flags = TCP_ACK, .seq = ISN1, .ack = 5001,
		.pre = (const uint8_t *)hdr1_4, .prelen = HLEN1_4 };
	/* the client acknowledges the banner, still at isn1 */
	const struct seg ack2 = { .ver = 4, .to_backend = true,
		.flags = TCP_ACK, .seq = ISN1, .ack = 5101 };
	const struct seg w_ins2 = { .ver = 4, .to_backend = true,
		.flags = TCP_ACK, .seq = ISN1, .ack = 5101,
		.pre = (const uint8_t *)hdr1_4, .prelen = HLEN1_4 };
	const struct seg w_shift2 = { .ver = 4, .to_backend = true,
		.flags = TCP_ACK, .seq = ISN1 + HLEN1_4, .ack = 5101 };
	/* a client that closes at once: its FIN at isn1 */
	const struct seg fin = { .ver = 4, .to_backend = true,
		.flags = TCP_ACK | TCP_FIN, .seq = ISN1, .ack = 5101 };
	const struct seg w_fin = { .ver = 4, .to_backend = true,
		.flags = TCP_ACK | TCP_FIN, .seq = ISN1 + HLEN1_4,
		.ack = 5101 };

	flow_syn(&ps);
	backend_gets(&ps, &ack, true, &w_ins);
	backend_gets(&ps, &ack2, true, &w_ins2);
	/* the banner acknowledges the header */
	backend_acks(&ps, ISN1 + HLEN1_4, ISN1);
	ck_assert(ps.flags & LB_PROXY_F_ACKED);
	backend_gets(&ps, &ack2, false, &w_shift2);
	backend_gets(&ps, &fin, false, &w_fin);
}
END_TEST

START_TEST(fin_before_any_data_carries_the_header)
{
	struct lb_proxy_state ps;
	const struct seg fin = { .ver = 4, .to_backend = true,
		.flags = TCP_ACK | TCP_FIN, .seq = ISN1, .ack = 5001 };
	const struct seg w = { .ver = 4, .to_backend = true,
		.flags = TCP_ACK | TCP_FIN, .seq = ISN1, .ack = 5001,
		.pre = (const uint8_t *)hdr1_4, .prelen = HLEN1_4 };

	flow_syn(&ps);
	backend_gets(&ps, &fin, true, &w);
}
END_TEST

START_TEST(rst_at_isn1_never_carries_the_header)
{
	struct lb_proxy_state ps;
	const struct seg rst = { .ver = 4, .to_backend = true,
		.flags = TCP_RST | TCP_ACK, .seq = ISN1, .ack = 5001 };
	const struct seg wrst = { .ver = 4, .to_backend = true,
		.flags = TCP_RST | TCP_ACK, .seq = ISN1 + HLEN1_4,
		.ack = 5001 };
	const struct seg ack = { .ver = 4, .to_backend = true,
		.flags = TCP_ACK, .seq = ISN1, .ack = 5001 };
	const struct seg w_ins = { .ver = 4, .to_backend = true,
		.flags = TCP_ACK, .seq = ISN1, .ack = 5001,
		.pre = (const uint8_t *)hdr1_4, .prelen = HLEN1_4 };

	flow_syn(&ps);
	/* nothing sent yet: the backend expects isn1 */
	backend_gets(&ps, &rst, false, &rst);
	/* sent: it most likely expects isn1 + hlen */
	backend_gets(&ps, &ack, true, &w_ins);
	backend_gets(&ps, &rst, false, &wrst);
}
END_TEST

START_TEST(syn_with_data_gets_the_header_before_it)
{
	struct lb_proxy_state ps;
	const struct seg syn = { .ver = 4, .to_backend = true,
		.flags = TCP_SYN, .seq = ISN, .data = http_get,
		.dlen = GET_LEN };
	const struct seg w = { .ver = 4, .to_backend = true,
		.flags = TCP_SYN, .seq = ISN,
		.pre = (const uint8_t *)hdr1_4, .prelen = HLEN1_4,
		.data = http_get, .dlen = GET_LEN };

	memset(&ps, 0, sizeof(ps));
	backend_gets(&ps, &syn, true, &w);
	ck_assert_uint_eq(ps.isn1, ISN1);
	ck_assert_uint_eq(ps.flags, LB_PROXY_F_SENT);
}
END_TEST

START_TEST(ethernet_padding_is_dropped_by_the_insert)
{
	struct lb_proxy_state ps;
	struct pa_test_frame f, wf;
	struct pa_pkt_meta meta;
	struct rte_mbuf *m;
	const struct seg ack = { .ver = 4, .to_backend = true,
		.flags = TCP_ACK, .seq = ISN1, .ack = 5001 };
	const struct seg want = { .ver = 4, .to_backend = true,
		.flags = TCP_ACK, .seq = ISN1, .ack = 5001,
		.pre = (const uint8_t *)hdr1_4, .prelen = HLEN1_4 };

	flow_syn(&ps);
	frame(&f, &ack);
	ck_assert_uint_eq(f.len, 54);
	pa_test_frame_pad(&f, 60);
	m = mbuf_of(&f, &meta);
	ck_assert_int_eq(lb_proxy_to_backend(&ps, m, &meta,
		(const uint8_t *)hdr1_4, HLEN1_4, 0), 0);
	frame(&wf, &want);
	frame_is(m, &wf);
	ck_assert_uint_eq(rte_pktmbuf_data_len(m), 54 + HLEN1_4);
	rte_pktmbuf_free(m);
}
END_TEST

START_TEST(chained_mbuf_moves_the_first_segment_only)
{
	struct lb_proxy_state ps;
	struct pa_test_frame f, wf;
	struct pa_pkt_meta meta;
	struct rte_mbuf *m, *m2;
	uint8_t data[600], *p;
	unsigned int i, first;
	const struct seg want_tmpl = { .ver = 4, .to_backend = true,
		.flags = TCP_ACK, .seq = ISN1, .ack = 5001,
		.pre = (const uint8_t *)hdr1_4, .prelen = HLEN1_4,
		.data = data, .dlen = sizeof(data) };
	struct seg d = { .ver = 4, .to_backend = true, .flags = TCP_ACK,
		.seq = ISN1, .ack = 5001, .data = data,
		.dlen = sizeof(data) };

	for (i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 7 + 3);
	flow_syn(&ps);
	frame(&f, &d);
	first = 54 + 101;		/* headers and 101 bytes of data */
	m = rte_pktmbuf_alloc(pool);
	m2 = rte_pktmbuf_alloc(pool);
	ck_assert_ptr_nonnull(m);
	ck_assert_ptr_nonnull(m2);
	p = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)first);
	memcpy(p, f.b, first);
	p = (uint8_t *)rte_pktmbuf_append(m2, (uint16_t)(f.len - first));
	memcpy(p, f.b + first, f.len - first);
	ck_assert_int_eq(rte_pktmbuf_chain(m, m2), 0);
	ck_assert_int_eq(pa_pkt_parse(rte_pktmbuf_mtod(m, uint8_t *), first,
		f.len, &meta), PA_PKT_OK);
	ck_assert_int_eq(lb_proxy_to_backend(&ps, m, &meta,
		(const uint8_t *)hdr1_4, HLEN1_4, 0), 0);
	ck_assert_uint_eq(rte_pktmbuf_data_len(m), first + HLEN1_4);
	ck_assert_uint_eq(rte_pktmbuf_data_len(m2), f.len - first);
	frame(&wf, &want_tmpl);
	frame_is(m, &wf);
	rte_pktmbuf_free(m);
}
END_TEST

START_TEST(no_tailroom_is_refused_and_the_packet_unchanged)
{
	struct lb_proxy_state ps;
	struct pa_test_frame f;
	struct pa_pkt_meta meta;
	struct rte_mbuf *m;
	const struct seg d = { .ver = 4, .to_backend = true,
		.flags = TCP_ACK | TCP_PSH, .seq = ISN1, .ack = 5001,
		.data = http_get, .dlen = GET_LEN };

	flow_syn(&ps);
	frame(&f, &d);
	m = mbuf_room(&f, &meta, HLEN1_4 - 1);
	ck_assert_uint_eq(rte_pktmbuf_tailroom(m), HLEN1_4 - 1);
	ck_assert_int_eq(lb_proxy_to_backend(&ps, m, &meta,
		(const uint8_t *)hdr1_4, HLEN1_4, 0), -ENOSPC);
	frame_is(m, &f);
	ck_assert_uint_eq(ps.flags, 0);
	rte_pktmbuf_free(m);

	/* exactly enough */
	m = mbuf_room(&f, &meta, HLEN1_4);
	ck_assert_int_eq(lb_proxy_to_backend(&ps, m, &meta,
		(const uint8_t *)hdr1_4, HLEN1_4, 0), 0);
	rte_pktmbuf_free(m);
}
END_TEST

START_TEST(insert_past_the_mtu_is_refused)
{
	struct lb_proxy_state ps;
	struct pa_test_frame f;
	struct pa_pkt_meta meta;
	struct rte_mbuf *m;
	const struct seg d = { .ver = 4, .to_backend = true,
		.flags = TCP_ACK | TCP_PSH, .seq = ISN1, .ack = 5001,
		.data = http_get, .dlen = GET_LEN };
	const uint32_t l3len = 40 + GET_LEN;

	flow_syn(&ps);
	frame(&f, &d);
	m = mbuf_of(&f, &meta);
	ck_assert_int_eq(lb_proxy_to_backend(&ps, m, &meta,
		(const uint8_t *)hdr1_4, HLEN1_4, l3len + HLEN1_4 - 1),
		-EMSGSIZE);
	frame_is(m, &f);
	ck_assert_int_eq(lb_proxy_to_backend(&ps, m, &meta,
		(const uint8_t *)hdr1_4, HLEN1_4, l3len + HLEN1_4), 0);
	rte_pktmbuf_free(m);
}
END_TEST

START_TEST(header_of_another_length_is_refused)
{
	struct lb_proxy_state ps;
	struct pa_test_frame f;
	struct pa_pkt_meta meta;
	struct rte_mbuf *m;
	const struct seg d = { .ver = 4, .to_backend = true,
		.flags = TCP_ACK, .seq = ISN1, .ack = 5001 };
	const struct seg syn = { .ver = 4, .to_backend = true,
		.flags = TCP_SYN, .seq = ISN };

	flow_syn(&ps);
	frame(&f, &d);
	m = mbuf_of(&f, &meta);
	ck_assert_int_eq(lb_proxy_to_backend(&ps, m, &meta,
		(const uint8_t *)hdr1_4, HLEN1_4 - 1, 0), -EINVAL);
	frame_is(m, &f);
	rte_pktmbuf_free(m);

	frame(&f, &syn);
	m = mbuf_of(&f, &meta);
	ck_assert_int_eq(lb_proxy_to_backend(&ps, m, &meta,
		(const uint8_t *)hdr1_4, 0, 0), -EINVAL);
	ck_assert_int_eq(lb_proxy_to_backend(&ps, m, &meta,
		(const uint8_t *)hdr1_4, LB_PROXY_MAX + 1, 0), -EINVAL);
	rte_pktmbuf_free(m);
}
END_TEST

START_TEST(corrupted_segment_stays_corrupted)
{
	struct lb_proxy_state ps;
	struct pa_test_frame f;
	struct pa_pkt_meta meta;
	struct rte_mbuf *m;
	uint8_t *l3, *tcp;
	const struct seg d = { .ver = 4, .to_backend = true,
		.flags = TCP_ACK | TCP_PSH, .seq = ISN1, .ack = 5001,
		.data = http_get, .dlen = GET_LEN };

	flow_syn(&ps);
	frame(&f, &d);
	f.b[f.len - 3] ^= 0x40;		/* a payload bit flipped on the way */
	m = mbuf_of(&f, &meta);
	ck_assert_int_eq(lb_proxy_to_backend(&ps, m, &meta,
		(const uint8_t *)hdr1_4, HLEN1_4, 0), 0);
	l3 = rte_pktmbuf_mtod_offset(m, uint8_t *, meta.l3_off);
	tcp = rte_pktmbuf_mtod_offset(m, uint8_t *, meta.l4_off);
	ck_assert_uint_ne(pa_test_get16(tcp + 16), pa_test_l4_csum(l3));
	rte_pktmbuf_free(m);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Backend -> client                                                   */
/* ------------------------------------------------------------------ */

START_TEST(backend_acks_are_shifted_back)
{
	struct lb_proxy_state ps;

	flow_syn(&ps);
	/* the SYN-ACK's ack, isn1: unchanged */
	backend_acks(&ps, ISN1, ISN1);
	ck_assert_uint_eq(ps.flags, 0);
	/* inside the header: isn1 */
	backend_acks(&ps, ISN1 + 1, ISN1);
	backend_acks(&ps, ISN1 + HLEN1_4 - 1, ISN1);
	ck_assert_uint_eq(ps.flags, 0);
	/* the whole header: isn1, and acknowledged */
	backend_acks(&ps, ISN1 + HLEN1_4, ISN1);
	ck_assert_uint_eq(ps.flags, LB_PROXY_F_ACKED);
	backend_acks(&ps, ISN1 + HLEN1_4 + 12345, ISN1 + 12345);
	/* a segment without ACK keeps its ack field */
	{
		const struct seg s = { .ver = 4, .flags = TCP_RST,
			.seq = 7000, .ack = ISN1 + 900 };

		client_gets(&ps, &s, &s);
	}
}
END_TEST

START_TEST(sack_blocks_are_shifted_and_the_header_s_removed)
{
	struct lb_proxy_state ps;
	const uint32_t h = HLEN1_4;
	uint8_t opt[28] = { 1, 1, 5, 26 }, wopt[28] = { 1, 1, 5, 18 };
	uint8_t opt2[12] = { 1, 1, 5, 10 }, wopt2[12];
	uint8_t opt3[24] = { 1, 1, 8, 10, 0, 0, 0, 9, 0, 0, 0, 8, 1, 1, 5, 10 };
	uint8_t wopt3[24];
	struct seg s = { .ver = 4, .flags = TCP_ACK, .seq = 7000,
		.ack = ISN1 + h + 100, .opt = opt, .optlen = sizeof(opt) };
	struct seg w = { .ver = 4, .flags = TCP_ACK, .seq = 7000,
		.ack = ISN1 + 100, .opt = wopt, .optlen = sizeof(wopt) };

	flow_syn(&ps);
	/* a D-SACK of the header sent twice, a block that starts inside
	 * it, a later one */
	pa_test_put32(opt + 4, ISN1);
	pa_test_put32(opt + 8, ISN1 + h);
	pa_test_put32(opt + 12, ISN1 + 5);
	pa_test_put32(opt + 16, ISN1 + h + 60);
	pa_test_put32(opt + 20, ISN1 + h + 1000);
	pa_test_put32(opt + 24, ISN1 + h + 2000);
	pa_test_put32(wopt + 4, ISN1);
	pa_test_put32(wopt + 8, ISN1 + 60);
	pa_test_put32(wopt + 12, ISN1 + 1000);
	pa_test_put32(wopt + 16, ISN1 + 2000);
	memset(wopt + 20, 1, 8);
	client_gets(&ps, &s, &w);

	/* only the header's block: the option becomes NOPs */
	pa_test_put32(opt2 + 4, ISN1);
	pa_test_put32(opt2 + 8, ISN1 + h);
	memset(wopt2, 1, sizeof(wopt2));
	s.opt = opt2;
	s.optlen = sizeof(opt2);
	w.opt = wopt2;
	w.optlen = sizeof(wopt2);
	client_gets(&ps, &s, &w);

	/* timestamps then SACK, the usual layout */
	pa_test_put32(opt3 + 16, ISN1 + h + 3000);
	pa_test_put32(opt3 + 20, ISN1 + h + 4000);
	memcpy(wopt3, opt3, sizeof(opt3));
	pa_test_put32(wopt3 + 16, ISN1 + 3000);
	pa_test_put32(wopt3 + 20, ISN1 + 4000);
	s.opt = opt3;
	s.optlen = sizeof(opt3);
	w.opt = wopt3;
	w.optlen = sizeof(wopt3);
	client_gets(&ps, &s, &w);
}
END_TEST

START_TEST(malformed_options_are_left_alone)
{
	struct lb_proxy_state ps;
	const uint32_t h = HLEN1_4;
	/* an option of length 0 before the SACK: parsing stops */
	uint8_t bad_len[16] = { 8, 0, 0, 0, 5, 10 };
	/* a SACK whose length is not 2 + 8n */
	uint8_t bad_sack[16] = { 1, 1, 5, 11 };
	/* a SACK running past the header */
	uint8_t past[8] = { 1, 1, 5, 10 };
	/* EOL: what follows is not options */
	uint8_t eol[16] = { 0, 1, 5, 10 };
	uint8_t *cases[] = { bad_len, bad_sack, past, eol };
	unsigned int lens[] = { 16, 16, 8, 16 }, i;

	flow_syn(&ps);
	pa_test_put32(bad_len + 6, ISN1 + h + 10);
	pa_test_put32(bad_len + 10, ISN1 + h + 20);
	pa_test_put32(bad_sack + 4, ISN1 + h + 10);
	pa_test_put32(bad_sack + 8, ISN1 + h + 20);
	pa_test_put32(past + 4, ISN1 + h + 10);
	pa_test_put32(eol + 4, ISN1 + h + 10);
	pa_test_put32(eol + 8, ISN1 + h + 20);
	for (i = 0; i < RTE_DIM(cases); i++) {
		const struct seg s = { .ver = 4, .flags = TCP_ACK,
			.seq = 7000, .ack = ISN1 + h + 5, .opt = cases[i],
			.optlen = lens[i] };
		const struct seg w = { .ver = 4, .flags = TCP_ACK,
			.seq = 7000, .ack = ISN1 + 5, .opt = cases[i],
			.optlen = lens[i] };

		client_gets(&ps, &s, &w);
	}
}
END_TEST

START_TEST(syn_ack_mss_is_lowered_by_the_header)
{
	struct lb_proxy_state ps;
	/* MSS first (aligned), then window scale, SACK permitted */
	const uint8_t o1[12] = { 2, 4, 0x05, 0xb4, 1, 3, 3, 7, 4, 2, 1, 1 };
	uint8_t w1[12];
	/* after a NOP: the MSS value at an odd offset */
	const uint8_t o2[8] = { 1, 2, 4, 0x05, 0xb4, 1, 1, 1 };
	uint8_t w2[8];
	/* a small MSS stops at 64 */
	const uint8_t o3[4] = { 2, 4, 0, 100 };
	const uint8_t w3[4] = { 2, 4, 0, 64 };
	const uint16_t mss = 1460 - HLEN1_4;
	struct seg s = { .ver = 4, .flags = TCP_SYN | TCP_ACK, .seq = 5000,
		.ack = ISN1, .opt = o1, .optlen = sizeof(o1) };
	struct seg w = s;

	flow_syn(&ps);
	memcpy(w1, o1, sizeof(o1));
	pa_test_put16(w1 + 2, mss);
	w.opt = w1;
	client_gets(&ps, &s, &w);

	memcpy(w2, o2, sizeof(o2));
	pa_test_put16(w2 + 3, mss);
	s.opt = o2;
	s.optlen = w.optlen = sizeof(o2);
	w.opt = w2;
	client_gets(&ps, &s, &w);

	s.opt = o3;
	s.optlen = w.optlen = sizeof(o3);
	w.opt = w3;
	client_gets(&ps, &s, &w);

	/* an MSS on a segment that is not a SYN-ACK: left alone */
	s.flags = TCP_ACK;
	s.opt = w.opt = o1;
	s.optlen = w.optlen = sizeof(o1);
	w.flags = TCP_ACK;
	client_gets(&ps, &s, &w);
	ck_assert_uint_eq(ps.flags, 0);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Wrap-around                                                         */
/* ------------------------------------------------------------------ */

START_TEST(sequence_numbers_wrap_around_2_32)
{
	const uint32_t isn = 0xfffffff0u, isn1 = isn + 1;
	struct lb_proxy_state ps;
	uint8_t hdr[LB_PROXY_MAX], sack[12] = { 1, 1, 5, 10 }, wsack[12];
	unsigned int h;
	struct pa_test_frame f, wf;
	struct pa_pkt_meta meta;
	struct rte_mbuf *m;
	const struct seg syn = { .ver = 6, .to_backend = true,
		.flags = TCP_SYN, .seq = isn };
	const struct seg d = { .ver = 6, .to_backend = true,
		.flags = TCP_ACK | TCP_PSH, .seq = isn1, .ack = 9,
		.data = http_get, .dlen = GET_LEN };
	struct seg wd = d;
	/* the second segment starts before 2^32 and is shifted past it */
	const struct seg d2 = { .ver = 6, .to_backend = true,
		.flags = TCP_ACK, .seq = isn1 + 5, .ack = 9,
		.data = http_get, .dlen = GET_LEN };
	struct seg wd2 = d2;
	struct seg a = { .ver = 6, .flags = TCP_ACK, .seq = 9,
		.ack = isn1 + 20 };
	struct seg wa = a;

	h = lb_proxy_build(hdr, PA_LB_PROXY_V2, 6, client6, vip6,
		htons(CPORT), htons(443));
	memset(&ps, 0, sizeof(ps));
	frame(&f, &syn);
	m = mbuf_of(&f, &meta);
	ck_assert_int_eq(lb_proxy_to_backend(&ps, m, &meta, hdr, h, 0), 0);
	rte_pktmbuf_free(m);
	ck_assert_uint_eq(ps.isn1, isn1);

	frame(&f, &d);
	m = mbuf_of(&f, &meta);
	ck_assert_int_eq(lb_proxy_to_backend(&ps, m, &meta, hdr, h, 0), 0);
	wd.pre = hdr;
	wd.prelen = h;
	frame(&wf, &wd);
	frame_is(m, &wf);
	rte_pktmbuf_free(m);

	frame(&f, &d2);
	m = mbuf_of(&f, &meta);
	ck_assert_int_eq(lb_proxy_to_backend(&ps, m, &meta, NULL, 0, 0), 0);
	wd2.seq = isn1 + 5 + h;
	ck_assert_uint_lt(wd2.seq, 0x100);	/* wrapped */
	frame(&wf, &wd2);
	frame_is(m, &wf);
	rte_pktmbuf_free(m);

	/* an ack inside the header (before 2^32): isn1 */
	wa.ack = isn1;
	client_gets(&ps, &a, &wa);
	ck_assert_uint_eq(ps.flags, LB_PROXY_F_SENT);
	/* past it (wrapped): shifted back before 2^32, acknowledged */
	a.ack = isn1 + h + 5;
	wa.ack = isn1 + 5;
	a.opt = sack;
	a.optlen = sizeof(sack);
	pa_test_put32(sack + 4, isn1 + h + 30);
	pa_test_put32(sack + 8, isn1 + h + 30 + GET_LEN);
	memcpy(wsack, sack, sizeof(sack));
	pa_test_put32(wsack + 4, isn1 + 30);
	pa_test_put32(wsack + 8, isn1 + 30 + GET_LEN);
	wa.opt = wsack;
	wa.optlen = sizeof(wsack);
	client_gets(&ps, &a, &wa);
	ck_assert_uint_eq(ps.flags, LB_PROXY_F_SENT | LB_PROXY_F_ACKED);

	/* and the first segment again: only shifted, across 2^32 */
	frame(&f, &d);
	m = mbuf_of(&f, &meta);
	ck_assert_int_eq(lb_proxy_to_backend(&ps, m, &meta, NULL, 0, 0), 0);
	wd = d;
	wd.seq = isn1 + h;
	frame(&wf, &wd);
	frame_is(m, &wf);
	rte_pktmbuf_free(m);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Any segment                                                         */
/* ------------------------------------------------------------------ */

static uint64_t rnd_state = 0x9e3779b97f4a7c15ull;

static uint32_t
rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return (uint32_t)(rnd_state >> 16);
}

/* A sequence number near @p isn1 (a quarter of them exactly at it). */
static uint32_t
near(uint32_t isn1, unsigned int hlen)
{
	if (rnd() % 4 == 0)
		return isn1;
	return isn1 + rnd() % (2 * hlen + 200) - 100;
}

/* TCP options: random bytes, or a plausible layout (NOPs, MSS, SACK
 * blocks near isn1, timestamps, EOL) with now and then a bad length. */
static unsigned int
random_options(uint8_t *o, uint32_t isn1, unsigned int hlen)
{
	unsigned int n = (rnd() % 11) * 4, i = 0, k, nb;

	if (rnd() % 3 == 0) {
		for (i = 0; i < n; i++)
			o[i] = (uint8_t)rnd();
		return n;
	}
	while (i < n) {
		switch (rnd() % 6) {
		case 0:
			o[i++] = 1;
			break;
		case 1:
			if (i + 4 > n)
				goto fill;
			o[i] = 2;
			o[i + 1] = 4;
			pa_test_put16(o + i + 2, (uint16_t)rnd());
			i += 4;
			break;
		case 2:
			nb = 1 + rnd() % 4;
			if (i + 2 + 8 * nb > n)
				goto fill;
			o[i] = 5;
			o[i + 1] = (uint8_t)(2 + 8 * nb);
			for (k = 0; k < 2 * nb; k++)
				pa_test_put32(o + i + 2 + 4 * k, near(isn1, hlen));
			i += 2 + 8 * nb;
			break;
		case 3:
			if (i + 10 > n)
				goto fill;
			o[i] = 8;
			o[i + 1] = 10;
			pa_test_put32(o + i + 2, rnd());
			pa_test_put32(o + i + 6, rnd());
			i += 10;
			break;
		case 4:
			if (i + 2 > n)
				goto fill;
			o[i] = (uint8_t)rnd();
			o[i + 1] = (uint8_t)(rnd() % 48);
			i += 2;
			break;
		default:
			goto fill;
		}
	}
	return n;
fill:
	while (i < n)
		o[i++] = rnd() % 2 ? 0 : (uint8_t)rnd();
	return n;
}

START_TEST(any_segment_keeps_its_checksums_and_lengths)
{
	static const struct {
		enum pa_lb_proxy v;
		int family;
	} hv[] = {
		{ PA_LB_PROXY_V1, 4 }, { PA_LB_PROXY_V2, 4 },
		{ PA_LB_PROXY_V1, 6 }, { PA_LB_PROXY_V2, 6 },
	};
	uint8_t hdr[LB_PROXY_MAX], opt[40], data[300], before[PA_TEST_FRAME_MAX];
	struct lb_proxy_state ps;
	struct pa_test_frame f;
	struct pa_pkt_meta meta;
	struct rte_mbuf *m;
	unsigned int i, k, hlen, inserted = 0, shifted = 0, refused = 0;
	uint16_t a16, b16;
	const uint8_t *p, *l3;
	uint32_t l3len;
	int rc;

	for (i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 13 + 1);
	for (i = 0; i < 3000; i++) {
		struct seg s = { .ver = rnd() % 2 ? 4 : 6,
			.to_backend = rnd() % 2 };

		k = rnd() % RTE_DIM(hv);
		a16 = (uint16_t)rnd();
		b16 = (uint16_t)rnd();
		hlen = lb_proxy_build(hdr, hv[k].v, (uint8_t)hv[k].family,
			hv[k].family == 4 ? client4 : client6,
			hv[k].family == 4 ? vip4 : vip6, a16, b16);
		ps.isn1 = rnd() % 8 == 0 ? 0xffffffffu - rnd() % 64 : rnd();
		ps.hlen = (uint8_t)hlen;
		ps.flags = (uint8_t)(rnd() % 4);
		ps.pad = 0;
		s.flags = (uint8_t)(rnd() % 8 == 0 ? rnd() :
			(TCP_ACK | (rnd() % 2 ? TCP_PSH : 0) |
			 (rnd() % 6 == 0 ? TCP_FIN : 0) |
			 (rnd() % 12 == 0 ? TCP_RST : 0) |
			 (rnd() % 12 == 0 ? TCP_SYN : 0)));
		s.seq = near(ps.isn1, hlen);
		s.ack = near(ps.isn1, hlen);
		s.opt = opt;
		s.optlen = random_options(opt, ps.isn1, hlen);
		s.data = data;
		s.dlen = rnd() % 3 == 0 ? 0 : rnd() % sizeof(data);
		frame(&f, &s);
		m = mbuf_room(&f, &meta, rnd() % 4 == 0 ? (uint16_t)(rnd() % 120) : 0);
		memcpy(before, f.b, f.len);
		if (s.to_backend) {
			rc = lb_proxy_to_backend(&ps, m, &meta, hdr, hlen,
				rnd() % 2 ? 0 : 40 + s.optlen + 20 + rnd() % 400);
			ck_assert_msg(rc == 0 || rc == -ENOSPC || rc == -EMSGSIZE,
				"segment %u: %d", i, rc);
		} else {
			lb_proxy_to_client(&ps, m, &meta);
			rc = 0;
		}
		p = rte_pktmbuf_mtod(m, const uint8_t *);
		l3 = p + f.l3;
		if (rc != 0) {
			refused++;
			ck_assert_uint_eq(rte_pktmbuf_pkt_len(m), f.len);
			ck_assert_mem_eq(p, before, f.len);
		} else if (rte_pktmbuf_pkt_len(m) != f.len) {
			inserted++;
			ck_assert_uint_eq(rte_pktmbuf_pkt_len(m), f.len + hlen);
			ck_assert_mem_eq(p + f.l4 + 20 + s.optlen, hdr, hlen);
		} else if (memcmp(p, before, f.len) != 0) {
			shifted++;
		}
		l3len = s.ver == 4 ? pa_test_get16(l3 + 2) :
			40u + pa_test_get16(l3 + 4);
		ck_assert_uint_eq(f.l3 + l3len, rte_pktmbuf_pkt_len(m));
		ck_assert_msg(pa_test_get16(p + f.l4 + 16) == pa_test_l4_csum(l3),
			"segment %u: TCP checksum", i);
		if (s.ver == 4)
			ck_assert_uint_eq(pa_test_get16(l3 + 10),
				pa_test_ip4_csum(l3));
		rte_pktmbuf_free(m);
	}
	/* every outcome was met */
	ck_assert_uint_gt(inserted, 100);
	ck_assert_uint_gt(shifted, 100);
	ck_assert_uint_gt(refused, 10);
}
END_TEST

static Suite *
lb_proxy_suite(void)
{
	Suite *s = suite_create("lb_proxy");
	TCase *hdr = tcase_create("header");
	TCase *fwd = tcase_create("to_backend");
	TCase *rev = tcase_create("to_client");
	TCase *wrap = tcase_create("wrap");
	TCase *any = tcase_create("any");

	tcase_add_test(hdr, build_v1_ipv4_is_the_spec_line);
	tcase_add_test(hdr, build_v1_ipv6_is_rfc5952_text);
	tcase_add_test(hdr, build_v1_longest_is_lb_proxy_max);
	tcase_add_test(hdr, build_v2_ipv4_is_the_spec_layout);
	tcase_add_test(hdr, build_v2_ipv6_is_the_spec_layout);
	tcase_add_test(hdr, build_refuses_none_and_unknown_families);
	suite_add_tcase(s, hdr);

	tcase_add_test(fwd, syn_sets_the_state_and_passes_unchanged);
	tcase_add_test(fwd, nothing_is_done_before_a_syn);
	tcase_add_test(fwd, final_ack_of_the_handshake_carries_the_header);
	tcase_add_test(fwd, first_data_segment_gets_the_header_before_its_payload);
	tcase_add_test(fwd, first_data_segment_of_ipv6_gets_a_v2_header);
	tcase_add_test(fwd, later_segments_are_shifted_by_the_header);
	tcase_add_test(fwd, after_the_ack_of_the_header_isn1_is_only_shifted);
	tcase_add_test(fwd, server_speaks_first_header_rides_the_acks_at_isn1);
	tcase_add_test(fwd, fin_before_any_data_carries_the_header);
	tcase_add_test(fwd, rst_at_isn1_never_carries_the_header);
	tcase_add_test(fwd, syn_with_data_gets_the_header_before_it);
	tcase_add_test(fwd, ethernet_padding_is_dropped_by_the_insert);
	tcase_add_test(fwd, chained_mbuf_moves_the_first_segment_only);
	tcase_add_test(fwd, no_tailroom_is_refused_and_the_packet_unchanged);
	tcase_add_test(fwd, insert_past_the_mtu_is_refused);
	tcase_add_test(fwd, header_of_another_length_is_refused);
	tcase_add_test(fwd, corrupted_segment_stays_corrupted);
	suite_add_tcase(s, fwd);

	tcase_add_test(rev, backend_acks_are_shifted_back);
	tcase_add_test(rev, sack_blocks_are_shifted_and_the_header_s_removed);
	tcase_add_test(rev, malformed_options_are_left_alone);
	tcase_add_test(rev, syn_ack_mss_is_lowered_by_the_header);
	suite_add_tcase(s, rev);

	tcase_add_test(wrap, sequence_numbers_wrap_around_2_32);
	suite_add_tcase(s, wrap);

	tcase_add_test(any, any_segment_keeps_its_checksums_and_lengths);
	suite_add_tcase(s, any);
	return s;
}

int
main(void)
{
	static const char *const eal_args[] = { "-m", "64", "-l", "0", NULL };
	static Suite *(*const suites[])(void) = { lb_proxy_suite, NULL };
	const struct pa_test_main t = {
		.name = "test_lb_proxy",
		.suites = suites,
		.eal_args = eal_args,
		.mbufs = 255,
		.pool = &pool,
	};

	return pa_test_main_eal(&t);
}
