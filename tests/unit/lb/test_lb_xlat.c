/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of lib/lb/lb_xlat.c: IPv4 <-> IPv6 translation for full NAT
 * (RFC 7915), TCP/UDP packets and ICMP errors.
 *
 * Each translated frame is compared byte for byte with the frame that
 * tests/unit/lb/gen_xlat_vectors.py built with scapy from the RFC's
 * rules (xlat_vectors.h), then its checksums are verified afresh here
 * (plain one's complement sums over the result) and it is parsed again to
 * check the metadata the translation left. What must be refused is
 * checked to come back unchanged, byte for byte.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <check.h>
#include <rte_byteorder.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

#include "lb_xlat.h"
#include "pa_pkt.h"
#include "pa_test_frame.h"
#include "pa_test_main.h"
#include "xlat_vectors.h"

static struct rte_mempool *pool;

#define REQUIRE(c)	ck_assert(c)

/* ------------------------------------------------------------------ */
/* Frames in mbufs                                                     */
/* ------------------------------------------------------------------ */

/* An mbuf holding @p len bytes of @p b after @p headroom bytes. */
static struct rte_mbuf *
mbuf_with(const uint8_t *b, uint32_t len, uint16_t headroom)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	char *p;

	REQUIRE(m != NULL);
	REQUIRE(headroom + len <= m->buf_len);
	m->data_off = headroom;
	p = rte_pktmbuf_append(m, (uint16_t)len);
	REQUIRE(p != NULL);
	memcpy(p, b, len);
	return m;
}

static void
parse(const struct rte_mbuf *m, struct pa_pkt_meta *meta)
{
	memset(meta, 0, sizeof(*meta));
	REQUIRE(pa_pkt_parse(rte_pktmbuf_mtod(m, const uint8_t *),
		rte_pktmbuf_data_len(m), rte_pktmbuf_pkt_len(m), meta) ==
		PA_PKT_OK);
}

/* The frame's bytes, all segments, into @p out (PA_TEST_FRAME_MAX). */
static uint32_t
frame_bytes(const struct rte_mbuf *m, uint8_t *out)
{
	uint32_t len = rte_pktmbuf_pkt_len(m);
	const void *p;

	REQUIRE(len <= PA_TEST_FRAME_MAX);
	p = rte_pktmbuf_read(m, 0, len, out);
	REQUIRE(p != NULL);
	if (p != out)
		memcpy(out, p, len);
	return len;
}

static void
expect_bytes(const char *name, const uint8_t *got, uint32_t got_len,
		const uint8_t *want, uint32_t want_len)
{
	uint32_t i;

	ck_assert_msg(got_len == want_len, "%s: %u bytes, want %u", name,
		got_len, want_len);
	if (memcmp(got, want, want_len) == 0)
		return;
	for (i = 0; i < want_len; i++)
		ck_assert_msg(got[i] == want[i],
			"%s: byte %u is 0x%02x, want 0x%02x", name, i, got[i],
			want[i]);
}

/* ------------------------------------------------------------------ */
/* Checksums, verified afresh                                          */
/* ------------------------------------------------------------------ */

/* The IPv6 pseudo-header's sum: addresses at @p ip6 + 8, @p len, @p nh. */
static uint32_t
phdr6(const uint8_t *ip6, uint32_t len, uint8_t nh)
{
	uint8_t ph[8] = { 0 };

	pa_test_put32(ph, len);
	ph[7] = nh;
	return pa_test_sum16(ph, 8, pa_test_sum16(ip6 + 8, 32, 0));
}

static uint32_t
phdr4(const uint8_t *ip4, uint32_t len, uint8_t proto)
{
	uint8_t ph[4] = { 0, proto, 0, 0 };

	pa_test_put16(ph + 2, (uint16_t)len);
	return pa_test_sum16(ph, 4, pa_test_sum16(ip4 + 12, 8, 0));
}

/* Every checksum of the frame @p f (@p len bytes) is right: the IPv4
 * header's, the TCP/UDP or ICMP one over the whole datagram, and for an
 * ICMP error a quoted IPv4 header's. */
