/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of lib/lb, the sticky flow table: flows across backend
 * changes, aging and the sweeps, the table's structure against a
 * reference, a full table, fragments, and one table per lb lcore.
 *
 * Part of test_lb (test_lb.c): the fixture is lb_fixture.h's.
 */

#include "lb_fixture.h"

/* ------------------------------------------------------------------ */
/* Flows and backend changes                                           */
/* ------------------------------------------------------------------ */

START_TEST(test_flows_keep_their_backend_when_backends_are_added)
{
	uint32_t be[N_FLOWS];
	unsigned int i, to_new = 0;

	setup_lb(SVC_WEB4);
	for (i = 0; i < N_FLOWS; i++)
		be[i] = web4_flow(i, TCP_SYN, T0);
	ck_assert_int_eq(add_backend("web4", "{'addr': '10.1.0.4'}"), 0);
	ck_assert_int_eq(add_backend("web4", "{'addr': '10.1.0.5'}"), 0);
	ck_assert_int_eq(add_backend("web4", "{'addr': '10.1.0.6'}"), 0);
	for (i = 0; i < N_FLOWS; i++)
		ck_assert_msg(web4_flow(i, TCP_ACK, T0 + 1) == be[i],
			"flow %u moved", i);
	/* new flows do reach the new backends */
	for (i = N_FLOWS; i < 2 * N_FLOWS; i++)
		if (!is_web4_backend(web4_flow(i, TCP_SYN, T0 + 2)))
			to_new++;
	ck_assert_uint_gt(to_new, N_FLOWS / 4);
	ck_assert_int_eq(lb_stat("flows"), 2 * N_FLOWS);
	ck_assert_int_eq(lb_stat("flows_rescheduled"), 0);
}
END_TEST

START_TEST(test_flows_keep_their_backend_when_weights_change)
{
	uint32_t be[N_FLOWS];
	unsigned int i;

	setup_lb(SVC_WEB4);
	for (i = 0; i < N_FLOWS; i++)
		be[i] = web4_flow(i, TCP_SYN, T0);
	ck_assert_int_eq(set_weight("web4", "10.1.0.1", 10), 0);
	ck_assert_int_eq(set_weight("web4", "10.1.0.2", 3), 0);
	ck_assert_int_eq(set_weight("web4", "10.1.0.3", 0), 0);
	for (i = 0; i < N_FLOWS; i++)
		ck_assert_msg(web4_flow(i, TCP_ACK, T0 + 1) == be[i],
			"flow %u moved", i);
	/* weight 0: no new flows */
	for (i = N_FLOWS; i < 2 * N_FLOWS; i++)
		ck_assert(web4_flow(i, TCP_SYN, T0 + 2) != ip4("10.1.0.3"));
}
END_TEST

START_TEST(test_draining_backend_keeps_its_flows_but_gets_no_new_ones)
{
	uint32_t be[N_FLOWS];
	unsigned int i, on2 = 0;
	struct be_count c;

	setup_lb(SVC_WEB4);
	for (i = 0; i < N_FLOWS; i++)
		if ((be[i] = web4_flow(i, TCP_SYN, T0)) == ip4("10.1.0.2"))
			on2++;
	ck_assert_uint_gt(on2, 0);
	ck_assert_int_eq(set_state("web4", "10.1.0.2", PA_LB_DRAIN), 0);
	for (i = 0; i < N_FLOWS; i++)
		ck_assert_msg(web4_flow(i, TCP_ACK, T0 + 1) == be[i],
			"flow %u moved", i);
	for (i = N_FLOWS; i < 2 * N_FLOWS; i++)
		ck_assert(web4_flow(i, TCP_SYN, T0 + 2) != ip4("10.1.0.2"));
	c = be_count("web4", "10.1.0.2");
	ck_assert_str_eq(c.state, "drain");
	ck_assert_int_eq(c.flows, on2);
	ck_assert_int_eq(c.packets, 2 * on2);
	sweep(T0 + 3);
	ck_assert_int_eq(be_count("web4", "10.1.0.2").flows, on2);
}
END_TEST

/* Flows of 10.1.0.2 move when it goes (by @p down or delete); the others
 * stay. */
static void
check_flows_leave(bool down)
{
	uint32_t be[N_FLOWS], b;
	unsigned int i, on2 = 0;

	setup_lb(SVC_WEB4);
	for (i = 0; i < N_FLOWS; i++)
		if ((be[i] = web4_flow(i, TCP_SYN, T0)) == ip4("10.1.0.2"))
			on2++;
	ck_assert_uint_gt(on2, 0);
	if (down)
		ck_assert_int_eq(set_state("web4", "10.1.0.2", PA_LB_DOWN), 0);
	else
		ck_assert_int_eq(delete_backend("web4", "10.1.0.2"), 0);
	for (i = 0; i < N_FLOWS; i++) {
		b = web4_flow(i, TCP_ACK, T0 + 1);
		if (be[i] == ip4("10.1.0.2"))
			ck_assert_msg(b == ip4("10.1.0.1") || b == ip4("10.1.0.3"),
				"flow %u still on its gone backend", i);
		else
			ck_assert_msg(b == be[i], "flow %u moved", i);
		/* and the new choice sticks */
		ck_assert_uint_eq(web4_flow(i, TCP_ACK, T0 + 2), b);
	}
	ck_assert_int_eq(lb_stat("flows_rescheduled"), on2);
	ck_assert_int_eq(lb_stat("flows"), N_FLOWS);
	if (down)
		ck_assert_int_eq(be_count("web4", "10.1.0.2").flows, 0);
}

START_TEST(test_down_backend_loses_its_flows_to_other_backends)
{
	check_flows_leave(true);
}
END_TEST

START_TEST(test_deleted_backend_loses_its_flows_to_other_backends)
{
	check_flows_leave(false);
}
END_TEST

