/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * /pktaccel/... DPDK telemetry commands. DPDK calls them on its telemetry
 * threads (one per client); the tables they report are the control
 * thread's, so each request is handed over through a one-slot mailbox (an
 * eventfd the control thread waits on) and answered there, under the
 * mailbox lock, while the caller waits with a deadline.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>

#include <rte_common.h>
#include <rte_log.h>
#include <rte_telemetry.h>

#include <jansson.h>

#include "pa_acl.h"
#include "pa_config.h"
#include "pa_lb.h"
#include "pa_metrics.h"
#include "pa_pipeline.h"
#include "pa_rpc.h"

/* entries of a telemetry dict, one kept for "truncated" */
#define DICT_ROOM	(RTE_TEL_MAX_DICT_ENTRIES - 1)
/* rules or services listed by one answer (stays under the 16 KiB reply) */
#define PAGE		200

typedef int (*tel_answer_t)(const char *params, struct rte_tel_data *d,
		const struct pa_metrics_sources *src);

static struct {
	pthread_mutex_t req_lock;	/* one request at a time */
	pthread_mutex_t lock;		/* the slot below */
	pthread_cond_t cond;
	int efd;
	bool registered;
	bool serving;
	struct pa_metrics_sources src;
	bool pending, done;
	tel_answer_t answer;
	const char *params;
	struct rte_tel_data *d;
	int rc;
} tel = {
	.req_lock = PTHREAD_MUTEX_INITIALIZER,
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.cond = PTHREAD_COND_INITIALIZER,
	.efd = -1,
};

#define TEL_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_##level, pa_metrics_logtype, "pa.metrics: " fmt "\n", \
		##__VA_ARGS__)

/* ------------------------------------------------------------------ */
/* JSON -> rte_tel_data. Telemetry dict names may only hold [A-Za-z0-9_/];
 * containers nest one level: deeper members are flattened into their
 * container with '/'-joined names. */

struct conv {
	bool truncated;
};

static void
tel_name(const char *prefix, const char *key, char *out, size_t len)
{
	size_t i;

	if (prefix != NULL && prefix[0] != '\0')
		snprintf(out, len, "%s/%s", prefix, key);
	else
		snprintf(out, len, "%s", key);
	for (i = 0; out[i] != '\0'; i++) {
		char ch = out[i];

		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9') || ch == '_' || ch == '/'))
			out[i] = '_';
	}
}

static int
add_scalar(struct rte_tel_data *d, const char *name, const json_t *v)
{
	char buf[RTE_TEL_MAX_STRING_LEN];
	json_int_t i;

	switch (json_typeof(v)) {
	case JSON_INTEGER:
		i = json_integer_value(v);
		if (i >= 0)
			return rte_tel_data_add_dict_u64(d, name, (uint64_t)i);
		if (i >= INT32_MIN)
			return rte_tel_data_add_dict_int(d, name, (int)i);
		snprintf(buf, sizeof(buf), "%" JSON_INTEGER_FORMAT, i);
		return rte_tel_data_add_dict_string(d, name, buf);
	case JSON_REAL:
		/* no floating point in DPDK 22.11 telemetry */
		snprintf(buf, sizeof(buf), "%.6f", json_real_value(v));
		return rte_tel_data_add_dict_string(d, name, buf);
	case JSON_TRUE:
		return rte_tel_data_add_dict_int(d, name, 1);
	case JSON_FALSE:
		return rte_tel_data_add_dict_int(d, name, 0);
	case JSON_STRING:
		snprintf(buf, sizeof(buf), "%s", json_string_value(v));
		return rte_tel_data_add_dict_string(d, name, buf);
	default:
		return rte_tel_data_add_dict_string(d, name, "null");
	}
}

