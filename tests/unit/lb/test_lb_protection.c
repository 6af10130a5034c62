/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of lib/lb, protection: SYN-only flows and their timeout,
 * deferred SYNs, per-source new flows (the token buckets, on a fake
 * clock), max_flows.
 *
 * Part of test_lb (test_lb.c): the fixture is lb_fixture.h's.
 */

#include "lb_fixture.h"

/* ------------------------------------------------------------------ */
/* Protection: SYN-only flows, per-source new flows, max_flows          */
/* ------------------------------------------------------------------ */

#define SYN_TMO		5

/* One TCP packet (flags) of client @p src:@p sport to web4, through
 * lcore @p lc at @p now; @return its verdict (the mbuf freed). */
static uint8_t
web4_send(const char *src, uint16_t sport, uint8_t flags, unsigned int lc,
		uint64_t now)
{
	struct pa_test_frame f;
	struct rte_mbuf *m;
	uint8_t v = 0xee;

	frame_l4(&f, src, "10.0.0.10", IPPROTO_TCP, sport, 80, flags, 0);
	m = mbuf_of(&f);
	pa_lb_process(lb, lc, &m, 1, now, &v);
	rte_pktmbuf_free(m);
	return v;
}

static json_int_t
svc_flows(const char *service)
{
	json_t *arr = pa_lb_services_json(lb), *s;
	json_int_t n = -1;
	size_t i;

	ck_assert_ptr_nonnull(arr);
	json_array_foreach(arr, i, s)
		if (strcmp(json_string_value(json_object_get(s, "name")),
				service) == 0)
			n = json_integer_value(json_object_get(s, "flows"));
	json_decref(arr);
	return n;
}

START_TEST(test_syn_only_flow_expires_after_syn_timeout_an_acked_one_after_tcp_timeout)
{
	doc_extra = ", 'protect': {'syn_timeout_s': 5}";
	setup_lb(SVC_WEB4);
	doc_extra = "";
	/* a: SYN only; b: SYN then ACK; c: SYN, SYN again 3 s later */
	ck_assert_uint_eq(web4_send("198.51.100.1", 1001, TCP_SYN, 0, T0),
		PA_LB_V_FORWARD);
	ck_assert_uint_eq(web4_send("198.51.100.2", 1002, TCP_SYN, 0, T0),
		PA_LB_V_FORWARD);
	ck_assert_uint_eq(web4_send("198.51.100.3", 1003, TCP_SYN, 0, T0),
		PA_LB_V_FORWARD);
	ck_assert_uint_eq(web4_send("198.51.100.2", 1002, TCP_ACK, 0, T0 + 1),
		PA_LB_V_FORWARD);
	ck_assert_uint_eq(web4_send("198.51.100.3", 1003, TCP_SYN, 0,
		T0 + 3 * hz), PA_LB_V_FORWARD);
	ck_assert_int_eq(lb_stat("flows"), 3);
	ck_assert_int_eq(lb_stat("flows_peak"), 3);
	sweep(T0 + SYN_TMO * hz);
	ck_assert_int_eq(lb_stat("flows"), 3);
	sweep(T0 + SYN_TMO * hz + 1);
	ck_assert_int_eq(lb_stat("flows"), 2);	/* a is gone */
	/* the retransmitted SYN refreshed c, still SYN-only */
	sweep(T0 + (3 + SYN_TMO) * hz + 1);
	ck_assert_int_eq(lb_stat("flows"), 1);
	ck_assert_int_eq(lb_stat("flows_expired"), 2);
	sweep(T0 + 1 + TCP_TMO * hz);
	ck_assert_int_eq(lb_stat("flows"), 1);
	sweep(T0 + 2 + TCP_TMO * hz);
	ck_assert_int_eq(lb_stat("flows"), 0);
	ck_assert_int_eq(lb_stat("flows_peak"), 3);
}
END_TEST

