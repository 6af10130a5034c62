/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of lib/pkt: the parser on byte arrays (no EAL), the flow hash,
 * flow keys, and the mbuf paths (dynfield, chained mbufs) under an EAL
 * started with --no-huge.
 *
 * Every parse goes through parse_both(), which also runs the general parser
 * and fails unless the inline fast path and pa_pkt_parse_full() agree.
 */

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <netinet/in.h>

#include <check.h>

#include <rte_eal.h>
#include <rte_hash_crc.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "pa_pkt.h"
#include "pa_test_frame.h"
#include "pa_test_main.h"

/*
 * Frames from the shared builder (pa_test_frame.h), this suite's way:
 * 02:..:02 -> 02:..:01, A -> B, TTL/hop limit 64, VLAN TCIs from 100,
 * SYN-only TCP, payload bytes 0, 1, 2, ...; frame_fix() fills the lengths
 * only (the parser does not read checksums).
 */
static const uint8_t mac_dst[6] = { 0x02, 0, 0, 0, 0, 0x01 };
static const uint8_t mac_src[6] = { 0x02, 0, 0, 0, 0, 0x02 };
static const uint8_t ip4_a[4] = { 10, 0, 0, 1 };
static const uint8_t ip4_b[4] = { 10, 0, 0, 2 };
static const uint8_t ip6_a[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };
static const uint8_t ip6_b[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 2 };
#define IP4_A	0x0a000001u	/* 10.0.0.1 */
#define IP4_B	0x0a000002u	/* 10.0.0.2 */

/* Ethernet with ntags VLAN tags (TPIDs given) and the final ethertype. */
static void
frame_l2(struct pa_test_frame *f, unsigned int ntags, const uint16_t *tpids,
		uint16_t etype)
{
	pa_test_frame_l2(f, mac_dst, mac_src, ntags, tpids, 100, etype);
}

static void
frame_eth(struct pa_test_frame *f, uint16_t etype)
{
	frame_l2(f, 0, NULL, etype);
}

/* IPv4 with ihl (options are NOPs) and the raw flags/fragment field. */
static void
frame_ipv4(struct pa_test_frame *f, uint8_t proto, unsigned int ihl,
		uint16_t frag)
{
	pa_test_frame_ipv4(f, ip4_a, ip4_b, proto, 0, ihl, frag, 0, 64);
}

static void
frame_ipv6(struct pa_test_frame *f, uint8_t nh)
{
	pa_test_frame_ipv6(f, ip6_a, ip6_b, nh, 0, 0, 64);
}

/* IPv6 extension header of len bytes (multiple of 8, or of 4 for AH). */
static void
frame_ext(struct pa_test_frame *f, uint8_t type, uint8_t nh, unsigned int len)
{
	pa_test_frame_ext(f, type, nh, len);
}

/* IPv6 fragment header: offset in 8-byte units, m the More flag. */
static void
frame_frag6(struct pa_test_frame *f, uint8_t nh, uint16_t offset, int m)
{
	pa_test_frame_frag6(f, nh, offset, m != 0, 0x12345678);
}

static void
frame_tcp(struct pa_test_frame *f, uint16_t sport, uint16_t dport,
		unsigned int doff)
{
	pa_test_frame_tcp(f, sport, dport, doff, 0x02 /* SYN */, 0, 0);
}

static void
frame_udp(struct pa_test_frame *f, uint16_t sport, uint16_t dport)
{
	pa_test_frame_udp(f, sport, dport);
}

static void
frame_sctp(struct pa_test_frame *f, uint16_t sport, uint16_t dport)
{
	pa_test_frame_sctp(f, sport, dport);
}

/* ICMP echo request (or ICMPv6: type 128) */
static void
frame_icmp(struct pa_test_frame *f, uint8_t type)
{
	pa_test_frame_icmp(f, type, 0);
}

static void
frame_payload(struct pa_test_frame *f, unsigned int n)
{
	pa_test_frame_payload(f, n, 0, 1);
}

/* Fill IP total/payload length and UDP length from what was built. */
static void
frame_fix(struct pa_test_frame *f)
{
	pa_test_frame_fix(f, 0);
}

static void
frame_set_ports(struct pa_test_frame *f, uint16_t sport, uint16_t dport)
{
	pa_test_frame_set_ports(f, sport, dport);
}
/*
 * Parse with the inline parser and with the general one; they must agree
 * (result, and the whole metadata on success). So must the inline parser
 * that leaves the hash for later, once pa_pkt_hash_later() has run.
 */
static int
parse_both(const uint8_t *data, uint32_t seg_len, uint32_t pkt_len,
		struct pa_pkt_meta *meta)
{
	struct pa_pkt_meta m2, m3;
	int r1, r2, r3;

	memset(meta, 0xa5, sizeof(*meta));
	memset(&m2, 0xa5, sizeof(m2));
	memset(&m3, 0xa5, sizeof(m3));
	r1 = pa_pkt_parse(data, seg_len, pkt_len, meta);
	r2 = pa_pkt_parse_full(data, seg_len, pkt_len, &m2);
	r3 = pa_pkt_parse_nohash(data, seg_len, pkt_len, &m3);
	ck_assert_int_eq(r1, r2);
	ck_assert_int_eq(r3, r2);
	if (r1 == PA_PKT_OK) {
		ck_assert_mem_eq(meta, &m2, sizeof(m2));
		ck_assert(!(meta->flags & PA_PKT_F_HASH_LATER));
		pa_pkt_hash_later(data, &m3);
		ck_assert_mem_eq(&m3, &m2, sizeof(m2));
	}
	return r1;
}

static int
parse_frame(const struct pa_test_frame *f, struct pa_pkt_meta *meta)
{
	return parse_both(f->b, f->len, f->len, meta);
}

/* IPv4 UDP: A:sport -> B:dport with n bytes of payload */
static void
frame_v4_udp(struct pa_test_frame *f, uint16_t sport, uint16_t dport,
		unsigned int n)
{
	frame_eth(f, RTE_ETHER_TYPE_IPV4);
	frame_ipv4(f, IPPROTO_UDP, 5, 0);
	frame_udp(f, sport, dport);
	frame_payload(f, n);
	frame_fix(f);
}

static void
frame_v4_tcp(struct pa_test_frame *f, uint16_t sport, uint16_t dport,
		unsigned int n)
{
	frame_eth(f, RTE_ETHER_TYPE_IPV4);
	frame_ipv4(f, IPPROTO_TCP, 5, 0);
	frame_tcp(f, sport, dport, 5);
	frame_payload(f, n);
	frame_fix(f);
}

/* --- Ethernet and VLAN ------------------------------------------------ */

START_TEST(test_frames_shorter_than_ethernet_header_are_runt)
{
	struct pa_pkt_meta m;
	struct pa_test_frame f;
	uint32_t n;

	frame_v4_udp(&f, 1, 2, 0);
	for (n = 0; n < RTE_ETHER_HDR_LEN; n++)
		ck_assert_int_eq(parse_both(f.b, n, n, &m), PA_PKT_ERR_RUNT);
}
END_TEST

START_TEST(test_non_ip_frame_is_ok_with_non_ip_flag_and_mac_hash)
{
	struct pa_pkt_meta m, r;
	struct pa_test_frame f;

	frame_eth(&f, RTE_ETHER_TYPE_ARP);
	frame_payload(&f, 28);
	m.out_port = 7;
	ck_assert_int_eq(parse_frame(&f, &m), PA_PKT_OK);
	ck_assert_uint_eq(m.flags, PA_PKT_F_NON_IP);
	ck_assert_uint_eq(m.l3_off, RTE_ETHER_HDR_LEN);
	ck_assert_uint_eq(m.sport, 0);
	ck_assert_uint_eq(m.dport, 0);
	ck_assert_uint_eq(m.l4_proto, 0);
	ck_assert_uint_eq(m.vlan_count, 0);
	ck_assert_uint_eq(m.hash, pa_pkt_hash_mac(f.b));

	/* swapping the MAC addresses keeps the hash */
	memcpy(f.b, mac_src, 6);
	memcpy(f.b + 6, mac_dst, 6);
	ck_assert_int_eq(parse_frame(&f, &r), PA_PKT_OK);
	ck_assert_uint_eq(r.hash, m.hash);

	/* a different station does not */
	f.b[5] = 0x33;
	ck_assert_int_eq(parse_frame(&f, &r), PA_PKT_OK);
	ck_assert_uint_ne(r.hash, m.hash);
}
END_TEST

START_TEST(test_single_vlan_tag_sets_vlan_flag_and_shifts_l3)
{
	static const uint16_t tpid[] = { RTE_ETHER_TYPE_VLAN };
	struct pa_pkt_meta m;
	struct pa_test_frame f;

	frame_l2(&f, 1, tpid, RTE_ETHER_TYPE_IPV4);
	frame_ipv4(&f, IPPROTO_UDP, 5, 0);
	frame_udp(&f, 1000, 53);
	frame_payload(&f, 10);
	frame_fix(&f);
	ck_assert_int_eq(parse_frame(&f, &m), PA_PKT_OK);
	ck_assert_uint_eq(m.flags, PA_PKT_F_IPV4 | PA_PKT_F_VLAN | PA_PKT_F_L4);
	ck_assert_uint_eq(m.vlan_count, 1);
	ck_assert_uint_eq(m.l3_off, 18);
	ck_assert_uint_eq(m.l4_off, 38);
	ck_assert_uint_eq(m.sport, 1000);
	ck_assert_uint_eq(m.dport, 53);
}
END_TEST

START_TEST(test_qinq_88a8_then_8100_sets_qinq_and_two_tags)
{
	static const uint16_t tpid[] = { RTE_ETHER_TYPE_QINQ,
		RTE_ETHER_TYPE_VLAN };
	struct pa_pkt_meta m;
	struct pa_test_frame f;

	frame_l2(&f, 2, tpid, RTE_ETHER_TYPE_IPV6);
	frame_ipv6(&f, IPPROTO_TCP);
	frame_tcp(&f, 40000, 443, 5);
	frame_fix(&f);
	ck_assert_int_eq(parse_frame(&f, &m), PA_PKT_OK);
	ck_assert_uint_eq(m.flags, PA_PKT_F_IPV6 | PA_PKT_F_VLAN |
		PA_PKT_F_QINQ | PA_PKT_F_L4);
	ck_assert_uint_eq(m.vlan_count, 2);
	ck_assert_uint_eq(m.l3_off, 22);
	ck_assert_uint_eq(m.l4_off, 62);
	ck_assert_uint_eq(m.sport, 40000);
	ck_assert_uint_eq(m.dport, 443);
}
END_TEST

START_TEST(test_9100_tpid_is_a_vlan_tag)
{
	static const uint16_t tpid[] = { RTE_ETHER_TYPE_QINQ1,
		RTE_ETHER_TYPE_QINQ };
	struct pa_pkt_meta m;
	struct pa_test_frame f;

	frame_l2(&f, 2, tpid, RTE_ETHER_TYPE_ARP);
	frame_payload(&f, 28);
	ck_assert_int_eq(parse_frame(&f, &m), PA_PKT_OK);
	ck_assert_uint_eq(m.flags, PA_PKT_F_NON_IP | PA_PKT_F_VLAN |
		PA_PKT_F_QINQ);
	ck_assert_uint_eq(m.vlan_count, 2);
	ck_assert_uint_eq(m.l3_off, 22);
}
END_TEST

START_TEST(test_third_vlan_tag_is_err_vlan)
{
	static const uint16_t tpid[] = { RTE_ETHER_TYPE_QINQ,
		RTE_ETHER_TYPE_VLAN, RTE_ETHER_TYPE_VLAN };
	struct pa_pkt_meta m;
	struct pa_test_frame f;

	frame_l2(&f, 3, tpid, RTE_ETHER_TYPE_IPV4);
	frame_ipv4(&f, IPPROTO_UDP, 5, 0);
	frame_udp(&f, 1, 2);
	frame_fix(&f);
	ck_assert_int_eq(parse_frame(&f, &m), PA_PKT_ERR_VLAN);
}
END_TEST

START_TEST(test_vlan_tag_cut_short_is_err_vlan)
{
	static const uint16_t tpid[] = { RTE_ETHER_TYPE_VLAN };
	struct pa_pkt_meta m;
	struct pa_test_frame f;
	uint32_t n;

	frame_l2(&f, 1, tpid, RTE_ETHER_TYPE_IPV4);
	/* 14..17 bytes: the tag is incomplete */
	for (n = RTE_ETHER_HDR_LEN; n < 18; n++)
		ck_assert_int_eq(parse_both(f.b, n, n, &m), PA_PKT_ERR_VLAN);
}
END_TEST

/* --- IPv4 --------------------------------------------------------------- */

