/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of lib/metrics: the exposition-format renderer (names,
 * escaping, HELP/TYPE, order, unique series), the listen-address parser,
 * the collector's RPC counters, and the HTTP server end to end on a
 * loopback port (GET, HEAD, 404, 405, bind failure).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <check.h>
#include <jansson.h>

#include "pa_metrics.h"
#include "pa_rpc.h"
#include "pa_test_main.h"

#define C PA_METRICS_COUNTER
#define G PA_METRICS_GAUGE

static char *
render(struct pa_metrics *m)
{
	char *text = NULL;
	size_t len = 0;

	ck_assert_int_eq(pa_metrics_render(m, &text, &len), 0);
	ck_assert_ptr_nonnull(text);
	ck_assert_uint_eq(strlen(text), len);
	return text;
}

START_TEST(test_empty_set_renders_empty_text)
{
	struct pa_metrics *m = pa_metrics_new();
	char *t = render(m);

	ck_assert_str_eq(t, "");
	free(t);
	pa_metrics_free(m);
}
END_TEST

START_TEST(test_help_and_type_once_per_family_families_sorted)
{
	struct pa_metrics *m = pa_metrics_new();
	char *t;

	ck_assert_int_eq(pa_metrics_add_u64(m, G, "zz_level", "A level.", 7,
		NULL), 0);
	ck_assert_int_eq(pa_metrics_add_u64(m, C, "aa_total", "Things.", 1,
		"k", "x", NULL), 0);
	ck_assert_int_eq(pa_metrics_add_u64(m, C, "aa_total", "ignored", 2,
		"k", "y", NULL), 0);
	t = render(m);
	ck_assert_str_eq(t,
		"# HELP aa_total Things.\n"
		"# TYPE aa_total counter\n"
		"aa_total{k=\"x\"} 1\n"
		"aa_total{k=\"y\"} 2\n"
		"# HELP zz_level A level.\n"
		"# TYPE zz_level gauge\n"
		"zz_level 7\n");
	free(t);
	pa_metrics_free(m);
}
END_TEST

START_TEST(test_samples_sorted_by_labels_labels_sorted_by_name)
{
	struct pa_metrics *m = pa_metrics_new();
	char *t;

	pa_metrics_add_u64(m, C, "x_total", "h", 3, "rule", "2", NULL);
	pa_metrics_add_u64(m, C, "x_total", "h", 1, "rule", "10", NULL);
	pa_metrics_add_u64(m, G, "y", "h", 5, "z", "1", "a", "2", NULL);
	t = render(m);
	ck_assert_ptr_nonnull(strstr(t,
		"x_total{rule=\"10\"} 1\nx_total{rule=\"2\"} 3\n"));
	ck_assert_ptr_nonnull(strstr(t, "y{a=\"2\",z=\"1\"} 5\n"));
	free(t);
	pa_metrics_free(m);
}
END_TEST

START_TEST(test_duplicate_series_keeps_the_first)
{
	struct pa_metrics *m = pa_metrics_new();
	char *t;

	pa_metrics_add_u64(m, C, "d_total", "h", 1, "a", "1", "b", "2", NULL);
	pa_metrics_add_u64(m, C, "d_total", "h", 2, "b", "2", "a", "1", NULL);
	pa_metrics_add_u64(m, C, "d_total", "h", 3, "a", "1", "b", "3", NULL);
	ck_assert_uint_eq(pa_metrics_count(m), 3);
	t = render(m);
	ck_assert_str_eq(t,
		"# HELP d_total h\n# TYPE d_total counter\n"
		"d_total{a=\"1\",b=\"2\"} 1\n"
		"d_total{a=\"1\",b=\"3\"} 3\n");
	ck_assert_uint_eq(pa_metrics_duplicates(m), 1);
	free(t);
	pa_metrics_free(m);
}
END_TEST

