/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef PA_ACL_PRIV_H
#define PA_ACL_PRIV_H

/* Internal structures of lib/acl, shared by acl.c (life cycle and
 * reporting), acl_build.c (rte_acl contexts from rules), acl_update.c
 * (rule store, tiers, slots, the folder) and acl_dp.c (classify, mark,
 * police). */

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <rte_acl.h>
#include <rte_common.h>
#include <rte_log.h>
#include <rte_meter.h>
#include <rte_rcu_qsbr.h>

#include "pa_acl.h"

#define ACL_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, pa_acl_logtype, "pa.acl: " fmt "\n", ##__VA_ARGS__)

#define ACL_MIN_SLOTS		1024
#define ACL_DELTA_MAX		256	/* rules in the delta tier */

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
	/** this version's number in the flow caches (never 0, which marks
	 * an empty entry): a cached verdict of another version is stale */
	uint32_t epoch;
	struct acl_set v4[ACL_TIERS];
	struct acl_set v6[ACL_TIERS];
	enum pa_acl_action def;
	bool non_ip_drop;
	uint32_t n_dead;		/**< dead slots (their matches are void) */
	uint32_t n_slots;		/**< slots[] entries */
	struct acl_slot *slots;
	struct acl_store *store;
};

/* A table without rules: every IP packet takes the default (a set
 * with port-less contexts has the main ones too). */
static inline bool
acl_table_ruleless(const struct acl_table *t)
{
	return t->v4[0].n + t->v4[1].n + t->v6[0].n + t->v6[1].n == 0;
}

/*
 * The flow cache: each data-path lcore remembers the verdicts (the slot
 * a key matched, 0 for none) of the keys it classified lately, tagged
 * with the table's epoch, so that the packets of a known flow skip
 * rte_acl. The key is the whole rte_acl input (protocol, in_port,
 * ports_known, addresses, ports): the verdict is a function of it and
 * the version alone, and the actions (counters, meters, marks) are
 * applied per packet as before. A new version makes every entry stale.
 *
 * Set associative, a hash's top bits picking the set. IPv4: a set is one
 * cache line, three ways and the epoch they were filled in (a set of
 * another epoch is empty). IPv6: a set is two lines (128 bytes), three
 * ways of 40 bytes and the epoch, a verdict's bits in its key's spare
 * ones and a byte beside the epoch. A miss fills an empty or stale way;
 * a full set gives a way up only to one miss in ACL_FC_EVICT, in turn,
 * so that a set with more flows than ways keeps serving some of them
 * rather than thrashing. An lcore whose hit rate over ACL_FC_WINDOW
 * lookups falls under 1/ACL_FC_POOR (many more flows than entries)
 * leaves its cache alone for ACL_FC_PAUSE packets, then measures again;
 * each poor window in a row doubles the pause, up to ACL_FC_PAUSE_MAX (a
 * window's misses cost more than the pause saves).
 */
#define ACL_FC4_WAYS		3
#define ACL_FC6_WAYS		3
#define ACL_FC_EVICT		8
#define ACL_FC_WINDOW		65536
#define ACL_FC_POOR		4
#define ACL_FC_PAUSE		(1u << 20)
#define ACL_FC_PAUSE_MAX	(1u << 24)
/* k1's top bit: set in every filled IPv4 way (an empty one is 0) */
#define ACL_FC4_LIVE		(1ULL << 63)

struct acl_fc4_way {
	uint64_t k0;		/* src, dst as in the key */
	uint64_t k1;		/* sport, dport as in the key; head << 32;
				 * ACL_FC4_LIVE */
	uint32_t res;
} __rte_packed;

struct acl_fc4_set {
	uint32_t epoch;
	struct acl_fc4_way way[ACL_FC4_WAYS];
} __rte_cache_aligned;

/*
 * An IPv6 way's last key word: sport, dport | head << 32 (bits 32-48,
 * fc_head()), then ACL_FC6_LIVE (set in every filled way; an empty one
 * is 0) and the verdict's bits above its low byte; the low byte is the
 * set's res_lo byte for the way. A verdict over ACL_FC6_RES_MAX (a slot
 * past 4M rules) is not cached.
 */
#define ACL_FC6_LIVE		(1ULL << 49)
#define ACL_FC6_RES_SHIFT	50
#define ACL_FC6_KEY_MASK	((1ULL << ACL_FC6_RES_SHIFT) - 1)
#define ACL_FC6_RES_MAX		((1u << (64 - ACL_FC6_RES_SHIFT + 8)) - 1)

