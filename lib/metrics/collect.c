/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pktaccel_* metrics from the views the RPC methods answer with
 * (stats_get, pipeline_get, acl_rule_list, lb_service_list), so that a
 * scrape and an RPC always agree. Names and meanings: docs/metrics.md.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_version.h>

#include <jansson.h>

#include "pa_acl.h"
#include "pa_lb.h"
#include "pa_metrics.h"
#include "pa_pipeline.h"
#include "pa_rpc.h"
#include "pa_stats.h"

#define MAX_LABELS	6

/* A label set under construction. */
struct labels {
	unsigned int n;
	const char *k[MAX_LABELS];
	const char *v[MAX_LABELS];
};

struct ctx {
	struct pa_metrics *m;
	int rc;			/* first -ENOMEM */
};

/* How a JSON member becomes a sample. */
struct field {
	const char *key;
	const char *name;
	enum pa_metrics_type type;
	double scale;		/* 0: an integer, exact; else value / scale */
	const char *help;
};

#define C PA_METRICS_COUNTER
#define G PA_METRICS_GAUGE
#define MS 1000.0		/* milliseconds per second */

static struct labels
lbl(unsigned int n, ...)
{
	struct labels l = { 0 };
	va_list ap;
	unsigned int i;

	va_start(ap, n);
	for (i = 0; i < n && i < MAX_LABELS; i++) {
		l.k[i] = va_arg(ap, const char *);
		l.v[i] = va_arg(ap, const char *);
	}
	va_end(ap);
	l.n = i;
	return l;
}

static void
note(struct ctx *c, int rc)
{
	/* -EINVAL is a bug in the tables below (pinned by the unit test);
	 * only running out of memory fails a scrape */
	if (rc == -ENOMEM && c->rc == 0)
		c->rc = rc;
}

static void
emit_u(struct ctx *c, enum pa_metrics_type type, const char *name,
		const char *help, uint64_t v, const struct labels *l)
{
	note(c, pa_metrics_add_u64_v(c->m, type, name, help, v, l->n, l->k,
		l->v));
}

static void
emit_f(struct ctx *c, enum pa_metrics_type type, const char *name,
		const char *help, double v, const struct labels *l)
{
	switch (l->n) {
	case 0:
		note(c, pa_metrics_add_f64(c->m, type, name, help, v, NULL));
		break;
	case 1:
		note(c, pa_metrics_add_f64(c->m, type, name, help, v,
			l->k[0], l->v[0], NULL));
		break;
	default:
		note(c, pa_metrics_add_f64(c->m, type, name, help, v,
			l->k[0], l->v[0], l->k[1], l->v[1], NULL));
		break;
	}
}

/* Non-negative integer member, or false. */
static bool
get_u64(const json_t *o, const char *key, uint64_t *v)
{
	const json_t *j = json_object_get(o, key);

	if (!json_is_integer(j) || json_integer_value(j) < 0)
		return false;
	*v = (uint64_t)json_integer_value(j);
	return true;
}

static const char *
get_str(const json_t *o, const char *key, const char *dflt)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s != NULL ? s : dflt;
}

static void
emit_fields(struct ctx *c, const json_t *o, const struct field *f,
		unsigned int n, const struct labels *l)
{
	const json_t *j;
	unsigned int i;
	uint64_t u;

	for (i = 0; i < n; i++) {
		j = json_object_get(o, f[i].key);
		if (j == NULL)
			continue;
		if (f[i].scale == 0) {
			if (get_u64(o, f[i].key, &u))
				emit_u(c, f[i].type, f[i].name, f[i].help, u, l);
		} else if (json_is_number(j)) {
			emit_f(c, f[i].type, f[i].name, f[i].help,
				json_number_value(j) / f[i].scale, l);
		}
	}
}

/* ------------------------------------------------------------------ */

