/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_lb's fixture, shared by its per-concern sources (test_lb_*.c):
 * the LB made from a configuration, the frames this suite sends, the
 * checksums computed the long way, the reference Maglev, and the
 * helpers more than one concern uses.
 *
 * One EAL (--no-huge) is started by main() (test_lb.c) and the suite
 * runs without fork (CK_NOFORK); each test gets a fresh LB from
 * setup_lb() and the checked fixture (teardown_lb()) frees it, so a
 * failing test leaves nothing behind. The LB runs with one data-path
 * lcore (index 0), no RCU and no ports: no MTU check, source MACs are
 * left alone and the destination MAC is the backend's "mac", else the
 * frame's own source MAC.
 */

#ifndef LB_FIXTURE_H
#define LB_FIXTURE_H

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

extern struct rte_mempool *pool;	/* main()'s, 1023 mbufs */
extern struct pa_config *cfg;		/* the LB's configuration */
extern struct pa_lb *lb;		/* setup_lb()'s */
extern uint64_t hz;			/* the TSC's */
/* more "lb" keys for the next setup_lb() (' for ", each followed by
 * a comma) */
extern const char *lb_extra;
/* more top-level keys for the next setup_lb() (' for ", each preceded
 * by a comma), e.g. a "protect" section */
extern const char *doc_extra;

extern const uint8_t mac_me[6];		/* appliance */
extern const uint8_t mac_peer[6];	/* router */
extern const uint8_t mac_srv[6];	/* server side */

/* ------------------------------------------------------------------ */
/* Small helpers                                                       */
/* ------------------------------------------------------------------ */

/* The suite's pseudo-random numbers: one sequence for the whole run. */
uint32_t rng(void);
/* Network-order IPv4 address of a dotted quad. */
uint32_t ip4(const char *s);
struct pa_ip_addr addr_of(const char *s);

/* ------------------------------------------------------------------ */
/* Checksums, the long way                                             */
/* ------------------------------------------------------------------ */

/* The sums themselves are the frame builder's: pa_test_ip4_csum(),
 * pa_test_l4_csum(). */

/* The folded ones' complement sum (not complemented). */
uint16_t fold_sum(uint32_t s);
/* Write the L4 checksum of the packet at @p l3, computed afresh. */
void set_l4_csum(uint8_t *l3);
/* Make the packet at @p l3 carry correct checksums (IPv4 header; L4
 * unless it is an IPv4 UDP datagram without one). */
void fix_csums(uint8_t *l3);

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
void frame_eth(struct pa_test_frame *f, uint16_t vlan, uint16_t etype);
void frame_ipv4(struct pa_test_frame *f, const char *src, const char *dst,
		uint8_t proto, uint8_t tos, uint16_t frag, uint16_t id);
void frame_ipv6(struct pa_test_frame *f, const char *src, const char *dst,
		uint8_t nh, uint8_t tc);
/* IPv6 fragment header; @p off in 8-byte units. */
void frame_frag6(struct pa_test_frame *f, uint8_t nh, uint16_t off,
		bool more, uint32_t ident);
void frame_tcp(struct pa_test_frame *f, uint16_t sport, uint16_t dport,
		uint8_t flags);
void frame_udp(struct pa_test_frame *f, uint16_t sport, uint16_t dport);
void frame_icmp(struct pa_test_frame *f);
void frame_payload(struct pa_test_frame *f, unsigned int n, uint8_t seed);
/* IP and UDP lengths and the checksums (not for fragments). */
void frame_fix(struct pa_test_frame *f);
/* Ethernet padding up to @p total bytes (after frame_fix()). */
void frame_pad(struct pa_test_frame *f, uint32_t total);
/* A TCP or UDP packet client -> server, ready. */
void frame_l4(struct pa_test_frame *f, const char *src, const char *dst,
		uint8_t proto, uint16_t sport, uint16_t dport, uint8_t flags,
		unsigned int payload);

