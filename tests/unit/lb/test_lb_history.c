/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_lb: recovery across table changes (lb.table_history_s): a TCP
 * packet without SYN that matches no flow goes to the backend of the
 * table current lb.table_history_s ago, if still usable; SYNs and the
 * other schedulers take the current choice.
 *
 * The control path stamps a replaced table with the TSC; the packets are
 * sent at times relative to that stamp (the service's newest history
 * entry), read from the published service.
 */

#include "lb_fixture.h"

#define N_HIST_FLOWS	300
#define WINDOW_S	60		/* the default */

static void
teardown_history(void)
{
	teardown_lb();
	lb_extra = "";
}

/* Flow @p i of web4 (client 198.51.x.y:20000+i), with TCP @p flags. */
static void
hist_frame(unsigned int i, uint8_t flags, struct pa_test_frame *f)
{
	char src[32];

	snprintf(src, sizeof(src), "198.51.%u.%u", 100 + i / 200, 1 + i % 200);
	frame_l4(f, src, "10.0.0.10", IPPROTO_TCP, (uint16_t)(20000 + i), 80,
		flags, 10);
}

/* The current table's choice for flow @p i (as trace says of a new
 * flow), network order. */
static uint32_t
choice(unsigned int i)
{
	struct pa_lb_trace_result tr;
	struct pa_test_frame f;
	struct pa_flow_key k;

	hist_frame(i, TCP_ACK, &f);
	k = key_of(&f);
	REQUIRE(pa_lb_trace(lb, &k, false, &tr) == 0);
	REQUIRE(tr.backend_found);
	return tr.backend.v4.s_addr;
}

static void
choices(uint32_t *out)
{
	unsigned int i;

	for (i = 0; i < N_HIST_FLOWS; i++)
		out[i] = choice(i);
}

/* Send flow @p i with @p flags at @p now: its backend. */
static uint32_t
send_flow(unsigned int i, uint8_t flags, uint64_t now)
{
	struct pa_test_frame f;

	hist_frame(i, flags, &f);
	return send_ipip4(&f, now);
}

/* The published service @p name. */
static const struct lb_svc *
svc_of(const char *name)
{
	unsigned int i;

	for (i = 0; i < PA_LB_MAX_SERVICES; i++)
		if (lb->live->svc[i] != NULL &&
		    strcmp(lb->live->svc[i]->name, name) == 0)
			return lb->live->svc[i];
	ck_abort_msg("no service '%s'", name);
	return NULL;
}

/* When web4's current table became current (its newest history entry's
 * stamp). */
static uint64_t
stamp(void)
{
	const struct lb_svc *s = svc_of("web4");

	ck_assert_uint_gt(s->n_hist, 0);
	return s->hist[0].until;
}

static unsigned int
n_differ(const uint32_t *a, const uint32_t *b)
{
	unsigned int i, n = 0;

	for (i = 0; i < N_HIST_FLOWS; i++)
		n += a[i] != b[i];
	return n;
}

START_TEST(test_history_ack_goes_to_its_old_backend_within_the_window_then_the_new_choice)
{
	uint32_t before[N_HIST_FLOWS], after[N_HIST_FLOWS];
	unsigned int i, moved = 0;
	uint64_t t;

	setup_lb(SVC_WEB4);
	choices(before);
	ck_assert_int_eq(add_backend("web4", "{'addr': '10.1.0.4'}"), 0);
	choices(after);
	ck_assert_uint_gt(n_differ(before, after), 10);
	t = stamp();
	/* within the window: the table before the add */
	for (i = 0; i < N_HIST_FLOWS / 2; i++) {
		ck_assert_msg(send_flow(i, TCP_ACK, t + hz) == before[i],
			"flow %u: not its backend before the change", i);
		moved += before[i] != after[i];
	}
	ck_assert_uint_gt(moved, 0);
	ck_assert_int_eq(lb_stat("flows_recovered"), moved);
	/* the window over: the current table */
	for (; i < N_HIST_FLOWS; i++)
		ck_assert_msg(send_flow(i, TCP_ACK, t + WINDOW_S * hz) ==
			after[i], "flow %u: not the current choice", i);
	ck_assert_int_eq(lb_stat("flows_recovered"), moved);
	/* the recovered flows keep their entry's backend after the window */
	for (i = 0; i < N_HIST_FLOWS / 2; i++)
		ck_assert_uint_eq(send_flow(i, TCP_ACK,
			t + (WINDOW_S + 1) * hz), before[i]);
	ck_assert_int_eq(lb_stat("flows_recovered"), moved);
}
END_TEST