START_TEST(test_label_values_and_help_escaped)
{
	struct pa_metrics *m = pa_metrics_new();
	char *t;

	pa_metrics_add_u64(m, G, "e", "back\\slash\nnew \"quoted\"", 1,
		"v", "a\\b\"c\nd", NULL);
	t = render(m);
	/* help: backslash and newline escaped, quotes kept */
	ck_assert_ptr_nonnull(strstr(t,
		"# HELP e back\\\\slash\\nnew \"quoted\"\n"));
	ck_assert_ptr_nonnull(strstr(t, "e{v=\"a\\\\b\\\"c\\nd\"} 1\n"));
	free(t);
	pa_metrics_free(m);
}
END_TEST

START_TEST(test_invalid_utf8_replaced_valid_kept)
{
	struct pa_metrics *m = pa_metrics_new();
	char *t;

	/* a lone continuation byte, an overlong '/', a surrogate; then é */
	pa_metrics_add_u64(m, G, "u", "h", 1, "v", "a\x80" "b\xc0\xaf"
		"c\xed\xa0\x80" "d\xc3\xa9", NULL);
	t = render(m);
	ck_assert_ptr_nonnull(strstr(t, "u{v=\"a?b??c???d\xc3\xa9\"} 1\n"));
	free(t);
	pa_metrics_free(m);
}
END_TEST

START_TEST(test_bad_names_and_labels_refused)
{
	struct pa_metrics *m = pa_metrics_new();
	char *t;

	ck_assert_int_eq(pa_metrics_add_u64(m, C, "1abc", "h", 1, NULL),
		-EINVAL);
	ck_assert_int_eq(pa_metrics_add_u64(m, C, "a-b", "h", 1, NULL),
		-EINVAL);
	ck_assert_int_eq(pa_metrics_add_u64(m, C, "", "h", 1, NULL), -EINVAL);
	ck_assert_int_eq(pa_metrics_add_u64(m, C, "ok", "h", 1, "__r", "x",
		NULL), -EINVAL);
	ck_assert_int_eq(pa_metrics_add_u64(m, C, "ok", "h", 1, "a:b", "x",
		NULL), -EINVAL);
	ck_assert_int_eq(pa_metrics_add_u64(m, C, "ok", "h", 1, "a", "x",
		"a", "y", NULL), -EINVAL);
	ck_assert_int_eq(pa_metrics_add_u64(m, C, "ok:sub_total", "h", 1,
		NULL), 0);
	/* same family, other type */
	ck_assert_int_eq(pa_metrics_add_u64(m, G, "ok:sub_total", "h", 1,
		NULL), -EINVAL);
	ck_assert(pa_metrics_valid_name("a_b:c9"));
	ck_assert(!pa_metrics_valid_name("9a"));
	ck_assert(pa_metrics_valid_label("_a9"));
	ck_assert(!pa_metrics_valid_label("9a"));
	t = render(m);
	ck_assert_str_eq(t, "# HELP ok:sub_total h\n# TYPE ok:sub_total counter\n"
		"ok:sub_total 1\n");
	free(t);
	pa_metrics_free(m);
}
END_TEST

START_TEST(test_float_values)
{
	struct pa_metrics *m = pa_metrics_new();
	char *t;

	pa_metrics_add_f64(m, G, "f", "h", NAN, "k", "nan", NULL);
	pa_metrics_add_f64(m, G, "f", "h", INFINITY, "k", "pinf", NULL);
	pa_metrics_add_f64(m, G, "f", "h", -INFINITY, "k", "minf", NULL);
	pa_metrics_add_f64(m, G, "f", "h", 0.0015, "k", "ms", NULL);
	pa_metrics_add_f64(m, G, "f", "h", 0.1 + 0.2, "k", "sum", NULL);
	pa_metrics_add_u64(m, C, "big_total", "h", UINT64_MAX, NULL);
	t = render(m);
	ck_assert_ptr_nonnull(strstr(t, "f{k=\"nan\"} NaN\n"));
	ck_assert_ptr_nonnull(strstr(t, "f{k=\"pinf\"} +Inf\n"));
	ck_assert_ptr_nonnull(strstr(t, "f{k=\"minf\"} -Inf\n"));
	ck_assert_ptr_nonnull(strstr(t, "f{k=\"ms\"} 0.0015\n"));
	/* not representable in 15 digits: 17, and reads back exactly */
	ck_assert_ptr_nonnull(strstr(t, "f{k=\"sum\"} 0.30000000000000004\n"));
	ck_assert_ptr_nonnull(strstr(t, "big_total 18446744073709551615\n"));
	free(t);
	pa_metrics_free(m);
}
END_TEST

