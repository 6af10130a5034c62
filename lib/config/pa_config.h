/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef PA_CONFIG_H
#define PA_CONFIG_H

/**
 * @file
 * The configuration document (docs/configuration.md) as typed structures.
 *
 * pa_config_load_*() parse and validate strictly: unknown keys, wrong
 * types, out-of-range values, duplicates and dangling references are
 * refused with a message that starts with the JSON path of the offending
 * field ("$.acl.rules[3].src: ...") and says why. A loaded pa_config is
 * plain memory owned by the caller (pa_config_free()); it is not
 * thread-safe, the control thread owns it.
 *
 * The structures of every section are declared here, so that a library
 * lower than the one that owns a section (the port library for a
 * pipeline, say) can read it without that library's header. Each
 * section is parsed, freed and serialized by the library that uses it
 * (lib/<name>/<name>_config.c), which registers a struct
 * pa_config_section (below); lib/config keeps the document, the decoding
 * kit (pa_decode.h) and the small "metrics" and "rpc" sections.
 */

#include <stdbool.h>
#include <stdint.h>
#include <netinet/in.h>

#include <jansson.h>

#include "pa_decode.h"
#include "pa_net.h"

#define PA_CONFIG_NAME_MAX	PA_DECODE_NAME_MAX /**< port/service names, NUL included */
#define PA_CONFIG_ERR_MAX	512	/**< size of an error message buffer */
#define PA_CONFIG_MAX_PORTS	32
#define PA_CONFIG_MAX_LCORES	128	/**< lcores per stage */
#define PA_CONFIG_MAX_ADDRS	16	/**< addresses per port */
#define PA_CONFIG_IFNAME_MAX	16	/**< kernel interface names (IFNAMSIZ), NUL included */

/** "rss_steer" of a port. */
enum pa_config_rss_steer {
	PA_CONFIG_RSS_STEER_AUTO = 0,	/**< the device's RSS, read back */
	PA_CONFIG_RSS_STEER_OFF,	/**< never: no hand-over */
	PA_CONFIG_RSS_STEER_TOEPLITZ,	/**< Toeplitz, the appliance's
					 * symmetric key, RETA i -> i % queues */
};

/** One port of the "ports" section. */
struct pa_config_port {
	char name[PA_CONFIG_NAME_MAX];
	char *devargs;			/**< vdev devargs, or NULL */
	char *pci;			/**< PCI address, or NULL */
	char *profile;			/**< drivers-config profile name, or NULL */
	json_t *profile_doc;		/**< the loaded profile, or NULL */
	uint16_t rx_queues;		/**< 0 = automatic */
	uint16_t tx_queues;		/**< 0 = automatic */
	uint16_t rx_desc;		/**< 0 = profile or driver default */
	uint16_t tx_desc;		/**< 0 = profile or driver default */
	uint16_t mtu;			/**< 0 = driver default */
	/** Least number of mbufs in the port's pool (0 = sized from queues,
	 * rings and bursts only). For devices that hold many buffers of
	 * their own, e.g. net_pcap with infinite_rx preloads the whole file. */
	uint32_t mbufs;
	/** Default from the role: false on a routed port (one with "addr"),
	 * true on a transparent one; an explicit "promisc" wins. */
	bool promisc;
	int peer;			/**< index of the peer port; own index by default */
	bool has_gateway_mac;
	uint8_t gateway_mac[6];
	/** "gateway": at most one next hop per family, [0] IPv4, [1] IPv6
	 * (pa_config_port_gateway()). */
	bool has_gateway[2];
	struct pa_ip_addr gateway[2];
	unsigned int n_addrs;
	struct pa_ip_prefix addrs[PA_CONFIG_MAX_ADDRS];
	/** "kernel_if": the exception path's TAP interface (lib/excp), or
	 * "" for none; routed ports only. */
	char kernel_if[PA_CONFIG_IFNAME_MAX];
	/** "kernel_if_pps" / "kernel_if_burst": the rate of frames handed to
	 * the kernel_if (per second, all rx lcores together) and the token
	 * bucket's depth; 0 = lib/excp's default. */
	uint32_t kernel_if_pps;
	uint32_t kernel_if_burst;
	/** "rss_steer": how the data path learns which RX queue a flow's
	 * packets arrive on (lib/port "RSS steering"). */
	enum pa_config_rss_steer rss_steer;
};

