/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of lib/lb, the forwarding modes (ipip, nat, dsr) byte for
 * byte: outer headers, rewrites, checksums against a full recomputation,
 * NAT replies with and without a flow (the stateless translation of a
 * fleet), and what is left untouched.
 *
 * Part of test_lb (test_lb.c): the fixture is lb_fixture.h's.
 */

#include "lb_fixture.h"

/* ------------------------------------------------------------------ */
/* ipip                                                                */
/* ------------------------------------------------------------------ */

/* Check an outer IPv4 header at @p o for inner packet @p in_len bytes. */
static void
check_outer4(const uint8_t *o, const uint8_t *inner, uint32_t in_len)
{
	uint32_t src, dst;

	ck_assert_uint_eq(o[0], 0x45);
	ck_assert_uint_eq(o[1], inner[1]);			/* tos */
	ck_assert_uint_eq(pa_test_get16(o + 2), in_len + 20);
	ck_assert_uint_eq(pa_test_get16(o + 6) & IP4_DF,
		pa_test_get16(inner + 6) & IP4_DF);
	ck_assert_uint_eq(pa_test_get16(o + 6) & 0xbfff, 0);		/* MF, offset */
	if (pa_test_get16(inner + 6) & IP4_DF)
		ck_assert_uint_eq(pa_test_get16(o + 4), 0);
	ck_assert_uint_eq(o[8], 64);
	ck_assert_uint_eq(o[9], IPPROTO_IPIP);
	ck_assert_uint_eq(pa_test_get16(o + 10), pa_test_ip4_csum(o));
	memcpy(&src, o + 12, 4);
	memcpy(&dst, o + 16, 4);
	ck_assert_uint_eq(src, ip4("192.0.2.1"));
	ck_assert_msg(is_web4_backend(dst), "outer dst is no backend");
}

START_TEST(test_ipip4_prepends_outer_ipv4_and_keeps_the_inner_packet_byte_identical)
{
	static const uint16_t frags[] = { IP4_DF, 0 };
	unsigned int i;

	setup_lb(SVC_WEB4);
	for (i = 0; i < RTE_DIM(frags); i++) {
		struct rte_mbuf *m;
		struct pa_test_frame f;
		const uint8_t *o;

		frame_eth(&f, 0, RTE_ETHER_TYPE_IPV4);
		frame_ipv4(&f, "198.51.100.7", "10.0.0.10", IPPROTO_TCP, 0xb9,
			frags[i], 0x1234);
		frame_tcp(&f, (uint16_t)(40000 + i), 80, TCP_SYN);
		frame_payload(&f, 33, 1);
		frame_fix(&f);
		m = mbuf_of(&f);
		ck_assert_uint_eq(process1(m, T0), PA_LB_V_FORWARD);
		o = rte_pktmbuf_mtod(m, const uint8_t *);
		ck_assert_uint_eq(rte_pktmbuf_pkt_len(m), f.len + 20);
		ck_assert_uint_eq(rte_pktmbuf_data_len(m), f.len + 20);
		/* next hop: the router it came from; our MAC left alone */
		ck_assert(memcmp(o, mac_peer, 6) == 0);
		ck_assert(memcmp(o + 6, mac_peer, 6) == 0);
		ck_assert_uint_eq(pa_test_get16(o + 12), RTE_ETHER_TYPE_IPV4);
		check_outer4(o + 14, f.b + 14, f.len - 14);
		ck_assert(memcmp(o + 34, f.b + 14, f.len - 14) == 0);
		rte_pktmbuf_free(m);
	}
}
END_TEST

START_TEST(test_ipip4_addresses_the_frame_to_the_backend_mac_when_it_has_one)
{
	static const uint8_t be_mac[6] = { 0x02, 0, 0, 0, 0xbe, 0x01 };
	struct rte_mbuf *m;
	struct pa_test_frame f;
	const uint8_t *o;

	setup_lb("{'name': 'm4', 'vip': '10.0.0.11', 'port': 80, 'proto': 'tcp',"
		" 'forward': 'ipip', 'backends': [{'addr': '10.1.0.1',"
		" 'mac': '02:00:00:00:be:01'}]}");
	frame_l4(&f, "198.51.100.7", "10.0.0.11", IPPROTO_TCP, 1234, 80,
		TCP_SYN, 0);
	m = mbuf_of(&f);
	ck_assert_uint_eq(process1(m, T0), PA_LB_V_FORWARD);
	o = rte_pktmbuf_mtod(m, const uint8_t *);
	ck_assert(memcmp(o, be_mac, 6) == 0);
	ck_assert(memcmp(o + 6, mac_peer, 6) == 0);
	ck_assert(memcmp(o + 34, f.b + 14, f.len - 14) == 0);
	rte_pktmbuf_free(m);
}
END_TEST

/* A dual-stack port's "gateway" has one next hop per family: a packet
 * leaves towards its own family's (ipip v4 in v4, v6 in v6; transit
 * frames: lib/neigh, pa_neigh_route_macs()). */
START_TEST(test_gateway_next_hop_is_chosen_by_family)
{
	static const uint8_t gw4[6] = { 0x02, 0, 0, 0, 0x44, 0x04 };
	static const uint8_t gw6[6] = { 0x02, 0, 0, 0, 0x66, 0x06 };
	struct rte_mbuf *m;
	struct pa_test_frame f;

	setup_lb(SVC_WEB4 "," SVC_WEB6);
	pa_lb_gateway_set(lb, 0, AF_INET, gw4, true);
	pa_lb_gateway_set(lb, 0, AF_INET6, gw6, true);
	frame_l4(&f, "198.51.100.7", "10.0.0.10", IPPROTO_TCP, 1234, 80,
		TCP_SYN, 0);
	m = mbuf_of(&f);
	ck_assert_uint_eq(process1(m, T0), PA_LB_V_FORWARD);
	ck_assert(memcmp(rte_pktmbuf_mtod(m, const uint8_t *), gw4, 6) == 0);
	rte_pktmbuf_free(m);
	frame_eth(&f, 0, RTE_ETHER_TYPE_IPV6);
	frame_ipv6(&f, "2001:db8:99::7", "2001:db8:10::10", IPPROTO_TCP, 0);
	frame_tcp(&f, 5555, 443, TCP_SYN);
	frame_fix(&f);
	m = mbuf_of(&f);
	ck_assert_uint_eq(process1(m, T0), PA_LB_V_FORWARD);
	ck_assert(memcmp(rte_pktmbuf_mtod(m, const uint8_t *), gw6, 6) == 0);
	rte_pktmbuf_free(m);
	/* one family unresolved: only that family's packets lose it */
	pa_lb_gateway_set(lb, 0, AF_INET6, NULL, true);
	frame_l4(&f, "198.51.100.7", "10.0.0.10", IPPROTO_TCP, 1234, 80,
		TCP_SYN, 0);
	m = mbuf_of(&f);
	ck_assert_uint_eq(process1(m, T0), PA_LB_V_FORWARD);
	ck_assert(memcmp(rte_pktmbuf_mtod(m, const uint8_t *), gw4, 6) == 0);
	rte_pktmbuf_free(m);
}
END_TEST

