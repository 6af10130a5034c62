/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of lib/lb, ICMP for VIPs (echo answered in place, quoted
 * errors sent to their flow's backend), path MTU (fragmentation needed /
 * packet too big) and the MSS clamp.
 *
 * Part of test_lb (test_lb.c): the fixture is lb_fixture.h's.
 */

#include "lb_fixture.h"

/* ------------------------------------------------------------------ */
/* ICMP for VIPs, path MTU, MSS clamp                                  */
/* ------------------------------------------------------------------ */

/* The ICMP (IPv4) or ICMPv6 checksum of the packet at @p l3 (no
 * extension headers), computed afresh: 0 when the packet's is right. */
static uint16_t
icmp_csum_check(const uint8_t *l3)
{
	uint32_t s = 0, len;
	uint8_t ph[8];

	if ((l3[0] >> 4) == 4) {
		len = pa_test_get16(l3 + 2) - (l3[0] & 0xfu) * 4;
		return pa_test_csum_fold(pa_test_sum16(l3 + (l3[0] & 0xfu) * 4,
			len, 0));
	}
	len = pa_test_get16(l3 + 4);
	memset(ph, 0, sizeof(ph));
	pa_test_put32(ph, len);
	ph[7] = IPPROTO_ICMPV6;
	s = pa_test_sum16(l3 + 8, 32, s);
	s = pa_test_sum16(ph, 8, s);
	s = pa_test_sum16(l3 + 40, len, s);
	return pa_test_csum_fold(s);
}

/* An ICMP echo request @p src -> @p dst. */
static void
frame_echo(struct pa_test_frame *f, const char *src, const char *dst)
{
	bool v6 = strchr(src, ':') != NULL;
	uint8_t *icmp;

	frame_eth(f, 0, v6 ? RTE_ETHER_TYPE_IPV6 : RTE_ETHER_TYPE_IPV4);
	if (v6)
		frame_ipv6(f, src, dst, IPPROTO_ICMPV6, 0);
	else
		frame_ipv4(f, src, dst, IPPROTO_ICMP, 0, 0, 1);
	pa_test_frame_icmp(f, v6 ? 128 : 8, 0x1234);
	frame_payload(f, 24, 3);
	frame_fix(f);
	icmp = f->b + f->l4;
	pa_test_put16(icmp + 2, 0);
	pa_test_put16(icmp + 2, icmp_csum_check(f->b + f->l3));
	REQUIRE(icmp_csum_check(f->b + f->l3) == 0);
}

static void
check_echo_reply(const char *client, const char *vip)
{
	struct pa_test_frame f;
	struct rte_mbuf *m;
	const uint8_t *o, *l3, *i3;
	bool v6 = strchr(client, ':') != NULL;
	unsigned int alen = v6 ? 16 : 4, sa = v6 ? 8 : 12, da = v6 ? 24 : 16;

	frame_echo(&f, client, vip);
	m = mbuf_of(&f);
	ck_assert_int_eq(process1(m, T0), PA_LB_V_FORWARD);
	ck_assert_uint_eq(rte_pktmbuf_pkt_len(m), f.len);
	o = rte_pktmbuf_mtod(m, const uint8_t *);
	l3 = o + 14;
	i3 = f.b + 14;
	/* back to the sender's MAC (no port known: from the MAC it was
	 * sent to) */
	ck_assert_mem_eq(o, mac_peer, 6);
	ck_assert_mem_eq(o + 6, mac_me, 6);
	ck_assert_mem_eq(l3 + sa, i3 + da, alen);
	ck_assert_mem_eq(l3 + da, i3 + sa, alen);
	if (v6) {
		ck_assert_uint_eq(l3[7], 64);
		ck_assert_uint_eq(l3[40], 129);
		ck_assert_mem_eq(l3 + 41, i3 + 41, 1);
		ck_assert_mem_eq(l3 + 44, i3 + 44, f.len - 14 - 44);
	} else {
		ck_assert_uint_eq(l3[8], 64);
		ck_assert_uint_eq(pa_test_ip4_csum(l3), pa_test_get16(l3 + 10));
		ck_assert_uint_eq(l3[20], 0);
		ck_assert_mem_eq(l3 + 24, i3 + 24, f.len - 14 - 24);
	}
	ck_assert_uint_eq(icmp_csum_check(l3), 0);
	rte_pktmbuf_free(m);
}