START_TEST(test_syn_after_fin_is_syn_only_again_and_a_syn_on_an_open_flow_is_not)
{
	doc_extra = ", 'protect': {'syn_timeout_s': 5}";
	setup_lb(SVC_WEB4);
	doc_extra = "";
	/* a: established, then FIN, then reopened by a SYN */
	web4_send("198.51.100.1", 1001, TCP_SYN, 0, T0);
	web4_send("198.51.100.1", 1001, TCP_ACK, 0, T0);
	web4_send("198.51.100.1", 1001, TCP_FIN | TCP_ACK, 0, T0);
	web4_send("198.51.100.1", 1001, TCP_SYN, 0, T0 + 1);
	/* b: established, then a stray SYN */
	web4_send("198.51.100.2", 1002, TCP_SYN, 0, T0);
	web4_send("198.51.100.2", 1002, TCP_ACK, 0, T0);
	web4_send("198.51.100.2", 1002, TCP_SYN, 0, T0 + 1);
	sweep(T0 + 2 + SYN_TMO * hz);
	ck_assert_int_eq(lb_stat("flows"), 1);	/* b stays */
}
END_TEST

START_TEST(test_without_protect_a_syn_only_flow_lives_tcp_timeout)
{
	setup_lb(SVC_WEB4);
	web4_send("198.51.100.1", 1001, TCP_SYN, 0, T0);
	sweep(T0 + (SYN_TMO + 1) * hz);
	sweep(T0 + TCP_TMO * hz);
	ck_assert_int_eq(lb_stat("flows"), 1);
	sweep(T0 + TCP_TMO * hz + 1);
	ck_assert_int_eq(lb_stat("flows"), 0);
}
END_TEST

START_TEST(test_syn_defer_sends_syns_to_the_maglev_choice_and_the_ack_makes_the_entry_not_for_rr_or_nat)
{
	char src[32];
	struct pa_test_frame f;
	struct rte_mbuf *m;
	uint32_t syn_be[100];
	unsigned int i;

	doc_extra = ", 'protect': {'syn_timeout_s': 5, 'syn_defer': true}";
	setup_lb(SVC_WEB4 "," SVC_NAT4 ","
		"{'name': 'rr4', 'vip': '10.0.0.11', 'port': 80, 'proto': 'tcp',"
		" 'forward': 'ipip', 'scheduler': 'rr', 'backends':"
		" [{'addr': '10.1.0.1'}, {'addr': '10.1.0.2'}]}");
	doc_extra = "";
	for (i = 0; i < 100; i++) {
		snprintf(src, sizeof(src), "198.51.100.%u", i + 1);
		frame_l4(&f, src, "10.0.0.10", IPPROTO_TCP, 2000, 80,
			TCP_SYN, 0);
		syn_be[i] = send_ipip4(&f, T0);
	}
	ck_assert_int_eq(lb_stat("flows"), 0);
	ck_assert_int_eq(lb_stat("syn_stateless"), 100);
	for (i = 0; i < 50; i++) {
		snprintf(src, sizeof(src), "198.51.100.%u", i + 1);
		frame_l4(&f, src, "10.0.0.10", IPPROTO_TCP, 2000, 80,
			TCP_ACK, 10);
		ck_assert_uint_eq(send_ipip4(&f, T0 + hz), syn_be[i]);
	}
	ck_assert_int_eq(lb_stat("flows"), 50);
	/* rr: the choice is not a function of the flow: the SYN takes an
	 * entry (that expires after syn_timeout_s) */
	frame_l4(&f, "198.51.100.1", "10.0.0.11", IPPROTO_TCP, 2000, 80,
		TCP_SYN, 0);
	send_ipip4(&f, T0 + hz);
	ck_assert_int_eq(lb_stat("flows"), 51);
	ck_assert_int_eq(lb_stat("syn_stateless"), 100);
	/* nat: the SYN-ACK needs the reply entry the SYN makes */
	frame_l4(&f, "198.51.100.1", "10.0.0.20", IPPROTO_TCP, 2000, 80,
		TCP_SYN, 0);
	m = mbuf_of(&f);
	ck_assert_uint_eq(process1(m, T0 + hz), PA_LB_V_FORWARD);
	rte_pktmbuf_free(m);
	ck_assert_int_eq(lb_stat("flows"), 52);
	ck_assert_int_eq(lb_stat("syn_stateless"), 100);
	sweep(T0 + (1 + SYN_TMO) * hz + 1);
	ck_assert_int_eq(lb_stat("flows"), 50);
}
END_TEST

