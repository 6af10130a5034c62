/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ACL on rte_acl. Per address family and tier, a set of contexts with
 * one entry per rule for packets with ports, and — when some rule
 * constrains ports — a second set with the port ranges widened for
 * packets without ports (they match port fields as "any"). The rte_acl
 * priority is the rule's rank by (priority desc, id asc); the userdata
 * its slot + 1.
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

#include <rte_acl.h>
#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_ip.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_meter.h>
#include <rte_rcu_qsbr.h>
#include <rte_vect.h>

#include "pa_acl.h"

RTE_LOG_REGISTER(pa_acl_logtype, pa.acl, INFO);
#define ACL_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, pa_acl_logtype, "pa.acl: " fmt "\n", ##__VA_ARGS__)

#define ACL_MIN_SLOTS		1024
#define ACL_MAX_BURST		256
#define ACL_PORT_ANY		0xff
#define ACL_DELTA_MAX		256	/* rules in the delta tier */
#define ACL_FOLD_NICE		10	/* the folder's nice while not urgent */

/* rte_acl input layouts (addresses and ports in network order). rte_acl
 * reads the first field, one byte, on its own, then groups of four bytes
 * (input_index); in_port and ports_known share the second group. */
struct acl_key4 {
	uint8_t proto;
	uint8_t pad0[3];
	uint8_t in_port;
	uint8_t ports_known;
	uint16_t pad1;
	uint32_t src;
	uint32_t dst;
	uint16_t sport;
	uint16_t dport;
};

struct acl_key6 {
	uint8_t proto;
	uint8_t pad0[3];
	uint8_t in_port;
	uint8_t ports_known;
	uint16_t pad1;
	uint8_t src[16];
	uint8_t dst[16];
	uint16_t sport;
	uint16_t dport;
};

/* A group's fields must fill its four bytes: PAD (never constrained)
 * completes in_port and ports_known. */
enum { F4_PROTO, F4_INPORT, F4_PK, F4_PAD, F4_SRC, F4_DST, F4_SPORT,
	F4_DPORT, F4_NUM };
enum { F6_PROTO, F6_INPORT, F6_PK, F6_PAD, F6_SRC0, F6_DST0 = F6_SRC0 + 4,
	F6_SPORT = F6_DST0 + 4, F6_DPORT, F6_NUM };

RTE_ACL_RULE_DEF(acl_rule4, F4_NUM);
RTE_ACL_RULE_DEF(acl_rule6, F6_NUM);

static struct rte_acl_field_def defs4[F4_NUM];
static struct rte_acl_field_def defs6[F6_NUM];

static void
init_defs(void)
{
	unsigned int i;

	defs4[F4_PROTO] = (struct rte_acl_field_def){ RTE_ACL_FIELD_TYPE_BITMASK,
		1, F4_PROTO, 0, offsetof(struct acl_key4, proto) };
	defs4[F4_INPORT] = (struct rte_acl_field_def){ RTE_ACL_FIELD_TYPE_BITMASK,
		1, F4_INPORT, 1, offsetof(struct acl_key4, in_port) };
	defs4[F4_PK] = (struct rte_acl_field_def){ RTE_ACL_FIELD_TYPE_BITMASK,
		1, F4_PK, 1, offsetof(struct acl_key4, ports_known) };
	defs4[F4_PAD] = (struct rte_acl_field_def){ RTE_ACL_FIELD_TYPE_BITMASK,
		2, F4_PAD, 1, offsetof(struct acl_key4, pad1) };
	defs4[F4_SRC] = (struct rte_acl_field_def){ RTE_ACL_FIELD_TYPE_MASK,
		4, F4_SRC, 2, offsetof(struct acl_key4, src) };
	defs4[F4_DST] = (struct rte_acl_field_def){ RTE_ACL_FIELD_TYPE_MASK,
		4, F4_DST, 3, offsetof(struct acl_key4, dst) };
	defs4[F4_SPORT] = (struct rte_acl_field_def){ RTE_ACL_FIELD_TYPE_RANGE,
		2, F4_SPORT, 4, offsetof(struct acl_key4, sport) };
	defs4[F4_DPORT] = (struct rte_acl_field_def){ RTE_ACL_FIELD_TYPE_RANGE,
		2, F4_DPORT, 4, offsetof(struct acl_key4, dport) };

	defs6[F6_PROTO] = (struct rte_acl_field_def){ RTE_ACL_FIELD_TYPE_BITMASK,
		1, F6_PROTO, 0, offsetof(struct acl_key6, proto) };
	defs6[F6_INPORT] = (struct rte_acl_field_def){ RTE_ACL_FIELD_TYPE_BITMASK,
		1, F6_INPORT, 1, offsetof(struct acl_key6, in_port) };
	defs6[F6_PK] = (struct rte_acl_field_def){ RTE_ACL_FIELD_TYPE_BITMASK,
		1, F6_PK, 1, offsetof(struct acl_key6, ports_known) };
	defs6[F6_PAD] = (struct rte_acl_field_def){ RTE_ACL_FIELD_TYPE_BITMASK,
		2, F6_PAD, 1, offsetof(struct acl_key6, pad1) };
	for (i = 0; i < 4; i++) {
		defs6[F6_SRC0 + i] = (struct rte_acl_field_def){
			RTE_ACL_FIELD_TYPE_MASK, 4, F6_SRC0 + i, 2 + i,
			offsetof(struct acl_key6, src) + 4 * i };
		defs6[F6_DST0 + i] = (struct rte_acl_field_def){
			RTE_ACL_FIELD_TYPE_MASK, 4, F6_DST0 + i, 6 + i,
			offsetof(struct acl_key6, dst) + 4 * i };
	}
	defs6[F6_SPORT] = (struct rte_acl_field_def){ RTE_ACL_FIELD_TYPE_RANGE,
		2, F6_SPORT, 10, offsetof(struct acl_key6, sport) };
	defs6[F6_DPORT] = (struct rte_acl_field_def){ RTE_ACL_FIELD_TYPE_RANGE,
		2, F6_DPORT, 10, offsetof(struct acl_key6, dport) };
}

/* What the data path needs of one rule, by slot. */
struct acl_slot {
	uint32_t id;			/**< 0: slot unused in this version */
	int32_t priority;
	uint8_t dead;			/**< deleted, still in the base contexts */
	uint8_t action;			/**< enum pa_acl_action */
	uint8_t tos_mark;		/**< DSCP << 2 */
	struct rte_meter_srtcm_profile profile;
};

