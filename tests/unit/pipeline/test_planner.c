/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests of the lcore planner (lib/pipeline/planner.c). */
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "pa_pipeline.h"
#include "pa_test_main.h"

static struct pa_config_pipeline
pc_default(enum pa_pipeline_mode mode)
{
	struct pa_config_pipeline pc;

	memset(&pc, 0, sizeof(pc));
	pc.mode = mode;
	pc.ring_size = 1024;
	pc.burst = 32;
	pc.tx_drain_us = 100;
	return pc;
}

/* lcores 1..n, the first half on socket 0, the rest on socket 1 */
static unsigned int
two_sockets(struct pa_plan_lcore *a, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		a[i].lcore_id = i + 1;
		a[i].socket = i < n / 2 ? 0 : 1;
	}
	return n;
}

START_TEST(rtc_auto_uses_every_lcore_on_the_port_socket)
{
	struct pa_config_pipeline pc = pc_default(PA_PIPELINE_RTC);
	struct pa_plan_lcore avail[8];
	struct pa_plan plan;
	int sockets[1] = { 1 };
	char err[256];
	unsigned int i;

	two_sockets(avail, 8);
	ck_assert_int_eq(pa_plan_make(&pc, avail, 8, sockets, 1, &plan, err,
		sizeof(err)), 0);
	ck_assert_uint_eq(plan.n[PA_CONFIG_STAGE_WORKER], 4);
	for (i = 0; i < 4; i++)
		ck_assert_uint_eq(plan.lcores[PA_CONFIG_STAGE_WORKER][i], 5 + i);
	ck_assert_uint_eq(plan.n[PA_CONFIG_STAGE_RX], 0);
}
END_TEST

START_TEST(rtc_auto_falls_back_to_other_sockets)
{
	struct pa_config_pipeline pc = pc_default(PA_PIPELINE_RTC);
	struct pa_plan_lcore avail[2] = { { 1, 0 }, { 2, 0 } };
	struct pa_plan plan;
	int sockets[1] = { 1 };
	char err[256];

	ck_assert_int_eq(pa_plan_make(&pc, avail, 2, sockets, 1, &plan, err,
		sizeof(err)), 0);
	ck_assert_uint_eq(plan.n[PA_CONFIG_STAGE_WORKER], 2);
}
END_TEST

START_TEST(pipeline_auto_with_no_lcore_is_refused)
{
	struct pa_config_pipeline pc = pc_default(PA_PIPELINE_STAGED);
	struct pa_plan_lcore avail[1] = { { 1, 0 } };
	struct pa_plan plan;
	int sockets[1] = { 0 };
	char err[256];

	ck_assert_int_eq(pa_plan_make(&pc, avail, 0, sockets, 1, &plan, err,
		sizeof(err)), -ENODEV);
	ck_assert_ptr_nonnull(strstr(err, "needs a worker lcore"));
	ck_assert_int_eq(strncmp(err, "$.pipeline.mode", 15), 0);
}
END_TEST

/* Fewer lcores than stages: two run rx+classify and lb+tx (one ring
 * hop); three rx+tx, classify and lb. */
