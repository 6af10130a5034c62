/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests of lib/config: loading, validation messages, round trip, RPC. */

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <arpa/inet.h>

#include <check.h>
#include <jansson.h>

#include "pa_acl_config.h"
#include "pa_config.h"
#include "pa_lb_config.h"
#include "pa_net.h"
#include "pa_rpc.h"
#include "pa_test_main.h"

#ifndef PA_SOURCE_DRIVERS_CONFIG_DIR
#error "PA_SOURCE_DRIVERS_CONFIG_DIR must point at drivers-config/"
#endif

/* JSON written as C tokens: J({"a": 1}) is the string "{\"a\": 1}". */
#define J(...) #__VA_ARGS__

static char err[PA_CONFIG_ERR_MAX];

static struct pa_config *
load(const char *text)
{
	return pa_config_load_string(text, NULL, err, sizeof(err));
}

static struct pa_config *
load_replay(const char *text)
{
	struct pa_config_opts o = { .replay = true };

	return pa_config_load_string(text, &o, err, sizeof(err));
}

static struct pa_config *
must_load(const char *text, const struct pa_config_opts *o)
{
	struct pa_config *cfg;

	cfg = pa_config_load_string(text, o, err, sizeof(err));
	ck_assert_msg(cfg != NULL, "load failed: %s", err);
	return cfg;
}

static void
assert_err_begins(const char *expect)
{
	ck_assert_msg(strncmp(err, expect, strlen(expect)) == 0,
			"error \"%s\" does not begin with \"%s\"", err, expect);
}

static const char *
ip4(const struct pa_ip_addr *a)
{
	static char buf[INET6_ADDRSTRLEN];

	return pa_net_format_ip(a, buf, sizeof(buf));
}

static void
assert_flow_table(const struct pa_config *cfg, uint32_t size,
		uint32_t tcp_timeout, uint32_t tcp_fin_timeout,
		uint32_t udp_timeout)
{
	ck_assert_uint_eq(cfg->lb.flow_table.size, size);
	ck_assert_uint_eq(cfg->lb.flow_table.tcp_timeout, tcp_timeout);
	ck_assert_uint_eq(cfg->lb.flow_table.tcp_fin_timeout, tcp_fin_timeout);
	ck_assert_uint_eq(cfg->lb.flow_table.udp_timeout, udp_timeout);
}

static void
assert_rpc(const struct pa_config *cfg, bool present, uint32_t conns,
		uint64_t request, uint32_t depth, uint32_t idle)
{
	ck_assert_int_eq(cfg->rpc.present, present);
	ck_assert_uint_eq(cfg->rpc.max_connections, conns);
	ck_assert_uint_eq(cfg->rpc.max_request_bytes, request);
	ck_assert_uint_eq(cfg->rpc.max_depth, depth);
	ck_assert_uint_eq(cfg->rpc.idle_timeout, idle);
}

/* ------------------------------------------------------------------ */
/* Structural equality of two configs                                  */
/* ------------------------------------------------------------------ */

static void
assert_str_eq_null(const char *a, const char *b, const char *what)
{
	if (a == NULL || b == NULL)
		ck_assert_msg(a == b, "%s: one is NULL", what);
	else
		ck_assert_msg(strcmp(a, b) == 0, "%s: '%s' != '%s'", what, a, b);
}

static void
assert_config_equal(const struct pa_config *a, const struct pa_config *b)
{
	struct pa_config_port pa, pb;
	struct pa_config_service sa, sb;
	unsigned int i;

	ck_assert_uint_eq(a->n_ports, b->n_ports);
	ck_assert_int_eq(a->ports_present, b->ports_present);
	for (i = 0; i < a->n_ports; i++) {
		assert_str_eq_null(a->ports[i].devargs, b->ports[i].devargs,
				"devargs");
		assert_str_eq_null(a->ports[i].pci, b->ports[i].pci, "pci");
		assert_str_eq_null(a->ports[i].profile, b->ports[i].profile,
				"profile");
		if (a->ports[i].profile_doc == NULL)
			ck_assert_ptr_null(b->ports[i].profile_doc);
		else
			ck_assert(json_equal(a->ports[i].profile_doc,
					b->ports[i].profile_doc));
		memcpy(&pa, &a->ports[i], sizeof(pa));
		memcpy(&pb, &b->ports[i], sizeof(pb));
		pa.devargs = pb.devargs = NULL;
		pa.pci = pb.pci = NULL;
		pa.profile = pb.profile = NULL;
		pa.profile_doc = pb.profile_doc = NULL;
		ck_assert_msg(memcmp(&pa, &pb, sizeof(pa)) == 0,
				"ports[%u] differ", i);
	}
	ck_assert(memcmp(&a->pipeline, &b->pipeline, sizeof(a->pipeline)) == 0);
	ck_assert_int_eq(a->acl.present, b->acl.present);
	ck_assert_int_eq(a->acl.def, b->acl.def);
	ck_assert_int_eq(a->acl.non_ip_drop, b->acl.non_ip_drop);
	ck_assert_uint_eq(a->acl.n_rules, b->acl.n_rules);
	if (a->acl.n_rules > 0)
		ck_assert(memcmp(a->acl.rules, b->acl.rules,
				a->acl.n_rules * sizeof(a->acl.rules[0])) == 0);
	ck_assert_int_eq(a->lb.present, b->lb.present);
	ck_assert_int_eq(a->lb.has_local_addr, b->lb.has_local_addr);
	ck_assert_int_eq(a->lb.has_local_addr6, b->lb.has_local_addr6);
	ck_assert(memcmp(&a->lb.local_addr, &b->lb.local_addr,
			sizeof(a->lb.local_addr)) == 0);
	ck_assert(memcmp(&a->lb.local_addr6, &b->lb.local_addr6,
			sizeof(a->lb.local_addr6)) == 0);
	ck_assert(memcmp(&a->lb.flow_table, &b->lb.flow_table,
			sizeof(a->lb.flow_table)) == 0);
	ck_assert(memcmp(&a->lb.fnat, &b->lb.fnat, sizeof(a->lb.fnat)) == 0);
	ck_assert_uint_eq(a->lb.n_services, b->lb.n_services);
	for (i = 0; i < a->lb.n_services; i++) {
		memcpy(&sa, &a->lb.services[i], sizeof(sa));
		memcpy(&sb, &b->lb.services[i], sizeof(sb));
		sa.backends = sb.backends = NULL;
		ck_assert_msg(memcmp(&sa, &sb, sizeof(sa)) == 0,
				"services[%u] differ", i);
		if (sa.n_backends > 0)
			ck_assert(memcmp(a->lb.services[i].backends,
					b->lb.services[i].backends,
					sa.n_backends * sizeof(sa.backends[0])) == 0);
	}
	ck_assert(memcmp(&a->metrics, &b->metrics, sizeof(a->metrics)) == 0);
	ck_assert(memcmp(&a->rpc, &b->rpc, sizeof(a->rpc)) == 0);
}

/* load(to_json(cfg)) == cfg, and to_json is stable. */
static void
assert_round_trip(const struct pa_config *cfg, const struct pa_config_opts *o)
{
	struct pa_config *again;
	json_t *j1, *j2;

	j1 = pa_config_to_json(cfg);
	ck_assert_ptr_nonnull(j1);
	again = pa_config_load_json(j1, o, err, sizeof(err));
	ck_assert_msg(again != NULL, "reload of to_json failed: %s", err);
	assert_config_equal(cfg, again);
	j2 = pa_config_to_json(again);
	ck_assert(json_equal(j1, j2));
	json_decref(j1);
	json_decref(j2);
	pa_config_free(again);
}

/* ------------------------------------------------------------------ */
/* Documents                                                           */
/* ------------------------------------------------------------------ */

static const char contract_example[] = J(
{
  "ports": [ {"name": "wan0", "devargs": "net_af_packet0,iface=veth0",
              "addr": ["198.51.100.5/24"], "gateway": "198.51.100.1"},
             {"name": "nic1", "pci": "0000:3b:00.0", "profile": "mlx5"} ],
  "pipeline": {"mode": "pipeline", "lcores": {"rx": [1], "classify": [2], "lb": [3], "tx": [4]},
               "ring_size": 1024, "burst": 32},
  "acl": {
    "default": "permit",
    "rules": [
      {"id": 10, "priority": 100, "src": "10.0.0.0/8", "dst": "any",
       "sport": "any", "dport": "53", "proto": "udp", "action": "drop"},
      {"id": 11, "priority": 90, "src": "2001:db8::/32", "dst": "any",
       "sport": "1024-65535", "dport": "80-88", "proto": "tcp", "action": "permit"}
    ]
  },
  "lb": {
    "local_addr": "192.0.2.254",
    "fnat": {"addrs": ["198.51.100.50", "198.51.100.51", "2001:db8:5::50"], "ports": "1024-65535"},
    "services": [
      {"name": "web", "vip": "192.0.2.10", "port": 80, "proto": "tcp",
       "scheduler": "maglev", "forward": "ipip",
       "backends": [ {"addr": "10.1.0.1", "weight": 1}, {"addr": "10.1.0.2", "weight": 2} ]},
      {"name": "app", "vip": "2001:db8:ffff::40", "port": 443, "proto": "tcp",
       "forward": "fnat", "proxy_protocol": "v2",
       "backends": [ {"addr": "10.1.0.7", "port": 8443}, {"addr": "10.1.0.8", "port": 8443} ]}
    ]
  }
});

/* Every field of the schema at least once. */
static const char full_doc[] = J(
{
  "ports": [
    {"name": "wan0", "devargs": "net_af_packet0,iface=veth0", "profile": "af_packet",
     "rx_queues": 1, "tx_queues": 2, "rx_desc": 512, "tx_desc": 1024, "mtu": 9000,
     "mbufs": 20000, "promisc": false, "peer": "lan0", "gateway_mac": "02:00:00:00:00:01",
     "addr": ["198.51.100.5/24", "2001:db8:1::5/64"]},
    {"name": "lan0", "pci": "3b:00.1", "profile": "mlx5", "peer": "wan0",
     "gateway": "2001:db8:2::1", "addr": []}
  ],
  "pipeline": {"mode": "pipeline",
               "lcores": {"rx": [1, 5], "classify": [2], "lb": [3, 6, 7], "tx": [4]},
               "ring_size": 4096, "burst": 64, "tx_drain_us": 250, "latency": false,
               "idle": {"mode": "adaptive", "spin_polls": 0, "max_sleep_us": 10000}},
  "acl": {
    "default": "drop", "non_ip": "drop",
    "rules": [
      {"id": 1, "priority": 2147483647, "src": "192.0.2.0/24", "dst": "198.51.100.7",
       "sport": 53, "dport": "1-1023", "proto": 17, "action": "mark", "dscp": 46},
      {"id": 2147483648, "priority": 0, "src": "any", "dst": "2001:db8::/32",
       "proto": "icmpv6", "action": "police", "rate_pps": 1000, "burst": 64,
       "in_port": "lan0"},
      {"id": 3, "proto": 47, "action": "permit"},
      {"id": 4, "proto": "icmp", "dport": "any", "action": "drop", "in_port": "wan0"}
    ]
  },
  "lb": {
    "local_addr": "192.0.2.254", "local_addr6": "2001:db8::fe",
    "flow_table": {"size": 67108864, "tcp_timeout": 86400, "tcp_fin_timeout": 1,
                   "udp_timeout": 45},
    "icmp_echo": false,
    "fnat": {"addrs": ["2001:db8:1::5", "198.51.100.60"], "ports": "2000",
             "time_wait_s": 0},
    "services": [
      {"name": "web", "vip": "192.0.2.10", "port": 80, "proto": "tcp",
       "backends": [ {"addr": "10.1.0.1"},
                     {"addr": "10.1.0.2", "port": 80, "weight": 0, "state": "drain",
                      "mac": "02:00:00:00:01:02"} ]},
      {"name": "dns.v6", "vip": "2001:db8::53", "port": "53", "proto": "udp",
       "scheduler": "wrr", "forward": "ipip", "table_size": 1021,
       "backends": [ {"addr": "2001:db8:5::1", "weight": 65535, "state": "down"} ]},
      {"name": "api-nat", "vip": "192.0.2.11", "port": 443, "proto": "tcp",
       "scheduler": "lc", "forward": "nat", "mss_clamp": 1360,
       "backends": [ {"addr": "10.2.0.1", "port": 8443}, {"addr": "10.2.0.2", "port": 0} ]},
      {"name": "dsr_1", "vip": "192.0.2.12", "port": 8080, "proto": "udp",
       "scheduler": "rr", "forward": "dsr", "table_size": 1048573,
       "backends": [ {"addr": "10.3.0.1", "mac": "AA:BB:CC:DD:EE:FF"} ]},
      {"name": "full", "vip": "192.0.2.13", "port": 443, "proto": "tcp",
       "forward": "fnat", "proxy_protocol": "v1",
       "backends": [ {"addr": "2001:db8:6::1", "port": 8443}, {"addr": "10.4.0.1"} ]}
    ]
  },
  "metrics": {"listen": "[::1]:9100"},
  "rpc": {"max_connections": 8, "max_request_bytes": 1048576, "max_depth": 16,
          "idle_timeout": 5, "group": "daemon"}
});

/* ------------------------------------------------------------------ */
/* Valid documents                                                     */
/* ------------------------------------------------------------------ */

START_TEST(test_contract_example_loads_into_typed_structs)
{
	struct pa_config *cfg = must_load(contract_example, NULL);
	const struct pa_config_acl_rule *r;
	const struct pa_config_service *s;

	ck_assert_uint_eq(cfg->n_ports, 2);
	ck_assert(cfg->ports_present);
	ck_assert_str_eq(cfg->ports[0].name, "wan0");
	ck_assert_str_eq(cfg->ports[0].devargs, "net_af_packet0,iface=veth0");
	ck_assert_ptr_null(cfg->ports[0].pci);
	ck_assert_uint_eq(cfg->ports[0].n_addrs, 1);
	ck_assert_uint_eq(cfg->ports[0].addrs[0].len, 24);
	ck_assert(cfg->ports[0].has_gateway[0]);
	ck_assert(!cfg->ports[0].has_gateway[1]);
	ck_assert_str_eq(ip4(pa_config_port_gateway(&cfg->ports[0], AF_INET)),
			"198.51.100.1");
	ck_assert_ptr_null(pa_config_port_gateway(&cfg->ports[0], AF_INET6));
	ck_assert(!cfg->ports[0].has_gateway_mac);
	ck_assert_int_eq(cfg->ports[0].peer, 0);
	/* routed (it has "addr"): not promiscuous unless told so */
	ck_assert(!cfg->ports[0].promisc);
	/* transparent: promiscuous */
	ck_assert(cfg->ports[1].promisc);
	ck_assert_str_eq(cfg->ports[1].pci, "0000:3b:00.0");
	ck_assert_str_eq(cfg->ports[1].profile, "mlx5");
	ck_assert_ptr_nonnull(cfg->ports[1].profile_doc);
	ck_assert_str_eq(json_string_value(json_object_get(
			cfg->ports[1].profile_doc, "driver")), "mlx5_pci");
	/* transparent on a wire without "peer": paired with the other
	 * port of the two (never its own peer) */
	ck_assert_int_eq(cfg->ports[1].peer, 0);

	ck_assert_int_eq(cfg->pipeline.mode, PA_PIPELINE_STAGED);
	ck_assert(cfg->pipeline.lcores_set);
	ck_assert_uint_eq(cfg->pipeline.n_lcores[PA_CONFIG_STAGE_RX], 1);
	ck_assert_uint_eq(cfg->pipeline.lcores[PA_CONFIG_STAGE_RX][0], 1);
	ck_assert_uint_eq(cfg->pipeline.lcores[PA_CONFIG_STAGE_CLASSIFY][0], 2);
	ck_assert_uint_eq(cfg->pipeline.lcores[PA_CONFIG_STAGE_LB][0], 3);
	ck_assert_uint_eq(cfg->pipeline.lcores[PA_CONFIG_STAGE_TX][0], 4);
	ck_assert_uint_eq(cfg->pipeline.n_lcores[PA_CONFIG_STAGE_WORKER], 0);
	ck_assert_uint_eq(cfg->pipeline.tx_drain_us, 100);

	ck_assert(cfg->acl.present);
	ck_assert_int_eq(cfg->acl.def, PA_ACL_PERMIT);
	ck_assert_uint_eq(cfg->acl.n_rules, 2);
	r = &cfg->acl.rules[0];
	ck_assert_uint_eq(r->id, 10);
	ck_assert_int_eq(r->priority, 100);
	ck_assert_int_eq(r->src.addr.family, AF_INET);
	ck_assert_uint_eq(r->src.len, 8);
	ck_assert_int_eq(r->dst.addr.family, 0);
	ck_assert_uint_eq(r->sport.lo, 0);
	ck_assert_uint_eq(r->sport.hi, 65535);
	ck_assert_uint_eq(r->dport.lo, 53);
	ck_assert_uint_eq(r->dport.hi, 53);
	ck_assert_int_eq(r->proto, IPPROTO_UDP);
	ck_assert_int_eq(r->action, PA_ACL_DROP);
	ck_assert_int_eq(r->in_port, -1);
	r = &cfg->acl.rules[1];
	ck_assert_int_eq(r->src.addr.family, AF_INET6);
	ck_assert_uint_eq(r->sport.lo, 1024);
	ck_assert_uint_eq(r->dport.hi, 88);

	ck_assert(cfg->lb.present);
	ck_assert(cfg->lb.has_local_addr);
	ck_assert(!cfg->lb.has_local_addr6);
	ck_assert_uint_eq(cfg->lb.n_services, 2);
	ck_assert(cfg->lb.fnat.present);
	ck_assert_uint_eq(cfg->lb.fnat.n_addrs, 3);
	ck_assert_str_eq(ip4(&cfg->lb.fnat.addrs[1]), "198.51.100.51");
	ck_assert_int_eq(cfg->lb.fnat.addrs[2].family, AF_INET6);
	ck_assert_uint_eq(cfg->lb.fnat.port_lo, 1024);
	ck_assert_uint_eq(cfg->lb.fnat.port_hi, 65535);
	ck_assert_uint_eq(cfg->lb.fnat.time_wait_s, 60);
	s = &cfg->lb.services[1];
	ck_assert_int_eq(s->forward, PA_LB_FNAT);
	ck_assert_int_eq(s->proxy_protocol, PA_LB_PROXY_V2);
	ck_assert_int_eq(s->vip.family, AF_INET6);
	ck_assert_int_eq(s->backends[0].addr.family, AF_INET);
	ck_assert_uint_eq(s->backends[1].port, 8443);
	s = &cfg->lb.services[0];
	ck_assert_int_eq(s->proxy_protocol, PA_LB_PROXY_NONE);
	ck_assert_str_eq(s->name, "web");
	ck_assert_uint_eq(s->port, 80);
	ck_assert_uint_eq(s->proto, IPPROTO_TCP);
	ck_assert_int_eq(s->scheduler, PA_LB_MAGLEV);
	ck_assert_int_eq(s->forward, PA_LB_IPIP);
	ck_assert_uint_eq(s->table_size, 65537);
	ck_assert_uint_eq(s->mss_clamp, 0);
	ck_assert(cfg->lb.icmp_echo);
	ck_assert_uint_eq(s->n_backends, 2);
	ck_assert_str_eq(ip4(&s->backends[1].addr), "10.1.0.2");
	ck_assert_uint_eq(s->backends[1].weight, 2);
	ck_assert_int_eq(s->backends[1].state, PA_LB_UP);

	ck_assert(!cfg->metrics.present);
	ck_assert(cfg->metrics.enabled);
	ck_assert_str_eq(cfg->metrics.listen, "127.0.0.1:9469");
	pa_config_free(cfg);
}
END_TEST