START_TEST(test_syn_defer_a_backend_change_before_the_ack_moves_some_handshakes)
{
	char src[32];
	struct pa_test_frame f;
	uint32_t syn_be[200];
	unsigned int i, moved = 0;

	/* the documented price of syn_defer: a SYN holds no entry, so a
	 * backend added before its ACK moves the handshakes whose Maglev
	 * choice changed (about 1/4 here); with an entry none would move */
	doc_extra = ", 'protect': {'syn_defer': true}";
	setup_lb(SVC_WEB4);
	doc_extra = "";
	for (i = 0; i < 200; i++) {
		snprintf(src, sizeof(src), "198.51.%u.%u", 100 + i / 100,
			1 + i % 100);
		frame_l4(&f, src, "10.0.0.10", IPPROTO_TCP, 2000, 80,
			TCP_SYN, 0);
		syn_be[i] = send_ipip4(&f, T0);
	}
	ck_assert_int_eq(add_backend("web4", "{'addr': '10.1.0.4'}"), 0);
	for (i = 0; i < 200; i++) {
		snprintf(src, sizeof(src), "198.51.%u.%u", 100 + i / 100,
			1 + i % 100);
		frame_l4(&f, src, "10.0.0.10", IPPROTO_TCP, 2000, 80,
			TCP_ACK, 0);
		moved += send_ipip4(&f, T0 + 1) != syn_be[i];
	}
	ck_assert_uint_gt(moved, 20);
	ck_assert_uint_lt(moved, 90);
}
END_TEST

START_TEST(test_src_new_flows_limits_new_flows_per_source_prefix)
{
	unsigned int i, ok = 0, lim = 0;
	uint8_t v;

	doc_extra = ", 'protect': {'src_new_flows': {'rate': 10, 'burst': 5,"
		" 'prefix4': 24}}";
	setup_lb(SVC_WEB4);
	doc_extra = "";
	/* 20 new flows from one /24 at once: the burst passes */
	for (i = 0; i < 20; i++) {
		v = web4_send(i % 2 ? "198.51.100.7" : "198.51.100.8",
			(uint16_t)(3000 + i), TCP_SYN, 0, T0);
		ok += v == PA_LB_V_FORWARD;
		lim += v == PA_LB_V_SRC_LIMIT;
	}
	ck_assert_uint_eq(ok, 5);
	ck_assert_uint_eq(lim, 15);
	ck_assert_int_eq(lb_stat("src_limited"), 15);
	ck_assert_int_eq(lb_stat("flows"), 5);
	/* the flows it has are not limited */
	ck_assert_uint_eq(web4_send("198.51.100.8", 3000, TCP_ACK, 0, T0),
		PA_LB_V_FORWARD);
	/* another prefix is not */
	ck_assert_uint_eq(web4_send("198.51.101.7", 3000, TCP_SYN, 0, T0),
		PA_LB_V_FORWARD);
	/* 0.1 s later, one token more */
	ck_assert_uint_eq(web4_send("198.51.100.9", 4000, TCP_SYN, 0,
		T0 + hz / 10), PA_LB_V_FORWARD);
	ck_assert_uint_eq(web4_send("198.51.100.9", 4001, TCP_SYN, 0,
		T0 + hz / 10), PA_LB_V_SRC_LIMIT);
	/* 10 s later the bucket holds its burst, no more */
	for (i = 0, ok = 0; i < 10; i++)
		ok += web4_send("198.51.100.9", (uint16_t)(5000 + i), TCP_SYN,
			0, T0 + 10 * hz) == PA_LB_V_FORWARD;
	ck_assert_uint_eq(ok, 5);
}
END_TEST

START_TEST(test_src_new_flows_share_the_rate_among_lb_lcores)
{
	unsigned int i, ok0 = 0, ok1 = 0;

	doc_extra = ", 'protect': {'src_new_flows': {'rate': 100, 'burst': 10}}";
	setup_lb_flows(SVC_WEB4, 4096, 2);
	doc_extra = "";
	for (i = 0; i < 20; i++) {
		ok0 += web4_send("198.51.100.7", (uint16_t)(3000 + i), TCP_SYN,
			0, T0) == PA_LB_V_FORWARD;
		ok1 += web4_send("198.51.100.7", (uint16_t)(4000 + i), TCP_SYN,
			1, T0) == PA_LB_V_FORWARD;
	}
	/* burst 10 over two lcores: 5 each */
	ck_assert_uint_eq(ok0, 5);
	ck_assert_uint_eq(ok1, 5);
}
END_TEST