START_TEST(test_many_samples_render_sorted_and_complete)
{
	struct pa_metrics *m = pa_metrics_new();
	char id[16], *t, *p, prev[64] = "", cur[64];
	unsigned int i, n = 0;

	for (i = 0; i < 20000; i++) {
		snprintf(id, sizeof(id), "%u", (i * 7919u) % 20000u);
		ck_assert_int_eq(pa_metrics_add_u64(m, C, "r_total", "h", i,
			"rule", id, NULL), 0);
	}
	t = render(m);
	for (p = strstr(t, "r_total{"); p != NULL; p = strstr(p + 1, "r_total{")) {
		size_t l = strcspn(p, "}");

		ck_assert_uint_lt(l, sizeof(cur));
		memcpy(cur, p, l);
		cur[l] = '\0';
		ck_assert_int_lt(strcmp(prev, cur), 0);
		memcpy(prev, cur, sizeof(prev));
		n++;
	}
	ck_assert_uint_eq(n, 20000);
	ck_assert_uint_eq(pa_metrics_duplicates(m), 0);
	free(t);
	pa_metrics_free(m);
}
END_TEST

START_TEST(test_parse_listen)
{
	struct sockaddr_in6 a6;
	struct sockaddr_in *a4 = (struct sockaddr_in *)&a6;
	unsigned int len;
	static const char *const bad[] = {
		"127.0.0.1", ":80", "127.0.0.1:", "127.0.0.1:0",
		"127.0.0.1:65536", "127.0.0.1:+80", "127.0.0.1: 80",
		"127.0.0.1:80x", "127.0.0.1:0000080", "localhost:80",
		"::1:80", "[::1]9100", "[::1]:", "[]:80", "[127.0.0.1]:80",
		"1.2.3:80", "[::1:80", "",
	};
	size_t i;

	ck_assert_int_eq(pa_metrics_parse_listen("127.0.0.1:9469", &a6, &len),
		0);
	ck_assert_uint_eq(len, sizeof(struct sockaddr_in));
	ck_assert_int_eq(a4->sin_family, AF_INET);
	ck_assert_uint_eq(ntohs(a4->sin_port), 9469);
	ck_assert_uint_eq(ntohl(a4->sin_addr.s_addr), 0x7f000001);
	ck_assert_int_eq(pa_metrics_parse_listen("[::1]:65535", &a6, &len), 0);
	ck_assert_uint_eq(len, sizeof(struct sockaddr_in6));
	ck_assert_int_eq(a6.sin6_family, AF_INET6);
	ck_assert_uint_eq(ntohs(a6.sin6_port), 65535);
	ck_assert(IN6_IS_ADDR_LOOPBACK(&a6.sin6_addr));
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(pa_metrics_parse_listen(bad[i], &a6, &len) ==
			-EINVAL, "accepted '%s'", bad[i]);
}
END_TEST

static int
call(const char *method)
{
	json_t *req = json_pack("{s:s, s:s, s:i}", "jsonrpc", "2.0",
		"method", method, "id", 1);
	json_t *resp = pa_rpc_handle(req);
	int failed = json_object_get(resp, "error") != NULL;

	json_decref(req);
	json_decref(resp);
	return failed;
}

