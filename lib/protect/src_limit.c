/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The per-source new-flow limiter (pa_protect_src.h): its memory and its
 * constants. The bucket arithmetic is inline, for the lb stage.
 */
#include <errno.h>

#include <rte_byteorder.h>
#include <rte_errno.h>
#include <rte_malloc.h>

#include "pa_protect_src.h"

size_t
pa_protect_src_bytes(uint32_t cols)
{
	if (cols == 0)
		cols = PA_PROTECT_SRC_COLS;
	return sizeof(struct pa_protect_src) +
		(size_t)PA_PROTECT_SRC_ROWS * cols * sizeof(uint64_t);
}

struct pa_protect_src *
pa_protect_src_create(const struct pa_config_protect *cfg,
		unsigned int n_lcores, uint32_t cols, uint64_t hz, int socket)
{
	struct pa_protect_src *s;
	unsigned __int128 x;
	unsigned int i;
	uint64_t burst;

	if (cols == 0)
		cols = PA_PROTECT_SRC_COLS;
	if (cfg == NULL || !cfg->src_new_flows.enabled ||
	    cfg->src_new_flows.rate == 0 || n_lcores == 0 || hz == 0 ||
	    !rte_is_power_of_2(cols) ||
	    cfg->src_new_flows.prefix4 < 1 || cfg->src_new_flows.prefix4 > 32 ||
	    cfg->src_new_flows.prefix6 < 1 ||
	    cfg->src_new_flows.prefix6 > 128) {
		rte_errno = EINVAL;
		return NULL;
	}
	s = rte_zmalloc_socket("pa_protect_src", pa_protect_src_bytes(cols),
		RTE_CACHE_LINE_SIZE, socket);
	if (s == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	s->tat = (uint64_t *)(s + 1);
	s->mask = cols - 1;
	/* this lcore's share: rate / n tokens a second, so one every
	 * n * hz / rate cycles; a burst of burst / n tokens, i.e. the clock
	 * may run (burst / n - 1) intervals ahead */
	x = (unsigned __int128)hz * n_lcores / cfg->src_new_flows.rate;
	s->interval = x > 0 ? (uint64_t)x : 1;
	burst = cfg->src_new_flows.burst != 0 ? cfg->src_new_flows.burst :
		cfg->src_new_flows.rate;
	x = (unsigned __int128)hz * burst / cfg->src_new_flows.rate;
	s->tolerance = x > s->interval ? (uint64_t)x - s->interval : 0;
	s->mask4 = rte_cpu_to_be_32(cfg->src_new_flows.prefix4 == 32 ?
		UINT32_MAX : ~(UINT32_MAX >> cfg->src_new_flows.prefix4));
	for (i = 0; i < 16; i++) {
		int bits = (int)cfg->src_new_flows.prefix6 - (int)i * 8;

		s->mask6[i] = bits >= 8 ? 0xff : bits <= 0 ? 0 :
			(uint8_t)(0xff << (8 - bits));
	}
	return s;
}

void
pa_protect_src_free(struct pa_protect_src *s)
{
	rte_free(s);
}
