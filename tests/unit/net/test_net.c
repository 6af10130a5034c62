/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests of lib/net: address, prefix, port range, MAC and protocol
 * text forms, and the predicates on addresses. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include <check.h>

#include "pa_net.h"
#include "pa_test_main.h"

static char why[256];

static struct pa_ip_addr
ip(const char *s)
{
	struct pa_ip_addr a;

	ck_assert_msg(pa_net_parse_ip(s, &a, why, sizeof(why)) == 0,
			"%s: %s", s, why);
	return a;
}

START_TEST(test_interface_prefixes_keep_host_bits_and_need_a_length)
{
	unsigned int f = PA_NET_PREFIX_HOST_OK | PA_NET_PREFIX_NEED_LEN;
	struct pa_ip_prefix p;
	char buf[PA_NET_PREFIX_STRLEN];

	ck_assert_int_eq(pa_net_parse_prefix_flags("10.0.0.5/24", &p, f, why,
			sizeof(why)), 0);
	ck_assert_str_eq(pa_net_format_prefix(&p, buf, sizeof(buf)),
			"10.0.0.5/24");
	ck_assert(pa_ip_prefix_host_bits(&p));
	pa_ip_prefix_mask(&p);
	ck_assert_str_eq(pa_net_format_prefix(&p, buf, sizeof(buf)),
			"10.0.0.0/24");
	ck_assert(!pa_ip_prefix_host_bits(&p));
	ck_assert_int_eq(pa_net_parse_prefix_flags("10.0.0.5", &p, f, why,
			sizeof(why)), -EINVAL);
	ck_assert_str_eq(why, "invalid prefix '10.0.0.5': missing /LENGTH");
	ck_assert_int_eq(pa_net_parse_prefix_flags("any", &p, f, why,
			sizeof(why)), -EINVAL);
	ck_assert_str_eq(why,
			"invalid prefix 'any': an address is required here");
	ck_assert_int_eq(pa_net_parse_prefix_flags("2001:db8::1/129", &p, f,
			why, sizeof(why)), -EINVAL);
	ck_assert_str_eq(why, "invalid prefix '2001:db8::1/129': length 129 exceeds 128");
}
END_TEST

START_TEST(test_masking_a_v6_prefix_clears_the_bits_past_its_length)
{
	struct pa_ip_prefix p = { .addr = ip("2001:db8:ffff::1"), .len = 36 };
	char buf[PA_NET_PREFIX_STRLEN];

	pa_ip_prefix_mask(&p);
	ck_assert_str_eq(pa_net_format_prefix(&p, buf, sizeof(buf)),
			"2001:db8:f000::/36");
}
END_TEST

START_TEST(test_equal_needs_same_family_and_bytes)
{
	struct pa_ip_addr a = ip("192.0.2.1"), b = ip("192.0.2.1");
	struct pa_ip_addr c = ip("::ffff:192.0.2.1"), z1 = { 0 }, z2 = { 0 };

	ck_assert(pa_ip_equal(&a, &b));
	ck_assert(!pa_ip_equal(&a, &c));
	ck_assert(pa_ip_equal(&z1, &z2));
	b = ip("192.0.2.2");
	ck_assert(!pa_ip_equal(&a, &b));
}
END_TEST

START_TEST(test_unicast_problem_names_what_reaches_no_host)
{
	struct pa_ip_addr a;

	a = ip("0.0.0.0");
	ck_assert_str_eq(pa_ip_unicast_problem(&a), "the unspecified address");
	a = ip("239.1.1.1");
	ck_assert_str_eq(pa_ip_unicast_problem(&a), "a multicast address");
	a = ip("255.255.255.255");
	ck_assert_str_eq(pa_ip_unicast_problem(&a), "the broadcast address");
	a = ip("127.0.0.2");
	ck_assert_str_eq(pa_ip_unicast_problem(&a), "a loopback address");
	a = ip("::");
	ck_assert_str_eq(pa_ip_unicast_problem(&a), "the unspecified address");
	a = ip("ff02::1");
	ck_assert_str_eq(pa_ip_unicast_problem(&a), "a multicast address");
	a = ip("::1");
	ck_assert_str_eq(pa_ip_unicast_problem(&a), "a loopback address");
	a = ip("10.0.0.1");
	ck_assert_ptr_null(pa_ip_unicast_problem(&a));
	a = ip("2001:db8::1");
	ck_assert_ptr_null(pa_ip_unicast_problem(&a));
}
END_TEST

