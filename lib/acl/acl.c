/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ACL's life cycle (create, destroy) and reporting: the rule list
 * with hit counters, stats, and the export of the live rule set to the
 * configuration.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_log.h>
#include <rte_malloc.h>

#include "acl_priv.h"
#include "pa_err.h"

RTE_LOG_REGISTER(pa_acl_logtype, pa.acl, INFO);

/* ------------------------------------------------------------------ */
/* Life cycle                                                          */
/* ------------------------------------------------------------------ */

static void
fcache_free(struct pa_acl *acl)
{
	unsigned int l;

	if (acl->fc == NULL)
		return;
	for (l = 0; l < acl->n_lcores; l++) {
		rte_free(acl->fc[l].v4);
		rte_free(acl->fc[l].v6);
	}
	rte_free(acl->fc);
	acl->fc = NULL;
}

/* @p entries (acl.flow_cache: 0, or at least 256) per lcore and family,
 * rounded up to a power of two: entries / 2 sets of each family (IPv4
 * sets hold 3 flows in a line, IPv6 ones 3 in two); zeroed: empty. */
static int
fcache_create(struct pa_acl *acl, uint32_t entries, char *err,
		size_t err_len)
{
	uint32_t sets;
	unsigned int l;

	RTE_BUILD_BUG_ON(sizeof(struct acl_fc4_set) != RTE_CACHE_LINE_SIZE);
	RTE_BUILD_BUG_ON(sizeof(struct acl_fc6_set) !=
		2 * RTE_CACHE_LINE_SIZE);
	RTE_BUILD_BUG_ON(offsetof(struct acl_fc6_set, k) != 8);
	acl->fc_config = entries;
	if (entries == 0)
		return 0;
	entries = rte_align32pow2(entries);
	sets = entries / 2;
	acl->fc = rte_zmalloc_socket("pa_acl_fc", sizeof(*acl->fc) *
		acl->n_lcores, RTE_CACHE_LINE_SIZE, acl->socket);
	if (acl->fc == NULL)
		goto nomem;
	for (l = 0; l < acl->n_lcores; l++) {
		struct acl_fcache *fc = &acl->fc[l];

		fc->shift = 64 - (unsigned int)rte_log2_u32(sets);
		fc->v4 = rte_zmalloc_socket("pa_acl_fc4",
			sizeof(*fc->v4) * sets, RTE_CACHE_LINE_SIZE,
			acl->socket);
		fc->v6 = rte_zmalloc_socket("pa_acl_fc6",
			sizeof(*fc->v6) * sets, sizeof(*fc->v6), acl->socket);
		if (fc->v4 == NULL || fc->v6 == NULL)
			goto nomem;
	}
	acl->fc_entries = entries;
	return 0;
nomem:
	fcache_free(acl);
	pa_seterr(err, err_len,
		"out of memory for the ACL's flow cache (%u entries for each of %u lcores: %u KB; lower acl.flow_cache, 0 turns it off)",
		entries, acl->n_lcores, (unsigned int)((uint64_t)sets *
		(sizeof(struct acl_fc4_set) +
		 sizeof(struct acl_fc6_set)) * acl->n_lcores / 1024));
	return -ENOMEM;
}

struct pa_acl *
pa_acl_create(const struct pa_acl_opts *o, char *err, size_t err_len)
{
	static bool defs_ready;
	struct pa_acl *acl;
	const struct pa_config_acl *a = &o->cfg->acl;
	uint32_t cap;

	if (!defs_ready) {
		acl_defs_init();
		defs_ready = true;
	}
	acl = rte_zmalloc_socket("pa_acl", sizeof(*acl), RTE_CACHE_LINE_SIZE,
		o->socket);
	if (acl == NULL) {
		pa_seterr(err, err_len, "out of memory for the ACL");
		return NULL;
	}
	pthread_mutex_init(&acl->lock, NULL);
	pthread_cond_init(&acl->wake, NULL);
	acl->rcu = o->rcu;
	acl->n_lcores = RTE_MAX(o->n_lcores, 1u);
	acl->socket = o->socket;
	acl->cfg = o->cfg;
	acl->port_index_of = o->port_index_of;
	acl->alg = acl_best_algorithm(o->socket);
	acl->dp.extra = rte_zmalloc_socket("pa_acl_extra",
		sizeof(*acl->dp.extra) * acl->n_lcores, RTE_CACHE_LINE_SIZE,
		o->socket);
	cap = RTE_MAX((uint32_t)ACL_MIN_SLOTS, rte_align32pow2(a->n_rules));
	acl->store = acl_store_new(cap, acl->n_lcores, o->socket);
	acl->slot_used = calloc(cap, 1);
	if (acl->dp.extra == NULL || acl->store == NULL ||
	    acl->slot_used == NULL) {
		pa_seterr(err, err_len, "out of memory for the ACL");
		goto fail;
	}
	if (fcache_create(acl, a->flow_cache, err, err_len) != 0)
		goto fail;
	acl->def = a->def;
	acl->non_ip_drop = a->non_ip_drop;
	if (acl_apply(acl, a->rules, a->n_rules, a->def, a->non_ip_drop, true,
			err, err_len) != 0)
		goto fail;
	if (!o->no_folder)
		acl_folder_start(acl);
	ACL_LOG(INFO, "%u rules, default %s, classify algorithm %s",
		acl->n_rules, acl->def == PA_ACL_DROP ? "drop" : "permit",
		pa_acl_algorithm(acl));
	return acl;
fail:
	pa_acl_destroy(acl);
	return NULL;
}

void
pa_acl_stop_folder(struct pa_acl *acl)
{
	if (acl != NULL)
		acl_folder_stop(acl);
}

