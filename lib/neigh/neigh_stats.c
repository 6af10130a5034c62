/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The neighbour subsystem's reporting: its counter snapshot rendered as
 * the "neigh" object of stats_get (the exporter walks the same struct).
 */
#include <jansson.h>

#include "pa_neigh.h"

json_t *
pa_neigh_snapshot_json(const struct pa_neigh_snapshot *s)
{
	json_t *o, *inv, *states;
	unsigned int i;

	inv = json_object();
	states = json_object();
	if (inv == NULL || states == NULL)
		goto nomem;
	for (i = 1; i < PA_NEIGH_BAD_MAX; i++)
		if (json_object_set_new(inv, pa_neigh_bad_name((int)i),
				json_integer((json_int_t)s->invalid[i])) != 0)
			goto nomem;
	for (i = 0; i < PA_NEIGH_STATE_MAX; i++)
		if (json_object_set_new(states, pa_neigh_state_name(
				(enum pa_neigh_state)i),
				json_integer((json_int_t)s->states[i])) != 0)
			goto nomem;
	o = json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:o, s:I, s:o}",
		"rx", (json_int_t)s->rx,
		"arp_requests_in", (json_int_t)s->arp_requests_in,
		"arp_replies_in", (json_int_t)s->arp_replies_in,
		"ns_in", (json_int_t)s->ns_in,
		"na_in", (json_int_t)s->na_in,
		"arp_replies_out", (json_int_t)s->arp_replies_out,
		"arp_requests_out", (json_int_t)s->arp_requests_out,
		"na_out", (json_int_t)s->na_out,
		"ns_out", (json_int_t)s->ns_out,
		"learned", (json_int_t)s->learned,
		"resolved", (json_int_t)s->resolved,
		"failed", (json_int_t)s->failed,
		"unsolicited", (json_int_t)s->unsolicited,
		"conflicts", (json_int_t)s->conflicts,
		"not_ours", (json_int_t)s->not_ours,
		"cache_full", (json_int_t)s->cache_full,
		"no_source_address", (json_int_t)s->no_source_address,
		"tx_no_mbuf", (json_int_t)s->tx_no_mbuf,
		"tx_ring_full", (json_int_t)s->tx_ring_full,
		"unknown_port", (json_int_t)s->unknown_port,
		"invalid", inv,
		"entries", (json_int_t)s->entries,
		"states", states);
	/* "o" steals inv and states, even when it fails */
	if (o == NULL)
		return NULL;
	if (s->has_lcore_tx &&
	    (json_object_set_new(o, "tx_sent",
			json_integer((json_int_t)s->tx_sent)) != 0 ||
	     json_object_set_new(o, "tx_dropped",
			json_integer((json_int_t)s->tx_dropped)) != 0)) {
		json_decref(o);
		return NULL;
	}
	return o;
nomem:
	json_decref(inv);
	json_decref(states);
	return NULL;
}

json_t *
pa_neigh_stats_json(struct pa_neigh *n, const struct pa_lcore_stats *sum)
{
	struct pa_neigh_snapshot s;

	if (n == NULL)
		return json_object();
	pa_neigh_snapshot(n, sum, &s);
	return pa_neigh_snapshot_json(&s);
}