START_TEST(test_flows_of_a_down_backend_are_reaped_by_poll)
{
	unsigned int i, on2 = 0;

	setup_lb(SVC_WEB4);
	for (i = 0; i < N_FLOWS; i++)
		if (web4_flow(i, TCP_SYN, T0) == ip4("10.1.0.2"))
			on2++;
	ck_assert_int_eq(set_state("web4", "10.1.0.2", PA_LB_DOWN), 0);
	sweep(T0 + 1);
	ck_assert_int_eq(lb_stat("flows_backend_gone"), on2);
	ck_assert_int_eq(lb_stat("flows"), N_FLOWS - on2);
}
END_TEST

START_TEST(test_service_list_counts_flows_packets_and_bytes_per_backend)
{
	static const char *const addrs[] = { "10.1.0.1", "10.1.0.2", "10.1.0.3" };
	uint64_t flows[3] = { 0 }, pkts[3] = { 0 }, bytes[3] = { 0 };
	unsigned int i, k, b;
	json_t *arr, *s;

	setup_lb(SVC_WEB4);
	for (i = 0; i < 60; i++) {
		for (k = 0; k <= i % 4; k++) {
			char src[32];
			struct pa_test_frame f;
			uint32_t be;

			snprintf(src, sizeof(src), "198.51.100.%u", 1 + i);
			frame_l4(&f, src, "10.0.0.10", IPPROTO_TCP,
				(uint16_t)(20000 + i), 80,
				k == 0 ? TCP_SYN : TCP_ACK, 10 * k + i % 7);
			be = send_ipip4(&f, T0 + k);
			for (b = 0; b < 3; b++)
				if (be == ip4(addrs[b]))
					break;
			ck_assert_uint_lt(b, 3);
			flows[b] += k == 0;
			pkts[b]++;
			bytes[b] += f.len;
		}
	}
	for (b = 0; b < 3; b++) {
		struct be_count c = be_count("web4", addrs[b]);

		ck_assert_int_eq(c.flows, (json_int_t)flows[b]);
		ck_assert_int_eq(c.packets, (json_int_t)pkts[b]);
		ck_assert_int_eq(c.bytes, (json_int_t)bytes[b]);
	}
	arr = pa_lb_services_json(lb);
	s = json_array_get(arr, 0);
	ck_assert_int_eq(json_integer_value(json_object_get(s, "flows")), 60);
	ck_assert_int_eq(json_integer_value(json_object_get(s,
		"usable_backends")), 3);
	json_decref(arr);
	ck_assert_int_eq(lb_stat("flows"), 60);
	ck_assert_int_eq(lb_stat("flows_created"), 60);
	ck_assert_int_eq(lb_stat("balanced"), (json_int_t)(pkts[0] + pkts[1] +
		pkts[2]));
}
END_TEST

