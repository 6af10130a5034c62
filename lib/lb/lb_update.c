/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The load balancer's control entry points: services and backends added,
 * deleted and set (pa_lb_service_add() ... pa_lb_backend_set()), each
 * under the lock, checked against its service, rebuilt and published.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_hash_crc.h>

#include "lb_priv.h"
#include "pa_err.h"

/* numbers the NAT reply hashes (rte_hash names are global) */
static unsigned int hash_seq;

int
lb_find_service(const struct pa_lb *lb, const char *name)
{
	unsigned int i;

	for (i = 0; i < PA_LB_MAX_SERVICES; i++)
		if (lb->ctl[i].used && strcmp(lb->ctl[i].cfg.name, name) == 0)
			return (int)i;
	return -1;
}

static int
find_backend(const struct lb_svc_ctl *c, const struct pa_ip_addr *a)
{
	unsigned int i;

	for (i = 0; i < c->n_slots; i++)
		if (c->be_uid[i] != 0 && pa_ip_equal(&c->cfg.backends[i].addr, a))
			return (int)i;
	return -1;
}

/* Slot of service @p name, or -ENOENT with the reason. */
/* An fnat service: a pool, with an address of each backend's family
 * (backend_check() says which is missing). */
static int
fnat_pool_check(const struct pa_lb *lb, char *err, size_t err_len)
{
	if (lb->fnat.n_addrs == 0) {
		pa_seterr(err, err_len, "forward \"fnat\" needs lb.fnat (a source pool)");
		return -EINVAL;
	}
	return 0;
}

static int
service_slot(const struct pa_lb *lb, const char *name, char *err,
		size_t err_len)
{
	int slot = lb_find_service(lb, name);

	if (slot < 0) {
		pa_seterr(err, err_len, "no service '%s'", name);
		return -ENOENT;
	}
	return slot;
}

/* Index of backend @p a of the service in @p slot, or -ENOENT with the
 * reason. */
static int
backend_index(const struct pa_lb *lb, int slot, const struct pa_ip_addr *a,
		char *err, size_t err_len)
{
	char buf[INET6_ADDRSTRLEN];
	int i = find_backend(&lb->ctl[slot], a);

	if (i < 0) {
		pa_seterr(err, err_len, "service '%s' has no backend %s",
			lb->ctl[slot].cfg.name,
			pa_net_format_ip(a, buf, sizeof(buf)));
		return -ENOENT;
	}
	return i;
}

/* Index of backend @p a of service @p service (its slot in *@p slot), or
 * -ENOENT with the reason. */
static int
backend_locate(const struct pa_lb *lb, const char *service,
		const struct pa_ip_addr *a, int *slot, char *err,
		size_t err_len)
{
	*slot = service_slot(lb, service, err, err_len);
	return *slot < 0 ? *slot : backend_index(lb, *slot, a, err, err_len);
}

/* Forget the holes at the end of the slots. */
static void
ctl_trim(struct lb_svc_ctl *c)
{
	while (c->n_slots > 0 && c->be_uid[c->n_slots - 1] == 0)
		c->n_slots--;
	c->cfg.n_backends = c->n_slots;
}

static uint32_t
new_uid(struct pa_lb *lb)
{
	if (++lb->next_uid == 0)
		lb->next_uid = 1;
	return lb->next_uid;
}

void
lb_ctl_clear(struct pa_lb *lb, struct lb_svc_ctl *c)
{
	unsigned int i;

	for (i = 0; i < c->n_slots; i++)
		if (c->be_uid[i] != 0)
			lb->cslot_free[lb->n_cslot_free++] = c->be_cslot[i];
	pa_lb_config_service_clear(&c->cfg);
	free(c->be_uid);
	free(c->be_cslot);
	free(c->be_hc);
	memset(c, 0, sizeof(*c));
}