/* Flatten @p v under @p prefix into dict @p d (holding *n entries). */
static void
flatten(struct conv *cv, struct rte_tel_data *d, unsigned int *n,
		const char *prefix, const json_t *v)
{
	char name[RTE_TEL_MAX_STRING_LEN], idx[24];
	const char *k;
	const json_t *e;
	size_t i;

	if (json_is_object(v)) {
		json_object_foreach((json_t *)v, k, e) {
			tel_name(prefix, k, name, sizeof(name));
			flatten(cv, d, n, name, e);
		}
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, e) {
			snprintf(idx, sizeof(idx), "%zu", i);
			tel_name(prefix, idx, name, sizeof(name));
			flatten(cv, d, n, name, e);
		}
	} else {
		if (*n >= RTE_TEL_MAX_DICT_ENTRIES ||
		    add_scalar(d, prefix, v) != 0) {
			cv->truncated = true;
			return;
		}
		(*n)++;
	}
}

/* An array of non-negative integers only, or of strings only: 1 or 2. */
static int
scalar_array_kind(const json_t *a)
{
	const json_t *e;
	int kind = 0;
	size_t i;

	if (json_array_size(a) == 0 ||
	    json_array_size(a) > RTE_TEL_MAX_ARRAY_ENTRIES)
		return 0;
	json_array_foreach(a, i, e) {
		int k = json_is_integer(e) && json_integer_value(e) >= 0 ? 1 :
			json_is_string(e) ? 2 : 0;

		if (k == 0 || (kind != 0 && k != kind))
			return 0;
		kind = k;
	}
	return kind;
}

static struct rte_tel_data *
container(struct conv *cv, const json_t *v)
{
	struct rte_tel_data *c = rte_tel_data_alloc();
	char buf[RTE_TEL_MAX_STRING_LEN];
	unsigned int n = 0;
	const json_t *e;
	size_t i;
	int kind;

	if (c == NULL)
		return NULL;
	kind = json_is_array(v) ? scalar_array_kind(v) : 0;
	if (kind == 1) {
		rte_tel_data_start_array(c, RTE_TEL_U64_VAL);
		json_array_foreach(v, i, e)
			rte_tel_data_add_array_u64(c,
				(uint64_t)json_integer_value(e));
	} else if (kind == 2) {
		rte_tel_data_start_array(c, RTE_TEL_STRING_VAL);
		json_array_foreach(v, i, e) {
			snprintf(buf, sizeof(buf), "%s", json_string_value(e));
			rte_tel_data_add_array_string(c, buf);
		}
	} else {
		rte_tel_data_start_dict(c);
		flatten(cv, c, &n, "", v);
	}
	return c;
}

/* Fill @p d with the members of object @p o. */
static int
to_tel(struct rte_tel_data *d, const json_t *o)
{
	char name[RTE_TEL_MAX_STRING_LEN];
	struct conv cv = { false };
	struct rte_tel_data *c;
	unsigned int n = 0;
	const char *k;
	const json_t *v;

	if (!json_is_object(o))
		return -ENOMEM;
	rte_tel_data_start_dict(d);
	json_object_foreach((json_t *)o, k, v) {
		if (n >= DICT_ROOM) {
			cv.truncated = true;
			break;
		}
		tel_name(NULL, k, name, sizeof(name));
		if (!json_is_object(v) && !json_is_array(v)) {
			if (add_scalar(d, name, v) == 0)
				n++;
			continue;
		}
		c = container(&cv, v);
		if (c == NULL)
			return -ENOMEM;
		if (rte_tel_data_add_dict_container(d, name, c, 0) != 0) {
			rte_tel_data_free(c);
			cv.truncated = true;
			continue;
		}
		n++;
	}
	if (cv.truncated)
		rte_tel_data_add_dict_int(d, "truncated", 1);
	return 0;
}

/* ------------------------------------------------------------------ */
/* The commands (control thread). */

static bool
no_params(const char *params)
{
	return params == NULL || params[0] == '\0';
}

static int
finish(struct rte_tel_data *d, json_t *o)
{
	int rc;

	if (o == NULL)
		return -ENOMEM;
	rc = to_tel(d, o);
	json_decref(o);
	return rc;
}

/* The commands render the same snapshots as stats_get, pipeline_get and
 * the exporter. */

/* A command without params: @p render of a pipeline snapshot in @p o
 * (NULL when out of memory). */
