/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests of pktaccelctl's top screen (app/pktaccelctl/top_view.c)
 * and rates.c: rates over the measured interval, the drop reasons that
 * counted, tables that keep whole columns within the width, the sort
 * keys, and numbers for people. */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "pa_test_main.h"
#include "pktaccelctl.h"
#include "top.h"

const char *const ctl_progname = "test_ctl";

/* A reading: stats_get with one port and two drop reasons, one lcore,
 * two ACL rules; counters scaled by @p k, taken at time @p t. */
static void
reading(struct top_sample *s, double t, double k)
{
	char buf[2048];

	memset(s, 0, sizeof(*s));
	snprintf(buf, sizeof(buf),
		"{\"rx_packets\": %.0f, \"tx_packets\": %.0f, \"dropped_packets\": %.0f,"
		" \"mbufs_in_use\": 10,"
		" \"drops\": {\"malformed\": 0, \"acl\": %.0f, \"police\": %.0f},"
		" \"ports\": {\"wan0\": {\"link\": \"up\", \"rx_packets\": %.0f,"
		"   \"tx_packets\": %.0f, \"rx_bytes\": %.0f, \"tx_bytes\": %.0f,"
		"   \"rx_missed\": %.0f}},"
		" \"lcores\": {\"1\": {\"rx_packets\": %.0f, \"tx_packets\": %.0f,"
		"   \"dropped_packets\": 0, \"busy_cycles\": %.0f, \"sleeps\": 0}},"
		" \"acl\": {\"default\": \"permit\", \"default_hits\": %.0f},"
		" \"latency\": {\"enabled\": false}}",
		3e6 * k, 2e6 * k, 1e6 * k, 0.0 * k, 1e6 * k, 3e6 * k, 2e6 * k,
		3e6 * k * 100, 2e6 * k * 100, 5 * k, 3e6 * k, 2e6 * k,
		1e9 * k, 100 * k);
	s->res[TOP_STATS] = json_loads(buf, 0, NULL);
	ck_assert_ptr_nonnull(s->res[TOP_STATS]);
	s->res[TOP_PIPELINE] = json_pack("{s:f, s:[{s:i, s:s, s:[s,s], s:[]}]}",
		"tsc_hz", 2e9, "lcores", "lcore", 1, "role", "worker",
		"stages", "rx", "tx", "rings_in");
	snprintf(buf, sizeof(buf),
		"[{\"id\": 7, \"priority\": 5, \"proto\": \"udp\", \"dport\": \"53\","
		"  \"action\": \"drop\", \"hits\": %.0f},"
		" {\"id\": 3, \"priority\": 9, \"src\": \"10.0.0.0/8\","
		"  \"action\": \"permit\", \"hits\": %.0f}]", 10 * k, 1000 * k);
	s->res[TOP_ACL] = json_loads(buf, 0, NULL);
	ck_assert_ptr_nonnull(s->res[TOP_ACL]);
	s->t[TOP_STATS] = s->t[TOP_PIPELINE] = s->t[TOP_ACL] = t;
	s->valid = true;
}

/* The screen's line that starts with @p prefix, or NULL. */
static const char *
line_of(const struct top_screen *scr, const char *prefix)
{
	int i;

	for (i = 0; i < scr->n; i++)
		if (strncmp(scr->line[i].text, prefix, strlen(prefix)) == 0)
			return scr->line[i].text;
	return NULL;
}

static void
render(struct top_sample *prev, struct top_sample *cur, int width,
		enum top_sort sort, struct top_screen *scr)
{
	struct top_view v = {
		.prev = prev, .cur = cur, .sort = sort, .socket = "/x.sock",
		.delay_s = 1,
	};

	ck_assert_int_eq(top_view_render(&v, width, scr), 0);
}