START_TEST(test_port_ranges_format_back_to_their_shortest_text)
{
	const char *in[] = { "any", "0-65535", "80", "80-80", "1024-65535" };
	const char *out[] = { "any", "any", "80", "80", "1024-65535" };
	struct pa_port_range r;
	char buf[16];
	size_t i;

	for (i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
		ck_assert_int_eq(pa_net_parse_port_range(in[i], &r, why,
				sizeof(why)), 0);
		ck_assert_str_eq(pa_net_format_port_range(&r, buf,
				sizeof(buf)), out[i]);
	}
	ck_assert_int_eq(pa_net_parse_port_range("9-8", &r, why, sizeof(why)),
			-EINVAL);
	ck_assert_str_eq(why, "invalid port range '9-8': 9 > 8");
	ck_assert_uint_eq(r.lo, 0);
	ck_assert_uint_eq(r.hi, 65535);
}
END_TEST

START_TEST(test_protocols_by_name_and_number)
{
	int p;

	ck_assert_int_eq(pa_net_parse_proto("any", &p, why, sizeof(why)), 0);
	ck_assert_int_eq(p, PA_PROTO_ANY);
	ck_assert_int_eq(pa_net_parse_proto("icmpv6", &p, why, sizeof(why)), 0);
	ck_assert_int_eq(p, IPPROTO_ICMPV6);
	ck_assert_int_eq(pa_net_parse_proto("47", &p, why, sizeof(why)), 0);
	ck_assert_int_eq(p, 47);
	ck_assert_int_eq(pa_net_parse_proto("256", &p, why, sizeof(why)),
			-EINVAL);
	ck_assert_int_eq(pa_net_parse_proto("TCP", &p, why, sizeof(why)),
			-EINVAL);
	ck_assert_str_eq(pa_net_proto_name(IPPROTO_TCP), "tcp");
	ck_assert_ptr_null(pa_net_proto_name(47));
	ck_assert_str_eq(pa_net_family_name(AF_INET), "IPv4");
	ck_assert_str_eq(pa_net_family_name(AF_INET6), "IPv6");
}
END_TEST

START_TEST(test_reasons_are_optional)
{
	struct pa_ip_addr a;
	uint8_t mac[6];
	char small[8];

	ck_assert_int_eq(pa_net_parse_ip("x", &a, NULL, 0), -EINVAL);
	ck_assert_int_eq(pa_net_parse_mac("x", mac, NULL, 0), -EINVAL);
	ck_assert_int_eq(pa_net_parse_ip("x", &a, small, sizeof(small)),
			-EINVAL);
	ck_assert_str_eq(small, "invalid");
}
END_TEST

START_TEST(test_numbers_are_digits_only)
{
	const char *end;
	unsigned long v;

	ck_assert_int_eq(pa_net_parse_number("42x", &end, 100, &v), 0);
	ck_assert_uint_eq(v, 42);
	ck_assert_str_eq(end, "x");
	ck_assert_int_eq(pa_net_parse_number("+1", &end, 100, &v), -EINVAL);
	ck_assert_int_eq(pa_net_parse_number(" 1", &end, 100, &v), -EINVAL);
	ck_assert_int_eq(pa_net_parse_number("101", &end, 100, &v), -ERANGE);
	ck_assert_int_eq(pa_net_hex_digit('F'), 15);
	ck_assert_int_eq(pa_net_hex_digit('g'), -1);
}
END_TEST

static struct pa_ip_prefix
pfx(const char *s)
{
	struct pa_ip_prefix p;

	ck_assert_msg(pa_net_parse_prefix(s, &p, why, sizeof(why)) == 0,
		"%s: %s", s, why);
	return p;
}

START_TEST(test_prefixes_overlap_when_one_holds_the_other)
{
	struct pa_ip_prefix any = pfx("any"), a = pfx("10.1.0.0/16"),
		b = pfx("10.1.128.0/17"), c = pfx("10.2.0.0/16"),
		d = pfx("10.1.0.0/23"), e = pfx("10.1.2.0/23"),
		v6 = pfx("2001:db8::/32"), v6b = pfx("2001:db8:0:1::/64"),
		v6c = pfx("2001:db9::/32");

	ck_assert(pa_ip_prefix_overlap(&a, &b));
	ck_assert(pa_ip_prefix_overlap(&b, &a));
	ck_assert(!pa_ip_prefix_overlap(&a, &c));
	/* a length that ends inside a byte: /23 against its neighbour */
	ck_assert(!pa_ip_prefix_overlap(&d, &e));
	ck_assert(pa_ip_prefix_overlap(&a, &e));
	ck_assert(pa_ip_prefix_overlap(&any, &c));
	ck_assert(pa_ip_prefix_overlap(&v6, &any));
	ck_assert(pa_ip_prefix_overlap(&v6, &v6b));
	ck_assert(!pa_ip_prefix_overlap(&v6b, &v6c));
	ck_assert(!pa_ip_prefix_overlap(&a, &v6));
}
END_TEST

