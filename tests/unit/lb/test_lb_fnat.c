/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_lb: full NAT (forward "fnat", lb.fnat): the rewrite of both ends
 * byte for byte against a full recomputation, the replies translated
 * back, the pool's ports (one flow each, the lcore's share, exhaustion,
 * the backend's TIME_WAIT), and what is dropped and counted.
 */

#include "lb_fixture.h"

#define POOL4_A	"10.9.0.1"
#define POOL4_B	"10.9.0.2"
#define POOL6_A	"2001:db8:9::1"

/* The pool of most cases: two IPv4 addresses and one IPv6, 1000 ports. */
#define FNAT_POOL \
	"'fnat': {'addrs': ['" POOL4_A "', '" POOL4_B "', '" POOL6_A "']," \
	" 'ports': '20000-20999'},"

#define SVC_FNAT4 \
	"{'name': 'f4', 'vip': '10.0.0.30', 'port': 80, 'proto': 'tcp'," \
	" 'forward': 'fnat', 'backends': [{'addr': '10.3.0.1', 'port': 8080}," \
	" {'addr': '10.3.0.2', 'port': 8080}]}," \
	"{'name': 'f4u', 'vip': '10.0.0.30', 'port': 53, 'proto': 'udp'," \
	" 'forward': 'fnat', 'backends': [{'addr': '10.3.0.1', 'port': 5353}]}"

#define SVC_FNAT6 \
	"{'name': 'f6', 'vip': '2001:db8:30::30', 'port': 443, 'proto': 'tcp'," \
	" 'forward': 'fnat', 'backends': [{'addr': '2001:db8:3::1'}]}"

static const char *const f4_bes[] = { "10.3.0.1", "10.3.0.2" };

/* What an fnat packet came out as. */
struct fnat_out {
	char src[INET6_ADDRSTRLEN];	/* the pool address */
	uint16_t sport;			/* the pool port */
	char dst[INET6_ADDRSTRLEN];	/* the backend */
	uint16_t dport;
};

/* Send client packet @p f (to an fnat service) at @p now: it must come
 * out as @p f with source the pool address and port it names, and
 * destination a backend and @p bport, every checksum as a full
 * recomputation gives (the IPv4 UDP checksum 0 left 0), addressed back
 * to its sender's MAC (the fixture has no ports). */
static void
fnat_send(const struct pa_test_frame *f, uint16_t bport, uint64_t now,
		struct fnat_out *o)
{
	const bool v6 = f->ver == 6;
	const unsigned int alen = v6 ? 16 : 4;
	const int fam = v6 ? AF_INET6 : AF_INET;
	struct rte_mbuf *m = mbuf_of(f);
	uint8_t exp[FRAME_MAX];
	const uint8_t *out, *l3, *l4;
	bool udp0;

	REQUIRE(process1(m, now) == PA_LB_V_FORWARD);
	REQUIRE(rte_pktmbuf_pkt_len(m) == f->len);
	out = rte_pktmbuf_mtod(m, const uint8_t *);
	l3 = out + f->l3;
	l4 = out + f->l4;
	inet_ntop(fam, l3 + (v6 ? 8 : 12), o->src, sizeof(o->src));
	inet_ntop(fam, l3 + (v6 ? 24 : 16), o->dst, sizeof(o->dst));
	o->sport = pa_test_get16(l4);
	o->dport = pa_test_get16(l4 + 2);
	ck_assert_uint_eq(o->dport, bport);
	/* the expected frame: the input with those addresses and ports */
	udp0 = !v6 && f->b[f->l3 + 9] == IPPROTO_UDP &&
		pa_test_get16(f->b + f->l4 + 6) == 0;
	memcpy(exp, f->b, f->len);
	memcpy(exp, mac_peer, 6);
	memcpy(exp + f->l3 + (v6 ? 8 : 12), l3 + (v6 ? 8 : 12), 2 * alen);
	memcpy(exp + f->l4, l4, 4);
	fix_csums(exp + f->l3);
	if (udp0)
		pa_test_put16(exp + f->l4 + 6, 0);
	if (memcmp(out, exp, f->len) != 0) {
		unsigned int k;

		for (k = 0; k < f->len && out[k] == exp[k]; k++)
			;
		ck_abort_msg("fnat output differs from the expected frame at byte %u (0x%02x, expected 0x%02x)",
			k, out[k], exp[k]);
	}
	rte_pktmbuf_free(m);
}