struct acl_fc6_set {
	uint32_t epoch;
	uint8_t res_lo[ACL_FC6_WAYS];
	uint8_t pad;
	uint64_t k[ACL_FC6_WAYS][5];	/* src, dst; the last word above */
} __rte_aligned(2 * RTE_CACHE_LINE_SIZE);

struct acl_fcache {
	struct acl_fc4_set *v4;		/* [sets] */
	struct acl_fc6_set *v6;		/* [sets] */
	uint32_t shift;			/* 64 - log2(sets): a hash's top
					 * bits pick the set */
	uint32_t win_lookups;		/* this window's */
	uint32_t win_hits;
	uint32_t pause_left;		/* packets still to classify without */
	uint32_t pause_next;		/* the next pause's (0: ACL_FC_PAUSE) */
	uint32_t evict;			/* misses into full sets */
} __rte_cache_aligned;

struct pa_acl {
	struct pa_acl_dp dp;			/* first: pa_acl_inline.h */
	struct acl_table *live;			/* data path reads this */
	struct acl_fcache *fc;			/* [n_lcores], NULL: none */
	uint32_t fc_entries;			/* per lcore and family */
	uint32_t fc_config;			/* acl.flow_cache as given */
	uint32_t epoch;				/* the last version's */
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
	struct pa_acl_hook hook;		/* told of rule set changes */
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

/* Evaluate @p expr with the control lock held (every control-plane call
 * is serialised with the folder). */
#define ACL_LOCKED(acl, expr) ({					\
	__typeof__(expr) _r;						\
	pthread_mutex_lock((pthread_mutex_t *)&(acl)->lock);		\
	_r = (expr);							\
	pthread_mutex_unlock((pthread_mutex_t *)&(acl)->lock);	\
	_r;								\
})

/* A rule's place in the rte_acl order, for sorting by rank. */
struct acl_rank_item {
	int32_t priority;
	uint32_t id;
	unsigned int index;
};

/* The family a rule is limited to by its prefixes: AF_INET, AF_INET6, or
 * 0 when both are "any". */
static inline int
acl_rule_family(const struct pa_config_acl_rule *r)
{
	if (r->src.addr.family != 0)
		return r->src.addr.family;
	return r->dst.addr.family;	/* 0: both */
}

/* acl_build.c: rte_acl contexts and shards */

/** Fill the rte_acl field definitions (once, before the first build). */
void acl_defs_init(void);
/** The fastest rte_acl classify algorithm this machine runs. */
enum rte_acl_classify_alg acl_best_algorithm(int socket);
/** qsort order of struct acl_rank_item: priority desc, then id asc. */
int acl_rank_cmp(const void *a, const void *b);
/**
 * Build the contexts of one tier from the rules whose tier is @p tier
 * (every rule when @p tiers is NULL) into @p s4 and @p s6.
 * @return 0, or -errno with the reason in @p err (nothing allocated).
 */
int acl_build_tier(struct pa_acl *acl, const struct pa_config_acl_rule *rules,
		const uint32_t *slots, const uint8_t *tiers, uint8_t tier,
		unsigned int n, struct acl_set *s4, struct acl_set *s6,
		char *err, size_t err_len);
/** Free the contexts of @p set and empty it. */
void acl_set_free(struct acl_set *set);
/** Free a version: its contexts and slots (not its store). */
void acl_table_free(struct acl_table *t);

/* acl_update.c: the rule store, tiers, slots, the folder */

struct acl_store *acl_store_new(uint32_t capacity, unsigned int n_lcores,
		int socket);
void acl_store_free(struct acl_store *s, unsigned int n_lcores);
/**
 * Replace the rule set with @p rules (n, any order; copied) and publish
 * it, a full build when @p full. Rules whose id stays keep their slot.
 */
int acl_apply(struct pa_acl *acl, const struct pa_config_acl_rule *rules,
		unsigned int n, enum pa_acl_action def, bool non_ip_drop,
		bool full, char *err, size_t err_len);
/** Start the background folder thread (a warning when it cannot). */
void acl_folder_start(struct pa_acl *acl);
/** Stop and join the folder, if it runs. */
void acl_folder_stop(struct pa_acl *acl);

#endif /* PA_ACL_PRIV_H */