START_TEST(test_collect_counts_rpc_calls_per_method)
{
	struct pa_metrics_sources src = { 0 };
	char *t = NULL;
	size_t len;

	ck_assert_int_eq(call("rpc_get_methods"), 0);
	ck_assert_int_eq(call("rpc_get_methods"), 0);
	ck_assert_int_eq(call("stats_get"), 1);	/* no pipeline */
	ck_assert_int_eq(call("no_such_method"), 1);
	ck_assert_int_eq(pa_metrics_scrape(&src, &t, &len), 0);
	ck_assert_ptr_nonnull(strstr(t,
		"pktaccel_rpc_calls_total{method=\"rpc_get_methods\"} 2\n"));
	ck_assert_ptr_nonnull(strstr(t,
		"pktaccel_rpc_call_errors_total{method=\"rpc_get_methods\"} 0\n"));
	ck_assert_ptr_nonnull(strstr(t,
		"pktaccel_rpc_calls_total{method=\"stats_get\"} 1\n"));
	ck_assert_ptr_nonnull(strstr(t,
		"pktaccel_rpc_call_errors_total{method=\"stats_get\"} 1\n"));
	ck_assert_ptr_nonnull(strstr(t,
		"pktaccel_rpc_unknown_method_calls_total 1\n"));
	ck_assert_ptr_nonnull(strstr(t, "# TYPE pktaccel_build_info gauge\n"));
	/* nothing about a data path that is not there */
	ck_assert_ptr_null(strstr(t, "pktaccel_rx_packets_total"));
	free(t);
}
END_TEST

/* ---- HTTP ---- */

static int
render_hello(void *arg, char **text, size_t *len)
{
	int *calls = arg;

	(*calls)++;
	*text = strdup("# HELP hello h\n# TYPE hello gauge\nhello 1\n");
	*len = strlen(*text);
	return 0;
}

/* A free loopback TCP port (bound by the kernel, then released). */
static unsigned int
free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t l = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &l), 0);
	close(fd);
	return ntohs(a.sin_port);
}

struct client {
	unsigned int port;
	const char *request;
	char reply[4096];
	volatile int done;
};