static int
pipeline_view(const char *params, const struct pa_metrics_sources *src,
		json_t *(*render)(const struct pa_pipeline_snapshot *),
		json_t **o)
{
	struct pa_pipeline_snapshot s;

	if (!no_params(params) || src->pl == NULL)
		return -EINVAL;
	if (pa_pipeline_snapshot(src->pl, &s) != 0)
		return -ENOMEM;
	*o = render(&s);
	pa_pipeline_snapshot_free(&s);
	return 0;
}

static int
cmd_stats(const char *params, struct rte_tel_data *d,
		const struct pa_metrics_sources *src)
{
	json_t *o;
	int rc;

	rc = pipeline_view(params, src, pa_pipeline_snapshot_json, &o);
	if (rc != 0)
		return rc;
	if (o != NULL) {
		json_object_del(o, "ports");
		json_object_del(o, "lcores");
	}
	return finish(d, o);
}

static int
cmd_ports(const char *params, struct rte_tel_data *d,
		const struct pa_metrics_sources *src)
{
	json_t *o;
	int rc;

	rc = pipeline_view(params, src, pa_pipeline_ports_json, &o);
	return rc != 0 ? rc : finish(d, o);
}

/* Parse a decimal id 0..max (digits only). */
static int
parse_id(const char *s, unsigned long max, unsigned long *out)
{
	char *end;

	if (s[0] < '0' || s[0] > '9' || strlen(s) > 10)
		return -EINVAL;
	errno = 0;
	*out = strtoul(s, &end, 10);
	if (errno != 0 || *end != '\0' || *out > max)
		return -EINVAL;
	return 0;
}

static int
cmd_lcores(const char *params, struct rte_tel_data *d,
		const struct pa_metrics_sources *src)
{
	struct pa_pipeline_snapshot s;
	json_t *o = NULL;
	unsigned long id;
	unsigned int i;
	char key[16];

	if (src->pl == NULL)
		return -EINVAL;
	if (!no_params(params) && parse_id(params, RTE_MAX_LCORE, &id) != 0)
		return -EINVAL;
	if (pa_pipeline_snapshot(src->pl, &s) != 0)
		return -ENOMEM;
	if (no_params(params)) {
		o = pa_pipeline_lcores_json(&s);
		pa_pipeline_snapshot_free(&s);
		return finish(d, o);
	}
	/* the lcore whose key in stats_get's "lcores" is exactly params */
	for (i = 0; i < s.n_lcores; i++) {
		snprintf(key, sizeof(key), "%u", s.lcores[i].lcore_id);
		if (strcmp(key, params) == 0)
			break;
	}
	if (i == s.n_lcores) {
		pa_pipeline_snapshot_free(&s);
		return -ENOENT;
	}
	o = pa_pipeline_lcore_json(&s.lcores[i]);
	pa_pipeline_snapshot_free(&s);
	return finish(d, o);
}

static int
cmd_pipeline(const char *params, struct rte_tel_data *d,
		const struct pa_metrics_sources *src)
{
	struct pa_pipeline_snapshot s;
	json_t *desc, *roles, *rings, *cap;
	unsigned int i, j;
	char id[24];
	int rc = 0;

	if (!no_params(params) || src->pl == NULL)
		return -EINVAL;
	if (pa_pipeline_snapshot(src->pl, &s) != 0)
		return -ENOMEM;
	desc = pa_pipeline_describe_json(src->pl);
	roles = json_object();
	rings = json_object();
	cap = json_object();
	if (desc == NULL || roles == NULL || rings == NULL || cap == NULL)
		goto nomem;
	for (i = 0; i < s.n_lcores; i++) {
		const struct pa_pipeline_lcore_snapshot *w = &s.lcores[i];

		snprintf(id, sizeof(id), "%u", w->lcore_id);
		rc |= json_object_set_new(roles, id, json_string(w->role));
		for (j = 0; j < w->n_rings; j++) {
			rc |= json_object_set_new(rings, w->rings[j].name,
				json_integer((json_int_t)w->rings[j].count));
			rc |= json_object_set_new(cap, w->rings[j].name,
				json_integer((json_int_t)w->rings[j].capacity));
		}
	}
	if (rc != 0)
		goto nomem;
	pa_pipeline_snapshot_free(&s);
	json_object_del(desc, "lcores");
	json_object_set_new(desc, "roles", roles);
	json_object_set_new(desc, "rings", rings);
	json_object_set_new(desc, "ring_capacity", cap);
	return finish(d, desc);
nomem:
	pa_pipeline_snapshot_free(&s);
	json_decref(desc);
	json_decref(roles);
	json_decref(rings);
	json_decref(cap);
	return -ENOMEM;
}