/* The backend's reply to @p o (from its address and port to the pool
 * address and port), @p payload bytes, @p flags for TCP. */
static void
fnat_reply_of(const struct pa_test_frame *f, const struct fnat_out *o,
		uint8_t flags, unsigned int payload, struct pa_test_frame *r)
{
	const bool v6 = strchr(o->dst, ':') != NULL;
	const uint8_t proto = f->b[f->l3 + (f->ver == 6 ? 6 : 9)];

	frame_eth(r, 0, v6 ? RTE_ETHER_TYPE_IPV6 : RTE_ETHER_TYPE_IPV4);
	memcpy(r->b + 6, mac_srv, 6);
	if (v6)
		frame_ipv6(r, o->dst, o->src, proto, 0);
	else
		frame_ipv4(r, o->dst, o->src, proto, 0, IP4_DF, 0);
	if (proto == IPPROTO_TCP)
		frame_tcp(r, o->dport, o->sport, flags);
	else
		frame_udp(r, o->dport, o->sport);
	frame_payload(r, payload, 91);
	frame_fix(r);
}

/* Send reply @p r at @p now: it must come out from @p vip:@p vport to
 * the client of @p f, checksums recomputed, back to its sender's MAC. */
static void
check_fnat_reply(const struct pa_test_frame *r, const struct pa_test_frame *f,
		const char *vip, uint16_t vport, uint64_t now)
{
	const bool v6 = r->ver == 6;
	const unsigned int alen = v6 ? 16 : 4;
	uint8_t exp[FRAME_MAX], a[16];
	struct rte_mbuf *m = mbuf_of(r);
	const uint8_t *o;

	ck_assert_int_eq(inet_pton(v6 ? AF_INET6 : AF_INET, vip, a), 1);
	memcpy(exp, r->b, r->len);
	memcpy(exp, mac_srv, 6);
	memcpy(exp + r->l3 + (v6 ? 8 : 12), a, alen);
	/* the client: the source of the client's packet */
	memcpy(exp + r->l3 + (v6 ? 24 : 16), f->b + f->l3 + (v6 ? 8 : 12),
		alen);
	pa_test_put16(exp + r->l4, vport);
	pa_test_put16(exp + r->l4 + 2, pa_test_get16(f->b + f->l4));
	fix_csums(exp + r->l3);
	ck_assert_uint_eq(process1(m, now), PA_LB_V_FORWARD);
	o = rte_pktmbuf_mtod(m, const uint8_t *);
	ck_assert_uint_eq(rte_pktmbuf_pkt_len(m), r->len);
	if (memcmp(o, exp, r->len) != 0) {
		unsigned int k;

		for (k = 0; k < r->len && o[k] == exp[k]; k++)
			;
		ck_abort_msg("fnat reply differs from the expected frame at byte %u (0x%02x, expected 0x%02x)",
			k, o[k], exp[k]);
	}
	rte_pktmbuf_free(m);
}

/* stats_get's lb.fnat.<name>. */
static json_int_t
fnat_stat(const char *name)
{
	json_t *o = pa_lb_stats_json(lb), *f, *v;
	json_int_t x;

	ck_assert_ptr_nonnull(o);
	f = json_object_get(o, "fnat");
	ck_assert_msg(json_is_object(f), "stats has no lb.fnat");
	v = json_object_get(f, name);
	ck_assert_msg(json_is_integer(v), "lb.fnat has no integer '%s'", name);
	x = json_integer_value(v);
	json_decref(o);
	return x;
}

/* Ports in use on pool address @p addr (lb.fnat.pool). */
static json_int_t
pool_in_use(const char *addr)
{
	json_t *o = pa_lb_stats_json(lb), *pool, *e;
	json_int_t x = -1;
	size_t i;

	ck_assert_ptr_nonnull(o);
	pool = json_object_get(json_object_get(o, "fnat"), "pool");
	ck_assert(json_is_array(pool));
	json_array_foreach(pool, i, e)
		if (strcmp(json_string_value(json_object_get(e, "addr")),
				addr) == 0)
			x = json_integer_value(json_object_get(e, "in_use"));
	json_decref(o);
	ck_assert_msg(x >= 0, "no pool address %s", addr);
	return x;
}

static bool
is_pool4(const char *a)
{
	return strcmp(a, POOL4_A) == 0 || strcmp(a, POOL4_B) == 0;
}