START_TEST(test_ipip4_trims_ethernet_padding_after_the_inner_packet)
{
	struct rte_mbuf *m;
	struct pa_test_frame f;
	const uint8_t *o;
	uint32_t ilen;

	setup_lb("{'name': 'dns4', 'vip': '10.0.0.40', 'port': 53, 'proto': 'udp',"
		" 'forward': 'ipip', 'backends': [{'addr': '10.1.0.1'}]}");
	frame_l4(&f, "198.51.100.7", "10.0.0.40", IPPROTO_UDP, 1234, 53, 0, 2);
	ilen = f.len - 14;			/* 30 bytes of IP */
	frame_pad(&f, 60);
	m = mbuf_of(&f);
	ck_assert_uint_eq(process1(m, T0), PA_LB_V_FORWARD);
	o = rte_pktmbuf_mtod(m, const uint8_t *);
	ck_assert_uint_eq(rte_pktmbuf_pkt_len(m), 14 + 20 + ilen);
	ck_assert_uint_eq(pa_test_get16(o + 14 + 2), 20 + ilen);
	ck_assert(memcmp(o + 34, f.b + 14, ilen) == 0);
	rte_pktmbuf_free(m);
}
END_TEST

START_TEST(test_ipip4_keeps_the_vlan_tag_in_front_of_the_outer_header)
{
	struct rte_mbuf *m;
	struct pa_test_frame f;
	const uint8_t *o;

	setup_lb(SVC_WEB4);
	frame_eth(&f, 100, RTE_ETHER_TYPE_IPV4);
	frame_ipv4(&f, "198.51.100.7", "10.0.0.10", IPPROTO_TCP, 0x10, IP4_DF,
		0);
	frame_tcp(&f, 4321, 80, TCP_SYN);
	frame_payload(&f, 12, 9);
	frame_fix(&f);
	m = mbuf_of(&f);
	ck_assert_uint_eq(pa_pkt_meta(m)->l3_off, 18);
	ck_assert_uint_eq(process1(m, T0), PA_LB_V_FORWARD);
	o = rte_pktmbuf_mtod(m, const uint8_t *);
	ck_assert_uint_eq(rte_pktmbuf_pkt_len(m), f.len + 20);
	ck_assert(memcmp(o, mac_peer, 6) == 0);
	ck_assert(memcmp(o + 12, f.b + 12, 6) == 0);	/* tag, ethertype */
	check_outer4(o + 18, f.b + 18, f.len - 18);
	ck_assert(memcmp(o + 38, f.b + 18, f.len - 18) == 0);
	rte_pktmbuf_free(m);
}
END_TEST

START_TEST(test_ipip6_prepends_outer_ipv6_with_next_header_41_and_keeps_the_inner_packet)
{
	struct in6_addr local, b1, b2;
	struct rte_mbuf *m;
	struct pa_test_frame f;
	const uint8_t *o;
	uint32_t w;

	setup_lb(SVC_WEB6);
	inet_pton(AF_INET6, "2001:db8::1", &local);
	inet_pton(AF_INET6, "2001:db8:1::1", &b1);
	inet_pton(AF_INET6, "2001:db8:1::2", &b2);
	frame_eth(&f, 0, RTE_ETHER_TYPE_IPV6);
	frame_ipv6(&f, "2001:db8:99::7", "2001:db8:10::10", IPPROTO_TCP, 0xb8);
	frame_tcp(&f, 5555, 443, TCP_SYN);
	frame_payload(&f, 21, 3);
	frame_fix(&f);
	m = mbuf_of(&f);
	ck_assert_uint_eq(process1(m, T0), PA_LB_V_FORWARD);
	o = rte_pktmbuf_mtod(m, const uint8_t *);
	ck_assert_uint_eq(rte_pktmbuf_pkt_len(m), f.len + 40);
	ck_assert(memcmp(o, mac_peer, 6) == 0);
	ck_assert(memcmp(o + 6, mac_peer, 6) == 0);
	ck_assert_uint_eq(pa_test_get16(o + 12), RTE_ETHER_TYPE_IPV6);
	w = (uint32_t)pa_test_get16(o + 14) << 16 | pa_test_get16(o + 16);
	ck_assert_uint_eq(w >> 28, 6);
	ck_assert_uint_eq((w >> 20) & 0xff, 0xb8);
	ck_assert_uint_eq(pa_test_get16(o + 18), f.len - 14);
	ck_assert_uint_eq(o[20], IPPROTO_IPV6);
	ck_assert_uint_eq(o[21], 64);
	ck_assert(memcmp(o + 22, &local, 16) == 0);
	ck_assert(memcmp(o + 38, &b1, 16) == 0 || memcmp(o + 38, &b2, 16) == 0);
	ck_assert(memcmp(o + 54, f.b + 14, f.len - 14) == 0);
	rte_pktmbuf_free(m);
}
END_TEST

/* ------------------------------------------------------------------ */
/* nat                                                                 */
/* ------------------------------------------------------------------ */

/* What nat should make of client packet @p f going to backend address
 * @p be (4 or 16 bytes as in the header) port @p bport: the destination
 * rewritten, checksums recomputed in full, the frame addressed back to
 * the router. */
static void
nat_expect(const struct pa_test_frame *f, const uint8_t *be, uint16_t bport,
		uint8_t *out)
{
	uint8_t *l3 = out + f->l3, *l4 = out + f->l4;

	memcpy(out, f->b, f->len);
	memcpy(out, mac_peer, 6);
	if (f->ver == 4)
		memcpy(l3 + 16, be, 4);
	else
		memcpy(l3 + 24, be, 16);
	pa_test_put16(l4 + 2, bport);
	fix_csums(l3);
}

/* Send client packet @p f to a nat service; the output must be
 * nat_expect() of it for one of its backends (@p bes, @p n_be); @return
 * which. */