static const struct field port_fields[] = {
	{ "rx_packets", "pktaccel_port_rx_packets_total", C, 0,
	  "Packets received by the port (rte_eth_stats ipackets)." },
	{ "tx_packets", "pktaccel_port_tx_packets_total", C, 0,
	  "Packets sent by the port (rte_eth_stats opackets)." },
	{ "rx_bytes", "pktaccel_port_rx_bytes_total", C, 0,
	  "Bytes received by the port." },
	{ "tx_bytes", "pktaccel_port_tx_bytes_total", C, 0,
	  "Bytes sent by the port." },
	{ "rx_missed", "pktaccel_port_rx_missed_total", C, 0,
	  "Packets the NIC dropped for lack of RX descriptors (imissed)." },
	{ "rx_errors", "pktaccel_port_rx_errors_total", C, 0,
	  "Erroneous received packets (ierrors)." },
	{ "tx_errors", "pktaccel_port_tx_errors_total", C, 0,
	  "Packets the port failed to send (oerrors)." },
	{ "rx_nombuf", "pktaccel_port_rx_nombuf_total", C, 0,
	  "RX mbuf allocation failures." },
	{ "mbufs_in_use", "pktaccel_port_mbufs_in_use", G, 0,
	  "Mbufs taken from the port's pool." },
	{ "pool_size", "pktaccel_port_mbuf_pool_size", G, 0,
	  "Mbufs in the port's pool." },
	{ "rx_queues", "pktaccel_port_rx_queues", G, 0,
	  "RX queues configured." },
	{ "tx_queues", "pktaccel_port_tx_queues", G, 0,
	  "TX queues configured." },
};

static void
collect_ports(struct ctx *c, const json_t *ports)
{
	const char *name;
	const json_t *p;
	char id[24], sock[24];
	struct labels l;
	uint64_t u;

	json_object_foreach((json_t *)ports, name, p) {
		l = lbl(1, "port", name);
		emit_fields(c, p, port_fields, RTE_DIM(port_fields), &l);
		emit_u(c, G, "pktaccel_port_link_up",
			"1 when the port's link is up.",
			strcmp(get_str(p, "link", ""), "up") == 0, &l);
		if (get_u64(p, "speed_mbps", &u))
			emit_u(c, G, "pktaccel_port_link_speed_bytes",
				"Link speed in bytes per second.", u * 125000, &l);
		snprintf(id, sizeof(id), "%" PRId64,
			(int64_t)json_integer_value(json_object_get(p, "port_id")));
		snprintf(sock, sizeof(sock), "%" PRId64,
			(int64_t)json_integer_value(json_object_get(p, "socket")));
		l = lbl(4, "port", name, "driver", get_str(p, "driver", ""),
			"port_id", id, "socket", sock);
		emit_u(c, G, "pktaccel_port_info",
			"Port facts as labels (value 1).", 1, &l);
	}
}

/* Per-lcore counters (stats_get "lcores"); sums the stages across lcores. */
/* Latency of forwarded packets (stats_get "latency"): its percentiles as
 * a gauge by percentile ("100" is the maximum; not a Prometheus summary,
 * whose quantiles are over a sliding window), its count and sum. */
static void
collect_latency(struct ctx *c, const json_t *lat)
{
	static const struct {
		const char *key;
		const char *q;
	} qs[] = {
		{ "p50_ns", "50" }, { "p90_ns", "90" }, { "p99_ns", "99" },
		{ "p999_ns", "99.9" }, { "max_ns", "100" },
	};
	struct labels l;
	const json_t *mean;
	unsigned int i;
	uint64_t u, n;

	if (!json_is_true(json_object_get(lat, "enabled")))
		return;
	for (i = 0; i < RTE_DIM(qs); i++) {
		if (!get_u64(lat, qs[i].key, &u))
			continue;
		l = lbl(1, "percentile", qs[i].q);
		emit_f(c, G, "pktaccel_latency_seconds",
			"Time forwarded packets spent in the appliance (rx burst to TX queue), by percentile since start (100: the maximum); log-scale histogram, within 1/32.",
			(double)u / 1e9, &l);
	}
	l.n = 0;
	if (get_u64(lat, "count", &n)) {
		emit_u(c, C, "pktaccel_latency_packets_total",
			"Forwarded packets whose latency was recorded.", n, &l);
		mean = json_object_get(lat, "mean_ns");
		if (json_is_number(mean))
			emit_f(c, C, "pktaccel_latency_sum_seconds_total",
				"Sum of the recorded latencies (with pktaccel_latency_packets_total: the mean).",
				json_number_value(mean) * (double)n / 1e9, &l);
	}
}