START_TEST(test_fnat4_tcp_rewrites_both_ends_and_the_reply_back)
{
	struct pa_test_frame f, r;
	struct fnat_out o, o2;

	lb_extra = FNAT_POOL;
	setup_lb(SVC_FNAT4);
	frame_l4(&f, "198.51.100.7", "10.0.0.30", IPPROTO_TCP, 40000, 80,
		TCP_SYN, 0);
	fnat_send(&f, 8080, T0, &o);
	ck_assert_msg(is_pool4(o.src), "source %s is no IPv4 pool address",
		o.src);
	ck_assert_uint_ge(o.sport, 20000);
	ck_assert_uint_le(o.sport, 20999);
	ck_assert(strcmp(o.dst, f4_bes[0]) == 0 ||
		strcmp(o.dst, f4_bes[1]) == 0);
	/* the reply, then the rest of the flow on the same mapping */
	fnat_reply_of(&f, &o, TCP_SYN | TCP_ACK, 0, &r);
	check_fnat_reply(&r, &f, "10.0.0.30", 80, T0 + 1);
	frame_l4(&f, "198.51.100.7", "10.0.0.30", IPPROTO_TCP, 40000, 80,
		TCP_ACK, 100);
	fnat_send(&f, 8080, T0 + 2, &o2);
	ck_assert_str_eq(o2.src, o.src);
	ck_assert_uint_eq(o2.sport, o.sport);
	ck_assert_str_eq(o2.dst, o.dst);
	fnat_reply_of(&f, &o, TCP_ACK, 300, &r);
	check_fnat_reply(&r, &f, "10.0.0.30", 80, T0 + 3);
	ck_assert_int_eq(fnat_stat("replies"), 2);
	ck_assert_int_eq(fnat_stat("flows"), 1);
	ck_assert_int_eq(pool_in_use(o.src), 1);
	ck_assert_int_eq(lb_stat("balanced"), 2);
}
END_TEST

START_TEST(test_fnat4_udp_and_udp_without_checksum)
{
	struct pa_test_frame f, r;
	struct fnat_out o;

	lb_extra = FNAT_POOL;
	setup_lb(SVC_FNAT4);
	frame_l4(&f, "198.51.100.8", "10.0.0.30", IPPROTO_UDP, 40001, 53, 0,
		21);
	fnat_send(&f, 5353, T0, &o);
	ck_assert_str_eq(o.dst, "10.3.0.1");
	fnat_reply_of(&f, &o, 0, 40, &r);
	check_fnat_reply(&r, &f, "10.0.0.30", 53, T0 + 1);

	/* no checksum: none after (IPv4 UDP) */
	frame_l4(&f, "198.51.100.9", "10.0.0.30", IPPROTO_UDP, 40002, 53, 0,
		5);
	pa_test_put16(f.b + f.l4 + 6, 0);
	fnat_send(&f, 5353, T0, &o);
}
END_TEST

START_TEST(test_fnat6_rewrites_both_ends_and_the_reply_back)
{
	struct pa_test_frame f, r;
	struct fnat_out o;

	lb_extra = FNAT_POOL;
	setup_lb(SVC_FNAT6);
	frame_l4(&f, "2001:db8:99::7", "2001:db8:30::30", IPPROTO_TCP, 40000,
		443, TCP_SYN, 0);
	fnat_send(&f, 443, T0, &o);
	ck_assert_str_eq(o.src, POOL6_A);
	ck_assert_str_eq(o.dst, "2001:db8:3::1");
	fnat_reply_of(&f, &o, TCP_SYN | TCP_ACK, 0, &r);
	check_fnat_reply(&r, &f, "2001:db8:30::30", 443, T0 + 1);
	ck_assert_int_eq(pool_in_use(POOL6_A), 1);
	ck_assert_int_eq(pool_in_use(POOL4_A) + pool_in_use(POOL4_B), 0);
}
END_TEST