START_TEST(test_history_syn_takes_the_current_choice)
{
	uint32_t before[N_HIST_FLOWS], after[N_HIST_FLOWS];
	unsigned int i;
	uint64_t t;

	setup_lb(SVC_WEB4);
	choices(before);
	ck_assert_int_eq(add_backend("web4", "{'addr': '10.1.0.4'}"), 0);
	choices(after);
	ck_assert_uint_gt(n_differ(before, after), 10);
	t = stamp();
	for (i = 0; i < N_HIST_FLOWS; i++)
		ck_assert_msg(send_flow(i, TCP_SYN, t + hz) == after[i],
			"flow %u: a SYN not to the current choice", i);
	ck_assert_int_eq(lb_stat("flows_recovered"), 0);
}
END_TEST

START_TEST(test_history_deleted_old_backend_falls_back_to_the_current_choice)
{
	uint32_t before[N_HIST_FLOWS], after[N_HIST_FLOWS];
	const uint32_t gone = ip4("10.1.0.1");
	unsigned int i, n_gone = 0;
	uint64_t t;

	setup_lb(SVC_WEB4);
	choices(before);
	ck_assert_int_eq(delete_backend("web4", "10.1.0.1"), 0);
	choices(after);
	t = stamp();
	for (i = 0; i < N_HIST_FLOWS; i++) {
		n_gone += before[i] == gone;
		ck_assert_uint_ne(after[i], gone);
		ck_assert_uint_eq(send_flow(i, TCP_ACK, t + hz), after[i]);
	}
	ck_assert_uint_gt(n_gone, 10);
	ck_assert_int_eq(lb_stat("flows_recovered"), 0);
}
END_TEST

START_TEST(test_history_re_added_old_backend_is_not_the_one_it_was)
{
	uint32_t before[N_HIST_FLOWS], after[N_HIST_FLOWS];
	unsigned int i;
	uint64_t t;

	/* deleted, then a backend of the same address added: a new slot
	 * (the old one a hole), so the old table's slot is no longer it */
	setup_lb(SVC_WEB4);
	choices(before);
	ck_assert_int_eq(delete_backend("web4", "10.1.0.1"), 0);
	ck_assert_int_eq(add_backend("web4", "{'addr': '10.1.0.4'}"), 0);
	ck_assert_int_eq(add_backend("web4", "{'addr': '10.1.0.1'}"), 0);
	choices(after);
	t = stamp();
	for (i = 0; i < N_HIST_FLOWS; i++) {
		uint32_t be = send_flow(i, TCP_ACK, t + hz);

		if (before[i] == ip4("10.1.0.1"))
			ck_assert_uint_eq(be, after[i]);
		else
			ck_assert_uint_eq(be, before[i]);
	}
}
END_TEST

START_TEST(test_history_down_old_backend_falls_back_drained_one_keeps_its_flows)
{
	uint32_t before[N_HIST_FLOWS], after[N_HIST_FLOWS];
	const uint32_t down = ip4("10.1.0.2"), drain = ip4("10.1.0.3");
	unsigned int i, n_drain = 0, n_down = 0;
	uint64_t t;

	setup_lb(SVC_WEB4);
	choices(before);
	ck_assert_int_eq(set_state("web4", "10.1.0.2", PA_LB_DOWN), 0);
	ck_assert_int_eq(set_state("web4", "10.1.0.3", PA_LB_DRAIN), 0);
	choices(after);
	t = stamp();
	for (i = 0; i < N_HIST_FLOWS; i++) {
		uint32_t be = send_flow(i, TCP_ACK, t + hz);

		ck_assert_uint_eq(after[i], ip4("10.1.0.1"));
		if (before[i] == down) {
			n_down++;
			ck_assert_uint_eq(be, after[i]);
		} else {
			n_drain += before[i] == drain;
			ck_assert_uint_eq(be, before[i]);
		}
	}
	ck_assert_uint_gt(n_down, 10);
	ck_assert_uint_gt(n_drain, 10);
	ck_assert_int_eq(lb_stat("flows_recovered"), n_drain);
}
END_TEST