static const struct field neigh_fields[] = {
	{ "rx", "pktaccel_neigh_rx_frames_total", C, 0,
	  "ARP/ND frames for the appliance handled by the control side." },
	{ "arp_requests_in", "pktaccel_neigh_arp_requests_in_total", C, 0,
	  "Valid ARP requests received." },
	{ "arp_replies_in", "pktaccel_neigh_arp_replies_in_total", C, 0,
	  "Valid ARP replies received." },
	{ "ns_in", "pktaccel_neigh_solicitations_in_total", C, 0,
	  "Valid neighbour solicitations received." },
	{ "na_in", "pktaccel_neigh_advertisements_in_total", C, 0,
	  "Valid neighbour advertisements received." },
	{ "arp_replies_out", "pktaccel_neigh_arp_replies_out_total", C, 0,
	  "ARP replies sent for the appliance's addresses and VIPs." },
	{ "na_out", "pktaccel_neigh_advertisements_out_total", C, 0,
	  "Neighbour advertisements sent." },
	{ "arp_requests_out", "pktaccel_neigh_arp_requests_out_total", C, 0,
	  "ARP requests sent to resolve gateways and backends." },
	{ "ns_out", "pktaccel_neigh_solicitations_out_total", C, 0,
	  "Neighbour solicitations sent." },
	{ "learned", "pktaccel_neigh_learned_total", C, 0,
	  "Cache entries made for hosts that asked for the appliance." },
	{ "resolved", "pktaccel_neigh_resolved_total", C, 0,
	  "Targets (gateways, on-link backends) that got a MAC, or a new one." },
	{ "failed", "pktaccel_neigh_failed_total", C, 0,
	  "Resolutions or probe rounds that went unanswered." },
	{ "unsolicited", "pktaccel_neigh_unsolicited_total", C, 0,
	  "Replies and announcements for addresses never asked for (ignored)." },
	{ "conflicts", "pktaccel_neigh_conflicts_total", C, 0,
	  "Frames claiming one of the appliance's own addresses (ignored)." },
	{ "not_ours", "pktaccel_neigh_not_ours_total", C, 0,
	  "Valid frames that did not concern the appliance." },
	{ "cache_full", "pktaccel_neigh_cache_full_total", C, 0,
	  "Entries not made for lack of room." },
	{ "no_source_address", "pktaccel_neigh_no_source_address_total", C, 0,
	  "Targets a port could not ask for (no address of that family)." },
	{ "tx_no_mbuf", "pktaccel_neigh_tx_no_mbuf_total", C, 0,
	  "Answers or solicitations not sent: no mbuf." },
	{ "tx_ring_full", "pktaccel_neigh_tx_ring_full_total", C, 0,
	  "Answers or solicitations not sent: the port's control TX ring was full." },
	{ "unknown_port", "pktaccel_neigh_unknown_port_total", C, 0,
	  "Frames from a port the neighbour subsystem does not know." },
	{ "tx_sent", "pktaccel_neigh_tx_sent_total", C, 0,
	  "Frames the lcores sent for the control side (not in tx_packets)." },
	{ "tx_dropped", "pktaccel_neigh_tx_dropped_total", C, 0,
	  "Control-side frames a full TX queue refused." },
	{ "entries", "pktaccel_neigh_entries", G, 0,
	  "Neighbour cache entries." },
};