START_TEST(test_fnat_each_flow_its_own_port_spread_over_the_addresses)
{
	static bool seen[2][1000];
	struct pa_test_frame f;
	struct fnat_out o;
	unsigned int i, per[2] = { 0, 0 };

	memset(seen, 0, sizeof(seen));
	lb_extra = FNAT_POOL;
	setup_lb(SVC_FNAT4);
	for (i = 0; i < 400; i++) {
		unsigned int a;

		frame_l4(&f, "198.51.100.10", "10.0.0.30", IPPROTO_TCP,
			(uint16_t)(30000 + i), 80, TCP_SYN, 0);
		fnat_send(&f, 8080, T0, &o);
		a = strcmp(o.src, POOL4_B) == 0;
		ck_assert(is_pool4(o.src));
		ck_assert_msg(!seen[a][o.sport - 20000],
			"%s:%u handed out twice", o.src, o.sport);
		seen[a][o.sport - 20000] = true;
		per[a]++;
	}
	/* both addresses serve */
	ck_assert_uint_gt(per[0], 100);
	ck_assert_uint_gt(per[1], 100);
	ck_assert_int_eq(fnat_stat("flows"), 400);
}
END_TEST

/* A pool of @p ports ports (one IPv4 address), time_wait_s @p tw. */
static void
setup_small_pool(unsigned int ports, unsigned int tw)
{
	static char extra[256];

	snprintf(extra, sizeof(extra),
		"'fnat': {'addrs': ['" POOL4_A "'], 'ports': '40000-%u',"
		" 'time_wait_s': %u},", 40000 + ports - 1, tw);
	lb_extra = extra;
	setup_lb(SVC_FNAT4);
}

START_TEST(test_fnat_pool_exhaustion_is_a_counted_drop_and_ports_come_back)
{
	struct pa_test_frame f;
	struct fnat_out o;
	struct rte_mbuf *m;
	unsigned int i;

	setup_small_pool(4, 0);
	for (i = 0; i < 4; i++) {
		frame_l4(&f, "198.51.100.11", "10.0.0.30", IPPROTO_TCP,
			(uint16_t)(31000 + i), 80, TCP_SYN, 0);
		fnat_send(&f, 8080, T0, &o);
	}
	frame_l4(&f, "198.51.100.11", "10.0.0.30", IPPROTO_TCP, 31010, 80,
		TCP_SYN, 0);
	m = mbuf_of(&f);
	ck_assert_uint_eq(process1(m, T0), PA_LB_V_FNAT_NO_PORT);
	rte_pktmbuf_free(m);
	ck_assert_int_eq(fnat_stat("no_port"), 1);
	ck_assert_int_eq(pool_in_use(POOL4_A), 4);
	/* the flows of the first four end (SYN-only: tcp_timeout) and are
	 * swept: their ports come back */
	sweep(T0 + (TCP_TMO + 1) * hz);
	ck_assert_int_eq(pool_in_use(POOL4_A), 0);
	m = mbuf_of(&f);
	ck_assert_uint_eq(process1(m, T0 + (TCP_TMO + 2) * hz),
		PA_LB_V_FORWARD);
	rte_pktmbuf_free(m);
}
END_TEST

START_TEST(test_fnat_port_waits_time_wait_before_serving_the_same_backend)
{
	struct pa_test_frame f;
	struct fnat_out o, o2;
	struct rte_mbuf *m;
	uint64_t t;

	/* one port, a backend's TIME_WAIT of 60 s */
	setup_small_pool(1, 60);
	frame_l4(&f, "198.51.100.12", "10.0.0.30", IPPROTO_UDP, 32000, 53, 0,
		0);
	fnat_send(&f, 5353, T0, &o);
	t = T0 + (UDP_TMO + 1) * hz;
	sweep(t);
	ck_assert_int_eq(pool_in_use(POOL4_A), 0);
	/* the same backend (f4u has one): not before 60 s */
	frame_l4(&f, "198.51.100.12", "10.0.0.30", IPPROTO_UDP, 32001, 53, 0,
		0);
	m = mbuf_of(&f);
	ck_assert_uint_eq(process1(m, t + hz), PA_LB_V_FNAT_NO_PORT);
	rte_pktmbuf_free(m);
	ck_assert_int_ge(fnat_stat("time_wait_skips"), 1);
	fnat_send(&f, 5353, t + 61 * hz, &o2);
	ck_assert_uint_eq(o2.sport, o.sport);
}
END_TEST

