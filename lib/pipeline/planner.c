/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The lcore planner: a pure function of the configuration, the lcores EAL
 * offers and the ports' NUMA sockets, so that it can be unit-tested.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_common.h>

#include "pa_err.h"
#include "pa_pipeline.h"

static const char *const stage_key[PA_CONFIG_STAGE_MAX] = {
	"rx", "classify", "lb", "tx", "worker",
};

static int
find_avail(const struct pa_plan_lcore *avail, unsigned int n_avail,
		unsigned int lcore)
{
	unsigned int i;

	for (i = 0; i < n_avail; i++)
		if (avail[i].lcore_id == lcore)
			return (int)i;
	return -1;
}

static int
plan_explicit(const struct pa_config_pipeline *pc,
		const struct pa_plan_lcore *avail, unsigned int n_avail,
		struct pa_plan *plan, char *err, size_t err_len)
{
	unsigned int s, i;

	for (s = 0; s < PA_CONFIG_STAGE_MAX; s++) {
		if (pc->n_lcores[s] > PA_PIPELINE_MAX_STAGE) {
			pa_seterr(err, err_len,
				"$.pipeline.lcores.%s: %u lcores, at most %u per stage",
				stage_key[s], pc->n_lcores[s],
				PA_PIPELINE_MAX_STAGE);
			return -EINVAL;
		}
		for (i = 0; i < pc->n_lcores[s]; i++) {
			unsigned int l = pc->lcores[s][i];

			if (find_avail(avail, n_avail, l) < 0) {
				pa_seterr(err, err_len,
					"$.pipeline.lcores.%s[%u]: lcore %u unavailable (not enabled in EAL, or the main lcore)",
					stage_key[s], i, l);
				return -ENODEV;
			}
			plan->lcores[s][i] = l;
		}
		plan->n[s] = pc->n_lcores[s];
	}
	if (pc->mode == PA_PIPELINE_RTC && plan->n[PA_CONFIG_STAGE_WORKER] == 0) {
		pa_seterr(err, err_len, "$.pipeline.lcores.worker: no worker lcore");
		return -EINVAL;
	}
	if (pc->mode == PA_PIPELINE_STAGED) {
		for (s = 0; s < PA_CONFIG_STAGE_WORKER; s++) {
			if (plan->n[s] == 0) {
				pa_seterr(err, err_len,
					"$.pipeline.lcores.%s: no lcore for this stage",
					stage_key[s]);
				return -EINVAL;
			}
		}
	}
	return 0;
}

static bool
on_port_socket(int socket, const int *port_sockets, unsigned int n_ports)
{
	unsigned int i;

	for (i = 0; i < n_ports; i++)
		if (port_sockets[i] == socket)
			return true;
	return false;
}

int
pa_plan_make(const struct pa_config_pipeline *pc,
		const struct pa_plan_lcore *avail, unsigned int n_avail,
		const int *port_sockets, unsigned int n_ports,
		struct pa_plan *plan, char *err, size_t err_len)
{
	static const enum pa_config_stage extra_order[] = {
		PA_CONFIG_STAGE_CLASSIFY, PA_CONFIG_STAGE_LB,
		PA_CONFIG_STAGE_RX, PA_CONFIG_STAGE_TX,
	};
	unsigned int chosen[PA_PIPELINE_MAX_LCORES];
	unsigned int n_chosen = 0, need, i, s;

	memset(plan, 0, sizeof(*plan));
	plan->mode = pc->mode;
	if (pc->lcores_set)
		return plan_explicit(pc, avail, n_avail, plan, err, err_len);