static void
check_csums(const char *name, const uint8_t *f, uint32_t len,
		const struct pa_pkt_meta *meta)
{
	const uint8_t *ip = f + meta->l3_off, *l4 = f + meta->l4_off;
	bool v4 = (meta->flags & PA_PKT_F_IPV4) != 0;
	uint32_t l4len, s;

	if (v4) {
		ck_assert_msg(pa_test_csum_fold(pa_test_sum16(ip, 20, 0)) == 0,
			"%s: IPv4 header checksum", name);
		l4len = pa_test_get16(ip + 2) - 20u;
		s = meta->l4_proto == IPPROTO_ICMP ? 0 :
			phdr4(ip, l4len, meta->l4_proto);
	} else {
		l4len = pa_test_get16(ip + 4);
		s = phdr6(ip, l4len, meta->l4_proto);
	}
	REQUIRE(meta->l4_off + l4len <= len);
	if (v4 && meta->l4_proto == IPPROTO_UDP &&
	    pa_test_get16(l4 + 6) == 0)
		return;		/* IPv4 UDP without checksum */
	ck_assert_msg(pa_test_csum_fold(pa_test_sum16(l4, l4len, s)) == 0,
		"%s: L4 checksum", name);
	if (v4 && meta->l4_proto == IPPROTO_ICMP)
		ck_assert_msg(pa_test_csum_fold(pa_test_sum16(l4 + 8, 20, 0))
			== 0, "%s: quoted IPv4 header checksum", name);
}

/* After an edit by a test of an untagged ICMP error: the outer length
 * (@p len frame bytes), the IPv4 header checksum and the ICMP checksum
 * set afresh. */
static void
icmp_refix(uint8_t *f, uint32_t len)
{
	bool v4 = pa_test_get16(f + 12) == 0x0800;
	uint8_t *ip = f + 14, *icmp = ip + (v4 ? 20 : 40);
	uint32_t ilen = len - (uint32_t)(icmp - f), s = 0;

	if (v4) {
		pa_test_put16(ip + 2, (uint16_t)(len - 14));
		pa_test_put16(ip + 10, 0);
		pa_test_put16(ip + 10, pa_test_ip4_csum(ip));
	} else {
		pa_test_put16(ip + 4, (uint16_t)ilen);
		s = phdr6(ip, ilen, IPPROTO_ICMPV6);
	}
	pa_test_put16(icmp + 2, 0);
	pa_test_put16(icmp + 2, pa_test_csum_fold(pa_test_sum16(icmp, ilen,
		s)));
}

/* ------------------------------------------------------------------ */
/* The vectors                                                         */
/* ------------------------------------------------------------------ */

static int
apply(const struct xlat_vec *v, struct rte_mbuf *m, struct pa_pkt_meta *meta)
{
	uint16_t sport = rte_cpu_to_be_16(v->sport);
	uint16_t dport = rte_cpu_to_be_16(v->dport);
	uint16_t id = rte_cpu_to_be_16(v->ip_id);

	switch (v->op) {
	case XLAT_4TO6:
		return lb_xlat_4to6(m, meta, v->src, v->dst, sport, dport);
	case XLAT_6TO4:
		return lb_xlat_6to4(m, meta, v->src, v->dst, sport, dport, id);
	case XLAT_ICMP:
		return lb_xlat_icmp(m, meta, v->ofam, v->src, v->dst, v->qsrc,
			v->qdst, sport, dport, id);
	}
	return -ENOTSUP;
}

/* The metadata the function left is what parsing its result gives. */
static void
check_meta(const struct xlat_vec *v, const struct pa_pkt_meta *got,
		const struct pa_pkt_meta *fresh)
{
	const uint16_t fam = PA_PKT_F_IPV4 | PA_PKT_F_IPV6;

	ck_assert_msg((got->flags & fam) == (fresh->flags & fam),
		"%s: family flags", v->name);
	ck_assert_msg(got->l3_off == fresh->l3_off, "%s: l3_off", v->name);
	ck_assert_msg(got->l4_off == fresh->l4_off, "%s: l4_off", v->name);
	ck_assert_msg(got->l4_proto == fresh->l4_proto, "%s: l4_proto",
		v->name);
	if (v->op != XLAT_ICMP) {
		ck_assert_msg(got->sport == fresh->sport &&
			got->dport == fresh->dport, "%s: ports", v->name);
		ck_assert_msg(got->sport == v->sport, "%s: sport", v->name);
	}
}

/* Translate @p v's frame (split over two segments at @p split when not
 * 0) and compare it with scapy's, byte for byte. */
