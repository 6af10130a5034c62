/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef PA_LB_H
#define PA_LB_H

/**
 * @file
 * The load balancer: L4 services (VIP, port, protocol) over weighted
 * backends, the sticky flow table and the forwarding modes.
 *
 * A permitted packet whose (destination address, destination port,
 * protocol) is a service's is load-balanced: its flow (the 5-tuple, in the
 * direction client to VIP) is looked up in the flow table of the lcore
 * that runs it (flows are dispatched by hash, so each lcore owns its table
 * and takes no lock); a new flow gets a backend from the service's
 * scheduler and is remembered. The packet is then sent to the backend by
 * the service's forwarding mode:
 *
 *  - ipip: an outer IPv4 header (source lb.local_addr) or, for an IPv6
 *    service, an outer IPv6 header (source lb.local_addr6) is put in front
 *    of the packet, which is otherwise left byte for byte as it came;
 *  - nat: destination address and port become the backend's, checksums
 *    are updated incrementally; the backend's replies that come back
 *    through the appliance are found in a shared reply table and get the
 *    VIP and service port back as their source;
 *  - dsr: only the destination MAC changes, to the backend's.
 *
 * Every forwarded packet leaves through its input port's peer (the input
 * port itself when the port has no peer: one-armed). Packets the
 * appliance addresses to an IP next hop (ipip, nat both ways) and dsr
 * packets get the output port's MAC as source; their destination MAC is,
 * first that applies: the backend's "mac"; the backend's MAC as the
 * neighbour subsystem resolved it on that output port (a backend on a
 * connected subnet, pa_lb_neigh_set()); the output port's gateway_mac or
 * its resolved "gateway" (pa_lb_gateway_set()); the source MAC the packet
 * arrived with (the neighbour that handed it over: the natural next hop
 * of a one-armed appliance). A packet whose backend or gateway the
 * neighbour subsystem wants but has not resolved yet takes the next
 * choice and is counted (lb.neigh_unresolved).
 *
 * Fragments (PA_PKT_F_FRAG) carry ports in their first fragment only, so
 * they are balanced without state on addresses and protocol: every
 * fragment to a VIP and protocol goes to the service of that VIP and
 * protocol with the lowest port, to the backend its Maglev table gives
 * for the fragment's flow hash (addresses and protocol only).
 *
 * Schedulers (a table of function pointers): maglev (NSDI'16, weighted;
 * the table is a pure function of the set of usable backends, so
 * appliances with the same configuration choose alike), rr, wrr (walks
 * the Maglev table, whose shares follow the weights) and lc (weighted
 * least connections over the flows of the choosing lcore's table). When
 * the flow table is full a new flow gets the Maglev choice and is counted
 * (flow_table_full), never dropped.
 *
 * A flow keeps its backend while that backend is up or draining; a
 * backend set down or deleted loses its flows to a new choice at their
 * next packet. A draining backend gets no new flows.
 *
 * Concurrency: the control thread mutates (pa_lb_service_add() and
 * friends, which hold an internal mutex), and so does the health checks'
 * thread (pa_lb_backend_health(), pa_lb_backend_agent(),
 * pa_lb_health_publish(): lib/health). Each change builds new
 * read-only service objects, publishes them, waits for the data path's
 * quiescence (rte_rcu_qsbr) and frees the old ones; a call returns once
 * its change is live. The data path (pa_lb_process(), pa_lb_poll()) takes
 * no lock.
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>
#include <rte_rcu_qsbr.h>

#include <jansson.h>

#include "pa_config.h"
#include "pa_lb_config.h"
#include "pa_net.h"
#include "pa_pkt.h"
#include "pa_port.h"

#define PA_LB_MAX_SERVICES	1024	/**< services at once */
#define PA_LB_MAX_BACKENDS	16384	/**< backends of all services */
#define PA_LB_MAX_SVC_BACKENDS	4096	/**< backends of one service */
#define PA_LB_MIN_LCORE_FLOWS	1024	/**< least flow table per lcore */
#define PA_LB_MAX_LCORES	64	/**< data-path lcores */

