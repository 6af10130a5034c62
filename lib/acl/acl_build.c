/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Building rte_acl contexts from rules. Per address family and tier, a
 * set of contexts with one entry per rule for packets with ports, and —
 * when some rule constrains ports — a second set with the port ranges
 * widened for packets without ports (they match port fields as "any").
 * The rte_acl priority is the rule's rank by (priority desc, id asc); the
 * userdata its slot + 1.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <rte_acl.h>
#include <rte_byteorder.h>
#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_vect.h>

#include "acl_priv.h"
#include "pa_err.h"

RTE_ACL_RULE_DEF(acl_rule4, F4_NUM);
RTE_ACL_RULE_DEF(acl_rule6, F6_NUM);

static struct rte_acl_field_def defs4[F4_NUM];
static struct rte_acl_field_def defs6[F6_NUM];

void
acl_defs_init(void)
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

/* rte_acl context names are global to the process (rte_acl_create() of a
 * taken name hands back that context): number them across instances. */
static unsigned int ctx_seq;

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

static bool
ports_constrained(const struct pa_config_acl_rule *r)
{
	return !(r->sport.lo == 0 && r->sport.hi == UINT16_MAX &&
		r->dport.lo == 0 && r->dport.hi == UINT16_MAX);
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

int
acl_rank_cmp(const void *a, const void *b)
{
	const struct acl_rank_item *x = a, *y = b;

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
		pa_seterr(err, err_len, "cannot create an ACL context: %s",
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
	pa_seterr(err, err_len, "cannot build the IPv%d ACL of %u entries: %s",
		family == AF_INET ? 4 : 6, n, rte_strerror(-ret));
	rte_acl_free(ctx);
	rte_errno = -ret;
	return NULL;
}

void
acl_set_free(struct acl_set *set)
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

void
acl_table_free(struct acl_table *t)
{
	unsigned int k;

	if (t == NULL)
		return;
	for (k = 0; k < ACL_TIERS; k++) {
		acl_set_free(&t->v4[k]);
		acl_set_free(&t->v6[k]);
	}
	rte_free(t->slots);
	rte_free(t);
}

/*
 * Build the contexts of one tier from the rules whose tier is @p tier
 * (every rule when @p tiers is NULL).
 */
int
acl_build_tier(struct pa_acl *acl, const struct pa_config_acl_rule *rules,
		const uint32_t *slots, const uint8_t *tiers, uint8_t tier,
		unsigned int n, struct acl_set *s4, struct acl_set *s6,
		char *err, size_t err_len)
{
	struct acl_rank_item *rank;
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
		pa_seterr(err, err_len, "out of memory building the ACL");
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++)
		if (tiers == NULL || (tier == 0 ? tiers[i] == 0 : tiers[i] != 0))
			rank[m++] = (struct acl_rank_item){ rules[i].priority,
				rules[i].id, i };
	qsort(rank, m, sizeof(*rank), acl_rank_cmp);
	for (i = 0; i < m; i++) {
		const struct pa_config_acl_rule *r = &rules[rank[i].index];
		uint32_t ud = slots[rank[i].index] + 1;
		uint32_t prio = m - i;	/* rank 0 (best) gets the highest */
		int fam = acl_rule_family(r);

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
		acl_set_free(s4);
		acl_set_free(s6);
	}
out:
	free(rank);
	free(e4);
	free(e6);
	return ret;
}

enum rte_acl_classify_alg
acl_best_algorithm(int socket)
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