START_TEST(test_empty_document_gives_defaults)
{
	struct pa_config *cfg = must_load("{}", NULL);

	ck_assert_uint_eq(cfg->n_ports, 0);
	ck_assert(!cfg->ports_present);
	ck_assert_int_eq(cfg->pipeline.mode, PA_PIPELINE_RTC);
	ck_assert(!cfg->pipeline.lcores_set);
	ck_assert_uint_eq(cfg->pipeline.ring_size, 1024);
	ck_assert_uint_eq(cfg->pipeline.burst, 32);
	ck_assert_uint_eq(cfg->pipeline.tx_drain_us, 100);
	ck_assert(cfg->pipeline.latency);
	ck_assert_int_eq(cfg->pipeline.idle.mode, PA_IDLE_BUSY);
	ck_assert_uint_eq(cfg->pipeline.idle.spin_polls, 1000);
	ck_assert_uint_eq(cfg->pipeline.idle.max_sleep_us, 100);
	ck_assert(!cfg->acl.present);
	ck_assert_int_eq(cfg->acl.def, PA_ACL_PERMIT);
	ck_assert_uint_eq(cfg->acl.n_rules, 0);
	ck_assert(!cfg->lb.present);
	ck_assert_uint_eq(cfg->lb.n_services, 0);
	assert_flow_table(cfg, 1048576, 300, 10, 30);
	ck_assert(!cfg->metrics.present);
	ck_assert(cfg->metrics.enabled);
	ck_assert_str_eq(cfg->metrics.listen, "127.0.0.1:9469");
	assert_rpc(cfg, false, 64, 32u * 1024 * 1024, 64, 30);
	pa_config_free(cfg);
}
END_TEST

START_TEST(test_rpc_section_each_key_sets_only_its_field)
{
	struct pa_config *cfg;

	cfg = must_load(J({"rpc": {}}), NULL);
	assert_rpc(cfg, true, 64, 32u * 1024 * 1024, 64, 30);
	pa_config_free(cfg);
	cfg = must_load(J({"rpc": {"max_connections": 3}}), NULL);
	assert_rpc(cfg, true, 3, 32u * 1024 * 1024, 64, 30);
	pa_config_free(cfg);
	cfg = must_load(J({"rpc": {"max_request_bytes": 65536}}), NULL);
	assert_rpc(cfg, true, 64, 65536, 64, 30);
	pa_config_free(cfg);
	cfg = must_load(J({"rpc": {"max_depth": 10}}), NULL);
	assert_rpc(cfg, true, 64, 32u * 1024 * 1024, 10, 30);
	pa_config_free(cfg);
	cfg = load_replay(J({"rpc": {"idle_timeout": 1}}));
	ck_assert_msg(cfg != NULL, "%s", err);
	assert_rpc(cfg, true, 64, 32u * 1024 * 1024, 64, 1);
	pa_config_free(cfg);
	/* range bounds */
	cfg = must_load(J({"rpc": {"max_connections": 1, "max_request_bytes": 1024,
			"max_depth": 4, "idle_timeout": 1}}), NULL);
	assert_rpc(cfg, true, 1, 1024, 4, 1);
	pa_config_free(cfg);
	cfg = must_load(J({"rpc": {"max_connections": 65536,
			"max_request_bytes": 1073741824, "max_depth": 4096,
			"idle_timeout": 86400}}), NULL);
	assert_rpc(cfg, true, 65536, 1073741824, 4096, 86400);
	pa_config_free(cfg);
}
END_TEST

START_TEST(test_replay_mode_without_ports_has_one_replay0_port)
{
	struct pa_config *cfg = load_replay("{}");

	ck_assert_msg(cfg != NULL, "%s", err);
	ck_assert_uint_eq(cfg->n_ports, 1);
	ck_assert(!cfg->ports_present);
	ck_assert_str_eq(cfg->ports[0].name, "replay0");
	ck_assert_ptr_null(cfg->ports[0].devargs);
	ck_assert_ptr_null(cfg->ports[0].pci);
	ck_assert_int_eq(cfg->ports[0].peer, 0);
	ck_assert(cfg->ports[0].promisc);
	ck_assert(!cfg->metrics.enabled);
	pa_config_free(cfg);
}
END_TEST

START_TEST(test_replay_mode_ignores_a_valid_ports_section)
{
	struct pa_config *cfg = load_replay(contract_example);
	json_t *j;

	ck_assert_msg(cfg != NULL, "%s", err);
	ck_assert_uint_eq(cfg->n_ports, 1);
	ck_assert(!cfg->ports_present);
	ck_assert_str_eq(cfg->ports[0].name, "replay0");
	ck_assert_ptr_null(cfg->ports[0].devargs);
	ck_assert_ptr_null(cfg->ports[0].profile_doc);
	j = pa_config_to_json(cfg);
	ck_assert_ptr_null(json_object_get(j, "ports"));
	json_decref(j);
	pa_config_free(cfg);
}
END_TEST

START_TEST(test_replay_mode_still_validates_the_ports_section)
{
	ck_assert_ptr_null(load_replay(J({"ports": [{"name": "a", "devargs": "net_null0", "mtu": 20}]})));
	assert_err_begins("$.ports[0].mtu: 20 out of range 68..16000");
}
END_TEST

START_TEST(test_replay_port_name_comes_from_options)
{
	struct pa_config_opts o = { .replay = true, .replay_port = "lab1" };
	struct pa_config *cfg = must_load(J({"acl": {"rules": [
			{"id": 1, "in_port": "lab1", "action": "drop"}]}}), &o);

	ck_assert_str_eq(cfg->ports[0].name, "lab1");
	ck_assert_int_eq(cfg->acl.rules[0].in_port, 0);
	assert_round_trip(cfg, &o);
	pa_config_free(cfg);
}
END_TEST

START_TEST(test_replay_in_port_resolves_against_effective_ports_only)
{
	ck_assert_ptr_null(load_replay(J({
		"ports": [{"name": "wan0", "devargs": "net_null0"}],
		"acl": {"rules": [{"id": 1, "in_port": "wan0", "action": "drop"}]}})));
	assert_err_begins("$.acl.rules[0].in_port: unknown port 'wan0'");
}
END_TEST

START_TEST(test_port_addr_keeps_host_bits_as_given)
{
	struct pa_config *cfg = must_load(J({"ports": [{"name": "p", "devargs": "net_null0",
			"addr": ["198.51.100.5/24", "2001:db8::5/64"]}]}), NULL);
	char buf[64];

	ck_assert_uint_eq(cfg->ports[0].n_addrs, 2);
	ck_assert_str_eq(pa_net_format_prefix(&cfg->ports[0].addrs[0], buf,
			sizeof(buf)), "198.51.100.5/24");
	ck_assert_str_eq(pa_net_format_prefix(&cfg->ports[0].addrs[1], buf,
			sizeof(buf)), "2001:db8::5/64");
	pa_config_free(cfg);
}
END_TEST

START_TEST(test_port_peer_resolves_to_index_and_defaults_to_self)
{
	struct pa_config *cfg = must_load(J({"ports": [
			{"name": "a", "devargs": "net_null0", "peer": "c"},
			{"name": "b", "devargs": "net_null1"},
			{"name": "c", "pci": "0000:00:03.0", "peer": "a"}]}), NULL);

	ck_assert_int_eq(cfg->ports[0].peer, 2);
	ck_assert_int_eq(cfg->ports[1].peer, 1);
	ck_assert_int_eq(cfg->ports[2].peer, 0);
	ck_assert_int_eq(pa_config_port_index(cfg, "b"), 1);
	ck_assert_int_eq(pa_config_port_index(cfg, "z"), -1);
	pa_config_free(cfg);
}
END_TEST

START_TEST(test_metrics_null_disables_and_empty_object_uses_default_listen)
{
	struct pa_config *cfg = must_load(J({"metrics": null}), NULL);

	ck_assert(cfg->metrics.present);
	ck_assert(!cfg->metrics.enabled);
	assert_round_trip(cfg, NULL);
	pa_config_free(cfg);

	cfg = must_load(J({"metrics": {}}), NULL);
	ck_assert(cfg->metrics.present);
	ck_assert(cfg->metrics.enabled);
	ck_assert_str_eq(cfg->metrics.listen, "127.0.0.1:9469");
	pa_config_free(cfg);

	cfg = load_replay(J({"metrics": {"listen": "0.0.0.0:9000"}}));
	ck_assert_msg(cfg != NULL, "%s", err);
	ck_assert(cfg->metrics.enabled);
	ck_assert_str_eq(cfg->metrics.listen, "0.0.0.0:9000");
	pa_config_free(cfg);
}
END_TEST

START_TEST(test_rule_ports_accept_integers_and_strings)
{
	struct pa_config *cfg = must_load(J({"acl": {"rules": [
			{"id": 1, "sport": 53, "dport": "53", "action": "drop"},
			{"id": 2, "sport": "0-0", "dport": 65535, "action": "drop"}]}}), NULL);

	ck_assert_uint_eq(cfg->acl.rules[0].sport.lo, 53);
	ck_assert_uint_eq(cfg->acl.rules[0].sport.hi, 53);
	ck_assert_uint_eq(cfg->acl.rules[0].dport.lo, 53);
	ck_assert_uint_eq(cfg->acl.rules[1].sport.hi, 0);
	ck_assert_uint_eq(cfg->acl.rules[1].dport.lo, 65535);
	pa_config_free(cfg);
}
END_TEST

START_TEST(test_rule_proto_accepts_names_numbers_and_digit_strings)
{
	struct pa_config *cfg = must_load(J({"acl": {"rules": [
			{"id": 1, "proto": "icmp", "action": "drop"},
			{"id": 2, "proto": "icmpv6", "action": "drop"},
			{"id": 3, "proto": 47, "action": "drop"},
			{"id": 4, "proto": "132", "action": "drop"},
			{"id": 5, "proto": "any", "action": "drop"},
			{"id": 6, "proto": 0, "action": "drop"}]}}), NULL);

	ck_assert_int_eq(cfg->acl.rules[0].proto, 1);
	ck_assert_int_eq(cfg->acl.rules[1].proto, 58);
	ck_assert_int_eq(cfg->acl.rules[2].proto, 47);
	ck_assert_int_eq(cfg->acl.rules[3].proto, 132);
	ck_assert_int_eq(cfg->acl.rules[4].proto, PA_PROTO_ANY);
	ck_assert_int_eq(cfg->acl.rules[5].proto, 0);
	pa_config_free(cfg);
}
END_TEST

START_TEST(test_bare_address_in_rule_is_a_host_prefix)
{
	struct pa_config *cfg = must_load(J({"acl": {"rules": [
			{"id": 1, "src": "10.1.2.3", "dst": "any", "action": "drop"},
			{"id": 2, "src": "2001:db8::1", "action": "drop"}]}}), NULL);

	ck_assert_uint_eq(cfg->acl.rules[0].src.len, 32);
	ck_assert_uint_eq(cfg->acl.rules[1].src.len, 128);
	pa_config_free(cfg);
}
END_TEST

/* CONTRACT section 4: one lcore may be named for several stages. */
START_TEST(test_pipeline_lcore_in_several_stages)
{
	static const char *const ok[] = {
		J({"pipeline": {"mode": "pipeline", "lcores": {"rx": [1], "tx": [1], "classify": [2], "lb": [2]}}}),
		J({"pipeline": {"mode": "pipeline", "lcores": {"rx": [1], "classify": [1], "lb": [2], "tx": [2]}}}),
		J({"pipeline": {"mode": "pipeline", "lcores": {"rx": [1], "classify": [1], "lb": [1], "tx": [1]}}}),
		J({"pipeline": {"mode": "pipeline", "lcores": {"rx": [1, 2], "classify": [3], "lb": [3], "tx": [1, 2]}}}),
		/* several lb lcores, fed by hash */
		J({"pipeline": {"mode": "pipeline", "lcores": {"rx": [1, 2], "classify": [1, 2], "lb": [3, 4], "tx": [3, 4]}}}),
		J({"pipeline": {"mode": "pipeline", "lcores": {"rx": [1], "classify": [2, 3], "lb": [2, 3], "tx": [1]}}}),
	};
	struct pa_config *cfg;
	json_t *j;
	unsigned int i;

	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		cfg = must_load(ok[i], NULL);
		ck_assert(cfg->pipeline.lcores_set);
		pa_config_free(cfg);
	}
	cfg = must_load(ok[0], NULL);
	ck_assert_uint_eq(cfg->pipeline.lcores[PA_CONFIG_STAGE_RX][0], 1);
	ck_assert_uint_eq(cfg->pipeline.lcores[PA_CONFIG_STAGE_TX][0], 1);
	ck_assert_uint_eq(cfg->pipeline.lcores[PA_CONFIG_STAGE_CLASSIFY][0], 2);
	ck_assert_uint_eq(cfg->pipeline.lcores[PA_CONFIG_STAGE_LB][0], 2);
	/* and written back as given */
	j = pa_config_to_json(cfg);
	ck_assert_ptr_nonnull(j);
	ck_assert_int_eq(json_integer_value(json_array_get(json_object_get(
		json_object_get(json_object_get(j, "pipeline"), "lcores"),
		"tx"), 0)), 1);
	json_decref(j);
	pa_config_free(cfg);
}
END_TEST

START_TEST(test_rtc_mode_takes_worker_lcores)
{
	struct pa_config *cfg = must_load(J({"pipeline": {"mode": "rtc",
			"lcores": {"worker": [1, 2, 127]}}}), NULL);

	ck_assert_int_eq(cfg->pipeline.mode, PA_PIPELINE_RTC);
	ck_assert(cfg->pipeline.lcores_set);
	ck_assert_uint_eq(cfg->pipeline.n_lcores[PA_CONFIG_STAGE_WORKER], 3);
	ck_assert_uint_eq(cfg->pipeline.lcores[PA_CONFIG_STAGE_WORKER][2], 127);
	ck_assert_uint_eq(cfg->pipeline.n_lcores[PA_CONFIG_STAGE_RX], 0);
	pa_config_free(cfg);
}
END_TEST

START_TEST(test_pipeline_idle_each_key_sets_only_its_field)
{
	struct pa_config *cfg;

	cfg = must_load(J({"pipeline": {"idle": {"mode": "adaptive"}}}), NULL);
	ck_assert_int_eq(cfg->pipeline.idle.mode, PA_IDLE_ADAPTIVE);
	ck_assert_uint_eq(cfg->pipeline.idle.spin_polls, 1000);
	ck_assert_uint_eq(cfg->pipeline.idle.max_sleep_us, 100);
	ck_assert(cfg->pipeline.latency);
	assert_round_trip(cfg, NULL);
	pa_config_free(cfg);

	cfg = must_load(J({"pipeline": {"idle": {"max_sleep_us": 1}}}), NULL);
	ck_assert_int_eq(cfg->pipeline.idle.mode, PA_IDLE_BUSY);
	ck_assert_uint_eq(cfg->pipeline.idle.spin_polls, 1000);
	ck_assert_uint_eq(cfg->pipeline.idle.max_sleep_us, 1);
	assert_round_trip(cfg, NULL);
	pa_config_free(cfg);

	cfg = must_load(J({"pipeline": {"latency": false,
			"idle": {"spin_polls": 100000000}}}), NULL);
	ck_assert(!cfg->pipeline.latency);
	ck_assert_int_eq(cfg->pipeline.idle.mode, PA_IDLE_BUSY);
	ck_assert_uint_eq(cfg->pipeline.idle.spin_polls, 100000000);
	ck_assert_uint_eq(cfg->pipeline.idle.max_sleep_us, 100);
	assert_round_trip(cfg, NULL);
	pa_config_free(cfg);
}
END_TEST

START_TEST(test_pipeline_mode_without_lcores_is_automatic)
{
	struct pa_config *cfg = must_load(J({"pipeline": {"mode": "pipeline"}}), NULL);

	ck_assert_int_eq(cfg->pipeline.mode, PA_PIPELINE_STAGED);
	ck_assert(!cfg->pipeline.lcores_set);
	pa_config_free(cfg);
}
END_TEST

START_TEST(test_lb_defaults_for_service_and_backend)
{
	struct pa_config *cfg = must_load(J({"lb": {"local_addr": "192.0.2.1",
			"services": [{"name": "s", "vip": "192.0.2.10", "port": 80,
			"proto": "udp", "backends": [{"addr": "10.0.0.1"}]}]}}), NULL);
	const struct pa_config_service *s = &cfg->lb.services[0];

	ck_assert_int_eq(s->scheduler, PA_LB_MAGLEV);
	ck_assert_int_eq(s->forward, PA_LB_IPIP);
	ck_assert_uint_eq(s->table_size, 65537);
	ck_assert_uint_eq(s->proto, IPPROTO_UDP);
	ck_assert_uint_eq(s->backends[0].port, 0);
	ck_assert_uint_eq(s->backends[0].weight, 1);
	ck_assert(!s->backends[0].has_mac);
	ck_assert_int_eq(s->backends[0].state, PA_LB_UP);
	pa_config_free(cfg);
}
END_TEST

START_TEST(test_local_addr_may_be_a_ports_own_address)
{
	/* one address, shared: with a kernel_if and without */
	struct pa_config *cfg = must_load(J({"ports": [
			{"name": "p", "devargs": "net_null0",
			 "addr": ["198.51.100.5/24", "2001:db8:1::5/64"],
			 "kernel_if": "pa0"},
			{"name": "q", "devargs": "net_null1",
			 "addr": ["203.0.113.5/24"]}],
			"lb": {"local_addr": "198.51.100.5",
			"local_addr6": "2001:db8:1::5", "services": [
			{"name": "s", "vip": "192.0.2.10", "port": 80,
			 "proto": "tcp", "backends": [{"addr": "10.0.0.1"}]}]}}),
			NULL);

	ck_assert(cfg->lb.has_local_addr && cfg->lb.has_local_addr6);
	ck_assert(pa_ip_equal(&cfg->lb.local_addr, &cfg->ports[0].addrs[0].addr));
	pa_config_free(cfg);
	cfg = must_load(J({"ports": [{"name": "q", "devargs": "net_null1",
			"addr": ["203.0.113.5/24"]}],
			"lb": {"local_addr": "203.0.113.5"}}), NULL);
	pa_config_free(cfg);
}
END_TEST

START_TEST(test_fnat_absent_has_defaults_and_no_pool)
{
	struct pa_config *cfg = must_load("{}", NULL);

	ck_assert(!cfg->lb.fnat.present);
	ck_assert_uint_eq(cfg->lb.fnat.n_addrs, 0);
	ck_assert_uint_eq(cfg->lb.fnat.port_lo, PA_CONFIG_FNAT_DEF_PORT_LO);
	ck_assert_uint_eq(cfg->lb.fnat.port_hi, PA_CONFIG_FNAT_DEF_PORT_HI);
	ck_assert_uint_eq(cfg->lb.fnat.time_wait_s,
			PA_CONFIG_FNAT_DEF_TIME_WAIT_S);
	pa_config_free(cfg);
	cfg = must_load(J({"lb": {"fnat": {"addrs": ["198.51.100.50"]}}}),
			NULL);
	ck_assert(cfg->lb.fnat.present);
	ck_assert_uint_eq(cfg->lb.fnat.n_addrs, 1);
	ck_assert_uint_eq(cfg->lb.fnat.port_lo, 1024);
	ck_assert_uint_eq(cfg->lb.fnat.port_hi, 65535);
	ck_assert_uint_eq(cfg->lb.fnat.time_wait_s, 60);
	pa_config_free(cfg);
}
END_TEST

START_TEST(test_fnat_ports_take_one_port_or_a_range_within_1_65535)
{
	struct pa_config *cfg = must_load(J({"lb": {"fnat": {
			"addrs": ["198.51.100.50"], "ports": "1-65535",
			"time_wait_s": 3600}}}), NULL);

	ck_assert_uint_eq(cfg->lb.fnat.port_lo, 1);
	ck_assert_uint_eq(cfg->lb.fnat.port_hi, 65535);
	ck_assert_uint_eq(cfg->lb.fnat.time_wait_s, 3600);
	pa_config_free(cfg);
	cfg = must_load(J({"lb": {"fnat": {"addrs": ["198.51.100.50"],
			"ports": "65535"}}}), NULL);
	ck_assert_uint_eq(cfg->lb.fnat.port_lo, 65535);
	ck_assert_uint_eq(cfg->lb.fnat.port_hi, 65535);
	pa_config_free(cfg);
}
END_TEST