/** Per-packet outcome of pa_lb_process(). */
enum pa_lb_verdict {
	PA_LB_V_FORWARD = 0,	/**< send (meta out_port set) */
	PA_LB_V_NO_BACKEND,	/**< service without a usable backend */
	PA_LB_V_MTU,		/**< encapsulated packet over the port MTU */
	PA_LB_V_NO_ROOM,	/**< no headroom for the outer header */
	/** too big for the tunnel (counted as dropped, reason mtu) and
	 * made into the ICMP error its source gets: send it (out_port
	 * set; a packet the data path generated) */
	PA_LB_V_MTU_ICMP,
	PA_LB_V_ICMP_BAD_QUOTE,	/**< ICMP error to a VIP quoting garbage */
	PA_LB_V_ICMP_NO_SERVICE, /**< ... quoting no service's flow */
	/** a nat backend's reply that matches no flow and that the Maglev
	 * choices of several nat services explain (lb_nat_stateless()) */
	PA_LB_V_NAT_AMBIGUOUS,
	/** a new flow over its source prefix's token bucket
	 * (protect.src_new_flows) */
	PA_LB_V_SRC_LIMIT,
	/** a new flow of a service that has max_flows live flows */
	PA_LB_V_MAX_FLOWS,
	/** a new fnat flow, no pool port free for its backend's family */
	PA_LB_V_FNAT_NO_PORT,
	/** a new fnat flow, no room in the flow table */
	PA_LB_V_FNAT_TABLE_FULL,
	/** a fragment to an fnat service (no reassembly) */
	PA_LB_V_FNAT_FRAGMENT,
	/** to a pool address and port, matching no flow */
	PA_LB_V_FNAT_UNMATCHED,
	/** an fnat packet that cannot be translated to its backend's
	 * family (IPv4 options, IPv6 extension headers, no room) or that
	 * the PROXY header does not fit */
	PA_LB_V_FNAT_XLAT,
};

struct pa_lb;

struct pa_lb_opts {
	struct rte_rcu_qsbr *rcu;	/**< the data path's QSBR variable */
	unsigned int n_lcores;		/**< data-path lcores (lcore_idx range) */
	/** Which of them run the lb stage (n_lcores entries; NULL: all):
	 * each gets a flow table, an equal share of flow_table.size. */
	const bool *runs_lb;
	int socket;			/**< NUMA socket for the tables */
	/** The running configuration: services are loaded from its lb
	 * section, flow_table sizes the flow tables; from its protect
	 * section the LB takes syn_timeout_s, syn_defer and src_new_flows
	 * (a pa_protect_src limiter per lb lcore, in flow_table_bytes).
	 * Borrowed. */
	const struct pa_config *cfg;
	/** The ports (MAC, MTU, peer); NULL in unit tests (then no port
	 * MAC or MTU: MACs are left alone and no MTU check is made). */
	const struct pa_port_set *ports;
};

/**
 * Create the load balancer and load the services of @p o->cfg.
 * @return the LB, or NULL with the reason in @p err.
 */
struct pa_lb *pa_lb_create(const struct pa_lb_opts *o, char *err,
		size_t err_len);

/** Free everything (data path stopped). NULL is fine. */
void pa_lb_destroy(struct pa_lb *lb);

/**
 * The same on the way out of the process, before rte_eal_cleanup(): the
 * flow tables and the NAT reply table (rte_hash and rte_malloc memory)
 * are left to the EAL's teardown, everything else is freed. rte_free()
 * zeroes what it frees, and the default tables (1M flows an lb lcore)
 * are hundreds of MB, mostly never touched: zeroing them faulted in
 * every page and took most of a daemon's stop (0.5 s of a 1-packet
 * replay, minutes with 6 GB of tables). NULL is fine.
 */
void pa_lb_destroy_at_exit(struct pa_lb *lb);

/* Control functions: control thread; 0 or -errno with the reason in
 * @p err (-EEXIST, -ENOENT, -EINVAL, -ENOSPC, -ENOMEM). Each returns once
 * the change is live. */