START_TEST(test_echo_request_to_a_vip_is_answered_in_place_with_checksums_right)
{
	setup_lb(SVC_WEB4 "," SVC_WEB6);
	check_echo_reply("198.51.100.7", "10.0.0.10");
	check_echo_reply("2001:db8:99::7", "2001:db8:10::10");
	ck_assert_int_eq(lb_stat("icmp_echo_replies"), 2);
	/* not to a VIP: untouched */
	{
		struct pa_test_frame f;

		frame_echo(&f, "198.51.100.7", "10.0.0.99");
		check_untouched(&f);
	}
	ck_assert_int_eq(lb_stat("icmp_echo_replies"), 2);
}
END_TEST

START_TEST(test_echo_request_to_a_vip_passes_untouched_with_icmp_echo_false)
{
	struct pa_test_frame f;

	lb_extra = " 'icmp_echo': false,";
	setup_lb(SVC_WEB4 "," SVC_WEB6);
	lb_extra = "";
	frame_echo(&f, "198.51.100.7", "10.0.0.10");
	check_untouched(&f);
	frame_echo(&f, "2001:db8:99::7", "2001:db8:10::10");
	check_untouched(&f);
	ck_assert_int_eq(lb_stat("icmp_echo_replies"), 0);
}
END_TEST

START_TEST(test_echo_request_from_a_group_or_zero_mac_is_not_answered)
{
	static const uint8_t group[6] = { 0x01, 0x00, 0x5e, 0, 0, 1 };
	static const uint8_t zero[6];
	struct pa_test_frame f;

	setup_lb(SVC_WEB4 "," SVC_WEB6);
	frame_echo(&f, "198.51.100.7", "10.0.0.10");
	memcpy(f.b + 6, group, 6);
	check_untouched(&f);
	frame_echo(&f, "2001:db8:99::7", "2001:db8:10::10");
	memcpy(f.b + 6, zero, 6);
	check_untouched(&f);
	ck_assert_int_eq(lb_stat("icmp_echo_replies"), 0);
}
END_TEST

/*
 * An ICMP error from router @p router to @p vip quoting the packet
 * vip:vport -> client:cport (@p proto) the VIP sent, @p type / @p code
 * (IPv4: 3/4 frag needed with MTU 1400; IPv6: 2 packet too big).
 */
static void
frame_quoted_error(struct pa_test_frame *f, const char *router,
		const char *vip, uint16_t vport, const char *client,
		uint16_t cport, uint8_t proto)
{
	bool v6 = strchr(vip, ':') != NULL;
	struct pa_test_frame q;
	uint8_t *icmp;
	unsigned int qlen;

	/* the quoted packet, as the VIP sent it (TTL 50, DF) */
	frame_l4(&q, vip, client, proto, vport, cport, TCP_SYN | 0x10, 100);
	qlen = q.len - 14;
	frame_eth(f, 0, v6 ? RTE_ETHER_TYPE_IPV6 : RTE_ETHER_TYPE_IPV4);
	if (v6)
		frame_ipv6(f, router, vip, IPPROTO_ICMPV6, 0);
	else
		frame_ipv4(f, router, vip, IPPROTO_ICMP, 0, 0, 9);
	pa_test_frame_icmp(f, v6 ? 2 : 3, 0);
	icmp = f->b + f->l4;
	icmp[1] = v6 ? 0 : 4;
	pa_test_put32(icmp + 4, 1400);
	memcpy(pa_test_frame_grow(f, qlen), q.b + 14, qlen);
	/* the builder's fix must not touch the quote: lengths by hand */
	if (v6)
		pa_test_put16(f->b + f->l3 + 4, (uint16_t)(8 + qlen));
	else {
		pa_test_put16(f->b + f->l3 + 2, (uint16_t)(20 + 8 + qlen));
		pa_test_put16(f->b + f->l3 + 10, 0);
		pa_test_put16(f->b + f->l3 + 10, pa_test_ip4_csum(f->b + f->l3));
	}
	pa_test_put16(icmp + 2, 0);
	pa_test_put16(icmp + 2, icmp_csum_check(f->b + f->l3));
}

/* Send a quoted error; @return the verdict and, in @p m_out, the mbuf
 * (NULL when dropped). */
static uint8_t
send_error(const struct pa_test_frame *f, struct rte_mbuf **m_out)
{
	struct rte_mbuf *m = mbuf_of(f);
	uint8_t v = process1(m, T0 + hz);

	if (v != PA_LB_V_FORWARD) {
		rte_pktmbuf_free(m);
		m = NULL;
	}
	*m_out = m;
	return v;
}

