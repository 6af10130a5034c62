/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of lib/neigh: the frame parser (what it accepts and why it
 * refuses), the builders (bytes and checksums), the rx stage's
 * classification, and the control side with a fake clock: answers for
 * ports' addresses and VIPs, learning, the state machine of a target
 * (incomplete, failed, retry, reachable, stale, probe), what the LB
 * forwards with the resolved MACs, a bounded cache, replay mode.
 *
 * One EAL (--no-huge), no lcores: frames are put on the subsystem's rx
 * ring by hand, pa_neigh_poll() runs with a fake clock, and what it sends
 * is read from the per-port TX rings. Two ports in a pa_port_set made
 * here (no devices), an LB without RCU.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <jansson.h>

#include <rte_eal.h>
#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "pa_config.h"
#include "pa_lb.h"
#include "pa_neigh.h"
#include "pa_pkt.h"
#include "pa_test_frame.h"
#include "pa_test_main.h"

#define T0	100000ULL

static struct rte_mempool *pool;
static struct pa_config *cfg;
static struct pa_lb *lb;
static struct pa_neigh *nb;
static struct pa_port_set ports;

static const uint8_t MAC0[6] = { 0x02, 0, 0, 0, 0xaa, 0x00 };
static const uint8_t MAC1[6] = { 0x02, 0, 0, 0, 0xaa, 0x01 };
static const uint8_t HOST[6] = { 0x02, 0, 0, 0, 0x11, 0x11 };
static const uint8_t GWMAC[6] = { 0x02, 0, 0, 0, 0x99, 0x01 };
static const uint8_t BEMAC[6] = { 0x02, 0, 0, 0, 0xbe, 0x20 };
static const uint8_t BCAST[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
static const uint8_t ZERO6[6];

static const char *CONF =
"{'ports': [{'name': 'p0', 'devargs': 'net_null0',"
"  'addr': ['198.51.100.5/24', '2001:db8:1::5/64'], 'gateway': '198.51.100.1'},"
" {'name': 'p1', 'devargs': 'net_null1', 'addr': ['203.0.113.5/24']}],"
" 'lb': {'local_addr': '192.0.2.254', 'services': ["
"  {'name': 'web', 'vip': '192.0.2.10', 'port': 80, 'proto': 'tcp',"
"   'backends': [{'addr': '198.51.100.20'}]},"
"  {'name': 'far', 'vip': '192.0.2.11', 'port': 80, 'proto': 'tcp',"
"   'backends': [{'addr': '10.9.0.1'}]},"
"  {'name': 'w6', 'vip': '2001:db8:100::10', 'port': 80, 'proto': 'tcp',"
"   'forward': 'nat', 'backends': [{'addr': '2001:db8:1::20'}]}]}}";


static void
ip4(const char *s, uint8_t *out)
{
	ck_assert_int_eq(inet_pton(AF_INET, s, out), 1);
}

static void
ip6(const char *s, uint8_t *out)
{
	ck_assert_int_eq(inet_pton(AF_INET6, s, out), 1);
}

static struct pa_ip_addr
addr(const char *s)
{
	struct pa_ip_addr a;

	memset(&a, 0, sizeof(a));
	if (strchr(s, ':') != NULL) {
		a.family = AF_INET6;
		ip6(s, a.v6.s6_addr);
	} else {
		a.family = AF_INET;
		ip4(s, (uint8_t *)&a.v4);
	}
	return a;
}

static void
teardown(void)
{
	pa_neigh_destroy(nb);
	nb = NULL;
	pa_lb_destroy(lb);
	lb = NULL;
	pa_config_free(cfg);
	cfg = NULL;
	ck_assert_uint_eq(rte_mempool_in_use_count(pool), 0);
}

/* the configuration the next setup loads (NULL: CONF) */
static const char *conf_next;

static void
setup_opts(bool replay, uint32_t max_entries)
{
	char err[PA_CONFIG_ERR_MAX];
	struct pa_neigh_opts no;
	struct pa_lb_opts lo;
	char *text = pa_test_dq(conf_next != NULL ? conf_next : CONF);
	unsigned int i;

	teardown();
	cfg = pa_config_load_string(text, NULL, err, sizeof(err));
	free(text);
	ck_assert_msg(cfg != NULL, "config: %s", err);
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
		memcpy(ports.port[i].mac.addr_bytes, i == 0 ? MAC0 : MAC1, 6);
		ports.index_of[i] = (uint16_t)i;
	}
	memset(&no, 0, sizeof(no));
	no.cfg = cfg;
	no.ports = &ports;
	no.lb = lb;
	no.replay = replay;
	no.max_entries = max_entries;
	nb = pa_neigh_create(&no, T0, err, sizeof(err));
	ck_assert_msg(nb != NULL, "neigh: %s", err);
}

static void
setup(void)
{
	setup_opts(false, 0);
}

/* ---- frames in and out ---- */

static struct rte_mbuf *
mbuf_of(const uint8_t *f, uint32_t len, uint16_t port)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	char *d;

	ck_assert_ptr_nonnull(m);
	d = rte_pktmbuf_append(m, (uint16_t)len);
	ck_assert_ptr_nonnull(d);
	memcpy(d, f, len);
	m->port = port;
	return m;
}

static void
inject(const uint8_t *f, uint32_t len, uint16_t port, uint64_t now)
{
	ck_assert_int_eq(rte_ring_enqueue(pa_neigh_rx_ring(nb),
		mbuf_of(f, len, port)), 0);
	ck_assert_uint_eq(pa_neigh_poll(nb, now), 1);
}

/* Take the next frame the subsystem sent on @p port: its length (0:
 * none). */
static uint32_t
take(unsigned int port, uint8_t *buf)
{
	struct rte_mbuf *m;
	uint32_t len;

	if (rte_ring_dequeue(pa_neigh_tx_ring(nb, port), (void **)&m) != 0)
		return 0;
	len = rte_pktmbuf_pkt_len(m);
	memcpy(buf, rte_pktmbuf_read(m, 0, len, buf), len);
	rte_pktmbuf_free(m);
	return len;
}

static unsigned int
drain(unsigned int port)
{
	uint8_t buf[2048];
	unsigned int k = 0;

	while (take(port, buf) != 0)
		k++;
	return k;
}

/* Drain port @p port; keep the frame asking for @p target. */
static uint32_t
take_for(unsigned int port, const char *target, uint8_t *out)
{
	uint8_t buf[2048], t[16];
	struct pa_neigh_msg m;
	uint32_t len, found = 0;

	if (strchr(target, ':') != NULL)
		ip6(target, t);
	else
		ip4(target, t);
	while ((len = take(port, buf)) != 0) {
		if (pa_neigh_parse(buf, len, &m) == 0 &&
		    memcmp(m.target_ip, t, strchr(target, ':') ? 16 : 4) == 0) {
			memcpy(out, buf, len);
			found = len;
		}
	}
	return found;
}

static uint32_t
arp_frame(uint8_t *buf, uint16_t op, const uint8_t *dst, const uint8_t *sha,
		const char *spa, const uint8_t *tha, const char *tpa)
{
	uint8_t s[4], t[4];

	ip4(spa, s);
	ip4(tpa, t);
	return pa_neigh_build_arp(buf, 256, NULL, 0, op, dst, sha, s, tha, t);
}

static uint32_t
nd_frame(uint8_t *buf, uint8_t type, const uint8_t *edst, const uint8_t *esrc,
		const char *src, const char *dst, const char *target,
		uint8_t flags, const uint8_t *lla)
{
	uint8_t s[16], d[16], t[16];

	ip6(src, s);
	ip6(dst, d);
	ip6(target, t);
	return pa_neigh_build_nd(buf, 256, NULL, 0, type, edst, esrc, s, d, t,
		flags, lla);
}

static json_int_t
stat(const char *name)
{
	json_t *o = pa_neigh_stats_json(nb, NULL), *v;
	json_int_t x;

	ck_assert_ptr_nonnull(o);
	v = json_object_get(o, name);
	ck_assert_msg(json_is_integer(v), "no counter %s", name);
	x = json_integer_value(v);
	json_decref(o);
	return x;
}

static json_int_t
invalid(const char *name)
{
	json_t *o = pa_neigh_stats_json(nb, NULL), *v;
	json_int_t x;

	v = json_object_get(json_object_get(o, "invalid"), name);
	ck_assert_msg(json_is_integer(v), "no invalid.%s", name);
	x = json_integer_value(v);
	json_decref(o);
	return x;
}