/** Add a service (backends included). */
int pa_lb_service_add(struct pa_lb *lb, const struct pa_config_service *svc,
		char *err, size_t err_len);

/** Delete a service by name; its flows are forgotten. */
int pa_lb_service_delete(struct pa_lb *lb, const char *name, char *err,
		size_t err_len);

/** Add a backend to a service (checked as the loader checks one). */
int pa_lb_backend_add(struct pa_lb *lb, const char *service,
		const struct pa_config_backend *be, char *err, size_t err_len);

/** Delete a backend; its flows move to new choices. */
int pa_lb_backend_delete(struct pa_lb *lb, const char *service,
		const struct pa_ip_addr *addr, char *err, size_t err_len);

/** Change a backend's weight and/or state (NULL: keep). */
int pa_lb_backend_set(struct pa_lb *lb, const char *service,
		const struct pa_ip_addr *addr, const uint32_t *weight,
		const enum pa_lb_state *state, char *err, size_t err_len);

/* ---- Health (lib/health reports here) ---- */

/** A backend's health as the checks say (its admin "state" aside). */
enum pa_lb_health {
	PA_LB_HEALTH_UNKNOWN = 0,	/**< no verdict yet, or no checks:
					 * counts as up */
	PA_LB_HEALTH_UP,
	PA_LB_HEALTH_DOWN,		/**< out of the table (unless panic) */
};

/** "unknown", "up", "down". */
const char *pa_lb_health_name(enum pa_lb_health h);

/** One probe's outcome as lib/health reports it. */
struct pa_lb_health_report {
	enum pa_lb_health health;
	const char *last;		/**< the last probe's result ("ok",
					 * "refused", ...; a static string) */
	uint16_t code;			/**< http: the last status code */
	uint32_t latency_us;		/**< the last probe */
	uint64_t probes;		/**< probes of this backend */
	uint64_t failures;		/**< ... that failed */
};

/**
 * Record what the checks say of the backend in counter slot @p cslot
 * (pa_lb_health_targets()) whose uid is @p uid. A change of health that
 * changes the backends usable for new flows marks the service for a new
 * table, which pa_lb_health_publish() builds and publishes (RCU, as
 * pa_lb_backend_set() does; any other change of the service publishes
 * it too); the backend's flows then move on their next packet, as when
 * its state is set "down". With the service's health.grace_ms > 0 a
 * backend going down drains first: out of the table at once, its flows
 * stay, for grace_ms from the pa_lb_health_publish() that follows; then
 * (still down) its flows move. Back up within the grace, nothing moved.
 * The agent's "down" (pa_lb_backend_agent()) is a "down" of the checks
 * in this. When every backend of the service that its
 * state allows is down by health, the service is in panic: its table
 * holds all of them. Logs one line per change of health and of panic.
 * The health checks' thread (any thread: under the LB's lock).
 * @return 1 (a new table is due), 0 (recorded), -ENOENT (no such
 *         backend any more: a stale report).
 */
int pa_lb_backend_health(struct pa_lb *lb, uint32_t cslot, uint32_t uid,
		const struct pa_lb_health_report *r);

/** What a backend's agent said (agent checks, "agent_port"). */
enum pa_lb_agent_state {
	PA_LB_AGENT_NONE = 0,		/**< nothing, or "up" */
	PA_LB_AGENT_DRAIN,		/**< keeps its flows, takes no new */
	PA_LB_AGENT_DOWN,		/**< out, as down by health */
};

/**
 * Record what the agent of the backend in counter slot @p cslot (uid
 * @p uid) says: @p pct, the weight percentage in force (0..100, already
 * quantized and smoothed by lib/health; -1: none, full weight), and
 * @p st. The backend's effective weight becomes weight x pct / 100
 * (rounded, at least 1 unless pct is 0); a change of it or of the state
 * marks the service for a new table (pa_lb_health_publish()). The
 * health checks' thread (any thread: under the LB's lock). @return 1 (a new table is due), 0 (nothing changed) or
 * -ENOENT (stale).
 */