START_TEST(test_quoted_error_goes_to_the_flows_backend_for_100_flows)
{
	unsigned int i, rr_used[3] = { 0 };
	struct pa_test_frame f;
	struct rte_mbuf *m;
	char client[32];
	uint32_t be, dst;
	const uint8_t *o;

	/* rr: the flow's backend is not the Maglev choice in general, so
	 * only the flow table can give it */
	setup_lb("{'name': 'web4', 'vip': '10.0.0.10', 'port': 80, 'proto': 'tcp',"
		" 'scheduler': 'rr', 'forward': 'ipip', 'backends': [{'addr': '10.1.0.1'},"
		" {'addr': '10.1.0.2'}, {'addr': '10.1.0.3'}]}");
	for (i = 0; i < 100; i++) {
		be = web4_flow(i, TCP_SYN, T0);
		rr_used[(rte_be_to_cpu_32(be) & 0xff) - 1]++;
		snprintf(client, sizeof(client), "198.51.%u.%u", 100 + i / 200,
			1 + i % 200);
		frame_quoted_error(&f, "203.0.113.1", "10.0.0.10", 80, client,
			(uint16_t)(20000 + i), IPPROTO_TCP);
		ck_assert_int_eq(send_error(&f, &m), PA_LB_V_FORWARD);
		o = rte_pktmbuf_mtod(m, const uint8_t *);
		ck_assert_uint_eq(rte_pktmbuf_pkt_len(m), f.len + 20);
		ck_assert_uint_eq(o[14 + 9], IPPROTO_IPIP);
		memcpy(&dst, o + 14 + 16, 4);
		ck_assert_msg(dst == be, "flow %u: error to %08x, flow to %08x",
			i, dst, be);
		/* the error itself, byte for byte, inside */
		ck_assert_mem_eq(o + 14 + 20, f.b + 14, f.len - 14);
		rte_pktmbuf_free(m);
	}
	ck_assert_uint_gt(rr_used[0], 0);
	ck_assert_uint_gt(rr_used[1], 0);
	ck_assert_int_eq(lb_stat("icmp_errors_forwarded"), 100);
	ck_assert_int_eq(lb_stat("flows"), 100);
}
END_TEST

START_TEST(test_quoted_error_without_a_flow_gets_the_flows_maglev_choice)
{
	struct pa_test_frame f, p;
	struct pa_lb_trace_result r;
	struct pa_flow_key k;
	struct rte_mbuf *m;
	unsigned int i;
	char client[48];
	const uint8_t *o;

	setup_lb(SVC_WEB4 "," SVC_WEB6);
	for (i = 0; i < 50; i++) {
		bool v6 = i & 1;

		if (v6)
			snprintf(client, sizeof(client), "2001:db8:99::%x", i + 1);
		else
			snprintf(client, sizeof(client), "198.51.100.%u", i + 1);
		/* the flow's 5-tuple, as trace_packet is asked */
		frame_l4(&p, client, v6 ? "2001:db8:10::10" : "10.0.0.10",
			IPPROTO_TCP, (uint16_t)(30000 + i), v6 ? 443 : 80,
			TCP_SYN, 0);
		k = key_of(&p);
		ck_assert_int_eq(pa_lb_trace(lb, &k, false, &r), 0);
		ck_assert(r.backend_found);
		frame_quoted_error(&f, v6 ? "2001:db8:ff::1" : "203.0.113.1",
			v6 ? "2001:db8:10::10" : "10.0.0.10", v6 ? 443 : 80,
			client, (uint16_t)(30000 + i), IPPROTO_TCP);
		ck_assert_int_eq(send_error(&f, &m), PA_LB_V_FORWARD);
		o = rte_pktmbuf_mtod(m, const uint8_t *);
		if (v6)
			ck_assert_mem_eq(o + 14 + 24, r.backend.v6.s6_addr, 16);
		else
			ck_assert_mem_eq(o + 14 + 16, &r.backend.v4, 4);
		rte_pktmbuf_free(m);
	}
	/* no flow was made by an error */
	ck_assert_int_eq(lb_stat("flows"), 0);
}
END_TEST

