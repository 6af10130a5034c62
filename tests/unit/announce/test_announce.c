/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of lib/announce: the lcore watchdog (fake clock), the
 * rtnetlink route messages (built, then read back as the kernel's dump
 * would carry them), the answers (acks, refusals, someone else's), and,
 * as root, adding, replacing, deleting and flushing real routes in a
 * network namespace of the test's own (unshare).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include <check.h>

#include "pa_announce.h"
#include "pa_test_main.h"

/* ---- watchdog ---- */

START_TEST(test_watchdog_first_sample_only_primes)
{
	struct pa_watchdog wd;
	uint64_t c[2] = { 5, 7 };

	pa_watchdog_init(&wd, 2, 1000);
	/* a counter that never moved is not stalled before two samples */
	ck_assert_uint_eq(pa_watchdog_update(&wd, c, 50000), 0);
	ck_assert_uint_eq(pa_watchdog_update(&wd, c, 50999), 0);
	ck_assert_uint_eq(pa_watchdog_stalled_ms(&wd, 0, 50999), 999);
}
END_TEST

START_TEST(test_watchdog_stalled_after_stall_ms_without_progress)
{
	struct pa_watchdog wd;
	uint64_t c[3] = { 0, 0, 0 };
	uint64_t t;

	pa_watchdog_init(&wd, 3, 1000);
	pa_watchdog_update(&wd, c, 0);
	/* lcores 0 and 2 keep moving, lcore 1 stops at t = 0 */
	for (t = 10; t < 1000; t += 10) {
		c[0]++;
		c[2] += 1000;
		ck_assert_uint_eq(pa_watchdog_update(&wd, c, t), 0);
	}
	c[0]++;
	c[2]++;
	ck_assert_uint_eq(pa_watchdog_update(&wd, c, 1000), 1);
	ck_assert(!wd.stalled[0]);
	ck_assert(wd.stalled[1]);
	ck_assert(!wd.stalled[2]);
	ck_assert_uint_eq(pa_watchdog_stalled_ms(&wd, 1, 1000), 1000);
	ck_assert_uint_eq(wd.stalls[1], 1);
	/* still stalled: counted once */
	ck_assert_uint_eq(pa_watchdog_update(&wd, c, 5000), 3);
	ck_assert_uint_eq(wd.stalls[1], 1);
	ck_assert_uint_eq(pa_watchdog_stalled_ms(&wd, 1, 5000), 5000);
	/* it moves again: no longer stalled, the clock restarts */
	c[0]++;
	c[1]++;
	c[2]++;
	ck_assert_uint_eq(pa_watchdog_update(&wd, c, 5001), 0);
	ck_assert(!wd.stalled[1]);
	ck_assert_uint_eq(pa_watchdog_stalled_ms(&wd, 1, 5001), 0);
	ck_assert_uint_eq(pa_watchdog_update(&wd, c, 6000), 0);
	ck_assert_uint_eq(pa_watchdog_update(&wd, c, 6001), 3);
	/* lcore 0 was stalled from 1000 to 5000 too: its second stall */
	ck_assert_uint_eq(wd.stalls[1], 2);
	ck_assert_uint_eq(wd.stalls[0], 2);
}
END_TEST

START_TEST(test_watchdog_napping_lcore_that_counts_after_each_nap_is_fine)
{
	struct pa_watchdog wd;
	uint64_t c[1] = { 0 };
	uint64_t t;

	/* an adaptive lcore: one loop per 10 ms nap (the longest), watched
	 * with the smallest stall_ms (100) and sampled every 10 ms */
	pa_watchdog_init(&wd, 1, 100);
	for (t = 0; t < 10000; t += 10) {
		if (t % 10 == 0)
			c[0]++;
		ck_assert_uint_eq(pa_watchdog_update(&wd, c, t), 0);
	}
	/* sampled less often than it loops: still never stalled */
	for (; t < 20000; t += 99) {
		c[0] += 9;
		ck_assert_uint_eq(pa_watchdog_update(&wd, c, t), 0);
	}
}
END_TEST

START_TEST(test_watchdog_bounds_its_lcores)
{
	struct pa_watchdog wd;

	pa_watchdog_init(&wd, PA_WATCHDOG_MAX + 10, 100);
	ck_assert_uint_eq(wd.n, PA_WATCHDOG_MAX);
	ck_assert_uint_eq(pa_watchdog_stalled_ms(&wd, PA_WATCHDOG_MAX, 5), 0);
}
END_TEST

/* ---- route messages ---- */

static struct pa_announce_route
route4(const char *a, uint32_t table)
{
	struct pa_announce_route r = { .dst_len = 32, .table = table,
		.protocol = PA_ANNOUNCE_RTPROT, .oif = 7 };

	r.dst.family = AF_INET;
	ck_assert_int_eq(inet_pton(AF_INET, a, &r.dst.v4), 1);
	return r;
}

static struct pa_announce_route
route6(const char *a, uint32_t table)
{
	struct pa_announce_route r = { .dst_len = 128, .table = table,
		.protocol = PA_ANNOUNCE_RTPROT, .oif = 9 };

	r.dst.family = AF_INET6;
	ck_assert_int_eq(inet_pton(AF_INET6, a, &r.dst.v6), 1);
	return r;
}

START_TEST(test_new_route_message_reads_back_as_built)
{
	struct pa_announce_route r = route4("192.0.2.10", 100), back;
	char buf[512];
	struct nlmsghdr *nh = (struct nlmsghdr *)buf;
	struct rtmsg *rtm;
	size_t n;

	n = pa_announce_nl_route_msg(buf, sizeof(buf), RTM_NEWROUTE, &r, 42);
	ck_assert_uint_gt(n, NLMSG_LENGTH(sizeof(struct rtmsg)));
	ck_assert_uint_eq(nh->nlmsg_len, n);
	ck_assert_uint_eq(nh->nlmsg_type, RTM_NEWROUTE);
	ck_assert_uint_eq(nh->nlmsg_seq, 42);
	ck_assert(nh->nlmsg_flags & NLM_F_ACK);
	ck_assert(nh->nlmsg_flags & NLM_F_CREATE);
	ck_assert(nh->nlmsg_flags & NLM_F_REPLACE);
	rtm = NLMSG_DATA(nh);
	ck_assert_uint_eq(rtm->rtm_family, AF_INET);
	ck_assert_uint_eq(rtm->rtm_table, 100);
	ck_assert_uint_eq(rtm->rtm_protocol, PA_ANNOUNCE_RTPROT);
	ck_assert_uint_eq(rtm->rtm_type, RTN_UNICAST);
	ck_assert_uint_eq(rtm->rtm_scope, RT_SCOPE_LINK);
	ck_assert_int_eq(pa_announce_nl_parse_route(buf, n, &back), 0);
	ck_assert_uint_eq(back.dst.family, AF_INET);
	ck_assert_uint_eq(back.dst.v4.s_addr, r.dst.v4.s_addr);
	ck_assert_uint_eq(back.dst_len, 32);
	ck_assert_uint_eq(back.table, 100);
	ck_assert_uint_eq(back.protocol, PA_ANNOUNCE_RTPROT);
	ck_assert_uint_eq(back.oif, 7);
}
END_TEST

START_TEST(test_ipv6_route_and_a_table_above_255_travel_in_rta_table)
{
	struct pa_announce_route r = route6("2001:db8::10", 70000), back;
	char buf[512];
	struct rtmsg *rtm = NLMSG_DATA((struct nlmsghdr *)buf);
	size_t n;

	n = pa_announce_nl_route_msg(buf, sizeof(buf), RTM_DELROUTE, &r, 1);
	ck_assert_uint_gt(n, 0);
	ck_assert_uint_eq(((struct nlmsghdr *)buf)->nlmsg_type, RTM_DELROUTE);
	ck_assert(!(((struct nlmsghdr *)buf)->nlmsg_flags & NLM_F_CREATE));
	ck_assert_uint_eq(rtm->rtm_table, RT_TABLE_UNSPEC);
	ck_assert_uint_eq(rtm->rtm_dst_len, 128);
	/* a dump carries RTM_NEWROUTE: read it back as one */
	((struct nlmsghdr *)buf)->nlmsg_type = RTM_NEWROUTE;
	ck_assert_int_eq(pa_announce_nl_parse_route(buf, n, &back), 0);
	ck_assert_uint_eq(back.table, 70000);
	ck_assert_uint_eq(back.dst.family, AF_INET6);
	ck_assert_mem_eq(&back.dst.v6, &r.dst.v6, 16);
	ck_assert_uint_eq(back.oif, 9);
}
END_TEST

START_TEST(test_route_message_refuses_what_it_cannot_build)
{
	struct pa_announce_route r = route4("192.0.2.10", 100);
	char buf[512];

	ck_assert_uint_eq(pa_announce_nl_route_msg(buf, sizeof(buf),
		RTM_GETROUTE, &r, 1), 0);
	ck_assert_uint_eq(pa_announce_nl_route_msg(buf, 20, RTM_NEWROUTE, &r,
		1), 0);
	/* room for the header, not for the attributes */
	ck_assert_uint_eq(pa_announce_nl_route_msg(buf,
		NLMSG_SPACE(sizeof(struct rtmsg)) + 4, RTM_NEWROUTE, &r, 1), 0);
	r.dst.family = AF_UNIX;
	ck_assert_uint_eq(pa_announce_nl_route_msg(buf, sizeof(buf),
		RTM_NEWROUTE, &r, 1), 0);
	ck_assert_uint_eq(pa_announce_nl_dump_msg(buf, sizeof(buf), AF_UNIX,
		1), 0);
	ck_assert_uint_gt(pa_announce_nl_dump_msg(buf, sizeof(buf), AF_INET6,
		1), 0);
	ck_assert(((struct nlmsghdr *)buf)->nlmsg_flags & NLM_F_DUMP);
}
END_TEST

START_TEST(test_parse_route_refuses_malformed_and_skips_others)
{
	struct pa_announce_route r = route4("192.0.2.10", 100), back;
	char buf[512];
	struct nlmsghdr *nh = (struct nlmsghdr *)buf;
	struct rtmsg *rtm = NLMSG_DATA(nh);
	struct rtattr *rta;
	size_t n;

	n = pa_announce_nl_route_msg(buf, sizeof(buf), RTM_NEWROUTE, &r, 1);
	/* longer than what was received */
	ck_assert_int_eq(pa_announce_nl_parse_route(buf, n - 4, &back), -EINVAL);
	ck_assert_int_eq(pa_announce_nl_parse_route(buf, 8, &back), -EINVAL);
	/* an RTA_DST of the wrong size */
	rta = RTM_RTA(rtm);
	ck_assert_uint_eq(rta->rta_type, RTA_DST);
	rta->rta_len = RTA_LENGTH(3);
	ck_assert_int_eq(pa_announce_nl_parse_route(buf, n, &back), -EINVAL);
	rta->rta_len = RTA_LENGTH(4);
	/* not a unicast route, not a route message, not an IP family */
	rtm->rtm_type = RTN_LOCAL;
	ck_assert_int_eq(pa_announce_nl_parse_route(buf, n, &back), -ENOENT);
	rtm->rtm_type = RTN_UNICAST;
	nh->nlmsg_type = RTM_NEWADDR;
	ck_assert_int_eq(pa_announce_nl_parse_route(buf, n, &back), -ENOENT);
	nh->nlmsg_type = RTM_NEWROUTE;
	rtm->rtm_family = AF_BRIDGE;
	ck_assert_int_eq(pa_announce_nl_parse_route(buf, n, &back), -ENOENT);
	rtm->rtm_family = AF_INET;
	ck_assert_int_eq(pa_announce_nl_parse_route(buf, n, &back), 0);
}
END_TEST

/* An NLMSG_ERROR answer to @p seq with @p error at @p at. */
static size_t
put_ack(char *at, uint32_t seq, int error)
{
	struct nlmsghdr *nh = (struct nlmsghdr *)at;
	struct nlmsgerr *e = NLMSG_DATA(nh);

	memset(at, 0, NLMSG_SPACE(sizeof(*e)));
	nh->nlmsg_len = NLMSG_LENGTH(sizeof(*e));
	nh->nlmsg_type = NLMSG_ERROR;
	nh->nlmsg_seq = seq;
	e->error = error;
	return NLMSG_SPACE(sizeof(*e));
}

START_TEST(test_ack_finds_the_answer_to_its_request)
{
	char buf[1024];
	size_t n = 0;

	n += put_ack(buf, 5, -EEXIST);		/* an older request's */
	n += put_ack(buf + n, 6, 0);
	ck_assert_int_eq(pa_announce_nl_ack(buf, n, 6), 0);
	ck_assert_int_eq(pa_announce_nl_ack(buf, n, 5), -EEXIST);
	ck_assert_int_eq(pa_announce_nl_ack(buf, n, 7), -EAGAIN);
	n = put_ack(buf, 8, -ESRCH);
	ck_assert_int_eq(pa_announce_nl_ack(buf, n, 8), -ESRCH);
	/* cut short */
	((struct nlmsghdr *)buf)->nlmsg_len = NLMSG_HDRLEN + 2;
	ck_assert_int_eq(pa_announce_nl_ack(buf, NLMSG_HDRLEN + 2, 8), -EPROTO);
	ck_assert_int_eq(pa_announce_nl_ack(NULL, 0, 8), -EPROTO);
}
END_TEST

/* ---- readiness and drain (no ports, no lcores: the verdict's logic) ---- */

static struct pa_ready *
bare_health(struct pa_config *cfg, bool tables)
{
	struct pa_ready_opts o = { .cfg = cfg, .tables_loaded = tables };
	char err[256] = "";
	struct pa_ready *h = pa_ready_create(&o, err, sizeof(err));

	ck_assert_msg(h != NULL, "%s", err);
	return h;
}

static unsigned int
http_code(struct pa_ready *h, char **body)
{
	unsigned int code = 0;
	size_t len = 0;

	ck_assert_int_eq(pa_ready_http(h, body, &len, &code), 0);
	ck_assert_uint_eq(strlen(*body), len);
	ck_assert((*body)[len - 1] == '\n');
	return code;
}

START_TEST(test_health_starting_ready_draining_stopping)
{
	struct pa_config cfg;
	struct pa_ready_snapshot s;
	struct pa_ready *h;
	char *body = NULL;
	json_t *j;

	memset(&cfg, 0, sizeof(cfg));
	cfg.pipeline.stall_ms = 1000;
	h = bare_health(&cfg, true);
	/* never evaluated, then not started: "starting", 503 */
	pa_ready_snapshot(h, &s);
	ck_assert(!s.ready);
	ck_assert_str_eq(s.reasons[0], "starting");
	ck_assert_uint_eq(http_code(h, &body), 503);
	ck_assert_ptr_nonnull(strstr(body, "\"starting\""));
	free(body);
	ck_assert_int_eq(pa_ready_poll(h, 1000), PA_READY_EVAL_MS);
	pa_ready_snapshot(h, &s);
	ck_assert(!s.ready);
	ck_assert_uint_eq(s.n_reasons, 1);
	/* started: ready, 200 */
	pa_ready_set_started(h);
	pa_ready_poll(h, 1010);
	pa_ready_snapshot(h, &s);
	ck_assert(s.ready);
	ck_assert_uint_eq(s.n_reasons, 0);
	ck_assert_uint_eq(http_code(h, &body), 200);
	ck_assert_str_eq(body, "{\"ready\":true,\"draining\":false,\"reasons\":[]}\n");
	free(body);
	/* not due yet: the next evaluation is 10 ms later */
	ck_assert_int_eq(pa_ready_poll(h, 1015), 5);
	/* draining: still ready, but 503; undrain: 200 */
	pa_ready_set_draining(h, true);
	pa_ready_poll(h, 1016);
	pa_ready_snapshot(h, &s);
	ck_assert(s.ready && s.draining);
	ck_assert_uint_eq(http_code(h, &body), 503);
	free(body);
	j = pa_ready_json(h);
	ck_assert_ptr_nonnull(j);
	ck_assert(json_is_true(json_object_get(j, "ready")));
	ck_assert(json_is_true(json_object_get(j, "draining")));
	ck_assert(json_is_null(json_object_get(j, "announce")));
	ck_assert_uint_eq(json_array_size(json_object_get(j, "reasons")), 0);
	json_decref(j);
	pa_ready_set_draining(h, false);
	pa_ready_poll(h, 1017);
	ck_assert_uint_eq(http_code(h, &body), 200);
	free(body);
	/* SIGTERM's drain cannot be undone by health_set */
	pa_ready_request_drain(h);
	pa_ready_set_draining(h, false);
	pa_ready_poll(h, 1030);
	pa_ready_snapshot(h, &s);
	ck_assert(s.draining);
	/* stopping: not ready, said so, at once (not waiting for the period) */
	pa_ready_set_stopping(h);
	pa_ready_poll(h, 1031);
	pa_ready_snapshot(h, &s);
	ck_assert(!s.ready);
	ck_assert_str_eq(s.reasons[0], "stopping");
	ck_assert_uint_eq(s.not_ready_transitions, 1);
	/* no announce: no routes, nothing to withdraw */
	ck_assert_uint_eq(pa_ready_routes(h), 0);
	ck_assert(!pa_ready_backstop(h, 99999, true));
	pa_ready_destroy(h);
}
END_TEST

START_TEST(test_health_tables_not_loaded_is_a_reason)
{
	struct pa_config cfg;
	struct pa_ready_snapshot s;
	struct pa_ready *h;

	memset(&cfg, 0, sizeof(cfg));
	cfg.pipeline.stall_ms = 1000;
	h = bare_health(&cfg, false);
	pa_ready_set_started(h);
	pa_ready_poll(h, 5);
	pa_ready_snapshot(h, &s);
	ck_assert(!s.ready);
	ck_assert_str_eq(s.reasons[0], "tables not loaded");
	pa_ready_destroy(h);
	/* NULL is fine everywhere the daemon may call it before start-up */
	pa_ready_set_started(NULL);
	pa_ready_set_stopping(NULL);
	pa_ready_request_drain(NULL);
	ck_assert_uint_eq(pa_ready_routes(NULL), 0);
	ck_assert(!pa_ready_backstop(NULL, 1, true));
	pa_ready_destroy(NULL);
}
END_TEST

/* ---- against the kernel (root, a network namespace of our own) ---- */

static bool
own_netns(void)
{
	if (geteuid() != 0 || unshare(CLONE_NEWNET) != 0)
		return false;
	/* lo up: routes need a device that is up */
	return system("ip link set lo up") == 0;
}

static unsigned int
count_routes(uint32_t table, int family)
{
	char cmd[128], line[256];
	unsigned int n = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd),
		"ip -%d route show table %u proto %d 2>/dev/null",
		family == AF_INET ? 4 : 6, table, PA_ANNOUNCE_RTPROT);
	f = popen(cmd, "r");
	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f) != NULL)
		n++;
	pclose(f);
	return n;
}

