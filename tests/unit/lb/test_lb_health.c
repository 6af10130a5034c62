/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of lib/lb, health: the effective state (admin state x
 * health), panic, agent weights, the grace of a backend the checks took
 * down, the service list's text, the config version, stats that do not
 * wait.
 *
 * Part of test_lb (test_lb.c): the fixture is lb_fixture.h's.
 */

#include "lb_fixture.h"

/* ------------------------------------------------------------------ */
/* Health: effective state = admin state x health, panic               */
/* ------------------------------------------------------------------ */

/* Service @p text (no "health" key) added with tcp checks. */
static void
add_checked_service(const char *text)
{
	char err[PA_CONFIG_ERR_MAX];
	struct pa_config_service svc;

	service_of(text, &svc);
	pa_lb_config_health_defaults(&svc.health);
	svc.health.present = true;
	svc.health.type = PA_HEALTH_TCP;
	ck_assert_msg(pa_lb_service_add(lb, &svc, err, sizeof(err)) == 0,
		"%s", err);
	pa_lb_config_service_clear(&svc);
}

struct hc_find {
	const char *service;
	struct pa_ip_addr addr;
	struct pa_lb_health_target t;
	unsigned int n;
};

static void
hc_find_fn(void *arg, const struct pa_lb_health_target *t)
{
	struct hc_find *x = arg;

	if (strcmp(t->service, x->service) == 0 &&
	    pa_ip_equal(&t->addr, &x->addr)) {
		x->t = *t;
		x->n++;
	}
}

static struct pa_lb_health_target
hc_target(const char *service, const char *addr)
{
	struct hc_find x = { .service = service, .addr = addr_of(addr) };

	pa_lb_health_targets(lb, hc_find_fn, &x);
	ck_assert_msg(x.n == 1, "no check target %s of %s", addr, service);
	return x.t;
}

/* What the health glue does after each round: publish what is due (a
 * fake clock, a gap further each time). @return @p ret. */
static int
publish(int ret)
{
	static uint64_t clock_ms = 1;

	clock_ms += PA_LB_HEALTH_PUBLISH_GAP_MS;
	ck_assert_int_eq(pa_lb_health_publish(lb, clock_ms), -1);
	return ret;
}

static int
report(const char *service, const char *addr, enum pa_lb_health hh)
{
	struct pa_lb_health_target t = hc_target(service, addr);
	struct pa_lb_health_report r = { .health = hh,
		.last = hh == PA_LB_HEALTH_DOWN ? "refused" : "ok",
		.latency_us = 250, .probes = 3, .failures = 1 };

	return publish(pa_lb_backend_health(lb, t.cslot, t.uid, &r));
}

/* One backend's JSON object from lb_service_list (new reference). */
static json_t *
be_json(const char *service, const char *addr)
{
	json_t *arr = pa_lb_services_json(lb), *s, *b, *found = NULL;
	size_t i, j;

	json_array_foreach(arr, i, s) {
		if (strcmp(json_string_value(json_object_get(s, "name")),
				service) != 0)
			continue;
		json_array_foreach(json_object_get(s, "backends"), j, b)
			if (strcmp(json_string_value(json_object_get(b,
					"addr")), addr) == 0)
				found = json_incref(b);
	}
	json_decref(arr);
	ck_assert_ptr_nonnull(found);
	return found;
}

static json_t *
svc_json(const char *service)
{
	json_t *arr = pa_lb_services_json(lb), *s, *found = NULL;
	size_t i;

	json_array_foreach(arr, i, s)
		if (strcmp(json_string_value(json_object_get(s, "name")),
				service) == 0)
			found = json_incref(s);
	json_decref(arr);
	ck_assert_ptr_nonnull(found);
	return found;
}

