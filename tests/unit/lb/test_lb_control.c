/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of lib/lb, the control functions: their errors, export,
 * deleted services, trace, the poll's due flag, the address list.
 *
 * Part of test_lb (test_lb.c): the fixture is lb_fixture.h's.
 */

#include "lb_fixture.h"

/* ------------------------------------------------------------------ */
/* Control, export, trace                                              */
/* ------------------------------------------------------------------ */

START_TEST(test_duplicate_service_name_or_vip_port_proto_is_eexist)
{
	char err[PA_CONFIG_ERR_MAX];
	struct pa_config_service svc;

	setup_lb(SVC_WEB4);
	service_of("{'name': 'web4', 'vip': '10.0.0.77', 'port': 80, 'proto': 'tcp',"
		" 'forward': 'ipip'}", &svc);
	ck_assert_int_eq(pa_lb_service_add(lb, &svc, err, sizeof(err)), -EEXIST);
	pa_lb_config_service_clear(&svc);
	service_of("{'name': 'other', 'vip': '10.0.0.10', 'port': 80, 'proto': 'tcp',"
		" 'forward': 'ipip'}", &svc);
	ck_assert_int_eq(pa_lb_service_add(lb, &svc, err, sizeof(err)), -EEXIST);
	pa_lb_config_service_clear(&svc);
	/* same VIP and port, the other protocol: a different service */
	service_of("{'name': 'other', 'vip': '10.0.0.10', 'port': 80, 'proto': 'udp',"
		" 'forward': 'ipip', 'backends': [{'addr': '10.1.0.9'}]}", &svc);
	ck_assert_int_eq(pa_lb_service_add(lb, &svc, err, sizeof(err)), 0);
	pa_lb_config_service_clear(&svc);
	ck_assert_int_eq(lb_stat("services"), 2);
}
END_TEST

START_TEST(test_unknown_service_or_backend_is_enoent_and_duplicate_backend_eexist)
{
	char err[PA_CONFIG_ERR_MAX];
	struct pa_config_backend be;
	struct pa_ip_addr a = addr_of("10.1.0.1"), x = addr_of("10.9.9.9");
	uint32_t w = 2;

	setup_lb(SVC_WEB4);
	backend_of("web4", "{'addr': '10.1.0.7'}", &be);
	ck_assert_int_eq(pa_lb_backend_add(lb, "nope", &be, err, sizeof(err)),
		-ENOENT);
	ck_assert_int_eq(pa_lb_backend_delete(lb, "nope", &a, err, sizeof(err)),
		-ENOENT);
	ck_assert_int_eq(pa_lb_backend_set(lb, "nope", &a, &w, NULL, err,
		sizeof(err)), -ENOENT);
	ck_assert_int_eq(pa_lb_service_delete(lb, "nope", err, sizeof(err)),
		-ENOENT);
	ck_assert_int_eq(pa_lb_backend_delete(lb, "web4", &x, err, sizeof(err)),
		-ENOENT);
	ck_assert_int_eq(pa_lb_backend_set(lb, "web4", &x, &w, NULL, err,
		sizeof(err)), -ENOENT);
	backend_of("web4", "{'addr': '10.1.0.1'}", &be);
	ck_assert_int_eq(pa_lb_backend_add(lb, "web4", &be, err, sizeof(err)),
		-EEXIST);
	ck_assert_int_eq(lb_stat("backends"), 3);
}
END_TEST

static const struct pa_config_service *
export_find(const struct pa_config_lb *x, const char *name)
{
	unsigned int i;

	for (i = 0; i < x->n_services; i++)
		if (strcmp(x->services[i].name, name) == 0)
			return &x->services[i];
	return NULL;
}

static bool
export_has_backend(const struct pa_config_service *s, const char *addr)
{
	struct pa_ip_addr a = addr_of(addr);
	unsigned int i;

	for (i = 0; i < s->n_backends; i++)
		if (s->backends[i].addr.family == a.family &&
		    memcmp(&s->backends[i].addr.v4, &a.v4, 4) == 0)
			return true;
	return false;
}

static void
export_clear(struct pa_config_lb *x)
{
	unsigned int i;

	for (i = 0; i < x->n_services; i++)
		pa_lb_config_service_clear(&x->services[i]);
	free(x->services);
	memset(x, 0, sizeof(*x));
}