START_TEST(pipeline_auto_puts_stages_together_below_four_lcores)
{
	static const unsigned int want[4][4] = {
		/* rx, classify, lb, tx for 1, 2, 3 lcores (ids 1..) */
		{ 0 }, { 1, 1, 1, 1 }, { 1, 1, 2, 2 }, { 1, 2, 3, 1 },
	};
	struct pa_config_pipeline pc = pc_default(PA_PIPELINE_STAGED);
	struct pa_plan_lcore avail[3];
	struct pa_plan_layout lay;
	struct pa_plan plan;
	int sockets[1] = { 0 };
	char err[256];
	unsigned int n, s;

	for (n = 1; n <= 3; n++) {
		two_sockets(avail, n);
		ck_assert_int_eq(pa_plan_make(&pc, avail, n, sockets, 1, &plan,
			err, sizeof(err)), 0);
		for (s = 0; s < PA_CONFIG_STAGE_WORKER; s++) {
			ck_assert_uint_eq(plan.n[s], 1);
			ck_assert_uint_eq(plan.lcores[s][0], want[n][s]);
		}
		ck_assert_int_eq(pa_plan_layout(&plan, &lay), 0);
		ck_assert_uint_eq(lay.n, n);
	}
	/* two: rx+classify and lb+tx */
	two_sockets(avail, 2);
	ck_assert_int_eq(pa_plan_make(&pc, avail, 2, sockets, 1, &plan, err,
		sizeof(err)), 0);
	ck_assert_int_eq(pa_plan_layout(&plan, &lay), 0);
	ck_assert_str_eq(pa_plan_stages_name(lay.unit[0].stages),
		"rx+classify");
	ck_assert_str_eq(pa_plan_stages_name(lay.unit[1].stages), "lb+tx");
	/* one ring, from classify to lb: a segment each */
	ck_assert_uint_eq(lay.unit[0].n_seg, 1);
	ck_assert_uint_eq(lay.unit[0].seg[0].first, PA_STAGE_RX);
	ck_assert_uint_eq(lay.unit[0].seg[0].last, PA_STAGE_CLASSIFY);
	ck_assert_uint_eq(lay.unit[1].n_seg, 1);
	ck_assert_uint_eq(lay.unit[1].seg[0].first, PA_STAGE_LB);
	ck_assert_uint_eq(lay.unit[1].seg[0].last, PA_STAGE_TX);
}
END_TEST

START_TEST(pipeline_auto_one_lcore_per_stage_then_classify_lb_rx_tx)
{
	struct pa_config_pipeline pc = pc_default(PA_PIPELINE_STAGED);
	struct pa_plan_lcore avail[7];
	struct pa_plan plan;
	char err[256];
	unsigned int i;

	for (i = 0; i < 7; i++) {
		avail[i].lcore_id = 10 + i;
		avail[i].socket = 0;
	}
	ck_assert_int_eq(pa_plan_make(&pc, avail, 7, NULL, 0, &plan, err,
		sizeof(err)), 0);
	ck_assert_uint_eq(plan.n[PA_CONFIG_STAGE_RX], 2);
	ck_assert_uint_eq(plan.n[PA_CONFIG_STAGE_CLASSIFY], 2);
	ck_assert_uint_eq(plan.n[PA_CONFIG_STAGE_LB], 2);
	ck_assert_uint_eq(plan.n[PA_CONFIG_STAGE_TX], 1);
	ck_assert_uint_eq(plan.lcores[PA_CONFIG_STAGE_RX][0], 10);
	ck_assert_uint_eq(plan.lcores[PA_CONFIG_STAGE_CLASSIFY][0], 11);
	ck_assert_uint_eq(plan.lcores[PA_CONFIG_STAGE_LB][0], 12);
	ck_assert_uint_eq(plan.lcores[PA_CONFIG_STAGE_TX][0], 13);
	ck_assert_uint_eq(plan.lcores[PA_CONFIG_STAGE_CLASSIFY][1], 14);
	ck_assert_uint_eq(plan.lcores[PA_CONFIG_STAGE_LB][1], 15);
	ck_assert_uint_eq(plan.lcores[PA_CONFIG_STAGE_RX][1], 16);
	ck_assert_uint_eq(plan.n[PA_CONFIG_STAGE_WORKER], 0);
}
END_TEST

START_TEST(pipeline_auto_prefers_port_socket)
{
	struct pa_config_pipeline pc = pc_default(PA_PIPELINE_STAGED);
	struct pa_plan_lcore avail[8];
	struct pa_plan plan;
	int sockets[2] = { 1, 1 };
	char err[256];
	unsigned int s;

	two_sockets(avail, 8);
	ck_assert_int_eq(pa_plan_make(&pc, avail, 8, sockets, 2, &plan, err,
		sizeof(err)), 0);
	for (s = 0; s < PA_CONFIG_STAGE_WORKER; s++) {
		ck_assert_uint_eq(plan.n[s], 1);
		ck_assert_uint_ge(plan.lcores[s][0], 5);
	}
}
END_TEST