static enum pa_neigh_state
state_of(const char *a, unsigned int port, uint8_t *mac)
{
	struct pa_ip_addr x = addr(a);
	enum pa_neigh_state st;

	ck_assert_msg(pa_neigh_lookup(nb, &x, port, &st, mac) == 0,
		"no entry for %s on port %u", a, port);
	return st;
}

/* An IPv4 TCP frame from a client to (@p vip, 80), through the LB on
 * output port 0: the destination MAC it leaves with. */
static void
lb_dst_mac(const char *vip, uint8_t *out)
{
	struct pa_test_frame f;
	uint8_t v[4], c[4];
	struct rte_mbuf *m;
	uint8_t verdict;

	ip4("198.51.100.77", c);
	ip4(vip, v);
	pa_test_frame_l2(&f, BCAST, HOST, 0, NULL, 0, RTE_ETHER_TYPE_IPV4);
	pa_test_frame_ipv4(&f, c, v, IPPROTO_TCP, 0, 5, 0, 0, 64);
	pa_test_frame_tcp(&f, 40000, 80, 5, 0x02 /* SYN */, 0, 0);
	pa_test_frame_grow(&f, 20);	/* 74 bytes */
	pa_test_frame_fix(&f, 0);	/* lengths only: checksums stay 0 */
	m = mbuf_of(f.b, f.len, 0);
	ck_assert_int_eq(pa_pkt_parse_mbuf(m), 0);
	pa_pkt_meta(m)->out_port = 0;
	pa_lb_process(lb, 0, &m, 1, 1, &verdict);
	ck_assert_int_eq(verdict, PA_LB_V_FORWARD);
	memcpy(out, rte_pktmbuf_mtod(m, uint8_t *), 6);
	rte_pktmbuf_free(m);
}

static json_int_t
lb_stat(const char *name)
{
	json_t *o = pa_lb_stats_json(lb);
	json_int_t x = json_integer_value(json_object_get(o, name));

	json_decref(o);
	return x;
}

/* ------------------------------------------------------------------ */
/* The parser                                                          */
/* ------------------------------------------------------------------ */

START_TEST(test_parse_reads_a_valid_arp_request_and_a_vlan_tagged_reply)
{
	uint8_t f[128], g[128], tag[4] = { 0x81, 0x00, 0x00, 0x2a };
	struct pa_neigh_msg m;
	uint8_t s[4], t[4];
	uint32_t len;

	len = arp_frame(f, 1, BCAST, HOST, "198.51.100.9", ZERO6,
		"198.51.100.5");
	ck_assert_uint_eq(len, 60);
	ck_assert_int_eq(pa_neigh_parse(f, len, &m), 0);
	ck_assert_int_eq(m.type, PA_NEIGH_MSG_ARP_REQUEST);
	ck_assert_int_eq(m.l3_off, 14);
	ck_assert_mem_eq(m.sender_mac, HOST, 6);
	ip4("198.51.100.9", s);
	ip4("198.51.100.5", t);
	ck_assert_mem_eq(m.sender_ip, s, 4);
	ck_assert_mem_eq(m.target_ip, t, 4);

	len = pa_neigh_build_arp(g, sizeof(g), tag, 4, 2, MAC0, HOST, s, MAC0,
		t);
	ck_assert_uint_eq(len, 60);
	ck_assert_int_eq(pa_neigh_parse(g, len, &m), 0);
	ck_assert_int_eq(m.type, PA_NEIGH_MSG_ARP_REPLY);
	ck_assert_int_eq(m.l3_off, 18);
	/* the bytes as RFC 826 lays them out */
	ck_assert_mem_eq(g + 12, tag, 4);
	ck_assert_int_eq(g[16], 0x08);
	ck_assert_int_eq(g[17], 0x06);
	ck_assert_int_eq(g[18 + 1], 1);
	ck_assert_int_eq(g[18 + 2], 0x08);
	ck_assert_int_eq(g[18 + 4], 6);
	ck_assert_int_eq(g[18 + 5], 4);
	ck_assert_int_eq(g[18 + 7], 2);
	ck_assert_mem_eq(g + 18 + 8, HOST, 6);
	ck_assert_mem_eq(g + 18 + 18, MAC0, 6);
}
END_TEST

START_TEST(test_parse_refuses_truncated_odd_and_spoofed_arp_with_its_reason)
{
	uint8_t f[128], b[128];
	struct pa_neigh_msg m;
	uint32_t len, cut;
	static const uint8_t mcast[6] = { 0x01, 0, 0x5e, 0, 0, 1 };

	len = arp_frame(f, 1, BCAST, HOST, "198.51.100.9", ZERO6,
		"198.51.100.5");
	for (cut = 0; cut < 14 + 28; cut++)
		ck_assert_msg(pa_neigh_parse(f, cut, &m) < 0, "cut %u", cut);
	ck_assert_int_eq(pa_neigh_parse(f, 14 + 27, &m),
		-PA_NEIGH_BAD_TRUNCATED);
	memcpy(b, f, len);
	b[14 + 4] = 8;			/* hlen */
	ck_assert_int_eq(pa_neigh_parse(b, len, &m), -PA_NEIGH_BAD_HEADER);
	memcpy(b, f, len);
	b[14 + 5] = 16;			/* plen */
	ck_assert_int_eq(pa_neigh_parse(b, len, &m), -PA_NEIGH_BAD_HEADER);
	memcpy(b, f, len);
	b[14 + 7] = 3;			/* op: RARP */
	ck_assert_int_eq(pa_neigh_parse(b, len, &m), -PA_NEIGH_BAD_HEADER);
	/* multicast sender MAC (both places, so not a mismatch) */
	len = arp_frame(b, 1, BCAST, mcast, "198.51.100.9", ZERO6,
		"198.51.100.5");
	ck_assert_int_eq(pa_neigh_parse(b, len, &m), -PA_NEIGH_BAD_SENDER);
	len = arp_frame(b, 2, MAC0, HOST, "255.255.255.255", MAC0,
		"198.51.100.5");
	ck_assert_int_eq(pa_neigh_parse(b, len, &m), -PA_NEIGH_BAD_SENDER);
	len = arp_frame(b, 2, MAC0, HOST, "224.0.0.1", MAC0, "198.51.100.5");
	ck_assert_int_eq(pa_neigh_parse(b, len, &m), -PA_NEIGH_BAD_SENDER);
	/* 0.0.0.0 is a probe: fine in a request, not in a reply */
	len = arp_frame(b, 1, BCAST, HOST, "0.0.0.0", ZERO6, "198.51.100.5");
	ck_assert_int_eq(pa_neigh_parse(b, len, &m), 0);
	len = arp_frame(b, 2, MAC0, HOST, "0.0.0.0", MAC0, "198.51.100.5");
	ck_assert_int_eq(pa_neigh_parse(b, len, &m), -PA_NEIGH_BAD_SENDER);
	/* ... and the answer to a probe (target 0.0.0.0) is a valid reply
	 * (fuzz_neigh found the appliance refusing its own answer) */
	len = arp_frame(b, 2, HOST, MAC0, "198.51.100.5", HOST, "0.0.0.0");
	ck_assert_int_eq(pa_neigh_parse(b, len, &m), 0);
	len = arp_frame(b, 1, BCAST, HOST, "198.51.100.9", ZERO6, "0.0.0.0");
	ck_assert_int_eq(pa_neigh_parse(b, len, &m), -PA_NEIGH_BAD_TARGET);
	len = arp_frame(b, 1, BCAST, HOST, "198.51.100.9", ZERO6,
		"239.1.1.1");
	ck_assert_int_eq(pa_neigh_parse(b, len, &m), -PA_NEIGH_BAD_TARGET);
	/* Ethernet source not the sender hardware address */
	len = arp_frame(b, 1, BCAST, HOST, "198.51.100.9", ZERO6,
		"198.51.100.5");
	b[11] ^= 1;
	ck_assert_int_eq(pa_neigh_parse(b, len, &m),
		-PA_NEIGH_BAD_MAC_MISMATCH);
	ck_assert_str_eq(pa_neigh_bad_name(-PA_NEIGH_BAD_MAC_MISMATCH),
		"mac_mismatch");
}
END_TEST