START_TEST(test_export_reflects_added_and_deleted_services_and_backends)
{
	char err[PA_CONFIG_ERR_MAX];
	struct pa_config_service svc;
	struct pa_config_lb x;
	const struct pa_config_service *s;
	unsigned int i;

	setup_lb(SVC_WEB4);
	memset(&x, 0, sizeof(x));
	ck_assert_int_eq(pa_lb_export(lb, &x), 0);
	ck_assert_uint_eq(x.n_services, 1);
	ck_assert_uint_eq(x.services[0].n_backends, 3);

	service_of("{'name': 'dns4', 'vip': '10.0.0.40', 'port': 53, 'proto': 'udp',"
		" 'forward': 'ipip', 'backends': [{'addr': '10.4.0.1'}]}", &svc);
	ck_assert_int_eq(pa_lb_service_add(lb, &svc, err, sizeof(err)), 0);
	pa_lb_config_service_clear(&svc);
	ck_assert_int_eq(add_backend("web4", "{'addr': '10.1.0.4', 'weight': 7}"),
		0);
	ck_assert_int_eq(delete_backend("web4", "10.1.0.2"), 0);
	ck_assert_int_eq(set_state("web4", "10.1.0.3", PA_LB_DRAIN), 0);
	ck_assert_int_eq(pa_lb_export(lb, &x), 0);	/* replaces x's */
	ck_assert_uint_eq(x.n_services, 2);
	s = export_find(&x, "web4");
	ck_assert_ptr_nonnull(s);
	ck_assert_uint_eq(s->n_backends, 3);
	ck_assert(export_has_backend(s, "10.1.0.1"));
	ck_assert(!export_has_backend(s, "10.1.0.2"));
	ck_assert(export_has_backend(s, "10.1.0.3"));
	ck_assert(export_has_backend(s, "10.1.0.4"));
	for (i = 0; i < s->n_backends; i++) {
		if (s->backends[i].addr.v4.s_addr == ip4("10.1.0.4"))
			ck_assert_uint_eq(s->backends[i].weight, 7);
		if (s->backends[i].addr.v4.s_addr == ip4("10.1.0.3"))
			ck_assert_int_eq(s->backends[i].state, PA_LB_DRAIN);
	}
	ck_assert_ptr_nonnull(export_find(&x, "dns4"));

	ck_assert_int_eq(pa_lb_service_delete(lb, "web4", err, sizeof(err)), 0);
	ck_assert_int_eq(pa_lb_export(lb, &x), 0);
	ck_assert_uint_eq(x.n_services, 1);
	ck_assert_ptr_null(export_find(&x, "web4"));
	export_clear(&x);
}
END_TEST

START_TEST(test_deleted_service_no_longer_balances_and_its_flows_are_reaped)
{
	char err[PA_CONFIG_ERR_MAX];
	struct pa_test_frame f;

	setup_lb(SVC_WEB4);
	frame_l4(&f, "198.51.100.7", "10.0.0.10", IPPROTO_TCP, 1234, 80,
		TCP_SYN, 0);
	send_ipip4(&f, T0);
	ck_assert_int_eq(pa_lb_service_delete(lb, "web4", err, sizeof(err)), 0);
	check_untouched(&f);
	sweep(T0 + 1);
	ck_assert_int_eq(lb_stat("flows"), 0);
	ck_assert_int_eq(lb_stat("services"), 0);
	ck_assert(!pa_lb_active(lb));
}
END_TEST

START_TEST(test_trace_gives_the_maglev_choice_for_a_new_flow_then_the_flows_backend)
{
	struct pa_lb_trace_result tr;
	unsigned int i;

	setup_lb(SVC_WEB4);
	for (i = 0; i < 30; i++) {
		char src[32];
		struct pa_test_frame f;
		struct pa_flow_key k;
		uint32_t be;

		snprintf(src, sizeof(src), "198.51.100.%u", 1 + i);
		frame_l4(&f, src, "10.0.0.10", IPPROTO_TCP, (uint16_t)(5000 + i),
			80, TCP_SYN, 0);
		k = key_of(&f);
		ck_assert_int_eq(pa_lb_trace(lb, &k, false, &tr), 0);
		ck_assert(tr.service_found);
		ck_assert_str_eq(tr.service, "web4");
		ck_assert(tr.backend_found);
		ck_assert(!tr.existing_flow);
		be = send_ipip4(&f, T0);
		ck_assert_msg(be == tr.backend.v4.s_addr,
			"flow %u: trace predicted another backend", i);
		ck_assert_int_eq(pa_lb_trace(lb, &k, false, &tr), 0);
		ck_assert(tr.existing_flow);
		ck_assert_uint_eq(tr.backend.v4.s_addr, be);
	}
}
END_TEST