START_TEST(explicit_lcores_are_kept)
{
	struct pa_config_pipeline pc = pc_default(PA_PIPELINE_STAGED);
	struct pa_plan_lcore avail[4];
	struct pa_plan plan;
	char err[256];

	two_sockets(avail, 4);
	pc.lcores_set = true;
	pc.n_lcores[PA_CONFIG_STAGE_RX] = 1;
	pc.lcores[PA_CONFIG_STAGE_RX][0] = 4;
	pc.n_lcores[PA_CONFIG_STAGE_CLASSIFY] = 1;
	pc.lcores[PA_CONFIG_STAGE_CLASSIFY][0] = 3;
	pc.n_lcores[PA_CONFIG_STAGE_LB] = 1;
	pc.lcores[PA_CONFIG_STAGE_LB][0] = 2;
	pc.n_lcores[PA_CONFIG_STAGE_TX] = 1;
	pc.lcores[PA_CONFIG_STAGE_TX][0] = 1;
	ck_assert_int_eq(pa_plan_make(&pc, avail, 4, NULL, 0, &plan, err,
		sizeof(err)), 0);
	ck_assert_uint_eq(plan.lcores[PA_CONFIG_STAGE_RX][0], 4);
	ck_assert_uint_eq(plan.lcores[PA_CONFIG_STAGE_TX][0], 1);
}
END_TEST

START_TEST(explicit_unavailable_lcore_is_refused_with_its_path)
{
	struct pa_config_pipeline pc = pc_default(PA_PIPELINE_RTC);
	struct pa_plan_lcore avail[2];
	struct pa_plan plan;
	char err[256];

	two_sockets(avail, 2);
	pc.lcores_set = true;
	pc.n_lcores[PA_CONFIG_STAGE_WORKER] = 2;
	pc.lcores[PA_CONFIG_STAGE_WORKER][0] = 1;
	pc.lcores[PA_CONFIG_STAGE_WORKER][1] = 7;
	ck_assert_int_eq(pa_plan_make(&pc, avail, 2, NULL, 0, &plan, err,
		sizeof(err)), -ENODEV);
	ck_assert_int_eq(strncmp(err, "$.pipeline.lcores.worker[1]", 27), 0);
	ck_assert_ptr_nonnull(strstr(err, "lcore 7"));
}
END_TEST

START_TEST(explicit_pipeline_missing_stage_is_refused)
{
	struct pa_config_pipeline pc = pc_default(PA_PIPELINE_STAGED);
	struct pa_plan_lcore avail[4];
	struct pa_plan plan;
	char err[256];

	two_sockets(avail, 4);
	pc.lcores_set = true;
	pc.n_lcores[PA_CONFIG_STAGE_RX] = 1;
	pc.lcores[PA_CONFIG_STAGE_RX][0] = 1;
	ck_assert_int_eq(pa_plan_make(&pc, avail, 4, NULL, 0, &plan, err,
		sizeof(err)), -EINVAL);
	ck_assert_int_eq(strncmp(err, "$.pipeline.lcores.classify", 26), 0);
}
END_TEST

START_TEST(wanted_lcores_auto_and_explicit)
{
	struct pa_config_pipeline pc = pc_default(PA_PIPELINE_RTC);
	unsigned int ids[16];

	ck_assert_uint_eq(pa_plan_wanted_lcores(&pc, ids, 16), 1);
	ck_assert_uint_eq(ids[0], 1);
	pc.mode = PA_PIPELINE_STAGED;
	ck_assert_uint_eq(pa_plan_wanted_lcores(&pc, ids, 16), 4);
	ck_assert_uint_eq(ids[3], 4);
	pc.lcores_set = true;
	pc.n_lcores[PA_CONFIG_STAGE_RX] = 2;
	pc.lcores[PA_CONFIG_STAGE_RX][0] = 5;
	pc.lcores[PA_CONFIG_STAGE_RX][1] = 9;
	pc.n_lcores[PA_CONFIG_STAGE_TX] = 1;
	pc.lcores[PA_CONFIG_STAGE_TX][0] = 5;
	ck_assert_uint_eq(pa_plan_wanted_lcores(&pc, ids, 16), 2);
	ck_assert_uint_eq(ids[0], 5);
	ck_assert_uint_eq(ids[1], 9);
}
END_TEST