static void
run_split(const struct xlat_vec *v, uint32_t split)
{
	static uint8_t out[PA_TEST_FRAME_MAX];
	struct pa_pkt_meta meta, fresh;
	struct rte_mbuf *m, *tail;
	uint32_t len;
	int rc;

	if (split == 0) {
		m = mbuf_with(v->in, v->in_len, RTE_PKTMBUF_HEADROOM);
	} else {
		m = mbuf_with(v->in, split, RTE_PKTMBUF_HEADROOM);
		tail = mbuf_with(v->in + split, v->in_len - split, 0);
		REQUIRE(rte_pktmbuf_chain(m, tail) == 0);
	}
	parse(m, &meta);
	rc = apply(v, m, &meta);
	ck_assert_msg(rc == 0, "%s (%s): %d", v->name, v->doc, rc);
	len = frame_bytes(m, out);
	expect_bytes(v->name, out, len, v->out, v->out_len);
	memset(&fresh, 0, sizeof(fresh));
	REQUIRE(pa_pkt_parse(out, len, len, &fresh) == PA_PKT_OK);
	check_meta(v, &meta, &fresh);
	check_csums(v->name, out, len, &fresh);
	rte_pktmbuf_free(m);
}

static void
run(const struct xlat_vec *v)
{
	run_split(v, 0);
}

/* @p v's input with @p edit applied (and its lengths and checksums made
 * right again when @p refix) is refused with @p want and unchanged. */
static void
refused(const struct xlat_vec *v, int want, uint16_t headroom,
		void (*edit)(uint8_t *f, uint32_t *len), bool refix)
{
	static uint8_t in[PA_TEST_FRAME_MAX], out[PA_TEST_FRAME_MAX];
	struct pa_pkt_meta meta, before;
	struct rte_mbuf *m;
	uint32_t len = v->in_len;
	int rc;

	memcpy(in, v->in, len);
	if (edit != NULL) {
		edit(in, &len);
		if (refix)
			icmp_refix(in, len);
	}
	m = mbuf_with(in, len, headroom);
	parse(m, &meta);
	before = meta;
	rc = apply(v, m, &meta);
	ck_assert_msg(rc == want, "%s edited: %d, want %d", v->name, rc, want);
	ck_assert_msg(memcmp(&meta, &before, sizeof(meta)) == 0,
		"%s: metadata changed", v->name);
	ck_assert_msg(m->data_off == headroom, "%s: moved", v->name);
	expect_bytes(v->name, out, frame_bytes(m, out), in, len);
	rte_pktmbuf_free(m);
}

/* ------------------------------------------------------------------ */
/* TCP and UDP                                                         */
/* ------------------------------------------------------------------ */

START_TEST(tcp_4to6_matches_rfc7915_bytes)
{
	run(&xv_tcp_4to6);
}
END_TEST

START_TEST(tcp_6to4_matches_rfc7915_bytes_df_clear_up_to_1260)
{
	run(&xv_tcp_6to4);
}
END_TEST

START_TEST(df_set_only_above_1260_bytes)
{
	run(&xv_udp_6to4_1260);
	run(&xv_udp_6to4_1261);
	run(&xv_tcp_6to4_df);
}
END_TEST

START_TEST(udp_both_ways_match_rfc7915_bytes)
{
	run(&xv_udp_6to4);
	run(&xv_udp_4to6);
}
END_TEST

START_TEST(udp_zero_checksum_gets_one_in_ipv6)
{
	run(&xv_udp0_4to6);
}
END_TEST

START_TEST(udp_zero_checksum_stays_none_in_ipv4)
{
	run(&xv_udp0_6to4);
}
END_TEST

START_TEST(udp_zero_checksum_computed_over_segments)
{
	/* the payload continues in a second segment */
	run_split(&xv_udp0_4to6, 14 + 20 + 8 + 5);
}
END_TEST

START_TEST(ethernet_padding_is_not_carried_over)
{
	REQUIRE(xv_udp_pad_4to6.in_len == 60);
	run(&xv_udp_pad_4to6);
}
END_TEST

START_TEST(vlan_tags_move_with_the_ethernet_header)
{
	run(&xv_vlan_4to6);
	run(&xv_qinq_6to4);
}
END_TEST

