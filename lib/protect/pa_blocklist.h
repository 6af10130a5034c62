/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef PA_BLOCKLIST_H
#define PA_BLOCKLIST_H

/**
 * @file
 * The source blocklist: up to PA_BLOCKLIST_MAX IPv4 and IPv6 prefixes;
 * a packet whose source address lies in one of them is dropped by the
 * classify stage before the ACL (drop reason "blocklist").
 *
 * Structure (a membership test: no next hop, so neither rte_lpm nor
 * rte_lpm6, whose tbl8 groups cost 1 KB per distinct /24 or /64; see
 * docs/performance.md for the measured comparison):
 * - IPv4: one 24-byte word per 64 /24s (2^18 words, 6 MiB): a bit per /24
 *   fully covered by a prefix of length <= 24, a bit per /24 holding
 *   longer prefixes, and the rank of the latter; each such /24 has a
 *   256-bit map of its hosts (32 bytes), found by that rank. A lookup is
 *   one word and at most one 32-byte map: no hash, no loop.
 * - IPv6: a filter of 2^24 bits over the top 24 address bits (a bit set
 *   where some prefix may match), then one open-addressing hash table per
 *   prefix length present, probed only when the filter says so.
 *
 * Prefixes are canonical (host bits clear; "10.0.0.1/24" is refused, as
 * the ACL does: a typo that would block a whole /24 must not pass
 * silently). Adding a prefix already present, or deleting one that is
 * not, changes nothing (idempotent, like a route table sync).
 *
 * Updates: the control side keeps the set sorted as a base (what the
 * base table was built from) and a delta: the prefixes added since (not
 * in the base) and those deleted (in the base). A replace builds a new
 * base table off the data path. An add or delete only builds a new small
 * delta table (blocklist_priv.h: the exact host map of every /24 the
 * changed IPv4 prefixes touch; the added and deleted IPv6 prefixes by
 * length), consulted with the base: milliseconds on a 1M set. Either way
 * the new view (base table, delta table) is published with one pointer
 * store; the call waits for RCU quiescence, frees what the old view alone
 * held and answers. A background merger ("pa-bl-merge") folds the delta
 * into a new base once no change came for merge_delay_ms (or at the
 * latest ten times that): the live set copied under the lock, its table
 * built without it, then published with the delta of the changes made
 * meanwhile. A change past the delta's bounds (BL_DELTA_MAX prefixes, or
 * more /24s than BL_DELTA_OVR4_MAX: a short IPv4 prefix) rebuilds the
 * base at once. A change that fails (bad prefix, over the limit, no
 * memory) leaves the live set untouched.
 *
 * Threads: the pa_blocklist_* control functions serialise on a lock (the
 * RPC thread, start-up, telemetry readers, the merger, which holds it only
 * to copy the set and to publish); pa_blocklist_filter() runs on the
 * data-path lcores, lock-free.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "pa_net.h"

struct rte_mbuf;
struct rte_rcu_qsbr;

/** Most prefixes in the set (IPv4 and IPv6 together). */
#define PA_BLOCKLIST_MAX	1000000u

/* ------------------------------------------------------------------ */
/* Prefix sets (control side; no DPDK: unit-testable on their own).    */
/* ------------------------------------------------------------------ */

/** An IPv6 prefix of a set: address (host order halves), length. */
struct pa_bl_v6 {
	uint64_t hi;
	uint64_t lo;
	uint8_t len;
};

/** A set of prefixes: sorted and without duplicates once normalised. */
struct pa_bl_set {
	uint64_t *v4;		/**< (address << 8) | length, host order */
	uint32_t n4, cap4;
	struct pa_bl_v6 *v6;
	uint32_t n6, cap6;
};

/** Free what @p s holds and empty it. */
void pa_bl_set_free(struct pa_bl_set *s);

/** Number of prefixes in @p s. */
static inline uint32_t
pa_bl_set_count(const struct pa_bl_set *s)
{
	return s->n4 + s->n6;
}

/** Append one prefix (not yet sorted). -ENOMEM. */
int pa_bl_set_push(struct pa_bl_set *s, const struct pa_ip_prefix *p);

/** Sort and remove duplicates. */
void pa_bl_set_normalise(struct pa_bl_set *s);

/**
 * Parse one prefix as the blocklist accepts it ("ADDR/LEN" or "ADDR",
 * IPv4 or IPv6, host bits clear). @return 0 or -EINVAL, reason in @p why.
 */