struct acl_counter {
	uint64_t packets;
	uint64_t bytes;
};

/* Counters and meters, per lcore, by slot. Outlives table versions. */
struct acl_store {
	uint32_t capacity;
	struct acl_counter **hits;		/**< [lcore][slot] */
	struct rte_meter_srtcm **meters;	/**< [lcore][slot] */
};

/* Per-lcore counters that do not depend on rules. */
struct acl_lcore_extra {
	uint64_t default_hits;
	uint64_t non_ip;
} __rte_cache_aligned;

/*
 * One published version: immutable once live. Two tiers of contexts per
 * family: the base holds the rules of the last full build, the delta the
 * rules added since. An add rebuilds only the small delta and hands the
 * base over to the new version; a packet takes the better of the two
 * tiers' matches. A full build (replace, deleting a base rule, a delta
 * grown past ACL_DELTA_MAX) folds everything into a new base.
 */
#define ACL_TIERS	2

/*
 * The contexts of one tier and family. rte_acl gives up on a context that
 * would need more than RTE_ACL_MAX_TRIES tries (diverse rule sets of a few
 * thousand rules); such a set is split into shards of consecutive ranks,
 * halving the shard size until each builds, each shard its own context,
 * looked up in turn.
 */
#define ACL_MAX_SHARDS		64
#define ACL_SHARD_MIN		128
struct acl_set {
	unsigned int n;				/* packets with L4 ports */
	struct rte_acl_ctx *ctx[ACL_MAX_SHARDS];
	/* Packets without ports match port fields as "any": they are
	 * looked up in a copy of the rules with the port ranges widened,
	 * built only when some rule of the set constrains ports (else the
	 * contexts above serve them too). */
	unsigned int n_np;
	struct rte_acl_ctx *np[ACL_MAX_SHARDS];
};

struct acl_table {
	struct acl_set v4[ACL_TIERS];
	struct acl_set v6[ACL_TIERS];
	enum pa_acl_action def;
	bool non_ip_drop;
	uint32_t n_dead;		/**< dead slots (their matches are void) */
	uint32_t n_slots;		/**< slots[] entries */
	struct acl_slot *slots;
	struct acl_store *store;
};

struct pa_acl {
	struct acl_table *live;			/* data path reads this */
	struct acl_lcore_extra *extra;		/* [n_lcores] */
	const uint16_t *port_index_of;

	struct rte_rcu_qsbr *rcu;
	unsigned int n_lcores;
	int socket;
	const struct pa_config *cfg;
	enum rte_acl_classify_alg alg;

	/* Control-side rule set, sorted by id, with each rule's slot. */
	struct pa_config_acl_rule *rules;
	uint32_t *rule_slot;
	uint8_t *rule_tier;			/* 0 base, 1 delta, 2 both */
	/* Slots of deleted rules that the base contexts still return: dead
	 * in every version until a full build or a fold drops them. */
	uint32_t *zombie;
	unsigned int n_zombie;
	unsigned int n_rules;
	unsigned int n_delta;
	enum pa_acl_action def;
	bool non_ip_drop;
	/* Slot allocator: a slot is "in use" while some rule holds it. */
	uint8_t *slot_used;			/* [store capacity] */
	uint32_t slot_hint;

	struct acl_store *store;
	/* The folder: a control thread that rebuilds base + delta into a new
	 * base in the background, so that the delta (and every add) stays
	 * small. lock serialises every control-plane call with it. */
	pthread_mutex_t lock;
	pthread_cond_t wake;
	pthread_t folder;
	pid_t folder_tid;
	int folder_nice;
	bool folder_running;
	bool folder_stop;
	uint64_t gen;				/* bumped by removals, full builds */
	uint64_t folds;
	uint64_t version;
	uint64_t builds;
	double last_build_ms;
	double last_update_ms;
	uint64_t last_memory;
};

/* rte_acl context names are global to the process (rte_acl_create() of a
 * taken name hands back that context): number them across instances. */
static unsigned int ctx_seq;

static void folder_start(struct pa_acl *acl);
static void folder_stop(struct pa_acl *acl);

static const struct {
	enum rte_acl_classify_alg alg;
	const char *name;
} algs[] = {
	{ RTE_ACL_CLASSIFY_AVX512X32, "avx512x32" },
	{ RTE_ACL_CLASSIFY_AVX512X16, "avx512x16" },
	{ RTE_ACL_CLASSIFY_AVX2, "avx2" },
	{ RTE_ACL_CLASSIFY_SSE, "sse" },
	{ RTE_ACL_CLASSIFY_SCALAR, "scalar" },
};

/* ------------------------------------------------------------------ */
/* Stores                                                              */
/* ------------------------------------------------------------------ */

static void
store_free(struct acl_store *s, unsigned int n_lcores)
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

static struct acl_store *
store_new(uint32_t capacity, unsigned int n_lcores, int socket)
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
	store_free(s, n_lcores);
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Building a version                                                  */
/* ------------------------------------------------------------------ */

static bool
ports_constrained(const struct pa_config_acl_rule *r)
{
	return !(r->sport.lo == 0 && r->sport.hi == UINT16_MAX &&
		r->dport.lo == 0 && r->dport.hi == UINT16_MAX);
}

static int
rule_family(const struct pa_config_acl_rule *r)
{
	if (r->src.addr.family != 0)
		return r->src.addr.family;
	return r->dst.addr.family;	/* 0: both */
}

/* What both families' entries share: rule data, protocol, input port, and
 * ports left free (f[sport], f[sport + 1] are sport and dport). */
static void
fill_common(struct rte_acl_rule_data *d, struct rte_acl_field *f,
		unsigned int sport, const struct pa_config_acl_rule *r,
		uint32_t prio, uint32_t userdata)
{
	RTE_BUILD_BUG_ON((int)F4_PROTO != (int)F6_PROTO ||
		(int)F4_INPORT != (int)F6_INPORT ||
		F4_DPORT != F4_SPORT + 1 || F6_DPORT != F6_SPORT + 1);
	d->category_mask = 1;
	d->priority = (int32_t)prio;
	d->userdata = userdata;
	if (r->proto != PA_PROTO_ANY) {
		f[F4_PROTO].value.u8 = (uint8_t)r->proto;
		f[F4_PROTO].mask_range.u8 = 0xff;
	}
	if (r->in_port >= 0) {
		f[F4_INPORT].value.u8 = (uint8_t)r->in_port;
		f[F4_INPORT].mask_range.u8 = 0xff;
	}
	f[sport].mask_range.u16 = UINT16_MAX;
	f[sport + 1].mask_range.u16 = UINT16_MAX;
}