START_TEST(test_fnat_max_addrs_accepted_and_one_more_refused)
{
	size_t len = 64 * 1024, off;
	struct pa_config *cfg;
	unsigned int i, n;
	char *doc;

	for (n = PA_CONFIG_FNAT_MAX_ADDRS; n <= PA_CONFIG_FNAT_MAX_ADDRS + 1;
	     n++) {
		doc = malloc(len);
		ck_assert_ptr_nonnull(doc);
		off = snprintf(doc, len, "{\"lb\": {\"fnat\": {\"addrs\": [");
		for (i = 0; i < n; i++)
			off += snprintf(doc + off, len - off, "%s\"%s%u\"",
					i ? ", " : "", i % 2 ? "2001:db8::" :
					"198.51.100.", i + 1);
		snprintf(doc + off, len - off, "]}}}");
		cfg = load(doc);
		free(doc);
		if (n == PA_CONFIG_FNAT_MAX_ADDRS) {
			ck_assert_msg(cfg != NULL, "%s", err);
			ck_assert_uint_eq(cfg->lb.fnat.n_addrs, n);
			assert_round_trip(cfg, NULL);
			pa_config_free(cfg);
		} else {
			ck_assert_ptr_null(cfg);
			assert_err_begins("$.lb.fnat.addrs: 1 to 64 addresses (got 65)");
		}
	}
}
END_TEST

/* One address, shared: a pool address may be a port's own address and
 * lb.local_addr at once (the data path keeps only its part there); its
 * ports below any host's ephemeral range (an address shared with a
 * kernel_if keeps out of it: lb_pool_kernel_check()). */
START_TEST(test_fnat_addr_may_be_a_ports_own_address_or_local_addr)
{
	struct pa_config *cfg = must_load(J({"ports": [
			{"name": "p", "devargs": "net_null0",
			 "addr": ["198.51.100.5/24", "2001:db8:1::5/64"],
			 "kernel_if": "pa0"}],
			"lb": {"local_addr": "198.51.100.5",
			"fnat": {"addrs": ["198.51.100.5", "2001:db8:1::5",
				"198.51.100.50"], "ports": "1024-2047"},
			"services": [
			{"name": "s", "vip": "192.0.2.10", "port": 80,
			 "proto": "tcp", "forward": "fnat",
			 "backends": [{"addr": "10.0.0.1", "port": 8080},
				{"addr": "2001:db8:2::1"}]}]}}), NULL);

	ck_assert(pa_ip_equal(&cfg->lb.fnat.addrs[0], &cfg->lb.local_addr));
	ck_assert(pa_ip_equal(&cfg->lb.fnat.addrs[1],
			&cfg->ports[0].addrs[1].addr));
	ck_assert_uint_eq(cfg->lb.services[0].backends[0].port, 8080);
	ck_assert_int_eq(cfg->lb.services[0].backends[1].addr.family,
			AF_INET6);
	pa_config_free(cfg);
}
END_TEST

START_TEST(test_to_json_writes_fnat_and_proxy_protocol_only_when_set)
{
	struct pa_config *cfg = must_load(J({"lb": {"local_addr": "192.0.2.1",
			"services": [{"name": "s", "vip": "192.0.2.10",
			"port": 80, "proto": "tcp"}]}}), NULL);
	json_t *j, *lb, *svc, *want;

	j = pa_config_to_json(cfg);
	lb = json_object_get(j, "lb");
	svc = json_array_get(json_object_get(lb, "services"), 0);
	ck_assert_ptr_null(json_object_get(lb, "fnat"));
	ck_assert_ptr_null(json_object_get(svc, "proxy_protocol"));
	json_decref(j);
	pa_config_free(cfg);

	cfg = must_load(J({"lb": {"fnat": {"addrs": ["198.51.100.50"]},
			"services": [{"name": "s", "vip": "192.0.2.10",
			"port": 80, "proto": "tcp", "forward": "fnat",
			"proxy_protocol": "v2"}]}}), NULL);
	j = pa_config_to_json(cfg);
	lb = json_object_get(j, "lb");
	svc = json_array_get(json_object_get(lb, "services"), 0);
	/* the defaults written explicitly */
	want = json_pack("{s:[s], s:s, s:i}", "addrs", "198.51.100.50",
			"ports", "1024-65535", "time_wait_s", 60);
	ck_assert(json_equal(json_object_get(lb, "fnat"), want));
	json_decref(want);
	ck_assert_str_eq(json_string_value(json_object_get(svc,
			"proxy_protocol")), "v2");
	ck_assert_str_eq(json_string_value(json_object_get(svc, "forward")),
			"fnat");
	json_decref(j);
	assert_round_trip(cfg, NULL);
	pa_config_free(cfg);
}
END_TEST

START_TEST(test_nat_and_dsr_services_need_no_local_addr)
{
	struct pa_config *cfg = must_load(J({"lb": {"services": [
			{"name": "n", "vip": "192.0.2.10", "port": 80, "proto": "tcp",
			 "forward": "nat", "backends": [{"addr": "10.0.0.1", "port": 8080}]},
			{"name": "d", "vip": "2001:db8::10", "port": 80, "proto": "tcp",
			 "forward": "dsr", "backends": [{"addr": "2001:db8::11",
			 "mac": "02:00:00:00:00:11", "port": 80}]}]}}), NULL);

	ck_assert_uint_eq(cfg->lb.services[0].backends[0].port, 8080);
	ck_assert(cfg->lb.services[1].backends[0].has_mac);
	ck_assert_uint_eq(cfg->lb.services[1].backends[0].mac[5], 0x11);
	pa_config_free(cfg);
}
END_TEST

START_TEST(test_same_vip_and_port_with_other_proto_is_another_service)
{
	struct pa_config *cfg = must_load(J({"lb": {"local_addr": "192.0.2.1", "services": [
			{"name": "a", "vip": "192.0.2.10", "port": 53, "proto": "udp"},
			{"name": "b", "vip": "192.0.2.10", "port": 53, "proto": "tcp"}]}}), NULL);

	ck_assert_uint_eq(cfg->lb.n_services, 2);
	ck_assert_uint_eq(cfg->lb.services[0].n_backends, 0);
	pa_config_free(cfg);
}
END_TEST

START_TEST(test_lb_flow_table_defaults_without_flow_table_key)
{
	struct pa_config *cfg;

	cfg = must_load(J({"lb": {}}), NULL);
	ck_assert(cfg->lb.present);
	assert_flow_table(cfg, 1048576, 300, 10, 30);
	pa_config_free(cfg);
	cfg = must_load(J({"lb": {"flow_table": {}}}), NULL);
	assert_flow_table(cfg, 1048576, 300, 10, 30);
	pa_config_free(cfg);
	cfg = must_load(J({"acl": {}}), NULL);
	ck_assert(!cfg->lb.present);
	assert_flow_table(cfg, 1048576, 300, 10, 30);
	pa_config_free(cfg);
	cfg = must_load(contract_example, NULL);
	assert_flow_table(cfg, 1048576, 300, 10, 30);
	pa_config_free(cfg);
}
END_TEST

START_TEST(test_lb_flow_table_each_key_sets_only_its_field)
{
	struct pa_config *cfg;

	cfg = must_load(J({"lb": {"flow_table": {"size": 2048}}}), NULL);
	assert_flow_table(cfg, 2048, 300, 10, 30);
	pa_config_free(cfg);
	cfg = must_load(J({"lb": {"flow_table": {"tcp_timeout": 600}}}), NULL);
	assert_flow_table(cfg, 1048576, 600, 10, 30);
	pa_config_free(cfg);
	cfg = must_load(J({"lb": {"flow_table": {"tcp_fin_timeout": 5}}}), NULL);
	assert_flow_table(cfg, 1048576, 300, 5, 30);
	pa_config_free(cfg);
	cfg = must_load(J({"lb": {"flow_table": {"udp_timeout": 120}}}), NULL);
	assert_flow_table(cfg, 1048576, 300, 10, 120);
	pa_config_free(cfg);
	cfg = must_load(J({"lb": {"flow_table": {"size": 4096, "tcp_timeout": 7,
			"tcp_fin_timeout": 3, "udp_timeout": 9}}}), NULL);
	assert_flow_table(cfg, 4096, 7, 3, 9);
	pa_config_free(cfg);
}
END_TEST

START_TEST(test_lb_flow_table_accepts_range_bounds)
{
	struct pa_config *cfg;

	cfg = must_load(J({"lb": {"flow_table": {"size": 1024, "tcp_timeout": 1,
			"tcp_fin_timeout": 1, "udp_timeout": 1}}}), NULL);
	assert_flow_table(cfg, 1024, 1, 1, 1);
	pa_config_free(cfg);
	cfg = must_load(J({"lb": {"flow_table": {"size": 67108864,
			"tcp_timeout": 86400, "tcp_fin_timeout": 86400,
			"udp_timeout": 86400}}}), NULL);
	assert_flow_table(cfg, 67108864, 86400, 86400, 86400);
	pa_config_free(cfg);
}
END_TEST

START_TEST(test_max_ports_accepted_and_one_more_refused)
{
	char *doc;
	size_t len = 64 * 1024, off;
	int i, n;
	struct pa_config *cfg;

	for (n = PA_CONFIG_MAX_PORTS; n <= PA_CONFIG_MAX_PORTS + 1; n++) {
		doc = malloc(len);
		ck_assert_ptr_nonnull(doc);
		off = snprintf(doc, len, "{\"ports\": [");
		for (i = 0; i < n; i++)
			off += snprintf(doc + off, len - off,
					"%s{\"name\": \"p%d\", \"devargs\": \"net_null%d\"}",
					i ? "," : "", i, i);
		snprintf(doc + off, len - off, "]}");
		cfg = load(doc);
		free(doc);
		if (n == PA_CONFIG_MAX_PORTS) {
			ck_assert_msg(cfg != NULL, "%s", err);
			ck_assert_uint_eq(cfg->n_ports, PA_CONFIG_MAX_PORTS);
			pa_config_free(cfg);
		} else {
			ck_assert_ptr_null(cfg);
			assert_err_begins("$.ports: 33 ports, at most 32");
		}
	}
}
END_TEST

static const char *const shipped_profiles[] = {
	"mlx5", "ice", "i40e", "ixgbe", "virtio", "af_packet", "pcap", "null",
};

START_TEST(test_every_shipped_profile_loads)
{
	const char *name = shipped_profiles[_i];
	struct pa_config_opts o = { .profile_dir = PA_SOURCE_DRIVERS_CONFIG_DIR };
	struct pa_config *cfg;
	const char *drv;
	char doc[256];

	snprintf(doc, sizeof(doc),
			"{\"ports\": [{\"name\": \"p\", \"pci\": \"00:01.0\", \"profile\": \"%s\", \"addr\": [\"192.0.2.5/24\"]}]}",
			name);
	cfg = must_load(doc, &o);
	ck_assert_ptr_nonnull(cfg->ports[0].profile_doc);
	drv = json_string_value(json_object_get(cfg->ports[0].profile_doc,
			"driver"));
	ck_assert_ptr_nonnull(drv);
	/* the name ethdev reports: net_<pmd>, or mlx5_pci for mlx5 */
	ck_assert_msg(strncmp(drv, "net_", 4) == 0 || strcmp(drv, "mlx5_pci") == 0,
			"%s: driver %s", name, drv);
	pa_config_free(cfg);
}
END_TEST

/* Every file in drivers-config/, not only the list above: a profile added
 * or edited there fails here first if the loader refuses it. */
START_TEST(test_every_file_in_drivers_config_loads)
{
	struct pa_config_opts o = { .profile_dir = PA_SOURCE_DRIVERS_CONFIG_DIR };
	struct pa_config *cfg;
	struct dirent *de;
	char doc[512], name[128];
	unsigned int n = 0, found = 0;
	size_t len, i;
	DIR *dir;

	dir = opendir(PA_SOURCE_DRIVERS_CONFIG_DIR);
	ck_assert_ptr_nonnull(dir);
	while ((de = readdir(dir)) != NULL) {
		len = strlen(de->d_name);
		if (len <= 5 || strcmp(de->d_name + len - 5, ".json") != 0)
			continue;
		ck_assert_uint_lt(len - 5, sizeof(name));
		memcpy(name, de->d_name, len - 5);
		name[len - 5] = '\0';
		snprintf(doc, sizeof(doc),
				"{\"ports\": [{\"name\": \"p\", \"pci\": \"00:01.0\", \"profile\": \"%s\", \"addr\": [\"192.0.2.5/24\"]}]}",
				name);
		cfg = pa_config_load_string(doc, &o, err, sizeof(err));
		ck_assert_msg(cfg != NULL, "drivers-config/%s: %s", de->d_name, err);
		pa_config_free(cfg);
		for (i = 0; i < sizeof(shipped_profiles) / sizeof(shipped_profiles[0]); i++)
			if (strcmp(name, shipped_profiles[i]) == 0)
				found++;
		n++;
	}
	closedir(dir);
	/* the seven PMDs of the issue and null are all there */
	ck_assert_uint_eq(found, sizeof(shipped_profiles) / sizeof(shipped_profiles[0]));
	ck_assert_uint_ge(n, found);
}
END_TEST

