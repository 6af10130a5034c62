/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pktaccel_* metrics: the Prometheus rendering of the typed snapshots
 * that stats_get, pipeline_get, acl_rule_list and lb_service_list render
 * as JSON (pa_pipeline_snapshot(), pa_acl_snapshot(), pa_lb_snapshot()),
 * so that a scrape and an RPC always agree. Names and meanings:
 * docs/metrics.md.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <netinet/in.h>

#include <rte_common.h>
#include <rte_version.h>

#include "pa_acl.h"
#include "pa_announce.h"
#include "pa_config.h"
#include "pa_health_lb.h"
#include "pa_lb.h"
#include "pa_metrics.h"
#include "pa_neigh.h"
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

/* How a snapshot member becomes a sample: a uint64_t, exact, or (scale
 * not 0) a double divided by scale. */
struct field {
	size_t off;
	const char *name;
	enum pa_metrics_type type;
	double scale;
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

/*
 * A figure that the JSON views carry as a signed integer: one beyond
 * INT64_MAX shows there as negative, and the scrape leaves it out too.
 */
static void
emit_v(struct ctx *c, enum pa_metrics_type type, const char *name,
		const char *help, uint64_t v, const struct labels *l)
{
	if (v <= (uint64_t)INT64_MAX)
		emit_u(c, type, name, help, v, l);
}

static void
emit_fields(struct ctx *c, const void *snap, const struct field *f,
		unsigned int n, const struct labels *l)
{
	const char *base = snap;
	unsigned int i;
	uint64_t u;
	double d;

	for (i = 0; i < n; i++) {
		if (f[i].scale == 0) {
			memcpy(&u, base + f[i].off, sizeof(u));
			emit_v(c, f[i].type, f[i].name, f[i].help, u, l);
		} else {
			memcpy(&d, base + f[i].off, sizeof(d));
			emit_f(c, f[i].type, f[i].name, f[i].help,
				d / f[i].scale, l);
		}
	}
}

/* ------------------------------------------------------------------ */

#define PORT(m)	offsetof(struct pa_port_snapshot, m)

static const struct field port_fields[] = {
	{ PORT(rx_packets), "pktaccel_port_rx_packets_total", C, 0,
	  "Packets received by the port (rte_eth_stats ipackets)." },
	{ PORT(tx_packets), "pktaccel_port_tx_packets_total", C, 0,
	  "Packets sent by the port (rte_eth_stats opackets)." },
	{ PORT(rx_bytes), "pktaccel_port_rx_bytes_total", C, 0,
	  "Bytes received by the port." },
	{ PORT(tx_bytes), "pktaccel_port_tx_bytes_total", C, 0,
	  "Bytes sent by the port." },
	{ PORT(rx_missed), "pktaccel_port_rx_missed_total", C, 0,
	  "Packets the NIC dropped for lack of RX descriptors (imissed)." },
	{ PORT(rx_errors), "pktaccel_port_rx_errors_total", C, 0,
	  "Erroneous received packets (ierrors)." },
	{ PORT(tx_errors), "pktaccel_port_tx_errors_total", C, 0,
	  "Packets the port failed to send (oerrors)." },
	{ PORT(rx_nombuf), "pktaccel_port_rx_nombuf_total", C, 0,
	  "RX mbuf allocation failures." },
	{ PORT(mbufs_in_use), "pktaccel_port_mbufs_in_use", G, 0,
	  "Mbufs taken from the port's pool." },
	{ PORT(pool_size), "pktaccel_port_mbuf_pool_size", G, 0,
	  "Mbufs in the port's pool." },
};

static void
collect_ports(struct ctx *c, const struct pa_pipeline_snapshot *s)
{
	char id[24], sock[24];
	struct labels l;
	unsigned int i;

	for (i = 0; i < s->n_ports; i++) {
		const struct pa_port_snapshot *p = &s->ports[i];

		l = lbl(1, "port", p->name);
		emit_fields(c, p, port_fields, RTE_DIM(port_fields), &l);
		emit_u(c, G, "pktaccel_port_rx_queues", "RX queues configured.",
			p->rx_queues, &l);
		emit_u(c, G, "pktaccel_port_tx_queues", "TX queues configured.",
			p->tx_queues, &l);
		emit_u(c, G, "pktaccel_port_link_up",
			"1 when the port's link is up.", p->link_up, &l);
		emit_u(c, G, "pktaccel_port_link_speed_bytes",
			"Link speed in bytes per second.",
			(uint64_t)p->speed_mbps * 125000, &l);
		snprintf(id, sizeof(id), "%d", (int)p->port_id);
		snprintf(sock, sizeof(sock), "%d", p->socket);
		l = lbl(4, "port", p->name, "driver", p->driver,
			"port_id", id, "socket", sock);
		emit_u(c, G, "pktaccel_port_info",
			"Port facts as labels (value 1).", 1, &l);
	}
}

/* Latency of forwarded packets (stats_get "latency"): its percentiles as
 * a gauge by percentile ("100" is the maximum; not a Prometheus summary,
 * whose quantiles are over a sliding window), its count and sum. */
static void
collect_latency(struct ctx *c, const struct pa_stats_latency_summary *lat)
{
	const struct {
		uint64_t ns;
		const char *q;
	} qs[] = {
		{ lat->p50_ns, "50" }, { lat->p90_ns, "90" },
		{ lat->p99_ns, "99" }, { lat->p999_ns, "99.9" },
		{ lat->max_ns, "100" },
	};
	struct labels l;
	unsigned int i;

	if (!lat->enabled)
		return;
	for (i = 0; i < RTE_DIM(qs); i++) {
		l = lbl(1, "percentile", qs[i].q);
		emit_f(c, G, "pktaccel_latency_seconds",
			"Time forwarded packets spent in the appliance (from the start of the loop pass that received them to the end of the one that queued them for TX), by percentile since start (100: the maximum); log-scale histogram, within 1/32.",
			(double)qs[i].ns / 1e9, &l);
	}
	l.n = 0;
	emit_v(c, C, "pktaccel_latency_packets_total",
		"Forwarded packets whose latency was recorded.", lat->count, &l);
	if (lat->count <= (uint64_t)INT64_MAX)
		emit_f(c, C, "pktaccel_latency_sum_seconds_total",
			"Sum of the recorded latencies (with pktaccel_latency_packets_total: the mean).",
			(double)lat->mean_ns * (double)lat->count / 1e9, &l);
}

#define NEIGH(m)	offsetof(struct pa_neigh_snapshot, m)

static const struct field neigh_fields[] = {
	{ NEIGH(rx), "pktaccel_neigh_rx_frames_total", C, 0,
	  "ARP/ND frames for the appliance handled by the control side." },
	{ NEIGH(arp_requests_in), "pktaccel_neigh_arp_requests_in_total", C, 0,
	  "Valid ARP requests received." },
	{ NEIGH(arp_replies_in), "pktaccel_neigh_arp_replies_in_total", C, 0,
	  "Valid ARP replies received." },
	{ NEIGH(ns_in), "pktaccel_neigh_solicitations_in_total", C, 0,
	  "Valid neighbour solicitations received." },
	{ NEIGH(na_in), "pktaccel_neigh_advertisements_in_total", C, 0,
	  "Valid neighbour advertisements received." },
	{ NEIGH(arp_replies_out), "pktaccel_neigh_arp_replies_out_total", C, 0,
	  "ARP replies sent for the appliance's addresses and VIPs." },
	{ NEIGH(na_out), "pktaccel_neigh_advertisements_out_total", C, 0,
	  "Neighbour advertisements sent." },
	{ NEIGH(arp_requests_out), "pktaccel_neigh_arp_requests_out_total", C, 0,
	  "ARP requests sent to resolve gateways and backends." },
	{ NEIGH(ns_out), "pktaccel_neigh_solicitations_out_total", C, 0,
	  "Neighbour solicitations sent." },
	{ NEIGH(learned), "pktaccel_neigh_learned_total", C, 0,
	  "Cache entries made for hosts that asked for the appliance." },
	{ NEIGH(resolved), "pktaccel_neigh_resolved_total", C, 0,
	  "Targets (gateways, on-link backends) that got a MAC, or a new one." },
	{ NEIGH(failed), "pktaccel_neigh_failed_total", C, 0,
	  "Resolutions or probe rounds that went unanswered." },
	{ NEIGH(unsolicited), "pktaccel_neigh_unsolicited_total", C, 0,
	  "Replies and announcements for addresses never asked for (ignored)." },
	{ NEIGH(conflicts), "pktaccel_neigh_conflicts_total", C, 0,
	  "Frames claiming one of the appliance's own addresses (ignored)." },
	{ NEIGH(not_ours), "pktaccel_neigh_not_ours_total", C, 0,
	  "Valid frames that did not concern the appliance." },
	{ NEIGH(cache_full), "pktaccel_neigh_cache_full_total", C, 0,
	  "Entries not made for lack of room." },
	{ NEIGH(no_source_address), "pktaccel_neigh_no_source_address_total", C, 0,
	  "Targets a port could not ask for (no address of that family)." },
	{ NEIGH(tx_no_mbuf), "pktaccel_neigh_tx_no_mbuf_total", C, 0,
	  "Answers or solicitations not sent: no mbuf." },
	{ NEIGH(tx_ring_full), "pktaccel_neigh_tx_ring_full_total", C, 0,
	  "Answers or solicitations not sent: the port's control TX ring was full." },
	{ NEIGH(unknown_port), "pktaccel_neigh_unknown_port_total", C, 0,
	  "Frames from a port the neighbour subsystem does not know." },
	{ NEIGH(entries), "pktaccel_neigh_entries", G, 0,
	  "Neighbour cache entries." },
};

static const struct field neigh_tx_fields[] = {
	{ NEIGH(tx_sent), "pktaccel_neigh_tx_sent_total", C, 0,
	  "Frames the lcores sent for the control side (not in tx_packets)." },
	{ NEIGH(tx_dropped), "pktaccel_neigh_tx_dropped_total", C, 0,
	  "Control-side frames a full TX queue refused." },
};

#define EXCP(m)	offsetof(struct pa_excp_if_snapshot, m)

static const struct field excp_if_fields[] = {
	{ EXCP(to_kernel), "pktaccel_excp_to_kernel_total", C, 0,
	  "Frames for the port's own addresses written to its kernel_if." },
	{ EXCP(to_kernel_dropped), "pktaccel_excp_to_kernel_dropped_total", C, 0,
	  "Frames for the kernel the TAP refused." },
	{ EXCP(from_kernel), "pktaccel_excp_from_kernel_total", C, 0,
	  "Frames the kernel sent through the kernel_if, queued for the port's TX." },
	{ EXCP(from_kernel_dropped), "pktaccel_excp_from_kernel_dropped_total", C, 0,
	  "Frames the kernel sent that found the port's TX ring full." },
	{ EXCP(from_kernel_foreign), "pktaccel_excp_from_kernel_foreign_total", C, 0,
	  "Frames from the kernel_if not from the port's MAC (dropped)." },
	{ EXCP(from_kernel_held), "pktaccel_excp_from_kernel_held_total", C, 0,
	  "Polls that left the kernel's frames in the TAP's queue: the port's TX ring was full." },
	{ EXCP(queued), "pktaccel_excp_queued", G, 0,
	  "Frames waiting in the port's ring for the kernel." },
};

static void
collect_excp(struct ctx *c, const struct pa_excp_snapshot *x)
{
	struct labels l = { 0 };
	unsigned int i;

	emit_v(c, C, "pktaccel_excp_clones_total",
		"ARP replies and neighbour advertisements to a port's address also given to its kernel_if.",
		x->clones, &l);
	emit_v(c, C, "pktaccel_excp_clones_skipped_total",
		"... not given: ring full or over the rate.",
		x->clones_skipped, &l);
	for (i = 0; i < x->n; i++) {
		l = lbl(2, "port", x->ifs[i].port, "kernel_if", x->ifs[i].ifname);
		emit_fields(c, &x->ifs[i], excp_if_fields,
			RTE_DIM(excp_if_fields), &l);
	}
}

static void
collect_neigh(struct ctx *c, const struct pa_neigh_snapshot *ng)
{
	struct labels l = { 0 };
	unsigned int i;

	emit_fields(c, ng, neigh_fields, RTE_DIM(neigh_fields), &l);
	if (ng->has_lcore_tx)
		emit_fields(c, ng, neigh_tx_fields, RTE_DIM(neigh_tx_fields),
			&l);
	for (i = 1; i < PA_NEIGH_BAD_MAX; i++) {
		l = lbl(1, "reason", pa_neigh_bad_name((int)i));
		emit_v(c, C, "pktaccel_neigh_invalid_total",
			"ARP/ND frames refused by the strict parser, by reason.",
			ng->invalid[i], &l);
	}
	for (i = 0; i < PA_NEIGH_STATE_MAX; i++) {
		l = lbl(1, "state", pa_neigh_state_name((enum pa_neigh_state)i));
		emit_v(c, G, "pktaccel_neigh_state_entries",
			"Neighbour cache entries by state.", ng->states[i], &l);
	}
}

/* Per-lcore counters (stats_get "lcores"); sums the stages across lcores. */
static void
collect_lcores(struct ctx *c, const struct pa_pipeline_snapshot *snap)
{
	uint64_t stage_sum[PA_STAGE_MAX] = { 0 };
	struct labels l;
	unsigned int i, k;
	char id[16];

	for (k = 0; k < snap->n_lcores; k++) {
		const struct pa_lcore_stats *s = &snap->lcores[k].stats;

		snprintf(id, sizeof(id), "%u", snap->lcores[k].lcore_id);
		l = lbl(1, "lcore", id);
		emit_v(c, C, "pktaccel_lcore_rx_packets_total",
			"Packets the lcore received from ports.", s->rx_packets,
			&l);
		emit_v(c, C, "pktaccel_lcore_tx_packets_total",
			"Packets the lcore handed to TX queues.", s->tx_packets,
			&l);
		emit_v(c, C, "pktaccel_lcore_busy_cycles_total",
			"TSC cycles of loop iterations that found work (divide by pktaccel_tsc_hertz for seconds).",
			s->busy_cycles, &l);
		l = lbl(2, "lcore", id, "state", "busy");
		emit_v(c, C, "pktaccel_lcore_polls_total",
			"Loop iterations of the lcore, by whether they found work (busy) or not (idle).",
			s->busy_polls, &l);
		l = lbl(2, "lcore", id, "state", "idle");
		emit_v(c, C, "pktaccel_lcore_polls_total",
			"Loop iterations of the lcore, by whether they found work (busy) or not (idle).",
			s->idle_polls, &l);
		l = lbl(1, "lcore", id);
		emit_v(c, C, "pktaccel_lcore_sleeps_total",
			"Idle back-off sleeps of the lcore (adaptive polling; replay naps).",
			s->sleeps, &l);
		emit_v(c, C, "pktaccel_lcore_sleep_cycles_total",
			"TSC cycles the lcore spent in those sleeps (divide by pktaccel_tsc_hertz for seconds).",
			s->sleep_cycles, &l);
		for (i = 0; i < PA_STAGE_MAX; i++) {
			const char *st = pa_stats_stage_name((enum pa_stage_id)i);

			if (s->stage_packets[i] > (uint64_t)INT64_MAX)
				continue;
			stage_sum[i] += s->stage_packets[i];
			l = lbl(2, "lcore", id, "stage", st);
			emit_u(c, C, "pktaccel_lcore_stage_packets_total",
				"Packets into each stage on each lcore.",
				s->stage_packets[i], &l);
		}
		for (i = 0; i < PA_DROP_MAX; i++) {
			l = lbl(2, "lcore", id, "reason",
				pa_stats_drop_name((enum pa_drop_reason)i));
			emit_v(c, C, "pktaccel_lcore_drops_total",
				"Packets dropped on each lcore, by reason.",
				s->drops[i], &l);
		}
	}
	for (i = 0; i < PA_STAGE_MAX; i++) {
		l = lbl(1, "stage", pa_stats_stage_name((enum pa_stage_id)i));
		emit_u(c, C, "pktaccel_stage_packets_total",
			"Packets into each stage, all lcores.", stage_sum[i], &l);
	}
}

/* The source blocklist (lib/protect), from the pipeline's snapshot. */
static void
collect_blocklist(struct ctx *c, const struct pa_pipeline_snapshot *pl)
{
	const struct pa_blocklist_info *b = &pl->blocklist;
	struct labels l = { 0 };

	if (!pl->has_blocklist)
		return;
	l = lbl(1, "family", "ipv4");
	emit_u(c, G, "pktaccel_blocklist_prefixes",
		"Source prefixes in the blocklist, by family.", b->prefixes4,
		&l);
	l = lbl(1, "family", "ipv6");
	emit_u(c, G, "pktaccel_blocklist_prefixes",
		"Source prefixes in the blocklist, by family.", b->prefixes6,
		&l);
	l = (struct labels){ 0 };
	emit_u(c, C, "pktaccel_blocklist_hits_total",
		"Packets dropped because their source is in the blocklist.",
		b->hits, &l);
	emit_u(c, G, "pktaccel_blocklist_memory_bytes",
		"Memory of the blocklist's live lookup table.",
		b->memory_bytes, &l);
	emit_u(c, G, "pktaccel_blocklist_version",
		"Blocklist table version, bumped by every change.",
		b->version, &l);
	emit_f(c, G, "pktaccel_blocklist_update_duration_seconds",
		"Last blocklist change: build and publish, seconds.",
		b->update_ms / 1000.0, &l);
	emit_u(c, G, "pktaccel_blocklist_delta_bytes",
		"Memory of the blocklist's delta table (in memory_bytes).",
		b->delta_bytes, &l);
	l = lbl(1, "change", "added");
	emit_u(c, G, "pktaccel_blocklist_delta_prefixes",
		"Prefixes added or deleted since the whole table was built.",
		b->delta_added, &l);
	l = lbl(1, "change", "deleted");
	emit_u(c, G, "pktaccel_blocklist_delta_prefixes",
		"Prefixes added or deleted since the whole table was built.",
		b->delta_deleted, &l);
	l = (struct labels){ 0 };
	emit_f(c, G, "pktaccel_blocklist_merge_duration_seconds",
		"Last merge of the delta into a new whole table, seconds.",
		b->merge_ms / 1000.0, &l);
	emit_u(c, C, "pktaccel_blocklist_merges_total",
		"Deltas merged into a new whole blocklist table.",
		b->merges, &l);
}

#define ACL(m)	offsetof(struct pa_acl_snapshot, m)

static const struct field acl_fields[] = {
	{ ACL(default_hits), "pktaccel_acl_default_hits_total", C, 0,
	  "Packets no rule matched (the default action applied)." },
	{ ACL(non_ip_frames), "pktaccel_acl_non_ip_frames_total", C, 0,
	  "Non-IP frames seen by the classifier (forwarded or dropped per acl.non_ip)." },
	{ ACL(version), "pktaccel_acl_table_version", G, 0,
	  "Version of the live ACL table (bumped by every change)." },
	{ ACL(builds), "pktaccel_acl_builds_total", C, 0,
	  "Full builds of the ACL table." },
	{ ACL(folds), "pktaccel_acl_folds_total", C, 0,
	  "Times the small delta table was folded into a new base table." },
	{ ACL(delta_rules), "pktaccel_acl_delta_rules", G, 0,
	  "Rules in the delta table beside the base table." },
	{ ACL(build_ms), "pktaccel_acl_build_duration_seconds", G, MS,
	  "Time the last ACL change took to build." },
	{ ACL(update_ms), "pktaccel_acl_update_duration_seconds", G, MS,
	  "Time the last ACL change took until live (build, publish, quiescence)." },
	{ ACL(memory_bytes), "pktaccel_acl_memory_bytes", G, 0,
	  "Heap taken by the last full build of the ACL table." },
	{ ACL(flow_cache_entries), "pktaccel_acl_flow_cache_entries", G, 0,
	  "Verdict cache entries per data-path lcore and family (0: off)." },
	{ ACL(flow_cache_hits), "pktaccel_acl_flow_cache_hits_total", C, 0,
	  "IP packets whose verdict the flow cache held (rte_acl skipped)." },
	{ ACL(flow_cache_misses), "pktaccel_acl_flow_cache_misses_total", C, 0,
	  "IP packets looked up in the flow cache and classified by rte_acl." },
	{ ACL(flow_cache_pauses), "pktaccel_acl_flow_cache_pauses_total", C, 0,
	  "Times an lcore left its flow cache alone for a poor hit rate." },
};

/*
 * The ACL's totals from the pipeline's snapshot (stats_get "acl"; @p pl
 * NULL without a pipeline, @p acl NULL when the pipeline has no ACL: the
 * settings are then unknown) and its rules' counters from @p rules.
 */
static void
collect_acl(struct ctx *c, const struct pa_pipeline_snapshot *pl,
		const struct pa_acl_snapshot *acl,
		const struct pa_acl_snapshot *rules)
{
	struct labels l = { 0 };
	char id[24];
	unsigned int i;

	if (pl != NULL) {
		if (acl != NULL) {
			emit_u(c, G, "pktaccel_acl_rules",
				"ACL rules in the live table.", acl->rules, &l);
			emit_fields(c, acl, acl_fields, RTE_DIM(acl_fields),
				&l);
		}
		l = lbl(3,
			"default", acl == NULL ? "" :
				acl->def == PA_ACL_DROP ? "drop" : "permit",
			"non_ip", acl == NULL ? "" :
				acl->non_ip_drop ? "drop" : "forward",
			"algorithm", acl == NULL ? "" : acl->algorithm);
		emit_u(c, G, "pktaccel_acl_info",
			"ACL settings as labels (value 1).", 1, &l);
	}
	for (i = 0; i < rules->n_rule_counters; i++) {
		const struct pa_acl_rule_counters *r = &rules->rule_counters[i];

		snprintf(id, sizeof(id), "%" PRIu32, r->id);
		l = lbl(1, "rule", id);
		emit_v(c, C, "pktaccel_acl_rule_hits_total",
			"Packets that matched each ACL rule (by rule id).",
			r->hits, &l);
		emit_v(c, C, "pktaccel_acl_rule_bytes_total",
			"Bytes of the packets that matched each ACL rule.",
			r->bytes, &l);
	}
}

#define LB(m)	offsetof(struct pa_lb_snapshot, m)

static const struct field lb_fields[] = {
	{ LB(services), "pktaccel_lb_services", G, 0, "Load-balanced services." },
	{ LB(backends), "pktaccel_lb_backends", G, 0,
	  "Backends of all services (down ones included)." },
	{ LB(flows), "pktaccel_lb_flows", G, 0,
	  "Active flows in the flow tables." },
	{ LB(flow_table_capacity), "pktaccel_lb_flow_table_capacity", G, 0,
	  "Flow table entries, all lcores." },
	{ LB(flow_index_slots), "pktaccel_lb_flow_index_slots", G, 0,
	  "Slots of the flow tables' indexes now (they grow and shrink with the flows)." },
	{ LB(flow_table_bytes), "pktaccel_lb_flow_table_bytes", G, 0,
	  "Heap the flow tables take." },
	{ LB(balanced), "pktaccel_lb_balanced_packets_total", C, 0,
	  "Packets sent to a backend." },
	{ LB(flows_created), "pktaccel_lb_flows_created_total", C, 0,
	  "Flows added to the flow tables." },
	{ LB(flows_expired), "pktaccel_lb_flows_expired_total", C, 0,
	  "Flows aged out." },
	{ LB(flows_rescheduled), "pktaccel_lb_flows_rescheduled_total", C, 0,
	  "Flows moved to another backend (theirs went down)." },
	{ LB(flows_backend_gone), "pktaccel_lb_flows_backend_gone_total", C, 0,
	  "Flows removed because their backend was deleted or went down." },
	{ LB(flow_table_full), "pktaccel_lb_flow_table_full_total", C, 0,
	  "Packets balanced without a flow entry (flow table full)." },
	{ LB(fragments), "pktaccel_lb_fragments_total", C, 0,
	  "IP fragments seen by the load balancer." },
	{ LB(nat_replies), "pktaccel_lb_nat_replies_total", C, 0,
	  "NAT replies rewritten back to the VIP." },
	{ LB(nat_table_full), "pktaccel_lb_nat_table_full_total", C, 0,
	  "NAT flows that found no room for their reply entry." },
	{ LB(nat_reply_stateless), "pktaccel_lb_nat_reply_stateless_total", C, 0,
	  "NAT replies matching no flow, rewritten to the VIP of the one service whose Maglev choice is their backend." },
	{ LB(nat_reply_unmatched), "pktaccel_lb_nat_reply_unmatched_total", C, 0,
	  "Replies from a NAT backend matching no flow and no service's Maglev choice: passed unchanged." },
	{ LB(nat_reply_ambiguous), "pktaccel_lb_nat_reply_ambiguous_total", C, 0,
	  "Replies from a NAT backend matching no flow that several services' Maglev choices explain: dropped." },
	{ LB(no_backend), "pktaccel_lb_no_backend_total", C, 0,
	  "Packets for a service without a usable backend." },
	{ LB(mtu), "pktaccel_lb_mtu_total", C, 0,
	  "Packets too big for the port MTU once encapsulated." },
	{ LB(no_room), "pktaccel_lb_no_room_total", C, 0,
	  "Packets without headroom for the tunnel header." },
	{ LB(icmp_echo_replies), "pktaccel_lb_icmp_echo_replies_total", C, 0,
	  "ICMP echo requests to VIPs answered." },
	{ LB(icmp_errors_forwarded), "pktaccel_lb_icmp_errors_forwarded_total", C, 0,
	  "ICMP errors quoting a VIP flow, sent to the flow's backend." },
	{ LB(icmp_bad_quote), "pktaccel_lb_icmp_bad_quote_total", C, 0,
	  "ICMP errors to a VIP dropped: the quote is garbage." },
	{ LB(icmp_no_service), "pktaccel_lb_icmp_no_service_total", C, 0,
	  "ICMP errors to a VIP dropped: the quote names no service's flow." },
	{ LB(icmp_too_big_sent), "pktaccel_lb_icmp_too_big_sent_total", C, 0,
	  "ICMP fragmentation needed / packet too big sent for packets too big for the tunnel." },
	{ LB(icmp_rate_limited), "pktaccel_lb_icmp_rate_limited_total", C, 0,
	  "ICMP too-big messages not sent: over the rate." },
	{ LB(mss_clamped), "pktaccel_lb_mss_clamped_total", C, 0,
	  "TCP SYNs whose MSS option was lowered to the service's mss_clamp." },
	{ LB(flows_peak), "pktaccel_lb_flows_peak", G, 0,
	  "Most flow entries in use at once (sum of the lb lcores' peaks)." },
	{ LB(syn_stateless), "pktaccel_lb_syn_stateless_total", C, 0,
	  "SYNs balanced by Maglev without a flow entry (protect.syn_defer)." },
	{ LB(src_limited), "pktaccel_lb_src_limited_total", C, 0,
	  "New flows over their source prefix's token bucket: dropped (src_limit)." },
	{ LB(max_flows_dropped), "pktaccel_lb_max_flows_dropped_total", C, 0,
	  "New flows of a service at its max_flows: dropped (max_flows)." },
	{ LB(flows_recovered), "pktaccel_lb_flows_recovered_total", C, 0,
	  "New flows without SYN sent to the backend an earlier table of their service chose, not the current choice (lb.table_history_s)." },
	{ LB(stats_lock_busy), "pktaccel_lb_stats_lock_busy_total", C, 0,
	  "Stats reads that found an LB table build holding its lock: the counts of services, backends and health were the previous read's." },
	{ LB(health_down), "pktaccel_lb_health_down_backends", G, 0,
	  "Backends down by health checks (out of their tables unless in panic)." },
	{ LB(health_grace), "pktaccel_lb_health_grace_backends", G, 0,
	  "Backends down by health checks still in their grace (out of their tables, their flows kept)." },
	{ LB(panic_services), "pktaccel_lb_panic_services", G, 0,
	  "Services in panic: every backend down by health, balanced over all of them." },
	{ LB(panics), "pktaccel_lb_panics_total", C, 0,
	  "Times a service went into panic." },
	{ LB(version), "pktaccel_lb_table_version", G, 0,
	  "Version of the live service table (bumped by every change)." },
	{ LB(builds), "pktaccel_lb_builds_total", C, 0,
	  "Service table builds." },
	{ LB(build_ms), "pktaccel_lb_build_duration_seconds", G, MS,
	  "Time the last service table build took." },
	{ LB(build_ms_max), "pktaccel_lb_build_duration_max_seconds", G, MS,
	  "Longest service table build so far." },
};

#define FN(m)	offsetof(struct pa_lb_snapshot, fnat.m)

/* Full NAT (stats_get lb.fnat; only with an lb.fnat pool). */
static const struct field fnat_fields[] = {
	{ FN(flows), "pktaccel_lb_fnat_flows", G, 0,
	  "Active fnat flows (a pool address and port each)." },
	{ FN(flows_created), "pktaccel_lb_fnat_flows_created_total", C, 0,
	  "Fnat flows made." },
	{ FN(no_port), "pktaccel_lb_fnat_no_port_total", C, 0,
	  "New fnat flows without a free pool port of the backend's family: dropped (fnat_no_port)." },
	{ FN(table_full), "pktaccel_lb_fnat_table_full_total", C, 0,
	  "New fnat flows without room in the flow table: dropped (fnat_table_full)." },
	{ FN(fragments), "pktaccel_lb_fnat_fragments_total", C, 0,
	  "IP fragments to fnat services: dropped (fnat_fragment)." },
	{ FN(replies), "pktaccel_lb_fnat_replies_total", C, 0,
	  "Backend replies to a pool address translated back to the client." },
	{ FN(reply_unmatched), "pktaccel_lb_fnat_reply_unmatched_total", C, 0,
	  "Packets to a pool address and port matching no flow of that backend: dropped (fnat_unmatched)." },
	{ FN(xlat_failed), "pktaccel_lb_fnat_xlat_failed_total", C, 0,
	  "Fnat packets that could not be translated: dropped (fnat_xlat)." },
	{ FN(proxy_failed), "pktaccel_lb_fnat_proxy_failed_total", C, 0,
	  "Fnat packets without room for the PROXY header, or over the MTU with it: dropped (fnat_xlat)." },
	{ FN(time_wait_skips), "pktaccel_lb_fnat_time_wait_skips_total", C, 0,
	  "Pool ports passed over: freed by a flow to the same backend under time_wait_s ago." },
};

static void
collect_fnat(struct ctx *c, const struct pa_lb_snapshot *lb)
{
	char addr[INET6_ADDRSTRLEN];
	struct labels l = { 0 };
	unsigned int i;

	if (lb->fnat.n_addrs == 0)
		return;
	emit_fields(c, lb, fnat_fields, RTE_DIM(fnat_fields), &l);
	for (i = 0; i < lb->fnat.n_addrs; i++) {
		pa_net_format_ip(&lb->fnat.addr[i].addr, addr, sizeof(addr));
		l = lbl(1, "addr", addr);
		emit_v(c, G, "pktaccel_lb_fnat_pool_ports_in_use",
			"Ports of each fnat pool address held by a flow.",
			lb->fnat.addr[i].in_use, &l);
		emit_u(c, G, "pktaccel_lb_fnat_pool_ports",
			"Ports of each fnat pool address (lb.fnat.ports).",
			lb->fnat.ports, &l);
	}
}

static const enum pa_lb_state backend_states[] = {
	PA_LB_UP, PA_LB_DOWN, PA_LB_DRAIN,
};

static void
collect_backends(struct ctx *c, const struct pa_lb_service_snapshot *v)
{
	char addr[INET6_ADDRSTRLEN];
	const char *svc = v->cfg.name;
	struct labels l;
	unsigned int j, k;

	for (j = 0; j < v->cfg.n_backends; j++) {
		const struct pa_config_backend *be = &v->cfg.backends[j];
		const struct pa_lb_backend_snapshot *b = &v->backends[j];

		pa_net_format_ip(&be->addr, addr, sizeof(addr));
		l = lbl(2, "service", svc, "backend", addr);
		emit_v(c, C, "pktaccel_lb_backend_packets_total",
			"Packets balanced to each backend since it was added.",
			b->packets, &l);
		emit_v(c, C, "pktaccel_lb_backend_bytes_total",
			"Bytes balanced to each backend since it was added.",
			b->bytes, &l);
		emit_v(c, G, "pktaccel_lb_backend_flows",
			"Active flows of each backend.", b->flows, &l);
		emit_u(c, G, "pktaccel_lb_backend_weight",
			"Weight of each backend.", be->weight, &l);
		for (k = 0; k < RTE_DIM(backend_states); k++) {
			l = lbl(3, "service", svc, "backend", addr, "state",
				pa_lb_config_state_name(backend_states[k]));
			emit_u(c, G, "pktaccel_lb_backend_state",
				"1 for the state each backend is in (up, down, drain), 0 for the others.",
				be->state == backend_states[k], &l);
		}
		for (k = PA_LB_HEALTH_UNKNOWN; k <= PA_LB_HEALTH_DOWN; k++) {
			l = lbl(3, "service", svc, "backend", addr, "health",
				pa_lb_health_name(k));
			emit_u(c, G, "pktaccel_lb_backend_health",
				"1 for what the health checks say of each backend (up, down, unknown), 0 for the others.",
				b->health == k, &l);
		}
		if (b->health_probes == 0)
			continue;
		l = lbl(2, "service", svc, "backend", addr);
		emit_f(c, G, "pktaccel_lb_backend_health_latency_seconds",
			"Duration of each backend's last health probe.",
			b->health_latency_us / 1e6, &l);
		emit_v(c, C, "pktaccel_lb_backend_health_failures_total",
			"Failed health probes of each backend.",
			b->health_failures, &l);
	}
}

/* The LB's totals from the pipeline's snapshot (stats_get "lb"; NULL
 * without a pipeline or without an LB on it), services from @p svcs. */
static void
collect_lb(struct ctx *c, const struct pa_lb_snapshot *lb,
		const struct pa_lb_snapshot *svcs)
{
	char vip[INET6_ADDRSTRLEN], port[8];
	struct labels l = { 0 };
	unsigned int i;

	if (lb != NULL) {
		emit_fields(c, lb, lb_fields, RTE_DIM(lb_fields), &l);
		collect_fnat(c, lb);
	}
	for (i = 0; i < svcs->n_services; i++) {
		const struct pa_lb_service_snapshot *v = &svcs->svc[i];
		const char *svc = v->cfg.name;

		l = lbl(1, "service", svc);
		emit_v(c, G, "pktaccel_lb_service_flows",
			"Active flows of each service.", v->flows, &l);
		emit_v(c, G, "pktaccel_lb_service_usable_backends",
			"Backends of each service that take new flows.",
			v->usable_backends, &l);
		emit_f(c, G, "pktaccel_lb_service_build_duration_seconds",
			"Time the last build of each service's tables took.",
			v->build_ms / MS, &l);
		pa_net_format_ip(&v->cfg.vip, vip, sizeof(vip));
		snprintf(port, sizeof(port), "%u", (unsigned int)v->cfg.port);
		l = lbl(6, "service", svc, "vip", vip, "port", port,
			"proto", pa_lb_config_proto_name(v->cfg.proto),
			"scheduler", pa_lb_config_sched_name(v->cfg.scheduler),
			"forward", pa_lb_config_forward_name(v->cfg.forward));
		emit_u(c, G, "pktaccel_lb_service_info",
			"Service settings as labels (value 1).", 1, &l);
		l = lbl(1, "service", svc);
		emit_u(c, G, "pktaccel_lb_service_panic",
			"1 while each service is in panic (every backend down by health).",
			v->panic, &l);
		collect_backends(c, v);
	}
}

static void
collect_pipeline(struct ctx *c, const struct pa_pipeline_snapshot *s)
{
	char id[24], sock[24];
	struct labels l = { 0 };
	unsigned int i, j;

	l = lbl(1, "mode", s->mode);
	emit_u(c, G, "pktaccel_pipeline_info",
		"Pipeline settings as labels (value 1).", 1, &l);
	l.n = 0;
	emit_v(c, G, "pktaccel_tsc_hertz",
		"TSC frequency: cycles per second.", s->tsc_hz, &l);
	emit_u(c, G, "pktaccel_pipeline_burst", "Burst size.", s->burst, &l);
	for (i = 0; i < s->n_lcores; i++) {
		const struct pa_pipeline_lcore_snapshot *w = &s->lcores[i];

		snprintf(id, sizeof(id), "%u", w->lcore_id);
		snprintf(sock, sizeof(sock), "%d", w->socket);
		l = lbl(3, "lcore", id, "role", w->role, "socket", sock);
		emit_u(c, G, "pktaccel_lcore_info",
			"Data-path lcores: role and NUMA socket as labels (value 1).",
			1, &l);
		for (j = 0; j < w->n_rings; j++) {
			l = lbl(2, "ring", w->rings[j].name, "lcore", id);
			emit_v(c, G, "pktaccel_ring_entries",
				"Packets waiting in each ring between stages (its consumer lcore).",
				w->rings[j].count, &l);
			emit_v(c, G, "pktaccel_ring_capacity",
				"Packets each ring between stages can hold.",
				w->rings[j].capacity, &l);
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
	l = lbl(1, "code", "503");
	emit_u(c, C, "pktaccel_http_responses_total", help, hc.unavailable, &l);
}

/* Readiness, drain and the announced routes (lib/announce). */
static void
collect_ready(struct ctx *c, const struct pa_ready *h)
{
	struct pa_ready_snapshot *s = malloc(sizeof(*s));
	struct labels l = { 0 };
	char id[16];
	unsigned int i;

	if (s == NULL) {
		c->rc = -ENOMEM;
		return;
	}
	pa_ready_snapshot(h, s);
	emit_u(c, G, "pktaccel_ready",
		"1 when ports are up, tables loaded and every worker lcore makes progress.",
		s->ready, &l);
	emit_u(c, G, "pktaccel_draining",
		"1 while draining (health_set or SIGTERM): VIPs withdrawn, forwarding on.",
		s->draining, &l);
	emit_u(c, C, "pktaccel_not_ready_transitions_total",
		"Times the appliance went from ready to not ready.",
		s->not_ready_transitions, &l);
	for (i = 0; i < s->n_lcores; i++) {
		snprintf(id, sizeof(id), "%u", s->lcore_id[i]);
		l = lbl(1, "lcore", id);
		emit_u(c, G, "pktaccel_lcore_stalled",
			"1 while a data-path lcore's loop has not moved for pipeline.stall_ms.",
			s->lcore_stalled[i], &l);
		emit_u(c, C, "pktaccel_lcore_stalls_total",
			"Times a data-path lcore was found stalled.",
			s->lcore_stalls[i], &l);
	}
	if (s->announce) {
		l.n = 0;
		emit_u(c, G, "pktaccel_announced_routes",
			"Host routes (VIPs, full-NAT pool) in the announce table now.",
			s->routes, &l);
		emit_u(c, G, "pktaccel_announce_vips",
			"Distinct VIPs of the services (routes when ready and not draining).",
			s->vips, &l);
		emit_u(c, G, "pktaccel_announce_pool_addrs",
			"lb.fnat addresses that are no port's own (routes when ready and not draining).",
			s->pool_addrs, &l);
		emit_u(c, C, "pktaccel_announce_route_adds_total",
			"VIP routes added to the announce table.", s->route_adds, &l);
		emit_u(c, C, "pktaccel_announce_route_deletes_total",
			"VIP routes withdrawn from the announce table.",
			s->route_deletes, &l);
		emit_u(c, C, "pktaccel_announce_route_errors_total",
			"Route changes the kernel refused or did not answer (retried).",
			s->route_errors, &l);
		emit_u(c, C, "pktaccel_announce_route_reasserts_total",
			"Installed VIP routes re-added (every 5 s: one deleted by hand comes back).",
			s->route_reasserts, &l);
		emit_u(c, C, "pktaccel_announce_backstop_flushes_total",
			"Times the main thread withdrew the routes for a control thread blocked behind a stalled lcore.",
			s->backstop_flushes, &l);
	}
	free(s);
}

/* The data path's totals, drops by reason, and its parts. */
static void
collect_data_path(struct ctx *c, const struct pa_pipeline_snapshot *s)
{
	struct labels l = { 0 };
	unsigned int i;

	emit_v(c, C, "pktaccel_rx_packets_total",
		"Packets that entered the data path.", s->sum.rx_packets, &l);
	emit_v(c, C, "pktaccel_tx_packets_total",
		"Packets the data path transmitted.", s->sum.tx_packets, &l);
	emit_v(c, C, "pktaccel_icmp_errors_sent_total",
		"ICMP errors the data path generated and sent (time exceeded, fragmentation needed / packet too big); not in tx_packets.",
		s->sum.icmp_tx_packets, &l);
	emit_v(c, C, "pktaccel_icmp_errors_tx_dropped_total",
		"Generated ICMP errors a full TX queue refused.",
		s->sum.icmp_tx_dropped, &l);
	emit_v(c, C, "pktaccel_icmp_errors_rate_limited_total",
		"Time exceeded errors not sent: over the lcore's rate.",
		s->sum.icmp_rate_limited, &l);
	emit_v(c, C, "pktaccel_icmp_errors_not_sent_total",
		"ICMP errors not sent: not allowed, no source address, no mbuf or a full ring.",
		s->sum.icmp_not_sent, &l);
	emit_v(c, C, "pktaccel_handover_packets_total",
		"rtc: quoted ICMP errors handed to the worker whose RX queue receives their flow (RSS steering).",
		s->sum.handover_packets, &l);
	emit_v(c, C, "pktaccel_handover_received_total",
		"rtc: handed-over ICMP errors the owning workers took from their rings.",
		s->sum.handover_received, &l);
	emit_v(c, G, "pktaccel_mbufs_in_use", "Mbufs taken from all pools.",
		s->mbufs_in_use, &l);
	for (i = 0; i < PA_DROP_MAX; i++) {
		l = lbl(1, "reason", pa_stats_drop_name((enum pa_drop_reason)i));
		emit_v(c, C, "pktaccel_drops_total",
			"Packets dropped, by reason (every drop has one).",
			s->sum.drops[i], &l);
	}
	collect_ports(c, s);
	collect_lcores(c, s);
	collect_latency(c, &s->latency);
	if (s->has_neigh)
		collect_neigh(c, &s->neigh);
	if (s->has_excp)
		collect_excp(c, &s->excp);
	collect_pipeline(c, s);
}

/* The health checks' prober (lb_health_get). */
static void
collect_checks(struct ctx *c, const struct pa_health_lb *h)
{
	static const enum pa_health_status st[] = { PA_HEALTH_STATUS_UP,
		PA_HEALTH_STATUS_DOWN, PA_HEALTH_STATUS_UNKNOWN };
	struct pa_health_lb_snapshot s;
	struct labels l;
	unsigned int i;

	pa_health_lb_snapshot(h, &s);
	for (i = 0; i < RTE_DIM(st); i++) {
		l = lbl(1, "status", pa_health_status_name(st[i]));
		emit_v(c, G, "pktaccel_health_targets",
			"Backends under health checks, by their status.",
			st[i] == PA_HEALTH_STATUS_UP ? s.probe.up :
			st[i] == PA_HEALTH_STATUS_DOWN ? s.probe.down :
			s.probe.unknown, &l);
	}
	for (i = 1; i < PA_HEALTH_R_MAX; i++) {
		l = lbl(1, "result", pa_health_result_name(i));
		emit_v(c, C, "pktaccel_health_probes_total",
			"Health probes ended, by result.", s.probe.results[i],
			&l);
	}
	l.n = 0;
	emit_v(c, G, "pktaccel_health_inflight",
		"Health probes in flight (sockets open).", s.probe.inflight, &l);
	emit_v(c, G, "pktaccel_health_waiting",
		"Due health probes waiting for a free socket now.",
		s.probe.waiting, &l);
	emit_v(c, C, "pktaccel_health_deferred_total",
		"Due health probes that had to wait for a free socket.",
		s.probe.deferred, &l);
	emit_v(c, C, "pktaccel_health_transitions_total",
		"Status changes of backends under health checks.",
		s.probe.transitions, &l);
}

int
pa_metrics_collect(struct pa_metrics *m, const struct pa_metrics_sources *src)
{
	struct ctx c = { .m = m, .rc = 0 };
	struct pa_pipeline_snapshot pl;
	struct pa_acl_snapshot acl;
	struct pa_lb_snapshot lb;
	bool have_pl = false;
	struct labels l;

	l = lbl(2, "version", PA_VERSION, "dpdk", rte_version());
	emit_u(&c, G, "pktaccel_build_info",
		"pktaccel and DPDK versions as labels (value 1).", 1, &l);
	if (src->pl != NULL) {
		if (pa_pipeline_snapshot(src->pl, &pl) != 0) {
			c.rc = -ENOMEM;
			goto out;
		}
		have_pl = true;
		collect_data_path(&c, &pl);
		collect_blocklist(&c, &pl);
	}
	if (src->acl != NULL) {
		if (pa_acl_snapshot(src->acl, PA_ACL_SNAPSHOT_RULES, &acl) != 0) {
			c.rc = -ENOMEM;
			goto out;
		}
		collect_acl(&c, have_pl ? &pl : NULL,
			have_pl && pl.has_acl ? &pl.acl : NULL, &acl);
		pa_acl_snapshot_free(&acl);
	}
	if (src->lb != NULL) {
		if (pa_lb_snapshot(src->lb, PA_LB_SNAPSHOT_SERVICES, &lb) != 0) {
			c.rc = -ENOMEM;
			goto out;
		}
		collect_lb(&c, have_pl && pl.has_lb ? &pl.lb : NULL, &lb);
		pa_lb_snapshot_free(&lb);
	}
	if (src->checks != NULL)
		collect_checks(&c, src->checks);
	collect_rpc(&c, src->rpc);
	if (src->http != NULL)
		collect_http(&c, src->http);
	if (src->ready != NULL)
		collect_ready(&c, src->ready);
out:
	if (have_pl)
		pa_pipeline_snapshot_free(&pl);
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