int pa_bl_parse_prefix(const char *s, struct pa_ip_prefix *p, char *why,
		size_t why_len);

/**
 * Read a prefix file: one prefix a line; blanks around it, empty lines
 * and '#' comments (whole line or after the prefix) ignored. The result
 * is normalised.
 * @return 0; -EINVAL ("line N: ..." in @p err, nothing in @p out),
 * -E2BIG (more than @p max distinct prefixes), -ENOENT / -EACCES / ...
 * (cannot read), -ENOMEM.
 */
int pa_bl_read_file(const char *path, uint32_t max, struct pa_bl_set *out,
		char *err, size_t err_len);

/** @p a + @p b into @p out (all normalised). -ENOMEM. */
int pa_bl_set_union(const struct pa_bl_set *a, const struct pa_bl_set *b,
		struct pa_bl_set *out);
/** @p a - @p b into @p out (all normalised). -ENOMEM. */
int pa_bl_set_minus(const struct pa_bl_set *a, const struct pa_bl_set *b,
		struct pa_bl_set *out);

/** Index of the first IPv4 key (address << 8 | length) >= @p key. */
uint32_t pa_bl_set_lower4(const struct pa_bl_set *s, uint64_t key);
/** Is IPv4 key (address << 8 | length) @p key in @p s (normalised)? */
bool pa_bl_set_has4(const struct pa_bl_set *s, uint64_t key);
/** Is @p e (same address and length) in @p s (normalised)? */
bool pa_bl_set_has6(const struct pa_bl_set *s, const struct pa_bl_v6 *e);
/** The prefixes of @p s that are in @p by (@p keep_in) or not, into
 * @p out (normalised when @p s is). Binary searches in @p by: for a
 * small @p s and a large @p by. -ENOMEM. */
int pa_bl_set_filter(const struct pa_bl_set *s, const struct pa_bl_set *by,
		bool keep_in, struct pa_bl_set *out);

/** Prefix @p i of @p s (v4 first, then v6) as a struct pa_ip_prefix. */
void pa_bl_set_get(const struct pa_bl_set *s, uint32_t i,
		struct pa_ip_prefix *p);

/* ------------------------------------------------------------------ */
/* Tables (what the data path reads; immutable once built).            */
/* ------------------------------------------------------------------ */

struct pa_bl_table;

/**
 * Build a table of @p s (normalised).
 * @return NULL with errno ENOMEM.
 */
struct pa_bl_table *pa_bl_table_build(const struct pa_bl_set *s);
void pa_bl_table_free(struct pa_bl_table *t);
/** Bytes the table holds. */
size_t pa_bl_table_memory(const struct pa_bl_table *t);
/** Is IPv4 @p addr (host order) in the table? */
bool pa_bl_table_lookup4(const struct pa_bl_table *t, uint32_t addr);
/** Is IPv6 @p a (16 bytes, network order) in the table? */
bool pa_bl_table_lookup6(const struct pa_bl_table *t, const uint8_t *a);

/* ------------------------------------------------------------------ */
/* The blocklist: live table, control-side set, counters.              */
/* ------------------------------------------------------------------ */

struct pa_blocklist;

struct pa_blocklist_opts {
	struct rte_rcu_qsbr *rcu;	/**< the data path's QSBR (NULL: none,
					 * tests) */
	unsigned int n_lcores;		/**< data-path lcores (hit counters) */
	uint32_t max_prefixes;		/**< 0: PA_BLOCKLIST_MAX */
	/** No background merge: the delta is merged only past its bounds
	 * or by pa_blocklist_merge() (tests). */
	bool no_merger;
	/** The merger's wait after the last change (0: the default,
	 * PA_BLOCKLIST_MERGE_DELAY_MS). */
	uint32_t merge_delay_ms;
};

/** How long the delta waits for more changes before it is merged. */
#define PA_BLOCKLIST_MERGE_DELAY_MS	200u

/** An empty blocklist. NULL with errno ENOMEM / EINVAL. */
struct pa_blocklist *pa_blocklist_create(const struct pa_blocklist_opts *o);
/** Frees all, the background merger stopped first (see below). */
void pa_blocklist_destroy(struct pa_blocklist *bl);

/**
 * Stop the background merger (waits for a merge in progress; the delta
 * stays as it is, still exact). Call it before the RCU variable of
 * pa_blocklist_opts goes away (the pipeline's, at shutdown): a merge
 * publishes through it. Changes after it rebuild the whole table past
 * the delta's bounds only. NULL ignored.
 */