static unsigned int
check_nat(const struct pa_test_frame *f, const char *const *bes,
		unsigned int n_be, uint16_t bport)
{
	uint8_t exp[FRAME_MAX], a[16];
	struct rte_mbuf *m = mbuf_of(f);
	const uint8_t *o;
	unsigned int i;
	int fam = f->ver == 4 ? AF_INET : AF_INET6;

	REQUIRE(process1(m, T0) == PA_LB_V_FORWARD);
	o = rte_pktmbuf_mtod(m, const uint8_t *);
	REQUIRE(rte_pktmbuf_pkt_len(m) == f->len);
	for (i = 0; i < n_be; i++) {
		REQUIRE(inet_pton(fam, bes[i], a) == 1);
		if (memcmp(o + f->l3 + (f->ver == 4 ? 16 : 24), a,
				f->ver == 4 ? 4 : 16) == 0)
			break;
	}
	if (i == n_be)
		ck_abort_msg("destination is no backend");
	nat_expect(f, a, bport, exp);
	if (memcmp(o, exp, f->len) != 0) {
		unsigned int k;

		for (k = 0; k < f->len && o[k] == exp[k]; k++)
			;
		ck_abort_msg("nat output differs from the expected frame at byte %u (0x%02x, expected 0x%02x; l3 %d l4 %d)",
			k, o[k], exp[k], f->l3, f->l4);
	}
	rte_pktmbuf_free(m);
	return i;
}

static const char *const nat4_bes[] = { "10.2.0.1", "10.2.0.2" };

static const char *const nat6_bes[] = { "2001:db8:2::1", "2001:db8:2::2" };

START_TEST(test_nat4_tcp_rewrites_destination_and_checksums_equal_full_recomputation)
{
	struct pa_test_frame f;

	setup_lb(SVC_NAT4);
	frame_l4(&f, "198.51.100.7", "10.0.0.20", IPPROTO_TCP, 40000, 80,
		TCP_SYN, 17);
	check_nat(&f, nat4_bes, 2, 8080);
}
END_TEST

START_TEST(test_nat4_udp_rewrites_destination_and_checksums_equal_full_recomputation)
{
	struct pa_test_frame f;

	setup_lb(SVC_NAT4);
	frame_l4(&f, "198.51.100.7", "10.0.0.20", IPPROTO_UDP, 40000, 53, 0,
		17);
	check_nat(&f, nat4_bes, 2, 5353);
}
END_TEST

START_TEST(test_nat4_udp_without_checksum_stays_without)
{
	struct pa_test_frame f;

	setup_lb(SVC_NAT4);
	frame_eth(&f, 0, RTE_ETHER_TYPE_IPV4);
	frame_ipv4(&f, "198.51.100.7", "10.0.0.20", IPPROTO_UDP, 0, 0, 7);
	frame_udp(&f, 40001, 53);
	frame_payload(&f, 20, 5);
	f.udp_no_csum = true;
	frame_fix(&f);
	ck_assert_uint_eq(pa_test_get16(f.b + f.l4 + 6), 0);
	check_nat(&f, nat4_bes, 2, 5353);	/* expects checksum 0 */
}
END_TEST

START_TEST(test_nat6_tcp_and_udp_rewrite_destination_and_checksums_equal_full_recomputation)
{
	struct pa_test_frame f;

	setup_lb(SVC_NAT6);
	frame_l4(&f, "2001:db8:99::7", "2001:db8:20::20", IPPROTO_TCP, 40000,
		80, TCP_SYN, 17);
	check_nat(&f, nat6_bes, 2, 8080);
	frame_l4(&f, "2001:db8:99::7", "2001:db8:20::20", IPPROTO_UDP, 40000,
		53, 0, 17);
	check_nat(&f, nat6_bes, 2, 5353);
}
END_TEST

/* Choose the payload word at @p woff (from the L4 header) so that the
 * packet's L4 checksum comes out as @p want (when a correct checksum can
 * have that value), and write the checksum. */
static void
force_l4_csum(uint8_t *l3, unsigned int woff, uint16_t want)
{
	bool v4 = (l3[0] >> 4) == 4;
	uint8_t *l4 = v4 ? l3 + (l3[0] & 0xf) * 4u : l3 + 40;
	uint16_t s0;

	pa_test_put16(l4 + woff, 0);
	set_l4_csum(l3);
	s0 = (uint16_t)~pa_test_get16(l4 + ((v4 ? l3[9] : l3[6]) == IPPROTO_TCP ?
		16 : 6));
	/* the sum must become ~want: add ~want - s0 */
	pa_test_put16(l4 + woff, fold_sum((uint32_t)(uint16_t)~want +
		(uint16_t)~s0));
	set_l4_csum(l3);
}

START_TEST(test_nat_checksums_are_exact_whatever_the_original_checksum)
{
	static const struct {
		const char *src, *vip;
		uint8_t proto;
		uint16_t port, bport;
		const char *const *bes;
	} c[] = {
		{ "198.51.100.7", "10.0.0.20", IPPROTO_TCP, 80, 8080, nat4_bes },
		{ "198.51.100.7", "10.0.0.20", IPPROTO_UDP, 53, 5353, nat4_bes },
		{ "2001:db8:99::7", "2001:db8:20::20", IPPROTO_TCP, 80, 8080,
			nat6_bes },
		{ "2001:db8:99::7", "2001:db8:20::20", IPPROTO_UDP, 53, 5353,
			nat6_bes },
	};
	unsigned int i;
	uint32_t want;

	setup_lb(SVC_NAT4 "," SVC_NAT6);
	for (i = 0; i < RTE_DIM(c); i++) {
		/* every value, one flow per case (the table does not
		 * grow): where the carries of an incremental update wrap
		 * depends on the addresses, so no sample would do */
		for (want = 0; want <= 0xffff; want++) {
			struct pa_test_frame f;

			frame_l4(&f, c[i].src, c[i].vip, c[i].proto, 40000,
				c[i].port, TCP_ACK, 8);
			force_l4_csum(f.b + f.l3,
				c[i].proto == IPPROTO_TCP ? 20 : 8,
				(uint16_t)want);
			if (f.ver == 4)
				pa_test_put16(f.b + f.l3 + 10,
					pa_test_ip4_csum(f.b + f.l3));
			check_nat(&f, c[i].bes, 2, c[i].bport);
		}
	}
}
END_TEST

START_TEST(test_nat_checksums_equal_full_recomputation_for_many_random_packets)
{
	unsigned int i, hits[2][2] = { { 0 } };

	setup_lb_flows(SVC_NAT4 "," SVC_NAT6, 4096, 1);
	for (i = 0; i < 800; i++) {
		char src[64];
		struct pa_test_frame f;
		bool v6 = i & 1, tcp = i & 2;
		unsigned int be;

		if (v6)
			snprintf(src, sizeof(src), "2001:db8:%x:%x::%x",
				rng() & 0xffff, rng() & 0xffff, rng() & 0xffff);
		else
			snprintf(src, sizeof(src), "%u.%u.%u.%u",
				1 + rng() % 223, rng() % 256, rng() % 256,
				1 + rng() % 254);
		frame_l4(&f, src, v6 ? "2001:db8:20::20" : "10.0.0.20",
			tcp ? IPPROTO_TCP : IPPROTO_UDP,
			(uint16_t)(1 + rng() % 65535), tcp ? 80 : 53, TCP_SYN,
			rng() % 200);
		/* random payload, so every checksum value shows up */
		if (f.len > (uint32_t)f.l4 + 20) {
			unsigned int k;

			for (k = (unsigned int)f.l4 + 20; k < f.len; k++)
				f.b[k] = (uint8_t)rng();
			set_l4_csum(f.b + f.l3);
		}
		be = check_nat(&f, v6 ? nat6_bes : nat4_bes, 2,
			tcp ? 8080 : 5353);
		hits[v6][be]++;
	}
	ck_assert(hits[0][0] > 0 && hits[0][1] > 0);
	ck_assert(hits[1][0] > 0 && hits[1][1] > 0);
}
END_TEST

