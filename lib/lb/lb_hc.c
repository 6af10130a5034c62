/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The load balancer's side of health: verdicts of lib/health's probes,
 * the grace of a backend coming back, panic, agent weights and states,
 * and the probe targets lib/health asks for.
 */
#include <errno.h>
#include <string.h>


#include "lb_priv.h"
#include "pa_clock.h"

static const char *const health_names[] = { "unknown", "up", "down" };

const char *
pa_lb_health_name(enum pa_lb_health h)
{
	return (unsigned int)h <= PA_LB_HEALTH_DOWN ? health_names[h] : "?";
}

/* The probe results lib/health reports, kept as an index. */
static const char *const health_results[] = {
	"none", "ok", "refused", "timeout", "unreachable", "bad_status",
	"bad_reply", "error",
};

const char *
lb_health_result_name(uint8_t i)
{
	return i < RTE_DIM(health_results) ? health_results[i] : "?";
}

static uint8_t
result_index(const char *r)
{
	unsigned int i;

	for (i = 0; r != NULL && i < RTE_DIM(health_results); i++)
		if (strcmp(r, health_results[i]) == 0)
			return (uint8_t)i;
	return 0;
}

/* Backend @p i of @p c was (@p was) or was not down by the checks
 * before a report: start its grace as it goes down (stamped by the next
 * pa_lb_health_publish()), end it as it comes back. */
static void
grace_note(struct pa_lb *lb, struct lb_svc_ctl *c, unsigned int i, bool was)
{
	bool down = lb_be_down_hc(c, i);

	if (down == was)
		return;
	if (down && c->cfg.health.grace_ms > 0) {
		c->be_hc[i].grace = LB_GRACE_START;
		lb->grace_next_ms = 0;
	} else {
		c->be_hc[i].grace = LB_GRACE_NONE;
	}
}

/* Stamp the graces just started, end those due at @p now_ms (their
 * backends' flows move with the service's next table), and find the
 * next end. Not every round: only when one is due or a table is. */
static void
grace_scan(struct pa_lb *lb, uint64_t now_ms)
{
	char buf[INET6_ADDRSTRLEN];
	uint64_t next = UINT64_MAX;
	unsigned int i, j;

	for (i = 0; i < PA_LB_MAX_SERVICES; i++) {
		struct lb_svc_ctl *c = &lb->ctl[i];

		if (!c->used)
			continue;
		for (j = 0; j < c->n_slots; j++) {
			struct lb_be_health *hc = &c->be_hc[j];

			if (c->be_uid[j] == 0 || hc->grace == LB_GRACE_NONE)
				continue;
			if (hc->grace == LB_GRACE_START) {
				hc->grace = LB_GRACE_ON;
				hc->grace_end_ms = now_ms +
					c->cfg.health.grace_ms;
			} else if (hc->grace_end_ms <= now_ms) {
				hc->grace = LB_GRACE_NONE;
				c->hc_dirty = true;
				lb->hc_pending = true;
				LB_LOG(NOTICE, "service '%s' backend %s: down by health for its grace of %u ms: its flows move",
					c->cfg.name, pa_net_format_ip(
						&c->cfg.backends[j].addr, buf,
						sizeof(buf)),
					c->cfg.health.grace_ms);
				continue;
			}
			if (hc->grace_end_ms < next)
				next = hc->grace_end_ms;
		}
	}
	lb->grace_next_ms = next;
}

/* Take the lock and find the backend in counter slot @p cslot: its
 * service (its index in *@p i), the lock held; or NULL, the lock not
 * held, when that slot is no longer backend @p uid's. */
static struct lb_svc_ctl *
cslot_lock(struct pa_lb *lb, uint32_t cslot, uint32_t uid, unsigned int *i)
{
	struct lb_svc_ctl *c;

	pthread_mutex_lock(&lb->lock);
	c = &lb->ctl[lb->cs_svc[cslot]];
	*i = lb->cs_be[cslot];
	if (c->used && *i < c->n_slots && c->be_uid[*i] == uid)
		return c;
	pthread_mutex_unlock(&lb->lock);
	return NULL;
}

/* Service @p c's table is due for a rebuild by the checks
 * (pa_lb_health_publish()). @return 1. */
static int
hc_changed(struct pa_lb *lb, struct lb_svc_ctl *c)
{
	c->hc_dirty = true;
	lb->hc_pending = true;
	return 1;
}

int
pa_lb_backend_health(struct pa_lb *lb, uint32_t cslot, uint32_t uid,
		const struct pa_lb_health_report *r)
{
	char buf[INET6_ADDRSTRLEN];
	struct lb_be_health *hc, saved;
	struct lb_svc_ctl *c;
	unsigned int i;
	bool before, after, was;
	int ret = 0;

	if (cslot >= PA_LB_MAX_BACKENDS || uid == 0)
		return -ENOENT;
	c = cslot_lock(lb, cslot, uid, &i);
	if (c == NULL)
		return -ENOENT;
	hc = &c->be_hc[i];
	saved = *hc;
	hc->last = result_index(r->last);
	hc->code = r->code;
	hc->latency_us = r->latency_us;
	hc->probes = r->probes;
	hc->failures = r->failures;
	if (r->health == saved.health)
		goto out;
	before = saved.health == PA_LB_HEALTH_DOWN;
	after = r->health == PA_LB_HEALTH_DOWN;
	was = lb_be_down_hc(c, i);
	hc->health = (uint8_t)r->health;
	grace_note(lb, c, i, was);
	LB_LOG(NOTICE, "service '%s' backend %s: health %s -> %s (last probe: %s%s%s)",
		c->cfg.name, pa_net_format_ip(&c->cfg.backends[i].addr, buf,
			sizeof(buf)), health_names[saved.health],
		health_names[r->health], health_results[hc->last],
		lb_be_usable(&c->cfg.backends[i], uid) ? "" :
		"; its state keeps it out anyway",
		hc->grace == LB_GRACE_START ?
		"; its flows stay for its grace_ms" : "");
	if (before == after)
		goto out;
	ret = hc_changed(lb, c);
out:
	pthread_mutex_unlock(&lb->lock);
	return ret;
}