int pa_lb_backend_agent(struct pa_lb *lb, uint32_t cslot, uint32_t uid,
		int pct, enum pa_lb_agent_state st);

/** Least time between two tables of one service published for health
 * or agent changes: a thousand backends failing one after the other cost
 * ten builds a second, not a thousand. */
#define PA_LB_HEALTH_PUBLISH_GAP_MS	100

/**
 * Build and publish the table of every service with health or agent
 * changes pending whose last such publication is PA_LB_HEALTH_PUBLISH_GAP_MS
 * old (@p now_ms: a monotonic clock in ms, the same at every call;
 * CLOCK_MONOTONIC, pa_clock_ms(), for lb_service_list to show what is
 * left of a grace exactly). Starts the graces (health.grace_ms) of the
 * backends reported down since the last call, and ends those due: their
 * services get a new table, their flows move. Cheap when nothing is
 * pending or due. The health checks' thread (under the LB's lock: an
 * RPC that needs it waits for the build, as behind another RPC).
 * @return ms until the next pending table or grace end is due (call
 *         again then, reports or not), or -1 when none is.
 */
int pa_lb_health_publish(struct pa_lb *lb, uint64_t now_ms);

/** A backend to check (pa_lb_health_targets()). */
struct pa_lb_health_target {
	uint32_t cslot;			/**< its counter slot (stable) */
	uint32_t uid;			/**< its uid (changes when re-added) */
	const char *service;		/**< the service's name */
	enum pa_lb_forward forward;
	struct pa_ip_addr addr;		/**< the backend's address */
	uint16_t port;			/**< the backend's port (its own, or
					 * the service's) */
	const struct pa_config_health *health;	/**< the service's checks */
};

/**
 * Call @p fn for every backend of every service with checks ("health"
 * with a type other than "none"), under the LB's lock (@p fn must not
 * call the LB). @return backends listed.
 */
unsigned int pa_lb_health_targets(struct pa_lb *lb,
		void (*fn)(void *arg, const struct pa_lb_health_target *t),
		void *arg);

/** A service's configuration (a deep copy into @p out; release with
 * pa_lb_config_service_clear()). @return 0 or -ENOENT / -ENOMEM. */
int pa_lb_service_get(const struct pa_lb *lb, const char *name,
		struct pa_config_service *out);

/** Counters of one backend in a struct pa_lb_service_snapshot. */
struct pa_lb_backend_snapshot {
	uint64_t flows;			/**< active flows in the flow tables */
	uint64_t packets;		/**< balanced to it since it was added */
	uint64_t bytes;			/**< ... their bytes */
	enum pa_lb_health health;	/**< what the checks say */
	const char *health_last;	/**< the last probe ("none" before) */
	uint16_t health_code;		/**< http: its status code */
	uint32_t health_latency_us;	/**< its latency */
	uint64_t health_probes;
	uint64_t health_failures;
	int health_agent_pct;		/**< the agent's weight %, -1: none */
	enum pa_lb_agent_state health_agent_state;
	uint32_t health_weight;		/**< effective weight: weight x the
					 * agent's percentage */
	/** Down by the checks and still in its grace (health.grace_ms:
	 * out of the table, its flows stay): the ms left; -1 otherwise */
	int64_t health_grace_ms_left;
};

/** One service in a struct pa_lb_snapshot. */
struct pa_lb_service_snapshot {
	/** Its configuration, backends in list order (owned: released by
	 * pa_lb_snapshot_free()). */
	struct pa_config_service cfg;
	/** Counters of cfg.backends[i], [cfg.n_backends] (owned). */
	struct pa_lb_backend_snapshot *backends;
	uint64_t flows;			/**< sum of its backends' flows */
	uint64_t usable_backends;	/**< backends that take new flows */
	double build_ms;		/**< last build of its tables, ms */
	bool panic;			/**< every backend down by health */
	uint64_t panics;		/**< times it went into panic */
	uint64_t health_down;		/**< backends down by health */
	uint64_t table_hash;		/**< FNV-1a of the Maglev table as
					 * backend addresses: equal on two
					 * appliances that choose alike */
};