START_TEST(test_health_down_backend_leaves_the_table_and_comes_back)
{
	uint32_t be[N_FLOWS], b;
	unsigned int i, on2 = 0, new2 = 0;
	json_t *o;

	setup_lb("");
	add_checked_service(SVC_WEB4);
	for (i = 0; i < N_FLOWS; i++)
		if ((be[i] = web4_flow(i, TCP_SYN, T0)) == ip4("10.1.0.2"))
			on2++;
	ck_assert_uint_gt(on2, 0);
	o = be_json("web4", "10.1.0.2");
	ck_assert_str_eq(json_string_value(json_object_get(o, "health")),
		"unknown");
	json_decref(o);
	/* up: recorded, nothing to publish */
	ck_assert_int_eq(report("web4", "10.1.0.2", PA_LB_HEALTH_UP), 0);
	/* down: a new table, its flows move on their next packet */
	ck_assert_int_eq(report("web4", "10.1.0.2", PA_LB_HEALTH_DOWN), 1);
	for (i = 0; i < N_FLOWS; i++) {
		b = web4_flow(i, TCP_ACK, T0 + 1);
		if (be[i] == ip4("10.1.0.2"))
			ck_assert(b == ip4("10.1.0.1") || b == ip4("10.1.0.3"));
		else
			ck_assert_msg(b == be[i], "flow %u moved", i);
	}
	/* new flows never go there */
	for (i = N_FLOWS; i < 2 * N_FLOWS; i++)
		ck_assert_uint_ne(web4_flow(i, TCP_SYN, T0 + 1), ip4("10.1.0.2"));
	ck_assert_int_eq(lb_stat("flows_rescheduled"), on2);
	ck_assert_int_eq(lb_stat("health_down"), 1);
	o = be_json("web4", "10.1.0.2");
	ck_assert_str_eq(json_string_value(json_object_get(o, "health")),
		"down");
	ck_assert_str_eq(json_string_value(json_object_get(o, "state")), "up");
	ck_assert_str_eq(json_string_value(json_object_get(o, "health_last")),
		"refused");
	ck_assert(json_real_value(json_object_get(o, "health_latency_ms")) ==
		0.25);
	json_decref(o);
	o = svc_json("web4");
	ck_assert_int_eq(json_integer_value(json_object_get(o,
		"usable_backends")), 2);
	ck_assert(json_is_false(json_object_get(o, "panic")));
	json_decref(o);
	/* back up: in the table again, new flows reach it */
	ck_assert_int_eq(report("web4", "10.1.0.2", PA_LB_HEALTH_UP), 1);
	for (i = 2 * N_FLOWS; i < 3 * N_FLOWS; i++)
		if (web4_flow(i, TCP_SYN, T0 + 2) == ip4("10.1.0.2"))
			new2++;
	ck_assert_uint_gt(new2, 0);
	ck_assert_int_eq(lb_stat("health_down"), 0);
}
END_TEST

START_TEST(test_health_every_backend_down_is_panic_over_all_of_them)
{
	unsigned int i, seen[3] = { 0 };
	uint32_t b;
	json_t *o;

	setup_lb("");
	add_checked_service(SVC_WEB4);
	ck_assert_int_eq(report("web4", "10.1.0.1", PA_LB_HEALTH_DOWN), 1);
	ck_assert_int_eq(report("web4", "10.1.0.2", PA_LB_HEALTH_DOWN), 1);
	ck_assert_int_eq(lb_stat("panic_services"), 0);
	ck_assert_int_eq(report("web4", "10.1.0.3", PA_LB_HEALTH_DOWN), 1);
	ck_assert_int_eq(lb_stat("panic_services"), 1);
	ck_assert_int_eq(lb_stat("panics"), 1);
	o = svc_json("web4");
	ck_assert(json_is_true(json_object_get(o, "panic")));
	ck_assert_int_eq(json_integer_value(json_object_get(o, "panics")), 1);
	ck_assert_int_eq(json_integer_value(json_object_get(o,
		"usable_backends")), 3);
	json_decref(o);
	/* balanced over all three, nothing dropped */
	for (i = 0; i < N_FLOWS; i++) {
		b = web4_flow(i, TCP_SYN, T0);
		seen[b == ip4("10.1.0.1") ? 0 : b == ip4("10.1.0.2") ? 1 : 2]++;
	}
	ck_assert(seen[0] > 0 && seen[1] > 0 && seen[2] > 0);
	ck_assert_int_eq(lb_stat("no_backend"), 0);
	/* one comes back: out of panic, it takes every new flow */
	ck_assert_int_eq(report("web4", "10.1.0.3", PA_LB_HEALTH_UP), 1);
	ck_assert_int_eq(lb_stat("panic_services"), 0);
	for (i = N_FLOWS; i < 2 * N_FLOWS; i++)
		ck_assert_uint_eq(web4_flow(i, TCP_SYN, T0 + 1),
			ip4("10.1.0.3"));
	/* admin down + health: a service whose only admin-up backend is
	 * down by health is in panic over that one alone */
	ck_assert_int_eq(set_state("web4", "10.1.0.1", PA_LB_DOWN), 0);
	ck_assert_int_eq(set_state("web4", "10.1.0.2", PA_LB_DOWN), 0);
	ck_assert_int_eq(report("web4", "10.1.0.3", PA_LB_HEALTH_DOWN), 1);
	ck_assert_int_eq(lb_stat("panics"), 2);
	for (i = 2 * N_FLOWS; i < 2 * N_FLOWS + 50; i++)
		ck_assert_uint_eq(web4_flow(i, TCP_SYN, T0 + 2),
			ip4("10.1.0.3"));
}
END_TEST

START_TEST(test_health_report_for_a_gone_backend_is_stale)
{
	struct pa_lb_health_target t;
	struct pa_lb_health_report r = { .health = PA_LB_HEALTH_DOWN,
		.last = "timeout" };

	setup_lb("");
	add_checked_service(SVC_WEB4);
	t = hc_target("web4", "10.1.0.2");
	ck_assert_int_eq(delete_backend("web4", "10.1.0.2"), 0);
	ck_assert_int_eq(pa_lb_backend_health(lb, t.cslot, t.uid, &r),
		-ENOENT);
	/* re-added: a new uid, the old one is still stale */
	ck_assert_int_eq(add_backend("web4", "{'addr': '10.1.0.2'}"), 0);
	ck_assert_int_eq(pa_lb_backend_health(lb, t.cslot, t.uid, &r),
		-ENOENT);
	ck_assert_int_eq(report("web4", "10.1.0.2", PA_LB_HEALTH_DOWN), 1);
	/* services without checks are no targets */
	setup_lb(SVC_WEB4);
	ck_assert_uint_eq(pa_lb_health_targets(lb, hc_find_fn,
		&(struct hc_find){ .service = "web4" }), 0);
}
END_TEST