/* Edits of the vectors' inputs into what must be refused. */
static void
ip4_options(uint8_t *f, uint32_t *len)
{
	/* a 4-byte option (NOPs) in front of the TCP header */
	memmove(f + 14 + 24, f + 14 + 20, *len - 34);
	memset(f + 34, 1, 4);
	f[14] = 0x46;
	*len += 4;
	pa_test_put16(f + 16, (uint16_t)(*len - 14));
	pa_test_put16(f + 24, 0);
	pa_test_put16(f + 24, pa_test_ip4_csum(f + 14));
}

static void
ip4_first_fragment(uint8_t *f, uint32_t *len)
{
	(void)len;
	pa_test_put16(f + 20, 0x2000);		/* MF */
	pa_test_put16(f + 24, 0);
	pa_test_put16(f + 24, pa_test_ip4_csum(f + 14));
}

static void
ip4_icmp(uint8_t *f, uint32_t *len)
{
	(void)len;
	f[14 + 9] = IPPROTO_ICMP;
	pa_test_put16(f + 24, 0);
	pa_test_put16(f + 24, pa_test_ip4_csum(f + 14));
}

/* An 8-byte extension header @p type in front of the L4 header. */
static void
ip6_ext(uint8_t *f, uint32_t *len, uint8_t type)
{
	uint8_t *ip = f + 14;

	memmove(ip + 48, ip + 40, *len - 54);
	memset(ip + 40, 0, 8);
	ip[40] = ip[6];
	ip[6] = type;
	if (type == 44)
		pa_test_put32(ip + 44, 0x1234);	/* atomic fragment */
	*len += 8;
	pa_test_put16(ip + 4, (uint16_t)(pa_test_get16(ip + 4) + 8));
}

static void
ip6_hop_by_hop(uint8_t *f, uint32_t *len)
{
	ip6_ext(f, len, 0);
	f[14 + 42] = 1;		/* PadN of 4 */
	f[14 + 43] = 4;
}

static void
ip6_fragment(uint8_t *f, uint32_t *len)
{
	ip6_ext(f, len, 44);
}

static void
ip6_sctp(uint8_t *f, uint32_t *len)
{
	(void)len;
	f[14 + 6] = 132;
}

START_TEST(ipv4_options_fragments_and_other_protocols_refused)
{
	refused(&xv_tcp_4to6, -EINVAL, RTE_PKTMBUF_HEADROOM, ip4_options,
		false);
	refused(&xv_tcp_4to6, -EINVAL, RTE_PKTMBUF_HEADROOM,
		ip4_first_fragment, false);
	refused(&xv_tcp_4to6, -EINVAL, RTE_PKTMBUF_HEADROOM, ip4_icmp, false);
	/* the wrong family */
	{
		struct xlat_vec v = xv_tcp_4to6;

		v.op = XLAT_6TO4;
		refused(&v, -EINVAL, RTE_PKTMBUF_HEADROOM, NULL, false);
		v = xv_tcp_6to4;
		v.op = XLAT_4TO6;
		refused(&v, -EINVAL, RTE_PKTMBUF_HEADROOM, NULL, false);
	}
}
END_TEST

START_TEST(ipv6_extension_headers_fragments_and_other_protocols_refused)
{
	refused(&xv_tcp_6to4, -EINVAL, RTE_PKTMBUF_HEADROOM, ip6_hop_by_hop,
		false);
	refused(&xv_tcp_6to4, -EINVAL, RTE_PKTMBUF_HEADROOM, ip6_fragment,
		false);
	refused(&xv_tcp_6to4, -EINVAL, RTE_PKTMBUF_HEADROOM, ip6_sctp, false);
}
END_TEST

START_TEST(no_headroom_refused_unchanged)
{
	refused(&xv_tcp_4to6, -ENOSPC, LB_XLAT_GROWTH - 1, NULL, false);
	refused(&xv_icmp_port_unreach_4to6, -ENOSPC,
		2 * LB_XLAT_GROWTH - 1, NULL, false);
	/* exactly enough is enough; shrinking needs none */
	{
		static uint8_t out[PA_TEST_FRAME_MAX];
		struct pa_pkt_meta meta;
		struct rte_mbuf *m;

		m = mbuf_with(xv_tcp_4to6.in, xv_tcp_4to6.in_len,
			LB_XLAT_GROWTH);
		parse(m, &meta);
		REQUIRE(apply(&xv_tcp_4to6, m, &meta) == 0);
		expect_bytes("tcp_4to6 at headroom 20", out,
			frame_bytes(m, out), xv_tcp_4to6.out,
			xv_tcp_4to6.out_len);
		rte_pktmbuf_free(m);
		m = mbuf_with(xv_tcp_6to4.in, xv_tcp_6to4.in_len, 0);
		parse(m, &meta);
		REQUIRE(apply(&xv_tcp_6to4, m, &meta) == 0);
		expect_bytes("tcp_6to4 at headroom 0", out,
			frame_bytes(m, out), xv_tcp_6to4.out,
			xv_tcp_6to4.out_len);
		rte_pktmbuf_free(m);
	}
}
END_TEST

