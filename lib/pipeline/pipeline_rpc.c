/* SPDX-License-Identifier: BSD-3-Clause */
/* stats_get and pipeline_get: JSON views of the running data path. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>

#include <rte_byteorder.h>

#include <rte_cycles.h>
#include <rte_lcore.h>
#include <rte_ring.h>

#include "pa_rpc.h"
#include "pipeline_priv.h"

static struct pa_pipeline *rpc_pipeline;

void
pa_pipeline_rpc_set(struct pa_pipeline *pl)
{
	rpc_pipeline = pl;
}

static json_t *
lcore_stats_json(const struct pa_lcore_stats *s, json_t *latency)
{
	json_t *o, *stages;
	unsigned int i;

	stages = json_object();
	for (i = 0; i < PA_STAGE_MAX; i++)
		json_object_set_new(stages, pa_stats_stage_name((enum pa_stage_id)i),
			json_integer((json_int_t)s->stage_packets[i]));
	o = json_pack("{s:I, s:I, s:I, s:o, s:o?, s:I, s:I, s:I, s:I, s:I, s:o?}",
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
		"latency", latency);
	return o;
}

/* A worker's histogram, or the merge of all: NULL when latency is off. */
static json_t *
latency_json(const struct pa_pipeline *pl, int idx)
{
	struct pa_stats_latency *h;
	json_t *o;

	if (!pl->cfg->pipeline.latency)
		return pa_stats_latency_json(NULL, rte_get_tsc_hz());
	h = calloc(1, sizeof(*h));
	if (h == NULL)
		return NULL;
	if (idx < 0)
		pa_pipeline_latency_sum(pl, h);
	else
		pa_stats_latency_merge(h, &pl->workers[idx]->lat);
	o = pa_stats_latency_json(h, rte_get_tsc_hz());
	free(h);
	return o;
}

json_t *
pa_pipeline_stats_json(const struct pa_pipeline *pl)
{
	struct pa_lcore_stats sum, one;
	json_t *lcores, *o;
	char key[16];
	unsigned int i;

	lcores = json_object();
	if (lcores == NULL)
		return NULL;
	for (i = 0; i < pl->n_workers; i++) {
		memset(&one, 0, sizeof(one));
		pa_stats_accumulate(&one, &pl->workers[i]->stats);
		snprintf(key, sizeof(key), "%u", pl->workers[i]->lcore_id);
		json_object_set_new(lcores, key, lcore_stats_json(&one,
			latency_json(pl, (int)i)));
	}
	pa_pipeline_stats_sum(pl, &sum);
	o = json_pack("{s:I, s:I, s:I, s:o?, s:o?, s:o, s:o?, s:o?, s:o?, s:I, s:o?}",
		"rx_packets", (json_int_t)sum.rx_packets,
		"tx_packets", (json_int_t)sum.tx_packets,
		"dropped_packets", (json_int_t)pa_stats_total_drops(&sum),
		"drops", pa_stats_drops_json(&sum),
		"ports", pa_port_stats_json(pl->ports),
		"lcores", lcores,
		"acl", pl->acl != NULL ? pa_acl_stats_json(pl->acl) : json_object(),
		"lb", pl->lb != NULL ? pa_lb_stats_json(pl->lb) : json_object(),
		"neigh", pa_neigh_stats_json(pl->neigh, &sum),
		"mbufs_in_use", (json_int_t)pa_port_mbufs_in_use(pl->ports),
		"latency", latency_json(pl, -1));
	return o;
}

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
	json_t *stages, *rxq, *txq, *rings, *o;
	unsigned int i;

	stages = json_array();
	if (w->role == PA_CONFIG_STAGE_WORKER) {
		for (i = 0; i < PA_STAGE_MAX; i++)
			json_array_append_new(stages, json_string(
				pa_stats_stage_name((enum pa_stage_id)i)));
	} else {
		json_array_append_new(stages, json_string(
			pa_stats_stage_name((enum pa_stage_id)w->rank)));
	}
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
	for (i = 0; i < w->n_in; i++)
		json_array_append_new(rings, json_pack("{s:s, s:I, s:I}",
			"name", w->in[i]->name,
			"count", (json_int_t)rte_ring_count(w->in[i]),
			"capacity", (json_int_t)rte_ring_get_capacity(w->in[i])));
	o = json_pack("{s:i, s:i, s:o, s:s, s:o, s:o, s:o, s:o}",
		"lcore", (int)w->lcore_id,
		"socket", w->socket,
		"cpus", cpus_json(w->lcore_id),
		"role", w->role == PA_CONFIG_STAGE_WORKER ? "worker" :
			pa_stats_stage_name((enum pa_stage_id)w->rank),
		"stages", stages,
		"rx_queues", rxq,
		"tx_queues", txq,
		"rings_in", rings);
	return o;
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
	return json_pack("{s:s, s:b, s:i, s:i, s:i, s:i, s:b, s:I, s:s, s:o}",
		"mode", pl->plan.mode == PA_PIPELINE_RTC ? "rtc" : "pipeline",
		"replay", pl->replay,
		"burst", (int)pl->burst,
		"ring_size", (int)pl->ring_size,
		"tx_drain_us", (int)pl->cfg->pipeline.tx_drain_us,
		"main_lcore", (int)rte_get_main_lcore(),
		"cpu_shared", pl->n_workers > 0 && pl->workers[0]->shared_cpu,
		"tsc_hz", (json_int_t)rte_get_tsc_hz(),
		"acl_algorithm", pl->acl != NULL ? pa_acl_algorithm(pl->acl) :
			"none",
		"lcores", lcores);
}