START_TEST(test_table_hash_depends_on_the_usable_set_only)
{
	const char *h1, *h2, *h3;
	json_t *a, *b, *c;

	setup_lb("");
	add_checked_service("{'name': 'a', 'vip': '10.0.0.10', 'port': 80,"
		" 'proto': 'tcp', 'forward': 'ipip', 'backends': [{'addr':"
		" '10.1.0.1'}, {'addr': '10.1.0.2'}, {'addr': '10.1.0.3'}]}");
	add_checked_service("{'name': 'b', 'vip': '10.0.0.11', 'port': 80,"
		" 'proto': 'tcp', 'forward': 'ipip', 'backends': [{'addr':"
		" '10.1.0.3'}, {'addr': '10.1.0.1'}, {'addr': '10.1.0.2'}]}");
	add_checked_service("{'name': 'c', 'vip': '10.0.0.12', 'port': 80,"
		" 'proto': 'tcp', 'forward': 'ipip', 'backends': [{'addr':"
		" '10.1.0.3'}, {'addr': '10.1.0.1'}]}");
	a = svc_json("a");
	b = svc_json("b");
	c = svc_json("c");
	h1 = json_string_value(json_object_get(a, "table_hash"));
	h2 = json_string_value(json_object_get(b, "table_hash"));
	h3 = json_string_value(json_object_get(c, "table_hash"));
	ck_assert_str_eq(h1, h2);
	ck_assert_str_ne(h1, h3);
	json_decref(a);
	json_decref(b);
	ck_assert_int_eq(report("a", "10.1.0.2", PA_LB_HEALTH_DOWN), 1);
	a = svc_json("a");
	ck_assert_str_eq(json_string_value(json_object_get(a, "table_hash")),
		h3);
	json_decref(a);
	json_decref(c);
}
END_TEST

START_TEST(test_agent_percentage_scales_the_weight_drain_and_down)
{
	struct pa_lb_health_target t;
	json_t *a, *b, *be;

	setup_lb("");
	add_checked_service("{'name': 'a', 'vip': '10.0.0.10', 'port': 80,"
		" 'proto': 'tcp', 'forward': 'ipip', 'backends': [{'addr':"
		" '10.1.0.1', 'weight': 10}, {'addr': '10.1.0.2', 'weight': 10}]}");
	add_checked_service("{'name': 'b', 'vip': '10.0.0.11', 'port': 80,"
		" 'proto': 'tcp', 'forward': 'ipip', 'backends': [{'addr':"
		" '10.1.0.1', 'weight': 10}, {'addr': '10.1.0.2', 'weight': 5}]}");
	t = hc_target("a", "10.1.0.2");
	/* 50 %: a's table is b's */
	ck_assert_int_eq(publish(pa_lb_backend_agent(lb, t.cslot, t.uid, 50,
		PA_LB_AGENT_NONE)), 1);
	ck_assert_int_eq(publish(pa_lb_backend_agent(lb, t.cslot, t.uid, 50,
		PA_LB_AGENT_NONE)), 0);		/* the same: nothing to do */
	a = svc_json("a");
	b = svc_json("b");
	ck_assert_str_eq(json_string_value(json_object_get(a, "table_hash")),
		json_string_value(json_object_get(b, "table_hash")));
	be = json_array_get(json_object_get(a, "backends"), 1);
	ck_assert_int_eq(json_integer_value(json_object_get(be,
		"health_agent_pct")), 50);
	ck_assert_int_eq(json_integer_value(json_object_get(be,
		"health_weight")), 5);
	ck_assert_int_eq(json_integer_value(json_object_get(be, "weight")),
		10);				/* the configured one stays */
	json_decref(a);
	json_decref(b);
	/* drain: keeps its flows, takes no new ones */
	ck_assert_int_eq(publish(pa_lb_backend_agent(lb, t.cslot, t.uid, 50,
		PA_LB_AGENT_DRAIN)), 1);
	a = svc_json("a");
	ck_assert_int_eq(json_integer_value(json_object_get(a,
		"usable_backends")), 1);
	be = json_array_get(json_object_get(a, "backends"), 1);
	ck_assert_str_eq(json_string_value(json_object_get(be,
		"health_agent")), "drain");
	json_decref(a);
	/* down, and the other one down by health: panic over both */
	ck_assert_int_eq(publish(pa_lb_backend_agent(lb, t.cslot, t.uid, -1,
		PA_LB_AGENT_DOWN)), 1);
	ck_assert_int_eq(report("a", "10.1.0.1", PA_LB_HEALTH_DOWN), 1);
	a = svc_json("a");
	ck_assert(json_is_true(json_object_get(a, "panic")));
	ck_assert_int_eq(json_integer_value(json_object_get(a,
		"usable_backends")), 2);
	json_decref(a);
	/* 0 %: no new flows, like weight 0 */
	ck_assert_int_eq(report("a", "10.1.0.1", PA_LB_HEALTH_UP), 1);
	ck_assert_int_eq(publish(pa_lb_backend_agent(lb, t.cslot, t.uid, 0,
		PA_LB_AGENT_NONE)), 1);
	a = svc_json("a");
	ck_assert_int_eq(json_integer_value(json_object_get(a,
		"usable_backends")), 1);
	ck_assert(json_is_false(json_object_get(a, "panic")));
	json_decref(a);
	ck_assert_int_eq(pa_lb_backend_agent(lb, t.cslot, t.uid + 1000, 50,
		PA_LB_AGENT_NONE), -ENOENT);
}
END_TEST