/** Port @p p's "gateway" of @p family (AF_INET or AF_INET6), or NULL. */
static inline const struct pa_ip_addr *
pa_config_port_gateway(const struct pa_config_port *p, int family)
{
	unsigned int k = family == AF_INET6;

	return p->has_gateway[k] ? &p->gateway[k] : NULL;
}

enum pa_pipeline_mode {
	PA_PIPELINE_RTC = 0,		/**< every stage on each worker lcore */
	PA_PIPELINE_STAGED,		/**< "pipeline": one stage per lcore */
};

/** Stage lcore lists of "pipeline.lcores". */
enum pa_config_stage {
	PA_CONFIG_STAGE_RX = 0,
	PA_CONFIG_STAGE_CLASSIFY,
	PA_CONFIG_STAGE_LB,
	PA_CONFIG_STAGE_TX,
	PA_CONFIG_STAGE_WORKER,		/**< rtc mode: "worker" */
	PA_CONFIG_STAGE_MAX
};

/** What a data-path lcore does when its polls find no work. */
enum pa_idle_mode {
	PA_IDLE_BUSY = 0,		/**< keep polling (rte_pause between polls) */
	PA_IDLE_ADAPTIVE,		/**< spin, then sleep, growing, bounded */
};

/** "pipeline.idle": adaptive polling. */
struct pa_config_idle {
	enum pa_idle_mode mode;		/**< default busy */
	uint32_t spin_polls;		/**< empty polls before the first sleep,
					 * default 1000 */
	uint32_t max_sleep_us;		/**< longest sleep, so the bound on the
					 * wake-up delay, default 100 */
};

struct pa_config_pipeline {
	enum pa_pipeline_mode mode;	/**< default rtc */
	bool lcores_set;		/**< false: automatic plan */
	unsigned int n_lcores[PA_CONFIG_STAGE_MAX];
	unsigned int lcores[PA_CONFIG_STAGE_MAX][PA_CONFIG_MAX_LCORES];
	uint32_t ring_size;		/**< power of two, default 1024 */
	uint16_t burst;			/**< default 32 */
	uint32_t tx_drain_us;		/**< TX buffer drain period, default 100 */
	bool latency;			/**< per-packet latency histograms,
					 * default true */
	struct pa_config_idle idle;
	/** "stall_ms": a worker lcore whose loop has not moved for this
	 * long makes the appliance not ready (lib/announce), default 1000 */
	uint32_t stall_ms;
};

enum pa_acl_action {
	PA_ACL_PERMIT = 0,
	PA_ACL_DROP,
	PA_ACL_MARK,
	PA_ACL_POLICE,
};

struct pa_config_acl_rule {
	uint32_t id;			/**< 1..2^31 */
	int32_t priority;		/**< higher wins; ties: lower id */
	struct pa_ip_prefix src;
	struct pa_ip_prefix dst;
	struct pa_port_range sport;
	struct pa_port_range dport;
	int proto;			/**< 0..255 or PA_PROTO_ANY */
	enum pa_acl_action action;
	uint8_t dscp;			/**< mark */
	uint64_t rate_pps;		/**< police */
	uint64_t burst;			/**< police */
	int in_port;			/**< port index, -1 = any */
};

struct pa_config_acl {
	bool present;
	enum pa_acl_action def;		/**< permit or drop */
	bool non_ip_drop;		/**< acl.non_ip = "drop" */
	/** acl.flow_cache: verdict cache entries per data-path lcore and
	 * family (0: off; else PA_CONFIG_ACL_FLOW_CACHE_MIN..MAX, rounded
	 * up to a power of two when the ACL is created) */
	uint32_t flow_cache;
	unsigned int n_rules;
	struct pa_config_acl_rule *rules;
};

#define PA_CONFIG_ACL_FLOW_CACHE_DEFAULT	32768
#define PA_CONFIG_ACL_FLOW_CACHE_MIN		256
#define PA_CONFIG_ACL_FLOW_CACHE_MAX		(1u << 22)

enum pa_lb_sched { PA_LB_MAGLEV = 0, PA_LB_RR, PA_LB_WRR, PA_LB_LC };
enum pa_lb_forward { PA_LB_IPIP = 0, PA_LB_NAT, PA_LB_DSR, PA_LB_FNAT };
/** "proxy_protocol" of a TCP fnat service. */
enum pa_lb_proxy { PA_LB_PROXY_NONE = 0, PA_LB_PROXY_V1, PA_LB_PROXY_V2 };
enum pa_lb_state { PA_LB_UP = 0, PA_LB_DOWN, PA_LB_DRAIN };