	need = pc->mode == PA_PIPELINE_RTC ? 1 : 4;
	/* Prefer the ports' sockets; fall back to every lcore. */
	for (i = 0; i < n_avail && n_chosen < PA_PIPELINE_MAX_LCORES; i++)
		if (n_ports == 0 ||
		    on_port_socket(avail[i].socket, port_sockets, n_ports))
			chosen[n_chosen++] = avail[i].lcore_id;
	if (n_chosen < need) {
		n_chosen = 0;
		for (i = 0; i < n_avail && n_chosen < PA_PIPELINE_MAX_LCORES; i++)
			chosen[n_chosen++] = avail[i].lcore_id;
	}
	if (n_chosen == 0) {
		pa_seterr(err, err_len,
			"$.pipeline.mode: %s mode needs a worker lcore, EAL offers none besides the main lcore",
			pc->mode == PA_PIPELINE_RTC ? "rtc" : "pipeline");
		return -ENODEV;
	}
	if (pc->mode == PA_PIPELINE_STAGED && n_chosen < need) {
		/* Fewer lcores than stages: put stages together (3: rx+tx,
		 * classify, lb; 2: rx+classify, lb+tx, one ring hop a packet
		 * and the two halves of the path's cost about even; 1: all
		 * four). docs/performance.md, "Pipeline mode: which two
		 * halves". */
		plan->lcores[PA_CONFIG_STAGE_RX][0] = chosen[0];
		plan->lcores[PA_CONFIG_STAGE_TX][0] =
			chosen[n_chosen == 2 ? 1 : 0];
		plan->lcores[PA_CONFIG_STAGE_CLASSIFY][0] =
			chosen[n_chosen > 2 ? 1 : 0];
		plan->lcores[PA_CONFIG_STAGE_LB][0] =
			chosen[n_chosen > 2 ? 2 : n_chosen - 1];
		for (s = 0; s < PA_CONFIG_STAGE_WORKER; s++)
			plan->n[s] = 1;
		return 0;
	}

	if (pc->mode == PA_PIPELINE_RTC) {
		n_chosen = RTE_MIN(n_chosen, (unsigned int)PA_PIPELINE_MAX_STAGE);
		for (i = 0; i < n_chosen; i++)
			plan->lcores[PA_CONFIG_STAGE_WORKER][i] = chosen[i];
		plan->n[PA_CONFIG_STAGE_WORKER] = n_chosen;
		return 0;
	}
	for (s = 0; s < PA_CONFIG_STAGE_WORKER; s++)
		plan->lcores[s][plan->n[s]++] = chosen[s];
	for (i = 4; i < n_chosen; i++) {
		s = extra_order[(i - 4) % RTE_DIM(extra_order)];
		if (plan->n[s] >= PA_PIPELINE_MAX_STAGE)
			break;
		plan->lcores[s][plan->n[s]++] = chosen[i];
	}
	return 0;
}

static unsigned int
unit_of(struct pa_plan_layout *lay, unsigned int lcore)
{
	unsigned int i;

	for (i = 0; i < lay->n; i++)
		if (lay->unit[i].lcore_id == lcore)
			return i;
	return UINT32_MAX;
}

int
pa_plan_layout(const struct pa_plan *plan, struct pa_plan_layout *lay)
{
	unsigned int st, i, k, s, e;
	struct pa_plan_unit *u;

	memset(lay, 0, sizeof(*lay));
	for (st = 0; st < PA_STAGE_MAX; st++) {
		/* rtc: every worker runs every stage */
		unsigned int cs = plan->mode == PA_PIPELINE_RTC ?
			PA_CONFIG_STAGE_WORKER : st;

		for (i = 0; i < plan->n[cs] && i < PA_PIPELINE_MAX_STAGE; i++) {
			k = unit_of(lay, plan->lcores[cs][i]);
			if (k == UINT32_MAX) {
				if (lay->n == PA_PIPELINE_MAX_LCORES)
					return -E2BIG;
				k = lay->n++;
				lay->unit[k].lcore_id = plan->lcores[cs][i];
			}
			lay->unit[k].stages |= 1u << st;
			lay->of_stage[st][lay->n_stage[st]++] = k;
		}
	}
	/* Segments: from rx (the ports), and from each stage whose stage
	 * before has an lcore that does not run it (a ring comes in). */
	for (k = 0; k < lay->n; k++) {
		u = &lay->unit[k];
		for (s = 0; s < PA_STAGE_MAX; s++) {
			bool fed = s == PA_STAGE_RX;

			if (!(u->stages & (1u << s)))
				continue;
			for (i = 0; !fed && i < lay->n_stage[s - 1]; i++)
				fed = pa_plan_unit_hops(
					&lay->unit[lay->of_stage[s - 1][i]], s - 1);
			if (!fed)
				continue;
			for (e = s; e + 1 < PA_STAGE_MAX &&
			     (u->stages & (1u << (e + 1))); e++)
				;
			u->seg[u->n_seg++] = (struct pa_plan_seg){
				.first = (uint8_t)s, .last = (uint8_t)e };
		}
	}
	return 0;
}