/**
 * The load balancer's state and counters at one moment: what stats_get
 * ("lb"), lb_service_list's counters, the Prometheus exporter and
 * telemetry report. Counters count since start (the lcores' sums).
 */
struct pa_lb_snapshot {
	/** stats reads (no services) that found a table build holding the
	 * LB lock past LB_STATS_WAIT_MS: their counters are live, their
	 * counts of services, backends, health and builds those of the
	 * snapshot before */
	uint64_t stats_lock_busy;
	uint64_t services;		/**< services */
	uint64_t backends;		/**< backends of all services */
	uint64_t flows;			/**< active flows: created - expired -
					 * backend_gone - rescheduled */
	uint64_t flow_table_capacity;	/**< flow table entries, all lcores */
	uint64_t flow_index_slots;	/**< slots of their indexes now (they
					 * grow and shrink with the flows) */
	uint64_t flow_table_bytes;	/**< heap the flow tables take */
	uint64_t balanced;		/**< packets sent to a backend */
	uint64_t flows_created;
	uint64_t flows_expired;
	uint64_t flows_rescheduled;	/**< moved: their backend went down */
	uint64_t flows_backend_gone;	/**< removed: backend deleted/down */
	uint64_t flow_table_full;	/**< balanced without a flow entry */
	uint64_t fragments;		/**< IP fragments seen */
	uint64_t nat_replies;		/**< NAT replies rewritten to the VIP */
	uint64_t nat_table_full;	/**< NAT flows without a reply entry */
	/** NAT replies matching no flow here, rewritten to the VIP of the
	 * one nat service whose Maglev choice for the client is their
	 * backend (a flow another appliance of the fleet holds) */
	uint64_t nat_reply_stateless;
	/** replies from a nat backend matching no flow, that no nat
	 * service's Maglev choice explains: passed unchanged */
	uint64_t nat_reply_unmatched;
	/** ... that several explain: dropped (reason nat_ambiguous) */
	uint64_t nat_reply_ambiguous;
	uint64_t no_backend;		/**< packets for a service without a
					 * usable backend */
	uint64_t mtu;			/**< too big once encapsulated */
	uint64_t no_room;		/**< no headroom for the tunnel header */
	uint64_t neigh_unresolved;	/**< sent with a fallback MAC */
	uint64_t icmp_echo_replies;	/**< ICMP echo requests to VIPs answered */
	uint64_t icmp_errors_forwarded;	/**< ICMP errors quoting a VIP flow, sent to the flow's backend */
	uint64_t icmp_bad_quote;	/**< ICMP errors to a VIP dropped: the quote is garbage */
	uint64_t icmp_no_service;	/**< ICMP errors to a VIP dropped: the quote names no service's flow */
	uint64_t icmp_too_big_sent;	/**< ICMP fragmentation needed / packet too big sent for packets too big for the tunnel */
	uint64_t icmp_rate_limited;	/**< ICMP too-big messages not sent: over the rate */
	uint64_t mss_clamped;	/**< TCP SYNs whose MSS option was lowered to the service's mss_clamp */
	/** most flow entries in use at once: the sum of each lb lcore's
	 * peak (the appliance's peak with one lb lcore, an upper bound of
	 * it with several) */
	uint64_t flows_peak;
	uint64_t syn_stateless;		/**< SYNs balanced by Maglev without a
					 * flow entry (protect.syn_defer) */
	uint64_t src_limited;		/**< new flows over their source
					 * prefix's bucket (drops.src_limit) */
	uint64_t max_flows_dropped;	/**< new flows of a service at its
					 * max_flows (drops.max_flows) */
	uint64_t flows_recovered;	/**< new flows without SYN sent to the
					 * backend an earlier table chose, not
					 * the current choice
					 * (lb.table_history_s) */
	/** full NAT (lb.fnat): the lcores' counters, and the pool's
	 * addresses with their ports in use */
	struct pa_lb_fnat_snapshot {
		uint64_t flows;		/**< active fnat flows (ports held) */
		uint64_t flows_created;	/**< fnat flows made */
		uint64_t no_port;	/**< new flows without a free port */
		uint64_t table_full;	/**< ... without flow table room */
		uint64_t fragments;	/**< fragments to fnat services */
		uint64_t replies;	/**< backend replies translated back */
		uint64_t reply_unmatched; /**< to a pool port, no flow's */
		uint64_t xlat_failed;	/**< not translatable: dropped */
		uint64_t proxy_failed;	/**< no room for the PROXY header,
					 * or over the MTU with it: dropped */
		uint64_t time_wait_skips; /**< ports passed over: in their
					 * time_wait_s for the backend */
		uint32_t ports;		/**< ports of each address */
		unsigned int n_addrs;
		struct {
			struct pa_ip_addr addr;
			uint64_t in_use;
		} addr[PA_CONFIG_FNAT_MAX_ADDRS];
	} fnat;
	uint64_t health_down;		/**< backends down by health */
	uint64_t health_grace;		/**< ... still in their grace */
	uint64_t panic_services;	/**< services in panic now */
	uint64_t panics;		/**< times a service went into panic */
	uint64_t version;		/**< bumped by every change */
	uint64_t builds;		/**< service table builds */
	double build_ms;		/**< the last build, ms */
	double build_ms_max;		/**< the longest build, ms */
	/** Services in slot order, only with PA_LB_SNAPSHOT_SERVICES (else
	 * 0 and NULL); owned: pa_lb_snapshot_free(). */
	unsigned int n_services;
	struct pa_lb_service_snapshot *svc;
};

