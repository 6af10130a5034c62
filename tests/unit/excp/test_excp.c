/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of lib/excp's data-path half: the token bucket (GCRA) and
 * pa_excp_punt(): which frames go to a port's kernel_if, the bounded
 * ring, the rate, and the ARP reply / NA copies lib/neigh also keeps.
 *
 * One EAL (--no-huge), no lcores, no TAP: the address table is lib/neigh's
 * (two ports from a configuration, no devices), the pa_excp_fast is made
 * here as pa_excp_create() makes it, and the ring is read by hand.
 */

#include <arpa/inet.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include <rte_eal.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include "pa_config.h"
#include "pa_excp.h"
#include "pa_lb.h"
#include "pa_neigh.h"
#include "pa_pkt.h"
#include "pa_test_frame.h"
#include "pa_test_main.h"

#define RING		8	/* capacity 7 */
#define INTERVAL	1000	/* TSC cycles a token */

static struct rte_mempool *pool;
static struct pa_config *cfg;
static struct pa_lb *lb;
static struct pa_neigh *nb;
static struct pa_port_set ports;
static struct pa_excp_fast fx;

static const uint8_t MAC0[6] = { 0x02, 0, 0, 0, 0xaa, 0x00 };
static const uint8_t HOST[6] = { 0x02, 0, 0, 0, 0x11, 0x11 };

static const char *CONF =
"{\"ports\": [{\"name\": \"p0\", \"devargs\": \"net_null0\","
"  \"addr\": [\"198.51.100.5/24\", \"2001:db8:1::5/64\"], \"kernel_if\": \"pa0\"},"
" {\"name\": \"p1\", \"devargs\": \"net_null1\", \"addr\": [\"203.0.113.5/24\"]}],"
" \"lb\": {\"local_addr\": \"192.0.2.254\", \"services\": ["
"  {\"name\": \"web\", \"vip\": \"192.0.2.10\", \"port\": 80, \"proto\": \"tcp\","
"   \"backends\": [{\"addr\": \"10.9.0.1\"}]}]}}";

/* One address, shared: lb.local_addr and local_addr6 are p0's own. */
static const char *CONF_SHARED =
"{\"ports\": [{\"name\": \"p0\", \"devargs\": \"net_null0\","
"  \"addr\": [\"198.51.100.5/24\", \"2001:db8:1::5/64\"], \"kernel_if\": \"pa0\"},"
" {\"name\": \"p1\", \"devargs\": \"net_null1\", \"addr\": [\"203.0.113.5/24\"]}],"
" \"lb\": {\"local_addr\": \"198.51.100.5\", \"local_addr6\": \"2001:db8:1::5\","
"  \"services\": ["
"  {\"name\": \"web\", \"vip\": \"192.0.2.10\", \"port\": 80, \"proto\": \"tcp\","
"   \"backends\": [{\"addr\": \"10.9.0.1\"}]},"
"  {\"name\": \"web6\", \"vip\": \"2001:db8:100::10\", \"port\": 80,"
"   \"proto\": \"tcp\", \"backends\": [{\"addr\": \"2001:db8:9::1\"}]}]}}";

/* the configuration the next setup loads (NULL: CONF) */
static const char *conf_next;

/* ---- the token bucket ---- */

START_TEST(test_bucket_gives_its_burst_then_one_token_an_interval)
{
	uint64_t tat = 0, now = 1000000;
	unsigned int i, got = 0;

	for (i = 0; i < 100; i++)
		got += pa_excp_tb_take(&tat, now, INTERVAL, 9 * INTERVAL);
	ck_assert_uint_eq(got, 10);		/* burst 10 */
	ck_assert(!pa_excp_tb_take(&tat, now + INTERVAL - 1, INTERVAL,
		9 * INTERVAL));
	ck_assert(pa_excp_tb_take(&tat, now + INTERVAL, INTERVAL,
		9 * INTERVAL));
	ck_assert(!pa_excp_tb_take(&tat, now + INTERVAL, INTERVAL,
		9 * INTERVAL));
	/* idle long enough: full again, never fuller */
	for (got = 0, i = 0; i < 100; i++)
		got += pa_excp_tb_take(&tat, now + 1000 * INTERVAL, INTERVAL,
			9 * INTERVAL);
	ck_assert_uint_eq(got, 10);
}
END_TEST