START_TEST(test_quoted_error_about_a_nat_reply_is_natted_to_the_backend)
{
	struct pa_test_frame f, p;
	struct rte_mbuf *m;
	const uint8_t *o, *l3, *q;
	uint8_t be[4];
	unsigned int k;
	const char *vip[] = { "10.0.0.20", "2001:db8:20::20" };
	const char *cl[] = { "198.51.100.9", "2001:db8:99::9" };

	setup_lb(SVC_NAT4 "," SVC_NAT6);
	for (k = 0; k < 2; k++) {
		bool v6 = k == 1;
		unsigned int sa = v6 ? 8 : 12, da = v6 ? 24 : 16;
		unsigned int alen = v6 ? 16 : 4, qoff = v6 ? 48 : 28;
		uint8_t proto = IPPROTO_UDP;

		/* the flow: client -> VIP:53 (udp) */
		frame_l4(&p, cl[k], vip[k], proto, 4444, 53, 0, 20);
		m = mbuf_of(&p);
		ck_assert_int_eq(process1(m, T0), PA_LB_V_FORWARD);
		o = rte_pktmbuf_mtod(m, const uint8_t *);
		memcpy(be, o + 14 + da, 4);
		rte_pktmbuf_free(m);
		frame_quoted_error(&f, v6 ? "2001:db8:ff::1" : "203.0.113.1",
			vip[k], 53, cl[k], 4444, proto);
		ck_assert_int_eq(send_error(&f, &m), PA_LB_V_FORWARD);
		o = rte_pktmbuf_mtod(m, const uint8_t *);
		l3 = o + 14;
		q = l3 + qoff;
		ck_assert_uint_eq(rte_pktmbuf_pkt_len(m), f.len);
		/* outer destination and quoted source: the backend, port 5353 */
		ck_assert_mem_eq(l3 + da, v6 ? (const uint8_t *)q + sa : be,
			v6 ? 16 : 4);
		ck_assert_mem_eq(q + sa, l3 + da, alen);
		ck_assert_uint_eq(pa_test_get16(q + (v6 ? 40 : 20)), 5353);
		ck_assert_mem_eq(q + da, f.b + 14 + qoff + da, alen);
		/* every checksum right */
		ck_assert_uint_eq(icmp_csum_check(l3), 0);
		if (!v6) {
			ck_assert_uint_eq(pa_test_ip4_csum(l3),
				pa_test_get16(l3 + 10));
			ck_assert_uint_eq(pa_test_ip4_csum(q),
				pa_test_get16(q + 10));
		}
		/* the quoted UDP checksum as the backend's datagram had it */
		ck_assert_uint_eq(pa_test_l4_csum(q),
			pa_test_get16(q + (v6 ? 40 : 20) + 6));
		rte_pktmbuf_free(m);
	}
	ck_assert_int_eq(lb_stat("icmp_errors_forwarded"), 2);
}
END_TEST

START_TEST(test_errors_quoting_garbage_or_no_service_are_dropped_and_counted)
{
	struct pa_test_frame f;
	struct rte_mbuf *m;
	uint8_t *q;

	setup_lb(SVC_WEB4);
	/* not a service port of the VIP */
	frame_quoted_error(&f, "203.0.113.1", "10.0.0.10", 81, "198.51.100.1",
		1000, IPPROTO_TCP);
	ck_assert_int_eq(send_error(&f, &m), PA_LB_V_ICMP_NO_SERVICE);
	/* quoting a packet from another address than the VIP */
	frame_quoted_error(&f, "203.0.113.1", "10.0.0.10", 80, "198.51.100.1",
		1000, IPPROTO_TCP);
	memcpy(f.b + 14 + 28 + 12, "\x0a\x00\x00\x63", 4);
	ck_assert_int_eq(send_error(&f, &m), PA_LB_V_ICMP_NO_SERVICE);
	/* a quoted total length shorter than its header + 8 */
	frame_quoted_error(&f, "203.0.113.1", "10.0.0.10", 80, "198.51.100.1",
		1000, IPPROTO_TCP);
	q = f.b + 14 + 28;
	pa_test_put16(q + 2, 24);
	ck_assert_int_eq(send_error(&f, &m), PA_LB_V_ICMP_BAD_QUOTE);
	/* an IHL beyond the quote */
	frame_quoted_error(&f, "203.0.113.1", "10.0.0.10", 80, "198.51.100.1",
		1000, IPPROTO_TCP);
	f.b[14 + 28] = 0x4f;
	f.len = 14 + 28 + 40;
	pa_test_put16(f.b + 14 + 2, 28 + 40);
	ck_assert_int_eq(send_error(&f, &m), PA_LB_V_ICMP_BAD_QUOTE);
	/* truncated: 12 bytes of quote */
	frame_quoted_error(&f, "203.0.113.1", "10.0.0.10", 80, "198.51.100.1",
		1000, IPPROTO_TCP);
	f.len = 14 + 28 + 12;
	pa_test_put16(f.b + 14 + 2, 28 + 12);
	ck_assert_int_eq(send_error(&f, &m), PA_LB_V_ICMP_BAD_QUOTE);
	/* an IPv6 header quoted in ICMPv4 */
	frame_quoted_error(&f, "203.0.113.1", "10.0.0.10", 80, "198.51.100.1",
		1000, IPPROTO_TCP);
	f.b[14 + 28] = 0x60;
	ck_assert_int_eq(send_error(&f, &m), PA_LB_V_ICMP_BAD_QUOTE);
	/* a later fragment */
	frame_quoted_error(&f, "203.0.113.1", "10.0.0.10", 80, "198.51.100.1",
		1000, IPPROTO_TCP);
	pa_test_put16(q + 6, 0x0010);
	ck_assert_int_eq(send_error(&f, &m), PA_LB_V_ICMP_BAD_QUOTE);
	ck_assert_int_eq(lb_stat("icmp_bad_quote"), 5);
	ck_assert_int_eq(lb_stat("icmp_no_service"), 2);
	ck_assert_int_eq(lb_stat("icmp_errors_forwarded"), 0);
}
END_TEST