struct pa_config_backend {
	struct pa_ip_addr addr;
	uint16_t port;			/**< 0 = the service port */
	uint32_t weight;		/**< default 1 */
	bool has_mac;
	uint8_t mac[6];
	enum pa_lb_state state;
};

/** Kinds of backend health check ("health.type"). */
enum pa_health_type {
	PA_HEALTH_NONE = 0,		/**< no check (also: no "health") */
	PA_HEALTH_TCP,			/**< a TCP connect */
	PA_HEALTH_HTTP,			/**< GET path, status == expect */
	PA_HEALTH_UDP,			/**< a datagram; no ICMP error back */
	PA_HEALTH_ICMP,			/**< ICMP / ICMPv6 echo */
	/** Not a "type": the agent check of "agent_port" (lib/health). */
	PA_HEALTH_AGENT,
};

#define PA_CONFIG_HEALTH_PATH_MAX	128	/**< "path", NUL included */
#define PA_CONFIG_HEALTH_EXPECT_MAX	64	/**< udp "expect", NUL included */

/** A service's "health" (docs/configuration.md, "Health checks"). */
struct pa_config_health {
	bool present;			/**< "health" given */
	enum pa_health_type type;
	uint16_t port;			/**< 0: the backend's port */
	char path[PA_CONFIG_HEALTH_PATH_MAX];	/**< http, default "/" */
	/** http: the status wanted (default 200); udp: 0 */
	uint16_t expect_status;
	/** udp: a reply is required and must contain this ("": no reply
	 * needed, only no ICMP error) */
	char expect[PA_CONFIG_HEALTH_EXPECT_MAX];
	uint32_t interval_ms;		/**< default 2000 */
	uint32_t timeout_ms;		/**< default 1000, < interval_ms */
	uint16_t rise;			/**< default 2 */
	uint16_t fall;			/**< default 3 */
	/** "agent_port": the backend's agent (HAProxy agent-check
	 * protocol) on this TCP port reports a weight percentage and
	 * up/drain/down; 0 = no agent */
	uint16_t agent_port;
	/** "grace_ms": a backend that goes down by the checks (or its
	 * agent's "down") first drains for this long (no new flows, its
	 * flows stay) before its flows move; 0 = they move at once */
	uint32_t grace_ms;
};

struct pa_config_service {
	char name[PA_CONFIG_NAME_MAX];
	struct pa_ip_addr vip;
	uint16_t port;
	uint8_t proto;			/**< IPPROTO_TCP or IPPROTO_UDP */
	enum pa_lb_sched scheduler;
	enum pa_lb_forward forward;
	uint32_t table_size;		/**< maglev table size (prime), default 65537 */
	/** TCP MSS clamp: a larger MSS option on SYNs to the service (and
	 * on SYN-ACKs of its NAT replies) is rewritten to it; 0 = off
	 * (absent), else 536..65495 */
	uint16_t mss_clamp;
	/** "max_flows": live flows of the service at most (all lcores);
	 * a packet that would make one more is dropped (reason max_flows);
	 * 0 = no limit (absent), else 1..lb.flow_table.size */
	uint32_t max_flows;
	/** "health": backend checks (present false: none) */
	struct pa_config_health health;
	/** "proxy_protocol": TCP fnat only; none when absent */
	enum pa_lb_proxy proxy_protocol;
	unsigned int n_backends;
	struct pa_config_backend *backends;
};

/** "lb.flow_table": the sticky flow table (all optional). */
struct pa_config_flow_table {
	uint32_t size;			/**< flows in all, default 1048576 */
	uint32_t tcp_timeout;		/**< idle seconds, TCP, default 300 */
	uint32_t tcp_fin_timeout;	/**< after FIN or RST, default 10 */
	uint32_t udp_timeout;		/**< idle seconds, UDP, default 30 */
};

/** Addresses of "lb.fnat.addrs" at most. */
#define PA_CONFIG_FNAT_MAX_ADDRS	64
#define PA_CONFIG_FNAT_DEF_PORT_LO	1024
#define PA_CONFIG_FNAT_DEF_PORT_HI	65535
#define PA_CONFIG_FNAT_DEF_TIME_WAIT_S	60