static void
collect_neigh(struct ctx *c, const json_t *ng)
{
	const json_t *v;
	struct labels l = { 0 };
	const char *k;

	if (!json_is_object(ng))
		return;
	emit_fields(c, ng, neigh_fields, RTE_DIM(neigh_fields), &l);
	json_object_foreach((json_t *)json_object_get(ng, "invalid"), k, v) {
		if (!json_is_integer(v))
			continue;
		l = lbl(1, "reason", k);
		emit_u(c, C, "pktaccel_neigh_invalid_total",
			"ARP/ND frames refused by the strict parser, by reason.",
			(uint64_t)json_integer_value(v), &l);
	}
	json_object_foreach((json_t *)json_object_get(ng, "states"), k, v) {
		if (!json_is_integer(v))
			continue;
		l = lbl(1, "state", k);
		emit_u(c, G, "pktaccel_neigh_state_entries",
			"Neighbour cache entries by state.",
			(uint64_t)json_integer_value(v), &l);
	}
}

static void
collect_lcores(struct ctx *c, const json_t *lcores)
{
	uint64_t stage_sum[PA_STAGE_MAX] = { 0 };
	const json_t *s, *d, *v;
	const char *id, *k;
	struct labels l;
	unsigned int i;
	uint64_t u;

	json_object_foreach((json_t *)lcores, id, s) {
		l = lbl(1, "lcore", id);
		if (get_u64(s, "rx_packets", &u))
			emit_u(c, C, "pktaccel_lcore_rx_packets_total",
				"Packets the lcore received from ports.", u, &l);
		if (get_u64(s, "tx_packets", &u))
			emit_u(c, C, "pktaccel_lcore_tx_packets_total",
				"Packets the lcore handed to TX queues.", u, &l);
		if (get_u64(s, "busy_cycles", &u))
			emit_u(c, C, "pktaccel_lcore_busy_cycles_total",
				"TSC cycles of loop iterations that found work (divide by pktaccel_tsc_hertz for seconds).",
				u, &l);
		if (get_u64(s, "busy_polls", &u)) {
			l = lbl(2, "lcore", id, "state", "busy");
			emit_u(c, C, "pktaccel_lcore_polls_total",
				"Loop iterations of the lcore, by whether they found work (busy) or not (idle).",
				u, &l);
		}
		if (get_u64(s, "idle_polls", &u)) {
			l = lbl(2, "lcore", id, "state", "idle");
			emit_u(c, C, "pktaccel_lcore_polls_total",
				"Loop iterations of the lcore, by whether they found work (busy) or not (idle).",
				u, &l);
		}
		l = lbl(1, "lcore", id);
		if (get_u64(s, "sleeps", &u))
			emit_u(c, C, "pktaccel_lcore_sleeps_total",
				"Idle back-off sleeps of the lcore (adaptive polling; replay naps).",
				u, &l);
		if (get_u64(s, "sleep_cycles", &u))
			emit_u(c, C, "pktaccel_lcore_sleep_cycles_total",
				"TSC cycles the lcore spent in those sleeps (divide by pktaccel_tsc_hertz for seconds).",
				u, &l);
		d = json_object_get(s, "stage_packets");
		for (i = 0; i < PA_STAGE_MAX; i++) {
			const char *st = pa_stats_stage_name((enum pa_stage_id)i);

			if (!get_u64(d, st, &u))
				continue;
			stage_sum[i] += u;
			l = lbl(2, "lcore", id, "stage", st);
			emit_u(c, C, "pktaccel_lcore_stage_packets_total",
				"Packets into each stage on each lcore.", u, &l);
		}
		d = json_object_get(s, "drops");
		json_object_foreach((json_t *)d, k, v) {
			if (!json_is_integer(v))
				continue;
			l = lbl(2, "lcore", id, "reason", k);
			emit_u(c, C, "pktaccel_lcore_drops_total",
				"Packets dropped on each lcore, by reason.",
				(uint64_t)json_integer_value(v), &l);
		}
	}
	for (i = 0; i < PA_STAGE_MAX; i++) {
		l = lbl(1, "stage", pa_stats_stage_name((enum pa_stage_id)i));
		emit_u(c, C, "pktaccel_stage_packets_total",
			"Packets into each stage, all lcores.", stage_sum[i], &l);
	}
}

