/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of lib/lb: the Maglev table against a reference written here
 * from the NSDI'16 paper (and its balance, disruption and build time),
 * then the load balancer's data path without a pipeline: frames built
 * from bytes, parsed by lib/pkt, balanced by pa_lb_process() and checked
 * byte for byte (outer headers, rewrites, checksums against a full
 * recomputation), the sticky flow table (backend changes, aging, a full
 * table, fragments), the schedulers, the counters and the control
 * functions' errors, export and trace.
 *
 * One EAL (--no-huge) is started in main() and the suite runs without
 * fork (CK_NOFORK); each test gets a fresh LB from setup_lb() and the
 * checked fixture frees it, so a failing test leaves nothing behind.
 * The LB runs with one data-path lcore (index 0), no RCU and no ports:
 * no MTU check, source MACs are left alone and the destination MAC is the
 * backend's "mac", else the frame's own source MAC.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <netinet/in.h>

#include <check.h>
#include <jansson.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "pa_config.h"
#include "pa_lb.h"
#include "pa_pkt.h"
#include "pa_test_frame.h"
#include "pa_test_main.h"

#include "lb_priv.h"

#define FRAME_MAX	512		/* the largest frame expected back */
#define T0		1000000000ULL	/* the lcore's TSC at the first packet */

#define TCP_FIN		0x01
#define TCP_SYN		0x02
#define TCP_ACK		0x10

#define IP4_DF		0x4000
#define IP4_MF		0x2000

/*
 * Checks in helpers that run per packet. check's ck_assert*() records
 * its location with a write at every call (even when it holds), which
 * costs more than the packet; this only acts when the check fails.
 */
#define REQUIRE(cond) do { \
	if (!(cond)) \
		ck_abort_msg("%s:%d: %s", __FILE__, __LINE__, #cond); \
} while (0)

static struct rte_mempool *pool;
static struct pa_config *cfg;
static struct pa_lb *lb;
static uint64_t hz;
/* more "lb" keys for the next setup_lb() (' for ", each followed by
 * a comma) */
static const char *lb_extra = "";
/* more top-level keys for the next setup_lb() (' for ", each preceded
 * by a comma), e.g. a "protect" section */
static const char *doc_extra = "";

static const uint8_t mac_me[6] = { 0x02, 0, 0, 0, 0, 0x01 };	/* appliance */
static const uint8_t mac_peer[6] = { 0x02, 0, 0, 0, 0, 0xaa };	/* router */
static const uint8_t mac_srv[6] = { 0x02, 0, 0, 0, 0, 0xbb };	/* server side */

/* ------------------------------------------------------------------ */
/* Small helpers                                                       */
/* ------------------------------------------------------------------ */

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint32_t
rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)(rng_state >> 16);
}

/* Network-order IPv4 address of a dotted quad. */
static uint32_t
ip4(const char *s)
{
	struct in_addr a;

	REQUIRE(inet_pton(AF_INET, s, &a) == 1);
	return a.s_addr;
}

static struct pa_ip_addr
addr_of(const char *s)
{
	char why[PA_CONFIG_ERR_MAX];
	struct pa_ip_addr a;

	ck_assert_msg(pa_net_parse_ip(s, &a, why, sizeof(why)) == 0,
		"%s: %s", s, why);
	return a;
}

/* A copy of @p s with ' made into " (JSON without escapes in C). */
static char *
dq(const char *s)
{
	char *d = strdup(s), *p;

	ck_assert_ptr_nonnull(d);
	for (p = d; *p != '\0'; p++)
		if (*p == '\'')
			*p = '"';
	return d;
}

/* ------------------------------------------------------------------ */
/* Checksums, the long way                                             */
/* ------------------------------------------------------------------ */

/* The sums themselves are the frame builder's: pa_test_ip4_csum(),
 * pa_test_l4_csum(). */

/* The folded ones' complement sum (not complemented). */
static uint16_t
fold_sum(uint32_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

/* Write the L4 checksum of the packet at @p l3, computed afresh. */
static void
set_l4_csum(uint8_t *l3)
{
	bool v4 = (l3[0] >> 4) == 4;
	uint8_t proto = v4 ? l3[9] : l3[6];
	uint8_t *l4 = v4 ? l3 + (l3[0] & 0xf) * 4u : l3 + 40;

	pa_test_put16(l4 + (proto == IPPROTO_TCP ? 16 : 6),
		pa_test_l4_csum(l3));
}

/* Make the packet at @p l3 carry correct checksums (IPv4 header; L4
 * unless it is an IPv4 UDP datagram without one). */
static void
fix_csums(uint8_t *l3)
{
	uint8_t *l4;
	unsigned int off;

	if ((l3[0] >> 4) == 4) {
		l4 = l3 + (l3[0] & 0xf) * 4u;
		off = l3[9] == IPPROTO_TCP ? 16 : 6;
		if (!(l3[9] == IPPROTO_UDP && pa_test_get16(l4 + 6) == 0))
			pa_test_put16(l4 + off, pa_test_l4_csum(l3));
		pa_test_put16(l3 + 10, pa_test_ip4_csum(l3));
	} else {
		l4 = l3 + 40;
		off = l3[6] == IPPROTO_TCP ? 16 : 6;
		pa_test_put16(l4 + off, pa_test_l4_csum(l3));
	}
}

/* ------------------------------------------------------------------ */
/* Frames                                                              */
/* ------------------------------------------------------------------ */

/*
 * Frames from the shared builder (pa_test_frame.h), this suite's way:
 * router -> appliance, TTL/hop limit 50, IPv6 flow label 0x12345, TCP
 * with a sequence number from the source port and a window of 8192,
 * payload bytes seed + 7i; frame_fix() fills the lengths and every
 * checksum (not those of fragments: set by hand).
 */

/* Ethernet (router -> appliance), optionally one 802.1Q tag. */
static void
frame_eth(struct pa_test_frame *f, uint16_t vlan, uint16_t etype)
{
	static const uint16_t tpid = RTE_ETHER_TYPE_VLAN;

	pa_test_frame_l2(f, mac_me, mac_peer, vlan != 0 ? 1 : 0, &tpid, vlan,
		etype);
}

static void
frame_ipv4(struct pa_test_frame *f, const char *src, const char *dst,
		uint8_t proto, uint8_t tos, uint16_t frag, uint16_t id)
{
	uint8_t s[4], d[4];

	REQUIRE(inet_pton(AF_INET, src, s) == 1);
	REQUIRE(inet_pton(AF_INET, dst, d) == 1);
	pa_test_frame_ipv4(f, s, d, proto, tos, 5, frag, id, 50);
}

static void
frame_ipv6(struct pa_test_frame *f, const char *src, const char *dst,
		uint8_t nh, uint8_t tc)
{
	uint8_t s[16], d[16];

	REQUIRE(inet_pton(AF_INET6, src, s) == 1);
	REQUIRE(inet_pton(AF_INET6, dst, d) == 1);
	pa_test_frame_ipv6(f, s, d, nh, tc, 0x12345, 50);
}

/* IPv6 fragment header; @p off in 8-byte units. */
static void
frame_frag6(struct pa_test_frame *f, uint8_t nh, uint16_t off, bool more,
		uint32_t ident)
{
	pa_test_frame_frag6(f, nh, off, more, ident);
}

static void
frame_tcp(struct pa_test_frame *f, uint16_t sport, uint16_t dport,
		uint8_t flags)
{
	pa_test_frame_tcp(f, sport, dport, 5, flags, 0x01020304u + sport, 8192);
}

static void
frame_udp(struct pa_test_frame *f, uint16_t sport, uint16_t dport)
{
	pa_test_frame_udp(f, sport, dport);
}

static void
frame_icmp(struct pa_test_frame *f)
{
	pa_test_frame_icmp(f, 0 /* echo reply */, 0x1234);
}

static void
frame_payload(struct pa_test_frame *f, unsigned int n, uint8_t seed)
{
	pa_test_frame_payload(f, n, seed, 7);
}

/* IP and UDP lengths and the checksums (not for fragments). */
static void
frame_fix(struct pa_test_frame *f)
{
	pa_test_frame_fix(f, PA_TEST_FIX_IP4_CSUM | PA_TEST_FIX_L4_CSUM);
}

/* Ethernet padding up to @p total bytes (after frame_fix()). */
static void
frame_pad(struct pa_test_frame *f, uint32_t total)
{
	pa_test_frame_pad(f, total);
}

/* A TCP or UDP packet client -> server, ready. */
static void
frame_l4(struct pa_test_frame *f, const char *src, const char *dst,
		uint8_t proto, uint16_t sport, uint16_t dport, uint8_t flags,
		unsigned int payload)
{
	bool v6 = strchr(src, ':') != NULL;

	frame_eth(f, 0, v6 ? RTE_ETHER_TYPE_IPV6 : RTE_ETHER_TYPE_IPV4);
	if (v6)
		frame_ipv6(f, src, dst, proto, 0);
	else
		frame_ipv4(f, src, dst, proto, 0, IP4_DF, 0);
	if (proto == IPPROTO_TCP)
		frame_tcp(f, sport, dport, flags);
	else
		frame_udp(f, sport, dport);
	frame_payload(f, payload, (uint8_t)sport);
	frame_fix(f);
}

/* An mbuf holding @p f, parsed, to leave on port 0. */
static struct rte_mbuf *
mbuf_of(const struct pa_test_frame *f)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	char *p;

	REQUIRE(m != NULL);
	p = rte_pktmbuf_append(m, (uint16_t)f->len);
	REQUIRE(p != NULL);
	memcpy(p, f->b, f->len);
	REQUIRE(pa_pkt_parse_mbuf(m) == PA_PKT_OK);
	pa_pkt_meta(m)->out_port = 0;
	return m;
}

static uint8_t
process1(struct rte_mbuf *m, uint64_t now)
{
	uint8_t v = 0xee;

	pa_lb_process(lb, 0, &m, 1, now, &v);
	return v;
}

/* The 5-tuple of @p f, as trace_packet would be asked. */
static struct pa_flow_key
key_of(const struct pa_test_frame *f)
{
	struct rte_mbuf *m = mbuf_of(f);
	struct pa_flow_key k;

	REQUIRE(pa_pkt_flow_key(m, pa_pkt_meta(m), &k) == 0);
	rte_pktmbuf_free(m);
	return k;
}

/* Send @p f through an IPv4 ipip service; @return the outer destination
 * (network order). */
static uint32_t
send_ipip4(const struct pa_test_frame *f, uint64_t now)
{
	struct rte_mbuf *m = mbuf_of(f);
	const uint8_t *o;
	uint32_t dst;
	uint8_t v;

	v = process1(m, now);
	REQUIRE(v == PA_LB_V_FORWARD);
	o = rte_pktmbuf_mtod(m, const uint8_t *);
	REQUIRE(rte_pktmbuf_pkt_len(m) == f->len + 20);
	REQUIRE(o[14 + 9] == IPPROTO_IPIP);
	memcpy(&dst, o + 14 + 16, 4);
	rte_pktmbuf_free(m);
	return dst;
}

/* A TCP packet of flow @p i (client 198.51.100.x:port) to web4, sent;
 * @return its backend. */
static uint32_t
web4_flow(unsigned int i, uint8_t flags, uint64_t now)
{
	char src[32];
	struct pa_test_frame f;

	snprintf(src, sizeof(src), "198.51.%u.%u", 100 + i / 200, 1 + i % 200);
	frame_l4(&f, src, "10.0.0.10", IPPROTO_TCP, (uint16_t)(20000 + i),
		80, flags, 10);
	return send_ipip4(&f, now);
}

/* ------------------------------------------------------------------ */
/* LB fixture                                                          */
/* ------------------------------------------------------------------ */

#define DOC_PORTS \
	"'ports': [{'name': 'wan0', 'devargs': 'net_null0'}]"

#define TCP_TMO		300
#define TCP_FIN_TMO	10
#define UDP_TMO		30

/* ipip, maglev, three backends without a MAC. */
#define SVC_WEB4 \
	"{'name': 'web4', 'vip': '10.0.0.10', 'port': 80, 'proto': 'tcp'," \
	" 'forward': 'ipip', 'backends': [{'addr': '10.1.0.1'}," \
	" {'addr': '10.1.0.2'}, {'addr': '10.1.0.3'}]}"

#define SVC_WEB6 \
	"{'name': 'web6', 'vip': '2001:db8:10::10', 'port': 443, 'proto': 'tcp'," \
	" 'forward': 'ipip', 'backends': [{'addr': '2001:db8:1::1'}," \
	" {'addr': '2001:db8:1::2'}]}"

#define SVC_NAT4 \
	"{'name': 'nat4', 'vip': '10.0.0.20', 'port': 80, 'proto': 'tcp'," \
	" 'forward': 'nat', 'backends': [{'addr': '10.2.0.1', 'port': 8080}," \
	" {'addr': '10.2.0.2', 'port': 8080}]}," \
	"{'name': 'nat4u', 'vip': '10.0.0.20', 'port': 53, 'proto': 'udp'," \
	" 'forward': 'nat', 'backends': [{'addr': '10.2.0.1', 'port': 5353}," \
	" {'addr': '10.2.0.2', 'port': 5353}]}"

#define SVC_NAT6 \
	"{'name': 'nat6', 'vip': '2001:db8:20::20', 'port': 80, 'proto': 'tcp'," \
	" 'forward': 'nat', 'backends': [{'addr': '2001:db8:2::1', 'port': 8080}," \
	" {'addr': '2001:db8:2::2', 'port': 8080}]}," \
	"{'name': 'nat6u', 'vip': '2001:db8:20::20', 'port': 53, 'proto': 'udp'," \
	" 'forward': 'nat', 'backends': [{'addr': '2001:db8:2::1', 'port': 5353}," \
	" {'addr': '2001:db8:2::2', 'port': 5353}]}"

static void
teardown_lb(void)
{
	pa_lb_destroy(lb);
	lb = NULL;
	pa_config_free(cfg);
	cfg = NULL;
}

/* A fresh LB with the services @p services (JSON objects, ' for ") and
 * a flow table of @p flows entries. */
static void
setup_lb_flows(const char *services, unsigned int flows,
		unsigned int n_lcores)
{
	char err[PA_CONFIG_ERR_MAX];
	struct pa_lb_opts o;
	size_t len = strlen(services) + strlen(doc_extra) + 1024;
	char *doc = malloc(len), *text;

	teardown_lb();
	ck_assert_ptr_nonnull(doc);
	snprintf(doc, len, "{" DOC_PORTS ", 'lb': {'local_addr': '192.0.2.1',"
		" 'local_addr6': '2001:db8::1', 'flow_table': {'size': %u,"
		" 'tcp_timeout': %u, 'tcp_fin_timeout': %u, 'udp_timeout': %u},"
		"%s 'services': [%s]}%s}", flows, TCP_TMO, TCP_FIN_TMO, UDP_TMO,
		lb_extra, services, doc_extra);
	text = dq(doc);
	free(doc);
	cfg = pa_config_load_string(text, NULL, err, sizeof(err));
	ck_assert_msg(cfg != NULL, "config: %s\n%s", err, text);
	free(text);
	memset(&o, 0, sizeof(o));
	o.rcu = NULL;
	o.n_lcores = n_lcores;
	o.runs_lb = NULL;
	o.socket = 0;
	o.cfg = cfg;
	o.ports = NULL;
	lb = pa_lb_create(&o, err, sizeof(err));
	ck_assert_msg(lb != NULL, "pa_lb_create: %s", err);
}

static void
setup_lb(const char *services)
{
	setup_lb_flows(services, 1024, 1);
}

static json_int_t
lb_stat(const char *name)
{
	json_t *o = pa_lb_stats_json(lb), *v;
	json_int_t x;

	ck_assert_ptr_nonnull(o);
	v = json_object_get(o, name);
	ck_assert_msg(json_is_integer(v), "stats has no integer '%s'", name);
	x = json_integer_value(v);
	json_decref(o);
	return x;
}

/* One backend's counters from lb_service_list. */
struct be_count {
	json_int_t flows, packets, bytes;
	char state[16];
};

static struct be_count
be_count(const char *service, const char *addr)
{
	json_t *arr = pa_lb_services_json(lb), *s, *b;
	struct be_count c;
	size_t i, j;
	bool found = false;

	memset(&c, 0, sizeof(c));
	ck_assert_ptr_nonnull(arr);
	json_array_foreach(arr, i, s) {
		if (strcmp(json_string_value(json_object_get(s, "name")),
				service) != 0)
			continue;
		json_array_foreach(json_object_get(s, "backends"), j, b) {
			if (strcmp(json_string_value(json_object_get(b,
					"addr")), addr) != 0)
				continue;
			c.flows = json_integer_value(json_object_get(b, "flows"));
			c.packets = json_integer_value(json_object_get(b,
				"packets"));
			c.bytes = json_integer_value(json_object_get(b, "bytes"));
			snprintf(c.state, sizeof(c.state), "%s",
				json_string_value(json_object_get(b, "state")));
			found = true;
		}
	}
	json_decref(arr);
	ck_assert_msg(found, "no backend %s in service %s", addr, service);
	return c;
}

/* Age: enough idle polls to sweep the whole table once. */
static void
sweep(uint64_t now)
{
	unsigned int i;

	for (i = 0; i < 4; i++)
		pa_lb_poll(lb, 0, now, true);
}

/* A service from its JSON text (' for "). */
static void
service_of(const char *text, struct pa_config_service *svc)
{
	char err[PA_CONFIG_ERR_MAX], *t = dq(text);
	json_error_t je;
	json_t *o = json_loads(t, 0, &je);

	ck_assert_msg(o != NULL, "%s: %s", t, je.text);
	ck_assert_msg(pa_lb_config_parse_service(o, &cfg->lb, "$", svc, err,
		sizeof(err)) == 0, "%s", err);
	json_decref(o);
	free(t);
}

/* A backend of service @p name from its JSON text. */
static void
backend_of(const char *name, const char *text, struct pa_config_backend *be)
{
	char err[PA_CONFIG_ERR_MAX], *t = dq(text);
	struct pa_config_service svc;
	json_error_t je;
	json_t *o = json_loads(t, 0, &je);

	ck_assert_msg(o != NULL, "%s: %s", t, je.text);
	memset(&svc, 0, sizeof(svc));
	ck_assert_int_eq(pa_lb_service_get(lb, name, &svc), 0);
	ck_assert_msg(pa_lb_config_parse_backend(o, &svc, "$", be, err,
		sizeof(err)) == 0, "%s", err);
	pa_lb_config_service_clear(&svc);
	json_decref(o);
	free(t);
}

static int
add_backend(const char *name, const char *text)
{
	char err[PA_CONFIG_ERR_MAX];
	struct pa_config_backend be;

	backend_of(name, text, &be);
	return pa_lb_backend_add(lb, name, &be, err, sizeof(err));
}

static int
set_state(const char *name, const char *addr, enum pa_lb_state st)
{
	char err[PA_CONFIG_ERR_MAX];
	struct pa_ip_addr a = addr_of(addr);

	return pa_lb_backend_set(lb, name, &a, NULL, &st, err, sizeof(err));
}

static int
set_weight(const char *name, const char *addr, uint32_t w)
{
	char err[PA_CONFIG_ERR_MAX];
	struct pa_ip_addr a = addr_of(addr);

	return pa_lb_backend_set(lb, name, &a, &w, NULL, err, sizeof(err));
}

static int
delete_backend(const char *name, const char *addr)
{
	char err[PA_CONFIG_ERR_MAX];
	struct pa_ip_addr a = addr_of(addr);

	return pa_lb_backend_delete(lb, name, &a, err, sizeof(err));
}

/* ------------------------------------------------------------------ */
/* Maglev: the reference                                               */
/* ------------------------------------------------------------------ */

static const struct pa_lb_maglev_backend *ref_base;

static int
ref_cmp(const void *a, const void *b)
{
	const struct pa_lb_maglev_backend *x = &ref_base[*(const unsigned int *)a];
	const struct pa_lb_maglev_backend *y = &ref_base[*(const unsigned int *)b];
	int c;

	if (x->key_len != y->key_len)
		return x->key_len < y->key_len ? -1 : 1;
	c = memcmp(x->key, y->key, x->key_len);
	if (c != 0)
		return c;
	return *(const unsigned int *)a < *(const unsigned int *)b ? -1 : 1;
}

/*
 * NSDI'16 section 3.4, Figure 3's population loop, written plainly:
 * permutation[i][j] = (offset_i + j * skip_i) mod M; each round, backend
 * i (in the order of its key) adds weight_i to its credit and, for every
 * whole max_weight in it, takes the next free entry of its permutation.
 */
static void
ref_maglev(const struct pa_lb_maglev_backend *be, unsigned int n, uint32_t m,
		uint16_t *table)
{
	unsigned int *order = calloc(n, sizeof(*order));
	uint64_t *offset = calloc(n, sizeof(*offset));
	uint64_t *skip = calloc(n, sizeof(*skip));
	uint64_t *next = calloc(n, sizeof(*next));
	uint64_t *acc = calloc(n, sizeof(*acc));
	uint32_t wmax = 0, filled = 0, r;
	uint64_t c;
	unsigned int i, k;

	ck_assert(order && offset && skip && next && acc);
	for (i = 0; i < n; i++) {
		order[i] = i;
		offset[i] = pa_lb_maglev_hash(be[i].key, be[i].key_len, 0) % m;
		skip[i] = pa_lb_maglev_hash(be[i].key, be[i].key_len, 1) %
			(m - 1) + 1;
		if (be[i].weight > wmax)
			wmax = be[i].weight;
	}
	ref_base = be;
	qsort(order, n, sizeof(*order), ref_cmp);
	for (r = 0; r < m; r++)
		table[r] = UINT16_MAX;
	for (;;) {
		for (k = 0; k < n; k++) {
			i = order[k];
			acc[i] += be[i].weight;
			while (acc[i] >= wmax) {
				acc[i] -= wmax;
				do {
					c = (offset[i] + next[i] * skip[i]) % m;
					next[i]++;
				} while (table[c] != UINT16_MAX);
				table[c] = (uint16_t)i;
				if (++filled == m)
					goto out;
			}
		}
	}
out:
	free(order);
	free(offset);
	free(skip);
	free(next);
	free(acc);
}

/* A set of Maglev backends with their own key storage. */
struct mg_set {
	unsigned int n;
	uint8_t keys[1000][16];
	struct pa_lb_maglev_backend be[1000];
};

/* n IPv4 (10.<i>) or IPv6 (2001:db8::<i>) backends, weights from @p w
 * (NULL: all 1). */
static struct mg_set *
mg_set_make(unsigned int n, bool v6, const uint32_t *w)
{
	struct mg_set *s = calloc(1, sizeof(*s));
	unsigned int i;

	ck_assert_ptr_nonnull(s);
	ck_assert_uint_le(n, RTE_DIM(s->be));
	s->n = n;
	for (i = 0; i < n; i++) {
		if (v6) {
			s->keys[i][0] = 0x20;
			s->keys[i][1] = 0x01;
			s->keys[i][2] = 0x0d;
			s->keys[i][3] = 0xb8;
			s->keys[i][14] = (uint8_t)(i >> 8);
			s->keys[i][15] = (uint8_t)(i + 1);
		} else {
			s->keys[i][0] = 10;
			s->keys[i][1] = (uint8_t)(i >> 16);
			s->keys[i][2] = (uint8_t)(i >> 8);
			s->keys[i][3] = (uint8_t)(i + 1);
		}
		s->be[i].key = s->keys[i];
		s->be[i].key_len = v6 ? 16 : 4;
		s->be[i].weight = w != NULL ? w[i] : 1;
	}
	return s;
}

static uint16_t *
mg_build(const struct pa_lb_maglev_backend *be, unsigned int n, uint32_t m)
{
	uint16_t *t = malloc((size_t)m * sizeof(*t));
	void *scratch = malloc(pa_lb_maglev_scratch_size(n));

	ck_assert(t != NULL && scratch != NULL);
	ck_assert_int_eq(pa_lb_maglev_build(be, n, m, t, scratch), 0);
	free(scratch);
	return t;
}

static void
mg_assert_matches_reference(const struct mg_set *s, uint32_t m)
{
	uint16_t *t = mg_build(s->be, s->n, m);
	uint16_t *r = malloc((size_t)m * sizeof(*r));
	uint32_t i;

	ck_assert_ptr_nonnull(r);
	ref_maglev(s->be, s->n, m, r);
	for (i = 0; i < m; i++)
		if (t[i] != r[i])
			ck_abort_msg("N=%u M=%u: entry %u is backend %u, the reference says %u",
				s->n, m, i, t[i], r[i]);
	free(t);
	free(r);
}

/* ------------------------------------------------------------------ */
/* Maglev tests                                                        */
/* ------------------------------------------------------------------ */

START_TEST(test_maglev_equal_weights_match_the_nsdi_reference)
{
	static const unsigned int ns[] = { 1, 3, 10, 100 };
	static const uint32_t ms[] = { 1021, 65537 };
	unsigned int i, j;

	for (i = 0; i < RTE_DIM(ns); i++)
		for (j = 0; j < RTE_DIM(ms); j++) {
			struct mg_set *s = mg_set_make(ns[i], false, NULL);

			mg_assert_matches_reference(s, ms[j]);
			free(s);
		}
}
END_TEST

START_TEST(test_maglev_mixed_weights_match_the_katran_style_reference)
{
	uint32_t w[100];
	unsigned int i;
	struct mg_set *s;

	for (i = 0; i < RTE_DIM(w); i++)
		w[i] = 1 + rng() % 100;
	s = mg_set_make(3, false, (const uint32_t[]){ 1, 5, 2 });
	mg_assert_matches_reference(s, 1021);
	mg_assert_matches_reference(s, 65537);
	free(s);
	s = mg_set_make(100, false, w);
	mg_assert_matches_reference(s, 1021);
	mg_assert_matches_reference(s, 65537);
	free(s);
	s = mg_set_make(1, false, (const uint32_t[]){ 7 });
	mg_assert_matches_reference(s, 1021);
	free(s);
}
END_TEST

START_TEST(test_maglev_ipv6_keys_match_the_reference)
{
	uint32_t w[100];
	unsigned int i;
	struct mg_set *s;

	for (i = 0; i < RTE_DIM(w); i++)
		w[i] = 1 + i % 4;
	s = mg_set_make(3, true, NULL);
	mg_assert_matches_reference(s, 65537);
	free(s);
	s = mg_set_make(100, true, w);
	mg_assert_matches_reference(s, 65537);
	mg_assert_matches_reference(s, 1021);
	free(s);
}
END_TEST