/** pa_lb_snapshot() flag: fill the services and backends too. */
#define PA_LB_SNAPSHOT_SERVICES	0x1u

/**
 * Fill @p s (and with PA_LB_SNAPSHOT_SERVICES in @p flags, every service
 * and backend) under the LB's lock. Control thread.
 * @return 0, or -ENOMEM (@p s then holds nothing to free).
 */
int pa_lb_snapshot(struct pa_lb *lb, unsigned int flags,
		struct pa_lb_snapshot *s);

/** Free what a snapshot holds; NULL ignored. */
void pa_lb_snapshot_free(struct pa_lb_snapshot *s);

/** The "lb" object of stats_get rendered from a snapshot.
 * @return new reference, or NULL on allocation failure. */
json_t *pa_lb_snapshot_json(const struct pa_lb_snapshot *s);

/** One service of lb_service_list rendered from its snapshot: the
 * file's schema, each backend with "flows", "packets" and "bytes", and
 * "flows", "usable_backends", "build_ms".
 * @return new reference, or NULL on allocation failure. */
json_t *pa_lb_service_snapshot_json(const struct pa_lb_service_snapshot *v);

/** lb_service_list rendered from a snapshot taken with
 * PA_LB_SNAPSHOT_SERVICES (see pa_lb_services_json()).
 * @return new reference, or NULL on allocation failure. */
json_t *pa_lb_snapshot_services_json(const struct pa_lb_snapshot *s);

/**
 * lb_service_list: every service in the file's schema, each backend with
 * "flows" (active flows in the flow tables), "packets" and "bytes"
 * (balanced to it since it was added); each service with "flows",
 * "usable_backends" and "build_ms".
 */
json_t *pa_lb_services_json(struct pa_lb *lb);

/**
 * lb_service_list as JSON text: the same text as json_dumps(
 * pa_lb_services_json(), JSON_COMPACT), without a jansson tree per
 * backend (10,000 backends: a tenth of the time).
 * @return a string to free(), its length in @p len (may be NULL); NULL on
 *         allocation failure.
 */
char *pa_lb_services_text(struct pa_lb *lb, size_t *len);

/** pa_lb_services_text() from a snapshot taken with
 * PA_LB_SNAPSHOT_SERVICES. */
char *pa_lb_snapshot_services_text(const struct pa_lb_snapshot *s,
		size_t *len);