static const struct field acl_fields[] = {
	{ "rules", "pktaccel_acl_rules", G, 0, "ACL rules in the live table." },
	{ "default_hits", "pktaccel_acl_default_hits_total", C, 0,
	  "Packets no rule matched (the default action applied)." },
	{ "non_ip_frames", "pktaccel_acl_non_ip_frames_total", C, 0,
	  "Non-IP frames seen by the classifier (forwarded or dropped per acl.non_ip)." },
	{ "version", "pktaccel_acl_table_version", G, 0,
	  "Version of the live ACL table (bumped by every change)." },
	{ "builds", "pktaccel_acl_builds_total", C, 0,
	  "Full builds of the ACL table." },
	{ "folds", "pktaccel_acl_folds_total", C, 0,
	  "Times the small delta table was folded into a new base table." },
	{ "delta_rules", "pktaccel_acl_delta_rules", G, 0,
	  "Rules in the delta table beside the base table." },
	{ "build_ms", "pktaccel_acl_build_duration_seconds", G, MS,
	  "Time the last ACL change took to build." },
	{ "update_ms", "pktaccel_acl_update_duration_seconds", G, MS,
	  "Time the last ACL change took until live (build, publish, quiescence)." },
	{ "memory_bytes", "pktaccel_acl_memory_bytes", G, 0,
	  "Heap taken by the last full build of the ACL table." },
};

static void
collect_acl(struct ctx *c, const json_t *acl, const json_t *rules)
{
	struct labels l = { 0 };
	const json_t *r;
	char id[24];
	size_t i;
	uint64_t u;

	if (acl != NULL) {
		emit_fields(c, acl, acl_fields, RTE_DIM(acl_fields), &l);
		l = lbl(3, "default", get_str(acl, "default", ""),
			"non_ip", get_str(acl, "non_ip", ""),
			"algorithm", get_str(acl, "algorithm", ""));
		emit_u(c, G, "pktaccel_acl_info",
			"ACL settings as labels (value 1).", 1, &l);
	}
	json_array_foreach((json_t *)rules, i, r) {
		if (!get_u64(r, "id", &u))
			continue;
		snprintf(id, sizeof(id), "%" PRIu64, u);
		l = lbl(1, "rule", id);
		if (get_u64(r, "hits", &u))
			emit_u(c, C, "pktaccel_acl_rule_hits_total",
				"Packets that matched each ACL rule (by rule id).",
				u, &l);
		if (get_u64(r, "bytes", &u))
			emit_u(c, C, "pktaccel_acl_rule_bytes_total",
				"Bytes of the packets that matched each ACL rule.",
				u, &l);
	}
}

static const struct field lb_fields[] = {
	{ "services", "pktaccel_lb_services", G, 0, "Load-balanced services." },
	{ "backends", "pktaccel_lb_backends", G, 0,
	  "Backends of all services (down ones included)." },
	{ "flows", "pktaccel_lb_flows", G, 0,
	  "Active flows in the flow tables." },
	{ "flow_table_capacity", "pktaccel_lb_flow_table_capacity", G, 0,
	  "Flow table entries, all lcores." },
	{ "flow_table_bytes", "pktaccel_lb_flow_table_bytes", G, 0,
	  "Heap the flow tables take." },
	{ "balanced", "pktaccel_lb_balanced_packets_total", C, 0,
	  "Packets sent to a backend." },
	{ "flows_created", "pktaccel_lb_flows_created_total", C, 0,
	  "Flows added to the flow tables." },
	{ "flows_expired", "pktaccel_lb_flows_expired_total", C, 0,
	  "Flows aged out." },
	{ "flows_rescheduled", "pktaccel_lb_flows_rescheduled_total", C, 0,
	  "Flows moved to another backend (theirs went down)." },
	{ "flows_backend_gone", "pktaccel_lb_flows_backend_gone_total", C, 0,
	  "Flows removed because their backend was deleted or went down." },
	{ "flow_table_full", "pktaccel_lb_flow_table_full_total", C, 0,
	  "Packets balanced without a flow entry (flow table full)." },
	{ "fragments", "pktaccel_lb_fragments_total", C, 0,
	  "IP fragments seen by the load balancer." },
	{ "nat_replies", "pktaccel_lb_nat_replies_total", C, 0,
	  "NAT replies rewritten back to the VIP." },
	{ "nat_table_full", "pktaccel_lb_nat_table_full_total", C, 0,
	  "NAT flows that found no room for their reply entry." },
	{ "no_backend", "pktaccel_lb_no_backend_total", C, 0,
	  "Packets for a service without a usable backend." },
	{ "mtu", "pktaccel_lb_mtu_total", C, 0,
	  "Packets too big for the port MTU once encapsulated." },
	{ "no_room", "pktaccel_lb_no_room_total", C, 0,
	  "Packets without headroom for the tunnel header." },
	{ "version", "pktaccel_lb_table_version", G, 0,
	  "Version of the live service table (bumped by every change)." },
	{ "builds", "pktaccel_lb_builds_total", C, 0,
	  "Service table builds." },
	{ "build_ms", "pktaccel_lb_build_duration_seconds", G, MS,
	  "Time the last service table build took." },
	{ "build_ms_max", "pktaccel_lb_build_duration_max_seconds", G, MS,
	  "Longest service table build so far." },
};