START_TEST(test_history_several_changes_use_the_table_of_now_minus_the_window)
{
	uint32_t c0[N_HIST_FLOWS], c1[N_HIST_FLOWS], c2[N_HIST_FLOWS];
	const struct lb_svc *s;
	uint64_t t1, t2, w = WINDOW_S * hz;
	unsigned int i;

	setup_lb(SVC_WEB4);
	choices(c0);
	ck_assert_int_eq(add_backend("web4", "{'addr': '10.1.0.4'}"), 0);
	t1 = stamp();
	choices(c1);
	ck_assert_int_eq(add_backend("web4", "{'addr': '10.1.0.5'}"), 0);
	choices(c2);
	s = svc_of("web4");
	ck_assert_uint_eq(s->n_hist, 2);
	t2 = s->hist[0].until;
	ck_assert_uint_eq(s->hist[1].until, t1);
	ck_assert_uint_gt(t2, t1);
	ck_assert_uint_gt(n_differ(c0, c1), 10);
	ck_assert_uint_gt(n_differ(c1, c2), 10);
	/* now - window before both changes: the first table; between them:
	 * the second; after both: the current */
	for (i = 0; i < 100; i++)
		ck_assert_uint_eq(send_flow(i, TCP_ACK, t1 + hz), c0[i]);
	for (; i < 200; i++)
		ck_assert_uint_eq(send_flow(i, TCP_ACK,
			t1 + w + (t2 - t1) / 2), c1[i]);
	for (; i < N_HIST_FLOWS; i++)
		ck_assert_uint_eq(send_flow(i, TCP_ACK, t2 + w), c2[i]);
}
END_TEST

START_TEST(test_history_keeps_eight_generations_and_inherits_them_unchanged)
{
	char a[32];
	const struct lb_svc *s;
	uint64_t newest;
	unsigned int i;

	setup_lb(SVC_WEB4);
	for (i = 0; i < 10; i++) {
		snprintf(a, sizeof(a), "{'addr': '10.1.1.%u'}", 1 + i);
		ck_assert_int_eq(add_backend("web4", a), 0);
	}
	s = svc_of("web4");
	ck_assert_uint_eq(s->n_hist, LB_HIST_MAX);
	for (i = 1; i < s->n_hist; i++)
		ck_assert_uint_gt(s->hist[i - 1].until, s->hist[i].until);
	newest = s->hist[0].until;
	/* a rebuild that leaves the table as it was adds none */
	ck_assert_int_eq(set_state("web4", "10.1.1.1", PA_LB_UP), 0);
	s = svc_of("web4");
	ck_assert_uint_eq(s->n_hist, LB_HIST_MAX);
	ck_assert_uint_eq(s->hist[0].until, newest);
}
END_TEST

START_TEST(test_history_applies_when_the_flow_table_is_full)
{
	uint32_t before[N_HIST_FLOWS], after[N_HIST_FLOWS];
	struct pa_test_frame f;
	unsigned int i;
	char src[32];
	uint64_t t;

	setup_lb(SVC_WEB4);
	choices(before);
	ck_assert_int_eq(add_backend("web4", "{'addr': '10.1.0.4'}"), 0);
	choices(after);
	t = stamp();
	/* other clients fill the table (1024 flows) */
	for (i = 0; i < 2048; i++) {
		snprintf(src, sizeof(src), "203.0.%u.%u", 113 + i / 250,
			1 + i % 250);
		frame_l4(&f, src, "10.0.0.10", IPPROTO_TCP,
			(uint16_t)(1000 + i), 80, TCP_SYN, 0);
		send_ipip4(&f, t + hz);
	}
	ck_assert_int_gt(lb_stat("flow_table_full"), 0);
	for (i = 0; i < N_HIST_FLOWS; i++)
		ck_assert_uint_eq(send_flow(i, TCP_ACK, t + hz), before[i]);
	ck_assert_int_gt(lb_stat("flow_table_full"), N_HIST_FLOWS / 2);
	ck_assert_uint_gt(n_differ(before, after), 10);
}
END_TEST

