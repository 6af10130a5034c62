/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the health prober's core (lib/health/health.c): a fake
 * clock that only the test moves, and real sockets on loopback. While
 * the clock stands still the test waits (in real time, generously) for
 * the probes' sockets to answer, so a verdict that comes from the wire
 * (connect, reset, status line, port unreachable, echo reply) never
 * depends on timing, and a timeout happens only when the test moves the
 * clock past the deadline.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <check.h>

#include "pa_health.h"
#include "pa_test_main.h"

#define SLOTS		256
#define WAIT_MS		5000	/* real time for loopback answers */

static struct pa_health *h;
static uint64_t now;
static unsigned int n_changes;
static unsigned int n_probes;
static unsigned int last_idx;
static struct pa_health_info last_info;

static void
on_change(void *arg, unsigned int idx, const struct pa_health_info *info)
{
	(void)arg;
	n_changes++;
	last_idx = idx;
	last_info = *info;
}

static void
on_probe(void *arg, unsigned int idx, const struct pa_health_info *info)
{
	(void)arg;
	(void)idx;
	(void)info;
	n_probes++;
}

static void
setup(void)
{
	struct pa_health_opts o = { .max_targets = SLOTS,
		.on_change = on_change, .on_probe = on_probe };
	char err[128];

	h = pa_health_create(&o, err, sizeof(err));
	ck_assert_msg(h != NULL, "%s", err);
	now = 1000000;
	n_changes = 0;
	n_probes = 0;
}

static void
teardown(void)
{
	pa_health_destroy(h);
	h = NULL;
}

static uint64_t
inflight(void)
{
	struct pa_health_stats s;

	pa_health_stats(h, &s);
	return s.inflight;
}

/* Run at the current (fake) time until no probe is in flight, waiting
 * for the sockets in real time; @return false if some stayed in flight
 * (silent peers: the test then moves the clock). */
static bool
settle(void)
{
	int waited = 0;
	struct pollfd p = { .fd = pa_health_fd(h), .events = POLLIN };

	pa_health_run(h, now);
	while (inflight() > 0 && waited < WAIT_MS) {
		(void)poll(&p, 1, 20);
		waited += 20;
		pa_health_run(h, now);
	}
	return inflight() == 0;
}

/* Move the clock to the next probe of every target and let it end. */
static bool
round_(uint32_t interval)
{
	now += interval;
	return settle();
}

static struct pa_health_spec
spec_of(enum pa_health_type type, const char *addr, uint16_t port)
{
	struct pa_health_spec s;

	memset(&s, 0, sizeof(s));
	s.type = type;
	ck_assert_int_eq(pa_net_parse_ip(addr, &s.addr, NULL, 0), 0);
	s.port = port;
	s.interval_ms = 1000;
	s.timeout_ms = 500;
	s.rise = 2;
	s.fall = 3;
	if (type == PA_HEALTH_HTTP) {
		snprintf(s.path, sizeof(s.path), "%s", "/healthz");
		s.expect_status = 200;
	}
	return s;
}

static int
listener(int family, int type, uint16_t *port)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
	socklen_t len;
	int fd, one = 1;

	fd = socket(family, type, 0);
	ck_assert_int_ge(fd, 0);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	memset(&ss, 0, sizeof(ss));
	if (family == AF_INET) {
		a4->sin_family = AF_INET;
		a4->sin_port = htons(*port);
		a4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		len = sizeof(*a4);
	} else {
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons(*port);
		a6->sin6_addr = in6addr_loopback;
		len = sizeof(*a6);
	}
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&ss, len), 0);
	if (type == SOCK_STREAM)
		ck_assert_int_eq(listen(fd, 128), 0);
	len = sizeof(ss);
	getsockname(fd, (struct sockaddr *)&ss, &len);
	*port = ntohs(family == AF_INET ? a4->sin_port : a6->sin6_port);
	return fd;
}

/* A port nobody listens on (TCP: reset; UDP: port unreachable). */
static uint16_t
closed_port(int type)
{
	uint16_t port = 0;
	int fd = listener(AF_INET, type, &port);

	close(fd);
	return port;
}

static enum pa_health_status
status_of(unsigned int idx)
{
	struct pa_health_info i;

	ck_assert_int_eq(pa_health_get(h, idx, &i), 0);
	return i.status;
}

static enum pa_health_result
last_of(unsigned int idx)
{
	struct pa_health_info i;

	ck_assert_int_eq(pa_health_get(h, idx, &i), 0);
	return i.last;
}

static bool
ipv6_loopback(void)
{
	FILE *f = fopen("/proc/sys/net/ipv6/conf/lo/disable_ipv6", "r");
	int c = f != NULL ? fgetc(f) : '1';

	if (f != NULL)
		fclose(f);
	return c == '0';
}

/* ---- tcp ---- */