/* The limiter itself, on a fake clock. */
START_TEST(test_src_bucket_math_on_a_fake_clock)
{
	struct pa_config_protect p;
	struct pa_protect_src *s;
	uint8_t a[4] = { 198, 51, 100, 7 }, b6[16] = { 0x20, 0x01, 0x0d, 0xb8 };
	const uint64_t f = 1000000;	/* a 1 MHz "TSC" */
	unsigned int i, ok = 0;

	memset(&p, 0, sizeof(p));
	p.src_new_flows.enabled = true;
	p.src_new_flows.rate = 1000;
	p.src_new_flows.burst = 10;
	p.src_new_flows.prefix4 = 32;
	p.src_new_flows.prefix6 = 64;
	s = pa_protect_src_create(&p, 1, 1024, f, 0);
	ck_assert_ptr_nonnull(s);
	ck_assert_uint_eq(s->interval, 1000);	/* 1 ms a token */
	ck_assert_uint_eq(s->tolerance, 9000);
	for (i = 0; i < 20; i++)
		ok += pa_protect_src_take(s, 4, a, 5);
	ck_assert_uint_eq(ok, 10);
	/* one token a ms */
	ck_assert(!pa_protect_src_take(s, 4, a, 5 + 999));
	ck_assert(pa_protect_src_take(s, 4, a, 5 + 1000));
	ck_assert(!pa_protect_src_take(s, 4, a, 5 + 1000));
	/* an hour idle: a full burst, not more */
	for (i = 0, ok = 0; i < 20; i++)
		ok += pa_protect_src_take(s, 4, a, 3600 * f);
	ck_assert_uint_eq(ok, 10);
	/* IPv6 by /64: another interface id is the same prefix */
	for (i = 0, ok = 0; i < 20; i++) {
		b6[15] = (uint8_t)i;
		ok += pa_protect_src_take(s, 6, b6, 5);
	}
	ck_assert_uint_eq(ok, 10);
	pa_protect_src_free(s);
	/* shared by 4 lcores: rate 250 and burst 2.5 each */
	s = pa_protect_src_create(&p, 4, 1024, f, 0);
	ck_assert_ptr_nonnull(s);
	ck_assert_uint_eq(s->interval, 4000);
	ck_assert_uint_eq(s->tolerance, 6000);
	for (i = 0, ok = 0; i < 20; i++)
		ok += pa_protect_src_take(s, 4, a, 5);
	ck_assert_uint_eq(ok, 2);
	pa_protect_src_free(s);
	/* a burst smaller than the lcores: one each */
	p.src_new_flows.burst = 1;
	s = pa_protect_src_create(&p, 4, 1024, f, 0);
	ck_assert_uint_eq(s->tolerance, 0);
	ck_assert(pa_protect_src_take(s, 4, a, 5));
	ck_assert(!pa_protect_src_take(s, 4, a, 5));
	pa_protect_src_free(s);
	/* refused: no rate, cols not a power of two */
	p.src_new_flows.rate = 0;
	ck_assert_ptr_null(pa_protect_src_create(&p, 1, 1024, f, 0));
	p.src_new_flows.rate = 10;
	ck_assert_ptr_null(pa_protect_src_create(&p, 1, 1000, f, 0));
}
END_TEST

START_TEST(test_src_buckets_take_fixed_memory_and_collisions_share_tokens)
{
	struct pa_config_protect p;
	struct pa_protect_src *s;
	uint8_t a[4] = { 203, 0, 113, 1 }, x[4];
	const uint64_t f = 1000000;
	unsigned int i, ok = 0;
	uint32_t r;

	memset(&p, 0, sizeof(p));
	p.src_new_flows.enabled = true;
	p.src_new_flows.rate = 1;
	p.src_new_flows.burst = 1;
	p.src_new_flows.prefix4 = 32;
	p.src_new_flows.prefix6 = 64;
	/* bounded memory, whatever the sources */
	ck_assert_uint_eq(pa_protect_src_bytes(0),
		sizeof(struct pa_protect_src) + 2 * 32768 * 8);
	ck_assert_uint_eq(pa_protect_src_bytes(1024),
		sizeof(struct pa_protect_src) + 2 * 1024 * 8);
	/* one bucket a row: every source shares it */
	s = pa_protect_src_create(&p, 1, 1, f, 0);
	ck_assert_ptr_nonnull(s);
	ck_assert(pa_protect_src_take(s, 4, a, 0));
	x[0] = 10; x[1] = 9; x[2] = 8; x[3] = 7;
	ck_assert(!pa_protect_src_take(s, 4, x, 0));
	pa_protect_src_free(s);
	/* 4096 a row: a source that emptied its buckets leaves the others
	 * alone: of 1000 other sources, one is refused only when both of
	 * its buckets were emptied before (by the heavy one or by earlier
	 * ones: about 20 expected), against about 120 with a single row */
	s = pa_protect_src_create(&p, 1, 4096, f, 0);
	ck_assert_ptr_nonnull(s);
	for (i = 0; i < 100; i++)
		pa_protect_src_take(s, 4, a, 0);
	for (i = 0; i < 1000; i++) {
		r = rng();
		memcpy(x, &r, 4);
		if (memcmp(x, a, 4) == 0)
			continue;
		ok += pa_protect_src_take(s, 4, x, 0);
	}
	ck_assert_uint_ge(ok, 950);
	pa_protect_src_free(s);
}
END_TEST