/* lb_icmp_too_big() on a packet of @p size IP bytes. */
static void
check_too_big(bool v6, unsigned int payload, uint32_t mtu)
{
	struct pa_test_frame f;
	struct rte_mbuf *m;
	struct pa_pkt_meta *meta;
	const uint8_t *o, *l3, *icmp;
	unsigned int iph = v6 ? 40 : 20, qlen, ilen;

	frame_l4(&f, v6 ? "2001:db8:99::7" : "198.51.100.7",
		v6 ? "2001:db8:10::10" : "10.0.0.10", IPPROTO_TCP, 1234, 80,
		0x10, payload);
	frame_pad(&f, f.len + 4);	/* padding never quoted */
	ilen = f.len - 4 - 14;
	qlen = RTE_MIN(ilen, (v6 ? 1280u : 576u) - iph - 8);
	m = mbuf_of(&f);
	meta = pa_pkt_meta(m);
	ck_assert_int_eq(lb_icmp_too_big(m, meta, mtu, NULL), 0);
	o = rte_pktmbuf_mtod(m, const uint8_t *);
	l3 = o + 14;
	icmp = l3 + iph;
	ck_assert_uint_eq(rte_pktmbuf_pkt_len(m), 14 + iph + 8 + qlen);
	ck_assert_mem_eq(o, mac_peer, 6);
	ck_assert_mem_eq(o + 6, mac_me, 6);
	ck_assert_uint_eq(meta->l4_off, 14 + iph);
	if (v6) {
		ck_assert_uint_eq(l3[0] >> 4, 6);
		ck_assert_uint_eq(pa_test_get16(l3 + 4), 8 + qlen);
		ck_assert_uint_eq(l3[6], IPPROTO_ICMPV6);
		ck_assert_mem_eq(l3 + 8, f.b + 14 + 24, 16);	/* from the VIP */
		ck_assert_mem_eq(l3 + 24, f.b + 14 + 8, 16);	/* to the client */
		ck_assert_uint_eq(icmp[0], 2);
		ck_assert_uint_eq(icmp[1], 0);
		ck_assert_uint_eq((uint32_t)pa_test_get16(icmp + 4) << 16 |
			pa_test_get16(icmp + 6), RTE_MAX(mtu, 1280u));
		ck_assert_uint_eq(meta->l4_proto, IPPROTO_ICMPV6);
	} else {
		ck_assert_uint_eq(l3[0], 0x45);
		ck_assert_uint_eq(pa_test_get16(l3 + 2), 28 + qlen);
		ck_assert_uint_eq(l3[9], IPPROTO_ICMP);
		ck_assert_uint_eq(pa_test_ip4_csum(l3), pa_test_get16(l3 + 10));
		ck_assert_mem_eq(l3 + 12, f.b + 14 + 16, 4);
		ck_assert_mem_eq(l3 + 16, f.b + 14 + 12, 4);
		ck_assert_uint_eq(icmp[0], 3);
		ck_assert_uint_eq(icmp[1], 4);
		ck_assert_uint_eq(pa_test_get16(icmp + 4), 0);
		ck_assert_uint_eq(pa_test_get16(icmp + 6), mtu);
		ck_assert_uint_eq(meta->l4_proto, IPPROTO_ICMP);
	}
	ck_assert_uint_eq(icmp_csum_check(l3), 0);
	ck_assert_mem_eq(icmp + 8, f.b + 14, qlen);
	/* it parses as what it is */
	ck_assert_int_eq(pa_pkt_parse_mbuf(m), PA_PKT_OK);
	rte_pktmbuf_free(m);
}