START_TEST(test_packets_of_one_new_flow_in_one_burst_share_a_backend)
{
	struct rte_mbuf *m[100];
	uint8_t v[100];
	unsigned int i;

	setup_lb("{'name': 'rr4', 'vip': '10.0.0.50', 'port': 80, 'proto': 'tcp',"
		" 'forward': 'ipip', 'scheduler': 'rr', 'backends':"
		" [{'addr': '10.1.0.1'}, {'addr': '10.1.0.2'}, {'addr': '10.1.0.3'}]}");
	/* packets i and i + 50 are one flow: the first in the same chunk of
	 * 64, the second across the chunk boundary for i >= 14 */
	for (i = 0; i < 100; i++) {
		char src[32];
		struct pa_test_frame f;

		snprintf(src, sizeof(src), "198.51.100.%u", 1 + i % 50);
		frame_l4(&f, src, "10.0.0.50", IPPROTO_TCP, 1000, 80, TCP_SYN, 0);
		m[i] = mbuf_of(&f);
	}
	pa_lb_process(lb, 0, m, 100, T0, v);
	for (i = 0; i < 50; i++) {
		ck_assert_uint_eq(v[i], PA_LB_V_FORWARD);
		ck_assert_uint_eq(v[i + 50], PA_LB_V_FORWARD);
		ck_assert_msg(memcmp(rte_pktmbuf_mtod(m[i], uint8_t *) + 30,
			rte_pktmbuf_mtod(m[i + 50], uint8_t *) + 30, 4) == 0,
			"flow %u went to two backends", i);
	}
	for (i = 0; i < 100; i++)
		rte_pktmbuf_free(m[i]);
	ck_assert_int_eq(lb_stat("flows"), 50);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Aging                                                               */
/* ------------------------------------------------------------------ */

START_TEST(test_idle_udp_flow_is_forgotten_after_udp_timeout)
{
	struct pa_lb_trace_result tr;
	struct pa_flow_key k;
	struct pa_test_frame f;

	setup_lb("{'name': 'dns4', 'vip': '10.0.0.40', 'port': 53, 'proto': 'udp',"
		" 'forward': 'ipip', 'backends': [{'addr': '10.1.0.1'}]}");
	frame_l4(&f, "198.51.100.7", "10.0.0.40", IPPROTO_UDP, 1234, 53, 0, 8);
	send_ipip4(&f, T0);
	ck_assert_int_eq(lb_stat("flows"), 1);
	sweep(T0 + UDP_TMO * hz);
	ck_assert_int_eq(lb_stat("flows"), 1);
	ck_assert_int_eq(be_count("dns4", "10.1.0.1").flows, 1);
	sweep(T0 + UDP_TMO * hz + 1);
	ck_assert_int_eq(lb_stat("flows"), 0);
	ck_assert_int_eq(lb_stat("flows_expired"), 1);
	ck_assert_int_eq(be_count("dns4", "10.1.0.1").flows, 0);
	/* gone from the table itself, not only from the counts */
	pa_lb_lcore_exit(lb, 0);
	k = key_of(&f);
	ck_assert_int_eq(pa_lb_trace(lb, &k, false, &tr), 0);
	ck_assert(tr.service_found);
	ck_assert(!tr.existing_flow);
	/* it comes back as a new flow */
	send_ipip4(&f, T0 + UDP_TMO * hz + 2);
	ck_assert_int_eq(lb_stat("flows"), 1);
	ck_assert_int_eq(lb_stat("flows_created"), 2);
}
END_TEST

/* The busy sweep (64 entries every LB_SWEEP_BUSY_US) reads only the
 * positions flows have used: a few flows in a large table are aged at
 * the first busy sweep after their timeout, not after the sweep has
 * gone round the whole table (1025 positions here: 17 sweeps). */
START_TEST(test_busy_sweep_ages_a_few_flows_at_once_in_a_large_table)
{
	struct pa_test_frame f;
	uint64_t now = T0;
	unsigned int i;

	setup_lb("{'name': 'dns4', 'vip': '10.0.0.40', 'port': 53, 'proto': 'udp',"
		" 'forward': 'ipip', 'backends': [{'addr': '10.1.0.1'}]}");
	for (i = 0; i < 3; i++) {
		frame_l4(&f, "198.51.100.7", "10.0.0.40", IPPROTO_UDP,
			(uint16_t)(1000 + i), 53, 0, 8);
		send_ipip4(&f, T0);
	}
	ck_assert_int_eq(lb_stat("flows"), 3);
	ck_assert_uint_ge(lb_stat("flow_table_capacity"), 1024);
	/* busy sweeps before the timeout move the sweep along */
	for (i = 0; i < 5; i++) {
		now += hz;
		pa_lb_poll(lb, 0, now, false);
	}
	ck_assert_int_eq(lb_stat("flows"), 3);
	/* the first busy sweep after it ages all three */
	pa_lb_poll(lb, 0, T0 + UDP_TMO * hz + 1, false);
	ck_assert_int_eq(lb_stat("flows"), 0);
	ck_assert_int_eq(lb_stat("flows_expired"), 3);
}
END_TEST

/* UDP flows 0 .. n - 1 of the dns4 service, all at T0. */
static void
dns4_flows(unsigned int n)
{
	unsigned int i;

	setup_lb("{'name': 'dns4', 'vip': '10.0.0.40', 'port': 53, 'proto': 'udp',"
		" 'forward': 'ipip', 'backends': [{'addr': '10.1.0.1'}]}");
	for (i = 0; i < n; i++)
		dns4_flow(i);
	ck_assert_int_eq(lb_stat("flows"), n);
}

/* Busy sweeps go round the positions in use once per 1/8 of the shortest
 * timeout (tcp_fin_timeout here): dead entries are reclaimed that much
 * late at most, not at the first busy poll. */
START_TEST(test_busy_sweep_goes_round_once_per_eighth_of_shortest_timeout)
{
	uint64_t t = T0 + UDP_TMO * hz, round = TCP_FIN_TMO * hz / 8;

	dns4_flows(3);
	pa_lb_poll(lb, 0, t, false);	/* a sweep: all alive */
	ck_assert_int_eq(lb_stat("flows"), 3);
	/* dead from t + 1, but the next round is at t + round */
	pa_lb_poll(lb, 0, t + 1 + round / 2, false);
	pa_lb_poll(lb, 0, t + round - 1, false);
	ck_assert_int_eq(lb_stat("flows"), 3);
	pa_lb_poll(lb, 0, t + round, false);
	ck_assert_int_eq(lb_stat("flows"), 0);
	ck_assert_int_eq(lb_stat("flows_expired"), 3);
}
END_TEST

/* ... but once fewer than 1/8 of the positions are free, once per 100 ms
 * (LB_SWEEP_PERIOD_MS): 64 positions every 100 ms x 64 / hw. */
START_TEST(test_busy_sweep_is_faster_when_the_table_is_short_of_room)
{
	uint64_t t = T0 + UDP_TMO * hz, gap = hz / 100;	/* 10 ms */

	/* 800 flows in 1025 positions: 225 free, the usual round (a sweep
	 * of 64 every 1.25 s x 64 / 800 = 100 ms) */
	dns4_flows(800);
	pa_lb_poll(lb, 0, t, false);
	pa_lb_poll(lb, 0, t + gap, false);
	pa_lb_poll(lb, 0, t + 2 * gap, false);
	ck_assert_int_eq(lb_stat("flows_expired"), 0);
	/* 900: 125 free, 64 every 100 ms x 64 / 900 = 7.1 ms */
	dns4_flows(900);
	pa_lb_poll(lb, 0, t, false);
	pa_lb_poll(lb, 0, t + gap, false);
	ck_assert_int_eq(lb_stat("flows_expired"), 64);
	/* 64 freed: 189 free, room again, the usual round */
	pa_lb_poll(lb, 0, t + 2 * gap, false);
	ck_assert_int_eq(lb_stat("flows_expired"), 64);
}
END_TEST

START_TEST(test_tcp_flow_that_saw_fin_ages_after_tcp_fin_timeout)
{
	struct pa_test_frame fa, fb;
	uint64_t t1 = T0 + hz;

	setup_lb(SVC_WEB4);
	frame_l4(&fa, "198.51.100.7", "10.0.0.10", IPPROTO_TCP, 1111, 80,
		TCP_SYN, 0);
	frame_l4(&fb, "198.51.100.8", "10.0.0.10", IPPROTO_TCP, 2222, 80,
		TCP_SYN, 0);
	send_ipip4(&fa, T0);
	send_ipip4(&fb, T0);
	frame_l4(&fa, "198.51.100.7", "10.0.0.10", IPPROTO_TCP, 1111, 80,
		TCP_FIN | TCP_ACK, 0);
	frame_l4(&fb, "198.51.100.8", "10.0.0.10", IPPROTO_TCP, 2222, 80,
		TCP_ACK, 5);
	send_ipip4(&fa, t1);
	send_ipip4(&fb, t1);
	ck_assert_int_eq(lb_stat("flows"), 2);
	sweep(t1 + TCP_FIN_TMO * hz);
	ck_assert_int_eq(lb_stat("flows"), 2);
	sweep(t1 + TCP_FIN_TMO * hz + 1);
	ck_assert_int_eq(lb_stat("flows"), 1);	/* the one without FIN stays */
	ck_assert_int_eq(lb_stat("flows_expired"), 1);
	sweep(t1 + TCP_TMO * hz + 1);
	ck_assert_int_eq(lb_stat("flows"), 0);
}
END_TEST

START_TEST(test_aged_flows_give_their_table_entries_back)
{
	unsigned int i, round;
	uint64_t now = T0;

	setup_lb("{'name': 'dns4', 'vip': '10.0.0.40', 'port': 53, 'proto': 'udp',"
		" 'forward': 'ipip', 'backends': [{'addr': '10.1.0.1'}]}");
	/* three generations of 900 flows in a table of 1024 */
	for (round = 0; round < 3; round++) {
		for (i = 0; i < 900; i++) {
			char src[32];
			struct pa_test_frame f;

			snprintf(src, sizeof(src), "198.%u.%u.%u", 51 + round,
				100 + i / 200, 1 + i % 200);
			frame_l4(&f, src, "10.0.0.40", IPPROTO_UDP,
				(uint16_t)(1000 + i), 53, 0, 4);
			send_ipip4(&f, now);
		}
		ck_assert_int_eq(lb_stat("flows"), 900);
		now += UDP_TMO * hz + 1;
		sweep(now);
		ck_assert_int_eq(lb_stat("flows"), 0);
	}
	ck_assert_int_eq(lb_stat("flow_table_full"), 0);
	ck_assert_int_eq(lb_stat("flows_created"), 3 * 900);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Full table, fragments, lb lcores                                    */
/* ------------------------------------------------------------------ */

/* A flow table of @p slots slots (a power of two) for @p size flows, on
 * the heap (lb.c's is on the DPDK heap). */
static void
ftab_make(struct lb_ftab *t, uint32_t slots, uint32_t size)
{
	uint32_t i;

	memset(t, 0, sizeof(*t));
	t->idx = calloc(slots, sizeof(*t->idx));
	t->free = calloc(size + 1, sizeof(*t->free));
	t->line = aligned_alloc(64, (size + 1) * sizeof(*t->line));
	t->sig = calloc(size + 1, sizeof(*t->sig));
	ck_assert(t->idx != NULL && t->free != NULL && t->line != NULL &&
		t->sig != NULL);
	memset(t->line, 0, (size + 1) * sizeof(*t->line));
	t->mask = slots - 1;
	t->n_pos = size + 1;
	for (i = 0; i < size; i++)
		t->free[i] = size - 1 - i;
	t->n_free = size;
}

static void
ftab_drop(struct lb_ftab *t)
{
	free(t->idx);
	free(t->free);
	free(t->line);
	free(t->sig);
}

/* The flow table (lb_ftab.h) against a reference: random adds and
 * deletes of keys of both families whose hashes crowd a few home slots
 * (long clusters, wrapping past the last slot, signature twins; IPv6
 * keys that differ only in their last address byte, IPv4 and IPv6 keys
 * of the same bytes), every live key found at its position, with the
 * entry written there at its add, after each step, every deleted one
 * gone, full at capacity. */
START_TEST(test_flow_table_structure_against_a_reference)
{
	enum { SLOTS = 64, SIZE = 47, KEYS = 200 };
	struct lb_ftab t;
	struct lb_flow_key keys[KEYS];
	uint32_t hash[KEYS];
	int32_t at[KEYS];
	unsigned int i, step, live = 0;

	ftab_make(&t, SLOTS, SIZE);
	/* a free position, the never-used last one, one past it */
	ck_assert_int_eq(lb_ftab_del(&t, 0), -ENOENT);
	ck_assert_int_eq(lb_ftab_del(&t, SIZE), -ENOENT);
	ck_assert_int_eq(lb_ftab_del(&t, SIZE + 1), -ENOENT);
	for (i = 0; i < KEYS; i++) {
		memset(&keys[i], 0, sizeof(keys[i]));
		keys[i].proto = IPPROTO_TCP;
		if (i % 4 < 2) {
			/* IPv4, and IPv6 of the same bytes */
			keys[i].family = i % 4 == 0 ? 4 : 6;
			keys[i].sport = (uint16_t)(i / 4);
		} else {
			/* IPv6 differing in the destination's last byte */
			keys[i].family = 6;
			keys[i].src[15] = 1;
			keys[i].dst[15] = (uint8_t)i;
		}
		/* homes 60-63 and 0-1 only; every 7th key a twin of the
		 * previous one's whole hash */
		hash[i] = (i % 7 == 6) ? hash[i - 1] :
			(rng() & ~63u) | (uint32_t)((60 + i % 6) & 63);
		at[i] = -1;
	}
	for (step = 0; step < 20000; step++) {
		i = rng() % KEYS;
		if (at[i] < 0) {
			int32_t p = lb_ftab_add(&t, &keys[i], hash[i]);

			if (live == SIZE) {
				ck_assert_int_eq(p, -ENOSPC);
			} else {
				ck_assert_int_ge(p, 0);
				ck_assert_int_lt(p, SIZE);
				at[i] = p;
				live++;
				lb_ftab_flow(&t, (uint32_t)p)->svc_uid = i;
				lb_ftab_flow(&t, (uint32_t)p)->last = ~0ull - i;
			}
		} else {
			ck_assert_int_eq(lb_ftab_add(&t, &keys[i], hash[i]),
				at[i]);
			ck_assert_int_eq(lb_ftab_del(&t, (uint32_t)at[i]), 0);
			ck_assert_int_eq(lb_ftab_del(&t, (uint32_t)at[i]),
				-ENOENT);
			at[i] = -1;
			live--;
		}
		ck_assert_uint_eq(t.n_free, SIZE - live);
		for (i = 0; i < KEYS; i++) {
			int32_t p = lb_ftab_lookup(&t, &keys[i], hash[i]);

			REQUIRE(p == (at[i] >= 0 ? at[i] : -ENOENT));
			if (p >= 0) {
				const struct lb_flow *f =
					lb_ftab_flow(&t, (uint32_t)p);

				REQUIRE(f->svc_uid == i && f->last == ~0ull - i);
				REQUIRE(t.sig[p] == hash[i]);
			}
		}
	}
	ftab_drop(&t);
}
END_TEST

/* Crafted flows cannot make lookups long: at most LB_FTAB_MAX_TWINS
 * flows of one hash, none LB_FTAB_MAX_PROBE slots or more past its home;
 * the rest is refused as when the table is full (flow_table_full, the
 * stateless choice), and room comes back with a delete. */
START_TEST(test_flow_table_bounds_crafted_hashes)
{
	enum { SLOTS = 512, SIZE = 384, KEYS = 200 };
	struct lb_ftab t;
	struct lb_flow_key keys[KEYS];
	int32_t at[KEYS];
	unsigned int i, added = 0;

	ftab_make(&t, SLOTS, SIZE);
	for (i = 0; i < KEYS; i++) {
		memset(&keys[i], 0, sizeof(keys[i]));
		keys[i].family = 4;
		keys[i].proto = IPPROTO_TCP;
		keys[i].sport = (uint16_t)(i + 1);
	}
	/* one whole hash: LB_FTAB_MAX_TWINS flows, then refused */
	for (i = 0; i < 20; i++) {
		at[i] = lb_ftab_add(&t, &keys[i], 0xabcd0007u);
		if (i < LB_FTAB_MAX_TWINS)
			ck_assert_int_ge(at[i], 0);
		else
			ck_assert_int_eq(at[i], -ENOSPC);
	}
	for (i = 0; i < 20; i++)
		ck_assert_int_eq(lb_ftab_lookup(&t, &keys[i], 0xabcd0007u),
			i < LB_FTAB_MAX_TWINS ? at[i] : -ENOENT);
	/* a delete makes room for one more twin */
	ck_assert_int_eq(lb_ftab_del(&t, (uint32_t)at[0]), 0);
	ck_assert_int_ge(lb_ftab_add(&t, &keys[LB_FTAB_MAX_TWINS],
		0xabcd0007u), 0);
	ck_assert_int_eq(lb_ftab_add(&t, &keys[LB_FTAB_MAX_TWINS + 1],
		0xabcd0007u), -ENOSPC);
	/* distinct hashes of one home (slot 7): the run stops at
	 * LB_FTAB_MAX_PROBE slots from it */
	for (i = 20; i < KEYS; i++) {
		uint32_t h = (uint32_t)i << 16 | 7;
		int32_t p = lb_ftab_add(&t, &keys[i], h);

		if (p >= 0) {
			added++;
			ck_assert_int_eq(lb_ftab_lookup(&t, &keys[i], h), p);
		} else {
			ck_assert_int_eq(p, -ENOSPC);
		}
	}
	ck_assert_uint_eq(added, LB_FTAB_MAX_PROBE - LB_FTAB_MAX_TWINS);
	ck_assert_uint_gt(t.n_free, 0);
	for (i = 0; i < SLOTS; i++)
		if (t.idx[i] != 0)
			ck_assert_uint_lt((i - ((uint32_t)(t.idx[i] >> 32) &
				t.mask)) & t.mask, LB_FTAB_MAX_PROBE);
	ftab_drop(&t);
}
END_TEST

/* The index's size (lb_ftab.h): a table of SIZE flows whose index may
 * reach SLOTS slots starts at MIN, doubles when half full and halves
 * when under 1/8 full, its flows moved a step at a time while adds,
 * deletes and lookups go on; every live key is found at its position
 * after each operation and each step, deleted ones are gone, a resize is
 * not started before the spare buffer is zero again. Filled, the index
 * is whole; drained, it is back at MIN with the other buffer zero.
 * Hashes crowd a few homes of the whole index (so that a resize changes
 * which keys share a cluster), some keys twins. */
START_TEST(test_flow_table_index_grows_and_shrinks_while_in_use)
{
	enum { SLOTS = 1024, MIN = 16, SIZE = 700, KEYS = 900 };
	static struct lb_flow_key keys[KEYS];
	static uint32_t hash[KEYS];
	static int32_t at[KEYS];
	struct lb_ftab t;
	uint64_t *big = calloc(SLOTS, sizeof(*big));
	uint64_t *half = calloc(SLOTS / 2, sizeof(*half));
	unsigned int i, step, live = 0, forgotten = 0;
	unsigned int grows_seen = 0, shrinks_seen = 0;
	uint32_t last_mask;

	ck_assert(big != NULL && half != NULL);
	ftab_make(&t, MIN, SIZE);
	free(t.idx);
	lb_ftab_index_init(&t, big, half, SLOTS, MIN);
	ck_assert_uint_eq(t.mask, MIN - 1);
	/* 1024 / 16 = 2^6: the whole index's buffer is the start's */
	ck_assert_ptr_eq(t.idx, big);
	ck_assert(!lb_ftab_resize_due(&t));
	last_mask = t.mask;
	for (i = 0; i < KEYS; i++) {
		memset(&keys[i], 0, sizeof(keys[i]));
		keys[i].family = 4;
		keys[i].proto = IPPROTO_UDP;
		keys[i].sport = (uint16_t)i;
		keys[i].dport = (uint16_t)(i >> 16);
		hash[i] = (i % 5 == 4) ? hash[i - 1] :
			(rng() & ~(uint32_t)(SLOTS - 1)) |
			(rng() % 4 == 0 ? (uint32_t)(i % 8) * 97 :
			 (rng() & (SLOTS - 1)));
		at[i] = -1;
	}
	for (step = 0; step < 90000; step++) {
		/* fill towards SIZE, churn, then drain to a few */
		bool add = step < 20000 ? rng() % 8 != 0 :
			step < 40000 ? rng() % 2 == 0 : rng() % 64 == 0;
		int32_t p;

		i = rng() % KEYS;
		if (add && at[i] < 0) {
			p = lb_ftab_add(&t, &keys[i], hash[i]);
			if (p >= 0) {
				at[i] = p;
				live++;
				lb_ftab_flow(&t, (uint32_t)p)->svc_uid = i;
			} else {
				REQUIRE(p == -ENOSPC);
			}
		} else if (!add && at[i] >= 0) {
			REQUIRE(lb_ftab_del(&t, (uint32_t)at[i]) == 0);
			REQUIRE(lb_ftab_del(&t, (uint32_t)at[i]) == -ENOENT);
			at[i] = -1;
			live--;
		}
		/* a step every other operation, 3 positions (the lcore's
		 * 256 would move this table's in one): resizes overlap
		 * the churn */
		if (step % 2 == 0) {
			bool was_dirty = t.dirty != 0, was_old = t.old != NULL;

			p = lb_ftab_resize_step(&t, 3);
			if (p >= 0) {
				unsigned int k = lb_ftab_flow(&t,
					(uint32_t)p)->svc_uid;

				REQUIRE(at[k] == p);
				REQUIRE(lb_ftab_del(&t, (uint32_t)p) == 0);
				at[k] = -1;
				live--;
				forgotten++;
			}
			if (t.mask != last_mask) {
				/* a resize starts only from a clean state */
				REQUIRE(!was_dirty && !was_old);
				if (t.mask > last_mask) {
					REQUIRE(t.mask == last_mask * 2 + 1);
					grows_seen++;
				} else {
					REQUIRE(t.mask == last_mask / 2);
					shrinks_seen++;
				}
				last_mask = t.mask;
			}
		}
		REQUIRE(t.n_free == SIZE - live);
		REQUIRE(t.mask <= SLOTS - 1 && t.mask >= MIN - 1);
		if (step == 40000) {
			/* filled: the index whole */
			REQUIRE(t.mask == SLOTS - 1 && t.idx == big);
			REQUIRE(grows_seen == 6 && shrinks_seen == 0);
		}
		if (step % 7 != 0 && t.old == NULL)
			continue;
		for (i = 0; i < KEYS; i++) {
			p = lb_ftab_lookup(&t, &keys[i], hash[i]);
			REQUIRE(p == (at[i] >= 0 ? at[i] : -ENOENT));
			if (p >= 0) {
				REQUIRE(lb_ftab_flow(&t, (uint32_t)p)->svc_uid
					== i);
				/* the slot pass's candidate: a position of the
				 * same hash */
				p = lb_ftab_candidate(&t, hash[i]);
				REQUIRE(p >= 0 && t.sig[p] == hash[i]);
			}
		}
	}
	ck_assert_uint_gt(shrinks_seen, 0);
	/* drained: back at MIN, the whole index's buffer zeroed */
	for (i = 0; i < KEYS; i++)
		if (at[i] >= 0)
			REQUIRE(lb_ftab_del(&t, (uint32_t)at[i]) == 0);
	for (i = 0; i < 100000 && lb_ftab_resize_due(&t); i++)
		REQUIRE(lb_ftab_resize_step(&t, 3) < 0);
	ck_assert(!lb_ftab_resize_due(&t));
	ck_assert_uint_eq(t.mask, MIN - 1);
	ck_assert_ptr_eq(t.idx, big);
	ck_assert_uint_eq(t.grows, t.shrinks);
	for (i = 0; i < SLOTS / 2; i++)
		REQUIRE(half[i] == 0);
	for (i = 0; i < SLOTS; i++)
		REQUIRE(big[i] == 0);
	/* random hashes this crowded leave none out */
	ck_assert_uint_eq(forgotten, 0);
	ftab_drop(&t);
	free(half);
}
END_TEST

START_TEST(test_full_flow_table_counts_and_sends_new_flows_to_the_maglev_choice)
{
	static const char *const addrs[] = { "10.1.0.1", "10.1.0.2", "10.1.0.3" };
	struct pa_lb_maglev_backend mb[3];
	uint32_t keys[3];
	uint16_t table[1021];
	json_int_t full = 0, now_full;
	unsigned int i, n_full = 0, b;

	setup_lb("{'name': 'rr4', 'vip': '10.0.0.50', 'port': 80, 'proto': 'tcp',"
		" 'forward': 'ipip', 'scheduler': 'rr', 'table_size': 1021,"
		" 'backends': [{'addr': '10.1.0.1'}, {'addr': '10.1.0.2'},"
		" {'addr': '10.1.0.3'}]}");
	for (b = 0; b < 3; b++) {
		keys[b] = ip4(addrs[b]);
		mb[b].key = (const uint8_t *)&keys[b];
		mb[b].key_len = 4;
		mb[b].weight = 1;
	}
	ref_maglev(mb, 3, 1021, table);
	for (i = 0; i < 1200; i++) {
		char src[32];
		struct pa_test_frame f;
		struct rte_mbuf *m;
		uint32_t hash, dst;

		snprintf(src, sizeof(src), "198.51.%u.%u", 100 + i / 200,
			1 + i % 200);
		frame_l4(&f, src, "10.0.0.50", IPPROTO_TCP, (uint16_t)(20000 + i),
			80, TCP_SYN, 0);
		m = mbuf_of(&f);
		hash = pa_pkt_meta(m)->hash;
		ck_assert_uint_eq(process1(m, T0), PA_LB_V_FORWARD);
		memcpy(&dst, rte_pktmbuf_mtod(m, uint8_t *) + 30, 4);
		rte_pktmbuf_free(m);
		now_full = lb_stat("flow_table_full");
		if (now_full == full)
			continue;
		ck_assert_int_eq(now_full, full + 1);
		full = now_full;
		n_full++;
		ck_assert_msg(dst == keys[table[hash % 1021]],
			"flow %u: not the Maglev choice", i);
		/* and it sticks there */
		ck_assert_uint_eq(send_ipip4(&f, T0 + 1), dst);
		full = lb_stat("flow_table_full");
	}
	printf("flow table of 1024: %u of 1200 flows found it full\n", n_full);
	ck_assert_uint_gt(n_full, 1200 - 1024 - 1);
	ck_assert_int_eq(lb_stat("flows"), lb_stat("flows_created"));
	ck_assert_int_eq(lb_stat("flows_created") + n_full, 1200);
	ck_assert_int_eq(lb_stat("no_backend"), 0);
}
END_TEST

/* Fragments of one UDP datagram from @p src: the first with the UDP
 * header (to @p dport), two later ones. */
static void
frags4(const char *src, const char *vip, uint16_t dport, uint16_t id,
		struct pa_test_frame f[3])
{
	unsigned int i;

	for (i = 0; i < 3; i++) {
		frame_eth(&f[i], 0, RTE_ETHER_TYPE_IPV4);
		frame_ipv4(&f[i], src, vip, IPPROTO_UDP, 0,
			(uint16_t)((i < 2 ? IP4_MF : 0) | (i * 3)), id);
		if (i == 0) {
			frame_udp(&f[i], (uint16_t)(3000 + id), dport);
			pa_test_put16(f[i].b + f[i].l4 + 4, 8 + 16 + 24 + 24);
			frame_payload(&f[i], 16, 1);
			f[i].l4 = -1;
		} else {
			frame_payload(&f[i], 24, (uint8_t)i);
		}
		frame_fix(&f[i]);
	}
}

static void
frags6(const char *src, const char *vip, uint16_t dport, uint32_t id,
		struct pa_test_frame f[3])
{
	unsigned int i;

	for (i = 0; i < 3; i++) {
		frame_eth(&f[i], 0, RTE_ETHER_TYPE_IPV6);
		frame_ipv6(&f[i], src, vip, 44, 0);
		frame_frag6(&f[i], IPPROTO_UDP, (uint16_t)(i * 3), i < 2, id);
		if (i == 0) {
			frame_udp(&f[i], (uint16_t)(3000 + id), dport);
			pa_test_put16(f[i].b + f[i].l4 + 4, 8 + 16 + 24 + 24);
			frame_payload(&f[i], 16, 1);
			f[i].l4 = -1;
		} else {
			frame_payload(&f[i], 24, (uint8_t)i);
		}
		frame_fix(&f[i]);
	}
}

#define SVC_FRAG4 \
	"{'name': 'dns4', 'vip': '10.0.0.40', 'port': 53, 'proto': 'udp'," \
	" 'forward': 'ipip', 'backends': [{'addr': '10.4.0.1'}, {'addr': '10.4.0.2'}," \
	" {'addr': '10.4.0.3'}, {'addr': '10.4.0.4'}]}," \
	"{'name': 'ntp4', 'vip': '10.0.0.40', 'port': 123, 'proto': 'udp'," \
	" 'forward': 'ipip', 'backends': [{'addr': '10.5.0.1'}, {'addr': '10.5.0.2'}]}," \
	"{'name': 'dns6', 'vip': '2001:db8:40::40', 'port': 53, 'proto': 'udp'," \
	" 'forward': 'ipip', 'backends': [{'addr': '2001:db8:4::1'}," \
	" {'addr': '2001:db8:4::2'}, {'addr': '2001:db8:4::3'}]}"

/* Send the fragments; all must go to one backend, the one trace names
 * for a fragment of service @p svc. */
static void
check_frags(struct pa_test_frame f[3], const char *svc, bool v6)
{
	struct pa_lb_trace_result tr;
	struct pa_flow_key k = key_of(&f[0]);
	uint8_t first[16], o16[16];
	unsigned int i, alen = v6 ? 16 : 4;

	ck_assert_int_eq(pa_lb_trace(lb, &k, true, &tr), 0);
	ck_assert(tr.service_found);
	ck_assert_str_eq(tr.service, svc);
	ck_assert(tr.backend_found);
	ck_assert(!tr.existing_flow);
	for (i = 0; i < 3; i++) {
		struct rte_mbuf *m = mbuf_of(&f[i]);
		const uint8_t *o;

		ck_assert(pa_pkt_meta(m)->flags & PA_PKT_F_FRAG);
		ck_assert_uint_eq(process1(m, T0 + i), PA_LB_V_FORWARD);
		o = rte_pktmbuf_mtod(m, const uint8_t *);
		ck_assert_uint_eq(rte_pktmbuf_pkt_len(m), f[i].len + (v6 ? 40 : 20));
		memcpy(o16, o + 14 + (v6 ? 24 : 16), alen);
		if (i == 0)
			memcpy(first, o16, alen);
		else
			ck_assert_msg(memcmp(first, o16, alen) == 0,
				"fragment %u went elsewhere", i);
		ck_assert(memcmp(o + 14 + (v6 ? 40 : 20), f[i].b + 14,
			f[i].len - 14) == 0);
		rte_pktmbuf_free(m);
	}
	ck_assert(memcmp(first, v6 ? (const uint8_t *)&tr.backend.v6 :
		(const uint8_t *)&tr.backend.v4, alen) == 0);
}

START_TEST(test_fragments_of_a_datagram_go_to_one_backend_without_a_flow_entry)
{
	struct pa_test_frame f[3];
	unsigned int i;
	char src[64];

	setup_lb(SVC_FRAG4);
	for (i = 0; i < 20; i++) {
		snprintf(src, sizeof(src), "198.51.100.%u", 1 + i);
		frags4(src, "10.0.0.40", 53, (uint16_t)(100 + i), f);
		check_frags(f, "dns4", false);
		snprintf(src, sizeof(src), "2001:db8:99::%x", 1 + i);
		frags6(src, "2001:db8:40::40", 53, 100 + i, f);
		check_frags(f, "dns6", true);
	}
	ck_assert_int_eq(lb_stat("fragments"), 20 * 6);
	ck_assert_int_eq(lb_stat("flows"), 0);
	ck_assert_int_eq(lb_stat("flows_created"), 0);
}
END_TEST

START_TEST(test_fragments_go_to_the_lowest_port_service_of_their_vip_and_protocol)
{
	struct pa_test_frame f[3];

	setup_lb(SVC_FRAG4);
	frags4("198.51.100.9", "10.0.0.40", 123, 7, f);
	check_frags(f, "dns4", false);
}
END_TEST

START_TEST(test_two_lcores_keep_separate_tables_and_counters_sum)
{
	struct rte_mbuf *m;
	struct pa_test_frame f;
	uint8_t v;
	uint32_t b0, b1;

	setup_lb_flows("{'name': 'rr4', 'vip': '10.0.0.10', 'port': 80, 'proto': 'tcp',"
		" 'forward': 'ipip', 'scheduler': 'rr', 'backends':"
		" [{'addr': '10.1.0.1'}, {'addr': '10.1.0.2'}]}", 4096, 2);
	ck_assert_int_eq(lb_stat("flow_table_capacity") >= 4096, 1);
	frame_l4(&f, "198.51.100.7", "10.0.0.10", IPPROTO_TCP, 1234, 80,
		TCP_SYN, 0);
	m = mbuf_of(&f);
	pa_lb_process(lb, 0, &m, 1, T0, &v);
	ck_assert_uint_eq(v, PA_LB_V_FORWARD);
	memcpy(&b0, rte_pktmbuf_mtod(m, uint8_t *) + 30, 4);
	rte_pktmbuf_free(m);
	m = mbuf_of(&f);
	pa_lb_process(lb, 1, &m, 1, T0, &v);
	ck_assert_uint_eq(v, PA_LB_V_FORWARD);
	memcpy(&b1, rte_pktmbuf_mtod(m, uint8_t *) + 30, 4);
	rte_pktmbuf_free(m);
	/* each lcore's rr cursor starts at the first backend */
	ck_assert_uint_eq(b0, b1);
	ck_assert_int_eq(lb_stat("flows"), 2);
	ck_assert_int_eq(lb_stat("balanced"), 2);
	ck_assert_int_eq(be_count("rr4", "10.1.0.1").packets +
		be_count("rr4", "10.1.0.2").packets, 2);
}
END_TEST

TCase *
lb_tcase_flows(void)
{
	TCase *tc = tcase_create("flows");

	tcase_set_timeout(tc, 120);
	tcase_add_checked_fixture(tc, NULL, teardown_lb);
	tcase_add_test(tc, test_flows_keep_their_backend_when_backends_are_added);
	tcase_add_test(tc, test_flows_keep_their_backend_when_weights_change);
	tcase_add_test(tc, test_draining_backend_keeps_its_flows_but_gets_no_new_ones);
	tcase_add_test(tc, test_down_backend_loses_its_flows_to_other_backends);
	tcase_add_test(tc, test_deleted_backend_loses_its_flows_to_other_backends);
	tcase_add_test(tc, test_flows_of_a_down_backend_are_reaped_by_poll);
	tcase_add_test(tc, test_service_list_counts_flows_packets_and_bytes_per_backend);
	tcase_add_test(tc, test_packets_of_one_new_flow_in_one_burst_share_a_backend);
	tcase_add_test(tc, test_idle_udp_flow_is_forgotten_after_udp_timeout);
	tcase_add_test(tc, test_busy_sweep_ages_a_few_flows_at_once_in_a_large_table);
	tcase_add_test(tc, test_busy_sweep_goes_round_once_per_eighth_of_shortest_timeout);
	tcase_add_test(tc, test_busy_sweep_is_faster_when_the_table_is_short_of_room);
	tcase_add_test(tc, test_tcp_flow_that_saw_fin_ages_after_tcp_fin_timeout);
	tcase_add_test(tc, test_aged_flows_give_their_table_entries_back);
	tcase_add_test(tc, test_flow_table_structure_against_a_reference);
	tcase_add_test(tc, test_flow_table_bounds_crafted_hashes);
	tcase_add_test(tc, test_flow_table_index_grows_and_shrinks_while_in_use);
	tcase_add_test(tc, test_full_flow_table_counts_and_sends_new_flows_to_the_maglev_choice);
	tcase_add_test(tc, test_fragments_of_a_datagram_go_to_one_backend_without_a_flow_entry);
	tcase_add_test(tc, test_fragments_go_to_the_lowest_port_service_of_their_vip_and_protocol);
	tcase_add_test(tc, test_two_lcores_keep_separate_tables_and_counters_sum);
	return tc;
}
