/* SPDX-License-Identifier: BSD-3-Clause */
#include <stddef.h>

#include "pa_stats.h"

static const char *const drop_names[PA_DROP_MAX] = {
	[PA_DROP_MALFORMED] = "malformed",
	[PA_DROP_ACL] = "acl",
	[PA_DROP_POLICE] = "police",
	[PA_DROP_NON_IP] = "non_ip",
	[PA_DROP_NO_BACKEND] = "no_backend",
	[PA_DROP_MTU] = "mtu",
	[PA_DROP_RING_FULL] = "ring_full",
	[PA_DROP_TX_FULL] = "tx_full",
	[PA_DROP_RX_ERROR] = "rx_error",
	[PA_DROP_SHUTDOWN] = "shutdown",
	[PA_DROP_LOCAL] = "local",
	[PA_DROP_NEIGH_RING_FULL] = "neigh_ring_full",
};

static const char *const stage_names[PA_STAGE_MAX] = {
	[PA_STAGE_RX] = "rx",
	[PA_STAGE_CLASSIFY] = "classify",
	[PA_STAGE_LB] = "lb",
	[PA_STAGE_TX] = "tx",
};

const char *
pa_stats_drop_name(enum pa_drop_reason r)
{
	return (unsigned int)r < PA_DROP_MAX ? drop_names[r] : "unknown";
}

const char *
pa_stats_stage_name(enum pa_stage_id s)
{
	return (unsigned int)s < PA_STAGE_MAX ? stage_names[s] : "unknown";
}

static inline uint64_t
read_once(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

void
pa_stats_accumulate(struct pa_lcore_stats *dst,
		const struct pa_lcore_stats *src)
{
	unsigned int i;

	dst->rx_packets += read_once(&src->rx_packets);
	dst->tx_packets += read_once(&src->tx_packets);
	for (i = 0; i < PA_STAGE_MAX; i++)
		dst->stage_packets[i] += read_once(&src->stage_packets[i]);
	for (i = 0; i < PA_DROP_MAX; i++)
		dst->drops[i] += read_once(&src->drops[i]);
	dst->busy_polls += read_once(&src->busy_polls);
	dst->idle_polls += read_once(&src->idle_polls);
	dst->busy_cycles += read_once(&src->busy_cycles);
	dst->ctrl_tx_packets += read_once(&src->ctrl_tx_packets);
	dst->ctrl_tx_dropped += read_once(&src->ctrl_tx_dropped);
}

uint64_t
pa_stats_total_drops(const struct pa_lcore_stats *s)
{
	uint64_t sum = 0;
	unsigned int i;

	for (i = 0; i < PA_DROP_MAX; i++)
		sum += s->drops[i];
	return sum;
}

json_t *
pa_stats_drops_json(const struct pa_lcore_stats *s)
{
	json_t *o = json_object();
	unsigned int i;

	if (o == NULL)
		return NULL;
	for (i = 0; i < PA_DROP_MAX; i++) {
		if (json_object_set_new(o, drop_names[i],
				json_integer((json_int_t)s->drops[i])) != 0) {
			json_decref(o);
			return NULL;
		}
	}
	return o;
}
