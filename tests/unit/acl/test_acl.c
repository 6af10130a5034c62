/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of lib/acl: the rule semantics of pa_acl.h (priority, families,
 * prefixes, ports, protocols, in_port, non-IP), the actions (mark, police),
 * per-rule counters across rebuilds and slot-store growth, the control-plane
 * errors, export and stats.
 *
 * Both entry points are pinned: lookup() classifies a tuple with
 * pa_acl_trace() and with pa_acl_classify() on a real frame built from
 * bytes and parsed by lib/pkt, and fails unless they agree (same rule, the
 * verdict of its action, its hit counter moved by one).
 *
 * One EAL (--no-huge) is started in main() and the suite runs without
 * fork (CK_NOFORK); each test gets a fresh ACL from setup_acl() and the
 * checked fixture frees it, so a failing test leaves nothing behind.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <netinet/in.h>

#include <check.h>
#include <jansson.h>

#include <rte_common.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "pa_acl.h"
#include "pa_config.h"
#include "pa_pkt.h"
#include "pa_test_frame.h"
#include "pa_test_main.h"

#define NO_PORT		0xffff

/* ------------------------------------------------------------------ */
/* Fixture                                                             */
/* ------------------------------------------------------------------ */

static struct rte_mempool *pool;
static struct pa_config *cfg;
static struct pa_acl *acl;
static uint16_t port_map[RTE_MAX_ETHPORTS];
static const uint16_t *acl_port_map;	/* what the ACL was created with */

/* Two ports: wan0 (index 0) and lan0 (index 1). */
#define DOC_PORTS \
	"\"ports\": [{\"name\": \"wan0\", \"devargs\": \"net_null0\"}," \
	" {\"name\": \"lan0\", \"devargs\": \"net_null1\"}]"

static void
teardown_acl(void)
{
	pa_acl_destroy(acl);
	acl = NULL;
	pa_config_free(cfg);
	cfg = NULL;
	acl_port_map = NULL;
}

/*
 * A fresh ACL loaded from @p acl_json (the value of "acl", or NULL for a
 * document without one). @p map: ethdev port -> port index, or NULL.
 */
static void
setup_acl(const char *acl_json, const uint16_t *map)
{
	char doc[8192], err[PA_CONFIG_ERR_MAX];
	struct pa_acl_opts o;

	teardown_acl();
	if (acl_json != NULL)
		snprintf(doc, sizeof(doc), "{" DOC_PORTS ", \"acl\": %s}",
			acl_json);
	else
		snprintf(doc, sizeof(doc), "{" DOC_PORTS "}");
	cfg = pa_config_load_string(doc, NULL, err, sizeof(err));
	ck_assert_msg(cfg != NULL, "config: %s", err);
	memset(&o, 0, sizeof(o));
	o.rcu = NULL;
	o.n_lcores = 1;
	o.socket = SOCKET_ID_ANY;
	o.cfg = cfg;
	o.port_index_of = map;
	o.no_folder = true;	/* tiers move only when a test says so */
	acl = pa_acl_create(&o, err, sizeof(err));
	ck_assert_msg(acl != NULL, "pa_acl_create: %s", err);
	acl_port_map = map;
}

/* ethdev port 3 is index 1 (lan0), port 0 index 0 (wan0), others none. */
static const uint16_t *
map_3_is_1(void)
{
	unsigned int i;

	for (i = 0; i < RTE_DIM(port_map); i++)
		port_map[i] = NO_PORT;
	port_map[0] = 0;
	port_map[3] = 1;
	return port_map;
}

/* A rule from its JSON text (the config schema). */
static struct pa_config_acl_rule
rule_of(const char *text)
{
	struct pa_config_acl_rule r;
	char err[PA_CONFIG_ERR_MAX];
	json_error_t jerr;
	json_t *j;
	int rc;

	j = json_loads(text, 0, &jerr);
	ck_assert_msg(j != NULL, "bad test JSON %s: %s", text, jerr.text);
	memset(&r, 0, sizeof(r));
	rc = pa_acl_config_parse_rule(j, cfg, "$", &r, err, sizeof(err));
	json_decref(j);
	ck_assert_msg(rc == 0, "rule %s: %s", text, err);
	return r;
}

static void
add(const char *text)
{
	struct pa_config_acl_rule r = rule_of(text);
	char err[256] = "";
	int rc;

	rc = pa_acl_rule_add(acl, &r, err, sizeof(err));
	ck_assert_msg(rc == 0, "add %s: %d %s", text, rc, err);
}

static void
del(uint32_t id)
{
	char err[256] = "";
	int rc;

	rc = pa_acl_rule_delete(acl, id, err, sizeof(err));
	ck_assert_msg(rc == 0, "delete %u: %d %s", id, rc, err);
}

/* Replace the table with @p n rules (and the given default/non_ip). */
static int
replace_rules(const struct pa_config_acl_rule *rules, unsigned int n,
		enum pa_acl_action def, bool non_ip_drop)
{
	struct pa_config_acl a;
	char err[256] = "";

	memset(&a, 0, sizeof(a));
	a.present = true;
	a.def = def;
	a.non_ip_drop = non_ip_drop;
	a.n_rules = n;
	a.rules = (struct pa_config_acl_rule *)(uintptr_t)rules;
	return pa_acl_rules_replace(acl, &a, err, sizeof(err));
}

/* Counters of rule @p id from pa_acl_rules_json(); false if absent. */
static bool
rule_hits(uint32_t id, uint64_t *pkts, uint64_t *bytes)
{
	json_t *arr = pa_acl_rules_json(acl), *o;
	bool found = false;
	size_t i;

	ck_assert_ptr_nonnull(arr);
	json_array_foreach(arr, i, o) {
		if (json_integer_value(json_object_get(o, "id")) != id)
			continue;
		ck_assert(json_is_integer(json_object_get(o, "hits")));
		ck_assert(json_is_integer(json_object_get(o, "bytes")));
		if (pkts != NULL)
			*pkts = (uint64_t)json_integer_value(
				json_object_get(o, "hits"));
		if (bytes != NULL)
			*bytes = (uint64_t)json_integer_value(
				json_object_get(o, "bytes"));
		found = true;
	}
	json_decref(arr);
	return found;
}

static uint64_t
hits(uint32_t id)
{
	uint64_t p = 0;

	ck_assert_msg(rule_hits(id, &p, NULL), "rule %u not listed", id);
	return p;
}

static json_int_t
stat_int(const char *key)
{
	json_t *s = pa_acl_stats_json(acl);
	json_int_t v;

	ck_assert_ptr_nonnull(s);
	ck_assert_msg(json_is_integer(json_object_get(s, key)),
		"stats.%s missing", key);
	v = json_integer_value(json_object_get(s, key));
	json_decref(s);
	return v;
}

static unsigned int
rnd(unsigned int n)
{
	return (unsigned int)rand() % n;
}

/* ------------------------------------------------------------------ */
/* Frames                                                              */
/* ------------------------------------------------------------------ */

/*
 * Frames from the shared builder (pa_test_frame.h), this suite's way:
 * 02:..:02 -> 02:..:01, TTL/hop limit 64, IPv4 id 0x1234, IPv6 fragment
 * id 0x42, SYN-only TCP, payload that reads as ports 9999 -> 9999;
 * frame_fix() fills the lengths and the IPv4 checksum.
 */
static const uint8_t mac_dst[6] = { 0x02, 0, 0, 0, 0, 0x01 };
static const uint8_t mac_src[6] = { 0x02, 0, 0, 0, 0, 0x02 };

static void
frame_eth(struct pa_test_frame *f, uint16_t etype)
{
	pa_test_frame_l2(f, mac_dst, mac_src, 0, NULL, 0, etype);
}

/* IPv4 header: addresses in network order, frag the raw flags/offset
 * field, ihl 5 or more (options are NOPs). */
static void
frame_ipv4(struct pa_test_frame *f, const uint8_t src[4], const uint8_t dst[4],
		uint8_t proto, uint8_t tos, uint16_t frag, unsigned int ihl)
{
	pa_test_frame_ipv4(f, src, dst, proto, tos, ihl, frag, 0x1234, 64);
}

static void
frame_ipv6(struct pa_test_frame *f, const uint8_t src[16],
		const uint8_t dst[16], uint8_t nh, uint8_t tc, uint32_t flow)
{
	pa_test_frame_ipv6(f, src, dst, nh, tc, flow, 64);
}

/* IPv6 fragment header, offset in 8-byte units. */
static void
frame_frag6(struct pa_test_frame *f, uint8_t nh, uint16_t offset, bool more)
{
	pa_test_frame_frag6(f, nh, offset, more, 0x42);
}

/* L4 header of @p proto (TCP, UDP, SCTP with ports; ICMP/ICMPv6; other
 * protocols: 8 bytes of payload). */
static void
frame_l4(struct pa_test_frame *f, uint8_t proto, uint16_t sport,
		uint16_t dport)
{
	uint8_t *p;

	switch (proto) {
	case IPPROTO_TCP:
		pa_test_frame_tcp(f, sport, dport, 5, 0x02, 0, 0);
		break;
	case IPPROTO_UDP:
		pa_test_frame_udp(f, sport, dport);
		break;
	case IPPROTO_SCTP:
		pa_test_frame_sctp(f, sport, dport);
		break;
	case IPPROTO_ICMP:
	case IPPROTO_ICMPV6:
		pa_test_frame_icmp(f, proto == IPPROTO_ICMP ? 8 : 128, 0);
		break;
	default:
		f->l4 = -1;
		p = pa_test_frame_grow(f, 8);
		pa_test_put16(p, sport);
		pa_test_put16(p + 2, dport);
		break;
	}
}

/* Payload that would read as ports 9999 -> 9999 if taken for L4. */
static void
frame_payload(struct pa_test_frame *f, unsigned int n)
{
	pa_test_frame_payload16(f, n, 9999);
}

/* Lengths and the IPv4 checksum. */
static void
frame_fix(struct pa_test_frame *f)
{
	pa_test_frame_fix(f, PA_TEST_FIX_IP4_CSUM);
}

/* An mbuf holding @p f, received on ethdev port @p port, parsed. */
static struct rte_mbuf *
mbuf_of(const struct pa_test_frame *f, uint16_t port)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	char *p;

	ck_assert_ptr_nonnull(m);
	p = rte_pktmbuf_append(m, (uint16_t)f->len);
	ck_assert_ptr_nonnull(p);
	memcpy(p, f->b, f->len);
	m->port = port;
	ck_assert_int_eq(pa_pkt_parse_mbuf(m), PA_PKT_OK);
	return m;
}

/* Classify one frame; the mbuf is freed. */
static uint8_t
classify_frame(const struct pa_test_frame *f, uint16_t port)
{
	struct rte_mbuf *m = mbuf_of(f, port);
	uint8_t v = 0xee;

	pa_acl_classify(acl, 0, &m, 1, &v);
	rte_pktmbuf_free(m);
	return v;
}

/* ------------------------------------------------------------------ */
/* Tuples: trace and classify, which must agree                        */
/* ------------------------------------------------------------------ */

struct tuple {
	int family;			/* 4 or 6 */
	uint8_t src[16], dst[16];	/* network order (4 bytes for IPv4) */
	uint8_t proto;
	uint16_t sport, dport;
	bool later_frag;		/* a non-first fragment: no ports */
	bool first_frag;		/* MF set, offset 0 */
	uint16_t port;			/* ethdev port it arrives on */
	uint32_t pad_to;		/* frame length at least this */
};

static struct tuple
tup(const char *src, const char *dst, uint8_t proto, uint16_t sport,
		uint16_t dport)
{
	struct tuple t;

	memset(&t, 0, sizeof(t));
	t.family = strchr(src, ':') != NULL ? 6 : 4;
	ck_assert_int_eq(inet_pton(t.family == 4 ? AF_INET : AF_INET6, src,
		t.src), 1);
	ck_assert_int_eq(inet_pton(t.family == 4 ? AF_INET : AF_INET6, dst,
		t.dst), 1);
	t.proto = proto;
	t.sport = sport;
	t.dport = dport;
	return t;
}

static bool
proto_has_ports(uint8_t proto)
{
	return proto == IPPROTO_TCP || proto == IPPROTO_UDP ||
		proto == IPPROTO_SCTP;
}

static void
frame_of(const struct tuple *t, struct pa_test_frame *f)
{
	uint16_t frag = 0;

	if (t->later_frag)
		frag = 100;		/* 800 bytes in */
	if (t->first_frag)
		frag |= 0x2000;		/* MF */
	if (t->family == 4) {
		frame_eth(f, 0x0800);
		frame_ipv4(f, t->src, t->dst, t->proto, 0, frag, 5);
	} else {
		frame_eth(f, 0x86dd);
		if (t->later_frag || t->first_frag) {
			frame_ipv6(f, t->src, t->dst, IPPROTO_FRAGMENT, 0, 0);
			frame_frag6(f, t->proto, t->later_frag ? 100 : 0,
				t->first_frag);
		} else {
			frame_ipv6(f, t->src, t->dst, t->proto, 0, 0);
		}
	}
	if (t->later_frag)
		frame_payload(f, 16);
	else
		frame_l4(f, t->proto, t->sport, t->dport);
	if (f->len < t->pad_to)
		frame_payload(f, t->pad_to - f->len);
	frame_fix(f);
}

static int
in_port_index(uint16_t port)
{
	if (acl_port_map == NULL || acl_port_map[port] == NO_PORT)
		return -1;
	return acl_port_map[port];
}

/* pa_acl_trace() of a tuple: the rule id (0: default) and its action. */
static uint32_t
trace_tuple(const struct tuple *t, enum pa_acl_action *action)
{
	struct pa_flow_key key;
	enum pa_acl_action a = (enum pa_acl_action)-1;
	uint32_t id = UINT32_MAX;
	bool ports = proto_has_ports(t->proto) && !t->later_frag;

	memset(&key, 0, sizeof(key));
	key.family = (uint8_t)t->family;
	key.proto = t->proto;
	key.sport = ports ? rte_cpu_to_be_16(t->sport) : 0;
	key.dport = ports ? rte_cpu_to_be_16(t->dport) : 0;
	if (t->family == 4) {
		memcpy(&key.v4.src, t->src, 4);
		memcpy(&key.v4.dst, t->dst, 4);
	} else {
		memcpy(key.v6.src, t->src, 16);
		memcpy(key.v6.dst, t->dst, 16);
	}
	ck_assert_int_eq(pa_acl_trace(acl, &key, ports,
		in_port_index(t->port), &id, &a), 0);
	if (action != NULL)
		*action = a;
	return id;
}

static uint8_t
verdict_of(enum pa_acl_action a)
{
	return a == PA_ACL_DROP ? PA_ACL_V_DROP_ACL : PA_ACL_V_FORWARD;
}

/*
 * The rule that @p t matches, by pa_acl_trace() and by pa_acl_classify()
 * on a real frame: they must agree (verdict of the action, counter of the
 * rule or default_hits moved by one). Not for police rules.
 */
static uint32_t
lookup(const struct tuple *t)
{
	enum pa_acl_action a;
	struct pa_test_frame f;
	uint64_t before, after;
	uint32_t id;
	uint8_t v;

	id = trace_tuple(t, &a);
	ck_assert_int_ne(a, PA_ACL_POLICE);
	before = id != 0 ? hits(id) : (uint64_t)stat_int("default_hits");
	frame_of(t, &f);
	v = classify_frame(&f, t->port);
	after = id != 0 ? hits(id) : (uint64_t)stat_int("default_hits");
	ck_assert_msg(v == verdict_of(a),
		"trace says rule %u action %d, classify gave verdict %u",
		id, a, v);
	ck_assert_msg(after == before + 1,
		"trace says rule %u, but its counter went %" PRIu64 " -> %" PRIu64,
		id, before, after);
	return id;
}

/* lookup() of a tuple given as text. */
static uint32_t
look(const char *src, const char *dst, uint8_t proto, uint16_t sport,
		uint16_t dport)
{
	struct tuple t = tup(src, dst, proto, sport, dport);

	return lookup(&t);
}

/* ------------------------------------------------------------------ */
/* Priority and defaults                                               */
/* ------------------------------------------------------------------ */

