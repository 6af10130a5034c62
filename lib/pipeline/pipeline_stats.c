/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The data path's reporting: the typed snapshot of its counters (ports,
 * lcores, latency, and the ACL, LB and neighbour counters) and its JSON
 * renderings, stats_get and pipeline_get. The exporter, telemetry and
 * the replay summary walk the same struct.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include "pipeline_priv.h"
#include "pa_offload.h"

static const char *
role_name(const struct pa_worker *w)
{
	return w->rtc ? "worker" : pa_plan_stages_name(w->stages);
}

/* What pipeline_get and the snapshot both say of an lcore: its place
 * and the fill of the rings it consumes. */
static void
lcore_layout(const struct pa_worker *w, struct pa_pipeline_lcore_snapshot *l)
{
	unsigned int i;

	l->lcore_id = w->lcore_id;
	l->socket = w->socket;
	l->role = role_name(w);
	l->n_rings = w->n_in;
	for (i = 0; i < w->n_in; i++) {
		snprintf(l->rings[i].name, sizeof(l->rings[i].name), "%s",
			w->in[i]->name);
		l->rings[i].count = rte_ring_count(w->in[i]);
		l->rings[i].capacity = rte_ring_get_capacity(w->in[i]);
	}
}

int
pa_pipeline_snapshot(const struct pa_pipeline *pl,
		struct pa_pipeline_snapshot *s)
{
	struct pa_stats_latency *h = NULL;
	bool latency = pl->cfg->pipeline.latency;
	uint64_t hz = rte_get_tsc_hz();
	unsigned int i;

	memset(s, 0, sizeof(*s));
	s->mode = pl->plan.mode == PA_PIPELINE_RTC ? "rtc" : "pipeline";
	s->tsc_hz = hz;
	s->burst = pl->burst;
	if (latency) {
		h = malloc(sizeof(*h));
		if (h == NULL)
			return -ENOMEM;
	}
	if (pl->n_workers > 0) {
		s->lcores = calloc(pl->n_workers, sizeof(*s->lcores));
		if (s->lcores == NULL)
			goto nomem;
	}
	s->n_lcores = pl->n_workers;
	for (i = 0; i < pl->n_workers; i++) {
		const struct pa_worker *w = pl->workers[i];
		struct pa_pipeline_lcore_snapshot *l = &s->lcores[i];

		lcore_layout(w, l);
		pa_stats_accumulate(&l->stats, &w->stats);
		if (h != NULL) {
			memset(h, 0, sizeof(*h));
			pa_stats_latency_merge(h, &w->lat);
		}
		pa_stats_latency_summarize(h, hz, &l->latency);
	}
	pa_pipeline_stats_sum(pl, &s->sum);
	s->n_ports = pl->ports->n;
	for (i = 0; i < pl->ports->n; i++)
		pa_port_snapshot(pl->ports, i, &s->ports[i]);
	if (pl->acl != NULL) {
		if (pa_acl_snapshot(pl->acl, 0, &s->acl) != 0)
			goto nomem;
		s->has_acl = true;
	}
	if (pl->lb != NULL) {
		if (pa_lb_snapshot(pl->lb, 0, &s->lb) != 0)
			goto nomem;
		s->has_lb = true;
	}
	if (pl->neigh != NULL) {
		pa_neigh_snapshot(pl->neigh, &s->sum, &s->neigh);
		s->has_neigh = true;
	}
	if (pl->excp != NULL) {
		pa_excp_snapshot(pl->excp, &s->excp);
		s->has_excp = true;
	}
	if (pl->blocklist != NULL) {
		pa_blocklist_info(pl->blocklist, &s->blocklist);
		s->has_blocklist = true;
	}
	s->mbufs_in_use = pa_port_mbufs_in_use(pl->ports);
	if (h != NULL) {
		memset(h, 0, sizeof(*h));
		pa_pipeline_latency_sum(pl, h);
	}
	pa_stats_latency_summarize(h, hz, &s->latency);
	free(h);
	return 0;
nomem:
	free(h);
	pa_pipeline_snapshot_free(s);
	return -ENOMEM;
}

void
pa_pipeline_snapshot_free(struct pa_pipeline_snapshot *s)
{
	if (s == NULL)
		return;
	free(s->lcores);
	s->lcores = NULL;
	s->n_lcores = 0;
	pa_acl_snapshot_free(&s->acl);
	pa_lb_snapshot_free(&s->lb);
}