START_TEST(test_trace_reports_the_existing_flows_backend_on_an_rr_service)
{
	struct pa_lb_trace_result tr;
	struct pa_flow_key k;
	struct pa_test_frame f;
	uint32_t be;

	setup_lb("{'name': 'rr4', 'vip': '10.0.0.10', 'port': 80, 'proto': 'tcp',"
		" 'forward': 'ipip', 'scheduler': 'rr', 'backends':"
		" [{'addr': '10.1.0.1'}, {'addr': '10.1.0.2'}, {'addr': '10.1.0.3'}]}");
	frame_l4(&f, "198.51.100.7", "10.0.0.10", IPPROTO_TCP, 1234, 80,
		TCP_SYN, 0);
	k = key_of(&f);
	ck_assert_int_eq(pa_lb_trace(lb, &k, false, &tr), 0);
	ck_assert(tr.service_found);
	ck_assert(!tr.backend_found);
	ck_assert(!tr.existing_flow);
	ck_assert_ptr_nonnull(tr.reason);
	web4_flow(1, TCP_SYN, T0);	/* moves the cursor */
	be = send_ipip4(&f, T0);
	ck_assert_int_eq(pa_lb_trace(lb, &k, false, &tr), 0);
	ck_assert(tr.existing_flow);
	ck_assert(tr.backend_found);
	ck_assert_uint_eq(tr.backend.v4.s_addr, be);
	/* the lcore answers itself once it polls; after it leaves, trace
	 * reads its table directly */
	pa_lb_poll(lb, 0, T0 + 1, true);
	pa_lb_lcore_exit(lb, 0);
	ck_assert_int_eq(pa_lb_trace(lb, &k, false, &tr), 0);
	ck_assert(tr.existing_flow);
	ck_assert_uint_eq(tr.backend.v4.s_addr, be);
	/* not a service */
	k.dport = htons(81);
	ck_assert_int_eq(pa_lb_trace(lb, &k, false, &tr), 0);
	ck_assert(!tr.service_found);
}
END_TEST

/* An lcore that polls only when pa_lb_poll_due() says so, as the
 * worker loop does, until told to stop. */
struct due_poller {
	pthread_t tid;
	volatile int stop;
};

static void *
poll_when_due(void *arg)
{
	struct due_poller *p = arg;

	while (!__atomic_load_n(&p->stop, __ATOMIC_ACQUIRE)) {
		if (pa_lb_poll_due(lb, 0))
			pa_lb_poll(lb, 0, T0 + 1, true);
		else
			rte_pause();
	}
	return NULL;
}

/* pa_lb_poll_due() (the worker loop's skip): not due without a flow
 * table; due once it is made, with a flow and while one lives; not once
 * a poll found nothing to do; due again on a pa_lb_trace() question, so
 * that an idle lcore polling only when due answers it (no -EBUSY). */
START_TEST(test_poll_is_due_only_while_the_lcore_has_work)
{
	struct due_poller p = { 0 };
	struct pa_lb_trace_result tr;
	struct pa_test_frame f;
	struct pa_flow_key k;

	setup_lb("");
	ck_assert(!pa_lb_active(lb));
	ck_assert(!pa_lb_poll_due(lb, 0));
	setup_lb("{'name': 'dns4', 'vip': '10.0.0.40', 'port': 53, 'proto': 'udp',"
		" 'forward': 'ipip', 'backends': [{'addr': '10.1.0.1'}]}");
	ck_assert(pa_lb_active(lb));
	ck_assert(pa_lb_poll_due(lb, 0));
	pa_lb_poll(lb, 0, T0, false);
	ck_assert(!pa_lb_poll_due(lb, 0));
	frame_l4(&f, "198.51.100.7", "10.0.0.40", IPPROTO_UDP, 1000, 53, 0, 8);
	send_ipip4(&f, T0);
	ck_assert(pa_lb_poll_due(lb, 0));
	pa_lb_poll(lb, 0, T0 + 1, false);
	ck_assert(pa_lb_poll_due(lb, 0));
	/* the sweep that ages the flow, then a poll that finds nothing */
	pa_lb_poll(lb, 0, T0 + UDP_TMO * hz + 1, false);
	ck_assert_int_eq(lb_stat("flows"), 0);
	ck_assert(pa_lb_poll_due(lb, 0));
	pa_lb_poll(lb, 0, T0 + UDP_TMO * hz + 2, false);
	ck_assert(!pa_lb_poll_due(lb, 0));
	/* a question to the running, idle lcore */
	k = key_of(&f);
	ck_assert_int_eq(pthread_create(&p.tid, NULL, poll_when_due, &p), 0);
	ck_assert_int_eq(pa_lb_trace(lb, &k, false, &tr), 0);
	ck_assert(tr.service_found);
	ck_assert(!tr.existing_flow);
	__atomic_store_n(&p.stop, 1, __ATOMIC_RELEASE);
	pthread_join(p.tid, NULL);
	ck_assert(!pa_lb_poll_due(lb, 0));
}
END_TEST