/* The backend's reply to client flow @p f (which went to @p be:@p bport):
 * from the server side. */
static void
reply_of(const struct pa_test_frame *f, const char *be, uint16_t bport,
		struct pa_test_frame *r, unsigned int payload)
{
	char client[64];
	bool v6 = f->ver == 6;
	uint8_t proto = f->b[f->l3 + (v6 ? 6 : 9)];

	inet_ntop(v6 ? AF_INET6 : AF_INET, f->b + f->l3 + (v6 ? 8 : 12),
		client, sizeof(client));
	frame_eth(r, 0, v6 ? RTE_ETHER_TYPE_IPV6 : RTE_ETHER_TYPE_IPV4);
	memcpy(r->b + 6, mac_srv, 6);
	if (v6)
		frame_ipv6(r, be, client, proto, 0);
	else
		frame_ipv4(r, be, client, proto, 0, IP4_DF, 0);
	if (proto == IPPROTO_TCP)
		frame_tcp(r, bport, pa_test_get16(f->b + f->l4),
			TCP_SYN | TCP_ACK);
	else
		frame_udp(r, bport, pa_test_get16(f->b + f->l4));
	frame_payload(r, payload, 77);
	frame_fix(r);
}

/* Send reply @p r; it must come out with source @p vip:@p vport,
 * checksums recomputed, addressed back where it came from. */
static void
check_nat_reply(const struct pa_test_frame *r, const char *vip, uint16_t vport)
{
	uint8_t exp[FRAME_MAX], a[16];
	struct rte_mbuf *m = mbuf_of(r);
	const uint8_t *o;

	ck_assert_int_eq(inet_pton(r->ver == 4 ? AF_INET : AF_INET6, vip, a),
		1);
	memcpy(exp, r->b, r->len);
	memcpy(exp, mac_srv, 6);
	memcpy(exp + r->l3 + (r->ver == 4 ? 12 : 8), a, r->ver == 4 ? 4 : 16);
	pa_test_put16(exp + r->l4, vport);
	fix_csums(exp + r->l3);
	REQUIRE(process1(m, T0 + 5) == PA_LB_V_FORWARD);
	o = rte_pktmbuf_mtod(m, const uint8_t *);
	REQUIRE(rte_pktmbuf_pkt_len(m) == r->len);
	if (memcmp(o, exp, r->len) != 0)
		ck_abort_msg("the reply is not the expected frame");
	rte_pktmbuf_free(m);
}

START_TEST(test_nat_reply_of_a_known_flow_gets_the_vip_and_service_port_as_source)
{
	struct pa_test_frame f, r;
	unsigned int be;

	setup_lb(SVC_NAT4 "," SVC_NAT6);
	frame_l4(&f, "198.51.100.7", "10.0.0.20", IPPROTO_TCP, 40000, 80,
		TCP_SYN, 0);
	be = check_nat(&f, nat4_bes, 2, 8080);
	reply_of(&f, nat4_bes[be], 8080, &r, 9);
	check_nat_reply(&r, "10.0.0.20", 80);

	frame_l4(&f, "198.51.100.8", "10.0.0.20", IPPROTO_UDP, 40002, 53, 0,
		3);
	be = check_nat(&f, nat4_bes, 2, 5353);
	reply_of(&f, nat4_bes[be], 5353, &r, 30);
	check_nat_reply(&r, "10.0.0.20", 53);

	frame_l4(&f, "2001:db8:99::7", "2001:db8:20::20", IPPROTO_UDP, 40003,
		53, 0, 3);
	be = check_nat(&f, nat6_bes, 2, 5353);
	reply_of(&f, nat6_bes[be], 5353, &r, 31);
	check_nat_reply(&r, "2001:db8:20::20", 53);

	frame_l4(&f, "2001:db8:99::7", "2001:db8:20::20", IPPROTO_TCP, 40004,
		80, TCP_SYN, 3);
	be = check_nat(&f, nat6_bes, 2, 8080);
	reply_of(&f, nat6_bes[be], 8080, &r, 0);
	check_nat_reply(&r, "2001:db8:20::20", 80);
	ck_assert_int_eq(lb_stat("nat_replies"), 4);
}
END_TEST

/* ------------------------------------------------------------------ */
/* NAT replies in a fleet: the stateless translation                   */
/* ------------------------------------------------------------------ */

/* Client @p k of a numbered set: an address and a port, IPv4 or IPv6. */
static void
fleet_client(unsigned int k, bool v6, char *addr, size_t len,
		uint16_t *port)
{
	if (v6)
		snprintf(addr, len, "2001:db8:99::%x", 1 + k % 97);
	else
		snprintf(addr, len, "198.51.%u.%u", 100 + k % 3, 1 + k % 97);
	*port = (uint16_t)(30000 + k * 7);
}

/* The client packet of client @p k to @p vip:@p vport. */
static void
fleet_flow(struct pa_test_frame *f, unsigned int k, bool v6, const char *vip,
		uint8_t proto, uint16_t vport)
{
	char a[64];
	uint16_t port;

	fleet_client(k, v6, a, sizeof(a), &port);
	frame_l4(f, a, vip, proto, port, vport,
		proto == IPPROTO_TCP ? TCP_SYN : 0, k % 40);
}

/* Send reply @p r; it must come out unchanged with @p verdict. */
static void
reply_untouched(const struct pa_test_frame *r, uint8_t verdict)
{
	struct rte_mbuf *m = mbuf_of(r);

	REQUIRE(process1(m, T0 + 5) == verdict);
	REQUIRE(rte_pktmbuf_pkt_len(m) == r->len);
	REQUIRE(memcmp(rte_pktmbuf_mtod(m, const uint8_t *), r->b,
		r->len) == 0);
	rte_pktmbuf_free(m);
}

static const struct {
	bool v6;
	const char *vip;
	uint8_t proto;
	uint16_t vport, bport;
} fleet_svc[] = {
	{ false, "10.0.0.20", IPPROTO_TCP, 80, 8080 },
	{ false, "10.0.0.20", IPPROTO_UDP, 53, 5353 },
	{ true, "2001:db8:20::20", IPPROTO_TCP, 80, 8080 },
	{ true, "2001:db8:20::20", IPPROTO_UDP, 53, 5353 },
};