START_TEST(test_fnat_port_serves_another_backend_within_time_wait)
{
	struct pa_test_frame f;
	struct fnat_out o, o2;
	uint64_t t;
	unsigned int i;

	setup_small_pool(1, 60);
	frame_l4(&f, "198.51.100.13", "10.0.0.30", IPPROTO_TCP, 33000, 80,
		TCP_SYN, 0);
	fnat_send(&f, 8080, T0, &o);
	t = T0 + (TCP_TMO + 1) * hz;
	sweep(t);
	/* a flow that Maglev sends to the other backend takes the port at
	 * once */
	for (i = 1; i < 64; i++) {
		struct rte_mbuf *m;
		uint8_t v;

		frame_l4(&f, "198.51.100.13", "10.0.0.30", IPPROTO_TCP,
			(uint16_t)(33000 + i), 80, TCP_SYN, 0);
		m = mbuf_of(&f);
		v = process1(m, t + hz);
		if (v == PA_LB_V_FORWARD) {
			const uint8_t *l3 = rte_pktmbuf_mtod(m, const uint8_t *) +
				f.l3;
			char d[INET_ADDRSTRLEN];

			inet_ntop(AF_INET, l3 + 16, d, sizeof(d));
			ck_assert_str_ne(d, o.dst);
			o2.sport = pa_test_get16(l3 + 20);
			ck_assert_uint_eq(o2.sport, o.sport);
			rte_pktmbuf_free(m);
			return;
		}
		ck_assert_uint_eq(v, PA_LB_V_FNAT_NO_PORT);
		rte_pktmbuf_free(m);
	}
	ck_abort_msg("no flow went to the other backend");
}
END_TEST

START_TEST(test_fnat_to_a_pool_port_from_anything_but_the_backend_is_dropped)
{
	struct pa_test_frame f, r;
	struct fnat_out o, bad;
	struct rte_mbuf *m;

	lb_extra = FNAT_POOL;
	setup_lb(SVC_FNAT4);
	frame_l4(&f, "198.51.100.14", "10.0.0.30", IPPROTO_TCP, 34000, 80,
		TCP_SYN, 0);
	fnat_send(&f, 8080, T0, &o);
	/* another source address */
	bad = o;
	snprintf(bad.dst, sizeof(bad.dst), "%s", "10.3.0.99");
	fnat_reply_of(&f, &bad, TCP_ACK, 0, &r);
	m = mbuf_of(&r);
	ck_assert_uint_eq(process1(m, T0 + 1), PA_LB_V_FNAT_UNMATCHED);
	rte_pktmbuf_free(m);
	/* the backend, another port */
	bad = o;
	bad.dport = 8081;
	fnat_reply_of(&f, &bad, TCP_ACK, 0, &r);
	m = mbuf_of(&r);
	ck_assert_uint_eq(process1(m, T0 + 1), PA_LB_V_FNAT_UNMATCHED);
	rte_pktmbuf_free(m);
	/* a pool port no flow holds */
	bad = o;
	bad.sport = o.sport == 20999 ? 20998 : o.sport + 1;
	fnat_reply_of(&f, &bad, TCP_ACK, 0, &r);
	m = mbuf_of(&r);
	ck_assert_uint_eq(process1(m, T0 + 1), PA_LB_V_FNAT_UNMATCHED);
	rte_pktmbuf_free(m);
	ck_assert_int_eq(fnat_stat("reply_unmatched"), 3);
	/* the right one still goes through */
	fnat_reply_of(&f, &o, TCP_ACK, 0, &r);
	check_fnat_reply(&r, &f, "10.0.0.30", 80, T0 + 2);
	/* a port outside the pool's range is not the LB's: untouched */
	bad = o;
	bad.sport = 19999;
	fnat_reply_of(&f, &bad, TCP_ACK, 0, &r);
	check_untouched(&r);
}
END_TEST

START_TEST(test_fnat_fragments_are_dropped_and_counted)
{
	struct pa_test_frame f;
	struct rte_mbuf *m;

	lb_extra = FNAT_POOL;
	setup_lb(SVC_FNAT4);
	frame_eth(&f, 0, RTE_ETHER_TYPE_IPV4);
	frame_ipv4(&f, "198.51.100.15", "10.0.0.30", IPPROTO_TCP, 0,
		IP4_MF, 77);
	frame_tcp(&f, 35000, 80, TCP_ACK);
	frame_payload(&f, 64, 1);
	frame_fix(&f);
	m = mbuf_of(&f);
	ck_assert_uint_eq(process1(m, T0), PA_LB_V_FNAT_FRAGMENT);
	rte_pktmbuf_free(m);
	ck_assert_int_eq(fnat_stat("fragments"), 1);
}
END_TEST