static const char *const agent_names[] = { "up", "drain", "down" };

int
pa_lb_backend_agent(struct pa_lb *lb, uint32_t cslot, uint32_t uid,
		int pct, enum pa_lb_agent_state st)
{
	char buf[INET6_ADDRSTRLEN];
	struct lb_be_health *hc;
	struct lb_svc_ctl *c;
	unsigned int i;
	bool was;
	int ret = 0;

	if (cslot >= PA_LB_MAX_BACKENDS || uid == 0 || pct > 100 ||
	    (unsigned int)st > PA_LB_AGENT_DOWN)
		return -ENOENT;
	c = cslot_lock(lb, cslot, uid, &i);
	if (c == NULL)
		return -ENOENT;
	hc = &c->be_hc[i];
	if (hc->agent_pct == (pct < 0 ? -1 : pct) && hc->agent_state == st)
		goto out;
	was = lb_be_down_hc(c, i);
	hc->agent_pct = (int8_t)(pct < 0 ? -1 : pct);
	hc->agent_state = (uint8_t)st;
	grace_note(lb, c, i, was);
	LB_LOG(NOTICE, "service '%s' backend %s: agent says %s %d%%: weight %u of %u",
		c->cfg.name, pa_net_format_ip(&c->cfg.backends[i].addr, buf,
			sizeof(buf)), agent_names[st], pct < 0 ? 100 : pct,
		lb_effective_weight(c, i), c->cfg.backends[i].weight);
	ret = hc_changed(lb, c);
out:
	pthread_mutex_unlock(&lb->lock);
	return ret;
}

int
pa_lb_health_publish(struct pa_lb *lb, uint64_t now_ms)
{
	char err[PA_CONFIG_ERR_MAX];
	uint64_t next = UINT64_MAX, due;
	unsigned int i;

	pthread_mutex_lock(&lb->lock);
	lb->hc_clock_ms = now_ms;
	lb->hc_clock_at = pa_clock_ms();
	/* nothing pending, no grace due: the usual case, every round */
	if (!lb->hc_pending && now_ms < lb->grace_next_ms) {
		next = lb->grace_next_ms;
		pthread_mutex_unlock(&lb->lock);
		return next == UINT64_MAX ? -1 : (int)(next - now_ms);
	}
	/* a grace due, just started, or maybe just ended by a report
	 * (grace_next_ms may be early then): the scan costs less than the
	 * build that follows */
	if (lb->grace_next_ms != UINT64_MAX)
		grace_scan(lb, now_ms);
	lb->hc_pending = false;
	for (i = 0; i < PA_LB_MAX_SERVICES; i++) {
		struct lb_svc_ctl *c = &lb->ctl[i];

		if (!c->used || !c->hc_dirty)
			continue;
		due = c->hc_pub_ms + PA_LB_HEALTH_PUBLISH_GAP_MS;
		if (c->hc_pub_ms != 0 && due > now_ms) {
			if (due < next)
				next = due;
			lb->hc_pending = true;
			continue;
		}
		if (lb_rebuild_publish(lb, i, false, err, sizeof(err)) != 0) {
			/* kept dirty: tried again after the gap */
			LB_LOG(ERR, "service '%s': health changes not applied yet: %s",
				c->cfg.name, err);
		}
		c->hc_pub_ms = now_ms;
		if (c->hc_dirty) {
			lb->hc_pending = true;
			if (now_ms + PA_LB_HEALTH_PUBLISH_GAP_MS < next)
				next = now_ms + PA_LB_HEALTH_PUBLISH_GAP_MS;
		}
	}
	if (lb->grace_next_ms < next)
		next = lb->grace_next_ms;
	pthread_mutex_unlock(&lb->lock);
	return next == UINT64_MAX ? -1 : (int)(next - now_ms);
}

unsigned int
pa_lb_health_targets(struct pa_lb *lb,
		void (*fn)(void *arg, const struct pa_lb_health_target *t),
		void *arg)
{
	struct pa_lb_health_target t;
	unsigned int i, j, n = 0;

	pthread_mutex_lock(&lb->lock);
	for (i = 0; i < PA_LB_MAX_SERVICES; i++) {
		const struct lb_svc_ctl *c = &lb->ctl[i];

		if (!c->used || !c->cfg.health.present ||
		    (c->cfg.health.type == PA_HEALTH_NONE &&
		     c->cfg.health.agent_port == 0))
			continue;
		for (j = 0; j < c->n_slots; j++) {
			const struct pa_config_backend *b = &c->cfg.backends[j];

			if (c->be_uid[j] == 0)
				continue;
			t.cslot = c->be_cslot[j];
			t.uid = c->be_uid[j];
			t.service = c->cfg.name;
			t.forward = c->cfg.forward;
			t.addr = b->addr;
			t.port = b->port != 0 ? b->port : c->cfg.port;
			t.health = &c->cfg.health;
			fn(arg, &t);
			n++;
		}
	}
	pthread_mutex_unlock(&lb->lock);
	return n;
}