START_TEST(test_higher_priority_wins_regardless_of_order_and_id)
{
	/* the best rule has the highest id and comes last */
	setup_acl("{\"rules\": ["
		"{\"id\": 1, \"priority\": 10, \"action\": \"drop\"},"
		"{\"id\": 2, \"priority\": 30, \"src\": \"10.0.0.0/8\", \"action\": \"drop\"},"
		"{\"id\": 9, \"priority\": 50, \"src\": \"10.0.0.0/8\", \"action\": \"permit\"}]}",
		NULL);
	ck_assert_uint_eq(look("10.1.2.3", "192.0.2.1", IPPROTO_UDP, 1, 2), 9);
	ck_assert_uint_eq(look("11.1.2.3", "192.0.2.1", IPPROTO_UDP, 1, 2), 1);

	/* same rules added one by one in the opposite order */
	setup_acl(NULL, NULL);
	add("{\"id\": 9, \"priority\": 50, \"src\": \"10.0.0.0/8\", \"action\": \"permit\"}");
	add("{\"id\": 2, \"priority\": 30, \"src\": \"10.0.0.0/8\", \"action\": \"drop\"}");
	add("{\"id\": 1, \"priority\": 10, \"action\": \"drop\"}");
	ck_assert_uint_eq(look("10.1.2.3", "192.0.2.1", IPPROTO_UDP, 1, 2), 9);

	/* a more specific rule of lower priority loses */
	add("{\"id\": 3, \"priority\": 40, \"src\": \"10.1.2.3/32\", \"dst\": \"192.0.2.1/32\", \"proto\": \"udp\", \"sport\": 1, \"dport\": 2, \"action\": \"drop\"}");
	ck_assert_uint_eq(look("10.1.2.3", "192.0.2.1", IPPROTO_UDP, 1, 2), 9);
	/* and wins once it has the highest priority */
	del(9);
	ck_assert_uint_eq(look("10.1.2.3", "192.0.2.1", IPPROTO_UDP, 1, 2), 3);
}
END_TEST

START_TEST(test_equal_priority_lower_id_wins)
{
	setup_acl("{\"rules\": ["
		"{\"id\": 7, \"priority\": 5, \"action\": \"drop\"},"
		"{\"id\": 3, \"priority\": 5, \"dst\": \"2001:db8::/32\", \"action\": \"permit\"},"
		"{\"id\": 4, \"priority\": 5, \"action\": \"permit\"}]}", NULL);
	ck_assert_uint_eq(look("2001:db8::1", "2001:db8::2", IPPROTO_TCP, 1, 2), 3);
	ck_assert_uint_eq(look("10.0.0.1", "10.0.0.2", IPPROTO_TCP, 1, 2), 4);

	setup_acl(NULL, NULL);
	add("{\"id\": 4, \"priority\": 5, \"action\": \"permit\"}");
	add("{\"id\": 7, \"priority\": 5, \"action\": \"drop\"}");
	add("{\"id\": 3, \"priority\": 5, \"dst\": \"2001:db8::/32\", \"action\": \"permit\"}");
	ck_assert_uint_eq(look("2001:db8::1", "2001:db8::2", IPPROTO_TCP, 1, 2), 3);
	ck_assert_uint_eq(look("10.0.0.1", "10.0.0.2", IPPROTO_TCP, 1, 2), 4);
	del(4);
	ck_assert_uint_eq(look("10.0.0.1", "10.0.0.2", IPPROTO_TCP, 1, 2), 7);
}
END_TEST

START_TEST(test_priority_zero_and_max_rank_correctly)
{
	setup_acl("{\"rules\": ["
		"{\"id\": 1, \"priority\": 0, \"action\": \"drop\"},"
		"{\"id\": 2, \"priority\": 2147483647, \"src\": \"10.0.0.0/8\", \"action\": \"permit\"},"
		"{\"id\": 3, \"priority\": 2147483646, \"action\": \"drop\"}]}", NULL);
	ck_assert_uint_eq(look("10.0.0.1", "10.0.0.2", IPPROTO_UDP, 1, 2), 2);
	ck_assert_uint_eq(look("11.0.0.1", "10.0.0.2", IPPROTO_UDP, 1, 2), 3);
}
END_TEST

START_TEST(test_default_permit_when_no_rule_matches)
{
	enum pa_acl_action a;
	struct tuple t;

	setup_acl("{\"default\": \"permit\", \"rules\": ["
		"{\"id\": 1, \"src\": \"10.0.0.0/8\", \"action\": \"drop\"}]}",
		NULL);
	t = tup("192.0.2.1", "192.0.2.2", IPPROTO_TCP, 1, 2);
	ck_assert_uint_eq(trace_tuple(&t, &a), 0);
	ck_assert_int_eq(a, PA_ACL_PERMIT);
	ck_assert_uint_eq(lookup(&t), 0);
	ck_assert_int_eq(stat_int("default_hits"), 1);
}
END_TEST

START_TEST(test_default_drop_when_no_rule_matches)
{
	enum pa_acl_action a;
	struct tuple t;
	struct pa_test_frame f;

	setup_acl("{\"default\": \"drop\", \"rules\": ["
		"{\"id\": 1, \"src\": \"10.0.0.0/8\", \"action\": \"permit\"}]}",
		NULL);
	t = tup("192.0.2.1", "192.0.2.2", IPPROTO_TCP, 1, 2);
	ck_assert_uint_eq(trace_tuple(&t, &a), 0);
	ck_assert_int_eq(a, PA_ACL_DROP);
	frame_of(&t, &f);
	ck_assert_uint_eq(classify_frame(&f, 0), PA_ACL_V_DROP_ACL);
	t = tup("2001:db8::1", "2001:db8::2", IPPROTO_TCP, 1, 2);
	frame_of(&t, &f);
	ck_assert_uint_eq(classify_frame(&f, 0), PA_ACL_V_DROP_ACL);
	ck_assert_uint_eq(look("10.0.0.1", "192.0.2.2", IPPROTO_TCP, 1, 2), 1);
	ck_assert_int_eq(stat_int("default_hits"), 2);
}
END_TEST