json_t *
pa_pipeline_ports_json(const struct pa_pipeline_snapshot *s)
{
	json_t *all = json_object(), *o;
	unsigned int i;

	if (all == NULL)
		return NULL;
	for (i = 0; i < s->n_ports; i++) {
		const struct pa_port_snapshot *p = &s->ports[i];

		o = json_pack("{s:i, s:s, s:i, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:i, s:i, s:i, s:i, s:I, s:I, s:s}",
			"port_id", (int)p->port_id,
			"driver", p->driver,
			"socket", p->socket,
			"link", p->link_up ? "up" : "down",
			"speed_mbps", (json_int_t)p->speed_mbps,
			"rx_packets", (json_int_t)p->rx_packets,
			"tx_packets", (json_int_t)p->tx_packets,
			"rx_bytes", (json_int_t)p->rx_bytes,
			"tx_bytes", (json_int_t)p->tx_bytes,
			"rx_missed", (json_int_t)p->rx_missed,
			"rx_errors", (json_int_t)p->rx_errors,
			"tx_errors", (json_int_t)p->tx_errors,
			"rx_nombuf", (json_int_t)p->rx_nombuf,
			"rx_queues", (int)p->rx_queues,
			"tx_queues", (int)p->tx_queues,
			"rx_desc", (int)p->rx_desc,
			"tx_desc", (int)p->tx_desc,
			"mbufs_in_use", (json_int_t)p->mbufs_in_use,
			"pool_size", (json_int_t)p->pool_size,
			"rss_steer", p->rss_steer != NULL ? p->rss_steer : "off");
		if (o == NULL || json_object_set_new(all, p->name, o) != 0) {
			json_decref(all);
			return NULL;
		}
	}
	return all;
}

json_t *
pa_pipeline_lcore_json(const struct pa_pipeline_lcore_snapshot *l)
{
	const struct pa_lcore_stats *s = &l->stats;
	json_t *stages;
	unsigned int i;

	stages = json_object();
	if (stages == NULL)
		return NULL;
	for (i = 0; i < PA_STAGE_MAX; i++)
		json_object_set_new(stages, pa_stats_stage_name((enum pa_stage_id)i),
			json_integer((json_int_t)s->stage_packets[i]));
	return json_pack("{s:I, s:I, s:I, s:o, s:o?, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:o?}",
		"rx_packets", (json_int_t)s->rx_packets,
		"tx_packets", (json_int_t)s->tx_packets,
		"dropped_packets", (json_int_t)pa_stats_total_drops(s),
		"stage_packets", stages,
		"drops", pa_stats_drops_json(s),
		"busy_polls", (json_int_t)s->busy_polls,
		"idle_polls", (json_int_t)s->idle_polls,
		"busy_cycles", (json_int_t)s->busy_cycles,
		"sleeps", (json_int_t)s->sleeps,
		"sleep_cycles", (json_int_t)s->sleep_cycles,
		"handover_packets", (json_int_t)s->handover_packets,
		"handover_received", (json_int_t)s->handover_received,
		"latency", pa_stats_latency_summary_json(&l->latency));
}

json_t *
pa_pipeline_lcores_json(const struct pa_pipeline_snapshot *s)
{
	json_t *lcores = json_object();
	char key[16];
	unsigned int i;

	if (lcores == NULL)
		return NULL;
	for (i = 0; i < s->n_lcores; i++) {
		snprintf(key, sizeof(key), "%u", s->lcores[i].lcore_id);
		json_object_set_new(lcores, key,
			pa_pipeline_lcore_json(&s->lcores[i]));
	}
	return lcores;
}

json_t *
pa_pipeline_snapshot_json(const struct pa_pipeline_snapshot *s)
{
	json_t *lcores = pa_pipeline_lcores_json(s);

	if (lcores == NULL)
		return NULL;
	return json_pack("{s:I, s:I, s:I, s:o?, s:o?, s:o, s:o?, s:o?, s:o?, s:o?,"
		" s:o?, s:o?, s:I, s:o?, s:o?}",
		"rx_packets", (json_int_t)s->sum.rx_packets,
		"tx_packets", (json_int_t)s->sum.tx_packets,
		"dropped_packets", (json_int_t)pa_stats_total_drops(&s->sum),
		"drops", pa_stats_drops_json(&s->sum),
		"ports", pa_pipeline_ports_json(s),
		"lcores", lcores,
		"acl", s->has_acl ? pa_acl_snapshot_json(&s->acl) :
			json_object(),
		"lb", s->has_lb ? pa_lb_snapshot_json(&s->lb) : json_object(),
		"neigh", s->has_neigh ? pa_neigh_snapshot_json(&s->neigh) :
			json_object(),
		"excp", s->has_excp ? pa_excp_snapshot_json(&s->excp) :
			json_object(),
		"icmp_errors", pa_stats_icmp_errors_json(&s->sum),
		"handover", pa_stats_handover_json(&s->sum),
		"mbufs_in_use", (json_int_t)s->mbufs_in_use,
		"latency", pa_stats_latency_summary_json(&s->latency),
		"blocklist", s->has_blocklist ? json_pack(
			"{s:I, s:I, s:I, s:I, s:I, s:I, s:f, s:I, s:I, s:I, s:I, s:f}",
			"prefixes", (json_int_t)s->blocklist.prefixes,
			"prefixes4", (json_int_t)s->blocklist.prefixes4,
			"prefixes6", (json_int_t)s->blocklist.prefixes6,
			"hits", (json_int_t)s->blocklist.hits,
			"memory_bytes", (json_int_t)s->blocklist.memory_bytes,
			"version", (json_int_t)s->blocklist.version,
			"update_ms", s->blocklist.update_ms,
			"delta_added", (json_int_t)s->blocklist.delta_added,
			"delta_deleted", (json_int_t)s->blocklist.delta_deleted,
			"delta_bytes", (json_int_t)s->blocklist.delta_bytes,
			"merges", (json_int_t)s->blocklist.merges,
			"merge_ms", s->blocklist.merge_ms) : json_object());
}