START_TEST(test_a_prefix_contains_the_addresses_of_its_first_bits)
{
	struct pa_ip_prefix any = pfx("any"), p23 = pfx("10.1.0.0/23"),
		p0 = pfx("0.0.0.0/0"), v6 = pfx("2001:db8::/33"), iface;
	struct pa_ip_addr in = ip("10.1.1.255"), out = ip("10.1.2.0"),
		v6in = ip("2001:db8:7fff::1"), v6out = ip("2001:db8:8000::1"),
		mapped = ip("::ffff:10.1.0.1");

	/* a length that ends inside a byte: /23 and /33 */
	ck_assert(pa_ip_prefix_contains(&p23, &in));
	ck_assert(!pa_ip_prefix_contains(&p23, &out));
	ck_assert(pa_ip_prefix_contains(&v6, &v6in));
	ck_assert(!pa_ip_prefix_contains(&v6, &v6out));
	/* families never mix; "any" holds every address, /0 its family's */
	ck_assert(!pa_ip_prefix_contains(&p23, &mapped));
	ck_assert(!pa_ip_prefix_contains(&v6, &in));
	ck_assert(pa_ip_prefix_contains(&p0, &out));
	ck_assert(!pa_ip_prefix_contains(&p0, &v6in));
	ck_assert(pa_ip_prefix_contains(&any, &in));
	ck_assert(pa_ip_prefix_contains(&any, &v6in));
	/* an interface address: its host bits do not count */
	ck_assert_int_eq(pa_net_parse_prefix_flags("10.1.0.5/23", &iface,
		PA_NET_PREFIX_HOST_OK, why, sizeof(why)), 0);
	ck_assert(pa_ip_prefix_contains(&iface, &in));
	ck_assert(!pa_ip_prefix_contains(&iface, &out));
}
END_TEST

START_TEST(test_checksum_sums_big_endian_words_and_pads_an_odd_byte)
{
	/* RFC 1071 section 3's example: the sum is ddf2 */
	static const uint8_t rfc[8] = {
		0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7
	};
	uint8_t msg[9] = { 0x45, 0x00, 0x00, 0x00, 0x12, 0x34, 0xab };
	uint16_t c;

	ck_assert_uint_eq(pa_ip_csum_add(0, rfc, sizeof(rfc)), 0xddf2);
	ck_assert_uint_eq(pa_ip_csum_fold(0xddf2), 0x220d);
	/* in two calls, and from a pseudo-header's sum over 16 bits */
	ck_assert_uint_eq(pa_ip_csum_add(pa_ip_csum_add(0, rfc, 4), rfc + 4, 4),
		0xddf2);
	ck_assert_uint_eq(pa_ip_csum_add(0x2fffe, NULL, 0), 0x0001);
	/* an odd last byte is the high byte of a word; the carry comes
	 * back in: 4500 + 1234 + ab00 = 1_0234 */
	ck_assert_uint_eq(pa_ip_csum_add(0, msg, 7), 0x0235);
	/* the field written back makes the whole sum 0xffff */
	c = pa_ip_csum_fold(pa_ip_csum_add(0, msg, 7));
	msg[2] = (uint8_t)(c >> 8);
	msg[3] = (uint8_t)c;
	ck_assert_uint_eq(pa_ip_csum_add(0, msg, 7), 0xffff);
}
END_TEST

static Suite *
net_suite(void)
{
	Suite *s = suite_create("net");
	TCase *tc = tcase_create("net");

	tcase_add_test(tc, test_interface_prefixes_keep_host_bits_and_need_a_length);
	tcase_add_test(tc, test_masking_a_v6_prefix_clears_the_bits_past_its_length);
	tcase_add_test(tc, test_equal_needs_same_family_and_bytes);
	tcase_add_test(tc, test_unicast_problem_names_what_reaches_no_host);
	tcase_add_test(tc, test_port_ranges_format_back_to_their_shortest_text);
	tcase_add_test(tc, test_protocols_by_name_and_number);
	tcase_add_test(tc, test_reasons_are_optional);
	tcase_add_test(tc, test_numbers_are_digits_only);
	tcase_add_test(tc, test_prefixes_overlap_when_one_holds_the_other);
	tcase_add_test(tc, test_a_prefix_contains_the_addresses_of_its_first_bits);
	tcase_add_test(tc, test_checksum_sums_big_endian_words_and_pads_an_odd_byte);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	static Suite *(*const suites[])(void) = { net_suite, NULL };
	const struct pa_test_main t = {
		.name = "test_net",
		.suites = suites,
	};

	return pa_test_main(&t);
}