#define FLEET_N	150

START_TEST(test_client_hash_is_the_parsers_hash_of_the_clients_flow)
{
	const struct lb_table *t;
	const struct lb_svc *s;
	struct pa_test_frame f;
	struct rte_mbuf *m;
	unsigned int i, k;
	uint8_t a[16];
	int sl;

	setup_lb(SVC_NAT4 "," SVC_NAT6);
	t = lb->live;
	for (i = 0; i < RTE_DIM(fleet_svc); i++) {
		ck_assert_int_eq(inet_pton(fleet_svc[i].v6 ? AF_INET6 : AF_INET,
			fleet_svc[i].vip, a), 1);
		sl = lb_svc_find(t->svc_map, fleet_svc[i].v6 ? 6 : 4,
			fleet_svc[i].proto, rte_cpu_to_be_16(fleet_svc[i].vport),
			a);
		ck_assert_int_ge(sl, 0);
		s = t->svc[sl];
		for (k = 0; k < FLEET_N; k++) {
			fleet_flow(&f, k, fleet_svc[i].v6, fleet_svc[i].vip,
				fleet_svc[i].proto, fleet_svc[i].vport);
			m = mbuf_of(&f);
			REQUIRE(pa_pkt_meta(m)->hash == lb_client_hash(s,
				fleet_svc[i].proto, f.b + f.l3 +
				(f.ver == 4 ? 12 : 8),
				rte_cpu_to_be_16(pa_test_get16(f.b + f.l4))));
			rte_pktmbuf_free(m);
		}
	}
}
END_TEST

START_TEST(test_nat_reply_without_a_flow_is_translated_as_the_appliance_with_the_flow_would)
{
	static unsigned int be[RTE_DIM(fleet_svc)][FLEET_N];
	unsigned int hits[RTE_DIM(fleet_svc)][2] = { { 0 } };
	struct pa_test_frame f, r;
	unsigned int i, k;

	/* appliance A sees the clients' packets */
	setup_lb(SVC_NAT4 "," SVC_NAT6);
	for (i = 0; i < RTE_DIM(fleet_svc); i++)
		for (k = 0; k < FLEET_N; k++) {
			fleet_flow(&f, k, fleet_svc[i].v6, fleet_svc[i].vip,
				fleet_svc[i].proto, fleet_svc[i].vport);
			be[i][k] = check_nat(&f, fleet_svc[i].v6 ? nat6_bes :
				nat4_bes, 2, fleet_svc[i].bport);
		}
	/* appliance B, same services, no state, sees the backends' replies */
	setup_lb(SVC_NAT4 "," SVC_NAT6);
	for (i = 0; i < RTE_DIM(fleet_svc); i++)
		for (k = 0; k < FLEET_N; k++) {
			fleet_flow(&f, k, fleet_svc[i].v6, fleet_svc[i].vip,
				fleet_svc[i].proto, fleet_svc[i].vport);
			reply_of(&f, (fleet_svc[i].v6 ? nat6_bes :
				nat4_bes)[be[i][k]], fleet_svc[i].bport, &r,
				k % 50);
			check_nat_reply(&r, fleet_svc[i].vip,
				fleet_svc[i].vport);
			hits[i][be[i][k]]++;
		}
	for (i = 0; i < RTE_DIM(fleet_svc); i++)
		ck_assert(hits[i][0] > 0 && hits[i][1] > 0);
	ck_assert_int_eq(lb_stat("nat_reply_stateless"),
		RTE_DIM(fleet_svc) * FLEET_N);
	ck_assert_int_eq(lb_stat("nat_replies"), 0);
	ck_assert_int_eq(lb_stat("nat_reply_unmatched"), 0);
	ck_assert_int_eq(lb_stat("flows_created"), 0);
}
END_TEST

START_TEST(test_nat_reply_without_a_flow_from_a_backend_maglev_did_not_choose_is_left_unchanged)
{
	static unsigned int be[RTE_DIM(fleet_svc)][FLEET_N];
	struct pa_test_frame f, r;
	unsigned int i, k;

	setup_lb(SVC_NAT4 "," SVC_NAT6);
	for (i = 0; i < RTE_DIM(fleet_svc); i++)
		for (k = 0; k < FLEET_N; k++) {
			fleet_flow(&f, k, fleet_svc[i].v6, fleet_svc[i].vip,
				fleet_svc[i].proto, fleet_svc[i].vport);
			be[i][k] = check_nat(&f, fleet_svc[i].v6 ? nat6_bes :
				nat4_bes, 2, fleet_svc[i].bport);
		}
	setup_lb(SVC_NAT4 "," SVC_NAT6);
	for (i = 0; i < RTE_DIM(fleet_svc); i++)
		for (k = 0; k < FLEET_N; k++) {
			fleet_flow(&f, k, fleet_svc[i].v6, fleet_svc[i].vip,
				fleet_svc[i].proto, fleet_svc[i].vport);
			/* the other backend */
			reply_of(&f, (fleet_svc[i].v6 ? nat6_bes :
				nat4_bes)[1 - be[i][k]], fleet_svc[i].bport,
				&r, 9);
			reply_untouched(&r, PA_LB_V_FORWARD);
		}
	ck_assert_int_eq(lb_stat("nat_reply_unmatched"),
		RTE_DIM(fleet_svc) * FLEET_N);
	ck_assert_int_eq(lb_stat("nat_reply_stateless"), 0);
	ck_assert_int_eq(lb_stat("nat_replies"), 0);

	/* from the backend's port but no backend: not a reply, not counted */
	fleet_flow(&f, 1, false, "10.0.0.20", IPPROTO_TCP, 80);
	reply_of(&f, "10.2.0.9", 8080, &r, 9);
	reply_untouched(&r, PA_LB_V_FORWARD);
	/* a backend, from another port than its service's */
	reply_of(&f, "10.2.0.1", 8081, &r, 9);
	reply_untouched(&r, PA_LB_V_FORWARD);
	ck_assert_int_eq(lb_stat("nat_reply_unmatched"),
		RTE_DIM(fleet_svc) * FLEET_N);
}
END_TEST

/* 10.3.0.1:8080 is a backend of two nat services (x, y); the udp one
 * has it on another protocol. */
#define SVC_SHARED \
	"{'name': 'x', 'vip': '10.0.0.30', 'port': 80, 'proto': 'tcp'," \
	" 'forward': 'nat', 'backends': [{'addr': '10.3.0.1', 'port': 8080}," \
	" {'addr': '10.3.0.2', 'port': 8080}]}," \
	"{'name': 'y', 'vip': '10.0.0.31', 'port': 80, 'proto': 'tcp'," \
	" 'forward': 'nat', 'backends': [{'addr': '10.3.0.3', 'port': 8080}," \
	" {'addr': '10.3.0.1', 'port': 8080}]}," \
	"{'name': 'xu', 'vip': '10.0.0.30', 'port': 53, 'proto': 'udp'," \
	" 'forward': 'nat', 'backends': [{'addr': '10.3.0.1', 'port': 8080}]}"