/* Both methods: no parameters, a JSON view of the running pipeline. */
static int
reply_view(json_t *(*view)(const struct pa_pipeline *), const json_t *params,
		json_t **result, struct pa_rpc_error *err)
{
	if (pa_rpc_no_params(params, err) != 0)
		return -1;
	if (rpc_pipeline == NULL)
		return pa_rpc_error_set(err, PA_RPC_INTERNAL_ERROR,
			"data path not running");
	*result = view(rpc_pipeline);
	if (*result == NULL)
		return pa_rpc_error_set(err, PA_RPC_INTERNAL_ERROR,
			"out of memory");
	return 0;
}

static int
rpc_stats_get(const json_t *params, json_t **result, struct pa_rpc_error *err)
{
	return reply_view(pa_pipeline_stats_json, params, result, err);
}
PA_RPC_REGISTER("stats_get", rpc_stats_get,
	"packet, drop, port and lcore counters")

static int
rpc_pipeline_get(const json_t *params, json_t **result, struct pa_rpc_error *err)
{
	return reply_view(pa_pipeline_describe_json, params, result, err);
}
PA_RPC_REGISTER("pipeline_get", rpc_pipeline_get,
	"lcores, their stages, NUMA socket, queues and ring fill levels")

/*
 * trace_packet: the verdict the data path would give a described packet,
 * from the live tables and the stages' own lookup code.
 */
static int
trace_port(const json_t *v, const char *name, uint16_t *port,
		struct pa_rpc_error *err)
{
	char why[PA_RPC_MSG_MAX];
	struct pa_port_range r;

	if (v == NULL) {
		*port = 0;
		return 0;
	}
	if (json_is_integer(v) && json_integer_value(v) >= 0 &&
	    json_integer_value(v) <= UINT16_MAX) {
		*port = (uint16_t)json_integer_value(v);
		return 0;
	}
	if (json_is_string(v) && pa_net_parse_port_range(json_string_value(v),
			&r, why, sizeof(why)) == 0 && r.lo == r.hi) {
		*port = r.lo;
		return 0;
	}
	return pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS,
		"params.%s: expected a port number 0..65535", name);
}

static int
rpc_trace_packet(const json_t *params, json_t **result,
		struct pa_rpc_error *err)
{
	struct pa_acl *acl = pa_acl_rpc_get();
	struct pa_lb *lb = pa_lb_rpc_get();
	struct pa_lb_trace_result lbr;
	char buf[INET6_ADDRSTRLEN];
	const char *verdict = "forward";
	bool fragment = false;
	struct pa_ip_addr src, dst;
	struct pa_flow_key key;
	enum pa_acl_action action = PA_ACL_PERMIT;
	char why[PA_RPC_MSG_MAX];
	const char *k;
	const json_t *v;
	uint16_t sport, dport;
	uint32_t rule = 0;
	int proto, in_port = -1;
	bool ports;