void pa_blocklist_stop_merger(struct pa_blocklist *bl);

/* Control plane: 0 or -errno, reason in err; on error nothing changed.
 * Each answers once the new table is live. */

/** Replace the whole set with @p s (normalised; taken over, emptied,
 * also on error). -E2BIG over the limit. */
int pa_blocklist_replace(struct pa_blocklist *bl, struct pa_bl_set *s,
		char *err, size_t err_len);
/** Replace the whole set with the prefixes of file @p path. */
int pa_blocklist_replace_file(struct pa_blocklist *bl, const char *path,
		char *err, size_t err_len);
/** Add the prefixes of @p s (normalised). -E2BIG when the total would
 * pass the limit. */
int pa_blocklist_add(struct pa_blocklist *bl, const struct pa_bl_set *s,
		char *err, size_t err_len);
/** Delete the prefixes of @p s (normalised); absent ones are ignored. */
int pa_blocklist_delete(struct pa_blocklist *bl, const struct pa_bl_set *s,
		char *err, size_t err_len);

/** The blocklist's state. */
struct pa_blocklist_info {
	uint32_t prefixes;		/**< in the live set */
	uint32_t prefixes4, prefixes6;
	uint32_t max_prefixes;		/**< the limit */
	uint64_t hits;			/**< packets dropped, all lcores */
	uint64_t memory_bytes;		/**< the live table (data path) */
	uint64_t set_bytes;		/**< the control-side prefix set */
	uint64_t version;		/**< bumped by every change */
	double build_ms;		/**< last change: table build */
	double update_ms;		/**< last change: until live */
	uint32_t delta_added;		/**< live, not in the base table */
	uint32_t delta_deleted;		/**< in the base table, not live */
	uint64_t delta_bytes;		/**< the delta's tables (in
					 * memory_bytes) */
	uint64_t merges;		/**< delta merged into a new base */
	double merge_ms;		/**< the last merge, copy to publish */
};

void pa_blocklist_info(struct pa_blocklist *bl, struct pa_blocklist_info *i);

/** blocklist_get's result: prefixes, hits, memory_bytes, ... and a
 * "sample" of the first @p limit prefixes. NULL on ENOMEM. */
json_t *pa_blocklist_json(struct pa_blocklist *bl, uint32_t limit);

/** Is @p a in the live set? (trace_packet; control thread.) */
bool pa_blocklist_trace(struct pa_blocklist *bl, const struct pa_ip_addr *a);

/**
 * Merge the delta into a new base now (what the background merger does
 * after a change; tests). Returns once it is live. 0 or -ENOMEM.
 */
int pa_blocklist_merge(struct pa_blocklist *bl);

/** A copy of the live set (for offload), normalised. -ENOMEM. */
int pa_blocklist_export(struct pa_blocklist *bl, struct pa_bl_set *out);

/* Data path. */

/** Most packets pa_blocklist_filter() takes at once (the pipeline's
 * largest burst). */
#define PA_BLOCKLIST_BURST_MAX	256

/**
 * Look up the sources of a burst on lcore @p lidx (0..n_lcores-1):
 * @p hit[i] = 1 where packet i's source is blocklisted (0 for non-IP
 * packets), hits counted. Packets need parsed metadata (pa_pkt_meta()).
 * At most PA_BLOCKLIST_BURST_MAX packets (more: none looked up).
 * @return the number of hits.
 */
uint16_t pa_blocklist_filter(struct pa_blocklist *bl, unsigned int lidx,
		struct rte_mbuf **pkts, uint16_t n, uint8_t *hit);

/**
 * What the data path reads of a struct pa_blocklist without a call: the
 * first member of the struct (lib/protect keeps it; not to be written
 * elsewhere).
 */
struct pa_blocklist_dp {
	/** the live set holds a prefix: stored with each publication,
	 * before the lcores are waited for (like the table itself) */
	bool any;
};

/** true when the live set is empty (the classify stage skips the
 * lookup): one load, inline. */
static inline bool
pa_blocklist_empty(const struct pa_blocklist *bl)
{
	return !__atomic_load_n(&((const struct pa_blocklist_dp *)
		(const void *)bl)->any, __ATOMIC_ACQUIRE);
}

/** The RPC context of the blocklist_* methods (subsystem "blocklist"). */
struct pa_blocklist_rpc_ctx {
	struct pa_blocklist *bl;
};

#endif /* PA_BLOCKLIST_H */