START_TEST(test_history_zero_is_off)
{
	uint32_t before[N_HIST_FLOWS], after[N_HIST_FLOWS];
	unsigned int i;

	lb_extra = "'table_history_s': 0,";
	setup_lb(SVC_WEB4);
	choices(before);
	ck_assert_int_eq(add_backend("web4", "{'addr': '10.1.0.4'}"), 0);
	choices(after);
	ck_assert_uint_gt(n_differ(before, after), 10);
	ck_assert_uint_eq(svc_of("web4")->n_hist, 0);
	for (i = 0; i < N_HIST_FLOWS; i++)
		ck_assert_uint_eq(send_flow(i, TCP_ACK, rte_get_tsc_cycles()),
			after[i]);
	ck_assert_int_eq(lb_stat("flows_recovered"), 0);
}
END_TEST

START_TEST(test_history_rr_and_udp_services_keep_none)
{
	setup_lb("{'name': 'rr4', 'vip': '10.0.0.50', 'port': 80, 'proto': 'tcp',"
		" 'forward': 'ipip', 'scheduler': 'rr', 'backends':"
		" [{'addr': '10.1.0.1'}, {'addr': '10.1.0.2'}]},"
		"{'name': 'dns', 'vip': '10.0.0.50', 'port': 53, 'proto': 'udp',"
		" 'forward': 'ipip', 'backends':"
		" [{'addr': '10.1.0.1'}, {'addr': '10.1.0.2'}]}");
	ck_assert_int_eq(add_backend("rr4", "{'addr': '10.1.0.3'}"), 0);
	ck_assert_int_eq(add_backend("dns", "{'addr': '10.1.0.3'}"), 0);
	ck_assert_uint_eq(svc_of("rr4")->n_hist, 0);
	ck_assert_uint_eq(svc_of("dns")->n_hist, 0);
}
END_TEST

START_TEST(test_history_config_range_and_default)
{
	char err[PA_CONFIG_ERR_MAX];
	struct pa_config *c;
	char *text;

	setup_lb(SVC_WEB4);
	ck_assert_uint_eq(cfg->lb.table_history_s, WINDOW_S);
	text = pa_test_dq("{" DOC_PORTS ", 'lb': {'table_history_s': 3601,"
		" 'services': []}}");
	c = pa_config_load_string(text, NULL, err, sizeof(err));
	free(text);
	ck_assert_ptr_null(c);
	ck_assert_msg(strstr(err, "table_history_s") != NULL, "%s", err);
}
END_TEST

TCase *
lb_tcase_history(void)
{
	TCase *tc = tcase_create("history");

	tcase_add_checked_fixture(tc, NULL, teardown_history);
	tcase_add_test(tc, test_history_ack_goes_to_its_old_backend_within_the_window_then_the_new_choice);
	tcase_add_test(tc, test_history_syn_takes_the_current_choice);
	tcase_add_test(tc, test_history_deleted_old_backend_falls_back_to_the_current_choice);
	tcase_add_test(tc, test_history_re_added_old_backend_is_not_the_one_it_was);
	tcase_add_test(tc, test_history_down_old_backend_falls_back_drained_one_keeps_its_flows);
	tcase_add_test(tc, test_history_several_changes_use_the_table_of_now_minus_the_window);
	tcase_add_test(tc, test_history_keeps_eight_generations_and_inherits_them_unchanged);
	tcase_add_test(tc, test_history_applies_when_the_flow_table_is_full);
	tcase_add_test(tc, test_history_zero_is_off);
	tcase_add_test(tc, test_history_rr_and_udp_services_keep_none);
	tcase_add_test(tc, test_history_config_range_and_default);
	return tc;
}