/* The ACL's state and PAGE rules' hits from rule id @p params on (the
 * snapshot lists the rules by id). */
static int
cmd_acl(const char *params, struct rte_tel_data *d,
		const struct pa_metrics_sources *src)
{
	struct pa_acl_snapshot s;
	unsigned long first = 0;
	size_t i, shown = 0;
	json_t *o, *hits;
	char key[24];

	if (src->acl == NULL || src->pl == NULL)
		return -EINVAL;
	if (!no_params(params) && parse_id(params, UINT32_MAX, &first) != 0)
		return -EINVAL;
	if (pa_acl_snapshot(src->acl, PA_ACL_SNAPSHOT_RULES, &s) != 0)
		return -ENOMEM;
	o = pa_acl_snapshot_json(&s);
	hits = json_object();
	if (o == NULL || hits == NULL) {
		json_decref(o);
		json_decref(hits);
		pa_acl_snapshot_free(&s);
		return -ENOMEM;
	}
	for (i = 0; i < s.n_rule_counters; i++) {
		const struct pa_acl_rule_counters *r = &s.rule_counters[i];

		if (r->id < first)
			continue;
		if (shown == PAGE) {
			json_object_set_new(o, "next_id", json_integer(r->id));
			break;
		}
		snprintf(key, sizeof(key), "%" PRIu32, r->id);
		json_object_set_new(hits, key,
			json_integer((json_int_t)r->hits));
		shown++;
	}
	json_object_set_new(o, "hits", hits);
	pa_acl_snapshot_free(&s);
	return finish(d, o);
}

/* One service with its backends as columns: one array per field, in the
 * same order. */