START_TEST(test_routes_added_replaced_deleted_and_flushed_in_the_kernel)
{
	struct pa_announce_nl nl;
	struct pa_announce_route a, b, c;
	unsigned int removed = 0;

	if (!own_netns()) {
		fprintf(stderr, "skipped: needs root and unshare(CLONE_NEWNET)\n");
		return;
	}
	a = route4("192.0.2.10", 100);
	b = route6("2001:db8::10", 100);
	c = route4("192.0.2.11", 101);
	a.oif = b.oif = c.oif = if_nametoindex("lo");
	ck_assert_int_eq(pa_announce_nl_open(&nl, PA_ANNOUNCE_NL_TIMEOUT_MS), 0);
	ck_assert_int_eq(pa_announce_nl_route(&nl, RTM_NEWROUTE, &a), 0);
	/* again: replaced, not refused */
	ck_assert_int_eq(pa_announce_nl_route(&nl, RTM_NEWROUTE, &a), 0);
	ck_assert_int_eq(pa_announce_nl_route(&nl, RTM_NEWROUTE, &b), 0);
	ck_assert_int_eq(pa_announce_nl_route(&nl, RTM_NEWROUTE, &c), 0);
	ck_assert_uint_eq(count_routes(100, AF_INET), 1);
	ck_assert_uint_eq(count_routes(100, AF_INET6), 1);
	ck_assert_uint_eq(count_routes(101, AF_INET), 1);
	/* a device that does not exist: the kernel's refusal comes back */
	c.oif = 999999;
	ck_assert_int_eq(pa_announce_nl_route(&nl, RTM_NEWROUTE, &c), -ENODEV);
	c.oif = a.oif;
	/* deleting, twice: the second is not an error */
	ck_assert_int_eq(pa_announce_nl_route(&nl, RTM_DELROUTE, &c), 0);
	ck_assert_int_eq(pa_announce_nl_route(&nl, RTM_DELROUTE, &c), 0);
	ck_assert_uint_eq(count_routes(101, AF_INET), 0);
	/* someone else's route in our table is left alone by the flush */
	ck_assert_int_eq(system("ip route add 203.0.113.1/32 dev lo table 100 proto static"), 0);
	ck_assert_int_eq(pa_announce_nl_flush(&nl, 100, PA_ANNOUNCE_RTPROT,
		&removed), 0);
	ck_assert_uint_eq(removed, 2);
	ck_assert_uint_eq(count_routes(100, AF_INET), 0);
	ck_assert_uint_eq(count_routes(100, AF_INET6), 0);
	ck_assert_int_eq(system("ip route show table 100 proto static | grep -q 203.0.113.1"), 0);
	ck_assert_int_eq(pa_announce_nl_flush(&nl, 100, PA_ANNOUNCE_RTPROT,
		&removed), 0);
	ck_assert_uint_eq(removed, 0);
	pa_announce_nl_close(&nl);
}
END_TEST