static const char *const x_bes[] = { "10.3.0.1", "10.3.0.2" };

static const char *const y_bes[] = { "10.3.0.3", "10.3.0.1" };

/* The index entry of backend @p addr:@p port/@p proto (NULL: none). */
static const struct lb_rev_ent *
rev_of(const char *addr, uint16_t port, uint8_t proto)
{
	struct pa_ip_addr a = addr_of(addr);
	const struct lb_table *t = lb->live;

	if (t->rev == NULL)
		return NULL;
	return lb_rev_find(t->rev, a.family == AF_INET ? 4 : 6, proto,
		rte_cpu_to_be_16(port), pa_ip_bytes(&a));
}

/* Does entry @p e list service @p name with backend @p addr? */
static bool
rev_lists(const struct lb_rev_ent *e, const char *name, const char *addr)
{
	const struct lb_table *t = lb->live;
	struct pa_ip_addr a = addr_of(addr);
	unsigned int i;

	for (i = 0; i < e->n; i++) {
		const struct lb_rev_ref *r = &t->rev->ref[e->first + i];
		const struct lb_svc *s = t->svc[r->slot];

		if (strcmp(s->name, name) == 0 && r->be < s->n_be &&
		    pa_ip_equal(&s->be[r->be].addr, &a))
			return true;
	}
	return false;
}

START_TEST(test_nat_reply_index_lists_every_nat_service_of_a_backend)
{
	const struct lb_rev_ent *e;
	char err[PA_CONFIG_ERR_MAX];

	setup_lb(SVC_SHARED "," SVC_WEB4 "," SVC_NAT6);
	e = rev_of("10.3.0.1", 8080, IPPROTO_TCP);
	ck_assert_ptr_nonnull(e);
	ck_assert_uint_eq(e->n, 2);
	ck_assert(rev_lists(e, "x", "10.3.0.1") && rev_lists(e, "y", "10.3.0.1"));
	e = rev_of("10.3.0.2", 8080, IPPROTO_TCP);
	ck_assert(e != NULL && e->n == 1 && rev_lists(e, "x", "10.3.0.2"));
	e = rev_of("10.3.0.3", 8080, IPPROTO_TCP);
	ck_assert(e != NULL && e->n == 1 && rev_lists(e, "y", "10.3.0.3"));
	e = rev_of("10.3.0.1", 8080, IPPROTO_UDP);
	ck_assert(e != NULL && e->n == 1 && rev_lists(e, "xu", "10.3.0.1"));
	e = rev_of("2001:db8:2::2", 5353, IPPROTO_UDP);
	ck_assert(e != NULL && e->n == 1 && rev_lists(e, "nat6u",
		"2001:db8:2::2"));
	ck_assert_ptr_null(rev_of("10.3.0.1", 8081, IPPROTO_TCP));
	ck_assert_ptr_null(rev_of("10.3.0.9", 8080, IPPROTO_TCP));
	/* ipip backends are no nat backends */
	ck_assert_ptr_null(rev_of("10.1.0.1", 80, IPPROTO_TCP));

	/* it follows the tables: backends deleted, added, down */
	ck_assert_int_eq(delete_backend("y", "10.3.0.1"), 0);
	e = rev_of("10.3.0.1", 8080, IPPROTO_TCP);
	ck_assert(e != NULL && e->n == 1 && rev_lists(e, "x", "10.3.0.1"));
	ck_assert_int_eq(add_backend("y", "{'addr': '10.3.0.9', 'port': 8080}"),
		0);
	e = rev_of("10.3.0.9", 8080, IPPROTO_TCP);
	ck_assert(e != NULL && e->n == 1 && rev_lists(e, "y", "10.3.0.9"));
	ck_assert_int_eq(set_state("x", "10.3.0.2", PA_LB_DOWN), 0);
	e = rev_of("10.3.0.2", 8080, IPPROTO_TCP);
	ck_assert(e != NULL && e->n == 1 && rev_lists(e, "x", "10.3.0.2"));
	ck_assert_int_eq(pa_lb_service_delete(lb, "x", err, sizeof(err)), 0);
	ck_assert_ptr_null(rev_of("10.3.0.2", 8080, IPPROTO_TCP));
	ck_assert_ptr_null(rev_of("10.3.0.1", 8080, IPPROTO_TCP));
	/* no nat service, no index */
	ck_assert_int_eq(pa_lb_service_delete(lb, "y", err, sizeof(err)), 0);
	ck_assert_int_eq(pa_lb_service_delete(lb, "xu", err, sizeof(err)), 0);
	ck_assert_int_eq(pa_lb_service_delete(lb, "nat6", err, sizeof(err)), 0);
	ck_assert_int_eq(pa_lb_service_delete(lb, "nat6u", err, sizeof(err)),
		0);
	ck_assert_ptr_null(lb->live->rev);
}
END_TEST

START_TEST(test_nat_reply_of_a_backend_of_two_services_is_translated_only_when_one_explains_it)
{
	static unsigned int bx[FLEET_N], by[FLEET_N];
	unsigned int k, n_x = 0, n_y = 0, n_both = 0, n_none = 0;
	struct pa_test_frame f, r;

	/* appliance A: each client to both VIPs, from the same port */
	setup_lb(SVC_SHARED);
	for (k = 0; k < FLEET_N; k++) {
		fleet_flow(&f, k, false, "10.0.0.30", IPPROTO_TCP, 80);
		bx[k] = check_nat(&f, x_bes, 2, 8080);
		fleet_flow(&f, k, false, "10.0.0.31", IPPROTO_TCP, 80);
		by[k] = check_nat(&f, y_bes, 2, 8080);
	}
	/* appliance B: 10.3.0.1's replies to those clients */
	setup_lb(SVC_SHARED);
	for (k = 0; k < FLEET_N; k++) {
		bool x = bx[k] == 0, y = by[k] == 1;

		fleet_flow(&f, k, false, "10.0.0.30", IPPROTO_TCP, 80);
		reply_of(&f, "10.3.0.1", 8080, &r, 3);
		if (x && y) {
			reply_untouched(&r, PA_LB_V_NAT_AMBIGUOUS);
			n_both++;
		} else if (x) {
			check_nat_reply(&r, "10.0.0.30", 80);
			n_x++;
		} else if (y) {
			check_nat_reply(&r, "10.0.0.31", 80);
			n_y++;
		} else {
			reply_untouched(&r, PA_LB_V_FORWARD);
			n_none++;
		}
	}
	ck_assert(n_x > 0 && n_y > 0 && n_both > 0 && n_none > 0);
	ck_assert_int_eq(lb_stat("nat_reply_ambiguous"), n_both);
	ck_assert_int_eq(lb_stat("nat_reply_stateless"), n_x + n_y);
	ck_assert_int_eq(lb_stat("nat_reply_unmatched"), n_none);
}
END_TEST

