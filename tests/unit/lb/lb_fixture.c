/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_lb's fixture (lb_fixture.h): the LB made from a configuration,
 * frames, mbufs, checksums the long way, the reference Maglev, and the
 * helpers more than one concern's tests use.
 */

#include "lb_fixture.h"

struct rte_mempool *pool;
struct pa_config *cfg;
struct pa_lb *lb;
uint64_t hz;
const char *lb_extra = "";
const char *doc_extra = "";

const uint8_t mac_me[6] = { 0x02, 0, 0, 0, 0, 0x01 };
const uint8_t mac_peer[6] = { 0x02, 0, 0, 0, 0, 0xaa };
const uint8_t mac_srv[6] = { 0x02, 0, 0, 0, 0, 0xbb };

/* ------------------------------------------------------------------ */
/* Small helpers                                                       */
/* ------------------------------------------------------------------ */

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

uint32_t
rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)(rng_state >> 16);
}

uint32_t
ip4(const char *s)
{
	struct in_addr a;

	REQUIRE(inet_pton(AF_INET, s, &a) == 1);
	return a.s_addr;
}

struct pa_ip_addr
addr_of(const char *s)
{
	char why[PA_CONFIG_ERR_MAX];
	struct pa_ip_addr a;

	ck_assert_msg(pa_net_parse_ip(s, &a, why, sizeof(why)) == 0,
		"%s: %s", s, why);
	return a;
}


/* ------------------------------------------------------------------ */
/* Checksums, the long way                                             */
/* ------------------------------------------------------------------ */

/* The sums themselves are the frame builder's: pa_test_ip4_csum(),
 * pa_test_l4_csum(). */