START_TEST(test_fnat_full_flow_table_is_a_counted_drop)
{
	struct pa_test_frame f;
	unsigned int i, fwd = 0, full = 0;

	lb_extra = FNAT_POOL;
	/* 1024 positions (the least per lcore), 1000 ports: 1023 flows
	 * would fit the table; the ports go first. A table smaller than the
	 * pool: fill it */
	setup_lb_flows(SVC_FNAT4 "," SVC_FNAT6, 1024, 1);
	for (i = 0; i < 1100; i++) {
		struct rte_mbuf *m;
		char src[64];
		uint8_t v;

		/* IPv6 clients on the IPv6 service: one pool address, the
		 * same 1000 ports; then IPv4 ones */
		snprintf(src, sizeof(src), "2001:db8:99::%x", 1 + i % 200);
		frame_l4(&f, src, "2001:db8:30::30", IPPROTO_TCP,
			(uint16_t)(36000 + i), 443, TCP_SYN, 0);
		m = mbuf_of(&f);
		v = process1(m, T0);
		rte_pktmbuf_free(m);
		if (v == PA_LB_V_FORWARD)
			fwd++;
		else
			ck_assert_uint_eq(v, PA_LB_V_FNAT_NO_PORT);
	}
	ck_assert_uint_eq(fwd, 1000);
	/* 23 positions left: IPv4 flows take them, then the table is full */
	for (i = 0; i < 40; i++) {
		struct rte_mbuf *m;
		uint8_t v;

		frame_l4(&f, "198.51.100.16", "10.0.0.30", IPPROTO_TCP,
			(uint16_t)(37000 + i), 80, TCP_SYN, 0);
		m = mbuf_of(&f);
		v = process1(m, T0);
		rte_pktmbuf_free(m);
		if (v == PA_LB_V_FNAT_TABLE_FULL)
			full++;
		else
			ck_assert_uint_eq(v, PA_LB_V_FORWARD);
	}
	ck_assert_uint_gt(full, 0);
	ck_assert_int_eq(fnat_stat("table_full"), full);
	ck_assert_int_eq(fnat_stat("no_port"), 100);
}
END_TEST

START_TEST(test_fnat_lcores_hand_out_only_their_share)
{
	struct pa_test_frame f;
	struct rte_mbuf *m;
	unsigned int i;
	uint8_t v;

	lb_extra = FNAT_POOL;
	setup_lb_flows(SVC_FNAT4, 4096, 2);
	for (i = 0; i < 50; i++) {
		const uint8_t *l4;
		unsigned int lc = i & 1;

		frame_l4(&f, "198.51.100.17", "10.0.0.30", IPPROTO_TCP,
			(uint16_t)(38000 + i), 80, TCP_SYN, 0);
		m = mbuf_of(&f);
		pa_lb_process(lb, lc, &m, 1, T0, &v);
		ck_assert_uint_eq(v, PA_LB_V_FORWARD);
		l4 = rte_pktmbuf_mtod(m, const uint8_t *) + f.l4;
		/* lcore 0: 20000-20499, lcore 1: 20500-20999 */
		if (lc == 0)
			ck_assert_uint_lt(pa_test_get16(l4), 20500);
		else
			ck_assert_uint_ge(pa_test_get16(l4), 20500);
		rte_pktmbuf_free(m);
	}
}
END_TEST

/* The pool addresses of a trace's fnat, as "a b c". */
static const char *
trace_addrs(const struct pa_lb_trace_result *tr)
{
	static char out[4 * INET6_ADDRSTRLEN];
	char buf[INET6_ADDRSTRLEN];
	unsigned int i;

	out[0] = 0;
	for (i = 0; i < tr->fnat_n_addrs; i++)
		snprintf(out + strlen(out), sizeof(out) - strlen(out), "%s%s",
			i == 0 ? "" : " ", pa_net_format_ip(&tr->fnat_addrs[i],
				buf, sizeof(buf)));
	return out;
}

static const char *
ip_text(const struct pa_ip_addr *a)
{
	static char buf[2][INET6_ADDRSTRLEN];
	static unsigned int n;

	return pa_net_format_ip(a, buf[n++ & 1], INET6_ADDRSTRLEN);
}

/* The lb lcore answering trace questions (pa_lb_poll()) until told to
 * stop, as the worker loop does. */
struct trace_poller {
	pthread_t tid;
	volatile int stop;
	uint64_t now;
};

static void *
trace_poll(void *arg)
{
	struct trace_poller *p = arg;

	while (!__atomic_load_n(&p->stop, __ATOMIC_ACQUIRE))
		pa_lb_poll(lb, 0, p->now, true);
	return NULL;
}