START_TEST(test_health_changes_of_a_round_publish_one_table_at_most_every_gap)
{
	struct pa_lb_health_target t1, t2;
	struct pa_lb_health_report down = { .health = PA_LB_HEALTH_DOWN,
		.last = "timeout" };
	json_int_t b0;

	setup_lb("");
	add_checked_service(SVC_WEB4);
	t1 = hc_target("web4", "10.1.0.1");
	t2 = hc_target("web4", "10.1.0.2");
	b0 = lb_stat("builds");
	ck_assert_int_eq(pa_lb_backend_health(lb, t1.cslot, t1.uid, &down), 1);
	ck_assert_int_eq(pa_lb_backend_health(lb, t2.cslot, t2.uid, &down), 1);
	ck_assert_int_eq(lb_stat("builds"), b0);	/* nothing yet */
	ck_assert_int_eq(pa_lb_health_publish(lb, 100000), -1);
	ck_assert_int_eq(lb_stat("builds"), b0 + 1);	/* both in one */
	ck_assert_int_eq(be_count("web4", "10.1.0.1").flows, 0);
	ck_assert_int_eq(lb_stat("health_down"), 2);
	/* the next change waits for the gap */
	ck_assert_int_eq(pa_lb_backend_health(lb, t1.cslot, t1.uid,
		&(struct pa_lb_health_report){ .health = PA_LB_HEALTH_UP,
			.last = "ok" }), 1);
	ck_assert_int_eq(pa_lb_health_publish(lb, 100040),
		PA_LB_HEALTH_PUBLISH_GAP_MS - 40);
	ck_assert_int_eq(lb_stat("builds"), b0 + 1);
	ck_assert_int_eq(pa_lb_health_publish(lb, 100000 +
		PA_LB_HEALTH_PUBLISH_GAP_MS), -1);
	ck_assert_int_eq(lb_stat("builds"), b0 + 2);
	/* an RPC change publishes what is pending along with it */
	ck_assert_int_eq(pa_lb_backend_health(lb, t1.cslot, t1.uid, &down), 1);
	ck_assert_int_eq(set_weight("web4", "10.1.0.3", 2), 0);
	ck_assert_int_eq(pa_lb_health_publish(lb, 100000 +
		PA_LB_HEALTH_PUBLISH_GAP_MS + 1), -1);
	ck_assert_int_eq(lb_stat("builds"), b0 + 3);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Health grace: down by the checks, a backend drains for grace_ms     */
/* ------------------------------------------------------------------ */

#define GRACE_MS	5000

#define GRACE_T		1000000ULL	/* the fake clock of the grace tests */

/* SVC_WEB4 with tcp checks and a grace of GRACE_MS. */
static void
add_graced_web4(void)
{
	char err[PA_CONFIG_ERR_MAX];
	struct pa_config_service svc;

	service_of(SVC_WEB4, &svc);
	pa_lb_config_health_defaults(&svc.health);
	svc.health.present = true;
	svc.health.type = PA_HEALTH_TCP;
	svc.health.grace_ms = GRACE_MS;
	ck_assert_msg(pa_lb_service_add(lb, &svc, err, sizeof(err)) == 0,
		"%s", err);
	pa_lb_config_service_clear(&svc);
}

/* Report @p hh for backend @p addr of web4 (no publish). */
static int
report_only(const char *addr, enum pa_lb_health hh)
{
	struct pa_lb_health_target t = hc_target("web4", addr);
	struct pa_lb_health_report r = { .health = hh,
		.last = hh == PA_LB_HEALTH_DOWN ? "refused" : "ok" };

	return pa_lb_backend_health(lb, t.cslot, t.uid, &r);
}

static json_int_t
grace_left_of(const char *addr)
{
	json_t *o = be_json("web4", addr), *v;
	json_int_t x;

	v = json_object_get(o, "health_grace_ms_left");
	x = v != NULL ? json_integer_value(v) : -1;
	json_decref(o);
	return x;
}

START_TEST(test_health_down_with_grace_keeps_its_flows_until_the_grace_ends)
{
	uint32_t be[N_FLOWS], b;
	unsigned int i, on2 = 0;
	json_int_t b0, left;

	setup_lb("");
	add_graced_web4();
	for (i = 0; i < N_FLOWS; i++)
		if ((be[i] = web4_flow(i, TCP_SYN, T0)) == ip4("10.1.0.2"))
			on2++;
	ck_assert_uint_gt(on2, 0);
	b0 = lb_stat("builds");
	/* down: a new table without it at once, the grace's end ahead */
	ck_assert_int_eq(report_only("10.1.0.2", PA_LB_HEALTH_DOWN), 1);
	ck_assert_int_eq(pa_lb_health_publish(lb, GRACE_T), GRACE_MS);
	ck_assert_int_eq(lb_stat("builds"), b0 + 1);
	/* its flows stay (the same backend on their next packet) */
	for (i = 0; i < N_FLOWS; i++)
		ck_assert_msg(web4_flow(i, TCP_ACK, T0 + 1) == be[i],
			"flow %u moved in the grace", i);
	ck_assert_int_eq(lb_stat("flows_rescheduled"), 0);
	/* new flows avoid it */
	for (i = N_FLOWS; i < 2 * N_FLOWS; i++)
		ck_assert_uint_ne(web4_flow(i, TCP_SYN, T0 + 1),
			ip4("10.1.0.2"));
	/* shown: down, in its grace (what is left: the fake clock's
	 * reading plus the real time since, a few ms at most) */
	ck_assert_int_eq(lb_stat("health_down"), 1);
	ck_assert_int_eq(lb_stat("health_grace"), 1);
	left = grace_left_of("10.1.0.2");
	ck_assert_msg(left > GRACE_MS - 1000 && left <= GRACE_MS,
		"health_grace_ms_left %lld", (long long)left);
	ck_assert_int_eq(grace_left_of("10.1.0.1"), -1);
	/* a round before the end: nothing to do, the end still ahead */
	ck_assert_int_eq(pa_lb_health_publish(lb, GRACE_T + GRACE_MS - 1), 1);
	ck_assert_int_eq(lb_stat("builds"), b0 + 1);
	for (i = 0; i < N_FLOWS; i++)
		ck_assert_msg(web4_flow(i, TCP_ACK, T0 + 2) == be[i],
			"flow %u moved in the grace", i);
	/* the end, with no report: a new table, its flows move on their
	 * next packet, the others stay */
	ck_assert_int_eq(pa_lb_health_publish(lb, GRACE_T + GRACE_MS), -1);
	ck_assert_int_eq(lb_stat("builds"), b0 + 2);
	for (i = 0; i < N_FLOWS; i++) {
		b = web4_flow(i, TCP_ACK, T0 + 3);
		if (be[i] == ip4("10.1.0.2"))
			ck_assert(b == ip4("10.1.0.1") || b == ip4("10.1.0.3"));
		else
			ck_assert_msg(b == be[i], "flow %u moved", i);
	}
	ck_assert_int_eq(lb_stat("flows_rescheduled"), on2);
	ck_assert_int_eq(lb_stat("health_down"), 1);
	ck_assert_int_eq(lb_stat("health_grace"), 0);
	ck_assert_int_eq(grace_left_of("10.1.0.2"), -1);
	/* nothing more to do */
	ck_assert_int_eq(pa_lb_health_publish(lb, GRACE_T + 2 * GRACE_MS), -1);
	ck_assert_int_eq(lb_stat("builds"), b0 + 2);
}
END_TEST

/* lb_service_list's text (pa_lb_snapshot_services_text()) is the tree's
 * dump byte for byte (one snapshot: the grace's time left is the same). */
static void
assert_text_is_the_tree(void)
{
	struct pa_lb_snapshot snap;
	json_t *tree;
	char *want, *got;
	size_t len = 0;

	ck_assert_int_eq(pa_lb_snapshot(lb, PA_LB_SNAPSHOT_SERVICES, &snap), 0);
	tree = pa_lb_snapshot_services_json(&snap);
	ck_assert_ptr_nonnull(tree);
	want = json_dumps(tree, JSON_COMPACT);
	got = pa_lb_snapshot_services_text(&snap, &len);
	ck_assert_ptr_nonnull(want);
	ck_assert_ptr_nonnull(got);
	ck_assert_str_eq(got, want);
	ck_assert_uint_eq(len, strlen(want));
	free(want);
	free(got);
	json_decref(tree);
	pa_lb_snapshot_free(&snap);
	/* and through the RPC's path */
	got = pa_lb_services_text(lb, &len);
	ck_assert_ptr_nonnull(got);
	ck_assert_uint_gt(len, 2);
	free(got);
}

START_TEST(test_service_list_text_is_the_trees_dump)
{
	static const uint32_t lat[] = { 0, 1, 250, 999, 1000, 1234567, 3,
		100001, UINT32_MAX };
	struct pa_lb_health_target t;
	struct pa_lb_health_report r = { .health = PA_LB_HEALTH_UP,
		.last = "ok", .probes = 1 };
	unsigned int i;

	setup_lb("{'name': 'm4', 'vip': '10.0.0.11', 'port': 80, 'proto': 'tcp',"
		" 'forward': 'dsr', 'backends': [{'addr': '10.3.0.1',"
		" 'mac': '02:00:00:00:be:01', 'weight': 7}, {'addr': '10.3.0.2',"
		" 'mac': '02:00:00:00:be:02', 'state': 'drain'}]}");
	assert_text_is_the_tree();		/* no checks: "unknown" */
	add_graced_web4();
	add_checked_service("{'name': 'v6.a_b-c', 'vip':"
		" '2001:db8::10', 'port': 443, 'proto': 'tcp', 'forward': 'nat',"
		" 'backends': [{'addr': '2001:db8:1::1', 'port': 8443},"
		" {'addr': '2001:db8:1::2', 'weight': 0}]}");
	assert_text_is_the_tree();
	/* probes of every latency, an http code, failures */
	t = hc_target("web4", "10.1.0.1");
	for (i = 0; i < RTE_DIM(lat); i++) {
		r.latency_us = lat[i];
		r.code = (uint16_t)(i * 100);
		r.probes = i + 1;
		r.failures = i;
		(void)pa_lb_backend_health(lb, t.cslot, t.uid, &r);
		assert_text_is_the_tree();
	}
	/* down in its grace, an agent's percentage and drain */
	ck_assert_int_eq(report_only("10.1.0.2", PA_LB_HEALTH_DOWN), 1);
	(void)pa_lb_health_publish(lb, GRACE_T);
	assert_text_is_the_tree();
	t = hc_target("web4", "10.1.0.3");
	(void)pa_lb_backend_agent(lb, t.cslot, t.uid, 50, PA_LB_AGENT_DRAIN);
	assert_text_is_the_tree();
	(void)pa_lb_backend_agent(lb, t.cslot, t.uid, -1, PA_LB_AGENT_DOWN);
	assert_text_is_the_tree();
}
END_TEST

START_TEST(test_health_back_up_within_the_grace_moves_nothing)
{
	uint32_t be[N_FLOWS];
	unsigned int i, new2 = 0;
	json_int_t b0;

	setup_lb("");
	add_graced_web4();
	for (i = 0; i < N_FLOWS; i++)
		be[i] = web4_flow(i, TCP_SYN, T0);
	ck_assert_int_eq(report_only("10.1.0.2", PA_LB_HEALTH_DOWN), 1);
	ck_assert_int_eq(pa_lb_health_publish(lb, GRACE_T), GRACE_MS);
	/* its flows keep coming in the grace */
	for (i = 0; i < N_FLOWS; i++)
		ck_assert_msg(web4_flow(i, TCP_ACK, T0 + 1) == be[i],
			"flow %u moved in the grace", i);
	ck_assert_int_eq(report_only("10.1.0.2", PA_LB_HEALTH_UP), 1);
	/* back in the table (after the gap between two tables) */
	ck_assert_int_eq(pa_lb_health_publish(lb, GRACE_T + 1000), -1);
	ck_assert_int_eq(lb_stat("health_grace"), 0);
	ck_assert_int_eq(grace_left_of("10.1.0.2"), -1);
	b0 = lb_stat("builds");
	/* the grace's end passes: nothing happens */
	ck_assert_int_eq(pa_lb_health_publish(lb, GRACE_T + GRACE_MS), -1);
	ck_assert_int_eq(pa_lb_health_publish(lb, GRACE_T + 2 * GRACE_MS), -1);
	ck_assert_int_eq(lb_stat("builds"), b0);
	for (i = 0; i < N_FLOWS; i++)
		ck_assert_msg(web4_flow(i, TCP_ACK, T0 + 2) == be[i],
			"flow %u moved", i);
	ck_assert_int_eq(lb_stat("flows_rescheduled"), 0);
	for (i = N_FLOWS; i < 2 * N_FLOWS; i++)
		if (web4_flow(i, TCP_SYN, T0 + 2) == ip4("10.1.0.2"))
			new2++;
	ck_assert_uint_gt(new2, 0);
	/* down again: a grace of its own, from then */
	ck_assert_int_eq(report_only("10.1.0.2", PA_LB_HEALTH_DOWN), 1);
	ck_assert_int_eq(pa_lb_health_publish(lb, GRACE_T + 3 * GRACE_MS),
		GRACE_MS);
	ck_assert_int_eq(lb_stat("health_grace"), 1);
}
END_TEST

START_TEST(test_health_grace_zero_moves_flows_at_once_and_agent_down_drains_too)
{
	struct pa_lb_health_target t;
	unsigned int i, on2 = 0, on1 = 0;
	uint32_t be[N_FLOWS];
	json_t *o;

	/* no grace (the default): as before, no end to wait for */
	setup_lb("");
	add_checked_service(SVC_WEB4);
	for (i = 0; i < N_FLOWS; i++)
		if ((be[i] = web4_flow(i, TCP_SYN, T0)) == ip4("10.1.0.2"))
			on2++;
	ck_assert_int_eq(report_only("10.1.0.2", PA_LB_HEALTH_DOWN), 1);
	ck_assert_int_eq(pa_lb_health_publish(lb, GRACE_T), -1);
	for (i = 0; i < N_FLOWS; i++)
		(void)web4_flow(i, TCP_ACK, T0 + 1);
	ck_assert_int_eq(lb_stat("flows_rescheduled"), on2);
	ck_assert_int_eq(lb_stat("health_grace"), 0);
	ck_assert_int_eq(grace_left_of("10.1.0.2"), -1);

	/* with a grace, the agent's "down" drains first as well */
	setup_lb("");
	add_graced_web4();
	for (i = 0; i < N_FLOWS; i++)
		if ((be[i] = web4_flow(i, TCP_SYN, T0)) == ip4("10.1.0.1"))
			on1++;
	t = hc_target("web4", "10.1.0.1");
	ck_assert_int_eq(pa_lb_backend_agent(lb, t.cslot, t.uid, -1,
		PA_LB_AGENT_DOWN), 1);
	ck_assert_int_eq(pa_lb_health_publish(lb, GRACE_T), GRACE_MS);
	for (i = 0; i < N_FLOWS; i++)
		ck_assert_msg(web4_flow(i, TCP_ACK, T0 + 1) == be[i],
			"flow %u moved in the grace", i);
	ck_assert_int_eq(lb_stat("flows_rescheduled"), 0);
	/* every backend down in its grace: panic keeps its meaning */
	ck_assert_int_eq(report_only("10.1.0.2", PA_LB_HEALTH_DOWN), 1);
	ck_assert_int_eq(report_only("10.1.0.3", PA_LB_HEALTH_DOWN), 1);
	ck_assert_int_eq(pa_lb_health_publish(lb, GRACE_T + 1000),
		GRACE_MS - 1000);
	o = svc_json("web4");
	ck_assert(json_is_true(json_object_get(o, "panic")));
	ck_assert_int_eq(json_integer_value(json_object_get(o,
		"usable_backends")), 3);
	json_decref(o);
	ck_assert_int_eq(lb_stat("health_grace"), 3);
	/* the first grace ends in panic: still all three, nothing moves */
	ck_assert_int_eq(pa_lb_health_publish(lb, GRACE_T + GRACE_MS), 1000);
	for (i = 0; i < N_FLOWS; i++)
		ck_assert_msg(web4_flow(i, TCP_ACK, T0 + 2) == be[i],
			"flow %u moved in panic", i);
	ck_assert_int_eq(lb_stat("flows_rescheduled"), 0);
	ck_assert_int_eq(lb_stat("health_grace"), 2);
	/* the agent says up: out of panic; 10.1.0.1 takes every new flow */
	ck_assert_int_eq(pa_lb_backend_agent(lb, t.cslot, t.uid, -1,
		PA_LB_AGENT_NONE), 1);
	ck_assert_int_eq(pa_lb_health_publish(lb, GRACE_T + GRACE_MS + 200),
		800);
	for (i = N_FLOWS; i < N_FLOWS + 50; i++)
		ck_assert_uint_eq(web4_flow(i, TCP_SYN, T0 + 3),
			ip4("10.1.0.1"));
}
END_TEST

START_TEST(test_health_grace_ms_parsed_bounded_and_written_back)
{
	char err[PA_CONFIG_ERR_MAX], *t;
	struct pa_config_service svc;
	json_t *o, *h;

	setup_lb("");
	cfg->lb.health_v4 = true;
	service_of("{'name': 'g', 'vip': '10.0.0.10', 'port': 80,"
		" 'proto': 'tcp', 'health': {'type': 'tcp', 'grace_ms': 30000},"
		" 'backends': [{'addr': '10.1.0.1'}]}", &svc);
	ck_assert_uint_eq(svc.health.grace_ms, 30000);
	h = pa_lb_config_health_to_json(&svc.health);
	ck_assert_int_eq(json_integer_value(json_object_get(h, "grace_ms")),
		30000);
	json_decref(h);
	svc.health.grace_ms = 0;
	h = pa_lb_config_health_to_json(&svc.health);
	ck_assert_ptr_null(json_object_get(h, "grace_ms"));	/* default */
	json_decref(h);
	pa_lb_config_service_clear(&svc);
	t = pa_test_dq("{'name': 'g', 'vip': '10.0.0.10', 'port': 80, 'proto': 'tcp',"
		" 'health': {'type': 'tcp', 'grace_ms': 3600001},"
		" 'backends': [{'addr': '10.1.0.1'}]}");
	o = json_loads(t, 0, NULL);
	ck_assert_ptr_nonnull(o);
	memset(&svc, 0, sizeof(svc));
	ck_assert_int_lt(pa_lb_config_parse_service(o, &cfg->lb, "$", &svc,
		err, sizeof(err)), 0);
	ck_assert_msg(strncmp(err, "$.health.grace_ms", 17) == 0, "%s", err);
	pa_lb_config_service_clear(&svc);
	json_decref(o);
	free(t);
}
END_TEST

/* lib/neigh and lib/announce follow pa_lb_config_version(): the health
 * checks' tables must not make them re-read the LB. */
START_TEST(test_config_version_follows_services_and_backends_not_health)
{
	uint64_t v;

	setup_lb("");
	add_checked_service(SVC_WEB4);
	v = pa_lb_config_version(lb);
	ck_assert_int_eq(report("web4", "10.1.0.2", PA_LB_HEALTH_DOWN), 1);
	ck_assert_uint_eq(pa_lb_config_version(lb), v);
	ck_assert_int_eq(report("web4", "10.1.0.2", PA_LB_HEALTH_UP), 1);
	ck_assert_uint_eq(pa_lb_config_version(lb), v);
	ck_assert_int_eq(add_backend("web4", "{'addr': '10.1.0.4'}"), 0);
	ck_assert_uint_gt(pa_lb_config_version(lb), v);
	v = pa_lb_config_version(lb);
	ck_assert_int_eq(set_weight("web4", "10.1.0.4", 3), 0);
	ck_assert_uint_gt(pa_lb_config_version(lb), v);
}
END_TEST

/* A thread holding the LB lock, as a table build and its RCU wait do. */
struct lock_holder {
	pthread_t tid;
	volatile int held, release;
};

static void *
hold_lock(void *arg)
{
	struct lock_holder *h = arg;

	pthread_mutex_lock(&lb->lock);
	__atomic_store_n(&h->held, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&h->release, __ATOMIC_ACQUIRE))
		rte_delay_us_sleep(1000);
	pthread_mutex_unlock(&lb->lock);
	return NULL;
}