/* Room for one more backend slot. */
static int
ctl_grow(struct lb_svc_ctl *c)
{
	unsigned int cap = c->cap_slots != 0 ? c->cap_slots * 2 : 8;
	struct pa_config_backend *b;
	struct lb_be_health *hc;
	uint32_t *u, *cs;

	if (c->n_slots < c->cap_slots)
		return 0;
	b = realloc(c->cfg.backends, cap * sizeof(*b));
	if (b == NULL)
		return -ENOMEM;
	c->cfg.backends = b;
	u = realloc(c->be_uid, cap * sizeof(*u));
	if (u == NULL)
		return -ENOMEM;
	c->be_uid = u;
	cs = realloc(c->be_cslot, cap * sizeof(*cs));
	if (cs == NULL)
		return -ENOMEM;
	c->be_cslot = cs;
	hc = realloc(c->be_hc, cap * sizeof(*hc));
	if (hc == NULL)
		return -ENOMEM;
	c->be_hc = hc;
	c->cap_slots = cap;
	return 0;
}

unsigned int
lb_live_backends(const struct lb_svc_ctl *c)
{
	unsigned int i, n = 0;

	for (i = 0; i < c->n_slots; i++)
		if (c->be_uid[i] != 0)
			n++;
	return n;
}

/* Checks of a backend against its service beyond the loader's. */
static int
backend_check(const struct pa_lb *lb, const struct lb_svc_ctl *c,
		const struct pa_config_backend *be, char *err, size_t err_len)
{
	const bool fnat = c->cfg.forward == PA_LB_FNAT;
	char buf[INET6_ADDRSTRLEN];

	/* full NAT's source is a pool address of the backend's family */
	if (fnat && lb->fnat.n_fam[be->addr.family == AF_INET6] == 0) {
		pa_seterr(err, err_len, "backend %s: forward \"fnat\" needs an %s address in lb.fnat.addrs",
			pa_net_format_ip(&be->addr, buf, sizeof(buf)),
			be->addr.family == AF_INET6 ? "IPv6" : "IPv4");
		return -EINVAL;
	}
	if (!fnat && be->addr.family != c->cfg.vip.family) {
		pa_seterr(err, err_len, "backend %s: address family differs from the service's",
			pa_net_format_ip(&be->addr, buf, sizeof(buf)));
		return -EINVAL;
	}
	if (c->cfg.forward != PA_LB_NAT && !fnat && be->port != 0 &&
	    be->port != c->cfg.port) {
		pa_seterr(err, err_len, "backend %s: only \"nat\" can change the destination port",
			pa_net_format_ip(&be->addr, buf, sizeof(buf)));
		return -EINVAL;
	}
	if (c->cfg.forward == PA_LB_DSR && !be->has_mac) {
		pa_seterr(err, err_len, "backend %s: \"dsr\" needs the backend's \"mac\"",
			pa_net_format_ip(&be->addr, buf, sizeof(buf)));
		return -EINVAL;
	}
	return 0;
}

/* Append @p be to @p c in a fresh slot (or a hole). */
static int
ctl_add_backend(struct pa_lb *lb, struct lb_svc_ctl *c,
		const struct pa_config_backend *be, char *err, size_t err_len)
{
	char buf[INET6_ADDRSTRLEN];
	unsigned int i;

	if (find_backend(c, &be->addr) >= 0) {
		pa_seterr(err, err_len, "service '%s' already has backend %s",
			c->cfg.name, pa_net_format_ip(&be->addr, buf,
				sizeof(buf)));
		return -EEXIST;
	}
	if (lb_live_backends(c) >= PA_LB_MAX_SVC_BACKENDS ||
	    lb_live_backends(c) + 1 >= c->cfg.table_size) {
		pa_seterr(err, err_len, "service '%s' is full (%u backends at most with table_size %u)",
			c->cfg.name, RTE_MIN((unsigned int)PA_LB_MAX_SVC_BACKENDS,
				c->cfg.table_size - 1), c->cfg.table_size);
		return -ENOSPC;
	}
	if (lb->n_cslot_free == 0) {
		pa_seterr(err, err_len, "too many backends (%u in all at most)",
			PA_LB_MAX_BACKENDS);
		return -ENOSPC;
	}
	for (i = 0; i < c->n_slots; i++)
		if (c->be_uid[i] == 0)
			break;
	if (i == c->n_slots) {
		if (ctl_grow(c) != 0) {
			pa_seterr(err, err_len, "out of memory");
			return -ENOMEM;
		}
		c->n_slots++;
		c->cfg.n_backends = c->n_slots;
	}
	c->cfg.backends[i] = *be;
	c->be_uid[i] = new_uid(lb);
	c->be_cslot[i] = lb->cslot_free[--lb->n_cslot_free];
	memset(&c->be_hc[i], 0, sizeof(c->be_hc[i]));
	c->be_hc[i].agent_pct = -1;
	lb->cs_svc[c->be_cslot[i]] = (uint16_t)(c - lb->ctl);
	lb->cs_be[c->be_cslot[i]] = i;
	/* no lcore reads a free slot: forget its last owner's next hop (the
	 * neighbour subsystem publishes this backend's when it sees the
	 * change) */
	__atomic_store_n(&lb->be_nh[c->be_cslot[i]], 0, __ATOMIC_RELAXED);
	return (int)i;
}