START_TEST(tcp_listener_up_after_rise_passes)
{
	uint16_t port = 0;
	int fd = listener(AF_INET, SOCK_STREAM, &port);
	struct pa_health_spec s = spec_of(PA_HEALTH_TCP, "127.0.0.1", port);

	ck_assert_int_eq(pa_health_set(h, 7, &s, now), 0);
	ck_assert_int_eq(status_of(7), PA_HEALTH_STATUS_UNKNOWN);
	ck_assert(round_(1000));
	ck_assert_int_eq(last_of(7), PA_HEALTH_R_OK);
	ck_assert_int_eq(status_of(7), PA_HEALTH_STATUS_UNKNOWN);
	ck_assert_uint_eq(n_changes, 0);
	ck_assert(round_(1000));
	ck_assert_int_eq(status_of(7), PA_HEALTH_STATUS_UP);
	ck_assert_uint_eq(n_changes, 1);
	ck_assert_uint_eq(last_idx, 7);
	ck_assert_int_eq(last_info.status, PA_HEALTH_STATUS_UP);
	ck_assert_uint_eq(last_info.ok_run, 2);
	ck_assert(round_(1000));
	ck_assert_uint_eq(n_changes, 1);
	ck_assert_uint_eq(n_probes, 3);		/* every probe reported */
	close(fd);
}
END_TEST

START_TEST(tcp_reset_down_after_fall_failures)
{
	struct pa_health_spec s = spec_of(PA_HEALTH_TCP, "127.0.0.1",
		closed_port(SOCK_STREAM));
	int i;

	ck_assert_int_eq(pa_health_set(h, 3, &s, now), 0);
	for (i = 0; i < 2; i++) {
		ck_assert(round_(1000));
		ck_assert_int_eq(last_of(3), PA_HEALTH_R_REFUSED);
		ck_assert_int_eq(status_of(3), PA_HEALTH_STATUS_UNKNOWN);
	}
	ck_assert(round_(1000));
	ck_assert_int_eq(status_of(3), PA_HEALTH_STATUS_DOWN);
	ck_assert_uint_eq(n_changes, 1);
	ck_assert_uint_eq(last_info.fail_run, 3);
	ck_assert_uint_eq(last_info.failures, 3);
}
END_TEST

START_TEST(tcp_down_and_back_follows_rise_and_fall)
{
	uint16_t port = 0;
	int fd = listener(AF_INET, SOCK_STREAM, &port), i;
	struct pa_health_spec s = spec_of(PA_HEALTH_TCP, "127.0.0.1", port);

	ck_assert_int_eq(pa_health_set(h, 0, &s, now), 0);
	ck_assert(round_(1000));
	ck_assert(round_(1000));
	ck_assert_int_eq(status_of(0), PA_HEALTH_STATUS_UP);
	close(fd);				/* the server stops */
	for (i = 0; i < 2; i++) {
		ck_assert(round_(1000));
		ck_assert_int_eq(last_of(0), PA_HEALTH_R_REFUSED);
		ck_assert_int_eq(status_of(0), PA_HEALTH_STATUS_UP);
	}
	ck_assert(round_(1000));
	ck_assert_int_eq(status_of(0), PA_HEALTH_STATUS_DOWN);
	fd = listener(AF_INET, SOCK_STREAM, &port);	/* and comes back */
	ck_assert(round_(1000));
	ck_assert_int_eq(status_of(0), PA_HEALTH_STATUS_DOWN);
	ck_assert(round_(1000));
	ck_assert_int_eq(status_of(0), PA_HEALTH_STATUS_UP);
	ck_assert_uint_eq(n_changes, 3);	/* up, down, up */
	close(fd);
}
END_TEST

START_TEST(tcp_ipv6_and_source_address_and_device)
{
	bool v6 = ipv6_loopback();
	uint16_t port = 0, p6 = 0;
	int fd = listener(AF_INET, SOCK_STREAM, &port), c;
	int fd6 = v6 ? listener(AF_INET6, SOCK_STREAM, &p6) : -1;
	struct pa_health_spec s = spec_of(PA_HEALTH_TCP, "127.0.0.1", port);
	struct pa_health_spec s6 = spec_of(PA_HEALTH_TCP, v6 ? "::1" :
		"127.0.0.1", v6 ? p6 : port);
	struct pa_health_spec bad = s;
	struct sockaddr_in peer;
	socklen_t len = sizeof(peer);

	/* from 127.0.0.2 through lo */
	ck_assert_int_eq(pa_net_parse_ip("127.0.0.2", &s.src, NULL, 0), 0);
	snprintf(s.ifname, sizeof(s.ifname), "%s", "lo");
	snprintf(bad.ifname, sizeof(bad.ifname), "%s", "i15nosuchif");
	ck_assert_int_eq(pa_health_set(h, 1, &s, now), 0);
	ck_assert_int_eq(pa_health_set(h, 2, &s6, now), 0);
	ck_assert_int_eq(pa_health_set(h, 4, &bad, now), 0);
	ck_assert(round_(1000));
	ck_assert_int_eq(last_of(1), PA_HEALTH_R_OK);
	ck_assert_int_eq(last_of(2), PA_HEALTH_R_OK);
	ck_assert_int_eq(last_of(4), PA_HEALTH_R_ERROR);
	c = accept(fd, (struct sockaddr *)&peer, &len);
	ck_assert_int_ge(c, 0);
	ck_assert_uint_eq(ntohl(peer.sin_addr.s_addr), 0x7f000002);
	close(c);
	close(fd);
	if (fd6 >= 0)
		close(fd6);
}
END_TEST