START_TEST(test_maglev_table_does_not_depend_on_input_order)
{
	struct mg_set *s = mg_set_make(100, false, NULL), *sh;
	unsigned int perm[100], i, j, round;
	uint16_t *a, *b;
	const uint32_t m = 65537;

	for (i = 0; i < s->n; i++)
		s->be[i].weight = 1 + i % 7;
	a = mg_build(s->be, s->n, m);
	for (round = 0; round < 3; round++) {
		sh = calloc(1, sizeof(*sh));
		ck_assert_ptr_nonnull(sh);
		for (i = 0; i < s->n; i++)
			perm[i] = i;
		for (i = s->n - 1; i > 0; i--) {
			unsigned int t, k = rng() % (i + 1);

			t = perm[i];
			perm[i] = perm[k];
			perm[k] = t;
		}
		sh->n = s->n;
		for (i = 0; i < s->n; i++)
			sh->be[i] = s->be[perm[i]];	/* keys stay in s */
		b = mg_build(sh->be, sh->n, m);
		for (j = 0; j < m; j++)
			ck_assert_msg(perm[b[j]] == a[j],
				"entry %u: backend %u shuffled, %u in order",
				j, perm[b[j]], a[j]);
		free(b);
		free(sh);
	}
	free(a);
	free(s);
}
END_TEST

/* Worst |share - expected| / expected over the backends. */
static double
mg_balance(const struct mg_set *s, uint32_t m)
{
	uint16_t *t = mg_build(s->be, s->n, m);
	uint64_t cnt[1000] = { 0 }, wsum = 0;
	double worst = 0, exp, dev;
	unsigned int i;

	for (i = 0; i < m; i++)
		cnt[t[i]]++;
	for (i = 0; i < s->n; i++)
		wsum += s->be[i].weight;
	for (i = 0; i < s->n; i++) {
		exp = (double)m * s->be[i].weight / (double)wsum;
		dev = (double)cnt[i] > exp ? (double)cnt[i] - exp :
			exp - (double)cnt[i];
		ck_assert_msg(dev <= 0.01 * exp + 1.0,
			"backend %u weight %u: %" PRIu64 " entries, %.1f expected",
			i, s->be[i].weight, cnt[i], exp);
		if (dev / exp > worst)
			worst = dev / exp;
	}
	free(t);
	return worst;
}

START_TEST(test_maglev_shares_follow_weights_within_one_percent)
{
	uint32_t w[10];
	unsigned int i;
	struct mg_set *s;
	double d1, d2, d3;

	for (i = 0; i < 10; i++)
		w[i] = i + 1;
	s = mg_set_make(10, false, w);
	d1 = mg_balance(s, 65537);
	free(s);
	s = mg_set_make(100, false, NULL);
	d2 = mg_balance(s, 65537);
	free(s);
	s = mg_set_make(100, true, NULL);
	d3 = mg_balance(s, 65537);
	free(s);
	printf("maglev balance M=65537: worst deviation %.3f%% (weights 1..10, N=10), %.3f%% (N=100 equal), %.3f%% (N=100 IPv6)\n",
		d1 * 100, d2 * 100, d3 * 100);
}
END_TEST

/* Share of the entries of the backends that stay which move when
 * backend @p gone of @p n is removed. */
static double
mg_disruption(unsigned int n, unsigned int gone)
{
	struct mg_set *s = mg_set_make(n, false, NULL), *r;
	const uint32_t m = 65537;
	uint16_t *a, *b;
	unsigned int i, k = 0;
	uint64_t others = 0, moved = 0;
	unsigned int map[1000];

	r = calloc(1, sizeof(*r));
	ck_assert_ptr_nonnull(r);
	for (i = 0; i < n; i++) {
		if (i == gone)
			continue;
		r->be[k] = s->be[i];
		map[k++] = i;
	}
	r->n = k;
	a = mg_build(s->be, n, m);
	b = mg_build(r->be, r->n, m);
	for (i = 0; i < m; i++) {
		if (a[i] == gone)
			continue;
		others++;
		if (map[b[i]] != a[i])
			moved++;
	}
	free(a);
	free(b);
	free(r);
	free(s);
	return (double)moved / (double)others;
}

START_TEST(test_maglev_removing_one_backend_moves_under_two_percent_of_the_others)
{
	double d10 = 0, d100 = 0, x;
	unsigned int g;

	for (g = 0; g < 10; g += 3) {
		x = mg_disruption(10, g);
		ck_assert_msg(x < 0.02, "N=10 without %u: %.3f%% moved", g,
			x * 100);
		d10 = RTE_MAX(d10, x);
	}
	for (g = 0; g < 100; g += 33) {
		x = mg_disruption(100, g);
		ck_assert_msg(x < 0.02, "N=100 without %u: %.3f%% moved", g,
			x * 100);
		d100 = RTE_MAX(d100, x);
	}
	printf("maglev disruption M=65537, one backend removed: %.3f%% of the other backends' entries moved (N=10), %.3f%% (N=100) (worst of 4 choices)\n",
		d10 * 100, d100 * 100);
}
END_TEST

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

START_TEST(test_maglev_build_time_is_measured_for_10_100_1000_backends)
{
	static const unsigned int ns[] = { 10, 100, 1000 };
	const uint32_t m = 65537;
	unsigned int i;

	for (i = 0; i < RTE_DIM(ns); i++) {
		struct mg_set *s = mg_set_make(ns[i], false, NULL);
		uint16_t *t = malloc(m * sizeof(*t));
		void *scratch = malloc(pa_lb_maglev_scratch_size(ns[i]));
		double t0, t1;

		ck_assert(t != NULL && scratch != NULL);
		t0 = now_ms();
		ck_assert_int_eq(pa_lb_maglev_build(s->be, s->n, m, t,
			scratch), 0);
		t1 = now_ms();
		printf("maglev build N=%u M=%u: %.2f ms\n", ns[i], m, t1 - t0);
		free(t);
		free(scratch);
		free(s);
	}
}
END_TEST

START_TEST(test_maglev_build_rejects_no_backends_too_many_and_zero_weight)
{
	struct mg_set *s = mg_set_make(5, false, NULL);
	uint16_t t[1021];
	uint8_t scratch[4096];

	ck_assert_uint_le(pa_lb_maglev_scratch_size(5), sizeof(scratch));
	ck_assert_int_eq(pa_lb_maglev_build(s->be, 0, 1021, t, scratch),
		-EINVAL);
	ck_assert_int_eq(pa_lb_maglev_build(s->be, 5, 3, t, scratch), -EINVAL);
	s->be[2].weight = 0;
	ck_assert_int_eq(pa_lb_maglev_build(s->be, 5, 1021, t, scratch),
		-EINVAL);
	s->be[2].weight = 1;
	ck_assert_int_eq(pa_lb_maglev_build(s->be, 5, 5, t, scratch), 0);
	free(s);
}
END_TEST

START_TEST(test_maglev_hash_seeds_differ_and_are_stable)
{
	const uint8_t k[4] = { 10, 0, 0, 1 };

	ck_assert(pa_lb_maglev_hash(k, 4, 0) != pa_lb_maglev_hash(k, 4, 1));
	ck_assert(pa_lb_maglev_hash(k, 4, 0) == pa_lb_maglev_hash(k, 4, 0));
	ck_assert(pa_lb_maglev_hash(k, 4, 0) != pa_lb_maglev_hash(k, 3, 0));
}
END_TEST

/* ------------------------------------------------------------------ */
/* ipip                                                                */
/* ------------------------------------------------------------------ */

static bool
is_web4_backend(uint32_t a)
{
	return a == ip4("10.1.0.1") || a == ip4("10.1.0.2") ||
		a == ip4("10.1.0.3");
}

/* Check an outer IPv4 header at @p o for inner packet @p in_len bytes. */
static void
check_outer4(const uint8_t *o, const uint8_t *inner, uint32_t in_len)
{
	uint32_t src, dst;

	ck_assert_uint_eq(o[0], 0x45);
	ck_assert_uint_eq(o[1], inner[1]);			/* tos */
	ck_assert_uint_eq(pa_test_get16(o + 2), in_len + 20);
	ck_assert_uint_eq(pa_test_get16(o + 6) & IP4_DF,
		pa_test_get16(inner + 6) & IP4_DF);
	ck_assert_uint_eq(pa_test_get16(o + 6) & 0xbfff, 0);		/* MF, offset */
	if (pa_test_get16(inner + 6) & IP4_DF)
		ck_assert_uint_eq(pa_test_get16(o + 4), 0);
	ck_assert_uint_eq(o[8], 64);
	ck_assert_uint_eq(o[9], IPPROTO_IPIP);
	ck_assert_uint_eq(pa_test_get16(o + 10), pa_test_ip4_csum(o));
	memcpy(&src, o + 12, 4);
	memcpy(&dst, o + 16, 4);
	ck_assert_uint_eq(src, ip4("192.0.2.1"));
	ck_assert_msg(is_web4_backend(dst), "outer dst is no backend");
}

START_TEST(test_ipip4_prepends_outer_ipv4_and_keeps_the_inner_packet_byte_identical)
{
	static const uint16_t frags[] = { IP4_DF, 0 };
	unsigned int i;

	setup_lb(SVC_WEB4);
	for (i = 0; i < RTE_DIM(frags); i++) {
		struct rte_mbuf *m;
		struct pa_test_frame f;
		const uint8_t *o;

		frame_eth(&f, 0, RTE_ETHER_TYPE_IPV4);
		frame_ipv4(&f, "198.51.100.7", "10.0.0.10", IPPROTO_TCP, 0xb9,
			frags[i], 0x1234);
		frame_tcp(&f, (uint16_t)(40000 + i), 80, TCP_SYN);
		frame_payload(&f, 33, 1);
		frame_fix(&f);
		m = mbuf_of(&f);
		ck_assert_uint_eq(process1(m, T0), PA_LB_V_FORWARD);
		o = rte_pktmbuf_mtod(m, const uint8_t *);
		ck_assert_uint_eq(rte_pktmbuf_pkt_len(m), f.len + 20);
		ck_assert_uint_eq(rte_pktmbuf_data_len(m), f.len + 20);
		/* next hop: the router it came from; our MAC left alone */
		ck_assert(memcmp(o, mac_peer, 6) == 0);
		ck_assert(memcmp(o + 6, mac_peer, 6) == 0);
		ck_assert_uint_eq(pa_test_get16(o + 12), RTE_ETHER_TYPE_IPV4);
		check_outer4(o + 14, f.b + 14, f.len - 14);
		ck_assert(memcmp(o + 34, f.b + 14, f.len - 14) == 0);
		rte_pktmbuf_free(m);
	}
}
END_TEST

START_TEST(test_ipip4_addresses_the_frame_to_the_backend_mac_when_it_has_one)
{
	static const uint8_t be_mac[6] = { 0x02, 0, 0, 0, 0xbe, 0x01 };
	struct rte_mbuf *m;
	struct pa_test_frame f;
	const uint8_t *o;

	setup_lb("{'name': 'm4', 'vip': '10.0.0.11', 'port': 80, 'proto': 'tcp',"
		" 'forward': 'ipip', 'backends': [{'addr': '10.1.0.1',"
		" 'mac': '02:00:00:00:be:01'}]}");
	frame_l4(&f, "198.51.100.7", "10.0.0.11", IPPROTO_TCP, 1234, 80,
		TCP_SYN, 0);
	m = mbuf_of(&f);
	ck_assert_uint_eq(process1(m, T0), PA_LB_V_FORWARD);
	o = rte_pktmbuf_mtod(m, const uint8_t *);
	ck_assert(memcmp(o, be_mac, 6) == 0);
	ck_assert(memcmp(o + 6, mac_peer, 6) == 0);
	ck_assert(memcmp(o + 34, f.b + 14, f.len - 14) == 0);
	rte_pktmbuf_free(m);
}
END_TEST

/* A dual-stack port's "gateway" has one next hop per family: a packet
 * leaves towards its own family's (ipip v4 in v4, v6 in v6; transit). */
START_TEST(test_gateway_next_hop_is_chosen_by_family)
{
	static const uint8_t gw4[6] = { 0x02, 0, 0, 0, 0x44, 0x04 };
	static const uint8_t gw6[6] = { 0x02, 0, 0, 0, 0x66, 0x06 };
	struct rte_ether_hdr eth;
	struct rte_mbuf *m;
	struct pa_test_frame f;

	setup_lb(SVC_WEB4 "," SVC_WEB6);
	pa_lb_gateway_set(lb, 0, AF_INET, gw4, true);
	pa_lb_gateway_set(lb, 0, AF_INET6, gw6, true);
	frame_l4(&f, "198.51.100.7", "10.0.0.10", IPPROTO_TCP, 1234, 80,
		TCP_SYN, 0);
	m = mbuf_of(&f);
	ck_assert_uint_eq(process1(m, T0), PA_LB_V_FORWARD);
	ck_assert(memcmp(rte_pktmbuf_mtod(m, const uint8_t *), gw4, 6) == 0);
	rte_pktmbuf_free(m);
	frame_eth(&f, 0, RTE_ETHER_TYPE_IPV6);
	frame_ipv6(&f, "2001:db8:99::7", "2001:db8:10::10", IPPROTO_TCP, 0);
	frame_tcp(&f, 5555, 443, TCP_SYN);
	frame_fix(&f);
	m = mbuf_of(&f);
	ck_assert_uint_eq(process1(m, T0), PA_LB_V_FORWARD);
	ck_assert(memcmp(rte_pktmbuf_mtod(m, const uint8_t *), gw6, 6) == 0);
	rte_pktmbuf_free(m);
	/* transit */
	memset(&eth, 0, sizeof(eth));
	ck_assert_int_eq(pa_lb_route_macs(lb, &eth, 0, false), 0);
	ck_assert(memcmp(&eth.dst_addr, gw4, 6) == 0);
	ck_assert_int_eq(pa_lb_route_macs(lb, &eth, 0, true), 0);
	ck_assert(memcmp(&eth.dst_addr, gw6, 6) == 0);
	/* one family unresolved: only that family has no route */
	pa_lb_gateway_set(lb, 0, AF_INET6, NULL, true);
	ck_assert_int_eq(pa_lb_route_macs(lb, &eth, 0, true), -EHOSTUNREACH);
	ck_assert_int_eq(pa_lb_route_macs(lb, &eth, 0, false), 0);
	ck_assert(memcmp(&eth.dst_addr, gw4, 6) == 0);
}
END_TEST

START_TEST(test_ipip4_trims_ethernet_padding_after_the_inner_packet)
{
	struct rte_mbuf *m;
	struct pa_test_frame f;
	const uint8_t *o;
	uint32_t ilen;

	setup_lb("{'name': 'dns4', 'vip': '10.0.0.40', 'port': 53, 'proto': 'udp',"
		" 'forward': 'ipip', 'backends': [{'addr': '10.1.0.1'}]}");
	frame_l4(&f, "198.51.100.7", "10.0.0.40", IPPROTO_UDP, 1234, 53, 0, 2);
	ilen = f.len - 14;			/* 30 bytes of IP */
	frame_pad(&f, 60);
	m = mbuf_of(&f);
	ck_assert_uint_eq(process1(m, T0), PA_LB_V_FORWARD);
	o = rte_pktmbuf_mtod(m, const uint8_t *);
	ck_assert_uint_eq(rte_pktmbuf_pkt_len(m), 14 + 20 + ilen);
	ck_assert_uint_eq(pa_test_get16(o + 14 + 2), 20 + ilen);
	ck_assert(memcmp(o + 34, f.b + 14, ilen) == 0);
	rte_pktmbuf_free(m);
}
END_TEST

START_TEST(test_ipip4_keeps_the_vlan_tag_in_front_of_the_outer_header)
{
	struct rte_mbuf *m;
	struct pa_test_frame f;
	const uint8_t *o;

	setup_lb(SVC_WEB4);
	frame_eth(&f, 100, RTE_ETHER_TYPE_IPV4);
	frame_ipv4(&f, "198.51.100.7", "10.0.0.10", IPPROTO_TCP, 0x10, IP4_DF,
		0);
	frame_tcp(&f, 4321, 80, TCP_SYN);
	frame_payload(&f, 12, 9);
	frame_fix(&f);
	m = mbuf_of(&f);
	ck_assert_uint_eq(pa_pkt_meta(m)->l3_off, 18);
	ck_assert_uint_eq(process1(m, T0), PA_LB_V_FORWARD);
	o = rte_pktmbuf_mtod(m, const uint8_t *);
	ck_assert_uint_eq(rte_pktmbuf_pkt_len(m), f.len + 20);
	ck_assert(memcmp(o, mac_peer, 6) == 0);
	ck_assert(memcmp(o + 12, f.b + 12, 6) == 0);	/* tag, ethertype */
	check_outer4(o + 18, f.b + 18, f.len - 18);
	ck_assert(memcmp(o + 38, f.b + 18, f.len - 18) == 0);
	rte_pktmbuf_free(m);
}
END_TEST

START_TEST(test_ipip6_prepends_outer_ipv6_with_next_header_41_and_keeps_the_inner_packet)
{
	struct in6_addr local, b1, b2;
	struct rte_mbuf *m;
	struct pa_test_frame f;
	const uint8_t *o;
	uint32_t w;

	setup_lb(SVC_WEB6);
	inet_pton(AF_INET6, "2001:db8::1", &local);
	inet_pton(AF_INET6, "2001:db8:1::1", &b1);
	inet_pton(AF_INET6, "2001:db8:1::2", &b2);
	frame_eth(&f, 0, RTE_ETHER_TYPE_IPV6);
	frame_ipv6(&f, "2001:db8:99::7", "2001:db8:10::10", IPPROTO_TCP, 0xb8);
	frame_tcp(&f, 5555, 443, TCP_SYN);
	frame_payload(&f, 21, 3);
	frame_fix(&f);
	m = mbuf_of(&f);
	ck_assert_uint_eq(process1(m, T0), PA_LB_V_FORWARD);
	o = rte_pktmbuf_mtod(m, const uint8_t *);
	ck_assert_uint_eq(rte_pktmbuf_pkt_len(m), f.len + 40);
	ck_assert(memcmp(o, mac_peer, 6) == 0);
	ck_assert(memcmp(o + 6, mac_peer, 6) == 0);
	ck_assert_uint_eq(pa_test_get16(o + 12), RTE_ETHER_TYPE_IPV6);
	w = (uint32_t)pa_test_get16(o + 14) << 16 | pa_test_get16(o + 16);
	ck_assert_uint_eq(w >> 28, 6);
	ck_assert_uint_eq((w >> 20) & 0xff, 0xb8);
	ck_assert_uint_eq(pa_test_get16(o + 18), f.len - 14);
	ck_assert_uint_eq(o[20], IPPROTO_IPV6);
	ck_assert_uint_eq(o[21], 64);
	ck_assert(memcmp(o + 22, &local, 16) == 0);
	ck_assert(memcmp(o + 38, &b1, 16) == 0 || memcmp(o + 38, &b2, 16) == 0);
	ck_assert(memcmp(o + 54, f.b + 14, f.len - 14) == 0);
	rte_pktmbuf_free(m);
}
END_TEST

/* ------------------------------------------------------------------ */
/* nat                                                                 */
/* ------------------------------------------------------------------ */

/* What nat should make of client packet @p f going to backend address
 * @p be (4 or 16 bytes as in the header) port @p bport: the destination
 * rewritten, checksums recomputed in full, the frame addressed back to
 * the router. */
static void
nat_expect(const struct pa_test_frame *f, const uint8_t *be, uint16_t bport,
		uint8_t *out)
{
	uint8_t *l3 = out + f->l3, *l4 = out + f->l4;

	memcpy(out, f->b, f->len);
	memcpy(out, mac_peer, 6);
	if (f->ver == 4)
		memcpy(l3 + 16, be, 4);
	else
		memcpy(l3 + 24, be, 16);
	pa_test_put16(l4 + 2, bport);
	fix_csums(l3);
}

/* Send client packet @p f to a nat service; the output must be
 * nat_expect() of it for one of its backends (@p bes, @p n_be); @return
 * which. */
static unsigned int
check_nat(const struct pa_test_frame *f, const char *const *bes,
		unsigned int n_be, uint16_t bport)
{
	uint8_t exp[FRAME_MAX], a[16];
	struct rte_mbuf *m = mbuf_of(f);
	const uint8_t *o;
	unsigned int i;
	int fam = f->ver == 4 ? AF_INET : AF_INET6;

	REQUIRE(process1(m, T0) == PA_LB_V_FORWARD);
	o = rte_pktmbuf_mtod(m, const uint8_t *);
	REQUIRE(rte_pktmbuf_pkt_len(m) == f->len);
	for (i = 0; i < n_be; i++) {
		REQUIRE(inet_pton(fam, bes[i], a) == 1);
		if (memcmp(o + f->l3 + (f->ver == 4 ? 16 : 24), a,
				f->ver == 4 ? 4 : 16) == 0)
			break;
	}
	if (i == n_be)
		ck_abort_msg("destination is no backend");
	nat_expect(f, a, bport, exp);
	if (memcmp(o, exp, f->len) != 0) {
		unsigned int k;

		for (k = 0; k < f->len && o[k] == exp[k]; k++)
			;
		ck_abort_msg("nat output differs from the expected frame at byte %u (0x%02x, expected 0x%02x; l3 %d l4 %d)",
			k, o[k], exp[k], f->l3, f->l4);
	}
	rte_pktmbuf_free(m);
	return i;
}

static const char *const nat4_bes[] = { "10.2.0.1", "10.2.0.2" };
static const char *const nat6_bes[] = { "2001:db8:2::1", "2001:db8:2::2" };

START_TEST(test_nat4_tcp_rewrites_destination_and_checksums_equal_full_recomputation)
{
	struct pa_test_frame f;

	setup_lb(SVC_NAT4);
	frame_l4(&f, "198.51.100.7", "10.0.0.20", IPPROTO_TCP, 40000, 80,
		TCP_SYN, 17);
	check_nat(&f, nat4_bes, 2, 8080);
}
END_TEST

START_TEST(test_nat4_udp_rewrites_destination_and_checksums_equal_full_recomputation)
{
	struct pa_test_frame f;

	setup_lb(SVC_NAT4);
	frame_l4(&f, "198.51.100.7", "10.0.0.20", IPPROTO_UDP, 40000, 53, 0,
		17);
	check_nat(&f, nat4_bes, 2, 5353);
}
END_TEST

START_TEST(test_nat4_udp_without_checksum_stays_without)
{
	struct pa_test_frame f;

	setup_lb(SVC_NAT4);
	frame_eth(&f, 0, RTE_ETHER_TYPE_IPV4);
	frame_ipv4(&f, "198.51.100.7", "10.0.0.20", IPPROTO_UDP, 0, 0, 7);
	frame_udp(&f, 40001, 53);
	frame_payload(&f, 20, 5);
	f.udp_no_csum = true;
	frame_fix(&f);
	ck_assert_uint_eq(pa_test_get16(f.b + f.l4 + 6), 0);
	check_nat(&f, nat4_bes, 2, 5353);	/* expects checksum 0 */
}
END_TEST

START_TEST(test_nat6_tcp_and_udp_rewrite_destination_and_checksums_equal_full_recomputation)
{
	struct pa_test_frame f;

	setup_lb(SVC_NAT6);
	frame_l4(&f, "2001:db8:99::7", "2001:db8:20::20", IPPROTO_TCP, 40000,
		80, TCP_SYN, 17);
	check_nat(&f, nat6_bes, 2, 8080);
	frame_l4(&f, "2001:db8:99::7", "2001:db8:20::20", IPPROTO_UDP, 40000,
		53, 0, 17);
	check_nat(&f, nat6_bes, 2, 5353);
}
END_TEST

/* Choose the payload word at @p woff (from the L4 header) so that the
 * packet's L4 checksum comes out as @p want (when a correct checksum can
 * have that value), and write the checksum. */
static void
force_l4_csum(uint8_t *l3, unsigned int woff, uint16_t want)
{
	bool v4 = (l3[0] >> 4) == 4;
	uint8_t *l4 = v4 ? l3 + (l3[0] & 0xf) * 4u : l3 + 40;
	uint16_t s0;

	pa_test_put16(l4 + woff, 0);
	set_l4_csum(l3);
	s0 = (uint16_t)~pa_test_get16(l4 + ((v4 ? l3[9] : l3[6]) == IPPROTO_TCP ?
		16 : 6));
	/* the sum must become ~want: add ~want - s0 */
	pa_test_put16(l4 + woff, fold_sum((uint32_t)(uint16_t)~want +
		(uint16_t)~s0));
	set_l4_csum(l3);
}

START_TEST(test_nat_checksums_are_exact_whatever_the_original_checksum)
{
	static const struct {
		const char *src, *vip;
		uint8_t proto;
		uint16_t port, bport;
		const char *const *bes;
	} c[] = {
		{ "198.51.100.7", "10.0.0.20", IPPROTO_TCP, 80, 8080, nat4_bes },
		{ "198.51.100.7", "10.0.0.20", IPPROTO_UDP, 53, 5353, nat4_bes },
		{ "2001:db8:99::7", "2001:db8:20::20", IPPROTO_TCP, 80, 8080,
			nat6_bes },
		{ "2001:db8:99::7", "2001:db8:20::20", IPPROTO_UDP, 53, 5353,
			nat6_bes },
	};
	unsigned int i;
	uint32_t want;

	setup_lb(SVC_NAT4 "," SVC_NAT6);
	for (i = 0; i < RTE_DIM(c); i++) {
		/* every value, one flow per case (the table does not
		 * grow): where the carries of an incremental update wrap
		 * depends on the addresses, so no sample would do */
		for (want = 0; want <= 0xffff; want++) {
			struct pa_test_frame f;

			frame_l4(&f, c[i].src, c[i].vip, c[i].proto, 40000,
				c[i].port, TCP_ACK, 8);
			force_l4_csum(f.b + f.l3,
				c[i].proto == IPPROTO_TCP ? 20 : 8,
				(uint16_t)want);
			if (f.ver == 4)
				pa_test_put16(f.b + f.l3 + 10,
					pa_test_ip4_csum(f.b + f.l3));
			check_nat(&f, c[i].bes, 2, c[i].bport);
		}
	}
}
END_TEST