START_TEST(test_frag_needed_and_packet_too_big_builders_field_by_field)
{
	check_too_big(false, 1460, 1480);
	check_too_big(false, 100, 1480);	/* shorter than 548: all quoted */
	check_too_big(true, 1440, 1460);
	check_too_big(true, 1440, 1000);	/* at least 1280 */
	check_too_big(true, 60, 1460);
}
END_TEST

/* A TCP header with options @p opt (@p olen bytes, a multiple of 4),
 * random ports/seq/payload, its checksum right. */
static unsigned int
mss_segment(uint8_t *l3, bool v6, const uint8_t *opt, unsigned int olen,
		unsigned int payload)
{
	unsigned int iph = v6 ? 40 : 20, tl = 20 + olen + payload, i;
	uint8_t *tcp = l3 + iph;

	memset(l3, 0, iph + tl);
	if (v6) {
		l3[0] = 0x60;
		pa_test_put16(l3 + 4, (uint16_t)tl);
		l3[6] = IPPROTO_TCP;
		l3[7] = 64;
		for (i = 8; i < 40; i++)
			l3[i] = (uint8_t)rng();
	} else {
		l3[0] = 0x45;
		pa_test_put16(l3 + 2, (uint16_t)(20 + tl));
		l3[8] = 64;
		l3[9] = IPPROTO_TCP;
		for (i = 12; i < 20; i++)
			l3[i] = (uint8_t)rng();
	}
	for (i = 0; i < 12; i++)
		tcp[i] = (uint8_t)rng();
	tcp[12] = (uint8_t)(((20 + olen) / 4) << 4);
	tcp[13] = TCP_SYN;
	memcpy(tcp + 20, opt, olen);
	for (i = 0; i < payload; i++)
		tcp[20 + olen + i] = (uint8_t)rng();
	pa_test_put16(tcp + 16, pa_test_l4_csum(l3));
	return iph + tl;
}

START_TEST(test_mss_clamp_checksum_equals_full_recomputation_for_many_cases)
{
	uint8_t l3[1600], opt[40];
	unsigned int n, i, olen, nops, at, payload, clamped = 0;
	uint16_t mss, clamp, got;
	bool v6;

	for (n = 0; n < 20000; n++) {
		v6 = n & 1;
		/* 0..3 NOPs first, so the MSS value lands at odd and even
		 * offsets, then other options around it */
		nops = rng() % 4;
		olen = 0;
		for (i = 0; i < nops; i++)
			opt[olen++] = 1;
		if (rng() % 3 == 0) {		/* SACK permitted first */
			opt[olen++] = 4;
			opt[olen++] = 2;
		}
		at = olen;
		mss = (uint16_t)rng();
		clamp = (uint16_t)(536 + rng() % 9000);
		opt[olen++] = 2;
		opt[olen++] = 4;
		opt[olen++] = (uint8_t)(mss >> 8);
		opt[olen++] = (uint8_t)mss;
		if (rng() % 2) {		/* window scale */
			opt[olen++] = 3;
			opt[olen++] = 3;
			opt[olen++] = 7;
		}
		while (olen % 4)
			opt[olen++] = 0;	/* end of options, padding */
		payload = rng() % 3 == 0 ? rng() % 64 : 0;
		mss_segment(l3, v6, opt, olen, payload);
		{
			uint8_t *tcp = l3 + (v6 ? 40 : 20);
			bool r = lb_mss_clamp(tcp, 20 + olen + payload, clamp);

			got = pa_test_get16(tcp + 20 + at + 2);
			ck_assert_int_eq(r, mss > clamp);
			ck_assert_uint_eq(got, mss > clamp ? clamp : mss);
			ck_assert_msg(pa_test_get16(tcp + 16) ==
				pa_test_l4_csum(l3) ||
				/* 0 and 0xffff are the same sum */
				(pa_test_get16(tcp + 16) == 0xffff &&
				 pa_test_l4_csum(l3) == 0) ||
				(pa_test_get16(tcp + 16) == 0 &&
				 pa_test_l4_csum(l3) == 0xffff),
				"case %u: mss %u clamp %u at %u: %04x != %04x",
				n, mss, clamp, at, pa_test_get16(tcp + 16),
				pa_test_l4_csum(l3));
			clamped += r;
		}
	}
	ck_assert_uint_gt(clamped, 1000);
}
END_TEST