START_TEST(test_bucket_over_a_flood_never_passes_more_than_rate_plus_burst)
{
	uint64_t tat = 0, t;
	unsigned int got = 0;

	/* one offer every 7 cycles for 1000 intervals */
	for (t = 5000; t < 5000 + 1000 * INTERVAL; t += 7)
		got += pa_excp_tb_take(&tat, t, INTERVAL, 31 * INTERVAL);
	ck_assert_uint_le(got, 1000 + 32);
	ck_assert_uint_ge(got, 1000);
}
END_TEST

/* ---- which frames go to the kernel ---- */

static void
teardown(void)
{
	struct rte_mbuf *m;
	unsigned int i;

	for (i = 0; i < PA_CONFIG_MAX_PORTS; i++) {
		if (fx.ring[i] == NULL)
			continue;
		while (rte_ring_dequeue(fx.ring[i], (void **)&m) == 0)
			rte_pktmbuf_free(m);
		rte_ring_free(fx.ring[i]);
	}
	rte_free(fx.rows);
	memset(&fx, 0, sizeof(fx));
	pa_neigh_destroy(nb);
	nb = NULL;
	pa_lb_destroy(lb);
	lb = NULL;
	pa_config_free(cfg);
	cfg = NULL;
	ck_assert_uint_eq(rte_mempool_in_use_count(pool), 0);
}

static void
setup(void)
{
	char err[PA_CONFIG_ERR_MAX];
	struct pa_neigh_opts no;
	struct pa_lb_opts lo;
	unsigned int i;

	cfg = pa_config_load_string(conf_next != NULL ? conf_next : CONF,
		NULL, err, sizeof(err));
	ck_assert_msg(cfg != NULL, "config: %s", err);
	ck_assert_str_eq(cfg->ports[0].kernel_if, "pa0");
	ck_assert_uint_eq(pa_excp_count(cfg), 1);
	memset(&lo, 0, sizeof(lo));
	lo.n_lcores = 1;
	lo.cfg = cfg;
	lb = pa_lb_create(&lo, err, sizeof(err));
	ck_assert_msg(lb != NULL, "lb: %s", err);
	memset(&ports, 0, sizeof(ports));
	memset(ports.index_of, 0xff, sizeof(ports.index_of));
	ports.n = 2;
	for (i = 0; i < 2; i++) {
		snprintf(ports.port[i].name, sizeof(ports.port[i].name), "p%u", i);
		ports.port[i].port_id = (uint16_t)i;
		ports.port[i].pool = pool;
		memcpy(ports.port[i].mac.addr_bytes, MAC0, 6);
		ports.port[i].mac.addr_bytes[5] = (uint8_t)i;
		ports.index_of[i] = (uint16_t)i;
	}
	memset(&no, 0, sizeof(no));
	no.cfg = cfg;
	no.ports = &ports;
	no.lb = lb;
	nb = pa_neigh_create(&no, 1000, err, sizeof(err));
	ck_assert_msg(nb != NULL, "neigh: %s", err);

	memset(&fx, 0, sizeof(fx));
	fx.neigh = pa_neigh_fast(nb);
	fx.ports = 1u << 0;
	fx.ring[0] = rte_ring_create("test_excp", RING, SOCKET_ID_ANY,
		RING_F_SC_DEQ);
	ck_assert_ptr_nonnull(fx.ring[0]);
	/* a bucket far deeper than anything here: the rate test sets its own */
	fx.interval[0] = 1;
	fx.tolerance[0] = UINT64_MAX / 4;
	fx.rows = rte_zmalloc(NULL, sizeof(*fx.rows), RTE_CACHE_LINE_SIZE);
	ck_assert_ptr_nonnull(fx.rows);
}

static struct rte_mbuf *
mbuf_of(const struct pa_test_frame *f)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	char *d;

	ck_assert_ptr_nonnull(m);
	d = rte_pktmbuf_append(m, (uint16_t)f->len);
	ck_assert_ptr_nonnull(d);
	memcpy(d, f->b, f->len);
	ck_assert_int_eq(pa_pkt_parse_mbuf(m), 0);
	return m;
}