/* The rule's port ranges, for the entries of packets with ports. */
static void
set_ports(struct rte_acl_field *f, unsigned int sport,
		const struct pa_config_acl_rule *r)
{
	f[sport].value.u16 = r->sport.lo;
	f[sport].mask_range.u16 = r->sport.hi;
	f[sport + 1].value.u16 = r->dport.lo;
	f[sport + 1].mask_range.u16 = r->dport.hi;
}

static void
fill_common4(struct acl_rule4 *e, const struct pa_config_acl_rule *r,
		uint32_t prio, uint32_t userdata)
{
	memset(e, 0, sizeof(*e));
	fill_common(&e->data, e->field, F4_SPORT, r, prio, userdata);
	if (r->src.addr.family == AF_INET) {
		e->field[F4_SRC].value.u32 = rte_be_to_cpu_32(r->src.addr.v4.s_addr);
		e->field[F4_SRC].mask_range.u32 = r->src.len;
	}
	if (r->dst.addr.family == AF_INET) {
		e->field[F4_DST].value.u32 = rte_be_to_cpu_32(r->dst.addr.v4.s_addr);
		e->field[F4_DST].mask_range.u32 = r->dst.len;
	}
}

static void
prefix6_fields(struct rte_acl_field *f, const struct pa_ip_prefix *p)
{
	unsigned int i;
	int left;

	for (i = 0; i < 4; i++) {
		uint32_t w;

		memcpy(&w, &p->addr.v6.s6_addr[4 * i], sizeof(w));
		left = (int)p->len - 32 * (int)i;
		f[i].value.u32 = rte_be_to_cpu_32(w);
		f[i].mask_range.u32 = left <= 0 ? 0 : left >= 32 ? 32 : left;
	}
}

static void
fill_common6(struct acl_rule6 *e, const struct pa_config_acl_rule *r,
		uint32_t prio, uint32_t userdata)
{
	memset(e, 0, sizeof(*e));
	fill_common(&e->data, e->field, F6_SPORT, r, prio, userdata);
	if (r->src.addr.family == AF_INET6)
		prefix6_fields(&e->field[F6_SRC0], &r->src);
	if (r->dst.addr.family == AF_INET6)
		prefix6_fields(&e->field[F6_DST0], &r->dst);
}

struct rank_item {
	int32_t priority;
	uint32_t id;
	unsigned int index;
};

static int
rank_cmp(const void *a, const void *b)
{
	const struct rank_item *x = a, *y = b;

	if (x->priority != y->priority)
		return x->priority > y->priority ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id ? 1 : 0;
}

static struct rte_acl_ctx *
ctx_build(struct pa_acl *acl, int family, const void *entries, unsigned int n,
		char *err, size_t err_len)
{
	struct rte_acl_param prm;
	struct rte_acl_config cfg;
	struct rte_acl_ctx *ctx;
	char name[RTE_ACL_NAMESIZE];
	int ret;

	if (n == 0)
		return NULL;
	snprintf(name, sizeof(name), "pa_acl%d_%u", family == AF_INET ? 4 : 6,
		__atomic_fetch_add(&ctx_seq, 1, __ATOMIC_RELAXED));
	memset(&prm, 0, sizeof(prm));
	prm.name = name;
	prm.socket_id = acl->socket;
	prm.rule_size = family == AF_INET ? RTE_ACL_RULE_SZ(F4_NUM) :
		RTE_ACL_RULE_SZ(F6_NUM);
	prm.max_rule_num = n;
	ctx = rte_acl_create(&prm);
	if (ctx == NULL) {
		snprintf(err, err_len, "cannot create an ACL context: %s",
			rte_strerror(rte_errno));
		rte_errno = rte_errno != 0 ? rte_errno : ENOMEM;
		return NULL;
	}
	ret = rte_acl_add_rules(ctx, entries, n);
	if (ret != 0)
		goto fail;
	memset(&cfg, 0, sizeof(cfg));
	cfg.num_categories = 1;
	if (family == AF_INET) {
		cfg.num_fields = F4_NUM;
		memcpy(cfg.defs, defs4, sizeof(defs4));
	} else {
		cfg.num_fields = F6_NUM;
		memcpy(cfg.defs, defs6, sizeof(defs6));
	}
	ret = rte_acl_build(ctx, &cfg);
	if (ret != 0)
		goto fail;
	ret = rte_acl_set_ctx_classify(ctx, acl->alg);
	if (ret != 0)
		goto fail;
	return ctx;
fail:
	snprintf(err, err_len, "cannot build the IPv%d ACL of %u entries: %s",
		family == AF_INET ? 4 : 6, n, rte_strerror(-ret));
	rte_acl_free(ctx);
	rte_errno = -ret;
	return NULL;
}

static void
set_free(struct acl_set *set)
{
	unsigned int i;

	for (i = 0; i < set->n; i++)
		rte_acl_free(set->ctx[i]);
	for (i = 0; i < set->n_np; i++)
		rte_acl_free(set->np[i]);
	set->n = 0;
	set->n_np = 0;
}

static void
ctxs_free(struct rte_acl_ctx **ctx, unsigned int *n)
{
	unsigned int i;

	for (i = 0; i < *n; i++)
		rte_acl_free(ctx[i]);
	*n = 0;
}

/* Build @p n entries (ranked) into as few contexts as rte_acl accepts. */
static int
ctxs_build(struct pa_acl *acl, int family, const void *entries, unsigned int n,
		struct rte_acl_ctx **ctx, unsigned int *n_ctx, char *err,
		size_t err_len)
{
	size_t esz = family == AF_INET ? RTE_ACL_RULE_SZ(F4_NUM) :
		RTE_ACL_RULE_SZ(F6_NUM);
	unsigned int per = n, k;	/* one context if rte_acl can */

	*n_ctx = 0;
	if (n == 0)
		return 0;
	for (;;) {
		unsigned int shards = (n + per - 1) / per;

		if (shards > ACL_MAX_SHARDS)
			return -ERANGE;
		for (k = 0; k < shards; k++) {
			struct rte_acl_ctx *c = ctx_build(acl, family,
				(const uint8_t *)entries + (size_t)k * per * esz,
				RTE_MIN(per, n - k * per), err, err_len);

			if (c == NULL)
				break;
			ctx[(*n_ctx)++] = c;
		}
		if (k == shards)
			return 0;
		ctxs_free(ctx, n_ctx);
		if (per <= ACL_SHARD_MIN)
			return -rte_errno;
		per = (per + 1) / 2;
		ACL_LOG(DEBUG, "IPv%d table of %u entries: retrying in shards of %u",
			family == AF_INET ? 4 : 6, n, per);
	}
}