START_TEST(test_profile_is_kept_as_loaded_json)
{
	struct pa_config *cfg = must_load(J({"ports": [{"name": "p", "devargs": "net_pcap0,iface=lo",
			"profile": "pcap", "addr": ["192.0.2.5/24"]}]}), NULL);
	json_error_t jerr;
	json_t *file;

	file = json_load_file(PA_SOURCE_DRIVERS_CONFIG_DIR "/pcap.json", 0, &jerr);
	ck_assert_ptr_nonnull(file);
	ck_assert(json_equal(file, cfg->ports[0].profile_doc));
	json_decref(file);
	pa_config_free(cfg);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Round trip                                                          */
/* ------------------------------------------------------------------ */

START_TEST(test_round_trip_of_contract_example)
{
	struct pa_config *cfg = must_load(contract_example, NULL);

	assert_round_trip(cfg, NULL);
	pa_config_free(cfg);
}
END_TEST

START_TEST(test_round_trip_of_every_field)
{
	struct pa_config *cfg = must_load(full_doc, NULL);

	/* spot checks that the document means what it says */
	ck_assert_int_eq(cfg->ports[0].peer, 1);
	ck_assert(!cfg->ports[0].promisc);
	ck_assert_uint_eq(cfg->ports[0].gateway_mac[5], 1);
	ck_assert(!cfg->ports[1].has_gateway[0]);
	ck_assert_int_eq(cfg->ports[1].gateway[1].family, AF_INET6);
	ck_assert_uint_eq(cfg->acl.rules[1].id, 2147483648u);
	ck_assert_uint_eq(cfg->acl.rules[1].rate_pps, 1000);
	ck_assert_int_eq(cfg->acl.rules[1].in_port, 1);
	ck_assert_uint_eq(cfg->acl.rules[0].dscp, 46);
	ck_assert(cfg->acl.non_ip_drop);
	ck_assert_str_eq(cfg->lb.services[1].name, "dns.v6");
	ck_assert_uint_eq(cfg->lb.services[1].port, 53);
	ck_assert_uint_eq(cfg->lb.services[3].backends[0].mac[0], 0xaa);
	ck_assert_uint_eq(cfg->lb.flow_table.size, 67108864);
	ck_assert(!cfg->lb.icmp_echo);
	ck_assert_uint_eq(cfg->lb.services[2].mss_clamp, 1360);
	ck_assert_uint_eq(cfg->lb.services[0].mss_clamp, 0);
	ck_assert_uint_eq(cfg->lb.fnat.port_lo, 2000);
	ck_assert_uint_eq(cfg->lb.fnat.port_hi, 2000);
	ck_assert_uint_eq(cfg->lb.fnat.time_wait_s, 0);
	ck_assert_int_eq(cfg->lb.services[4].proxy_protocol, PA_LB_PROXY_V1);
	ck_assert(!cfg->pipeline.latency);
	ck_assert_int_eq(cfg->pipeline.idle.mode, PA_IDLE_ADAPTIVE);
	ck_assert_uint_eq(cfg->pipeline.idle.spin_polls, 0);
	ck_assert_uint_eq(cfg->pipeline.idle.max_sleep_us, 10000);
	ck_assert_uint_eq(cfg->lb.flow_table.tcp_timeout, 86400);
	ck_assert_uint_eq(cfg->lb.flow_table.tcp_fin_timeout, 1);
	ck_assert_uint_eq(cfg->lb.flow_table.udp_timeout, 45);
	ck_assert_str_eq(cfg->metrics.listen, "[::1]:9100");
	ck_assert(cfg->rpc.present);
	ck_assert_uint_eq(cfg->rpc.max_connections, 8);
	ck_assert_uint_eq(cfg->rpc.max_request_bytes, 1048576);
	ck_assert_uint_eq(cfg->rpc.max_depth, 16);
	ck_assert_uint_eq(cfg->rpc.idle_timeout, 5);
	ck_assert(cfg->rpc.has_group);
	ck_assert_str_eq(cfg->rpc.group, "daemon");
	ck_assert_uint_eq(cfg->rpc.gid, 1);	/* Debian's daemon group */

	assert_round_trip(cfg, NULL);
	pa_config_free(cfg);
}
END_TEST

START_TEST(test_round_trip_of_empty_and_replay_documents)
{
	struct pa_config_opts o = { .replay = true };
	struct pa_config *cfg = must_load("{}", NULL);

	assert_round_trip(cfg, NULL);
	pa_config_free(cfg);
	cfg = must_load(contract_example, &o);
	assert_round_trip(cfg, &o);
	pa_config_free(cfg);
}
END_TEST

START_TEST(test_announce_and_stall_ms_load_and_round_trip)
{
	struct pa_config_opts replay = { .replay = true };
	struct pa_config *cfg = must_load(J({"ports": [{"name": "p",
			"devargs": "net_null0", "addr": ["198.51.100.5/24"]},
			{"name": "q", "devargs": "net_null1",
			"addr": ["203.0.113.5/24"], "kernel_if": "pa1"}],
			"pipeline": {"stall_ms": 250},
			"announce": {"table": 4294967295, "drain_s": 3600}}), NULL);
	struct pa_config *again;
	json_t *j, *j2;

	ck_assert(cfg->announce.present);
	ck_assert_uint_eq(cfg->announce.table, 4294967295u);
	ck_assert_uint_eq(cfg->announce.drain_s, 3600);
	ck_assert_uint_eq(cfg->pipeline.stall_ms, 250);
	j = pa_config_to_json(cfg);
	ck_assert_ptr_nonnull(j);
	ck_assert_int_eq(json_integer_value(json_object_get(
		json_object_get(j, "announce"), "drain_s")), 3600);
	again = pa_config_load_json(j, NULL, err, sizeof(err));
	ck_assert_msg(again != NULL, "%s", err);
	j2 = pa_config_to_json(again);
	ck_assert(json_equal(j, j2));
	json_decref(j);
	json_decref(j2);
	pa_config_free(again);
	pa_config_free(cfg);

	/* drain_s defaults to 0; no "announce": absent from the output */
	cfg = must_load(J({"ports": [{"name": "p", "devargs": "net_null0",
			"addr": ["198.51.100.5/24"], "kernel_if": "pa0"}],
			"announce": {"table": 1}}), NULL);
	ck_assert_uint_eq(cfg->announce.drain_s, 0);
	pa_config_free(cfg);
	cfg = must_load("{}", NULL);
	ck_assert(!cfg->announce.present);
	ck_assert_uint_eq(cfg->pipeline.stall_ms, 1000);
	j = pa_config_to_json(cfg);
	ck_assert_ptr_null(json_object_get(j, "announce"));
	json_decref(j);
	pa_config_free(cfg);
	/* replay: the ports are replaced, announce is kept (and unused) */
	cfg = must_load(J({"announce": {"table": 100}}), &replay);
	ck_assert(cfg->announce.present);
	pa_config_free(cfg);
}
END_TEST

START_TEST(test_protect_loads_defaults_and_refuses_bad_values)
{
	struct pa_config *cfg = must_load(J({"protect": {"syn_timeout_s": 5,
			"syn_defer": true,
			"src_new_flows": {"rate": 100, "prefix6": 48},
			"blocklist": "/etc/pktaccel/block.txt"}}), NULL);
	struct pa_config *again;
	json_t *j, *j2;

	ck_assert(cfg->protect.present);
	ck_assert_uint_eq(cfg->protect.syn_timeout_s, 5);
	ck_assert(cfg->protect.syn_defer);
	ck_assert(cfg->protect.src_new_flows.enabled);
	ck_assert_uint_eq(cfg->protect.src_new_flows.rate, 100);
	ck_assert_uint_eq(cfg->protect.src_new_flows.burst, 100); /* = rate */
	ck_assert_uint_eq(cfg->protect.src_new_flows.prefix4, 32);
	ck_assert_uint_eq(cfg->protect.src_new_flows.prefix6, 48);
	ck_assert_str_eq(cfg->protect.blocklist, "/etc/pktaccel/block.txt");
	j = pa_config_to_json(cfg);
	again = pa_config_load_json(j, NULL, err, sizeof(err));
	ck_assert_msg(again != NULL, "%s", err);
	j2 = pa_config_to_json(again);
	ck_assert(json_equal(j, j2));
	json_decref(j);
	json_decref(j2);
	pa_config_free(again);
	pa_config_free(cfg);

	/* absent: nothing set, nothing written */
	cfg = must_load("{}", NULL);
	ck_assert(!cfg->protect.present);
	ck_assert_uint_eq(cfg->protect.syn_timeout_s, 0);
	ck_assert(!cfg->protect.src_new_flows.enabled);
	ck_assert_ptr_null(cfg->protect.blocklist);
	j = pa_config_to_json(cfg);
	ck_assert_ptr_null(json_object_get(j, "protect"));
	json_decref(j);
	pa_config_free(cfg);

	ck_assert_ptr_null(pa_config_load_string(J({"protect": {"syn_timeout_s": 0}}),
		NULL, err, sizeof(err)));
	assert_err_begins("$.protect.syn_timeout_s:");
	/* must stay below the flow table's tcp_timeout */
	ck_assert_ptr_null(pa_config_load_string(J({"lb": {"flow_table":
		{"tcp_timeout": 20}}, "protect": {"syn_timeout_s": 20}}),
		NULL, err, sizeof(err)));
	assert_err_begins("$.protect.syn_timeout_s: 20 is not below");
	ck_assert_ptr_null(pa_config_load_string(J({"protect": {"src_new_flows":
		{"burst": 5}}}), NULL, err, sizeof(err)));
	assert_err_begins("$.protect.src_new_flows.rate:");
	ck_assert_ptr_null(pa_config_load_string(J({"protect": {"src_new_flows":
		{"rate": 10, "prefix4": 33}}}), NULL, err, sizeof(err)));
	assert_err_begins("$.protect.src_new_flows.prefix4:");
	ck_assert_ptr_null(pa_config_load_string(J({"protect": {"src_new_flows":
		{"rate": 0}}}), NULL, err, sizeof(err)));
	assert_err_begins("$.protect.src_new_flows.rate:");
	ck_assert_ptr_null(pa_config_load_string(J({"protect": {"blocklist": ""}}),
		NULL, err, sizeof(err)));
	assert_err_begins("$.protect.blocklist: empty");
	ck_assert_ptr_null(pa_config_load_string(J({"protect": {"blocklist": 3}}),
		NULL, err, sizeof(err)));
	assert_err_begins("$.protect.blocklist: expected");
	ck_assert_ptr_null(pa_config_load_string(J({"protect": {"syn": 3}}),
		NULL, err, sizeof(err)));
	assert_err_begins("$.protect.syn:");
	ck_assert_ptr_null(pa_config_load_string(J({"protect": {"syn_defer": 1}}),
		NULL, err, sizeof(err)));
	assert_err_begins("$.protect.syn_defer:");
}
END_TEST

START_TEST(test_to_json_writes_defaults_explicitly)
{
	struct pa_config *cfg = must_load(J({"acl": {"rules": [{"id": 7, "action": "permit"}]},
			"lb": {"local_addr": "192.0.2.1", "services": [{"name": "s",
			"vip": "192.0.2.2", "port": 80, "proto": "tcp",
			"backends": [{"addr": "10.0.0.1"}]}]}}), NULL);
	json_t *j = pa_config_to_json(cfg);
	json_t *expect;
	json_error_t jerr;

	expect = json_loads(J({
		"pipeline": {"mode": "rtc", "ring_size": 1024, "burst": 32, "tx_drain_us": 100,
			"latency": true, "idle": {"mode": "busy", "spin_polls": 1000,
			"max_sleep_us": 100}, "stall_ms": 1000},
		"acl": {"default": "permit", "non_ip": "forward", "rules": [
			{"id": 7, "priority": 0, "src": "any", "dst": "any", "sport": "any",
			 "dport": "any", "proto": "any", "action": "permit"}]},
		"lb": {"local_addr": "192.0.2.1",
			"flow_table": {"size": 1048576, "tcp_timeout": 300,
				"tcp_fin_timeout": 10, "udp_timeout": 30},
			"icmp_echo": true, "table_history_s": 60,
			"services": [{"name": "s", "vip": "192.0.2.2",
			"port": 80, "proto": "tcp", "scheduler": "maglev", "forward": "ipip",
			"table_size": 65537, "backends": [{"addr": "10.0.0.1", "port": 0,
			"weight": 1, "state": "up"}]}]}}), 0, &jerr);
	ck_assert_ptr_nonnull(expect);
	ck_assert_msg(json_equal(j, expect), "got %s",
			json_dumps(j, JSON_COMPACT));
	json_decref(expect);
	json_decref(j);
	pa_config_free(cfg);
}
END_TEST

START_TEST(test_round_trip_keeps_flow_table_and_writes_it_explicitly)
{
	struct pa_config *cfg;
	json_t *j, *ft;

	cfg = must_load(J({"lb": {"flow_table": {"size": 65536,
			"udp_timeout": 5}}}), NULL);
	j = pa_config_to_json(cfg);
	ft = json_object_get(json_object_get(j, "lb"), "flow_table");
	ck_assert_ptr_nonnull(ft);
	ck_assert_uint_eq(json_object_size(ft), 4);
	ck_assert_int_eq(json_integer_value(json_object_get(ft, "size")), 65536);
	ck_assert_int_eq(json_integer_value(json_object_get(ft, "tcp_timeout")),
			300);
	ck_assert_int_eq(json_integer_value(json_object_get(ft,
			"tcp_fin_timeout")), 10);
	ck_assert_int_eq(json_integer_value(json_object_get(ft, "udp_timeout")),
			5);
	json_decref(j);
	assert_round_trip(cfg, NULL);
	pa_config_free(cfg);

	/* an lb section without flow_table gets the defaults written out */
	cfg = must_load(J({"lb": {}}), NULL);
	j = pa_config_to_json(cfg);
	ft = json_object_get(json_object_get(j, "lb"), "flow_table");
	ck_assert_ptr_nonnull(ft);
	ck_assert_int_eq(json_integer_value(json_object_get(ft, "size")),
			1048576);
	json_decref(j);
	assert_round_trip(cfg, NULL);
	pa_config_free(cfg);
}
END_TEST

START_TEST(test_to_json_writes_rpc_only_when_present_with_defaults_explicit)
{
	struct pa_config *cfg;
	json_t *j, *expect;

	cfg = must_load("{}", NULL);
	j = pa_config_to_json(cfg);
	ck_assert_ptr_null(json_object_get(j, "rpc"));
	json_decref(j);
	pa_config_free(cfg);

	cfg = must_load(J({"rpc": {"idle_timeout": 2}}), NULL);
	j = pa_config_to_json(cfg);
	expect = json_pack("{s:i, s:i, s:i, s:i}", "max_connections", 64,
			"max_request_bytes", 33554432, "max_depth", 64,
			"idle_timeout", 2);
	ck_assert_msg(json_equal(json_object_get(j, "rpc"), expect), "got %s",
			json_dumps(json_object_get(j, "rpc"), JSON_COMPACT));
	json_decref(expect);
	json_decref(j);
	assert_round_trip(cfg, NULL);
	pa_config_free(cfg);
}
END_TEST

START_TEST(test_port_role_decides_promisc_unless_given)
{
	struct pa_config *cfg = must_load(J({"ports": [
		{"name": "r", "devargs": "net_null0", "addr": ["198.51.100.5/24"], "peer": "r"},
		{"name": "rp", "devargs": "net_null1", "addr": ["2001:db8::5/64"], "promisc": true},
		{"name": "t", "devargs": "net_null2", "peer": "tf"},
		{"name": "tf", "devargs": "net_null3", "peer": "t", "promisc": false}]}), NULL);
	json_t *j, *ports;

	/* routed: off by default, an explicit value wins */
	ck_assert(!cfg->ports[0].promisc);
	ck_assert_int_eq(cfg->ports[0].peer, 0);	/* one-armed: fine */
	ck_assert(cfg->ports[1].promisc);
	/* transparent: on by default, an explicit value wins */
	ck_assert(cfg->ports[2].promisc);
	ck_assert(!cfg->ports[3].promisc);
	/* config_get writes the effective value */
	j = pa_config_to_json(cfg);
	ports = json_object_get(j, "ports");
	ck_assert(json_is_false(json_object_get(json_array_get(ports, 0), "promisc")));
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(ports, 0), "peer")), "r");
	ck_assert(json_is_true(json_object_get(json_array_get(ports, 1), "promisc")));
	ck_assert(json_is_true(json_object_get(json_array_get(ports, 2), "promisc")));
	ck_assert(json_is_false(json_object_get(json_array_get(ports, 3), "promisc")));
	json_decref(j);
	pa_config_free(cfg);
}
END_TEST

/* "rss_steer": auto by default (left out of to_json), off / toeplitz
 * kept, anything else refused naming the field */
START_TEST(test_port_rss_steer_values_default_and_errors)
{
	struct pa_config *cfg = must_load(J({"ports": [
		{"name": "a", "devargs": "net_null0", "peer": "b"},
		{"name": "b", "devargs": "net_null1", "peer": "a", "rss_steer": "off"},
		{"name": "c", "devargs": "net_null2", "addr": ["198.51.100.5/24"],
		 "rss_steer": "toeplitz"}]}), NULL);
	json_t *j, *ports;

	ck_assert_int_eq(cfg->ports[0].rss_steer, PA_CONFIG_RSS_STEER_AUTO);
	ck_assert_int_eq(cfg->ports[1].rss_steer, PA_CONFIG_RSS_STEER_OFF);
	ck_assert_int_eq(cfg->ports[2].rss_steer, PA_CONFIG_RSS_STEER_TOEPLITZ);
	j = pa_config_to_json(cfg);
	ports = json_object_get(j, "ports");
	ck_assert_ptr_null(json_object_get(json_array_get(ports, 0), "rss_steer"));
	ck_assert_str_eq(json_string_value(json_object_get(
		json_array_get(ports, 1), "rss_steer")), "off");
	ck_assert_str_eq(json_string_value(json_object_get(
		json_array_get(ports, 2), "rss_steer")), "toeplitz");
	json_decref(j);
	assert_round_trip(cfg, NULL);
	pa_config_free(cfg);
	ck_assert_ptr_null(load(J({"ports": [{"name": "a",
		"devargs": "net_null0", "addr": ["198.51.100.5/24"],
		"rss_steer": "crc"}]})));
	assert_err_begins("$.ports[0].rss_steer: ");
	ck_assert_ptr_null(load(J({"ports": [{"name": "a",
		"devargs": "net_null0", "addr": ["198.51.100.5/24"],
		"rss_steer": true}]})));
	assert_err_begins("$.ports[0].rss_steer: ");
}
END_TEST

START_TEST(test_replay_port_is_routed_with_lent_addresses)
{
	struct pa_config *cfg = load_replay(J({"ports": [
		{"name": "replay0", "devargs": "net_null0", "addr": ["198.51.100.5/24"]}]}));

	ck_assert_msg(cfg != NULL, "%s", err);
	ck_assert_uint_eq(cfg->ports[0].n_addrs, 1);
	ck_assert_int_eq(cfg->ports[0].peer, 0);
	ck_assert(!cfg->ports[0].promisc);
	pa_config_free(cfg);
	/* without addresses: transparent and its own peer (the exception) */
	cfg = load_replay("{}");
	ck_assert_msg(cfg != NULL, "%s", err);
	ck_assert_int_eq(cfg->ports[0].peer, 0);
	ck_assert(cfg->ports[0].promisc);
	pa_config_free(cfg);
}
END_TEST

/* Port roles: a transparent port on a wire is never its own peer, named
 * or by default; a two-port appliance pairs its ports by default; lab
 * devices (net_null, net_ring, net_pcap on files) and replay keep the
 * one-port default. */
START_TEST(test_transparent_default_peer_by_device)
{
	struct pa_config_opts ro = { .replay = true };
	struct pa_config *cfg;
	static const char *const lab[] = {
		J({"ports": [{"name": "p", "devargs": "net_null0"}]}),
		J({"ports": [{"name": "p", "devargs": "net_ring0"}]}),
		J({"ports": [{"name": "p", "devargs": "net_pcap0,rx_pcap=a.pcap,tx_pcap=b.pcap"}]}),
		J({"ports": [{"name": "p", "devargs": "net_pcap0,rx_iface=a,tx_iface=b"}]}),
	};
	static const char *const wire[] = {
		J({"ports": [{"name": "p", "pci": "00:01.0"}]}),
		J({"ports": [{"name": "p", "devargs": "net_af_packet0,iface=v0"}]}),
		J({"ports": [{"name": "p", "devargs": "net_tap0"}]}),
		J({"ports": [{"name": "p", "devargs": "net_pcap0,iface=v0"}]}),
		J({"ports": [{"name": "p", "devargs": "net_pcap0,rx_iface=v0,tx_iface=v0"}]}),
		/* three ports: no pairing by default */
		J({"ports": [{"name": "a", "pci": "00:01.0", "peer": "b"},
			{"name": "b", "pci": "00:02.0", "peer": "a"},
			{"name": "p", "pci": "00:03.0"}]}),
	};
	unsigned int i;

	for (i = 0; i < sizeof(lab) / sizeof(lab[0]); i++) {
		cfg = must_load(lab[i], NULL);
		ck_assert_int_eq(cfg->ports[0].peer, 0);
		pa_config_free(cfg);
	}
	for (i = 0; i < sizeof(wire) / sizeof(wire[0]); i++) {
		cfg = pa_config_load_string(wire[i], NULL, err, sizeof(err));
		ck_assert_msg(cfg == NULL, "accepted: %s", wire[i]);
		ck_assert_msg(strstr(err, "transparent port 'p' (no \"addr\") needs a \"peer\"") != NULL,
				"%s", err);
		ck_assert_msg(strncmp(err, i < 5 ? "$.ports[0]: " : "$.ports[2]: ", 12) == 0,
				"%s", err);
		/* a replay replaces the document's ports by its own */
		cfg = pa_config_load_string(wire[i], &ro, err, sizeof(err));
		ck_assert_msg(cfg != NULL, "%s", err);
		pa_config_free(cfg);
		/* routed ("addr"): one-armed, its own peer */
	}
	cfg = must_load(J({"ports": [{"name": "p", "pci": "00:01.0", "addr": ["192.0.2.5/24"]}]}), NULL);
	ck_assert_int_eq(cfg->ports[0].peer, 0);
	pa_config_free(cfg);
	/* two transparent ports on wires: a bump in the wire by default */
	cfg = must_load(J({"ports": [{"name": "a", "pci": "00:01.0"},
			{"name": "b", "devargs": "net_af_packet0,iface=v0"}]}), NULL);
	ck_assert_int_eq(cfg->ports[0].peer, 1);
	ck_assert_int_eq(cfg->ports[1].peer, 0);
	pa_config_free(cfg);
}
END_TEST

/* "gateway": a list of one IPv4 and one IPv6 next hop (a dual-stack
 * port), in either order; written back as a list, one alone as a string. */
START_TEST(test_gateway_per_family)
{
	struct pa_config *cfg = must_load(J({"ports": [{"name": "p", "devargs": "net_null0",
			"addr": ["198.51.100.5/24", "2001:db8:1::5/64"],
			"gateway": ["2001:db8:1::1", "198.51.100.1"]}]}), NULL);
	json_t *j, *gw;

	ck_assert_str_eq(ip4(pa_config_port_gateway(&cfg->ports[0], AF_INET)),
			"198.51.100.1");
	ck_assert_int_eq(pa_config_port_gateway(&cfg->ports[0], AF_INET6)->family,
			AF_INET6);
	j = pa_config_to_json(cfg);
	gw = json_object_get(json_array_get(json_object_get(j, "ports"), 0),
			"gateway");
	ck_assert(json_is_array(gw));
	ck_assert_str_eq(json_string_value(json_array_get(gw, 0)), "198.51.100.1");
	ck_assert_str_eq(json_string_value(json_array_get(gw, 1)), "2001:db8:1::1");
	json_decref(j);
	pa_config_free(cfg);

	cfg = must_load(J({"ports": [{"name": "p", "devargs": "net_null0",
			"addr": ["2001:db8:1::5/64"], "gateway": ["2001:db8:1::1"]}]}), NULL);
	ck_assert_ptr_null(pa_config_port_gateway(&cfg->ports[0], AF_INET));
	j = pa_config_to_json(cfg);
	gw = json_object_get(json_array_get(json_object_get(j, "ports"), 0),
			"gateway");
	ck_assert_str_eq(json_string_value(gw), "2001:db8:1::1");
	json_decref(j);
	pa_config_free(cfg);
}
END_TEST