static struct rte_mbuf *
udp4(const char *dst)
{
	struct pa_test_frame f;
	uint8_t s[4], d[4];

	ck_assert_int_eq(inet_pton(AF_INET, "198.51.100.66", s), 1);
	ck_assert_int_eq(inet_pton(AF_INET, dst, d), 1);
	pa_test_frame_l2(&f, MAC0, HOST, 0, NULL, 0, RTE_ETHER_TYPE_IPV4);
	pa_test_frame_ipv4(&f, s, d, IPPROTO_UDP, 0, 5, 0, 0, 64);
	pa_test_frame_udp(&f, 40000, 179);
	pa_test_frame_payload(&f, 8, 0, 1);
	pa_test_frame_fix(&f, 0);
	return mbuf_of(&f);
}

static struct rte_mbuf *
udp6(const char *dst)
{
	struct pa_test_frame f;
	uint8_t s[16], d[16];

	ck_assert_int_eq(inet_pton(AF_INET6, "2001:db8:1::66", s), 1);
	ck_assert_int_eq(inet_pton(AF_INET6, dst, d), 1);
	pa_test_frame_l2(&f, MAC0, HOST, 0, NULL, 0, RTE_ETHER_TYPE_IPV6);
	pa_test_frame_ipv6(&f, s, d, IPPROTO_UDP, 0, 0, 64);
	pa_test_frame_udp(&f, 40000, 179);
	pa_test_frame_payload(&f, 8, 0, 1);
	pa_test_frame_fix(&f, 0);
	return mbuf_of(&f);
}

static struct rte_mbuf *
arp(uint16_t op, const char *spa, const char *tpa)
{
	struct pa_test_frame f;
	uint8_t *a;

	pa_test_frame_l2(&f, MAC0, HOST, 0, NULL, 0, RTE_ETHER_TYPE_ARP);
	a = pa_test_frame_grow(&f, 28);
	pa_test_put16(a, 1);
	pa_test_put16(a + 2, RTE_ETHER_TYPE_IPV4);
	a[4] = 6;
	a[5] = 4;
	pa_test_put16(a + 6, op);
	memcpy(a + 8, HOST, 6);
	ck_assert_int_eq(inet_pton(AF_INET, spa, a + 14), 1);
	memcpy(a + 18, MAC0, 6);
	ck_assert_int_eq(inet_pton(AF_INET, tpa, a + 24), 1);
	return mbuf_of(&f);
}

/* pa_excp_punt() with lib/neigh's verdict first, as the rx stage calls it */
static int
punt(struct rte_mbuf *m, uint16_t port, int *nv)
{
	*nv = pa_neigh_rx_classify(pa_neigh_fast(nb), m, pa_pkt_meta(m), port);
	return pa_excp_punt(&fx, 0, m, pa_pkt_meta(m), port, *nv);
}

static void
expect_pass(struct rte_mbuf *m, uint16_t port)
{
	int nv;

	ck_assert_int_eq(punt(m, port, &nv), PA_EXCP_PASS);
	ck_assert_uint_eq(rte_ring_count(fx.ring[0]), 0);
	rte_pktmbuf_free(m);
}