/* ... and stays due while its flow index resizes (lb_ftab.h): grown by
 * its flows, then drained of them, an lcore polled only when due (as the
 * worker loop does) still takes its index back to the least size. */
START_TEST(test_poll_stays_due_until_the_flow_index_is_back_at_its_least)
{
	enum { N = 3000 };
	struct lb_worker *w;
	unsigned int i;
	uint64_t now;

	setup_lb_flows("{'name': 'dns4', 'vip': '10.0.0.40', 'port': 53,"
		" 'proto': 'udp', 'forward': 'ipip', 'backends':"
		" [{'addr': '10.1.0.1'}]}", 16384, 1);
	for (i = 0; i < N; i++) {
		dns4_flow(i);
		if (pa_lb_poll_due(lb, 0))
			pa_lb_poll(lb, 0, T0, false);
	}
	ck_assert_int_eq(lb_stat("flows"), N);
	w = lb->w[0];
	ck_assert_uint_gt(w->ftab.mask, w->ftab.min_mask);
	now = T0 + UDP_TMO * hz + 1;
	for (i = 0; i < 1000000 && pa_lb_poll_due(lb, 0); i++)
		pa_lb_poll(lb, 0, now + i, true);
	ck_assert(!pa_lb_poll_due(lb, 0));
	ck_assert_int_eq(lb_stat("flows"), 0);
	ck_assert(!lb_ftab_resize_due(&w->ftab));
	ck_assert_uint_eq(w->ftab.mask, w->ftab.min_mask);
}
END_TEST

/* The addresses lib/neigh resolves and lib/announce routes: each once,
 * in the order of first appearance, whatever the number of duplicates. */
START_TEST(test_addresses_list_each_vip_and_backend_once_in_first_seen_order)
{
	static const char *const want_be[] = { "10.1.0.1", "10.1.0.2",
		"10.1.0.3", "2001:db8:1::1", "2001:db8:1::2", "10.2.0.1",
		"10.2.0.2" };
	static const char *const want_vip[] = { "10.0.0.10",
		"2001:db8:10::10", "10.0.0.20" };
	struct pa_ip_addr *vips, *bes, a;
	unsigned int n_vips, n_bes, i;

	/* nat4 and nat4u share their VIP and backends; a backend with a
	 * mac is not resolved */
	setup_lb(SVC_WEB4 "," SVC_WEB6 "," SVC_NAT4 ","
		"{'name': 'dsr', 'vip': '10.0.0.10', 'port': 81, 'proto': 'tcp',"
		" 'forward': 'dsr', 'backends': [{'addr': '10.1.0.3',"
		" 'mac': '02:00:00:00:00:03'}, {'addr': '10.1.0.7',"
		" 'mac': '02:00:00:00:00:01'}]}");
	ck_assert_int_eq(pa_lb_addresses(lb, &vips, &n_vips, &bes, &n_bes), 0);
	ck_assert_uint_eq(n_vips, RTE_DIM(want_vip));
	for (i = 0; i < n_vips; i++) {
		a = addr_of(want_vip[i]);
		ck_assert_msg(pa_ip_equal(&vips[i], &a), "vip %u", i);
	}
	ck_assert_uint_eq(n_bes, RTE_DIM(want_be));
	for (i = 0; i < n_bes; i++) {
		a = addr_of(want_be[i]);
		ck_assert_msg(pa_ip_equal(&bes[i], &a), "backend %u", i);
	}
	free(vips);
	free(bes);
}
END_TEST

TCase *
lb_tcase_control(void)
{
	TCase *tc = tcase_create("control");

	tcase_set_timeout(tc, 120);
	tcase_add_checked_fixture(tc, NULL, teardown_lb);
	tcase_add_test(tc, test_duplicate_service_name_or_vip_port_proto_is_eexist);
	tcase_add_test(tc, test_unknown_service_or_backend_is_enoent_and_duplicate_backend_eexist);
	tcase_add_test(tc, test_export_reflects_added_and_deleted_services_and_backends);
	tcase_add_test(tc, test_deleted_service_no_longer_balances_and_its_flows_are_reaped);
	tcase_add_test(tc, test_trace_gives_the_maglev_choice_for_a_new_flow_then_the_flows_backend);
	tcase_add_test(tc, test_trace_reports_the_existing_flows_backend_on_an_rr_service);
	tcase_add_test(tc, test_poll_is_due_only_while_the_lcore_has_work);
	tcase_add_test(tc, test_poll_stays_due_until_the_flow_index_is_back_at_its_least);
	tcase_add_test(tc, test_addresses_list_each_vip_and_backend_once_in_first_seen_order);
	return tc;
}