START_TEST(test_ipv4_udp_fills_every_field_but_out_port)
{
	struct pa_pkt_meta m;
	struct pa_test_frame f;

	frame_v4_udp(&f, 12345, 53, 18);	/* 60-byte frame */
	ck_assert_uint_eq(f.len, 60);
	memset(&m, 0, sizeof(m));
	m.out_port = 0xbeef;
	ck_assert_int_eq(pa_pkt_parse(f.b, f.len, f.len, &m), PA_PKT_OK);
	ck_assert_uint_eq(m.out_port, 0xbeef);
	ck_assert_uint_eq(m.flags, PA_PKT_F_IPV4 | PA_PKT_F_L4);
	ck_assert_uint_eq(m.l3_off, 14);
	ck_assert_uint_eq(m.l4_off, 34);
	ck_assert_uint_eq(m.sport, 12345);
	ck_assert_uint_eq(m.dport, 53);
	ck_assert_uint_eq(m.l4_proto, IPPROTO_UDP);
	ck_assert_uint_eq(m.vlan_count, 0);
	ck_assert_uint_eq(m.hash, pa_pkt_hash_v4(rte_cpu_to_be_32(IP4_A),
		rte_cpu_to_be_32(IP4_B), 12345u << 16 | 53, IPPROTO_UDP));
	ck_assert_int_eq(parse_frame(&f, &m), PA_PKT_OK);
}
END_TEST

START_TEST(test_ipv4_tcp_reports_ports_and_l4_offset)
{
	struct pa_pkt_meta m;
	struct pa_test_frame f;

	frame_eth(&f, RTE_ETHER_TYPE_IPV4);
	frame_ipv4(&f, IPPROTO_TCP, 5, 0x4000);	/* DF is not a fragment */
	frame_tcp(&f, 55555, 80, 8);		/* 12 bytes of options */
	frame_payload(&f, 100);
	frame_fix(&f);
	ck_assert_int_eq(parse_frame(&f, &m), PA_PKT_OK);
	ck_assert_uint_eq(m.flags, PA_PKT_F_IPV4 | PA_PKT_F_L4);
	ck_assert_uint_eq(m.l4_off, 34);
	ck_assert_uint_eq(m.sport, 55555);
	ck_assert_uint_eq(m.dport, 80);
	ck_assert_uint_eq(m.l4_proto, IPPROTO_TCP);
}
END_TEST

START_TEST(test_ipv4_options_move_l4_offset_by_ihl)
{
	struct pa_pkt_meta m;
	struct pa_test_frame f;
	unsigned int ihl;

	for (ihl = 5; ihl <= 15; ihl++) {
		frame_eth(&f, RTE_ETHER_TYPE_IPV4);
		frame_ipv4(&f, IPPROTO_UDP, ihl, 0);
		frame_udp(&f, 7, 9);
		frame_fix(&f);
		ck_assert_int_eq(parse_frame(&f, &m), PA_PKT_OK);
		ck_assert_uint_eq(m.l4_off, 14 + ihl * 4);
		ck_assert_uint_eq(m.sport, 7);
		ck_assert_uint_eq(m.dport, 9);
	}
}
END_TEST

START_TEST(test_ipv4_ihl_below_5_is_l3_hdrlen)
{
	struct pa_pkt_meta m;
	struct pa_test_frame f;
	unsigned int ihl;

	for (ihl = 0; ihl < 5; ihl++) {
		frame_v4_udp(&f, 1, 2, 20);
		f.b[14] = 0x40 | ihl;
		ck_assert_int_eq(parse_frame(&f, &m), PA_PKT_ERR_L3_HDRLEN);
	}
}
END_TEST

START_TEST(test_ipv4_ihl_beyond_total_length_is_l3_hdrlen)
{
	struct pa_pkt_meta m;
	struct pa_test_frame f;

	frame_eth(&f, RTE_ETHER_TYPE_IPV4);
	frame_ipv4(&f, IPPROTO_UDP, 5, 0);
	frame_payload(&f, 40);
	frame_fix(&f);
	pa_test_put16(f.b + 16, 24);	/* total length 24, IHL 7 */
	f.b[14] = 0x47;
	ck_assert_int_eq(parse_frame(&f, &m), PA_PKT_ERR_L3_HDRLEN);
	pa_test_put16(f.b + 16, 19);	/* total length below the fixed header */
	f.b[14] = 0x45;
	ck_assert_int_eq(parse_frame(&f, &m), PA_PKT_ERR_L3_HDRLEN);
}
END_TEST

START_TEST(test_ipv4_ihl_beyond_frame_is_l3_hdrlen)
{
	struct pa_pkt_meta m;
	struct pa_test_frame f;

	frame_eth(&f, RTE_ETHER_TYPE_IPV4);
	frame_ipv4(&f, IPPROTO_UDP, 5, 0);
	frame_payload(&f, 4);
	frame_fix(&f);
	f.b[14] = 0x4f;		/* 60-byte header in a 24-byte packet */
	pa_test_put16(f.b + 16, 60);
	ck_assert_int_eq(parse_frame(&f, &m), PA_PKT_ERR_L3_HDRLEN);
}
END_TEST

START_TEST(test_ipv4_total_length_beyond_frame_is_l3_len)
{
	struct pa_pkt_meta m;
	struct pa_test_frame f;

	frame_v4_udp(&f, 1, 2, 10);
	pa_test_put16(f.b + 16, f.len - 14 + 1);
	ck_assert_int_eq(parse_frame(&f, &m), PA_PKT_ERR_L3_LEN);
	pa_test_put16(f.b + 16, 0xffff);
	ck_assert_int_eq(parse_frame(&f, &m), PA_PKT_ERR_L3_LEN);
}
END_TEST

START_TEST(test_ipv4_ethernet_padding_after_datagram_is_ok)
{
	struct pa_pkt_meta m;
	struct pa_test_frame f;

	/* 14 + 20 + 8 = 42 bytes of datagram padded to 60 */
	frame_v4_udp(&f, 1, 2, 0);
	frame_payload(&f, 18);
	ck_assert_int_eq(parse_frame(&f, &m), PA_PKT_OK);
	ck_assert_uint_eq(m.flags, PA_PKT_F_IPV4 | PA_PKT_F_L4);

	frame_v4_tcp(&f, 1, 2, 0);
	frame_payload(&f, 6);
	ck_assert_int_eq(parse_frame(&f, &m), PA_PKT_OK);
	ck_assert_uint_eq(m.flags, PA_PKT_F_IPV4 | PA_PKT_F_L4);
}
END_TEST

START_TEST(test_ipv4_header_cut_short_is_l3_trunc)
{
	struct pa_pkt_meta m;
	struct pa_test_frame f;
	uint32_t n;

	frame_v4_udp(&f, 1, 2, 0);
	for (n = 14; n < 34; n++)
		ck_assert_int_eq(parse_both(f.b, n, n, &m),
			PA_PKT_ERR_L3_TRUNC);
}
END_TEST

START_TEST(test_ipv4_ethertype_with_version_6_is_l3_version)
{
	struct pa_pkt_meta m;
	struct pa_test_frame f;

	frame_v4_udp(&f, 1, 2, 10);
	f.b[14] = 0x65;
	ck_assert_int_eq(parse_frame(&f, &m), PA_PKT_ERR_L3_VERSION);
	f.b[14] = 0x05;
	ck_assert_int_eq(parse_frame(&f, &m), PA_PKT_ERR_L3_VERSION);
}
END_TEST

START_TEST(test_ipv4_first_fragment_has_ports_and_frag_flag)
{
	struct pa_pkt_meta m;
	struct pa_test_frame f;

	frame_eth(&f, RTE_ETHER_TYPE_IPV4);
	frame_ipv4(&f, IPPROTO_UDP, 5, RTE_IPV4_HDR_MF_FLAG);
	frame_udp(&f, 5000, 6000);
	frame_payload(&f, 1472);
	frame_fix(&f);
	pa_test_put16(f.b + f.l4 + 4, 3000);	/* the datagram goes on */
	ck_assert_int_eq(parse_frame(&f, &m), PA_PKT_OK);
	ck_assert_uint_eq(m.flags, PA_PKT_F_IPV4 | PA_PKT_F_FRAG |
		PA_PKT_F_L4);
	ck_assert_uint_eq(m.sport, 5000);
	ck_assert_uint_eq(m.dport, 6000);
	/* ports are left out of a fragment's hash */
	ck_assert_uint_eq(m.hash, pa_pkt_hash_v4(rte_cpu_to_be_32(IP4_A),
		rte_cpu_to_be_32(IP4_B), 0, IPPROTO_UDP));

	/* but a UDP length below 8 is still wrong */
	pa_test_put16(f.b + f.l4 + 4, 7);
	ck_assert_int_eq(parse_frame(&f, &m), PA_PKT_ERR_L4_LEN);
}
END_TEST

START_TEST(test_ipv4_later_fragment_has_no_l4_and_no_ports)
{
	struct pa_pkt_meta m;
	struct pa_test_frame f;

	/* payload that would be a bad UDP header: must not be looked at */
	frame_eth(&f, RTE_ETHER_TYPE_IPV4);
	frame_ipv4(&f, IPPROTO_UDP, 5, 185);
	frame_payload(&f, 3);
	frame_fix(&f);
	ck_assert_int_eq(parse_frame(&f, &m), PA_PKT_OK);
	ck_assert_uint_eq(m.flags, PA_PKT_F_IPV4 | PA_PKT_F_FRAG |
		PA_PKT_F_FRAG_LATER);
	ck_assert_uint_eq(m.sport, 0);
	ck_assert_uint_eq(m.dport, 0);
	ck_assert_uint_eq(m.l4_proto, IPPROTO_UDP);
	ck_assert_uint_eq(m.l4_off, 34);

	/* last fragment: offset set, MF clear */
	pa_test_put16(f.b + 20, 185 | RTE_IPV4_HDR_MF_FLAG);
	ck_assert_int_eq(parse_frame(&f, &m), PA_PKT_OK);
	ck_assert_uint_eq(m.flags, PA_PKT_F_IPV4 | PA_PKT_F_FRAG |
		PA_PKT_F_FRAG_LATER);
}
END_TEST

START_TEST(test_ipv4_fragments_of_a_datagram_hash_alike_both_ways)
{
	struct pa_pkt_meta first, later, rev;
	struct pa_test_frame f;

	frame_eth(&f, RTE_ETHER_TYPE_IPV4);
	frame_ipv4(&f, IPPROTO_UDP, 5, RTE_IPV4_HDR_MF_FLAG);
	frame_udp(&f, 5000, 6000);
	frame_payload(&f, 64);
	frame_fix(&f);
	ck_assert_int_eq(parse_frame(&f, &first), PA_PKT_OK);

	pa_test_put16(f.b + 20, 9);	/* offset 72, last */
	ck_assert_int_eq(parse_frame(&f, &later), PA_PKT_OK);
	ck_assert(later.flags & PA_PKT_F_FRAG_LATER);
	ck_assert_uint_eq(first.hash, later.hash);

	/* the reverse direction's fragments too */
	pa_test_put32(f.b + 26, IP4_B);
	pa_test_put32(f.b + 30, IP4_A);
	ck_assert_int_eq(parse_frame(&f, &rev), PA_PKT_OK);
	ck_assert_uint_eq(rev.hash, first.hash);
}
END_TEST

/* --- IPv6 --------------------------------------------------------------- */

START_TEST(test_ipv6_udp_without_extension_headers)
{
	struct pa_pkt_meta m;
	struct pa_test_frame f;

	frame_eth(&f, RTE_ETHER_TYPE_IPV6);
	frame_ipv6(&f, IPPROTO_UDP);
	frame_udp(&f, 546, 547);
	frame_payload(&f, 30);
	frame_fix(&f);
	ck_assert_int_eq(parse_frame(&f, &m), PA_PKT_OK);
	ck_assert_uint_eq(m.flags, PA_PKT_F_IPV6 | PA_PKT_F_L4);
	ck_assert_uint_eq(m.l3_off, 14);
	ck_assert_uint_eq(m.l4_off, 54);
	ck_assert_uint_eq(m.sport, 546);
	ck_assert_uint_eq(m.dport, 547);
	ck_assert_uint_eq(m.l4_proto, IPPROTO_UDP);
	ck_assert_uint_eq(m.hash, pa_pkt_hash_v6(ip6_a, ip6_b,
		546u << 16 | 547, IPPROTO_UDP));
}
END_TEST

/* One extension header of type t and length len in front of TCP. */
static void
check_one_ext(uint8_t t, unsigned int len)
{
	struct pa_pkt_meta m;
	struct pa_test_frame f;

	frame_eth(&f, RTE_ETHER_TYPE_IPV6);
	frame_ipv6(&f, t);
	frame_ext(&f, t, IPPROTO_TCP, len);
	frame_tcp(&f, 1234, 22, 5);
	frame_fix(&f);
	ck_assert_int_eq(parse_frame(&f, &m), PA_PKT_OK);
	ck_assert_uint_eq(m.flags, PA_PKT_F_IPV6 | PA_PKT_F_IPV6_EXT |
		PA_PKT_F_L4);
	ck_assert_uint_eq(m.l4_off, 54 + len);
	ck_assert_uint_eq(m.l4_proto, IPPROTO_TCP);
	ck_assert_uint_eq(m.sport, 1234);
	ck_assert_uint_eq(m.dport, 22);
}