/* ------------------------------------------------------------------ */
/* ICMP errors                                                         */
/* ------------------------------------------------------------------ */

START_TEST(icmp_port_unreachable_translated_both_ways)
{
	run(&xv_icmp_port_unreach_4to6);
	run(&xv_icmp_port_unreach_6to4);
}
END_TEST

START_TEST(icmp_frag_needed_becomes_packet_too_big_mtu_plus_20)
{
	run(&xv_icmp_frag_needed_4to6);
}
END_TEST

START_TEST(icmp_frag_needed_mtu_at_least_1280_in_ipv6)
{
	run(&xv_icmp_frag_needed_min_4to6);
}
END_TEST

START_TEST(icmp_frag_needed_mtu_0_read_as_rfc1191_plateau)
{
	run(&xv_icmp_frag_needed_mtu0_4to6);
}
END_TEST

START_TEST(icmp_packet_too_big_becomes_frag_needed_mtu_minus_20)
{
	run(&xv_icmp_too_big_6to4);
	run(&xv_icmp_client_too_big_6to4);
	run(&xv_icmp_too_big_below_1280_6to4);
}
END_TEST

START_TEST(icmp_time_exceeded_translated_both_ways)
{
	run(&xv_icmp_time_exceeded_4to6);
	run(&xv_icmp_time_exceeded_6to4);
}
END_TEST

START_TEST(icmp_parameter_problem_pointer_mapped)
{
	run(&xv_icmp_param_problem_4to6);
	run(&xv_icmp_param_problem_6to4);
	run(&xv_icmp_param_problem_dst_6to4);
}
END_TEST

START_TEST(icmp_protocol_unreachable_and_next_header_mapped)
{
	run(&xv_icmp_proto_unreach_4to6);
	run(&xv_icmp_next_header_6to4);
}
END_TEST

START_TEST(icmp_same_family_rewrites_addresses_and_ports)
{
	run(&xv_icmp_same_family_4);
	run(&xv_icmp_same_family_6);
}
END_TEST

/* The ICMP error's frame offsets (untagged vectors). */
#define ICMP4_AT	(14 + 20)
#define ICMP6_AT	(14 + 40)

static void
icmp4_ptr_identification(uint8_t *f, uint32_t *len)
{
	(void)len;
	f[ICMP4_AT + 4] = 4;
}

static void
icmp4_precedence_violation(uint8_t *f, uint32_t *len)
{
	(void)len;
	f[ICMP4_AT] = 3;
	f[ICMP4_AT + 1] = 14;
	f[ICMP4_AT + 4] = 0;
}

static void
icmp4_missing_option(uint8_t *f, uint32_t *len)
{
	(void)len;
	f[ICMP4_AT + 1] = 1;
}

static void
icmp4_redirect(uint8_t *f, uint32_t *len)
{
	(void)len;
	f[ICMP4_AT] = 5;
	f[ICMP4_AT + 1] = 1;
}

static void
icmp4_time_exceeded_code_2(uint8_t *f, uint32_t *len)
{
	(void)len;
	f[ICMP4_AT] = 11;
	f[ICMP4_AT + 1] = 2;
	f[ICMP4_AT + 4] = 0;
}

static void
icmp6_time_exceeded_code_2(uint8_t *f, uint32_t *len)
{
	(void)len;
	f[ICMP6_AT] = 3;
	f[ICMP6_AT + 1] = 2;
	memset(f + ICMP6_AT + 4, 0, 4);
}

static void
icmp6_ptr_flow_label(uint8_t *f, uint32_t *len)
{
	(void)len;
	f[ICMP6_AT + 7] = 2;
}

static void
icmp6_option_problem(uint8_t *f, uint32_t *len)
{
	(void)len;
	f[ICMP6_AT + 1] = 2;
}