json_t *
pa_pipeline_stats_json(const struct pa_pipeline *pl)
{
	struct pa_pipeline_snapshot s;
	json_t *o;

	if (pa_pipeline_snapshot(pl, &s) != 0)
		return NULL;
	o = pa_pipeline_snapshot_json(&s);
	pa_pipeline_snapshot_free(&s);
	return o;
}

/* ---- pipeline_get ---- */

static json_t *
cpus_json(unsigned int lcore)
{
	rte_cpuset_t set = rte_lcore_cpuset(lcore);
	json_t *a = json_array();
	unsigned int c;

	for (c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set))
			json_array_append_new(a, json_integer(c));
	return a;
}

static json_t *
worker_json(const struct pa_pipeline *pl, const struct pa_worker *w)
{
	struct pa_pipeline_lcore_snapshot l;
	json_t *stages, *rxq, *txq, *rings;
	unsigned int i;

	lcore_layout(w, &l);
	stages = json_array();
	for (i = 0; i < PA_STAGE_MAX; i++)
		if (w->stages & (1u << i))
			json_array_append_new(stages, json_string(
				pa_stats_stage_name((enum pa_stage_id)i)));
	rxq = json_array();
	for (i = 0; i < w->n_rxq; i++)
		json_array_append_new(rxq, json_pack("{s:s, s:i}",
			"port", pl->ports->port[w->rxq[i].port_index].name,
			"queue", (int)w->rxq[i].queue));
	txq = json_array();
	for (i = 0; i < w->n_txb; i++)
		json_array_append_new(txq, json_pack("{s:s, s:i, s:b}",
			"port", pl->ports->port[i].name,
			"queue", (int)w->txb[i].queue,
			"shared", w->txb[i].shared));
	rings = json_array();
	for (i = 0; i < l.n_rings; i++)
		json_array_append_new(rings, json_pack("{s:s, s:I, s:I}",
			"name", l.rings[i].name,
			"count", (json_int_t)l.rings[i].count,
			"capacity", (json_int_t)l.rings[i].capacity));
	return json_pack("{s:i, s:i, s:o, s:s, s:o, s:o, s:o, s:o}",
		"lcore", (int)l.lcore_id,
		"socket", l.socket,
		"cpus", cpus_json(w->lcore_id),
		"role", l.role,
		"stages", stages,
		"rx_queues", rxq,
		"tx_queues", txq,
		"rings_in", rings);
}

static bool
cpu_shared_any(const struct pa_pipeline *pl)
{
	unsigned int i;

	for (i = 0; i < pl->n_workers; i++)
		if (pl->workers[i]->shared_cpu)
			return true;
	return false;
}

json_t *
pa_pipeline_describe_json(const struct pa_pipeline *pl)
{
	json_t *lcores = json_array();
	unsigned int i;

	if (lcores == NULL)
		return NULL;
	for (i = 0; i < pl->n_workers; i++)
		json_array_append_new(lcores, worker_json(pl, pl->workers[i]));
	return json_pack("{s:s, s:b, s:i, s:i, s:i, s:i, s:b, s:I, s:s, s:o, s:o?, s:o?}",
		"mode", pl->plan.mode == PA_PIPELINE_RTC ? "rtc" : "pipeline",
		"replay", pl->replay,
		"burst", (int)pl->burst,
		"ring_size", (int)pl->ring_size,
		"tx_drain_us", (int)pl->cfg->pipeline.tx_drain_us,
		"main_lcore", (int)rte_get_main_lcore(),
		"cpu_shared", cpu_shared_any(pl),
		"tsc_hz", (json_int_t)rte_get_tsc_hz(),
		"acl_algorithm", pl->acl != NULL ? pa_acl_algorithm(pl->acl) :
			"none",
		"lcores", lcores,
		"offload", pl->offload != NULL ? pa_offload_json(pl->offload) :
			json_object(),
		"fnat_steer", pa_fnat_flow_json(pl));
}