START_TEST(test_max_flows_drops_new_flows_over_the_limit_counting_expiry_and_backend_removal)
{
	struct pa_ip_addr a;
	char err[PA_CONFIG_ERR_MAX];
	unsigned int i, ok = 0;
	uint8_t v;

	setup_lb("{'name': 'web4', 'vip': '10.0.0.10', 'port': 80, 'proto': 'tcp',"
		" 'forward': 'ipip', 'max_flows': 3, 'backends':"
		" [{'addr': '10.1.0.1'}, {'addr': '10.1.0.2'}]}");
	for (i = 0; i < 5; i++) {
		v = web4_send("198.51.100.7", (uint16_t)(1000 + i), TCP_SYN, 0,
			T0);
		if (i < 3)
			ck_assert_uint_eq(v, PA_LB_V_FORWARD);
		else
			ck_assert_uint_eq(v, PA_LB_V_MAX_FLOWS);
	}
	ck_assert_int_eq(lb_stat("max_flows_dropped"), 2);
	ck_assert_int_eq(svc_flows("web4"), 3);
	/* the flows it has go on */
	ck_assert_uint_eq(web4_send("198.51.100.7", 1000, TCP_ACK, 0, T0 + 1),
		PA_LB_V_FORWARD);
	/* a backend removed: its flows move, the count stays 3 */
	a = addr_of("10.1.0.1");
	ck_assert_int_eq(pa_lb_backend_delete(lb, "web4", &a, err,
		sizeof(err)), 0);
	for (i = 0; i < 3; i++)
		ck_assert_uint_eq(web4_send("198.51.100.7",
			(uint16_t)(1000 + i), TCP_ACK, 0, T0 + 2),
			PA_LB_V_FORWARD);
	sweep(T0 + 2);
	ck_assert_uint_eq(web4_send("198.51.100.7", 1009, TCP_SYN, 0, T0 + 2),
		PA_LB_V_MAX_FLOWS);
	ck_assert_int_eq(svc_flows("web4"), 3);
	/* expired: room again */
	sweep(T0 + 3 + TCP_TMO * hz);
	ck_assert_int_eq(lb_stat("flows"), 0);
	for (i = 0; i < 5; i++)
		ok += web4_send("198.51.100.7", (uint16_t)(2000 + i), TCP_SYN,
			0, T0 + 4 + TCP_TMO * hz) == PA_LB_V_FORWARD;
	ck_assert_uint_eq(ok, 3);
}
END_TEST

START_TEST(test_max_flows_is_shared_among_lb_lcores_and_counts_deferred_syns)
{
	unsigned int i, ok0 = 0, ok1 = 0;

	doc_extra = ", 'protect': {'syn_defer': true}";
	setup_lb_flows("{'name': 'web4', 'vip': '10.0.0.10', 'port': 80,"
		" 'proto': 'tcp', 'forward': 'ipip', 'max_flows': 3, 'backends':"
		" [{'addr': '10.1.0.1'}]}", 4096, 2);
	doc_extra = "";
	for (i = 0; i < 4; i++) {
		ok0 += web4_send("198.51.100.7", (uint16_t)(1000 + i), TCP_ACK,
			0, T0) == PA_LB_V_FORWARD;
		ok1 += web4_send("198.51.100.7", (uint16_t)(2000 + i), TCP_ACK,
			1, T0) == PA_LB_V_FORWARD;
	}
	/* 3 over two lcores: 2 + 1 */
	ck_assert_uint_eq(ok0, 2);
	ck_assert_uint_eq(ok1, 1);
	ck_assert_int_eq(svc_flows("web4"), 3);
	/* a deferred SYN of a full service is dropped too */
	ck_assert_uint_eq(web4_send("198.51.100.8", 1, TCP_SYN, 0, T0),
		PA_LB_V_MAX_FLOWS);
	ck_assert_int_eq(lb_stat("syn_stateless"), 0);
}
END_TEST