START_TEST(test_mss_clamp_on_syns_to_the_service_and_nat_syn_acks)
{
	struct pa_test_frame f;
	struct rte_mbuf *m;
	const uint8_t *o, *tcp;
	static const uint8_t opt[8] = { 1, 2, 4, 0x23, 0x28, 1, 1, 0 };

	setup_lb("{'name': 'web4', 'vip': '10.0.0.10', 'port': 80, 'proto': 'tcp',"
		" 'forward': 'nat', 'mss_clamp': 1360, 'backends':"
		" [{'addr': '10.1.0.1', 'port': 8080}]}");
	/* a SYN with MSS 9000 (at an odd offset) */
	frame_eth(&f, 0, RTE_ETHER_TYPE_IPV4);
	frame_ipv4(&f, "198.51.100.7", "10.0.0.10", IPPROTO_TCP, 0, IP4_DF, 0);
	pa_test_frame_tcp(&f, 1234, 80, 7, TCP_SYN, 1, 8192);
	memcpy(f.b + f.l4 + 20, opt, 8);
	frame_fix(&f);
	m = mbuf_of(&f);
	ck_assert_int_eq(process1(m, T0), PA_LB_V_FORWARD);
	o = rte_pktmbuf_mtod(m, const uint8_t *);
	tcp = o + 14 + 20;
	ck_assert_uint_eq(pa_test_get16(tcp + 23), 1360);
	ck_assert_uint_eq(pa_test_get16(tcp + 16), pa_test_l4_csum(o + 14));
	rte_pktmbuf_free(m);
	/* its SYN-ACK back from the backend */
	frame_eth(&f, 0, RTE_ETHER_TYPE_IPV4);
	frame_ipv4(&f, "10.1.0.1", "198.51.100.7", IPPROTO_TCP, 0, IP4_DF, 0);
	pa_test_frame_tcp(&f, 8080, 1234, 7, TCP_SYN | 0x10, 1, 8192);
	memcpy(f.b + f.l4 + 20, opt, 8);
	frame_fix(&f);
	m = mbuf_of(&f);
	ck_assert_int_eq(process1(m, T0), PA_LB_V_FORWARD);
	o = rte_pktmbuf_mtod(m, const uint8_t *);
	tcp = o + 14 + 20;
	ck_assert_uint_eq(pa_test_get16(tcp), 80);
	ck_assert_uint_eq(pa_test_get16(tcp + 23), 1360);
	ck_assert_uint_eq(pa_test_get16(tcp + 16), pa_test_l4_csum(o + 14));
	rte_pktmbuf_free(m);
	/* not a SYN: left alone */
	frame_eth(&f, 0, RTE_ETHER_TYPE_IPV4);
	frame_ipv4(&f, "198.51.100.7", "10.0.0.10", IPPROTO_TCP, 0, IP4_DF, 0);
	pa_test_frame_tcp(&f, 1234, 80, 7, 0x10, 1, 8192);
	memcpy(f.b + f.l4 + 20, opt, 8);
	frame_fix(&f);
	m = mbuf_of(&f);
	ck_assert_int_eq(process1(m, T0), PA_LB_V_FORWARD);
	tcp = rte_pktmbuf_mtod(m, const uint8_t *) + 14 + 20;
	ck_assert_uint_eq(pa_test_get16(tcp + 23), 9000);
	rte_pktmbuf_free(m);
	ck_assert_int_eq(lb_stat("mss_clamped"), 2);
}
END_TEST

/* An ICMP (@p v6 false) / ICMPv6 error @p type / @p code from a router to
 * @p dst quoting a packet of protocol @p qproto from @p qsrc. */
static struct rte_mbuf *
icmp_error_to(bool v6, const char *dst, uint8_t type, uint8_t code,
		uint8_t qproto, const char *qsrc)
{
	struct pa_test_frame f;
	uint8_t qs[16], qd[16];

	REQUIRE(inet_pton(v6 ? AF_INET6 : AF_INET, qsrc, qs) == 1);
	REQUIRE(inet_pton(v6 ? AF_INET6 : AF_INET, v6 ? "2001:db8:9::1" :
		"10.9.0.1", qd) == 1);
	frame_eth(&f, 0, v6 ? RTE_ETHER_TYPE_IPV6 : RTE_ETHER_TYPE_IPV4);
	if (v6)
		frame_ipv6(&f, "2001:db8:1::1", dst, IPPROTO_ICMPV6, 0);
	else
		frame_ipv4(&f, "198.51.100.1", dst, IPPROTO_ICMP, 0, 0, 1);
	pa_test_frame_icmp(&f, type, 0);
	f.b[f.l4 + 1] = code;
	pa_test_frame_quote(&f, v6 ? 6 : 4, qproto, qs, qd);
	pa_test_frame_fix(&f, 0);
	return mbuf_of(&f);
}