/* ---- http ---- */

struct http_server {
	int fd;
	const char *answer;		/* NULL: accept and stay silent */
	char request[512];
	pthread_t tid;
	int held[8];
	int n_held;
	volatile bool stop;
};

static void *
http_serve(void *arg)
{
	struct http_server *sv = arg;
	struct pollfd p = { .fd = sv->fd, .events = POLLIN };

	while (!sv->stop) {
		int c;
		ssize_t n, got = 0;

		if (poll(&p, 1, 50) <= 0)
			continue;
		c = accept(sv->fd, NULL, NULL);
		if (c < 0)
			continue;
		while (got < (ssize_t)sizeof(sv->request) - 1) {
			n = recv(c, sv->request + got,
				sizeof(sv->request) - 1 - got, 0);
			if (n <= 0)
				break;
			got += n;
			sv->request[got] = '\0';
			if (strstr(sv->request, "\r\n\r\n") != NULL)
				break;
		}
		if (sv->answer == NULL && sv->n_held < 8) {
			sv->held[sv->n_held++] = c;
			continue;
		}
		if (sv->answer != NULL)
			(void)send(c, sv->answer, strlen(sv->answer), 0);
		close(c);
	}
	return NULL;
}

static void
http_start(struct http_server *sv, const char *answer, uint16_t *port)
{
	memset(sv, 0, sizeof(*sv));
	sv->fd = listener(AF_INET, SOCK_STREAM, port);
	sv->answer = answer;
	ck_assert_int_eq(pthread_create(&sv->tid, NULL, http_serve, sv), 0);
}

static void
http_stop(struct http_server *sv)
{
	int i;

	sv->stop = true;
	pthread_join(sv->tid, NULL);
	for (i = 0; i < sv->n_held; i++)
		close(sv->held[i]);
	close(sv->fd);
}