/** "lb.fnat": the full-NAT source pool of this appliance. */
struct pa_config_fnat {
	bool present;			/**< "fnat" key in "lb" */
	unsigned int n_addrs;		/**< IPv4 and IPv6, in file order */
	struct pa_ip_addr addrs[PA_CONFIG_FNAT_MAX_ADDRS];
	/** "ports": "LO-HI" (host order), default 1024-65535 */
	uint16_t port_lo, port_hi;
	/** "time_wait_s": a (pool address, port) whose flow has ended
	 * serves the same backend again only this many seconds later (the
	 * backend's TIME_WAIT), default 60 */
	uint32_t time_wait_s;
};

#define PA_CONFIG_TABLE_HISTORY_MAX_S	3600
#define PA_CONFIG_TABLE_HISTORY_DEF_S	60

struct pa_config_lb {
	bool present;
	struct pa_config_flow_table flow_table;	/**< defaults when absent */
	bool has_local_addr;
	struct pa_ip_addr local_addr;	/**< IPv4 */
	bool has_local_addr6;
	struct pa_ip_addr local_addr6;	/**< IPv6 */
	/** "icmp_echo": answer ICMP/ICMPv6 echo requests to VIPs (default
	 * true) */
	bool icmp_echo;
	/** "table_history_s": a TCP packet without SYN that matches no flow
	 * of a Maglev service goes to the backend of the service's table
	 * of this many seconds ago, if still usable (0..3600, default 60;
	 * 0 = off) */
	uint32_t table_history_s;
	/** "fnat": the source pool of fnat services (present false: none;
	 * then no service may forward by fnat) */
	struct pa_config_fnat fnat;
	/** Set by the loader from "ports" (not a key of "lb"): the address
	 * families that health probes can leave from, i.e. some routed port
	 * with a "kernel_if" has an address of that family; both true in
	 * replay mode, where probes do not run. */
	bool health_v4, health_v6;
	unsigned int n_services;
	struct pa_config_service *services;
};

/** "announce": VIP host routes in a kernel table (lib/announce). */
struct pa_config_announce {
	bool present;			/**< "announce" key in the document */
	uint32_t table;			/**< routing table, 1..2^32-1 but 253-255 */
	uint32_t drain_s;		/**< SIGTERM: seconds of drain, default 0 */
};

/**
 * "protect": protection against floods and unwanted sources (lib/protect):
 * {"syn_timeout_s": S, "syn_defer": bool, "src_new_flows": {"rate",
 * "burst", "prefix4", "prefix6"}, "blocklist": "FILE"}. All optional.
 */
struct pa_config_protect {
	bool present;			/**< "protect" key in the document */
	/** TCP flows that never got past their first SYN expire after
	 * this many seconds; 0 = not set (such flows live tcp_timeout). */
	uint32_t syn_timeout_s;
	/** "syn_defer": a SYN that opens a flow of a Maglev service that
	 * does not nat takes no flow entry: it goes to the Maglev choice,
	 * and the client's next packet makes the entry (default false). */
	bool syn_defer;
	/** New flows per source prefix: a token bucket per prefix. */
	struct {
		bool enabled;		/**< "src_new_flows" given */
		uint32_t rate;		/**< new flows per second, >= 1 */
		uint32_t burst;		/**< bucket depth, >= 1; default rate */
		uint8_t prefix4;	/**< IPv4 source prefix length, 1..32 */
		uint8_t prefix6;	/**< IPv6 source prefix length, 1..128 */
	} src_new_flows;
	/** Blocklist file loaded at start (one prefix a line, '#'
	 * comments), malloc'ed; NULL = none. */
	char *blocklist;
};

struct pa_config_metrics {
	bool present;			/**< "metrics" key in the document */
	bool enabled;			/**< false for "metrics": null */
	char listen[64];		/**< "ADDR:PORT" */
};

/**
 * "rpc": limits of the JSON-RPC server (all optional; docs/rpc.md,
 * "Limits"). Defaults are filled in whether or not the section is there.
 */
struct pa_config_rpc {
	bool present;			/**< "rpc" key in the document */
	uint32_t max_connections;	/**< connections at once, default 64 */
	uint64_t max_request_bytes;	/**< bytes of one request, default 32 MiB */
	uint32_t max_depth;		/**< JSON nesting levels, default 64 */
	uint32_t idle_timeout;		/**< seconds, default 30 */
	bool has_group;			/**< "group" given */
	uint32_t gid;			/**< group of the socket and its
					 * directory (resolved at load) */
	char group[64];			/**< as written: a name or a number */
};