START_TEST(test_ipv6_hop_by_hop_header_is_skipped)
{
	check_one_ext(IPPROTO_HOPOPTS, 8);
	check_one_ext(IPPROTO_HOPOPTS, 24);
}
END_TEST

START_TEST(test_ipv6_routing_header_is_skipped)
{
	check_one_ext(IPPROTO_ROUTING, 24);
}
END_TEST

START_TEST(test_ipv6_destination_options_header_is_skipped)
{
	check_one_ext(IPPROTO_DSTOPTS, 16);
	check_one_ext(IPPROTO_DSTOPTS, 2048);	/* hdr_ext_len 255 */
}
END_TEST

START_TEST(test_ipv6_ah_length_counts_4_byte_units_plus_2)
{
	check_one_ext(IPPROTO_AH, 12);
	check_one_ext(IPPROTO_AH, 24);
	check_one_ext(IPPROTO_AH, 28);	/* not a multiple of 8 */
}
END_TEST

START_TEST(test_ipv6_chain_of_every_extension_type)
{
	struct pa_pkt_meta m;
	struct pa_test_frame f;

	frame_eth(&f, RTE_ETHER_TYPE_IPV6);
	frame_ipv6(&f, IPPROTO_HOPOPTS);
	frame_ext(&f, IPPROTO_HOPOPTS, IPPROTO_DSTOPTS, 8);
	frame_ext(&f, IPPROTO_DSTOPTS, IPPROTO_ROUTING, 16);
	frame_ext(&f, IPPROTO_ROUTING, IPPROTO_FRAGMENT, 24);
	frame_frag6(&f, IPPROTO_AH, 0, 0);	/* atomic fragment */
	frame_ext(&f, IPPROTO_AH, IPPROTO_DSTOPTS, 12);
	frame_ext(&f, IPPROTO_DSTOPTS, IPPROTO_UDP, 8);
	frame_udp(&f, 4500, 4500);
	frame_payload(&f, 20);
	frame_fix(&f);
	ck_assert_int_eq(parse_frame(&f, &m), PA_PKT_OK);
	ck_assert_uint_eq(m.flags, PA_PKT_F_IPV6 | PA_PKT_F_IPV6_EXT |
		PA_PKT_F_L4);
	ck_assert_uint_eq(m.l4_off, 54 + 8 + 16 + 24 + 8 + 12 + 8);
	ck_assert_uint_eq(m.l4_proto, IPPROTO_UDP);
	ck_assert_uint_eq(m.sport, 4500);
}
END_TEST

/* n destination options headers, then UDP */
static void
frame_v6_chain(struct pa_test_frame *f, unsigned int n)
{
	unsigned int i;

	frame_eth(f, RTE_ETHER_TYPE_IPV6);
	frame_ipv6(f, n > 0 ? IPPROTO_DSTOPTS : IPPROTO_UDP);
	for (i = 0; i < n; i++)
		frame_ext(f, IPPROTO_DSTOPTS,
			i + 1 < n ? IPPROTO_DSTOPTS : IPPROTO_UDP, 8);
	frame_udp(f, 1, 2);
	frame_fix(f);
}

START_TEST(test_ipv6_eight_extension_headers_ok_nine_is_err_ext)
{
	struct pa_pkt_meta m;
	struct pa_test_frame f;

	frame_v6_chain(&f, PA_PKT_MAX_EXT_HDRS);
	ck_assert_int_eq(parse_frame(&f, &m), PA_PKT_OK);
	ck_assert_uint_eq(m.l4_off, 54 + 8 * PA_PKT_MAX_EXT_HDRS);
	frame_v6_chain(&f, PA_PKT_MAX_EXT_HDRS + 1);
	ck_assert_int_eq(parse_frame(&f, &m), PA_PKT_ERR_EXT);
}
END_TEST

START_TEST(test_ipv6_extension_header_past_payload_length_is_err_ext)
{
	struct pa_pkt_meta m;
	struct pa_test_frame f;

	/* the header's length runs past the payload length */
	frame_eth(&f, RTE_ETHER_TYPE_IPV6);
	frame_ipv6(&f, IPPROTO_ROUTING);
	frame_ext(&f, IPPROTO_ROUTING, IPPROTO_UDP, 8);
	frame_udp(&f, 1, 2);
	frame_fix(&f);
	f.b[54 + 1] = 2;	/* 24 bytes, 16 in the payload */
	ck_assert_int_eq(parse_frame(&f, &m), PA_PKT_ERR_EXT);

	/* the payload ends inside the extension header, the frame goes on */
	frame_eth(&f, RTE_ETHER_TYPE_IPV6);
	frame_ipv6(&f, IPPROTO_HOPOPTS);
	frame_payload(&f, 4);
	frame_fix(&f);
	frame_payload(&f, 20);	/* padding */
	f.b[54] = IPPROTO_UDP;
	ck_assert_int_eq(parse_frame(&f, &m), PA_PKT_ERR_EXT);
}
END_TEST

START_TEST(test_ipv6_payload_ending_at_extension_header_is_err_ext)
{
	struct pa_pkt_meta m;
	struct pa_test_frame f;
	unsigned int cut;

	/* payload length cut inside a 16-byte destination options header */
	for (cut = 1; cut < 16; cut++) {
		frame_eth(&f, RTE_ETHER_TYPE_IPV6);
		frame_ipv6(&f, IPPROTO_DSTOPTS);
		frame_ext(&f, IPPROTO_DSTOPTS, IPPROTO_UDP, 16);
		frame_udp(&f, 1, 2);
		frame_fix(&f);
		pa_test_put16(f.b + 18, cut);
		ck_assert_int_eq(parse_frame(&f, &m), PA_PKT_ERR_EXT);
	}
}
END_TEST

START_TEST(test_ipv6_first_fragment_parses_l4)
{
	struct pa_pkt_meta m;
	struct pa_test_frame f;

	frame_eth(&f, RTE_ETHER_TYPE_IPV6);
	frame_ipv6(&f, IPPROTO_FRAGMENT);
	frame_frag6(&f, IPPROTO_UDP, 0, 1);
	frame_udp(&f, 3333, 4444);
	frame_payload(&f, 100);
	frame_fix(&f);
	pa_test_put16(f.b + f.l4 + 4, 5000);	/* datagram larger than fragment */
	ck_assert_int_eq(parse_frame(&f, &m), PA_PKT_OK);
	ck_assert_uint_eq(m.flags, PA_PKT_F_IPV6 | PA_PKT_F_IPV6_EXT |
		PA_PKT_F_FRAG | PA_PKT_F_L4);
	ck_assert_uint_eq(m.l4_off, 62);
	ck_assert_uint_eq(m.sport, 3333);
	ck_assert_uint_eq(m.dport, 4444);
	ck_assert_uint_eq(m.hash, pa_pkt_hash_v6(ip6_a, ip6_b, 0,
		IPPROTO_UDP));
}
END_TEST

START_TEST(test_ipv6_later_fragment_has_no_l4_and_stops_chain)
{
	struct pa_pkt_meta m;
	struct pa_test_frame f;

	frame_eth(&f, RTE_ETHER_TYPE_IPV6);
	frame_ipv6(&f, IPPROTO_HOPOPTS);
	frame_ext(&f, IPPROTO_HOPOPTS, IPPROTO_FRAGMENT, 8);
	/* next header says dest. options, but what follows is data */
	frame_frag6(&f, IPPROTO_DSTOPTS, 100, 0);
	frame_payload(&f, 5);
	frame_fix(&f);
	f.b[70 + 1] = 200;
	ck_assert_int_eq(parse_frame(&f, &m), PA_PKT_OK);
	ck_assert_uint_eq(m.flags, PA_PKT_F_IPV6 | PA_PKT_F_IPV6_EXT |
		PA_PKT_F_FRAG | PA_PKT_F_FRAG_LATER);
	ck_assert_uint_eq(m.l4_proto, IPPROTO_DSTOPTS);
	ck_assert_uint_eq(m.l4_off, 70);
	ck_assert_uint_eq(m.sport, 0);
	ck_assert_uint_eq(m.dport, 0);
}
END_TEST

START_TEST(test_ipv6_fragments_hash_alike_even_with_headers_after_frag)
{
	struct pa_pkt_meta first, later, rev;
	struct pa_test_frame f;

	/* first: frag -> dest. options -> TCP; later: frag -> data */
	frame_eth(&f, RTE_ETHER_TYPE_IPV6);
	frame_ipv6(&f, IPPROTO_FRAGMENT);
	frame_frag6(&f, IPPROTO_DSTOPTS, 0, 1);
	frame_ext(&f, IPPROTO_DSTOPTS, IPPROTO_TCP, 8);
	frame_tcp(&f, 80, 60000, 5);
	frame_fix(&f);
	ck_assert_int_eq(parse_frame(&f, &first), PA_PKT_OK);
	ck_assert_uint_eq(first.l4_proto, IPPROTO_TCP);
	ck_assert_uint_eq(first.sport, 80);

	frame_eth(&f, RTE_ETHER_TYPE_IPV6);
	frame_ipv6(&f, IPPROTO_FRAGMENT);
	frame_frag6(&f, IPPROTO_DSTOPTS, 4, 0);
	frame_payload(&f, 30);
	frame_fix(&f);
	ck_assert_int_eq(parse_frame(&f, &later), PA_PKT_OK);
	ck_assert(later.flags & PA_PKT_F_FRAG_LATER);
	ck_assert_uint_eq(later.hash, first.hash);

	memcpy(f.b + 22, ip6_b, 16);
	memcpy(f.b + 38, ip6_a, 16);
	ck_assert_int_eq(parse_frame(&f, &rev), PA_PKT_OK);
	ck_assert_uint_eq(rev.hash, first.hash);
}
END_TEST

START_TEST(test_ipv6_esp_and_no_next_header_stop_without_l4)
{
	struct pa_pkt_meta m;
	struct pa_test_frame f;

	frame_eth(&f, RTE_ETHER_TYPE_IPV6);
	frame_ipv6(&f, IPPROTO_DSTOPTS);
	frame_ext(&f, IPPROTO_DSTOPTS, IPPROTO_ESP, 8);
	frame_payload(&f, 2);	/* shorter than any ESP header */
	frame_fix(&f);
	ck_assert_int_eq(parse_frame(&f, &m), PA_PKT_OK);
	ck_assert_uint_eq(m.flags, PA_PKT_F_IPV6 | PA_PKT_F_IPV6_EXT);
	ck_assert_uint_eq(m.l4_proto, IPPROTO_ESP);
	ck_assert_uint_eq(m.l4_off, 62);

	frame_eth(&f, RTE_ETHER_TYPE_IPV6);
	frame_ipv6(&f, IPPROTO_NONE);
	frame_fix(&f);
	ck_assert_int_eq(parse_frame(&f, &m), PA_PKT_OK);
	ck_assert_uint_eq(m.flags, PA_PKT_F_IPV6);
	ck_assert_uint_eq(m.l4_proto, IPPROTO_NONE);
	ck_assert_uint_eq(m.sport, 0);
}
END_TEST

START_TEST(test_ipv6_payload_length_beyond_frame_is_l3_len)
{
	struct pa_pkt_meta m;
	struct pa_test_frame f;

	frame_eth(&f, RTE_ETHER_TYPE_IPV6);
	frame_ipv6(&f, IPPROTO_UDP);
	frame_udp(&f, 1, 2);
	frame_fix(&f);
	pa_test_put16(f.b + 18, 9);
	ck_assert_int_eq(parse_frame(&f, &m), PA_PKT_ERR_L3_LEN);
	/* padding after the payload is fine */
	pa_test_put16(f.b + 18, 8);
	frame_payload(&f, 12);
	ck_assert_int_eq(parse_frame(&f, &m), PA_PKT_OK);
}
END_TEST

START_TEST(test_ipv6_jumbogram_is_l3_len)
{
	struct pa_pkt_meta m;
	struct pa_test_frame f;

	frame_eth(&f, RTE_ETHER_TYPE_IPV6);
	frame_ipv6(&f, IPPROTO_HOPOPTS);
	frame_ext(&f, IPPROTO_HOPOPTS, IPPROTO_UDP, 8);
	f.b[56] = 0xc2;	/* jumbo payload option */
	f.b[57] = 4;
	pa_test_put32(f.b + 58, 100000);
	frame_udp(&f, 1, 2);
	/* payload length left 0 */
	ck_assert_int_eq(parse_frame(&f, &m), PA_PKT_ERR_L3_LEN);
}
END_TEST