static const char *const backend_states[] = { "up", "down", "drain" };

static void
collect_lb(struct ctx *c, const json_t *lb, const json_t *services)
{
	const json_t *s, *b, *bes;
	const char *svc, *addr, *state;
	struct labels l = { 0 };
	char port[8];
	size_t i, j, k;
	uint64_t u;

	if (lb != NULL)
		emit_fields(c, lb, lb_fields, RTE_DIM(lb_fields), &l);
	json_array_foreach((json_t *)services, i, s) {
		svc = get_str(s, "name", NULL);
		if (svc == NULL)
			continue;
		l = lbl(1, "service", svc);
		if (get_u64(s, "flows", &u))
			emit_u(c, G, "pktaccel_lb_service_flows",
				"Active flows of each service.", u, &l);
		if (get_u64(s, "usable_backends", &u))
			emit_u(c, G, "pktaccel_lb_service_usable_backends",
				"Backends of each service that take new flows.",
				u, &l);
		if (json_is_number(json_object_get(s, "build_ms")))
			emit_f(c, G, "pktaccel_lb_service_build_duration_seconds",
				"Time the last build of each service's tables took.",
				json_number_value(json_object_get(s, "build_ms")) /
				MS, &l);
		snprintf(port, sizeof(port), "%" PRId64,
			(int64_t)json_integer_value(json_object_get(s, "port")));
		l = lbl(6, "service", svc, "vip", get_str(s, "vip", ""),
			"port", port, "proto", get_str(s, "proto", ""),
			"scheduler", get_str(s, "scheduler", ""),
			"forward", get_str(s, "forward", ""));
		emit_u(c, G, "pktaccel_lb_service_info",
			"Service settings as labels (value 1).", 1, &l);
		bes = json_object_get(s, "backends");
		json_array_foreach((json_t *)bes, j, b) {
			addr = get_str(b, "addr", NULL);
			if (addr == NULL)
				continue;
			l = lbl(2, "service", svc, "backend", addr);
			if (get_u64(b, "packets", &u))
				emit_u(c, C, "pktaccel_lb_backend_packets_total",
					"Packets balanced to each backend since it was added.",
					u, &l);
			if (get_u64(b, "bytes", &u))
				emit_u(c, C, "pktaccel_lb_backend_bytes_total",
					"Bytes balanced to each backend since it was added.",
					u, &l);
			if (get_u64(b, "flows", &u))
				emit_u(c, G, "pktaccel_lb_backend_flows",
					"Active flows of each backend.", u, &l);
			if (get_u64(b, "weight", &u))
				emit_u(c, G, "pktaccel_lb_backend_weight",
					"Weight of each backend.", u, &l);
			state = get_str(b, "state", "up");
			for (k = 0; k < RTE_DIM(backend_states); k++) {
				l = lbl(3, "service", svc, "backend", addr,
					"state", backend_states[k]);
				emit_u(c, G, "pktaccel_lb_backend_state",
					"1 for the state each backend is in (up, down, drain), 0 for the others.",
					strcmp(state, backend_states[k]) == 0, &l);
			}
		}
	}
}

