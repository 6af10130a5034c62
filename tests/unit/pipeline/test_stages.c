/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of lib/pipeline/stages.c, the hub that runs each stage (rx,
 * classify, lb, route, tx) and sends every packet out through exactly
 * one exit: a TX queue, the next stage's ring, the control side or the
 * kernel_if, or a drop with its reason.
 *
 * The stages are static (and inlined into the lcore loop), so this file
 * includes stages.c and calls them: the lib's copy of pa_worker_main()
 * is left to pipeline.c (ours is renamed). The pipeline itself is the
 * real one: a configuration, ports that lib/port finds made already
 * (net_ring devices over rings of the test's, rte_eth_from_rings()),
 * pa_pipeline_create() and the ACL, blocklist, LB and neighbour tables
 * given to it as the daemon gives them. No lcore is launched: the test
 * is the worker's lcore. Frames are put on a port's RX ring and what
 * the worker sends is read from the port's TX ring, so each test
 * decides exactly what enters and sees exactly what leaves.
 *
 * One EAL (--no-huge, lcore 1 on the main lcore's CPU for the planner,
 * never launched); the tests run without fork.
 */

/* ours: the library's pa_worker_main() is the one pipeline.c launches */
#define pa_worker_main test_stages_worker_main
#include "stages.c"
#undef pa_worker_main

#include <arpa/inet.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include <rte_bus_vdev.h>
#include <rte_cycles.h>
#include <rte_eth_ring.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include "pa_acl.h"
#include "pa_blocklist.h"
#include "pa_config.h"
#include "pa_excp.h"
#include "pa_lb.h"
#include "pa_neigh.h"
#include "pa_pipeline.h"
#include "pa_pkt.h"
#include "pa_port.h"
#include "pa_test_frame.h"
#include "pa_test_main.h"

#define POOL_MBUFS	2047
#define RING_SLOTS	1023	/* a port's TX ring: 1024 slots */

static struct rte_mempool *pool;	/* the test's frames: one pool a test */

static struct pa_config *cfg;
static struct pa_port_set ports;
static struct pa_pipeline *pl;
static struct pa_acl *acl;
static struct pa_blocklist *bl;
static struct pa_lb *lb;
static struct pa_neigh *nb;
static struct pa_excp_fast excp;	/* a kernel_if without its TAP */
/* what fills a ring where a test wants it full: no mbufs */
static uintptr_t tokens[RING_SLOTS];
/* each port's device: its name and its RX and TX rings */
static struct {
	char name[RTE_ETH_NAME_MAX_LEN];
	struct rte_ring *rx, *tx;
} dev[PA_CONFIG_MAX_PORTS];

static const uint8_t MAC_CLIENT[6] = { 0x02, 0, 0, 0, 0x11, 0x11 };
static const uint8_t MAC_OTHER[6] = { 0x02, 0, 0, 0, 0x33, 0x33 };
static const uint8_t MAC_GW[6] = { 0x02, 0, 0, 0, 0x00, 0xfe };
static const uint8_t MAC_BCAST[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

/* ------------------------------------------------------------------ */
/* The pipeline                                                        */
/* ------------------------------------------------------------------ */

/* Two transparent ports, each the other's peer; one rtc worker; an ACL
 * that drops UDP to port 53 and anything from 10.66.0.0/16; a service
 * 192.0.2.10:80/tcp over ipip, and one whose every backend is down. */
#define DOC_TRANSPARENT(acl_extra) \
	"{'ports': [{'name': 'a', 'devargs': 'net_ring_a', 'peer': 'b'}," \
	" {'name': 'b', 'devargs': 'net_ring_b', 'peer': 'a'}]," \
	" 'pipeline': {'mode': 'rtc', 'lcores': {'worker': [1]}}," \
	" 'acl': {'default': 'permit'" acl_extra ", 'rules': [" \
	"  {'id': 1, 'priority': 10, 'src': 'any', 'dst': 'any'," \
	"   'sport': 'any', 'dport': '53', 'proto': 'udp', 'action': 'drop'}," \
	"  {'id': 2, 'priority': 10, 'src': '10.66.0.0/16', 'dst': 'any'," \
	"   'sport': 'any', 'dport': 'any', 'proto': 'any', 'action': 'drop'}]}," \
	" 'lb': {'local_addr': '192.0.2.254', 'services': [" \
	"  {'name': 'web', 'vip': '192.0.2.10', 'port': 80, 'proto': 'tcp'," \
	"   'forward': 'ipip', 'backends': [{'addr': '10.1.0.1'}," \
	"   {'addr': '10.1.0.2'}]}," \
	"  {'name': 'dark', 'vip': '192.0.2.11', 'port': 80, 'proto': 'tcp'," \
	"   'forward': 'ipip', 'backends': [{'addr': '10.1.0.3'," \
	"   'state': 'down'}]}]}}"

/* One routed port, one-armed (its own peer), with a kernel_if and a
 * static gateway MAC; the same service. */
#define DOC_ROUTED \
	"{'ports': [{'name': 'r', 'devargs': 'net_ring_r'," \
	" 'addr': ['198.51.100.5/24', '2001:db8:1::5/64']," \
	" 'gateway_mac': '02:00:00:00:00:fe', 'kernel_if': 'pa-st0'}]," \
	" 'pipeline': {'mode': 'rtc', 'lcores': {'worker': [1]}}," \
	" 'lb': {'local_addr': '192.0.2.254', 'services': [" \
	"  {'name': 'web', 'vip': '192.0.2.10', 'port': 80, 'proto': 'tcp'," \
	"   'forward': 'ipip', 'backends': [{'addr': '10.1.0.1'}]}]}}"

/* DOC_ROUTED with one address, shared: lb.local_addr is the port's own. */
#define DOC_SHARED(kif) \
	"{'ports': [{'name': 'r', 'devargs': 'net_ring_r'," \
	" 'addr': ['198.51.100.5/24', '2001:db8:1::5/64']," \
	" 'gateway_mac': '02:00:00:00:00:fe'" kif "}]," \
	" 'pipeline': {'mode': 'rtc', 'lcores': {'worker': [1]}}," \
	" 'lb': {'local_addr': '198.51.100.5', 'services': [" \
	"  {'name': 'web', 'vip': '192.0.2.10', 'port': 80, 'proto': 'tcp'," \
	"   'forward': 'ipip', 'backends': [{'addr': '10.1.0.1'}]}]}}"

/* DOC_ROUTED with a full-NAT pool: 198.51.100.5 and 2001:db8:1::5 are
 * the port's own and pool addresses, 198.51.100.50 the pool's alone. */
#define DOC_POOL(kif) \
	"{'ports': [{'name': 'r', 'devargs': 'net_ring_r'," \
	" 'addr': ['198.51.100.5/24', '2001:db8:1::5/64']," \
	" 'gateway_mac': '02:00:00:00:00:fe'" kif "}]," \
	" 'pipeline': {'mode': 'rtc', 'lcores': {'worker': [1]}}," \
	" 'lb': {'local_addr': '192.0.2.254'," \
	"  'fnat': {'addrs': ['198.51.100.5', '2001:db8:1::5'," \
	"   '198.51.100.50'], 'ports': '20000-29999'}, 'services': [" \
	"  {'name': 'web', 'vip': '192.0.2.10', 'port': 80, 'proto': 'tcp'," \
	"   'forward': 'ipip', 'backends': [{'addr': '10.1.0.1'}]}]}}"

/* Pipeline mode: rx and tx on lcore 1, classify and lb on lcore 2,
 * joined by rings of 64 slots. */
#define DOC_PIPELINE \
	"{'ports': [{'name': 'a', 'devargs': 'net_ring_a', 'peer': 'b'}," \
	" {'name': 'b', 'devargs': 'net_ring_b', 'peer': 'a'}]," \
	" 'pipeline': {'mode': 'pipeline', 'ring_size': 64, 'lcores':" \
	"  {'rx': [1], 'classify': [2], 'lb': [2], 'tx': [1]}}}"

/* A copy of @p s with ' made into " (JSON without escapes in C). */

static bool
is_token(const void *p)
{
	return (const uintptr_t *)p >= tokens &&
		(const uintptr_t *)p < tokens + RTE_DIM(tokens);
}

/* Take the tokens out of ring @p r, keep the rest in order. */
static void
ring_drop_tokens(struct rte_ring *r)
{
	unsigned int n = rte_ring_count(r);
	void *p;

	while (n-- > 0 && rte_ring_dequeue(r, &p) == 0)
		if (!is_token(p))
			rte_ring_enqueue(r, p);
}

/* Free ring @p r and the mbufs it holds (not the tokens a test that
 * failed may have left). */
static void
ring_free_all(struct rte_ring *r)
{
	void *p;

	if (r == NULL)
		return;
	while (rte_ring_dequeue(r, &p) == 0)
		if (!is_token(p))
			rte_pktmbuf_free(p);
	rte_ring_free(r);
}

/* The devices of @p cfg's ports, made before lib/port looks for them:
 * "net_ring_X" over an RX and a TX ring of the test's own. */
static void
devices_make(void)
{
	char rname[RTE_RING_NAMESIZE];
	unsigned int i;
	int id;

	for (i = 0; i < cfg->n_ports; i++) {
		const char *name = cfg->ports[i].devargs + strlen("net_ring_");

		snprintf(dev[i].name, sizeof(dev[i].name), "%s",
			cfg->ports[i].devargs);
		snprintf(rname, sizeof(rname), "st_rx_%s", name);
		dev[i].rx = rte_ring_create(rname, RING_SLOTS + 1,
			SOCKET_ID_ANY, 0);
		snprintf(rname, sizeof(rname), "st_tx_%s", name);
		dev[i].tx = rte_ring_create(rname, RING_SLOTS + 1,
			SOCKET_ID_ANY, 0);
		ck_assert(dev[i].rx != NULL && dev[i].tx != NULL);
		id = rte_eth_from_rings(name, &dev[i].rx, 1, &dev[i].tx, 1,
			SOCKET_ID_ANY);
		ck_assert_msg(id >= 0, "device %s: %s", dev[i].name,
			rte_strerror(rte_errno));
	}
}

static void
devices_remove(void)
{
	unsigned int i;

	for (i = 0; i < RTE_DIM(dev); i++) {
		if (dev[i].name[0] != '\0')
			rte_vdev_uninit(dev[i].name);
		ring_free_all(dev[i].rx);
		ring_free_all(dev[i].tx);
		memset(&dev[i], 0, sizeof(dev[i]));
	}
}

static void
teardown_pipeline(void)
{
	unsigned int i, in_use;

	pa_acl_stop_folder(acl);
	if (bl != NULL)
		pa_blocklist_stop_merger(bl);
	if (excp.rows != NULL) {
		struct rte_mbuf *m;

		while (rte_ring_dequeue(excp.ring[0], (void **)&m) == 0)
			rte_pktmbuf_free(m);
		rte_ring_free(excp.ring[0]);
		rte_free(excp.rows);
	}
	memset(&excp, 0, sizeof(excp));
	/* a test that failed may have left tokens between stages, which
	 * the pipeline would free as mbufs */
	for (i = 0; pl != NULL && i < pl->n_rings; i++)
		ring_drop_tokens(pl->rings[i]);
	/* its rings hold mbufs; the ports' rings go with the ports */
	pa_neigh_destroy(nb);
	nb = NULL;
	pa_port_close_all(&ports);
	devices_remove();
	pa_pipeline_destroy(pl);
	pl = NULL;
	pa_acl_destroy(acl);
	acl = NULL;
	pa_blocklist_destroy(bl);
	bl = NULL;
	pa_lb_destroy(lb);
	lb = NULL;
	pa_port_free_pools(&ports);
	memset(&ports, 0, sizeof(ports));
	pa_config_free(cfg);
	cfg = NULL;
	/* every mbuf back: what a test let leave was freed, by the stages
	 * or by the test (a test that failed may have left its own: the
	 * next test has a pool of its own) */
	in_use = pool != NULL ? rte_mempool_in_use_count(pool) : 0;
	rte_mempool_free(pool);
	pool = NULL;
	ck_assert_uint_eq(in_use, 0);
}

/* The pipeline of configuration @p doc (' for "), its tables given to
 * it in the daemon's order (pktaccel's app.c), nothing launched. */
static void
setup_pipeline(const char *doc, bool replay)
{
	bool runs_lb[PA_PIPELINE_MAX_LCORES] = { false };
	char err[PA_CONFIG_ERR_MAX], *text = pa_test_dq(doc);
	struct pa_pipeline_opts po = { .replay = replay, .segs_per_pkt = 1 };
	struct pa_blocklist_opts bo = { 0 };
	struct pa_neigh_opts no;
	struct pa_acl_opts ao;
	struct pa_lb_opts lo;

	pool = rte_pktmbuf_pool_create("test_stages", POOL_MBUFS, 0, 0,
		RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	ck_assert_ptr_nonnull(pool);
	cfg = pa_config_load_string(text, NULL, err, sizeof(err));
	ck_assert_msg(cfg != NULL, "config: %s\n%s", err, text);
	free(text);
	devices_make();
	ck_assert_msg(pa_port_probe(&ports, cfg, err, sizeof(err)) == 0,
		"ports: %s", err);
	po.cfg = cfg;
	po.ports = &ports;
	pl = pa_pipeline_create(&po, err, sizeof(err));
	ck_assert_msg(pl != NULL, "pipeline: %s", err);

	memset(&ao, 0, sizeof(ao));
	ao.rcu = pa_pipeline_rcu(pl);
	ao.n_lcores = pa_pipeline_lcore_count(pl);
	ao.socket = pa_pipeline_classify_socket(pl);
	ao.cfg = cfg;
	ao.port_index_of = ports.index_of;
	ao.no_folder = true;
	acl = pa_acl_create(&ao, err, sizeof(err));
	ck_assert_msg(acl != NULL, "acl: %s", err);
	pa_pipeline_set_acl(pl, acl);

	bo.rcu = pa_pipeline_rcu(pl);
	bo.n_lcores = pa_pipeline_lcore_count(pl);
	bl = pa_blocklist_create(&bo);
	ck_assert_ptr_nonnull(bl);
	pa_pipeline_set_blocklist(pl, bl);

	memset(&lo, 0, sizeof(lo));
	pa_pipeline_lb_lcores(pl, runs_lb);
	lo.rcu = pa_pipeline_rcu(pl);
	lo.n_lcores = pa_pipeline_lcore_count(pl);
	lo.runs_lb = runs_lb;
	lo.socket = pa_pipeline_classify_socket(pl);
	lo.cfg = cfg;
	lo.ports = &ports;
	lb = pa_lb_create(&lo, err, sizeof(err));
	ck_assert_msg(lb != NULL, "lb: %s", err);
	pa_pipeline_set_lb(pl, lb);

	memset(&no, 0, sizeof(no));
	no.cfg = cfg;
	no.ports = &ports;
	no.rcu = pa_pipeline_rcu(pl);
	no.lb = lb;
	no.replay = replay;
	nb = pa_neigh_create(&no, pa_neigh_now_ms(), err, sizeof(err));
	ck_assert_msg(nb != NULL, "neigh: %s", err);
	pa_pipeline_set_neigh(pl, nb);
}

/* The worker of lcore @p lcore. */
static struct pa_worker *
worker(unsigned int lcore)
{
	unsigned int i;

	for (i = 0; i < pl->n_workers; i++)
		if (pl->workers[i]->lcore_id == lcore)
			return pl->workers[i];
	ck_abort_msg("no worker on lcore %u", lcore);
	return NULL;
}

static uint16_t
port_id(unsigned int idx)
{
	return ports.port[idx].port_id;
}

static uint64_t
drops(const struct pa_worker *w, enum pa_drop_reason r)
{
	return w->stats.drops[r];
}

static uint64_t
drops_total(const struct pa_worker *w)
{
	uint64_t n = 0;
	unsigned int r;

	for (r = 0; r < PA_DROP_MAX; r++)
		n += w->stats.drops[r];
	return n;
}

/* Every packet the worker received left it once: sent, or dropped
 * (the control side's and the kernel's count as "local"). */
static void
assert_each_left_once(const struct pa_worker *w)
{
	ck_assert_uint_eq(w->stats.rx_packets,
		w->stats.tx_packets + drops_total(w));
}

/* ------------------------------------------------------------------ */
/* Frames                                                              */
/* ------------------------------------------------------------------ */

static void
ip4_of(const char *s, uint8_t a[4])
{
	ck_assert_int_eq(inet_pton(AF_INET, s, a), 1);
}

/* client -> @p dst, TCP or UDP, to the Ethernet destination @p dmac,
 * TTL @p ttl, @p payload bytes of payload tagged @p tag. */
static void
frame4(struct pa_test_frame *f, const uint8_t *dmac, const char *src,
		const char *dst, uint8_t proto, uint16_t sport, uint16_t dport,
		uint8_t ttl, uint8_t tag)
{
	uint8_t s[4], d[4];

	ip4_of(src, s);
	ip4_of(dst, d);
	pa_test_frame_l2(f, dmac, MAC_CLIENT, 0, NULL, 0, RTE_ETHER_TYPE_IPV4);
	pa_test_frame_ipv4(f, s, d, proto, 0, 5, 0x4000, tag, ttl);
	if (proto == IPPROTO_TCP)
		pa_test_frame_tcp(f, sport, dport, 5, 0x02, 1000u + tag, 8192);
	else
		pa_test_frame_udp(f, sport, dport);
	pa_test_frame_payload(f, 16, tag, 1);
	pa_test_frame_fix(f, PA_TEST_FIX_IP4_CSUM | PA_TEST_FIX_L4_CSUM);
}

/* The IPv6 twin of frame4(): hop limit @p hlim. */
static void
frame6(struct pa_test_frame *f, const uint8_t *dmac, const char *src,
		const char *dst, uint16_t sport, uint16_t dport, uint8_t hlim,
		uint8_t tag)
{
	uint8_t s[16], d[16];

	ck_assert_int_eq(inet_pton(AF_INET6, src, s), 1);
	ck_assert_int_eq(inet_pton(AF_INET6, dst, d), 1);
	pa_test_frame_l2(f, dmac, MAC_CLIENT, 0, NULL, 0, RTE_ETHER_TYPE_IPV6);
	pa_test_frame_ipv6(f, s, d, IPPROTO_UDP, 0, 0x12345, hlim);
	pa_test_frame_udp(f, sport, dport);
	pa_test_frame_payload(f, 16, tag, 1);
	pa_test_frame_fix(f, PA_TEST_FIX_L4_CSUM);
}

/* A frame of EtherType 0x88b5 (local experimental): not IP, not ARP. */
static void
frame_non_ip(struct pa_test_frame *f, const uint8_t *dmac, uint8_t tag)
{
	pa_test_frame_l2(f, dmac, MAC_CLIENT, 0, NULL, 0, 0x88b5);
	pa_test_frame_payload(f, 46, tag, 3);
}

/* An ARP request who-has @p target from 198.51.100.66. */
static void
frame_arp(struct pa_test_frame *f, const char *target)
{
	uint8_t *a;

	pa_test_frame_l2(f, MAC_BCAST, MAC_CLIENT, 0, NULL, 0,
		RTE_ETHER_TYPE_ARP);
	a = pa_test_frame_grow(f, 28);
	pa_test_put16(a, 1);			/* Ethernet */
	pa_test_put16(a + 2, RTE_ETHER_TYPE_IPV4);
	a[4] = 6;
	a[5] = 4;
	pa_test_put16(a + 6, 1);		/* request */
	memcpy(a + 8, MAC_CLIENT, 6);
	ip4_of("198.51.100.66", a + 14);
	ip4_of(target, a + 24);
	pa_test_frame_pad(f, 60);
}

/* An mbuf of the test's pool holding @p f, as a NIC hands it over. */
static struct rte_mbuf *
mbuf_of(const struct pa_test_frame *f)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	char *p;

	ck_assert_ptr_nonnull(m);
	p = rte_pktmbuf_append(m, (uint16_t)f->len);
	ck_assert_ptr_nonnull(p);
	memcpy(p, f->b, f->len);
	return m;
}

/* The frames @p f[0..n-1] arrive on port @p idx (its RX ring). */
static void
arrive(unsigned int idx, const struct pa_test_frame *f, unsigned int n)
{
	struct rte_mbuf *m[64];
	unsigned int i;

	ck_assert_uint_le(n, RTE_DIM(m));
	for (i = 0; i < n; i++) {
		m[i] = mbuf_of(&f[i]);
		m[i]->port = port_id(idx);	/* as a NIC sets it */
	}
	ck_assert_uint_eq(rte_ring_enqueue_bulk(dev[idx].rx, (void **)m, n,
		NULL), n);
}

/* What port @p idx sent (its TX ring), at most @p max. */
static unsigned int
sent(unsigned int idx, struct rte_mbuf **m, unsigned int max)
{
	return rte_ring_dequeue_burst(dev[idx].tx, (void **)m, max, NULL);
}

static void
free_all(struct rte_mbuf **m, unsigned int n)
{
	rte_pktmbuf_free_bulk(m, n);
}

/* Is mbuf @p m frame @p f, byte for byte? */
static bool
same_frame(const struct rte_mbuf *m, const struct pa_test_frame *f)
{
	return rte_pktmbuf_pkt_len(m) == f->len &&
		memcmp(rte_pktmbuf_mtod(m, const uint8_t *), f->b, f->len) == 0;
}

/* One pass of the worker over its ports, as its loop makes it. */
static unsigned int
poll_once(struct pa_worker *w)
{
	struct rte_mbuf *pkts[PA_PIPELINE_MAX_BURST];

	return poll_ports(w, pkts, rte_rdtsc());
}

/* ------------------------------------------------------------------ */
/* rx, classify, lb, tx on transparent ports (rtc)                     */
/* ------------------------------------------------------------------ */

START_TEST(test_transit_frames_leave_the_peer_port_unchanged_and_in_order)
{
	struct pa_test_frame f[8];
	struct rte_mbuf *out[16];
	struct pa_worker *w;
	unsigned int i, n;

	setup_pipeline(DOC_TRANSPARENT(""), false);
	w = worker(1);
	for (i = 0; i < RTE_DIM(f); i++)
		frame4(&f[i], MAC_OTHER, "198.51.100.66", "203.0.113.9",
			i % 2 ? IPPROTO_UDP : IPPROTO_TCP,
			(uint16_t)(40000 + i), 443, 64, (uint8_t)i);
	arrive(0, f, RTE_DIM(f));
	ck_assert_uint_eq(poll_once(w), RTE_DIM(f));
	ck_assert_uint_eq(sent(0, out, RTE_DIM(out)), 0);
	n = sent(1, out, RTE_DIM(out));
	ck_assert_uint_eq(n, RTE_DIM(f));
	for (i = 0; i < n; i++)
		ck_assert_msg(same_frame(out[i], &f[i]), "frame %u", i);
	free_all(out, n);
	ck_assert_uint_eq(w->stats.rx_packets, RTE_DIM(f));
	ck_assert_uint_eq(w->stats.tx_packets, RTE_DIM(f));
	ck_assert_uint_eq(drops_total(w), 0);
	/* and from b, to a */
	arrive(1, f, 1);
	ck_assert_uint_eq(poll_once(w), 1);
	ck_assert_uint_eq(sent(1, out, RTE_DIM(out)), 0);
	ck_assert_uint_eq(sent(0, out, RTE_DIM(out)), 1);
	ck_assert(same_frame(out[0], &f[0]));
	free_all(out, 1);
}
END_TEST

START_TEST(test_malformed_frame_is_dropped_and_the_burst_goes_on_in_order)
{
	struct pa_test_frame f[3];
	struct rte_mbuf *out[8];
	struct pa_worker *w;
	unsigned int n;

	setup_pipeline(DOC_TRANSPARENT(""), false);
	w = worker(1);
	frame4(&f[0], MAC_OTHER, "198.51.100.66", "203.0.113.9", IPPROTO_TCP,
		40000, 443, 64, 1);
	/* an IPv4 header claiming 60 bytes in a 34-byte frame */
	pa_test_frame_l2(&f[1], MAC_OTHER, MAC_CLIENT, 0, NULL, 0,
		RTE_ETHER_TYPE_IPV4);
	pa_test_frame_grow(&f[1], 20)[0] = 0x4f;
	frame4(&f[2], MAC_OTHER, "198.51.100.67", "203.0.113.9", IPPROTO_UDP,
		40001, 443, 64, 2);
	arrive(0, f, 3);
	poll_once(w);
	n = sent(1, out, RTE_DIM(out));
	ck_assert_uint_eq(n, 2);
	ck_assert(same_frame(out[0], &f[0]));
	ck_assert(same_frame(out[1], &f[2]));
	free_all(out, n);
	ck_assert_uint_eq(drops(w, PA_DROP_MALFORMED), 1);
	ck_assert_uint_eq(drops_total(w), 1);
	assert_each_left_once(w);
}
END_TEST

START_TEST(test_acl_drops_leave_with_reason_acl_and_permitted_ones_go_on)
{
	struct pa_test_frame f[4];
	struct rte_mbuf *out[8];
	struct pa_worker *w;
	unsigned int n;

	setup_pipeline(DOC_TRANSPARENT(""), false);
	w = worker(1);
	frame4(&f[0], MAC_OTHER, "198.51.100.66", "203.0.113.9", IPPROTO_UDP,
		40000, 53, 64, 1);		/* rule 1 */
	frame4(&f[1], MAC_OTHER, "198.51.100.66", "203.0.113.9", IPPROTO_UDP,
		40000, 54, 64, 2);
	frame4(&f[2], MAC_OTHER, "10.66.1.2", "203.0.113.9", IPPROTO_TCP,
		40000, 80, 64, 3);		/* rule 2 */
	frame4(&f[3], MAC_OTHER, "10.67.1.2", "203.0.113.9", IPPROTO_TCP,
		40000, 80, 64, 4);
	arrive(0, f, 4);
	poll_once(w);
	n = sent(1, out, RTE_DIM(out));
	ck_assert_uint_eq(n, 2);
	ck_assert(same_frame(out[0], &f[1]));
	ck_assert(same_frame(out[1], &f[3]));
	free_all(out, n);
	ck_assert_uint_eq(drops(w, PA_DROP_ACL), 2);
	ck_assert_uint_eq(drops_total(w), 2);
	assert_each_left_once(w);
}
END_TEST

START_TEST(test_blocklisted_source_is_dropped_before_the_acl_sees_it)
{
	char why[256];
	struct pa_ip_prefix p;
	struct pa_bl_set s;
	struct pa_test_frame f[3];
	struct rte_mbuf *out[8];
	struct pa_worker *w;

	setup_pipeline(DOC_TRANSPARENT(""), false);
	w = worker(1);
	memset(&s, 0, sizeof(s));
	ck_assert_int_eq(pa_bl_parse_prefix("10.66.7.0/24", &p, why,
		sizeof(why)), 0);
	ck_assert_int_eq(pa_bl_set_push(&s, &p), 0);
	pa_bl_set_normalise(&s);
	ck_assert_int_eq(pa_blocklist_add(bl, &s, why, sizeof(why)), 0);
	pa_bl_set_free(&s);
	/* both match ACL rule 2; the first is blocklisted too */
	frame4(&f[0], MAC_OTHER, "10.66.7.1", "203.0.113.9", IPPROTO_TCP,
		40000, 80, 64, 1);
	frame4(&f[1], MAC_OTHER, "10.66.8.1", "203.0.113.9", IPPROTO_TCP,
		40000, 80, 64, 2);
	frame4(&f[2], MAC_OTHER, "198.51.100.66", "203.0.113.9", IPPROTO_TCP,
		40000, 80, 64, 3);
	arrive(0, f, 3);
	poll_once(w);
	ck_assert_uint_eq(sent(1, out, RTE_DIM(out)), 1);
	ck_assert(same_frame(out[0], &f[2]));
	free_all(out, 1);
	ck_assert_uint_eq(drops(w, PA_DROP_BLOCKLIST), 1);
	ck_assert_uint_eq(drops(w, PA_DROP_ACL), 1);
	assert_each_left_once(w);
}
END_TEST

START_TEST(test_non_ip_frames_pass_unchanged_unless_acl_non_ip_is_drop)
{
	struct pa_test_frame f[2];
	struct rte_mbuf *out[8];
	struct pa_worker *w;

	frame_non_ip(&f[0], MAC_OTHER, 1);
	frame4(&f[1], MAC_OTHER, "198.51.100.66", "203.0.113.9", IPPROTO_TCP,
		40000, 80, 64, 2);
	setup_pipeline(DOC_TRANSPARENT(""), false);
	w = worker(1);
	arrive(0, f, 2);
	poll_once(w);
	ck_assert_uint_eq(sent(1, out, RTE_DIM(out)), 2);
	ck_assert(same_frame(out[0], &f[0]));
	ck_assert(same_frame(out[1], &f[1]));
	free_all(out, 2);
	ck_assert_uint_eq(drops_total(w), 0);
	teardown_pipeline();

	setup_pipeline(DOC_TRANSPARENT(", 'non_ip': 'drop'"), false);
	w = worker(1);
	arrive(0, f, 2);
	poll_once(w);
	ck_assert_uint_eq(sent(1, out, RTE_DIM(out)), 1);
	ck_assert(same_frame(out[0], &f[1]));
	free_all(out, 1);
	ck_assert_uint_eq(drops(w, PA_DROP_NON_IP), 1);
	assert_each_left_once(w);
}
END_TEST

START_TEST(test_service_packets_are_balanced_and_no_backend_is_a_drop)
{
	struct pa_test_frame f[3];
	struct rte_mbuf *out[8];
	const uint8_t *o;
	struct pa_worker *w;
	uint8_t be1[4], be2[4];

	setup_pipeline(DOC_TRANSPARENT(""), false);
	w = worker(1);
	ip4_of("10.1.0.1", be1);
	ip4_of("10.1.0.2", be2);
	frame4(&f[0], MAC_OTHER, "198.51.100.66", "192.0.2.10", IPPROTO_TCP,
		40000, 80, 64, 1);		/* web */
	frame4(&f[1], MAC_OTHER, "198.51.100.66", "192.0.2.11", IPPROTO_TCP,
		40000, 80, 64, 2);		/* dark: no backend up */
	frame4(&f[2], MAC_OTHER, "198.51.100.66", "192.0.2.10", IPPROTO_TCP,
		40000, 81, 64, 3);		/* no service: passes */
	arrive(0, f, 3);
	poll_once(w);
	ck_assert_uint_eq(sent(1, out, RTE_DIM(out)), 2);
	/* an outer IPv4 header (protocol 4) to a backend, then the frame's
	 * own IP packet */
	o = rte_pktmbuf_mtod(out[0], const uint8_t *);
	ck_assert_uint_eq(rte_pktmbuf_pkt_len(out[0]), f[0].len + 20);
	ck_assert_uint_eq(o[14 + 9], IPPROTO_IPIP);
	ck_assert(memcmp(o + 14 + 16, be1, 4) == 0 ||
		memcmp(o + 14 + 16, be2, 4) == 0);
	ck_assert(memcmp(o + 34, f[0].b + 14, f[0].len - 14) == 0);
	ck_assert(same_frame(out[1], &f[2]));
	free_all(out, 2);
	ck_assert_uint_eq(drops(w, PA_DROP_NO_BACKEND), 1);
	ck_assert_uint_eq(drops_total(w), 1);
	assert_each_left_once(w);
}
END_TEST

START_TEST(test_everything_a_mixed_burst_holds_leaves_once)
{
	struct pa_test_frame f[32];
	struct rte_mbuf *out[64];
	struct pa_worker *w;
	unsigned int i, n;

	setup_pipeline(DOC_TRANSPARENT(""), false);
	w = worker(1);
	for (i = 0; i < RTE_DIM(f); i++) {
		switch (i % 6) {
		case 0:		/* forwarded */
			frame4(&f[i], MAC_OTHER, "198.51.100.66", "203.0.113.9",
				IPPROTO_TCP, (uint16_t)(1000 + i), 80, 64,
				(uint8_t)i);
			break;
		case 1:		/* acl */
			frame4(&f[i], MAC_OTHER, "198.51.100.66", "203.0.113.9",
				IPPROTO_UDP, (uint16_t)(1000 + i), 53, 64,
				(uint8_t)i);
			break;
		case 2:		/* balanced */
			frame4(&f[i], MAC_OTHER, "198.51.100.66", "192.0.2.10",
				IPPROTO_TCP, (uint16_t)(1000 + i), 80, 64,
				(uint8_t)i);
			break;
		case 3:		/* no_backend */
			frame4(&f[i], MAC_OTHER, "198.51.100.66", "192.0.2.11",
				IPPROTO_TCP, (uint16_t)(1000 + i), 80, 64,
				(uint8_t)i);
			break;
		case 4:		/* malformed: cut inside its TCP header */
			frame4(&f[i], MAC_OTHER, "198.51.100.66", "203.0.113.9",
				IPPROTO_TCP, (uint16_t)(1000 + i), 80, 64,
				(uint8_t)i);
			f[i].len = 14 + 20 + 10;
			f[i].b[14 + 3] = 30;	/* IP total length: 30 */
			pa_test_put16(f[i].b + 14 + 10, 0);
			pa_test_put16(f[i].b + 14 + 10,
				pa_test_ip4_csum(f[i].b + 14));
			break;
		default:	/* non-IP, forwarded */
			frame_non_ip(&f[i], MAC_OTHER, (uint8_t)i);
			break;
		}
	}
	arrive(0, f, RTE_DIM(f));
	ck_assert_uint_eq(poll_once(w), RTE_DIM(f));
	n = sent(1, out, RTE_DIM(out));
	free_all(out, n);
	ck_assert_uint_eq(w->stats.rx_packets, RTE_DIM(f));
	ck_assert_uint_eq(n, w->stats.tx_packets);
	ck_assert_uint_eq(n, 6 + 5 + 5);	/* forwarded, balanced, non-IP */
	ck_assert_uint_eq(drops(w, PA_DROP_ACL), 6);
	ck_assert_uint_eq(drops(w, PA_DROP_NO_BACKEND), 5);
	ck_assert_uint_eq(drops(w, PA_DROP_MALFORMED), 5);
	assert_each_left_once(w);
}
END_TEST

/* ------------------------------------------------------------------ */
/* tx                                                                  */
/* ------------------------------------------------------------------ */

/* Fill port @p idx's ring to the brim with tokens that are no mbufs
 * (the TX queue then takes nothing); @return how many. */
static unsigned int
fill_ring(unsigned int idx)
{
	void *p[RING_SLOTS];
	unsigned int i, n;

	for (i = 0; i < RING_SLOTS; i++)
		p[i] = &tokens[i];
	n = rte_ring_enqueue_burst(dev[idx].tx, p, RING_SLOTS, NULL);
	ck_assert_uint_eq(rte_ring_free_count(dev[idx].tx), 0);
	return n;
}

static void
empty_ring(unsigned int idx, unsigned int n_tok)
{
	void *p[RING_SLOTS];

	ck_assert_uint_eq(rte_ring_dequeue_burst(dev[idx].tx, p,
		RING_SLOTS, NULL), n_tok);
}

START_TEST(test_full_tx_queue_drops_as_tx_full_in_live_mode)
{
	struct pa_test_frame f[3];
	struct pa_worker *w;
	unsigned int i, n_tok;

	setup_pipeline(DOC_TRANSPARENT(""), false);
	w = worker(1);
	for (i = 0; i < 3; i++)
		frame4(&f[i], MAC_OTHER, "198.51.100.66", "203.0.113.9",
			IPPROTO_TCP, (uint16_t)(1000 + i), 80, 64, (uint8_t)i);
	n_tok = fill_ring(1);
	arrive(0, f, 3);
	ck_assert_uint_eq(poll_once(w), 3);
	ck_assert_uint_eq(drops(w, PA_DROP_TX_FULL), 3);
	ck_assert_uint_eq(w->stats.tx_packets, 0);
	assert_each_left_once(w);
	empty_ring(1, n_tok);
}
END_TEST

struct drainer {
	pthread_t tid;
	unsigned int idx, tokens;
};

/* Make room in a full TX queue a while later, as a NIC would. */
static void *
drain_later(void *arg)
{
	struct drainer *d = arg;
	void *p[RING_SLOTS];
	unsigned int got = 0;

	rte_delay_us_sleep(100 * 1000);
	while (got < d->tokens)
		got += rte_ring_dequeue_burst(dev[d->idx].tx, p,
			d->tokens - got, NULL);
	return NULL;
}

START_TEST(test_full_tx_queue_is_waited_for_in_replay_and_dropped_on_abort)
{
	struct pa_test_frame f[2];
	struct rte_mbuf *out[4];
	struct drainer d = { .idx = 1 };
	struct pa_worker *w;
	unsigned int n_tok;

	setup_pipeline(DOC_TRANSPARENT(""), true);
	w = worker(1);
	frame4(&f[0], MAC_OTHER, "198.51.100.66", "203.0.113.9", IPPROTO_TCP,
		1000, 80, 64, 1);
	frame4(&f[1], MAC_OTHER, "198.51.100.66", "203.0.113.9", IPPROTO_TCP,
		1001, 80, 64, 2);
	/* replay: the packet waits for room, whenever it comes */
	d.tokens = fill_ring(1);
	ck_assert_int_eq(pthread_create(&d.tid, NULL, drain_later, &d), 0);
	arrive(0, f, 1);
	ck_assert_uint_eq(poll_once(w), 1);
	pthread_join(d.tid, NULL);
	ck_assert_uint_eq(sent(1, out, RTE_DIM(out)), 1);
	ck_assert(same_frame(out[0], &f[0]));
	free_all(out, 1);
	ck_assert_uint_eq(w->stats.tx_packets, 1);
	ck_assert_uint_eq(drops_total(w), 0);
	/* stopping with packets behind a full queue: "shutdown" */
	n_tok = fill_ring(1);
	pa_pipeline_abort(pl);
	arrive(0, &f[1], 1);
	ck_assert_uint_eq(poll_once(w), 1);
	ck_assert_uint_eq(drops(w, PA_DROP_SHUTDOWN), 1);
	ck_assert_uint_eq(drops(w, PA_DROP_TX_FULL), 0);
	assert_each_left_once(w);
	empty_ring(1, n_tok);
}
END_TEST

START_TEST(test_tx_drops_a_packet_for_a_port_it_does_not_serve_as_malformed)
{
	struct pa_test_frame f[3];
	struct rte_mbuf *m[3], *out[4];
	struct pa_worker *w;
	unsigned int i;

	setup_pipeline(DOC_TRANSPARENT(""), false);
	w = worker(1);
	for (i = 0; i < 3; i++) {
		frame4(&f[i], MAC_OTHER, "198.51.100.66", "203.0.113.9",
			IPPROTO_TCP, (uint16_t)(1000 + i), 80, 64, (uint8_t)i);
		m[i] = mbuf_of(&f[i]);
		ck_assert_int_eq(pa_pkt_parse_mbuf(m[i]), PA_PKT_OK);
		pa_pkt_meta(m[i])->out_port = port_id(i == 1 ? 0 : 1);
	}
	pa_pkt_meta(m[2])->out_port = RTE_MAX_ETHPORTS - 1;
	stage_tx(w, m, 3, PA_OUT_UNKNOWN, PA_STAMP_MIXED);
	txbuf_flush_all(w);
	ck_assert_uint_eq(drops(w, PA_DROP_MALFORMED), 1);
	ck_assert_uint_eq(w->stats.tx_packets, 2);
	/* each to its own port */
	ck_assert_uint_eq(sent(1, out, RTE_DIM(out)), 1);
	ck_assert(same_frame(out[0], &f[0]));
	free_all(out, 1);
	ck_assert_uint_eq(sent(0, out, RTE_DIM(out)), 1);
	ck_assert(same_frame(out[0], &f[1]));
	free_all(out, 1);
}
END_TEST

/* ------------------------------------------------------------------ */
/* A routed port: its MAC, its addresses, the route pass               */
/* ------------------------------------------------------------------ */

static const uint8_t *
port_mac(unsigned int idx)
{
	return ports.port[idx].mac.addr_bytes;
}

START_TEST(test_routed_port_drops_frames_for_another_mac_as_not_ours)
{
	/* its address's solicited-node group, 2001:db8:1::5's */
	static const uint8_t mac_snm[6] = { 0x33, 0x33, 0xff, 0, 0, 0x05 };
	struct pa_test_frame f[3];
	struct rte_mbuf *out[4];
	struct pa_worker *w;

	setup_pipeline(DOC_ROUTED, false);
	w = worker(1);
	frame4(&f[0], MAC_OTHER, "198.51.100.66", "203.0.113.9", IPPROTO_TCP,
		40000, 80, 64, 1);
	frame_non_ip(&f[1], MAC_OTHER, 2);
	/* a group it listens to for ND alone: anything else there */
	frame6(&f[2], mac_snm, "2001:db8:1::66", "ff02::1:ff00:5", 40000,
		5353, 255, 3);
	arrive(0, f, 3);
	poll_once(w);
	ck_assert_uint_eq(sent(0, out, RTE_DIM(out)), 0);
	ck_assert_uint_eq(drops(w, PA_DROP_NOT_OURS), 3);
	assert_each_left_once(w);
}
END_TEST

START_TEST(test_routed_transit_goes_to_the_gateway_with_one_hop_less)
{
	struct pa_test_frame f;
	struct rte_mbuf *out[4];
	const uint8_t *o;
	struct pa_worker *w;

	setup_pipeline(DOC_ROUTED, false);
	w = worker(1);
	frame4(&f, port_mac(0), "198.51.100.66", "203.0.113.9", IPPROTO_TCP,
		40000, 80, 64, 1);
	arrive(0, &f, 1);
	poll_once(w);
	ck_assert_uint_eq(sent(0, out, RTE_DIM(out)), 1);
	o = rte_pktmbuf_mtod(out[0], const uint8_t *);
	ck_assert_uint_eq(rte_pktmbuf_pkt_len(out[0]), f.len);
	ck_assert(memcmp(o, MAC_GW, 6) == 0);
	ck_assert(memcmp(o + 6, port_mac(0), 6) == 0);
	ck_assert_uint_eq(o[14 + 8], 63);
	ck_assert_uint_eq(pa_test_ip4_csum(o + 14), pa_test_get16(o + 24));
	/* the rest of the packet as it came */
	ck_assert(memcmp(o + 34, f.b + 34, f.len - 34) == 0);
	free_all(out, 1);
	/* IPv6: the hop limit, nothing else of the packet */
	frame6(&f, port_mac(0), "2001:db8:1::66", "2001:db8:9::9", 40000, 53,
		64, 2);
	arrive(0, &f, 1);
	poll_once(w);
	ck_assert_uint_eq(sent(0, out, RTE_DIM(out)), 1);
	o = rte_pktmbuf_mtod(out[0], const uint8_t *);
	ck_assert_uint_eq(rte_pktmbuf_pkt_len(out[0]), f.len);
	ck_assert(memcmp(o, MAC_GW, 6) == 0);
	ck_assert(memcmp(o + 6, port_mac(0), 6) == 0);
	ck_assert_uint_eq(o[14 + 7], 63);
	ck_assert(memcmp(o + 14, f.b + 14, 7) == 0);
	ck_assert(memcmp(o + 14 + 8, f.b + 14 + 8, f.len - 14 - 8) == 0);
	free_all(out, 1);
	ck_assert_uint_eq(w->stats.tx_packets, 2);
	assert_each_left_once(w);
}
END_TEST

START_TEST(test_routed_transit_at_ttl_1_is_dropped_and_answered_time_exceeded)
{
	struct pa_test_frame f;
	struct rte_mbuf *out[4];
	const uint8_t *o;
	struct pa_worker *w;
	uint8_t me[4], client[4];

	setup_pipeline(DOC_ROUTED, false);
	w = worker(1);
	ip4_of("198.51.100.5", me);
	ip4_of("198.51.100.66", client);
	frame4(&f, port_mac(0), "198.51.100.66", "203.0.113.9", IPPROTO_TCP,
		40000, 80, 1, 1);
	arrive(0, &f, 1);
	poll_once(w);
	ck_assert_uint_eq(drops(w, PA_DROP_TTL), 1);
	assert_each_left_once(w);
	/* nothing sent yet: the error waits on the port's ring for the TX
	 * lcore, which counts it apart from forwarded packets */
	ck_assert_uint_eq(sent(0, out, RTE_DIM(out)), 0);
	ck_assert_uint_eq(rte_ring_count(pl->gen[0]), 1);
	ctrl_tx(w);
	ck_assert_uint_eq(sent(0, out, RTE_DIM(out)), 1);
	o = rte_pktmbuf_mtod(out[0], const uint8_t *);
	ck_assert(memcmp(o + 6, port_mac(0), 6) == 0);
	ck_assert_uint_eq(pa_test_get16(o + 12), RTE_ETHER_TYPE_IPV4);
	ck_assert_uint_eq(o[14 + 9], IPPROTO_ICMP);
	ck_assert(memcmp(o + 14 + 12, me, 4) == 0);
	ck_assert(memcmp(o + 14 + 16, client, 4) == 0);
	ck_assert_uint_eq(o[34], 11);		/* time exceeded */
	ck_assert_uint_eq(o[35], 0);		/* in transit */
	free_all(out, 1);
	ck_assert_uint_eq(w->stats.icmp_tx_packets, 1);
	ck_assert_uint_eq(w->stats.tx_packets, 0);
}
END_TEST

START_TEST(test_routed_port_keeps_what_is_for_itself_as_to_self)
{
	struct pa_test_frame f[3];
	struct rte_mbuf *out[4];
	struct pa_worker *w;

	setup_pipeline(DOC_ROUTED, false);
	w = worker(1);
	/* its own address, a broadcast, a non-IP frame to its MAC */
	frame4(&f[0], port_mac(0), "198.51.100.66", "198.51.100.5",
		IPPROTO_UDP, 40000, 179, 64, 1);
	frame4(&f[1], MAC_BCAST, "198.51.100.66", "198.51.100.255",
		IPPROTO_UDP, 40000, 520, 64, 2);
	frame_non_ip(&f[2], port_mac(0), 3);
	arrive(0, f, 3);
	poll_once(w);
	ck_assert_uint_eq(sent(0, out, RTE_DIM(out)), 0);
	ck_assert_uint_eq(drops(w, PA_DROP_TO_SELF), 3);
	assert_each_left_once(w);
}
END_TEST

/* The port's kernel_if as pa_excp_create() would make it, without its
 * TAP: frames for the port's addresses go on a ring of @p slots. */
static void
give_kernel_if(struct pa_worker *w, unsigned int slots)
{
	excp.neigh = pa_neigh_fast(nb);
	excp.ports = 1u << 0;
	excp.ring[0] = rte_ring_create("test_stages_excp", slots,
		SOCKET_ID_ANY, RING_F_SC_DEQ);
	ck_assert_ptr_nonnull(excp.ring[0]);
	excp.interval[0] = 1;
	excp.tolerance[0] = UINT64_MAX / 4;
	excp.rows = rte_zmalloc(NULL, sizeof(*excp.rows) * pl->n_workers,
		RTE_CACHE_LINE_SIZE);
	ck_assert_ptr_nonnull(excp.rows);
	w->excp = &excp;
}

/* The kernel_if's ring holds exactly frames @p f[0..n) (@p n at most 8),
 * in order; taken and freed. */
static void
assert_kernel_got(const struct pa_test_frame *f, unsigned int n)
{
	struct rte_mbuf *k[8];
	unsigned int i;

	ck_assert_uint_eq(rte_ring_dequeue_burst(excp.ring[0], (void **)k,
		RTE_DIM(k), NULL), n);
	for (i = 0; i < n; i++)
		ck_assert_msg(same_frame(k[i], &f[i]), "frame %u", i);
	free_all(k, n);
}

START_TEST(test_frames_for_the_ports_address_go_to_its_kernel_if)
{
	struct pa_test_frame f[4];
	struct rte_mbuf *out[4];
	struct pa_worker *w;
	unsigned int i;

	setup_pipeline(DOC_ROUTED, false);
	w = worker(1);
	give_kernel_if(w, 4);			/* 3 slots */
	for (i = 0; i < 4; i++)
		frame4(&f[i], port_mac(0), "198.51.100.66", "198.51.100.5",
			IPPROTO_TCP, (uint16_t)(40000 + i), 22, 64, (uint8_t)i);
	arrive(0, f, 4);
	poll_once(w);
	ck_assert_uint_eq(sent(0, out, RTE_DIM(out)), 0);
	assert_kernel_got(f, 3);
	/* the kernel's share: "local"; no room: "excp_full" */
	ck_assert_uint_eq(drops(w, PA_DROP_LOCAL), 3);
	ck_assert_uint_eq(drops(w, PA_DROP_EXCP_FULL), 1);
	ck_assert_uint_eq(drops(w, PA_DROP_TO_SELF), 0);
	assert_each_left_once(w);
}
END_TEST

START_TEST(test_arp_for_the_port_goes_to_the_control_side)
{
	struct pa_test_frame f;
	struct rte_mbuf *out[4], *m;
	struct pa_worker *w;

	setup_pipeline(DOC_ROUTED, false);
	w = worker(1);
	frame_arp(&f, "198.51.100.5");
	arrive(0, &f, 1);
	poll_once(w);
	ck_assert_uint_eq(sent(0, out, RTE_DIM(out)), 0);
	ck_assert_uint_eq(drops(w, PA_DROP_LOCAL), 1);
	ck_assert_uint_eq(drops_total(w), 1);
	ck_assert_int_eq(rte_ring_dequeue(w->neigh->rx, (void **)&m), 0);
	ck_assert(same_frame(m, &f));
	rte_pktmbuf_free(m);
	assert_each_left_once(w);
}
END_TEST

START_TEST(test_a_vip_port_without_a_service_is_not_routed_back_out)
{
	struct pa_test_frame f[2];
	struct rte_mbuf *out[4];
	struct pa_worker *w;

	setup_pipeline(DOC_ROUTED, false);
	w = worker(1);
	frame4(&f[0], port_mac(0), "198.51.100.66", "192.0.2.10", IPPROTO_TCP,
		40000, 81, 64, 1);
	frame4(&f[1], port_mac(0), "198.51.100.66", "192.0.2.254",
		IPPROTO_UDP, 40000, 9, 64, 2);	/* lb.local_addr */
	arrive(0, f, 2);
	poll_once(w);
	ck_assert_uint_eq(sent(0, out, RTE_DIM(out)), 0);
	ck_assert_uint_eq(drops(w, PA_DROP_NO_SERVICE), 2);
	assert_each_left_once(w);
}
END_TEST

/* An ICMP fragmentation needed from router 198.51.100.1 to @p dst about
 * a packet of protocol @p qproto from @p qsrc to 10.1.0.1. */
static void
frame_frag_needed(struct pa_test_frame *f, const char *dst, uint8_t qproto,
		const char *qsrc)
{
	uint8_t s[4], d[4], qs[4], qd[4];

	ip4_of("198.51.100.1", s);
	ip4_of(dst, d);
	ip4_of(qsrc, qs);
	ip4_of("10.1.0.1", qd);
	pa_test_frame_l2(f, port_mac(0), MAC_GW, 0, NULL, 0,
		RTE_ETHER_TYPE_IPV4);
	pa_test_frame_ipv4(f, s, d, IPPROTO_ICMP, 0, 5, 0, 7, 64);
	pa_test_frame_icmp(f, 3, 0);
	f->b[f->l4 + 1] = 4;
	pa_test_frame_quote(f, 4, qproto, qs, qd);
	pa_test_frame_fix(f, PA_TEST_FIX_IP4_CSUM);
}

START_TEST(test_shared_local_addr_hands_the_kernel_its_share_and_keeps_the_lbs)
{
	struct pa_test_frame f[4];
	struct rte_mbuf *out[4];
	struct pa_worker *w;

	setup_pipeline(DOC_SHARED(", 'kernel_if': 'pa-st0'"), false);
	w = worker(1);
	give_kernel_if(w, 8);
	/* the kernel's: BGP, and a health probe's port unreachable */
	frame4(&f[0], port_mac(0), "198.51.100.66", "198.51.100.5",
		IPPROTO_TCP, 40000, 179, 64, 1);
	frame_frag_needed(&f[1], "198.51.100.5", IPPROTO_UDP, "198.51.100.5");
	/* the load balancer's: errors about the ipip packets it sent */
	frame_frag_needed(&f[2], "198.51.100.5", IPPROTO_IPIP, "198.51.100.5");
	frame_frag_needed(&f[3], "198.51.100.5", IPPROTO_IPIP, "198.51.100.5");
	f[3].b[f[3].l4] = 11;			/* time exceeded */
	arrive(0, f, 4);
	poll_once(w);
	ck_assert_uint_eq(sent(0, out, RTE_DIM(out)), 0);
	assert_kernel_got(f, 2);
	ck_assert_uint_eq(drops(w, PA_DROP_LOCAL), 2);
	/* as a local_addr of its own would: no service there */
	ck_assert_uint_eq(drops(w, PA_DROP_NO_SERVICE), 2);
	ck_assert_uint_eq(drops(w, PA_DROP_TO_SELF), 0);
	assert_each_left_once(w);
}
END_TEST

START_TEST(test_shared_local_addr_without_kernel_if_keeps_the_lbs_and_the_rest_is_to_self)
{
	struct pa_test_frame f[2];
	struct rte_mbuf *out[4];
	struct pa_worker *w;

	setup_pipeline(DOC_SHARED(""), false);
	w = worker(1);
	frame4(&f[0], port_mac(0), "198.51.100.66", "198.51.100.5",
		IPPROTO_TCP, 40000, 179, 64, 1);
	frame_frag_needed(&f[1], "198.51.100.5", IPPROTO_IPIP, "198.51.100.5");
	arrive(0, f, 2);
	poll_once(w);
	ck_assert_uint_eq(sent(0, out, RTE_DIM(out)), 0);
	ck_assert_uint_eq(drops(w, PA_DROP_TO_SELF), 1);
	ck_assert_uint_eq(drops(w, PA_DROP_NO_SERVICE), 1);
	assert_each_left_once(w);
}
END_TEST

/* An ICMP error (frame_frag_needed()) quoting a packet whose source
 * port is @p qsport. */
static void
frame_frag_needed_port(struct pa_test_frame *f, const char *dst,
		uint8_t qproto, const char *qsrc, uint16_t qsport)
{
	frame_frag_needed(f, dst, qproto, qsrc);
	pa_test_put16(f->b + f->len - 8, qsport);
}

START_TEST(test_shared_pool_addr_hands_the_kernel_its_share_and_keeps_the_lbs)
{
	struct pa_test_frame f[8];
	struct rte_mbuf *out[8];
	struct pa_worker *w;

	setup_pipeline(DOC_POOL(", 'kernel_if': 'pa-st0'"), false);
	w = worker(1);
	give_kernel_if(w, 16);
	/* the kernel's: BGP, ssh over IPv6, a UDP reply below the pool's
	 * ports, an error about its own UDP (port 53) */
	frame4(&f[0], port_mac(0), "198.51.100.66", "198.51.100.5",
		IPPROTO_TCP, 40000, 179, 64, 1);
	frame6(&f[1], port_mac(0), "2001:db8:1::66", "2001:db8:1::5", 40000,
		22, 64, 2);
	frame4(&f[2], port_mac(0), "198.51.100.66", "198.51.100.5",
		IPPROTO_UDP, 53, 19999, 64, 3);
	frame_frag_needed_port(&f[3], "198.51.100.5", IPPROTO_UDP,
		"198.51.100.5", 53);
	/* the load balancer's: replies to the pool's ports, both families,
	 * and an error about what it sent from one */
	frame4(&f[4], port_mac(0), "10.1.0.1", "198.51.100.5", IPPROTO_TCP,
		8443, 20000, 64, 5);
	frame4(&f[5], port_mac(0), "10.1.0.1", "198.51.100.5", IPPROTO_UDP,
		53, 29999, 64, 6);
	frame6(&f[6], port_mac(0), "2001:db8:2::1", "2001:db8:1::5", 53,
		25000, 64, 7);
	frame_frag_needed_port(&f[7], "198.51.100.5", IPPROTO_TCP,
		"198.51.100.5", 20001);
	arrive(0, f, 8);
	poll_once(w);
	ck_assert_uint_eq(sent(0, out, RTE_DIM(out)), 0);
	assert_kernel_got(f, 4);
	ck_assert_uint_eq(drops(w, PA_DROP_LOCAL), 4);
	/* the rest went on to the lb stage, as to an address of its own:
	 * no flow holds those ports, so the lb stage or the route pass
	 * drops them (never back out, never to_self) */
	ck_assert_uint_eq(drops(w, PA_DROP_TO_SELF), 0);
	ck_assert_uint_eq(drops_total(w) - drops(w, PA_DROP_LOCAL), 4);
	assert_each_left_once(w);
}
END_TEST

START_TEST(test_shared_pool_addr_without_kernel_if_keeps_the_lbs_and_the_rest_is_to_self)
{
	struct pa_test_frame f[2];
	struct rte_mbuf *out[4];
	struct pa_worker *w;

	setup_pipeline(DOC_POOL(""), false);
	w = worker(1);
	frame4(&f[0], port_mac(0), "198.51.100.66", "198.51.100.5",
		IPPROTO_TCP, 40000, 179, 64, 1);
	frame4(&f[1], port_mac(0), "10.1.0.1", "198.51.100.5", IPPROTO_TCP,
		8443, 20000, 64, 2);
	arrive(0, f, 2);
	poll_once(w);
	ck_assert_uint_eq(sent(0, out, RTE_DIM(out)), 0);
	ck_assert_uint_eq(drops(w, PA_DROP_TO_SELF), 1);
	/* the reply to a pool port went on to the lb stage */
	ck_assert_uint_eq(drops_total(w), 2);
	assert_each_left_once(w);
}
END_TEST

/* A pool address that is no port's is the load balancer's, like
 * lb.local_addr: all of it reaches the lb stage, none of it the kernel or
 * back out of the port. */
START_TEST(test_pool_addr_of_its_own_reaches_the_lb_and_is_not_routed_back)
{
	struct pa_test_frame f[3];
	struct rte_mbuf *out[4];
	struct pa_worker *w;

	setup_pipeline(DOC_POOL(", 'kernel_if': 'pa-st0'"), false);
	w = worker(1);
	give_kernel_if(w, 8);
	frame4(&f[0], port_mac(0), "10.1.0.1", "198.51.100.50", IPPROTO_TCP,
		8443, 20000, 64, 1);
	frame4(&f[1], port_mac(0), "198.51.100.66", "198.51.100.50",
		IPPROTO_TCP, 40000, 179, 64, 2);
	frame_frag_needed_port(&f[2], "198.51.100.50", IPPROTO_TCP,
		"198.51.100.50", 20000);
	arrive(0, f, 3);
	poll_once(w);
	ck_assert_uint_eq(sent(0, out, RTE_DIM(out)), 0);
	assert_kernel_got(f, 0);
	ck_assert_uint_eq(drops(w, PA_DROP_LOCAL), 0);
	ck_assert_uint_eq(drops(w, PA_DROP_TO_SELF), 0);
	/* all three reached the lb stage; with no flow there, none goes
	 * back out: the one to no pool port is the route pass's
	 * "no_service", as on lb.local_addr */
	ck_assert_uint_eq(drops_total(w), 3);
	ck_assert_uint_ge(drops(w, PA_DROP_NO_SERVICE), 1);
	assert_each_left_once(w);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Pipeline mode: stages on two lcores joined by rings                 */
/* ------------------------------------------------------------------ */

static unsigned int
poll_rings_once(struct pa_worker *w)
{
	struct rte_mbuf *pkts[PA_PIPELINE_MAX_BURST];

	return poll_rings(w, pkts, rte_rdtsc());
}

START_TEST(test_pipeline_mode_hands_bursts_on_by_ring_and_tx_sends_them)
{
	struct pa_test_frame f[4];
	struct rte_mbuf *out[8];
	struct pa_worker *rx, *mid;
	unsigned int i;

	setup_pipeline(DOC_PIPELINE, false);
	rx = worker(1);
	mid = worker(2);
	ck_assert(rx->run_rx && rx->run_tx && !rx->run_classify);
	ck_assert(mid->run_classify && mid->run_lb && !mid->run_tx);
	for (i = 0; i < 4; i++)
		frame4(&f[i], MAC_OTHER, "198.51.100.66", "203.0.113.9",
			IPPROTO_TCP, (uint16_t)(1000 + i), 80, 64, (uint8_t)i);
	arrive(0, f, 4);
	/* rx: to classify's ring, not to a port */
	ck_assert_uint_eq(poll_once(rx), 4);
	ck_assert_uint_eq(sent(1, out, RTE_DIM(out)), 0);
	ck_assert_uint_eq(rx->stats.stage_packets[PA_STAGE_RX], 4);
	/* classify and lb: to tx's ring */
	ck_assert_uint_eq(poll_rings_once(mid), 4);
	ck_assert_uint_eq(mid->stats.stage_packets[PA_STAGE_LB], 4);
	ck_assert_uint_eq(sent(1, out, RTE_DIM(out)), 0);
	/* tx */
	ck_assert_uint_eq(poll_rings_once(rx), 4);
	txbuf_flush_all(rx);
	ck_assert_uint_eq(sent(1, out, RTE_DIM(out)), 4);
	for (i = 0; i < 4; i++)
		ck_assert_msg(same_frame(out[i], &f[i]), "frame %u", i);
	free_all(out, 4);
	ck_assert_uint_eq(rx->stats.rx_packets, 4);
	ck_assert_uint_eq(rx->stats.tx_packets, 4);
	ck_assert_uint_eq(drops_total(rx) + drops_total(mid), 0);
}
END_TEST

START_TEST(test_full_ring_between_stages_drops_as_ring_full_in_live_mode)
{
	struct pa_test_frame f[2];
	struct pa_worker *rx;
	struct rte_ring *r;
	void *tok[64];
	unsigned int i, n;

	setup_pipeline(DOC_PIPELINE, false);
	rx = worker(1);
	ck_assert_uint_eq(rx->n_out[rx->rx_seg.last], 1);
	r = rx->out[rx->rx_seg.last][0];
	for (i = 0; i < RTE_DIM(tok); i++)
		tok[i] = &tokens[i];
	n = rte_ring_enqueue_burst(r, tok, RTE_DIM(tok), NULL);
	ck_assert_uint_eq(rte_ring_free_count(r), 0);
	for (i = 0; i < 2; i++)
		frame4(&f[i], MAC_OTHER, "198.51.100.66", "203.0.113.9",
			IPPROTO_TCP, (uint16_t)(1000 + i), 80, 64, (uint8_t)i);
	arrive(0, f, 2);
	ck_assert_uint_eq(poll_once(rx), 2);
	ck_assert_uint_eq(drops(rx, PA_DROP_RING_FULL), 2);
	assert_each_left_once(rx);
	ck_assert_uint_eq(rte_ring_dequeue_burst(r, tok, RTE_DIM(tok), NULL),
		n);
}
END_TEST

static Suite *
stages_suite(void)
{
	Suite *s = suite_create("stages");
	TCase *tc;

	tc = tcase_create("transparent");
	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, NULL, teardown_pipeline);
	tcase_add_test(tc, test_transit_frames_leave_the_peer_port_unchanged_and_in_order);
	tcase_add_test(tc, test_malformed_frame_is_dropped_and_the_burst_goes_on_in_order);
	tcase_add_test(tc, test_acl_drops_leave_with_reason_acl_and_permitted_ones_go_on);
	tcase_add_test(tc, test_blocklisted_source_is_dropped_before_the_acl_sees_it);
	tcase_add_test(tc, test_non_ip_frames_pass_unchanged_unless_acl_non_ip_is_drop);
	tcase_add_test(tc, test_service_packets_are_balanced_and_no_backend_is_a_drop);
	tcase_add_test(tc, test_everything_a_mixed_burst_holds_leaves_once);
	suite_add_tcase(s, tc);

	tc = tcase_create("tx");
	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, NULL, teardown_pipeline);
	tcase_add_test(tc, test_full_tx_queue_drops_as_tx_full_in_live_mode);
	tcase_add_test(tc, test_full_tx_queue_is_waited_for_in_replay_and_dropped_on_abort);
	tcase_add_test(tc, test_tx_drops_a_packet_for_a_port_it_does_not_serve_as_malformed);
	suite_add_tcase(s, tc);

	tc = tcase_create("routed");
	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, NULL, teardown_pipeline);
	tcase_add_test(tc, test_routed_port_drops_frames_for_another_mac_as_not_ours);
	tcase_add_test(tc, test_routed_transit_goes_to_the_gateway_with_one_hop_less);
	tcase_add_test(tc, test_routed_transit_at_ttl_1_is_dropped_and_answered_time_exceeded);
	tcase_add_test(tc, test_routed_port_keeps_what_is_for_itself_as_to_self);
	tcase_add_test(tc, test_frames_for_the_ports_address_go_to_its_kernel_if);
	tcase_add_test(tc, test_arp_for_the_port_goes_to_the_control_side);
	tcase_add_test(tc, test_a_vip_port_without_a_service_is_not_routed_back_out);
	tcase_add_test(tc, test_shared_local_addr_hands_the_kernel_its_share_and_keeps_the_lbs);
	tcase_add_test(tc, test_shared_local_addr_without_kernel_if_keeps_the_lbs_and_the_rest_is_to_self);
	tcase_add_test(tc, test_shared_pool_addr_hands_the_kernel_its_share_and_keeps_the_lbs);
	tcase_add_test(tc, test_shared_pool_addr_without_kernel_if_keeps_the_lbs_and_the_rest_is_to_self);
	tcase_add_test(tc, test_pool_addr_of_its_own_reaches_the_lb_and_is_not_routed_back);
	suite_add_tcase(s, tc);

	tc = tcase_create("rings");
	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, NULL, teardown_pipeline);
	tcase_add_test(tc, test_pipeline_mode_hands_bursts_on_by_ring_and_tx_sends_them);
	tcase_add_test(tc, test_full_ring_between_stages_drops_as_ring_full_in_live_mode);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	/* lcores 1 and 2 for the planner, on the main lcore's CPU */
	static const char *const eal_args[] = { "-m", "512",
		"--lcores=0,1@0,2@0", "--log-level=pa.*:warning", NULL };
	static Suite *(*const suites[])(void) = { stages_suite, NULL };
	const struct pa_test_main t = {
		.name = "test_stages",
		.suites = suites,
		.eal_args = eal_args,
		.pkt_init = true,
	};

	return pa_test_main_eal(&t);
}