struct pa_config {
	unsigned int n_ports;
	struct pa_config_port ports[PA_CONFIG_MAX_PORTS];
	bool ports_present;
	struct pa_config_pipeline pipeline;
	struct pa_config_acl acl;
	struct pa_config_lb lb;
	struct pa_config_announce announce;
	struct pa_config_protect protect;
	struct pa_config_metrics metrics;
	struct pa_config_rpc rpc;
};

/** Loading options. */
struct pa_config_opts {
	/** Replay mode: the "ports" section is replaced by one port named
	 * @p replay_port (its devargs filled in by the caller). */
	bool replay;
	const char *replay_port;	/**< default "replay0" */
	/** Directory of NIC profiles; NULL = built-in default. */
	const char *profile_dir;
};

/**
 * Parse and validate a document.
 * @param err  receives "<json path>: <reason>" on failure
 * @return a new config, or NULL (message in @p err).
 */
struct pa_config *pa_config_load_json(const json_t *doc,
		const struct pa_config_opts *opts, char *err, size_t err_len);

/** Same from a file; I/O and JSON syntax errors name file, line, column. */
struct pa_config *pa_config_load_file(const char *path,
		const struct pa_config_opts *opts, char *err, size_t err_len);

/** Same from text. */
struct pa_config *pa_config_load_string(const char *text,
		const struct pa_config_opts *opts, char *err, size_t err_len);

/** Free a config (NULL is fine). */
void pa_config_free(struct pa_config *cfg);

/**
 * Serialize back to the file's schema. Loading the result gives an equal
 * config. Defaults are written explicitly.
 * @return new reference, or NULL on allocation failure.
 */
json_t *pa_config_to_json(const struct pa_config *cfg);

/** Index of the port named @p name, or -1. */
int pa_config_port_index(const struct pa_config *cfg, const char *name);

/*
 * Notes on the structures above, as the loader fills them:
 * - pa_config_port.addrs keep the address as written ("10.0.0.5/24"):
 *   host bits may be set there (an interface address), unlike rule
 *   prefixes.
 * - pa_config.ports_present is false in replay mode: cfg->ports then holds
 *   the one replay port (devargs NULL, filled by the caller) and
 *   pa_config_to_json() omits "ports".
 * - pa_config_metrics: when the document has no "metrics" key, enabled is
 *   true (listen "127.0.0.1:9469") in live mode and false in replay mode.
 * - port->profile_doc is the profile as loaded and validated (driver,
 *   description, devargs, rx_queues, tx_queues, rx_desc, tx_desc, rss,
 *   rx_offloads, tx_offloads); port-level values override it.
 */

/* ------------------------------------------------------------------ */
/* Sections                                                            */
/* ------------------------------------------------------------------ */

/**
 * How the document reaches each section.
 *
 * lib/config cannot call the libraries that own the sections: they sit
 * above it (they include this header and link against it), and a call
 * down-to-up would make the static libraries a cycle. So each owner
 * describes its section with a struct pa_config_section and registers it
 * from its <name>_config.c with PA_CONFIG_SECTION_REGISTER() (a
 * constructor, like PA_RPC_REGISTER()). The loader walks the registry in
 * @c order: every section's defaults(), then the top-level key check,
 * then every section's parse(); pa_config_free() calls each clear() and
 * pa_config_to_json() each to_json(), in the same order.
 *
 * Consequence for linking: a section exists only if its object file is
 * linked. Executables, tests and fuzzers link the libraries whole
 * (link_whole, pa_libs_dep); a key whose section is not linked in is
 * refused as "$.<key>: unknown key".
 */
struct pa_config_section {
	const char *key;		/**< top-level key, e.g. "acl" */
	unsigned int order;		/**< PA_CONFIG_ORDER_* */
	/** Fill the section's defaults (NULL: zeroes are the defaults).
	 * Called for every load, before the document is looked at. */
	void (*defaults)(struct pa_config *cfg,
			const struct pa_config_opts *opts);
	/** Parse the section's value @p v, NULL when the key is absent.
	 * @return 0, -EINVAL or -ENOMEM with "<path>: <reason>" in @p err. */
	int (*parse)(const json_t *v, struct pa_config *cfg,
			const struct pa_config_opts *opts,
			char *err, size_t err_len);
	/** Free what parse() allocated (NULL: nothing). */
	void (*clear)(struct pa_config *cfg);
	/** Serialize: *out = new reference, or left NULL to omit the key.
	 * @return 0 or -ENOMEM. */
	int (*to_json)(const struct pa_config *cfg, json_t **out);
	/** The section's JSON Schema, built from the field tables its
	 * parse() decodes with (pa_decode_schema_object()): new reference,
	 * NULL when out of memory. NULL: the section's value is described
	 * as any value. */
	json_t *(*schema)(void);
	struct pa_config_section *next;	/**< the registry's */
};