/** The "lb" object of stats_get. */
json_t *pa_lb_stats_json(struct pa_lb *lb);

/** Copy the running services into @p out (replacing what it held), so
 * that config_get and config_save follow runtime changes. */
int pa_lb_export(const struct pa_lb *lb, struct pa_config_lb *out);

/** Result of pa_lb_trace(). */
struct pa_lb_trace_result {
	bool service_found;
	char service[PA_CONFIG_NAME_MAX];
	bool backend_found;
	struct pa_ip_addr backend;
	bool existing_flow;		/**< from a flow table entry */
	const char *reason;		/**< why no backend ("no_backend"...) */
	/** A reply from a nat service's backend (no service of its own):
	 * "flow" (its NAT reply entry), "maglev" (the one service whose
	 * choice for the client is this backend), "ambiguous" (several:
	 * dropped), "unmatched" (none: forwarded unchanged); NULL when the
	 * packet is no such reply. */
	const char *nat_reply;
	char nat_service[PA_CONFIG_NAME_MAX];	/**< "flow", "maglev" */
	struct pa_ip_addr nat_vip;		/**< its new source */
	uint16_t nat_vport;			/**< and port (host order) */
	/** A packet of an fnat service: the pool address and port of its
	 * flow (fnat_held), or, for a new flow, the pool addresses of the
	 * backend's family it would take one of (fnat_port 0). */
	bool fnat;
	bool fnat_held;
	uint16_t fnat_port;			/**< host order; 0: none yet */
	unsigned int fnat_n_addrs;		/**< in fnat_addrs */
	struct pa_ip_addr fnat_addrs[PA_CONFIG_FNAT_MAX_ADDRS];
	/** A TCP/UDP packet to a pool address and port of the pool's range:
	 * a backend's reply to an fnat flow. "flow" (the flow that holds
	 * that port, from that backend) or "unmatched" (none: dropped as
	 * fnat_unmatched); NULL when the packet is no such reply. */
	const char *fnat_reply;
	char fnat_service[PA_CONFIG_NAME_MAX];	/**< "flow": its service */
	struct pa_ip_addr fnat_vip;		/**< the reply's new source */
	uint16_t fnat_vport;			/**< and port (host order) */
	struct pa_ip_addr fnat_client;		/**< its new destination */
	uint16_t fnat_cport;			/**< and port (host order) */
};

/**
 * What the lb stage would do with a packet of this 5-tuple: the service,
 * and the backend of its existing flow (asked of the lcores that own the
 * flow tables, read-only) or else the scheduler's choice for a new flow
 * (the Maglev choice for the stateless cases and for rr/wrr/lc, whose
 * next choice depends on the lcore); for a packet of no service from a
 * nat backend's port, how its reply translation goes (nat_reply); for an
 * fnat service, the flow's pool address and port (fnat), and for a
 * packet to a pool address and port, the flow it is a reply of
 * (fnat_reply). @p fragment: as a fragment.
 * @return 0, -EBUSY when an lcore did not answer within 200 ms, or
 *         -EINVAL.
 */
int pa_lb_trace(struct pa_lb *lb, const struct pa_flow_key *key,
		bool fragment, struct pa_lb_trace_result *res);

/**
 * Data path: balance a burst of permitted packets. Writes a verdict per
 * packet; forwarded packets may have been rewritten or encapsulated and
 * have their out_port set. @p now is the lcore's TSC. A packet the
 * parser left without its flow hash (PA_PKT_F_HASH_LATER) gets it here
 * (pa_pkt_hash_later()) when it is one a service balances; the others
 * keep the flag (nothing after the lb stage reads their hash).
 */
void pa_lb_process(struct pa_lb *lb, unsigned int lcore_idx,
		struct rte_mbuf **pkts, uint16_t n, uint64_t now,
		uint8_t *verdicts);

/**
 * Data path housekeeping, once per loop of each lcore that runs the lb
 * stage: ages out a few flow table entries (more when @p idle) and
 * answers pa_lb_trace()'s questions about its table. A loop may leave
 * it out while pa_lb_poll_due() is false (pa_lb_inline.h).
 */
