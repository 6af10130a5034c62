/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of lib/lb, the schedulers other than Maglev
 * (lib/lb/lb_sched.c): rr, wrr, lc.
 *
 * Part of test_lb (test_lb.c): the fixture is lb_fixture.h's.
 */

#include "lb_fixture.h"

/* ------------------------------------------------------------------ */
/* Schedulers                                                          */
/* ------------------------------------------------------------------ */

START_TEST(test_rr_alternates_over_the_up_backends)
{
	uint32_t be[12];
	unsigned int i;

	setup_lb("{'name': 'rr4', 'vip': '10.0.0.10', 'port': 80, 'proto': 'tcp',"
		" 'forward': 'ipip', 'scheduler': 'rr', 'backends':"
		" [{'addr': '10.1.0.1'}, {'addr': '10.1.0.2', 'state': 'down'},"
		" {'addr': '10.1.0.3'}]}");
	/* web4_flow() sends to 10.0.0.10:80, which this rr4 serves */
	for (i = 0; i < RTE_DIM(be); i++) {
		be[i] = web4_flow(i, TCP_SYN, T0);
		ck_assert(be[i] == ip4("10.1.0.1") || be[i] == ip4("10.1.0.3"));
		if (i >= 1)
			ck_assert_msg(be[i] != be[i - 1], "flow %u", i);
	}
	/* an old flow does not advance the cursor */
	ck_assert_uint_eq(web4_flow(0, TCP_ACK, T0 + 1), be[0]);
	ck_assert_uint_ne(web4_flow(100, TCP_SYN, T0 + 1), be[11]);
}
END_TEST

START_TEST(test_wrr_shares_of_new_flows_follow_the_weights)
{
	static const char *const addrs[] = { "10.1.0.1", "10.1.0.2", "10.1.0.3" };
	static const unsigned int w[] = { 1, 2, 3 };
	unsigned int cnt[3] = { 0 }, i, b;
	const unsigned int n = 2 * 1021;

	setup_lb_flows("{'name': 'wrr4', 'vip': '10.0.0.10', 'port': 80,"
		" 'proto': 'tcp', 'forward': 'ipip', 'scheduler': 'wrr',"
		" 'table_size': 1021, 'backends': [{'addr': '10.1.0.1', 'weight': 1},"
		" {'addr': '10.1.0.2', 'weight': 2}, {'addr': '10.1.0.3', 'weight': 3}]}",
		4096, 1);
	for (i = 0; i < n; i++) {
		uint32_t be = web4_flow(i, TCP_SYN, T0);

		for (b = 0; b < 3; b++)
			if (be == ip4(addrs[b]))
				cnt[b]++;
	}
	ck_assert_int_eq(lb_stat("flow_table_full"), 0);
	for (b = 0; b < 3; b++) {
		double exp = (double)n * w[b] / 6.0;

		ck_assert_msg(cnt[b] >= exp * 0.99 - 2 && cnt[b] <= exp * 1.01 + 2,
			"backend %s weight %u: %u flows, %.1f expected",
			addrs[b], w[b], cnt[b], exp);
	}
}
END_TEST

START_TEST(test_lc_picks_the_backend_with_fewest_flows_per_weight)
{
	unsigned int i, a = 0, b = 0;
	uint32_t be;

	setup_lb("{'name': 'lc4', 'vip': '10.0.0.10', 'port': 80, 'proto': 'tcp',"
		" 'forward': 'ipip', 'scheduler': 'lc', 'backends':"
		" [{'addr': '10.1.0.1'}, {'addr': '10.1.0.2'}]}");
	for (i = 0; i < 10; i++) {
		be = web4_flow(i, TCP_SYN, T0);
		a += be == ip4("10.1.0.1");
		b += be == ip4("10.1.0.2");
	}
	ck_assert_uint_eq(a, 5);
	ck_assert_uint_eq(b, 5);
	/* a new backend has the fewest flows: it gets every new one until
	 * it catches up */
	ck_assert_int_eq(add_backend("lc4", "{'addr': '10.1.0.3'}"), 0);
	for (i = 10; i < 15; i++)
		ck_assert_uint_eq(web4_flow(i, TCP_SYN, T0), ip4("10.1.0.3"));

	/* weights: 1 and 3 share 8 flows as 2 and 6 */
	setup_lb("{'name': 'lc4', 'vip': '10.0.0.10', 'port': 80, 'proto': 'tcp',"
		" 'forward': 'ipip', 'scheduler': 'lc', 'backends':"
		" [{'addr': '10.1.0.1', 'weight': 1}, {'addr': '10.1.0.2', 'weight': 3}]}");
	a = b = 0;
	for (i = 0; i < 8; i++) {
		be = web4_flow(i, TCP_SYN, T0);
		a += be == ip4("10.1.0.1");
		b += be == ip4("10.1.0.2");
	}
	ck_assert_uint_eq(a, 2);
	ck_assert_uint_eq(b, 6);
	/* flows that end make room: expire 10.1.0.2's by FIN + aging */
	for (i = 0; i < 8; i++)
		web4_flow(i, TCP_FIN | TCP_ACK, T0 + 1);
	sweep(T0 + 1 + TCP_FIN_TMO * hz + 1);
	ck_assert_int_eq(lb_stat("flows"), 0);
	a = b = 0;
	for (i = 100; i < 108; i++) {
		be = web4_flow(i, TCP_SYN, T0 + 20 * hz);
		a += be == ip4("10.1.0.1");
		b += be == ip4("10.1.0.2");
	}
	ck_assert_uint_eq(a, 2);
	ck_assert_uint_eq(b, 6);
}
END_TEST

TCase *
lb_tcase_sched(void)
{
	TCase *tc = tcase_create("schedulers");

	tcase_set_timeout(tc, 120);
	tcase_add_checked_fixture(tc, NULL, teardown_lb);
	tcase_add_test(tc, test_rr_alternates_over_the_up_backends);
	tcase_add_test(tc, test_wrr_shares_of_new_flows_follow_the_weights);
	tcase_add_test(tc, test_lc_picks_the_backend_with_fewest_flows_per_weight);
	return tc;
}
