/* SPDX-License-Identifier: BSD-3-Clause */
/* Port roles (lib/port/pa_port_inline.h, port_route.c): pure functions. */
#include <arpa/inet.h>
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "pa_port.h"

static const uint8_t OWN[6] = { 0x02, 0x70, 0x63, 0x61, 0x70, 0x00 };
static const uint8_t PEER[6] = { 0x02, 0, 0, 0, 0x99, 0x01 };

static uint16_t
sum16(const uint8_t *p, size_t n, uint32_t s)
{
	size_t i;

	for (i = 0; i + 1 < n; i += 2)
		s += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (n & 1)
		s += (uint32_t)p[n - 1] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

static enum pa_port_l2
cls(const uint8_t dst[6])
{
	uint8_t f[14];
	struct rte_ether_addr own;

	memcpy(f, dst, 6);
	memcpy(f + 6, PEER, 6);
	f[12] = 0x08;
	f[13] = 0x00;
	memcpy(own.addr_bytes, OWN, 6);
	return pa_port_l2_class(f, pa_port_mac64(&own));
}

START_TEST(test_routed_port_takes_its_mac_broadcast_all_nodes_and_solicited_node_only)
{
	static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	static const uint8_t all_nodes[6] = { 0x33, 0x33, 0, 0, 0, 1 };
	static const uint8_t snm[6] = { 0x33, 0x33, 0xff, 0, 0, 5 };
	static const uint8_t all_routers[6] = { 0x33, 0x33, 0, 0, 0, 2 };
	static const uint8_t v4mc[6] = { 0x01, 0, 0x5e, 0, 0, 1 };
	static const uint8_t lldp[6] = { 0x01, 0x80, 0xc2, 0, 0, 0x0e };
	static const uint8_t near_own[6] = { 0x02, 0x70, 0x63, 0x61, 0x70, 0x01 };
	static const uint8_t near_own0[6] = { 0x03, 0x70, 0x63, 0x61, 0x70, 0x00 };

	ck_assert_int_eq(cls(OWN), PA_PORT_L2_OURS);
	ck_assert_int_eq(cls(PEER), PA_PORT_L2_FOREIGN);
	ck_assert_int_eq(cls(near_own), PA_PORT_L2_FOREIGN);
	ck_assert_int_eq(cls(near_own0), PA_PORT_L2_FOREIGN);
	ck_assert_int_eq(cls(bcast), PA_PORT_L2_GROUP);
	ck_assert_int_eq(cls(all_nodes), PA_PORT_L2_GROUP);
	ck_assert_int_eq(cls(snm), PA_PORT_L2_SNM);
	ck_assert_int_eq(cls(all_routers), PA_PORT_L2_FOREIGN);
	ck_assert_int_eq(cls(v4mc), PA_PORT_L2_FOREIGN);
	ck_assert_int_eq(cls(lldp), PA_PORT_L2_FOREIGN);
}
END_TEST

START_TEST(test_for_the_port_its_addresses_broadcast_and_multicast)
{
	uint32_t a4[2] = { inet_addr("198.51.100.5"), inet_addr("203.0.113.5") };
	/* a /24 and a /31 (no broadcast) */
	uint32_t b4[2] = { inet_addr("198.51.100.255"), 0 };
	uint8_t a6[1][16], d[16];

	inet_pton(AF_INET6, "2001:db8:1::5", a6[0]);
	ck_assert(pa_port_local4(a4, b4, 2, inet_addr("198.51.100.5")));
	ck_assert(pa_port_local4(a4, b4, 2, inet_addr("203.0.113.5")));
	ck_assert(!pa_port_local4(a4, b4, 2, inet_addr("198.51.100.6")));
	ck_assert(!pa_port_local4(a4, b4, 0, inet_addr("198.51.100.5")));
	ck_assert(pa_port_local4(a4, b4, 2, inet_addr("224.0.0.5")));
	ck_assert(pa_port_local4(a4, b4, 2, inet_addr("239.1.2.3")));
	ck_assert(pa_port_local4(a4, b4, 2, inet_addr("255.255.255.255")));
	ck_assert(!pa_port_local4(a4, b4, 2, inet_addr("240.0.0.1")));
	/* the directed broadcast of its subnet, not of another one */
	ck_assert(pa_port_local4(a4, b4, 2, inet_addr("198.51.100.255")));
	ck_assert(!pa_port_local4(a4, b4, 2, inet_addr("203.0.113.255")));
	ck_assert(!pa_port_local4(a4, b4, 2, inet_addr("0.0.0.0")));
	ck_assert(pa_port_local6((const uint8_t (*)[16])a6, 1, a6[0]));
	inet_pton(AF_INET6, "2001:db8:1::6", d);
	ck_assert(!pa_port_local6((const uint8_t (*)[16])a6, 1, d));
	inet_pton(AF_INET6, "ff02::1", d);
	ck_assert(pa_port_local6((const uint8_t (*)[16])a6, 0, d));
}
END_TEST

/* An IPv4 header with random fields and a right checksum. */
static void
rand_ip4(uint8_t *ip, unsigned int ttl)
{
	unsigned int i;

	for (i = 0; i < 20; i++)
		ip[i] = (uint8_t)rand();
	ip[0] = 0x45;
	ip[8] = (uint8_t)ttl;
	ip[10] = ip[11] = 0;
	i = (uint16_t)~sum16(ip, 20, 0);
	ip[10] = (uint8_t)(i >> 8);
	ip[11] = (uint8_t)i;
}

START_TEST(test_ttl_decrement_checksum_equals_full_recomputation)
{
	uint8_t ip[20], ref[20];
	unsigned int ttl, k;
	uint16_t full;

	srand(1624);
	for (k = 0; k < 2000; k++) {
		for (ttl = 2; ttl <= 255; ttl += (k % 7) + 1) {
			rand_ip4(ip, ttl);
			memcpy(ref, ip, 20);
			pa_port_ttl_dec4(ip);
			ck_assert_uint_eq(ip[8], ttl - 1);
			ref[8] = (uint8_t)(ttl - 1);
			ref[10] = ref[11] = 0;
			full = (uint16_t)~sum16(ref, 20, 0);
			/* a header whose sum is all ones: both forms of zero
			 * verify; RFC 1624 never gives 0xffff here */
			ck_assert_msg((ip[10] << 8 | ip[11]) == full ||
				(full == 0 && (ip[10] << 8 | ip[11]) == 0xffff),
				"ttl %u: %04x, recomputed %04x", ttl,
				ip[10] << 8 | ip[11], full);
			ck_assert_uint_eq(sum16(ip, 20, 0), 0xffff);
			ck_assert_int_eq(memcmp(ip + 12, ref + 12, 8), 0);
			ck_assert_int_eq(memcmp(ip, ref, 8), 0);
		}
	}
}
END_TEST

START_TEST(test_icmp_bucket_allows_burst_then_rate)
{
	struct pa_port_bucket b;
	unsigned int i, n = 0;

	pa_port_bucket_init(&b, 1000, 10, 5);
	for (i = 0; i < 20; i++)
		n += pa_port_bucket_take(&b, 1000);
	ck_assert_uint_eq(n, 5);
	ck_assert(!pa_port_bucket_take(&b, 1009));
	ck_assert(pa_port_bucket_take(&b, 1010));
	ck_assert(!pa_port_bucket_take(&b, 1019));
	/* a long pause refills up to the burst, not beyond */
	for (i = 0, n = 0; i < 20; i++)
		n += pa_port_bucket_take(&b, 1000000);
	ck_assert_uint_eq(n, 5);
	/* per_token 0: unlimited (replay) */
	pa_port_bucket_init(&b, 0, 0, 1);
	for (i = 0; i < 1000; i++)
		ck_assert(pa_port_bucket_take(&b, 0));
}
END_TEST

/* Ethernet (+ one VLAN tag if @p vlan) + IPv4 UDP of @p payload bytes. */
static uint32_t
frame4(uint8_t *f, bool vlan, uint32_t payload, uint8_t ttl, const char *src,
		uint16_t frag)
{
	uint32_t o = 12, il = 20 + 8 + payload, i;
	in_addr_t a4;
	uint16_t c;

	memcpy(f, OWN, 6);
	memcpy(f + 6, PEER, 6);
	if (vlan) {
		f[o++] = 0x81; f[o++] = 0x00; f[o++] = 0x00; f[o++] = 42;
	}
	f[o++] = 0x08; f[o++] = 0x00;
	memset(f + o, 0, 20);
	f[o] = 0x45;
	f[o + 2] = (uint8_t)(il >> 8);
	f[o + 3] = (uint8_t)il;
	f[o + 4] = 0x12; f[o + 5] = 0x34;
	f[o + 6] = (uint8_t)(frag >> 8);
	f[o + 7] = (uint8_t)frag;
	f[o + 8] = ttl;
	f[o + 9] = 17;
	a4 = inet_addr(src);
	memcpy(f + o + 12, &a4, 4);	/* the header is not 4-byte aligned */
	a4 = inet_addr("203.0.113.9");
	memcpy(f + o + 16, &a4, 4);
	c = (uint16_t)~sum16(f + o, 20, 0);
	f[o + 10] = (uint8_t)(c >> 8);
	f[o + 11] = (uint8_t)c;
	for (i = 0; i < 8 + payload; i++)
		f[o + 20 + i] = (uint8_t)(i * 7);
	return o + il;
}

START_TEST(test_time_exceeded_ipv4_field_by_field)
{
	static uint8_t f[2048], out[PA_PORT_ICMP_FRAME_MAX];
	uint32_t src = inet_addr("198.51.100.5"), len, n;
	const uint8_t *ip, *icmp;

	len = frame4(f, true, 30, 1, "192.0.2.77", 0);
	/* Ethernet padding after the datagram must not be quoted */
	memset(f + len, 0xee, 10);
	n = pa_port_build_time_exceeded(out, sizeof(out), f, len + 10, 18,
		OWN, (const uint8_t *)&src);
	ck_assert_uint_eq(n, 18 + 20 + 8 + (20 + 8 + 30));
	ck_assert_int_eq(memcmp(out, PEER, 6), 0);	/* back to the sender */
	ck_assert_int_eq(memcmp(out + 6, OWN, 6), 0);	/* from the port */
	ck_assert_int_eq(memcmp(out + 12, f + 12, 6), 0); /* its VLAN tag */
	ip = out + 18;
	ck_assert_uint_eq(ip[0], 0x45);
	ck_assert_uint_eq(ip[2] << 8 | ip[3], n - 18);
	ck_assert_uint_eq(ip[6] & 0x1f, 0);
	ck_assert_uint_eq(ip[8], 64);
	ck_assert_uint_eq(ip[9], 1);
	ck_assert_int_eq(memcmp(ip + 12, &src, 4), 0);
	ck_assert_int_eq(memcmp(ip + 16, f + 18 + 12, 4), 0);
	ck_assert_uint_eq(sum16(ip, 20, 0), 0xffff);
	icmp = ip + 20;
	ck_assert_uint_eq(icmp[0], 11);
	ck_assert_uint_eq(icmp[1], 0);
	ck_assert_uint_eq(icmp[4] | icmp[5] | icmp[6] | icmp[7], 0);
	ck_assert_int_eq(memcmp(icmp + 8, f + 18, 20 + 8 + 30), 0);
	ck_assert_uint_eq(sum16(icmp, n - 18 - 20, 0), 0xffff);

	/* a big datagram: the error stays within 576 bytes of IP */
	len = frame4(f, false, 1400, 0, "192.0.2.77", 0);
	n = pa_port_build_time_exceeded(out, sizeof(out), f, len, 14, OWN,
		(const uint8_t *)&src);
	ck_assert_uint_eq(n, 14 + 576);
	ck_assert_int_eq(memcmp(out + 14 + 28, f + 14, 548), 0);
	ck_assert_uint_eq(sum16(out + 14 + 20, 556, 0), 0xffff);
	/* too small a buffer: none */
	ck_assert_uint_eq(pa_port_build_time_exceeded(out, 100, f, len, 14,
		OWN, (const uint8_t *)&src), 0);
}
END_TEST

START_TEST(test_time_exceeded_not_about_errors_fragments_or_group_sources)
{
	static uint8_t f[2048], out[PA_PORT_ICMP_FRAME_MAX];
	uint32_t src = inet_addr("198.51.100.5"), len;

	len = frame4(f, false, 30, 1, "224.0.0.9", 0);
	ck_assert_uint_eq(pa_port_build_time_exceeded(out, sizeof(out), f, len,
		14, OWN, (const uint8_t *)&src), 0);
	len = frame4(f, false, 30, 1, "255.255.255.255", 0);
	ck_assert_uint_eq(pa_port_build_time_exceeded(out, sizeof(out), f, len,
		14, OWN, (const uint8_t *)&src), 0);
	len = frame4(f, false, 30, 1, "0.0.0.0", 0);
	ck_assert_uint_eq(pa_port_build_time_exceeded(out, sizeof(out), f, len,
		14, OWN, (const uint8_t *)&src), 0);
	/* non-first fragment: none; first fragment (MF, offset 0): one */
	len = frame4(f, false, 30, 1, "192.0.2.77", 0x0010);
	ck_assert_uint_eq(pa_port_build_time_exceeded(out, sizeof(out), f, len,
		14, OWN, (const uint8_t *)&src), 0);
	len = frame4(f, false, 30, 1, "192.0.2.77", 0x2000);
	ck_assert_uint_ne(pa_port_build_time_exceeded(out, sizeof(out), f, len,
		14, OWN, (const uint8_t *)&src), 0);
	/* about an ICMP error (time exceeded): none; about an echo: one */
	len = frame4(f, false, 30, 1, "192.0.2.77", 0);
	f[14 + 9] = 1;
	f[14 + 20] = 11;
	ck_assert_uint_eq(pa_port_build_time_exceeded(out, sizeof(out), f, len,
		14, OWN, (const uint8_t *)&src), 0);
	f[14 + 20] = 8;
	ck_assert_uint_ne(pa_port_build_time_exceeded(out, sizeof(out), f, len,
		14, OWN, (const uint8_t *)&src), 0);
}
END_TEST

/* The hostile replay's routed variant found these: a time exceeded went
 * back to a frame's group / zero source MAC, and to the port's own MAC
 * when a frame spoofed it. */
START_TEST(test_time_exceeded_never_to_a_group_zero_or_own_source_mac)
{
	static const uint8_t srcs[][6] = {
		{ 0xff, 0xff, 0xff, 0xff, 0xff, 0xff },
		{ 0x01, 0x00, 0x5e, 0x00, 0x00, 0x01 },
		{ 0x33, 0x33, 0x00, 0x00, 0x00, 0x01 },
		{ 0x03, 0x00, 0x00, 0x00, 0x00, 0x01 },
		{ 0, 0, 0, 0, 0, 0 },
	};
	static uint8_t f[2048], out[PA_PORT_ICMP_FRAME_MAX];
	uint32_t src = inet_addr("198.51.100.5"), len;
	unsigned int i;

	len = frame4(f, false, 30, 1, "192.0.2.77", 0);
	ck_assert_uint_ne(pa_port_build_time_exceeded(out, sizeof(out), f, len,
		14, OWN, (const uint8_t *)&src), 0);
	for (i = 0; i < RTE_DIM(srcs); i++) {
		memcpy(f + 6, srcs[i], 6);
		ck_assert_uint_eq(pa_port_build_time_exceeded(out, sizeof(out),
			f, len, 14, OWN, (const uint8_t *)&src), 0);
	}
	memcpy(f + 6, OWN, 6);
	ck_assert_uint_eq(pa_port_build_time_exceeded(out, sizeof(out), f, len,
		14, OWN, (const uint8_t *)&src), 0);
}
END_TEST

START_TEST(test_time_exceeded_ipv6_field_by_field)
{
	static uint8_t f[2048], out[PA_PORT_ICMP_FRAME_MAX];
	uint8_t src6[16], csrc[16];
	const uint8_t *ip, *icmp;
	uint32_t len, n, s, pl = 8 + 1500, i;

	inet_pton(AF_INET6, "2001:db8:1::5", src6);
	inet_pton(AF_INET6, "2001:db8:77::1", csrc);
	memcpy(f, OWN, 6);
	memcpy(f + 6, PEER, 6);
	f[12] = 0x86; f[13] = 0xdd;
	memset(f + 14, 0, 40);
	f[14] = 0x60;
	f[18] = (uint8_t)(pl >> 8);
	f[19] = (uint8_t)pl;
	f[20] = 17;
	f[21] = 1;
	memcpy(f + 22, csrc, 16);
	inet_pton(AF_INET6, "2001:db8:99::9", f + 38);
	for (i = 0; i < pl; i++)
		f[54 + i] = (uint8_t)i;
	len = 54 + pl;
	n = pa_port_build_time_exceeded(out, sizeof(out), f, len, 14, OWN, src6);
	ck_assert_uint_eq(n, 14 + 1280);
	ck_assert_int_eq(memcmp(out, PEER, 6), 0);
	ck_assert_int_eq(memcmp(out + 6, OWN, 6), 0);
	ck_assert_uint_eq(out[12] << 8 | out[13], 0x86dd);
	ip = out + 14;
	ck_assert_uint_eq(ip[0] >> 4, 6);
	ck_assert_uint_eq(ip[4] << 8 | ip[5], 1240);
	ck_assert_uint_eq(ip[6], 58);
	ck_assert_uint_eq(ip[7], 64);
	ck_assert_int_eq(memcmp(ip + 8, src6, 16), 0);
	ck_assert_int_eq(memcmp(ip + 24, csrc, 16), 0);
	icmp = ip + 40;
	ck_assert_uint_eq(icmp[0], 3);
	ck_assert_uint_eq(icmp[1], 0);
	ck_assert_int_eq(memcmp(icmp + 8, f + 14, 1232), 0);
	s = sum16(ip + 8, 32, 0) + 1240 + 58;
	ck_assert_uint_eq(sum16(icmp, 1240, s), 0xffff);
	/* about an ICMPv6 error: none; from a multicast source: none */
	f[20] = 58;
	f[54] = 1;
	ck_assert_uint_eq(pa_port_build_time_exceeded(out, sizeof(out), f, len,
		14, OWN, src6), 0);
	f[54] = 128;
	ck_assert_uint_ne(pa_port_build_time_exceeded(out, sizeof(out), f, len,
		14, OWN, src6), 0);
	f[22] = 0xff;
	ck_assert_uint_eq(pa_port_build_time_exceeded(out, sizeof(out), f, len,
		14, OWN, src6), 0);
}
END_TEST

static Suite *
port_suite(void)
{
	Suite *s = suite_create("port");
	TCase *tc = tcase_create("roles");

	/* the checksum sweeps run 100,000 cases: seconds under a sanitizer
	 * or on a loaded 2-CPU machine, past check's 4 s default */
	tcase_set_timeout(tc, 120);

	tcase_add_test(tc, test_routed_port_takes_its_mac_broadcast_all_nodes_and_solicited_node_only);
	tcase_add_test(tc, test_for_the_port_its_addresses_broadcast_and_multicast);
	tcase_add_test(tc, test_ttl_decrement_checksum_equals_full_recomputation);
	tcase_add_test(tc, test_icmp_bucket_allows_burst_then_rate);
	tcase_add_test(tc, test_time_exceeded_ipv4_field_by_field);
	tcase_add_test(tc, test_time_exceeded_not_about_errors_fragments_or_group_sources);
	tcase_add_test(tc, test_time_exceeded_never_to_a_group_zero_or_own_source_mac);
	tcase_add_test(tc, test_time_exceeded_ipv6_field_by_field);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(port_suite());
	int failed;

	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