START_TEST(test_to_json_writes_ports_with_promisc_peer_and_addr)
{
	struct pa_config *cfg = must_load(J({"ports": [{"name": "p", "devargs": "net_null0"}]}), NULL);
	json_t *j = pa_config_to_json(cfg);
	json_t *p = json_array_get(json_object_get(j, "ports"), 0);

	ck_assert_ptr_nonnull(p);
	ck_assert(json_is_true(json_object_get(p, "promisc")));
	/* a transparent port is its own peer by default only: written
	 * "peer": "p", it would be refused on reload */
	ck_assert_ptr_null(json_object_get(p, "peer"));
	ck_assert_uint_eq(json_array_size(json_object_get(p, "addr")), 0);
	ck_assert_ptr_null(json_object_get(p, "rx_queues"));
	json_decref(j);
	pa_config_free(cfg);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Errors: one row per class; the message starts with the JSON path.    */
/* ------------------------------------------------------------------ */

struct err_case {
	const char *name;
	const char *doc;
	const char *expect;	/* the message begins with this */
};

#define P0 "{\"name\": \"p0\", \"devargs\": \"net_null0\""
#define LB4 "\"local_addr\": \"192.0.2.1\", \"local_addr6\": \"2001:db8::1\""
#define SVC "\"name\": \"web\", \"vip\": \"192.0.2.10\", \"port\": 80, \"proto\": \"tcp\""

static const struct err_case err_cases[] = {
	/* document */
	{ "document must be an object", "[]", "$: expected an object, got an array" },
	{ "unknown top-level key", J({"portz": []}), "$.portz: unknown key" },
	/* rpc */
	{ "rpc must be an object", J({"rpc": null}), "$.rpc: expected an object, got null" },
	{ "rpc as an array", J({"rpc": []}), "$.rpc: expected an object, got an array" },
	{ "unknown rpc key", J({"rpc": {"max_conns": 3}}), "$.rpc.max_conns: unknown key" },
	{ "rpc group that does not exist", J({"rpc": {"group": "no-such-group-pa"}}), "$.rpc.group: no group 'no-such-group-pa'" },
	{ "rpc group id that does not exist", J({"rpc": {"group": "4000000000"}}), "$.rpc.group: no group with id 4000000000" },
	{ "rpc group empty", J({"rpc": {"group": ""}}), "$.rpc.group: expected a group name or number" },
	{ "rpc group not a string", J({"rpc": {"group": 1}}), "$.rpc.group: expected a group name or number" },
	{ "rpc max_connections zero", J({"rpc": {"max_connections": 0}}), "$.rpc.max_connections: 0 out of range 1..65536" },
	{ "rpc max_connections too many", J({"rpc": {"max_connections": 65537}}), "$.rpc.max_connections: 65537 out of range 1..65536" },
	{ "rpc max_connections as a string", J({"rpc": {"max_connections": "64"}}), "$.rpc.max_connections: expected an integer, got a string" },
	{ "rpc max_request_bytes too small", J({"rpc": {"max_request_bytes": 1023}}), "$.rpc.max_request_bytes: 1023 out of range 1024..1073741824" },
	{ "rpc max_request_bytes above 1 GiB", J({"rpc": {"max_request_bytes": 1073741825}}), "$.rpc.max_request_bytes: 1073741825 out of range 1024..1073741824" },
	{ "rpc max_request_bytes as a real", J({"rpc": {"max_request_bytes": 1e6}}), "$.rpc.max_request_bytes: expected an integer, got a real number" },
	{ "rpc max_depth below 4", J({"rpc": {"max_depth": 3}}), "$.rpc.max_depth: 3 out of range 4..4096" },
	{ "rpc max_depth above 4096", J({"rpc": {"max_depth": 4097}}), "$.rpc.max_depth: 4097 out of range 4..4096" },
	{ "rpc idle_timeout zero", J({"rpc": {"idle_timeout": 0}}), "$.rpc.idle_timeout: 0 out of range 1..86400" },
	{ "rpc idle_timeout negative", J({"rpc": {"idle_timeout": -5}}), "$.rpc.idle_timeout: -5 out of range 1..86400" },
	{ "rpc idle_timeout as a real", J({"rpc": {"idle_timeout": 1.5}}), "$.rpc.idle_timeout: expected an integer, got a real number" },
	{ "rpc idle_timeout as a boolean", J({"rpc": {"idle_timeout": true}}), "$.rpc.idle_timeout: expected an integer, got a boolean" },
	{ "syntax error names line and column", "{\n \"acl\": }", "<string>:2:" },
	{ "duplicate JSON keys are refused", J({"acl": {}, "acl": {}}), "<string>:1:" },
	/* ports */
	{ "ports must be an array", J({"ports": {}}), "$.ports: expected an array, got an object" },
	{ "unknown port key", "{\"ports\": [" P0 ", \"speed\": 10}]}", "$.ports[0].speed: unknown key" },
	{ "port name required", J({"ports": [{"devargs": "net_null0"}]}), "$.ports[0].name: required key missing" },
	{ "port name charset", J({"ports": [{"name": "p 0", "devargs": "net_null0"}]}), "$.ports[0].name: invalid name 'p 0'" },
	{ "port name length", J({"ports": [{"name": "abcdefghijabcdefghijabcdefghijab", "devargs": "x"}]}), "$.ports[0].name: invalid name" },
	{ "port name must be a string", J({"ports": [{"name": 1, "devargs": "x"}]}), "$.ports[0].name: expected a string, got an integer" },
	{ "duplicate port name", "{\"ports\": [" P0 "}, {\"name\": \"p0\", \"devargs\": \"net_null1\"}]}", "$.ports[1].name: duplicate port name 'p0' (also $.ports[0])" },
	{ "port needs devargs or pci", J({"ports": [{"name": "p"}]}), "$.ports[0]: needs exactly one of" },
	{ "port with devargs and pci", J({"ports": [{"name": "p", "devargs": "x", "pci": "00:01.0"}]}), "$.ports[0].pci: \"pci\" and \"devargs\" are mutually exclusive" },
	{ "empty devargs", J({"ports": [{"name": "p", "devargs": ""}]}), "$.ports[0].devargs: must not be empty" },
	{ "malformed pci address", J({"ports": [{"name": "p", "pci": "3b:00"}]}), "$.ports[0].pci: invalid PCI address '3b:00'" },
	{ "pci device number above 0x1f", J({"ports": [{"name": "p", "pci": "0000:3b:20.0"}]}), "$.ports[0].pci: invalid PCI address" },
	{ "same pci device twice", J({"ports": [{"name": "a", "pci": "0000:3b:00.0"}, {"name": "b", "pci": "3b:00.0"}]}), "$.ports[1].pci: PCI device '3b:00.0' already used by $.ports[0]" },
	{ "same vdev twice", J({"ports": [{"name": "a", "devargs": "net_null0"}, {"name": "b", "devargs": "net_null0,size=64"}]}), "$.ports[1].devargs: device 'net_null0' already used by $.ports[0]" },
	{ "rx_queues above 64", "{\"ports\": [" P0 ", \"rx_queues\": 65}]}", "$.ports[0].rx_queues: 65 out of range 1..64" },
	{ "tx_queues zero", "{\"ports\": [" P0 ", \"tx_queues\": 0}]}", "$.ports[0].tx_queues: 0 out of range 1..64" },
	{ "rx_desc not a power of two", "{\"ports\": [" P0 ", \"rx_desc\": 1000}]}", "$.ports[0].rx_desc: 1000 is not a power of two" },
	{ "tx_desc above 16384", "{\"ports\": [" P0 ", \"tx_desc\": 32768}]}", "$.ports[0].tx_desc: 32768 out of range 64..16384" },
	{ "mtu below 68", "{\"ports\": [" P0 ", \"mtu\": 67}]}", "$.ports[0].mtu: 67 out of range 68..16000" },
	{ "transparent port its own peer", "{\"ports\": [" P0 "}, {\"name\": \"p1\", \"devargs\": \"net_null1\", \"peer\": \"p1\"}]}", "$.ports[1].peer: transparent port 'p1' (no \"addr\") cannot be its own peer: name another port, or give it \"addr\" to make it a routed one-armed port" },
	{ "mbufs zero", "{\"ports\": [" P0 ", \"mbufs\": 0}]}", "$.ports[0].mbufs: 0 out of range 1..16777216" },
	{ "mtu given as string", "{\"ports\": [" P0 ", \"mtu\": \"1500\"}]}", "$.ports[0].mtu: expected an integer, got a string" },
	{ "mtu given as real", "{\"ports\": [" P0 ", \"mtu\": 1500.0}]}", "$.ports[0].mtu: expected an integer, got a real number" },
	{ "promisc not a boolean", "{\"ports\": [" P0 ", \"promisc\": 1}]}", "$.ports[0].promisc: expected a boolean, got an integer" },
	{ "peer names unknown port", "{\"ports\": [" P0 ", \"peer\": \"nope\"}]}", "$.ports[0].peer: unknown port 'nope'" },
	{ "gateway and gateway_mac together", "{\"ports\": [" P0 ", \"gateway\": \"10.0.0.1\", \"gateway_mac\": \"02:00:00:00:00:01\"}]}", "$.ports[0].gateway: \"gateway\" and \"gateway_mac\" are mutually exclusive" },
	{ "malformed gateway_mac", "{\"ports\": [" P0 ", \"gateway_mac\": \"02:00:00:00:00\"}]}", "$.ports[0].gateway_mac: invalid MAC address '02:00:00:00:00'" },
	{ "malformed gateway", "{\"ports\": [" P0 ", \"gateway\": \"10.0.0\"}]}", "$.ports[0].gateway: invalid IP address '10.0.0'" },
	{ "malformed gateway in a list", "{\"ports\": [" P0 ", \"gateway\": [\"10.0.0.1\", \"2001:db8::zz\"]}]}", "$.ports[0].gateway[1]: invalid IP address '2001:db8::zz'" },
	{ "two IPv4 gateways", "{\"ports\": [" P0 ", \"gateway\": [\"10.0.0.1\", \"10.0.0.2\"]}]}", "$.ports[0].gateway[1]: a second IPv4 next hop (one per family)" },
	{ "two IPv6 gateways", "{\"ports\": [" P0 ", \"gateway\": [\"2001:db8::1\", \"2001:db8::2\"]}]}", "$.ports[0].gateway[1]: a second IPv6 next hop (one per family)" },
	{ "empty gateway list", "{\"ports\": [" P0 ", \"gateway\": []}]}", "$.ports[0].gateway: 0 next hops: give one address, or a list of one IPv4 and one IPv6 next hop" },
	{ "three gateways", "{\"ports\": [" P0 ", \"gateway\": [\"10.0.0.1\", \"2001:db8::1\", \"10.0.0.2\"]}]}", "$.ports[0].gateway: 3 next hops" },
	{ "gateway list with a number", "{\"ports\": [" P0 ", \"gateway\": [\"10.0.0.1\", 6]}]}", "$.ports[0].gateway[1]: expected a string, got an integer" },
	{ "gateway an object", "{\"ports\": [" P0 ", \"gateway\": {}}]}", "$.ports[0].gateway: expected a string, got an object" },
	{ "addr must be an array", "{\"ports\": [" P0 ", \"addr\": \"10.0.0.1/24\"}]}", "$.ports[0].addr: expected an array, got a string" },
	{ "addr needs a length", "{\"ports\": [" P0 ", \"addr\": [\"10.0.0.1\"]}]}", "$.ports[0].addr[0]: invalid prefix '10.0.0.1': missing /LENGTH" },
	{ "addr length above 32", "{\"ports\": [" P0 ", \"addr\": [\"10.0.0.1/24\", \"10.0.0.1/33\"]}]}", "$.ports[0].addr[1]: invalid prefix '10.0.0.1/33': length 33 exceeds 32" },
	{ "addr duplicated", "{\"ports\": [" P0 ", \"addr\": [\"10.0.0.1/24\", \"10.0.0.1/16\"]}]}", "$.ports[0].addr[1]: duplicate address" },
	{ "profile not found", "{\"ports\": [" P0 ", \"profile\": \"nosuch\"}]}", "$.ports[0].profile: unknown profile 'nosuch'" },
	{ "profile name with a path", "{\"ports\": [" P0 ", \"profile\": \"../mlx5\"}]}", "$.ports[0].profile: invalid profile name '../mlx5'" },
	/* pipeline */
	{ "pipeline must be an object", J({"pipeline": []}), "$.pipeline: expected an object, got an array" },
	{ "unknown pipeline key", J({"pipeline": {"rings": 4}}), "$.pipeline.rings: unknown key" },
	{ "unknown pipeline mode", J({"pipeline": {"mode": "staged"}}), "$.pipeline.mode: invalid value 'staged'" },
	{ "pipeline mode needs all four stages", J({"pipeline": {"mode": "pipeline", "lcores": {"rx": [1], "classify": [2], "lb": [3]}}}), "$.pipeline.lcores.tx: required key missing" },
	{ "worker lcores in pipeline mode", J({"pipeline": {"mode": "pipeline", "lcores": {"worker": [1]}}}), "$.pipeline.lcores.worker: \"worker\" is for rtc mode" },
	{ "stage lcores in rtc mode", J({"pipeline": {"lcores": {"rx": [1]}}}), "$.pipeline.lcores.rx: stage lcores need \"mode\": \"pipeline\"" },
	{ "rtc mode needs worker", J({"pipeline": {"mode": "rtc", "lcores": {}}}), "$.pipeline.lcores.worker: required key missing" },
	{ "unknown stage", J({"pipeline": {"lcores": {"rx_": [1]}}}), "$.pipeline.lcores.rx_: unknown key" },
	{ "lcore repeated within a pipeline stage", J({"pipeline": {"mode": "pipeline", "lcores": {"rx": [1], "classify": [2], "lb": [2, 3, 2], "tx": [1]}}}), "$.pipeline.lcores.lb[2]: lcore 2 already used by $.pipeline.lcores.lb[0]" },
	{ "several lb lcores, one also rx and classify", J({"pipeline": {"mode": "pipeline", "lcores": {"rx": [1, 2], "classify": [1, 2], "lb": [3, 2], "tx": [1]}}}), "$.pipeline.lcores.lb[1]: lcore 2 also runs rx and classify: with several lb lcores each flow must reach its lb lcore by flow hash" },
	{ "lcore repeated within a stage", J({"pipeline": {"lcores": {"worker": [1, 2, 1]}}}), "$.pipeline.lcores.worker[2]: lcore 1 already used by $.pipeline.lcores.worker[0]" },
	{ "lcore id above 127", J({"pipeline": {"lcores": {"worker": [128]}}}), "$.pipeline.lcores.worker[0]: 128 out of range 0..127" },
	{ "lcore id negative", J({"pipeline": {"lcores": {"worker": [-1]}}}), "$.pipeline.lcores.worker[0]: -1 out of range 0..127" },
	{ "empty stage", J({"pipeline": {"lcores": {"worker": []}}}), "$.pipeline.lcores.worker: needs at least one lcore" },
	{ "ring_size not a power of two", J({"pipeline": {"ring_size": 1000}}), "$.pipeline.ring_size: 1000 is not a power of two" },
	{ "ring_size below 64", J({"pipeline": {"ring_size": 32}}), "$.pipeline.ring_size: 32 out of range 64..65536" },
	{ "burst zero", J({"pipeline": {"burst": 0}}), "$.pipeline.burst: 0 out of range 1..256" },
	{ "burst above 256", J({"pipeline": {"burst": 257}}), "$.pipeline.burst: 257 out of range 1..256" },
	{ "tx_drain_us above 100000", J({"pipeline": {"tx_drain_us": 100001}}), "$.pipeline.tx_drain_us: 100001 out of range 1..100000" },
	{ "latency not a boolean", J({"pipeline": {"latency": "on"}}), "$.pipeline.latency: expected a boolean, got a string" },
	{ "latency given as 1", J({"pipeline": {"latency": 1}}), "$.pipeline.latency: expected a boolean, got an integer" },
	{ "idle must be an object", J({"pipeline": {"idle": "adaptive"}}), "$.pipeline.idle: expected an object, got a string" },
	{ "unknown idle key", J({"pipeline": {"idle": {"max_sleep": 5}}}), "$.pipeline.idle.max_sleep: unknown key" },
	{ "unknown idle mode", J({"pipeline": {"idle": {"mode": "sleep"}}}), "$.pipeline.idle.mode: invalid value 'sleep' (expected one of \"busy\", \"adaptive\")" },
	{ "idle mode not a string", J({"pipeline": {"idle": {"mode": true}}}), "$.pipeline.idle.mode: expected a string, got a boolean" },
	{ "spin_polls negative", J({"pipeline": {"idle": {"spin_polls": -1}}}), "$.pipeline.idle.spin_polls: -1 out of range 0..100000000" },
	{ "spin_polls above the bound", J({"pipeline": {"idle": {"spin_polls": 100000001}}}), "$.pipeline.idle.spin_polls: 100000001 out of range 0..100000000" },
	{ "max_sleep_us zero", J({"pipeline": {"idle": {"max_sleep_us": 0}}}), "$.pipeline.idle.max_sleep_us: 0 out of range 1..10000" },
	{ "max_sleep_us above 10 ms", J({"pipeline": {"idle": {"max_sleep_us": 10001}}}), "$.pipeline.idle.max_sleep_us: 10001 out of range 1..10000" },
	{ "max_sleep_us as a real", J({"pipeline": {"idle": {"max_sleep_us": 50.5}}}), "$.pipeline.idle.max_sleep_us: expected an integer, got a real number" },
	{ "stall_ms below 100", J({"pipeline": {"stall_ms": 99}}), "$.pipeline.stall_ms: 99 out of range 100..600000" },
	{ "stall_ms above 10 minutes", J({"pipeline": {"stall_ms": 600001}}), "$.pipeline.stall_ms: 600001 out of range 100..600000" },
	{ "stall_ms not a number", J({"pipeline": {"stall_ms": "1s"}}), "$.pipeline.stall_ms: expected an integer, got a string" },
	/* announce */
	{ "announce must be an object", J({"announce": 100}), "$.announce: expected an object" },
	{ "announce needs a table", J({"announce": {"drain_s": 5}}), "$.announce.table: required key missing" },
	{ "announce table 0 (unspec)", J({"announce": {"table": 0}}), "$.announce.table: 0 out of range 1..4294967295" },
	{ "announce table 255 (local)", J({"announce": {"table": 255}}), "$.announce.table: 255 is a reserved table" },
	{ "announce table 254 (main)", J({"announce": {"table": 254}}), "$.announce.table: 254 is a reserved table" },
	{ "announce table 253 (default)", J({"announce": {"table": 253}}), "$.announce.table: 253 is a reserved table" },
	{ "announce table above 32 bits", J({"announce": {"table": 4294967296}}), "$.announce.table: 4294967296 out of range 1..4294967295" },
	{ "announce table negative", J({"announce": {"table": -5}}), "$.announce.table: -5 out of range 1..4294967295" },
	{ "announce drain_s negative", J({"announce": {"table": 100, "drain_s": -1}}), "$.announce.drain_s: -1 out of range 0..3600" },
	{ "announce drain_s above an hour", J({"announce": {"table": 100, "drain_s": 3601}}), "$.announce.drain_s: 3601 out of range 0..3600" },
	{ "announce unknown key", J({"announce": {"table": 100, "proto": 201}}), "$.announce.proto: unknown key" },
	{ "announce without a kernel_if", J({"ports": [{"name": "p", "devargs": "net_null0", "addr": ["198.51.100.5/24"]}], "announce": {"table": 100}}), "$.announce: needs a routed port with \"kernel_if\"" },
	{ "announce without ports", J({"announce": {"table": 100}}), "$.announce: needs a routed port with \"kernel_if\"" },
	/* acl */
	{ "acl must be an object", J({"acl": []}), "$.acl: expected an object" },
	{ "unknown acl key", J({"acl": {"rulez": []}}), "$.acl.rulez: unknown key" },
	{ "acl default neither permit nor drop", J({"acl": {"default": "mark"}}), "$.acl.default: invalid value 'mark'" },
	{ "acl non_ip neither forward nor drop", J({"acl": {"non_ip": "permit"}}), "$.acl.non_ip: invalid value 'permit'" },
	{ "rules must be an array", J({"acl": {"rules": {}}}), "$.acl.rules: expected an array" },
	{ "rule must be an object", J({"acl": {"rules": [7]}}), "$.acl.rules[0]: expected an object, got an integer" },
	{ "unknown rule key", J({"acl": {"rules": [{"id": 1, "prio": 5, "action": "drop"}]}}), "$.acl.rules[0].prio: unknown key" },
	{ "rule id required", J({"acl": {"rules": [{"action": "drop"}]}}), "$.acl.rules[0].id: required key missing" },
	{ "rule id zero", J({"acl": {"rules": [{"id": 0, "action": "drop"}]}}), "$.acl.rules[0].id: 0 out of range 1..2147483648" },
	{ "rule id above 2^31", J({"acl": {"rules": [{"id": 2147483649, "action": "drop"}]}}), "$.acl.rules[0].id: 2147483649 out of range 1..2147483648" },
	{ "rule id as string", J({"acl": {"rules": [{"id": "1", "action": "drop"}]}}), "$.acl.rules[0].id: expected an integer, got a string" },
	{ "duplicate rule id", J({"acl": {"rules": [{"id": 10, "action": "drop"}, {"id": 11, "action": "drop"}, {"id": 10, "action": "permit"}]}}), "$.acl.rules[2].id: duplicate id 10 (also $.acl.rules[0])" },
	{ "priority negative", J({"acl": {"rules": [{"id": 1, "priority": -1, "action": "drop"}]}}), "$.acl.rules[0].priority: -1 out of range 0..2147483647" },
	{ "priority above 2^31-1", J({"acl": {"rules": [{"id": 1, "priority": 2147483648, "action": "drop"}]}}), "$.acl.rules[0].priority: 2147483648 out of range 0..2147483647" },
	{ "prefix length above 32", J({"acl": {"rules": [{"id": 1, "src": "10.0.0.1/33", "action": "drop"}]}}), "$.acl.rules[0].src: invalid prefix '10.0.0.1/33': length 33 exceeds 32" },
	{ "prefix length above 128", J({"acl": {"rules": [{"id": 1, "dst": "2001:db8::/129", "action": "drop"}]}}), "$.acl.rules[0].dst: invalid prefix '2001:db8::/129': length 129 exceeds 128" },
	{ "prefix with host bits", J({"acl": {"rules": [{"id": 1, "src": "10.0.0.1/8", "action": "drop"}]}}), "$.acl.rules[0].src: invalid prefix '10.0.0.1/8': host bits set (did you mean '10.0.0.0/8'?)" },
	{ "prefix with bad address", J({"acl": {"rules": [{"id": 1, "src": "10.0.0/8", "action": "drop"}]}}), "$.acl.rules[0].src: invalid prefix '10.0.0/8': invalid IP address '10.0.0'" },
	{ "prefix length not a number", J({"acl": {"rules": [{"id": 1, "src": "10.0.0.0/x", "action": "drop"}]}}), "$.acl.rules[0].src: invalid prefix '10.0.0.0/x': length is not a number" },
	{ "prefix not a string", J({"acl": {"rules": [{"id": 1, "src": 10, "action": "drop"}]}}), "$.acl.rules[0].src: expected a string, got an integer" },
	{ "rule mixing IPv4 and IPv6", J({"acl": {"rules": [{"id": 1, "src": "10.0.0.0/8", "dst": "2001:db8::/32", "action": "drop"}]}}), "$.acl.rules[0].dst: IPv6 prefix '2001:db8::/32' but src is IPv4" },
	{ "reversed port range", J({"acl": {"rules": [{"id": 1, "dport": "90-80", "action": "drop"}]}}), "$.acl.rules[0].dport: invalid port range '90-80': 90 > 80" },
	{ "port above 65535 in string", J({"acl": {"rules": [{"id": 1, "sport": "65536", "action": "drop"}]}}), "$.acl.rules[0].sport: invalid port range '65536'" },
	{ "port above 65535 as integer", J({"acl": {"rules": [{"id": 1, "dport": 70000, "action": "drop"}]}}), "$.acl.rules[0].dport: 70000 out of range 0..65535" },
	{ "port range with garbage", J({"acl": {"rules": [{"id": 1, "dport": "53x", "action": "drop"}]}}), "$.acl.rules[0].dport: invalid port range '53x'" },
	{ "port range with sign", J({"acl": {"rules": [{"id": 1, "dport": "+53", "action": "drop"}]}}), "$.acl.rules[0].dport: invalid port range '+53'" },
	{ "port range as boolean", J({"acl": {"rules": [{"id": 1, "dport": true, "action": "drop"}]}}), "$.acl.rules[0].dport: expected a string" },
	{ "unknown protocol name", J({"acl": {"rules": [{"id": 1, "proto": "sctpx", "action": "drop"}]}}), "$.acl.rules[0].proto: unknown protocol 'sctpx'" },
	{ "protocol number above 255", J({"acl": {"rules": [{"id": 1, "proto": 256, "action": "drop"}]}}), "$.acl.rules[0].proto: protocol 256 out of range 0..255" },
	{ "action required", J({"acl": {"rules": [{"id": 1}]}}), "$.acl.rules[0].action: required key missing" },
	{ "unknown action", J({"acl": {"rules": [{"id": 1, "action": "reject"}]}}), "$.acl.rules[0].action: invalid value 'reject'" },
	{ "mark without dscp", J({"acl": {"rules": [{"id": 1, "action": "mark"}]}}), "$.acl.rules[0].dscp: required with \"action\": \"mark\"" },
	{ "dscp above 63", J({"acl": {"rules": [{"id": 1, "action": "mark", "dscp": 64}]}}), "$.acl.rules[0].dscp: 64 out of range 0..63" },
	{ "dscp on permit", J({"acl": {"rules": [{"id": 1, "action": "permit", "dscp": 10}]}}), "$.acl.rules[0].dscp: only valid with \"action\": \"mark\"" },
	{ "police without rate_pps", J({"acl": {"rules": [{"id": 1, "action": "police", "burst": 10}]}}), "$.acl.rules[0].rate_pps: required with \"action\": \"police\"" },
	{ "police without burst", J({"acl": {"rules": [{"id": 1, "action": "police", "rate_pps": 10}]}}), "$.acl.rules[0].burst: required with \"action\": \"police\"" },
	{ "police with zero rate", J({"acl": {"rules": [{"id": 1, "action": "police", "rate_pps": 0, "burst": 1}]}}), "$.acl.rules[0].rate_pps: 0 out of range 1.." },
	{ "rate_pps on drop", J({"acl": {"rules": [{"id": 1, "action": "drop", "rate_pps": 5}]}}), "$.acl.rules[0].rate_pps: only valid with \"action\": \"police\"" },
	{ "burst on mark", J({"acl": {"rules": [{"id": 1, "action": "mark", "dscp": 1, "burst": 5}]}}), "$.acl.rules[0].burst: only valid with \"action\": \"police\"" },
	{ "in_port names unknown port", J({"acl": {"rules": [{"id": 1, "action": "drop", "in_port": "eth9"}]}}), "$.acl.rules[0].in_port: unknown port 'eth9'" },
	/* lb */
	{ "lb must be an object", J({"lb": []}), "$.lb: expected an object" },
	{ "unknown lb key", J({"lb": {"vips": []}}), "$.lb.vips: unknown key" },
	{ "local_addr must be IPv4", J({"lb": {"local_addr": "2001:db8::1"}}), "$.lb.local_addr: expected an IPv4 address" },
	{ "local_addr6 must be IPv6", J({"lb": {"local_addr6": "192.0.2.1"}}), "$.lb.local_addr6: expected an IPv6 address" },
	{ "malformed local_addr", J({"lb": {"local_addr": "192.0.2.300"}}), "$.lb.local_addr: invalid IP address '192.0.2.300'" },
	{ "flow_table must be an object", J({"lb": {"flow_table": 1048576}}), "$.lb.flow_table: expected an object, got an integer" },
	{ "unknown flow_table key", J({"lb": {"flow_table": {"size": 1024, "icmp_timeout": 5}}}), "$.lb.flow_table.icmp_timeout: unknown key" },
	{ "flow_table size below 1024", J({"lb": {"flow_table": {"size": 12}}}), "$.lb.flow_table.size: 12 out of range 1024..67108864" },
	{ "flow_table size above 67108864", J({"lb": {"flow_table": {"size": 67108865}}}), "$.lb.flow_table.size: 67108865 out of range 1024..67108864" },
	{ "flow_table size as a string", J({"lb": {"flow_table": {"size": "1048576"}}}), "$.lb.flow_table.size: expected an integer, got a string" },
	{ "flow_table size as a real", J({"lb": {"flow_table": {"size": 1048576.0}}}), "$.lb.flow_table.size: expected an integer, got a real number" },
	{ "tcp_timeout zero", J({"lb": {"flow_table": {"tcp_timeout": 0}}}), "$.lb.flow_table.tcp_timeout: 0 out of range 1..86400" },
	{ "tcp_timeout negative", J({"lb": {"flow_table": {"tcp_timeout": -1}}}), "$.lb.flow_table.tcp_timeout: -1 out of range 1..86400" },
	{ "tcp_fin_timeout above a day", J({"lb": {"flow_table": {"tcp_fin_timeout": 86401}}}), "$.lb.flow_table.tcp_fin_timeout: 86401 out of range 1..86400" },
	{ "tcp_fin_timeout as a boolean", J({"lb": {"flow_table": {"tcp_fin_timeout": true}}}), "$.lb.flow_table.tcp_fin_timeout: expected an integer, got a boolean" },
	{ "udp_timeout zero", J({"lb": {"flow_table": {"udp_timeout": 0}}}), "$.lb.flow_table.udp_timeout: 0 out of range 1..86400" },
	{ "udp_timeout null", J({"lb": {"flow_table": {"udp_timeout": null}}}), "$.lb.flow_table.udp_timeout: expected an integer, got null" },
	{ "services must be an array", J({"lb": {"services": {}}}), "$.lb.services: expected an array" },
	{ "unknown service key", "{\"lb\": {" LB4 ", \"services\": [{" SVC ", \"weight\": 1}]}}", "$.lb.services[0].weight: unknown key" },
	{ "service name required", J({"lb": {"services": [{"vip": "192.0.2.10", "port": 80, "proto": "tcp"}]}}), "$.lb.services[0].name: required key missing" },
	{ "service name charset", J({"lb": {"services": [{"name": "web/1", "vip": "192.0.2.10", "port": 80, "proto": "tcp"}]}}), "$.lb.services[0].name: invalid name 'web/1'" },
	{ "duplicate service name", "{\"lb\": {" LB4 ", \"services\": [{" SVC "}, {\"name\": \"web\", \"vip\": \"192.0.2.11\", \"port\": 80, \"proto\": \"tcp\"}]}}", "$.lb.services[1].name: duplicate service name 'web' (also $.lb.services[0])" },
	{ "vip required", J({"lb": {"services": [{"name": "s", "port": 80, "proto": "tcp"}]}}), "$.lb.services[0].vip: required key missing" },
	{ "malformed vip", J({"lb": {"services": [{"name": "s", "vip": "192.0.2", "port": 80, "proto": "tcp"}]}}), "$.lb.services[0].vip: invalid IP address '192.0.2'" },
	{ "service port required", J({"lb": {"services": [{"name": "s", "vip": "192.0.2.1", "proto": "tcp"}]}}), "$.lb.services[0].port: required key missing" },
	{ "service port zero", J({"lb": {"services": [{"name": "s", "vip": "192.0.2.1", "port": 0, "proto": "tcp"}]}}), "$.lb.services[0].port: 0 out of range 1..65535" },
	{ "service port garbage string", J({"lb": {"services": [{"name": "s", "vip": "192.0.2.1", "port": "80a", "proto": "tcp"}]}}), "$.lb.services[0].port: invalid port number '80a'" },
	{ "service proto required", J({"lb": {"services": [{"name": "s", "vip": "192.0.2.1", "port": 80}]}}), "$.lb.services[0].proto: required key missing" },
	{ "service proto neither tcp nor udp", J({"lb": {"services": [{"name": "s", "vip": "192.0.2.1", "port": 80, "proto": "icmp"}]}}), "$.lb.services[0].proto: a service is \"tcp\" or \"udp\"" },
	{ "unknown scheduler", "{\"lb\": {" LB4 ", \"services\": [{" SVC ", \"scheduler\": \"random\"}]}}", "$.lb.services[0].scheduler: invalid value 'random'" },
	{ "unknown forward", "{\"lb\": {" LB4 ", \"services\": [{" SVC ", \"forward\": \"gre\"}]}}", "$.lb.services[0].forward: invalid value 'gre'" },
	{ "vip unspecified", J({"lb": {"services": [{"name": "s", "vip": "0.0.0.0", "port": 80, "proto": "tcp", "forward": "dsr"}]}}), "$.lb.services[0].vip: '0.0.0.0' is the unspecified address, not a VIP" },
	{ "vip multicast", J({"lb": {"services": [{"name": "s", "vip": "224.0.0.1", "port": 80, "proto": "tcp", "forward": "dsr"}]}}), "$.lb.services[0].vip: '224.0.0.1' is a multicast address, not a VIP" },
	{ "vip IPv6 multicast", J({"lb": {"services": [{"name": "s", "vip": "ff02::1", "port": 80, "proto": "tcp", "forward": "dsr"}]}}), "$.lb.services[0].vip: 'ff02::1' is a multicast address, not a VIP" },
	{ "backend broadcast", "{\"lb\": {" LB4 ", \"services\": [{" SVC ", \"backends\": [{\"addr\": \"255.255.255.255\"}]}]}}", "$.lb.services[0].backends[0].addr: '255.255.255.255' is the broadcast address, not a backend" },
	{ "backend loopback", "{\"lb\": {" LB4 ", \"services\": [{" SVC ", \"backends\": [{\"addr\": \"127.0.0.1\"}]}]}}", "$.lb.services[0].backends[0].addr: '127.0.0.1' is a loopback address, not a backend" },
	{ "backend is the vip", "{\"lb\": {" LB4 ", \"services\": [{" SVC ", \"backends\": [{\"addr\": \"192.0.2.10\"}]}]}}", "$.lb.services[0].backends[0].addr: '192.0.2.10' is the service's own VIP" },
	{ "table_size not prime", "{\"lb\": {" LB4 ", \"services\": [{" SVC ", \"table_size\": 65536}]}}", "$.lb.services[0].table_size: 65536 is not a prime" },
	{ "mss_clamp below 536", "{\"lb\": {" LB4 ", \"services\": [{" SVC ", \"mss_clamp\": 535}]}}", "$.lb.services[0].mss_clamp: 535 out of range 536..65495" },
	{ "mss_clamp above 65495", "{\"lb\": {" LB4 ", \"services\": [{" SVC ", \"mss_clamp\": 65496}]}}", "$.lb.services[0].mss_clamp: 65496 out of range 536..65495" },
	{ "mss_clamp not an integer", "{\"lb\": {" LB4 ", \"services\": [{" SVC ", \"mss_clamp\": \"1400\"}]}}", "$.lb.services[0].mss_clamp: expected an integer, got a string" },
	{ "icmp_echo not a boolean", J({"lb": {"icmp_echo": "yes"}}), "$.lb.icmp_echo: expected a boolean, got a string" },
	{ "table_size below 1021", "{\"lb\": {" LB4 ", \"services\": [{" SVC ", \"table_size\": 1019}]}}", "$.lb.services[0].table_size: 1019 out of range 1021..1048573" },
	{ "ipip IPv4 service needs local_addr", J({"lb": {"services": [{"name": "s", "vip": "192.0.2.1", "port": 80, "proto": "tcp"}]}}), "$.lb.services[0].forward: \"ipip\" (the default) for an IPv4 service needs $.lb.local_addr" },
	{ "ipip IPv6 service needs local_addr6", J({"lb": {"local_addr": "192.0.2.1", "services": [{"name": "s", "vip": "2001:db8::1", "port": 80, "proto": "tcp", "forward": "ipip"}]}}), "$.lb.services[0].forward: \"ipip\" for an IPv6 service needs $.lb.local_addr6" },
	{ "same vip port proto twice", "{\"lb\": {" LB4 ", \"services\": [{" SVC "}, {\"name\": \"web2\", \"vip\": \"192.0.2.10\", \"port\": 80, \"proto\": \"tcp\"}]}}", "$.lb.services[1].vip: 192.0.2.10 port 80 tcp is already service 'web' ($.lb.services[0])" },
	{ "vip cannot be local_addr", "{\"lb\": {" LB4 ", \"services\": [{\"name\": \"s\", \"vip\": \"192.0.2.1\", \"port\": 80, \"proto\": \"tcp\"}]}}", "$.lb.services[0].vip: '192.0.2.1' is also $.lb.local_addr: a VIP cannot be the load balancer's source address" },
	{ "vip cannot be local_addr6", "{\"lb\": {" LB4 ", \"services\": [{\"name\": \"s\", \"vip\": \"2001:db8::1\", \"port\": 80, \"proto\": \"tcp\", \"forward\": \"nat\"}]}}", "$.lb.services[0].vip: '2001:db8::1' is also $.lb.local_addr6" },
	{ "vip cannot be a port's own address", J({"ports": [{"name": "p", "devargs": "net_null0", "addr": ["198.51.100.9/24", "198.51.100.5/24"]}], "lb": {"services": [{"name": "s", "vip": "198.51.100.5", "port": 80, "proto": "tcp", "forward": "nat"}]}}), "$.lb.services[0].vip: '198.51.100.5' is also $.ports[0].addr[1] (port 'p'): a VIP cannot be a port's own address" },
	{ "backends must be an array", "{\"lb\": {" LB4 ", \"services\": [{" SVC ", \"backends\": {}}]}}", "$.lb.services[0].backends: expected an array" },
	{ "unknown backend key", "{\"lb\": {" LB4 ", \"services\": [{" SVC ", \"backends\": [{\"addr\": \"10.0.0.1\", \"prio\": 1}]}]}}", "$.lb.services[0].backends[0].prio: unknown key" },
	{ "backend addr required", "{\"lb\": {" LB4 ", \"services\": [{" SVC ", \"backends\": [{\"weight\": 1}]}]}}", "$.lb.services[0].backends[0].addr: required key missing" },
	{ "backend family differs from vip", "{\"lb\": {" LB4 ", \"services\": [{" SVC ", \"backends\": [{\"addr\": \"10.0.0.1\"}, {\"addr\": \"2001:db8::2\"}]}]}}", "$.lb.services[0].backends[1].addr: IPv6 backend '2001:db8::2' for an IPv4 service" },
	{ "duplicate backend", "{\"lb\": {" LB4 ", \"services\": [{" SVC ", \"backends\": [{\"addr\": \"10.1.0.1\"}, {\"addr\": \"10.1.0.2\"}, {\"addr\": \"10.1.0.1\", \"weight\": 3}]}]}}", "$.lb.services[0].backends[2].addr: duplicate backend '10.1.0.1' (also $.lb.services[0].backends[0])" },
	{ "backend weight above 65535", "{\"lb\": {" LB4 ", \"services\": [{" SVC ", \"backends\": [{\"addr\": \"10.0.0.1\", \"weight\": 65536}]}]}}", "$.lb.services[0].backends[0].weight: 65536 out of range 0..65535" },
	{ "backend port above 65535", "{\"lb\": {" LB4 ", \"services\": [{" SVC ", \"forward\": \"nat\", \"backends\": [{\"addr\": \"10.0.0.1\", \"port\": 65536}]}]}}", "$.lb.services[0].backends[0].port: 65536 out of range 0..65535" },
	{ "ipip backend cannot change the port", "{\"lb\": {" LB4 ", \"services\": [{" SVC ", \"backends\": [{\"addr\": \"10.0.0.1\", \"port\": 8080}]}]}}", "$.lb.services[0].backends[0].port: forward \"ipip\" cannot change the destination port" },
	{ "malformed backend mac", "{\"lb\": {" LB4 ", \"services\": [{" SVC ", \"backends\": [{\"addr\": \"10.0.0.1\", \"mac\": \"02-00-00-00-00-01\"}]}]}}", "$.lb.services[0].backends[0].mac: invalid MAC address '02-00-00-00-00-01'" },
	{ "unknown backend state", "{\"lb\": {" LB4 ", \"services\": [{" SVC ", \"backends\": [{\"addr\": \"10.0.0.1\", \"state\": \"off\"}]}]}}", "$.lb.services[0].backends[0].state: invalid value 'off'" },
	/* full NAT */
#define FN "\"fnat\": {\"addrs\": [\"198.51.100.50\"]}"
#define FNSVC "\"name\": \"f\", \"vip\": \"192.0.2.20\", \"port\": 443, \"proto\": \"tcp\", \"forward\": \"fnat\""
	{ "fnat must be an object", J({"lb": {"fnat": []}}), "$.lb.fnat: expected an object, got an array" },
	{ "fnat addrs required", J({"lb": {"fnat": {"ports": "1024-2047"}}}), "$.lb.fnat.addrs: required key missing" },
	{ "fnat addrs must be an array", J({"lb": {"fnat": {"addrs": "198.51.100.50"}}}), "$.lb.fnat.addrs: expected an array, got a string" },
	{ "fnat addrs empty", J({"lb": {"fnat": {"addrs": []}}}), "$.lb.fnat.addrs: 1 to 64 addresses (got 0)" },
	{ "fnat addr malformed", J({"lb": {"fnat": {"addrs": ["198.51.100.500"]}}}), "$.lb.fnat.addrs[0]: invalid IP address '198.51.100.500'" },
	{ "fnat addr multicast", J({"lb": {"fnat": {"addrs": ["198.51.100.50", "ff02::1"]}}}), "$.lb.fnat.addrs[1]: 'ff02::1' is a multicast address, not a source address" },
	{ "fnat addr unspecified", J({"lb": {"fnat": {"addrs": ["0.0.0.0"]}}}), "$.lb.fnat.addrs[0]: '0.0.0.0' is the unspecified address, not a source address" },
	{ "fnat addr duplicate", J({"lb": {"fnat": {"addrs": ["198.51.100.50", "2001:db8::50", "198.51.100.50"]}}}), "$.lb.fnat.addrs[2]: duplicate address '198.51.100.50' (also $.lb.fnat.addrs[0])" },
	{ "fnat ports reversed", "{\"lb\": {\"fnat\": {\"addrs\": [\"198.51.100.50\"], \"ports\": \"2000-1000\"}}}", "$.lb.fnat.ports: expected \"LO-HI\" or \"N\" with ports 1..65535 and LO <= HI, got '2000-1000'" },
	{ "fnat ports from 0", "{\"lb\": {\"fnat\": {\"addrs\": [\"198.51.100.50\"], \"ports\": \"0-1000\"}}}", "$.lb.fnat.ports: expected \"LO-HI\"" },
	{ "fnat ports above 65535", "{\"lb\": {\"fnat\": {\"addrs\": [\"198.51.100.50\"], \"ports\": \"1024-65536\"}}}", "$.lb.fnat.ports: expected \"LO-HI\"" },
	{ "fnat ports any", "{\"lb\": {\"fnat\": {\"addrs\": [\"198.51.100.50\"], \"ports\": \"any\"}}}", "$.lb.fnat.ports: expected \"LO-HI\"" },
	{ "fnat ports garbage", "{\"lb\": {\"fnat\": {\"addrs\": [\"198.51.100.50\"], \"ports\": \"1024:2047\"}}}", "$.lb.fnat.ports: expected \"LO-HI\"" },
	{ "fnat ports not a string", "{\"lb\": {\"fnat\": {\"addrs\": [\"198.51.100.50\"], \"ports\": 1024}}}", "$.lb.fnat.ports: expected a string, got an integer" },
	{ "fnat time_wait_s above an hour", "{\"lb\": {\"fnat\": {\"addrs\": [\"198.51.100.50\"], \"time_wait_s\": 3601}}}", "$.lb.fnat.time_wait_s: 3601 out of range 0..3600" },
	{ "fnat unknown key", "{\"lb\": {\"fnat\": {\"addrs\": [\"198.51.100.50\"], \"size\": 1}}}", "$.lb.fnat.size: unknown key" },
	{ "fnat service needs lb.fnat", "{\"lb\": {\"services\": [{" FNSVC "}]}}", "$.lb.services[0].forward: \"fnat\" needs $.lb.fnat" },
	{ "fnat backend needs a pool address of its family", "{\"lb\": {" FN ", \"services\": [{" FNSVC ", \"backends\": [{\"addr\": \"10.0.0.1\"}, {\"addr\": \"2001:db8::2\"}]}]}}", "$.lb.services[0].backends[1].addr: forward \"fnat\" needs an IPv6 address in lb.fnat.addrs" },
	{ "fnat IPv6 service on IPv4 backends needs an IPv4 pool address", J({"lb": {"fnat": {"addrs": ["2001:db8::50"]}, "services": [{"name": "s", "vip": "2001:db8::10", "port": 80, "proto": "tcp", "forward": "fnat", "backends": [{"addr": "10.0.0.1"}]}]}}), "$.lb.services[0].backends[0].addr: forward \"fnat\" needs an IPv4 address in lb.fnat.addrs" },
	{ "nat cannot mix families", "{\"lb\": {" FN ", \"services\": [{" SVC ", \"forward\": \"nat\", \"backends\": [{\"addr\": \"2001:db8::2\"}]}]}}", "$.lb.services[0].backends[0].addr: IPv6 backend '2001:db8::2' for an IPv4 service (only forward \"fnat\" mixes families)" },
	{ "dsr cannot mix families", "{\"lb\": {" FN ", \"services\": [{" SVC ", \"forward\": \"dsr\", \"backends\": [{\"addr\": \"2001:db8::2\", \"mac\": \"02:00:00:00:00:01\"}]}]}}", "$.lb.services[0].backends[0].addr: IPv6 backend '2001:db8::2' for an IPv4 service (only forward \"fnat\" mixes families)" },
	{ "vip cannot be a pool address", J({"lb": {"fnat": {"addrs": ["2001:db8::50", "198.51.100.50"]}, "services": [{"name": "s", "vip": "198.51.100.50", "port": 80, "proto": "tcp", "forward": "nat"}]}}), "$.lb.services[0].vip: '198.51.100.50' is also $.lb.fnat.addrs[1]: a VIP cannot be a full-NAT pool address" },
	{ "proxy_protocol on ipip", "{\"lb\": {" LB4 ", " FN ", \"services\": [{" SVC ", \"proxy_protocol\": \"v1\"}]}}", "$.lb.services[0].proxy_protocol: only on a \"tcp\" service with \"forward\": \"fnat\" (this one is tcp with \"ipip\")" },
	{ "proxy_protocol on nat", "{\"lb\": {" FN ", \"services\": [{" SVC ", \"forward\": \"nat\", \"proxy_protocol\": \"v2\"}]}}", "$.lb.services[0].proxy_protocol: only on a \"tcp\" service with \"forward\": \"fnat\" (this one is tcp with \"nat\")" },
	{ "proxy_protocol on udp fnat", J({"lb": {"fnat": {"addrs": ["198.51.100.50"]}, "services": [{"name": "s", "vip": "192.0.2.20", "port": 53, "proto": "udp", "forward": "fnat", "proxy_protocol": "v2"}]}}), "$.lb.services[0].proxy_protocol: only on a \"tcp\" service with \"forward\": \"fnat\" (this one is udp with \"fnat\")" },
	{ "proxy_protocol unknown", "{\"lb\": {" FN ", \"services\": [{" FNSVC ", \"proxy_protocol\": \"v3\"}]}}", "$.lb.services[0].proxy_protocol: invalid value 'v3' (expected one of \"v1\", \"v2\")" },
	{ "proxy_protocol none is no value", "{\"lb\": {" FN ", \"services\": [{" FNSVC ", \"proxy_protocol\": \"none\"}]}}", "$.lb.services[0].proxy_protocol: invalid value 'none'" },
	{ "proxy_protocol not a string", "{\"lb\": {" FN ", \"services\": [{" FNSVC ", \"proxy_protocol\": 2}]}}", "$.lb.services[0].proxy_protocol: expected a string, got an integer" },
	{ "dsr backend needs mac", "{\"lb\": {\"services\": [{" SVC ", \"forward\": \"dsr\", \"backends\": [{\"addr\": \"10.0.0.1\"}]}]}}", "$.lb.services[0].backends[0].mac: required with \"forward\": \"dsr\"" },
	/* metrics */
	{ "metrics neither object nor null", J({"metrics": "127.0.0.1:9469"}), "$.metrics: expected an object or null, got a string" },
	{ "unknown metrics key", J({"metrics": {"port": 9469}}), "$.metrics.port: unknown key" },
	{ "metrics listen without port", J({"metrics": {"listen": "127.0.0.1"}}), "$.metrics.listen: invalid listen address '127.0.0.1'" },
	{ "metrics listen port zero", J({"metrics": {"listen": "127.0.0.1:0"}}), "$.metrics.listen: invalid listen address '127.0.0.1:0': port must be 1..65535" },
	{ "metrics listen port above 65535", J({"metrics": {"listen": "127.0.0.1:65536"}}), "$.metrics.listen: invalid listen address '127.0.0.1:65536': port must be 1..65535" },
	{ "metrics IPv6 listen without brackets", J({"metrics": {"listen": "::1:9469"}}), "$.metrics.listen: invalid listen address '::1:9469'" },
	{ "metrics listen host name", J({"metrics": {"listen": "localhost:9469"}}), "$.metrics.listen: invalid listen address 'localhost:9469': invalid IP address 'localhost'" },
	{ "metrics listen not a string", J({"metrics": {"listen": 9469}}), "$.metrics.listen: expected a string, got an integer" },
};

#define N_ERR_CASES ((int)(sizeof(err_cases) / sizeof(err_cases[0])))

START_TEST(test_invalid_document_is_refused_with_json_path)
{
	const struct err_case *tc = &err_cases[_i];
	struct pa_config *cfg;

	cfg = load(tc->doc);
	ck_assert_msg(cfg == NULL, "[%s] accepted", tc->name);
	ck_assert_msg(strncmp(err, tc->expect, strlen(tc->expect)) == 0,
			"[%s] error \"%s\" does not begin with \"%s\"",
			tc->name, err, tc->expect);
}
END_TEST

START_TEST(test_error_path_indexes_the_offending_rule)
{
	ck_assert_ptr_null(load(J({"acl": {"rules": [
		{"id": 1, "action": "drop"}, {"id": 2, "action": "drop"},
		{"id": 3, "action": "drop"},
		{"id": 4, "src": "10.0.0.1/33", "action": "drop"}]}})));
	ck_assert_str_eq(err,
		"$.acl.rules[3].src: invalid prefix '10.0.0.1/33': length 33 exceeds 32");
}
END_TEST

START_TEST(test_unknown_keys_are_reported_before_other_errors)
{
	/* "mtu" is out of range too, but the unknown key is found first */
	ck_assert_ptr_null(load(J({"ports": [{"mtu": 1, "name": "p", "devargs": "x", "zz": 0}]})));
	assert_err_begins("$.ports[0].zz: unknown key");
}
END_TEST

START_TEST(test_error_buffer_is_truncated_and_may_be_null)
{
	char small[12];
	struct pa_config *cfg;

	cfg = pa_config_load_string(J({"acl": {"rules": [{"id": 0}]}}), NULL,
			small, sizeof(small));
	ck_assert_ptr_null(cfg);
	ck_assert_str_eq(small, "$.acl.rules");
	cfg = pa_config_load_string(J({"acl": 1}), NULL, NULL, 0);
	ck_assert_ptr_null(cfg);
}
END_TEST

START_TEST(test_load_json_refuses_null_document)
{
	ck_assert_ptr_null(pa_config_load_json(NULL, NULL, err, sizeof(err)));
	assert_err_begins("$: ");
}
END_TEST

START_TEST(test_invalid_replay_port_name_is_refused)
{
	struct pa_config_opts o = { .replay = true, .replay_port = "bad name" };

	ck_assert_ptr_null(pa_config_load_string("{}", &o, err, sizeof(err)));
	assert_err_begins("replay port: invalid name");
}
END_TEST

/* ------------------------------------------------------------------ */
/* Files and profiles                                                  */
/* ------------------------------------------------------------------ */

static char tmpdir[64];

static void
write_file(const char *dir, const char *name, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

struct profile_case {
	const char *name;	/* profile name = file name without .json */
	const char *text;
	const char *expect;	/* after "$.ports[0].profile (DIR/NAME.json): " */
};

static const struct profile_case profile_cases[] = {
	{ "unknown_key", J({"driver": "net_null", "speed": 10}), "$.speed: unknown key" },
	{ "no_driver", J({"rx_queues": 1}), "$.driver: required key missing" },
	{ "empty_driver", J({"driver": ""}), "$.driver: must not be empty" },
	{ "desc_not_pow2", J({"driver": "net_null", "rx_desc": 1000}), "$.rx_desc: 1000 is not a power of two" },
	{ "queues_range", J({"driver": "net_null", "tx_queues": 65}), "$.tx_queues: 65 out of range 1..64" },
	{ "rss_type", J({"driver": "net_null", "rss": "yes"}), "$.rss: expected a boolean" },
	{ "rx_offload", J({"driver": "net_null", "rx_offloads": ["ipv4_cksum", "tso"]}), "$.rx_offloads[1]: unknown offload 'tso'" },
	{ "tx_offload", J({"driver": "net_null", "tx_offloads": ["scatter"]}), "$.tx_offloads[0]: unknown offload 'scatter'" },
	{ "dup_offload", J({"driver": "net_null", "tx_offloads": ["tcp_cksum", "tcp_cksum"]}), "$.tx_offloads[1]: duplicate offload 'tcp_cksum'" },
	{ "offloads_type", J({"driver": "net_null", "rx_offloads": "scatter"}), "$.rx_offloads: expected an array" },
	{ "not_object", "[1]", "$: expected an object" },
	{ "syntax", "{\"driver\": \"net_null\",\n}", "line 2" },
};

#define N_PROFILE_CASES ((int)(sizeof(profile_cases) / sizeof(profile_cases[0])))

static void
files_setup(void)
{
	size_t i;

	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_config.XXXXXX");
	if (mkdtemp(tmpdir) == NULL)
		abort();
	for (i = 0; i < sizeof(profile_cases) / sizeof(profile_cases[0]); i++) {
		char name[64];

		snprintf(name, sizeof(name), "%s.json", profile_cases[i].name);
		write_file(tmpdir, name, profile_cases[i].text);
	}
	write_file(tmpdir, "good.json", J({"driver": "net_null", "devargs": "copy=1",
			"rx_queues": 2, "tx_queues": 2, "rx_desc": 64, "tx_desc": 16384,
			"rss": false, "rx_offloads": [], "tx_offloads": ["mbuf_fast_free"]}));
	write_file(tmpdir, "valid.conf", contract_example);
	write_file(tmpdir, "syntax.conf", "{\n  \"ports\": [\n    {\"name\": \"a\",}\n  ]\n}\n");
	write_file(tmpdir, "invalid.conf", J({"acl": {"default": "mark"}}));
}

static void
files_teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
}

START_TEST(test_invalid_profile_is_refused_with_profile_path)
{
	const struct profile_case *tc = &profile_cases[_i];
	struct pa_config_opts o = { .profile_dir = tmpdir };
	char doc[256], expect[PA_CONFIG_ERR_MAX];

	snprintf(doc, sizeof(doc),
			"{\"ports\": [{\"name\": \"p\", \"devargs\": \"net_null0\", \"profile\": \"%s\"}]}",
			tc->name);
	ck_assert_ptr_null(pa_config_load_string(doc, &o, err, sizeof(err)));
	snprintf(expect, sizeof(expect), "$.ports[0].profile (%s/%s.json): %s",
			tmpdir, tc->name, tc->expect);
	ck_assert_msg(strncmp(err, expect, strlen(expect)) == 0,
			"[%s] error \"%s\" does not begin with \"%s\"",
			tc->name, err, expect);
}
END_TEST

START_TEST(test_profile_dir_option_is_used)
{
	struct pa_config_opts o = { .profile_dir = tmpdir };
	struct pa_config *cfg;

	cfg = must_load(J({"ports": [{"name": "p", "devargs": "net_null0", "profile": "good"}]}), &o);
	ck_assert_int_eq(json_integer_value(json_object_get(
			cfg->ports[0].profile_doc, "tx_desc")), 16384);
	pa_config_free(cfg);
	/* shipped profiles are not in that directory */
	ck_assert_ptr_null(pa_config_load_string(J({"ports": [{"name": "p",
			"devargs": "net_null0", "profile": "mlx5"}]}), &o, err, sizeof(err)));
	assert_err_begins("$.ports[0].profile: unknown profile 'mlx5'");
}
END_TEST

START_TEST(test_load_file_reads_a_valid_file)
{
	char path[128];
	struct pa_config *cfg;

	snprintf(path, sizeof(path), "%s/valid.conf", tmpdir);
	cfg = pa_config_load_file(path, NULL, err, sizeof(err));
	ck_assert_msg(cfg != NULL, "%s", err);
	ck_assert_uint_eq(cfg->n_ports, 2);
	pa_config_free(cfg);
}
END_TEST

START_TEST(test_load_file_syntax_error_names_file_line_and_column)
{
	char path[128], expect[192];

	snprintf(path, sizeof(path), "%s/syntax.conf", tmpdir);
	ck_assert_ptr_null(pa_config_load_file(path, NULL, err, sizeof(err)));
	snprintf(expect, sizeof(expect), "%s:3:", path);
	assert_err_begins(expect);
	ck_assert_ptr_nonnull(strstr(err, "JSON syntax error"));
}
END_TEST

START_TEST(test_load_file_missing_file_names_it)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/nope.conf", tmpdir);
	ck_assert_ptr_null(pa_config_load_file(path, NULL, err, sizeof(err)));
	assert_err_begins(path);
	ck_assert_ptr_nonnull(strstr(err, strerror(ENOENT)));
}
END_TEST