/* An mbuf holding @p f, parsed, to leave on port 0. */
struct rte_mbuf *mbuf_of(const struct pa_test_frame *f);
/* pa_lb_process() on @p m alone at @p now: @return its verdict. */
uint8_t process1(struct rte_mbuf *m, uint64_t now);
/* The 5-tuple of @p f, as trace_packet would be asked. */
struct pa_flow_key key_of(const struct pa_test_frame *f);
/* Send @p f through an IPv4 ipip service; @return the outer destination
 * (network order). */
uint32_t send_ipip4(const struct pa_test_frame *f, uint64_t now);
/* A TCP packet of flow @p i (client 198.51.100.x:port) to web4, sent;
 * @return its backend. */
uint32_t web4_flow(unsigned int i, uint8_t flags, uint64_t now);

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

/* The checked fixture of every test case but maglev: frees the LB and
 * its configuration. */
void teardown_lb(void);
/* A fresh LB with the services @p services (JSON objects, ' for ") and
 * a flow table of @p flows entries, for @p n_lcores lb lcores. */
void setup_lb_flows(const char *services, unsigned int flows,
		unsigned int n_lcores);
/* setup_lb_flows() with 1024 flows and one lcore. */
void setup_lb(const char *services);
/* Counter @p name of stats_get's "lb". */
json_int_t lb_stat(const char *name);

/* One backend's counters from lb_service_list. */
struct be_count {
	json_int_t flows, packets, bytes;
	char state[16];
};

struct be_count be_count(const char *service, const char *addr);
/* Age: enough idle polls to sweep the whole table once. */
void sweep(uint64_t now);
/* A service from its JSON text (' for "). */
void service_of(const char *text, struct pa_config_service *svc);
/* A backend of service @p name from its JSON text. */
void backend_of(const char *name, const char *text,
		struct pa_config_backend *be);
/* The control functions on backends by address: 0 or -errno. */
int add_backend(const char *name, const char *text);
int set_state(const char *name, const char *addr, enum pa_lb_state st);
int set_weight(const char *name, const char *addr, uint32_t w);
int delete_backend(const char *name, const char *addr);

/* ------------------------------------------------------------------ */
/* Maglev: the reference                                               */
/* ------------------------------------------------------------------ */

/*
 * NSDI'16 section 3.4, Figure 3's population loop, written plainly:
 * permutation[i][j] = (offset_i + j * skip_i) mod M; each round, backend
 * i (in the order of its key) adds weight_i to its credit and, for every
 * whole max_weight in it, takes the next free entry of its permutation.
 */
void ref_maglev(const struct pa_lb_maglev_backend *be, unsigned int n,
		uint32_t m, uint16_t *table);

/* ------------------------------------------------------------------ */
/* Shared by several concerns                                          */
/* ------------------------------------------------------------------ */

#define N_FLOWS 300

/* Is @p a (network order) one of web4's three backends? */
bool is_web4_backend(uint32_t a);
/* A packet of UDP flow @p i of the dns4 service, at T0. */
void dns4_flow(unsigned int i);
/* @p f goes through the LB unchanged (verdict forward). */
void check_untouched(const struct pa_test_frame *f);

/* ------------------------------------------------------------------ */
/* The test cases, one per concern (test_lb.c puts them in a suite)    */
/* ------------------------------------------------------------------ */

TCase *lb_tcase_maglev(void);		/* test_lb_maglev.c */
TCase *lb_tcase_modes(void);		/* test_lb_modes.c */
TCase *lb_tcase_flows(void);		/* test_lb_flows.c */
TCase *lb_tcase_protection(void);	/* test_lb_protection.c */
TCase *lb_tcase_icmp(void);		/* test_lb_icmp.c */
TCase *lb_tcase_sched(void);		/* test_lb_sched.c */
TCase *lb_tcase_control(void);		/* test_lb_control.c */
TCase *lb_tcase_health(void);		/* test_lb_health.c */
TCase *lb_tcase_fnat(void);		/* test_lb_fnat.c */
TCase *lb_tcase_history(void);		/* test_lb_history.c */

#endif /* LB_FIXTURE_H */