void
pa_acl_destroy(struct pa_acl *acl)
{
	if (acl == NULL)
		return;
	acl_folder_stop(acl);
	acl_table_free(acl->live);
	acl_store_free(acl->store, acl->n_lcores);
	fcache_free(acl);
	rte_free(acl->dp.extra);
	free(acl->slot_used);
	free(acl->rules);
	free(acl->rule_slot);
	free(acl->rule_tier);
	free(acl->zombie);
	pthread_mutex_destroy(&acl->lock);
	pthread_cond_destroy(&acl->wake);
	rte_free(acl);
}

/* ------------------------------------------------------------------ */
/* Reporting                                                           */
/* ------------------------------------------------------------------ */

static void
slot_hits(const struct pa_acl *acl, uint32_t slot, uint64_t *pkts,
		uint64_t *bytes)
{
	unsigned int l;

	*pkts = 0;
	*bytes = 0;
	for (l = 0; l < acl->n_lcores; l++) {
		*pkts += __atomic_load_n(&acl->store->hits[l][slot].packets,
			__ATOMIC_RELAXED);
		*bytes += __atomic_load_n(&acl->store->hits[l][slot].bytes,
			__ATOMIC_RELAXED);
	}
}

static json_t *
rules_json_locked(const struct pa_acl *acl)
{
	struct acl_rank_item *rank;
	json_t *arr = json_array();
	unsigned int i;

	rank = calloc(acl->n_rules + 1, sizeof(*rank));
	if (arr == NULL || rank == NULL) {
		free(rank);
		json_decref(arr);
		return NULL;
	}
	for (i = 0; i < acl->n_rules; i++)
		rank[i] = (struct acl_rank_item){ acl->rules[i].priority,
			acl->rules[i].id, i };
	qsort(rank, acl->n_rules, sizeof(*rank), acl_rank_cmp);
	for (i = 0; i < acl->n_rules; i++) {
		unsigned int k = rank[i].index;
		uint64_t pkts, bytes;
		json_t *o = pa_acl_config_rule_to_json(&acl->rules[k], acl->cfg);

		if (o == NULL) {
			json_decref(arr);
			arr = NULL;
			break;
		}
		slot_hits(acl, acl->rule_slot[k], &pkts, &bytes);
		json_object_set_new(o, "hits", json_integer((json_int_t)pkts));
		json_object_set_new(o, "bytes", json_integer((json_int_t)bytes));
		json_array_append_new(arr, o);
	}
	free(rank);
	return arr;
}

static int
snapshot_locked(const struct pa_acl *acl, unsigned int flags,
		struct pa_acl_snapshot *s)
{
	unsigned int l, k;

	memset(s, 0, sizeof(*s));
	for (l = 0; l < acl->n_lcores; l++) {
		s->default_hits += __atomic_load_n(
			&acl->dp.extra[l].default_hits, __ATOMIC_RELAXED);
		s->non_ip_frames += __atomic_load_n(&acl->dp.extra[l].non_ip,
			__ATOMIC_RELAXED);
		s->flow_cache_hits += __atomic_load_n(
			&acl->dp.extra[l].fc_hits, __ATOMIC_RELAXED);
		s->flow_cache_misses += __atomic_load_n(
			&acl->dp.extra[l].fc_misses, __ATOMIC_RELAXED);
		s->flow_cache_pauses += __atomic_load_n(
			&acl->dp.extra[l].fc_pauses, __ATOMIC_RELAXED);
	}
	s->flow_cache_entries = acl->fc_entries;
	s->rules = acl->n_rules;
	s->def = acl->def;
	s->non_ip_drop = acl->non_ip_drop;
	s->version = acl->version;
	s->folds = acl->folds;
	s->delta_rules = acl->n_delta;
	s->builds = acl->builds;
	s->build_ms = acl->last_build_ms;
	s->update_ms = acl->last_update_ms;
	s->memory_bytes = acl->last_memory;
	s->algorithm = pa_acl_algorithm(acl);
	if (!(flags & PA_ACL_SNAPSHOT_RULES) || acl->n_rules == 0)
		return 0;
	s->rule_counters = calloc(acl->n_rules, sizeof(*s->rule_counters));
	if (s->rule_counters == NULL)
		return -ENOMEM;
	/* acl->rules is sorted by id */
	for (k = 0; k < acl->n_rules; k++) {
		s->rule_counters[k].id = acl->rules[k].id;
		slot_hits(acl, acl->rule_slot[k], &s->rule_counters[k].hits,
			&s->rule_counters[k].bytes);
	}
	s->n_rule_counters = acl->n_rules;
	return 0;
}

static int
export_locked(const struct pa_acl *acl, struct pa_config_acl *out)
{
	struct pa_config_acl_rule *r = NULL;

	if (acl->n_rules != 0) {
		r = calloc(acl->n_rules, sizeof(*r));
		if (r == NULL)
			return -ENOMEM;
		memcpy(r, acl->rules, sizeof(*r) * acl->n_rules);
	}
	free(out->rules);
	out->rules = r;
	out->n_rules = acl->n_rules;
	out->def = acl->def;
	out->non_ip_drop = acl->non_ip_drop;
	out->flow_cache = acl->fc_config;
	out->present = true;
	return 0;
}

json_t *
pa_acl_rules_json(const struct pa_acl *acl)
{
	return ACL_LOCKED(acl, rules_json_locked(acl));
}

int
pa_acl_snapshot(const struct pa_acl *acl, unsigned int flags,
		struct pa_acl_snapshot *s)
{
	return ACL_LOCKED(acl, snapshot_locked(acl, flags, s));
}

int
pa_acl_export(const struct pa_acl *acl, struct pa_config_acl *out)
{
	return ACL_LOCKED(acl, export_locked(acl, out));
}