START_TEST(http_status_expected_passes_other_fails)
{
	struct http_server ok, bad;
	uint16_t p1 = 0, p2 = 0;
	struct pa_health_spec s1, s2;
	struct pa_health_info i;

	http_start(&ok, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", &p1);
	http_start(&bad, "HTTP/1.0 503 Service Unavailable\r\n\r\n", &p2);
	s1 = spec_of(PA_HEALTH_HTTP, "127.0.0.1", p1);
	s2 = spec_of(PA_HEALTH_HTTP, "127.0.0.1", p2);
	ck_assert_int_eq(pa_health_set(h, 10, &s1, now), 0);
	ck_assert_int_eq(pa_health_set(h, 11, &s2, now), 0);
	ck_assert(round_(1000));
	ck_assert_int_eq(last_of(10), PA_HEALTH_R_OK);
	ck_assert_int_eq(pa_health_get(h, 11, &i), 0);
	ck_assert_int_eq(i.last, PA_HEALTH_R_BAD_STATUS);
	ck_assert_uint_eq(i.last_status_code, 503);
	ck_assert_msg(strncmp(ok.request, "GET /healthz HTTP/1.0\r\n", 23) == 0,
		"request: %s", ok.request);
	ck_assert_ptr_nonnull(strstr(ok.request, "Host: 127.0.0.1\r\n"));
	/* expect 503 makes the second one pass */
	s2.expect_status = 503;
	ck_assert_int_eq(pa_health_set(h, 11, &s2, now), 0);
	ck_assert_int_eq(status_of(11), PA_HEALTH_STATUS_UNKNOWN);
	ck_assert(round_(1000));
	ck_assert_int_eq(last_of(11), PA_HEALTH_R_OK);
	http_stop(&ok);
	http_stop(&bad);
}
END_TEST

START_TEST(http_silent_server_times_out)
{
	struct http_server sv;
	uint16_t port = 0;
	struct pa_health_spec s;

	http_start(&sv, NULL, &port);
	s = spec_of(PA_HEALTH_HTTP, "127.0.0.1", port);
	ck_assert_int_eq(pa_health_set(h, 5, &s, now), 0);
	now += (uint64_t)pa_health_timeout_ms(h, now);	/* its first */
	ck_assert(!settle());			/* connected, no answer */
	ck_assert_uint_eq(inflight(), 1);
	now += 499;
	pa_health_run(h, now);
	ck_assert_uint_eq(inflight(), 1);	/* not before the deadline */
	now += 1;
	pa_health_run(h, now);
	ck_assert_uint_eq(inflight(), 0);
	ck_assert_int_eq(last_of(5), PA_HEALTH_R_TIMEOUT);
	http_stop(&sv);
}
END_TEST

/* ---- udp ---- */

struct udp_echo {
	int fd;
	const char *answer;
	pthread_t tid;
	volatile bool stop;
};

static void *
udp_serve(void *arg)
{
	struct udp_echo *u = arg;
	struct pollfd p = { .fd = u->fd, .events = POLLIN };
	struct sockaddr_storage from;
	socklen_t len;
	char b[512];

	while (!u->stop) {
		if (poll(&p, 1, 50) <= 0)
			continue;
		len = sizeof(from);
		if (recvfrom(u->fd, b, sizeof(b), 0, (struct sockaddr *)&from,
				&len) < 0)
			continue;
		(void)sendto(u->fd, u->answer, strlen(u->answer), 0,
			(struct sockaddr *)&from, len);
	}
	return NULL;
}

START_TEST(udp_port_unreachable_fails_silence_passes)
{
	uint16_t silent = 0;
	int fd = listener(AF_INET, SOCK_DGRAM, &silent);
	struct pa_health_spec s1 = spec_of(PA_HEALTH_UDP, "127.0.0.1",
		closed_port(SOCK_DGRAM));
	struct pa_health_spec s2 = spec_of(PA_HEALTH_UDP, "127.0.0.1", silent);

	ck_assert_int_eq(pa_health_set(h, 20, &s1, now), 0);
	ck_assert_int_eq(pa_health_set(h, 21, &s2, now), 0);
	now += 1000;
	ck_assert(!settle());			/* 21 waits for its timeout */
	ck_assert_int_eq(last_of(20), PA_HEALTH_R_REFUSED);
	ck_assert_int_eq(last_of(21), PA_HEALTH_R_NONE);
	now += 500;
	ck_assert(settle());
	ck_assert_int_eq(last_of(21), PA_HEALTH_R_OK);
	close(fd);
}
END_TEST

START_TEST(udp_expect_needs_the_reply)
{
	struct udp_echo good = { 0 }, other = { 0 };
	uint16_t p1 = 0, p2 = 0, p3 = 0;
	int silent = listener(AF_INET, SOCK_DGRAM, &p3);
	struct pa_health_spec s1, s2, s3;

	good.fd = listener(AF_INET, SOCK_DGRAM, &p1);
	good.answer = "pong 1";
	other.fd = listener(AF_INET, SOCK_DGRAM, &p2);
	other.answer = "nope";
	pthread_create(&good.tid, NULL, udp_serve, &good);
	pthread_create(&other.tid, NULL, udp_serve, &other);
	s1 = spec_of(PA_HEALTH_UDP, "127.0.0.1", p1);
	s2 = spec_of(PA_HEALTH_UDP, "127.0.0.1", p2);
	s3 = spec_of(PA_HEALTH_UDP, "127.0.0.1", p3);
	snprintf(s1.expect, sizeof(s1.expect), "%s", "pong");
	snprintf(s2.expect, sizeof(s2.expect), "%s", "pong");
	snprintf(s3.expect, sizeof(s3.expect), "%s", "pong");
	ck_assert_int_eq(pa_health_set(h, 30, &s1, now), 0);
	ck_assert_int_eq(pa_health_set(h, 31, &s2, now), 0);
	ck_assert_int_eq(pa_health_set(h, 32, &s3, now), 0);
	now += 1000;
	ck_assert(!settle());
	ck_assert_int_eq(last_of(30), PA_HEALTH_R_OK);
	ck_assert_int_eq(last_of(31), PA_HEALTH_R_BAD_REPLY);
	now += 500;
	ck_assert(settle());
	ck_assert_int_eq(last_of(32), PA_HEALTH_R_TIMEOUT);
	good.stop = other.stop = true;
	pthread_join(good.tid, NULL);
	pthread_join(other.tid, NULL);
	close(good.fd);
	close(other.fd);
	close(silent);
}
END_TEST

/* ---- icmp ---- */

START_TEST(icmp_echo_ipv4_and_ipv6)
{
	struct pa_health_spec s4 = spec_of(PA_HEALTH_ICMP, "127.0.0.1", 0);
	struct pa_health_spec s6 = spec_of(PA_HEALTH_ICMP, "::1", 0);
	bool v6 = ipv6_loopback();

	ck_assert_int_eq(pa_health_set(h, 40, &s4, now), 0);
	if (v6)
		ck_assert_int_eq(pa_health_set(h, 41, &s6, now), 0);
	ck_assert(round_(1000));
	if (last_of(40) == PA_HEALTH_R_ERROR && geteuid() != 0) {
		fprintf(stderr, "icmp: neither ping nor raw sockets allowed\n");
		return;
	}
	ck_assert_int_eq(last_of(40), PA_HEALTH_R_OK);
	if (v6)
		ck_assert_int_eq(last_of(41), PA_HEALTH_R_OK);
	ck_assert(round_(1000));
	ck_assert_int_eq(status_of(40), PA_HEALTH_STATUS_UP);
}
END_TEST


/* ---- agent checks ---- */

struct agent {
	int fd;
	const char *volatile answer;
	pthread_t tid;
	volatile bool stop;
};

static void *
agent_serve(void *arg)
{
	struct agent *a = arg;
	struct pollfd p = { .fd = a->fd, .events = POLLIN };
	int c;

	while (!a->stop) {
		if (poll(&p, 1, 50) <= 0)
			continue;
		c = accept(a->fd, NULL, NULL);
		if (c < 0)
			continue;
		(void)send(c, a->answer, strlen(a->answer), 0);
		close(c);
	}
	return NULL;
}

START_TEST(agent_line_parsing_and_quantizing)
{
	enum pa_health_agent_state st;
	int pct;

	ck_assert_int_eq(pa_health_agent_parse("75%\n", &pct, &st), 0);
	ck_assert_int_eq(pct, 75);
	ck_assert_int_eq(st, PA_HEALTH_AGENT_NONE);
	ck_assert_int_eq(pa_health_agent_parse("drain 50%", &pct, &st), 0);
	ck_assert(pct == 50 && st == PA_HEALTH_AGENT_DRAIN);
	ck_assert_int_eq(pa_health_agent_parse("up,100%", &pct, &st), 0);
	ck_assert(pct == 100 && st == PA_HEALTH_AGENT_UP);
	ck_assert_int_eq(pa_health_agent_parse("MAINT", &pct, &st), 0);
	ck_assert(pct == -1 && st == PA_HEALTH_AGENT_DOWN);
	ck_assert_int_eq(pa_health_agent_parse("250%", &pct, &st), 0);
	ck_assert_int_eq(pct, 100);
	ck_assert_int_eq(pa_health_agent_parse("hello world", &pct, &st),
		-EINVAL);
	ck_assert_int_eq(pa_health_agent_parse("%", &pct, &st), -EINVAL);
	ck_assert_int_eq(pa_health_agent_parse("", &pct, &st), -EINVAL);
	ck_assert_int_eq(pa_health_agent_quantize(0), 0);
	ck_assert_int_eq(pa_health_agent_quantize(3), 10);
	ck_assert_int_eq(pa_health_agent_quantize(74), 70);
	ck_assert_int_eq(pa_health_agent_quantize(75), 80);
	ck_assert_int_eq(pa_health_agent_quantize(100), 100);
}
END_TEST

START_TEST(agent_weight_taken_after_rise_reports_state_at_once)
{
	struct agent a = { 0 };
	uint16_t port = 0;
	struct pa_health_spec s;
	struct pa_health_info i;

	a.fd = listener(AF_INET, SOCK_STREAM, &port);
	a.answer = "73%\n";
	pthread_create(&a.tid, NULL, agent_serve, &a);
	s = spec_of(PA_HEALTH_AGENT, "127.0.0.1", port);
	ck_assert_int_eq(pa_health_set(h, 50, &s, now), 0);
	ck_assert(round_(1000));
	ck_assert_int_eq(pa_health_get(h, 50, &i), 0);
	ck_assert_int_eq(i.last, PA_HEALTH_R_OK);
	ck_assert_int_eq(i.agent_reported, 70);
	ck_assert_int_eq(i.agent_pct, -1);		/* once is not enough */
	ck_assert(round_(1000));
	ck_assert_int_eq(pa_health_get(h, 50, &i), 0);
	ck_assert_int_eq(i.agent_pct, 70);		/* rise (2) in a row */
	/* a jitter of one report does not move it */
	a.answer = "41%\n";
	ck_assert(round_(1000));
	a.answer = "69% drain\n";			/* 70 again, and drain */
	ck_assert(round_(1000));
	ck_assert_int_eq(pa_health_get(h, 50, &i), 0);
	ck_assert_int_eq(i.agent_pct, 70);
	ck_assert_int_eq(i.agent_state, PA_HEALTH_AGENT_DRAIN);
	a.answer = "what?\n";
	ck_assert(round_(1000));
	ck_assert_int_eq(last_of(50), PA_HEALTH_R_BAD_REPLY);
	ck_assert_int_eq(pa_health_get(h, 50, &i), 0);
	ck_assert_int_eq(i.agent_state, PA_HEALTH_AGENT_DRAIN);	/* kept */
	a.stop = true;
	pthread_join(a.tid, NULL);
	close(a.fd);
	/* an agent that is gone: refused, what it said last still holds */
	ck_assert(round_(1000));
	ck_assert_int_eq(pa_health_get(h, 50, &i), 0);
	ck_assert_int_eq(i.last, PA_HEALTH_R_REFUSED);
	ck_assert_int_eq(i.agent_pct, 70);
}
END_TEST

/* ---- timers and bounds ---- */

START_TEST(first_probes_spread_over_the_interval)
{
	uint16_t port = 0;
	int fd = listener(AF_INET, SOCK_DGRAM, &port);
	struct pa_health_spec s = spec_of(PA_HEALTH_UDP, "127.0.0.1", port);
	struct pa_health_stats st;
	unsigned int i, step, min = 1000, max = 0;

	s.timeout_ms = 50;
	for (i = 0; i < 200; i++)
		ck_assert_int_eq(pa_health_set(h, i, &s, now), 0);
	/* 10 steps of 100 ms: each ends the last step's probes (a silent
	 * udp probe stays in flight until its 50 ms timeout) and starts
	 * about a tenth of them */
	for (step = 0; step < 10; step++) {
		now += 100;
		pa_health_run(h, now);
		pa_health_stats(h, &st);
		if (st.inflight < min)
			min = (unsigned int)st.inflight;
		if (st.inflight > max)
			max = (unsigned int)st.inflight;
	}
	now += 60;
	pa_health_run(h, now);
	pa_health_stats(h, &st);
	/* each once (slot 0, phase 0, started 100 ms late, again at
	 * 1000 ms: its grid's next place) */
	for (i = 0; i < 200; i++) {
		struct pa_health_info in;

		ck_assert_int_eq(pa_health_get(h, i, &in), 0);
		ck_assert_uint_eq(in.probes, i == 0 ? 2 : 1);
	}
	ck_assert_uint_eq(st.probes, 201);
	ck_assert_msg(min >= 10 && max <= 30, "per 100 ms: %u..%u", min, max);
	close(fd);
}
END_TEST

/* The probes keep to their grid (first probe + k intervals): a caller
 * that runs late does not push the next probe back. */
START_TEST(probes_keep_their_grid_when_runs_come_late)
{
	uint16_t port = 0;
	int fd = listener(AF_INET, SOCK_STREAM, &port);
	struct pa_health_spec s = spec_of(PA_HEALTH_TCP, "127.0.0.1", port);
	struct pa_health_stats st;
	uint64_t first;
	unsigned int k;

	ck_assert_int_eq(pa_health_set(h, 3, &s, now), 0);
	first = now + (uint64_t)pa_health_timeout_ms(h, now);
	for (k = 0; k < 10; k++) {
		now = first + k * 1000 + 37;	/* 37 ms late */
		ck_assert(settle());
		pa_health_stats(h, &st);
		ck_assert_uint_eq(st.probes, k + 1);
		/* the next at first + (k + 1) s, not 1 s after this start */
		ck_assert_int_eq(pa_health_timeout_ms(h, now), 1000 - 37);
	}
	ck_assert_int_eq(last_of(3), PA_HEALTH_R_OK);
	close(fd);
}
END_TEST

/* A probe that started a whole interval late (or more) skips the places
 * it missed: the next is the grid's next after its start, not at once. */
START_TEST(a_probe_late_by_intervals_skips_them)
{
	uint16_t port = 0;
	int fd = listener(AF_INET, SOCK_STREAM, &port);
	struct pa_health_spec s = spec_of(PA_HEALTH_TCP, "127.0.0.1", port);
	uint64_t first;

	ck_assert_int_eq(pa_health_set(h, 0, &s, now), 0);
	first = now + (uint64_t)pa_health_timeout_ms(h, now);
	now = first + 2500;
	ck_assert(settle());
	ck_assert_uint_eq(n_probes, 1);
	ck_assert_int_eq(pa_health_timeout_ms(h, now), 500);
	now = first + 3000;
	ck_assert(settle());
	ck_assert_uint_eq(n_probes, 2);
	ck_assert_int_eq(pa_health_timeout_ms(h, now), 1000);
	close(fd);
}
END_TEST

/* A probe that waited for a socket keeps its target's grid. */
START_TEST(a_deferred_probe_keeps_its_grid)
{
	struct pa_health_opts o = { .max_targets = 4, .max_inflight = 1 };
	struct pa_health *b;
	struct pa_health_stats st;
	uint16_t port = 0;
	int fd = listener(AF_INET, SOCK_DGRAM, &port);
	struct pa_health_spec s = spec_of(PA_HEALTH_UDP, "127.0.0.1", port);
	uint64_t t0 = now;
	char err[64];

	s.timeout_ms = 800;			/* silence: a pass at 800 ms */
	b = pa_health_create(&o, err, sizeof(err));
	ck_assert_ptr_nonnull(b);
	/* slot 0's phase is 0, slot 1's 618 ms (the slot's hash) */
	ck_assert_int_eq(pa_health_set(b, 0, &s, t0), 0);
	ck_assert_int_eq(pa_health_set(b, 1, &s, t0), 0);
	ck_assert_int_eq(pa_health_timeout_ms(b, t0), 0);
	pa_health_run(b, t0);			/* slot 0 starts */
	ck_assert_int_eq(pa_health_timeout_ms(b, t0), 618);
	pa_health_run(b, t0 + 618);		/* slot 1 due: waits */
	pa_health_stats(b, &st);
	ck_assert_uint_eq(st.inflight, 1);
	ck_assert_uint_eq(st.waiting, 1);
	/* slot 0 ends (its next at t0 + 1000), slot 1 starts, 182 ms
	 * late */
	pa_health_run(b, t0 + 800);
	pa_health_stats(b, &st);
	ck_assert_uint_eq(st.probes, 1);
	ck_assert_uint_eq(st.waiting, 0);
	ck_assert_uint_eq(st.inflight, 1);
	ck_assert_int_eq(pa_health_timeout_ms(b, t0 + 800), 200);
	pa_health_run(b, t0 + 1000);		/* slot 0 due: waits */
	pa_health_stats(b, &st);
	ck_assert_uint_eq(st.waiting, 1);
	/* slot 1 ends at t0 + 1600: its next at t0 + 1618 (its grid), not
	 * t0 + 1800 (1 s after its late start); slot 0 starts */
	pa_health_run(b, t0 + 1600);
	pa_health_stats(b, &st);
	ck_assert_uint_eq(st.probes, 2);
	ck_assert_uint_eq(st.inflight, 1);
	ck_assert_uint_eq(st.waiting, 0);
	ck_assert_int_eq(pa_health_timeout_ms(b, t0 + 1600), 18);
	pa_health_destroy(b);
	close(fd);
}
END_TEST

/* max_inflight 0: the limit follows the targets (timeout / interval). */
START_TEST(inflight_limit_sized_from_the_targets)
{
	struct pa_health_spec s = spec_of(PA_HEALTH_TCP, "127.0.0.1", 80);
	struct pa_health_stats st;
	struct pa_health_opts o = { .max_targets = 4000 };
	struct pa_health *b;
	unsigned int i;
	char err[64];

	b = pa_health_create(&o, err, sizeof(err));
	ck_assert_ptr_nonnull(b);
	pa_health_stats(b, &st);
	ck_assert_uint_eq(st.max_inflight, 64);	/* the floor */
	/* 1000 targets, timeout 500 of 1000: 1000 x 0.501 = 501, an eighth
	 * more and 16 (unless RLIMIT_NOFILE is lower) */
	for (i = 0; i < 1000; i++)
		ck_assert_int_eq(pa_health_set(b, i, &s, now), 0);
	pa_health_stats(b, &st);
	ck_assert_uint_le(st.max_inflight, 501 + 62 + 16);
	ck_assert_uint_ge(st.max_inflight, 64);
	/* 4000: 2004 + 250 + 16, at most the ceiling */
	for (i = 1000; i < 4000; i++)
		ck_assert_int_eq(pa_health_set(b, i, &s, now), 0);
	pa_health_stats(b, &st);
	ck_assert_uint_le(st.max_inflight, PA_HEALTH_AUTO_MAX_INFLIGHT);
	ck_assert_uint_ge(st.max_inflight, 64);
	for (i = 0; i < 4000; i++)
		pa_health_clear(b, i);
	pa_health_stats(b, &st);
	ck_assert_uint_eq(st.max_inflight, 64);
	pa_health_destroy(b);
}
END_TEST

START_TEST(inflight_bounded_and_deferred_counted)
{
	struct pa_health_opts o = { .max_targets = 64, .max_inflight = 4 };
	struct pa_health *b;
	struct pa_health_stats st;
	uint16_t port = 0;
	int fd = listener(AF_INET, SOCK_DGRAM, &port);
	struct pa_health_spec s = spec_of(PA_HEALTH_UDP, "127.0.0.1", port);
	unsigned int i;
	char err[64];

	b = pa_health_create(&o, err, sizeof(err));
	ck_assert_ptr_nonnull(b);
	for (i = 0; i < 20; i++)
		ck_assert_int_eq(pa_health_set(b, i, &s, now), 0);
	now += 1000;				/* all due */
	pa_health_run(b, now);
	pa_health_stats(b, &st);
	ck_assert_uint_eq(st.inflight, 4);
	ck_assert_uint_eq(st.waiting, 16);
	ck_assert_uint_eq(st.deferred, 16);	/* each once */
	/* nothing to wait for but the probes in flight: their deadline */
	ck_assert_int_eq(pa_health_timeout_ms(b, now), 500);
	/* the 4 end at their timeout (silence: a udp pass), the 4 oldest
	 * waiting start in the same call; those of the 4 whose next place
	 * on their grid has passed (they started late) queue behind the
	 * others, each counted once */
	now += 500;
	pa_health_run(b, now);
	pa_health_stats(b, &st);
	ck_assert_uint_eq(st.probes, 4);
	ck_assert_uint_eq(st.inflight, 4);
	ck_assert_uint_ge(st.waiting, 12);
	ck_assert_uint_le(st.waiting, 16);
	ck_assert_uint_eq(st.deferred - 16, st.waiting - 12);
	/* they all get their turn, never more than 4 at once */
	for (i = 0; i < 20; i++) {
		now += 500;
		pa_health_run(b, now);
		pa_health_stats(b, &st);
		ck_assert_uint_le(st.inflight, 4);
	}
	ck_assert_uint_ge(st.probes, 20);
	/* a waiting target cleared leaves the list */
	for (i = 20; i < 30; i++)
		ck_assert_int_eq(pa_health_set(b, i, &s, now), 0);
	now += 1000;
	pa_health_run(b, now);
	pa_health_stats(b, &st);
	ck_assert_uint_gt(st.waiting, 0);
	for (i = 0; i < 30; i++)
		pa_health_clear(b, i);
	pa_health_stats(b, &st);
	ck_assert_uint_eq(st.waiting, 0);
	ck_assert_uint_eq(st.inflight, 0);
	ck_assert_uint_eq(st.targets, 0);
	ck_assert_int_eq(pa_health_timeout_ms(b, now), -1);
	pa_health_destroy(b);
	close(fd);
}
END_TEST

START_TEST(set_clear_and_bad_specs)
{
	struct pa_health_spec s = spec_of(PA_HEALTH_TCP, "127.0.0.1", 80);
	struct pa_health_spec bad;
	struct pa_health_stats st;

	ck_assert_int_eq(pa_health_set(h, SLOTS, &s, now), -EINVAL);
	bad = s;
	bad.timeout_ms = bad.interval_ms;
	ck_assert_int_eq(pa_health_set(h, 0, &bad, now), -EINVAL);
	bad = s;
	bad.port = 0;
	ck_assert_int_eq(pa_health_set(h, 0, &bad, now), -EINVAL);
	bad = s;
	bad.type = PA_HEALTH_NONE;
	ck_assert_int_eq(pa_health_set(h, 0, &bad, now), -EINVAL);
	ck_assert_int_eq(pa_health_timeout_ms(h, now), -1);
	ck_assert_int_eq(pa_health_set(h, 9, &s, now), 0);
	ck_assert(pa_health_is_set(h, 9));
	ck_assert_int_ge(pa_health_timeout_ms(h, now), 0);
	ck_assert_int_le(pa_health_timeout_ms(h, now), 1000);
	pa_health_clear(h, 9);
	ck_assert(!pa_health_is_set(h, 9));
	pa_health_stats(h, &st);
	ck_assert_uint_eq(st.targets, 0);
	ck_assert_uint_eq(st.unknown, 0);
	ck_assert_int_eq(pa_health_timeout_ms(h, now), -1);
	ck_assert_str_eq(pa_health_result_name(PA_HEALTH_R_BAD_STATUS),
		"bad_status");
	ck_assert_str_eq(pa_health_status_name(PA_HEALTH_STATUS_DOWN), "down");
}
END_TEST

static Suite *
health_suite(void)
{
	Suite *s = suite_create("health");
	TCase *tc = tcase_create("prober");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, tcp_listener_up_after_rise_passes);
	tcase_add_test(tc, tcp_reset_down_after_fall_failures);
	tcase_add_test(tc, tcp_down_and_back_follows_rise_and_fall);
	tcase_add_test(tc, tcp_ipv6_and_source_address_and_device);
	tcase_add_test(tc, http_status_expected_passes_other_fails);
	tcase_add_test(tc, http_silent_server_times_out);
	tcase_add_test(tc, udp_port_unreachable_fails_silence_passes);
	tcase_add_test(tc, udp_expect_needs_the_reply);
	tcase_add_test(tc, icmp_echo_ipv4_and_ipv6);
	tcase_add_test(tc, agent_line_parsing_and_quantizing);
	tcase_add_test(tc, agent_weight_taken_after_rise_reports_state_at_once);
	tcase_add_test(tc, first_probes_spread_over_the_interval);
	tcase_add_test(tc, probes_keep_their_grid_when_runs_come_late);
	tcase_add_test(tc, a_probe_late_by_intervals_skips_them);
	tcase_add_test(tc, a_deferred_probe_keeps_its_grid);
	tcase_add_test(tc, inflight_limit_sized_from_the_targets);
	tcase_add_test(tc, inflight_bounded_and_deferred_counted);
	tcase_add_test(tc, set_clear_and_bad_specs);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	static Suite *(*const suites[])(void) = { health_suite, NULL };
	const struct pa_test_main t = {
		.name = "test_health",
		.suites = suites,
	};

	return pa_test_main(&t);
}