static void
table_free(struct acl_table *t)
{
	unsigned int k;

	if (t == NULL)
		return;
	for (k = 0; k < ACL_TIERS; k++) {
		set_free(&t->v4[k]);
		set_free(&t->v6[k]);
	}
	rte_free(t->slots);
	rte_free(t);
}

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
			snprintf(err, err_len,
				"rule %u: police rate_pps %" PRIu64 " burst %" PRIu64 " not accepted by rte_meter",
				r->id, r->rate_pps, r->burst);
			return -EINVAL;
		}
	}
	return 0;
}

/*
 * Build the contexts of one tier from the rules whose tier is @p tier
 * (every rule when @p tiers is NULL).
 */
static int
build_tier(struct pa_acl *acl, const struct pa_config_acl_rule *rules,
		const uint32_t *slots, const uint8_t *tiers, uint8_t tier,
		unsigned int n, struct acl_set *s4, struct acl_set *s6,
		char *err, size_t err_len)
{
	struct rank_item *rank;
	struct acl_rule4 *e4;
	struct acl_rule6 *e6;
	unsigned int i, m = 0, n4 = 0, n6 = 0;
	bool ports = false;
	int ret = 0;

	memset(s4, 0, sizeof(*s4));
	memset(s6, 0, sizeof(*s6));
	rank = calloc(n + 1, sizeof(*rank));
	/* [0, n): the rules as they are; [n, 2n): ports widened */
	e4 = calloc(2 * (size_t)n + 1, sizeof(*e4));
	e6 = calloc(2 * (size_t)n + 1, sizeof(*e6));
	if (rank == NULL || e4 == NULL || e6 == NULL) {
		snprintf(err, err_len, "out of memory building the ACL");
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++)
		if (tiers == NULL || (tier == 0 ? tiers[i] == 0 : tiers[i] != 0))
			rank[m++] = (struct rank_item){ rules[i].priority,
				rules[i].id, i };
	qsort(rank, m, sizeof(*rank), rank_cmp);
	for (i = 0; i < m; i++) {
		const struct pa_config_acl_rule *r = &rules[rank[i].index];
		uint32_t ud = slots[rank[i].index] + 1;
		uint32_t prio = m - i;	/* rank 0 (best) gets the highest */
		int fam = rule_family(r);

		ports |= ports_constrained(r);
		if (fam == 0 || fam == AF_INET) {
			fill_common4(&e4[n + n4], r, prio, ud);
			fill_common4(&e4[n4], r, prio, ud);
			set_ports(e4[n4].field, F4_SPORT, r);
			n4++;
		}
		if (fam == 0 || fam == AF_INET6) {
			fill_common6(&e6[n + n6], r, prio, ud);
			fill_common6(&e6[n6], r, prio, ud);
			set_ports(e6[n6].field, F6_SPORT, r);
			n6++;
		}
	}
	ret = ctxs_build(acl, AF_INET, e4, n4, s4->ctx, &s4->n, err, err_len);
	if (ret == 0)
		ret = ctxs_build(acl, AF_INET6, e6, n6, s6->ctx, &s6->n, err,
			err_len);
	if (ret == 0 && ports)
		ret = ctxs_build(acl, AF_INET, e4 + n, n4, s4->np, &s4->n_np,
			err, err_len);
	if (ret == 0 && ports)
		ret = ctxs_build(acl, AF_INET6, e6 + n, n6, s6->np, &s6->n_np,
			err, err_len);
	if (ret != 0) {
		set_free(s4);
		set_free(s6);
	}
out:
	free(rank);
	free(e4);
	free(e6);
	return ret;
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
		ret = build_tier(acl, rules, slots, NULL, 0, n, &t->v4[0],
			&t->v6[0], err, err_len);
	} else {
		ret = build_tier(acl, rules, slots, tiers, 1, n, &t->v4[1],
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
	__atomic_store_n(&acl->live, t, __ATOMIC_RELEASE);
	if (acl->rcu != NULL)
		rte_rcu_qsbr_synchronize(acl->rcu, RTE_QSBR_THRID_INVALID);
	if (base4 == NULL && !full && old != NULL) {
		memset(&old->v4[0], 0, sizeof(old->v4[0]));
		memset(&old->v6[0], 0, sizeof(old->v6[0]));
	}
	table_free(old);
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
	snprintf(err, err_len, "out of memory building the ACL");
	ret = -ENOMEM;
out:
	table_free(t);
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
	s = store_new(cap, acl->n_lcores, acl->socket);
	used = realloc(acl->slot_used, cap);
	if (s == NULL || used == NULL) {
		store_free(s, acl->n_lcores);
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
	store_free(old, acl->n_lcores);
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
 * Replace the rule set with @p rules (n, any order; copied). Rules whose id
 * stays keep their slot (and so their counters).
 */
static int
apply(struct pa_acl *acl, const struct pa_config_acl_rule *rules,
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
		snprintf(err, err_len, "out of memory");
		ret = -ENOMEM;
		goto out;
	}
	if (n != 0)
		memcpy(nr, rules, sizeof(*nr) * n);
	qsort(nr, n, sizeof(*nr), id_cmp);
	for (i = 1; i < n; i++) {
		if (nr[i].id == nr[i - 1].id) {
			snprintf(err, err_len, "duplicate rule id %u", nr[i].id);
			ret = -EEXIST;
			goto out;
		}
	}
	/* Old rules hold their slots until the new version is live. */
	need = RTE_MAX((uint32_t)ACL_MIN_SLOTS,
		rte_align32pow2(acl->n_rules + n));
	store = store_for(acl, need);
	if (store == NULL) {
		snprintf(err, err_len, "out of memory for %u rule counters", need);
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
			store_free(store, acl->n_lcores);
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
	free(acl->rules);
	free(acl->rule_slot);
	free(acl->rule_tier);
	acl->rules = nr;
	acl->rule_slot = ns;
	acl->rule_tier = nt;
	acl->n_rules = n;
	acl->n_delta = n_delta;
	acl->def = def;
	acl->non_ip_drop = non_ip_drop;
	nr = NULL;
	ns = NULL;
	nt = NULL;
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
		snprintf(err, err_len, "rule id must be 1..2147483648");
		return -EINVAL;
	}
	if (r->src.addr.family != 0 && r->dst.addr.family != 0 &&
	    r->src.addr.family != r->dst.addr.family) {
		snprintf(err, err_len, "rule %u mixes IPv4 and IPv6 prefixes",
			r->id);
		return -EINVAL;
	}
	if (r->in_port > UINT8_MAX - 1) {
		snprintf(err, err_len, "rule %u: in_port index %d too large",
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
		snprintf(err, err_len, "rule id %u already exists", r->id);
		return -EEXIST;
	}
	all = calloc(acl->n_rules + 1, sizeof(*all));
	if (all == NULL) {
		snprintf(err, err_len, "out of memory");
		return -ENOMEM;
	}
	if (acl->n_rules != 0)
		memcpy(all, acl->rules, sizeof(*all) * acl->n_rules);
	all[acl->n_rules] = *r;
	/* A small delta tier takes adds; past ACL_DELTA_MAX all is rebuilt. */
	ret = apply(acl, all, acl->n_rules + 1, acl->def, acl->non_ip_drop,
		acl->live == NULL || acl->n_delta + 1 > ACL_DELTA_MAX, err,
		err_len);
	free(all);
	return ret;
}

static bool
prefix_overlap(const struct pa_ip_prefix *a, const struct pa_ip_prefix *b)
{
	const uint8_t *x, *y;
	unsigned int len, bytes, rem;

	if (a->addr.family == 0 || b->addr.family == 0)
		return true;
	if (a->addr.family != b->addr.family)
		return false;
	len = RTE_MIN(a->len, b->len);
	x = a->addr.family == AF_INET ? (const uint8_t *)&a->addr.v4 :
		a->addr.v6.s6_addr;
	y = b->addr.family == AF_INET ? (const uint8_t *)&b->addr.v4 :
		b->addr.v6.s6_addr;
	bytes = len / 8;
	rem = len % 8;
	if (memcmp(x, y, bytes) != 0)
		return false;
	return rem == 0 || ((x[bytes] ^ y[bytes]) & (uint8_t)(0xff << (8 - rem))) == 0;
}

/* Could a packet match both rules? Ports are left out: packets without
 * ports ignore them, so the answer may be yes when it is no. */
static bool
rules_overlap(const struct pa_config_acl_rule *a,
		const struct pa_config_acl_rule *b)
{
	int fa = rule_family(a), fb = rule_family(b);

	return (fa == 0 || fb == 0 || fa == fb) &&
		prefix_overlap(&a->src, &b->src) &&
		prefix_overlap(&a->dst, &b->dst) &&
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
		snprintf(err, err_len, "out of memory");
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
	free(acl->rules);
	free(acl->rule_slot);
	free(acl->rule_tier);
	acl->rules = nr;
	acl->rule_slot = ns;
	acl->rule_tier = nt;
	acl->n_rules = n;
	acl->n_delta = n_delta;
	acl->gen++;		/* a fold in progress holds the deleted rule */
	nr = NULL;
	ns = NULL;
	nt = NULL;
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
		snprintf(err, err_len, "no rule with id %u", id);
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
		snprintf(err, err_len, "out of memory");
		return -ENOMEM;
	}
	memcpy(rest, acl->rules, sizeof(*rest) * (unsigned int)pos);
	memcpy(rest + pos, acl->rules + pos + 1,
		sizeof(*rest) * (acl->n_rules - (unsigned int)pos - 1));
	/* A delta rule: the delta is rebuilt; otherwise everything is. */
	ret = apply(acl, rest, acl->n_rules - 1, acl->def, acl->non_ip_drop,
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
	return apply(acl, a->rules, a->n_rules, a->def, a->non_ip_drop, true,
		err, err_len);
}

/* ------------------------------------------------------------------ */
/* Life cycle                                                          */
/* ------------------------------------------------------------------ */

static enum rte_acl_classify_alg
best_algorithm(int socket)
{
	struct rte_acl_param prm = {
		.name = "pa_acl_probe", .socket_id = socket,
		.rule_size = RTE_ACL_RULE_SZ(F4_NUM), .max_rule_num = 1,
	};
	struct rte_acl_ctx *ctx;
	unsigned int i;

	/* rte_acl only uses 512-bit paths when allowed to; allow it unless
	 * the operator capped it with --force-max-simd-bitwidth. */
	if (rte_vect_get_max_simd_bitwidth() < RTE_VECT_SIMD_512)
		rte_vect_set_max_simd_bitwidth(RTE_VECT_SIMD_512);
	ctx = rte_acl_create(&prm);
	if (ctx == NULL)
		return RTE_ACL_CLASSIFY_DEFAULT;
	for (i = 0; i < RTE_DIM(algs); i++)
		if (rte_acl_set_ctx_classify(ctx, algs[i].alg) == 0)
			break;
	rte_acl_free(ctx);
	return i < RTE_DIM(algs) ? algs[i].alg : RTE_ACL_CLASSIFY_DEFAULT;
}

const char *
pa_acl_algorithm(const struct pa_acl *acl)
{
	unsigned int i;

	for (i = 0; i < RTE_DIM(algs); i++)
		if (algs[i].alg == acl->alg)
			return algs[i].name;
	return "default";
}

struct pa_acl *
pa_acl_create(const struct pa_acl_opts *o, char *err, size_t err_len)
{
	static bool defs_ready;
	struct pa_acl *acl;
	const struct pa_config_acl *a = &o->cfg->acl;
	uint32_t cap;

	if (!defs_ready) {
		init_defs();
		defs_ready = true;
	}
	acl = rte_zmalloc_socket("pa_acl", sizeof(*acl), RTE_CACHE_LINE_SIZE,
		o->socket);
	if (acl == NULL) {
		snprintf(err, err_len, "out of memory for the ACL");
		return NULL;
	}
	pthread_mutex_init(&acl->lock, NULL);
	pthread_cond_init(&acl->wake, NULL);
	acl->rcu = o->rcu;
	acl->n_lcores = RTE_MAX(o->n_lcores, 1u);
	acl->socket = o->socket;
	acl->cfg = o->cfg;
	acl->port_index_of = o->port_index_of;
	acl->alg = best_algorithm(o->socket);
	acl->extra = rte_zmalloc_socket("pa_acl_extra",
		sizeof(*acl->extra) * acl->n_lcores, RTE_CACHE_LINE_SIZE,
		o->socket);
	cap = RTE_MAX((uint32_t)ACL_MIN_SLOTS, rte_align32pow2(a->n_rules));
	acl->store = store_new(cap, acl->n_lcores, o->socket);
	acl->slot_used = calloc(cap, 1);
	if (acl->extra == NULL || acl->store == NULL || acl->slot_used == NULL) {
		snprintf(err, err_len, "out of memory for the ACL");
		goto fail;
	}
	acl->def = a->def;
	acl->non_ip_drop = a->non_ip_drop;
	if (apply(acl, a->rules, a->n_rules, a->def, a->non_ip_drop, true,
			err, err_len) != 0)
		goto fail;
	if (!o->no_folder)
		folder_start(acl);
	ACL_LOG(INFO, "%u rules, default %s, classify algorithm %s",
		acl->n_rules, acl->def == PA_ACL_DROP ? "drop" : "permit",
		pa_acl_algorithm(acl));
	return acl;
fail:
	pa_acl_destroy(acl);
	return NULL;
}

void
pa_acl_destroy(struct pa_acl *acl)
{
	if (acl == NULL)
		return;
	folder_stop(acl);
	table_free(acl->live);
	store_free(acl->store, acl->n_lcores);
	rte_free(acl->extra);
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
	struct rank_item *rank;
	json_t *arr = json_array();
	unsigned int i;

	rank = calloc(acl->n_rules + 1, sizeof(*rank));
	if (arr == NULL || rank == NULL) {
		free(rank);
		json_decref(arr);
		return NULL;
	}
	for (i = 0; i < acl->n_rules; i++)
		rank[i] = (struct rank_item){ acl->rules[i].priority,
			acl->rules[i].id, i };
	qsort(rank, acl->n_rules, sizeof(*rank), rank_cmp);
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

static json_t *
stats_json_locked(const struct pa_acl *acl)
{
	uint64_t def = 0, non_ip = 0;
	unsigned int l;

	for (l = 0; l < acl->n_lcores; l++) {
		def += __atomic_load_n(&acl->extra[l].default_hits, __ATOMIC_RELAXED);
		non_ip += __atomic_load_n(&acl->extra[l].non_ip, __ATOMIC_RELAXED);
	}
	return json_pack("{s:i, s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:f, s:f, s:I, s:s}",
		"rules", (int)acl->n_rules,
		"default", acl->def == PA_ACL_DROP ? "drop" : "permit",
		"non_ip", acl->non_ip_drop ? "drop" : "forward",
		"default_hits", (json_int_t)def,
		"non_ip_frames", (json_int_t)non_ip,
		"version", (json_int_t)acl->version,
		"folds", (json_int_t)acl->folds,
		"delta_rules", (json_int_t)acl->n_delta,
		"builds", (json_int_t)acl->builds,
		"build_ms", acl->last_build_ms,
		"update_ms", acl->last_update_ms,
		"memory_bytes", (json_int_t)acl->last_memory,
		"algorithm", pa_acl_algorithm(acl));
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
	out->present = true;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Data path                                                           */
/* ------------------------------------------------------------------ */

static __rte_always_inline bool
has_ports(const struct pa_pkt_meta *meta)
{
	return (meta->flags & (PA_PKT_F_L4 | PA_PKT_F_FRAG_LATER)) ==
		PA_PKT_F_L4 && (meta->l4_proto == IPPROTO_TCP ||
		meta->l4_proto == IPPROTO_UDP || meta->l4_proto == IPPROTO_SCTP);
}

static __rte_always_inline const uint8_t *
l3_bytes(const struct rte_mbuf *m, const struct pa_pkt_meta *meta,
		uint32_t len, uint8_t *buf)
{
	return rte_pktmbuf_read(m, meta->l3_off, len, buf);
}

/* Rewrite the DSCP bits (ECN kept) in place. Headers in a further
 * segment (pathological chains) are left alone. */
static void
mark_packet(struct rte_mbuf *m, const struct pa_pkt_meta *meta, uint8_t tos)
{
	uint32_t sum;

	if (meta->flags & PA_PKT_F_IPV4) {
		struct rte_ipv4_hdr *ip;
		uint16_t old_w, new_w;
		uint8_t new_tos;

		if ((uint32_t)meta->l3_off + sizeof(*ip) > rte_pktmbuf_data_len(m))
			return;
		ip = rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *,
			meta->l3_off);
		new_tos = (uint8_t)(tos | (ip->type_of_service & 3));
		if (new_tos == ip->type_of_service)
			return;
		/* RFC 1624: HC' = ~(~HC + ~m + m') over the 16-bit word that
		 * holds version/IHL and TOS. */
		old_w = (uint16_t)(ip->version_ihl << 8 | ip->type_of_service);
		new_w = (uint16_t)(ip->version_ihl << 8 | new_tos);
		sum = (uint16_t)~rte_be_to_cpu_16(ip->hdr_checksum);
		sum += (uint16_t)~old_w;
		sum += new_w;
		sum = (sum & 0xffff) + (sum >> 16);
		sum = (sum & 0xffff) + (sum >> 16);
		ip->type_of_service = new_tos;
		ip->hdr_checksum = rte_cpu_to_be_16((uint16_t)~sum);
	} else {
		struct rte_ipv6_hdr *ip6;
		uint32_t v, tc;

		if ((uint32_t)meta->l3_off + sizeof(*ip6) > rte_pktmbuf_data_len(m))
			return;
		ip6 = rte_pktmbuf_mtod_offset(m, struct rte_ipv6_hdr *,
			meta->l3_off);
		v = rte_be_to_cpu_32(ip6->vtc_flow);
		tc = tos | ((v >> 20) & 3);
		ip6->vtc_flow = rte_cpu_to_be_32((v & 0xf00fffff) | tc << 20);
	}
}

/* Apply the verdict of slot @p res (0: default) to packet @p m. */
static __rte_always_inline uint8_t
act(struct pa_acl *acl, const struct acl_table *t, unsigned int lidx,
		struct rte_mbuf *m, const struct pa_pkt_meta *meta, uint32_t res,
		uint64_t now)
{
	const struct acl_slot *s;
	struct acl_counter *c;

	if (res == 0) {
		acl->extra[lidx].default_hits++;
		return t->def == PA_ACL_DROP ? PA_ACL_V_DROP_ACL :
			PA_ACL_V_FORWARD;
	}
	s = &t->slots[res - 1];
	c = &t->store->hits[lidx][res - 1];
	c->packets++;
	c->bytes += rte_pktmbuf_pkt_len(m);
	switch (s->action) {
	case PA_ACL_PERMIT:
		return PA_ACL_V_FORWARD;
	case PA_ACL_DROP:
		return PA_ACL_V_DROP_ACL;
	case PA_ACL_MARK:
		mark_packet(m, meta, s->tos_mark);
		return PA_ACL_V_FORWARD;
	default:
		return rte_meter_srtcm_color_blind_check(
			&t->store->meters[lidx][res - 1],
			(struct rte_meter_srtcm_profile *)(uintptr_t)&s->profile,
			now, 1) == RTE_COLOR_GREEN ?
			PA_ACL_V_FORWARD : PA_ACL_V_DROP_POLICE;
	}
}

static __rte_always_inline uint8_t
in_port_of(const struct pa_acl *acl, uint16_t port_id)
{
	uint16_t idx;

	if (acl->port_index_of == NULL || port_id >= RTE_MAX_ETHPORTS)
		return ACL_PORT_ANY;
	idx = acl->port_index_of[port_id];
	return idx > UINT8_MAX ? ACL_PORT_ANY : (uint8_t)idx;
}

/* The better of two matches (slot + 1, 0 = none): higher priority, then
 * lower id. */
static __rte_always_inline uint32_t
better(const struct acl_table *t, uint32_t a, uint32_t b)
{
	const struct acl_slot *sa, *sb;

	if (b == 0)
		return a;
	if (a == 0)
		return b;
	sa = &t->slots[a - 1];
	sb = &t->slots[b - 1];
	if (sb->priority > sa->priority ||
	    (sb->priority == sa->priority && sb->id < sa->id))
		return b;
	return a;
}

/* Matches of deleted rules that the base still holds count as none. */
static __rte_always_inline void
void_dead(const struct acl_table *t, uint32_t *res, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (res[i] != 0 && t->slots[res[i] - 1].dead)
			res[i] = 0;
}

/* Look @p n keys up in every context of both tiers of one family; @p np:
 * the keys are of packets without ports. */
static __rte_always_inline void
lookup(const struct acl_table *t, const struct acl_set *sets, bool np,
		const uint8_t **data, uint32_t *res, unsigned int n)
{
	uint32_t more[ACL_MAX_BURST];
	unsigned int k, c, i, cnt;
	bool first = true;

	for (k = 0; k < ACL_TIERS; k++) {
		struct rte_acl_ctx *const *ctx = sets[k].ctx;

		cnt = sets[k].n;
		if (np && sets[k].n_np != 0) {
			ctx = sets[k].np;
			cnt = sets[k].n_np;
		}
		for (c = 0; c < cnt; c++) {
			if (first) {
				rte_acl_classify(ctx[c], data, res, n, 1);
				if (unlikely(t->n_dead != 0))
					void_dead(t, res, n);
				first = false;
				continue;
			}
			rte_acl_classify(ctx[c], data, more, n, 1);
			if (unlikely(t->n_dead != 0))
				void_dead(t, more, n);
			for (i = 0; i < n; i++)
				res[i] = better(t, res[i], more[i]);
		}
	}
	if (first)
		memset(res, 0, sizeof(*res) * n);
}

void
pa_acl_classify(struct pa_acl *acl, unsigned int lidx, struct rte_mbuf **pkts,
		uint16_t n, uint8_t *verdicts)
{
	const struct acl_table *t = __atomic_load_n(&acl->live, __ATOMIC_ACQUIRE);
	struct acl_key4 k4[ACL_MAX_BURST];
	struct acl_key6 k6[ACL_MAX_BURST];
	const uint8_t *d4[ACL_MAX_BURST], *d6[ACL_MAX_BURST];
	const uint8_t *d4n[ACL_MAX_BURST], *d6n[ACL_MAX_BURST];
	uint32_t r4[ACL_MAX_BURST], r6[ACL_MAX_BURST];
	uint32_t r4n[ACL_MAX_BURST], r6n[ACL_MAX_BURST];
	uint16_t i4[ACL_MAX_BURST], i6[ACL_MAX_BURST];
	uint16_t i4n[ACL_MAX_BURST], i6n[ACL_MAX_BURST];
	uint8_t buf[40];
	unsigned int i, n4 = 0, n6 = 0, n4n = 0, n6n = 0;
	uint64_t now = 0;

	n = RTE_MIN(n, (uint16_t)ACL_MAX_BURST);
	if (t->v4[0].n + t->v4[1].n + t->v6[0].n + t->v6[1].n == 0) {
		/* (a set with port-less contexts has the main ones too) */
		/* No rules: the default for IP, non_ip for the rest. */
		uint8_t def = t->def == PA_ACL_DROP ? PA_ACL_V_DROP_ACL :
			PA_ACL_V_FORWARD;
		uint8_t other = t->non_ip_drop ? PA_ACL_V_DROP_NON_IP :
			PA_ACL_V_FORWARD;
		unsigned int non_ip = 0;

		for (i = 0; i < n; i++) {
			bool ip = (pa_pkt_meta(pkts[i])->flags &
				(PA_PKT_F_IPV4 | PA_PKT_F_IPV6)) != 0;

			verdicts[i] = ip ? def : other;
			non_ip += !ip;
		}
		acl->extra[lidx].default_hits += n - non_ip;
		acl->extra[lidx].non_ip += non_ip;
		return;
	}
	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		const struct pa_pkt_meta *meta = pa_pkt_meta(m);
		bool ports = has_ports(meta);
		const uint8_t *l3;

		if (meta->flags & PA_PKT_F_IPV4) {
			struct acl_key4 *k = &k4[i];

			l3 = l3_bytes(m, meta, 20, buf);
			k->proto = meta->l4_proto;
			k->in_port = in_port_of(acl, m->port);
			k->ports_known = ports;
			k->pad1 = 0;	/* read by rte_acl with in_port */
			memcpy(&k->src, l3 + 12, 4);
			memcpy(&k->dst, l3 + 16, 4);
			k->sport = rte_cpu_to_be_16(meta->sport);
			k->dport = rte_cpu_to_be_16(meta->dport);
			if (likely(ports)) {
				d4[n4] = (const uint8_t *)k;
				i4[n4++] = (uint16_t)i;
			} else {
				d4n[n4n] = (const uint8_t *)k;
				i4n[n4n++] = (uint16_t)i;
			}
		} else if (meta->flags & PA_PKT_F_IPV6) {
			struct acl_key6 *k = &k6[i];

			l3 = l3_bytes(m, meta, 40, buf);
			k->proto = meta->l4_proto;
			k->in_port = in_port_of(acl, m->port);
			k->ports_known = ports;
			k->pad1 = 0;
			memcpy(k->src, l3 + 8, 16);
			memcpy(k->dst, l3 + 24, 16);
			k->sport = rte_cpu_to_be_16(meta->sport);
			k->dport = rte_cpu_to_be_16(meta->dport);
			if (likely(ports)) {
				d6[n6] = (const uint8_t *)k;
				i6[n6++] = (uint16_t)i;
			} else {
				d6n[n6n] = (const uint8_t *)k;
				i6n[n6n++] = (uint16_t)i;
			}
		} else if (t->non_ip_drop) {
			acl->extra[lidx].non_ip++;
			verdicts[i] = PA_ACL_V_DROP_NON_IP;
		} else {
			acl->extra[lidx].non_ip++;
			verdicts[i] = PA_ACL_V_FORWARD;
		}
	}
	if (n4 != 0)
		lookup(t, t->v4, false, d4, r4, n4);
	if (n4n != 0)
		lookup(t, t->v4, true, d4n, r4n, n4n);
	if (n6 != 0)
		lookup(t, t->v6, false, d6, r6, n6);
	if (n6n != 0)
		lookup(t, t->v6, true, d6n, r6n, n6n);
	if (n4 + n6 + n4n + n6n != 0)
		now = rte_rdtsc();
	for (i = 0; i < n4; i++)
		verdicts[i4[i]] = act(acl, t, lidx, pkts[i4[i]],
			pa_pkt_meta(pkts[i4[i]]), r4[i], now);
	for (i = 0; i < n4n; i++)
		verdicts[i4n[i]] = act(acl, t, lidx, pkts[i4n[i]],
			pa_pkt_meta(pkts[i4n[i]]), r4n[i], now);
	for (i = 0; i < n6; i++)
		verdicts[i6[i]] = act(acl, t, lidx, pkts[i6[i]],
			pa_pkt_meta(pkts[i6[i]]), r6[i], now);
	for (i = 0; i < n6n; i++)
		verdicts[i6n[i]] = act(acl, t, lidx, pkts[i6n[i]],
			pa_pkt_meta(pkts[i6n[i]]), r6n[i], now);
}

static int
trace_locked(struct pa_acl *acl, const struct pa_flow_key *key,
		bool ports, int in_port, uint32_t *rule_id,
		enum pa_acl_action *action)
{
	const struct acl_table *t = acl->live;
	const uint8_t *data[1];
	uint32_t res = 0;
	struct acl_key4 k4;
	struct acl_key6 k6;

	memset(&k4, 0, sizeof(k4));
	memset(&k6, 0, sizeof(k6));
	if (key->family == 4) {
		k4.proto = key->proto;
		k4.in_port = in_port < 0 || in_port > UINT8_MAX - 1 ?
			ACL_PORT_ANY : (uint8_t)in_port;
		k4.ports_known = ports;
		k4.src = key->v4.src;
		k4.dst = key->v4.dst;
		k4.sport = key->sport;
		k4.dport = key->dport;
		data[0] = (const uint8_t *)&k4;
		lookup(t, t->v4, !ports, data, &res, 1);
	} else if (key->family == 6) {
		k6.proto = key->proto;
		k6.in_port = in_port < 0 || in_port > UINT8_MAX - 1 ?
			ACL_PORT_ANY : (uint8_t)in_port;
		k6.ports_known = ports;
		memcpy(k6.src, key->v6.src, 16);
		memcpy(k6.dst, key->v6.dst, 16);
		k6.sport = key->sport;
		k6.dport = key->dport;
		data[0] = (const uint8_t *)&k6;
		lookup(t, t->v6, !ports, data, &res, 1);
	} else {
		return -EINVAL;
	}
	if (res == 0) {
		*rule_id = 0;
		*action = t->def;
	} else {
		*rule_id = t->slots[res - 1].id;
		*action = (enum pa_acl_action)t->slots[res - 1].action;
	}
	return 0;
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
	ret = build_tier(acl, snap, snap_slots, NULL, 0, n, &b4, &b6, err,
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
	set_free(&b4);
	set_free(&b6);
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

static void
folder_start(struct pa_acl *acl)
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

static void
folder_stop(struct pa_acl *acl)
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

#define LOCKED(acl, expr) ({						\
	__typeof__(expr) _r;						\
	pthread_mutex_lock((pthread_mutex_t *)&(acl)->lock);		\
	_r = (expr);							\
	pthread_mutex_unlock((pthread_mutex_t *)&(acl)->lock);	\
	_r;								\
})

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

int
pa_acl_rule_add(struct pa_acl *acl, const struct pa_config_acl_rule *r,
		char *err, size_t err_len)
{
	return LOCKED(acl, changed(acl, rule_add_locked(acl, r, err, err_len)));
}

int
pa_acl_rule_delete(struct pa_acl *acl, uint32_t id, char *err, size_t err_len)
{
	return LOCKED(acl, changed(acl, rule_delete_locked(acl, id, err,
		err_len)));
}

int
pa_acl_rules_replace(struct pa_acl *acl, const struct pa_config_acl *a,
		char *err, size_t err_len)
{
	return LOCKED(acl, rules_replace_locked(acl, a, err, err_len));
}

json_t *
pa_acl_rules_json(const struct pa_acl *acl)
{
	return LOCKED(acl, rules_json_locked(acl));
}

json_t *
pa_acl_stats_json(const struct pa_acl *acl)
{
	return LOCKED(acl, stats_json_locked(acl));
}

int
pa_acl_export(const struct pa_acl *acl, struct pa_config_acl *out)
{
	return LOCKED(acl, export_locked(acl, out));
}

int
pa_acl_trace(struct pa_acl *acl, const struct pa_flow_key *key, bool ports,
		int in_port, uint32_t *rule_id, enum pa_acl_action *action)
{
	return LOCKED(acl, trace_locked(acl, key, ports, in_port, rule_id,
		action));
}
