/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The lcore watchdog: has each data-path lcore's loop counter moved
 * within stall_ms? Pure (the caller samples the counters and the clock),
 * so that it is tested with a fake clock.
 */
#include <string.h>

#include "pa_announce.h"

void
pa_watchdog_init(struct pa_watchdog *wd, unsigned int n, uint32_t stall_ms)
{
	memset(wd, 0, sizeof(*wd));
	wd->n = n < PA_WATCHDOG_MAX ? n : PA_WATCHDOG_MAX;
	wd->stall_ms = stall_ms;
}

unsigned int
pa_watchdog_update(struct pa_watchdog *wd, const uint64_t *counts,
		uint64_t now_ms)
{
	unsigned int i, stalled = 0;

	for (i = 0; i < wd->n; i++) {
		if (!wd->primed || counts[i] != wd->count[i]) {
			wd->count[i] = counts[i];
			wd->moved_ms[i] = now_ms;
			wd->stalled[i] = false;
			continue;
		}
		if (now_ms - wd->moved_ms[i] >= wd->stall_ms) {
			if (!wd->stalled[i])
				wd->stalls[i]++;
			wd->stalled[i] = true;
			stalled++;
		}
	}
	wd->primed = true;
	return stalled;
}

uint64_t
pa_watchdog_stalled_ms(const struct pa_watchdog *wd, unsigned int i,
		uint64_t now_ms)
{
	if (i >= wd->n || !wd->primed || now_ms < wd->moved_ms[i])
		return 0;
	return now_ms - wd->moved_ms[i];
}