static void *
client_main(void *arg)
{
	struct client *c = arg;
	struct sockaddr_in a = { .sin_family = AF_INET };
	size_t got = 0;
	ssize_t r;
	int fd;

	a.sin_port = htons((uint16_t)c->port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
	    write(fd, c->request, strlen(c->request)) ==
	    (ssize_t)strlen(c->request)) {
		while (got < sizeof(c->reply) - 1 &&
		       (r = read(fd, c->reply + got,
				sizeof(c->reply) - 1 - got)) > 0)
			got += (size_t)r;
	}
	c->reply[got] = '\0';
	close(fd);
	__atomic_store_n(&c->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Serve until the client is done, the way the control thread does. */
static void
exchange(struct pa_metrics_http *h, struct client *c)
{
	pthread_t tid;
	int i;

	ck_assert_int_eq(pthread_create(&tid, NULL, client_main, c), 0);
	for (i = 0; i < 500 && !__atomic_load_n(&c->done, __ATOMIC_ACQUIRE);
			i++) {
		struct pollfd p = { .fd = pa_metrics_http_fd(h), .events = POLLIN };
		int t = pa_metrics_http_timeout_ms(h);

		poll(&p, 1, t >= 0 && t < 10 ? t : 10);
		pa_metrics_http_run(h);
	}
	pthread_join(tid, NULL);
}

START_TEST(test_http_serves_get_head_404_405)
{
	char listen_s[32], err[256];
	struct pa_metrics_http_opts o = { 0 };
	struct pa_metrics_http_counters cnt;
	struct pa_metrics_http *h, *h2;
	struct client c;
	unsigned int port = free_port();
	int renders = 0;

	snprintf(listen_s, sizeof(listen_s), "127.0.0.1:%u", port);
	o.listen = listen_s;
	o.render = render_hello;
	o.render_arg = &renders;
	h = pa_metrics_http_create(&o, err, sizeof(err));
	ck_assert_msg(h != NULL, "%s", err);

	/* a second listener on the same port: a plain reason */
	h2 = pa_metrics_http_create(&o, err, sizeof(err));
	ck_assert_ptr_null(h2);
	ck_assert_ptr_nonnull(strstr(err, "cannot listen on 127.0.0.1:"));
	ck_assert_ptr_nonnull(strstr(err, "Address already in use"));

	memset(&c, 0, sizeof(c));
	c.port = port;
	c.request = "GET /metrics HTTP/1.0\r\n\r\n";
	exchange(h, &c);
	ck_assert_msg(strncmp(c.reply, "HTTP/1.0 200", 12) == 0 ||
		strncmp(c.reply, "HTTP/1.1 200", 12) == 0, "%s", c.reply);
	ck_assert_ptr_nonnull(strstr(c.reply,
		"Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"));
	ck_assert_ptr_nonnull(strstr(c.reply, "\r\n\r\n# HELP hello h\n"));

	memset(&c, 0, sizeof(c));
	c.port = port;
	c.request = "HEAD /metrics HTTP/1.0\r\n\r\n";
	exchange(h, &c);
	ck_assert_ptr_nonnull(strstr(c.reply, " 200 "));
	ck_assert_ptr_null(strstr(c.reply, "hello 1"));

	memset(&c, 0, sizeof(c));
	c.port = port;
	c.request = "GET /nope HTTP/1.0\r\n\r\n";
	exchange(h, &c);
	ck_assert_ptr_nonnull(strstr(c.reply, " 404 "));

	memset(&c, 0, sizeof(c));
	c.port = port;
	c.request = "POST /metrics HTTP/1.0\r\nContent-Length: 3\r\n\r\nabc";
	exchange(h, &c);
	ck_assert_ptr_nonnull(strstr(c.reply, " 405 "));
	ck_assert_ptr_nonnull(strstr(c.reply, "Allow: GET, HEAD\r\n"));

	pa_metrics_http_counters(h, &cnt);
	ck_assert_uint_eq(cnt.ok, 2);
	ck_assert_uint_eq(cnt.not_found, 1);
	ck_assert_uint_eq(cnt.bad_method, 1);
	ck_assert_int_eq(renders, 2);
	pa_metrics_http_destroy(h);

	/* the port is free again once destroyed */
	h = pa_metrics_http_create(&o, err, sizeof(err));
	ck_assert_msg(h != NULL, "%s", err);
	pa_metrics_http_destroy(h);
}
END_TEST

static Suite *
metrics_suite(void)
{
	Suite *s = suite_create("metrics");
	TCase *tc = tcase_create("render");

	tcase_add_test(tc, test_empty_set_renders_empty_text);
	tcase_add_test(tc, test_help_and_type_once_per_family_families_sorted);
	tcase_add_test(tc, test_samples_sorted_by_labels_labels_sorted_by_name);
	tcase_add_test(tc, test_duplicate_series_keeps_the_first);
	tcase_add_test(tc, test_label_values_and_help_escaped);
	tcase_add_test(tc, test_invalid_utf8_replaced_valid_kept);
	tcase_add_test(tc, test_bad_names_and_labels_refused);
	tcase_add_test(tc, test_float_values);
	tcase_add_test(tc, test_many_samples_render_sorted_and_complete);
	tcase_set_timeout(tc, 60);	/* 20000 samples under ASan: seconds */
	suite_add_tcase(s, tc);
	tc = tcase_create("collect");
	tcase_add_test(tc, test_collect_counts_rpc_calls_per_method);
	suite_add_tcase(s, tc);
	tc = tcase_create("http");
	tcase_add_test(tc, test_parse_listen);
	tcase_add_test(tc, test_http_serves_get_head_404_405);
	tcase_set_timeout(tc, 30);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	static Suite *(*const suites[])(void) = { metrics_suite, NULL };
	const struct pa_test_main t = {
		.name = "test_metrics",
		.suites = suites,
	};

	return pa_test_main(&t);
}