START_TEST(test_ipv6_header_errors_version_and_truncation)
{
	struct pa_pkt_meta m;
	struct pa_test_frame f;
	uint32_t n;

	frame_eth(&f, RTE_ETHER_TYPE_IPV6);
	frame_ipv6(&f, IPPROTO_NONE);
	frame_fix(&f);
	for (n = 14; n < 54; n++)
		ck_assert_int_eq(parse_both(f.b, n, n, &m),
			PA_PKT_ERR_L3_TRUNC);
	f.b[14] = 0x40;
	ck_assert_int_eq(parse_frame(&f, &m), PA_PKT_ERR_L3_VERSION);
}
END_TEST

/* --- L4 ----------------------------------------------------------------- */

START_TEST(test_tcp_header_cut_short_is_l4_trunc)
{
	struct pa_pkt_meta m;
	struct pa_test_frame f;
	unsigned int n;

	for (n = 0; n < 20; n++) {
		frame_eth(&f, RTE_ETHER_TYPE_IPV4);
		frame_ipv4(&f, IPPROTO_TCP, 5, 0);
		frame_payload(&f, n);
		frame_fix(&f);
		frame_payload(&f, 30);	/* padding is not TCP header */
		ck_assert_int_eq(parse_frame(&f, &m), PA_PKT_ERR_L4_TRUNC);
	}
}
END_TEST

START_TEST(test_tcp_data_offset_below_5_or_past_payload_is_l4_len)
{
	struct pa_pkt_meta m;
	struct pa_test_frame f;
	unsigned int doff;

	for (doff = 0; doff < 5; doff++) {
		frame_v4_tcp(&f, 1, 2, 40);
		f.b[34 + 12] = doff << 4;
		ck_assert_int_eq(parse_frame(&f, &m), PA_PKT_ERR_L4_LEN);
	}
	frame_v4_tcp(&f, 1, 2, 0);
	f.b[34 + 12] = 6 << 4;	/* 24 bytes, 20 in the datagram */
	frame_payload(&f, 10);	/* padding does not count */
	ck_assert_int_eq(parse_frame(&f, &m), PA_PKT_ERR_L4_LEN);
	frame_v4_tcp(&f, 1, 2, 4);
	f.b[34 + 12] = 6 << 4;	/* 24 bytes present: fine */
	ck_assert_int_eq(parse_frame(&f, &m), PA_PKT_OK);
}
END_TEST

START_TEST(test_udp_header_cut_short_is_l4_trunc)
{
	struct pa_pkt_meta m;
	struct pa_test_frame f;
	unsigned int n;

	for (n = 0; n < 8; n++) {
		frame_eth(&f, RTE_ETHER_TYPE_IPV6);
		frame_ipv6(&f, IPPROTO_UDP);
		frame_payload(&f, n);
		frame_fix(&f);
		frame_payload(&f, 30);
		ck_assert_int_eq(parse_frame(&f, &m), PA_PKT_ERR_L4_TRUNC);
	}
}
END_TEST

START_TEST(test_udp_length_below_8_or_past_payload_is_l4_len)
{
	struct pa_pkt_meta m;
	struct pa_test_frame f;

	frame_v4_udp(&f, 1, 2, 10);
	pa_test_put16(f.b + 38, 7);
	ck_assert_int_eq(parse_frame(&f, &m), PA_PKT_ERR_L4_LEN);
	pa_test_put16(f.b + 38, 19);
	ck_assert_int_eq(parse_frame(&f, &m), PA_PKT_ERR_L4_LEN);
	pa_test_put16(f.b + 38, 18);
	ck_assert_int_eq(parse_frame(&f, &m), PA_PKT_OK);
	pa_test_put16(f.b + 38, 8);	/* shorter than the IP payload: allowed */
	ck_assert_int_eq(parse_frame(&f, &m), PA_PKT_OK);
}
END_TEST

START_TEST(test_icmp_sets_l4_with_zero_ports_and_needs_4_bytes)
{
	struct pa_pkt_meta m;
	struct pa_test_frame f;

	frame_eth(&f, RTE_ETHER_TYPE_IPV4);
	frame_ipv4(&f, IPPROTO_ICMP, 5, 0);
	frame_icmp(&f, 8);
	frame_fix(&f);
	ck_assert_int_eq(parse_frame(&f, &m), PA_PKT_OK);
	ck_assert_uint_eq(m.flags, PA_PKT_F_IPV4 | PA_PKT_F_L4);
	ck_assert_uint_eq(m.l4_proto, IPPROTO_ICMP);
	ck_assert_uint_eq(m.sport, 0);
	ck_assert_uint_eq(m.dport, 0);

	pa_test_put16(f.b + 16, 23);	/* 3 bytes of ICMP */
	ck_assert_int_eq(parse_frame(&f, &m), PA_PKT_ERR_L4_TRUNC);
	pa_test_put16(f.b + 16, 24);
	ck_assert_int_eq(parse_frame(&f, &m), PA_PKT_OK);
}
END_TEST

START_TEST(test_icmpv6_sets_l4_and_needs_4_bytes)
{
	struct pa_pkt_meta m;
	struct pa_test_frame f;

	frame_eth(&f, RTE_ETHER_TYPE_IPV6);
	frame_ipv6(&f, IPPROTO_ICMPV6);
	frame_icmp(&f, 128);
	frame_fix(&f);
	ck_assert_int_eq(parse_frame(&f, &m), PA_PKT_OK);
	ck_assert_uint_eq(m.flags, PA_PKT_F_IPV6 | PA_PKT_F_L4);
	ck_assert_uint_eq(m.l4_proto, IPPROTO_ICMPV6);
	ck_assert_uint_eq(m.sport, 0);

	pa_test_put16(f.b + 18, 3);
	ck_assert_int_eq(parse_frame(&f, &m), PA_PKT_ERR_L4_TRUNC);
}
END_TEST

START_TEST(test_sctp_reports_ports_and_needs_12_bytes)
{
	struct pa_pkt_meta m;
	struct pa_test_frame f;

	frame_eth(&f, RTE_ETHER_TYPE_IPV4);
	frame_ipv4(&f, IPPROTO_SCTP, 5, 0);
	frame_sctp(&f, 2905, 2906);
	frame_fix(&f);
	ck_assert_int_eq(parse_frame(&f, &m), PA_PKT_OK);
	ck_assert_uint_eq(m.flags, PA_PKT_F_IPV4 | PA_PKT_F_L4);
	ck_assert_uint_eq(m.sport, 2905);
	ck_assert_uint_eq(m.dport, 2906);
	ck_assert_uint_eq(m.l4_proto, IPPROTO_SCTP);

	pa_test_put16(f.b + 16, 31);	/* 11 bytes of SCTP */
	ck_assert_int_eq(parse_frame(&f, &m), PA_PKT_ERR_L4_TRUNC);
}
END_TEST

START_TEST(test_gre_and_other_protocols_are_ok_without_l4)
{
	struct pa_pkt_meta m;
	struct pa_test_frame f;

	frame_eth(&f, RTE_ETHER_TYPE_IPV4);
	frame_ipv4(&f, IPPROTO_GRE, 5, 0);
	frame_payload(&f, 4);
	frame_fix(&f);
	ck_assert_int_eq(parse_frame(&f, &m), PA_PKT_OK);
	ck_assert_uint_eq(m.flags, PA_PKT_F_IPV4);
	ck_assert_uint_eq(m.l4_proto, IPPROTO_GRE);
	ck_assert_uint_eq(m.l4_off, 34);
	ck_assert_uint_eq(m.sport, 0);
	ck_assert_uint_eq(m.dport, 0);

	/* empty payload */
	frame_eth(&f, RTE_ETHER_TYPE_IPV6);
	frame_ipv6(&f, IPPROTO_GRE);
	frame_fix(&f);
	ck_assert_int_eq(parse_frame(&f, &m), PA_PKT_OK);
	ck_assert_uint_eq(m.flags, PA_PKT_F_IPV6);

	/* ICMP numbers of the other family are just other protocols */
	frame_eth(&f, RTE_ETHER_TYPE_IPV6);
	frame_ipv6(&f, IPPROTO_ICMP);
	frame_fix(&f);
	ck_assert_int_eq(parse_frame(&f, &m), PA_PKT_OK);
	ck_assert_uint_eq(m.flags, PA_PKT_F_IPV6);
}
END_TEST

/* --- truncation and segments ------------------------------------------ */

static void
frame_vlan_v4_tcp(struct pa_test_frame *f)
{
	static const uint16_t tpid[] = { RTE_ETHER_TYPE_VLAN };

	frame_l2(f, 1, tpid, RTE_ETHER_TYPE_IPV4);
	frame_ipv4(f, IPPROTO_TCP, 6, 0);
	frame_tcp(f, 1111, 2222, 5);
	frame_fix(f);
}

static void
frame_v6_ext_udp(struct pa_test_frame *f)
{
	frame_eth(f, RTE_ETHER_TYPE_IPV6);
	frame_ipv6(f, IPPROTO_HOPOPTS);
	frame_ext(f, IPPROTO_HOPOPTS, IPPROTO_ROUTING, 8);
	frame_ext(f, IPPROTO_ROUTING, IPPROTO_UDP, 24);
	frame_udp(f, 3333, 4444);
	frame_fix(f);
}

/*
 * Each prefix of a frame whose headers fill it, in a heap buffer of exactly
 * its size (valgrind and ASan see any over-read), must be an error.
 */
static void
check_every_prefix_fails(const struct pa_test_frame *f)
{
	struct pa_pkt_meta m;
	uint32_t n;
	uint8_t *buf;
	int ret;

	for (n = 0; n < f->len; n++) {
		buf = malloc(n);
		ck_assert(n == 0 || buf != NULL);
		memcpy(buf, f->b, n);
		ret = parse_both(buf, n, n, &m);
		ck_assert_msg(ret < 0 && ret != PA_PKT_ERR_SEGMENT,
			"prefix of %u bytes gave %d", n, ret);
		free(buf);
	}
	ck_assert_int_eq(parse_frame(f, &m), PA_PKT_OK);
}

/*
 * The same prefixes as first segments of the whole frame: SEGMENT until
 * the headers fit, then OK with the same metadata as the whole frame.
 */
static void
check_every_split_segments(const struct pa_test_frame *f, uint32_t hdr_end)
{
	struct pa_pkt_meta m, whole;
	uint32_t n;
	uint8_t *buf;
	int ret;

	ck_assert_int_eq(parse_frame(f, &whole), PA_PKT_OK);
	for (n = 0; n <= f->len; n++) {
		buf = malloc(n);
		ck_assert(n == 0 || buf != NULL);
		memcpy(buf, f->b, n);
		ret = parse_both(buf, n, f->len, &m);
		if (n < hdr_end) {
			ck_assert_msg(ret == PA_PKT_ERR_SEGMENT,
				"split at %u gave %d", n, ret);
		} else {
			ck_assert_int_eq(ret, PA_PKT_OK);
			ck_assert_mem_eq(&m, &whole, sizeof(m));
		}
		free(buf);
	}
}

START_TEST(test_every_truncation_of_vlan_ipv4_tcp_is_an_error)
{
	struct pa_test_frame f;

	frame_vlan_v4_tcp(&f);
	ck_assert_uint_eq(f.len, 18 + 24 + 20);
	check_every_prefix_fails(&f);
}
END_TEST

START_TEST(test_every_truncation_of_ipv6_ext_udp_is_an_error)
{
	struct pa_test_frame f;

	frame_v6_ext_udp(&f);
	ck_assert_uint_eq(f.len, 14 + 40 + 8 + 24 + 8);
	check_every_prefix_fails(&f);
}
END_TEST

/* IPv6 without extension headers, TCP or UDP: the fast path's IPv6 */
static void
frame_v6_l4(struct pa_test_frame *f, uint8_t proto)
{
	frame_eth(f, RTE_ETHER_TYPE_IPV6);
	frame_ipv6(f, proto);
	if (proto == IPPROTO_TCP)
		frame_tcp(f, 5555, 6666, 5);
	else
		frame_udp(f, 5555, 6666);
	frame_fix(f);
}

START_TEST(test_every_truncation_of_ipv6_tcp_and_udp_is_an_error)
{
	struct pa_test_frame f;

	frame_v6_l4(&f, IPPROTO_UDP);
	ck_assert_uint_eq(f.len, 14 + 40 + 8);
	check_every_prefix_fails(&f);
	check_every_split_segments(&f, f.len);
	frame_v6_l4(&f, IPPROTO_TCP);
	ck_assert_uint_eq(f.len, 14 + 40 + 20);
	check_every_prefix_fails(&f);
	check_every_split_segments(&f, f.len);
}
END_TEST

/* The fast path takes IPv6 TCP and UDP without extension headers: the
 * hash left for later, then the general parser's metadata. */