/* stats_get while a change holds the LB lock: no wait past
 * LB_STATS_WAIT_MS; the counters live, the counts of the read before,
 * counted in stats_lock_busy; fresh again once the lock is free. */
START_TEST(test_stats_do_not_wait_for_a_change_holding_the_lock)
{
	struct lock_holder h = { 0 };
	struct pa_lb_snapshot snap;
	json_int_t be, bal;
	uint64_t t0;

	setup_lb("");
	add_checked_service(SVC_WEB4);
	ck_assert_int_eq(lb_stat("stats_lock_busy"), 0);
	be = lb_stat("backends");
	bal = lb_stat("balanced");
	ck_assert_int_eq(add_backend("web4", "{'addr': '10.1.0.4'}"), 0);
	ck_assert_int_eq(pthread_create(&h.tid, NULL, hold_lock, &h), 0);
	while (!__atomic_load_n(&h.held, __ATOMIC_ACQUIRE))
		rte_delay_us_sleep(1000);
	/* an lcore counts meanwhile */
	lb->w[0]->st.balanced += 7;
	t0 = rte_get_timer_cycles();
	ck_assert_int_eq(pa_lb_snapshot(lb, 0, &snap), 0);
	/* generous: only a read that waited for the holder takes seconds */
	ck_assert_msg(rte_get_timer_cycles() - t0 < 5 * rte_get_timer_hz(),
		"the stats read waited for the lock");
	ck_assert_uint_eq(snap.stats_lock_busy, 1);
	ck_assert_uint_eq(snap.backends, (uint64_t)be);
	ck_assert_uint_eq(snap.balanced, (uint64_t)bal + 7);
	ck_assert_uint_eq(snap.services, 1);
	pa_lb_snapshot_free(&snap);
	__atomic_store_n(&h.release, 1, __ATOMIC_RELEASE);
	pthread_join(h.tid, NULL);
	ck_assert_int_eq(lb_stat("backends"), be + 1);
	ck_assert_int_eq(lb_stat("balanced"), bal + 7);
	ck_assert_int_eq(lb_stat("stats_lock_busy"), 1);
	lb->w[0]->st.balanced -= 7;
}
END_TEST