static void
collect_pipeline(struct ctx *c, const json_t *desc)
{
	const json_t *w, *rings, *r;
	char id[24], sock[24];
	struct labels l = { 0 };
	size_t i, j;
	uint64_t u;

	l = lbl(1, "mode", get_str(desc, "mode", ""));
	emit_u(c, G, "pktaccel_pipeline_info",
		"Pipeline settings as labels (value 1).", 1, &l);
	l.n = 0;
	if (get_u64(desc, "tsc_hz", &u))
		emit_u(c, G, "pktaccel_tsc_hertz",
			"TSC frequency: cycles per second.", u, &l);
	if (get_u64(desc, "burst", &u))
		emit_u(c, G, "pktaccel_pipeline_burst", "Burst size.", u, &l);
	json_array_foreach(json_object_get(desc, "lcores"), i, w) {
		snprintf(id, sizeof(id), "%" PRId64,
			(int64_t)json_integer_value(json_object_get(w, "lcore")));
		snprintf(sock, sizeof(sock), "%" PRId64,
			(int64_t)json_integer_value(json_object_get(w, "socket")));
		l = lbl(3, "lcore", id, "role", get_str(w, "role", ""),
			"socket", sock);
		emit_u(c, G, "pktaccel_lcore_info",
			"Data-path lcores: role and NUMA socket as labels (value 1).",
			1, &l);
		rings = json_object_get(w, "rings_in");
		json_array_foreach((json_t *)rings, j, r) {
			l = lbl(2, "ring", get_str(r, "name", ""), "lcore", id);
			if (get_u64(r, "count", &u))
				emit_u(c, G, "pktaccel_ring_entries",
					"Packets waiting in each ring between stages (its consumer lcore).",
					u, &l);
			if (get_u64(r, "capacity", &u))
				emit_u(c, G, "pktaccel_ring_capacity",
					"Packets each ring between stages can hold.",
					u, &l);
		}
	}
}

static void
collect_rpc(struct ctx *c, struct pa_rpc_server *server)
{
	const struct pa_rpc_method *it;
	struct pa_rpc_counters rc;
	struct labels l = { 0 };

	for (it = pa_rpc_methods(); it != NULL; it = it->next) {
		l = lbl(1, "method", it->name);
		emit_u(c, C, "pktaccel_rpc_calls_total",
			"JSON-RPC calls of each method (batch elements and notifications included).",
			it->calls, &l);
		emit_u(c, C, "pktaccel_rpc_call_errors_total",
			"JSON-RPC calls of each method that failed.", it->errors,
			&l);
	}
	l.n = 0;
	emit_u(c, C, "pktaccel_rpc_unknown_method_calls_total",
		"JSON-RPC calls naming a method that does not exist.",
		pa_rpc_unknown_method_calls(), &l);
	if (server == NULL)
		return;
	pa_rpc_server_counters(server, &rc);
	emit_u(c, C, "pktaccel_rpc_requests_total",
		"JSON-RPC requests (calls, batch elements, parse errors).",
		rc.requests, &l);
	emit_u(c, C, "pktaccel_rpc_request_errors_total",
		"JSON-RPC requests answered with an error.", rc.errors, &l);
	emit_u(c, C, "pktaccel_rpc_connections_total",
		"Connections to the RPC socket.", rc.connections, &l);
	emit_u(c, C, "pktaccel_rpc_rejected_connections_total",
		"RPC connections closed at once (over rpc.max_connections).",
		rc.rejected_connections, &l);
	emit_u(c, C, "pktaccel_rpc_timed_out_connections_total",
		"RPC connections closed by the idle timeout.",
		rc.timed_out_connections, &l);
}