START_TEST(test_ipv6_tcp_and_udp_take_the_fast_path)
{
	static const uint8_t protos[] = { IPPROTO_TCP, IPPROTO_UDP };
	struct pa_pkt_meta m, full;
	struct pa_test_frame f;
	unsigned int i;

	for (i = 0; i < RTE_DIM(protos); i++) {
		frame_v6_l4(&f, protos[i]);
		frame_payload(&f, 11);
		frame_fix(&f);
		ck_assert_int_eq(pa_pkt_parse_full(f.b, f.len, f.len, &full),
			PA_PKT_OK);
		memset(&m, 0x5a, sizeof(m));
		ck_assert_int_eq(pa_pkt_parse_nohash(f.b, f.len, f.len, &m),
			PA_PKT_OK);
		ck_assert_uint_eq(m.flags, PA_PKT_F_IPV6 | PA_PKT_F_L4 |
			PA_PKT_F_HASH_LATER);
		ck_assert_uint_eq(m.out_port, 0x5a5a);
		pa_pkt_hash_later(f.b, &m);
		ck_assert_uint_eq(m.out_port, 0x5a5a);
		m.out_port = full.out_port;
		m.rx_tsc_hi = full.rx_tsc_hi;
		m.rx_tsc_lo = full.rx_tsc_lo;
		ck_assert_mem_eq(&m, &full, sizeof(m));
		ck_assert_uint_eq(m.hash, pa_pkt_hash_v6(ip6_a, ip6_b,
			5555u << 16 | 6666, protos[i]));
		/* one extension header: the general parser's, no flag */
		frame_eth(&f, RTE_ETHER_TYPE_IPV6);
		frame_ipv6(&f, IPPROTO_DSTOPTS);
		frame_ext(&f, IPPROTO_DSTOPTS, protos[i], 8);
		if (protos[i] == IPPROTO_TCP)
			frame_tcp(&f, 5555, 6666, 5);
		else
			frame_udp(&f, 5555, 6666);
		frame_fix(&f);
		ck_assert_int_eq(pa_pkt_parse_nohash(f.b, f.len, f.len, &m),
			PA_PKT_OK);
		ck_assert_uint_eq(m.flags, PA_PKT_F_IPV6 | PA_PKT_F_L4 |
			PA_PKT_F_IPV6_EXT);
	}
}
END_TEST

START_TEST(test_headers_split_across_segments_give_segment)
{
	struct pa_test_frame f;

	frame_vlan_v4_tcp(&f);
	frame_payload(&f, 30);
	frame_fix(&f);
	check_every_split_segments(&f, f.l4 + 20);

	frame_v6_ext_udp(&f);
	frame_payload(&f, 30);
	frame_fix(&f);
	check_every_split_segments(&f, f.l4 + 8);

	frame_v4_udp(&f, 1, 2, 100);
	check_every_split_segments(&f, 42);

	frame_v4_tcp(&f, 1, 2, 100);
	check_every_split_segments(&f, 54);
}
END_TEST

START_TEST(test_later_fragment_payload_in_next_segment_is_ok)
{
	struct pa_pkt_meta m;
	struct pa_test_frame f;

	frame_eth(&f, RTE_ETHER_TYPE_IPV4);
	frame_ipv4(&f, IPPROTO_TCP, 5, 100);
	frame_payload(&f, 200);
	frame_fix(&f);
	ck_assert_int_eq(parse_both(f.b, 34, f.len, &m), PA_PKT_OK);
	ck_assert_uint_eq(m.flags, PA_PKT_F_IPV4 | PA_PKT_F_FRAG |
		PA_PKT_F_FRAG_LATER);
	/* but the IP header itself must be in the first segment */
	ck_assert_int_eq(parse_both(f.b, 33, f.len, &m),
		PA_PKT_ERR_SEGMENT);

	/* options included */
	frame_eth(&f, RTE_ETHER_TYPE_IPV4);
	frame_ipv4(&f, IPPROTO_TCP, 8, 100);
	frame_payload(&f, 200);
	frame_fix(&f);
	ck_assert_int_eq(parse_both(f.b, 46, f.len, &m), PA_PKT_OK);
	ck_assert_uint_eq(m.l4_off, 46);
	ck_assert_int_eq(parse_both(f.b, 45, f.len, &m),
		PA_PKT_ERR_SEGMENT);
}
END_TEST

START_TEST(test_frame_errors_win_over_segment)
{
	struct pa_pkt_meta m;
	struct pa_test_frame f;

	/* runt frame: never SEGMENT */
	frame_v4_udp(&f, 1, 2, 0);
	ck_assert_int_eq(parse_both(f.b, 5, 13, &m), PA_PKT_ERR_RUNT);
	/* total length beyond the frame, UDP past the first segment */
	pa_test_put16(f.b + 16, 100);
	ck_assert_int_eq(parse_both(f.b, 36, f.len, &m), PA_PKT_ERR_L3_LEN);
	/* UDP header cut by the IP length though the frame goes on */
	pa_test_put16(f.b + 16, 24);
	ck_assert_int_eq(parse_both(f.b, 36, f.len, &m),
		PA_PKT_ERR_L4_TRUNC);
}
END_TEST

START_TEST(test_seg_len_beyond_pkt_len_counts_as_pkt_len)
{
	struct pa_pkt_meta m, whole;
	struct pa_test_frame f;

	frame_v4_udp(&f, 1, 2, 50);
	ck_assert_int_eq(parse_frame(&f, &whole), PA_PKT_OK);
	ck_assert_int_eq(parse_both(f.b, f.len, f.len - 1, &m),
		PA_PKT_ERR_L3_LEN);
	ck_assert_int_eq(parse_both(f.b, f.len, 20, &m),
		PA_PKT_ERR_L3_TRUNC);
	frame_payload(&f, 10);
	ck_assert_int_eq(parse_both(f.b, f.len, f.len - 10, &m), PA_PKT_OK);
	ck_assert_mem_eq(&m, &whole, sizeof(m));
}
END_TEST

/* --- agreement of the two parsers --------------------------------------- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t
rng(void)
{
	/* xorshift64*: deterministic, good enough for test inputs */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

START_TEST(test_fast_path_agrees_with_full_parser_on_mutated_frames)
{
	struct pa_pkt_meta m;
	struct pa_test_frame base[6], f;
	unsigned int i, k, nmut;
	uint32_t seg, len;
	int ok = 0;

	frame_v4_udp(&base[0], 1000, 2000, 18);
	frame_v4_tcp(&base[1], 3000, 4000, 20);
	frame_vlan_v4_tcp(&base[2]);
	frame_v6_ext_udp(&base[3]);
	frame_v6_l4(&base[4], IPPROTO_UDP);
	frame_payload(&base[4], 6);
	frame_fix(&base[4]);
	frame_v6_l4(&base[5], IPPROTO_TCP);
	for (i = 0; i < 150000; i++) {
		f = base[rng() % RTE_DIM(base)];
		nmut = rng() % 3;
		for (k = 0; k < nmut; k++) {
			/* mutate header bytes, often to boundary values */
			uint32_t at = rng() % 80;
			uint64_t r = rng();

			f.b[at] = (r & 1) ? (uint8_t)(r >> 8) :
				(r & 2) ? f.b[at] ^ (1u << (r >> 8) % 8) :
				(uint8_t)(f.b[at] + 1);
		}
		len = f.len - (rng() % 4 == 0 ? rng() % f.len : 0);
		seg = len - (rng() % 4 == 0 ? rng() % (len + 1) : 0);
		if (rng() % 16 == 0)	/* f.b is large: safe to claim more */
			seg = len + rng() % 64;
		if (parse_both(f.b, seg, len, &m) == PA_PKT_OK)
			ok++;
	}
	ck_assert_int_gt(ok, 1000);
}
END_TEST

/* --- the flow hash ------------------------------------------------------- */

START_TEST(test_hash_is_symmetric_for_random_ipv4_tuples)
{
	static const uint8_t protos[] = { IPPROTO_TCP, IPPROTO_UDP,
		IPPROTO_SCTP };
	struct pa_pkt_meta fwd, rev;
	struct pa_test_frame f, r;
	unsigned int i;
	uint32_t a, b;
	uint16_t pa, pb;
	uint8_t proto;

	for (i = 0; i < 5000; i++) {
		a = rng();
		b = (i % 10 == 0) ? a : (uint32_t)rng();  /* ties on address */
		pa = rng();
		pb = (i % 7 == 0) ? pa : (uint16_t)rng();
		proto = protos[i % 3];

		frame_eth(&f, RTE_ETHER_TYPE_IPV4);
		frame_ipv4(&f, proto, 5, 0);
		if (proto == IPPROTO_TCP)
			frame_tcp(&f, pa, pb, 5);
		else if (proto == IPPROTO_UDP)
			frame_udp(&f, pa, pb);
		else
			frame_sctp(&f, pa, pb);
		frame_fix(&f);
		pa_test_put32(f.b + 26, a);
		pa_test_put32(f.b + 30, b);
		r = f;
		pa_test_put32(r.b + 26, b);
		pa_test_put32(r.b + 30, a);
		frame_set_ports(&r, pb, pa);

		ck_assert_int_eq(parse_frame(&f, &fwd), PA_PKT_OK);
		ck_assert_int_eq(parse_frame(&r, &rev), PA_PKT_OK);
		ck_assert_uint_eq(fwd.hash, rev.hash);
		ck_assert_uint_eq(fwd.sport, pa);
		ck_assert_uint_eq(rev.sport, pb);
	}
}
END_TEST

START_TEST(test_hash_is_symmetric_for_random_ipv6_tuples)
{
	struct pa_pkt_meta fwd, rev;
	struct pa_test_frame f, r;
	uint8_t a[16], b[16];
	unsigned int i, k;
	uint16_t pa, pb;

	for (i = 0; i < 5000; i++) {
		for (k = 0; k < 16; k++)
			a[k] = rng();
		memcpy(b, a, 16);
		/* differ in the high half, the low half, or not at all */
		if (i % 3 == 0)
			b[3] ^= 1 + rng() % 255;
		else if (i % 3 == 1)
			b[12] ^= 1 + rng() % 255;
		pa = rng();
		pb = (i % 5 == 0) ? pa : (uint16_t)rng();

		frame_eth(&f, RTE_ETHER_TYPE_IPV6);
		frame_ipv6(&f, IPPROTO_TCP);
		frame_tcp(&f, pa, pb, 5);
		frame_fix(&f);
		memcpy(f.b + 22, a, 16);
		memcpy(f.b + 38, b, 16);
		r = f;
		memcpy(r.b + 22, b, 16);
		memcpy(r.b + 38, a, 16);
		frame_set_ports(&r, pb, pa);

		ck_assert_int_eq(parse_frame(&f, &fwd), PA_PKT_OK);
		ck_assert_int_eq(parse_frame(&r, &rev), PA_PKT_OK);
		ck_assert_uint_eq(fwd.hash, rev.hash);
	}
}
END_TEST

static int
cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

START_TEST(test_hash_tells_flows_apart)
{
	enum { N = 10000 };
	static uint32_t h[N];
	unsigned int i, dup = 0;
	uint32_t base;

	/* distinct tuples: hardly any 32-bit collisions (expected 0.01) */
	for (i = 0; i < N; i++)
		h[i] = pa_pkt_hash_v4(rng(), rng(), rng(), IPPROTO_TCP);
	qsort(h, N, sizeof(h[0]), cmp_u32);
	for (i = 1; i < N; i++)
		dup += h[i - 1] == h[i];
	ck_assert_uint_le(dup, 2);

	/* each field matters; swapping only the ports (not the endpoints)
	 * is a different flow */
	base = pa_pkt_hash_v4(IP4_A, IP4_B, 1u << 16 | 2, IPPROTO_TCP);
	ck_assert_uint_ne(base, pa_pkt_hash_v4(IP4_A, IP4_B, 2u << 16 | 1,
		IPPROTO_TCP));
	ck_assert_uint_ne(base, pa_pkt_hash_v4(IP4_A, IP4_B, 1u << 16 | 2,
		IPPROTO_UDP));
	ck_assert_uint_ne(base, pa_pkt_hash_v4(IP4_A, IP4_B + 1,
		1u << 16 | 2, IPPROTO_TCP));
	ck_assert_uint_ne(base, pa_pkt_hash_v4(IP4_A, IP4_B, 1u << 16 | 3,
		IPPROTO_TCP));
	ck_assert_uint_ne(pa_pkt_hash_v6(ip6_a, ip6_b, 5, IPPROTO_TCP),
		pa_pkt_hash_v6(ip6_a, ip6_b, 5, IPPROTO_UDP));
}
END_TEST