START_TEST(test_frames_for_the_port_address_go_to_its_kernel_if_only)
{
	struct rte_mbuf *m, *got;
	int nv;

	m = udp4("198.51.100.5");
	ck_assert_int_eq(punt(m, 0, &nv), PA_EXCP_TAKEN);
	ck_assert_int_eq(nv, PA_NEIGH_RX_PASS);
	ck_assert_int_eq(rte_ring_dequeue(fx.ring[0], (void **)&got), 0);
	ck_assert_ptr_eq(got, m);
	rte_pktmbuf_free(got);

	m = udp6("2001:db8:1::5");
	ck_assert_int_eq(punt(m, 0, &nv), PA_EXCP_TAKEN);
	ck_assert_int_eq(rte_ring_dequeue(fx.ring[0], (void **)&got), 0);
	rte_pktmbuf_free(got);

	/* not the port's own: a VIP, lb.local_addr, a neighbour, transit */
	expect_pass(udp4("192.0.2.10"), 0);
	expect_pass(udp4("192.0.2.254"), 0);
	expect_pass(udp4("198.51.100.7"), 0);
	expect_pass(udp6("2001:db8:1::7"), 0);
	/* another port's address, or received on a port without kernel_if */
	expect_pass(udp4("203.0.113.5"), 0);
	expect_pass(udp4("198.51.100.5"), 1);
	expect_pass(udp4("203.0.113.5"), 1);
	/* ARP requests for the port's address stay lib/neigh's alone */
	m = arp(1, "198.51.100.66", "198.51.100.5");
	ck_assert_int_eq(punt(m, 0, &nv), PA_EXCP_PASS);
	ck_assert_int_eq(nv, PA_NEIGH_RX_LOCAL);
	ck_assert_uint_eq(rte_ring_count(fx.ring[0]), 0);
	ck_assert_uint_eq(rte_mbuf_refcnt_read(m), 1);
	rte_pktmbuf_free(m);
}
END_TEST

START_TEST(test_the_ring_is_bounded_and_full_is_told)
{
	struct rte_mbuf *m;
	unsigned int i;
	int nv;

	for (i = 0; i < RING - 1; i++)
		ck_assert_int_eq(punt(udp4("198.51.100.5"), 0, &nv),
			PA_EXCP_TAKEN);
	m = udp4("198.51.100.5");
	ck_assert_int_eq(punt(m, 0, &nv), PA_EXCP_FULL);
	ck_assert_uint_eq(rte_ring_count(fx.ring[0]), RING - 1);
	rte_pktmbuf_free(m);	/* the caller drops it */
}
END_TEST

START_TEST(test_over_the_rate_is_told_and_nothing_is_queued)
{
	unsigned int i, taken = 0, rate = 0;
	struct rte_mbuf *m;
	int nv, v;

	/* a bucket of 3 that refills once an hour */
	fx.interval[0] = rte_get_tsc_hz() * 3600;
	fx.tolerance[0] = 2 * fx.interval[0];
	for (i = 0; i < 5; i++) {
		m = udp4("198.51.100.5");
		v = punt(m, 0, &nv);
		if (v == PA_EXCP_TAKEN) {
			taken++;
			continue;
		}
		ck_assert_int_eq(v, PA_EXCP_RATE);
		rate++;
		rte_pktmbuf_free(m);
	}
	ck_assert_uint_eq(taken, 3);
	ck_assert_uint_eq(rate, 2);
	ck_assert_uint_eq(rte_ring_count(fx.ring[0]), 3);
}
END_TEST

START_TEST(test_arp_replies_to_the_port_address_are_shared_with_the_kernel)
{
	struct rte_mbuf *m, *got;
	int nv;

	m = arp(2, "198.51.100.1", "198.51.100.5");
	ck_assert_int_eq(punt(m, 0, &nv), PA_EXCP_PASS);
	ck_assert_int_eq(nv, PA_NEIGH_RX_LOCAL);	/* lib/neigh's too */
	ck_assert_uint_eq(rte_mbuf_refcnt_read(m), 2);
	ck_assert_int_eq(rte_ring_dequeue(fx.ring[0], (void **)&got), 0);
	ck_assert_ptr_eq(got, m);
	ck_assert_uint_eq(fx.rows[0].clones, 1);
	rte_pktmbuf_free(got);		/* the kernel's reference */
	ck_assert_uint_eq(rte_mbuf_refcnt_read(m), 1);
	rte_pktmbuf_free(m);		/* lib/neigh's */

	/* a reply to a VIP is not the kernel's */
	m = arp(2, "198.51.100.1", "192.0.2.10");
	ck_assert_int_eq(punt(m, 0, &nv), PA_EXCP_PASS);
	ck_assert_uint_eq(rte_mbuf_refcnt_read(m), 1);
	ck_assert_uint_eq(rte_ring_count(fx.ring[0]), 0);
	rte_pktmbuf_free(m);

	/* no room: no copy, counted, and lib/neigh keeps its frame */
	fx.interval[0] = rte_get_tsc_hz() * 3600;
	fx.tolerance[0] = 0;
	fx.rows[0].tat[0] = 0;
	m = arp(2, "198.51.100.1", "198.51.100.5");
	ck_assert_int_eq(punt(m, 0, &nv), PA_EXCP_PASS);
	ck_assert_uint_eq(rte_ring_count(fx.ring[0]), 1);
	m = arp(2, "198.51.100.1", "198.51.100.5");
	ck_assert_int_eq(punt(m, 0, &nv), PA_EXCP_PASS);
	ck_assert_uint_eq(rte_mbuf_refcnt_read(m), 1);
	ck_assert_uint_eq(fx.rows[0].clones_skipped, 1);
	rte_pktmbuf_free(m);
	/* the first one's neigh reference: still in the ring as the kernel's */
	ck_assert_int_eq(rte_ring_dequeue(fx.ring[0], (void **)&got), 0);
	ck_assert_uint_eq(rte_mbuf_refcnt_read(got), 2);
	rte_pktmbuf_free(got);
	rte_pktmbuf_free(got);
}
END_TEST