#define SVC_RR \
	"{'name': 'rr', 'vip': '10.0.0.40', 'port': 80, 'proto': 'tcp'," \
	" 'scheduler': 'rr', 'forward': 'nat', 'backends':" \
	" [{'addr': '10.4.0.1', 'port': 8080}, {'addr': '10.4.0.2', 'port': 8080}]}"

#define SVC_MG \
	"{'name': 'mg', 'vip': '10.0.0.41', 'port': 80, 'proto': 'tcp'," \
	" 'forward': 'nat', 'backends':" \
	" [{'addr': '10.4.0.1', 'port': 8080}, {'addr': '10.4.0.3', 'port': 8080}]}"

static const char *const rr_bes[] = { "10.4.0.1", "10.4.0.2" };

static const char *const mg_bes[] = { "10.4.0.1", "10.4.0.3" };

START_TEST(test_nat_reply_of_a_non_maglev_service_is_translated_only_with_its_flow)
{
	static unsigned int bm[FLEET_N];
	unsigned int k, n_amb = 0, n_none = 0, be;
	struct pa_test_frame f, r;

	setup_lb(SVC_RR);
	/* no flow: neither backend's reply is translated */
	for (k = 0; k < FLEET_N; k++) {
		fleet_flow(&f, k, false, "10.0.0.40", IPPROTO_TCP, 80);
		reply_of(&f, rr_bes[k % 2], 8080, &r, 3);
		reply_untouched(&r, PA_LB_V_FORWARD);
	}
	ck_assert_int_eq(lb_stat("nat_reply_unmatched"), FLEET_N);
	/* with its flow, as ever */
	fleet_flow(&f, 1, false, "10.0.0.40", IPPROTO_TCP, 80);
	be = check_nat(&f, rr_bes, 2, 8080);
	reply_of(&f, rr_bes[be], 8080, &r, 3);
	check_nat_reply(&r, "10.0.0.40", 80);
	ck_assert_int_eq(lb_stat("nat_replies"), 1);

	/* a maglev service sharing the backend: its agreement is not
	 * enough, the rr service may have sent the flow there */
	setup_lb(SVC_RR "," SVC_MG);
	for (k = 0; k < FLEET_N; k++) {
		fleet_flow(&f, k, false, "10.0.0.41", IPPROTO_TCP, 80);
		bm[k] = check_nat(&f, mg_bes, 2, 8080);
	}
	setup_lb(SVC_RR "," SVC_MG);
	for (k = 0; k < FLEET_N; k++) {
		fleet_flow(&f, k, false, "10.0.0.41", IPPROTO_TCP, 80);
		reply_of(&f, "10.4.0.1", 8080, &r, 3);
		if (bm[k] == 0) {
			reply_untouched(&r, PA_LB_V_NAT_AMBIGUOUS);
			n_amb++;
		} else {
			reply_untouched(&r, PA_LB_V_FORWARD);
			n_none++;
		}
	}
	ck_assert(n_amb > 0 && n_none > 0);
	ck_assert_int_eq(lb_stat("nat_reply_ambiguous"), n_amb);
	ck_assert_int_eq(lb_stat("nat_reply_unmatched"), n_none);
}
END_TEST

START_TEST(test_nat_reply_without_a_flow_follows_the_current_maglev_choice)
{
	static unsigned int be[FLEET_N];
	unsigned int k, moved = 0, kept = 0;
	struct pa_test_frame f, r;
	struct rte_mbuf *m;

	setup_lb(SVC_NAT4);
	for (k = 0; k < FLEET_N; k++) {
		fleet_flow(&f, k, false, "10.0.0.20", IPPROTO_TCP, 80);
		be[k] = check_nat(&f, nat4_bes, 2, 8080);
	}
	/* the fresh appliance has lost 10.2.0.1 (down): its replies are no
	 * Maglev choice any more */
	setup_lb(SVC_NAT4);
	ck_assert_int_eq(set_state("nat4", "10.2.0.1", PA_LB_DOWN), 0);
	for (k = 0; k < FLEET_N; k++) {
		fleet_flow(&f, k, false, "10.0.0.20", IPPROTO_TCP, 80);
		reply_of(&f, nat4_bes[be[k]], 8080, &r, 3);
		if (be[k] == 0) {
			reply_untouched(&r, PA_LB_V_FORWARD);
			moved++;
		} else {
			m = mbuf_of(&r);
			REQUIRE(process1(m, T0 + 5) == PA_LB_V_FORWARD);
			REQUIRE(memcmp(rte_pktmbuf_mtod(m, uint8_t *) + r.l3 +
				12, "\x0a\x00\x00\x14", 4) == 0);
			rte_pktmbuf_free(m);
			kept++;
		}
	}
	ck_assert(moved > 0 && kept > 0);
	ck_assert_int_eq(lb_stat("nat_reply_unmatched"), moved);
	ck_assert_int_eq(lb_stat("nat_reply_stateless"), kept);
}
END_TEST

/* ------------------------------------------------------------------ */
/* dsr                                                                 */
/* ------------------------------------------------------------------ */

START_TEST(test_dsr_changes_only_the_destination_mac_to_the_backends)
{
	static const uint8_t m1[6] = { 0x02, 0, 0, 0, 0xbe, 0x01 };
	static const uint8_t m2[6] = { 0x02, 0, 0, 0, 0xbe, 0x02 };
	unsigned int i, seen1 = 0, seen2 = 0;

	setup_lb("{'name': 'dsr4', 'vip': '10.0.0.30', 'port': 80, 'proto': 'tcp',"
		" 'forward': 'dsr', 'backends': [{'addr': '10.3.0.1',"
		" 'mac': '02:00:00:00:be:01'}, {'addr': '10.3.0.2',"
		" 'mac': '02:00:00:00:be:02'}]}");
	for (i = 0; i < 40; i++) {
		struct rte_mbuf *m;
		struct pa_test_frame f;
		const uint8_t *o;

		frame_l4(&f, "198.51.100.7", "10.0.0.30", IPPROTO_TCP,
			(uint16_t)(30000 + i), 80, TCP_SYN, i);
		m = mbuf_of(&f);
		ck_assert_uint_eq(process1(m, T0), PA_LB_V_FORWARD);
		o = rte_pktmbuf_mtod(m, const uint8_t *);
		ck_assert_uint_eq(rte_pktmbuf_pkt_len(m), f.len);
		if (memcmp(o, m1, 6) == 0)
			seen1++;
		else if (memcmp(o, m2, 6) == 0)
			seen2++;
		else
			ck_abort_msg("destination MAC is no backend's");
		ck_assert(memcmp(o + 6, f.b + 6, f.len - 6) == 0);
		rte_pktmbuf_free(m);
	}
	ck_assert(seen1 > 0 && seen2 > 0);
}
END_TEST