START_TEST(test_load_file_validation_error_is_a_json_path)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/invalid.conf", tmpdir);
	ck_assert_ptr_null(pa_config_load_file(path, NULL, err, sizeof(err)));
	assert_err_begins("$.acl.default: invalid value 'mark'");
}
END_TEST

/* ------------------------------------------------------------------ */
/* Field parsers and shared object parsers                             */
/* ------------------------------------------------------------------ */

START_TEST(test_field_parsers_accept_valid_and_refuse_invalid)
{
	struct pa_ip_addr a;
	struct pa_ip_prefix p;
	struct pa_port_range r;
	uint8_t mac[6];
	char why[128], buf[64];
	json_t *v;
	int proto;

	ck_assert_int_eq(pa_net_parse_ip("192.0.2.1", &a, why, sizeof(why)), 0);
	ck_assert_int_eq(a.family, AF_INET);
	ck_assert_int_eq(pa_net_parse_ip("::ffff:1.2.3.4", &a, why, sizeof(why)), 0);
	ck_assert_int_eq(a.family, AF_INET6);
	ck_assert_int_eq(pa_net_parse_ip(" 192.0.2.1", &a, why, sizeof(why)), -EINVAL);
	ck_assert_str_eq(why, "invalid IP address ' 192.0.2.1'");
	ck_assert_int_eq(pa_net_parse_ip("192.0.2.1/32", &a, why, sizeof(why)), -EINVAL);

	ck_assert_int_eq(pa_net_parse_prefix("any", &p, why, sizeof(why)), 0);
	ck_assert_int_eq(p.addr.family, 0);
	ck_assert_int_eq(pa_net_parse_prefix("0.0.0.0/0", &p, why, sizeof(why)), 0);
	ck_assert_uint_eq(p.len, 0);
	ck_assert_int_eq(pa_net_parse_prefix("2001:db8::/32", &p, why, sizeof(why)), 0);
	ck_assert_str_eq(pa_net_format_prefix(&p, buf, sizeof(buf)), "2001:db8::/32");
	ck_assert_int_eq(pa_net_parse_prefix("2001:db8::1/32", &p, why, sizeof(why)), -EINVAL);
	ck_assert_str_eq(why, "invalid prefix '2001:db8::1/32': host bits set (did you mean '2001:db8::/32'?)");
	ck_assert_int_eq(pa_net_parse_prefix("10.0.0.0/", &p, why, sizeof(why)), -EINVAL);
	ck_assert_int_eq(pa_net_parse_prefix("/8", &p, why, sizeof(why)), -EINVAL);
	ck_assert_int_eq(pa_net_parse_prefix("10.0.0.0/-1", &p, why, sizeof(why)), -EINVAL);
	ck_assert_int_eq(pa_net_parse_prefix("10.0.0.0/99999999999999999999", &p, why, sizeof(why)), -EINVAL);

	ck_assert_int_eq(pa_net_parse_port_range("any", &r, why, sizeof(why)), 0);
	ck_assert_uint_eq(r.lo, 0);
	ck_assert_uint_eq(r.hi, 65535);
	ck_assert_int_eq(pa_net_parse_port_range("80-80", &r, why, sizeof(why)), 0);
	ck_assert_uint_eq(r.lo, 80);
	ck_assert_int_eq(pa_net_parse_port_range("80-", &r, why, sizeof(why)), -EINVAL);
	ck_assert_int_eq(pa_net_parse_port_range("-80", &r, why, sizeof(why)), -EINVAL);
	ck_assert_int_eq(pa_net_parse_port_range(" 80", &r, why, sizeof(why)), -EINVAL);
	ck_assert_int_eq(pa_net_parse_port_range("", &r, why, sizeof(why)), -EINVAL);

	v = json_string("udp");
	ck_assert_int_eq(pa_decode_parse_proto(v, &proto, why, sizeof(why)), 0);
	ck_assert_int_eq(proto, IPPROTO_UDP);
	json_decref(v);
	v = json_integer(-1);
	ck_assert_int_eq(pa_decode_parse_proto(v, &proto, why, sizeof(why)), -EINVAL);
	json_decref(v);
	v = json_real(6.0);
	ck_assert_int_eq(pa_decode_parse_proto(v, &proto, why, sizeof(why)), -EINVAL);
	json_decref(v);

	ck_assert_int_eq(pa_net_parse_mac("AA:bb:0c:dd:ee:0F", mac, why, sizeof(why)), 0);
	ck_assert_str_eq(pa_net_format_mac(mac, buf, sizeof(buf)), "aa:bb:0c:dd:ee:0f");
	ck_assert_int_eq(pa_net_parse_mac("aa:bb:cc:dd:ee:f", mac, why, sizeof(why)), -EINVAL);
	ck_assert_int_eq(pa_net_parse_mac("aa:bb:cc:dd:ee:fg", mac, why, sizeof(why)), -EINVAL);
	ck_assert_int_eq(pa_net_parse_mac("aa:bb:cc:dd:ee:ff:", mac, why, sizeof(why)), -EINVAL);

	ck_assert_int_eq(pa_decode_check_name("a.b-c_D9", why, sizeof(why)), 0);
	ck_assert_int_eq(pa_decode_check_name("", why, sizeof(why)), -EINVAL);
	ck_assert_int_eq(pa_decode_check_name("a\tb", why, sizeof(why)), -EINVAL);
}
END_TEST