START_TEST(lcores_arg_pins_one_cpu_each_when_enough)
{
	unsigned int ids[1] = { 1 }, cpus[2] = { 2, 3 };
	char buf[64];

	ck_assert_int_eq(pa_plan_lcores_arg(ids, 1, cpus, 2, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "0@2,1@3");
}
END_TEST

START_TEST(lcores_arg_floats_when_more_lcores_than_cpus)
{
	unsigned int ids[4] = { 1, 2, 3, 4 }, cpus[2] = { 0, 1 };
	char buf[64];

	ck_assert_int_eq(pa_plan_lcores_arg(ids, 4, cpus, 2, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "(0,1,2,3,4)@(0,1)");
}
END_TEST

START_TEST(lcores_arg_reports_short_buffer)
{
	unsigned int ids[4] = { 1, 2, 3, 4 }, cpus[2] = { 0, 1 };
	char buf[8];

	ck_assert_int_eq(pa_plan_lcores_arg(ids, 4, cpus, 2, buf, sizeof(buf)),
		-ENOSPC);
}
END_TEST

START_TEST(order_cpus_puts_the_ports_node_first_stably)
{
	unsigned int cpus[6] = { 0, 1, 2, 3, 4, 5 };
	int nodes[6] = { 0, 1, 0, 1, 0, 1 };

	pa_plan_order_cpus(cpus, nodes, 6, 1);
	ck_assert_uint_eq(cpus[0], 1);
	ck_assert_uint_eq(cpus[1], 3);
	ck_assert_uint_eq(cpus[2], 5);
	ck_assert_uint_eq(cpus[3], 0);
	ck_assert_uint_eq(cpus[4], 2);
	ck_assert_uint_eq(cpus[5], 4);
}
END_TEST

START_TEST(order_cpus_without_a_node_changes_nothing)
{
	unsigned int cpus[3] = { 7, 3, 5 };
	int nodes[3] = { 1, 0, 1 };

	pa_plan_order_cpus(cpus, nodes, 3, -1);
	ck_assert_uint_eq(cpus[0], 7);
	ck_assert_uint_eq(cpus[1], 3);
	ck_assert_uint_eq(cpus[2], 5);
}
END_TEST

/* An explicit pipeline plan, one list per stage (0-terminated). */
static void
staged_plan(struct pa_plan *plan, const unsigned int l[4][8])
{
	unsigned int s, i;

	memset(plan, 0, sizeof(*plan));
	plan->mode = PA_PIPELINE_STAGED;
	for (s = 0; s < 4; s++)
		for (i = 0; l[s][i] != 0; i++)
			plan->lcores[s][plan->n[s]++] = l[s][i];
}

static void
ck_seg(const struct pa_plan_unit *u, unsigned int k, unsigned int first,
		unsigned int last)
{
	ck_assert_uint_gt(u->n_seg, k);
	ck_assert_uint_eq(u->seg[k].first, first);
	ck_assert_uint_eq(u->seg[k].last, last);
}

/* CONTRACT section 4: "rx": [1], "tx": [1], "classify": [2], "lb": [2] */
START_TEST(layout_contract_example)
{
	static const unsigned int l[4][8] = { { 1 }, { 2 }, { 2 }, { 1 } };
	struct pa_plan_layout lay;
	struct pa_plan plan;

	staged_plan(&plan, l);
	ck_assert_int_eq(pa_plan_layout(&plan, &lay), 0);
	ck_assert_uint_eq(lay.n, 2);
	ck_assert_uint_eq(lay.unit[0].lcore_id, 1);
	ck_assert_str_eq(pa_plan_stages_name(lay.unit[0].stages), "rx+tx");
	ck_assert_str_eq(pa_plan_stages_name(lay.unit[1].stages), "classify+lb");
	/* lcore 1: ports -> rx -> ring; ring -> tx */
	ck_assert_uint_eq(lay.unit[0].n_seg, 2);
	ck_seg(&lay.unit[0], 0, PA_STAGE_RX, PA_STAGE_RX);
	ck_seg(&lay.unit[0], 1, PA_STAGE_TX, PA_STAGE_TX);
	/* lcore 2: ring -> classify -> lb -> ring */
	ck_assert_uint_eq(lay.unit[1].n_seg, 1);
	ck_seg(&lay.unit[1], 0, PA_STAGE_CLASSIFY, PA_STAGE_LB);
	ck_assert(pa_plan_unit_hops(&lay.unit[0], PA_STAGE_RX));
	ck_assert(!pa_plan_unit_hops(&lay.unit[1], PA_STAGE_CLASSIFY));
	ck_assert(pa_plan_unit_hops(&lay.unit[1], PA_STAGE_LB));
	ck_assert_uint_eq(lay.n_stage[PA_STAGE_TX], 1);
	ck_assert_uint_eq(lay.of_stage[PA_STAGE_TX][0], 0);
}
END_TEST

START_TEST(layout_one_lcore_all_stages)
{
	static const unsigned int l[4][8] = { { 3 }, { 3 }, { 3 }, { 3 } };
	struct pa_plan_layout lay;
	struct pa_plan plan;

	staged_plan(&plan, l);
	ck_assert_int_eq(pa_plan_layout(&plan, &lay), 0);
	ck_assert_uint_eq(lay.n, 1);
	ck_assert_uint_eq(lay.unit[0].n_seg, 1);
	ck_seg(&lay.unit[0], 0, PA_STAGE_RX, PA_STAGE_TX);
	ck_assert_str_eq(pa_plan_stages_name(lay.unit[0].stages),
		"rx+classify+lb+tx");
}
END_TEST

/* rx on 1 and 2, classify on 1 and 3, lb+tx on 4 and 1 and 2 doing tx:
 * lcore 2's rx goes by ring to classify (1 and 3); lcore 1 keeps what
 * it receives, and also takes classify from lcore 2's ring. */
START_TEST(layout_partly_together)
{
	static const unsigned int l[4][8] = {
		{ 1, 2 }, { 1, 3 }, { 4 }, { 1, 2 },
	};
	struct pa_plan_layout lay;
	struct pa_plan plan;

	staged_plan(&plan, l);
	ck_assert_int_eq(pa_plan_layout(&plan, &lay), 0);
	ck_assert_uint_eq(lay.n, 4);
	/* order of first appearance: 1, 2, 3, 4 */
	ck_assert_uint_eq(lay.unit[0].lcore_id, 1);
	ck_assert_uint_eq(lay.unit[1].lcore_id, 2);
	ck_assert_uint_eq(lay.unit[2].lcore_id, 3);
	ck_assert_uint_eq(lay.unit[3].lcore_id, 4);
	ck_assert_str_eq(pa_plan_stages_name(lay.unit[0].stages),
		"rx+classify+tx");
	ck_assert_uint_eq(lay.unit[0].n_seg, 3);
	ck_seg(&lay.unit[0], 0, PA_STAGE_RX, PA_STAGE_CLASSIFY);
	ck_seg(&lay.unit[0], 1, PA_STAGE_CLASSIFY, PA_STAGE_CLASSIFY);
	ck_seg(&lay.unit[0], 2, PA_STAGE_TX, PA_STAGE_TX);
	ck_assert_str_eq(pa_plan_stages_name(lay.unit[1].stages), "rx+tx");
	ck_assert_uint_eq(lay.unit[1].n_seg, 2);
	ck_seg(&lay.unit[1], 0, PA_STAGE_RX, PA_STAGE_RX);
	ck_seg(&lay.unit[1], 1, PA_STAGE_TX, PA_STAGE_TX);
	ck_assert_uint_eq(lay.unit[2].n_seg, 1);
	ck_seg(&lay.unit[2], 0, PA_STAGE_CLASSIFY, PA_STAGE_CLASSIFY);
	ck_assert_uint_eq(lay.unit[3].n_seg, 1);
	ck_seg(&lay.unit[3], 0, PA_STAGE_LB, PA_STAGE_LB);
	ck_assert(!pa_plan_unit_hops(&lay.unit[0], PA_STAGE_RX));
	ck_assert(pa_plan_unit_hops(&lay.unit[1], PA_STAGE_RX));
}
END_TEST

START_TEST(layout_classic_and_rtc)
{
	static const unsigned int l[4][8] = { { 1 }, { 2, 5 }, { 3 }, { 4 } };
	struct pa_plan_layout lay;
	struct pa_plan plan;
	unsigned int i;

	staged_plan(&plan, l);
	ck_assert_int_eq(pa_plan_layout(&plan, &lay), 0);
	ck_assert_uint_eq(lay.n, 5);
	for (i = 0; i < lay.n; i++)
		ck_assert_uint_eq(lay.unit[i].n_seg, 1);
	ck_assert_str_eq(pa_plan_stages_name(lay.unit[1].stages), "classify");
	ck_assert_uint_eq(lay.unit[2].lcore_id, 5);	/* first appearance */
	ck_assert_uint_eq(lay.n_stage[PA_STAGE_CLASSIFY], 2);

	memset(&plan, 0, sizeof(plan));
	plan.mode = PA_PIPELINE_RTC;
	plan.n[PA_CONFIG_STAGE_WORKER] = 2;
	plan.lcores[PA_CONFIG_STAGE_WORKER][0] = 1;
	plan.lcores[PA_CONFIG_STAGE_WORKER][1] = 2;
	ck_assert_int_eq(pa_plan_layout(&plan, &lay), 0);
	ck_assert_uint_eq(lay.n, 2);
	for (i = 0; i < 2; i++) {
		ck_assert_uint_eq(lay.unit[i].stages, 0xf);
		ck_assert_uint_eq(lay.unit[i].n_seg, 1);
		ck_seg(&lay.unit[i], 0, PA_STAGE_RX, PA_STAGE_TX);
	}
	ck_assert_uint_eq(lay.n_stage[PA_STAGE_LB], 2);
}
END_TEST

static Suite *
planner_suite(void)
{
	Suite *s = suite_create("pipeline");
	TCase *tc = tcase_create("planner");

	tcase_add_test(tc, rtc_auto_uses_every_lcore_on_the_port_socket);
	tcase_add_test(tc, rtc_auto_falls_back_to_other_sockets);
	tcase_add_test(tc, pipeline_auto_with_no_lcore_is_refused);
	tcase_add_test(tc, pipeline_auto_puts_stages_together_below_four_lcores);
	tcase_add_test(tc, layout_contract_example);
	tcase_add_test(tc, layout_one_lcore_all_stages);
	tcase_add_test(tc, layout_partly_together);
	tcase_add_test(tc, layout_classic_and_rtc);
	tcase_add_test(tc, pipeline_auto_one_lcore_per_stage_then_classify_lb_rx_tx);
	tcase_add_test(tc, pipeline_auto_prefers_port_socket);
	tcase_add_test(tc, explicit_lcores_are_kept);
	tcase_add_test(tc, explicit_unavailable_lcore_is_refused_with_its_path);
	tcase_add_test(tc, explicit_pipeline_missing_stage_is_refused);
	tcase_add_test(tc, wanted_lcores_auto_and_explicit);
	tcase_add_test(tc, lcores_arg_pins_one_cpu_each_when_enough);
	tcase_add_test(tc, lcores_arg_floats_when_more_lcores_than_cpus);
	tcase_add_test(tc, lcores_arg_reports_short_buffer);
	tcase_add_test(tc, order_cpus_puts_the_ports_node_first_stably);
	tcase_add_test(tc, order_cpus_without_a_node_changes_nothing);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	static Suite *(*const suites[])(void) = { planner_suite, NULL };
	const struct pa_test_main t = {
		.name = "test_pipeline",
		.suites = suites,
	};

	return pa_test_main(&t);
}