const char *
pa_plan_stages_name(unsigned int mask)
{
	static const char *const names[1u << PA_STAGE_MAX] = {
		"", "rx", "classify", "rx+classify", "lb", "rx+lb",
		"classify+lb", "rx+classify+lb", "tx", "rx+tx", "classify+tx",
		"rx+classify+tx", "lb+tx", "rx+lb+tx", "classify+lb+tx",
		"rx+classify+lb+tx",
	};

	return names[mask & ((1u << PA_STAGE_MAX) - 1)];
}

unsigned int
pa_plan_wanted_lcores(const struct pa_config_pipeline *pc,
		unsigned int *ids, unsigned int max)
{
	unsigned int n = 0, s, i, j;
	bool dup;

	if (!pc->lcores_set) {
		unsigned int want = pc->mode == PA_PIPELINE_RTC ? 1 : 4;

		for (i = 0; i < want && n < max; i++)
			ids[n++] = i + 1;
		return n;
	}
	for (s = 0; s < PA_CONFIG_STAGE_MAX; s++) {
		for (i = 0; i < pc->n_lcores[s] && n < max; i++) {
			dup = false;
			for (j = 0; j < n; j++)
				dup |= ids[j] == pc->lcores[s][i];
			if (!dup)
				ids[n++] = pc->lcores[s][i];
		}
	}
	return n;
}

static int
append(char *buf, size_t len, size_t *off, const char *fmt, unsigned int v)
{
	int w = snprintf(buf + *off, len - *off, fmt, v);

	if (w < 0 || (size_t)w >= len - *off)
		return -ENOSPC;
	*off += (size_t)w;
	return 0;
}

int
pa_plan_lcores_arg(const unsigned int *ids, unsigned int n_ids,
		const unsigned int *cpus, unsigned int n_cpus,
		char *buf, size_t len)
{
	size_t off = 0;
	unsigned int i;
	int ret = 0;

	if (len == 0 || n_cpus == 0)
		return -ENOSPC;
	buf[0] = '\0';
	if (n_ids + 1 <= n_cpus) {
		ret |= append(buf, len, &off, "0@%u", cpus[0]);
		for (i = 0; i < n_ids; i++) {
			ret |= append(buf, len, &off, ",%u", ids[i]);
			ret |= append(buf, len, &off, "@%u", cpus[i + 1]);
		}
		return ret != 0 ? -ENOSPC : 0;
	}
	ret |= append(buf, len, &off, "(%u", 0);
	for (i = 0; i < n_ids; i++)
		ret |= append(buf, len, &off, ",%u", ids[i]);
	ret |= append(buf, len, &off, ")@(%u", cpus[0]);
	for (i = 1; i < n_cpus; i++)
		ret |= append(buf, len, &off, ",%u", cpus[i]);
	ret |= append(buf, len, &off, "%.0u)", 0);
	return ret != 0 ? -ENOSPC : 0;
}

void
pa_plan_order_cpus(unsigned int *cpus, const int *cpu_node, unsigned int n,
		int node)
{
	unsigned int tmp[PA_PLAN_MAX_CPUS];
	unsigned int i, k = 0;

	if (node < 0 || n > PA_PLAN_MAX_CPUS)
		return;
	for (i = 0; i < n; i++)
		if (cpu_node[i] == node)
			tmp[k++] = cpus[i];
	for (i = 0; i < n; i++)
		if (cpu_node[i] != node)
			tmp[k++] = cpus[i];
	memcpy(cpus, tmp, n * sizeof(*cpus));
}