static void
icmp6_policy_failed(uint8_t *f, uint32_t *len)
{
	(void)len;
	f[ICMP6_AT] = 1;
	f[ICMP6_AT + 1] = 5;
	memset(f + ICMP6_AT + 4, 0, 4);
}

static void
icmp6_echo(uint8_t *f, uint32_t *len)
{
	(void)len;
	f[ICMP6_AT] = 128;
	f[ICMP6_AT + 1] = 0;
}

START_TEST(icmp_without_an_equivalent_refused)
{
	const int e = -EINVAL;
	const uint16_t h = RTE_PKTMBUF_HEADROOM;

	refused(&xv_icmp_param_problem_4to6, e, h, icmp4_ptr_identification,
		true);
	refused(&xv_icmp_param_problem_4to6, e, h, icmp4_precedence_violation,
		true);
	refused(&xv_icmp_param_problem_4to6, e, h, icmp4_missing_option,
		true);
	refused(&xv_icmp_param_problem_6to4, e, h, icmp6_ptr_flow_label,
		true);
	refused(&xv_icmp_param_problem_6to4, e, h, icmp6_option_problem,
		true);
	refused(&xv_icmp_port_unreach_6to4, e, h, icmp6_policy_failed, true);
	/* codes that do not exist */
	refused(&xv_icmp_param_problem_4to6, e, h, icmp4_time_exceeded_code_2,
		true);
	refused(&xv_icmp_param_problem_6to4, e, h, icmp6_time_exceeded_code_2,
		true);
}
END_TEST

static void
corrupt(uint8_t *f, uint32_t *len)
{
	f[*len - 1] ^= 0x40;
}

static void
drop_last_byte(uint8_t *f, uint32_t *len)
{
	(void)f;
	(*len)--;
}

START_TEST(icmp_garbage_refused)
{
	const int e = -EINVAL;
	const uint16_t h = RTE_PKTMBUF_HEADROOM;

	/* not errors */
	refused(&xv_icmp_port_unreach_4to6, e, h, icmp4_redirect, true);
	refused(&xv_icmp_port_unreach_6to4, e, h, icmp6_echo, true);
	/* a wrong ICMP checksum, in each family and in the same family */
	refused(&xv_icmp_port_unreach_4to6, e, h, corrupt, false);
	refused(&xv_icmp_port_unreach_6to4, e, h, corrupt, false);
	refused(&xv_icmp_same_family_4, e, h, corrupt, false);
	/* a quote without its 8 bytes of L4 header (7 left) */
	refused(&xv_icmp_frag_needed_4to6, e, h, drop_last_byte, true);
	/* not a TCP/UDP packet a TCP/UDP translation made */
	{
		struct xlat_vec v = xv_tcp_4to6;

		v.op = XLAT_ICMP;
		v.ofam = 6;
		refused(&v, e, h, NULL, false);
		v = xv_icmp_port_unreach_4to6;
		v.ofam = 5;
		refused(&v, e, h, NULL, false);
	}
}
END_TEST

START_TEST(icmp_truncated_quote_translated)
{
	/* the header + 8 bytes (RFC 792's quote): the ports, no checksum */
	REQUIRE(xv_icmp_frag_needed_4to6.in_len == 14 + 20 + 8 + 28);
	run(&xv_icmp_frag_needed_4to6);
	/* cut in the payload: the quoted TCP checksum updated as the whole
	 * translated packet's (scapy's, over the whole segment) */
	run(&xv_icmp_frag_needed_min_4to6);
	run(&xv_icmp_client_too_big_6to4);
	/* cut inside the quoted checksum: left alone, nothing written past
	 * the quote's end */
	run(&xv_icmp_quote_cut_in_checksum_4to6);
}
END_TEST

START_TEST(icmp_over_two_segments_refused_unchanged)
{
	static uint8_t out[PA_TEST_FRAME_MAX];
	const struct xlat_vec *v = &xv_icmp_port_unreach_4to6;
	const uint32_t split = 14 + 20 + 8 + 20 + 8 + 4;
	struct pa_pkt_meta meta, before;
	struct rte_mbuf *m;

	m = mbuf_with(v->in, split, RTE_PKTMBUF_HEADROOM);
	REQUIRE(rte_pktmbuf_chain(m, mbuf_with(v->in + split,
		v->in_len - split, 0)) == 0);
	memset(&meta, 0, sizeof(meta));
	REQUIRE(pa_pkt_parse(v->in, v->in_len, v->in_len, &meta) ==
		PA_PKT_OK);
	before = meta;
	REQUIRE(apply(v, m, &meta) == -EINVAL);
	REQUIRE(memcmp(&meta, &before, sizeof(meta)) == 0);
	expect_bytes(v->name, out, frame_bytes(m, out), v->in, v->in_len);
	rte_pktmbuf_free(m);
}
END_TEST