/* ------------------------------------------------------------------ */
/* No backend, other traffic                                          */
/* ------------------------------------------------------------------ */

START_TEST(test_service_with_all_backends_down_gives_no_backend)
{
	struct rte_mbuf *m;
	struct pa_test_frame f;

	setup_lb("{'name': 'dead', 'vip': '10.0.0.60', 'port': 80, 'proto': 'tcp',"
		" 'forward': 'ipip', 'backends': [{'addr': '10.1.0.1', 'state': 'down'},"
		" {'addr': '10.1.0.2', 'state': 'down'}]}," SVC_WEB4);
	frame_l4(&f, "198.51.100.7", "10.0.0.60", IPPROTO_TCP, 1234, 80,
		TCP_SYN, 0);
	m = mbuf_of(&f);
	ck_assert_uint_eq(process1(m, T0), PA_LB_V_NO_BACKEND);
	rte_pktmbuf_free(m);
	ck_assert_int_eq(lb_stat("no_backend"), 1);
	ck_assert_int_eq(lb_stat("flows"), 0);

	/* a working service whose backends all go down */
	frame_l4(&f, "198.51.100.7", "10.0.0.10", IPPROTO_TCP, 1234, 80,
		TCP_SYN, 0);
	send_ipip4(&f, T0);
	ck_assert_int_eq(set_state("web4", "10.1.0.1", PA_LB_DOWN), 0);
	ck_assert_int_eq(set_state("web4", "10.1.0.2", PA_LB_DOWN), 0);
	ck_assert_int_eq(set_state("web4", "10.1.0.3", PA_LB_DOWN), 0);
	m = mbuf_of(&f);
	ck_assert_uint_eq(process1(m, T0 + 1), PA_LB_V_NO_BACKEND);
	rte_pktmbuf_free(m);
	ck_assert_int_eq(lb_stat("no_backend"), 2);
}
END_TEST

START_TEST(test_non_vip_traffic_and_icmp_echo_replies_to_the_vip_are_untouched)
{
	struct pa_test_frame f;

	setup_lb(SVC_WEB4 "," SVC_NAT4);
	/* the service port, another address */
	frame_l4(&f, "198.51.100.7", "10.0.0.99", IPPROTO_TCP, 1234, 80,
		TCP_SYN, 5);
	check_untouched(&f);
	/* the VIP, another port */
	frame_l4(&f, "198.51.100.7", "10.0.0.10", IPPROTO_TCP, 1234, 81,
		TCP_SYN, 5);
	check_untouched(&f);
	/* the VIP and port, another protocol */
	frame_l4(&f, "198.51.100.7", "10.0.0.10", IPPROTO_UDP, 1234, 80, 0, 5);
	check_untouched(&f);
	/* ICMP to the VIP that is neither an echo request nor an error
	 * (an echo reply) */
	frame_eth(&f, 0, RTE_ETHER_TYPE_IPV4);
	frame_ipv4(&f, "198.51.100.7", "10.0.0.10", IPPROTO_ICMP, 0, 0, 1);
	frame_icmp(&f);
	frame_payload(&f, 16, 2);
	frame_fix(&f);
	check_untouched(&f);
	/* IPv6 to a VIP-looking address */
	frame_l4(&f, "2001:db8:99::7", "::ffff:10.0.0.10", IPPROTO_TCP, 1234, 80,
		TCP_SYN, 5);
	check_untouched(&f);
	/* not IP */
	frame_eth(&f, 0, RTE_ETHER_TYPE_ARP);
	frame_payload(&f, 46, 0);
	check_untouched(&f);
	ck_assert_int_eq(lb_stat("balanced"), 0);
	ck_assert_int_eq(lb_stat("flows"), 0);
}
END_TEST

TCase *
lb_tcase_modes(void)
{
	TCase *tc = tcase_create("forwarding");

	tcase_set_timeout(tc, 120);
	tcase_add_checked_fixture(tc, NULL, teardown_lb);
	tcase_add_test(tc, test_ipip4_prepends_outer_ipv4_and_keeps_the_inner_packet_byte_identical);
	tcase_add_test(tc, test_ipip4_addresses_the_frame_to_the_backend_mac_when_it_has_one);
	tcase_add_test(tc, test_gateway_next_hop_is_chosen_by_family);
	tcase_add_test(tc, test_ipip4_trims_ethernet_padding_after_the_inner_packet);
	tcase_add_test(tc, test_ipip4_keeps_the_vlan_tag_in_front_of_the_outer_header);
	tcase_add_test(tc, test_ipip6_prepends_outer_ipv6_with_next_header_41_and_keeps_the_inner_packet);
	tcase_add_test(tc, test_nat4_tcp_rewrites_destination_and_checksums_equal_full_recomputation);
	tcase_add_test(tc, test_nat4_udp_rewrites_destination_and_checksums_equal_full_recomputation);
	tcase_add_test(tc, test_nat4_udp_without_checksum_stays_without);
	tcase_add_test(tc, test_nat6_tcp_and_udp_rewrite_destination_and_checksums_equal_full_recomputation);
	tcase_add_test(tc, test_nat_checksums_equal_full_recomputation_for_many_random_packets);
	tcase_add_test(tc, test_nat_checksums_are_exact_whatever_the_original_checksum);
	tcase_add_test(tc, test_nat_reply_of_a_known_flow_gets_the_vip_and_service_port_as_source);
	tcase_add_test(tc, test_client_hash_is_the_parsers_hash_of_the_clients_flow);
	tcase_add_test(tc, test_nat_reply_without_a_flow_is_translated_as_the_appliance_with_the_flow_would);
	tcase_add_test(tc, test_nat_reply_without_a_flow_from_a_backend_maglev_did_not_choose_is_left_unchanged);
	tcase_add_test(tc, test_nat_reply_index_lists_every_nat_service_of_a_backend);
	tcase_add_test(tc, test_nat_reply_of_a_backend_of_two_services_is_translated_only_when_one_explains_it);
	tcase_add_test(tc, test_nat_reply_of_a_non_maglev_service_is_translated_only_with_its_flow);
	tcase_add_test(tc, test_nat_reply_without_a_flow_follows_the_current_maglev_choice);
	tcase_add_test(tc, test_dsr_changes_only_the_destination_mac_to_the_backends);
	tcase_add_test(tc, test_non_vip_traffic_and_icmp_echo_replies_to_the_vip_are_untouched);
	tcase_add_test(tc, test_service_with_all_backends_down_gives_no_backend);
	return tc;
}