/* Undo ctl_add_backend() of slot @p i (the add was never published). */
static void
ctl_drop_backend(struct pa_lb *lb, struct lb_svc_ctl *c, unsigned int i)
{
	lb->cslot_free[lb->n_cslot_free++] = c->be_cslot[i];
	c->be_uid[i] = 0;
	memset(&c->cfg.backends[i], 0, sizeof(c->cfg.backends[i]));
	ctl_trim(c);
}

/* Count and log a service's way into and out of panic (its table as
 * just published). */
static void
ctl_panic_note(struct pa_lb *lb, struct lb_svc_ctl *c)
{
	bool panic = lb_ctl_panic(c);

	if (panic == c->panic)
		return;
	c->panic = panic;
	if (panic) {
		c->panics++;
		lb->panics++;
		LB_LOG(WARNING, "service '%s': every backend is down by health: panic, balancing over all of them",
			c->cfg.name);
	} else {
		LB_LOG(NOTICE, "service '%s': out of panic", c->cfg.name);
	}
}

int
lb_rebuild_publish(struct pa_lb *lb, unsigned int slot, bool set_changed,
		char *err, size_t err_len)
{
	struct lb_svc *s;
	int ret;

	s = lb_svc_build(lb, &lb->ctl[slot], slot, err, err_len);
	if (s == NULL)
		return -rte_errno;
	/* the TSC: the data path's clock (lb_dp.c, hist_pick()) */
	if (lb_svc_history(lb, s, lb->live != NULL ? lb->live->svc[slot] :
			NULL, rte_get_tsc_cycles()) != 0) {
		pa_seterr(err, err_len, "out of memory for the table history of service '%s'",
			lb->ctl[slot].cfg.name);
		lb_svc_free(s);
		return -ENOMEM;
	}
	ret = lb_commit(lb, slot, s, set_changed, err, err_len);
	if (ret != 0) {
		lb_svc_free(s);
		return ret;
	}
	ctl_panic_note(lb, &lb->ctl[slot]);
	/* whatever the checks said is in it */
	lb->ctl[slot].hc_dirty = false;
	return 0;
}