START_TEST(test_hash_values_are_crc32c_and_the_same_on_every_build)
{
	static const uint8_t eth[12] = { 2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2 };

	/* the SSE4.2 instruction and DPDK's software CRC32-C agree */
	ck_assert_uint_eq(pa_pkt_crc64(0x0123456789abcdefull, 0), 0xe9986aa9);
	ck_assert_uint_eq(rte_hash_crc_8byte(0x0123456789abcdefull, 0),
		0xe9986aa9);
	/* pinned: a change of scheme must be deliberate */
	ck_assert_uint_eq(pa_pkt_hash_v4(rte_cpu_to_be_32(IP4_A),
		rte_cpu_to_be_32(IP4_B), 1234u << 16 | 80, IPPROTO_TCP),
		0xe397b208);
	ck_assert_uint_eq(pa_pkt_hash_v6(ip6_a, ip6_b, 1234u << 16 | 80,
		IPPROTO_UDP), 0x1222010f);
	ck_assert_uint_eq(pa_pkt_hash_mac(eth), 0x150675e4);
}
END_TEST

/* 10000 hashes into 16 buckets by low bits and by high bits: no bucket
 * more than twice the mean */
static void
check_spread(const uint32_t *h, unsigned int n)
{
	unsigned int lo[16] = { 0 }, hi[16] = { 0 }, mod[12] = { 0 };
	unsigned int i;

	for (i = 0; i < n; i++) {
		lo[h[i] & 15]++;
		hi[h[i] >> 28]++;
		mod[h[i] % 12]++;
	}
	for (i = 0; i < 16; i++) {
		ck_assert_uint_le(lo[i], 2 * n / 16);
		ck_assert_uint_le(hi[i], 2 * n / 16);
		ck_assert_uint_ge(lo[i], n / 16 / 2);
		ck_assert_uint_ge(hi[i], n / 16 / 2);
	}
	for (i = 0; i < 12; i++)
		ck_assert_uint_le(mod[i], 2 * n / 12);
}

START_TEST(test_hash_spreads_random_flows_over_16_buckets)
{
	enum { N = 10000 };
	static uint32_t h[N];
	struct pa_pkt_meta m;
	struct pa_test_frame f;
	unsigned int i;

	for (i = 0; i < N; i++) {
		frame_v4_udp(&f, rng(), rng(), 18);
		pa_test_put32(f.b + 26, rng());
		pa_test_put32(f.b + 30, rng());
		ck_assert_int_eq(parse_frame(&f, &m), PA_PKT_OK);
		h[i] = m.hash;
	}
	check_spread(h, N);
}
END_TEST

START_TEST(test_hash_spreads_sequential_flows_over_16_buckets)
{
	enum { N = 10000 };
	static uint32_t h[N];
	uint8_t a[16];
	unsigned int i;

	/* one client, source ports counting up */
	for (i = 0; i < N; i++)
		h[i] = pa_pkt_hash_v4(rte_cpu_to_be_32(IP4_A),
			rte_cpu_to_be_32(IP4_B),
			(uint32_t)(1024 + i) << 16 | 80, IPPROTO_TCP);
	check_spread(h, N);
	/* clients counting up, one port */
	for (i = 0; i < N; i++)
		h[i] = pa_pkt_hash_v4(rte_cpu_to_be_32(0x0a000000 + i),
			rte_cpu_to_be_32(0xc0a80001), 40000u << 16 | 443,
			IPPROTO_TCP);
	check_spread(h, N);
	/* IPv6 clients counting up in the low bytes */
	memcpy(a, ip6_a, 16);
	for (i = 0; i < N; i++) {
		a[14] = i >> 8;
		a[15] = i & 0xff;
		h[i] = pa_pkt_hash_v6(a, ip6_b, 40000u << 16 | 443,
			IPPROTO_TCP);
	}
	check_spread(h, N);
}
END_TEST

/* --- ICMP errors hash as the flow they quote ---------------------------- */

/* the router that sends the errors (to B, the VIP) */
static const uint8_t ip4_r[4] = { 203, 0, 113, 1 };
static const uint8_t ip6_r[16] = { 0x20, 0x01, 0x0d, 0xb8, 0xff, [15] = 1 };

/* A packet of the flow A:sport <-> B:dport, TCP or UDP, from A when
 * @p from_a, else from B (what B, the VIP, sends back) */
static void
frame_flow(struct pa_test_frame *f, int v6, uint8_t proto, int from_a,
		uint16_t sport, uint16_t dport)
{
	frame_eth(f, v6 ? RTE_ETHER_TYPE_IPV6 : RTE_ETHER_TYPE_IPV4);
	if (v6)
		pa_test_frame_ipv6(f, from_a ? ip6_a : ip6_b,
			from_a ? ip6_b : ip6_a, proto, 0, 0, 64);
	else
		pa_test_frame_ipv4(f, from_a ? ip4_a : ip4_b,
			from_a ? ip4_b : ip4_a, proto, 0, 5, 0, 0, 64);
	if (proto == IPPROTO_TCP)
		frame_tcp(f, from_a ? sport : dport, from_a ? dport : sport, 5);
	else
		frame_udp(f, from_a ? sport : dport, from_a ? dport : sport);
	frame_payload(f, 100);
	frame_fix(f);
}

/* An ICMP (v6) error of @p type from R to B quoting the first @p n bytes
 * of @p q's IP packet. */
static void
frame_icmp_error(struct pa_test_frame *f, int v6, uint8_t type,
		const struct pa_test_frame *q, uint32_t n)
{
	frame_eth(f, v6 ? RTE_ETHER_TYPE_IPV6 : RTE_ETHER_TYPE_IPV4);
	if (v6)
		pa_test_frame_ipv6(f, ip6_r, ip6_b, IPPROTO_ICMPV6, 0, 0, 64);
	else
		pa_test_frame_ipv4(f, ip4_r, ip4_b, IPPROTO_ICMP, 0, 5, 0, 0,
			64);
	pa_test_frame_icmp(f, type, 0);
	memcpy(pa_test_frame_grow(f, n), q->b + q->l3, n);
	frame_fix(f);
}

/* the hash R <-> B has as an ICMP packet: what an error keeps */
static uint32_t
outer_hash(int v6)
{
	uint32_t r, b;

	if (v6)
		return pa_pkt_hash_v6(ip6_r, ip6_b, 0, IPPROTO_ICMPV6);
	memcpy(&r, ip4_r, 4);
	memcpy(&b, ip4_b, 4);
	return pa_pkt_hash_v4(r, b, 0, IPPROTO_ICMP);
}

START_TEST(test_icmp_error_hashes_as_the_flow_it_quotes)
{
	static const uint8_t types4[] = { 3, 11, 12 };
	static const uint8_t types6[] = { 1, 2, 3, 4 };
	static const uint8_t protos[] = { IPPROTO_TCP, IPPROTO_UDP };
	struct pa_test_frame flow, quoted, err;
	struct pa_pkt_meta fm, em;
	unsigned int v6, p, i, t, from_a, nt;
	uint32_t hl, n;

	for (v6 = 0; v6 <= 1; v6++) {
		hl = v6 ? 40 : 20;
		nt = v6 ? RTE_DIM(types6) : RTE_DIM(types4);
		for (p = 0; p < RTE_DIM(protos); p++) {
			frame_flow(&flow, v6, protos[p], 1, 40123, 443);
			ck_assert_int_eq(parse_frame(&flow, &fm), PA_PKT_OK);
			ck_assert_uint_ne(fm.hash, outer_hash(v6));
			for (i = 0; i < 2 * nt; i++) {
				t = i / 2;
				from_a = i % 2;
				/* the reply B -> A (what routers report to a
				 * VIP) or the flow's own direction; the
				 * header + 8 bytes, or all of it */
				frame_flow(&quoted, v6, protos[p], from_a,
					40123, 443);
				n = quoted.len - quoted.l3;
				if (t % 2 == 0)
					n = hl + 8;
				frame_icmp_error(&err, v6, v6 ? types6[t] :
					types4[t], &quoted, n);
				ck_assert_int_eq(parse_frame(&err, &em),
					PA_PKT_OK);
				ck_assert_uint_eq(em.hash, fm.hash);
				/* the rest of the metadata is the error's */
				ck_assert_uint_eq(em.l4_proto, v6 ?
					IPPROTO_ICMPV6 : IPPROTO_ICMP);
				/* flagged: the rtc steering reads the quote */
				ck_assert_uint_eq(em.flags, (v6 ?
					PA_PKT_F_IPV6 : PA_PKT_F_IPV4) |
					PA_PKT_F_L4 | PA_PKT_F_QUOTE);
				ck_assert_uint_eq(em.sport, 0);
				ck_assert_uint_eq(em.dport, 0);
				/* the shared function says the same */
				ck_assert_int_eq(pa_pkt_hash_quote(err.b +
					err.l4 + 8, n, v6, &em.hash), 0);
				ck_assert_uint_eq(em.hash, fm.hash);
			}
		}
	}
}
END_TEST

START_TEST(test_icmp_error_quoting_ipv4_options_hashes_as_its_flow)
{
	struct pa_test_frame flow, quoted, err;
	struct pa_pkt_meta fm, em;

	frame_flow(&flow, 0, IPPROTO_UDP, 1, 5353, 53);
	ck_assert_int_eq(parse_frame(&flow, &fm), PA_PKT_OK);
	frame_eth(&quoted, RTE_ETHER_TYPE_IPV4);
	pa_test_frame_ipv4(&quoted, ip4_b, ip4_a, IPPROTO_UDP, 0, 7, 0, 0, 64);
	frame_udp(&quoted, 53, 5353);
	frame_fix(&quoted);
	frame_icmp_error(&err, 0, 3, &quoted, 28 + 8);
	ck_assert_int_eq(parse_frame(&err, &em), PA_PKT_OK);
	ck_assert_uint_eq(em.hash, fm.hash);
	/* a byte short of the 8 bytes of UDP: the error's own hash */
	frame_icmp_error(&err, 0, 3, &quoted, 28 + 7);
	ck_assert_int_eq(parse_frame(&err, &em), PA_PKT_OK);
	ck_assert_uint_eq(em.hash, outer_hash(0));
}
END_TEST

/* @p q's packet quoted whole by an error of type 3 / 1, with @p at
 * (an offset in the quote) set to @p v: the error keeps its own hash */
static void
check_quote_refused(int v6, const struct pa_test_frame *q, uint32_t n,
		int at, uint8_t v)
{
	struct pa_test_frame err;
	struct pa_pkt_meta m;
	uint32_t h;

	frame_icmp_error(&err, v6, v6 ? 1 : 3, q, n);
	if (at >= 0)
		err.b[err.l4 + 8 + at] = v;
	ck_assert_int_eq(parse_frame(&err, &m), PA_PKT_OK);
	ck_assert_uint_eq(m.hash, outer_hash(v6));
	ck_assert_uint_eq(m.flags & PA_PKT_F_QUOTE, 0);
	ck_assert_int_ne(pa_pkt_hash_quote(err.b + err.l4 + 8, n, v6, &h),
		0);
}

START_TEST(test_icmp_error_with_short_or_garbage_quote_keeps_its_hash)
{
	struct pa_test_frame q4, q6, err;
	struct pa_pkt_meta m;
	uint32_t n4, n6;

	frame_flow(&q4, 0, IPPROTO_TCP, 0, 40123, 443);
	frame_flow(&q6, 1, IPPROTO_UDP, 0, 40123, 443);
	n4 = q4.len - q4.l3;
	n6 = q6.len - q6.l3;

	/* truncated: the IP header and 7 bytes, or less */
	check_quote_refused(0, &q4, 27, -1, 0);
	check_quote_refused(0, &q4, 19, -1, 0);
	check_quote_refused(0, &q4, 0, -1, 0);
	check_quote_refused(1, &q6, 47, -1, 0);
	check_quote_refused(1, &q6, 39, -1, 0);
	/* the other version, an IHL under 5 or past the quote */
	check_quote_refused(0, &q4, n4, 0, 0x65);
	check_quote_refused(0, &q4, n4, 0, 0x44);
	check_quote_refused(0, &q4, 28, 0, 0x46);
	check_quote_refused(1, &q6, n6, 0, 0x40);
	/* a quoted length under header + 8 (IPv6: payload under 8) */
	check_quote_refused(0, &q4, n4, 3, 27);	/* of 140: high byte 0 */
	check_quote_refused(1, &q6, n6, 5, 7);
	/* a later fragment */
	check_quote_refused(0, &q4, n4, 7, 1);
	/* a protocol without ports; IPv6 extension headers */
	check_quote_refused(0, &q4, n4, 9, IPPROTO_GRE);
	check_quote_refused(1, &q6, n6, 6, IPPROTO_ROUTING);

	/* not an error: echo, echo reply, redirect; ICMPv6 echo, ND */
	frame_icmp_error(&err, 0, 8, &q4, n4);
	ck_assert_int_eq(parse_frame(&err, &m), PA_PKT_OK);
	ck_assert_uint_eq(m.hash, outer_hash(0));
	frame_icmp_error(&err, 0, 0, &q4, n4);
	ck_assert_int_eq(parse_frame(&err, &m), PA_PKT_OK);
	ck_assert_uint_eq(m.hash, outer_hash(0));
	frame_icmp_error(&err, 0, 5, &q4, n4);
	ck_assert_int_eq(parse_frame(&err, &m), PA_PKT_OK);
	ck_assert_uint_eq(m.hash, outer_hash(0));
	frame_icmp_error(&err, 1, 128, &q6, n6);
	ck_assert_int_eq(parse_frame(&err, &m), PA_PKT_OK);
	ck_assert_uint_eq(m.hash, outer_hash(1));
	frame_icmp_error(&err, 1, 135, &q6, n6);
	ck_assert_int_eq(parse_frame(&err, &m), PA_PKT_OK);
	ck_assert_uint_eq(m.hash, outer_hash(1));
	ck_assert_uint_eq(m.flags & PA_PKT_F_QUOTE, 0);

	/* an error cut short by its own IP length, the frame going on */
	frame_icmp_error(&err, 0, 3, &q4, n4);
	pa_test_put16(err.b + err.l3 + 2, 20 + 8 + 27);
	ck_assert_int_eq(parse_frame(&err, &m), PA_PKT_OK);
	ck_assert_uint_eq(m.hash, outer_hash(0));

	/* a fragmented error hashes as fragments do */
	frame_icmp_error(&err, 0, 3, &q4, n4);
	pa_test_put16(err.b + err.l3 + 6, RTE_IPV4_HDR_MF_FLAG);
	ck_assert_int_eq(parse_frame(&err, &m), PA_PKT_OK);
	ck_assert_uint_eq(m.flags & PA_PKT_F_FRAG, PA_PKT_F_FRAG);
	ck_assert_uint_eq(m.hash, outer_hash(0));
}
END_TEST