START_TEST(test_rates_are_deltas_over_the_measured_interval)
{
	struct top_sample a, b;
	struct top_screen scr = { 0 };
	const char *l;

	/* nominal 1 s, measured 2.5 s: 3e6 more rx packets -> 1.2 Mpps */
	reading(&a, 100.0, 1);
	reading(&b, 102.5, 2);
	render(&a, &b, 0, TOP_SORT_RATE, &scr);
	ck_assert_ptr_nonnull(strstr(scr.line[0].text, "interval 2.500s"));
	l = line_of(&scr, "Total");
	ck_assert_ptr_nonnull(l);
	ck_assert_ptr_nonnull(strstr(l, "rx 1.200 Mpps  tx 0.800 Mpps  dropped 0.400 Mpps"));
	/* ports: rx 1.2 Mpps, 3e8 bytes * 8 / 2.5 s = 0.96 Gbps, 2 missed/s */
	l = line_of(&scr, "wan0");
	ck_assert_ptr_nonnull(l);
	ck_assert_msg(strstr(l, "wan0  up      1.200    0.960    0.800    0.640         2") == l,
		"%s", l);
	/* the lcore: 1e9 cycles in 2.5 s of a 2 GHz TSC: 20% busy */
	l = line_of(&scr, "1 ");
	ck_assert_ptr_nonnull(l);
	ck_assert_msg(strstr(l, " 20.0 ") != NULL, "%s", l);
	top_screen_free(&scr);
	top_sample_clear(&a);
	top_sample_clear(&b);
}
END_TEST

START_TEST(test_drops_show_reasons_that_counted_busiest_first)
{
	struct top_sample a, b;
	struct top_screen scr = { 0 };

	reading(&a, 10.0, 1);
	reading(&b, 11.0, 3);
	render(&a, &b, 0, TOP_SORT_RATE, &scr);
	/* police 2e6/s, acl 0 (never counted), malformed 0: left out */
	ck_assert_str_eq(line_of(&scr, "Drops/s"), "Drops/s  police 2.00M");
	/* nothing counted in the interval */
	top_sample_clear(&a);
	reading(&a, 12.0, 3);
	render(&b, &a, 0, TOP_SORT_RATE, &scr);
	ck_assert_str_eq(line_of(&scr, "Drops/s"), "Drops/s  none");
	/* no previous reading: no rates */
	render(NULL, &b, 0, TOP_SORT_RATE, &scr);
	ck_assert_str_eq(line_of(&scr, "Drops/s"), "Drops/s  -");
	ck_assert_ptr_nonnull(strstr(line_of(&scr, "Total"), "rx - Mpps"));
	/* counters that went back (a restart): no rate, not a negative one */
	top_sample_clear(&a);
	reading(&a, 12.0, 2);
	render(&b, &a, 0, TOP_SORT_RATE, &scr);
	ck_assert_str_eq(line_of(&scr, "Drops/s"), "Drops/s  -");
	ck_assert_ptr_nonnull(strstr(line_of(&scr, "Total"), "rx - Mpps"));
	top_screen_free(&scr);
	top_sample_clear(&a);
	top_sample_clear(&b);
}
END_TEST

START_TEST(test_tables_keep_whole_columns_within_the_width)
{
	struct top_sample a, b;
	struct top_screen scr = { 0 };
	int width, i;

	reading(&a, 10.0, 1e6);
	reading(&b, 11.0, 2e6);
	for (width = 20; width <= 120; width += 7) {
		render(&a, &b, width, TOP_SORT_RATE, &scr);
		for (i = 0; i < scr.n; i++) {
			if (scr.line[i].kind != TOP_LINE_HEAD &&
			    !(i > 0 && scr.line[i - 1].kind == TOP_LINE_HEAD))
				continue;
			/* table lines (heads and rows) fit */
			ck_assert_msg((int)strlen(scr.line[i].text) <= width,
				"width %d: %s", width, scr.line[i].text);
		}
		/* the ports table: its columns are whole (a title is never
		 * cut), the first ones kept */
		ck_assert_ptr_nonnull(line_of(&scr, "PORT  LINK"));
		if (width < 60)
			ck_assert_ptr_null(strstr(line_of(&scr, "PORT"), "RX_PKTS"));
	}
	/* unlimited: every column */
	render(&a, &b, 0, TOP_SORT_RATE, &scr);
	ck_assert_ptr_nonnull(strstr(line_of(&scr, "PORT"), "RX_MISSED"));
	top_screen_free(&scr);
	top_sample_clear(&a);
	top_sample_clear(&b);
}
END_TEST