/* An ICMP (@p ver 4) / ICMPv6 (6) error of @p type and @p code from a
 * router to @p dst, quoting a packet of protocol @p qproto from @p qsrc to
 * @p qdst. */
static struct rte_mbuf *
icmp_err(int ver, const char *dst, uint8_t type, uint8_t code,
		uint8_t qproto, const char *qsrc, const char *qdst)
{
	struct pa_test_frame f;
	uint8_t s[16], d[16], qs[16], qd[16];
	int af = ver == 4 ? AF_INET : AF_INET6;

	ck_assert_int_eq(inet_pton(af, ver == 4 ? "198.51.100.1" :
		"2001:db8:1::1", s), 1);
	ck_assert_int_eq(inet_pton(af, dst, d), 1);
	ck_assert_int_eq(inet_pton(af, qsrc, qs), 1);
	ck_assert_int_eq(inet_pton(af, qdst, qd), 1);
	pa_test_frame_l2(&f, MAC0, HOST, 0, NULL, 0, ver == 4 ?
		RTE_ETHER_TYPE_IPV4 : RTE_ETHER_TYPE_IPV6);
	if (ver == 4)
		pa_test_frame_ipv4(&f, s, d, IPPROTO_ICMP, 0, 5, 0, 0, 64);
	else
		pa_test_frame_ipv6(&f, s, d, IPPROTO_ICMPV6, 0, 0, 64);
	pa_test_frame_icmp(&f, type, 0);
	f.b[f.l4 + 1] = code;
	pa_test_frame_quote(&f, ver, qproto, qs, qd);
	pa_test_frame_fix(&f, 0);
	return mbuf_of(&f);
}

static void
expect_taken(struct rte_mbuf *m, uint16_t port)
{
	struct rte_mbuf *got;
	int nv;

	ck_assert_int_eq(punt(m, port, &nv), PA_EXCP_TAKEN);
	ck_assert_int_eq(rte_ring_dequeue(fx.ring[0], (void **)&got), 0);
	ck_assert_ptr_eq(got, m);
	rte_pktmbuf_free(got);
}

static void
setup_shared(void)
{
	conf_next = CONF_SHARED;
	setup();
	conf_next = NULL;
}