START_TEST(test_parse_nd_checks_hop_limit_checksum_options_and_dad)
{
	uint8_t f[256], b[256], sol[6] = { 0x33, 0x33, 0xff, 0, 0, 0x05 };
	struct pa_neigh_msg m;
	uint32_t len;

	len = nd_frame(f, 135, sol, HOST, "2001:db8:1::9", "ff02::1:ff00:5",
		"2001:db8:1::5", 0, HOST);
	ck_assert_uint_eq(len, 14 + 40 + 32);
	ck_assert_int_eq(pa_neigh_parse(f, len, &m), 0);
	ck_assert_int_eq(m.type, PA_NEIGH_MSG_NS);
	ck_assert(m.has_mac);
	ck_assert_mem_eq(m.sender_mac, HOST, 6);
	memcpy(b, f, len);
	b[14 + 7] = 254;
	ck_assert_int_eq(pa_neigh_parse(b, len, &m), -PA_NEIGH_BAD_HOP_LIMIT);
	memcpy(b, f, len);
	b[14 + 40 + 2] ^= 0x10;
	ck_assert_int_eq(pa_neigh_parse(b, len, &m), -PA_NEIGH_BAD_CHECKSUM);
	memcpy(b, f, len);
	b[14 + 40 + 1] = 1;		/* code */
	ck_assert_int_eq(pa_neigh_parse(b, len, &m), -PA_NEIGH_BAD_TYPE);
	/* a zero-length option (checksum fixed by rebuilding is not
	 * possible: patch both) */
	memcpy(b, f, len);
	b[14 + 40 + 25] = 0;
	b[14 + 40 + 2] = 0;
	b[14 + 40 + 3] = 0;
	{
		uint32_t s = 0, i;
		const uint8_t *ip = b + 14;

		for (i = 8; i < 40; i += 2)
			s += (uint32_t)ip[i] << 8 | ip[i + 1];
		s += 32 + 58;
		for (i = 0; i < 32; i += 2)
			s += (uint32_t)ip[40 + i] << 8 | ip[40 + i + 1];
		while (s >> 16)
			s = (s & 0xffff) + (s >> 16);
		s = ~s & 0xffff;
		b[14 + 40 + 2] = (uint8_t)(s >> 8);
		b[14 + 40 + 3] = (uint8_t)s;
	}
	ck_assert_int_eq(pa_neigh_parse(b, len, &m), -PA_NEIGH_BAD_OPTION);
	/* truncated: the IPv6 payload length beyond the frame */
	ck_assert_int_eq(pa_neigh_parse(f, len - 1, &m),
		-PA_NEIGH_BAD_TRUNCATED);
	/* DAD: from ::, to the solicited-node group, no SLLA */
	len = nd_frame(b, 135, sol, HOST, "::", "ff02::1:ff00:5",
		"2001:db8:1::5", 0, NULL);
	ck_assert_int_eq(pa_neigh_parse(b, len, &m), 0);
	len = nd_frame(b, 135, sol, HOST, "::", "ff02::1:ff00:5",
		"2001:db8:1::5", 0, HOST);
	ck_assert_int_eq(pa_neigh_parse(b, len, &m), -PA_NEIGH_BAD_DAD);
	len = nd_frame(b, 135, sol, HOST, "::", "ff02::1:ff00:6",
		"2001:db8:1::5", 0, NULL);
	ck_assert_int_eq(pa_neigh_parse(b, len, &m), -PA_NEIGH_BAD_DAD);
	/* a solicited NA to a group; a multicast target */
	len = nd_frame(b, 136, BCAST, HOST, "2001:db8:1::9", "ff02::1",
		"2001:db8:1::9", PA_NEIGH_NA_S, HOST);
	ck_assert_int_eq(pa_neigh_parse(b, len, &m),
		-PA_NEIGH_BAD_NA_MCAST_SOLICITED);
	len = nd_frame(b, 135, sol, HOST, "2001:db8:1::9", "ff02::1:ff00:5",
		"ff02::1", 0, HOST);
	ck_assert_int_eq(pa_neigh_parse(b, len, &m), -PA_NEIGH_BAD_TARGET);
	/* the link-layer option must match the Ethernet source */
	len = nd_frame(b, 136, MAC0, MAC1, "2001:db8:1::9", "2001:db8:1::5",
		"2001:db8:1::9", PA_NEIGH_NA_S, HOST);
	ck_assert_int_eq(pa_neigh_parse(b, len, &m),
		-PA_NEIGH_BAD_MAC_MISMATCH);
}
END_TEST

/* ------------------------------------------------------------------ */
/* The rx stage's classification                                       */
/* ------------------------------------------------------------------ */

static int
classify(const uint8_t *f, uint32_t len, uint16_t port)
{
	struct rte_mbuf *m = mbuf_of(f, len, port);
	int r;

	if (pa_pkt_parse_mbuf(m) < 0) {
		rte_pktmbuf_free(m);
		return -1;
	}
	r = pa_neigh_rx_classify(pa_neigh_fast(nb), m, pa_pkt_meta(m), port);
	rte_pktmbuf_free(m);
	return r;
}