START_TEST(test_icmp_error_quote_split_across_segments_gives_segment)
{
	struct pa_test_frame q4, q6, err;

	/* the quote's header and 8 bytes are headers: SEGMENT until they
	 * are in the first segment, then the whole frame's metadata */
	frame_flow(&q4, 0, IPPROTO_TCP, 0, 40123, 443);
	frame_icmp_error(&err, 0, 11, &q4, q4.len - q4.l3);
	check_every_split_segments(&err, err.l4 + 8 + 28);
	frame_flow(&q6, 1, IPPROTO_TCP, 0, 40123, 443);
	frame_icmp_error(&err, 1, 2, &q6, q6.len - q6.l3);
	check_every_split_segments(&err, err.l4 + 8 + 48);
	/* a garbage quote is no header: SEGMENT ends with the ICMP header */
	frame_icmp_error(&err, 0, 3, &q4, q4.len - q4.l3);
	err.b[err.l4 + 8 + 9] = IPPROTO_GRE;
	check_every_split_segments(&err, err.l4 + 8 + 28);
	frame_icmp_error(&err, 0, 3, &q4, 27);
	check_every_split_segments(&err, err.l4 + 4);
}
END_TEST

START_TEST(test_icmp_error_quote_past_hdr_max_keeps_its_hash)
{
	struct pa_test_frame q6, err;
	struct pa_pkt_meta m, whole;
	unsigned int i;

	/* an ICMPv6 error behind 56 x 8 bytes of destination options: its
	 * quote ends past PA_PKT_HDR_MAX, so it is not read, whatever the
	 * first segment holds */
	frame_flow(&q6, 1, IPPROTO_TCP, 0, 40123, 443);
	frame_eth(&err, RTE_ETHER_TYPE_IPV6);
	pa_test_frame_ipv6(&err, ip6_r, ip6_b, IPPROTO_DSTOPTS, 0, 0, 64);
	for (i = 0; i < 7; i++)
		frame_ext(&err, IPPROTO_DSTOPTS, i == 6 ? IPPROTO_ICMPV6 :
			IPPROTO_DSTOPTS, 64);
	pa_test_frame_icmp(&err, 2, 0);
	memcpy(pa_test_frame_grow(&err, q6.len - q6.l3), q6.b + q6.l3,
		q6.len - q6.l3);
	frame_fix(&err);
	ck_assert_uint_gt(err.l4 + 8 + 48, PA_PKT_HDR_MAX);
	ck_assert_int_eq(parse_frame(&err, &whole), PA_PKT_OK);
	ck_assert_uint_eq(whole.hash, outer_hash(1));
	ck_assert_int_eq(parse_both(err.b, err.l4 + 4, err.len, &m), PA_PKT_OK);
	ck_assert_mem_eq(&m, &whole, sizeof(m));
}
END_TEST

/* --- flow keys ------------------------------------------------------------ */

START_TEST(test_flow_key_raw_ipv4_is_network_order_tuple)
{
	struct pa_pkt_meta m;
	struct pa_flow_key k, zero;
	static const uint16_t tpid[] = { RTE_ETHER_TYPE_VLAN };
	struct pa_test_frame f;

	frame_l2(&f, 1, tpid, RTE_ETHER_TYPE_IPV4);
	frame_ipv4(&f, IPPROTO_TCP, 7, 0);
	frame_tcp(&f, 1234, 80, 5);
	frame_fix(&f);
	ck_assert_int_eq(parse_frame(&f, &m), PA_PKT_OK);
	memset(&k, 0xff, sizeof(k));
	ck_assert_int_eq(pa_pkt_flow_key_raw(f.b, &m, &k), 0);
	ck_assert_uint_eq(k.family, 4);
	ck_assert_uint_eq(k.proto, IPPROTO_TCP);
	ck_assert_uint_eq(k.sport, rte_cpu_to_be_16(1234));
	ck_assert_uint_eq(k.dport, rte_cpu_to_be_16(80));
	ck_assert_uint_eq(k.v4.src, rte_cpu_to_be_32(IP4_A));
	ck_assert_uint_eq(k.v4.dst, rte_cpu_to_be_32(IP4_B));
	/* the rest is zero, so keys compare and hash as bytes */
	memset(&zero, 0, sizeof(zero));
	ck_assert_mem_eq((const uint8_t *)&k + offsetof(struct pa_flow_key,
		v4) + 8, (const uint8_t *)&zero, sizeof(k) -
		offsetof(struct pa_flow_key, v4) - 8);
}
END_TEST

START_TEST(test_flow_key_raw_ipv6_after_extension_headers)
{
	struct pa_pkt_meta m;
	struct pa_flow_key k;
	struct pa_test_frame f;

	frame_v6_ext_udp(&f);
	ck_assert_int_eq(parse_frame(&f, &m), PA_PKT_OK);
	ck_assert_int_eq(pa_pkt_flow_key_raw(f.b, &m, &k), 0);
	ck_assert_uint_eq(k.family, 6);
	ck_assert_uint_eq(k.proto, IPPROTO_UDP);
	ck_assert_uint_eq(k.sport, rte_cpu_to_be_16(3333));
	ck_assert_uint_eq(k.dport, rte_cpu_to_be_16(4444));
	ck_assert_mem_eq(k.v6.src, ip6_a, 16);
	ck_assert_mem_eq(k.v6.dst, ip6_b, 16);
}
END_TEST

START_TEST(test_flow_key_raw_of_non_ip_is_einval_with_family_0)
{
	struct pa_pkt_meta m;
	struct pa_flow_key k;
	struct pa_test_frame f;

	frame_eth(&f, RTE_ETHER_TYPE_ARP);
	frame_payload(&f, 28);
	ck_assert_int_eq(parse_frame(&f, &m), PA_PKT_OK);
	memset(&k, 0xff, sizeof(k));
	ck_assert_int_eq(pa_pkt_flow_key_raw(f.b, &m, &k), -EINVAL);
	ck_assert_uint_eq(k.family, 0);
}
END_TEST

START_TEST(test_flow_key_raw_of_later_fragment_has_zero_ports)
{
	struct pa_pkt_meta m;
	struct pa_flow_key k;
	struct pa_test_frame f;

	frame_eth(&f, RTE_ETHER_TYPE_IPV4);
	frame_ipv4(&f, IPPROTO_UDP, 5, 100);
	frame_payload(&f, 30);
	frame_fix(&f);
	ck_assert_int_eq(parse_frame(&f, &m), PA_PKT_OK);
	ck_assert_int_eq(pa_pkt_flow_key_raw(f.b, &m, &k), 0);
	ck_assert_uint_eq(k.proto, IPPROTO_UDP);
	ck_assert_uint_eq(k.sport, 0);
	ck_assert_uint_eq(k.dport, 0);
}
END_TEST

/* --- mbufs, under EAL ------------------------------------------------------ */

static struct rte_mempool *pool;

static void
eal_setup(void)
{
	char *argv[] = { "test_pkt", "--no-huge", "--no-pci", "--no-shconf",
		"-m", "64", "--no-telemetry", "--log-level=*:warning",
		"-l", "0", NULL };
	int argc = RTE_DIM(argv) - 1;

	ck_assert_int_ge(rte_eal_init(argc, argv), 0);
	ck_assert_int_eq(pa_pkt_init(), 0);
	pool = rte_pktmbuf_pool_create("test_pkt", 255, 0, 0, 2048,
		SOCKET_ID_ANY);
	ck_assert_ptr_nonnull(pool);
}

static void
eal_teardown(void)
{
	rte_mempool_free(pool);
	rte_eal_cleanup();
}

/* f as a chain whose segments end at the given offsets (last: f->len) */
static struct rte_mbuf *
mbuf_chain(const struct pa_test_frame *f, const uint32_t *ends, unsigned int n)
{
	struct rte_mbuf *head = NULL, *m;
	uint32_t start = 0;
	unsigned int i;
	char *p;

	for (i = 0; i < n; i++) {
		m = rte_pktmbuf_alloc(pool);
		ck_assert_ptr_nonnull(m);
		p = rte_pktmbuf_append(m, ends[i] - start);
		ck_assert(ends[i] == start || p != NULL);
		memcpy(p, f->b + start, ends[i] - start);
		start = ends[i];
		if (head == NULL)
			head = m;
		else
			ck_assert_int_eq(rte_pktmbuf_chain(head, m), 0);
	}
	return head;
}

START_TEST(test_init_registers_dynfield_once)
{
	int off = pa_pkt_meta_offset;

	ck_assert_int_ge(off, 0);
	ck_assert_int_eq(pa_pkt_init(), 0);
	ck_assert_int_eq(pa_pkt_meta_offset, off);
	ck_assert_int_eq(rte_mbuf_dynfield_lookup("pktaccel_meta", NULL),
		off);
}
END_TEST

START_TEST(test_parse_mbuf_single_segment_fills_dynfield)
{
	struct pa_pkt_meta whole;
	struct rte_mbuf *m;
	struct pa_test_frame f;
	uint32_t end;

	frame_v4_udp(&f, 777, 888, 18);
	ck_assert_int_eq(parse_frame(&f, &whole), PA_PKT_OK);
	end = f.len;
	m = mbuf_chain(&f, &end, 1);
	pa_pkt_meta(m)->out_port = 3;
	ck_assert_int_eq(pa_pkt_parse_mbuf(m), PA_PKT_OK);
	ck_assert_uint_eq(pa_pkt_meta(m)->hash, whole.hash);
	ck_assert_uint_eq(pa_pkt_meta(m)->sport, 777);
	ck_assert_uint_eq(pa_pkt_meta(m)->out_port, 3);
	/* the hash left for later: the flag, then the same hash */
	pa_pkt_meta(m)->hash = ~whole.hash;
	ck_assert_int_eq(pa_pkt_parse_mbuf_nohash(m), PA_PKT_OK);
	ck_assert(pa_pkt_meta(m)->flags & PA_PKT_F_HASH_LATER);
	ck_assert_uint_eq(pa_pkt_meta(m)->out_port, 3);
	pa_pkt_hash_later(rte_pktmbuf_mtod(m, const uint8_t *), pa_pkt_meta(m));
	ck_assert_uint_eq(pa_pkt_meta(m)->hash, whole.hash);
	ck_assert_uint_eq(pa_pkt_meta(m)->flags, whole.flags);
	pa_pkt_hash_later(rte_pktmbuf_mtod(m, const uint8_t *), pa_pkt_meta(m));
	ck_assert_uint_eq(pa_pkt_meta(m)->hash, whole.hash);
	rte_pktmbuf_free(m);
}
END_TEST

