/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * How rule changes become new tables: the rule store (counters and
 * meters by slot), the control-side rule set with each rule's slot and
 * tier, publishing a version under RCU, rule add/delete/replace, and the
 * folder thread that folds the delta tier into a new base.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_meter.h>
#include <rte_rcu_qsbr.h>

#include "acl_priv.h"
#include "pa_err.h"

#define ACL_FOLD_NICE		10	/* the folder's nice while not urgent */

/* ------------------------------------------------------------------ */
/* Stores                                                              */
/* ------------------------------------------------------------------ */

void
acl_store_free(struct acl_store *s, unsigned int n_lcores)
{
	unsigned int l;

	if (s == NULL)
		return;
	for (l = 0; l < n_lcores; l++) {
		if (s->hits != NULL)
			rte_free(s->hits[l]);
		if (s->meters != NULL)
			rte_free(s->meters[l]);
	}
	rte_free(s->hits);
	rte_free(s->meters);
	rte_free(s);
}

struct acl_store *
acl_store_new(uint32_t capacity, unsigned int n_lcores, int socket)
{
	struct acl_store *s;
	unsigned int l;

	s = rte_zmalloc_socket("pa_acl_store", sizeof(*s), 0, socket);
	if (s == NULL)
		return NULL;
	s->capacity = capacity;
	s->hits = rte_zmalloc_socket("pa_acl_hits", sizeof(*s->hits) * n_lcores,
		0, socket);
	s->meters = rte_zmalloc_socket("pa_acl_meters",
		sizeof(*s->meters) * n_lcores, 0, socket);
	if (s->hits == NULL || s->meters == NULL)
		goto fail;
	for (l = 0; l < n_lcores; l++) {
		s->hits[l] = rte_zmalloc_socket("pa_acl_hits",
			sizeof(**s->hits) * capacity, RTE_CACHE_LINE_SIZE, socket);
		s->meters[l] = rte_zmalloc_socket("pa_acl_meters",
			sizeof(**s->meters) * capacity, RTE_CACHE_LINE_SIZE, socket);
		if (s->hits[l] == NULL || s->meters[l] == NULL)
			goto fail;
	}
	return s;
fail:
	acl_store_free(s, n_lcores);
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Publishing a version                                               */
/* ------------------------------------------------------------------ */

static uint64_t
heap_used(int socket)
{
	struct rte_malloc_socket_stats st;

	if (rte_malloc_get_socket_stats(socket, &st) != 0)
		return 0;
	return st.heap_allocsz_bytes;
}

static int
fill_slot(struct acl_slot *s, const struct pa_config_acl_rule *r, char *err,
		size_t err_len)
{
	s->id = r->id;
	s->priority = r->priority;
	s->action = (uint8_t)r->action;
	s->tos_mark = (uint8_t)(r->dscp << 2);
	if (r->action == PA_ACL_POLICE) {
		struct rte_meter_srtcm_params p = {
			.cir = r->rate_pps, .cbs = r->burst, .ebs = 0,
		};

		if (rte_meter_srtcm_profile_config(&s->profile, &p) != 0) {
			pa_seterr(err, err_len,
				"rule %u: police rate_pps %" PRIu64 " burst %" PRIu64 " not accepted by rte_meter",
				r->id, r->rate_pps, r->burst);
			return -EINVAL;
		}
	}
	return 0;
}

/*
 * Build a version from @p rules (n, with their slots and tiers), publish
 * it, wait for the lcores to leave the old one, free the old one. With
 * @p full every rule goes into a new base; otherwise the live base is kept
 * and only the delta (tier 1) is built. On error nothing changes.
 */
static int
commit(struct pa_acl *acl, const struct pa_config_acl_rule *rules,
		const uint32_t *slots, const uint8_t *tiers, unsigned int n,
		bool full, struct acl_set *base4, struct acl_set *base6,
		enum pa_acl_action def, bool non_ip_drop,
		struct acl_store *store, char *err, size_t err_len)
{
	struct acl_table *t, *old = acl->live;
	unsigned int i, l;
	uint64_t t0, t1, mem0, mem1;
	int ret = -ENOMEM;

	t0 = rte_get_tsc_cycles();
	mem0 = heap_used(acl->socket);
	t = rte_zmalloc_socket("pa_acl_table", sizeof(*t), 0, acl->socket);
	if (t == NULL)
		goto nomem;
	t->def = def;
	t->non_ip_drop = non_ip_drop;
	t->store = store;
	/* a new epoch: every verdict the flow caches hold goes stale (0 is
	 * the empty entry's; a wrap takes 2^32 versions) */
	t->epoch = acl->epoch + 1 != 0 ? acl->epoch + 1 : 1;
	t->n_slots = store->capacity;
	t->slots = rte_zmalloc_socket("pa_acl_slots",
		sizeof(*t->slots) * t->n_slots, RTE_CACHE_LINE_SIZE, acl->socket);
	if (t->slots == NULL)
		goto nomem;
	for (i = 0; i < n; i++) {
		ret = fill_slot(&t->slots[slots[i]], &rules[i], err, err_len);
		if (ret != 0)
			goto out;
	}
	if (!full && base4 == NULL) {
		for (i = 0; i < acl->n_zombie; i++)
			t->slots[acl->zombie[i]].dead = 1;
		t->n_dead = acl->n_zombie;
	}
	if (full || old == NULL) {
		ret = acl_build_tier(acl, rules, slots, NULL, 0, n, &t->v4[0],
			&t->v6[0], err, err_len);
	} else {
		ret = acl_build_tier(acl, rules, slots, tiers, 1, n, &t->v4[1],
			&t->v6[1], err, err_len);
	}
	if (ret != 0)
		goto out;
	/* What the build took, before the old version is freed. */
	t1 = rte_get_tsc_cycles();
	mem1 = heap_used(acl->socket);

	/* Meters of police rules new in this version start full. Their
	 * slots are not in the live version, so no lcore touches them. */
	for (i = 0; i < n; i++) {
		uint32_t slot = slots[i];

		if (rules[i].action != PA_ACL_POLICE)
			continue;
		if (old != NULL && slot < old->n_slots &&
		    old->slots[slot].id == rules[i].id &&
		    old->slots[slot].action == PA_ACL_POLICE)
			continue;
		for (l = 0; l < acl->n_lcores; l++)
			rte_meter_srtcm_config(&store->meters[l][slot],
				&t->slots[slot].profile);
	}

	/* The new version takes a folded base, or the live base over. */
	if (base4 != NULL) {
		t->v4[0] = *base4;
		t->v6[0] = *base6;
		memset(base4, 0, sizeof(*base4));
		memset(base6, 0, sizeof(*base6));
	} else if (!full && old != NULL) {
		t->v4[0] = old->v4[0];
		t->v6[0] = old->v6[0];
	}
	acl->epoch = t->epoch;
	__atomic_store_n(&acl->live, t, __ATOMIC_RELEASE);
	__atomic_store_n(&acl->dp.forward_all, acl_table_ruleless(t) &&
		t->def != PA_ACL_DROP, __ATOMIC_RELEASE);
	if (acl->rcu != NULL)
		rte_rcu_qsbr_synchronize(acl->rcu, RTE_QSBR_THRID_INVALID);
	if (base4 == NULL && !full && old != NULL) {
		memset(&old->v4[0], 0, sizeof(old->v4[0]));
		memset(&old->v6[0], 0, sizeof(old->v6[0]));
	}
	acl_table_free(old);
	acl->version++;
	acl->builds += full;
	acl->last_build_ms = (double)(t1 - t0) * 1000.0 /
		(double)rte_get_tsc_hz();
	acl->last_update_ms = (double)(rte_get_tsc_cycles() - t0) * 1000.0 /
		(double)rte_get_tsc_hz();
	if (full || base4 != NULL)
		acl->last_memory = mem1 - RTE_MIN(mem0, mem1);
	ACL_LOG(DEBUG, "version %" PRIu64 ": %u rules, %s build in %.2f ms",
		acl->version, n, full ? "full" : "delta", acl->last_build_ms);
	ret = 0;
	t = NULL;
	goto out;
nomem:
	pa_seterr(err, err_len, "out of memory building the ACL");
	ret = -ENOMEM;
out:
	acl_table_free(t);
	return ret;
}

/* ------------------------------------------------------------------ */
/* Rule set bookkeeping                                                */
/* ------------------------------------------------------------------ */

static int
id_cmp(const void *a, const void *b)
{
	const struct pa_config_acl_rule *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id ? 1 : 0;
}

static int
find_rule(const struct pa_acl *acl, uint32_t id)
{
	unsigned int lo = 0, hi = acl->n_rules;

	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;

		if (acl->rules[mid].id == id)
			return (int)mid;
		if (acl->rules[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/* Make room for @p need slots, growing the store (and the slot map) by
 * doubling. The new store is only used by versions built from now on. */
static struct acl_store *
store_for(struct pa_acl *acl, uint32_t need)
{
	struct acl_store *s;
	uint8_t *used;
	uint32_t cap;

	if (need <= acl->store->capacity)
		return acl->store;
	cap = acl->store->capacity;
	while (cap < need)
		cap *= 2;
	s = acl_store_new(cap, acl->n_lcores, acl->socket);
	used = realloc(acl->slot_used, cap);
	if (s == NULL || used == NULL) {
		acl_store_free(s, acl->n_lcores);
		if (used != NULL)
			acl->slot_used = used;
		return NULL;
	}
	memset(used + acl->store->capacity, 0, cap - acl->store->capacity);
	acl->slot_used = used;
	return s;
}

/* Meter states go to a bigger store before it is published (a police
 * rule keeps its tokens); counters are added after, see store_switch(). */
static void
store_copy_meters(struct pa_acl *acl, struct acl_store *s)
{
	unsigned int l;

	for (l = 0; l < acl->n_lcores; l++)
		memcpy(s->meters[l], acl->store->meters[l],
			sizeof(**s->meters) * acl->store->capacity);
}

/* After a version using @p s went live and the lcores left the old one:
 * add the old store's counters to the new one's and free it. */
static void
store_switch(struct pa_acl *acl, struct acl_store *s)
{
	struct acl_store *old = acl->store;
	unsigned int l;
	uint32_t i;

	if (s == old)
		return;
	for (l = 0; l < acl->n_lcores; l++) {
		for (i = 0; i < old->capacity; i++) {
			s->hits[l][i].packets += old->hits[l][i].packets;
			s->hits[l][i].bytes += old->hits[l][i].bytes;
		}
	}
	acl->store = s;
	acl_store_free(old, acl->n_lcores);
}

static uint32_t
slot_alloc(struct pa_acl *acl, uint32_t capacity)
{
	uint32_t i, s;

	for (i = 0; i < capacity; i++) {
		s = (acl->slot_hint + i) % capacity;
		if (!acl->slot_used[s]) {
			acl->slot_used[s] = 1;
			acl->slot_hint = s + 1;
			return s;
		}
	}
	return UINT32_MAX;
}

/* A slot no version uses any more: zero it for its next rule. */
static void
slot_release(struct pa_acl *acl, uint32_t slot)
{
	unsigned int l;

	for (l = 0; l < acl->n_lcores; l++) {
		memset(&acl->store->hits[l][slot], 0,
			sizeof(acl->store->hits[l][slot]));
		memset(&acl->store->meters[l][slot], 0,
			sizeof(acl->store->meters[l][slot]));
	}
	acl->slot_used[slot] = 0;
}

/* After a version whose base no longer holds them went live. */
static void
zombies_release(struct pa_acl *acl)
{
	unsigned int i;

	for (i = 0; i < acl->n_zombie; i++)
		slot_release(acl, acl->zombie[i]);
	acl->n_zombie = 0;
}

/*
 * The version just published is the store's: its arrays (@p n rules,
 * their slots and tiers, @p n_delta of them in the delta) replace the
 * old ones, which are freed; the caller's pointers are left NULL.
 */
static void
rules_take(struct pa_acl *acl, struct pa_config_acl_rule **nr, uint32_t **ns,
		uint8_t **nt, unsigned int n, unsigned int n_delta)
{
	free(acl->rules);
	free(acl->rule_slot);
	free(acl->rule_tier);
	acl->rules = *nr;
	acl->rule_slot = *ns;
	acl->rule_tier = *nt;
	acl->n_rules = n;
	acl->n_delta = n_delta;
	*nr = NULL;
	*ns = NULL;
	*nt = NULL;
}

/*
 * Replace the rule set with @p rules (n, any order; copied). Rules whose id
 * stays keep their slot (and so their counters).
 */
int
acl_apply(struct pa_acl *acl, const struct pa_config_acl_rule *rules,
		unsigned int n, enum pa_acl_action def, bool non_ip_drop,
		bool full, char *err, size_t err_len)
{
	struct pa_config_acl_rule *nr = NULL;
	uint32_t *ns = NULL, need;
	uint8_t *kept = NULL, *nt = NULL;
	unsigned int n_delta = 0;
	bool removed;
	struct acl_store *store;
	unsigned int i;
	int pos, ret;

	nr = calloc(n + 1, sizeof(*nr));
	ns = calloc(n + 1, sizeof(*ns));
	nt = calloc(n + 1, sizeof(*nt));
	kept = calloc(acl->n_rules + 1, 1);
	if (nr == NULL || ns == NULL || nt == NULL || kept == NULL) {
		pa_seterr(err, err_len, "out of memory");
		ret = -ENOMEM;
		goto out;
	}
	if (n != 0)
		memcpy(nr, rules, sizeof(*nr) * n);
	qsort(nr, n, sizeof(*nr), id_cmp);
	for (i = 1; i < n; i++) {
		if (nr[i].id == nr[i - 1].id) {
			pa_seterr(err, err_len, "duplicate rule id %u", nr[i].id);
			ret = -EEXIST;
			goto out;
		}
	}
	/* Old rules hold their slots until the new version is live. */
	need = RTE_MAX((uint32_t)ACL_MIN_SLOTS,
		rte_align32pow2(acl->n_rules + n));
	store = store_for(acl, need);
	if (store == NULL) {
		pa_seterr(err, err_len, "out of memory for %u rule counters", need);
		ret = -ENOMEM;
		goto out;
	}
	if (store != acl->store)
		store_copy_meters(acl, store);
	for (i = 0; i < n; i++) {
		pos = find_rule(acl, nr[i].id);
		if (pos >= 0) {
			ns[i] = acl->rule_slot[pos];
			nt[i] = full ? 0 : acl->rule_tier[pos];
			kept[pos] = 1;
		} else {
			ns[i] = slot_alloc(acl, store->capacity);
			nt[i] = full ? 0 : 1;
		}
		n_delta += nt[i];
	}
	ret = commit(acl, nr, ns, nt, n, full, NULL, NULL, def, non_ip_drop,
		store, err, err_len);
	if (ret != 0) {
		for (i = 0; i < n; i++)
			if (find_rule(acl, nr[i].id) < 0)
				acl->slot_used[ns[i]] = 0;
		if (store != acl->store)
			acl_store_free(store, acl->n_lcores);
		goto out;
	}
	store_switch(acl, store);
	if (full)
		zombies_release(acl);
	removed = false;
	for (i = 0; i < acl->n_rules; i++) {
		if (!kept[i]) {
			slot_release(acl, acl->rule_slot[i]);
			removed = true;	/* a fold in progress may hold it */
		}
	}
	if (full || removed)
		acl->gen++;
	rules_take(acl, &nr, &ns, &nt, n, n_delta);
	acl->def = def;
	acl->non_ip_drop = non_ip_drop;
out:
	free(nr);
	free(ns);
	free(nt);
	free(kept);
	return ret;
}

static int
check_rule(const struct pa_config_acl_rule *r, char *err, size_t err_len)
{
	if (r->id == 0) {
		pa_seterr(err, err_len, "rule id must be 1..2147483648");
		return -EINVAL;
	}
	if (r->src.addr.family != 0 && r->dst.addr.family != 0 &&
	    r->src.addr.family != r->dst.addr.family) {
		pa_seterr(err, err_len, "rule %u mixes IPv4 and IPv6 prefixes",
			r->id);
		return -EINVAL;
	}
	if (r->in_port > UINT8_MAX - 1) {
		pa_seterr(err, err_len, "rule %u: in_port index %d too large",
			r->id, r->in_port);
		return -EINVAL;
	}
	return 0;
}

static int
rule_add_locked(struct pa_acl *acl, const struct pa_config_acl_rule *r,
		char *err, size_t err_len)
{
	struct pa_config_acl_rule *all;
	int ret;

	ret = check_rule(r, err, err_len);
	if (ret != 0)
		return ret;
	if (find_rule(acl, r->id) >= 0) {
		pa_seterr(err, err_len, "rule id %u already exists", r->id);
		return -EEXIST;
	}
	all = calloc(acl->n_rules + 1, sizeof(*all));
	if (all == NULL) {
		pa_seterr(err, err_len, "out of memory");
		return -ENOMEM;
	}
	if (acl->n_rules != 0)
		memcpy(all, acl->rules, sizeof(*all) * acl->n_rules);
	all[acl->n_rules] = *r;
	/* A small delta tier takes adds; past ACL_DELTA_MAX all is rebuilt. */
	ret = acl_apply(acl, all, acl->n_rules + 1, acl->def, acl->non_ip_drop,
		acl->live == NULL || acl->n_delta + 1 > ACL_DELTA_MAX, err,
		err_len);
	free(all);
	return ret;
}

/* Could a packet match both rules? Ports are left out: packets without
 * ports ignore them, so the answer may be yes when it is no. */
static bool
rules_overlap(const struct pa_config_acl_rule *a,
		const struct pa_config_acl_rule *b)
{
	int fa = acl_rule_family(a), fb = acl_rule_family(b);

	return (fa == 0 || fb == 0 || fa == fb) &&
		pa_ip_prefix_overlap(&a->src, &b->src) &&
		pa_ip_prefix_overlap(&a->dst, &b->dst) &&
		(a->proto == PA_PROTO_ANY || b->proto == PA_PROTO_ANY ||
		 a->proto == b->proto) &&
		(a->in_port < 0 || b->in_port < 0 || a->in_port == b->in_port);
}

/*
 * Delete a rule the base contexts hold without rebuilding them: its slot
 * becomes dead (its matches count as none), and every base rule that ranks
 * below it and overlaps it is copied into the delta, so a packet that
 * matched it finds its next best rule there. -E2BIG when the delta would
 * grow past ACL_DELTA_MAX (the caller then rebuilds everything).
 */
static int
delete_from_base(struct pa_acl *acl, int pos, char *err, size_t err_len)
{
	const struct pa_config_acl_rule *r = &acl->rules[pos];
	struct pa_config_acl_rule *nr = NULL;
	uint32_t *ns = NULL, *nz;
	uint8_t *nt = NULL;
	unsigned int i, k = 0, n = acl->n_rules - 1, n_delta = 0;
	int ret = -ENOMEM;

	nr = calloc(n + 1, sizeof(*nr));
	ns = calloc(n + 1, sizeof(*ns));
	nt = calloc(n + 1, sizeof(*nt));
	nz = realloc(acl->zombie, sizeof(*nz) * (acl->n_zombie + 1));
	if (nr == NULL || ns == NULL || nt == NULL || nz == NULL) {
		if (nz != NULL)
			acl->zombie = nz;
		pa_seterr(err, err_len, "out of memory");
		goto out;
	}
	acl->zombie = nz;
	for (i = 0; i < acl->n_rules; i++) {
		const struct pa_config_acl_rule *x = &acl->rules[i];

		if ((int)i == pos)
			continue;
		nr[k] = *x;
		ns[k] = acl->rule_slot[i];
		nt[k] = acl->rule_tier[i];
		if (nt[k] == 0 && (x->priority < r->priority ||
		    (x->priority == r->priority && x->id > r->id)) &&
		    rules_overlap(x, r))
			nt[k] = 2;
		n_delta += nt[k] != 0;
		k++;
	}
	if (n_delta > ACL_DELTA_MAX) {
		ret = -E2BIG;
		goto out;
	}
	acl->zombie[acl->n_zombie++] = acl->rule_slot[pos];
	ret = commit(acl, nr, ns, nt, n, false, NULL, NULL, acl->def,
		acl->non_ip_drop, acl->store, err, err_len);
	if (ret != 0) {
		acl->n_zombie--;
		goto out;
	}
	rules_take(acl, &nr, &ns, &nt, n, n_delta);
	acl->gen++;		/* a fold in progress holds the deleted rule */
out:
	free(nr);
	free(ns);
	free(nt);
	return ret;
}

static int
rule_delete_locked(struct pa_acl *acl, uint32_t id, char *err,
		size_t err_len)
{
	struct pa_config_acl_rule *rest;
	int pos, ret;

	pos = find_rule(acl, id);
	if (pos < 0) {
		pa_seterr(err, err_len, "no rule with id %u", id);
		return -ENOENT;
	}
	/* A rule of the base: void it and let the delta answer for it. */
	if (acl->rule_tier[pos] != 1 && acl->live != NULL) {
		ret = delete_from_base(acl, pos, err, err_len);
		if (ret != -E2BIG)
			return ret;
	}
	rest = calloc(acl->n_rules + 1, sizeof(*rest));
	if (rest == NULL) {
		pa_seterr(err, err_len, "out of memory");
		return -ENOMEM;
	}
	memcpy(rest, acl->rules, sizeof(*rest) * (unsigned int)pos);
	memcpy(rest + pos, acl->rules + pos + 1,
		sizeof(*rest) * (acl->n_rules - (unsigned int)pos - 1));
	/* A delta rule: the delta is rebuilt; otherwise everything is. */
	ret = acl_apply(acl, rest, acl->n_rules - 1, acl->def, acl->non_ip_drop,
		acl->rule_tier[pos] != 1, err, err_len);
	free(rest);
	return ret;
}

static int
rules_replace_locked(struct pa_acl *acl, const struct pa_config_acl *a,
		char *err, size_t err_len)
{
	unsigned int i;
	int ret;

	for (i = 0; i < a->n_rules; i++) {
		ret = check_rule(&a->rules[i], err, err_len);
		if (ret != 0)
			return ret;
	}
	return acl_apply(acl, a->rules, a->n_rules, a->def, a->non_ip_drop, true,
		err, err_len);
}

/* ------------------------------------------------------------------ */
/* The folder and the locked entry points                              */
/* ------------------------------------------------------------------ */

static int
id_in(const struct pa_config_acl_rule *sorted, unsigned int n, uint32_t id)
{
	unsigned int lo = 0, hi = n;

	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;

		if (sorted[mid].id == id)
			return 1;
		if (sorted[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

/*
 * Fold once: snapshot the rules, build them all into a new base without
 * the lock, then — if nothing was removed meanwhile — publish that base
 * with a delta of the rules added since the snapshot. Called and returns
 * with the lock held.
 */
static void
fold(struct pa_acl *acl)
{
	struct pa_config_acl_rule *snap;
	struct acl_set b4 = { 0 }, b6 = { 0 };
	uint32_t *snap_slots;
	uint8_t *tiers = NULL;
	char err[256];
	unsigned int n = acl->n_rules, i, n_delta = 0;
	uint64_t gen = acl->gen;
	int ret;

	snap = calloc(n + 1, sizeof(*snap));
	snap_slots = calloc(n + 1, sizeof(*snap_slots));
	if (snap == NULL || snap_slots == NULL)
		goto out;
	memcpy(snap, acl->rules, sizeof(*snap) * n);
	memcpy(snap_slots, acl->rule_slot, sizeof(*snap_slots) * n);

	pthread_mutex_unlock(&acl->lock);
	ret = acl_build_tier(acl, snap, snap_slots, NULL, 0, n, &b4, &b6, err,
		sizeof(err));
	pthread_mutex_lock(&acl->lock);
	if (ret != 0) {
		ACL_LOG(WARNING, "background fold of %u rules failed: %s", n, err);
		goto out;
	}
	if (acl->folder_stop || acl->gen != gen)
		goto out;	/* a removal or full build made the snapshot stale */

	tiers = calloc(acl->n_rules + 1, 1);
	if (tiers == NULL)
		goto out;
	for (i = 0; i < acl->n_rules; i++) {
		tiers[i] = !id_in(snap, n, acl->rules[i].id);
		n_delta += tiers[i];
	}
	ret = commit(acl, acl->rules, acl->rule_slot, tiers, acl->n_rules,
		false, &b4, &b6, acl->def, acl->non_ip_drop, acl->store, err,
		sizeof(err));
	if (ret != 0) {
		ACL_LOG(WARNING, "publishing a fold failed: %s", err);
		goto out;
	}
	free(acl->rule_tier);
	acl->rule_tier = tiers;
	acl->n_delta = n_delta;
	acl->folds++;
	zombies_release(acl);
	tiers = NULL;
out:
	acl_set_free(&b4);
	acl_set_free(&b6);
	free(tiers);
	free(snap);
	free(snap_slots);
}

/*
 * Folding is background work: on a CPU shared with the RPC thread the
 * calls that wait for an answer go first (the folder runs at nice
 * ACL_FOLD_NICE) — until the delta is half full, when an
 * unfinished fold would soon force a full rebuild onto an add: then the
 * folder runs at normal priority. Linux nice is per thread. Lock held.
 */
static void
folder_urgency(struct pa_acl *acl)
{
	int want = acl->n_delta >= ACL_DELTA_MAX / 2 ? 0 : ACL_FOLD_NICE;

	if (acl->folder_tid == 0 || want == acl->folder_nice)
		return;
	if (setpriority(PRIO_PROCESS, (id_t)acl->folder_tid, want) == 0)
		acl->folder_nice = want;
	else
		ACL_LOG(DEBUG, "folder priority unchanged: %s", strerror(errno));
}

static void *
folder_main(void *arg)
{
	struct pa_acl *acl = arg;
	uint64_t failed_at = UINT64_MAX;

	pthread_mutex_lock(&acl->lock);
	acl->folder_tid = (pid_t)syscall(SYS_gettid);
	while (!acl->folder_stop) {
		/* Fold when the delta holds rules; after a failed fold, wait
		 * for the next change rather than spin. */
		if (acl->n_delta == 0 || failed_at == acl->version) {
			pthread_cond_wait(&acl->wake, &acl->lock);
			continue;
		}
		failed_at = acl->version;
		folder_urgency(acl);
		fold(acl);
		if (acl->n_delta == 0)
			failed_at = UINT64_MAX;
	}
	pthread_mutex_unlock(&acl->lock);
	return NULL;
}

void
acl_folder_start(struct pa_acl *acl)
{
	int ret;

	ret = rte_ctrl_thread_create(&acl->folder, "pa-acl-fold", NULL,
		folder_main, acl);
	if (ret != 0) {
		ACL_LOG(WARNING, "no background folding (%s): adds past %u rules rebuild the whole table",
			strerror(ret), ACL_DELTA_MAX);
		return;
	}
	acl->folder_running = true;
}

void
acl_folder_stop(struct pa_acl *acl)
{
	if (!acl->folder_running)
		return;
	pthread_mutex_lock(&acl->lock);
	acl->folder_stop = true;
	pthread_cond_signal(&acl->wake);
	pthread_mutex_unlock(&acl->lock);
	pthread_join(acl->folder, NULL);
	acl->folder_running = false;
}

/* Changes wake the folder, which folds the delta into the base. */
static int
changed(struct pa_acl *acl, int ret)
{
	if (ret == 0 && acl->n_delta != 0) {
		folder_urgency(acl);
		pthread_cond_signal(&acl->wake);
	}
	return ret;
}

/* The hook around a change: pre before it, post after (lock held);
 * sequenced with the comma operator. */
static int
hook_pre(struct pa_acl *acl)
{
	if (acl->hook.pre != NULL)
		acl->hook.pre(acl->hook.arg);
	return 0;
}

static int
hook_post(struct pa_acl *acl, int ret)
{
	if (acl->hook.post != NULL)
		acl->hook.post(acl->hook.arg, acl->rules, acl->n_rules);
	return ret;
}

int
pa_acl_rule_add(struct pa_acl *acl, const struct pa_config_acl_rule *r,
		char *err, size_t err_len)
{
	return ACL_LOCKED(acl, (hook_pre(acl), hook_post(acl, changed(acl,
		rule_add_locked(acl, r, err, err_len)))));
}

int
pa_acl_rule_delete(struct pa_acl *acl, uint32_t id, char *err, size_t err_len)
{
	return ACL_LOCKED(acl, (hook_pre(acl), hook_post(acl, changed(acl,
		rule_delete_locked(acl, id, err, err_len)))));
}

int
pa_acl_rules_replace(struct pa_acl *acl, const struct pa_config_acl *a,
		char *err, size_t err_len)
{
	return ACL_LOCKED(acl, (hook_pre(acl), hook_post(acl,
		rules_replace_locked(acl, a, err, err_len))));
}

void
pa_acl_set_hook(struct pa_acl *acl, const struct pa_acl_hook *h)
{
	pthread_mutex_lock(&acl->lock);
	if (acl->hook.pre != NULL)
		acl->hook.pre(acl->hook.arg);
	memset(&acl->hook, 0, sizeof(acl->hook));
	if (h != NULL)
		acl->hook = *h;
	hook_post(acl, 0);
	pthread_mutex_unlock(&acl->lock);
}
