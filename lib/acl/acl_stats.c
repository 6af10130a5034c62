/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ACL's reporting: its snapshot (filled by pa_acl_snapshot() in
 * acl.c, under the ACL's lock) rendered as the "acl" object of stats_get,
 * and released. The exporter and telemetry walk the same struct.
 */
#include <stdlib.h>

#include <jansson.h>

#include "pa_acl.h"

void
pa_acl_snapshot_free(struct pa_acl_snapshot *s)
{
	if (s == NULL)
		return;
	free(s->rule_counters);
	s->rule_counters = NULL;
	s->n_rule_counters = 0;
}

json_t *
pa_acl_snapshot_json(const struct pa_acl_snapshot *s)
{
	return json_pack("{s:i, s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:f, s:f, s:I, s:s, s:I, s:I, s:I, s:I}",
		"rules", (int)s->rules,
		"default", s->def == PA_ACL_DROP ? "drop" : "permit",
		"non_ip", s->non_ip_drop ? "drop" : "forward",
		"default_hits", (json_int_t)s->default_hits,
		"non_ip_frames", (json_int_t)s->non_ip_frames,
		"version", (json_int_t)s->version,
		"folds", (json_int_t)s->folds,
		"delta_rules", (json_int_t)s->delta_rules,
		"builds", (json_int_t)s->builds,
		"build_ms", s->build_ms,
		"update_ms", s->update_ms,
		"memory_bytes", (json_int_t)s->memory_bytes,
		"algorithm", s->algorithm,
		"flow_cache_entries", (json_int_t)s->flow_cache_entries,
		"flow_cache_hits", (json_int_t)s->flow_cache_hits,
		"flow_cache_misses", (json_int_t)s->flow_cache_misses,
		"flow_cache_pauses", (json_int_t)s->flow_cache_pauses);
}

json_t *
pa_acl_stats_json(const struct pa_acl *acl)
{
	struct pa_acl_snapshot s;

	if (pa_acl_snapshot(acl, 0, &s) != 0)
		return NULL;
	return pa_acl_snapshot_json(&s);
}