uint16_t
fold_sum(uint32_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

void
set_l4_csum(uint8_t *l3)
{
	bool v4 = (l3[0] >> 4) == 4;
	uint8_t proto = v4 ? l3[9] : l3[6];
	uint8_t *l4 = v4 ? l3 + (l3[0] & 0xf) * 4u : l3 + 40;

	pa_test_put16(l4 + (proto == IPPROTO_TCP ? 16 : 6),
		pa_test_l4_csum(l3));
}

void
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

void
frame_eth(struct pa_test_frame *f, uint16_t vlan, uint16_t etype)
{
	static const uint16_t tpid = RTE_ETHER_TYPE_VLAN;

	pa_test_frame_l2(f, mac_me, mac_peer, vlan != 0 ? 1 : 0, &tpid, vlan,
		etype);
}

void
frame_ipv4(struct pa_test_frame *f, const char *src, const char *dst,
		uint8_t proto, uint8_t tos, uint16_t frag, uint16_t id)
{
	uint8_t s[4], d[4];

	REQUIRE(inet_pton(AF_INET, src, s) == 1);
	REQUIRE(inet_pton(AF_INET, dst, d) == 1);
	pa_test_frame_ipv4(f, s, d, proto, tos, 5, frag, id, 50);
}

void
frame_ipv6(struct pa_test_frame *f, const char *src, const char *dst,
		uint8_t nh, uint8_t tc)
{
	uint8_t s[16], d[16];

	REQUIRE(inet_pton(AF_INET6, src, s) == 1);
	REQUIRE(inet_pton(AF_INET6, dst, d) == 1);
	pa_test_frame_ipv6(f, s, d, nh, tc, 0x12345, 50);
}

void
frame_frag6(struct pa_test_frame *f, uint8_t nh, uint16_t off, bool more,
		uint32_t ident)
{
	pa_test_frame_frag6(f, nh, off, more, ident);
}

void
frame_tcp(struct pa_test_frame *f, uint16_t sport, uint16_t dport,
		uint8_t flags)
{
	pa_test_frame_tcp(f, sport, dport, 5, flags, 0x01020304u + sport, 8192);
}

void
frame_udp(struct pa_test_frame *f, uint16_t sport, uint16_t dport)
{
	pa_test_frame_udp(f, sport, dport);
}

void
frame_icmp(struct pa_test_frame *f)
{
	pa_test_frame_icmp(f, 0 /* echo reply */, 0x1234);
}

void
frame_payload(struct pa_test_frame *f, unsigned int n, uint8_t seed)
{
	pa_test_frame_payload(f, n, seed, 7);
}

void
frame_fix(struct pa_test_frame *f)
{
	pa_test_frame_fix(f, PA_TEST_FIX_IP4_CSUM | PA_TEST_FIX_L4_CSUM);
}

void
frame_pad(struct pa_test_frame *f, uint32_t total)
{
	pa_test_frame_pad(f, total);
}

void
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

struct rte_mbuf *
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

uint8_t
process1(struct rte_mbuf *m, uint64_t now)
{
	uint8_t v = 0xee;

	pa_lb_process(lb, 0, &m, 1, now, &v);
	return v;
}

struct pa_flow_key
key_of(const struct pa_test_frame *f)
{
	struct rte_mbuf *m = mbuf_of(f);
	struct pa_flow_key k;

	REQUIRE(pa_pkt_flow_key(m, pa_pkt_meta(m), &k) == 0);
	rte_pktmbuf_free(m);
	return k;
}

uint32_t
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

uint32_t
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

void
teardown_lb(void)
{
	pa_lb_destroy(lb);
	lb = NULL;
	pa_config_free(cfg);
	cfg = NULL;
}

void
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
	text = pa_test_dq(doc);
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

void
setup_lb(const char *services)
{
	setup_lb_flows(services, 1024, 1);
}

json_int_t
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

struct be_count
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

void
sweep(uint64_t now)
{
	unsigned int i;

	for (i = 0; i < 4; i++)
		pa_lb_poll(lb, 0, now, true);
}

void
service_of(const char *text, struct pa_config_service *svc)
{
	char err[PA_CONFIG_ERR_MAX], *t = pa_test_dq(text);
	json_error_t je;
	json_t *o = json_loads(t, 0, &je);

	ck_assert_msg(o != NULL, "%s: %s", t, je.text);
	ck_assert_msg(pa_lb_config_parse_service(o, &cfg->lb, "$", svc, err,
		sizeof(err)) == 0, "%s", err);
	json_decref(o);
	free(t);
}

void
backend_of(const char *name, const char *text, struct pa_config_backend *be)
{
	char err[PA_CONFIG_ERR_MAX], *t = pa_test_dq(text);
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

int
add_backend(const char *name, const char *text)
{
	char err[PA_CONFIG_ERR_MAX];
	struct pa_config_backend be;

	backend_of(name, text, &be);
	return pa_lb_backend_add(lb, name, &be, err, sizeof(err));
}

int
set_state(const char *name, const char *addr, enum pa_lb_state st)
{
	char err[PA_CONFIG_ERR_MAX];
	struct pa_ip_addr a = addr_of(addr);

	return pa_lb_backend_set(lb, name, &a, NULL, &st, err, sizeof(err));
}

int
set_weight(const char *name, const char *addr, uint32_t w)
{
	char err[PA_CONFIG_ERR_MAX];
	struct pa_ip_addr a = addr_of(addr);

	return pa_lb_backend_set(lb, name, &a, &w, NULL, err, sizeof(err));
}

int
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

void
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

/* ------------------------------------------------------------------ */
/* Shared by several concerns                                          */
/* ------------------------------------------------------------------ */

bool
is_web4_backend(uint32_t a)
{
	return a == ip4("10.1.0.1") || a == ip4("10.1.0.2") ||
		a == ip4("10.1.0.3");
}

void
dns4_flow(unsigned int i)
{
	char src[32];
	struct pa_test_frame f;

	snprintf(src, sizeof(src), "198.51.%u.%u", 100 + i / 200, 1 + i % 200);
	frame_l4(&f, src, "10.0.0.40", IPPROTO_UDP, (uint16_t)(1000 + i), 53,
		0, 4);
	send_ipip4(&f, T0);
}

void
check_untouched(const struct pa_test_frame *f)
{
	struct rte_mbuf *m = mbuf_of(f);

	REQUIRE(process1(m, T0) == PA_LB_V_FORWARD);
	REQUIRE(rte_pktmbuf_pkt_len(m) == f->len);
	REQUIRE(memcmp(rte_pktmbuf_mtod(m, const uint8_t *), f->b, f->len) == 0);
	rte_pktmbuf_free(m);
}