/* trace_packet of both directions of one flow: the client's packet
 * names the pool address and port its flow holds, the backend's reply
 * to them names the flow's client and VIP. */
static void
check_trace_flow(const struct pa_test_frame *f, const struct fnat_out *o)
{
	struct pa_lb_trace_result tr;
	struct pa_test_frame r;
	struct pa_flow_key k;

	k = key_of(f);
	ck_assert_int_eq(pa_lb_trace(lb, &k, false, &tr), 0);
	ck_assert_str_eq(tr.service, "f4");
	ck_assert(tr.existing_flow);
	ck_assert_str_eq(ip_text(&tr.backend), o->dst);
	ck_assert(tr.fnat);
	ck_assert(tr.fnat_held);
	ck_assert_str_eq(trace_addrs(&tr), o->src);
	ck_assert_uint_eq(tr.fnat_port, o->sport);
	ck_assert_ptr_null(tr.fnat_reply);

	fnat_reply_of(f, o, TCP_ACK, 0, &r);
	k = key_of(&r);
	ck_assert_int_eq(pa_lb_trace(lb, &k, false, &tr), 0);
	ck_assert(!tr.service_found);
	ck_assert(!tr.fnat);
	ck_assert_ptr_nonnull(tr.fnat_reply);
	ck_assert_str_eq(tr.fnat_reply, "flow");
	ck_assert_str_eq(tr.fnat_service, "f4");
	ck_assert_str_eq(ip_text(&tr.fnat_vip), "10.0.0.30");
	ck_assert_uint_eq(tr.fnat_vport, 80);
	ck_assert_str_eq(ip_text(&tr.fnat_client), "198.51.100.7");
	ck_assert_uint_eq(tr.fnat_cport, 40000);
	ck_assert_ptr_null(tr.nat_reply);
}

START_TEST(test_fnat_trace_names_the_pool_address_and_port_both_ways)
{
	struct trace_poller p = { .now = T0 + 2 };
	struct pa_lb_trace_result tr;
	struct pa_test_frame f, r;
	struct pa_flow_key k;
	struct fnat_out o, x;

	lb_extra = FNAT_POOL;
	setup_lb(SVC_FNAT4);
	frame_l4(&f, "198.51.100.7", "10.0.0.30", IPPROTO_TCP, 40000, 80,
		TCP_SYN, 0);
	/* a new flow: one of the IPv4 addresses, its port not known yet */
	k = key_of(&f);
	ck_assert_int_eq(pa_lb_trace(lb, &k, false, &tr), 0);
	ck_assert(tr.fnat);
	ck_assert(!tr.fnat_held);
	ck_assert(!tr.existing_flow);
	ck_assert_uint_eq(tr.fnat_port, 0);
	ck_assert_str_eq(trace_addrs(&tr), POOL4_A " " POOL4_B);
	fnat_send(&f, 8080, T0, &o);
	/* the lcore's table read directly, then the lcore asked */
	check_trace_flow(&f, &o);
	pa_lb_poll(lb, 0, T0 + 1, true);
	ck_assert_int_eq(pthread_create(&p.tid, NULL, trace_poll, &p), 0);
	check_trace_flow(&f, &o);

	/* to the flow's pool port from another port of the backend, or
	 * to a pool port no flow holds: dropped by the data path */
	fnat_reply_of(&f, &o, TCP_ACK, 0, &r);
	k = key_of(&r);
	k.sport = htons(8081);
	ck_assert_int_eq(pa_lb_trace(lb, &k, false, &tr), 0);
	ck_assert_str_eq(tr.fnat_reply, "unmatched");
	x = o;
	x.sport = o.sport == 20000 ? 20001 : 20000;
	fnat_reply_of(&f, &x, TCP_ACK, 0, &r);
	k = key_of(&r);
	ck_assert_int_eq(pa_lb_trace(lb, &k, false, &tr), 0);
	ck_assert_str_eq(tr.fnat_reply, "unmatched");
	/* a pool address's port out of the pool's range: not a reply */
	x.sport = 19999;
	fnat_reply_of(&f, &x, TCP_ACK, 0, &r);
	k = key_of(&r);
	ck_assert_int_eq(pa_lb_trace(lb, &k, false, &tr), 0);
	ck_assert_ptr_null(tr.fnat_reply);
	__atomic_store_n(&p.stop, 1, __ATOMIC_RELEASE);
	pthread_join(p.tid, NULL);

	/* fragments to an fnat service are dropped: no backend, no port */
	k = key_of(&f);
	ck_assert_int_eq(pa_lb_trace(lb, &k, true, &tr), 0);
	ck_assert(!tr.backend_found);
	ck_assert(!tr.fnat);
	ck_assert_str_eq(tr.reason, "fnat_fragment");
}
END_TEST