START_TEST(test_shared_local_addr_gives_the_kernel_all_but_the_lbs_own_icmp_errors)
{
	struct rte_mbuf *m, *got;
	int nv;

	/* the kernel's: BGP, ping, a health probe's port unreachable */
	expect_taken(udp4("198.51.100.5"), 0);
	expect_taken(udp6("2001:db8:1::5"), 0);
	expect_taken(icmp_err(4, "198.51.100.5", 3, 3, IPPROTO_UDP,
		"198.51.100.5", "10.9.0.1"), 0);
	expect_taken(icmp_err(6, "2001:db8:1::5", 1, 4, IPPROTO_UDP,
		"2001:db8:1::5", "2001:db8:9::1"), 0);
	/* an error about an IPIP packet somebody else sent */
	expect_taken(icmp_err(4, "198.51.100.5", 3, 4, IPPROTO_IPIP,
		"198.51.100.9", "10.9.0.1"), 0);
	/* the load balancer's: errors about the ipip packets it sent */
	expect_pass(icmp_err(4, "198.51.100.5", 3, 4, IPPROTO_IPIP,
		"198.51.100.5", "10.9.0.1"), 0);
	expect_pass(icmp_err(4, "198.51.100.5", 11, 0, IPPROTO_IPIP,
		"198.51.100.5", "10.9.0.1"), 0);
	expect_pass(icmp_err(6, "2001:db8:1::5", 2, 0, IPPROTO_IPV6,
		"2001:db8:1::5", "2001:db8:9::1"), 0);
	expect_pass(icmp_err(6, "2001:db8:1::5", 3, 0, IPPROTO_IPV6,
		"2001:db8:1::5", "2001:db8:9::1"), 0);
	/* a VIP stays the data path's; port 1 has no kernel_if */
	expect_pass(udp4("192.0.2.10"), 0);
	expect_pass(udp4("198.51.100.5"), 1);
	/* the kernel's ARP answers reach it, as for a port address alone */
	m = arp(2, "198.51.100.1", "198.51.100.5");
	ck_assert_int_eq(punt(m, 0, &nv), PA_EXCP_PASS);
	ck_assert_int_eq(nv, PA_NEIGH_RX_LOCAL);
	ck_assert_uint_eq(rte_mbuf_refcnt_read(m), 2);
	ck_assert_int_eq(rte_ring_dequeue(fx.ring[0], (void **)&got), 0);
	ck_assert_ptr_eq(got, m);
	rte_pktmbuf_free(got);
	rte_pktmbuf_free(m);
	/* ARP requests for it are lib/neigh's to answer, on every port */
	m = arp(1, "198.51.100.66", "198.51.100.5");
	ck_assert_int_eq(punt(m, 0, &nv), PA_EXCP_PASS);
	ck_assert_int_eq(nv, PA_NEIGH_RX_LOCAL);
	ck_assert_uint_eq(rte_ring_count(fx.ring[0]), 0);
	rte_pktmbuf_free(m);
	m = arp(1, "203.0.113.66", "198.51.100.5");
	ck_assert_int_eq(pa_neigh_rx_classify(pa_neigh_fast(nb), m,
		pa_pkt_meta(m), 1), PA_NEIGH_RX_LOCAL);
	rte_pktmbuf_free(m);
}
END_TEST

static Suite *
excp_suite(void)
{
	Suite *s = suite_create("excp");
	TCase *tc;

	tc = tcase_create("bucket");
	tcase_add_test(tc, test_bucket_gives_its_burst_then_one_token_an_interval);
	tcase_add_test(tc, test_bucket_over_a_flood_never_passes_more_than_rate_plus_burst);
	suite_add_tcase(s, tc);

	tc = tcase_create("punt");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_frames_for_the_port_address_go_to_its_kernel_if_only);
	tcase_add_test(tc, test_the_ring_is_bounded_and_full_is_told);
	tcase_add_test(tc, test_over_the_rate_is_told_and_nothing_is_queued);
	tcase_add_test(tc, test_arp_replies_to_the_port_address_are_shared_with_the_kernel);
	suite_add_tcase(s, tc);

	tc = tcase_create("shared");
	tcase_add_checked_fixture(tc, setup_shared, teardown);
	tcase_add_test(tc, test_shared_local_addr_gives_the_kernel_all_but_the_lbs_own_icmp_errors);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	static const char *const eal_args[] = { "-m", "256",
		"--log-level=pa.lb:warning", "--log-level=pa.neigh:warning",
		"-l", "0", NULL };
	static Suite *(*const suites[])(void) = { excp_suite, NULL };
	const struct pa_test_main t = {
		.name = "test_excp",
		.suites = suites,
		.eal_args = eal_args,
		.mbufs = 511,
		.pool = &pool,
		.pkt_init = true,
	};

	return pa_test_main_eal(&t);
}