/* The ACL table's first column, row by row, joined by spaces. */
static void
acl_order(const struct top_screen *scr, char *buf, size_t len)
{
	int i, o = 0;
	bool in = false;

	buf[0] = '\0';
	for (i = 0; i < scr->n; i++) {
		if (strncmp(scr->line[i].text, "ACL_RULE", 8) == 0) {
			in = true;
			continue;
		}
		if (!in || scr->line[i].sec != TOP_SEC_ACL)
			continue;
		o += snprintf(buf + o, len - (size_t)o, "%s%.*s", o ? " " : "",
			(int)strcspn(scr->line[i].text, " "), scr->line[i].text);
	}
}

START_TEST(test_sort_keys)
{
	struct top_sample a, b;
	struct top_screen scr = { 0 };
	json_t *r7;
	char order[128];

	reading(&a, 10.0, 1);
	reading(&b, 11.0, 2);
	/* rule 7: fewer hits in all, but the busiest now */
	r7 = json_array_get(b.res[TOP_ACL], 0);
	json_object_set_new(r7, "hits", json_integer(1500));
	render(&a, &b, 0, TOP_SORT_RATE, &scr);
	acl_order(&scr, order, sizeof(order));
	ck_assert_str_eq(order, "7 3 default");
	render(&a, &b, 0, TOP_SORT_TOTAL, &scr);
	acl_order(&scr, order, sizeof(order));
	ck_assert_str_eq(order, "3 7 default");
	render(&a, &b, 0, TOP_SORT_NAME, &scr);
	acl_order(&scr, order, sizeof(order));
	ck_assert_str_eq(order, "3 7 default");
	ck_assert_str_eq(top_sort_name(TOP_SORT_NAME), "name");
	top_screen_free(&scr);
	top_sample_clear(&a);
	top_sample_clear(&b);
}
END_TEST

/* lb_service_list: service "web" with backends a (packets pa) and b
 * (packets pb, health "down" when @p health). */
static json_t *
services(double pa, double pb, bool health)
{
	json_t *l = json_pack("[{s:s, s:s, s:i, s:s, s:i, s:i, s:[{s:s, s:i,"
		" s:s, s:f, s:i}, {s:s, s:i, s:s, s:f, s:i}]}]",
		"name", "web", "vip", "192.0.2.10", "port", 80, "proto", "tcp",
		"usable_backends", 1, "flows", 3, "backends",
		"addr", "10.1.0.1", "port", 0, "state", "up", "packets", pa,
		"flows", 1,
		"addr", "10.1.0.2", "port", 8080, "state", "drain", "packets", pb,
		"flows", 2);

	ck_assert_ptr_nonnull(l);
	if (health)
		json_object_set_new(json_array_get(json_object_get(
			json_array_get(l, 0), "backends"), 1), "health",
			json_string("down"));
	return l;
}

START_TEST(test_services_and_backends_by_packets_per_second)
{
	struct top_sample a, b;
	struct top_screen scr = { 0 };
	const char *l;

	reading(&a, 10.0, 1);
	reading(&b, 12.0, 2);
	a.res[TOP_LB] = services(1000, 5000, false);
	b.res[TOP_LB] = services(9000, 6000, true);
	a.t[TOP_LB] = 10.0;
	b.t[TOP_LB] = 12.0;
	render(&a, &b, 0, TOP_SORT_RATE, &scr);
	/* the service: (15000 - 6000) / 2 s = 4.5k/s; its usable backends */
	l = line_of(&scr, "web ");
	ck_assert_ptr_nonnull(l);
	ck_assert_msg(strstr(l, "web 192.0.2.10:80/tcp  1/2 up  -  ") == l &&
		strstr(l, " 4.50k    15.0k      3") != NULL, "%s", l);
	/* backends busiest first: .1 at 4k/s, then .2 at 500/s with its
	 * port, state and health */
	l = line_of(&scr, "  10.1.0.1");
	ck_assert_ptr_nonnull(strstr(l, " up "));
	ck_assert_ptr_nonnull(strstr(l, " 4.00k "));
	l = line_of(&scr, "  10.1.0.2:8080");
	ck_assert_ptr_nonnull(l);
	ck_assert_msg(strstr(l, "drain") != NULL && strstr(l, "down") != NULL &&
		strstr(l, " 500 ") != NULL, "%s", l);
	{
		int i, i1 = -1, i2 = -1;

		for (i = 0; i < scr.n; i++) {
			if (strncmp(scr.line[i].text, "  10.1.0.1", 10) == 0)
				i1 = i;
			if (strncmp(scr.line[i].text, "  10.1.0.2", 10) == 0)
				i2 = i;
		}
		ck_assert_int_lt(i1, i2);
	}
	top_screen_free(&scr);
	top_sample_clear(&a);
	top_sample_clear(&b);
}
END_TEST