START_TEST(test_parse_mbuf_gathers_headers_split_across_segments)
{
	struct pa_pkt_meta whole, got;
	struct pa_flow_key k1, k2;
	struct rte_mbuf *m;
	struct pa_test_frame f;
	uint32_t ends[3];

	frame_v6_ext_udp(&f);
	frame_payload(&f, 40);
	frame_fix(&f);
	ck_assert_int_eq(parse_frame(&f, &whole), PA_PKT_OK);
	ck_assert_int_eq(pa_pkt_flow_key_raw(f.b, &whole, &k1), 0);

	/* split inside the Ethernet header, the IPv6 addresses, the UDP
	 * header */
	for (ends[0] = 1; ends[0] + 2 < f.len; ends[0] += 3) {
		ends[1] = ends[0] + (f.len - ends[0]) / 2;
		ends[2] = f.len;
		m = mbuf_chain(&f, ends, 3);
		ck_assert_int_eq(pa_pkt_parse_mbuf(m), PA_PKT_OK);
		got = *pa_pkt_meta(m);
		got.out_port = whole.out_port;	/* not the parser's */
		/* nor the rx timestamp */
		got.rx_tsc_hi = whole.rx_tsc_hi;
		got.rx_tsc_lo = whole.rx_tsc_lo;
		ck_assert_mem_eq(&got, &whole, sizeof(got));
		ck_assert_int_eq(pa_pkt_flow_key(m, pa_pkt_meta(m), &k2), 0);
		ck_assert_mem_eq(&k1, &k2, sizeof(k1));
		rte_pktmbuf_free(m);
	}
}
END_TEST

START_TEST(test_rx_timestamp_keeps_48_bits_and_differences_wrap)
{
	struct pa_pkt_meta meta;
	uint64_t t = UINT64_C(0x123456789abcdef0);

	memset(&meta, 0, sizeof(meta));
	ck_assert_uint_le(sizeof(meta), 24);
	struct pa_test_frame f;

	pa_pkt_rx_tsc_set(&meta, t);
	ck_assert_uint_eq(pa_pkt_rx_tsc(&meta), t & PA_PKT_TSC_MASK);
	/* the parsers leave the stamp alone */
	frame_v4_udp(&f, 1234, 53, 10);
	frame_fix(&f);
	ck_assert_int_eq(pa_pkt_parse(f.b, f.len, f.len, &meta), PA_PKT_OK);
	ck_assert_uint_eq(pa_pkt_rx_tsc(&meta), t & PA_PKT_TSC_MASK);
	ck_assert_int_eq(pa_pkt_parse_full(f.b, f.len, f.len, &meta), PA_PKT_OK);
	ck_assert_uint_eq(pa_pkt_rx_tsc(&meta), t & PA_PKT_TSC_MASK);
	ck_assert_uint_eq(pa_pkt_tsc_since(t + 1000, pa_pkt_rx_tsc(&meta)), 1000);
	ck_assert_uint_eq(pa_pkt_tsc_since(t + 1000, t), 1000);
	/* stamped just below 2^48, read just after the 48-bit wrap */
	t = (UINT64_C(5) << 48) - 10;
	pa_pkt_rx_tsc_set(&meta, t);
	ck_assert_uint_eq(pa_pkt_tsc_since(t + 25, pa_pkt_rx_tsc(&meta)), 25);
}
END_TEST

START_TEST(test_parse_mbuf_never_returns_segment)
{
	struct rte_mbuf *m;
	struct pa_test_frame f;
	uint32_t ends[2];

	/* truncated chain: an error of its own, not SEGMENT */
	frame_v4_tcp(&f, 1, 2, 0);
	pa_test_put16(f.b + 16, 200);
	ends[0] = 20;
	ends[1] = f.len;
	m = mbuf_chain(&f, ends, 2);
	ck_assert_int_eq(pa_pkt_parse_mbuf(m), PA_PKT_ERR_L3_LEN);
	rte_pktmbuf_free(m);

	/* headers longer than PA_PKT_HDR_MAX: ERR_EXT */
	frame_eth(&f, RTE_ETHER_TYPE_IPV6);
	frame_ipv6(&f, IPPROTO_DSTOPTS);
	frame_ext(&f, IPPROTO_DSTOPTS, IPPROTO_UDP, 1024);
	frame_udp(&f, 1, 2);
	frame_fix(&f);
	ends[0] = 100;
	ends[1] = f.len;
	m = mbuf_chain(&f, ends, 2);
	ck_assert_int_eq(pa_pkt_parse_mbuf(m), PA_PKT_ERR_EXT);
	rte_pktmbuf_free(m);
}
END_TEST

START_TEST(test_flow_key_reads_addresses_from_a_chain)
{
	struct pa_flow_key k;
	struct rte_mbuf *m;
	struct pa_test_frame f;
	uint32_t ends[2];

	frame_v4_tcp(&f, 4321, 443, 10);
	ends[0] = 28;		/* source address split */
	ends[1] = f.len;
	m = mbuf_chain(&f, ends, 2);
	ck_assert_int_eq(pa_pkt_parse_mbuf(m), PA_PKT_OK);
	ck_assert_int_eq(pa_pkt_flow_key(m, pa_pkt_meta(m), &k), 0);
	ck_assert_uint_eq(k.family, 4);
	ck_assert_uint_eq(k.v4.src, rte_cpu_to_be_32(IP4_A));
	ck_assert_uint_eq(k.v4.dst, rte_cpu_to_be_32(IP4_B));
	ck_assert_uint_eq(k.sport, rte_cpu_to_be_16(4321));
	ck_assert_uint_eq(k.dport, rte_cpu_to_be_16(443));
	rte_pktmbuf_free(m);
}
END_TEST

static Suite *
pkt_suite(void)
{
	Suite *s = suite_create("pkt");
	TCase *tc;

	tc = tcase_create("ethernet");
	tcase_add_test(tc, test_frames_shorter_than_ethernet_header_are_runt);
	tcase_add_test(tc, test_non_ip_frame_is_ok_with_non_ip_flag_and_mac_hash);
	tcase_add_test(tc, test_single_vlan_tag_sets_vlan_flag_and_shifts_l3);
	tcase_add_test(tc, test_qinq_88a8_then_8100_sets_qinq_and_two_tags);
	tcase_add_test(tc, test_9100_tpid_is_a_vlan_tag);
	tcase_add_test(tc, test_third_vlan_tag_is_err_vlan);
	tcase_add_test(tc, test_vlan_tag_cut_short_is_err_vlan);
	suite_add_tcase(s, tc);

	tc = tcase_create("ipv4");
	tcase_add_test(tc, test_ipv4_udp_fills_every_field_but_out_port);
	tcase_add_test(tc, test_ipv4_tcp_reports_ports_and_l4_offset);
	tcase_add_test(tc, test_ipv4_options_move_l4_offset_by_ihl);
	tcase_add_test(tc, test_ipv4_ihl_below_5_is_l3_hdrlen);
	tcase_add_test(tc, test_ipv4_ihl_beyond_total_length_is_l3_hdrlen);
	tcase_add_test(tc, test_ipv4_ihl_beyond_frame_is_l3_hdrlen);
	tcase_add_test(tc, test_ipv4_total_length_beyond_frame_is_l3_len);
	tcase_add_test(tc, test_ipv4_ethernet_padding_after_datagram_is_ok);
	tcase_add_test(tc, test_ipv4_header_cut_short_is_l3_trunc);
	tcase_add_test(tc, test_ipv4_ethertype_with_version_6_is_l3_version);
	tcase_add_test(tc, test_ipv4_first_fragment_has_ports_and_frag_flag);
	tcase_add_test(tc, test_ipv4_later_fragment_has_no_l4_and_no_ports);
	tcase_add_test(tc, test_ipv4_fragments_of_a_datagram_hash_alike_both_ways);
	suite_add_tcase(s, tc);

	tc = tcase_create("ipv6");
	tcase_add_test(tc, test_ipv6_udp_without_extension_headers);
	tcase_add_test(tc, test_ipv6_hop_by_hop_header_is_skipped);
	tcase_add_test(tc, test_ipv6_routing_header_is_skipped);
	tcase_add_test(tc, test_ipv6_destination_options_header_is_skipped);
	tcase_add_test(tc, test_ipv6_ah_length_counts_4_byte_units_plus_2);
	tcase_add_test(tc, test_ipv6_chain_of_every_extension_type);
	tcase_add_test(tc, test_ipv6_eight_extension_headers_ok_nine_is_err_ext);
	tcase_add_test(tc, test_ipv6_extension_header_past_payload_length_is_err_ext);
	tcase_add_test(tc, test_ipv6_payload_ending_at_extension_header_is_err_ext);
	tcase_add_test(tc, test_ipv6_first_fragment_parses_l4);
	tcase_add_test(tc, test_ipv6_later_fragment_has_no_l4_and_stops_chain);
	tcase_add_test(tc, test_ipv6_fragments_hash_alike_even_with_headers_after_frag);
	tcase_add_test(tc, test_ipv6_esp_and_no_next_header_stop_without_l4);
	tcase_add_test(tc, test_ipv6_payload_length_beyond_frame_is_l3_len);
	tcase_add_test(tc, test_ipv6_jumbogram_is_l3_len);
	tcase_add_test(tc, test_ipv6_header_errors_version_and_truncation);
	suite_add_tcase(s, tc);

	tc = tcase_create("l4");
	tcase_add_test(tc, test_tcp_header_cut_short_is_l4_trunc);
	tcase_add_test(tc, test_tcp_data_offset_below_5_or_past_payload_is_l4_len);
	tcase_add_test(tc, test_udp_header_cut_short_is_l4_trunc);
	tcase_add_test(tc, test_udp_length_below_8_or_past_payload_is_l4_len);
	tcase_add_test(tc, test_icmp_sets_l4_with_zero_ports_and_needs_4_bytes);
	tcase_add_test(tc, test_icmpv6_sets_l4_and_needs_4_bytes);
	tcase_add_test(tc, test_sctp_reports_ports_and_needs_12_bytes);
	tcase_add_test(tc, test_gre_and_other_protocols_are_ok_without_l4);
	suite_add_tcase(s, tc);

	tc = tcase_create("truncation");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_every_truncation_of_vlan_ipv4_tcp_is_an_error);
	tcase_add_test(tc, test_every_truncation_of_ipv6_ext_udp_is_an_error);
	tcase_add_test(tc, test_every_truncation_of_ipv6_tcp_and_udp_is_an_error);
	tcase_add_test(tc, test_ipv6_tcp_and_udp_take_the_fast_path);
	tcase_add_test(tc, test_headers_split_across_segments_give_segment);
	tcase_add_test(tc, test_later_fragment_payload_in_next_segment_is_ok);
	tcase_add_test(tc, test_frame_errors_win_over_segment);
	tcase_add_test(tc, test_seg_len_beyond_pkt_len_counts_as_pkt_len);
	tcase_add_test(tc, test_fast_path_agrees_with_full_parser_on_mutated_frames);
	suite_add_tcase(s, tc);

	tc = tcase_create("hash");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_hash_is_symmetric_for_random_ipv4_tuples);
	tcase_add_test(tc, test_hash_is_symmetric_for_random_ipv6_tuples);
	tcase_add_test(tc, test_hash_tells_flows_apart);
	tcase_add_test(tc, test_hash_values_are_crc32c_and_the_same_on_every_build);
	tcase_add_test(tc, test_hash_spreads_random_flows_over_16_buckets);
	tcase_add_test(tc, test_hash_spreads_sequential_flows_over_16_buckets);
	suite_add_tcase(s, tc);

	tc = tcase_create("icmp_quote");
	tcase_add_test(tc, test_icmp_error_hashes_as_the_flow_it_quotes);
	tcase_add_test(tc,
		test_icmp_error_quoting_ipv4_options_hashes_as_its_flow);
	tcase_add_test(tc,
		test_icmp_error_with_short_or_garbage_quote_keeps_its_hash);
	tcase_add_test(tc,
		test_icmp_error_quote_split_across_segments_gives_segment);
	tcase_add_test(tc, test_icmp_error_quote_past_hdr_max_keeps_its_hash);
	suite_add_tcase(s, tc);

	tc = tcase_create("flow_key");
	tcase_add_test(tc, test_flow_key_raw_ipv4_is_network_order_tuple);
	tcase_add_test(tc, test_flow_key_raw_ipv6_after_extension_headers);
	tcase_add_test(tc, test_flow_key_raw_of_non_ip_is_einval_with_family_0);
	tcase_add_test(tc, test_flow_key_raw_of_later_fragment_has_zero_ports);
	suite_add_tcase(s, tc);

	tc = tcase_create("mbuf");
	tcase_set_timeout(tc, 120);
	tcase_add_unchecked_fixture(tc, eal_setup, eal_teardown);
	tcase_add_test(tc, test_init_registers_dynfield_once);
	tcase_add_test(tc, test_parse_mbuf_single_segment_fills_dynfield);
	tcase_add_test(tc, test_parse_mbuf_gathers_headers_split_across_segments);
	tcase_add_test(tc, test_rx_timestamp_keeps_48_bits_and_differences_wrap);
	tcase_add_test(tc, test_parse_mbuf_never_returns_segment);
	tcase_add_test(tc, test_flow_key_reads_addresses_from_a_chain);
	suite_add_tcase(s, tc);

	return s;
}

int
main(void)
{
	static Suite *(*const suites[])(void) = { pkt_suite, NULL };
	const struct pa_test_main t = {
		.name = "test_pkt",
		.suites = suites,
	};

	return pa_test_main(&t);
}