static bool
owns(struct rte_mbuf *m)
{
	bool r = pa_lb_local_owns(m, pa_pkt_meta(m));

	rte_pktmbuf_free(m);
	return r;
}

START_TEST(test_local_addr_owns_only_the_icmp_errors_about_its_own_ipip)
{
	struct pa_test_frame f;

	/* errors quoting an ipip / IPv6-in-IPv6 packet it sent */
	ck_assert(owns(icmp_error_to(false, "198.51.100.5", 3, 4, IPPROTO_IPIP,
		"198.51.100.5")));
	ck_assert(owns(icmp_error_to(false, "198.51.100.5", 11, 0,
		IPPROTO_IPIP, "198.51.100.5")));
	ck_assert(owns(icmp_error_to(false, "198.51.100.5", 12, 0,
		IPPROTO_IPIP, "198.51.100.5")));
	ck_assert(owns(icmp_error_to(true, "2001:db8:1::5", 2, 0,
		IPPROTO_IPV6, "2001:db8:1::5")));
	ck_assert(owns(icmp_error_to(true, "2001:db8:1::5", 1, 3,
		IPPROTO_IPV6, "2001:db8:1::5")));
	/* not its own: another protocol (the kernel's UDP, TCP), another
	 * source, not an error (echo, redirect), ICMPv6 informational */
	ck_assert(!owns(icmp_error_to(false, "198.51.100.5", 3, 3,
		IPPROTO_UDP, "198.51.100.5")));
	ck_assert(!owns(icmp_error_to(false, "198.51.100.5", 3, 4,
		IPPROTO_TCP, "198.51.100.5")));
	ck_assert(!owns(icmp_error_to(false, "198.51.100.5", 3, 4,
		IPPROTO_IPIP, "198.51.100.9")));
	ck_assert(!owns(icmp_error_to(false, "198.51.100.5", 5, 0,
		IPPROTO_IPIP, "198.51.100.5")));
	ck_assert(!owns(icmp_error_to(false, "198.51.100.5", 8, 0,
		IPPROTO_IPIP, "198.51.100.5")));
	ck_assert(!owns(icmp_error_to(true, "2001:db8:1::5", 128, 0,
		IPPROTO_IPV6, "2001:db8:1::5")));
	ck_assert(!owns(icmp_error_to(true, "2001:db8:1::5", 2, 0,
		IPPROTO_TCP, "2001:db8:1::5")));
	/* TCP and UDP to it: the kernel's */
	frame_l4(&f, "198.51.100.1", "198.51.100.5", IPPROTO_TCP, 40000, 179,
		0x02, 0);
	ck_assert(!owns(mbuf_of(&f)));
	frame_l4(&f, "198.51.100.1", "198.51.100.5", IPPROTO_UDP, 40000, 53,
		0, 8);
	ck_assert(!owns(mbuf_of(&f)));
}
END_TEST

TCase *
lb_tcase_icmp(void)
{
	TCase *tc = tcase_create("icmp");

	tcase_add_checked_fixture(tc, NULL, teardown_lb);
	tcase_add_test(tc, test_echo_request_to_a_vip_is_answered_in_place_with_checksums_right);
	tcase_add_test(tc, test_echo_request_to_a_vip_passes_untouched_with_icmp_echo_false);
	tcase_add_test(tc, test_echo_request_from_a_group_or_zero_mac_is_not_answered);
	tcase_add_test(tc, test_quoted_error_goes_to_the_flows_backend_for_100_flows);
	tcase_add_test(tc, test_quoted_error_without_a_flow_gets_the_flows_maglev_choice);
	tcase_add_test(tc, test_quoted_error_about_a_nat_reply_is_natted_to_the_backend);
	tcase_add_test(tc, test_errors_quoting_garbage_or_no_service_are_dropped_and_counted);
	tcase_add_test(tc, test_frag_needed_and_packet_too_big_builders_field_by_field);
	tcase_add_test(tc, test_mss_clamp_checksum_equals_full_recomputation_for_many_cases);
	tcase_add_test(tc, test_mss_clamp_on_syns_to_the_service_and_nat_syn_acks);
	tcase_add_test(tc, test_local_addr_owns_only_the_icmp_errors_about_its_own_ipip);
	return tc;
}