START_TEST(icmp_translations_cut_to_the_rfc_sizes)
{
	REQUIRE(xv_icmp_time_exceeded_4to6.out_len == 14 + LB_XLAT_ICMP6_MAX);
	run(&xv_icmp_time_exceeded_4to6);
	REQUIRE(xv_icmp_too_big_6to4.out_len == 14 + LB_XLAT_ICMP4_MAX);
	run(&xv_icmp_too_big_6to4);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Damaged input                                                       */
/* ------------------------------------------------------------------ */

static const struct xlat_vec *const all_vecs[] = {
	&xv_tcp_4to6, &xv_tcp_6to4, &xv_tcp_6to4_df, &xv_udp_6to4_1260,
	&xv_udp_6to4_1261, &xv_udp0_6to4, &xv_udp_6to4, &xv_udp_4to6,
	&xv_udp0_4to6, &xv_udp_pad_4to6, &xv_vlan_4to6, &xv_qinq_6to4,
	&xv_icmp_port_unreach_4to6, &xv_icmp_frag_needed_4to6,
	&xv_icmp_frag_needed_min_4to6, &xv_icmp_frag_needed_mtu0_4to6,
	&xv_icmp_time_exceeded_4to6, &xv_icmp_param_problem_4to6,
	&xv_icmp_proto_unreach_4to6, &xv_icmp_quote_cut_in_checksum_4to6,
	&xv_icmp_too_big_6to4, &xv_icmp_too_big_below_1280_6to4,
	&xv_icmp_port_unreach_6to4, &xv_icmp_time_exceeded_6to4,
	&xv_icmp_param_problem_6to4, &xv_icmp_param_problem_dst_6to4,
	&xv_icmp_next_header_6to4, &xv_icmp_client_too_big_6to4,
	&xv_icmp_same_family_4, &xv_icmp_same_family_6,
};

static uint32_t
rnd(void)
{
	static uint32_t x = 0x2545f491;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return x;
}

/* Random damage to the vectors' headers (bit flips, cuts, lengths and
 * checksums made right again or not, little headroom): what parses is
 * either refused unchanged or translated into a frame that parses as
 * the other family, whatever the bytes. */
START_TEST(damaged_input_refused_unchanged_or_translated_whole)
{
	static uint8_t in[PA_TEST_FRAME_MAX], out[PA_TEST_FRAME_MAX];
	static const uint16_t room[] = { 0, 19, 20, 39, 40,
		RTE_PKTMBUF_HEADROOM };
	unsigned int i, k, done = 0, refusals = 0;
	struct pa_pkt_meta meta, before, fresh;
	const struct xlat_vec *v;
	struct rte_mbuf *m;
	uint32_t len, olen;
	uint16_t h;
	bool to6;
	int rc;

	for (i = 0; i < 20000; i++) {
		v = all_vecs[rnd() % RTE_DIM(all_vecs)];
		len = v->in_len;
		memcpy(in, v->in, len);
		for (k = rnd() % 4; k > 0; k--)
			in[rnd() % RTE_MIN(len, 14u + 40 + 8 + 40 + 24)] ^=
				(uint8_t)(1u << (rnd() % 8));
		if (rnd() % 4 == 0)
			len = 14 + rnd() % (len - 13);
		if (v->op == XLAT_ICMP && rnd() % 2 == 0 && len >= 14 + 48 &&
		    pa_test_get16(in + 12) == (in[14] >> 4 == 4 ? 0x0800 :
			0x86dd))
			icmp_refix(in, len);
		h = room[rnd() % RTE_DIM(room)];
		m = mbuf_with(in, len, h);
		memset(&meta, 0, sizeof(meta));
		if (pa_pkt_parse(in, len, len, &meta) != PA_PKT_OK) {
			rte_pktmbuf_free(m);
			continue;
		}
		before = meta;
		rc = apply(v, m, &meta);
		if (rc != 0) {
			ck_assert_msg(rc == -EINVAL || rc == -ENOSPC,
				"%s damaged: %d", v->name, rc);
			ck_assert(memcmp(&meta, &before, sizeof(meta)) == 0);
			ck_assert(m->data_off == h);
			expect_bytes(v->name, out, frame_bytes(m, out), in,
				len);
			refusals++;
		} else {
			olen = frame_bytes(m, out);
			memset(&fresh, 0, sizeof(fresh));
			ck_assert_msg(pa_pkt_parse(out, olen, olen, &fresh) ==
				PA_PKT_OK, "%s damaged: result unparsable",
				v->name);
			to6 = v->op == XLAT_4TO6 ||
				(v->op == XLAT_ICMP && v->ofam == 6);
			ck_assert_msg(!!(fresh.flags & PA_PKT_F_IPV6) == to6,
				"%s damaged: family", v->name);
			ck_assert(fresh.l4_off == meta.l4_off &&
				fresh.l4_proto == meta.l4_proto);
			done++;
		}
		rte_pktmbuf_free(m);
	}
	/* both outcomes were exercised */
	ck_assert(done > 1000 && refusals > 1000);
}
END_TEST

/* ------------------------------------------------------------------ */

static Suite *
xlat_suite(void)
{
	Suite *s = suite_create("lb_xlat");
	TCase *tc = tcase_create("tcp_udp");

	tcase_add_test(tc, tcp_4to6_matches_rfc7915_bytes);
	tcase_add_test(tc, tcp_6to4_matches_rfc7915_bytes_df_clear_up_to_1260);
	tcase_add_test(tc, df_set_only_above_1260_bytes);
	tcase_add_test(tc, udp_both_ways_match_rfc7915_bytes);
	tcase_add_test(tc, udp_zero_checksum_gets_one_in_ipv6);
	tcase_add_test(tc, udp_zero_checksum_stays_none_in_ipv4);
	tcase_add_test(tc, udp_zero_checksum_computed_over_segments);
	tcase_add_test(tc, ethernet_padding_is_not_carried_over);
	tcase_add_test(tc, vlan_tags_move_with_the_ethernet_header);
	tcase_add_test(tc, ipv4_options_fragments_and_other_protocols_refused);
	tcase_add_test(tc,
		ipv6_extension_headers_fragments_and_other_protocols_refused);
	tcase_add_test(tc, no_headroom_refused_unchanged);
	suite_add_tcase(s, tc);

	tc = tcase_create("icmp");
	tcase_add_test(tc, icmp_port_unreachable_translated_both_ways);
	tcase_add_test(tc, icmp_frag_needed_becomes_packet_too_big_mtu_plus_20);
	tcase_add_test(tc, icmp_frag_needed_mtu_at_least_1280_in_ipv6);
	tcase_add_test(tc, icmp_frag_needed_mtu_0_read_as_rfc1191_plateau);
	tcase_add_test(tc, icmp_packet_too_big_becomes_frag_needed_mtu_minus_20);
	tcase_add_test(tc, icmp_time_exceeded_translated_both_ways);
	tcase_add_test(tc, icmp_parameter_problem_pointer_mapped);
	tcase_add_test(tc, icmp_protocol_unreachable_and_next_header_mapped);
	tcase_add_test(tc, icmp_same_family_rewrites_addresses_and_ports);
	tcase_add_test(tc, icmp_without_an_equivalent_refused);
	tcase_add_test(tc, icmp_garbage_refused);
	tcase_add_test(tc, icmp_truncated_quote_translated);
	tcase_add_test(tc, icmp_over_two_segments_refused_unchanged);
	tcase_add_test(tc, icmp_translations_cut_to_the_rfc_sizes);
	suite_add_tcase(s, tc);

	tc = tcase_create("damage");
	tcase_add_test(tc, damaged_input_refused_unchanged_or_translated_whole);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	static const char *const eal_args[] = { "-m", "64",
		"--log-level=pa.lb:warning", "-l", "0", NULL };
	static Suite *(*const suites[])(void) = { xlat_suite, NULL };
	const struct pa_test_main t = {
		.name = "test_lb_xlat",
		.suites = suites,
		.eal_args = eal_args,
		.mbufs = 127,
		.pool = &pool,
	};

	return pa_test_main_eal(&t);
}