/** Order of the sections: parsing (a later one may use an earlier one:
 * ACL "in_port" names a port), freeing, and the keys of
 * pa_config_to_json(). */
enum pa_config_order {
	PA_CONFIG_ORDER_PORTS = 10,	/**< lib/port/port_config.c */
	PA_CONFIG_ORDER_PIPELINE = 20,	/**< lib/pipeline/pipeline_config.c */
	PA_CONFIG_ORDER_ACL = 30,	/**< lib/acl/acl_config.c */
	PA_CONFIG_ORDER_LB = 40,	/**< lib/lb/lb_config.c */
	PA_CONFIG_ORDER_ANNOUNCE = 45,	/**< lib/announce/announce_config.c */
	PA_CONFIG_ORDER_PROTECT = 47,	/**< lib/protect/protect_config.c */
	PA_CONFIG_ORDER_METRICS = 50,	/**< lib/config/config.c */
	PA_CONFIG_ORDER_RPC = 60,	/**< lib/config/config.c */
};

/** Add @p s to the registry (once; a second section with the same key is
 * ignored). Before main(), from PA_CONFIG_SECTION_REGISTER(). */
void pa_config_section_register(struct pa_config_section *s);

/** Register section @p sec (a static struct pa_config_section). */
#define PA_CONFIG_SECTION_REGISTER(sec)					\
	static void __attribute__((constructor))			\
	pa_config_section_register_##sec(void)				\
	{								\
		pa_config_section_register(&(sec));			\
	}

/**
 * The JSON Schema of a whole configuration document: an object whose
 * keys are the registered sections (no other key), each with its
 * section's schema. What config_validate's params are (rpc.discover).
 * @return new reference, NULL when out of memory.
 */
json_t *pa_config_schema(void);

/**
 * The OpenRPC (1.2.x) document of every registered RPC method, as
 * rpc.discover returns it and docs/openrpc.json holds it: each method's
 * params by name with their JSON Schema (from the field tables its
 * decoder runs, struct pa_rpc_schema), its result and its errors.
 * @return new reference, NULL when out of memory.
 */
json_t *pa_config_openrpc(void);

/* Serialization helpers of the sections: new JSON strings (NULL when out
 * of memory, which json_object_set_new() then reports). */
json_t *pa_config_ip_json(const struct pa_ip_addr *a);
json_t *pa_config_prefix_json(const struct pa_ip_prefix *p);
json_t *pa_config_mac_json(const uint8_t mac[6]);

/**
 * Write @p cfg (as pa_config_to_json() gives it, indented) to @p path
 * atomically: a temporary file beside it, written and fsync'ed, renamed
 * over @p path, then the directory fsync'ed. A reader, or a crash at any
 * moment, sees the old file or the new one, whole. An existing file keeps
 * its mode (and owner, where permitted); a new one is 0640. A symbolic
 * link is followed (its target is replaced). On failure nothing but a
 * possibly orphaned temporary file (after a crash only) is left behind.
 * @param err  receives the reason, naming the file
 * @return 0 or -errno.
 */
int pa_config_save_file(const struct pa_config *cfg, const char *path,
		char *err, size_t err_len);

/** A writer with pa_config_save_file()'s contract. */
typedef int (*pa_config_saver_t)(const struct pa_config *cfg,
		const char *path, char *err, size_t err_len);

/**
 * The context of config_get, config_save and config_validate (RPC
 * subsystem "config", bound by the application with
 * pa_rpc_bind("config", ctx)). Owned by the application; everything in it
 * is borrowed and must outlive the binding. Control thread only.
 */
struct pa_config_rpc_ctx {
	/** What config_get reports and config_save writes (kept in step by
	 * the acl_* and lb_* methods). */
	const struct pa_config *running;
	/** The file the daemon was started from: where config_save writes
	 * without a path (NULL: none, config_save then needs a path). */
	const char *path;
	/** How config_validate loads a document: the options the daemon's
	 * own configuration was loaded with. */
	struct pa_config_opts opts;
	/** The writer behind config_save (NULL: pa_config_save_file); for
	 * fuzzers and tests that must not write where a request says. */
	pa_config_saver_t saver;
};

#endif /* PA_CONFIG_H */