static void
collect_http(struct ctx *c, struct pa_metrics_http *http)
{
	static const char *const help =
		"HTTP responses of the metrics endpoint, by status code.";
	struct pa_metrics_http_counters hc;
	struct labels l;

	pa_metrics_http_counters(http, &hc);
	l = lbl(1, "code", "200");
	emit_u(c, C, "pktaccel_http_responses_total", help, hc.ok, &l);
	l = lbl(1, "code", "404");
	emit_u(c, C, "pktaccel_http_responses_total", help, hc.not_found, &l);
	l = lbl(1, "code", "405");
	emit_u(c, C, "pktaccel_http_responses_total", help, hc.bad_method, &l);
	l = lbl(1, "code", "500");
	emit_u(c, C, "pktaccel_http_responses_total", help, hc.failed, &l);
}

int
pa_metrics_collect(struct pa_metrics *m, const struct pa_metrics_sources *src)
{
	struct ctx c = { .m = m, .rc = 0 };
	json_t *stats = NULL, *desc = NULL, *rules = NULL, *services = NULL;
	const json_t *drops, *v;
	struct labels l;
	const char *k;
	uint64_t u;

	l = lbl(2, "version", PA_VERSION, "dpdk", rte_version());
	emit_u(&c, G, "pktaccel_build_info",
		"pktaccel and DPDK versions as labels (value 1).", 1, &l);
	l.n = 0;
	if (src->pl != NULL) {
		stats = pa_pipeline_stats_json(src->pl);
		desc = pa_pipeline_describe_json(src->pl);
		if (stats == NULL || desc == NULL) {
			c.rc = -ENOMEM;
			goto out;
		}
		if (get_u64(stats, "rx_packets", &u))
			emit_u(&c, C, "pktaccel_rx_packets_total",
				"Packets that entered the data path.", u, &l);
		if (get_u64(stats, "tx_packets", &u))
			emit_u(&c, C, "pktaccel_tx_packets_total",
				"Packets the data path transmitted.", u, &l);
		if (get_u64(stats, "mbufs_in_use", &u))
			emit_u(&c, G, "pktaccel_mbufs_in_use",
				"Mbufs taken from all pools.", u, &l);
		drops = json_object_get(stats, "drops");
		json_object_foreach((json_t *)drops, k, v) {
			if (!json_is_integer(v))
				continue;
			l = lbl(1, "reason", k);
			emit_u(&c, C, "pktaccel_drops_total",
				"Packets dropped, by reason (every drop has one).",
				(uint64_t)json_integer_value(v), &l);
		}
		collect_ports(&c, json_object_get(stats, "ports"));
		collect_lcores(&c, json_object_get(stats, "lcores"));
		collect_latency(&c, json_object_get(stats, "latency"));
		collect_neigh(&c, json_object_get(stats, "neigh"));
		collect_pipeline(&c, desc);
	}
	if (src->acl != NULL) {
		rules = pa_acl_rules_json(src->acl);
		if (rules == NULL) {
			c.rc = -ENOMEM;
			goto out;
		}
		collect_acl(&c, json_object_get(stats, "acl"), rules);
	}
	if (src->lb != NULL) {
		services = pa_lb_services_json(src->lb);
		if (services == NULL) {
			c.rc = -ENOMEM;
			goto out;
		}
		collect_lb(&c, json_object_get(stats, "lb"), services);
	}
	collect_rpc(&c, src->rpc);
	if (src->http != NULL)
		collect_http(&c, src->http);
out:
	json_decref(stats);
	json_decref(desc);
	json_decref(rules);
	json_decref(services);
	return c.rc;
}

int
pa_metrics_scrape(const struct pa_metrics_sources *src, char **text,
		size_t *len)
{
	struct pa_metrics *m = pa_metrics_new();
	int rc;

	if (m == NULL)
		return -ENOMEM;
	rc = pa_metrics_collect(m, src);
	if (rc == 0)
		rc = pa_metrics_render(m, text, len);
	pa_metrics_free(m);
	return rc;
}