START_TEST(test_fnat_trace_of_a_new_flow_names_the_backends_family)
{
	struct pa_lb_trace_result tr;
	struct pa_test_frame f;
	struct pa_flow_key k;

	lb_extra = FNAT_POOL;
	setup_lb(SVC_FNAT6);
	frame_l4(&f, "2001:db8:99::7", "2001:db8:30::30", IPPROTO_TCP, 40000,
		443, TCP_SYN, 0);
	k = key_of(&f);
	ck_assert_int_eq(pa_lb_trace(lb, &k, false, &tr), 0);
	ck_assert(tr.fnat);
	ck_assert(!tr.fnat_held);
	ck_assert_str_eq(trace_addrs(&tr), POOL6_A);
}
END_TEST

/* rr chooses at the first packet: the backend, so its family, is not
 * known; the addresses of every backend's family are. */
START_TEST(test_fnat_trace_without_a_backend_names_every_backends_family)
{
	struct pa_lb_trace_result tr;
	struct pa_test_frame f;
	struct pa_flow_key k;

	lb_extra = FNAT_POOL;
	setup_lb("{'name': 'rr', 'vip': '10.0.0.31', 'port': 80,"
		" 'proto': 'tcp', 'forward': 'fnat', 'scheduler': 'rr',"
		" 'backends': [{'addr': '10.3.0.1'}, {'addr': '2001:db8:3::1'}]}");
	frame_l4(&f, "198.51.100.7", "10.0.0.31", IPPROTO_TCP, 40000, 80,
		TCP_SYN, 0);
	k = key_of(&f);
	ck_assert_int_eq(pa_lb_trace(lb, &k, false, &tr), 0);
	ck_assert(!tr.backend_found);
	ck_assert(tr.fnat);
	ck_assert(!tr.fnat_held);
	ck_assert_str_eq(trace_addrs(&tr), POOL4_A " " POOL4_B " " POOL6_A);
}
END_TEST

START_TEST(test_fnat_stats_show_proxy_failed)
{
	lb_extra = FNAT_POOL;
	setup_lb(SVC_FNAT4);
	ck_assert_int_eq(fnat_stat("proxy_failed"), 0);
}
END_TEST

/* The LB freed, and the pool left for no other case. */
static void
teardown_fnat(void)
{
	teardown_lb();
	lb_extra = "";
}

TCase *
lb_tcase_fnat(void)
{
	TCase *tc = tcase_create("fnat");

	tcase_add_checked_fixture(tc, NULL, teardown_fnat);
	tcase_add_test(tc, test_fnat4_tcp_rewrites_both_ends_and_the_reply_back);
	tcase_add_test(tc, test_fnat4_udp_and_udp_without_checksum);
	tcase_add_test(tc, test_fnat6_rewrites_both_ends_and_the_reply_back);
	tcase_add_test(tc, test_fnat_each_flow_its_own_port_spread_over_the_addresses);
	tcase_add_test(tc, test_fnat_pool_exhaustion_is_a_counted_drop_and_ports_come_back);
	tcase_add_test(tc, test_fnat_port_waits_time_wait_before_serving_the_same_backend);
	tcase_add_test(tc, test_fnat_port_serves_another_backend_within_time_wait);
	tcase_add_test(tc, test_fnat_to_a_pool_port_from_anything_but_the_backend_is_dropped);
	tcase_add_test(tc, test_fnat_fragments_are_dropped_and_counted);
	tcase_add_test(tc, test_fnat_full_flow_table_is_a_counted_drop);
	tcase_add_test(tc, test_fnat_lcores_hand_out_only_their_share);
	tcase_add_test(tc, test_fnat_trace_names_the_pool_address_and_port_both_ways);
	tcase_add_test(tc, test_fnat_trace_of_a_new_flow_names_the_backends_family);
	tcase_add_test(tc, test_fnat_trace_without_a_backend_names_every_backends_family);
	tcase_add_test(tc, test_fnat_stats_show_proxy_failed);
	return tc;
}