START_TEST(test_empty_acl_permits_everything)
{
	setup_acl(NULL, NULL);
	ck_assert_int_eq(stat_int("rules"), 0);
	ck_assert_uint_eq(look("10.0.0.1", "10.0.0.2", IPPROTO_UDP, 1, 2), 0);
	ck_assert_uint_eq(look("::1", "::2", IPPROTO_UDP, 1, 2), 0);
	ck_assert_uint_eq(look("::1", "::2", IPPROTO_ICMPV6, 0, 0), 0);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Families                                                            */
/* ------------------------------------------------------------------ */

START_TEST(test_any_prefix_matches_both_families)
{
	setup_acl("{\"rules\": [{\"id\": 5, \"src\": \"any\", \"dst\": \"any\", \"action\": \"drop\"}]}",
		NULL);
	ck_assert_uint_eq(look("10.0.0.1", "10.0.0.2", IPPROTO_UDP, 1, 2), 5);
	ck_assert_uint_eq(look("2001:db8::1", "::1", IPPROTO_UDP, 1, 2), 5);
	ck_assert_uint_eq(look("0.0.0.0", "255.255.255.255", 0, 0, 0), 5);
	ck_assert_uint_eq(look("::", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
		IPPROTO_ICMPV6, 0, 0), 5);
}
END_TEST

START_TEST(test_ipv4_rule_does_not_match_ipv6_packets)
{
	setup_acl("{\"rules\": ["
		"{\"id\": 1, \"src\": \"0.0.0.0/0\", \"action\": \"drop\"},"
		"{\"id\": 2, \"dst\": \"0.0.0.0/0\", \"action\": \"drop\"},"
		"{\"id\": 3, \"src\": \"10.0.0.0/8\", \"dst\": \"any\", \"action\": \"drop\"}]}",
		NULL);
	/* ::ffff:10.0.0.1 is still IPv6 */
	ck_assert_uint_eq(look("::ffff:10.0.0.1", "::ffff:10.0.0.2",
		IPPROTO_UDP, 1, 2), 0);
	ck_assert_uint_eq(look("a00::", "::", IPPROTO_UDP, 1, 2), 0);
	ck_assert_uint_eq(look("10.0.0.1", "10.0.0.2", IPPROTO_UDP, 1, 2), 1);
}
END_TEST

START_TEST(test_ipv6_rule_does_not_match_ipv4_packets)
{
	setup_acl("{\"rules\": ["
		"{\"id\": 1, \"src\": \"::/0\", \"action\": \"drop\"},"
		"{\"id\": 2, \"dst\": \"::/0\", \"action\": \"drop\"},"
		"{\"id\": 3, \"src\": \"::ffff:0:0/96\", \"action\": \"drop\"}]}",
		NULL);
	ck_assert_uint_eq(look("10.0.0.1", "10.0.0.2", IPPROTO_UDP, 1, 2), 0);
	ck_assert_uint_eq(look("0.0.0.0", "0.0.0.0", IPPROTO_TCP, 0, 0), 0);
	ck_assert_uint_eq(look("2001:db8::1", "::1", IPPROTO_UDP, 1, 2), 1);
	ck_assert_uint_eq(look("::ffff:10.0.0.1", "::1", IPPROTO_UDP, 1, 2), 1);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Prefix boundaries                                                   */
/* ------------------------------------------------------------------ */

static void
addr_mask(uint8_t *a, unsigned int nbytes, unsigned int len, bool host_ones)
{
	unsigned int i;

	for (i = 0; i < nbytes * 8; i++) {
		if (i < len)
			continue;
		if (host_ones)
			a[i / 8] |= (uint8_t)(0x80 >> (i % 8));
		else
			a[i / 8] &= (uint8_t)~(0x80 >> (i % 8));
	}
}

/* a += d (d = +1 or -1) over nbytes; false when it wrapped. */
static bool
addr_step(uint8_t *a, unsigned int nbytes, int d)
{
	int i;

	for (i = (int)nbytes - 1; i >= 0; i--) {
		if (d > 0 && ++a[i] != 0)
			return true;
		if (d < 0 && a[i]-- != 0)
			return true;
	}
	return false;
}

static void
flip_bit(uint8_t *a, unsigned int bit)
{
	a[bit / 8] ^= (uint8_t)(0x80 >> (bit % 8));
}

/*
 * With one rule "<field>": base/len (field src or dst), the addresses just
 * inside the prefix match it and those just outside do not, through both
 * entry points.
 */
static void
check_prefix(int family, const uint8_t *base, unsigned int len, bool src)
{
	unsigned int nb = family == 4 ? 4 : 16;
	int af = family == 4 ? AF_INET : AF_INET6;
	uint8_t net[16], last[16], x[16], other[16];
	uint8_t before[16], after[16], flipped[16];
	char txt[INET6_ADDRSTRLEN], rule[256], a1[INET6_ADDRSTRLEN];
	struct pa_config_acl_rule r;
	struct tuple t;
	unsigned int k;
	struct {
		const uint8_t *addr;
		bool inside;
		bool valid;
	} probes[6];

	memcpy(net, base, nb);
	addr_mask(net, nb, len, false);
	memcpy(last, base, nb);
	addr_mask(last, nb, len, true);
	ck_assert_ptr_nonnull(inet_ntop(af, net, txt, sizeof(txt)));
	snprintf(rule, sizeof(rule),
		"{\"id\": 1, \"%s\": \"%s/%u\", \"action\": \"drop\"}",
		src ? "src" : "dst", txt, len);
	r = rule_of(rule);
	ck_assert_int_eq(replace_rules(&r, 1, PA_ACL_PERMIT, false), 0);

	/* the other address of the packet: never constrained */
	memset(other, 0x5a, sizeof(other));
	memcpy(before, net, nb);
	memcpy(after, last, nb);
	memcpy(flipped, base, nb);
	probes[0].addr = net;
	probes[0].inside = true;
	probes[0].valid = true;
	probes[1].addr = last;
	probes[1].inside = true;
	probes[1].valid = true;
	probes[2].addr = base;
	probes[2].inside = true;
	probes[2].valid = true;
	probes[3].addr = before;
	probes[3].inside = false;
	probes[3].valid = len > 0 && addr_step(before, nb, -1);
	probes[4].addr = after;
	probes[4].inside = false;
	probes[4].valid = len > 0 && addr_step(after, nb, +1);
	probes[5].addr = flipped;
	probes[5].inside = false;
	probes[5].valid = len > 0;
	if (len > 0)
		flip_bit(flipped, len - 1);

	for (k = 0; k < RTE_DIM(probes); k++) {
		if (!probes[k].valid)
			continue;
		memset(&t, 0, sizeof(t));
		t.family = family;
		memcpy(t.src, src ? probes[k].addr : other, nb);
		memcpy(t.dst, src ? other : probes[k].addr, nb);
		memcpy(x, probes[k].addr, nb);
		t.proto = IPPROTO_UDP;
		t.sport = 1000;
		t.dport = 2000;
		ck_assert_msg(lookup(&t) == (probes[k].inside ? 1u : 0u),
			"%s %s/%u: %s %s should %smatch (probe %u)",
			src ? "src" : "dst", txt, len,
			src ? "src" : "dst", inet_ntop(af, x, a1, sizeof(a1)),
			probes[k].inside ? "" : "not ", k);
	}
}

START_TEST(test_ipv6_prefix_of_every_length_class_matches_exactly_its_addresses)
{
	static const unsigned int lens[] = {
		0, 1, 31, 32, 33, 63, 64, 65, 96, 127, 128
	};
	/* bits alternate around every boundary tested */
	static const uint8_t base1[16] = {
		0xa0, 0x01, 0x0d, 0xb9, 0x85, 0xa3, 0x12, 0x35,
		0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0, 0x13, 0x57 };
	static const uint8_t base2[16] = {
		0x20, 0x01, 0x0d, 0xb8, 0xff, 0xff, 0xff, 0xfe,
		0x80, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00 };
	unsigned int i;

	setup_acl(NULL, NULL);
	for (i = 0; i < RTE_DIM(lens); i++) {
		check_prefix(6, base1, lens[i], true);
		check_prefix(6, base1, lens[i], false);
		check_prefix(6, base2, lens[i], true);
		check_prefix(6, base2, lens[i], false);
	}
}
END_TEST

START_TEST(test_ipv4_prefix_boundaries_match_exactly_their_addresses)
{
	static const unsigned int lens[] = { 0, 1, 8, 24, 31, 32 };
	static const uint8_t base1[4] = { 0x8a, 0x55, 0xaa, 0x35 };
	static const uint8_t base2[4] = { 10, 255, 255, 254 };
	unsigned int i;

	setup_acl(NULL, NULL);
	for (i = 0; i < RTE_DIM(lens); i++) {
		check_prefix(4, base1, lens[i], true);
		check_prefix(4, base1, lens[i], false);
		check_prefix(4, base2, lens[i], true);
		check_prefix(4, base2, lens[i], false);
	}
	/* /0 written as "any": every address of both families */
	add("{\"id\": 9, \"priority\": 9, \"src\": \"any\", \"action\": \"drop\"}");
	ck_assert_uint_eq(look("0.0.0.0", "1.2.3.4", IPPROTO_UDP, 1, 2), 9);
	ck_assert_uint_eq(look("255.255.255.255", "1.2.3.4", IPPROTO_UDP, 1, 2), 9);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Ports and protocols                                                 */
/* ------------------------------------------------------------------ */

START_TEST(test_port_ranges_are_inclusive_at_both_ends)
{
	setup_acl("{\"rules\": ["
		"{\"id\": 1, \"dport\": \"1000-2000\", \"proto\": \"tcp\", \"action\": \"drop\"},"
		"{\"id\": 2, \"sport\": \"3000-3001\", \"proto\": \"udp\", \"action\": \"drop\"},"
		"{\"id\": 3, \"sport\": \"0-10\", \"dport\": \"65530-65535\", \"action\": \"drop\"}]}",
		NULL);
	ck_assert_uint_eq(look("10.0.0.1", "10.0.0.2", IPPROTO_TCP, 5, 999), 0);
	ck_assert_uint_eq(look("10.0.0.1", "10.0.0.2", IPPROTO_TCP, 5, 1000), 1);
	ck_assert_uint_eq(look("10.0.0.1", "10.0.0.2", IPPROTO_TCP, 5, 1500), 1);
	ck_assert_uint_eq(look("10.0.0.1", "10.0.0.2", IPPROTO_TCP, 5, 2000), 1);
	ck_assert_uint_eq(look("10.0.0.1", "10.0.0.2", IPPROTO_TCP, 5, 2001), 0);
	ck_assert_uint_eq(look("::1", "::2", IPPROTO_TCP, 5, 2000), 1);
	ck_assert_uint_eq(look("::1", "::2", IPPROTO_TCP, 5, 2001), 0);

	ck_assert_uint_eq(look("10.0.0.1", "10.0.0.2", IPPROTO_UDP, 2999, 5), 0);
	ck_assert_uint_eq(look("10.0.0.1", "10.0.0.2", IPPROTO_UDP, 3000, 5), 2);
	ck_assert_uint_eq(look("10.0.0.1", "10.0.0.2", IPPROTO_UDP, 3001, 5), 2);
	ck_assert_uint_eq(look("10.0.0.1", "10.0.0.2", IPPROTO_UDP, 3002, 5), 0);

	/* both fields must match; the ends of the port space */
	ck_assert_uint_eq(look("10.0.0.1", "10.0.0.2", IPPROTO_SCTP, 0, 65535), 3);
	ck_assert_uint_eq(look("10.0.0.1", "10.0.0.2", IPPROTO_SCTP, 10, 65530), 3);
	ck_assert_uint_eq(look("10.0.0.1", "10.0.0.2", IPPROTO_SCTP, 11, 65535), 0);
	ck_assert_uint_eq(look("10.0.0.1", "10.0.0.2", IPPROTO_SCTP, 0, 65529), 0);
	ck_assert_uint_eq(look("::1", "::2", IPPROTO_SCTP, 0, 65535), 3);
}
END_TEST

START_TEST(test_single_port_matches_only_that_port)
{
	setup_acl("{\"rules\": ["
		"{\"id\": 1, \"dport\": \"53\", \"proto\": \"udp\", \"action\": \"drop\"},"
		"{\"id\": 2, \"sport\": 0, \"action\": \"drop\"},"
		"{\"id\": 3, \"dport\": 65535, \"action\": \"drop\"}]}", NULL);
	ck_assert_uint_eq(look("10.0.0.1", "10.0.0.2", IPPROTO_UDP, 9, 52), 0);
	ck_assert_uint_eq(look("10.0.0.1", "10.0.0.2", IPPROTO_UDP, 9, 53), 1);
	ck_assert_uint_eq(look("10.0.0.1", "10.0.0.2", IPPROTO_UDP, 9, 54), 0);
	ck_assert_uint_eq(look("10.0.0.1", "10.0.0.2", IPPROTO_UDP, 0, 80), 2);
	ck_assert_uint_eq(look("10.0.0.1", "10.0.0.2", IPPROTO_UDP, 1, 80), 0);
	ck_assert_uint_eq(look("10.0.0.1", "10.0.0.2", IPPROTO_TCP, 1, 65535), 3);
	ck_assert_uint_eq(look("10.0.0.1", "10.0.0.2", IPPROTO_TCP, 1, 65534), 0);
}
END_TEST

START_TEST(test_port_any_matches_every_port)
{
	struct pa_config_acl_rule r;
	unsigned int p;

	setup_acl("{\"rules\": [{\"id\": 1, \"sport\": \"any\", \"dport\": \"0-65535\", \"proto\": \"udp\", \"action\": \"drop\"}]}",
		NULL);
	r = rule_of("{\"id\": 1, \"sport\": \"any\", \"dport\": \"0-65535\", \"action\": \"drop\"}");
	ck_assert_uint_eq(r.dport.lo, 0);
	ck_assert_uint_eq(r.dport.hi, 65535);
	for (p = 0; p <= 65535; p += 4369)
		ck_assert_uint_eq(look("10.0.0.1", "10.0.0.2", IPPROTO_UDP,
			(uint16_t)(65535 - p), (uint16_t)p), 1);
}
END_TEST

START_TEST(test_proto_any_matches_every_protocol)
{
	setup_acl("{\"rules\": [{\"id\": 1, \"proto\": \"any\", \"action\": \"drop\"}]}",
		NULL);
	ck_assert_uint_eq(look("10.0.0.1", "10.0.0.2", IPPROTO_TCP, 1, 2), 1);
	ck_assert_uint_eq(look("10.0.0.1", "10.0.0.2", IPPROTO_UDP, 1, 2), 1);
	ck_assert_uint_eq(look("10.0.0.1", "10.0.0.2", IPPROTO_ICMP, 0, 0), 1);
	ck_assert_uint_eq(look("10.0.0.1", "10.0.0.2", 0, 0, 0), 1);
	ck_assert_uint_eq(look("10.0.0.1", "10.0.0.2", 255, 0, 0), 1);
	ck_assert_uint_eq(look("::1", "::2", IPPROTO_ICMPV6, 0, 0), 1);
	ck_assert_uint_eq(look("::1", "::2", IPPROTO_GRE, 0, 0), 1);
}
END_TEST

START_TEST(test_proto_number_matches_only_that_protocol)
{
	setup_acl("{\"rules\": ["
		"{\"id\": 1, \"proto\": 47, \"action\": \"drop\"},"
		"{\"id\": 2, \"proto\": \"6\", \"action\": \"drop\"},"
		"{\"id\": 3, \"proto\": 0, \"action\": \"drop\"},"
		"{\"id\": 4, \"proto\": 255, \"action\": \"drop\"}]}", NULL);
	ck_assert_uint_eq(look("10.0.0.1", "10.0.0.2", IPPROTO_GRE, 0, 0), 1);
	ck_assert_uint_eq(look("::1", "::2", IPPROTO_GRE, 0, 0), 1);
	ck_assert_uint_eq(look("10.0.0.1", "10.0.0.2", IPPROTO_TCP, 1, 2), 2);
	ck_assert_uint_eq(look("10.0.0.1", "10.0.0.2", 0, 0, 0), 3);
	ck_assert_uint_eq(look("10.0.0.1", "10.0.0.2", 255, 0, 0), 4);
	ck_assert_uint_eq(look("10.0.0.1", "10.0.0.2", 46, 0, 0), 0);
	ck_assert_uint_eq(look("10.0.0.1", "10.0.0.2", IPPROTO_UDP, 1, 2), 0);
}
END_TEST

START_TEST(test_proto_names_match_their_protocols)
{
	setup_acl("{\"rules\": ["
		"{\"id\": 1, \"proto\": \"tcp\", \"action\": \"drop\"},"
		"{\"id\": 2, \"proto\": \"udp\", \"action\": \"drop\"},"
		"{\"id\": 3, \"proto\": \"icmp\", \"action\": \"drop\"},"
		"{\"id\": 4, \"proto\": \"icmpv6\", \"action\": \"drop\"}]}", NULL);
	ck_assert_uint_eq(look("10.0.0.1", "10.0.0.2", IPPROTO_TCP, 1, 2), 1);
	ck_assert_uint_eq(look("::1", "::2", IPPROTO_TCP, 1, 2), 1);
	ck_assert_uint_eq(look("10.0.0.1", "10.0.0.2", IPPROTO_UDP, 1, 2), 2);
	ck_assert_uint_eq(look("10.0.0.1", "10.0.0.2", IPPROTO_ICMP, 0, 0), 3);
	ck_assert_uint_eq(look("::1", "::2", IPPROTO_ICMPV6, 0, 0), 4);
	/* ICMP over IPv6 (proto 1) is still protocol 1 */
	ck_assert_uint_eq(look("::1", "::2", IPPROTO_ICMP, 0, 0), 3);
	ck_assert_uint_eq(look("10.0.0.1", "10.0.0.2", IPPROTO_SCTP, 1, 2), 0);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Packets without ports                                               */
/* ------------------------------------------------------------------ */

START_TEST(test_icmp_matches_port_constrained_rules_as_any_ports)
{
	setup_acl("{\"rules\": ["
		"{\"id\": 1, \"priority\": 9, \"dport\": \"80\", \"action\": \"drop\"},"
		"{\"id\": 2, \"priority\": 8, \"sport\": \"1-2\", \"dport\": \"3\", \"proto\": \"icmp\", \"action\": \"drop\"}]}",
		NULL);
	/* the ICMP type/code bytes are not ports */
	ck_assert_uint_eq(look("10.0.0.1", "10.0.0.2", IPPROTO_ICMP, 0, 0), 1);
	ck_assert_uint_eq(look("::1", "::2", IPPROTO_ICMPV6, 0, 0), 1);
	del(1);
	ck_assert_uint_eq(look("10.0.0.1", "10.0.0.2", IPPROTO_ICMP, 0, 0), 2);
	ck_assert_uint_eq(look("::1", "::2", IPPROTO_ICMPV6, 0, 0), 0);
	/* a protocol without ports (GRE) too */
	add("{\"id\": 3, \"dport\": \"80\", \"action\": \"drop\"}");
	ck_assert_uint_eq(look("10.0.0.1", "10.0.0.2", IPPROTO_GRE, 0, 0), 3);
	/* but a TCP packet is held to its ports */
	ck_assert_uint_eq(look("10.0.0.1", "10.0.0.2", IPPROTO_TCP, 1, 81), 0);
	ck_assert_uint_eq(look("10.0.0.1", "10.0.0.2", IPPROTO_TCP, 1, 80), 3);
}
END_TEST

START_TEST(test_ipv4_non_first_fragment_matches_port_rules_as_any_ports)
{
	struct tuple t;
	struct pa_test_frame f;
	struct rte_mbuf *m;

	setup_acl("{\"rules\": ["
		"{\"id\": 1, \"dport\": \"53\", \"proto\": \"udp\", \"action\": \"drop\"},"
		"{\"id\": 2, \"dport\": \"80\", \"proto\": \"tcp\", \"action\": \"permit\"}]}",
		NULL);
	t = tup("10.0.0.1", "10.0.0.2", IPPROTO_UDP, 0, 0);
	t.later_frag = true;
	/* it really is a later fragment, with no ports, to the parser */
	frame_of(&t, &f);
	m = mbuf_of(&f, 0);
	ck_assert(pa_pkt_meta(m)->flags & PA_PKT_F_FRAG_LATER);
	rte_pktmbuf_free(m);
	ck_assert_uint_eq(lookup(&t), 1);
	t.proto = IPPROTO_TCP;
	ck_assert_uint_eq(lookup(&t), 2);
	/* the protocol still has to match */
	t.proto = IPPROTO_SCTP;
	ck_assert_uint_eq(lookup(&t), 0);
	ck_assert_uint_eq(hits(1), 1);
}
END_TEST

START_TEST(test_ipv6_non_first_fragment_matches_port_rules_as_any_ports)
{
	struct tuple t;
	struct pa_test_frame f;
	struct rte_mbuf *m;

	setup_acl("{\"rules\": ["
		"{\"id\": 1, \"dst\": \"2001:db8::/32\", \"dport\": \"53\", \"proto\": \"udp\", \"action\": \"drop\"},"
		"{\"id\": 2, \"sport\": \"7\", \"proto\": \"tcp\", \"action\": \"drop\"}]}",
		NULL);
	t = tup("2001:db8::1", "2001:db8::2", IPPROTO_UDP, 0, 0);
	t.later_frag = true;
	frame_of(&t, &f);
	m = mbuf_of(&f, 0);
	ck_assert(pa_pkt_meta(m)->flags & PA_PKT_F_FRAG_LATER);
	ck_assert_uint_eq(pa_pkt_meta(m)->l4_proto, IPPROTO_UDP);
	rte_pktmbuf_free(m);
	ck_assert_uint_eq(lookup(&t), 1);
	t.proto = IPPROTO_TCP;
	ck_assert_uint_eq(lookup(&t), 2);
	/* outside the rule's prefix: no match */
	t = tup("2001:db8::1", "2001:db9::2", IPPROTO_UDP, 0, 0);
	t.later_frag = true;
	ck_assert_uint_eq(lookup(&t), 0);
}
END_TEST

START_TEST(test_tcp_first_fragment_uses_its_ports)
{
	struct tuple t;
	struct pa_test_frame f;
	struct rte_mbuf *m;

	setup_acl("{\"rules\": [{\"id\": 1, \"dport\": \"80\", \"proto\": \"tcp\", \"action\": \"drop\"}]}",
		NULL);
	t = tup("10.0.0.1", "10.0.0.2", IPPROTO_TCP, 1234, 80);
	t.first_frag = true;
	frame_of(&t, &f);
	m = mbuf_of(&f, 0);
	ck_assert(pa_pkt_meta(m)->flags & PA_PKT_F_FRAG);
	ck_assert(!(pa_pkt_meta(m)->flags & PA_PKT_F_FRAG_LATER));
	rte_pktmbuf_free(m);
	ck_assert_uint_eq(lookup(&t), 1);
	t.dport = 81;
	ck_assert_uint_eq(lookup(&t), 0);

	t = tup("2001:db8::1", "2001:db8::2", IPPROTO_TCP, 1234, 80);
	t.first_frag = true;
	ck_assert_uint_eq(lookup(&t), 1);
	t.dport = 79;
	ck_assert_uint_eq(lookup(&t), 0);
}
END_TEST

/* ------------------------------------------------------------------ */
/* in_port and non-IP                                                  */
/* ------------------------------------------------------------------ */

START_TEST(test_in_port_matches_only_the_mapped_port_index)
{
	struct tuple t;

	setup_acl("{\"rules\": ["
		"{\"id\": 1, \"priority\": 9, \"in_port\": \"lan0\", \"action\": \"drop\"},"
		"{\"id\": 2, \"priority\": 8, \"in_port\": \"wan0\", \"dport\": \"22\", \"proto\": \"tcp\", \"action\": \"drop\"},"
		"{\"id\": 3, \"priority\": 1, \"action\": \"permit\"}]}",
		map_3_is_1());
	t = tup("10.0.0.1", "10.0.0.2", IPPROTO_TCP, 1, 22);
	t.port = 3;		/* lan0 */
	ck_assert_uint_eq(lookup(&t), 1);
	t.port = 0;		/* wan0 */
	ck_assert_uint_eq(lookup(&t), 2);
	t.port = 5;		/* not a configured port */
	ck_assert_uint_eq(lookup(&t), 3);
	t.port = 1;		/* ethdev 1 is not index 1 */
	ck_assert_uint_eq(lookup(&t), 3);
	t = tup("::1", "::2", IPPROTO_TCP, 1, 22);
	t.port = 3;
	ck_assert_uint_eq(lookup(&t), 1);
	t.port = 0;
	ck_assert_uint_eq(lookup(&t), 2);
	t.dport = 23;
	ck_assert_uint_eq(lookup(&t), 3);
}
END_TEST

START_TEST(test_in_port_never_matches_without_a_port_map)
{
	struct tuple t;

	setup_acl("{\"rules\": [{\"id\": 1, \"in_port\": \"wan0\", \"action\": \"drop\"}]}",
		NULL);
	t = tup("10.0.0.1", "10.0.0.2", IPPROTO_TCP, 1, 22);
	t.port = 0;
	ck_assert_uint_eq(lookup(&t), 0);
}
END_TEST

START_TEST(test_trace_in_port_index_and_unknown)
{
	struct pa_flow_key key;
	enum pa_acl_action a;
	uint32_t id;

	setup_acl("{\"rules\": [{\"id\": 1, \"in_port\": \"lan0\", \"action\": \"drop\"}]}",
		NULL);
	memset(&key, 0, sizeof(key));
	key.family = 4;
	key.proto = IPPROTO_UDP;
	key.v4.src = htonl(0x0a000001);
	key.v4.dst = htonl(0x0a000002);
	ck_assert_int_eq(pa_acl_trace(acl, &key, true, 1, &id, &a), 0);
	ck_assert_uint_eq(id, 1);
	ck_assert_int_eq(a, PA_ACL_DROP);
	ck_assert_int_eq(pa_acl_trace(acl, &key, true, 0, &id, &a), 0);
	ck_assert_uint_eq(id, 0);
	ck_assert_int_eq(pa_acl_trace(acl, &key, true, -1, &id, &a), 0);
	ck_assert_uint_eq(id, 0);
	ck_assert_int_eq(pa_acl_trace(acl, &key, true, 1000, &id, &a), 0);
	ck_assert_uint_eq(id, 0);
	key.family = 0;
	ck_assert_int_eq(pa_acl_trace(acl, &key, true, 1, &id, &a), -EINVAL);
}
END_TEST

static void
frame_arp(struct pa_test_frame *f)
{
	frame_eth(f, 0x0806);
	frame_payload(f, 28);
}

START_TEST(test_non_ip_frames_are_forwarded_by_default)
{
	struct pa_test_frame f;

	setup_acl("{\"default\": \"drop\", \"rules\": [{\"id\": 1, \"action\": \"drop\"}]}",
		NULL);
	frame_arp(&f);
	ck_assert_uint_eq(classify_frame(&f, 0), PA_ACL_V_FORWARD);
	ck_assert_uint_eq(classify_frame(&f, 0), PA_ACL_V_FORWARD);
	ck_assert_uint_eq(hits(1), 0);
	ck_assert_int_eq(stat_int("default_hits"), 0);
	ck_assert_int_eq(stat_int("non_ip_frames"), 2);
}
END_TEST

START_TEST(test_non_ip_frames_are_dropped_when_non_ip_is_drop)
{
	struct pa_config_acl_rule r;
	struct pa_test_frame f;
	json_t *s;

	setup_acl("{\"non_ip\": \"drop\", \"rules\": [{\"id\": 1, \"action\": \"permit\"}]}",
		NULL);
	frame_arp(&f);
	ck_assert_uint_eq(classify_frame(&f, 0), PA_ACL_V_DROP_NON_IP);
	frame_eth(&f, 0x88cc);		/* LLDP */
	frame_payload(&f, 40);
	ck_assert_uint_eq(classify_frame(&f, 0), PA_ACL_V_DROP_NON_IP);
	ck_assert_int_eq(stat_int("non_ip_frames"), 2);
	ck_assert_uint_eq(hits(1), 0);
	s = pa_acl_stats_json(acl);
	ck_assert_str_eq(json_string_value(json_object_get(s, "non_ip")), "drop");
	json_decref(s);

	/* rules_replace switches it back */
	r = rule_of("{\"id\": 1, \"action\": \"permit\"}");
	ck_assert_int_eq(replace_rules(&r, 1, PA_ACL_PERMIT, false), 0);
	ck_assert_uint_eq(classify_frame(&f, 0), PA_ACL_V_FORWARD);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Mark                                                                */
/* ------------------------------------------------------------------ */

/* Classify an IPv4 frame with @p tos on a table marking DSCP @p dscp;
 * check the TOS and the checksum of the result. */
static void
check_mark4(uint8_t dscp, uint8_t tos, unsigned int ihl, uint16_t ip_id,
		uint16_t frag, uint8_t ttl)
{
	static const uint8_t src[4] = { 10, 0, 0, 1 }, dst[4] = { 10, 0, 0, 2 };
	struct rte_ipv4_hdr *ip, before;
	struct rte_mbuf *m;
	struct pa_test_frame f;
	uint16_t sum;
	uint8_t v = 0xee;

	frame_eth(&f, 0x0800);
	frame_ipv4(&f, src, dst, IPPROTO_UDP, tos, frag, ihl);
	pa_test_put16(f.b + f.l3 + 4, ip_id);
	f.b[f.l3 + 8] = ttl;
	if (frag & 0x1fff)
		frame_payload(&f, 8);
	else
		frame_l4(&f, IPPROTO_UDP, 1, 2);
	frame_fix(&f);
	m = mbuf_of(&f, 0);
	ip = rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *, f.l3);
	before = *ip;
	pa_acl_classify(acl, 0, &m, 1, &v);
	ck_assert_uint_eq(v, PA_ACL_V_FORWARD);
	ck_assert_msg(ip->type_of_service == (uint8_t)(dscp << 2 | (tos & 3)),
		"dscp %u on tos 0x%02x gave tos 0x%02x", dscp, tos,
		ip->type_of_service);
	sum = ip->hdr_checksum;
	ip->hdr_checksum = 0;
	ck_assert_msg(sum == rte_ipv4_cksum(ip),
		"dscp %u tos 0x%02x ihl %u id 0x%04x: checksum 0x%04x, recomputed 0x%04x",
		dscp, tos, ihl, ip_id, rte_be_to_cpu_16(sum),
		rte_be_to_cpu_16(rte_ipv4_cksum(ip)));
	ip->hdr_checksum = sum;
	/* nothing else changed */
	ck_assert_uint_eq(ip->version_ihl, before.version_ihl);
	ck_assert_uint_eq(ip->total_length, before.total_length);
	ck_assert_uint_eq(ip->packet_id, before.packet_id);
	ck_assert_uint_eq(ip->fragment_offset, before.fragment_offset);
	ck_assert_uint_eq(ip->time_to_live, before.time_to_live);
	ck_assert_uint_eq(ip->src_addr, before.src_addr);
	ck_assert_uint_eq(ip->dst_addr, before.dst_addr);
	ck_assert_mem_eq(rte_pktmbuf_mtod(m, uint8_t *) + f.l3 + 20,
		f.b + f.l3 + 20, f.len - (uint32_t)f.l3 - 20);
	rte_pktmbuf_free(m);
}

static void
set_mark_table(uint8_t dscp)
{
	char rule[128];
	struct pa_config_acl_rule r;

	snprintf(rule, sizeof(rule),
		"{\"id\": 1, \"action\": \"mark\", \"dscp\": %u}", dscp);
	r = rule_of(rule);
	ck_assert_int_eq(replace_rules(&r, 1, PA_ACL_PERMIT, false), 0);
}

START_TEST(test_mark_rewrites_dscp_keeps_ecn_and_ipv4_checksum_is_exact)
{
	static const uint8_t dscps[] = { 0, 1, 10, 46, 63 };
	static const uint8_t toses[] = {
		0x00, 0x01, 0x02, 0x03, 0xb8, 0xb9, 0xfc, 0xff, 0x28, 0x2b
	};
	unsigned int d, t, i;

	setup_acl(NULL, NULL);
	for (d = 0; d < RTE_DIM(dscps); d++) {
		set_mark_table(dscps[d]);
		for (t = 0; t < RTE_DIM(toses); t++) {
			check_mark4(dscps[d], toses[t], 5, 0x1234, 0, 64);
			check_mark4(dscps[d], toses[t], 6, 0xffff, 0x4000, 1);
			check_mark4(dscps[d], toses[t], 15, 0, 0x2000, 255);
		}
	}
	/* pseudo-random headers: the incremental update equals a full
	 * recomputation for checksums of every shape */
	srand(12345);
	for (i = 0; i < 400; i++) {
		uint8_t dscp = (uint8_t)rnd(64);

		set_mark_table(dscp);
		check_mark4(dscp, (uint8_t)rnd(256), 5 + rnd(3),
			(uint16_t)rnd(65536), (uint16_t)(rnd(2) << 14),
			(uint8_t)rnd(256));
	}
	/* id 1 kept its slot through every replace: all packets counted */
	ck_assert_uint_eq(hits(1), RTE_DIM(dscps) * RTE_DIM(toses) * 3 + 400);
}
END_TEST

START_TEST(test_mark_rewrites_ipv6_traffic_class_keeping_ecn_and_flow_label)
{
	static const uint8_t tcs[] = { 0x00, 0x01, 0x02, 0x03, 0xb8, 0xff };
	struct rte_ipv6_hdr *ip6;
	struct rte_mbuf *m;
	struct tuple t;
	struct pa_test_frame f;
	unsigned int i;
	uint32_t w;
	uint8_t v;

	setup_acl("{\"rules\": [{\"id\": 1, \"proto\": \"udp\", \"action\": \"mark\", \"dscp\": 46}]}",
		NULL);
	t = tup("2001:db8::1", "2001:db8::2", IPPROTO_UDP, 1, 2);
	for (i = 0; i < RTE_DIM(tcs); i++) {
		frame_eth(&f, 0x86dd);
		frame_ipv6(&f, t.src, t.dst, IPPROTO_UDP, tcs[i], 0xabcde);
		frame_l4(&f, IPPROTO_UDP, 1, 2);
		frame_fix(&f);
		m = mbuf_of(&f, 0);
		pa_acl_classify(acl, 0, &m, 1, &v);
		ck_assert_uint_eq(v, PA_ACL_V_FORWARD);
		ip6 = rte_pktmbuf_mtod_offset(m, struct rte_ipv6_hdr *, f.l3);
		w = rte_be_to_cpu_32(ip6->vtc_flow);
		ck_assert_uint_eq(w >> 28, 6);
		ck_assert_uint_eq((w >> 20) & 0xff, (46u << 2) | (tcs[i] & 3));
		ck_assert_uint_eq(w & 0xfffff, 0xabcde);
		ck_assert_mem_eq(rte_pktmbuf_mtod(m, uint8_t *) + f.l3 + 4,
			f.b + f.l3 + 4, f.len - (uint32_t)f.l3 - 4);
		rte_pktmbuf_free(m);
	}
	/* trace reports the action */
	ck_assert_uint_eq(look("2001:db8::1", "2001:db8::2", IPPROTO_UDP, 1, 2), 1);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Police                                                              */
/* ------------------------------------------------------------------ */

START_TEST(test_police_passes_burst_then_drops)
{
	enum pa_acl_action a;
	struct tuple t;
	struct pa_test_frame f;
	unsigned int i;
	uint8_t v;

	setup_acl("{\"rules\": [{\"id\": 1, \"proto\": \"icmp\", \"action\": \"police\", \"rate_pps\": 1, \"burst\": 5}]}",
		NULL);
	t = tup("10.0.0.1", "10.0.0.2", IPPROTO_ICMP, 0, 0);
	frame_of(&t, &f);
	for (i = 0; i < 20; i++) {
		v = classify_frame(&f, 0);
		ck_assert_msg(v == (i < 5 ? PA_ACL_V_FORWARD : PA_ACL_V_DROP_POLICE),
			"packet %u: verdict %u", i, v);
	}
	ck_assert_uint_eq(hits(1), 20);
	/* the meter took every packet, those the flow cache knew too */
	ck_assert_int_eq(stat_int("flow_cache_hits"), 19);
	/* the trace consults no meter: it reports the action */
	ck_assert_uint_eq(trace_tuple(&t, &a), 1);
	ck_assert_int_eq(a, PA_ACL_POLICE);
	/* other traffic is not policed */
	ck_assert_uint_eq(look("10.0.0.1", "10.0.0.2", IPPROTO_UDP, 1, 2), 0);
}
END_TEST

START_TEST(test_police_in_one_burst_passes_burst_packets)
{
	struct rte_mbuf *m[32];
	uint8_t v[32];
	struct tuple t;
	struct pa_test_frame f;
	unsigned int i, pass = 0, police = 0;

	setup_acl("{\"rules\": [{\"id\": 1, \"action\": \"police\", \"rate_pps\": 1, \"burst\": 10}]}",
		NULL);
	for (i = 0; i < 32; i++) {
		t = tup(i % 2 ? "10.0.0.1" : "2001:db8::1",
			i % 2 ? "10.0.0.2" : "2001:db8::2", IPPROTO_UDP, 1, 2);
		frame_of(&t, &f);
		m[i] = mbuf_of(&f, 0);
	}
	pa_acl_classify(acl, 0, m, 32, v);
	for (i = 0; i < 32; i++) {
		pass += v[i] == PA_ACL_V_FORWARD;
		police += v[i] == PA_ACL_V_DROP_POLICE;
		rte_pktmbuf_free(m[i]);
	}
	ck_assert_uint_eq(pass, 10);
	ck_assert_uint_eq(police, 22);
}
END_TEST

/* A burst the caller knows to be all IP, on a table without rules: the
 * default for every packet, counted once each, as pa_acl_classify(). */
START_TEST(test_classify_ip_without_rules_takes_the_default)
{
	static const char *const def[] = { "permit", "drop" };
	struct rte_mbuf *m[32];
	uint8_t v[32], v2[32];
	char doc[64];
	struct tuple t;
	struct pa_test_frame f;
	unsigned int i, d;
	uint16_t r;

	for (d = 0; d < 2; d++) {
		snprintf(doc, sizeof(doc), "{\"default\": \"%s\"}", def[d]);
		setup_acl(doc, NULL);
		for (i = 0; i < 32; i++) {
			t = tup(i % 2 ? "10.0.0.1" : "2001:db8::1",
				i % 2 ? "10.0.0.2" : "2001:db8::2",
				IPPROTO_UDP, 1, 2);
			frame_of(&t, &f);
			m[i] = mbuf_of(&f, 0);
		}
		r = pa_acl_classify_ip(acl, 0, m, 32, v);
		ck_assert_int_eq(stat_int("default_hits"), 32);
		ck_assert_uint_eq(r, pa_acl_classify(acl, 0, m, 32, v2));
		ck_assert_int_eq(stat_int("default_hits"), 64);
		ck_assert_mem_eq(v, v2, sizeof(v));
		ck_assert_uint_eq(r, d == 0 ? 0 : 32);
		for (i = 0; i < 32; i++) {
			ck_assert_uint_eq(v[i], d == 0 ? PA_ACL_V_FORWARD :
				PA_ACL_V_DROP_ACL);
			rte_pktmbuf_free(m[i]);
		}
	}
}
END_TEST

/* pa_acl_forward_all() (the classify stage's skip): true, and the burst
 * counted in default_hits as pa_acl_classify_ip() counts it, only while
 * the live table has no rule and permits by default; false and nothing
 * counted once a rule or a "drop" default is live. */
START_TEST(test_forward_all_only_while_no_rule_and_the_default_permits)
{
	setup_acl("{\"default\": \"permit\"}", NULL);
	ck_assert(pa_acl_forward_all(acl, 0, 32));
	ck_assert_int_eq(stat_int("default_hits"), 32);
	add("{\"id\": 1, \"priority\": 10, \"src\": \"10.0.0.0/8\", \"action\": \"drop\"}");
	ck_assert(!pa_acl_forward_all(acl, 0, 32));
	ck_assert_int_eq(stat_int("default_hits"), 32);
	ck_assert_int_eq(replace_rules(NULL, 0, PA_ACL_PERMIT, false), 0);
	ck_assert(pa_acl_forward_all(acl, 0, 7));
	ck_assert_int_eq(stat_int("default_hits"), 39);
	ck_assert_int_eq(replace_rules(NULL, 0, PA_ACL_DROP, false), 0);
	ck_assert(!pa_acl_forward_all(acl, 0, 32));
	ck_assert_int_eq(stat_int("default_hits"), 39);
	setup_acl("{\"default\": \"drop\"}", NULL);
	ck_assert(!pa_acl_forward_all(acl, 0, 32));
	ck_assert_int_eq(stat_int("default_hits"), 0);
}
END_TEST

START_TEST(test_police_meter_keeps_its_tokens_across_rebuilds)
{
	struct tuple t;
	struct pa_test_frame f;
	unsigned int i;

	setup_acl("{\"rules\": [{\"id\": 1, \"proto\": \"udp\", \"action\": \"police\", \"rate_pps\": 1, \"burst\": 3}]}",
		NULL);
	t = tup("10.0.0.1", "10.0.0.2", IPPROTO_UDP, 1, 2);
	frame_of(&t, &f);
	for (i = 0; i < 3; i++)
		ck_assert_uint_eq(classify_frame(&f, 0), PA_ACL_V_FORWARD);
	ck_assert_uint_eq(classify_frame(&f, 0), PA_ACL_V_DROP_POLICE);
	/* another rule comes and goes: the bucket stays empty */
	add("{\"id\": 2, \"proto\": \"tcp\", \"action\": \"drop\"}");
	ck_assert_uint_eq(classify_frame(&f, 0), PA_ACL_V_DROP_POLICE);
	del(2);
	ck_assert_uint_eq(classify_frame(&f, 0), PA_ACL_V_DROP_POLICE);
	/* deleted and re-added: a new, full bucket */
	del(1);
	add("{\"id\": 1, \"proto\": \"udp\", \"action\": \"police\", \"rate_pps\": 1, \"burst\": 3}");
	for (i = 0; i < 3; i++)
		ck_assert_uint_eq(classify_frame(&f, 0), PA_ACL_V_FORWARD);
	ck_assert_uint_eq(classify_frame(&f, 0), PA_ACL_V_DROP_POLICE);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Counters                                                            */
/* ------------------------------------------------------------------ */

START_TEST(test_counters_count_hits_and_bytes_per_rule)
{
	uint64_t p, b;
	struct tuple t;
	struct pa_test_frame f;
	unsigned int i;

	setup_acl("{\"rules\": ["
		"{\"id\": 1, \"proto\": \"udp\", \"action\": \"permit\"},"
		"{\"id\": 2, \"proto\": \"tcp\", \"action\": \"drop\"},"
		"{\"id\": 3, \"proto\": \"icmp\", \"action\": \"permit\"}]}", NULL);
	t = tup("10.0.0.1", "10.0.0.2", IPPROTO_UDP, 1, 2);
	t.pad_to = 100;
	frame_of(&t, &f);
	ck_assert_uint_eq(f.len, 100);
	for (i = 0; i < 7; i++)
		ck_assert_uint_eq(classify_frame(&f, 0), PA_ACL_V_FORWARD);
	t = tup("2001:db8::1", "2001:db8::2", IPPROTO_TCP, 1, 2);
	t.pad_to = 200;
	frame_of(&t, &f);
	for (i = 0; i < 3; i++)
		ck_assert_uint_eq(classify_frame(&f, 0), PA_ACL_V_DROP_ACL);
	ck_assert(rule_hits(1, &p, &b));
	ck_assert_uint_eq(p, 7);
	ck_assert_uint_eq(b, 700);
	ck_assert(rule_hits(2, &p, &b));
	ck_assert_uint_eq(p, 3);
	ck_assert_uint_eq(b, 600);
	ck_assert(rule_hits(3, &p, &b));
	ck_assert_uint_eq(p, 0);
	ck_assert_uint_eq(b, 0);
}
END_TEST

/* Send @p n UDP packets of 64 bytes from 10.0.0.<last> */
static void
send_from(unsigned int last, unsigned int n)
{
	char src[32];
	struct tuple t;
	struct pa_test_frame f;
	unsigned int i;

	snprintf(src, sizeof(src), "10.0.0.%u", last);
	t = tup(src, "192.0.2.1", IPPROTO_UDP, 1, 2);
	t.pad_to = 64;
	frame_of(&t, &f);
	for (i = 0; i < n; i++)
		classify_frame(&f, 0);
}

START_TEST(test_counters_survive_adding_another_rule)
{
	uint64_t p, b;

	setup_acl("{\"rules\": ["
		"{\"id\": 1, \"src\": \"10.0.0.1/32\", \"action\": \"permit\"},"
		"{\"id\": 2, \"src\": \"10.0.0.2/32\", \"action\": \"permit\"}]}",
		NULL);
	send_from(1, 4);
	send_from(2, 6);
	add("{\"id\": 3, \"src\": \"10.0.0.3/32\", \"action\": \"permit\"}");
	ck_assert(rule_hits(1, &p, &b));
	ck_assert_uint_eq(p, 4);
	ck_assert_uint_eq(b, 256);
	ck_assert_uint_eq(hits(2), 6);
	ck_assert_uint_eq(hits(3), 0);
	send_from(1, 1);
	send_from(3, 2);
	del(2);
	ck_assert_uint_eq(hits(1), 5);
	ck_assert_uint_eq(hits(3), 2);
}
END_TEST

START_TEST(test_counters_survive_replace_that_keeps_the_id)
{
	struct pa_config_acl_rule r[3];

	setup_acl("{\"rules\": ["
		"{\"id\": 1, \"src\": \"10.0.0.1/32\", \"action\": \"permit\"},"
		"{\"id\": 2, \"src\": \"10.0.0.2/32\", \"action\": \"permit\"}]}",
		NULL);
	send_from(1, 4);
	send_from(2, 6);
	/* id 1 kept (changed), id 2 gone, id 3 new */
	r[0] = rule_of("{\"id\": 3, \"src\": \"10.0.0.2/32\", \"action\": \"permit\"}");
	r[1] = rule_of("{\"id\": 1, \"priority\": 7, \"src\": \"10.0.0.0/30\", \"action\": \"drop\"}");
	ck_assert_int_eq(replace_rules(r, 2, PA_ACL_PERMIT, false), 0);
	ck_assert_uint_eq(hits(1), 4);
	ck_assert_uint_eq(hits(3), 0);
	ck_assert(!rule_hits(2, NULL, NULL));
	send_from(2, 1);	/* now rule 1 (priority 7) */
	ck_assert_uint_eq(hits(1), 5);
	ck_assert_uint_eq(hits(3), 0);
}
END_TEST

START_TEST(test_deleted_and_readded_id_starts_from_zero)
{
	struct pa_config_acl_rule r;

	setup_acl("{\"rules\": [{\"id\": 1, \"src\": \"10.0.0.1/32\", \"action\": \"permit\"}]}",
		NULL);
	send_from(1, 4);
	ck_assert_uint_eq(hits(1), 4);
	del(1);
	add("{\"id\": 1, \"src\": \"10.0.0.1/32\", \"action\": \"permit\"}");
	ck_assert_uint_eq(hits(1), 0);
	send_from(1, 2);
	ck_assert_uint_eq(hits(1), 2);
	/* same through replace: dropped in one, back in the next */
	ck_assert_int_eq(replace_rules(NULL, 0, PA_ACL_PERMIT, false), 0);
	r = rule_of("{\"id\": 1, \"src\": \"10.0.0.1/32\", \"action\": \"permit\"}");
	ck_assert_int_eq(replace_rules(&r, 1, PA_ACL_PERMIT, false), 0);
	ck_assert_uint_eq(hits(1), 0);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Control-plane errors                                                */
/* ------------------------------------------------------------------ */

static char *
rules_text(void)
{
	json_t *arr = pa_acl_rules_json(acl);
	char *s;

	ck_assert_ptr_nonnull(arr);
	s = json_dumps(arr, JSON_COMPACT);
	json_decref(arr);
	ck_assert_ptr_nonnull(s);
	return s;
}

START_TEST(test_rule_add_duplicate_id_is_eexist_and_table_unchanged)
{
	struct pa_config_acl_rule r;
	char err[256] = "", *before, *after;
	json_int_t version;

	setup_acl("{\"rules\": [{\"id\": 10, \"src\": \"10.0.0.0/8\", \"action\": \"drop\"}]}",
		NULL);
	before = rules_text();
	version = stat_int("version");
	r = rule_of("{\"id\": 10, \"priority\": 99, \"action\": \"permit\"}");
	ck_assert_int_eq(pa_acl_rule_add(acl, &r, err, sizeof(err)), -EEXIST);
	ck_assert_msg(strstr(err, "10") != NULL, "message: %s", err);
	after = rules_text();
	ck_assert_str_eq(before, after);
	free(before);
	free(after);
	ck_assert_int_eq(stat_int("version"), version);
	ck_assert_uint_eq(look("10.0.0.1", "10.0.0.2", IPPROTO_UDP, 1, 2), 10);
	ck_assert_uint_eq(look("11.0.0.1", "10.0.0.2", IPPROTO_UDP, 1, 2), 0);
}
END_TEST

START_TEST(test_delete_unknown_id_is_enoent)
{
	char err[256] = "";
	json_int_t version;

	setup_acl("{\"rules\": [{\"id\": 10, \"action\": \"drop\"}]}", NULL);
	version = stat_int("version");
	ck_assert_int_eq(pa_acl_rule_delete(acl, 11, err, sizeof(err)), -ENOENT);
	ck_assert_msg(strstr(err, "11") != NULL, "message: %s", err);
	ck_assert_int_eq(pa_acl_rule_delete(acl, 0, err, sizeof(err)), -ENOENT);
	ck_assert_int_eq(stat_int("version"), version);
	ck_assert_int_eq(stat_int("rules"), 1);
	del(10);
	ck_assert_int_eq(pa_acl_rule_delete(acl, 10, err, sizeof(err)), -ENOENT);
}
END_TEST

START_TEST(test_replace_with_mixed_family_rule_is_einval_and_old_table_stays)
{
	struct pa_config_acl_rule r[2];
	struct pa_config_acl a;
	char err[256] = "", *before, *after;
	enum pa_acl_action act;
	json_int_t version;
	struct tuple t;

	setup_acl("{\"default\": \"drop\", \"rules\": [{\"id\": 1, \"src\": \"10.0.0.0/8\", \"action\": \"permit\"}]}",
		NULL);
	before = rules_text();
	version = stat_int("version");
	r[0] = rule_of("{\"id\": 5, \"action\": \"permit\"}");
	r[1] = rule_of("{\"id\": 6, \"src\": \"10.0.0.0/8\", \"action\": \"permit\"}");
	/* the parser refuses the mix; build it by hand */
	r[1].dst.addr.family = AF_INET6;
	r[1].dst.len = 32;
	memset(&a, 0, sizeof(a));
	a.def = PA_ACL_PERMIT;
	a.rules = r;
	a.n_rules = 2;
	ck_assert_int_eq(pa_acl_rules_replace(acl, &a, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "6") != NULL, "message: %s", err);
	after = rules_text();
	ck_assert_str_eq(before, after);
	free(before);
	free(after);
	ck_assert_int_eq(stat_int("version"), version);
	/* the old default (drop) and rule are in force */
	ck_assert_uint_eq(look("11.0.0.1", "10.0.0.2", IPPROTO_UDP, 1, 2), 0);
	ck_assert_uint_eq(look("10.0.0.1", "10.0.0.2", IPPROTO_UDP, 1, 2), 1);
	t = tup("11.0.0.1", "10.0.0.2", IPPROTO_UDP, 1, 2);
	ck_assert_uint_eq(trace_tuple(&t, &act), 0);
	ck_assert_int_eq(act, PA_ACL_DROP);
	/* the same rule through rule_add */
	ck_assert_int_eq(pa_acl_rule_add(acl, &r[1], err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(stat_int("rules"), 1);
}
END_TEST

START_TEST(test_invalid_rules_are_einval)
{
	struct pa_config_acl_rule r;
	char err[256] = "";

	setup_acl(NULL, NULL);
	r = rule_of("{\"id\": 1, \"action\": \"drop\"}");
	r.id = 0;
	ck_assert_int_eq(pa_acl_rule_add(acl, &r, err, sizeof(err)), -EINVAL);
	r = rule_of("{\"id\": 1, \"action\": \"drop\"}");
	r.in_port = 255;
	ck_assert_int_eq(pa_acl_rule_add(acl, &r, err, sizeof(err)), -EINVAL);
	r = rule_of("{\"id\": 1, \"action\": \"police\", \"rate_pps\": 1, \"burst\": 1}");
	r.burst = 0;	/* rte_meter refuses a bucket of 0 */
	ck_assert_int_eq(pa_acl_rule_add(acl, &r, err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(stat_int("rules"), 0);
	ck_assert_int_eq(stat_int("version"), 1);
	/* and the ACL still works */
	add("{\"id\": 1, \"action\": \"drop\"}");
	ck_assert_uint_eq(look("10.0.0.1", "10.0.0.2", IPPROTO_UDP, 1, 2), 1);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Base and delta tiers                                                */
/* ------------------------------------------------------------------ */

START_TEST(test_added_rules_rank_against_base_rules_by_priority_then_id)
{
	setup_acl("{\"rules\": ["
		"{\"id\": 5, \"priority\": 10, \"src\": \"10.0.0.0/8\", \"action\": \"drop\"},"
		"{\"id\": 20, \"priority\": 3, \"action\": \"permit\"}]}", NULL);
	/* delta: same priority, lower id than a base rule */
	add("{\"id\": 3, \"priority\": 10, \"src\": \"10.0.0.0/8\", \"action\": \"permit\"}");
	ck_assert_uint_eq(look("10.0.0.1", "10.0.0.2", IPPROTO_UDP, 1, 2), 3);
	/* delta: same priority, higher id: the base rule stays best */
	add("{\"id\": 7, \"priority\": 10, \"action\": \"mark\", \"dscp\": 1}");
	ck_assert_uint_eq(look("10.0.0.1", "10.0.0.2", IPPROTO_UDP, 1, 2), 3);
	ck_assert_uint_eq(look("11.0.0.1", "10.0.0.2", IPPROTO_UDP, 1, 2), 7);
	/* delta: lower priority than a base rule */
	add("{\"id\": 1, \"priority\": 2, \"src\": \"11.0.0.0/8\", \"action\": \"drop\"}");
	ck_assert_uint_eq(look("11.0.0.1", "10.0.0.2", IPPROTO_UDP, 1, 2), 7);
	ck_assert_int_eq(stat_int("builds"), 1);
	/* deleting a delta rule keeps the base */
	del(3);
	ck_assert_int_eq(stat_int("builds"), 1);
	ck_assert_uint_eq(look("10.0.0.1", "10.0.0.2", IPPROTO_UDP, 1, 2), 5);
	ck_assert_uint_eq(hits(5), 1);
	/* deleting a base rule voids it in the base and lets the delta
	 * (which gets the lower-ranked rules overlapping it) answer */
	del(5);
	ck_assert_int_eq(stat_int("builds"), 1);
	ck_assert_uint_eq(look("10.0.0.1", "10.0.0.2", IPPROTO_UDP, 1, 2), 7);
	ck_assert_uint_eq(look("::1", "::2", IPPROTO_UDP, 1, 2), 7);
	del(7);
	ck_assert_uint_eq(look("11.0.0.1", "10.0.0.2", IPPROTO_UDP, 1, 2), 20);
	ck_assert_uint_eq(hits(1), 0);
	ck_assert_uint_eq(hits(20), 1);
}
END_TEST

START_TEST(test_adds_past_the_delta_limit_fold_into_a_full_build)
{
	char rule[160], dst[32];
	unsigned int i;

	setup_acl("{\"rules\": [{\"id\": 1, \"action\": \"permit\"}]}", NULL);
	for (i = 0; i < 260; i++) {
		snprintf(rule, sizeof(rule),
			"{\"id\": %u, \"priority\": %u, \"dst\": \"10.0.%u.%u/32\", \"dport\": \"%u-%u\", \"action\": \"drop\"}",
			100 + i, 1 + i % 7, i / 256, i % 256, i, 1000 + i);
		add(rule);
		if (i == 0)
			ck_assert_uint_eq(look("192.0.2.1", "10.0.0.0",
				IPPROTO_UDP, 1, 0), 100);
		if (i == 255)
			ck_assert_int_eq(stat_int("builds"), 1);
	}
	/* the 257th add went past the delta limit */
	ck_assert_int_eq(stat_int("builds"), 2);
	ck_assert_int_eq(stat_int("rules"), 261);
	for (i = 0; i < 260; i += 37) {
		snprintf(dst, sizeof(dst), "10.0.%u.%u", i / 256, i % 256);
		ck_assert_uint_eq(look("192.0.2.1", dst, IPPROTO_UDP, 1,
			(uint16_t)(1000 + i)), 100 + i);
		ck_assert_uint_eq(look("192.0.2.1", dst, IPPROTO_UDP, 1,
			(uint16_t)(1001 + i)), 1);
		ck_assert_uint_eq(look("192.0.2.1", dst, IPPROTO_ICMP, 0, 0),
			100 + i);
	}
	ck_assert_uint_eq(hits(100), 3);
	ck_assert_uint_eq(hits(1), 8);
	/* and adds go to a new delta again */
	add("{\"id\": 2, \"priority\": 100, \"dst\": \"10.0.0.0/24\", \"action\": \"permit\"}");
	ck_assert_int_eq(stat_int("builds"), 2);
	ck_assert_uint_eq(look("192.0.2.1", "10.0.0.0", IPPROTO_UDP, 1, 1000), 2);
	ck_assert_uint_eq(look("192.0.2.1", "10.0.1.0", IPPROTO_UDP, 1, 256), 356);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Growth                                                              */
/* ------------------------------------------------------------------ */

/* Rule i (1-based): dst 10.<i>/32, priority 0, permit. */
static void
big_rules(struct pa_config_acl_rule *r, unsigned int n)
{
	unsigned int i;

	memset(r, 0, sizeof(*r) * n);
	for (i = 0; i < n; i++) {
		r[i].id = i + 1;
		r[i].proto = PA_PROTO_ANY;
		r[i].in_port = -1;
		r[i].sport.hi = 65535;
		r[i].dport.hi = 65535;
		r[i].dst.addr.family = AF_INET;
		r[i].dst.addr.v4.s_addr = htonl(0x0a000000u + i + 1);
		r[i].dst.len = 32;
		r[i].action = PA_ACL_PERMIT;
	}
}

static void
send_to_rule(unsigned int id, unsigned int n)
{
	struct tuple t;
	struct pa_test_frame f;
	unsigned int i;
	uint32_t dst = htonl(0x0a000000u + id);

	t = tup("192.0.2.1", "10.0.0.0", IPPROTO_UDP, 1, 2);
	memcpy(t.dst, &dst, 4);
	frame_of(&t, &f);
	for (i = 0; i < n; i++)
		ck_assert_uint_eq(classify_frame(&f, 0), PA_ACL_V_FORWARD);
	ck_assert_uint_eq(trace_tuple(&t, NULL), id);
}

START_TEST(test_growth_past_1024_rules_keeps_counters)
{
	static const unsigned int probe[] = { 1, 500, 1000, 1024, 2000, 3000 };
	struct pa_config_acl_rule *r;
	json_t *arr;
	unsigned int i;

	r = calloc(3200, sizeof(*r));
	ck_assert_ptr_nonnull(r);
	setup_acl(NULL, NULL);

	big_rules(r, 1000);
	ck_assert_int_eq(replace_rules(r, 1000, PA_ACL_PERMIT, false), 0);
	send_to_rule(1, 1);
	send_to_rule(500, 2);
	send_to_rule(1000, 3);

	/* 3000: the slot store grows */
	big_rules(r, 3000);
	ck_assert_int_eq(replace_rules(r, 3000, PA_ACL_PERMIT, false), 0);
	ck_assert_int_eq(stat_int("rules"), 3000);
	ck_assert_uint_eq(hits(1), 1);
	ck_assert_uint_eq(hits(500), 2);
	ck_assert_uint_eq(hits(1000), 3);
	ck_assert_uint_eq(hits(2000), 0);
	send_to_rule(1024, 4);
	send_to_rule(2000, 5);
	send_to_rule(3000, 6);

	/* one more, one by one: grows again */
	add("{\"id\": 5000, \"dst\": \"192.0.2.99/32\", \"action\": \"drop\"}");
	add("{\"id\": 5001, \"priority\": 1, \"dst\": \"10.0.11.184/32\", \"action\": \"drop\"}");
	ck_assert_int_eq(stat_int("rules"), 3002);
	ck_assert_uint_eq(look("192.0.2.1", "192.0.2.99", IPPROTO_UDP, 1, 2), 5000);
	/* 10.0.11.184 is rule 3000's address: 5001 outranks it */
	ck_assert_uint_eq(look("192.0.2.1", "10.0.11.184", IPPROTO_UDP, 1, 2), 5001);
	ck_assert_uint_eq(hits(1), 1);
	ck_assert_uint_eq(hits(500), 2);
	ck_assert_uint_eq(hits(1000), 3);
	ck_assert_uint_eq(hits(1024), 4);
	ck_assert_uint_eq(hits(2000), 5);
	ck_assert_uint_eq(hits(3000), 6);
	ck_assert_uint_eq(hits(5000), 1);
	ck_assert_uint_eq(hits(5001), 1);

	/* every rule is listed once, in priority then id order */
	arr = pa_acl_rules_json(acl);
	ck_assert_uint_eq(json_array_size(arr), 3002);
	ck_assert_int_eq(json_integer_value(json_object_get(
		json_array_get(arr, 0), "id")), 5001);
	ck_assert_int_eq(json_integer_value(json_object_get(
		json_array_get(arr, 1), "id")), 1);
	ck_assert_int_eq(json_integer_value(json_object_get(
		json_array_get(arr, 3001), "id")), 5000);
	json_decref(arr);

	/* back down; the survivors keep their counts */
	big_rules(r, 1100);
	ck_assert_int_eq(replace_rules(r, 1100, PA_ACL_PERMIT, false), 0);
	for (i = 0; i < RTE_DIM(probe); i++)
		if (probe[i] <= 1100)
			ck_assert_uint_le(hits(probe[i]), 4);
	ck_assert_uint_eq(hits(1024), 4);
	ck_assert_uint_eq(hits(1000), 3);
	send_to_rule(1100, 1);
	ck_assert_uint_eq(hits(1100), 1);
	free(r);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Export, listing and stats                                           */
/* ------------------------------------------------------------------ */

static const char *export_acl =
	"{\"default\": \"drop\", \"non_ip\": \"drop\", \"rules\": ["
	"{\"id\": 30, \"priority\": 1, \"proto\": \"icmp\", \"action\": \"police\", \"rate_pps\": 1000, \"burst\": 100, \"in_port\": \"lan0\"},"
	"{\"id\": 10, \"priority\": 100, \"src\": \"10.0.0.0/8\", \"dport\": \"53\", \"proto\": \"udp\", \"action\": \"drop\"},"
	"{\"id\": 20, \"priority\": 50, \"dst\": \"2001:db8::/32\", \"proto\": \"tcp\", \"dport\": \"80-88\", \"action\": \"mark\", \"dscp\": 46},"
	"{\"id\": 40, \"priority\": 50, \"sport\": \"1024-65535\", \"proto\": 47, \"action\": \"permit\"}]}";

START_TEST(test_export_round_trips_the_rule_set)
{
	struct pa_config_acl out;
	char *before, *after;
	json_t *a, *b;
	unsigned int i, j;

	setup_acl(export_acl, NULL);
	memset(&out, 0, sizeof(out));
	ck_assert_int_eq(pa_acl_export(acl, &out), 0);
	ck_assert(out.present);
	ck_assert_int_eq(out.def, PA_ACL_DROP);
	ck_assert(out.non_ip_drop);
	ck_assert_uint_eq(out.n_rules, cfg->acl.n_rules);
	/* the same rules, field for field */
	for (i = 0; i < cfg->acl.n_rules; i++) {
		for (j = 0; j < out.n_rules; j++)
			if (out.rules[j].id == cfg->acl.rules[i].id)
				break;
		ck_assert_uint_lt(j, out.n_rules);
		a = pa_acl_config_rule_to_json(&cfg->acl.rules[i], cfg);
		b = pa_acl_config_rule_to_json(&out.rules[j], cfg);
		ck_assert_msg(json_equal(a, b), "rule %u differs",
			cfg->acl.rules[i].id);
		json_decref(a);
		json_decref(b);
		ck_assert_mem_eq(&out.rules[j], &cfg->acl.rules[i],
			sizeof(out.rules[j]));
	}
	/* and loading the export gives the same table */
	before = rules_text();
	ck_assert_int_eq(pa_acl_rules_replace(acl, &out, NULL, 0), 0);
	after = rules_text();
	ck_assert_str_eq(before, after);
	free(before);
	free(after);
	/* export replaces what was there */
	ck_assert_int_eq(replace_rules(NULL, 0, PA_ACL_PERMIT, false), 0);
	ck_assert_int_eq(pa_acl_export(acl, &out), 0);
	ck_assert_uint_eq(out.n_rules, 0);
	ck_assert_ptr_null(out.rules);
	ck_assert_int_eq(out.def, PA_ACL_PERMIT);
	ck_assert(!out.non_ip_drop);
	free(out.rules);
}
END_TEST

START_TEST(test_rules_json_lists_rules_best_first_in_config_schema)
{
	json_t *arr, *o;
	static const json_int_t order[] = { 10, 20, 40, 30 };
	size_t i;

	setup_acl(export_acl, NULL);
	arr = pa_acl_rules_json(acl);
	ck_assert_uint_eq(json_array_size(arr), 4);
	json_array_foreach(arr, i, o)
		ck_assert_int_eq(json_integer_value(json_object_get(o, "id")),
			order[i]);
	o = json_array_get(arr, 0);
	ck_assert_str_eq(json_string_value(json_object_get(o, "src")), "10.0.0.0/8");
	ck_assert_str_eq(json_string_value(json_object_get(o, "dst")), "any");
	ck_assert_str_eq(json_string_value(json_object_get(o, "sport")), "any");
	ck_assert_str_eq(json_string_value(json_object_get(o, "dport")), "53");
	ck_assert_str_eq(json_string_value(json_object_get(o, "proto")), "udp");
	ck_assert_str_eq(json_string_value(json_object_get(o, "action")), "drop");
	ck_assert_int_eq(json_integer_value(json_object_get(o, "hits")), 0);
	ck_assert_int_eq(json_integer_value(json_object_get(o, "bytes")), 0);
	o = json_array_get(arr, 1);
	ck_assert_int_eq(json_integer_value(json_object_get(o, "dscp")), 46);
	o = json_array_get(arr, 2);
	ck_assert_int_eq(json_integer_value(json_object_get(o, "proto")), 47);
	o = json_array_get(arr, 3);
	ck_assert_str_eq(json_string_value(json_object_get(o, "in_port")), "lan0");
	ck_assert_int_eq(json_integer_value(json_object_get(o, "rate_pps")), 1000);
	ck_assert_int_eq(json_integer_value(json_object_get(o, "burst")), 100);
	json_decref(arr);
}
END_TEST

START_TEST(test_stats_json_has_every_field)
{
	static const char *const ints[] = {
		"rules", "default_hits", "non_ip_frames", "version", "builds",
		"memory_bytes", "flow_cache_entries", "flow_cache_hits",
		"flow_cache_misses", "flow_cache_pauses"
	};
	struct pa_test_frame f;
	json_t *s;
	unsigned int i;

	setup_acl(export_acl, NULL);
	s = pa_acl_stats_json(acl);
	ck_assert_ptr_nonnull(s);
	for (i = 0; i < RTE_DIM(ints); i++)
		ck_assert_msg(json_is_integer(json_object_get(s, ints[i])),
			"stats.%s", ints[i]);
	ck_assert(json_is_real(json_object_get(s, "build_ms")));
	ck_assert(json_real_value(json_object_get(s, "build_ms")) >= 0);
	ck_assert_str_eq(json_string_value(json_object_get(s, "algorithm")),
		pa_acl_algorithm(acl));
	ck_assert_str_eq(json_string_value(json_object_get(s, "default")), "drop");
	ck_assert_str_eq(json_string_value(json_object_get(s, "non_ip")), "drop");
	ck_assert_int_eq(json_integer_value(json_object_get(s, "rules")), 4);
	ck_assert_int_eq(json_integer_value(json_object_get(s, "version")), 1);
	ck_assert_int_eq(json_integer_value(json_object_get(s, "builds")), 1);
	ck_assert_int_eq(json_integer_value(json_object_get(s,
		"flow_cache_entries")), PA_CONFIG_ACL_FLOW_CACHE_DEFAULT);
	ck_assert_uint_eq(json_object_size(s), 17);
	json_decref(s);

	/* counters and versions move; "builds" counts full builds only */
	ck_assert_uint_eq(look("192.0.2.1", "192.0.2.2", IPPROTO_UDP, 1, 2), 0);
	frame_arp(&f);
	classify_frame(&f, 0);
	add("{\"id\": 50, \"action\": \"permit\"}");	/* delta */
	del(50);					/* delta */
	ck_assert_int_eq(stat_int("default_hits"), 1);
	ck_assert_int_eq(stat_int("non_ip_frames"), 1);
	ck_assert_int_eq(stat_int("version"), 3);
	ck_assert_int_eq(stat_int("builds"), 1);
	ck_assert_int_eq(stat_int("rules"), 4);
	del(10);					/* base: voided, delta */
	ck_assert_int_eq(stat_int("version"), 4);
	ck_assert_int_eq(stat_int("builds"), 1);
	ck_assert_int_eq(replace_rules(NULL, 0, PA_ACL_PERMIT, false), 0);
	ck_assert_int_eq(stat_int("version"), 5);
	ck_assert_int_eq(stat_int("builds"), 2);
	ck_assert_int_eq(stat_int("rules"), 0);
}
END_TEST

START_TEST(test_algorithm_is_a_known_rte_acl_name)
{
	static const char *const names[] = {
		"avx512x32", "avx512x16", "avx2", "sse", "scalar", "default"
	};
	const char *a;
	unsigned int i;

	setup_acl(NULL, NULL);
	a = pa_acl_algorithm(acl);
	ck_assert_ptr_nonnull(a);
	for (i = 0; i < RTE_DIM(names); i++)
		if (strcmp(a, names[i]) == 0)
			break;
	ck_assert_msg(i < RTE_DIM(names), "algorithm %s", a);
	ck_assert_str_ne(a, "default");
}
END_TEST

static json_int_t
stats_of(struct pa_acl *a, const char *key)
{
	json_t *s = pa_acl_stats_json(a);
	json_int_t v;

	ck_assert_ptr_nonnull(s);
	v = json_integer_value(json_object_get(s, key));
	json_decref(s);
	return v;
}

START_TEST(test_background_folder_empties_the_delta_and_keeps_verdicts)
{
	struct pa_config_acl_rule r;
	struct pa_acl_opts o;
	struct pa_acl *f;
	struct pa_config *c;
	struct pa_flow_key k;
	enum pa_acl_action act;
	char err[PA_CONFIG_ERR_MAX];
	uint32_t id, i;
	int tries;

	c = pa_config_load_string("{" DOC_PORTS ", \"acl\": {\"default\": \"permit\", \"rules\": [{\"id\": 1, \"priority\": 1, \"src\": \"10.0.0.0/8\", \"action\": \"drop\"}]}}",
		NULL, err, sizeof(err));
	ck_assert_ptr_nonnull(c);
	memset(&o, 0, sizeof(o));
	o.n_lcores = 1;
	o.socket = SOCKET_ID_ANY;
	o.cfg = c;
	f = pa_acl_create(&o, err, sizeof(err));
	ck_assert_msg(f != NULL, "%s", err);
	/* 40 host rules 10.1.0.i/32 permit at priority 5: above rule 1 */
	for (i = 0; i < 40; i++) {
		memset(&r, 0, sizeof(r));
		r.id = 100 + i;
		r.priority = 5;
		r.src.addr.family = AF_INET;
		r.src.addr.v4.s_addr = htonl(0x0a010000 | i);
		r.src.len = 32;
		r.sport.hi = UINT16_MAX;
		r.dport.hi = UINT16_MAX;
		r.proto = PA_PROTO_ANY;
		r.in_port = -1;
		r.action = PA_ACL_PERMIT;
		ck_assert_int_eq(pa_acl_rule_add(f, &r, err, sizeof(err)), 0);
	}
	for (tries = 0; tries < 500 && stats_of(f, "delta_rules") != 0; tries++)
		usleep(10000);
	ck_assert_int_eq(stats_of(f, "delta_rules"), 0);
	ck_assert_int_ge(stats_of(f, "folds"), 1);
	ck_assert_int_eq(stats_of(f, "builds"), 1);	/* folds are not full builds */
	memset(&k, 0, sizeof(k));
	k.family = 4;
	k.proto = IPPROTO_UDP;
	for (i = 0; i < 40; i += 13) {
		k.v4.src = htonl(0x0a010000 | i);
		ck_assert_int_eq(pa_acl_trace(f, &k, true, -1, &id, &act), 0);
		ck_assert_uint_eq(id, 100 + i);
	}
	k.v4.src = htonl(0x0a020000);
	ck_assert_int_eq(pa_acl_trace(f, &k, true, -1, &id, &act), 0);
	ck_assert_uint_eq(id, 1);
	/* deleting a folded rule is a full build and still correct */
	ck_assert_int_eq(pa_acl_rule_delete(f, 100, err, sizeof(err)), 0);
	k.v4.src = htonl(0x0a010000);
	ck_assert_int_eq(pa_acl_trace(f, &k, true, -1, &id, &act), 0);
	ck_assert_uint_eq(id, 1);
	pa_acl_destroy(f);
	pa_config_free(c);
}
END_TEST

/* A random rule over 10/8 (prefix 8..24 on src and dst), priority 0..9. */
static void
random_rule(struct pa_config_acl_rule *r, uint32_t id, unsigned int *seed)
{
	memset(r, 0, sizeof(*r));
	r->id = id;
	r->priority = (int32_t)(rand_r(seed) % 10);
	r->src.addr.family = AF_INET;
	r->src.len = (uint8_t)(8 + rand_r(seed) % 17);
	r->src.addr.v4.s_addr = htonl((0x0a000000 | (rand_r(seed) & 0xffffff)) &
		(0xffffffffu << (32 - r->src.len)));
	if (rand_r(seed) % 2) {
		r->dst.addr.family = AF_INET;
		r->dst.len = (uint8_t)(8 + rand_r(seed) % 17);
		r->dst.addr.v4.s_addr = htonl((0x0a000000 |
			(rand_r(seed) & 0xffffff)) &
			(0xffffffffu << (32 - r->dst.len)));
	}
	r->sport.hi = UINT16_MAX;
	r->dport.lo = (uint16_t)(rand_r(seed) % 3 == 0 ? rand_r(seed) % 100 : 0);
	r->dport.hi = r->dport.lo != 0 ? (uint16_t)(r->dport.lo + rand_r(seed) % 20) :
		UINT16_MAX;
	r->proto = rand_r(seed) % 3 == 0 ? IPPROTO_UDP : PA_PROTO_ANY;
	r->in_port = -1;
	r->action = rand_r(seed) % 2 ? PA_ACL_PERMIT : PA_ACL_DROP;
}

static struct pa_acl *
bare_acl(struct pa_config *c)
{
	struct pa_acl_opts o;
	char err[PA_CONFIG_ERR_MAX];
	struct pa_acl *a;

	memset(&o, 0, sizeof(o));
	o.n_lcores = 1;
	o.socket = SOCKET_ID_ANY;
	o.cfg = c;
	o.no_folder = true;
	a = pa_acl_create(&o, err, sizeof(err));
	ck_assert_msg(a != NULL, "%s", err);
	return a;
}

START_TEST(test_deleting_base_rules_matches_a_fresh_build)
{
	enum { N = 300, KEYS = 300 };
	struct pa_config_acl_rule *rules = calloc(N, sizeof(*rules));
	struct pa_config_acl left;
	struct pa_config *c;
	struct pa_acl *inc, *fresh;
	struct pa_flow_key k;
	enum pa_acl_action a1, a2;
	char err[PA_CONFIG_ERR_MAX];
	unsigned int seed = 7, i, j, n = N;
	uint32_t id1, id2;

	ck_assert_ptr_nonnull(rules);
	c = pa_config_load_string("{" DOC_PORTS "}", NULL, err, sizeof(err));
	ck_assert_ptr_nonnull(c);
	for (i = 0; i < N; i++)
		random_rule(&rules[i], i + 1, &seed);
	memset(&left, 0, sizeof(left));
	left.rules = rules;
	left.n_rules = N;
	inc = bare_acl(c);
	fresh = bare_acl(c);
	ck_assert_int_eq(pa_acl_rules_replace(inc, &left, err, sizeof(err)), 0);
	/* delete 60 base rules one by one; after each, compare with a table
	 * built from scratch out of the rules left */
	for (j = 0; j < 60; j++) {
		unsigned int victim = rand_r(&seed) % n;

		ck_assert_int_eq(pa_acl_rule_delete(inc, rules[victim].id, err,
			sizeof(err)), 0);
		rules[victim] = rules[--n];
		left.n_rules = n;
		ck_assert_int_eq(pa_acl_rules_replace(fresh, &left, err,
			sizeof(err)), 0);
		memset(&k, 0, sizeof(k));
		k.family = 4;
		for (i = 0; i < KEYS; i++) {
			bool ports = rand_r(&seed) % 4 != 0;

			k.proto = rand_r(&seed) % 2 ? IPPROTO_UDP : IPPROTO_TCP;
			k.v4.src = htonl(0x0a000000 | (rand_r(&seed) & 0xffffff));
			k.v4.dst = htonl(0x0a000000 | (rand_r(&seed) & 0xffffff));
			k.dport = htons((uint16_t)(rand_r(&seed) % 130));
			k.sport = htons(1000);
			ck_assert_int_eq(pa_acl_trace(inc, &k, ports, -1, &id1, &a1), 0);
			ck_assert_int_eq(pa_acl_trace(fresh, &k, ports, -1, &id2, &a2), 0);
			ck_assert_msg(id1 == id2,
				"after %u deletes: incremental says rule %u, fresh build %u",
				j + 1, id1, id2);
		}
	}
	pa_acl_destroy(inc);
	pa_acl_destroy(fresh);
	pa_config_free(c);
	free(rules);
}
END_TEST

START_TEST(test_two_acls_can_live_side_by_side)
{
	struct pa_acl_opts o;
	struct pa_acl *second;
	struct pa_config *cfg2;
	char err[PA_CONFIG_ERR_MAX];

	setup_acl("{\"rules\": [{\"id\": 1, \"action\": \"drop\"}]}", NULL);
	cfg2 = pa_config_load_string("{" DOC_PORTS ", \"acl\": {\"rules\": [{\"id\": 2, \"action\": \"permit\"}]}}",
		NULL, err, sizeof(err));
	ck_assert_ptr_nonnull(cfg2);
	memset(&o, 0, sizeof(o));
	o.n_lcores = 2;
	o.socket = SOCKET_ID_ANY;
	o.cfg = cfg2;
	second = pa_acl_create(&o, err, sizeof(err));
	ck_assert_msg(second != NULL, "second ACL: %s", err);
	ck_assert_uint_eq(look("10.0.0.1", "10.0.0.2", IPPROTO_UDP, 1, 2), 1);
	pa_acl_destroy(second);
	pa_config_free(cfg2);
}
END_TEST

static uint64_t
dpdk_heap_used(void)
{
	struct rte_malloc_socket_stats st;
	uint64_t sum = 0;
	unsigned int s;

	for (s = 0; s < RTE_MAX_NUMA_NODES; s++)
		if (rte_malloc_get_socket_stats((int)s, &st) == 0)
			sum += st.heap_allocsz_bytes;
	return sum;
}

START_TEST(test_destroy_gives_back_all_dpdk_heap_memory)
{
	struct pa_config_acl_rule *r;
	uint64_t before;

	r = calloc(1500, sizeof(*r));
	ck_assert_ptr_nonnull(r);
	teardown_acl();
	before = dpdk_heap_used();
	setup_acl(export_acl, map_3_is_1());
	add("{\"id\": 1, \"dport\": \"1-2\", \"action\": \"drop\"}");
	big_rules(r, 1500);	/* the slot store grows */
	ck_assert_int_eq(replace_rules(r, 1500, PA_ACL_DROP, true), 0);
	add("{\"id\": 9999, \"src\": \"::/0\", \"action\": \"permit\"}");
	del(700);
	del(9999);
	send_to_rule(3, 2);
	teardown_acl();
	free(r);
	ck_assert_uint_eq(dpdk_heap_used(), before);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Random rule sets against a reference model                          */
/* ------------------------------------------------------------------ */

static bool
prefix_has(const struct pa_ip_prefix *p, int family, const uint8_t *a)
{
	const uint8_t *n = p->addr.family == AF_INET ?
		(const uint8_t *)&p->addr.v4 : p->addr.v6.s6_addr;
	unsigned int i;

	if (p->addr.family == 0)
		return true;
	if ((p->addr.family == AF_INET) != (family == 4))
		return false;
	for (i = 0; i < p->len; i++)
		if (((n[i / 8] ^ a[i / 8]) & (0x80 >> (i % 8))) != 0)
			return false;
	return true;
}

/* pa_acl.h's semantics, written plainly. */
static uint32_t
model(const struct pa_config_acl_rule *rules, unsigned int n,
		const struct tuple *t)
{
	const struct pa_config_acl_rule *best = NULL, *r;
	bool ports = proto_has_ports(t->proto) && !t->later_frag;
	int in_port = in_port_index(t->port);
	unsigned int i;

	for (i = 0; i < n; i++) {
		r = &rules[i];
		if (!prefix_has(&r->src, t->family, t->src) ||
		    !prefix_has(&r->dst, t->family, t->dst))
			continue;
		if (r->proto != PA_PROTO_ANY && r->proto != t->proto)
			continue;
		if (r->in_port >= 0 && r->in_port != in_port)
			continue;
		if (ports && (t->sport < r->sport.lo || t->sport > r->sport.hi ||
		    t->dport < r->dport.lo || t->dport > r->dport.hi))
			continue;
		if (best == NULL || r->priority > best->priority ||
		    (r->priority == best->priority && r->id < best->id))
			best = r;
	}
	return best != NULL ? best->id : 0;
}

static void
rnd_addr(int family, uint8_t *a)
{
	unsigned int i;

	if (family == 4) {
		/* 10.0.<0..3>.<0..15>: small, so that rules overlap */
		a[0] = 10;
		a[1] = 0;
		a[2] = (uint8_t)rnd(4);
		a[3] = (uint8_t)rnd(16);
		if (rnd(8) == 0)
			a[1] = (uint8_t)rnd(256);
	} else {
		memset(a, 0, 16);
		a[0] = 0x20;
		a[1] = 0x01;
		a[2] = 0x0d;
		a[3] = 0xb8;
		for (i = 4; i < 16; i++)
			a[i] = rnd(3) == 0 ? (uint8_t)rnd(4) : 0;
	}
}

static void
rnd_prefix(int family, struct pa_ip_prefix *p)
{
	static const uint8_t l4[] = { 0, 8, 16, 22, 24, 28, 30, 31, 32 };
	static const uint8_t l6[] = { 0, 16, 32, 48, 63, 64, 65, 96, 120,
		126, 127, 128 };
	uint8_t a[16];

	memset(p, 0, sizeof(*p));
	if (family == 0 || rnd(3) == 0)
		return;		/* any */
	rnd_addr(family, a);
	if (family == 4) {
		p->addr.family = AF_INET;
		p->len = l4[rnd(RTE_DIM(l4))];
		addr_mask(a, 4, p->len, false);
		memcpy(&p->addr.v4, a, 4);
	} else {
		p->addr.family = AF_INET6;
		p->len = l6[rnd(RTE_DIM(l6))];
		addr_mask(a, 16, p->len, false);
		memcpy(p->addr.v6.s6_addr, a, 16);
	}
}

static void
rnd_range(struct pa_port_range *r)
{
	switch (rnd(5)) {
	case 0:
	case 1:
		r->lo = 0;
		r->hi = 65535;
		break;
	case 2:
		r->lo = r->hi = (uint16_t)rnd(8);
		break;
	case 3:
		r->lo = (uint16_t)rnd(8);
		r->hi = (uint16_t)(r->lo + rnd(8));
		break;
	default:
		r->lo = (uint16_t)(65528 + rnd(8));
		r->hi = 65535;
		break;
	}
}

static const uint8_t rnd_protos[] = {
	IPPROTO_TCP, IPPROTO_UDP, IPPROTO_SCTP, IPPROTO_ICMP, IPPROTO_ICMPV6,
	IPPROTO_GRE
};

static void
rnd_rule(struct pa_config_acl_rule *r, uint32_t id)
{
	static const int families[] = { 0, 4, 6 };	/* 0: "any" */
	int family = families[rnd(3)];

	memset(r, 0, sizeof(*r));
	r->id = id;
	r->priority = (int32_t)rnd(4);
	rnd_prefix(family, &r->src);
	rnd_prefix(family, &r->dst);
	rnd_range(&r->sport);
	rnd_range(&r->dport);
	r->proto = rnd(3) == 0 ? PA_PROTO_ANY :
		rnd_protos[rnd(RTE_DIM(rnd_protos))];
	r->in_port = rnd(5) == 0 ? (int)rnd(2) : -1;
	r->action = rnd(3) == 0 ? PA_ACL_MARK : rnd(2) ? PA_ACL_DROP :
		PA_ACL_PERMIT;
	if (r->action == PA_ACL_MARK)
		r->dscp = (uint8_t)rnd(64);
}

static void
rnd_tuple(struct tuple *t)
{
	static const uint16_t ports[] = { 0, 3, 5 };

	memset(t, 0, sizeof(*t));
	t->family = rnd(2) ? 4 : 6;
	rnd_addr(t->family, t->src);
	rnd_addr(t->family, t->dst);
	t->proto = rnd_protos[rnd(RTE_DIM(rnd_protos))];
	t->sport = rnd(4) == 0 ? (uint16_t)(65528 + rnd(8)) : (uint16_t)rnd(16);
	t->dport = rnd(4) == 0 ? (uint16_t)(65528 + rnd(8)) : (uint16_t)rnd(16);
	t->later_frag = rnd(8) == 0;
	t->port = ports[rnd(RTE_DIM(ports))];
}

START_TEST(test_random_rule_sets_agree_with_a_reference_model)
{
	enum { N_RULES = 60, N_PKTS = 800, BURST = 32 };
	struct pa_config_acl_rule rules[N_RULES];
	static struct tuple pk[N_PKTS];
	uint32_t expect[N_PKTS];
	uint64_t want_hits[N_RULES];
	struct rte_mbuf *m[BURST];
	enum pa_acl_action def;
	char err[256];
	uint8_t v[BURST];
	struct pa_test_frame f;
	unsigned int round, i, j, k, n, n_base, mism = 0;

	/* the default flow cache, none, and one so small that its sets
	 * overflow (each round's tuples repeat, and new rules come in
	 * between: the cached verdicts must follow) */
	static const char *const caches[] = {
		NULL, "{\"flow_cache\": 0}", "{\"flow_cache\": 256}"
	};

	srand(4242 + _i);
	setup_acl(caches[_i], map_3_is_1());
	ck_assert_int_eq(stat_int("flow_cache_entries"),
		_i == 0 ? PA_CONFIG_ACL_FLOW_CACHE_DEFAULT : _i == 1 ? 0 : 256);
	for (round = 0; round < 8; round++) {
		/* fresh ids every round, so every counter starts at 0 */
		n = 5 + rnd(N_RULES - 5);
		for (i = 0; i < n; i++)
			rnd_rule(&rules[i], (round + 1) * 1000000 + rnd(1000) * 64 + i);
		/* some in the base (replace), the rest in the delta (add) */
		n_base = rnd(n + 1);
		def = rnd(2) ? PA_ACL_DROP : PA_ACL_PERMIT;
		ck_assert_int_eq(replace_rules(rules, n_base, def, false), 0);
		for (i = n_base; i < n; i++)
			ck_assert_int_eq(pa_acl_rule_add(acl, &rules[i], err,
				sizeof(err)), 0);
		/* and a few deleted from either tier */
		for (k = rnd(4); k > 0 && n > 1; k--) {
			j = rnd(n);
			ck_assert_int_eq(pa_acl_rule_delete(acl, rules[j].id,
				err, sizeof(err)), 0);
			rules[j] = rules[--n];
		}
		ck_assert_int_eq(stat_int("rules"), n);
		memset(want_hits, 0, sizeof(want_hits));
		for (i = 0; i < N_PKTS; i++) {
			rnd_tuple(&pk[i]);
			expect[i] = model(rules, n, &pk[i]);
			ck_assert_msg(trace_tuple(&pk[i], NULL) == expect[i],
				"round %u packet %u: trace %u, model %u",
				round, i, trace_tuple(&pk[i], NULL), expect[i]);
			for (k = 0; k < n; k++)
				if (rules[k].id == expect[i])
					want_hits[k]++;
		}
		/* the data path, in bursts mixing both families */
		for (i = 0; i < N_PKTS; i += BURST) {
			for (j = 0; j < BURST; j++) {
				frame_of(&pk[i + j], &f);
				m[j] = mbuf_of(&f, pk[i + j].port);
			}
			pa_acl_classify(acl, 0, m, BURST, v);
			for (j = 0; j < BURST; j++) {
				enum pa_acl_action a = def;

				for (k = 0; k < n; k++)
					if (rules[k].id == expect[i + j])
						a = rules[k].action;
				if (v[j] != verdict_of(a))
					mism++;
				rte_pktmbuf_free(m[j]);
			}
		}
		ck_assert_uint_eq(mism, 0);
		if (_i == 1)
			ck_assert_int_eq(stat_int("flow_cache_hits") +
				stat_int("flow_cache_misses"), 0);
		else
			ck_assert_int_gt(stat_int("flow_cache_hits"), 0);
		for (k = 0; k < n; k++)
			ck_assert_msg(hits(rules[k].id) == want_hits[k],
				"round %u rule %u: %" PRIu64 " hits, model %" PRIu64,
				round, rules[k].id, hits(rules[k].id),
				want_hits[k]);
	}
}
END_TEST

/* ------------------------------------------------------------------ */
/* The flow cache                                                      */
/* ------------------------------------------------------------------ */

START_TEST(test_flow_cache_serves_repeats_and_follows_every_change)
{
	struct pa_config_acl_rule r;
	struct tuple t, lan;

	setup_acl("{\"rules\": ["
		"{\"id\": 1, \"priority\": 10, \"dst\": \"192.0.2.0/24\", \"proto\": \"tcp\", \"action\": \"permit\"},"
		" {\"id\": 5, \"priority\": 30, \"in_port\": \"lan0\", \"action\": \"drop\"}]}",
		map_3_is_1());
	t = tup("198.51.100.1", "192.0.2.7", IPPROTO_TCP, 1000, 80);
	lan = t;
	lan.port = 3;
	/* lookup() checks each verdict and counter against the trace */
	ck_assert_uint_eq(lookup(&t), 1);
	ck_assert_int_eq(stat_int("flow_cache_misses"), 1);
	ck_assert_int_eq(stat_int("flow_cache_hits"), 0);
	ck_assert_uint_eq(lookup(&t), 1);
	ck_assert_int_eq(stat_int("flow_cache_hits"), 1);
	/* the same addresses and ports from another port: another key */
	ck_assert_uint_eq(lookup(&lan), 5);
	ck_assert_uint_eq(lookup(&lan), 5);
	ck_assert_uint_eq(lookup(&t), 1);
	ck_assert_int_eq(stat_int("flow_cache_hits"), 3);
	ck_assert_int_eq(stat_int("flow_cache_misses"), 2);
	/* an add, a delete from the delta, a delete from the base (voided
	 * there), a replace: the flow's next packet takes the new table */
	add("{\"id\": 2, \"priority\": 20, \"src\": \"198.51.100.0/24\", \"action\": \"drop\"}");
	ck_assert_uint_eq(lookup(&t), 2);
	ck_assert_uint_eq(lookup(&t), 2);
	del(2);
	ck_assert_uint_eq(lookup(&t), 1);
	ck_assert_uint_eq(lookup(&t), 1);
	del(1);
	ck_assert_uint_eq(lookup(&t), 0);
	ck_assert_uint_eq(lookup(&t), 0);
	r = rule_of("{\"id\": 3, \"proto\": \"tcp\", \"dport\": \"80\", \"action\": \"mark\", \"dscp\": 10}");
	ck_assert_int_eq(replace_rules(&r, 1, PA_ACL_DROP, false), 0);
	ck_assert_uint_eq(lookup(&t), 3);
	ck_assert_uint_eq(lookup(&t), 3);
	ck_assert_uint_eq(lookup(&lan), 3);
	/* each table: a miss, then hits */
	ck_assert_int_eq(stat_int("flow_cache_hits"), 3 + 1 + 1 + 1 + 1);
	ck_assert_int_eq(stat_int("flow_cache_misses"), 2 + 1 + 1 + 1 + 2);
	/* the trace and the fast path that skips the ACL never count */
	ck_assert_uint_eq(trace_tuple(&t, NULL), 3);
	ck_assert_int_eq(stat_int("flow_cache_hits") +
		stat_int("flow_cache_misses"), 14);
}
END_TEST

/* Classify @p n packets of flow numbers first.. (UDP 10.<f>.<f>.<f> ->
 * 192.0.2.1, dport f % 200) in bursts; rule 1 drops dports 0-99. Every
 * verdict checked. @return the drops. */
static unsigned int
overfull_traffic(unsigned int first, unsigned int n, unsigned int flows)
{
	struct rte_mbuf *m[32];
	struct pa_test_frame f;
	struct tuple t;
	unsigned int i, j, b, fl, drops = 0;
	uint8_t v[32];

	for (i = 0; i < n; i += b) {
		b = RTE_MIN(32u, n - i);
		for (j = 0; j < b; j++) {
			fl = (first + i + j) % flows;
			t = tup("10.0.0.0", "192.0.2.1", IPPROTO_UDP,
				(uint16_t)(1000 + fl), (uint16_t)(fl % 200));
			t.src[1] = (uint8_t)(fl >> 8);
			t.src[3] = (uint8_t)fl;
			frame_of(&t, &f);
			m[j] = mbuf_of(&f, 0);
		}
		pa_acl_classify(acl, 0, m, (uint16_t)b, v);
		for (j = 0; j < b; j++) {
			fl = (first + i + j) % flows;
			ck_assert_msg(v[j] == (fl % 200 < 100 ?
				PA_ACL_V_DROP_ACL : PA_ACL_V_FORWARD),
				"packet %u (flow %u): verdict %u", i + j, fl,
				v[j]);
			drops += v[j] != PA_ACL_V_FORWARD;
			rte_pktmbuf_free(m[j]);
		}
	}
	return drops;
}

START_TEST(test_flow_cache_overfull_pauses_and_stays_exact)
{
	/* 4096 flows in turn through 256 entries: a few sets' residents
	 * hit, the rest miss; past a window (65536 lookups) of such a hit
	 * rate the cache pauses */
	enum { FLOWS = 4096, FIRST = 70000, MORE = 5000 };
	json_int_t looked;
	unsigned int drops;

	setup_acl("{\"flow_cache\": 256, \"rules\": [{\"id\": 1, \"proto\": \"udp\", \"dport\": \"0-99\", \"action\": \"drop\"}]}",
		NULL);
	ck_assert_int_eq(stat_int("flow_cache_entries"), 256);
	drops = overfull_traffic(0, FIRST, FLOWS);
	ck_assert_int_eq(stat_int("flow_cache_pauses"), 1);
	looked = stat_int("flow_cache_hits") + stat_int("flow_cache_misses");
	ck_assert_int_lt(looked, FIRST);
	ck_assert_int_ge(looked, 65536);
	ck_assert_int_lt(stat_int("flow_cache_hits"), looked / 4);
	/* paused: the verdicts still exact, the cache not looked at */
	drops += overfull_traffic(FIRST, MORE, FLOWS);
	ck_assert_int_eq(stat_int("flow_cache_hits") +
		stat_int("flow_cache_misses"), looked);
	ck_assert_int_eq(hits(1) + (uint64_t)stat_int("default_hits"),
		FIRST + MORE);
	ck_assert_uint_eq(hits(1), drops);
	ck_assert_uint_gt(drops, 0);
}
END_TEST

/* Classify @p n packets (a multiple of 32) of new flows each: the burst
 * @p m rewritten in place, the IPv4 source from *@p next on (the
 * parse's metadata stays true: only the address changes). */
static void
new_flows(struct rte_mbuf **m, uint32_t *next, unsigned int n)
{
	unsigned int i, j;
	uint32_t src;
	uint8_t v[32];

	for (i = 0; i < n; i += 32) {
		for (j = 0; j < 32; j++) {
			src = rte_cpu_to_be_32(0x0a000000u | (*next)++);
			memcpy(rte_pktmbuf_mtod_offset(m[j], uint8_t *,
				RTE_ETHER_HDR_LEN + 12), &src, sizeof(src));
		}
		pa_acl_classify(acl, 0, m, 32, v);
	}
}

START_TEST(test_flow_cache_pauses_double_while_the_hit_rate_stays_poor)
{
	/* every packet a new flow: each window (65536 lookups) is poor; the
	 * first pause is 2^20 packets, the next 2^21 */
	enum { WIN = 65536, PAUSE = 1 << 20 };
	struct rte_mbuf *m[32];
	struct pa_test_frame f;
	struct tuple t;
	uint32_t next = 0;
	unsigned int j;

	setup_acl("{\"flow_cache\": 256, \"rules\": [{\"id\": 1, \"proto\": \"udp\", \"dport\": \"0-99\", \"action\": \"drop\"}]}",
		NULL);
	t = tup("10.0.0.1", "192.0.2.1", IPPROTO_UDP, 1000, 53);
	frame_of(&t, &f);
	for (j = 0; j < 32; j++)
		m[j] = mbuf_of(&f, 0);
	new_flows(m, &next, WIN + PAUSE + WIN);
	ck_assert_int_eq(stat_int("flow_cache_pauses"), 2);
	ck_assert_int_eq(stat_int("flow_cache_hits") +
		stat_int("flow_cache_misses"), 2 * WIN);
	/* still in the second, longer pause */
	new_flows(m, &next, PAUSE + WIN);
	ck_assert_int_eq(stat_int("flow_cache_pauses"), 2);
	ck_assert_int_eq(stat_int("flow_cache_hits") +
		stat_int("flow_cache_misses"), 2 * WIN);
	/* every packet dropped by rule 1, paused or not */
	ck_assert_uint_eq(hits(1), next);
	for (j = 0; j < 32; j++)
		rte_pktmbuf_free(m[j]);
}
END_TEST

START_TEST(test_flow_cache_ipv6_verdicts_of_high_slots_and_full_sets)
{
	/* 1200 rules: IPv4 ones, and every 37th an IPv6 /128 (their slots
	 * spread over the store, many past 255: an IPv6 way keeps a
	 * verdict's low byte in its set's header, the rest in its key's
	 * spare bits); each IPv6 flow's second and third packets take the
	 * cached verdict, and its counter moves (lookup()) */
	enum { N = 1200, STEP = 37 };
	struct pa_config_acl_rule *r;
	struct tuple t;
	json_int_t h0, m0;
	unsigned int i, k, n6 = 0;

	r = calloc(N, sizeof(*r));
	ck_assert_ptr_nonnull(r);
	setup_acl(NULL, NULL);
	big_rules(r, N);
	for (i = STEP - 1; i < N; i += STEP) {
		r[i].dst.addr.family = AF_INET6;
		ck_assert_int_eq(inet_pton(AF_INET6, "2001:db8::",
			&r[i].dst.addr.v6), 1);
		r[i].dst.addr.v6.s6_addr[14] = (uint8_t)(i >> 8);
		r[i].dst.addr.v6.s6_addr[15] = (uint8_t)i;
		r[i].dst.len = 128;
	}
	ck_assert_int_eq(replace_rules(r, N, PA_ACL_DROP, false), 0);
	h0 = stat_int("flow_cache_hits");
	m0 = stat_int("flow_cache_misses");
	for (i = STEP - 1; i < N; i += STEP, n6++) {
		t = tup("2001:db8:1::1", "2001:db8::", IPPROTO_UDP, 1000, 53);
		t.dst[14] = (uint8_t)(i >> 8);
		t.dst[15] = (uint8_t)i;
		for (k = 0; k < 3; k++)
			ck_assert_uint_eq(lookup(&t), i + 1);
	}
	ck_assert_int_eq(stat_int("flow_cache_misses") - m0, n6);
	ck_assert_int_eq(stat_int("flow_cache_hits") - h0, 2 * n6);
	/* a set holds three IPv6 flows: 256 flows through 128 sets (256
	 * entries), each flow four times in turn, every verdict exact; with
	 * two flows a set a quarter of them (the third and later of each
	 * set, Poisson with a mean of 2) would miss every time round, with
	 * three about a tenth */
	setup_acl("{\"flow_cache\": 256, \"rules\": [{\"id\": 1, \"proto\": \"udp\", \"dport\": \"0-99\", \"action\": \"drop\"}]}",
		NULL);
	for (k = 0; k < 4; k++)
		for (i = 0; i < 256; i++) {
			t = tup("2001:db8:1::", "2001:db8::1", IPPROTO_UDP,
				(uint16_t)(1000 + i), (uint16_t)(i % 200));
			t.src[15] = (uint8_t)i;
			ck_assert_uint_eq(lookup(&t), i % 200 < 100 ? 1 : 0);
		}
	ck_assert_int_eq(stat_int("flow_cache_hits") +
		stat_int("flow_cache_misses"), 4 * 256);
	ck_assert_int_ge(stat_int("flow_cache_hits"), 3 * 256 * 8 / 10);
	free(r);
}
END_TEST

START_TEST(test_flow_cache_size_is_checked_and_fixed_at_start)
{
	char err[PA_CONFIG_ERR_MAX];
	struct pa_config *c;

	c = pa_config_load_string("{" DOC_PORTS ", \"acl\": {\"flow_cache\": 100}}",
		NULL, err, sizeof(err));
	ck_assert_ptr_null(c);
	ck_assert_msg(strstr(err, "$.acl.flow_cache: expected 0 (no flow cache) or 256..4194304 entries, got 100") != NULL,
		"%s", err);
	/* rounded up to a power of two */
	setup_acl("{\"flow_cache\": 1000}", NULL);
	ck_assert_int_eq(stat_int("flow_cache_entries"), 1024);
	setup_acl("{\"flow_cache\": 0}", NULL);
	ck_assert_int_eq(stat_int("flow_cache_entries"), 0);
}
END_TEST

/* ------------------------------------------------------------------ */

static Suite *
acl_suite(void)
{
	Suite *s = suite_create("acl");
	TCase *tc;

	tc = tcase_create("semantics");
	tcase_set_timeout(tc, 120);
	tcase_add_checked_fixture(tc, NULL, teardown_acl);
	tcase_add_test(tc, test_higher_priority_wins_regardless_of_order_and_id);
	tcase_add_test(tc, test_equal_priority_lower_id_wins);
	tcase_add_test(tc, test_priority_zero_and_max_rank_correctly);
	tcase_add_test(tc, test_default_permit_when_no_rule_matches);
	tcase_add_test(tc, test_default_drop_when_no_rule_matches);
	tcase_add_test(tc, test_empty_acl_permits_everything);
	tcase_add_test(tc, test_any_prefix_matches_both_families);
	tcase_add_test(tc, test_ipv4_rule_does_not_match_ipv6_packets);
	tcase_add_test(tc, test_ipv6_rule_does_not_match_ipv4_packets);
	tcase_add_test(tc, test_ipv6_prefix_of_every_length_class_matches_exactly_its_addresses);
	tcase_add_test(tc, test_ipv4_prefix_boundaries_match_exactly_their_addresses);
	tcase_add_test(tc, test_port_ranges_are_inclusive_at_both_ends);
	tcase_add_test(tc, test_single_port_matches_only_that_port);
	tcase_add_test(tc, test_port_any_matches_every_port);
	tcase_add_test(tc, test_proto_any_matches_every_protocol);
	tcase_add_test(tc, test_proto_number_matches_only_that_protocol);
	tcase_add_test(tc, test_proto_names_match_their_protocols);
	tcase_add_test(tc, test_icmp_matches_port_constrained_rules_as_any_ports);
	tcase_add_test(tc, test_ipv4_non_first_fragment_matches_port_rules_as_any_ports);
	tcase_add_test(tc, test_ipv6_non_first_fragment_matches_port_rules_as_any_ports);
	tcase_add_test(tc, test_tcp_first_fragment_uses_its_ports);
	tcase_add_test(tc, test_in_port_matches_only_the_mapped_port_index);
	tcase_add_test(tc, test_in_port_never_matches_without_a_port_map);
	tcase_add_test(tc, test_trace_in_port_index_and_unknown);
	tcase_add_test(tc, test_non_ip_frames_are_forwarded_by_default);
	tcase_add_test(tc, test_non_ip_frames_are_dropped_when_non_ip_is_drop);
	tcase_add_loop_test(tc, test_random_rule_sets_agree_with_a_reference_model,
		0, 3);
	tcase_add_test(tc, test_flow_cache_serves_repeats_and_follows_every_change);
	tcase_add_test(tc, test_flow_cache_overfull_pauses_and_stays_exact);
	tcase_add_test(tc, test_flow_cache_pauses_double_while_the_hit_rate_stays_poor);
	tcase_add_test(tc, test_flow_cache_ipv6_verdicts_of_high_slots_and_full_sets);
	tcase_add_test(tc, test_flow_cache_size_is_checked_and_fixed_at_start);
	suite_add_tcase(s, tc);

	tc = tcase_create("actions");
	tcase_set_timeout(tc, 120);
	tcase_add_checked_fixture(tc, NULL, teardown_acl);
	tcase_add_test(tc, test_mark_rewrites_dscp_keeps_ecn_and_ipv4_checksum_is_exact);
	tcase_add_test(tc, test_mark_rewrites_ipv6_traffic_class_keeping_ecn_and_flow_label);
	tcase_add_test(tc, test_police_passes_burst_then_drops);
	tcase_add_test(tc, test_police_in_one_burst_passes_burst_packets);
	tcase_add_test(tc, test_classify_ip_without_rules_takes_the_default);
	tcase_add_test(tc, test_forward_all_only_while_no_rule_and_the_default_permits);
	tcase_add_test(tc, test_police_meter_keeps_its_tokens_across_rebuilds);
	suite_add_tcase(s, tc);

	tc = tcase_create("table");
	tcase_set_timeout(tc, 120);
	tcase_add_checked_fixture(tc, NULL, teardown_acl);
	tcase_add_test(tc, test_counters_count_hits_and_bytes_per_rule);
	tcase_add_test(tc, test_counters_survive_adding_another_rule);
	tcase_add_test(tc, test_counters_survive_replace_that_keeps_the_id);
	tcase_add_test(tc, test_deleted_and_readded_id_starts_from_zero);
	tcase_add_test(tc, test_rule_add_duplicate_id_is_eexist_and_table_unchanged);
	tcase_add_test(tc, test_delete_unknown_id_is_enoent);
	tcase_add_test(tc, test_replace_with_mixed_family_rule_is_einval_and_old_table_stays);
	tcase_add_test(tc, test_invalid_rules_are_einval);
	tcase_add_test(tc, test_added_rules_rank_against_base_rules_by_priority_then_id);
	tcase_add_test(tc, test_adds_past_the_delta_limit_fold_into_a_full_build);
	tcase_add_test(tc, test_growth_past_1024_rules_keeps_counters);
	tcase_add_test(tc, test_export_round_trips_the_rule_set);
	tcase_add_test(tc, test_rules_json_lists_rules_best_first_in_config_schema);
	tcase_add_test(tc, test_stats_json_has_every_field);
	tcase_add_test(tc, test_algorithm_is_a_known_rte_acl_name);
	tcase_add_test(tc, test_two_acls_can_live_side_by_side);
	tcase_add_test(tc, test_deleting_base_rules_matches_a_fresh_build);
	tcase_add_test(tc, test_background_folder_empties_the_delta_and_keeps_verdicts);
	tcase_add_test(tc, test_destroy_gives_back_all_dpdk_heap_memory);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	static const char *const eal_args[] = { "-m", "256", "-l", "0", NULL };
	static Suite *(*const suites[])(void) = { acl_suite, NULL };
	const struct pa_test_main t = {
		.name = "test_acl",
		.suites = suites,
		.eal_args = eal_args,
		.mbufs = 1023,
		.pool = &pool,
		.pkt_init = true,
		.teardown = teardown_acl,
	};

	return pa_test_main_eal(&t);
}