void pa_lb_poll(struct pa_lb *lb, unsigned int lcore_idx, uint64_t now,
		bool idle);

/** The lcore leaves the data path: its table is no longer answered by
 * it (pa_lb_trace() reads it directly). */
void pa_lb_lcore_exit(struct pa_lb *lb, unsigned int lcore_idx);

/* pa_lb_active(): pa_lb_inline.h */

/* ---- Neighbours (lib/neigh publishes resolved MACs here) ---- */

/**
 * Next hop of backend @p addr (every service's backend of that address
 * without a configured "mac") on output port @p port_id: @p mac, or,
 * with @p mac NULL, unresolved (@p wanted: the neighbour subsystem is
 * resolving it, packets that fall back are counted; false: not its
 * business). One atomic store per backend; the data path reads it with
 * no lock. Control thread.
 * @return backends updated.
 */
unsigned int pa_lb_neigh_set(struct pa_lb *lb, const struct pa_ip_addr *addr,
		uint16_t port_id, const uint8_t *mac, bool wanted);

/** The resolved MAC of port @p port_id's "gateway" of @p family (AF_INET
 * or AF_INET6: a dual-stack port has one next hop per family; NULL:
 * unresolved; @p wanted as above). gateway_mac, when configured, wins. */
void pa_lb_gateway_set(struct pa_lb *lb, uint16_t port_id, int family,
		const uint8_t *mac, bool wanted);

/**
 * The VIPs (each once) and the addresses of backends without a "mac"
 * (each once) of the running services, in arrays the caller frees.
 * @return 0 or -ENOMEM.
 */
int pa_lb_addresses(struct pa_lb *lb, struct pa_ip_addr **vips,
		unsigned int *n_vips, struct pa_ip_addr **backends,
		unsigned int *n_backends);

/** A number that changes whenever services or backends are added,
 * deleted or set (not when health checks change a table). */
uint64_t pa_lb_config_version(const struct pa_lb *lb);

/** A number that changes whenever services or backends change. */
uint64_t pa_lb_version(const struct pa_lb *lb);

/* ---- Maglev (pure functions, exported for tests and tools) ---- */

/** One backend as the Maglev table sees it. */
struct pa_lb_maglev_backend {
	const uint8_t *key;		/**< the backend's address bytes */
	uint8_t key_len;		/**< 4 or 16 */
	uint32_t weight;		/**< > 0 */
};

/** The two permutation hashes of a backend key (offset: seed 0, skip:
 * seed 1); a 64-bit FNV-1a folded by the splitmix64 finaliser. */
uint64_t pa_lb_maglev_hash(const uint8_t *key, unsigned int len,
		unsigned int seed);

/**
 * Fill a Maglev lookup table of @p m entries (a prime) with indexes into
 * @p be (NSDI'16 section 3.4; weights as in Katran: each round backend i
 * takes weight_i / max_weight turns, carrying the remainder). The result
 * depends only on the backends as a set: they are taken in the order of
 * their keys, whatever order @p be has.
 * @param scratch  at least pa_lb_maglev_scratch_size(n) bytes
 * @return 0, or -EINVAL (n == 0, n > m, or a zero weight).
 */
int pa_lb_maglev_build(const struct pa_lb_maglev_backend *be, unsigned int n,
		uint32_t m, uint16_t *table, void *scratch);

size_t pa_lb_maglev_scratch_size(unsigned int n);

/* ---- RPC ---- */

/**
 * The context of the lb_* methods (RPC subsystem "lb", bound by the
 * application with pa_rpc_bind("lb", ctx)): the LB they change and the
 * running configuration they keep in step with it (config_get,
 * config_save). Owned by the application; both pointers are borrowed.
 */
struct pa_lb_rpc_ctx {
	struct pa_lb *lb;
	struct pa_config *running;	/**< may be NULL: nothing kept in step */
};

extern int pa_lb_logtype;

#include "pa_lb_inline.h"

#endif /* PA_LB_H */