TCase *
lb_tcase_health(void)
{
	TCase *tc = tcase_create("health");

	tcase_set_timeout(tc, 120);
	tcase_add_checked_fixture(tc, NULL, teardown_lb);
	tcase_add_test(tc, test_health_down_backend_leaves_the_table_and_comes_back);
	tcase_add_test(tc, test_health_every_backend_down_is_panic_over_all_of_them);
	tcase_add_test(tc, test_health_report_for_a_gone_backend_is_stale);
	tcase_add_test(tc, test_table_hash_depends_on_the_usable_set_only);
	tcase_add_test(tc, test_agent_percentage_scales_the_weight_drain_and_down);
	tcase_add_test(tc, test_service_list_text_is_the_trees_dump);
	tcase_add_test(tc, test_health_changes_of_a_round_publish_one_table_at_most_every_gap);
	tcase_add_test(tc, test_health_down_with_grace_keeps_its_flows_until_the_grace_ends);
	tcase_add_test(tc, test_health_back_up_within_the_grace_moves_nothing);
	tcase_add_test(tc, test_health_grace_zero_moves_flows_at_once_and_agent_down_drains_too);
	tcase_add_test(tc, test_health_grace_ms_parsed_bounded_and_written_back);
	tcase_add_test(tc, test_config_version_follows_services_and_backends_not_health);
	tcase_add_test(tc, test_stats_do_not_wait_for_a_change_holding_the_lock);
	return tc;
}
