/* SPDX-License-Identifier: BSD-3-Clause */
/* Port roles (lib/port/pa_port_inline.h, port_route.c): pure functions. */
#include <arpa/inet.h>
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include <errno.h>
#include <netinet/in.h>

#include <rte_ethdev.h>
#include <rte_thash.h>

#include "pa_port.h"
#include "pa_test_main.h"

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
	/* link-local (fe80::/10) is never transit */
	inet_pton(AF_INET6, "fe80::1", d);
	ck_assert(pa_port_local6((const uint8_t (*)[16])a6, 0, d));
	inet_pton(AF_INET6, "febf:ffff::1", d);
	ck_assert(pa_port_local6((const uint8_t (*)[16])a6, 0, d));
	inet_pton(AF_INET6, "fec0::1", d);
	ck_assert(!pa_port_local6((const uint8_t (*)[16])a6, 0, d));
}
END_TEST

/* RFC 4291 appendix A: 34-56-78-9A-BC-DE -> 3656:78ff:fe9a:bcde; the
 * universal/local bit flips both ways. */
START_TEST(test_link_local_is_fe80_and_modified_eui64)
{
	static const uint8_t mac1[6] = { 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde };
	static const uint8_t mac2[6] = { 0x02, 0x00, 0x00, 0x00, 0x13, 0x01 };
	uint8_t got[16], want[16];

	pa_port_link_local(mac1, got);
	inet_pton(AF_INET6, "fe80::3656:78ff:fe9a:bcde", want);
	ck_assert_mem_eq(got, want, 16);
	pa_port_link_local(mac2, got);
	inet_pton(AF_INET6, "fe80::ff:fe00:1301", want);
	ck_assert_mem_eq(got, want, 16);
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

/* ---- RSS steering: pa_port_rss_hash() / pa_port_rss_queue() ---- */

/* Microsoft's RSS verification suite key ("Verifying the RSS Hash
 * Calculation"), the one NIC datasheets quote. */
static const uint8_t ms_key[40] = {
	0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2,
	0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3, 0x8f, 0xb0,
	0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4,
	0x77, 0xcb, 0x2d, 0xa3, 0x80, 0x30, 0xf2, 0x0c,
	0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
};

static void
model(struct pa_port_rss *r, const uint8_t *key, uint64_t hf,
		unsigned int reta_size, unsigned int nq)
{
	uint16_t reta[PA_PORT_RSS_RETA_MAX];
	unsigned int i;

	for (i = 0; i < reta_size; i++)
		reta[i] = (uint16_t)(i % nq);
	ck_assert_int_eq(pa_port_rss_model_set(r, key, 40, hf, reta,
		reta_size), 0);
}

static void
a4(const char *s, uint8_t *out)
{
	ck_assert_int_eq(inet_pton(AF_INET, s, out), 1);
}

static void
a6(const char *s, uint8_t *out)
{
	ck_assert_int_eq(inet_pton(AF_INET6, s, out), 1);
}

START_TEST(test_rss_hash_matches_the_microsoft_verification_vectors)
{
	static const struct {
		const char *src, *dst;
		uint16_t sport, dport;
		uint32_t ip, tcp;
	} v4[] = {
		{ "66.9.149.187", "161.142.100.80", 2794, 1766,
		  0x323e8fc2, 0x51ccc178 },
		{ "199.92.111.2", "65.69.140.83", 14230, 4739,
		  0xd718262a, 0xc626b0ea },
		{ "24.19.198.95", "12.22.207.184", 12898, 38024,
		  0xd2d0a5de, 0x5c2b394a },
		{ "38.27.205.30", "209.142.163.6", 48228, 2217,
		  0x82989176, 0xafc7327f },
		{ "153.39.163.191", "202.188.127.2", 44251, 1303,
		  0x5d1809c5, 0x10e828a2 },
	}, v6[] = {
		{ "3ffe:2501:200:1fff::7", "3ffe:2501:200:3::1", 2794, 1766,
		  0x2cc18cd5, 0x40207d3d },
		{ "3ffe:501:8::260:97ff:fe40:efab", "ff02::1", 14230, 4739,
		  0x0f0c461c, 0xdde51bbf },
		{ "3ffe:1900:4545:3:200:f8ff:fe21:67cf",
		  "fe80::200:f8ff:fe21:67cf", 44251, 38024,
		  0x4b61e985, 0x02d1feef },
	};
	struct pa_port_rss tcp, ip;
	uint8_t s[16], d[16];
	unsigned int i;

	model(&tcp, ms_key, RTE_ETH_RSS_IP | RTE_ETH_RSS_TCP, 128, 4);
	model(&ip, ms_key, RTE_ETH_RSS_IP, 128, 4);
	for (i = 0; i < RTE_DIM(v4); i++) {
		a4(v4[i].src, s);
		a4(v4[i].dst, d);
		ck_assert_uint_eq(pa_port_rss_hash(&tcp, 4, IPPROTO_TCP, s, d,
			v4[i].sport, v4[i].dport), v4[i].tcp);
		/* no TCP hash type: the addresses only */
		ck_assert_uint_eq(pa_port_rss_hash(&ip, 4, IPPROTO_TCP, s, d,
			v4[i].sport, v4[i].dport), v4[i].ip);
		ck_assert_uint_eq(pa_port_rss_hash(&tcp, 4, IPPROTO_ICMP, s, d,
			0, 0), v4[i].ip);
	}
	for (i = 0; i < RTE_DIM(v6); i++) {
		a6(v6[i].src, s);
		a6(v6[i].dst, d);
		ck_assert_uint_eq(pa_port_rss_hash(&tcp, 6, IPPROTO_TCP, s, d,
			v6[i].sport, v6[i].dport), v6[i].tcp);
		ck_assert_uint_eq(pa_port_rss_hash(&ip, 6, IPPROTO_TCP, s, d,
			v6[i].sport, v6[i].dport), v6[i].ip);
	}
}
END_TEST

/* The same as DPDK's own rte_softrss() / rte_softrss_be() over
 * rte_ipv4_tuple / rte_ipv6_tuple, for many random flows and keys, and
 * the queue is the RETA entry of hash % size. */
START_TEST(test_rss_hash_and_queue_agree_with_rte_softrss)
{
	struct pa_port_rss r;
	union rte_thash_tuple t;
	uint8_t key[40], ckey[40], s[16], d[16];
	uint32_t h, want;
	unsigned int i, j, nq;

	srandom(13);
	for (i = 0; i < 2000; i++) {
		for (j = 0; j < sizeof(key); j++)
			key[j] = (uint8_t)random();
		nq = 1 + (unsigned int)random() % 7;
		model(&r, key, RTE_ETH_RSS_IP | RTE_ETH_RSS_TCP |
			RTE_ETH_RSS_UDP, 64u << (i % 4), nq);
		rte_convert_rss_key((const uint32_t *)key, (uint32_t *)ckey,
			sizeof(key));
		for (j = 0; j < 16; j++) {
			s[j] = (uint8_t)random();
			d[j] = (uint8_t)random();
		}
		memset(&t, 0, sizeof(t));
		if (i & 1) {
			t.v4.src_addr = (uint32_t)s[0] << 24 | s[1] << 16 |
				s[2] << 8 | s[3];
			t.v4.dst_addr = (uint32_t)d[0] << 24 | d[1] << 16 |
				d[2] << 8 | d[3];
			t.v4.sport = (uint16_t)(i * 7);
			t.v4.dport = (uint16_t)(i * 13 + 1);
			want = rte_softrss((uint32_t *)&t,
				RTE_THASH_V4_L4_LEN, key);
			h = pa_port_rss_hash(&r, 4, IPPROTO_UDP, s, d,
				t.v4.sport, t.v4.dport);
		} else {
			for (j = 0; j < 4; j++) {
				((uint32_t *)t.v6.src_addr)[j] =
					rte_be_to_cpu_32(((uint32_t *)s)[j]);
				((uint32_t *)t.v6.dst_addr)[j] =
					rte_be_to_cpu_32(((uint32_t *)d)[j]);
			}
			t.v6.sport = (uint16_t)(i * 7);
			t.v6.dport = (uint16_t)(i * 13 + 1);
			want = rte_softrss((uint32_t *)&t,
				RTE_THASH_V6_L4_LEN, key);
			ck_assert_uint_eq(want, rte_softrss_be((uint32_t *)&t,
				RTE_THASH_V6_L4_LEN, ckey));
			h = pa_port_rss_hash(&r, 6, IPPROTO_TCP, s, d,
				t.v6.sport, t.v6.dport);
		}
		ck_assert_uint_eq(h, want);
		ck_assert_uint_eq(pa_port_rss_queue(&r, h),
			(h % (64u << (i % 4))) % nq);
	}
}
END_TEST

/* The appliance's key is symmetric: a flow and its reply (or the quote
 * of the reply in an ICMP error) reach one queue. No hash type for the
 * family: hash 0. Bounds of the model. */
START_TEST(test_rss_symmetric_key_unhashed_types_and_model_bounds)
{
	struct pa_port_rss r;
	uint16_t reta[PA_PORT_RSS_RETA_MAX + 1] = { 0 };
	uint8_t c[16], v[16];

	model(&r, pa_port_sym_rss_key, RTE_ETH_RSS_IP | RTE_ETH_RSS_TCP |
		RTE_ETH_RSS_UDP, 128, 2);
	a4("198.51.100.7", c);
	a4("192.0.2.10", v);
	ck_assert_uint_eq(pa_port_rss_hash(&r, 4, IPPROTO_TCP, c, v, 20001, 80),
		pa_port_rss_hash(&r, 4, IPPROTO_TCP, v, c, 80, 20001));
	a6("2001:db8:c::1", c);
	a6("2001:db8:10::10", v);
	ck_assert_uint_eq(pa_port_rss_hash(&r, 6, IPPROTO_UDP, c, v, 40001, 53),
		pa_port_rss_hash(&r, 6, IPPROTO_UDP, v, c, 53, 40001));
	model(&r, ms_key, RTE_ETH_RSS_IPV4 | RTE_ETH_RSS_NONFRAG_IPV4_TCP,
		128, 2);
	ck_assert_uint_eq(pa_port_rss_hash(&r, 6, IPPROTO_TCP, c, v, 1, 2), 0);
	ck_assert_int_eq(pa_port_rss_model_set(&r, ms_key, 36, 0, reta, 128),
		-EINVAL);
	ck_assert_int_eq(pa_port_rss_model_set(&r, ms_key, 40, 0, reta, 0),
		-EINVAL);
	ck_assert_int_eq(pa_port_rss_model_set(&r, ms_key, 40, 0, reta,
		PA_PORT_RSS_RETA_MAX + 1), -EINVAL);
}
END_TEST

static Suite *
port_suite(void)
{
	Suite *s = suite_create("port");
	TCase *tc = tcase_create("roles");

	/* the checksum and RSS loops are CPU-bound: a loaded machine (shared
	 * CPUs) must not fail them on check's 4 s default */
	tcase_set_timeout(tc, 120);

	tcase_add_test(tc, test_routed_port_takes_its_mac_broadcast_all_nodes_and_solicited_node_only);
	tcase_add_test(tc, test_for_the_port_its_addresses_broadcast_and_multicast);
	tcase_add_test(tc, test_ttl_decrement_checksum_equals_full_recomputation);
	tcase_add_test(tc, test_icmp_bucket_allows_burst_then_rate);
	tcase_add_test(tc, test_time_exceeded_ipv4_field_by_field);
	tcase_add_test(tc, test_time_exceeded_not_about_errors_fragments_or_group_sources);
	tcase_add_test(tc, test_time_exceeded_never_to_a_group_zero_or_own_source_mac);
	tcase_add_test(tc, test_time_exceeded_ipv6_field_by_field);
	tcase_add_test(tc, test_link_local_is_fe80_and_modified_eui64);
	tcase_add_test(tc, test_rss_hash_matches_the_microsoft_verification_vectors);
	tcase_add_test(tc, test_rss_hash_and_queue_agree_with_rte_softrss);
	tcase_add_test(tc, test_rss_symmetric_key_unhashed_types_and_model_bounds);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	static Suite *(*const suites[])(void) = { port_suite, NULL };
	const struct pa_test_main t = {
		.name = "test_port",
		.suites = suites,
	};

	return pa_test_main(&t);
}