static json_t *
lb_service_columns(const struct pa_lb_service_snapshot *v)
{
	json_t *o = pa_lb_service_snapshot_json(v), *col[7];
	char addr[INET6_ADDRSTRLEN];
	unsigned int j, k;
	int rc = 0;

	if (o == NULL)
		return NULL;
	json_object_del(o, "backends");
	for (k = 0; k < RTE_DIM(col); k++)
		col[k] = json_array();
	for (j = 0; j < v->cfg.n_backends; j++) {
		const struct pa_config_backend *be = &v->cfg.backends[j];
		const struct pa_lb_backend_snapshot *b = &v->backends[j];

		rc |= json_array_append_new(col[0], json_string(
			pa_net_format_ip(&be->addr, addr, sizeof(addr))));
		rc |= json_array_append_new(col[1], json_integer(be->port));
		rc |= json_array_append_new(col[2], json_integer(be->weight));
		rc |= json_array_append_new(col[3], json_string(
			pa_lb_config_state_name(be->state)));
		rc |= json_array_append_new(col[4],
			json_integer((json_int_t)b->flows));
		rc |= json_array_append_new(col[5],
			json_integer((json_int_t)b->packets));
		rc |= json_array_append_new(col[6],
			json_integer((json_int_t)b->bytes));
	}
	rc |= json_object_set_new(o, "backend_addr", col[0]);
	rc |= json_object_set_new(o, "backend_port", col[1]);
	rc |= json_object_set_new(o, "backend_weight", col[2]);
	rc |= json_object_set_new(o, "backend_state", col[3]);
	rc |= json_object_set_new(o, "backend_flows", col[4]);
	rc |= json_object_set_new(o, "backend_packets", col[5]);
	rc |= json_object_set_new(o, "backend_bytes", col[6]);
	if (rc != 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static int
cmd_lb(const char *params, struct rte_tel_data *d,
		const struct pa_metrics_sources *src)
{
	struct pa_lb_snapshot s;
	json_t *o = NULL, *flows;
	unsigned int i;

	if (src->lb == NULL || src->pl == NULL)
		return -EINVAL;
	if (pa_lb_snapshot(src->lb, PA_LB_SNAPSHOT_SERVICES, &s) != 0)
		return -ENOMEM;
	if (no_params(params)) {
		o = pa_lb_snapshot_json(&s);
		flows = json_object();
		if (o == NULL || flows == NULL) {
			json_decref(o);
			json_decref(flows);
			pa_lb_snapshot_free(&s);
			return -ENOMEM;
		}
		for (i = 0; i < s.n_services; i++) {
			if (i == PAGE) {
				json_object_set_new(o, "truncated", json_true());
				break;
			}
			json_object_set_new(flows, s.svc[i].cfg.name,
				json_integer((json_int_t)s.svc[i].flows));
		}
		json_object_set_new(o, "service_flows", flows);
		pa_lb_snapshot_free(&s);
		return finish(d, o);
	}
	for (i = 0; i < s.n_services; i++)
		if (strcmp(s.svc[i].cfg.name, params) == 0)
			break;
	if (i == s.n_services) {
		pa_lb_snapshot_free(&s);
		return -ENOENT;
	}
	o = lb_service_columns(&s.svc[i]);
	pa_lb_snapshot_free(&s);
	return finish(d, o);
}

static int
cmd_rpc(const char *params, struct rte_tel_data *d,
		const struct pa_metrics_sources *src)
{
	const struct pa_rpc_method *it;
	struct pa_rpc_counters rc;
	json_t *o, *calls, *errs;

	if (!no_params(params))
		return -EINVAL;
	o = json_object();
	calls = json_object();
	errs = json_object();
	if (o == NULL || calls == NULL || errs == NULL) {
		json_decref(o);
		json_decref(calls);
		json_decref(errs);
		return -ENOMEM;
	}
	for (it = pa_rpc_methods(); it != NULL; it = it->next) {
		json_object_set_new(calls, it->name,
			json_integer((json_int_t)it->calls));
		json_object_set_new(errs, it->name,
			json_integer((json_int_t)it->errors));
	}
	if (src->rpc != NULL) {
		pa_rpc_server_counters(src->rpc, &rc);
		json_object_set_new(o, "requests", json_integer(
			(json_int_t)rc.requests));
		json_object_set_new(o, "errors", json_integer(
			(json_int_t)rc.errors));
		json_object_set_new(o, "connections", json_integer(
			(json_int_t)rc.connections));
		json_object_set_new(o, "rejected_connections", json_integer(
			(json_int_t)rc.rejected_connections));
		json_object_set_new(o, "timed_out_connections", json_integer(
			(json_int_t)rc.timed_out_connections));
	}
	json_object_set_new(o, "unknown_method_calls", json_integer(
		(json_int_t)pa_rpc_unknown_method_calls()));
	json_object_set_new(o, "calls", calls);
	json_object_set_new(o, "call_errors", errs);
	return finish(d, o);
}

static const struct {
	const char *cmd;
	tel_answer_t answer;
	const char *help;
} commands[] = {
	{ "/pktaccel/stats", cmd_stats,
	  "Packet, drop, ACL and LB totals (stats_get without ports and lcores). Takes no parameters" },
	{ "/pktaccel/ports", cmd_ports,
	  "Per-port counters and link state. Takes no parameters" },
	{ "/pktaccel/lcores", cmd_lcores,
	  "Per-lcore counters (busy/idle polls, stage packets, drops). Parameter: an lcore id (optional)" },
	{ "/pktaccel/pipeline", cmd_pipeline,
	  "Pipeline mode, lcore roles, ring fill levels. Takes no parameters" },
	{ "/pktaccel/acl", cmd_acl,
	  "ACL table state and per-rule hits, 200 rules from an id. Parameter: first rule id (optional)" },
	{ "/pktaccel/lb", cmd_lb,
	  "LB totals and flows per service, or one service with its backends. Parameter: service name (optional)" },
	{ "/pktaccel/rpc", cmd_rpc,
	  "JSON-RPC calls and errors per method. Takes no parameters" },
};

/* ------------------------------------------------------------------ */
/* The mailbox. */

static tel_answer_t
answer_of(const char *cmd)
{
	size_t i;

	for (i = 0; i < RTE_DIM(commands); i++)
		if (strcmp(commands[i].cmd, cmd) == 0)
			return commands[i].answer;
	return NULL;
}

/* Telemetry thread. */
static int
tel_callback(const char *cmd, const char *params, struct rte_tel_data *d)
{
	tel_answer_t answer = answer_of(cmd);
	struct timespec deadline;
	int rc = 0;

	if (answer == NULL)
		return -EINVAL;
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += PA_METRICS_TELEMETRY_WAIT_MS / 1000;
	deadline.tv_nsec += (PA_METRICS_TELEMETRY_WAIT_MS % 1000) * 1000000L;
	if (deadline.tv_nsec >= 1000000000L) {
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000L;
	}
	if (pthread_mutex_timedlock(&tel.req_lock, &deadline) != 0)
		return -EBUSY;
	pthread_mutex_lock(&tel.lock);
	if (!tel.serving) {
		rc = -EAGAIN;
		goto out;
	}
	tel.answer = answer;
	tel.params = params;
	tel.d = d;
	tel.done = false;
	tel.pending = true;
	if (eventfd_write(tel.efd, 1) != 0) {
		rc = -errno;
		goto out_clear;
	}
	while (!tel.done && rc == 0)
		rc = pthread_cond_timedwait(&tel.cond, &tel.lock, &deadline);
	rc = tel.done ? tel.rc : -ETIMEDOUT;
out_clear:
	tel.pending = false;
	tel.d = NULL;
	tel.params = NULL;
out:
	pthread_mutex_unlock(&tel.lock);
	pthread_mutex_unlock(&tel.req_lock);
	return rc;
}

int
pa_metrics_telemetry_init(void)
{
	size_t i;
	int rc;

	if (tel.registered)
		return 0;
	tel.efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (tel.efd < 0)
		return -errno;
	for (i = 0; i < RTE_DIM(commands); i++) {
		rc = rte_telemetry_register_cmd(commands[i].cmd, tel_callback,
			commands[i].help);
		if (rc != 0) {
			TEL_LOG(ERR, "cannot register telemetry command %s: %s",
				commands[i].cmd, strerror(-rc));
			/* commands registered stay; they answer -EAGAIN */
			return rc;
		}
	}
	tel.registered = true;
	return 0;
}

int
pa_metrics_telemetry_fd(void)
{
	return tel.efd;
}

void
pa_metrics_telemetry_serve(const struct pa_metrics_sources *src)
{
	pthread_mutex_lock(&tel.lock);
	if (src != NULL) {
		tel.src = *src;
		tel.serving = true;
	} else {
		memset(&tel.src, 0, sizeof(tel.src));
		tel.serving = false;
		if (tel.pending && !tel.done) {
			tel.rc = -EAGAIN;
			tel.done = true;
			pthread_cond_broadcast(&tel.cond);
		}
	}
	pthread_mutex_unlock(&tel.lock);
}

void
pa_metrics_telemetry_run(void)
{
	eventfd_t v;

	if (tel.efd < 0)
		return;
	(void)eventfd_read(tel.efd, &v);	/* EAGAIN: nothing new */
	pthread_mutex_lock(&tel.lock);
	if (tel.pending && !tel.done && tel.serving) {
		tel.rc = tel.answer(tel.params, tel.d, &tel.src);
		tel.done = true;
		pthread_cond_broadcast(&tel.cond);
	}
	pthread_mutex_unlock(&tel.lock);
}