START_TEST(test_rule_parser_for_rpc_uses_the_given_path)
{
	struct pa_config_acl_rule r;
	json_error_t jerr;
	json_t *o, *back;

	o = json_loads(J({"id": 5, "src": "10.0.0.1/8", "action": "drop"}), 0, &jerr);
	ck_assert_int_eq(pa_acl_config_parse_rule(o, NULL, "params", &r, err,
			sizeof(err)), -EINVAL);
	assert_err_begins("params.src: invalid prefix");
	json_decref(o);

	o = json_loads(J({"id": 5, "src": "10.0.0.0/8", "proto": 200, "action": "police",
			"rate_pps": 9, "burst": 3}), 0, &jerr);
	ck_assert_int_eq(pa_acl_config_parse_rule(o, NULL, NULL, &r, err,
			sizeof(err)), 0);
	back = pa_acl_config_rule_to_json(&r, NULL);
	ck_assert_int_eq(json_integer_value(json_object_get(back, "proto")), 200);
	ck_assert_str_eq(json_string_value(json_object_get(back, "src")), "10.0.0.0/8");
	json_decref(back);
	json_decref(o);
}
END_TEST

START_TEST(test_service_parser_for_rpc_frees_on_error)
{
	struct pa_config_service s;
	struct pa_config_lb lb = { .has_local_addr = true };
	json_error_t jerr;
	json_t *o, *back;

	o = json_loads(J({"name": "w", "vip": "192.0.2.1", "port": 80, "proto": "tcp",
			"backends": [{"addr": "10.0.0.1"}, {"addr": "10.0.0.1"}]}), 0, &jerr);
	ck_assert_int_eq(pa_lb_config_parse_service(o, &lb, "params", &s, err,
			sizeof(err)), -EINVAL);
	assert_err_begins("params.backends[1].addr: duplicate backend");
	ck_assert_ptr_null(s.backends);
	json_decref(o);

	o = json_loads(J({"name": "w", "vip": "192.0.2.1", "port": 80, "proto": "tcp",
			"backends": [{"addr": "10.0.0.1"}, {"addr": "10.0.0.2"}]}), 0, &jerr);
	ck_assert_int_eq(pa_lb_config_parse_service(o, &lb, "params", &s, err,
			sizeof(err)), 0);
	ck_assert_uint_eq(s.n_backends, 2);
	back = pa_lb_config_service_to_json(&s);
	ck_assert_uint_eq(json_array_size(json_object_get(back, "backends")), 2);
	json_decref(back);
	pa_lb_config_service_clear(&s);
	ck_assert_ptr_null(s.backends);
	json_decref(o);
}
END_TEST