START_TEST(test_classify_sends_ours_to_the_control_side_and_passes_the_rest)
{
	uint8_t f[256], sol[6] = { 0x33, 0x33, 0xff, 0, 0, 0x10 };
	uint32_t len;

	/* VIP: any port; a port's address: that port only */
	len = arp_frame(f, 1, BCAST, HOST, "198.51.100.9", ZERO6, "192.0.2.10");
	ck_assert_int_eq(classify(f, len, 0), PA_NEIGH_RX_LOCAL);
	ck_assert_int_eq(classify(f, len, 1), PA_NEIGH_RX_LOCAL);
	len = arp_frame(f, 1, BCAST, HOST, "198.51.100.9", ZERO6,
		"198.51.100.5");
	ck_assert_int_eq(classify(f, len, 0), PA_NEIGH_RX_LOCAL);
	ck_assert_int_eq(classify(f, len, 1), PA_NEIGH_RX_PASS);
	len = arp_frame(f, 1, BCAST, HOST, "198.51.100.9", ZERO6,
		"192.0.2.254");
	ck_assert_int_eq(classify(f, len, 1), PA_NEIGH_RX_LOCAL);
	len = arp_frame(f, 1, BCAST, HOST, "198.51.100.9", ZERO6,
		"198.51.100.99");
	ck_assert_int_eq(classify(f, len, 0), PA_NEIGH_RX_PASS);
	/* gratuitous ARP of the gateway (a target of port 0) */
	len = arp_frame(f, 1, BCAST, GWMAC, "198.51.100.1", ZERO6,
		"198.51.100.1");
	ck_assert_int_eq(classify(f, len, 0), PA_NEIGH_RX_LOCAL);
	ck_assert_int_eq(classify(f, len, 1), PA_NEIGH_RX_PASS);
	/* truncated ARP: malformed; other hardware types: old path */
	len = arp_frame(f, 1, BCAST, HOST, "198.51.100.9", ZERO6, "192.0.2.10");
	ck_assert_int_eq(classify(f, 14 + 27, 0), PA_NEIGH_RX_MALFORMED);
	ck_assert_int_eq(classify(f, 14 + 7, 0), PA_NEIGH_RX_MALFORMED);
	f[14 + 1] = 6;
	ck_assert_int_eq(classify(f, len, 0), PA_NEIGH_RX_PASS);

	/* NS for the IPv6 VIP; NA for a watched backend on its port */
	len = nd_frame(f, 135, sol, HOST, "2001:db8:1::9", "ff02::1:ff00:10",
		"2001:db8:100::10", 0, HOST);
	ck_assert_int_eq(classify(f, len, 1), PA_NEIGH_RX_LOCAL);
	ck_assert_int_eq(classify(f, len - 8, 1), -1);	/* IPv6 length */
	len = nd_frame(f, 136, MAC0, BEMAC, "2001:db8:1::20", "2001:db8:1::5",
		"2001:db8:1::20", PA_NEIGH_NA_S | PA_NEIGH_NA_O, BEMAC);
	ck_assert_int_eq(classify(f, len, 0), PA_NEIGH_RX_LOCAL);
	ck_assert_int_eq(classify(f, len, 1), PA_NEIGH_RX_PASS);
	/* an NS whose ICMPv6 message is 20 bytes: malformed */
	len = nd_frame(f, 135, sol, HOST, "2001:db8:1::9", "ff02::1:ff00:10",
		"2001:db8:100::10", 0, NULL);
	f[14 + 5] = 20;
	ck_assert_int_eq(classify(f, 14 + 40 + 20, 1), PA_NEIGH_RX_MALFORMED);
	/* a router solicitation: old path */
	len = nd_frame(f, 133, sol, HOST, "2001:db8:1::9", "ff02::2",
		"2001:db8:100::10", 0, NULL);
	ck_assert_int_eq(classify(f, len, 1), PA_NEIGH_RX_PASS);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Answers                                                             */
/* ------------------------------------------------------------------ */

START_TEST(test_arp_request_for_a_port_address_gets_the_exact_reply_and_teaches_the_sender)
{
	uint8_t f[128], r[2048], want[128], s[4], t[4], mac[6];
	uint32_t len, rl;

	drain(0);
	len = arp_frame(f, 1, BCAST, HOST, "198.51.100.9", ZERO6,
		"198.51.100.5");
	inject(f, len, 0, T0 + 1);
	rl = take(0, r);
	ip4("198.51.100.5", s);
	ip4("198.51.100.9", t);
	ck_assert_uint_eq(pa_neigh_build_arp(want, sizeof(want), NULL, 0, 2,
		HOST, MAC0, s, HOST, t), 60);
	ck_assert_uint_eq(rl, 60);
	ck_assert_mem_eq(r, want, 60);
	ck_assert_uint_eq(take(0, r), 0);
	ck_assert_uint_eq(take(1, r), 0);
	ck_assert_int_eq(stat("arp_replies_out"), 1);
	/* the sender is on-link: known, stale, with its MAC */
	ck_assert_int_eq(state_of("198.51.100.9", 0, mac), PA_NEIGH_STALE);
	ck_assert_mem_eq(mac, HOST, 6);
	ck_assert_int_eq(stat("learned"), 1);
	/* the same request on port 1 is not for us there */
	inject(f, len, 1, T0 + 2);
	ck_assert_uint_eq(take(1, r), 0);
	ck_assert_int_eq(stat("not_ours"), 1);
}
END_TEST

/* One address, shared: lb.local_addr and local_addr6 are p0's own. */
static const char *CONF_SHARED =
"{'ports': [{'name': 'p0', 'devargs': 'net_null0',"
"  'addr': ['198.51.100.5/24', '2001:db8:1::5/64'], 'gateway': '198.51.100.1'},"
" {'name': 'p1', 'devargs': 'net_null1', 'addr': ['203.0.113.5/24']}],"
" 'lb': {'local_addr': '198.51.100.5', 'local_addr6': '2001:db8:1::5',"
"  'services': [{'name': 'web', 'vip': '192.0.2.10', 'port': 80,"
"   'proto': 'tcp', 'backends': [{'addr': '198.51.100.20'}]}]}}";

static const struct pa_neigh_dp_ent *
dp_ent(const char *a)
{
	struct pa_ip_addr x = addr(a);

	return pa_neigh_dp_find(pa_neigh_fast(nb)->dp,
		x.family == AF_INET ? 4 : 6, pa_ip_bytes(&x));
}

START_TEST(test_a_local_addr_shared_with_a_port_is_both_and_answered_once)
{
	const struct pa_neigh_dp_ent *e;
	uint8_t f[128], r[2048], want[128], s[4], t[4];
	uint32_t len;

	conf_next = CONF_SHARED;
	setup();
	conf_next = NULL;
	/* the port's own on p0, and lb.local_addr (the LB's share): not a
	 * VIP, whose whole address would be the LB's */
	e = dp_ent("198.51.100.5");
	ck_assert_ptr_nonnull(e);
	ck_assert_uint_eq(e->ours_ports, 1u << 0);
	ck_assert_uint_eq(e->flags, PA_NEIGH_DP_OURS_ANY | PA_NEIGH_DP_LB_LOCAL);
	e = dp_ent("2001:db8:1::5");
	ck_assert_ptr_nonnull(e);
	ck_assert_uint_eq(e->ours_ports, 1u << 0);
	ck_assert_uint_eq(e->flags, PA_NEIGH_DP_OURS_ANY | PA_NEIGH_DP_LB_LOCAL);
	e = dp_ent("192.0.2.10");
	ck_assert_ptr_nonnull(e);
	ck_assert_uint_eq(e->flags, PA_NEIGH_DP_OURS_ANY | PA_NEIGH_DP_VIP);

	/* one answer, from the port's MAC, on the port; lb.local_addr is
	 * answered on every port */
	drain(0);
	drain(1);
	len = arp_frame(f, 1, BCAST, HOST, "198.51.100.9", ZERO6,
		"198.51.100.5");
	ck_assert_int_eq(classify(f, len, 0), PA_NEIGH_RX_LOCAL);
	ck_assert_int_eq(classify(f, len, 1), PA_NEIGH_RX_LOCAL);
	inject(f, len, 0, T0 + 1);
	ip4("198.51.100.5", s);
	ip4("198.51.100.9", t);
	ck_assert_uint_eq(pa_neigh_build_arp(want, sizeof(want), NULL, 0, 2,
		HOST, MAC0, s, HOST, t), 60);
	ck_assert_uint_eq(take(0, r), 60);
	ck_assert_mem_eq(r, want, 60);
	ck_assert_uint_eq(take(0, r), 0);
	ck_assert_uint_eq(take(1, r), 0);
	ck_assert_int_eq(stat("arp_replies_out"), 1);
}
END_TEST

/* One address, shared, with the full-NAT pool: 198.51.100.5 is p0's own,
 * lb.local_addr and a pool address; 2001:db8:1::5 is p0's own and a pool
 * address; 198.51.100.50 and 2001:db8:5::50 are the pool's alone. */
static const char *CONF_POOL =
"{'ports': [{'name': 'p0', 'devargs': 'net_null0',"
"  'addr': ['198.51.100.5/24', '2001:db8:1::5/64'], 'gateway': '198.51.100.1'},"
" {'name': 'p1', 'devargs': 'net_null1', 'addr': ['203.0.113.5/24']}],"
" 'lb': {'local_addr': '198.51.100.5',"
"  'fnat': {'addrs': ['198.51.100.5', '2001:db8:1::5', '198.51.100.50',"
"   '2001:db8:5::50'], 'ports': '20000-29999'},"
"  'services': [{'name': 'web', 'vip': '192.0.2.10', 'port': 80,"
"   'proto': 'tcp', 'backends': [{'addr': '198.51.100.20'}]}]}}";

/* An IP packet from a peer to @p dst: TCP or UDP (@p proto) to port
 * @p dport; with @p frag, a later fragment. */
static struct rte_mbuf *
l4_to(const char *dst, uint8_t proto, uint16_t dport, bool frag)
{
	const bool v6 = strchr(dst, ':') != NULL;
	struct pa_test_frame f;
	uint8_t s[16], d[16];
	struct rte_mbuf *m;

	if (v6) {
		ip6("2001:db8:1::77", s);
		ip6(dst, d);
	} else {
		ip4("198.51.100.77", s);
		ip4(dst, d);
	}
	pa_test_frame_l2(&f, MAC0, HOST, 0, NULL, 0, v6 ?
		RTE_ETHER_TYPE_IPV6 : RTE_ETHER_TYPE_IPV4);
	if (v6 && frag) {
		pa_test_frame_ipv6(&f, s, d, IPPROTO_FRAGMENT, 0, 0, 64);
		pa_test_frame_frag6(&f, proto, 100, false, 7);
		pa_test_frame_payload(&f, 16, 0, 1);
	} else if (v6) {
		pa_test_frame_ipv6(&f, s, d, proto, 0, 0, 64);
	} else {
		pa_test_frame_ipv4(&f, s, d, proto, 0, 5, frag ? 100 : 0, 1,
			64);
	}
	if (frag && !v6)
		pa_test_frame_payload(&f, 16, 0, 1);
	else if (!frag && proto == IPPROTO_TCP)
		pa_test_frame_tcp(&f, 8443, dport, 5, 0x12, 0, 0);
	else if (!frag)
		pa_test_frame_udp(&f, 8443, dport);
	pa_test_frame_fix(&f, 0);
	m = mbuf_of(f.b, f.len, 0);
	ck_assert_int_eq(pa_pkt_parse_mbuf(m), 0);
	return m;
}

/* An ICMP / ICMPv6 error @p type from a router to @p dst, quoting a
 * packet of @p qproto from @p qsrc, source port @p qsport; @p qfrag: the
 * quoted IPv4 packet is a later fragment. */
static struct rte_mbuf *
error_to(const char *dst, uint8_t type, uint8_t qproto, const char *qsrc,
		uint16_t qsport, bool qfrag)
{
	const bool v6 = strchr(dst, ':') != NULL;
	struct pa_test_frame f;
	uint8_t r[16], d[16], qs[16], qd[16];
	struct rte_mbuf *m;

	if (v6) {
		ip6("2001:db8:1::1", r);
		ip6(dst, d);
		ip6(qsrc, qs);
		ip6("2001:db8:9::1", qd);
	} else {
		ip4("198.51.100.1", r);
		ip4(dst, d);
		ip4(qsrc, qs);
		ip4("10.9.0.1", qd);
	}
	pa_test_frame_l2(&f, MAC0, HOST, 0, NULL, 0, v6 ?
		RTE_ETHER_TYPE_IPV6 : RTE_ETHER_TYPE_IPV4);
	if (v6)
		pa_test_frame_ipv6(&f, r, d, IPPROTO_ICMPV6, 0, 0, 64);
	else
		pa_test_frame_ipv4(&f, r, d, IPPROTO_ICMP, 0, 5, 0, 1, 64);
	pa_test_frame_icmp(&f, type, 0);
	pa_test_frame_quote(&f, v6 ? 6 : 4, qproto, qs, qd);
	/* the quoted header's fragment field, and its source port */
	if (qfrag)
		pa_test_put16(f.b + f.len - 8 - 20 + 6, 100);
	pa_test_put16(f.b + f.len - 8, qsport);
	pa_test_frame_fix(&f, 0);
	m = mbuf_of(f.b, f.len, 0);
	ck_assert_int_eq(pa_pkt_parse_mbuf(m), 0);
	return m;
}

/* pa_neigh_dp_lb_keeps() of @p m for its destination @p dst (freed). */
static bool
keeps(const char *dst, struct rte_mbuf *m)
{
	bool r = pa_neigh_dp_lb_keeps(dp_ent(dst), m, pa_pkt_meta(m));

	rte_pktmbuf_free(m);
	return r;
}

START_TEST(test_pool_addresses_are_answered_everywhere_and_the_lb_keeps_its_ports)
{
	const struct pa_neigh_dp_ent *e;
	uint8_t f[256], sol[6] = { 0x33, 0x33, 0xff, 0, 0, 0x50 };
	uint32_t len;

	conf_next = CONF_POOL;
	setup();
	conf_next = NULL;
	/* in the table with the pool's ports; shared ones keep the port */
	e = dp_ent("198.51.100.5");
	ck_assert_ptr_nonnull(e);
	ck_assert_uint_eq(e->ours_ports, 1u << 0);
	ck_assert_uint_eq(e->flags, PA_NEIGH_DP_OURS_ANY |
		PA_NEIGH_DP_LB_LOCAL | PA_NEIGH_DP_LB_POOL);
	ck_assert_uint_eq(e->pool_lo, 20000);
	ck_assert_uint_eq(e->pool_hi, 29999);
	e = dp_ent("2001:db8:1::5");
	ck_assert_ptr_nonnull(e);
	ck_assert_uint_eq(e->ours_ports, 1u << 0);
	ck_assert_uint_eq(e->flags, PA_NEIGH_DP_OURS_ANY | PA_NEIGH_DP_LB_POOL);
	e = dp_ent("198.51.100.50");
	ck_assert_ptr_nonnull(e);
	ck_assert_uint_eq(e->ours_ports, 0);
	ck_assert_uint_eq(e->flags, PA_NEIGH_DP_OURS_ANY | PA_NEIGH_DP_LB_POOL);
	ck_assert_uint_eq(e->pool_lo, 20000);
	ck_assert_uint_eq(e->pool_hi, 29999);
	ck_assert_ptr_nonnull(dp_ent("2001:db8:5::50"));

	/* ARP and ND for the pool: ours on every port */
	len = arp_frame(f, 1, BCAST, HOST, "203.0.113.9", ZERO6,
		"198.51.100.50");
	ck_assert_int_eq(classify(f, len, 0), PA_NEIGH_RX_LOCAL);
	ck_assert_int_eq(classify(f, len, 1), PA_NEIGH_RX_LOCAL);
	len = nd_frame(f, 135, sol, HOST, "2001:db8:1::9", "ff02::1:ff00:50",
		"2001:db8:5::50", 0, HOST);
	ck_assert_int_eq(classify(f, len, 0), PA_NEIGH_RX_LOCAL);
	ck_assert_int_eq(classify(f, len, 1), PA_NEIGH_RX_LOCAL);

	/* the LB keeps TCP and UDP to the pool's ports, both families */
	ck_assert(keeps("198.51.100.50", l4_to("198.51.100.50", IPPROTO_TCP,
		20000, false)));
	ck_assert(keeps("198.51.100.50", l4_to("198.51.100.50", IPPROTO_UDP,
		29999, false)));
	ck_assert(keeps("2001:db8:5::50", l4_to("2001:db8:5::50",
		IPPROTO_TCP, 25000, false)));
	ck_assert(keeps("2001:db8:1::5", l4_to("2001:db8:1::5", IPPROTO_UDP,
		20001, false)));
	/* not outside them, nor later fragments (no ports) */
	ck_assert(!keeps("198.51.100.50", l4_to("198.51.100.50", IPPROTO_TCP,
		19999, false)));
	ck_assert(!keeps("198.51.100.50", l4_to("198.51.100.50", IPPROTO_UDP,
		30000, false)));
	ck_assert(!keeps("198.51.100.50", l4_to("198.51.100.50", IPPROTO_UDP,
		20000, true)));
	ck_assert(!keeps("2001:db8:5::50", l4_to("2001:db8:5::50",
		IPPROTO_UDP, 20000, true)));
	/* on the address shared with p0: the kernel's BGP, ssh are not its */
	ck_assert(!keeps("198.51.100.5", l4_to("198.51.100.5", IPPROTO_TCP,
		179, false)));
	ck_assert(!keeps("2001:db8:1::5", l4_to("2001:db8:1::5", IPPROTO_TCP,
		22, false)));
	ck_assert(keeps("198.51.100.5", l4_to("198.51.100.5", IPPROTO_TCP,
		20000, false)));

	/* ICMP errors about what it sent from the pool's ports */
	ck_assert(keeps("198.51.100.50", error_to("198.51.100.50", 3,
		IPPROTO_TCP, "198.51.100.50", 20000, false)));
	ck_assert(keeps("198.51.100.50", error_to("198.51.100.50", 11,
		IPPROTO_UDP, "198.51.100.50", 29999, false)));
	ck_assert(keeps("198.51.100.50", error_to("198.51.100.50", 12,
		IPPROTO_UDP, "198.51.100.50", 25000, false)));
	ck_assert(keeps("2001:db8:5::50", error_to("2001:db8:5::50", 1,
		IPPROTO_TCP, "2001:db8:5::50", 20000, false)));
	ck_assert(keeps("2001:db8:5::50", error_to("2001:db8:5::50", 2,
		IPPROTO_UDP, "2001:db8:5::50", 29999, false)));
	/* not: another port, another source, a quoted later fragment, a
	 * quoted protocol without ports, not an error */
	ck_assert(!keeps("198.51.100.50", error_to("198.51.100.50", 3,
		IPPROTO_TCP, "198.51.100.50", 179, false)));
	ck_assert(!keeps("198.51.100.50", error_to("198.51.100.50", 3,
		IPPROTO_TCP, "198.51.100.51", 20000, false)));
	ck_assert(!keeps("198.51.100.50", error_to("198.51.100.50", 3,
		IPPROTO_UDP, "198.51.100.50", 20000, true)));
	ck_assert(!keeps("198.51.100.50", error_to("198.51.100.50", 3,
		IPPROTO_GRE, "198.51.100.50", 20000, false)));
	ck_assert(!keeps("198.51.100.50", error_to("198.51.100.50", 5,
		IPPROTO_TCP, "198.51.100.50", 20000, false)));
	ck_assert(!keeps("2001:db8:5::50", error_to("2001:db8:5::50", 128,
		IPPROTO_TCP, "2001:db8:5::50", 20000, false)));
	ck_assert(!keeps("2001:db8:5::50", error_to("2001:db8:5::50", 1,
		IPPROTO_TCP, "2001:db8:5::50", 30000, false)));
	/* lb.local_addr's own still hold where it is a pool address too */
	ck_assert(keeps("198.51.100.5", error_to("198.51.100.5", 3,
		IPPROTO_IPIP, "198.51.100.5", 0, false)));
	ck_assert(!keeps("198.51.100.5", error_to("198.51.100.5", 3,
		IPPROTO_UDP, "198.51.100.5", 53, false)));
}
END_TEST

START_TEST(test_vlan_tags_of_a_request_are_kept_in_the_reply)
{
	uint8_t f[128], r[2048], s[4], t[4], tags[8] = {
		0x88, 0xa8, 0x00, 0x64, 0x81, 0x00, 0x00, 0x07 };
	struct pa_neigh_msg m;
	uint32_t len;

	drain(1);
	ip4("198.51.100.9", s);
	ip4("192.0.2.10", t);
	len = pa_neigh_build_arp(f, sizeof(f), tags, 8, 1, BCAST, HOST, s,
		ZERO6, t);
	inject(f, len, 1, T0 + 1);
	len = take(1, r);
	ck_assert_uint_eq(len, 60);	/* 14 + 8 + 28, padded */
	ck_assert_mem_eq(r + 12, tags, 8);
	ck_assert_int_eq(pa_neigh_parse(r, len, &m), 0);
	ck_assert_int_eq(m.type, PA_NEIGH_MSG_ARP_REPLY);
	ck_assert_mem_eq(m.sender_mac, MAC1, 6);
	ck_assert_mem_eq(m.sender_ip, t, 4);
	ck_assert_mem_eq(m.target_ip, s, 4);
	ck_assert_mem_eq(r, HOST, 6);
}
END_TEST

START_TEST(test_ns_for_a_vip_gets_a_solicited_override_na_and_dad_gets_all_nodes)
{
	uint8_t f[256], r[2048], sol[6] = { 0x33, 0x33, 0xff, 0, 0, 0x10 };
	uint8_t all[6] = { 0x33, 0x33, 0, 0, 0, 1 }, a[16];
	struct pa_neigh_msg m;
	uint32_t len;

	len = nd_frame(f, 135, sol, HOST, "2001:db8:1::9", "ff02::1:ff00:10",
		"2001:db8:100::10", 0, HOST);
	inject(f, len, 1, T0 + 1);
	len = take(1, r);
	ck_assert_uint_gt(len, 0);
	ck_assert_int_eq(pa_neigh_parse(r, len, &m), 0);
	ck_assert_int_eq(m.type, PA_NEIGH_MSG_NA);
	ck_assert_int_eq(m.nd_flags, PA_NEIGH_NA_S | PA_NEIGH_NA_O);
	ck_assert_mem_eq(m.sender_mac, MAC1, 6);
	ck_assert_mem_eq(r, HOST, 6);
	ip6("2001:db8:100::10", a);
	ck_assert_mem_eq(m.target_ip, a, 16);
	ck_assert_mem_eq(m.sender_ip, a, 16);
	ip6("2001:db8:1::9", a);
	ck_assert_mem_eq(m.dst_ip, a, 16);

	len = nd_frame(f, 135, sol, HOST, "::", "ff02::1:ff00:10",
		"2001:db8:100::10", 0, NULL);
	inject(f, len, 1, T0 + 2);
	len = take(1, r);
	ck_assert_int_eq(pa_neigh_parse(r, len, &m), 0);
	ck_assert_int_eq(m.nd_flags, PA_NEIGH_NA_O);
	ck_assert_mem_eq(r, all, 6);
	ip6("ff02::1", a);
	ck_assert_mem_eq(m.dst_ip, a, 16);
	/* hop limit 254: refused and counted, nothing sent */
	len = nd_frame(f, 135, sol, HOST, "2001:db8:1::9", "ff02::1:ff00:10",
		"2001:db8:100::10", 0, HOST);
	f[14 + 7] = 254;
	inject(f, len, 1, T0 + 3);
	ck_assert_uint_eq(take(1, r), 0);
	ck_assert_int_eq(invalid("hop_limit"), 1);
	ck_assert_int_eq(stat("na_out"), 2);
}
END_TEST

START_TEST(test_an_arp_probe_for_our_address_is_answered_and_teaches_nothing)
{
	uint8_t f[128], r[2048], z[4] = { 0 };
	struct pa_neigh_msg m;
	uint32_t len;

	drain(0);
	len = arp_frame(f, 1, BCAST, HOST, "0.0.0.0", ZERO6, "198.51.100.5");
	inject(f, len, 0, T0 + 1);
	len = take(0, r);
	ck_assert_int_eq(pa_neigh_parse(r, len, &m), 0);
	ck_assert_int_eq(m.type, PA_NEIGH_MSG_ARP_REPLY);
	ck_assert_mem_eq(m.target_ip, z, 4);
	ck_assert_mem_eq(r, HOST, 6);
	ck_assert_int_eq(stat("learned"), 0);
}
END_TEST

START_TEST(test_someone_else_claiming_our_address_is_a_conflict_not_learned)
{
	uint8_t f[128], r[2048];
	uint32_t len;

	len = arp_frame(f, 1, BCAST, HOST, "198.51.100.5", ZERO6,
		"198.51.100.5");
	inject(f, len, 0, T0 + 1);
	ck_assert_int_eq(stat("conflicts"), 1);
	drain(0);
	/* and a reply carrying our own MAC as its sender */
	len = arp_frame(f, 2, MAC0, MAC0, "198.51.100.1", MAC0,
		"198.51.100.5");
	inject(f, len, 0, T0 + 2);
	ck_assert_int_eq(invalid("sender"), 1);
	ck_assert_uint_eq(take(0, r), 0);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Resolution, timers, the LB                                          */
/* ------------------------------------------------------------------ */

START_TEST(test_targets_are_the_gateway_and_on_link_backends_asked_for_at_start)
{
	uint8_t r[2048], t[16];
	struct pa_neigh_msg m;
	unsigned int arp = 0, ns = 0;
	uint32_t len;

	while ((len = take(0, r)) != 0) {
		ck_assert_int_eq(pa_neigh_parse(r, len, &m), 0);
		if (m.type == PA_NEIGH_MSG_ARP_REQUEST) {
			arp++;
			ck_assert_mem_eq(r, BCAST, 6);
			ip4("198.51.100.5", t);
			ck_assert_mem_eq(m.sender_ip, t, 4);
		} else {
			ck_assert_int_eq(m.type, PA_NEIGH_MSG_NS);
			ns++;
			ip6("ff02::1:ff00:20", t);
			ck_assert_mem_eq(m.dst_ip, t, 16);
			ck_assert(m.has_mac);
			ck_assert_mem_eq(m.sender_mac, MAC0, 6);
		}
	}
	ck_assert_uint_eq(arp, 2);	/* gateway, 198.51.100.20 */
	ck_assert_uint_eq(ns, 1);	/* 2001:db8:1::20 */
	ck_assert_uint_eq(take(1, r), 0);	/* nothing on-link there */
	ck_assert_int_eq(state_of("198.51.100.1", 0, NULL),
		PA_NEIGH_INCOMPLETE);
	ck_assert_int_eq(state_of("198.51.100.20", 0, NULL),
		PA_NEIGH_INCOMPLETE);
	ck_assert_int_eq(state_of("2001:db8:1::20", 0, NULL),
		PA_NEIGH_INCOMPLETE);
	/* 10.9.0.1 is not on-link: through the gateway, never asked for */
	{
		struct pa_ip_addr x = addr("10.9.0.1");
		enum pa_neigh_state st;

		ck_assert_int_eq(pa_neigh_lookup(nb, &x, 0, &st, NULL),
			-ENOENT);
	}
}
END_TEST

START_TEST(test_unanswered_target_fails_after_its_probes_then_is_asked_again)
{
	uint8_t r[2048];

	drain(0);
	pa_neigh_poll(nb, T0 + 999);
	ck_assert_uint_eq(drain(0), 0);
	pa_neigh_poll(nb, T0 + 1000);		/* second request each */
	ck_assert_uint_eq(drain(0), 3);
	pa_neigh_poll(nb, T0 + 2000);		/* third */
	ck_assert_uint_eq(drain(0), 3);
	pa_neigh_poll(nb, T0 + 3000);		/* no more: failed */
	ck_assert_uint_eq(take(0, r), 0);
	ck_assert_int_eq(state_of("198.51.100.1", 0, NULL), PA_NEIGH_FAILED);
	ck_assert_int_eq(stat("failed"), 3);
	pa_neigh_poll(nb, T0 + 3000 + PA_NEIGH_DEF_FAILED_RETRY_MS);
	ck_assert_int_eq(state_of("198.51.100.1", 0, NULL),
		PA_NEIGH_INCOMPLETE);
	ck_assert_uint_eq(drain(0), 3);
}
END_TEST

START_TEST(test_reply_resolves_the_gateway_and_the_lb_uses_it_then_it_ages_and_is_probed)
{
	uint8_t f[128], r[2048], mac[6];
	struct pa_neigh_msg m;
	uint64_t t;
	uint32_t len;

	drain(0);
	/* before: the far service's packets fall back to the source MAC,
	 * counted */
	lb_dst_mac("192.0.2.11", mac);
	ck_assert_mem_eq(mac, HOST, 6);
	ck_assert_int_eq(lb_stat("neigh_unresolved"), 1);

	len = arp_frame(f, 2, MAC0, GWMAC, "198.51.100.1", MAC0,
		"198.51.100.5");
	inject(f, len, 0, T0 + 10);
	ck_assert_int_eq(state_of("198.51.100.1", 0, mac), PA_NEIGH_REACHABLE);
	ck_assert_mem_eq(mac, GWMAC, 6);
	ck_assert_int_eq(stat("resolved"), 1);
	lb_dst_mac("192.0.2.11", mac);
	ck_assert_mem_eq(mac, GWMAC, 6);
	/* the on-link backend, unresolved yet: to the gateway, counted */
	lb_dst_mac("192.0.2.10", mac);
	ck_assert_mem_eq(mac, GWMAC, 6);
	ck_assert_int_eq(lb_stat("neigh_unresolved"), 2);

	/* reachable for 30 s; then stale and probed by unicast at once */
	t = T0 + 10 + PA_NEIGH_DEF_REACHABLE_MS;
	pa_neigh_poll(nb, t - 1);
	ck_assert_int_eq(state_of("198.51.100.1", 0, NULL), PA_NEIGH_REACHABLE);
	drain(0);
	pa_neigh_poll(nb, t);
	ck_assert_int_eq(state_of("198.51.100.1", 0, NULL), PA_NEIGH_PROBE);
	len = take_for(0, "198.51.100.1", r);
	ck_assert_int_eq(pa_neigh_parse(r, len, &m), 0);
	ck_assert_int_eq(m.type, PA_NEIGH_MSG_ARP_REQUEST);
	ck_assert_mem_eq(r, GWMAC, 6);
	/* the MAC stays in use while probing */
	lb_dst_mac("192.0.2.11", mac);
	ck_assert_mem_eq(mac, GWMAC, 6);
	/* the answer: reachable again */
	len = arp_frame(f, 2, MAC0, GWMAC, "198.51.100.1", MAC0,
		"198.51.100.5");
	inject(f, len, 0, t + 500);
	ck_assert_int_eq(state_of("198.51.100.1", 0, NULL), PA_NEIGH_REACHABLE);
	/* no answer to the next round: failed, the LB stops using it */
	t += 500 + PA_NEIGH_DEF_REACHABLE_MS;
	pa_neigh_poll(nb, t);
	pa_neigh_poll(nb, t + 1000);
	pa_neigh_poll(nb, t + 2000);
	ck_assert_int_eq(state_of("198.51.100.1", 0, NULL), PA_NEIGH_PROBE);
	pa_neigh_poll(nb, t + 3000);
	ck_assert_int_eq(state_of("198.51.100.1", 0, NULL), PA_NEIGH_FAILED);
	lb_dst_mac("192.0.2.11", mac);
	ck_assert_mem_eq(mac, HOST, 6);
	drain(0);
}
END_TEST

/* The route stage's next hops: a transit frame leaving a routed port goes
 * to its gateway_mac, else to its resolved "gateway" of the frame's
 * family, with the port's MAC as source; none known: untouched,
 * -EHOSTUNREACH. */
START_TEST(test_route_stage_sends_transit_to_the_gateway_of_its_port_and_family)
{
	static const uint8_t FIXED[6] = { 0x02, 0, 0, 0, 0x77, 0x01 };
	const struct pa_neigh_fast *nf;
	struct rte_ether_hdr eth, was;
	uint8_t f[128];
	uint32_t len;
	uint64_t t;

	nf = pa_neigh_fast(nb);
	memset(&eth, 0x5a, sizeof(eth));
	was = eth;
	/* not resolved yet, and no gateway at all on p1 */
	ck_assert_int_eq(pa_neigh_route_macs(nf, &eth, 0, false), -EHOSTUNREACH);
	ck_assert_int_eq(pa_neigh_route_macs(nf, &eth, 1, false), -EHOSTUNREACH);
	ck_assert_int_eq(pa_neigh_route_macs(nf, &eth, RTE_MAX_ETHPORTS, false),
		-EHOSTUNREACH);
	ck_assert_mem_eq(&eth, &was, sizeof(eth));

	len = arp_frame(f, 2, MAC0, GWMAC, "198.51.100.1", MAC0,
		"198.51.100.5");
	inject(f, len, 0, T0 + 10);
	ck_assert_int_eq(pa_neigh_route_macs(nf, &eth, 0, false), 0);
	ck_assert_mem_eq(eth.dst_addr.addr_bytes, GWMAC, 6);
	ck_assert_mem_eq(eth.src_addr.addr_bytes, MAC0, 6);
	/* p0 has no IPv6 gateway: IPv6 transit has no route */
	eth = was;
	ck_assert_int_eq(pa_neigh_route_macs(nf, &eth, 0, true), -EHOSTUNREACH);
	ck_assert_mem_eq(&eth, &was, sizeof(eth));

	/* the gateway stops answering: failed, no route again */
	t = T0 + 10 + PA_NEIGH_DEF_REACHABLE_MS;
	pa_neigh_poll(nb, t);
	pa_neigh_poll(nb, t + 1000);
	pa_neigh_poll(nb, t + 2000);
	pa_neigh_poll(nb, t + 3000);
	ck_assert_int_eq(state_of("198.51.100.1", 0, NULL), PA_NEIGH_FAILED);
	ck_assert_int_eq(pa_neigh_route_macs(nf, &eth, 0, false), -EHOSTUNREACH);
	drain(0);

	/* a gateway_mac needs no resolving, for either family */
	conf_next =
"{'ports': [{'name': 'p0', 'devargs': 'net_null0',"
"  'addr': ['198.51.100.5/24', '2001:db8:1::5/64'],"
"  'gateway_mac': '02:00:00:00:77:01'},"
" {'name': 'p1', 'devargs': 'net_null1', 'addr': ['203.0.113.5/24']}]}";
	setup();
	conf_next = NULL;
	nf = pa_neigh_fast(nb);
	eth = was;
	ck_assert_int_eq(pa_neigh_route_macs(nf, &eth, 0, true), 0);
	ck_assert_mem_eq(eth.dst_addr.addr_bytes, FIXED, 6);
	ck_assert_mem_eq(eth.src_addr.addr_bytes, MAC0, 6);
	ck_assert_int_eq(pa_neigh_route_macs(nf, &eth, 0, false), 0);
	ck_assert_int_eq(pa_neigh_route_macs(nf, &eth, 1, false), -EHOSTUNREACH);
}
END_TEST

START_TEST(test_resolved_on_link_backend_wins_over_the_gateway)
{
	uint8_t f[256], mac[6];
	uint32_t len;

	drain(0);
	len = arp_frame(f, 2, MAC0, GWMAC, "198.51.100.1", MAC0,
		"198.51.100.5");
	inject(f, len, 0, T0 + 1);
	len = arp_frame(f, 2, MAC0, BEMAC, "198.51.100.20", MAC0,
		"198.51.100.5");
	inject(f, len, 0, T0 + 2);
	lb_dst_mac("192.0.2.10", mac);
	ck_assert_mem_eq(mac, BEMAC, 6);
	lb_dst_mac("192.0.2.11", mac);
	ck_assert_mem_eq(mac, GWMAC, 6);
	/* an IPv6 backend resolved by a solicited NA */
	len = nd_frame(f, 136, MAC0, BEMAC, "2001:db8:1::20", "2001:db8:1::5",
		"2001:db8:1::20", PA_NEIGH_NA_S | PA_NEIGH_NA_O, BEMAC);
	inject(f, len, 0, T0 + 3);
	ck_assert_int_eq(state_of("2001:db8:1::20", 0, mac),
		PA_NEIGH_REACHABLE);
	ck_assert_mem_eq(mac, BEMAC, 6);
}
END_TEST

START_TEST(test_replies_never_asked_for_and_unknown_gratuitous_arp_teach_nothing)
{
	uint8_t f[128], mac[6];
	struct pa_ip_addr x = addr("198.51.100.66");
	enum pa_neigh_state st;
	uint32_t len;

	len = arp_frame(f, 2, MAC0, HOST, "198.51.100.66", MAC0,
		"198.51.100.5");
	inject(f, len, 0, T0 + 1);
	ck_assert_int_eq(stat("unsolicited"), 1);
	ck_assert_int_eq(pa_neigh_lookup(nb, &x, 0, &st, NULL), -ENOENT);
	/* a gratuitous ARP of the gateway updates it: stale, so probed by
	 * unicast at once (the same poll) */
	len = arp_frame(f, 1, BCAST, GWMAC, "198.51.100.1", ZERO6,
		"198.51.100.1");
	drain(0);
	inject(f, len, 0, T0 + 2);
	ck_assert_int_eq(state_of("198.51.100.1", 0, mac), PA_NEIGH_PROBE);
	ck_assert_mem_eq(mac, GWMAC, 6);
	ck_assert_uint_gt(take_for(0, "198.51.100.1", f), 0);
	ck_assert_mem_eq(f, GWMAC, 6);
	/* an NA for an address never asked */
	len = nd_frame(f, 136, MAC0, HOST, "2001:db8:1::77", "2001:db8:1::5",
		"2001:db8:1::77", PA_NEIGH_NA_S | PA_NEIGH_NA_O, HOST);
	inject(f, len, 0, T0 + 4);
	ck_assert_int_eq(stat("unsolicited"), 2);
	drain(0);
}
END_TEST

START_TEST(test_backends_added_at_runtime_are_resolved_and_deleted_ones_forgotten_as_targets)
{
	struct pa_config_backend be;
	char err[256];
	uint8_t r[2048];
	struct pa_neigh_msg m;
	uint8_t t[4];
	uint32_t len;
	json_t *l;

	drain(0);
	memset(&be, 0, sizeof(be));
	be.addr = addr("198.51.100.21");
	be.weight = 1;
	ck_assert_int_eq(pa_lb_backend_add(lb, "web", &be, err, sizeof(err)),
		0);
	pa_neigh_poll(nb, T0 + 1);
	len = take(0, r);
	ck_assert_int_eq(pa_neigh_parse(r, len, &m), 0);
	ip4("198.51.100.21", t);
	ck_assert_mem_eq(m.target_ip, t, 4);
	ck_assert_int_eq(state_of("198.51.100.21", 0, NULL),
		PA_NEIGH_INCOMPLETE);
	l = pa_neigh_list_json(nb, T0 + 1);
	ck_assert_uint_eq(json_array_size(l), 4);
	json_decref(l);
	ck_assert_int_eq(pa_lb_backend_delete(lb, "web", &be.addr, err,
		sizeof(err)), 0);
	pa_neigh_poll(nb, T0 + 2);
	/* no longer a target: its failure removes it */
	pa_neigh_poll(nb, T0 + 5000);
	pa_neigh_poll(nb, T0 + 6000);
	pa_neigh_poll(nb, T0 + 7000);
	{
		enum pa_neigh_state st;

		ck_assert_int_eq(pa_neigh_lookup(nb, &be.addr, 0, &st, NULL),
			-ENOENT);
	}
	drain(0);
}
END_TEST

START_TEST(test_neigh_list_reports_address_mac_port_state_age_and_target)
{
	uint8_t f[128];
	json_t *l, *e;
	size_t i;
	uint32_t len;
	bool seen = false;

	len = arp_frame(f, 2, MAC0, GWMAC, "198.51.100.1", MAC0,
		"198.51.100.5");
	inject(f, len, 0, T0 + 500);
	l = pa_neigh_list_json(nb, T0 + 2500);
	ck_assert_ptr_nonnull(l);
	json_array_foreach(l, i, e) {
		if (strcmp(json_string_value(json_object_get(e, "address")),
			    "198.51.100.1") != 0)
			continue;
		seen = true;
		ck_assert_str_eq(json_string_value(json_object_get(e, "mac")),
			"02:00:00:00:99:01");
		ck_assert_str_eq(json_string_value(json_object_get(e, "port")),
			"p0");
		ck_assert_str_eq(json_string_value(json_object_get(e,
			"state")), "reachable");
		ck_assert_str_eq(json_string_value(json_object_get(e,
			"target")), "gateway");
		ck_assert(json_real_value(json_object_get(e, "age")) > 1.99 &&
			json_real_value(json_object_get(e, "age")) < 2.01);
	}
	ck_assert(seen);
	json_decref(l);
	drain(0);
}
END_TEST

START_TEST(test_cache_is_bounded_and_a_flood_of_senders_keeps_the_targets)
{
	uint8_t f[128], hm[6] = { 0x02, 0, 0, 0, 0x33, 0 };
	char ip[32];
	unsigned int k;
	uint32_t len;
	json_t *l;

	setup_opts(false, 8);
	for (k = 0; k < 50; k++) {
		hm[5] = (uint8_t)k;
		snprintf(ip, sizeof(ip), "198.51.100.%u", 100 + k);
		len = arp_frame(f, 1, BCAST, hm, ip, ZERO6, "198.51.100.5");
		inject(f, len, 0, T0 + k);
	}
	ck_assert_int_eq(stat("arp_replies_out"), 50);
	ck_assert_int_le(stat("entries"), 8);
	ck_assert_int_gt(stat("cache_full"), 0);
	ck_assert_int_eq(state_of("198.51.100.1", 0, NULL),
		PA_NEIGH_INCOMPLETE);
	ck_assert_int_eq(state_of("2001:db8:1::20", 0, NULL),
		PA_NEIGH_INCOMPLETE);
	l = pa_neigh_list_json(nb, T0 + 100);
	ck_assert_uint_le(json_array_size(l), 8);
	json_decref(l);
	/* learned entries are forgotten gc_ms after their last update */
	pa_neigh_poll(nb, T0 + 100 + PA_NEIGH_DEF_GC_MS);
	ck_assert_int_eq(stat("entries"), 3);
	drain(0);
}
END_TEST

START_TEST(test_replay_mode_runs_no_timer)
{
	uint8_t r[2048];

	setup_opts(true, 0);
	ck_assert_uint_eq(drain(0), 3);		/* one request each, at once */
	pa_neigh_poll(nb, T0 + 3600 * 1000ULL);
	ck_assert_uint_eq(take(0, r), 0);
	ck_assert_int_eq(state_of("198.51.100.1", 0, NULL),
		PA_NEIGH_INCOMPLETE);
	ck_assert(pa_neigh_idle(nb));
}
END_TEST

static Suite *
neigh_suite(void)
{
	Suite *s = suite_create("neigh");
	TCase *tc;

	tc = tcase_create("parse");
	tcase_add_test(tc, test_parse_reads_a_valid_arp_request_and_a_vlan_tagged_reply);
	tcase_add_test(tc, test_parse_refuses_truncated_odd_and_spoofed_arp_with_its_reason);
	tcase_add_test(tc, test_parse_nd_checks_hop_limit_checksum_options_and_dad);
	suite_add_tcase(s, tc);

	tc = tcase_create("control");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_classify_sends_ours_to_the_control_side_and_passes_the_rest);
	tcase_add_test(tc, test_arp_request_for_a_port_address_gets_the_exact_reply_and_teaches_the_sender);
	tcase_add_test(tc, test_a_local_addr_shared_with_a_port_is_both_and_answered_once);
	tcase_add_test(tc, test_pool_addresses_are_answered_everywhere_and_the_lb_keeps_its_ports);
	tcase_add_test(tc, test_vlan_tags_of_a_request_are_kept_in_the_reply);
	tcase_add_test(tc, test_ns_for_a_vip_gets_a_solicited_override_na_and_dad_gets_all_nodes);
	tcase_add_test(tc, test_an_arp_probe_for_our_address_is_answered_and_teaches_nothing);
	tcase_add_test(tc, test_someone_else_claiming_our_address_is_a_conflict_not_learned);
	tcase_add_test(tc, test_targets_are_the_gateway_and_on_link_backends_asked_for_at_start);
	tcase_add_test(tc, test_unanswered_target_fails_after_its_probes_then_is_asked_again);
	tcase_add_test(tc, test_reply_resolves_the_gateway_and_the_lb_uses_it_then_it_ages_and_is_probed);
	tcase_add_test(tc, test_route_stage_sends_transit_to_the_gateway_of_its_port_and_family);
	tcase_add_test(tc, test_resolved_on_link_backend_wins_over_the_gateway);
	tcase_add_test(tc, test_replies_never_asked_for_and_unknown_gratuitous_arp_teach_nothing);
	tcase_add_test(tc, test_backends_added_at_runtime_are_resolved_and_deleted_ones_forgotten_as_targets);
	tcase_add_test(tc, test_neigh_list_reports_address_mac_port_state_age_and_target);
	tcase_add_test(tc, test_cache_is_bounded_and_a_flood_of_senders_keeps_the_targets);
	tcase_add_test(tc, test_replay_mode_runs_no_timer);
	suite_add_tcase(s, tc);
	return s;
}

/* After the run: what the last test left. */
static void
run_teardown(void)
{
	pa_neigh_destroy(nb);
	pa_lb_destroy(lb);
	pa_config_free(cfg);
}

int
main(void)
{
	static const char *const eal_args[] = { "-m", "256",
		"--log-level=pa.lb:warning", "--log-level=pa.neigh:warning",
		"-l", "0", NULL };
	static Suite *(*const suites[])(void) = { neigh_suite, NULL };
	const struct pa_test_main t = {
		.name = "test_neigh",
		.suites = suites,
		.eal_args = eal_args,
		.mbufs = 2047,
		.pool = &pool,
		.pkt_init = true,
		.teardown = run_teardown,
	};

	return pa_test_main_eal(&t);
}