START_TEST(test_a_method_error_is_shown_in_its_section)
{
	struct top_sample a, b;
	struct top_screen scr = { 0 };

	reading(&a, 10.0, 1);
	reading(&b, 11.0, 2);
	json_decref(b.res[TOP_LB]);
	b.res[TOP_LB] = NULL;
	b.err[TOP_LB] = strdup("LB not running");
	render(&a, &b, 0, TOP_SORT_RATE, &scr);
	ck_assert_str_eq(line_of(&scr, "LB "),
		"LB       lb_service_list: LB not running");
	ck_assert_ptr_nonnull(line_of(&scr, "PORT"));
	top_screen_free(&scr);
	top_sample_clear(&a);
	top_sample_clear(&b);
}
END_TEST

START_TEST(test_numbers_for_people)
{
	char b[32];

	ck_assert_str_eq(ctl_fmt_si(b, sizeof(b), 0), "0");
	ck_assert_str_eq(ctl_fmt_si(b, sizeof(b), 999), "999");
	ck_assert_str_eq(ctl_fmt_si(b, sizeof(b), 1234), "1.23k");
	ck_assert_str_eq(ctl_fmt_si(b, sizeof(b), 12345), "12.3k");
	ck_assert_str_eq(ctl_fmt_si(b, sizeof(b), 123456), "123k");
	ck_assert_str_eq(ctl_fmt_si(b, sizeof(b), 999999), "1.00M");
	ck_assert_str_eq(ctl_fmt_si(b, sizeof(b), 4.2e9), "4.20G");
	ck_assert_str_eq(ctl_fmt_si(b, sizeof(b), NAN), "-");
	ck_assert_str_eq(ctl_fmt_pps(b, sizeof(b), 12), "12 pps");
	ck_assert_str_eq(ctl_fmt_pps(b, sizeof(b), 14600), "14.6 kpps");
	ck_assert_str_eq(ctl_fmt_pps(b, sizeof(b), 2.95e6), "2.95 Mpps");
	ck_assert_str_eq(ctl_fmt_ns(b, sizeof(b), 950), "950ns");
	ck_assert_str_eq(ctl_fmt_ns(b, sizeof(b), 1490), "1.49us");
	ck_assert_str_eq(ctl_fmt_ns(b, sizeof(b), 2.43e6), "2.43ms");
	ck_assert_str_eq(ctl_fmt_fixed(b, sizeof(b), 1234567, 1e6, 3), "1.235");
	ck_assert(isnan(ctl_rate(5, 10, 1)));
	ck_assert(isnan(ctl_rate(10, 5, 0)));
	ck_assert(ctl_rate(15, 5, 2) == 5);
}
END_TEST

static Suite *
ctl_suite(void)
{
	Suite *s = suite_create("ctl");
	TCase *tc = tcase_create("top_view");

	tcase_add_test(tc, test_rates_are_deltas_over_the_measured_interval);
	tcase_add_test(tc, test_drops_show_reasons_that_counted_busiest_first);
	tcase_add_test(tc, test_tables_keep_whole_columns_within_the_width);
	tcase_add_test(tc, test_sort_keys);
	tcase_add_test(tc, test_a_method_error_is_shown_in_its_section);
	tcase_add_test(tc, test_services_and_backends_by_packets_per_second);
	tcase_add_test(tc, test_numbers_for_people);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	static Suite *(*const suites[])(void) = { ctl_suite, NULL };
	const struct pa_test_main t = {
		.name = "test_ctl",
		.suites = suites,
	};

	return pa_test_main(&t);
}