START_TEST(test_nat_checksums_equal_full_recomputation_for_many_random_packets)
{
	unsigned int i, hits[2][2] = { { 0 } };

	setup_lb_flows(SVC_NAT4 "," SVC_NAT6, 4096, 1);
	for (i = 0; i < 800; i++) {
		char src[64];
		struct pa_test_frame f;
		bool v6 = i & 1, tcp = i & 2;
		unsigned int be;

		if (v6)
			snprintf(src, sizeof(src), "2001:db8:%x:%x::%x",
				rng() & 0xffff, rng() & 0xffff, rng() & 0xffff);
		else
			snprintf(src, sizeof(src), "%u.%u.%u.%u",
				1 + rng() % 223, rng() % 256, rng() % 256,
				1 + rng() % 254);
		frame_l4(&f, src, v6 ? "2001:db8:20::20" : "10.0.0.20",
			tcp ? IPPROTO_TCP : IPPROTO_UDP,
			(uint16_t)(1 + rng() % 65535), tcp ? 80 : 53, TCP_SYN,
			rng() % 200);
		/* random payload, so every checksum value shows up */
		if (f.len > (uint32_t)f.l4 + 20) {
			unsigned int k;

			for (k = (unsigned int)f.l4 + 20; k < f.len; k++)
				f.b[k] = (uint8_t)rng();
			set_l4_csum(f.b + f.l3);
		}
		be = check_nat(&f, v6 ? nat6_bes : nat4_bes, 2,
			tcp ? 8080 : 5353);
		hits[v6][be]++;
	}
	ck_assert(hits[0][0] > 0 && hits[0][1] > 0);
	ck_assert(hits[1][0] > 0 && hits[1][1] > 0);
}
END_TEST

/* The backend's reply to client flow @p f (which went to @p be:@p bport):
 * from the server side. */
static void
reply_of(const struct pa_test_frame *f, const char *be, uint16_t bport,
		struct pa_test_frame *r, unsigned int payload)
{
	char client[64];
	bool v6 = f->ver == 6;
	uint8_t proto = f->b[f->l3 + (v6 ? 6 : 9)];

	inet_ntop(v6 ? AF_INET6 : AF_INET, f->b + f->l3 + (v6 ? 8 : 12),
		client, sizeof(client));
	frame_eth(r, 0, v6 ? RTE_ETHER_TYPE_IPV6 : RTE_ETHER_TYPE_IPV4);
	memcpy(r->b + 6, mac_srv, 6);
	if (v6)
		frame_ipv6(r, be, client, proto, 0);
	else
		frame_ipv4(r, be, client, proto, 0, IP4_DF, 0);
	if (proto == IPPROTO_TCP)
		frame_tcp(r, bport, pa_test_get16(f->b + f->l4),
			TCP_SYN | TCP_ACK);
	else
		frame_udp(r, bport, pa_test_get16(f->b + f->l4));
	frame_payload(r, payload, 77);
	frame_fix(r);
}

/* Send reply @p r; it must come out with source @p vip:@p vport,
 * checksums recomputed, addressed back where it came from. */
static void
check_nat_reply(const struct pa_test_frame *r, const char *vip, uint16_t vport)
{
	uint8_t exp[FRAME_MAX], a[16];
	struct rte_mbuf *m = mbuf_of(r);
	const uint8_t *o;

	ck_assert_int_eq(inet_pton(r->ver == 4 ? AF_INET : AF_INET6, vip, a),
		1);
	memcpy(exp, r->b, r->len);
	memcpy(exp, mac_srv, 6);
	memcpy(exp + r->l3 + (r->ver == 4 ? 12 : 8), a, r->ver == 4 ? 4 : 16);
	pa_test_put16(exp + r->l4, vport);
	fix_csums(exp + r->l3);
	REQUIRE(process1(m, T0 + 5) == PA_LB_V_FORWARD);
	o = rte_pktmbuf_mtod(m, const uint8_t *);
	REQUIRE(rte_pktmbuf_pkt_len(m) == r->len);
	if (memcmp(o, exp, r->len) != 0)
		ck_abort_msg("the reply is not the expected frame");
	rte_pktmbuf_free(m);
}

START_TEST(test_nat_reply_of_a_known_flow_gets_the_vip_and_service_port_as_source)
{
	struct pa_test_frame f, r;
	unsigned int be;

	setup_lb(SVC_NAT4 "," SVC_NAT6);
	frame_l4(&f, "198.51.100.7", "10.0.0.20", IPPROTO_TCP, 40000, 80,
		TCP_SYN, 0);
	be = check_nat(&f, nat4_bes, 2, 8080);
	reply_of(&f, nat4_bes[be], 8080, &r, 9);
	check_nat_reply(&r, "10.0.0.20", 80);

	frame_l4(&f, "198.51.100.8", "10.0.0.20", IPPROTO_UDP, 40002, 53, 0,
		3);
	be = check_nat(&f, nat4_bes, 2, 5353);
	reply_of(&f, nat4_bes[be], 5353, &r, 30);
	check_nat_reply(&r, "10.0.0.20", 53);

	frame_l4(&f, "2001:db8:99::7", "2001:db8:20::20", IPPROTO_UDP, 40003,
		53, 0, 3);
	be = check_nat(&f, nat6_bes, 2, 5353);
	reply_of(&f, nat6_bes[be], 5353, &r, 31);
	check_nat_reply(&r, "2001:db8:20::20", 53);

	frame_l4(&f, "2001:db8:99::7", "2001:db8:20::20", IPPROTO_TCP, 40004,
		80, TCP_SYN, 3);
	be = check_nat(&f, nat6_bes, 2, 8080);
	reply_of(&f, nat6_bes[be], 8080, &r, 0);
	check_nat_reply(&r, "2001:db8:20::20", 80);
	ck_assert_int_eq(lb_stat("nat_replies"), 4);
}
END_TEST

/* ------------------------------------------------------------------ */
/* NAT replies in a fleet: the stateless translation                   */
/* ------------------------------------------------------------------ */

/* Client @p k of a numbered set: an address and a port, IPv4 or IPv6. */
static void
fleet_client(unsigned int k, bool v6, char *addr, size_t len,
		uint16_t *port)
{
	if (v6)
		snprintf(addr, len, "2001:db8:99::%x", 1 + k % 97);
	else
		snprintf(addr, len, "198.51.%u.%u", 100 + k % 3, 1 + k % 97);
	*port = (uint16_t)(30000 + k * 7);
}

/* The client packet of client @p k to @p vip:@p vport. */
static void
fleet_flow(struct pa_test_frame *f, unsigned int k, bool v6, const char *vip,
		uint8_t proto, uint16_t vport)
{
	char a[64];
	uint16_t port;

	fleet_client(k, v6, a, sizeof(a), &port);
	frame_l4(f, a, vip, proto, port, vport,
		proto == IPPROTO_TCP ? TCP_SYN : 0, k % 40);
}

/* Send reply @p r; it must come out unchanged with @p verdict. */
static void
reply_untouched(const struct pa_test_frame *r, uint8_t verdict)
{
	struct rte_mbuf *m = mbuf_of(r);

	REQUIRE(process1(m, T0 + 5) == verdict);
	REQUIRE(rte_pktmbuf_pkt_len(m) == r->len);
	REQUIRE(memcmp(rte_pktmbuf_mtod(m, const uint8_t *), r->b,
		r->len) == 0);
	rte_pktmbuf_free(m);
}

static const struct {
	bool v6;
	const char *vip;
	uint8_t proto;
	uint16_t vport, bport;
} fleet_svc[] = {
	{ false, "10.0.0.20", IPPROTO_TCP, 80, 8080 },
	{ false, "10.0.0.20", IPPROTO_UDP, 53, 5353 },
	{ true, "2001:db8:20::20", IPPROTO_TCP, 80, 8080 },
	{ true, "2001:db8:20::20", IPPROTO_UDP, 53, 5353 },
};

#define FLEET_N	150

START_TEST(test_client_hash_is_the_parsers_hash_of_the_clients_flow)
{
	const struct lb_table *t;
	const struct lb_svc *s;
	struct pa_test_frame f;
	struct rte_mbuf *m;
	unsigned int i, k;
	uint8_t a[16];
	int sl;

	setup_lb(SVC_NAT4 "," SVC_NAT6);
	t = lb->live;
	for (i = 0; i < RTE_DIM(fleet_svc); i++) {
		ck_assert_int_eq(inet_pton(fleet_svc[i].v6 ? AF_INET6 : AF_INET,
			fleet_svc[i].vip, a), 1);
		sl = lb_svc_find(t->svc_map, fleet_svc[i].v6 ? 6 : 4,
			fleet_svc[i].proto, rte_cpu_to_be_16(fleet_svc[i].vport),
			a);
		ck_assert_int_ge(sl, 0);
		s = t->svc[sl];
		for (k = 0; k < FLEET_N; k++) {
			fleet_flow(&f, k, fleet_svc[i].v6, fleet_svc[i].vip,
				fleet_svc[i].proto, fleet_svc[i].vport);
			m = mbuf_of(&f);
			REQUIRE(pa_pkt_meta(m)->hash == lb_client_hash(s,
				fleet_svc[i].proto, f.b + f.l3 +
				(f.ver == 4 ? 12 : 8),
				rte_cpu_to_be_16(pa_test_get16(f.b + f.l4))));
			rte_pktmbuf_free(m);
		}
	}
}
END_TEST

START_TEST(test_nat_reply_without_a_flow_is_translated_as_the_appliance_with_the_flow_would)
{
	static unsigned int be[RTE_DIM(fleet_svc)][FLEET_N];
	unsigned int hits[RTE_DIM(fleet_svc)][2] = { { 0 } };
	struct pa_test_frame f, r;
	unsigned int i, k;

	/* appliance A sees the clients' packets */
	setup_lb(SVC_NAT4 "," SVC_NAT6);
	for (i = 0; i < RTE_DIM(fleet_svc); i++)
		for (k = 0; k < FLEET_N; k++) {
			fleet_flow(&f, k, fleet_svc[i].v6, fleet_svc[i].vip,
				fleet_svc[i].proto, fleet_svc[i].vport);
			be[i][k] = check_nat(&f, fleet_svc[i].v6 ? nat6_bes :
				nat4_bes, 2, fleet_svc[i].bport);
		}
	/* appliance B, same services, no state, sees the backends' replies */
	setup_lb(SVC_NAT4 "," SVC_NAT6);
	for (i = 0; i < RTE_DIM(fleet_svc); i++)
		for (k = 0; k < FLEET_N; k++) {
			fleet_flow(&f, k, fleet_svc[i].v6, fleet_svc[i].vip,
				fleet_svc[i].proto, fleet_svc[i].vport);
			reply_of(&f, (fleet_svc[i].v6 ? nat6_bes :
				nat4_bes)[be[i][k]], fleet_svc[i].bport, &r,
				k % 50);
			check_nat_reply(&r, fleet_svc[i].vip,
				fleet_svc[i].vport);
			hits[i][be[i][k]]++;
		}
	for (i = 0; i < RTE_DIM(fleet_svc); i++)
		ck_assert(hits[i][0] > 0 && hits[i][1] > 0);
	ck_assert_int_eq(lb_stat("nat_reply_stateless"),
		RTE_DIM(fleet_svc) * FLEET_N);
	ck_assert_int_eq(lb_stat("nat_replies"), 0);
	ck_assert_int_eq(lb_stat("nat_reply_unmatched"), 0);
	ck_assert_int_eq(lb_stat("flows_created"), 0);
}
END_TEST

START_TEST(test_nat_reply_without_a_flow_from_a_backend_maglev_did_not_choose_is_left_unchanged)
{
	static unsigned int be[RTE_DIM(fleet_svc)][FLEET_N];
	struct pa_test_frame f, r;
	unsigned int i, k;

	setup_lb(SVC_NAT4 "," SVC_NAT6);
	for (i = 0; i < RTE_DIM(fleet_svc); i++)
		for (k = 0; k < FLEET_N; k++) {
			fleet_flow(&f, k, fleet_svc[i].v6, fleet_svc[i].vip,
				fleet_svc[i].proto, fleet_svc[i].vport);
			be[i][k] = check_nat(&f, fleet_svc[i].v6 ? nat6_bes :
				nat4_bes, 2, fleet_svc[i].bport);
		}
	setup_lb(SVC_NAT4 "," SVC_NAT6);
	for (i = 0; i < RTE_DIM(fleet_svc); i++)
		for (k = 0; k < FLEET_N; k++) {
			fleet_flow(&f, k, fleet_svc[i].v6, fleet_svc[i].vip,
				fleet_svc[i].proto, fleet_svc[i].vport);
			/* the other backend */
			reply_of(&f, (fleet_svc[i].v6 ? nat6_bes :
				nat4_bes)[1 - be[i][k]], fleet_svc[i].bport,
				&r, 9);
			reply_untouched(&r, PA_LB_V_FORWARD);
		}
	ck_assert_int_eq(lb_stat("nat_reply_unmatched"),
		RTE_DIM(fleet_svc) * FLEET_N);
	ck_assert_int_eq(lb_stat("nat_reply_stateless"), 0);
	ck_assert_int_eq(lb_stat("nat_replies"), 0);

	/* from the backend's port but no backend: not a reply, not counted */
	fleet_flow(&f, 1, false, "10.0.0.20", IPPROTO_TCP, 80);
	reply_of(&f, "10.2.0.9", 8080, &r, 9);
	reply_untouched(&r, PA_LB_V_FORWARD);
	/* a backend, from another port than its service's */
	reply_of(&f, "10.2.0.1", 8081, &r, 9);
	reply_untouched(&r, PA_LB_V_FORWARD);
	ck_assert_int_eq(lb_stat("nat_reply_unmatched"),
		RTE_DIM(fleet_svc) * FLEET_N);
}
END_TEST

/* 10.3.0.1:8080 is a backend of two nat services (x, y); the udp one
 * has it on another protocol. */
#define SVC_SHARED \
	"{'name': 'x', 'vip': '10.0.0.30', 'port': 80, 'proto': 'tcp'," \
	" 'forward': 'nat', 'backends': [{'addr': '10.3.0.1', 'port': 8080}," \
	" {'addr': '10.3.0.2', 'port': 8080}]}," \
	"{'name': 'y', 'vip': '10.0.0.31', 'port': 80, 'proto': 'tcp'," \
	" 'forward': 'nat', 'backends': [{'addr': '10.3.0.3', 'port': 8080}," \
	" {'addr': '10.3.0.1', 'port': 8080}]}," \
	"{'name': 'xu', 'vip': '10.0.0.30', 'port': 53, 'proto': 'udp'," \
	" 'forward': 'nat', 'backends': [{'addr': '10.3.0.1', 'port': 8080}]}"

static const char *const x_bes[] = { "10.3.0.1", "10.3.0.2" };
static const char *const y_bes[] = { "10.3.0.3", "10.3.0.1" };

/* The index entry of backend @p addr:@p port/@p proto (NULL: none). */
static const struct lb_rev_ent *
rev_of(const char *addr, uint16_t port, uint8_t proto)
{
	struct pa_ip_addr a = addr_of(addr);
	const struct lb_table *t = lb->live;

	if (t->rev == NULL)
		return NULL;
	return lb_rev_find(t->rev, a.family == AF_INET ? 4 : 6, proto,
		rte_cpu_to_be_16(port), pa_ip_bytes(&a));
}

/* Does entry @p e list service @p name with backend @p addr? */
static bool
rev_lists(const struct lb_rev_ent *e, const char *name, const char *addr)
{
	const struct lb_table *t = lb->live;
	struct pa_ip_addr a = addr_of(addr);
	unsigned int i;

	for (i = 0; i < e->n; i++) {
		const struct lb_rev_ref *r = &t->rev->ref[e->first + i];
		const struct lb_svc *s = t->svc[r->slot];

		if (strcmp(s->name, name) == 0 && r->be < s->n_be &&
		    pa_ip_equal(&s->be[r->be].addr, &a))
			return true;
	}
	return false;
}

START_TEST(test_nat_reply_index_lists_every_nat_service_of_a_backend)
{
	const struct lb_rev_ent *e;
	char err[PA_CONFIG_ERR_MAX];

	setup_lb(SVC_SHARED "," SVC_WEB4 "," SVC_NAT6);
	e = rev_of("10.3.0.1", 8080, IPPROTO_TCP);
	ck_assert_ptr_nonnull(e);
	ck_assert_uint_eq(e->n, 2);
	ck_assert(rev_lists(e, "x", "10.3.0.1") && rev_lists(e, "y", "10.3.0.1"));
	e = rev_of("10.3.0.2", 8080, IPPROTO_TCP);
	ck_assert(e != NULL && e->n == 1 && rev_lists(e, "x", "10.3.0.2"));
	e = rev_of("10.3.0.3", 8080, IPPROTO_TCP);
	ck_assert(e != NULL && e->n == 1 && rev_lists(e, "y", "10.3.0.3"));
	e = rev_of("10.3.0.1", 8080, IPPROTO_UDP);
	ck_assert(e != NULL && e->n == 1 && rev_lists(e, "xu", "10.3.0.1"));
	e = rev_of("2001:db8:2::2", 5353, IPPROTO_UDP);
	ck_assert(e != NULL && e->n == 1 && rev_lists(e, "nat6u",
		"2001:db8:2::2"));
	ck_assert_ptr_null(rev_of("10.3.0.1", 8081, IPPROTO_TCP));
	ck_assert_ptr_null(rev_of("10.3.0.9", 8080, IPPROTO_TCP));
	/* ipip backends are no nat backends */
	ck_assert_ptr_null(rev_of("10.1.0.1", 80, IPPROTO_TCP));

	/* it follows the tables: backends deleted, added, down */
	ck_assert_int_eq(delete_backend("y", "10.3.0.1"), 0);
	e = rev_of("10.3.0.1", 8080, IPPROTO_TCP);
	ck_assert(e != NULL && e->n == 1 && rev_lists(e, "x", "10.3.0.1"));
	ck_assert_int_eq(add_backend("y", "{'addr': '10.3.0.9', 'port': 8080}"),
		0);
	e = rev_of("10.3.0.9", 8080, IPPROTO_TCP);
	ck_assert(e != NULL && e->n == 1 && rev_lists(e, "y", "10.3.0.9"));
	ck_assert_int_eq(set_state("x", "10.3.0.2", PA_LB_DOWN), 0);
	e = rev_of("10.3.0.2", 8080, IPPROTO_TCP);
	ck_assert(e != NULL && e->n == 1 && rev_lists(e, "x", "10.3.0.2"));
	ck_assert_int_eq(pa_lb_service_delete(lb, "x", err, sizeof(err)), 0);
	ck_assert_ptr_null(rev_of("10.3.0.2", 8080, IPPROTO_TCP));
	ck_assert_ptr_null(rev_of("10.3.0.1", 8080, IPPROTO_TCP));
	/* no nat service, no index */
	ck_assert_int_eq(pa_lb_service_delete(lb, "y", err, sizeof(err)), 0);
	ck_assert_int_eq(pa_lb_service_delete(lb, "xu", err, sizeof(err)), 0);
	ck_assert_int_eq(pa_lb_service_delete(lb, "nat6", err, sizeof(err)), 0);
	ck_assert_int_eq(pa_lb_service_delete(lb, "nat6u", err, sizeof(err)),
		0);
	ck_assert_ptr_null(lb->live->rev);
}
END_TEST

START_TEST(test_nat_reply_of_a_backend_of_two_services_is_translated_only_when_one_explains_it)
{
	static unsigned int bx[FLEET_N], by[FLEET_N];
	unsigned int k, n_x = 0, n_y = 0, n_both = 0, n_none = 0;
	struct pa_test_frame f, r;

	/* appliance A: each client to both VIPs, from the same port */
	setup_lb(SVC_SHARED);
	for (k = 0; k < FLEET_N; k++) {
		fleet_flow(&f, k, false, "10.0.0.30", IPPROTO_TCP, 80);
		bx[k] = check_nat(&f, x_bes, 2, 8080);
		fleet_flow(&f, k, false, "10.0.0.31", IPPROTO_TCP, 80);
		by[k] = check_nat(&f, y_bes, 2, 8080);
	}
	/* appliance B: 10.3.0.1's replies to those clients */
	setup_lb(SVC_SHARED);
	for (k = 0; k < FLEET_N; k++) {
		bool x = bx[k] == 0, y = by[k] == 1;

		fleet_flow(&f, k, false, "10.0.0.30", IPPROTO_TCP, 80);
		reply_of(&f, "10.3.0.1", 8080, &r, 3);
		if (x && y) {
			reply_untouched(&r, PA_LB_V_NAT_AMBIGUOUS);
			n_both++;
		} else if (x) {
			check_nat_reply(&r, "10.0.0.30", 80);
			n_x++;
		} else if (y) {
			check_nat_reply(&r, "10.0.0.31", 80);
			n_y++;
		} else {
			reply_untouched(&r, PA_LB_V_FORWARD);
			n_none++;
		}
	}
	ck_assert(n_x > 0 && n_y > 0 && n_both > 0 && n_none > 0);
	ck_assert_int_eq(lb_stat("nat_reply_ambiguous"), n_both);
	ck_assert_int_eq(lb_stat("nat_reply_stateless"), n_x + n_y);
	ck_assert_int_eq(lb_stat("nat_reply_unmatched"), n_none);
}
END_TEST

#define SVC_RR \
	"{'name': 'rr', 'vip': '10.0.0.40', 'port': 80, 'proto': 'tcp'," \
	" 'scheduler': 'rr', 'forward': 'nat', 'backends':" \
	" [{'addr': '10.4.0.1', 'port': 8080}, {'addr': '10.4.0.2', 'port': 8080}]}"
#define SVC_MG \
	"{'name': 'mg', 'vip': '10.0.0.41', 'port': 80, 'proto': 'tcp'," \
	" 'forward': 'nat', 'backends':" \
	" [{'addr': '10.4.0.1', 'port': 8080}, {'addr': '10.4.0.3', 'port': 8080}]}"

static const char *const rr_bes[] = { "10.4.0.1", "10.4.0.2" };
static const char *const mg_bes[] = { "10.4.0.1", "10.4.0.3" };

START_TEST(test_nat_reply_of_a_non_maglev_service_is_translated_only_with_its_flow)
{
	static unsigned int bm[FLEET_N];
	unsigned int k, n_amb = 0, n_none = 0, be;
	struct pa_test_frame f, r;

	setup_lb(SVC_RR);
	/* no flow: neither backend's reply is translated */
	for (k = 0; k < FLEET_N; k++) {
		fleet_flow(&f, k, false, "10.0.0.40", IPPROTO_TCP, 80);
		reply_of(&f, rr_bes[k % 2], 8080, &r, 3);
		reply_untouched(&r, PA_LB_V_FORWARD);
	}
	ck_assert_int_eq(lb_stat("nat_reply_unmatched"), FLEET_N);
	/* with its flow, as ever */
	fleet_flow(&f, 1, false, "10.0.0.40", IPPROTO_TCP, 80);
	be = check_nat(&f, rr_bes, 2, 8080);
	reply_of(&f, rr_bes[be], 8080, &r, 3);
	check_nat_reply(&r, "10.0.0.40", 80);
	ck_assert_int_eq(lb_stat("nat_replies"), 1);

	/* a maglev service sharing the backend: its agreement is not
	 * enough, the rr service may have sent the flow there */
	setup_lb(SVC_RR "," SVC_MG);
	for (k = 0; k < FLEET_N; k++) {
		fleet_flow(&f, k, false, "10.0.0.41", IPPROTO_TCP, 80);
		bm[k] = check_nat(&f, mg_bes, 2, 8080);
	}
	setup_lb(SVC_RR "," SVC_MG);
	for (k = 0; k < FLEET_N; k++) {
		fleet_flow(&f, k, false, "10.0.0.41", IPPROTO_TCP, 80);
		reply_of(&f, "10.4.0.1", 8080, &r, 3);
		if (bm[k] == 0) {
			reply_untouched(&r, PA_LB_V_NAT_AMBIGUOUS);
			n_amb++;
		} else {
			reply_untouched(&r, PA_LB_V_FORWARD);
			n_none++;
		}
	}
	ck_assert(n_amb > 0 && n_none > 0);
	ck_assert_int_eq(lb_stat("nat_reply_ambiguous"), n_amb);
	ck_assert_int_eq(lb_stat("nat_reply_unmatched"), n_none);
}
END_TEST

START_TEST(test_nat_reply_without_a_flow_follows_the_current_maglev_choice)
{
	static unsigned int be[FLEET_N];
	unsigned int k, moved = 0, kept = 0;
	struct pa_test_frame f, r;
	struct rte_mbuf *m;

	setup_lb(SVC_NAT4);
	for (k = 0; k < FLEET_N; k++) {
		fleet_flow(&f, k, false, "10.0.0.20", IPPROTO_TCP, 80);
		be[k] = check_nat(&f, nat4_bes, 2, 8080);
	}
	/* the fresh appliance has lost 10.2.0.1 (down): its replies are no
	 * Maglev choice any more */
	setup_lb(SVC_NAT4);
	ck_assert_int_eq(set_state("nat4", "10.2.0.1", PA_LB_DOWN), 0);
	for (k = 0; k < FLEET_N; k++) {
		fleet_flow(&f, k, false, "10.0.0.20", IPPROTO_TCP, 80);
		reply_of(&f, nat4_bes[be[k]], 8080, &r, 3);
		if (be[k] == 0) {
			reply_untouched(&r, PA_LB_V_FORWARD);
			moved++;
		} else {
			m = mbuf_of(&r);
			REQUIRE(process1(m, T0 + 5) == PA_LB_V_FORWARD);
			REQUIRE(memcmp(rte_pktmbuf_mtod(m, uint8_t *) + r.l3 +
				12, "\x0a\x00\x00\x14", 4) == 0);
			rte_pktmbuf_free(m);
			kept++;
		}
	}
	ck_assert(moved > 0 && kept > 0);
	ck_assert_int_eq(lb_stat("nat_reply_unmatched"), moved);
	ck_assert_int_eq(lb_stat("nat_reply_stateless"), kept);
}
END_TEST

/* ------------------------------------------------------------------ */
/* dsr                                                                 */
/* ------------------------------------------------------------------ */