static int
service_add_locked(struct pa_lb *lb, const struct pa_config_service *svc,
		char *err, size_t err_len)
{
	char buf[INET6_ADDRSTRLEN];
	struct lb_svc_ctl *c;
	unsigned int i, slot;
	int ret;

	if (lb_find_service(lb, svc->name) >= 0) {
		pa_seterr(err, err_len, "service '%s' exists", svc->name);
		return -EEXIST;
	}
	for (i = 0; i < PA_LB_MAX_SERVICES; i++) {
		const struct pa_config_service *o = &lb->ctl[i].cfg;

		if (lb->ctl[i].used && pa_ip_equal(&o->vip, &svc->vip) &&
		    o->port == svc->port && o->proto == svc->proto) {
			pa_seterr(err, err_len, "%s port %u %s is already service '%s'",
				pa_net_format_ip(&svc->vip, buf, sizeof(buf)),
				svc->port, svc->proto == IPPROTO_TCP ? "tcp" :
				"udp", o->name);
			return -EEXIST;
		}
	}
	if (svc->max_flows > lb->ft.size) {
		pa_seterr(err, err_len, "max_flows %u is more than the flow table holds (lb.flow_table.size %u)",
			svc->max_flows, lb->ft.size);
		return -EINVAL;
	}
	if (svc->forward == PA_LB_IPIP &&
	    ((svc->vip.family == AF_INET && !lb->has_local4) ||
	     (svc->vip.family == AF_INET6 && !lb->has_local6))) {
		pa_seterr(err, err_len, "forward \"ipip\" for an %s service needs lb.%s (the outer source address)",
			svc->vip.family == AF_INET ? "IPv4" : "IPv6",
			svc->vip.family == AF_INET ? "local_addr" :
			"local_addr6");
		return -EINVAL;
	}
	for (slot = 0; slot < PA_LB_MAX_SERVICES; slot++)
		if (!lb->ctl[slot].used)
			break;
	if (slot == PA_LB_MAX_SERVICES) {
		pa_seterr(err, err_len, "too many services (%u at most)",
			PA_LB_MAX_SERVICES);
		return -ENOSPC;
	}
	if (svc->forward == PA_LB_FNAT) {
		ret = fnat_pool_check(lb, err, err_len);
		if (ret != 0)
			return ret;
	}
	ret = lb_tables_make(lb, err, err_len);
	if (ret != 0)
		return ret;
	if (svc->forward == PA_LB_NAT && lb->nat == NULL) {
		struct rte_hash_parameters hp = { 0 };
		char name[RTE_HASH_NAMESIZE];
		struct rte_hash *h;

		snprintf(name, sizeof(name), "pa_lbnat_%u",
			__atomic_fetch_add(&hash_seq, 1, __ATOMIC_RELAXED));
		hp.name = name;
		hp.entries = lb->nat_size;
		hp.key_len = sizeof(struct lb_flow_key);
		hp.hash_func = rte_hash_crc;
		hp.socket_id = lb->socket;
		hp.extra_flag = RTE_HASH_EXTRA_FLAGS_RW_CONCURRENCY_LF |
			RTE_HASH_EXTRA_FLAGS_MULTI_WRITER_ADD |
			RTE_HASH_EXTRA_FLAGS_NO_FREE_ON_DEL;
		h = rte_hash_create(&hp);
		if (h == NULL) {
			pa_seterr(err, err_len, "cannot create the NAT reply table (%u entries): %s",
				lb->nat_size, rte_strerror(rte_errno));
			return -ENOMEM;
		}
		__atomic_store_n(&lb->nat, h, __ATOMIC_RELEASE);
	}

	c = &lb->ctl[slot];
	memset(c, 0, sizeof(*c));
	c->used = true;
	c->cfg = *svc;
	c->cfg.backends = NULL;
	c->cfg.n_backends = 0;
	c->uid = new_uid(lb);
	for (i = 0; i < svc->n_backends; i++) {
		ret = backend_check(lb, c, &svc->backends[i], err, err_len);
		if (ret >= 0)
			ret = ctl_add_backend(lb, c, &svc->backends[i], err,
				err_len);
		if (ret < 0)
			goto fail;
	}
	ret = lb_rebuild_publish(lb, slot, true, err, err_len);
	if (ret != 0)
		goto fail;
	lb->n_services++;
	return 0;
fail:
	lb_ctl_clear(lb, c);
	return ret;
}

/* The end of a control entry point: a change made (@p ret 0) is a new
 * configuration version; the lock goes. @return @p ret. */
static int
update_done(struct pa_lb *lb, int ret)
{
	if (ret == 0)
		__atomic_add_fetch(&lb->cfg_version, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&lb->lock);
	return ret;
}