/* lb_service_add and lb_backend_add decode with the loader's parsers and
 * the running "lb" section: the pool's checks hold over RPC too. */
START_TEST(test_fnat_checks_of_the_rpc_parsers_use_the_lb_section)
{
	struct pa_config *cfg = must_load(J({"lb": {"fnat": {
			"addrs": ["198.51.100.50"]}}}), NULL);
	struct pa_config_service s;
	struct pa_config_backend be;
	json_error_t jerr;
	json_t *o;

	o = json_loads(J({"name": "f", "vip": "2001:db8::10", "port": 80,
			"proto": "tcp", "forward": "fnat", "proxy_protocol": "v1",
			"backends": [{"addr": "10.0.0.1", "port": 8080}]}), 0, &jerr);
	ck_assert_ptr_nonnull(o);
	/* without a pool: refused */
	ck_assert_int_eq(pa_lb_config_parse_service(o, NULL, "params", &s,
			err, sizeof(err)), -EINVAL);
	assert_err_begins("params.forward: \"fnat\" needs $.lb.fnat");
	ck_assert_int_eq(pa_lb_config_parse_service(o, &cfg->lb, "params", &s,
			err, sizeof(err)), 0);
	ck_assert_int_eq(s.proxy_protocol, PA_LB_PROXY_V1);
	ck_assert_str_eq(pa_lb_config_proxy_name(s.proxy_protocol), "v1");
	ck_assert_str_eq(pa_lb_config_forward_name(s.forward), "fnat");
	json_decref(o);

	/* a backend of a family the pool has, then one it has not */
	o = json_loads(J({"addr": "10.0.0.2", "port": 9000}), 0, &jerr);
	ck_assert_int_eq(pa_lb_config_parse_backend(o, &s, "params", &be, err,
			sizeof(err)), 0);
	ck_assert_int_eq(pa_lb_config_backend_pool_check(&cfg->lb, &s, &be,
			"params", err, sizeof(err)), 0);
	json_decref(o);
	o = json_loads(J({"addr": "2001:db8::2"}), 0, &jerr);
	ck_assert_int_eq(pa_lb_config_parse_backend(o, &s, "params", &be, err,
			sizeof(err)), 0);
	ck_assert_int_eq(pa_lb_config_backend_pool_check(&cfg->lb, &s, &be,
			"params", err, sizeof(err)), -EINVAL);
	assert_err_begins("params.addr: forward \"fnat\" needs an IPv6 address in lb.fnat.addrs");
	ck_assert_int_eq(pa_lb_config_backend_pool_check(NULL, &s, &be,
			"params", err, sizeof(err)), -EINVAL);
	/* other methods need no pool */
	s.forward = PA_LB_NAT;
	ck_assert_int_eq(pa_lb_config_backend_pool_check(NULL, &s, &be,
			"params", err, sizeof(err)), 0);
	json_decref(o);
	pa_lb_config_service_clear(&s);

	/* a VIP that is a pool address, over RPC as in a file */
	o = json_loads(J({"name": "n", "vip": "198.51.100.50", "port": 80,
			"proto": "tcp", "forward": "nat"}), 0, &jerr);
	ck_assert_int_eq(pa_lb_config_parse_service(o, &cfg->lb, "params", &s,
			err, sizeof(err)), -EINVAL);
	assert_err_begins("params.vip: '198.51.100.50' is also $.lb.fnat.addrs[0]");
	json_decref(o);
	ck_assert_str_eq(pa_lb_config_proxy_name(PA_LB_PROXY_NONE), "none");
	ck_assert_str_eq(pa_lb_config_proxy_name(PA_LB_PROXY_V2), "v2");
	ck_assert_str_eq(pa_lb_config_proxy_name((enum pa_lb_proxy)7), "?");
	ck_assert_str_eq(pa_lb_config_forward_name((enum pa_lb_forward)9), "?");
	pa_config_free(cfg);
}
END_TEST

/* ------------------------------------------------------------------ */
/* RPC                                                                 */
/* ------------------------------------------------------------------ */

static struct pa_config_rpc_ctx rpc_ctx;

/* Bind @p cfg as the running configuration (NULL: unbind). */
static void
set_running(const struct pa_config *cfg)
{
	rpc_ctx = (struct pa_config_rpc_ctx){ .running = cfg };
	ck_assert_int_eq(pa_rpc_bind("config", cfg != NULL ? &rpc_ctx : NULL),
		0);
}

/* config_get through the registry, as the server calls it: 0 and the
 * result, or -1 and the error (code, message) in @p e. */
static int
call_config_get(const json_t *params, json_t **result, struct pa_rpc_error *e)
{
	json_t *req, *resp, *error;
	int ret;

	memset(e, 0, sizeof(*e));
	*result = NULL;
	req = json_pack("{s:s, s:i, s:s}", "jsonrpc", "2.0", "id", 1,
		"method", "config_get");
	if (params != NULL)
		json_object_set(req, "params", (json_t *)params);
	resp = pa_rpc_handle_call(req, NULL);
	ck_assert_ptr_nonnull(resp);
	error = json_object_get(resp, "error");
	if (error == NULL) {
		*result = json_incref(json_object_get(resp, "result"));
		ret = 0;
	} else {
		e->code = (int)json_integer_value(json_object_get(error,
			"code"));
		snprintf(e->message, sizeof(e->message), "%s",
			json_string_value(json_object_get(error, "message")));
		ret = -1;
	}
	json_decref(resp);
	json_decref(req);
	return ret;
}

START_TEST(test_config_get_without_running_config_is_internal_error)
{
	struct pa_rpc_error e;
	json_t *res;

	set_running(NULL);
	ck_assert_int_eq(call_config_get(NULL, &res, &e), -1);
	ck_assert_int_eq(e.code, PA_RPC_INTERNAL_ERROR);
	ck_assert_str_eq(e.message, "no configuration loaded");
	json_decref(e.data);
}
END_TEST

START_TEST(test_config_get_returns_running_config_in_file_schema)
{
	struct pa_config *cfg = must_load(full_doc, NULL);
	struct pa_rpc_error e;
	json_t *res, *expect;

	set_running(cfg);
	ck_assert_int_eq(call_config_get(NULL, &res, &e), 0);
	expect = pa_config_to_json(cfg);
	ck_assert(json_equal(res, expect));
	json_decref(expect);
	json_decref(res);
	set_running(NULL);
	pa_config_free(cfg);
}
END_TEST

START_TEST(test_config_get_refuses_params)
{
	struct pa_config *cfg = must_load("{}", NULL);
	struct pa_rpc_error e;
	json_t *res, *params = json_pack("{s:i}", "x", 1);

	set_running(cfg);
	ck_assert_int_eq(call_config_get(params, &res, &e), -1);
	ck_assert_int_eq(e.code, PA_RPC_INVALID_PARAMS);
	json_decref(e.data);
	json_decref(params);
	set_running(NULL);
	pa_config_free(cfg);
}
END_TEST

/* ---- rpc.discover ---- */

static json_t *
find_method(json_t *doc, const char *name)
{
	json_t *m;
	size_t i;

	json_array_foreach(json_object_get(doc, "methods"), i, m)
		if (strcmp(json_string_value(json_object_get(m, "name")),
				name) == 0)
			return m;
	return NULL;
}

START_TEST(test_openrpc_describes_every_registered_method)
{
	json_t *doc = pa_config_openrpc(), *names, *n;
	size_t i;

	ck_assert_ptr_nonnull(doc);
	ck_assert(strncmp(json_string_value(json_object_get(doc, "openrpc")),
			"1.2.", 4) == 0);
	names = pa_rpc_method_names();
	ck_assert_int_eq(json_array_size(json_object_get(doc, "methods")),
			json_array_size(names));
	json_array_foreach(names, i, n) {
		json_t *m = find_method(doc, json_string_value(n));

		ck_assert_msg(m != NULL, "%s missing", json_string_value(n));
		ck_assert(json_is_array(json_object_get(m, "params")));
		ck_assert(json_is_object(json_object_get(m, "result")));
		/* every method: -32602 and -32603 at least */
		ck_assert_int_ge(json_array_size(json_object_get(m, "errors")), 2);
		ck_assert(json_is_false(json_object_get(json_object_get(m,
				"x-params-schema"), "additionalProperties")));
	}
	ck_assert_ptr_nonnull(find_method(doc, "rpc.discover"));
	json_decref(names);
	json_decref(doc);
}
END_TEST

START_TEST(test_openrpc_params_come_from_the_decoders_tables)
{
	json_t *doc = pa_config_openrpc(), *m, *ps, *cfg, *id;

	ck_assert_ptr_nonnull(doc);
	/* config_validate: the whole document, one property per section */
	m = find_method(doc, "config_validate");
	ck_assert_ptr_nonnull(m);
	cfg = pa_config_schema();
	ck_assert(json_equal(json_object_get(m, "x-params-schema"), cfg));
	ck_assert_ptr_nonnull(json_object_get(json_object_get(cfg,
			"properties"), "acl"));
	ck_assert_ptr_nonnull(json_object_get(json_object_get(cfg,
			"properties"), "ports"));
	json_decref(cfg);
	/* acl_rule_add: the rule table of the loader (id bounds, action) */
	m = find_method(doc, "acl_rule_add");
	ps = json_object_get(m, "x-params-schema");
	cfg = pa_acl_config_rule_schema();
	ck_assert(json_equal(ps, cfg));
	json_decref(cfg);
	id = json_object_get(json_object_get(ps, "properties"), "id");
	ck_assert_int_eq(json_integer_value(json_object_get(id, "minimum")), 1);
	ck_assert_int_eq(json_integer_value(json_object_get(id, "maximum")),
			2147483648LL);
	/* lb_service_add: the service table, backends nested */
	m = find_method(doc, "lb_service_add");
	ps = json_object_get(m, "x-params-schema");
	ck_assert(json_is_false(json_object_get(json_object_get(
			json_object_get(json_object_get(ps, "properties"),
			"backends"), "items"), "additionalProperties")));
	/* methods without params: none */
	m = find_method(doc, "stats_get");
	ck_assert_int_eq(json_array_size(json_object_get(m, "params")), 0);
	json_decref(doc);
}
END_TEST

static Suite *
config_suite(void)
{
	Suite *s = suite_create("config");
	TCase *tc;

	tc = tcase_create("valid");
	tcase_add_test(tc, test_contract_example_loads_into_typed_structs);
	tcase_add_test(tc, test_empty_document_gives_defaults);
	tcase_add_test(tc, test_replay_mode_without_ports_has_one_replay0_port);
	tcase_add_test(tc, test_replay_mode_ignores_a_valid_ports_section);
	tcase_add_test(tc, test_replay_mode_still_validates_the_ports_section);
	tcase_add_test(tc, test_replay_port_name_comes_from_options);
	tcase_add_test(tc, test_replay_in_port_resolves_against_effective_ports_only);
	tcase_add_test(tc, test_port_addr_keeps_host_bits_as_given);
	tcase_add_test(tc, test_port_peer_resolves_to_index_and_defaults_to_self);
	tcase_add_test(tc, test_metrics_null_disables_and_empty_object_uses_default_listen);
	tcase_add_test(tc, test_rule_ports_accept_integers_and_strings);
	tcase_add_test(tc, test_rule_proto_accepts_names_numbers_and_digit_strings);
	tcase_add_test(tc, test_bare_address_in_rule_is_a_host_prefix);
	tcase_add_test(tc, test_rtc_mode_takes_worker_lcores);
	tcase_add_test(tc, test_pipeline_lcore_in_several_stages);
	tcase_add_test(tc, test_pipeline_mode_without_lcores_is_automatic);
	tcase_add_test(tc, test_pipeline_idle_each_key_sets_only_its_field);
	tcase_add_test(tc, test_lb_defaults_for_service_and_backend);
	tcase_add_test(tc, test_local_addr_may_be_a_ports_own_address);
	tcase_add_test(tc, test_nat_and_dsr_services_need_no_local_addr);
	tcase_add_test(tc, test_fnat_absent_has_defaults_and_no_pool);
	tcase_add_test(tc, test_fnat_ports_take_one_port_or_a_range_within_1_65535);
	tcase_add_test(tc, test_fnat_max_addrs_accepted_and_one_more_refused);
	tcase_add_test(tc, test_fnat_addr_may_be_a_ports_own_address_or_local_addr);
	tcase_add_test(tc, test_to_json_writes_fnat_and_proxy_protocol_only_when_set);
	tcase_add_test(tc, test_same_vip_and_port_with_other_proto_is_another_service);
	tcase_add_test(tc, test_lb_flow_table_defaults_without_flow_table_key);
	tcase_add_test(tc, test_lb_flow_table_each_key_sets_only_its_field);
	tcase_add_test(tc, test_lb_flow_table_accepts_range_bounds);
	tcase_add_test(tc, test_rpc_section_each_key_sets_only_its_field);
	tcase_add_test(tc, test_max_ports_accepted_and_one_more_refused);
	tcase_add_loop_test(tc, test_every_shipped_profile_loads, 0,
			(int)(sizeof(shipped_profiles) / sizeof(shipped_profiles[0])));
	tcase_add_test(tc, test_every_file_in_drivers_config_loads);
	tcase_add_test(tc, test_profile_is_kept_as_loaded_json);
	tcase_add_test(tc, test_transparent_default_peer_by_device);
	tcase_add_test(tc, test_gateway_per_family);
	suite_add_tcase(s, tc);

	tc = tcase_create("round_trip");
	tcase_add_test(tc, test_round_trip_of_contract_example);
	tcase_add_test(tc, test_round_trip_of_every_field);
	tcase_add_test(tc, test_round_trip_of_empty_and_replay_documents);
	tcase_add_test(tc, test_to_json_writes_defaults_explicitly);
	tcase_add_test(tc, test_announce_and_stall_ms_load_and_round_trip);
	tcase_add_test(tc, test_protect_loads_defaults_and_refuses_bad_values);
	tcase_add_test(tc, test_round_trip_keeps_flow_table_and_writes_it_explicitly);
	tcase_add_test(tc, test_to_json_writes_ports_with_promisc_peer_and_addr);
	tcase_add_test(tc, test_port_role_decides_promisc_unless_given);
	tcase_add_test(tc, test_port_rss_steer_values_default_and_errors);
	tcase_add_test(tc, test_replay_port_is_routed_with_lent_addresses);
	tcase_add_test(tc, test_to_json_writes_rpc_only_when_present_with_defaults_explicit);
	suite_add_tcase(s, tc);

	tc = tcase_create("errors");
	tcase_add_loop_test(tc, test_invalid_document_is_refused_with_json_path,
			0, N_ERR_CASES);
	tcase_add_test(tc, test_error_path_indexes_the_offending_rule);
	tcase_add_test(tc, test_unknown_keys_are_reported_before_other_errors);
	tcase_add_test(tc, test_error_buffer_is_truncated_and_may_be_null);
	tcase_add_test(tc, test_load_json_refuses_null_document);
	tcase_add_test(tc, test_invalid_replay_port_name_is_refused);
	suite_add_tcase(s, tc);

	tc = tcase_create("files");
	tcase_add_unchecked_fixture(tc, files_setup, files_teardown);
	tcase_add_loop_test(tc, test_invalid_profile_is_refused_with_profile_path,
			0, N_PROFILE_CASES);
	tcase_add_test(tc, test_profile_dir_option_is_used);
	tcase_add_test(tc, test_load_file_reads_a_valid_file);
	tcase_add_test(tc, test_load_file_syntax_error_names_file_line_and_column);
	tcase_add_test(tc, test_load_file_missing_file_names_it);
	tcase_add_test(tc, test_load_file_validation_error_is_a_json_path);
	suite_add_tcase(s, tc);

	tc = tcase_create("parsers");
	tcase_add_test(tc, test_field_parsers_accept_valid_and_refuse_invalid);
	tcase_add_test(tc, test_rule_parser_for_rpc_uses_the_given_path);
	tcase_add_test(tc, test_service_parser_for_rpc_frees_on_error);
	tcase_add_test(tc, test_fnat_checks_of_the_rpc_parsers_use_the_lb_section);
	suite_add_tcase(s, tc);

	tc = tcase_create("rpc");
	tcase_add_test(tc, test_config_get_without_running_config_is_internal_error);
	tcase_add_test(tc, test_config_get_returns_running_config_in_file_schema);
	tcase_add_test(tc, test_config_get_refuses_params);
	tcase_add_test(tc, test_openrpc_describes_every_registered_method);
	tcase_add_test(tc, test_openrpc_params_come_from_the_decoders_tables);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	static Suite *(*const suites[])(void) = { config_suite, NULL };
	const struct pa_test_main t = {
		.name = "test_config",
		.suites = suites,
	};

	return pa_test_main(&t);
}