static Suite *
announce_suite(void)
{
	Suite *s = suite_create("announce");
	TCase *tc;

	tc = tcase_create("watchdog");
	tcase_add_test(tc, test_watchdog_first_sample_only_primes);
	tcase_add_test(tc, test_watchdog_stalled_after_stall_ms_without_progress);
	tcase_add_test(tc, test_watchdog_napping_lcore_that_counts_after_each_nap_is_fine);
	tcase_add_test(tc, test_watchdog_bounds_its_lcores);
	suite_add_tcase(s, tc);

	tc = tcase_create("netlink");
	tcase_add_test(tc, test_new_route_message_reads_back_as_built);
	tcase_add_test(tc, test_ipv6_route_and_a_table_above_255_travel_in_rta_table);
	tcase_add_test(tc, test_route_message_refuses_what_it_cannot_build);
	tcase_add_test(tc, test_parse_route_refuses_malformed_and_skips_others);
	tcase_add_test(tc, test_ack_finds_the_answer_to_its_request);
	suite_add_tcase(s, tc);

	tc = tcase_create("health");
	tcase_add_test(tc, test_health_starting_ready_draining_stopping);
	tcase_add_test(tc, test_health_tables_not_loaded_is_a_reason);
	suite_add_tcase(s, tc);

	tc = tcase_create("kernel");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_routes_added_replaced_deleted_and_flushed_in_the_kernel);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	static Suite *(*const suites[])(void) = { announce_suite, NULL };
	const struct pa_test_main t = {
		.name = "test_announce",
		.suites = suites,
	};

	return pa_test_main(&t);
}