int
pa_lb_service_add(struct pa_lb *lb, const struct pa_config_service *svc,
		char *err, size_t err_len)
{
	int ret;

	pthread_mutex_lock(&lb->lock);
	ret = update_done(lb, service_add_locked(lb, svc, err, err_len));
	if (ret == 0)
		LB_LOG(INFO, "service '%s' added (%u backends)", svc->name,
			svc->n_backends);
	return ret;
}

int
pa_lb_service_delete(struct pa_lb *lb, const char *name, char *err,
		size_t err_len)
{
	int slot, ret;

	pthread_mutex_lock(&lb->lock);
	slot = service_slot(lb, name, err, err_len);
	if (slot < 0) {
		ret = slot;
		goto out;
	}
	ret = lb_commit(lb, (unsigned int)slot, NULL, true, err, err_len);
	if (ret != 0)
		goto out;
	lb_ctl_clear(lb, &lb->ctl[slot]);
	lb->n_services--;
out:
	return update_done(lb, ret);
}

int
pa_lb_backend_add(struct pa_lb *lb, const char *service,
		const struct pa_config_backend *be, char *err, size_t err_len)
{
	struct lb_svc_ctl *c;
	int slot, i, ret;

	pthread_mutex_lock(&lb->lock);
	slot = service_slot(lb, service, err, err_len);
	if (slot < 0) {
		ret = slot;
		goto out;
	}
	c = &lb->ctl[slot];
	ret = backend_check(lb, c, be, err, err_len);
	if (ret != 0)
		goto out;
	i = ctl_add_backend(lb, c, be, err, err_len);
	if (i < 0) {
		ret = i;
		goto out;
	}
	ret = lb_rebuild_publish(lb, (unsigned int)slot, false, err, err_len);
	if (ret != 0)
		ctl_drop_backend(lb, c, (unsigned int)i);
out:
	return update_done(lb, ret);
}

int
pa_lb_backend_delete(struct pa_lb *lb, const char *service,
		const struct pa_ip_addr *addr, char *err, size_t err_len)
{
	struct pa_config_backend saved;
	struct lb_svc_ctl *c;
	uint32_t uid, cslot;
	int slot, i, ret;

	pthread_mutex_lock(&lb->lock);
	i = backend_locate(lb, service, addr, &slot, err, err_len);
	if (i < 0)
		return update_done(lb, i);
	c = &lb->ctl[slot];
	saved = c->cfg.backends[i];
	uid = c->be_uid[i];
	cslot = c->be_cslot[i];
	c->be_uid[i] = 0;
	memset(&c->cfg.backends[i], 0, sizeof(c->cfg.backends[i]));
	ret = lb_rebuild_publish(lb, (unsigned int)slot, false, err, err_len);
	if (ret != 0) {
		c->be_uid[i] = uid;
		c->cfg.backends[i] = saved;
		goto out;
	}
	/* after the publish: no lcore counts on this slot any more */
	lb->cslot_free[lb->n_cslot_free++] = cslot;
	ctl_trim(c);
out:
	return update_done(lb, ret);
}

int
pa_lb_backend_set(struct pa_lb *lb, const char *service,
		const struct pa_ip_addr *addr, const uint32_t *weight,
		const enum pa_lb_state *state, char *err, size_t err_len)
{
	struct pa_config_backend saved;
	struct lb_svc_ctl *c;
	int slot, i, ret;

	pthread_mutex_lock(&lb->lock);
	i = backend_locate(lb, service, addr, &slot, err, err_len);
	if (i < 0)
		return update_done(lb, i);
	c = &lb->ctl[slot];
	saved = c->cfg.backends[i];
	if (weight != NULL)
		c->cfg.backends[i].weight = *weight;
	if (state != NULL)
		c->cfg.backends[i].state = *state;
	ret = lb_rebuild_publish(lb, (unsigned int)slot, false, err, err_len);
	if (ret != 0)
		c->cfg.backends[i] = saved;
	return update_done(lb, ret);
}