	if (rpc_pipeline == NULL)
		return pa_rpc_error_set(err, PA_RPC_INTERNAL_ERROR,
			"data path not running");
	if (!json_is_object(params))
		return pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS,
			"params: expected {\"src\", \"dst\", \"sport\", \"dport\", \"proto\", \"in_port\"?}");
	json_object_foreach((json_t *)params, k, v) {
		if (strcmp(k, "src") != 0 && strcmp(k, "dst") != 0 &&
		    strcmp(k, "sport") != 0 && strcmp(k, "dport") != 0 &&
		    strcmp(k, "proto") != 0 && strcmp(k, "in_port") != 0 &&
		    strcmp(k, "fragment") != 0)
			return pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS,
				"params.%s: unknown key", k);
	}
	v = json_object_get(params, "src");
	if (!json_is_string(v) || pa_net_parse_ip(json_string_value(v),
			&src, why, sizeof(why)) != 0)
		return pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS,
			"params.src: expected an IPv4 or IPv6 address");
	v = json_object_get(params, "dst");
	if (!json_is_string(v) || pa_net_parse_ip(json_string_value(v),
			&dst, why, sizeof(why)) != 0)
		return pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS,
			"params.dst: expected an IPv4 or IPv6 address");
	if (src.family != dst.family)
		return pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS,
			"params.dst: address family differs from params.src");
	v = json_object_get(params, "proto");
	if (v == NULL || pa_decode_parse_proto(v, &proto, why, sizeof(why)) != 0 ||
	    proto == PA_PROTO_ANY)
		return pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS,
			"params.proto: expected a protocol name or number 0..255");
	if (trace_port(json_object_get(params, "sport"), "sport", &sport, err) != 0 ||
	    trace_port(json_object_get(params, "dport"), "dport", &dport, err) != 0)
		return -1;
	v = json_object_get(params, "fragment");
	if (v != NULL) {
		if (!json_is_boolean(v))
			return pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS,
				"params.fragment: expected true or false");
		fragment = json_is_true(v);
	}
	v = json_object_get(params, "in_port");
	if (v != NULL) {
		in_port = json_is_string(v) ? pa_config_port_index(
			rpc_pipeline->cfg, json_string_value(v)) : -1;
		if (in_port < 0)
			return pa_rpc_error_set(err, PA_RPC_INVALID_PARAMS,
				"params.in_port: no such port");
	}

	memset(&key, 0, sizeof(key));
	key.family = src.family == AF_INET ? 4 : 6;
	key.proto = (uint8_t)proto;
	ports = proto == IPPROTO_TCP || proto == IPPROTO_UDP ||
		proto == IPPROTO_SCTP;
	key.sport = ports ? rte_cpu_to_be_16(sport) : 0;
	key.dport = ports ? rte_cpu_to_be_16(dport) : 0;
	if (key.family == 4) {
		key.v4.src = src.v4.s_addr;
		key.v4.dst = dst.v4.s_addr;
	} else {
		memcpy(key.v6.src, src.v6.s6_addr, 16);
		memcpy(key.v6.dst, dst.v6.s6_addr, 16);
	}
	if (acl != NULL && pa_acl_trace(acl, &key, ports, in_port, &rule,
			&action) != 0)
		return pa_rpc_error_set(err, PA_RPC_INTERNAL_ERROR,
			"cannot classify");
	memset(&lbr, 0, sizeof(lbr));
	if (action != PA_ACL_DROP && lb != NULL) {
		int r = pa_lb_trace(lb, &key, fragment, &lbr);

		if (r == -EBUSY)
			return pa_rpc_error_set(err, PA_RPC_ERR_BUSY,
				"an lcore did not answer about its flow table in time; try again");
		if (r != 0)
			return pa_rpc_error_set(err, PA_RPC_INTERNAL_ERROR,
				"cannot trace the load balancer");
	}
	if (lbr.service_found && !lbr.backend_found && lbr.reason != NULL &&
	    strcmp(lbr.reason, "no_backend") == 0)
		verdict = "drop";
	else if (action == PA_ACL_DROP)
		verdict = "drop";
	*result = json_pack("{s:s, s:o, s:s, s:o, s:o, s:b, s:o}",
		"verdict", verdict,
		"acl_rule", rule != 0 ? json_integer(rule) : json_null(),
		"acl_action", action == PA_ACL_DROP ? "drop" :
			action == PA_ACL_MARK ? "mark" :
			action == PA_ACL_POLICE ? "police" : "permit",
		"service", lbr.service_found ? json_string(lbr.service) :
			json_null(),
		"backend", lbr.backend_found ? json_string(
			pa_net_format_ip(&lbr.backend, buf, sizeof(buf))) :
			json_null(),
		"existing_flow", lbr.existing_flow,
		"lb_note", lbr.reason != NULL ? json_string(lbr.reason) :
			json_null());
	return 0;
}
PA_RPC_REGISTER("trace_packet", rpc_trace_packet,
	"verdict for a described packet: src dst sport dport proto [in_port]")