START_TEST(test_max_flows_zero_or_over_the_flow_table_is_refused_with_its_path)
{
	char err[PA_CONFIG_ERR_MAX];
	struct pa_config *c;
	struct pa_config_service svc;
	char *t;
	json_t *o, *back;

	t = pa_test_dq("{'lb': {'local_addr': '192.0.2.1', 'flow_table': {'size': 4096},"
		" 'services': [{'name': 'w', 'vip': '10.0.0.10', 'port': 80,"
		" 'proto': 'tcp', 'max_flows': 5000, 'backends': []}]}}");
	c = pa_config_load_string(t, NULL, err, sizeof(err));
	free(t);
	ck_assert_ptr_null(c);
	ck_assert_msg(strstr(err, "$.lb.services[0].max_flows") != NULL, "%s",
		err);
	t = pa_test_dq("{'lb': {'local_addr': '192.0.2.1', 'services': [{'name': 'w',"
		" 'vip': '10.0.0.10', 'port': 80, 'proto': 'tcp', 'max_flows': 0,"
		" 'backends': []}]}}");
	c = pa_config_load_string(t, NULL, err, sizeof(err));
	free(t);
	ck_assert_ptr_null(c);
	ck_assert_msg(strstr(err, "$.lb.services[0].max_flows") != NULL, "%s",
		err);
	/* within: parsed, kept by the LB and written back */
	setup_lb("{'name': 'web4', 'vip': '10.0.0.10', 'port': 80, 'proto': 'tcp',"
		" 'forward': 'ipip', 'max_flows': 1024, 'backends': []}");
	back = pa_lb_services_json(lb);
	ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(
		back, 0), "max_flows")), 1024);
	json_decref(back);
	/* the core refuses more than its own flow table (a config whose
	 * flow_table.size is larger: as an RPC parsed against it) */
	lb->ft.size = 512;
	t = pa_test_dq("{'name': 'big', 'vip': '10.0.0.12', 'port': 80, 'proto': 'tcp',"
		" 'forward': 'ipip', 'max_flows': 1000, 'backends': []}");
	o = json_loads(t, 0, NULL);
	free(t);
	ck_assert_msg(pa_lb_config_parse_service(o, &cfg->lb, "params", &svc,
		err, sizeof(err)) == 0, "%s", err);
	json_decref(o);
	ck_assert_int_eq(pa_lb_service_add(lb, &svc, err, sizeof(err)),
		-EINVAL);
	ck_assert_msg(strstr(err, "max_flows") != NULL, "%s", err);
	pa_lb_config_service_clear(&svc);
}
END_TEST

TCase *
lb_tcase_protection(void)
{
	TCase *tc = tcase_create("protect");

	tcase_set_timeout(tc, 120);
	tcase_add_checked_fixture(tc, NULL, teardown_lb);
	tcase_add_test(tc, test_syn_only_flow_expires_after_syn_timeout_an_acked_one_after_tcp_timeout);
	tcase_add_test(tc, test_syn_after_fin_is_syn_only_again_and_a_syn_on_an_open_flow_is_not);
	tcase_add_test(tc, test_without_protect_a_syn_only_flow_lives_tcp_timeout);
	tcase_add_test(tc, test_syn_defer_sends_syns_to_the_maglev_choice_and_the_ack_makes_the_entry_not_for_rr_or_nat);
	tcase_add_test(tc, test_syn_defer_a_backend_change_before_the_ack_moves_some_handshakes);
	tcase_add_test(tc, test_src_new_flows_limits_new_flows_per_source_prefix);
	tcase_add_test(tc, test_src_new_flows_share_the_rate_among_lb_lcores);
	tcase_add_test(tc, test_src_bucket_math_on_a_fake_clock);
	tcase_add_test(tc, test_src_buckets_take_fixed_memory_and_collisions_share_tokens);
	tcase_add_test(tc, test_max_flows_drops_new_flows_over_the_limit_counting_expiry_and_backend_removal);
	tcase_add_test(tc, test_max_flows_is_shared_among_lb_lcores_and_counts_deferred_syns);
	tcase_add_test(tc, test_max_flows_zero_or_over_the_flow_table_is_refused_with_its_path);
	return tc;
}