START_TEST(test_dsr_changes_only_the_destination_mac_to_the_backends)
{
	static const uint8_t m1[6] = { 0x02, 0, 0, 0, 0xbe, 0x01 };
	static const uint8_t m2[6] = { 0x02, 0, 0, 0, 0xbe, 0x02 };
	unsigned int i, seen1 = 0, seen2 = 0;

	setup_lb("{'name': 'dsr4', 'vip': '10.0.0.30', 'port': 80, 'proto': 'tcp',"
		" 'forward': 'dsr', 'backends': [{'addr': '10.3.0.1',"
		" 'mac': '02:00:00:00:be:01'}, {'addr': '10.3.0.2',"
		" 'mac': '02:00:00:00:be:02'}]}");
	for (i = 0; i < 40; i++) {
		struct rte_mbuf *m;
		struct pa_test_frame f;
		const uint8_t *o;

		frame_l4(&f, "198.51.100.7", "10.0.0.30", IPPROTO_TCP,
			(uint16_t)(30000 + i), 80, TCP_SYN, i);
		m = mbuf_of(&f);
		ck_assert_uint_eq(process1(m, T0), PA_LB_V_FORWARD);
		o = rte_pktmbuf_mtod(m, const uint8_t *);
		ck_assert_uint_eq(rte_pktmbuf_pkt_len(m), f.len);
		if (memcmp(o, m1, 6) == 0)
			seen1++;
		else if (memcmp(o, m2, 6) == 0)
			seen2++;
		else
			ck_abort_msg("destination MAC is no backend's");
		ck_assert(memcmp(o + 6, f.b + 6, f.len - 6) == 0);
		rte_pktmbuf_free(m);
	}
	ck_assert(seen1 > 0 && seen2 > 0);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Flows and backend changes                                           */
/* ------------------------------------------------------------------ */

#define N_FLOWS 300

START_TEST(test_flows_keep_their_backend_when_backends_are_added)
{
	uint32_t be[N_FLOWS];
	unsigned int i, to_new = 0;

	setup_lb(SVC_WEB4);
	for (i = 0; i < N_FLOWS; i++)
		be[i] = web4_flow(i, TCP_SYN, T0);
	ck_assert_int_eq(add_backend("web4", "{'addr': '10.1.0.4'}"), 0);
	ck_assert_int_eq(add_backend("web4", "{'addr': '10.1.0.5'}"), 0);
	ck_assert_int_eq(add_backend("web4", "{'addr': '10.1.0.6'}"), 0);
	for (i = 0; i < N_FLOWS; i++)
		ck_assert_msg(web4_flow(i, TCP_ACK, T0 + 1) == be[i],
			"flow %u moved", i);
	/* new flows do reach the new backends */
	for (i = N_FLOWS; i < 2 * N_FLOWS; i++)
		if (!is_web4_backend(web4_flow(i, TCP_SYN, T0 + 2)))
			to_new++;
	ck_assert_uint_gt(to_new, N_FLOWS / 4);
	ck_assert_int_eq(lb_stat("flows"), 2 * N_FLOWS);
	ck_assert_int_eq(lb_stat("flows_rescheduled"), 0);
}
END_TEST

START_TEST(test_flows_keep_their_backend_when_weights_change)
{
	uint32_t be[N_FLOWS];
	unsigned int i;

	setup_lb(SVC_WEB4);
	for (i = 0; i < N_FLOWS; i++)
		be[i] = web4_flow(i, TCP_SYN, T0);
	ck_assert_int_eq(set_weight("web4", "10.1.0.1", 10), 0);
	ck_assert_int_eq(set_weight("web4", "10.1.0.2", 3), 0);
	ck_assert_int_eq(set_weight("web4", "10.1.0.3", 0), 0);
	for (i = 0; i < N_FLOWS; i++)
		ck_assert_msg(web4_flow(i, TCP_ACK, T0 + 1) == be[i],
			"flow %u moved", i);
	/* weight 0: no new flows */
	for (i = N_FLOWS; i < 2 * N_FLOWS; i++)
		ck_assert(web4_flow(i, TCP_SYN, T0 + 2) != ip4("10.1.0.3"));
}
END_TEST

START_TEST(test_draining_backend_keeps_its_flows_but_gets_no_new_ones)
{
	uint32_t be[N_FLOWS];
	unsigned int i, on2 = 0;
	struct be_count c;

	setup_lb(SVC_WEB4);
	for (i = 0; i < N_FLOWS; i++)
		if ((be[i] = web4_flow(i, TCP_SYN, T0)) == ip4("10.1.0.2"))
			on2++;
	ck_assert_uint_gt(on2, 0);
	ck_assert_int_eq(set_state("web4", "10.1.0.2", PA_LB_DRAIN), 0);
	for (i = 0; i < N_FLOWS; i++)
		ck_assert_msg(web4_flow(i, TCP_ACK, T0 + 1) == be[i],
			"flow %u moved", i);
	for (i = N_FLOWS; i < 2 * N_FLOWS; i++)
		ck_assert(web4_flow(i, TCP_SYN, T0 + 2) != ip4("10.1.0.2"));
	c = be_count("web4", "10.1.0.2");
	ck_assert_str_eq(c.state, "drain");
	ck_assert_int_eq(c.flows, on2);
	ck_assert_int_eq(c.packets, 2 * on2);
	sweep(T0 + 3);
	ck_assert_int_eq(be_count("web4", "10.1.0.2").flows, on2);
}
END_TEST

/* Flows of 10.1.0.2 move when it goes (by @p down or delete); the others
 * stay. */
static void
check_flows_leave(bool down)
{
	uint32_t be[N_FLOWS], b;
	unsigned int i, on2 = 0;

	setup_lb(SVC_WEB4);
	for (i = 0; i < N_FLOWS; i++)
		if ((be[i] = web4_flow(i, TCP_SYN, T0)) == ip4("10.1.0.2"))
			on2++;
	ck_assert_uint_gt(on2, 0);
	if (down)
		ck_assert_int_eq(set_state("web4", "10.1.0.2", PA_LB_DOWN), 0);
	else
		ck_assert_int_eq(delete_backend("web4", "10.1.0.2"), 0);
	for (i = 0; i < N_FLOWS; i++) {
		b = web4_flow(i, TCP_ACK, T0 + 1);
		if (be[i] == ip4("10.1.0.2"))
			ck_assert_msg(b == ip4("10.1.0.1") || b == ip4("10.1.0.3"),
				"flow %u still on its gone backend", i);
		else
			ck_assert_msg(b == be[i], "flow %u moved", i);
		/* and the new choice sticks */
		ck_assert_uint_eq(web4_flow(i, TCP_ACK, T0 + 2), b);
	}
	ck_assert_int_eq(lb_stat("flows_rescheduled"), on2);
	ck_assert_int_eq(lb_stat("flows"), N_FLOWS);
	if (down)
		ck_assert_int_eq(be_count("web4", "10.1.0.2").flows, 0);
}

START_TEST(test_down_backend_loses_its_flows_to_other_backends)
{
	check_flows_leave(true);
}
END_TEST

START_TEST(test_deleted_backend_loses_its_flows_to_other_backends)
{
	check_flows_leave(false);
}
END_TEST

START_TEST(test_flows_of_a_down_backend_are_reaped_by_poll)
{
	unsigned int i, on2 = 0;

	setup_lb(SVC_WEB4);
	for (i = 0; i < N_FLOWS; i++)
		if (web4_flow(i, TCP_SYN, T0) == ip4("10.1.0.2"))
			on2++;
	ck_assert_int_eq(set_state("web4", "10.1.0.2", PA_LB_DOWN), 0);
	sweep(T0 + 1);
	ck_assert_int_eq(lb_stat("flows_backend_gone"), on2);
	ck_assert_int_eq(lb_stat("flows"), N_FLOWS - on2);
}
END_TEST

START_TEST(test_service_list_counts_flows_packets_and_bytes_per_backend)
{
	static const char *const addrs[] = { "10.1.0.1", "10.1.0.2", "10.1.0.3" };
	uint64_t flows[3] = { 0 }, pkts[3] = { 0 }, bytes[3] = { 0 };
	unsigned int i, k, b;
	json_t *arr, *s;

	setup_lb(SVC_WEB4);
	for (i = 0; i < 60; i++) {
		for (k = 0; k <= i % 4; k++) {
			char src[32];
			struct pa_test_frame f;
			uint32_t be;

			snprintf(src, sizeof(src), "198.51.100.%u", 1 + i);
			frame_l4(&f, src, "10.0.0.10", IPPROTO_TCP,
				(uint16_t)(20000 + i), 80,
				k == 0 ? TCP_SYN : TCP_ACK, 10 * k + i % 7);
			be = send_ipip4(&f, T0 + k);
			for (b = 0; b < 3; b++)
				if (be == ip4(addrs[b]))
					break;
			ck_assert_uint_lt(b, 3);
			flows[b] += k == 0;
			pkts[b]++;
			bytes[b] += f.len;
		}
	}
	for (b = 0; b < 3; b++) {
		struct be_count c = be_count("web4", addrs[b]);

		ck_assert_int_eq(c.flows, (json_int_t)flows[b]);
		ck_assert_int_eq(c.packets, (json_int_t)pkts[b]);
		ck_assert_int_eq(c.bytes, (json_int_t)bytes[b]);
	}
	arr = pa_lb_services_json(lb);
	s = json_array_get(arr, 0);
	ck_assert_int_eq(json_integer_value(json_object_get(s, "flows")), 60);
	ck_assert_int_eq(json_integer_value(json_object_get(s,
		"usable_backends")), 3);
	json_decref(arr);
	ck_assert_int_eq(lb_stat("flows"), 60);
	ck_assert_int_eq(lb_stat("flows_created"), 60);
	ck_assert_int_eq(lb_stat("balanced"), (json_int_t)(pkts[0] + pkts[1] +
		pkts[2]));
}
END_TEST

START_TEST(test_packets_of_one_new_flow_in_one_burst_share_a_backend)
{
	struct rte_mbuf *m[100];
	uint8_t v[100];
	unsigned int i;

	setup_lb("{'name': 'rr4', 'vip': '10.0.0.50', 'port': 80, 'proto': 'tcp',"
		" 'forward': 'ipip', 'scheduler': 'rr', 'backends':"
		" [{'addr': '10.1.0.1'}, {'addr': '10.1.0.2'}, {'addr': '10.1.0.3'}]}");
	/* packets i and i + 50 are one flow: the first in the same chunk of
	 * 64, the second across the chunk boundary for i >= 14 */
	for (i = 0; i < 100; i++) {
		char src[32];
		struct pa_test_frame f;

		snprintf(src, sizeof(src), "198.51.100.%u", 1 + i % 50);
		frame_l4(&f, src, "10.0.0.50", IPPROTO_TCP, 1000, 80, TCP_SYN, 0);
		m[i] = mbuf_of(&f);
	}
	pa_lb_process(lb, 0, m, 100, T0, v);
	for (i = 0; i < 50; i++) {
		ck_assert_uint_eq(v[i], PA_LB_V_FORWARD);
		ck_assert_uint_eq(v[i + 50], PA_LB_V_FORWARD);
		ck_assert_msg(memcmp(rte_pktmbuf_mtod(m[i], uint8_t *) + 30,
			rte_pktmbuf_mtod(m[i + 50], uint8_t *) + 30, 4) == 0,
			"flow %u went to two backends", i);
	}
	for (i = 0; i < 100; i++)
		rte_pktmbuf_free(m[i]);
	ck_assert_int_eq(lb_stat("flows"), 50);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Aging                                                               */
/* ------------------------------------------------------------------ */

START_TEST(test_idle_udp_flow_is_forgotten_after_udp_timeout)
{
	struct pa_lb_trace_result tr;
	struct pa_flow_key k;
	struct pa_test_frame f;

	setup_lb("{'name': 'dns4', 'vip': '10.0.0.40', 'port': 53, 'proto': 'udp',"
		" 'forward': 'ipip', 'backends': [{'addr': '10.1.0.1'}]}");
	frame_l4(&f, "198.51.100.7", "10.0.0.40", IPPROTO_UDP, 1234, 53, 0, 8);
	send_ipip4(&f, T0);
	ck_assert_int_eq(lb_stat("flows"), 1);
	sweep(T0 + UDP_TMO * hz);
	ck_assert_int_eq(lb_stat("flows"), 1);
	ck_assert_int_eq(be_count("dns4", "10.1.0.1").flows, 1);
	sweep(T0 + UDP_TMO * hz + 1);
	ck_assert_int_eq(lb_stat("flows"), 0);
	ck_assert_int_eq(lb_stat("flows_expired"), 1);
	ck_assert_int_eq(be_count("dns4", "10.1.0.1").flows, 0);
	/* gone from the table itself, not only from the counts */
	pa_lb_lcore_exit(lb, 0);
	k = key_of(&f);
	ck_assert_int_eq(pa_lb_trace(lb, &k, false, &tr), 0);
	ck_assert(tr.service_found);
	ck_assert(!tr.existing_flow);
	/* it comes back as a new flow */
	send_ipip4(&f, T0 + UDP_TMO * hz + 2);
	ck_assert_int_eq(lb_stat("flows"), 1);
	ck_assert_int_eq(lb_stat("flows_created"), 2);
}
END_TEST

/* The busy sweep (64 entries every LB_SWEEP_BUSY_US) reads only the
 * positions flows have used: a few flows in a large table are aged at
 * the first busy sweep after their timeout, not after the sweep has
 * gone round the whole table (1025 positions here: 17 sweeps). */
START_TEST(test_busy_sweep_ages_a_few_flows_at_once_in_a_large_table)
{
	struct pa_test_frame f;
	uint64_t now = T0;
	unsigned int i;

	setup_lb("{'name': 'dns4', 'vip': '10.0.0.40', 'port': 53, 'proto': 'udp',"
		" 'forward': 'ipip', 'backends': [{'addr': '10.1.0.1'}]}");
	for (i = 0; i < 3; i++) {
		frame_l4(&f, "198.51.100.7", "10.0.0.40", IPPROTO_UDP,
			(uint16_t)(1000 + i), 53, 0, 8);
		send_ipip4(&f, T0);
	}
	ck_assert_int_eq(lb_stat("flows"), 3);
	ck_assert_uint_ge(lb_stat("flow_table_capacity"), 1024);
	/* busy sweeps before the timeout move the sweep along */
	for (i = 0; i < 5; i++) {
		now += hz;
		pa_lb_poll(lb, 0, now, false);
	}
	ck_assert_int_eq(lb_stat("flows"), 3);
	/* the first busy sweep after it ages all three */
	pa_lb_poll(lb, 0, T0 + UDP_TMO * hz + 1, false);
	ck_assert_int_eq(lb_stat("flows"), 0);
	ck_assert_int_eq(lb_stat("flows_expired"), 3);
}
END_TEST

/* A packet of UDP flow @p i of the dns4 service, at T0. */
static void
dns4_flow(unsigned int i)
{
	char src[32];
	struct pa_test_frame f;

	snprintf(src, sizeof(src), "198.51.%u.%u", 100 + i / 200, 1 + i % 200);
	frame_l4(&f, src, "10.0.0.40", IPPROTO_UDP, (uint16_t)(1000 + i), 53,
		0, 4);
	send_ipip4(&f, T0);
}

/* UDP flows 0 .. n - 1 of the dns4 service, all at T0. */
static void
dns4_flows(unsigned int n)
{
	unsigned int i;

	setup_lb("{'name': 'dns4', 'vip': '10.0.0.40', 'port': 53, 'proto': 'udp',"
		" 'forward': 'ipip', 'backends': [{'addr': '10.1.0.1'}]}");
	for (i = 0; i < n; i++)
		dns4_flow(i);
	ck_assert_int_eq(lb_stat("flows"), n);
}

/* Busy sweeps go round the positions in use once per 1/8 of the shortest
 * timeout (tcp_fin_timeout here): dead entries are reclaimed that much
 * late at most, not at the first busy poll. */
START_TEST(test_busy_sweep_goes_round_once_per_eighth_of_shortest_timeout)
{
	uint64_t t = T0 + UDP_TMO * hz, round = TCP_FIN_TMO * hz / 8;

	dns4_flows(3);
	pa_lb_poll(lb, 0, t, false);	/* a sweep: all alive */
	ck_assert_int_eq(lb_stat("flows"), 3);
	/* dead from t + 1, but the next round is at t + round */
	pa_lb_poll(lb, 0, t + 1 + round / 2, false);
	pa_lb_poll(lb, 0, t + round - 1, false);
	ck_assert_int_eq(lb_stat("flows"), 3);
	pa_lb_poll(lb, 0, t + round, false);
	ck_assert_int_eq(lb_stat("flows"), 0);
	ck_assert_int_eq(lb_stat("flows_expired"), 3);
}
END_TEST

/* ... but once fewer than 1/8 of the positions are free, once per 100 ms
 * (LB_SWEEP_PERIOD_MS): 64 positions every 100 ms x 64 / hw. */
START_TEST(test_busy_sweep_is_faster_when_the_table_is_short_of_room)
{
	uint64_t t = T0 + UDP_TMO * hz, gap = hz / 100;	/* 10 ms */

	/* 800 flows in 1025 positions: 225 free, the usual round (a sweep
	 * of 64 every 1.25 s x 64 / 800 = 100 ms) */
	dns4_flows(800);
	pa_lb_poll(lb, 0, t, false);
	pa_lb_poll(lb, 0, t + gap, false);
	pa_lb_poll(lb, 0, t + 2 * gap, false);
	ck_assert_int_eq(lb_stat("flows_expired"), 0);
	/* 900: 125 free, 64 every 100 ms x 64 / 900 = 7.1 ms */
	dns4_flows(900);
	pa_lb_poll(lb, 0, t, false);
	pa_lb_poll(lb, 0, t + gap, false);
	ck_assert_int_eq(lb_stat("flows_expired"), 64);
	/* 64 freed: 189 free, room again, the usual round */
	pa_lb_poll(lb, 0, t + 2 * gap, false);
	ck_assert_int_eq(lb_stat("flows_expired"), 64);
}
END_TEST

START_TEST(test_tcp_flow_that_saw_fin_ages_after_tcp_fin_timeout)
{
	struct pa_test_frame fa, fb;
	uint64_t t1 = T0 + hz;

	setup_lb(SVC_WEB4);
	frame_l4(&fa, "198.51.100.7", "10.0.0.10", IPPROTO_TCP, 1111, 80,
		TCP_SYN, 0);
	frame_l4(&fb, "198.51.100.8", "10.0.0.10", IPPROTO_TCP, 2222, 80,
		TCP_SYN, 0);
	send_ipip4(&fa, T0);
	send_ipip4(&fb, T0);
	frame_l4(&fa, "198.51.100.7", "10.0.0.10", IPPROTO_TCP, 1111, 80,
		TCP_FIN | TCP_ACK, 0);
	frame_l4(&fb, "198.51.100.8", "10.0.0.10", IPPROTO_TCP, 2222, 80,
		TCP_ACK, 5);
	send_ipip4(&fa, t1);
	send_ipip4(&fb, t1);
	ck_assert_int_eq(lb_stat("flows"), 2);
	sweep(t1 + TCP_FIN_TMO * hz);
	ck_assert_int_eq(lb_stat("flows"), 2);
	sweep(t1 + TCP_FIN_TMO * hz + 1);
	ck_assert_int_eq(lb_stat("flows"), 1);	/* the one without FIN stays */
	ck_assert_int_eq(lb_stat("flows_expired"), 1);
	sweep(t1 + TCP_TMO * hz + 1);
	ck_assert_int_eq(lb_stat("flows"), 0);
}
END_TEST

START_TEST(test_aged_flows_give_their_table_entries_back)
{
	unsigned int i, round;
	uint64_t now = T0;

	setup_lb("{'name': 'dns4', 'vip': '10.0.0.40', 'port': 53, 'proto': 'udp',"
		" 'forward': 'ipip', 'backends': [{'addr': '10.1.0.1'}]}");
	/* three generations of 900 flows in a table of 1024 */
	for (round = 0; round < 3; round++) {
		for (i = 0; i < 900; i++) {
			char src[32];
			struct pa_test_frame f;

			snprintf(src, sizeof(src), "198.%u.%u.%u", 51 + round,
				100 + i / 200, 1 + i % 200);
			frame_l4(&f, src, "10.0.0.40", IPPROTO_UDP,
				(uint16_t)(1000 + i), 53, 0, 4);
			send_ipip4(&f, now);
		}
		ck_assert_int_eq(lb_stat("flows"), 900);
		now += UDP_TMO * hz + 1;
		sweep(now);
		ck_assert_int_eq(lb_stat("flows"), 0);
	}
	ck_assert_int_eq(lb_stat("flow_table_full"), 0);
	ck_assert_int_eq(lb_stat("flows_created"), 3 * 900);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Full table, fragments, no backend, other traffic                    */
/* ------------------------------------------------------------------ */

/* A flow table of @p slots slots (a power of two) for @p size flows, on
 * the heap (lb.c's is on the DPDK heap). */
static void
ftab_make(struct lb_ftab *t, uint32_t slots, uint32_t size)
{
	uint32_t i;

	memset(t, 0, sizeof(*t));
	t->idx = calloc(slots, sizeof(*t->idx));
	t->free = calloc(size + 1, sizeof(*t->free));
	t->line = aligned_alloc(64, (size + 1) * sizeof(*t->line));
	t->sig = calloc(size + 1, sizeof(*t->sig));
	ck_assert(t->idx != NULL && t->free != NULL && t->line != NULL &&
		t->sig != NULL);
	memset(t->line, 0, (size + 1) * sizeof(*t->line));
	t->mask = slots - 1;
	t->n_pos = size + 1;
	for (i = 0; i < size; i++)
		t->free[i] = size - 1 - i;
	t->n_free = size;
}

static void
ftab_drop(struct lb_ftab *t)
{
	free(t->idx);
	free(t->free);
	free(t->line);
	free(t->sig);
}

/* The flow table (lb_ftab.h) against a reference: random adds and
 * deletes of keys of both families whose hashes crowd a few home slots
 * (long clusters, wrapping past the last slot, signature twins; IPv6
 * keys that differ only in their last address byte, IPv4 and IPv6 keys
 * of the same bytes), every live key found at its position, with the
 * entry written there at its add, after each step, every deleted one
 * gone, full at capacity. */
START_TEST(test_flow_table_structure_against_a_reference)
{
	enum { SLOTS = 64, SIZE = 47, KEYS = 200 };
	struct lb_ftab t;
	struct lb_flow_key keys[KEYS];
	uint32_t hash[KEYS];
	int32_t at[KEYS];
	unsigned int i, step, live = 0;

	ftab_make(&t, SLOTS, SIZE);
	/* a free position, the never-used last one, one past it */
	ck_assert_int_eq(lb_ftab_del(&t, 0), -ENOENT);
	ck_assert_int_eq(lb_ftab_del(&t, SIZE), -ENOENT);
	ck_assert_int_eq(lb_ftab_del(&t, SIZE + 1), -ENOENT);
	for (i = 0; i < KEYS; i++) {
		memset(&keys[i], 0, sizeof(keys[i]));
		keys[i].proto = IPPROTO_TCP;
		if (i % 4 < 2) {
			/* IPv4, and IPv6 of the same bytes */
			keys[i].family = i % 4 == 0 ? 4 : 6;
			keys[i].sport = (uint16_t)(i / 4);
		} else {
			/* IPv6 differing in the destination's last byte */
			keys[i].family = 6;
			keys[i].src[15] = 1;
			keys[i].dst[15] = (uint8_t)i;
		}
		/* homes 60-63 and 0-1 only; every 7th key a twin of the
		 * previous one's whole hash */
		hash[i] = (i % 7 == 6) ? hash[i - 1] :
			(rng() & ~63u) | (uint32_t)((60 + i % 6) & 63);
		at[i] = -1;
	}
	for (step = 0; step < 20000; step++) {
		i = rng() % KEYS;
		if (at[i] < 0) {
			int32_t p = lb_ftab_add(&t, &keys[i], hash[i]);

			if (live == SIZE) {
				ck_assert_int_eq(p, -ENOSPC);
			} else {
				ck_assert_int_ge(p, 0);
				ck_assert_int_lt(p, SIZE);
				at[i] = p;
				live++;
				lb_ftab_flow(&t, (uint32_t)p)->svc_uid = i;
				lb_ftab_flow(&t, (uint32_t)p)->last = ~0ull - i;
			}
		} else {
			ck_assert_int_eq(lb_ftab_add(&t, &keys[i], hash[i]),
				at[i]);
			ck_assert_int_eq(lb_ftab_del(&t, (uint32_t)at[i]), 0);
			ck_assert_int_eq(lb_ftab_del(&t, (uint32_t)at[i]),
				-ENOENT);
			at[i] = -1;
			live--;
		}
		ck_assert_uint_eq(t.n_free, SIZE - live);
		for (i = 0; i < KEYS; i++) {
			int32_t p = lb_ftab_lookup(&t, &keys[i], hash[i]);

			REQUIRE(p == (at[i] >= 0 ? at[i] : -ENOENT));
			if (p >= 0) {
				const struct lb_flow *f =
					lb_ftab_flow(&t, (uint32_t)p);

				REQUIRE(f->svc_uid == i && f->last == ~0ull - i);
				REQUIRE(t.sig[p] == hash[i]);
			}
		}
	}
	ftab_drop(&t);
}
END_TEST

/* Crafted flows cannot make lookups long: at most LB_FTAB_MAX_TWINS
 * flows of one hash, none LB_FTAB_MAX_PROBE slots or more past its home;
 * the rest is refused as when the table is full (flow_table_full, the
 * stateless choice), and room comes back with a delete. */
START_TEST(test_flow_table_bounds_crafted_hashes)
{
	enum { SLOTS = 512, SIZE = 384, KEYS = 200 };
	struct lb_ftab t;
	struct lb_flow_key keys[KEYS];
	int32_t at[KEYS];
	unsigned int i, added = 0;

	ftab_make(&t, SLOTS, SIZE);
	for (i = 0; i < KEYS; i++) {
		memset(&keys[i], 0, sizeof(keys[i]));
		keys[i].family = 4;
		keys[i].proto = IPPROTO_TCP;
		keys[i].sport = (uint16_t)(i + 1);
	}
	/* one whole hash: LB_FTAB_MAX_TWINS flows, then refused */
	for (i = 0; i < 20; i++) {
		at[i] = lb_ftab_add(&t, &keys[i], 0xabcd0007u);
		if (i < LB_FTAB_MAX_TWINS)
			ck_assert_int_ge(at[i], 0);
		else
			ck_assert_int_eq(at[i], -ENOSPC);
	}
	for (i = 0; i < 20; i++)
		ck_assert_int_eq(lb_ftab_lookup(&t, &keys[i], 0xabcd0007u),
			i < LB_FTAB_MAX_TWINS ? at[i] : -ENOENT);
	/* a delete makes room for one more twin */
	ck_assert_int_eq(lb_ftab_del(&t, (uint32_t)at[0]), 0);
	ck_assert_int_ge(lb_ftab_add(&t, &keys[LB_FTAB_MAX_TWINS],
		0xabcd0007u), 0);
	ck_assert_int_eq(lb_ftab_add(&t, &keys[LB_FTAB_MAX_TWINS + 1],
		0xabcd0007u), -ENOSPC);
	/* distinct hashes of one home (slot 7): the run stops at
	 * LB_FTAB_MAX_PROBE slots from it */
	for (i = 20; i < KEYS; i++) {
		uint32_t h = (uint32_t)i << 16 | 7;
		int32_t p = lb_ftab_add(&t, &keys[i], h);

		if (p >= 0) {
			added++;
			ck_assert_int_eq(lb_ftab_lookup(&t, &keys[i], h), p);
		} else {
			ck_assert_int_eq(p, -ENOSPC);
		}
	}
	ck_assert_uint_eq(added, LB_FTAB_MAX_PROBE - LB_FTAB_MAX_TWINS);
	ck_assert_uint_gt(t.n_free, 0);
	for (i = 0; i < SLOTS; i++)
		if (t.idx[i] != 0)
			ck_assert_uint_lt((i - ((uint32_t)(t.idx[i] >> 32) &
				t.mask)) & t.mask, LB_FTAB_MAX_PROBE);
	ftab_drop(&t);
}
END_TEST

/* The index's size (lb_ftab.h): a table of SIZE flows whose index may
 * reach SLOTS slots starts at MIN, doubles when half full and halves
 * when under 1/8 full, its flows moved a step at a time while adds,
 * deletes and lookups go on; every live key is found at its position
 * after each operation and each step, deleted ones are gone, a resize is
 * not started before the spare buffer is zero again. Filled, the index
 * is whole; drained, it is back at MIN with the other buffer zero.
 * Hashes crowd a few homes of the whole index (so that a resize changes
 * which keys share a cluster), some keys twins. */
START_TEST(test_flow_table_index_grows_and_shrinks_while_in_use)
{
	enum { SLOTS = 1024, MIN = 16, SIZE = 700, KEYS = 900 };
	static struct lb_flow_key keys[KEYS];
	static uint32_t hash[KEYS];
	static int32_t at[KEYS];
	struct lb_ftab t;
	uint64_t *big = calloc(SLOTS, sizeof(*big));
	uint64_t *half = calloc(SLOTS / 2, sizeof(*half));
	unsigned int i, step, live = 0, forgotten = 0;
	unsigned int grows_seen = 0, shrinks_seen = 0;
	uint32_t last_mask;

	ck_assert(big != NULL && half != NULL);
	ftab_make(&t, MIN, SIZE);
	free(t.idx);
	lb_ftab_index_init(&t, big, half, SLOTS, MIN);
	ck_assert_uint_eq(t.mask, MIN - 1);
	/* 1024 / 16 = 2^6: the whole index's buffer is the start's */
	ck_assert_ptr_eq(t.idx, big);
	ck_assert(!lb_ftab_resize_due(&t));
	last_mask = t.mask;
	for (i = 0; i < KEYS; i++) {
		memset(&keys[i], 0, sizeof(keys[i]));
		keys[i].family = 4;
		keys[i].proto = IPPROTO_UDP;
		keys[i].sport = (uint16_t)i;
		keys[i].dport = (uint16_t)(i >> 16);
		hash[i] = (i % 5 == 4) ? hash[i - 1] :
			(rng() & ~(uint32_t)(SLOTS - 1)) |
			(rng() % 4 == 0 ? (uint32_t)(i % 8) * 97 :
			 (rng() & (SLOTS - 1)));
		at[i] = -1;
	}
	for (step = 0; step < 90000; step++) {
		/* fill towards SIZE, churn, then drain to a few */
		bool add = step < 20000 ? rng() % 8 != 0 :
			step < 40000 ? rng() % 2 == 0 : rng() % 64 == 0;
		int32_t p;

		i = rng() % KEYS;
		if (add && at[i] < 0) {
			p = lb_ftab_add(&t, &keys[i], hash[i]);
			if (p >= 0) {
				at[i] = p;
				live++;
				lb_ftab_flow(&t, (uint32_t)p)->svc_uid = i;
			} else {
				REQUIRE(p == -ENOSPC);
			}
		} else if (!add && at[i] >= 0) {
			REQUIRE(lb_ftab_del(&t, (uint32_t)at[i]) == 0);
			REQUIRE(lb_ftab_del(&t, (uint32_t)at[i]) == -ENOENT);
			at[i] = -1;
			live--;
		}
		/* a step every other operation, 3 positions (the lcore's
		 * 256 would move this table's in one): resizes overlap
		 * the churn */
		if (step % 2 == 0) {
			bool was_dirty = t.dirty != 0, was_old = t.old != NULL;

			p = lb_ftab_resize_step(&t, 3);
			if (p >= 0) {
				unsigned int k = lb_ftab_flow(&t,
					(uint32_t)p)->svc_uid;

				REQUIRE(at[k] == p);
				REQUIRE(lb_ftab_del(&t, (uint32_t)p) == 0);
				at[k] = -1;
				live--;
				forgotten++;
			}
			if (t.mask != last_mask) {
				/* a resize starts only from a clean state */
				REQUIRE(!was_dirty && !was_old);
				if (t.mask > last_mask) {
					REQUIRE(t.mask == last_mask * 2 + 1);
					grows_seen++;
				} else {
					REQUIRE(t.mask == last_mask / 2);
					shrinks_seen++;
				}
				last_mask = t.mask;
			}
		}
		REQUIRE(t.n_free == SIZE - live);
		REQUIRE(t.mask <= SLOTS - 1 && t.mask >= MIN - 1);
		if (step == 40000) {
			/* filled: the index whole */
			REQUIRE(t.mask == SLOTS - 1 && t.idx == big);
			REQUIRE(grows_seen == 6 && shrinks_seen == 0);
		}
		if (step % 7 != 0 && t.old == NULL)
			continue;
		for (i = 0; i < KEYS; i++) {
			p = lb_ftab_lookup(&t, &keys[i], hash[i]);
			REQUIRE(p == (at[i] >= 0 ? at[i] : -ENOENT));
			if (p >= 0) {
				REQUIRE(lb_ftab_flow(&t, (uint32_t)p)->svc_uid
					== i);
				/* the slot pass's candidate: a position of the
				 * same hash */
				p = lb_ftab_candidate(&t, hash[i]);
				REQUIRE(p >= 0 && t.sig[p] == hash[i]);
			}
		}
	}
	ck_assert_uint_gt(shrinks_seen, 0);
	/* drained: back at MIN, the whole index's buffer zeroed */
	for (i = 0; i < KEYS; i++)
		if (at[i] >= 0)
			REQUIRE(lb_ftab_del(&t, (uint32_t)at[i]) == 0);
	for (i = 0; i < 100000 && lb_ftab_resize_due(&t); i++)
		REQUIRE(lb_ftab_resize_step(&t, 3) < 0);
	ck_assert(!lb_ftab_resize_due(&t));
	ck_assert_uint_eq(t.mask, MIN - 1);
	ck_assert_ptr_eq(t.idx, big);
	ck_assert_uint_eq(t.grows, t.shrinks);
	for (i = 0; i < SLOTS / 2; i++)
		REQUIRE(half[i] == 0);
	for (i = 0; i < SLOTS; i++)
		REQUIRE(big[i] == 0);
	/* random hashes this crowded leave none out */
	ck_assert_uint_eq(forgotten, 0);
	ftab_drop(&t);
	free(half);
}
END_TEST

START_TEST(test_full_flow_table_counts_and_sends_new_flows_to_the_maglev_choice)
{
	static const char *const addrs[] = { "10.1.0.1", "10.1.0.2", "10.1.0.3" };
	struct pa_lb_maglev_backend mb[3];
	uint32_t keys[3];
	uint16_t table[1021];
	json_int_t full = 0, now_full;
	unsigned int i, n_full = 0, b;

	setup_lb("{'name': 'rr4', 'vip': '10.0.0.50', 'port': 80, 'proto': 'tcp',"
		" 'forward': 'ipip', 'scheduler': 'rr', 'table_size': 1021,"
		" 'backends': [{'addr': '10.1.0.1'}, {'addr': '10.1.0.2'},"
		" {'addr': '10.1.0.3'}]}");
	for (b = 0; b < 3; b++) {
		keys[b] = ip4(addrs[b]);
		mb[b].key = (const uint8_t *)&keys[b];
		mb[b].key_len = 4;
		mb[b].weight = 1;
	}
	ref_maglev(mb, 3, 1021, table);
	for (i = 0; i < 1200; i++) {
		char src[32];
		struct pa_test_frame f;
		struct rte_mbuf *m;
		uint32_t hash, dst;

		snprintf(src, sizeof(src), "198.51.%u.%u", 100 + i / 200,
			1 + i % 200);
		frame_l4(&f, src, "10.0.0.50", IPPROTO_TCP, (uint16_t)(20000 + i),
			80, TCP_SYN, 0);
		m = mbuf_of(&f);
		hash = pa_pkt_meta(m)->hash;
		ck_assert_uint_eq(process1(m, T0), PA_LB_V_FORWARD);
		memcpy(&dst, rte_pktmbuf_mtod(m, uint8_t *) + 30, 4);
		rte_pktmbuf_free(m);
		now_full = lb_stat("flow_table_full");
		if (now_full == full)
			continue;
		ck_assert_int_eq(now_full, full + 1);
		full = now_full;
		n_full++;
		ck_assert_msg(dst == keys[table[hash % 1021]],
			"flow %u: not the Maglev choice", i);
		/* and it sticks there */
		ck_assert_uint_eq(send_ipip4(&f, T0 + 1), dst);
		full = lb_stat("flow_table_full");
	}
	printf("flow table of 1024: %u of 1200 flows found it full\n", n_full);
	ck_assert_uint_gt(n_full, 1200 - 1024 - 1);
	ck_assert_int_eq(lb_stat("flows"), lb_stat("flows_created"));
	ck_assert_int_eq(lb_stat("flows_created") + n_full, 1200);
	ck_assert_int_eq(lb_stat("no_backend"), 0);
}
END_TEST

/* Fragments of one UDP datagram from @p src: the first with the UDP
 * header (to @p dport), two later ones. */
static void
frags4(const char *src, const char *vip, uint16_t dport, uint16_t id,
		struct pa_test_frame f[3])
{
	unsigned int i;

	for (i = 0; i < 3; i++) {
		frame_eth(&f[i], 0, RTE_ETHER_TYPE_IPV4);
		frame_ipv4(&f[i], src, vip, IPPROTO_UDP, 0,
			(uint16_t)((i < 2 ? IP4_MF : 0) | (i * 3)), id);
		if (i == 0) {
			frame_udp(&f[i], (uint16_t)(3000 + id), dport);
			pa_test_put16(f[i].b + f[i].l4 + 4, 8 + 16 + 24 + 24);
			frame_payload(&f[i], 16, 1);
			f[i].l4 = -1;
		} else {
			frame_payload(&f[i], 24, (uint8_t)i);
		}
		frame_fix(&f[i]);
	}
}

static void
frags6(const char *src, const char *vip, uint16_t dport, uint32_t id,
		struct pa_test_frame f[3])
{
	unsigned int i;

	for (i = 0; i < 3; i++) {
		frame_eth(&f[i], 0, RTE_ETHER_TYPE_IPV6);
		frame_ipv6(&f[i], src, vip, 44, 0);
		frame_frag6(&f[i], IPPROTO_UDP, (uint16_t)(i * 3), i < 2, id);
		if (i == 0) {
			frame_udp(&f[i], (uint16_t)(3000 + id), dport);
			pa_test_put16(f[i].b + f[i].l4 + 4, 8 + 16 + 24 + 24);
			frame_payload(&f[i], 16, 1);
			f[i].l4 = -1;
		} else {
			frame_payload(&f[i], 24, (uint8_t)i);
		}
		frame_fix(&f[i]);
	}
}

#define SVC_FRAG4 \
	"{'name': 'dns4', 'vip': '10.0.0.40', 'port': 53, 'proto': 'udp'," \
	" 'forward': 'ipip', 'backends': [{'addr': '10.4.0.1'}, {'addr': '10.4.0.2'}," \
	" {'addr': '10.4.0.3'}, {'addr': '10.4.0.4'}]}," \
	"{'name': 'ntp4', 'vip': '10.0.0.40', 'port': 123, 'proto': 'udp'," \
	" 'forward': 'ipip', 'backends': [{'addr': '10.5.0.1'}, {'addr': '10.5.0.2'}]}," \
	"{'name': 'dns6', 'vip': '2001:db8:40::40', 'port': 53, 'proto': 'udp'," \
	" 'forward': 'ipip', 'backends': [{'addr': '2001:db8:4::1'}," \
	" {'addr': '2001:db8:4::2'}, {'addr': '2001:db8:4::3'}]}"

/* Send the fragments; all must go to one backend, the one trace names
 * for a fragment of service @p svc. */
static void
check_frags(struct pa_test_frame f[3], const char *svc, bool v6)
{
	struct pa_lb_trace_result tr;
	struct pa_flow_key k = key_of(&f[0]);
	uint8_t first[16], o16[16];
	unsigned int i, alen = v6 ? 16 : 4;

	ck_assert_int_eq(pa_lb_trace(lb, &k, true, &tr), 0);
	ck_assert(tr.service_found);
	ck_assert_str_eq(tr.service, svc);
	ck_assert(tr.backend_found);
	ck_assert(!tr.existing_flow);
	for (i = 0; i < 3; i++) {
		struct rte_mbuf *m = mbuf_of(&f[i]);
		const uint8_t *o;

		ck_assert(pa_pkt_meta(m)->flags & PA_PKT_F_FRAG);
		ck_assert_uint_eq(process1(m, T0 + i), PA_LB_V_FORWARD);
		o = rte_pktmbuf_mtod(m, const uint8_t *);
		ck_assert_uint_eq(rte_pktmbuf_pkt_len(m), f[i].len + (v6 ? 40 : 20));
		memcpy(o16, o + 14 + (v6 ? 24 : 16), alen);
		if (i == 0)
			memcpy(first, o16, alen);
		else
			ck_assert_msg(memcmp(first, o16, alen) == 0,
				"fragment %u went elsewhere", i);
		ck_assert(memcmp(o + 14 + (v6 ? 40 : 20), f[i].b + 14,
			f[i].len - 14) == 0);
		rte_pktmbuf_free(m);
	}
	ck_assert(memcmp(first, v6 ? (const uint8_t *)&tr.backend.v6 :
		(const uint8_t *)&tr.backend.v4, alen) == 0);
}

START_TEST(test_fragments_of_a_datagram_go_to_one_backend_without_a_flow_entry)
{
	struct pa_test_frame f[3];
	unsigned int i;
	char src[64];

	setup_lb(SVC_FRAG4);
	for (i = 0; i < 20; i++) {
		snprintf(src, sizeof(src), "198.51.100.%u", 1 + i);
		frags4(src, "10.0.0.40", 53, (uint16_t)(100 + i), f);
		check_frags(f, "dns4", false);
		snprintf(src, sizeof(src), "2001:db8:99::%x", 1 + i);
		frags6(src, "2001:db8:40::40", 53, 100 + i, f);
		check_frags(f, "dns6", true);
	}
	ck_assert_int_eq(lb_stat("fragments"), 20 * 6);
	ck_assert_int_eq(lb_stat("flows"), 0);
	ck_assert_int_eq(lb_stat("flows_created"), 0);
}
END_TEST

START_TEST(test_fragments_go_to_the_lowest_port_service_of_their_vip_and_protocol)
{
	struct pa_test_frame f[3];

	setup_lb(SVC_FRAG4);
	frags4("198.51.100.9", "10.0.0.40", 123, 7, f);
	check_frags(f, "dns4", false);
}
END_TEST

START_TEST(test_service_with_all_backends_down_gives_no_backend)
{
	struct rte_mbuf *m;
	struct pa_test_frame f;

	setup_lb("{'name': 'dead', 'vip': '10.0.0.60', 'port': 80, 'proto': 'tcp',"
		" 'forward': 'ipip', 'backends': [{'addr': '10.1.0.1', 'state': 'down'},"
		" {'addr': '10.1.0.2', 'state': 'down'}]}," SVC_WEB4);
	frame_l4(&f, "198.51.100.7", "10.0.0.60", IPPROTO_TCP, 1234, 80,
		TCP_SYN, 0);
	m = mbuf_of(&f);
	ck_assert_uint_eq(process1(m, T0), PA_LB_V_NO_BACKEND);
	rte_pktmbuf_free(m);
	ck_assert_int_eq(lb_stat("no_backend"), 1);
	ck_assert_int_eq(lb_stat("flows"), 0);

	/* a working service whose backends all go down */
	frame_l4(&f, "198.51.100.7", "10.0.0.10", IPPROTO_TCP, 1234, 80,
		TCP_SYN, 0);
	send_ipip4(&f, T0);
	ck_assert_int_eq(set_state("web4", "10.1.0.1", PA_LB_DOWN), 0);
	ck_assert_int_eq(set_state("web4", "10.1.0.2", PA_LB_DOWN), 0);
	ck_assert_int_eq(set_state("web4", "10.1.0.3", PA_LB_DOWN), 0);
	m = mbuf_of(&f);
	ck_assert_uint_eq(process1(m, T0 + 1), PA_LB_V_NO_BACKEND);
	rte_pktmbuf_free(m);
	ck_assert_int_eq(lb_stat("no_backend"), 2);
}
END_TEST

static void
check_untouched(const struct pa_test_frame *f)
{
	struct rte_mbuf *m = mbuf_of(f);

	REQUIRE(process1(m, T0) == PA_LB_V_FORWARD);
	REQUIRE(rte_pktmbuf_pkt_len(m) == f->len);
	REQUIRE(memcmp(rte_pktmbuf_mtod(m, const uint8_t *), f->b, f->len) == 0);
	rte_pktmbuf_free(m);
}

START_TEST(test_non_vip_traffic_and_icmp_echo_replies_to_the_vip_are_untouched)
{
	struct pa_test_frame f;

	setup_lb(SVC_WEB4 "," SVC_NAT4);
	/* the service port, another address */
	frame_l4(&f, "198.51.100.7", "10.0.0.99", IPPROTO_TCP, 1234, 80,
		TCP_SYN, 5);
	check_untouched(&f);
	/* the VIP, another port */
	frame_l4(&f, "198.51.100.7", "10.0.0.10", IPPROTO_TCP, 1234, 81,
		TCP_SYN, 5);
	check_untouched(&f);
	/* the VIP and port, another protocol */
	frame_l4(&f, "198.51.100.7", "10.0.0.10", IPPROTO_UDP, 1234, 80, 0, 5);
	check_untouched(&f);
	/* ICMP to the VIP that is neither an echo request nor an error
	 * (an echo reply) */
	frame_eth(&f, 0, RTE_ETHER_TYPE_IPV4);
	frame_ipv4(&f, "198.51.100.7", "10.0.0.10", IPPROTO_ICMP, 0, 0, 1);
	frame_icmp(&f);
	frame_payload(&f, 16, 2);
	frame_fix(&f);
	check_untouched(&f);
	/* IPv6 to a VIP-looking address */
	frame_l4(&f, "2001:db8:99::7", "::ffff:10.0.0.10", IPPROTO_TCP, 1234, 80,
		TCP_SYN, 5);
	check_untouched(&f);
	/* not IP */
	frame_eth(&f, 0, RTE_ETHER_TYPE_ARP);
	frame_payload(&f, 46, 0);
	check_untouched(&f);
	ck_assert_int_eq(lb_stat("balanced"), 0);
	ck_assert_int_eq(lb_stat("flows"), 0);
}
END_TEST

/* ------------------------------------------------------------------ */
/* ICMP for VIPs, path MTU, MSS clamp                                  */
/* ------------------------------------------------------------------ */

/* The ICMP (IPv4) or ICMPv6 checksum of the packet at @p l3 (no
 * extension headers), computed afresh: 0 when the packet's is right. */
static uint16_t
icmp_csum_check(const uint8_t *l3)
{
	uint32_t s = 0, len;
	uint8_t ph[8];

	if ((l3[0] >> 4) == 4) {
		len = pa_test_get16(l3 + 2) - (l3[0] & 0xfu) * 4;
		return pa_test_csum_fold(pa_test_sum16(l3 + (l3[0] & 0xfu) * 4,
			len, 0));
	}
	len = pa_test_get16(l3 + 4);
	memset(ph, 0, sizeof(ph));
	pa_test_put32(ph, len);
	ph[7] = IPPROTO_ICMPV6;
	s = pa_test_sum16(l3 + 8, 32, s);
	s = pa_test_sum16(ph, 8, s);
	s = pa_test_sum16(l3 + 40, len, s);
	return pa_test_csum_fold(s);
}

/* An ICMP echo request @p src -> @p dst. */
static void
frame_echo(struct pa_test_frame *f, const char *src, const char *dst)
{
	bool v6 = strchr(src, ':') != NULL;
	uint8_t *icmp;

	frame_eth(f, 0, v6 ? RTE_ETHER_TYPE_IPV6 : RTE_ETHER_TYPE_IPV4);
	if (v6)
		frame_ipv6(f, src, dst, IPPROTO_ICMPV6, 0);
	else
		frame_ipv4(f, src, dst, IPPROTO_ICMP, 0, 0, 1);
	pa_test_frame_icmp(f, v6 ? 128 : 8, 0x1234);
	frame_payload(f, 24, 3);
	frame_fix(f);
	icmp = f->b + f->l4;
	pa_test_put16(icmp + 2, 0);
	pa_test_put16(icmp + 2, icmp_csum_check(f->b + f->l3));
	REQUIRE(icmp_csum_check(f->b + f->l3) == 0);
}

static void
check_echo_reply(const char *client, const char *vip)
{
	struct pa_test_frame f;
	struct rte_mbuf *m;
	const uint8_t *o, *l3, *i3;
	bool v6 = strchr(client, ':') != NULL;
	unsigned int alen = v6 ? 16 : 4, sa = v6 ? 8 : 12, da = v6 ? 24 : 16;

	frame_echo(&f, client, vip);
	m = mbuf_of(&f);
	ck_assert_int_eq(process1(m, T0), PA_LB_V_FORWARD);
	ck_assert_uint_eq(rte_pktmbuf_pkt_len(m), f.len);
	o = rte_pktmbuf_mtod(m, const uint8_t *);
	l3 = o + 14;
	i3 = f.b + 14;
	/* back to the sender's MAC (no port known: from the MAC it was
	 * sent to) */
	ck_assert_mem_eq(o, mac_peer, 6);
	ck_assert_mem_eq(o + 6, mac_me, 6);
	ck_assert_mem_eq(l3 + sa, i3 + da, alen);
	ck_assert_mem_eq(l3 + da, i3 + sa, alen);
	if (v6) {
		ck_assert_uint_eq(l3[7], 64);
		ck_assert_uint_eq(l3[40], 129);
		ck_assert_mem_eq(l3 + 41, i3 + 41, 1);
		ck_assert_mem_eq(l3 + 44, i3 + 44, f.len - 14 - 44);
	} else {
		ck_assert_uint_eq(l3[8], 64);
		ck_assert_uint_eq(pa_test_ip4_csum(l3), pa_test_get16(l3 + 10));
		ck_assert_uint_eq(l3[20], 0);
		ck_assert_mem_eq(l3 + 24, i3 + 24, f.len - 14 - 24);
	}
	ck_assert_uint_eq(icmp_csum_check(l3), 0);
	rte_pktmbuf_free(m);
}

START_TEST(test_echo_request_to_a_vip_is_answered_in_place_with_checksums_right)
{
	setup_lb(SVC_WEB4 "," SVC_WEB6);
	check_echo_reply("198.51.100.7", "10.0.0.10");
	check_echo_reply("2001:db8:99::7", "2001:db8:10::10");
	ck_assert_int_eq(lb_stat("icmp_echo_replies"), 2);
	/* not to a VIP: untouched */
	{
		struct pa_test_frame f;

		frame_echo(&f, "198.51.100.7", "10.0.0.99");
		check_untouched(&f);
	}
	ck_assert_int_eq(lb_stat("icmp_echo_replies"), 2);
}
END_TEST

START_TEST(test_echo_request_to_a_vip_passes_untouched_with_icmp_echo_false)
{
	struct pa_test_frame f;

	lb_extra = " 'icmp_echo': false,";
	setup_lb(SVC_WEB4 "," SVC_WEB6);
	lb_extra = "";
	frame_echo(&f, "198.51.100.7", "10.0.0.10");
	check_untouched(&f);
	frame_echo(&f, "2001:db8:99::7", "2001:db8:10::10");
	check_untouched(&f);
	ck_assert_int_eq(lb_stat("icmp_echo_replies"), 0);
}
END_TEST

START_TEST(test_echo_request_from_a_group_or_zero_mac_is_not_answered)
{
	static const uint8_t group[6] = { 0x01, 0x00, 0x5e, 0, 0, 1 };
	static const uint8_t zero[6];
	struct pa_test_frame f;

	setup_lb(SVC_WEB4 "," SVC_WEB6);
	frame_echo(&f, "198.51.100.7", "10.0.0.10");
	memcpy(f.b + 6, group, 6);
	check_untouched(&f);
	frame_echo(&f, "2001:db8:99::7", "2001:db8:10::10");
	memcpy(f.b + 6, zero, 6);
	check_untouched(&f);
	ck_assert_int_eq(lb_stat("icmp_echo_replies"), 0);
}
END_TEST

/*
 * An ICMP error from router @p router to @p vip quoting the packet
 * vip:vport -> client:cport (@p proto) the VIP sent, @p type / @p code
 * (IPv4: 3/4 frag needed with MTU 1400; IPv6: 2 packet too big).
 */
static void
frame_quoted_error(struct pa_test_frame *f, const char *router,
		const char *vip, uint16_t vport, const char *client,
		uint16_t cport, uint8_t proto)
{
	bool v6 = strchr(vip, ':') != NULL;
	struct pa_test_frame q;
	uint8_t *icmp;
	unsigned int qlen;

	/* the quoted packet, as the VIP sent it (TTL 50, DF) */
	frame_l4(&q, vip, client, proto, vport, cport, TCP_SYN | 0x10, 100);
	qlen = q.len - 14;
	frame_eth(f, 0, v6 ? RTE_ETHER_TYPE_IPV6 : RTE_ETHER_TYPE_IPV4);
	if (v6)
		frame_ipv6(f, router, vip, IPPROTO_ICMPV6, 0);
	else
		frame_ipv4(f, router, vip, IPPROTO_ICMP, 0, 0, 9);
	pa_test_frame_icmp(f, v6 ? 2 : 3, 0);
	icmp = f->b + f->l4;
	icmp[1] = v6 ? 0 : 4;
	pa_test_put32(icmp + 4, 1400);
	memcpy(pa_test_frame_grow(f, qlen), q.b + 14, qlen);
	/* the builder's fix must not touch the quote: lengths by hand */
	if (v6)
		pa_test_put16(f->b + f->l3 + 4, (uint16_t)(8 + qlen));
	else {
		pa_test_put16(f->b + f->l3 + 2, (uint16_t)(20 + 8 + qlen));
		pa_test_put16(f->b + f->l3 + 10, 0);
		pa_test_put16(f->b + f->l3 + 10, pa_test_ip4_csum(f->b + f->l3));
	}
	pa_test_put16(icmp + 2, 0);
	pa_test_put16(icmp + 2, icmp_csum_check(f->b + f->l3));
}

/* Send a quoted error; @return the verdict and, in @p m_out, the mbuf
 * (NULL when dropped). */
static uint8_t
send_error(const struct pa_test_frame *f, struct rte_mbuf **m_out)
{
	struct rte_mbuf *m = mbuf_of(f);
	uint8_t v = process1(m, T0 + hz);

	if (v != PA_LB_V_FORWARD) {
		rte_pktmbuf_free(m);
		m = NULL;
	}
	*m_out = m;
	return v;
}

START_TEST(test_quoted_error_goes_to_the_flows_backend_for_100_flows)
{
	unsigned int i, rr_used[3] = { 0 };
	struct pa_test_frame f;
	struct rte_mbuf *m;
	char client[32];
	uint32_t be, dst;
	const uint8_t *o;

	/* rr: the flow's backend is not the Maglev choice in general, so
	 * only the flow table can give it */
	setup_lb("{'name': 'web4', 'vip': '10.0.0.10', 'port': 80, 'proto': 'tcp',"
		" 'scheduler': 'rr', 'forward': 'ipip', 'backends': [{'addr': '10.1.0.1'},"
		" {'addr': '10.1.0.2'}, {'addr': '10.1.0.3'}]}");
	for (i = 0; i < 100; i++) {
		be = web4_flow(i, TCP_SYN, T0);
		rr_used[(rte_be_to_cpu_32(be) & 0xff) - 1]++;
		snprintf(client, sizeof(client), "198.51.%u.%u", 100 + i / 200,
			1 + i % 200);
		frame_quoted_error(&f, "203.0.113.1", "10.0.0.10", 80, client,
			(uint16_t)(20000 + i), IPPROTO_TCP);
		ck_assert_int_eq(send_error(&f, &m), PA_LB_V_FORWARD);
		o = rte_pktmbuf_mtod(m, const uint8_t *);
		ck_assert_uint_eq(rte_pktmbuf_pkt_len(m), f.len + 20);
		ck_assert_uint_eq(o[14 + 9], IPPROTO_IPIP);
		memcpy(&dst, o + 14 + 16, 4);
		ck_assert_msg(dst == be, "flow %u: error to %08x, flow to %08x",
			i, dst, be);
		/* the error itself, byte for byte, inside */
		ck_assert_mem_eq(o + 14 + 20, f.b + 14, f.len - 14);
		rte_pktmbuf_free(m);
	}
	ck_assert_uint_gt(rr_used[0], 0);
	ck_assert_uint_gt(rr_used[1], 0);
	ck_assert_int_eq(lb_stat("icmp_errors_forwarded"), 100);
	ck_assert_int_eq(lb_stat("flows"), 100);
}
END_TEST

START_TEST(test_quoted_error_without_a_flow_gets_the_flows_maglev_choice)
{
	struct pa_test_frame f, p;
	struct pa_lb_trace_result r;
	struct pa_flow_key k;
	struct rte_mbuf *m;
	unsigned int i;
	char client[48];
	const uint8_t *o;

	setup_lb(SVC_WEB4 "," SVC_WEB6);
	for (i = 0; i < 50; i++) {
		bool v6 = i & 1;

		if (v6)
			snprintf(client, sizeof(client), "2001:db8:99::%x", i + 1);
		else
			snprintf(client, sizeof(client), "198.51.100.%u", i + 1);
		/* the flow's 5-tuple, as trace_packet is asked */
		frame_l4(&p, client, v6 ? "2001:db8:10::10" : "10.0.0.10",
			IPPROTO_TCP, (uint16_t)(30000 + i), v6 ? 443 : 80,
			TCP_SYN, 0);
		k = key_of(&p);
		ck_assert_int_eq(pa_lb_trace(lb, &k, false, &r), 0);
		ck_assert(r.backend_found);
		frame_quoted_error(&f, v6 ? "2001:db8:ff::1" : "203.0.113.1",
			v6 ? "2001:db8:10::10" : "10.0.0.10", v6 ? 443 : 80,
			client, (uint16_t)(30000 + i), IPPROTO_TCP);
		ck_assert_int_eq(send_error(&f, &m), PA_LB_V_FORWARD);
		o = rte_pktmbuf_mtod(m, const uint8_t *);
		if (v6)
			ck_assert_mem_eq(o + 14 + 24, r.backend.v6.s6_addr, 16);
		else
			ck_assert_mem_eq(o + 14 + 16, &r.backend.v4, 4);
		rte_pktmbuf_free(m);
	}
	/* no flow was made by an error */
	ck_assert_int_eq(lb_stat("flows"), 0);
}
END_TEST

START_TEST(test_quoted_error_about_a_nat_reply_is_natted_to_the_backend)
{
	struct pa_test_frame f, p;
	struct rte_mbuf *m;
	const uint8_t *o, *l3, *q;
	uint8_t be[4];
	unsigned int k;
	const char *vip[] = { "10.0.0.20", "2001:db8:20::20" };
	const char *cl[] = { "198.51.100.9", "2001:db8:99::9" };

	setup_lb(SVC_NAT4 "," SVC_NAT6);
	for (k = 0; k < 2; k++) {
		bool v6 = k == 1;
		unsigned int sa = v6 ? 8 : 12, da = v6 ? 24 : 16;
		unsigned int alen = v6 ? 16 : 4, qoff = v6 ? 48 : 28;
		uint8_t proto = IPPROTO_UDP;

		/* the flow: client -> VIP:53 (udp) */
		frame_l4(&p, cl[k], vip[k], proto, 4444, 53, 0, 20);
		m = mbuf_of(&p);
		ck_assert_int_eq(process1(m, T0), PA_LB_V_FORWARD);
		o = rte_pktmbuf_mtod(m, const uint8_t *);
		memcpy(be, o + 14 + da, 4);
		rte_pktmbuf_free(m);
		frame_quoted_error(&f, v6 ? "2001:db8:ff::1" : "203.0.113.1",
			vip[k], 53, cl[k], 4444, proto);
		ck_assert_int_eq(send_error(&f, &m), PA_LB_V_FORWARD);
		o = rte_pktmbuf_mtod(m, const uint8_t *);
		l3 = o + 14;
		q = l3 + qoff;
		ck_assert_uint_eq(rte_pktmbuf_pkt_len(m), f.len);
		/* outer destination and quoted source: the backend, port 5353 */
		ck_assert_mem_eq(l3 + da, v6 ? (const uint8_t *)q + sa : be,
			v6 ? 16 : 4);
		ck_assert_mem_eq(q + sa, l3 + da, alen);
		ck_assert_uint_eq(pa_test_get16(q + (v6 ? 40 : 20)), 5353);
		ck_assert_mem_eq(q + da, f.b + 14 + qoff + da, alen);
		/* every checksum right */
		ck_assert_uint_eq(icmp_csum_check(l3), 0);
		if (!v6) {
			ck_assert_uint_eq(pa_test_ip4_csum(l3),
				pa_test_get16(l3 + 10));
			ck_assert_uint_eq(pa_test_ip4_csum(q),
				pa_test_get16(q + 10));
		}
		/* the quoted UDP checksum as the backend's datagram had it */
		ck_assert_uint_eq(pa_test_l4_csum(q),
			pa_test_get16(q + (v6 ? 40 : 20) + 6));
		rte_pktmbuf_free(m);
	}
	ck_assert_int_eq(lb_stat("icmp_errors_forwarded"), 2);
}
END_TEST

START_TEST(test_errors_quoting_garbage_or_no_service_are_dropped_and_counted)
{
	struct pa_test_frame f;
	struct rte_mbuf *m;
	uint8_t *q;

	setup_lb(SVC_WEB4);
	/* not a service port of the VIP */
	frame_quoted_error(&f, "203.0.113.1", "10.0.0.10", 81, "198.51.100.1",
		1000, IPPROTO_TCP);
	ck_assert_int_eq(send_error(&f, &m), PA_LB_V_ICMP_NO_SERVICE);
	/* quoting a packet from another address than the VIP */
	frame_quoted_error(&f, "203.0.113.1", "10.0.0.10", 80, "198.51.100.1",
		1000, IPPROTO_TCP);
	memcpy(f.b + 14 + 28 + 12, "\x0a\x00\x00\x63", 4);
	ck_assert_int_eq(send_error(&f, &m), PA_LB_V_ICMP_NO_SERVICE);
	/* a quoted total length shorter than its header + 8 */
	frame_quoted_error(&f, "203.0.113.1", "10.0.0.10", 80, "198.51.100.1",
		1000, IPPROTO_TCP);
	q = f.b + 14 + 28;
	pa_test_put16(q + 2, 24);
	ck_assert_int_eq(send_error(&f, &m), PA_LB_V_ICMP_BAD_QUOTE);
	/* an IHL beyond the quote */
	frame_quoted_error(&f, "203.0.113.1", "10.0.0.10", 80, "198.51.100.1",
		1000, IPPROTO_TCP);
	f.b[14 + 28] = 0x4f;
	f.len = 14 + 28 + 40;
	pa_test_put16(f.b + 14 + 2, 28 + 40);
	ck_assert_int_eq(send_error(&f, &m), PA_LB_V_ICMP_BAD_QUOTE);
	/* truncated: 12 bytes of quote */
	frame_quoted_error(&f, "203.0.113.1", "10.0.0.10", 80, "198.51.100.1",
		1000, IPPROTO_TCP);
	f.len = 14 + 28 + 12;
	pa_test_put16(f.b + 14 + 2, 28 + 12);
	ck_assert_int_eq(send_error(&f, &m), PA_LB_V_ICMP_BAD_QUOTE);
	/* an IPv6 header quoted in ICMPv4 */
	frame_quoted_error(&f, "203.0.113.1", "10.0.0.10", 80, "198.51.100.1",
		1000, IPPROTO_TCP);
	f.b[14 + 28] = 0x60;
	ck_assert_int_eq(send_error(&f, &m), PA_LB_V_ICMP_BAD_QUOTE);
	/* a later fragment */
	frame_quoted_error(&f, "203.0.113.1", "10.0.0.10", 80, "198.51.100.1",
		1000, IPPROTO_TCP);
	pa_test_put16(q + 6, 0x0010);
	ck_assert_int_eq(send_error(&f, &m), PA_LB_V_ICMP_BAD_QUOTE);
	ck_assert_int_eq(lb_stat("icmp_bad_quote"), 5);
	ck_assert_int_eq(lb_stat("icmp_no_service"), 2);
	ck_assert_int_eq(lb_stat("icmp_errors_forwarded"), 0);
}
END_TEST

/* lb_icmp_too_big() on a packet of @p size IP bytes. */
static void
check_too_big(bool v6, unsigned int payload, uint32_t mtu)
{
	struct pa_test_frame f;
	struct rte_mbuf *m;
	struct pa_pkt_meta *meta;
	const uint8_t *o, *l3, *icmp;
	unsigned int iph = v6 ? 40 : 20, qlen, ilen;

	frame_l4(&f, v6 ? "2001:db8:99::7" : "198.51.100.7",
		v6 ? "2001:db8:10::10" : "10.0.0.10", IPPROTO_TCP, 1234, 80,
		0x10, payload);
	frame_pad(&f, f.len + 4);	/* padding never quoted */
	ilen = f.len - 4 - 14;
	qlen = RTE_MIN(ilen, (v6 ? 1280u : 576u) - iph - 8);
	m = mbuf_of(&f);
	meta = pa_pkt_meta(m);
	ck_assert_int_eq(lb_icmp_too_big(m, meta, mtu, NULL), 0);
	o = rte_pktmbuf_mtod(m, const uint8_t *);
	l3 = o + 14;
	icmp = l3 + iph;
	ck_assert_uint_eq(rte_pktmbuf_pkt_len(m), 14 + iph + 8 + qlen);
	ck_assert_mem_eq(o, mac_peer, 6);
	ck_assert_mem_eq(o + 6, mac_me, 6);
	ck_assert_uint_eq(meta->l4_off, 14 + iph);
	if (v6) {
		ck_assert_uint_eq(l3[0] >> 4, 6);
		ck_assert_uint_eq(pa_test_get16(l3 + 4), 8 + qlen);
		ck_assert_uint_eq(l3[6], IPPROTO_ICMPV6);
		ck_assert_mem_eq(l3 + 8, f.b + 14 + 24, 16);	/* from the VIP */
		ck_assert_mem_eq(l3 + 24, f.b + 14 + 8, 16);	/* to the client */
		ck_assert_uint_eq(icmp[0], 2);
		ck_assert_uint_eq(icmp[1], 0);
		ck_assert_uint_eq((uint32_t)pa_test_get16(icmp + 4) << 16 |
			pa_test_get16(icmp + 6), RTE_MAX(mtu, 1280u));
		ck_assert_uint_eq(meta->l4_proto, IPPROTO_ICMPV6);
	} else {
		ck_assert_uint_eq(l3[0], 0x45);
		ck_assert_uint_eq(pa_test_get16(l3 + 2), 28 + qlen);
		ck_assert_uint_eq(l3[9], IPPROTO_ICMP);
		ck_assert_uint_eq(pa_test_ip4_csum(l3), pa_test_get16(l3 + 10));
		ck_assert_mem_eq(l3 + 12, f.b + 14 + 16, 4);
		ck_assert_mem_eq(l3 + 16, f.b + 14 + 12, 4);
		ck_assert_uint_eq(icmp[0], 3);
		ck_assert_uint_eq(icmp[1], 4);
		ck_assert_uint_eq(pa_test_get16(icmp + 4), 0);
		ck_assert_uint_eq(pa_test_get16(icmp + 6), mtu);
		ck_assert_uint_eq(meta->l4_proto, IPPROTO_ICMP);
	}
	ck_assert_uint_eq(icmp_csum_check(l3), 0);
	ck_assert_mem_eq(icmp + 8, f.b + 14, qlen);
	/* it parses as what it is */
	ck_assert_int_eq(pa_pkt_parse_mbuf(m), PA_PKT_OK);
	rte_pktmbuf_free(m);
}

START_TEST(test_frag_needed_and_packet_too_big_builders_field_by_field)
{
	check_too_big(false, 1460, 1480);
	check_too_big(false, 100, 1480);	/* shorter than 548: all quoted */
	check_too_big(true, 1440, 1460);
	check_too_big(true, 1440, 1000);	/* at least 1280 */
	check_too_big(true, 60, 1460);
}
END_TEST

/* A TCP header with options @p opt (@p olen bytes, a multiple of 4),
 * random ports/seq/payload, its checksum right. */
static unsigned int
mss_segment(uint8_t *l3, bool v6, const uint8_t *opt, unsigned int olen,
		unsigned int payload)
{
	unsigned int iph = v6 ? 40 : 20, tl = 20 + olen + payload, i;
	uint8_t *tcp = l3 + iph;

	memset(l3, 0, iph + tl);
	if (v6) {
		l3[0] = 0x60;
		pa_test_put16(l3 + 4, (uint16_t)tl);
		l3[6] = IPPROTO_TCP;
		l3[7] = 64;
		for (i = 8; i < 40; i++)
			l3[i] = (uint8_t)rng();
	} else {
		l3[0] = 0x45;
		pa_test_put16(l3 + 2, (uint16_t)(20 + tl));
		l3[8] = 64;
		l3[9] = IPPROTO_TCP;
		for (i = 12; i < 20; i++)
			l3[i] = (uint8_t)rng();
	}
	for (i = 0; i < 12; i++)
		tcp[i] = (uint8_t)rng();
	tcp[12] = (uint8_t)(((20 + olen) / 4) << 4);
	tcp[13] = TCP_SYN;
	memcpy(tcp + 20, opt, olen);
	for (i = 0; i < payload; i++)
		tcp[20 + olen + i] = (uint8_t)rng();
	pa_test_put16(tcp + 16, pa_test_l4_csum(l3));
	return iph + tl;
}

START_TEST(test_mss_clamp_checksum_equals_full_recomputation_for_many_cases)
{
	uint8_t l3[1600], opt[40];
	unsigned int n, i, olen, nops, at, payload, clamped = 0;
	uint16_t mss, clamp, got;
	bool v6;

	for (n = 0; n < 20000; n++) {
		v6 = n & 1;
		/* 0..3 NOPs first, so the MSS value lands at odd and even
		 * offsets, then other options around it */
		nops = rng() % 4;
		olen = 0;
		for (i = 0; i < nops; i++)
			opt[olen++] = 1;
		if (rng() % 3 == 0) {		/* SACK permitted first */
			opt[olen++] = 4;
			opt[olen++] = 2;
		}
		at = olen;
		mss = (uint16_t)rng();
		clamp = (uint16_t)(536 + rng() % 9000);
		opt[olen++] = 2;
		opt[olen++] = 4;
		opt[olen++] = (uint8_t)(mss >> 8);
		opt[olen++] = (uint8_t)mss;
		if (rng() % 2) {		/* window scale */
			opt[olen++] = 3;
			opt[olen++] = 3;
			opt[olen++] = 7;
		}
		while (olen % 4)
			opt[olen++] = 0;	/* end of options, padding */
		payload = rng() % 3 == 0 ? rng() % 64 : 0;
		mss_segment(l3, v6, opt, olen, payload);
		{
			uint8_t *tcp = l3 + (v6 ? 40 : 20);
			bool r = lb_mss_clamp(tcp, 20 + olen + payload, clamp);

			got = pa_test_get16(tcp + 20 + at + 2);
			ck_assert_int_eq(r, mss > clamp);
			ck_assert_uint_eq(got, mss > clamp ? clamp : mss);
			ck_assert_msg(pa_test_get16(tcp + 16) ==
				pa_test_l4_csum(l3) ||
				/* 0 and 0xffff are the same sum */
				(pa_test_get16(tcp + 16) == 0xffff &&
				 pa_test_l4_csum(l3) == 0) ||
				(pa_test_get16(tcp + 16) == 0 &&
				 pa_test_l4_csum(l3) == 0xffff),
				"case %u: mss %u clamp %u at %u: %04x != %04x",
				n, mss, clamp, at, pa_test_get16(tcp + 16),
				pa_test_l4_csum(l3));
			clamped += r;
		}
	}
	ck_assert_uint_gt(clamped, 1000);
}
END_TEST

START_TEST(test_mss_clamp_on_syns_to_the_service_and_nat_syn_acks)
{
	struct pa_test_frame f;
	struct rte_mbuf *m;
	const uint8_t *o, *tcp;
	static const uint8_t opt[8] = { 1, 2, 4, 0x23, 0x28, 1, 1, 0 };

	setup_lb("{'name': 'web4', 'vip': '10.0.0.10', 'port': 80, 'proto': 'tcp',"
		" 'forward': 'nat', 'mss_clamp': 1360, 'backends':"
		" [{'addr': '10.1.0.1', 'port': 8080}]}");
	/* a SYN with MSS 9000 (at an odd offset) */
	frame_eth(&f, 0, RTE_ETHER_TYPE_IPV4);
	frame_ipv4(&f, "198.51.100.7", "10.0.0.10", IPPROTO_TCP, 0, IP4_DF, 0);
	pa_test_frame_tcp(&f, 1234, 80, 7, TCP_SYN, 1, 8192);
	memcpy(f.b + f.l4 + 20, opt, 8);
	frame_fix(&f);
	m = mbuf_of(&f);
	ck_assert_int_eq(process1(m, T0), PA_LB_V_FORWARD);
	o = rte_pktmbuf_mtod(m, const uint8_t *);
	tcp = o + 14 + 20;
	ck_assert_uint_eq(pa_test_get16(tcp + 23), 1360);
	ck_assert_uint_eq(pa_test_get16(tcp + 16), pa_test_l4_csum(o + 14));
	rte_pktmbuf_free(m);
	/* its SYN-ACK back from the backend */
	frame_eth(&f, 0, RTE_ETHER_TYPE_IPV4);
	frame_ipv4(&f, "10.1.0.1", "198.51.100.7", IPPROTO_TCP, 0, IP4_DF, 0);
	pa_test_frame_tcp(&f, 8080, 1234, 7, TCP_SYN | 0x10, 1, 8192);
	memcpy(f.b + f.l4 + 20, opt, 8);
	frame_fix(&f);
	m = mbuf_of(&f);
	ck_assert_int_eq(process1(m, T0), PA_LB_V_FORWARD);
	o = rte_pktmbuf_mtod(m, const uint8_t *);
	tcp = o + 14 + 20;
	ck_assert_uint_eq(pa_test_get16(tcp), 80);
	ck_assert_uint_eq(pa_test_get16(tcp + 23), 1360);
	ck_assert_uint_eq(pa_test_get16(tcp + 16), pa_test_l4_csum(o + 14));
	rte_pktmbuf_free(m);
	/* not a SYN: left alone */
	frame_eth(&f, 0, RTE_ETHER_TYPE_IPV4);
	frame_ipv4(&f, "198.51.100.7", "10.0.0.10", IPPROTO_TCP, 0, IP4_DF, 0);
	pa_test_frame_tcp(&f, 1234, 80, 7, 0x10, 1, 8192);
	memcpy(f.b + f.l4 + 20, opt, 8);
	frame_fix(&f);
	m = mbuf_of(&f);
	ck_assert_int_eq(process1(m, T0), PA_LB_V_FORWARD);
	tcp = rte_pktmbuf_mtod(m, const uint8_t *) + 14 + 20;
	ck_assert_uint_eq(pa_test_get16(tcp + 23), 9000);
	rte_pktmbuf_free(m);
	ck_assert_int_eq(lb_stat("mss_clamped"), 2);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Schedulers                                                          */
/* ------------------------------------------------------------------ */

START_TEST(test_rr_alternates_over_the_up_backends)
{
	uint32_t be[12];
	unsigned int i;

	setup_lb("{'name': 'rr4', 'vip': '10.0.0.10', 'port': 80, 'proto': 'tcp',"
		" 'forward': 'ipip', 'scheduler': 'rr', 'backends':"
		" [{'addr': '10.1.0.1'}, {'addr': '10.1.0.2', 'state': 'down'},"
		" {'addr': '10.1.0.3'}]}");
	/* web4_flow() sends to 10.0.0.10:80, which this rr4 serves */
	for (i = 0; i < RTE_DIM(be); i++) {
		be[i] = web4_flow(i, TCP_SYN, T0);
		ck_assert(be[i] == ip4("10.1.0.1") || be[i] == ip4("10.1.0.3"));
		if (i >= 1)
			ck_assert_msg(be[i] != be[i - 1], "flow %u", i);
	}
	/* an old flow does not advance the cursor */
	ck_assert_uint_eq(web4_flow(0, TCP_ACK, T0 + 1), be[0]);
	ck_assert_uint_ne(web4_flow(100, TCP_SYN, T0 + 1), be[11]);
}
END_TEST

START_TEST(test_wrr_shares_of_new_flows_follow_the_weights)
{
	static const char *const addrs[] = { "10.1.0.1", "10.1.0.2", "10.1.0.3" };
	static const unsigned int w[] = { 1, 2, 3 };
	unsigned int cnt[3] = { 0 }, i, b;
	const unsigned int n = 2 * 1021;

	setup_lb_flows("{'name': 'wrr4', 'vip': '10.0.0.10', 'port': 80,"
		" 'proto': 'tcp', 'forward': 'ipip', 'scheduler': 'wrr',"
		" 'table_size': 1021, 'backends': [{'addr': '10.1.0.1', 'weight': 1},"
		" {'addr': '10.1.0.2', 'weight': 2}, {'addr': '10.1.0.3', 'weight': 3}]}",
		4096, 1);
	for (i = 0; i < n; i++) {
		uint32_t be = web4_flow(i, TCP_SYN, T0);

		for (b = 0; b < 3; b++)
			if (be == ip4(addrs[b]))
				cnt[b]++;
	}
	ck_assert_int_eq(lb_stat("flow_table_full"), 0);
	for (b = 0; b < 3; b++) {
		double exp = (double)n * w[b] / 6.0;

		ck_assert_msg(cnt[b] >= exp * 0.99 - 2 && cnt[b] <= exp * 1.01 + 2,
			"backend %s weight %u: %u flows, %.1f expected",
			addrs[b], w[b], cnt[b], exp);
	}
}
END_TEST

START_TEST(test_lc_picks_the_backend_with_fewest_flows_per_weight)
{
	unsigned int i, a = 0, b = 0;
	uint32_t be;

	setup_lb("{'name': 'lc4', 'vip': '10.0.0.10', 'port': 80, 'proto': 'tcp',"
		" 'forward': 'ipip', 'scheduler': 'lc', 'backends':"
		" [{'addr': '10.1.0.1'}, {'addr': '10.1.0.2'}]}");
	for (i = 0; i < 10; i++) {
		be = web4_flow(i, TCP_SYN, T0);
		a += be == ip4("10.1.0.1");
		b += be == ip4("10.1.0.2");
	}
	ck_assert_uint_eq(a, 5);
	ck_assert_uint_eq(b, 5);
	/* a new backend has the fewest flows: it gets every new one until
	 * it catches up */
	ck_assert_int_eq(add_backend("lc4", "{'addr': '10.1.0.3'}"), 0);
	for (i = 10; i < 15; i++)
		ck_assert_uint_eq(web4_flow(i, TCP_SYN, T0), ip4("10.1.0.3"));

	/* weights: 1 and 3 share 8 flows as 2 and 6 */
	setup_lb("{'name': 'lc4', 'vip': '10.0.0.10', 'port': 80, 'proto': 'tcp',"
		" 'forward': 'ipip', 'scheduler': 'lc', 'backends':"
		" [{'addr': '10.1.0.1', 'weight': 1}, {'addr': '10.1.0.2', 'weight': 3}]}");
	a = b = 0;
	for (i = 0; i < 8; i++) {
		be = web4_flow(i, TCP_SYN, T0);
		a += be == ip4("10.1.0.1");
		b += be == ip4("10.1.0.2");
	}
	ck_assert_uint_eq(a, 2);
	ck_assert_uint_eq(b, 6);
	/* flows that end make room: expire 10.1.0.2's by FIN + aging */
	for (i = 0; i < 8; i++)
		web4_flow(i, TCP_FIN | TCP_ACK, T0 + 1);
	sweep(T0 + 1 + TCP_FIN_TMO * hz + 1);
	ck_assert_int_eq(lb_stat("flows"), 0);
	a = b = 0;
	for (i = 100; i < 108; i++) {
		be = web4_flow(i, TCP_SYN, T0 + 20 * hz);
		a += be == ip4("10.1.0.1");
		b += be == ip4("10.1.0.2");
	}
	ck_assert_uint_eq(a, 2);
	ck_assert_uint_eq(b, 6);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Control, export, trace                                              */
/* ------------------------------------------------------------------ */

START_TEST(test_duplicate_service_name_or_vip_port_proto_is_eexist)
{
	char err[PA_CONFIG_ERR_MAX];
	struct pa_config_service svc;

	setup_lb(SVC_WEB4);
	service_of("{'name': 'web4', 'vip': '10.0.0.77', 'port': 80, 'proto': 'tcp',"
		" 'forward': 'ipip'}", &svc);
	ck_assert_int_eq(pa_lb_service_add(lb, &svc, err, sizeof(err)), -EEXIST);
	pa_lb_config_service_clear(&svc);
	service_of("{'name': 'other', 'vip': '10.0.0.10', 'port': 80, 'proto': 'tcp',"
		" 'forward': 'ipip'}", &svc);
	ck_assert_int_eq(pa_lb_service_add(lb, &svc, err, sizeof(err)), -EEXIST);
	pa_lb_config_service_clear(&svc);
	/* same VIP and port, the other protocol: a different service */
	service_of("{'name': 'other', 'vip': '10.0.0.10', 'port': 80, 'proto': 'udp',"
		" 'forward': 'ipip', 'backends': [{'addr': '10.1.0.9'}]}", &svc);
	ck_assert_int_eq(pa_lb_service_add(lb, &svc, err, sizeof(err)), 0);
	pa_lb_config_service_clear(&svc);
	ck_assert_int_eq(lb_stat("services"), 2);
}
END_TEST

START_TEST(test_unknown_service_or_backend_is_enoent_and_duplicate_backend_eexist)
{
	char err[PA_CONFIG_ERR_MAX];
	struct pa_config_backend be;
	struct pa_ip_addr a = addr_of("10.1.0.1"), x = addr_of("10.9.9.9");
	uint32_t w = 2;

	setup_lb(SVC_WEB4);
	backend_of("web4", "{'addr': '10.1.0.7'}", &be);
	ck_assert_int_eq(pa_lb_backend_add(lb, "nope", &be, err, sizeof(err)),
		-ENOENT);
	ck_assert_int_eq(pa_lb_backend_delete(lb, "nope", &a, err, sizeof(err)),
		-ENOENT);
	ck_assert_int_eq(pa_lb_backend_set(lb, "nope", &a, &w, NULL, err,
		sizeof(err)), -ENOENT);
	ck_assert_int_eq(pa_lb_service_delete(lb, "nope", err, sizeof(err)),
		-ENOENT);
	ck_assert_int_eq(pa_lb_backend_delete(lb, "web4", &x, err, sizeof(err)),
		-ENOENT);
	ck_assert_int_eq(pa_lb_backend_set(lb, "web4", &x, &w, NULL, err,
		sizeof(err)), -ENOENT);
	backend_of("web4", "{'addr': '10.1.0.1'}", &be);
	ck_assert_int_eq(pa_lb_backend_add(lb, "web4", &be, err, sizeof(err)),
		-EEXIST);
	ck_assert_int_eq(lb_stat("backends"), 3);
}
END_TEST

static const struct pa_config_service *
export_find(const struct pa_config_lb *x, const char *name)
{
	unsigned int i;

	for (i = 0; i < x->n_services; i++)
		if (strcmp(x->services[i].name, name) == 0)
			return &x->services[i];
	return NULL;
}

static bool
export_has_backend(const struct pa_config_service *s, const char *addr)
{
	struct pa_ip_addr a = addr_of(addr);
	unsigned int i;

	for (i = 0; i < s->n_backends; i++)
		if (s->backends[i].addr.family == a.family &&
		    memcmp(&s->backends[i].addr.v4, &a.v4, 4) == 0)
			return true;
	return false;
}

static void
export_clear(struct pa_config_lb *x)
{
	unsigned int i;

	for (i = 0; i < x->n_services; i++)
		pa_lb_config_service_clear(&x->services[i]);
	free(x->services);
	memset(x, 0, sizeof(*x));
}

START_TEST(test_export_reflects_added_and_deleted_services_and_backends)
{
	char err[PA_CONFIG_ERR_MAX];
	struct pa_config_service svc;
	struct pa_config_lb x;
	const struct pa_config_service *s;
	unsigned int i;

	setup_lb(SVC_WEB4);
	memset(&x, 0, sizeof(x));
	ck_assert_int_eq(pa_lb_export(lb, &x), 0);
	ck_assert_uint_eq(x.n_services, 1);
	ck_assert_uint_eq(x.services[0].n_backends, 3);

	service_of("{'name': 'dns4', 'vip': '10.0.0.40', 'port': 53, 'proto': 'udp',"
		" 'forward': 'ipip', 'backends': [{'addr': '10.4.0.1'}]}", &svc);
	ck_assert_int_eq(pa_lb_service_add(lb, &svc, err, sizeof(err)), 0);
	pa_lb_config_service_clear(&svc);
	ck_assert_int_eq(add_backend("web4", "{'addr': '10.1.0.4', 'weight': 7}"),
		0);
	ck_assert_int_eq(delete_backend("web4", "10.1.0.2"), 0);
	ck_assert_int_eq(set_state("web4", "10.1.0.3", PA_LB_DRAIN), 0);
	ck_assert_int_eq(pa_lb_export(lb, &x), 0);	/* replaces x's */
	ck_assert_uint_eq(x.n_services, 2);
	s = export_find(&x, "web4");
	ck_assert_ptr_nonnull(s);
	ck_assert_uint_eq(s->n_backends, 3);
	ck_assert(export_has_backend(s, "10.1.0.1"));
	ck_assert(!export_has_backend(s, "10.1.0.2"));
	ck_assert(export_has_backend(s, "10.1.0.3"));
	ck_assert(export_has_backend(s, "10.1.0.4"));
	for (i = 0; i < s->n_backends; i++) {
		if (s->backends[i].addr.v4.s_addr == ip4("10.1.0.4"))
			ck_assert_uint_eq(s->backends[i].weight, 7);
		if (s->backends[i].addr.v4.s_addr == ip4("10.1.0.3"))
			ck_assert_int_eq(s->backends[i].state, PA_LB_DRAIN);
	}
	ck_assert_ptr_nonnull(export_find(&x, "dns4"));

	ck_assert_int_eq(pa_lb_service_delete(lb, "web4", err, sizeof(err)), 0);
	ck_assert_int_eq(pa_lb_export(lb, &x), 0);
	ck_assert_uint_eq(x.n_services, 1);
	ck_assert_ptr_null(export_find(&x, "web4"));
	export_clear(&x);
}
END_TEST

START_TEST(test_deleted_service_no_longer_balances_and_its_flows_are_reaped)
{
	char err[PA_CONFIG_ERR_MAX];
	struct pa_test_frame f;

	setup_lb(SVC_WEB4);
	frame_l4(&f, "198.51.100.7", "10.0.0.10", IPPROTO_TCP, 1234, 80,
		TCP_SYN, 0);
	send_ipip4(&f, T0);
	ck_assert_int_eq(pa_lb_service_delete(lb, "web4", err, sizeof(err)), 0);
	check_untouched(&f);
	sweep(T0 + 1);
	ck_assert_int_eq(lb_stat("flows"), 0);
	ck_assert_int_eq(lb_stat("services"), 0);
	ck_assert(!pa_lb_active(lb));
}
END_TEST

START_TEST(test_trace_gives_the_maglev_choice_for_a_new_flow_then_the_flows_backend)
{
	struct pa_lb_trace_result tr;
	unsigned int i;

	setup_lb(SVC_WEB4);
	for (i = 0; i < 30; i++) {
		char src[32];
		struct pa_test_frame f;
		struct pa_flow_key k;
		uint32_t be;

		snprintf(src, sizeof(src), "198.51.100.%u", 1 + i);
		frame_l4(&f, src, "10.0.0.10", IPPROTO_TCP, (uint16_t)(5000 + i),
			80, TCP_SYN, 0);
		k = key_of(&f);
		ck_assert_int_eq(pa_lb_trace(lb, &k, false, &tr), 0);
		ck_assert(tr.service_found);
		ck_assert_str_eq(tr.service, "web4");
		ck_assert(tr.backend_found);
		ck_assert(!tr.existing_flow);
		be = send_ipip4(&f, T0);
		ck_assert_msg(be == tr.backend.v4.s_addr,
			"flow %u: trace predicted another backend", i);
		ck_assert_int_eq(pa_lb_trace(lb, &k, false, &tr), 0);
		ck_assert(tr.existing_flow);
		ck_assert_uint_eq(tr.backend.v4.s_addr, be);
	}
}
END_TEST

START_TEST(test_trace_reports_the_existing_flows_backend_on_an_rr_service)
{
	struct pa_lb_trace_result tr;
	struct pa_flow_key k;
	struct pa_test_frame f;
	uint32_t be;

	setup_lb("{'name': 'rr4', 'vip': '10.0.0.10', 'port': 80, 'proto': 'tcp',"
		" 'forward': 'ipip', 'scheduler': 'rr', 'backends':"
		" [{'addr': '10.1.0.1'}, {'addr': '10.1.0.2'}, {'addr': '10.1.0.3'}]}");
	frame_l4(&f, "198.51.100.7", "10.0.0.10", IPPROTO_TCP, 1234, 80,
		TCP_SYN, 0);
	k = key_of(&f);
	ck_assert_int_eq(pa_lb_trace(lb, &k, false, &tr), 0);
	ck_assert(tr.service_found);
	ck_assert(!tr.backend_found);
	ck_assert(!tr.existing_flow);
	ck_assert_ptr_nonnull(tr.reason);
	web4_flow(1, TCP_SYN, T0);	/* moves the cursor */
	be = send_ipip4(&f, T0);
	ck_assert_int_eq(pa_lb_trace(lb, &k, false, &tr), 0);
	ck_assert(tr.existing_flow);
	ck_assert(tr.backend_found);
	ck_assert_uint_eq(tr.backend.v4.s_addr, be);
	/* the lcore answers itself once it polls; after it leaves, trace
	 * reads its table directly */
	pa_lb_poll(lb, 0, T0 + 1, true);
	pa_lb_lcore_exit(lb, 0);
	ck_assert_int_eq(pa_lb_trace(lb, &k, false, &tr), 0);
	ck_assert(tr.existing_flow);
	ck_assert_uint_eq(tr.backend.v4.s_addr, be);
	/* not a service */
	k.dport = htons(81);
	ck_assert_int_eq(pa_lb_trace(lb, &k, false, &tr), 0);
	ck_assert(!tr.service_found);
}
END_TEST

/* An lcore that polls only when pa_lb_poll_due() says so, as the
 * worker loop does, until told to stop. */
struct due_poller {
	pthread_t tid;
	volatile int stop;
};

static void *
poll_when_due(void *arg)
{
	struct due_poller *p = arg;

	while (!__atomic_load_n(&p->stop, __ATOMIC_ACQUIRE)) {
		if (pa_lb_poll_due(lb, 0))
			pa_lb_poll(lb, 0, T0 + 1, true);
		else
			rte_pause();
	}
	return NULL;
}

/* pa_lb_poll_due() (the worker loop's skip): not due without a flow
 * table; due once it is made, with a flow and while one lives; not once
 * a poll found nothing to do; due again on a pa_lb_trace() question, so
 * that an idle lcore polling only when due answers it (no -EBUSY). */
START_TEST(test_poll_is_due_only_while_the_lcore_has_work)
{
	struct due_poller p = { 0 };
	struct pa_lb_trace_result tr;
	struct pa_test_frame f;
	struct pa_flow_key k;

	setup_lb("");
	ck_assert(!pa_lb_active(lb));
	ck_assert(!pa_lb_poll_due(lb, 0));
	setup_lb("{'name': 'dns4', 'vip': '10.0.0.40', 'port': 53, 'proto': 'udp',"
		" 'forward': 'ipip', 'backends': [{'addr': '10.1.0.1'}]}");
	ck_assert(pa_lb_active(lb));
	ck_assert(pa_lb_poll_due(lb, 0));
	pa_lb_poll(lb, 0, T0, false);
	ck_assert(!pa_lb_poll_due(lb, 0));
	frame_l4(&f, "198.51.100.7", "10.0.0.40", IPPROTO_UDP, 1000, 53, 0, 8);
	send_ipip4(&f, T0);
	ck_assert(pa_lb_poll_due(lb, 0));
	pa_lb_poll(lb, 0, T0 + 1, false);
	ck_assert(pa_lb_poll_due(lb, 0));
	/* the sweep that ages the flow, then a poll that finds nothing */
	pa_lb_poll(lb, 0, T0 + UDP_TMO * hz + 1, false);
	ck_assert_int_eq(lb_stat("flows"), 0);
	ck_assert(pa_lb_poll_due(lb, 0));
	pa_lb_poll(lb, 0, T0 + UDP_TMO * hz + 2, false);
	ck_assert(!pa_lb_poll_due(lb, 0));
	/* a question to the running, idle lcore */
	k = key_of(&f);
	ck_assert_int_eq(pthread_create(&p.tid, NULL, poll_when_due, &p), 0);
	ck_assert_int_eq(pa_lb_trace(lb, &k, false, &tr), 0);
	ck_assert(tr.service_found);
	ck_assert(!tr.existing_flow);
	__atomic_store_n(&p.stop, 1, __ATOMIC_RELEASE);
	pthread_join(p.tid, NULL);
	ck_assert(!pa_lb_poll_due(lb, 0));
}
END_TEST

/* ... and stays due while its flow index resizes (lb_ftab.h): grown by
 * its flows, then drained of them, an lcore polled only when due (as the
 * worker loop does) still takes its index back to the least size. */
START_TEST(test_poll_stays_due_until_the_flow_index_is_back_at_its_least)
{
	enum { N = 3000 };
	struct lb_worker *w;
	unsigned int i;
	uint64_t now;

	setup_lb_flows("{'name': 'dns4', 'vip': '10.0.0.40', 'port': 53,"
		" 'proto': 'udp', 'forward': 'ipip', 'backends':"
		" [{'addr': '10.1.0.1'}]}", 16384, 1);
	for (i = 0; i < N; i++) {
		dns4_flow(i);
		if (pa_lb_poll_due(lb, 0))
			pa_lb_poll(lb, 0, T0, false);
	}
	ck_assert_int_eq(lb_stat("flows"), N);
	w = lb->w[0];
	ck_assert_uint_gt(w->ftab.mask, w->ftab.min_mask);
	now = T0 + UDP_TMO * hz + 1;
	for (i = 0; i < 1000000 && pa_lb_poll_due(lb, 0); i++)
		pa_lb_poll(lb, 0, now + i, true);
	ck_assert(!pa_lb_poll_due(lb, 0));
	ck_assert_int_eq(lb_stat("flows"), 0);
	ck_assert(!lb_ftab_resize_due(&w->ftab));
	ck_assert_uint_eq(w->ftab.mask, w->ftab.min_mask);
}
END_TEST

START_TEST(test_two_lcores_keep_separate_tables_and_counters_sum)
{
	struct rte_mbuf *m;
	struct pa_test_frame f;
	uint8_t v;
	uint32_t b0, b1;

	setup_lb_flows("{'name': 'rr4', 'vip': '10.0.0.10', 'port': 80, 'proto': 'tcp',"
		" 'forward': 'ipip', 'scheduler': 'rr', 'backends':"
		" [{'addr': '10.1.0.1'}, {'addr': '10.1.0.2'}]}", 4096, 2);
	ck_assert_int_eq(lb_stat("flow_table_capacity") >= 4096, 1);
	frame_l4(&f, "198.51.100.7", "10.0.0.10", IPPROTO_TCP, 1234, 80,
		TCP_SYN, 0);
	m = mbuf_of(&f);
	pa_lb_process(lb, 0, &m, 1, T0, &v);
	ck_assert_uint_eq(v, PA_LB_V_FORWARD);
	memcpy(&b0, rte_pktmbuf_mtod(m, uint8_t *) + 30, 4);
	rte_pktmbuf_free(m);
	m = mbuf_of(&f);
	pa_lb_process(lb, 1, &m, 1, T0, &v);
	ck_assert_uint_eq(v, PA_LB_V_FORWARD);
	memcpy(&b1, rte_pktmbuf_mtod(m, uint8_t *) + 30, 4);
	rte_pktmbuf_free(m);
	/* each lcore's rr cursor starts at the first backend */
	ck_assert_uint_eq(b0, b1);
	ck_assert_int_eq(lb_stat("flows"), 2);
	ck_assert_int_eq(lb_stat("balanced"), 2);
	ck_assert_int_eq(be_count("rr4", "10.1.0.1").packets +
		be_count("rr4", "10.1.0.2").packets, 2);
}
END_TEST

/* ------------------------------------------------------------------ */


/* ------------------------------------------------------------------ */
/* Protection: SYN-only flows, per-source new flows, max_flows          */
/* ------------------------------------------------------------------ */

#define SYN_TMO		5

/* One TCP packet (flags) of client @p src:@p sport to web4, through
 * lcore @p lc at @p now; @return its verdict (the mbuf freed). */
static uint8_t
web4_send(const char *src, uint16_t sport, uint8_t flags, unsigned int lc,
		uint64_t now)
{
	struct pa_test_frame f;
	struct rte_mbuf *m;
	uint8_t v = 0xee;

	frame_l4(&f, src, "10.0.0.10", IPPROTO_TCP, sport, 80, flags, 0);
	m = mbuf_of(&f);
	pa_lb_process(lb, lc, &m, 1, now, &v);
	rte_pktmbuf_free(m);
	return v;
}

static json_int_t
svc_flows(const char *service)
{
	json_t *arr = pa_lb_services_json(lb), *s;
	json_int_t n = -1;
	size_t i;

	ck_assert_ptr_nonnull(arr);
	json_array_foreach(arr, i, s)
		if (strcmp(json_string_value(json_object_get(s, "name")),
				service) == 0)
			n = json_integer_value(json_object_get(s, "flows"));
	json_decref(arr);
	return n;
}

START_TEST(test_syn_only_flow_expires_after_syn_timeout_an_acked_one_after_tcp_timeout)
{
	doc_extra = ", 'protect': {'syn_timeout_s': 5}";
	setup_lb(SVC_WEB4);
	doc_extra = "";
	/* a: SYN only; b: SYN then ACK; c: SYN, SYN again 3 s later */
	ck_assert_uint_eq(web4_send("198.51.100.1", 1001, TCP_SYN, 0, T0),
		PA_LB_V_FORWARD);
	ck_assert_uint_eq(web4_send("198.51.100.2", 1002, TCP_SYN, 0, T0),
		PA_LB_V_FORWARD);
	ck_assert_uint_eq(web4_send("198.51.100.3", 1003, TCP_SYN, 0, T0),
		PA_LB_V_FORWARD);
	ck_assert_uint_eq(web4_send("198.51.100.2", 1002, TCP_ACK, 0, T0 + 1),
		PA_LB_V_FORWARD);
	ck_assert_uint_eq(web4_send("198.51.100.3", 1003, TCP_SYN, 0,
		T0 + 3 * hz), PA_LB_V_FORWARD);
	ck_assert_int_eq(lb_stat("flows"), 3);
	ck_assert_int_eq(lb_stat("flows_peak"), 3);
	sweep(T0 + SYN_TMO * hz);
	ck_assert_int_eq(lb_stat("flows"), 3);
	sweep(T0 + SYN_TMO * hz + 1);
	ck_assert_int_eq(lb_stat("flows"), 2);	/* a is gone */
	/* the retransmitted SYN refreshed c, still SYN-only */
	sweep(T0 + (3 + SYN_TMO) * hz + 1);
	ck_assert_int_eq(lb_stat("flows"), 1);
	ck_assert_int_eq(lb_stat("flows_expired"), 2);
	sweep(T0 + 1 + TCP_TMO * hz);
	ck_assert_int_eq(lb_stat("flows"), 1);
	sweep(T0 + 2 + TCP_TMO * hz);
	ck_assert_int_eq(lb_stat("flows"), 0);
	ck_assert_int_eq(lb_stat("flows_peak"), 3);
}
END_TEST

START_TEST(test_syn_after_fin_is_syn_only_again_and_a_syn_on_an_open_flow_is_not)
{
	doc_extra = ", 'protect': {'syn_timeout_s': 5}";
	setup_lb(SVC_WEB4);
	doc_extra = "";
	/* a: established, then FIN, then reopened by a SYN */
	web4_send("198.51.100.1", 1001, TCP_SYN, 0, T0);
	web4_send("198.51.100.1", 1001, TCP_ACK, 0, T0);
	web4_send("198.51.100.1", 1001, TCP_FIN | TCP_ACK, 0, T0);
	web4_send("198.51.100.1", 1001, TCP_SYN, 0, T0 + 1);
	/* b: established, then a stray SYN */
	web4_send("198.51.100.2", 1002, TCP_SYN, 0, T0);
	web4_send("198.51.100.2", 1002, TCP_ACK, 0, T0);
	web4_send("198.51.100.2", 1002, TCP_SYN, 0, T0 + 1);
	sweep(T0 + 2 + SYN_TMO * hz);
	ck_assert_int_eq(lb_stat("flows"), 1);	/* b stays */
}
END_TEST

START_TEST(test_without_protect_a_syn_only_flow_lives_tcp_timeout)
{
	setup_lb(SVC_WEB4);
	web4_send("198.51.100.1", 1001, TCP_SYN, 0, T0);
	sweep(T0 + (SYN_TMO + 1) * hz);
	sweep(T0 + TCP_TMO * hz);
	ck_assert_int_eq(lb_stat("flows"), 1);
	sweep(T0 + TCP_TMO * hz + 1);
	ck_assert_int_eq(lb_stat("flows"), 0);
}
END_TEST

START_TEST(test_syn_defer_sends_syns_to_the_maglev_choice_and_the_ack_makes_the_entry_not_for_rr_or_nat)
{
	char src[32];
	struct pa_test_frame f;
	struct rte_mbuf *m;
	uint32_t syn_be[100];
	unsigned int i;

	doc_extra = ", 'protect': {'syn_timeout_s': 5, 'syn_defer': true}";
	setup_lb(SVC_WEB4 "," SVC_NAT4 ","
		"{'name': 'rr4', 'vip': '10.0.0.11', 'port': 80, 'proto': 'tcp',"
		" 'forward': 'ipip', 'scheduler': 'rr', 'backends':"
		" [{'addr': '10.1.0.1'}, {'addr': '10.1.0.2'}]}");
	doc_extra = "";
	for (i = 0; i < 100; i++) {
		snprintf(src, sizeof(src), "198.51.100.%u", i + 1);
		frame_l4(&f, src, "10.0.0.10", IPPROTO_TCP, 2000, 80,
			TCP_SYN, 0);
		syn_be[i] = send_ipip4(&f, T0);
	}
	ck_assert_int_eq(lb_stat("flows"), 0);
	ck_assert_int_eq(lb_stat("syn_stateless"), 100);
	for (i = 0; i < 50; i++) {
		snprintf(src, sizeof(src), "198.51.100.%u", i + 1);
		frame_l4(&f, src, "10.0.0.10", IPPROTO_TCP, 2000, 80,
			TCP_ACK, 10);
		ck_assert_uint_eq(send_ipip4(&f, T0 + hz), syn_be[i]);
	}
	ck_assert_int_eq(lb_stat("flows"), 50);
	/* rr: the choice is not a function of the flow: the SYN takes an
	 * entry (that expires after syn_timeout_s) */
	frame_l4(&f, "198.51.100.1", "10.0.0.11", IPPROTO_TCP, 2000, 80,
		TCP_SYN, 0);
	send_ipip4(&f, T0 + hz);
	ck_assert_int_eq(lb_stat("flows"), 51);
	ck_assert_int_eq(lb_stat("syn_stateless"), 100);
	/* nat: the SYN-ACK needs the reply entry the SYN makes */
	frame_l4(&f, "198.51.100.1", "10.0.0.20", IPPROTO_TCP, 2000, 80,
		TCP_SYN, 0);
	m = mbuf_of(&f);
	ck_assert_uint_eq(process1(m, T0 + hz), PA_LB_V_FORWARD);
	rte_pktmbuf_free(m);
	ck_assert_int_eq(lb_stat("flows"), 52);
	ck_assert_int_eq(lb_stat("syn_stateless"), 100);
	sweep(T0 + (1 + SYN_TMO) * hz + 1);
	ck_assert_int_eq(lb_stat("flows"), 50);
}
END_TEST

START_TEST(test_syn_defer_a_backend_change_before_the_ack_moves_some_handshakes)
{
	char src[32];
	struct pa_test_frame f;
	uint32_t syn_be[200];
	unsigned int i, moved = 0;

	/* the documented price of syn_defer: a SYN holds no entry, so a
	 * backend added before its ACK moves the handshakes whose Maglev
	 * choice changed (about 1/4 here); with an entry none would move */
	doc_extra = ", 'protect': {'syn_defer': true}";
	setup_lb(SVC_WEB4);
	doc_extra = "";
	for (i = 0; i < 200; i++) {
		snprintf(src, sizeof(src), "198.51.%u.%u", 100 + i / 100,
			1 + i % 100);
		frame_l4(&f, src, "10.0.0.10", IPPROTO_TCP, 2000, 80,
			TCP_SYN, 0);
		syn_be[i] = send_ipip4(&f, T0);
	}
	ck_assert_int_eq(add_backend("web4", "{'addr': '10.1.0.4'}"), 0);
	for (i = 0; i < 200; i++) {
		snprintf(src, sizeof(src), "198.51.%u.%u", 100 + i / 100,
			1 + i % 100);
		frame_l4(&f, src, "10.0.0.10", IPPROTO_TCP, 2000, 80,
			TCP_ACK, 0);
		moved += send_ipip4(&f, T0 + 1) != syn_be[i];
	}
	ck_assert_uint_gt(moved, 20);
	ck_assert_uint_lt(moved, 90);
}
END_TEST

START_TEST(test_src_new_flows_limits_new_flows_per_source_prefix)
{
	unsigned int i, ok = 0, lim = 0;
	uint8_t v;

	doc_extra = ", 'protect': {'src_new_flows': {'rate': 10, 'burst': 5,"
		" 'prefix4': 24}}";
	setup_lb(SVC_WEB4);
	doc_extra = "";
	/* 20 new flows from one /24 at once: the burst passes */
	for (i = 0; i < 20; i++) {
		v = web4_send(i % 2 ? "198.51.100.7" : "198.51.100.8",
			(uint16_t)(3000 + i), TCP_SYN, 0, T0);
		ok += v == PA_LB_V_FORWARD;
		lim += v == PA_LB_V_SRC_LIMIT;
	}
	ck_assert_uint_eq(ok, 5);
	ck_assert_uint_eq(lim, 15);
	ck_assert_int_eq(lb_stat("src_limited"), 15);
	ck_assert_int_eq(lb_stat("flows"), 5);
	/* the flows it has are not limited */
	ck_assert_uint_eq(web4_send("198.51.100.8", 3000, TCP_ACK, 0, T0),
		PA_LB_V_FORWARD);
	/* another prefix is not */
	ck_assert_uint_eq(web4_send("198.51.101.7", 3000, TCP_SYN, 0, T0),
		PA_LB_V_FORWARD);
	/* 0.1 s later, one token more */
	ck_assert_uint_eq(web4_send("198.51.100.9", 4000, TCP_SYN, 0,
		T0 + hz / 10), PA_LB_V_FORWARD);
	ck_assert_uint_eq(web4_send("198.51.100.9", 4001, TCP_SYN, 0,
		T0 + hz / 10), PA_LB_V_SRC_LIMIT);
	/* 10 s later the bucket holds its burst, no more */
	for (i = 0, ok = 0; i < 10; i++)
		ok += web4_send("198.51.100.9", (uint16_t)(5000 + i), TCP_SYN,
			0, T0 + 10 * hz) == PA_LB_V_FORWARD;
	ck_assert_uint_eq(ok, 5);
}
END_TEST

START_TEST(test_src_new_flows_share_the_rate_among_lb_lcores)
{
	unsigned int i, ok0 = 0, ok1 = 0;

	doc_extra = ", 'protect': {'src_new_flows': {'rate': 100, 'burst': 10}}";
	setup_lb_flows(SVC_WEB4, 4096, 2);
	doc_extra = "";
	for (i = 0; i < 20; i++) {
		ok0 += web4_send("198.51.100.7", (uint16_t)(3000 + i), TCP_SYN,
			0, T0) == PA_LB_V_FORWARD;
		ok1 += web4_send("198.51.100.7", (uint16_t)(4000 + i), TCP_SYN,
			1, T0) == PA_LB_V_FORWARD;
	}
	/* burst 10 over two lcores: 5 each */
	ck_assert_uint_eq(ok0, 5);
	ck_assert_uint_eq(ok1, 5);
}
END_TEST

/* The limiter itself, on a fake clock. */
START_TEST(test_src_bucket_math_on_a_fake_clock)
{
	struct pa_config_protect p;
	struct pa_protect_src *s;
	uint8_t a[4] = { 198, 51, 100, 7 }, b6[16] = { 0x20, 0x01, 0x0d, 0xb8 };
	const uint64_t f = 1000000;	/* a 1 MHz "TSC" */
	unsigned int i, ok = 0;

	memset(&p, 0, sizeof(p));
	p.src_new_flows.enabled = true;
	p.src_new_flows.rate = 1000;
	p.src_new_flows.burst = 10;
	p.src_new_flows.prefix4 = 32;
	p.src_new_flows.prefix6 = 64;
	s = pa_protect_src_create(&p, 1, 1024, f, 0);
	ck_assert_ptr_nonnull(s);
	ck_assert_uint_eq(s->interval, 1000);	/* 1 ms a token */
	ck_assert_uint_eq(s->tolerance, 9000);
	for (i = 0; i < 20; i++)
		ok += pa_protect_src_take(s, 4, a, 5);
	ck_assert_uint_eq(ok, 10);
	/* one token a ms */
	ck_assert(!pa_protect_src_take(s, 4, a, 5 + 999));
	ck_assert(pa_protect_src_take(s, 4, a, 5 + 1000));
	ck_assert(!pa_protect_src_take(s, 4, a, 5 + 1000));
	/* an hour idle: a full burst, not more */
	for (i = 0, ok = 0; i < 20; i++)
		ok += pa_protect_src_take(s, 4, a, 3600 * f);
	ck_assert_uint_eq(ok, 10);
	/* IPv6 by /64: another interface id is the same prefix */
	for (i = 0, ok = 0; i < 20; i++) {
		b6[15] = (uint8_t)i;
		ok += pa_protect_src_take(s, 6, b6, 5);
	}
	ck_assert_uint_eq(ok, 10);
	pa_protect_src_free(s);
	/* shared by 4 lcores: rate 250 and burst 2.5 each */
	s = pa_protect_src_create(&p, 4, 1024, f, 0);
	ck_assert_ptr_nonnull(s);
	ck_assert_uint_eq(s->interval, 4000);
	ck_assert_uint_eq(s->tolerance, 6000);
	for (i = 0, ok = 0; i < 20; i++)
		ok += pa_protect_src_take(s, 4, a, 5);
	ck_assert_uint_eq(ok, 2);
	pa_protect_src_free(s);
	/* a burst smaller than the lcores: one each */
	p.src_new_flows.burst = 1;
	s = pa_protect_src_create(&p, 4, 1024, f, 0);
	ck_assert_uint_eq(s->tolerance, 0);
	ck_assert(pa_protect_src_take(s, 4, a, 5));
	ck_assert(!pa_protect_src_take(s, 4, a, 5));
	pa_protect_src_free(s);
	/* refused: no rate, cols not a power of two */
	p.src_new_flows.rate = 0;
	ck_assert_ptr_null(pa_protect_src_create(&p, 1, 1024, f, 0));
	p.src_new_flows.rate = 10;
	ck_assert_ptr_null(pa_protect_src_create(&p, 1, 1000, f, 0));
}
END_TEST

START_TEST(test_src_buckets_take_fixed_memory_and_collisions_share_tokens)
{
	struct pa_config_protect p;
	struct pa_protect_src *s;
	uint8_t a[4] = { 203, 0, 113, 1 }, x[4];
	const uint64_t f = 1000000;
	unsigned int i, ok = 0;
	uint32_t r;

	memset(&p, 0, sizeof(p));
	p.src_new_flows.enabled = true;
	p.src_new_flows.rate = 1;
	p.src_new_flows.burst = 1;
	p.src_new_flows.prefix4 = 32;
	p.src_new_flows.prefix6 = 64;
	/* bounded memory, whatever the sources */
	ck_assert_uint_eq(pa_protect_src_bytes(0),
		sizeof(struct pa_protect_src) + 2 * 32768 * 8);
	ck_assert_uint_eq(pa_protect_src_bytes(1024),
		sizeof(struct pa_protect_src) + 2 * 1024 * 8);
	/* one bucket a row: every source shares it */
	s = pa_protect_src_create(&p, 1, 1, f, 0);
	ck_assert_ptr_nonnull(s);
	ck_assert(pa_protect_src_take(s, 4, a, 0));
	x[0] = 10; x[1] = 9; x[2] = 8; x[3] = 7;
	ck_assert(!pa_protect_src_take(s, 4, x, 0));
	pa_protect_src_free(s);
	/* 4096 a row: a source that emptied its buckets leaves the others
	 * alone: of 1000 other sources, one is refused only when both of
	 * its buckets were emptied before (by the heavy one or by earlier
	 * ones: about 20 expected), against about 120 with a single row */
	s = pa_protect_src_create(&p, 1, 4096, f, 0);
	ck_assert_ptr_nonnull(s);
	for (i = 0; i < 100; i++)
		pa_protect_src_take(s, 4, a, 0);
	for (i = 0; i < 1000; i++) {
		r = rng();
		memcpy(x, &r, 4);
		if (memcmp(x, a, 4) == 0)
			continue;
		ok += pa_protect_src_take(s, 4, x, 0);
	}
	ck_assert_uint_ge(ok, 950);
	pa_protect_src_free(s);
}
END_TEST

START_TEST(test_max_flows_drops_new_flows_over_the_limit_counting_expiry_and_backend_removal)
{
	struct pa_ip_addr a;
	char err[PA_CONFIG_ERR_MAX];
	unsigned int i, ok = 0;
	uint8_t v;

	setup_lb("{'name': 'web4', 'vip': '10.0.0.10', 'port': 80, 'proto': 'tcp',"
		" 'forward': 'ipip', 'max_flows': 3, 'backends':"
		" [{'addr': '10.1.0.1'}, {'addr': '10.1.0.2'}]}");
	for (i = 0; i < 5; i++) {
		v = web4_send("198.51.100.7", (uint16_t)(1000 + i), TCP_SYN, 0,
			T0);
		if (i < 3)
			ck_assert_uint_eq(v, PA_LB_V_FORWARD);
		else
			ck_assert_uint_eq(v, PA_LB_V_MAX_FLOWS);
	}
	ck_assert_int_eq(lb_stat("max_flows_dropped"), 2);
	ck_assert_int_eq(svc_flows("web4"), 3);
	/* the flows it has go on */
	ck_assert_uint_eq(web4_send("198.51.100.7", 1000, TCP_ACK, 0, T0 + 1),
		PA_LB_V_FORWARD);
	/* a backend removed: its flows move, the count stays 3 */
	a = addr_of("10.1.0.1");
	ck_assert_int_eq(pa_lb_backend_delete(lb, "web4", &a, err,
		sizeof(err)), 0);
	for (i = 0; i < 3; i++)
		ck_assert_uint_eq(web4_send("198.51.100.7",
			(uint16_t)(1000 + i), TCP_ACK, 0, T0 + 2),
			PA_LB_V_FORWARD);
	sweep(T0 + 2);
	ck_assert_uint_eq(web4_send("198.51.100.7", 1009, TCP_SYN, 0, T0 + 2),
		PA_LB_V_MAX_FLOWS);
	ck_assert_int_eq(svc_flows("web4"), 3);
	/* expired: room again */
	sweep(T0 + 3 + TCP_TMO * hz);
	ck_assert_int_eq(lb_stat("flows"), 0);
	for (i = 0; i < 5; i++)
		ok += web4_send("198.51.100.7", (uint16_t)(2000 + i), TCP_SYN,
			0, T0 + 4 + TCP_TMO * hz) == PA_LB_V_FORWARD;
	ck_assert_uint_eq(ok, 3);
}
END_TEST

START_TEST(test_max_flows_is_shared_among_lb_lcores_and_counts_deferred_syns)
{
	unsigned int i, ok0 = 0, ok1 = 0;

	doc_extra = ", 'protect': {'syn_defer': true}";
	setup_lb_flows("{'name': 'web4', 'vip': '10.0.0.10', 'port': 80,"
		" 'proto': 'tcp', 'forward': 'ipip', 'max_flows': 3, 'backends':"
		" [{'addr': '10.1.0.1'}]}", 4096, 2);
	doc_extra = "";
	for (i = 0; i < 4; i++) {
		ok0 += web4_send("198.51.100.7", (uint16_t)(1000 + i), TCP_ACK,
			0, T0) == PA_LB_V_FORWARD;
		ok1 += web4_send("198.51.100.7", (uint16_t)(2000 + i), TCP_ACK,
			1, T0) == PA_LB_V_FORWARD;
	}
	/* 3 over two lcores: 2 + 1 */
	ck_assert_uint_eq(ok0, 2);
	ck_assert_uint_eq(ok1, 1);
	ck_assert_int_eq(svc_flows("web4"), 3);
	/* a deferred SYN of a full service is dropped too */
	ck_assert_uint_eq(web4_send("198.51.100.8", 1, TCP_SYN, 0, T0),
		PA_LB_V_MAX_FLOWS);
	ck_assert_int_eq(lb_stat("syn_stateless"), 0);
}
END_TEST

START_TEST(test_max_flows_zero_or_over_the_flow_table_is_refused_with_its_path)
{
	char err[PA_CONFIG_ERR_MAX];
	struct pa_config *c;
	struct pa_config_service svc;
	char *t;
	json_t *o, *back;

	t = dq("{'lb': {'local_addr': '192.0.2.1', 'flow_table': {'size': 4096},"
		" 'services': [{'name': 'w', 'vip': '10.0.0.10', 'port': 80,"
		" 'proto': 'tcp', 'max_flows': 5000, 'backends': []}]}}");
	c = pa_config_load_string(t, NULL, err, sizeof(err));
	free(t);
	ck_assert_ptr_null(c);
	ck_assert_msg(strstr(err, "$.lb.services[0].max_flows") != NULL, "%s",
		err);
	t = dq("{'lb': {'local_addr': '192.0.2.1', 'services': [{'name': 'w',"
		" 'vip': '10.0.0.10', 'port': 80, 'proto': 'tcp', 'max_flows': 0,"
		" 'backends': []}]}}");
	c = pa_config_load_string(t, NULL, err, sizeof(err));
	free(t);
	ck_assert_ptr_null(c);
	ck_assert_msg(strstr(err, "$.lb.services[0].max_flows") != NULL, "%s",
		err);
	/* within: parsed, kept by the LB and written back */
	setup_lb("{'name': 'web4', 'vip': '10.0.0.10', 'port': 80, 'proto': 'tcp',"
		" 'forward': 'ipip', 'max_flows': 1024, 'backends': []}");
	back = pa_lb_services_json(lb);
	ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(
		back, 0), "max_flows")), 1024);
	json_decref(back);
	/* the core refuses more than its own flow table (a config whose
	 * flow_table.size is larger: as an RPC parsed against it) */
	lb->ft.size = 512;
	t = dq("{'name': 'big', 'vip': '10.0.0.12', 'port': 80, 'proto': 'tcp',"
		" 'forward': 'ipip', 'max_flows': 1000, 'backends': []}");
	o = json_loads(t, 0, NULL);
	free(t);
	ck_assert_msg(pa_lb_config_parse_service(o, &cfg->lb, "params", &svc,
		err, sizeof(err)) == 0, "%s", err);
	json_decref(o);
	ck_assert_int_eq(pa_lb_service_add(lb, &svc, err, sizeof(err)),
		-EINVAL);
	ck_assert_msg(strstr(err, "max_flows") != NULL, "%s", err);
	pa_lb_config_service_clear(&svc);
}
END_TEST

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
	t = dq("{'name': 'g', 'vip': '10.0.0.10', 'port': 80, 'proto': 'tcp',"
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

/* The addresses lib/neigh resolves and lib/announce routes: each once,
 * in the order of first appearance, whatever the number of duplicates. */
START_TEST(test_addresses_list_each_vip_and_backend_once_in_first_seen_order)
{
	static const char *const want_be[] = { "10.1.0.1", "10.1.0.2",
		"10.1.0.3", "2001:db8:1::1", "2001:db8:1::2", "10.2.0.1",
		"10.2.0.2" };
	static const char *const want_vip[] = { "10.0.0.10",
		"2001:db8:10::10", "10.0.0.20" };
	struct pa_ip_addr *vips, *bes, a;
	unsigned int n_vips, n_bes, i;

	/* nat4 and nat4u share their VIP and backends; a backend with a
	 * mac is not resolved */
	setup_lb(SVC_WEB4 "," SVC_WEB6 "," SVC_NAT4 ","
		"{'name': 'dsr', 'vip': '10.0.0.10', 'port': 81, 'proto': 'tcp',"
		" 'forward': 'dsr', 'backends': [{'addr': '10.1.0.3',"
		" 'mac': '02:00:00:00:00:03'}, {'addr': '10.1.0.7',"
		" 'mac': '02:00:00:00:00:01'}]}");
	ck_assert_int_eq(pa_lb_addresses(lb, &vips, &n_vips, &bes, &n_bes), 0);
	ck_assert_uint_eq(n_vips, RTE_DIM(want_vip));
	for (i = 0; i < n_vips; i++) {
		a = addr_of(want_vip[i]);
		ck_assert_msg(pa_ip_equal(&vips[i], &a), "vip %u", i);
	}
	ck_assert_uint_eq(n_bes, RTE_DIM(want_be));
	for (i = 0; i < n_bes; i++) {
		a = addr_of(want_be[i]);
		ck_assert_msg(pa_ip_equal(&bes[i], &a), "backend %u", i);
	}
	free(vips);
	free(bes);
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

static Suite *
lb_suite(void)
{
	Suite *s = suite_create("lb");
	TCase *tc;

	tc = tcase_create("maglev");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_maglev_equal_weights_match_the_nsdi_reference);
	tcase_add_test(tc, test_maglev_mixed_weights_match_the_katran_style_reference);
	tcase_add_test(tc, test_maglev_ipv6_keys_match_the_reference);
	tcase_add_test(tc, test_maglev_table_does_not_depend_on_input_order);
	tcase_add_test(tc, test_maglev_shares_follow_weights_within_one_percent);
	tcase_add_test(tc, test_maglev_removing_one_backend_moves_under_two_percent_of_the_others);
	tcase_add_test(tc, test_maglev_build_time_is_measured_for_10_100_1000_backends);
	tcase_add_test(tc, test_maglev_build_rejects_no_backends_too_many_and_zero_weight);
	tcase_add_test(tc, test_maglev_hash_seeds_differ_and_are_stable);
	suite_add_tcase(s, tc);

	tc = tcase_create("forwarding");
	tcase_set_timeout(tc, 120);
	tcase_add_checked_fixture(tc, NULL, teardown_lb);
	tcase_add_test(tc, test_ipip4_prepends_outer_ipv4_and_keeps_the_inner_packet_byte_identical);
	tcase_add_test(tc, test_ipip4_addresses_the_frame_to_the_backend_mac_when_it_has_one);
	tcase_add_test(tc, test_gateway_next_hop_is_chosen_by_family);
	tcase_add_test(tc, test_ipip4_trims_ethernet_padding_after_the_inner_packet);
	tcase_add_test(tc, test_ipip4_keeps_the_vlan_tag_in_front_of_the_outer_header);
	tcase_add_test(tc, test_ipip6_prepends_outer_ipv6_with_next_header_41_and_keeps_the_inner_packet);
	tcase_add_test(tc, test_nat4_tcp_rewrites_destination_and_checksums_equal_full_recomputation);
	tcase_add_test(tc, test_nat4_udp_rewrites_destination_and_checksums_equal_full_recomputation);
	tcase_add_test(tc, test_nat4_udp_without_checksum_stays_without);
	tcase_add_test(tc, test_nat6_tcp_and_udp_rewrite_destination_and_checksums_equal_full_recomputation);
	tcase_add_test(tc, test_nat_checksums_equal_full_recomputation_for_many_random_packets);
	tcase_add_test(tc, test_nat_checksums_are_exact_whatever_the_original_checksum);
	tcase_add_test(tc, test_nat_reply_of_a_known_flow_gets_the_vip_and_service_port_as_source);
	tcase_add_test(tc, test_client_hash_is_the_parsers_hash_of_the_clients_flow);
	tcase_add_test(tc, test_nat_reply_without_a_flow_is_translated_as_the_appliance_with_the_flow_would);
	tcase_add_test(tc, test_nat_reply_without_a_flow_from_a_backend_maglev_did_not_choose_is_left_unchanged);
	tcase_add_test(tc, test_nat_reply_index_lists_every_nat_service_of_a_backend);
	tcase_add_test(tc, test_nat_reply_of_a_backend_of_two_services_is_translated_only_when_one_explains_it);
	tcase_add_test(tc, test_nat_reply_of_a_non_maglev_service_is_translated_only_with_its_flow);
	tcase_add_test(tc, test_nat_reply_without_a_flow_follows_the_current_maglev_choice);
	tcase_add_test(tc, test_dsr_changes_only_the_destination_mac_to_the_backends);
	tcase_add_test(tc, test_non_vip_traffic_and_icmp_echo_replies_to_the_vip_are_untouched);
	tcase_add_test(tc, test_service_with_all_backends_down_gives_no_backend);
	suite_add_tcase(s, tc);

	tc = tcase_create("flows");
	tcase_set_timeout(tc, 120);
	tcase_add_checked_fixture(tc, NULL, teardown_lb);
	tcase_add_test(tc, test_flows_keep_their_backend_when_backends_are_added);
	tcase_add_test(tc, test_flows_keep_their_backend_when_weights_change);
	tcase_add_test(tc, test_draining_backend_keeps_its_flows_but_gets_no_new_ones);
	tcase_add_test(tc, test_down_backend_loses_its_flows_to_other_backends);
	tcase_add_test(tc, test_deleted_backend_loses_its_flows_to_other_backends);
	tcase_add_test(tc, test_flows_of_a_down_backend_are_reaped_by_poll);
	tcase_add_test(tc, test_service_list_counts_flows_packets_and_bytes_per_backend);
	tcase_add_test(tc, test_packets_of_one_new_flow_in_one_burst_share_a_backend);
	tcase_add_test(tc, test_idle_udp_flow_is_forgotten_after_udp_timeout);
	tcase_add_test(tc, test_busy_sweep_ages_a_few_flows_at_once_in_a_large_table);
	tcase_add_test(tc, test_busy_sweep_goes_round_once_per_eighth_of_shortest_timeout);
	tcase_add_test(tc, test_busy_sweep_is_faster_when_the_table_is_short_of_room);
	tcase_add_test(tc, test_tcp_flow_that_saw_fin_ages_after_tcp_fin_timeout);
	tcase_add_test(tc, test_aged_flows_give_their_table_entries_back);
	tcase_add_test(tc, test_flow_table_structure_against_a_reference);
	tcase_add_test(tc, test_flow_table_bounds_crafted_hashes);
	tcase_add_test(tc, test_flow_table_index_grows_and_shrinks_while_in_use);
	tcase_add_test(tc, test_full_flow_table_counts_and_sends_new_flows_to_the_maglev_choice);
	tcase_add_test(tc, test_fragments_of_a_datagram_go_to_one_backend_without_a_flow_entry);
	tcase_add_test(tc, test_fragments_go_to_the_lowest_port_service_of_their_vip_and_protocol);
	tcase_add_test(tc, test_two_lcores_keep_separate_tables_and_counters_sum);
	suite_add_tcase(s, tc);

	tc = tcase_create("protect");
	tcase_set_timeout(tc, 120);
	tcase_add_checked_fixture(tc, NULL, teardown_lb);
	tcase_add_test(tc, test_syn_only_flow_expires_after_syn_timeout_an_acked_one_after_tcp_timeout);
	tcase_add_test(tc, test_syn_after_fin_is_syn_only_again_and_a_syn_on_an_open_flow_is_not);
	tcase_add_test(tc, test_without_protect_a_syn_only_flow_lives_tcp_timeout);
	tcase_add_test(tc, test_syn_defer_sends_syns_to_the_maglev_choice_and_the_ack_makes_the_entry_not_for_rr_or_nat);
	tcase_add_test(tc, test_syn_defer_a_backend_change_before_the_ack_moves_some_handshakes);
	tcase_add_test(tc, test_src_new_flows_limits_new_flows_per_source_prefix);
	tcase_add_test(tc, test_src_new_flows_share_the_rate_among_lb_lcores);
	tcase_add_test(tc, test_src_bucket_math_on_a_fake_clock);
	tcase_add_test(tc, test_src_buckets_take_fixed_memory_and_collisions_share_tokens);
	tcase_add_test(tc, test_max_flows_drops_new_flows_over_the_limit_counting_expiry_and_backend_removal);
	tcase_add_test(tc, test_max_flows_is_shared_among_lb_lcores_and_counts_deferred_syns);
	tcase_add_test(tc, test_max_flows_zero_or_over_the_flow_table_is_refused_with_its_path);
	suite_add_tcase(s, tc);

	tc = tcase_create("icmp");
	tcase_add_checked_fixture(tc, NULL, teardown_lb);
	tcase_add_test(tc, test_echo_request_to_a_vip_is_answered_in_place_with_checksums_right);
	tcase_add_test(tc, test_echo_request_to_a_vip_passes_untouched_with_icmp_echo_false);
	tcase_add_test(tc, test_echo_request_from_a_group_or_zero_mac_is_not_answered);
	tcase_add_test(tc, test_quoted_error_goes_to_the_flows_backend_for_100_flows);
	tcase_add_test(tc, test_quoted_error_without_a_flow_gets_the_flows_maglev_choice);
	tcase_add_test(tc, test_quoted_error_about_a_nat_reply_is_natted_to_the_backend);
	tcase_add_test(tc, test_errors_quoting_garbage_or_no_service_are_dropped_and_counted);
	tcase_add_test(tc, test_frag_needed_and_packet_too_big_builders_field_by_field);
	tcase_add_test(tc, test_mss_clamp_checksum_equals_full_recomputation_for_many_cases);
	tcase_add_test(tc, test_mss_clamp_on_syns_to_the_service_and_nat_syn_acks);
	suite_add_tcase(s, tc);

	tc = tcase_create("schedulers");
	tcase_set_timeout(tc, 120);
	tcase_add_checked_fixture(tc, NULL, teardown_lb);
	tcase_add_test(tc, test_rr_alternates_over_the_up_backends);
	tcase_add_test(tc, test_wrr_shares_of_new_flows_follow_the_weights);
	tcase_add_test(tc, test_lc_picks_the_backend_with_fewest_flows_per_weight);
	suite_add_tcase(s, tc);

	tc = tcase_create("control");
	tcase_set_timeout(tc, 120);
	tcase_add_checked_fixture(tc, NULL, teardown_lb);
	tcase_add_test(tc, test_duplicate_service_name_or_vip_port_proto_is_eexist);
	tcase_add_test(tc, test_unknown_service_or_backend_is_enoent_and_duplicate_backend_eexist);
	tcase_add_test(tc, test_export_reflects_added_and_deleted_services_and_backends);
	tcase_add_test(tc, test_deleted_service_no_longer_balances_and_its_flows_are_reaped);
	tcase_add_test(tc, test_trace_gives_the_maglev_choice_for_a_new_flow_then_the_flows_backend);
	tcase_add_test(tc, test_trace_reports_the_existing_flows_backend_on_an_rr_service);
	tcase_add_test(tc, test_poll_is_due_only_while_the_lcore_has_work);
	tcase_add_test(tc, test_poll_stays_due_until_the_flow_index_is_back_at_its_least);
	tcase_add_test(tc, test_addresses_list_each_vip_and_backend_once_in_first_seen_order);
	suite_add_tcase(s, tc);

	tc = tcase_create("health");
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
	suite_add_tcase(s, tc);
	return s;
}

static int
run_setup(void)
{
	if (pa_pkt_init() != 0) {
		fprintf(stderr, "test_lb: pa_pkt_init failed\n");
		return -1;
	}
	hz = rte_get_tsc_hz();
	return 0;
}

int
main(void)
{
	static const char *const eal_args[] = { "-m", "256",
		"--log-level=pa.lb:warning", "-l", "0", NULL };
	static Suite *(*const suites[])(void) = { lb_suite, NULL };
	const struct pa_test_main t = {
		.name = "test_lb",
		.suites = suites,
		.eal_args = eal_args,
		.mbufs = 1023,
		.pool = &pool,
		.setup = run_setup,
		.teardown = teardown_lb,
	};

	return pa_test_main_eal(&t);
}
