/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef PA_CAPTURE_H
#define PA_CAPTURE_H

/**
 * @file
 * Capture of dropped packets to pcap files (docs/capture.md).
 *
 * One mechanism serves the replay's --replay-drops file and the
 * capture_start / capture_stop RPCs:
 *
 * - The data path (pa_capture_inline.h) reads a mask of the drop reasons
 *   being captured. A dropped packet whose reason is in the mask is tagged
 *   with its reason and the time (struct pa_capture_mark) and put on a multi-producer
 *   ring instead of being freed; when the ring is full it is freed and
 *   counted as lost (per lcore, per reason) or, in replay mode, waited
 *   for. No lock, no syscall, no allocation.
 * - The control side drains the ring (pa_capture_poll(), the daemon's
 *   main thread), writes each packet with libpcap to every open sink
 *   that wants its reason, and frees it.
 *
 * Sinks: the replay's drops file (every reason, unbounded, opened with
 * pa_capture_open_drops()) and one RPC capture at a time
 * (pa_capture_start()): a new file in the capture directory, for one
 * reason or all, bounded in packets and in file size; it stops by itself
 * when a bound is reached.
 *
 * Thread safety: pa_capture_start(), _stop(), _get() (RPC thread) and
 * pa_capture_poll() (main thread) may run concurrently; they serialise
 * on a mutex of the control plane. pa_capture_create() and
 * pa_capture_destroy() run alone.
 */

#include <stdbool.h>
#include <stdint.h>
#include <limits.h>

#include <rte_rcu_qsbr.h>
#include <rte_ring.h>

#include <jansson.h>

#include "pa_stats.h"

/** Data-path lcores the loss counters have room for (lcore index,
 * 0 .. n - 1, as the pipeline numbers its lcores). */
#define PA_CAPTURE_MAX_LCORES		64
/** The loss counters of the control side (lib/neigh's handled frames),
 * after the data-path lcores'. */
#define PA_CAPTURE_CTRL_SLOT		PA_CAPTURE_MAX_LCORES

/** Every drop reason. */
#define PA_CAPTURE_ALL_REASONS		((1u << PA_DROP_MAX) - 1)
_Static_assert(PA_DROP_MAX < 32,
		"capture filters drop reasons in a 32-bit mask");

/** Bounds of an RPC capture: defaults and limits. */
#define PA_CAPTURE_DEFAULT_MAX_PACKETS	10000ull
#define PA_CAPTURE_LIMIT_MAX_PACKETS	10000000ull
#define PA_CAPTURE_DEFAULT_MAX_BYTES	(64ull << 20)
#define PA_CAPTURE_MIN_MAX_BYTES	1024ull
#define PA_CAPTURE_LIMIT_MAX_BYTES	(1ull << 30)
#define PA_CAPTURE_DEFAULT_SNAPLEN	65535u
#define PA_CAPTURE_MIN_SNAPLEN		64u
#define PA_CAPTURE_MAX_SNAPLEN		65535u
/** Longest file name of an RPC capture. */
#define PA_CAPTURE_NAME_MAX		64u

/** Default capture directory of the daemon (--capture-dir). */
#define PA_CAPTURE_DEFAULT_DIR		"/var/lib/pktaccel/capture"

/** Bytes of a pcap file header and of a record header. */
#define PA_CAPTURE_FILE_HDR		24u
#define PA_CAPTURE_REC_HDR		16u

/**
 * What a packet on the capture ring carries. It is written over the
 * packet's metadata (lib/pkt's mbuf dynamic field), which nothing reads
 * once the packet is dropped: no mbuf field of its own, the dynamic
 * field area being small (36 bytes, shared with the PMDs).
 */
struct pa_capture_mark {
	uint32_t tsc_lo;		/**< when it was dropped (rte_rdtsc) */
	uint32_t tsc_hi;
	uint8_t reason;			/**< enum pa_drop_reason */
};

/** Loss counters of one data-path lcore; written by that lcore only. */
struct pa_capture_lcore {
	uint64_t lost[PA_DROP_MAX];	/**< ring full: freed, not captured */
} __rte_cache_aligned;

/**
 * What the data path reads. Owned by struct pa_capture; lives until
 * pa_capture_destroy().
 */
struct pa_capture_tap {
	uint32_t mask;			/**< reasons captured now (1 << reason);
					 * atomic, written by the control side */
	uint8_t wait;			/**< ring full: wait for room (replay)
					 * rather than lose; atomic */
	int mark_offset;		/**< where the mark is (lib/pkt's dynfield) */
	struct rte_ring *ring;		/**< dropped mbufs to write (MP/SC) */
	struct pa_capture_lcore lcore[PA_CAPTURE_MAX_LCORES + 1];
};

struct pa_capture_opts {
	/** Directory of RPC captures; NULL: PA_CAPTURE_DEFAULT_DIR. Created
	 * (mode 0750, parents too) at the first capture_start. */
	const char *dir;
	unsigned int ring_size;		/**< slots of the ring (power of 2) */
	int socket;			/**< NUMA socket of the ring */
	bool wait;			/**< replay: the data path never loses */
	bool set_group;			/**< give files and directory to gid */
	unsigned int gid;
};

struct pa_capture;

/**
 * Make the ring and the tap. Nothing is captured until a sink opens.
 * Call after pa_pkt_init().
 * @return the capture, or NULL with the reason in @p err.
 */
struct pa_capture *pa_capture_create(const struct pa_capture_opts *o,
		char *err, size_t err_len);

/** What the data path reads (for struct pa_pipeline_opts). */
struct pa_capture_tap *pa_capture_tap(struct pa_capture *c);

/**
 * The RCU variable every data-path lcore reports to. When set,
 * pa_capture_stop() waits for quiescence after taking a reason out of the
 * mask, so that every packet dropped before the stop is written or
 * counted as lost, none after.
 */
void pa_capture_set_rcu(struct pa_capture *c, struct rte_rcu_qsbr *rcu);

/**
 * Open @p path (created or truncated, as the command line asks) for
 * every dropped packet: the replay's --replay-drops. No bounds.
 * @return 0, or -errno with the reason in @p err.
 */
int pa_capture_open_drops(struct pa_capture *c, const char *path, char *err,
		size_t err_len);

/** An RPC capture's request. */
struct pa_capture_params {
	uint32_t reasons;		/**< mask of 1 << enum pa_drop_reason, non-zero */
	char name[PA_CAPTURE_NAME_MAX + 1]; /**< file name in the directory */
	uint64_t max_packets;		/**< 1 .. PA_CAPTURE_LIMIT_MAX_PACKETS */
	uint64_t max_bytes;		/**< file size, PA_CAPTURE_MIN_MAX_BYTES .. _LIMIT_ */
	uint32_t snaplen;		/**< bytes kept of each packet */
};

/**
 * Check a file name for an RPC capture: 1 .. PA_CAPTURE_NAME_MAX
 * characters of [A-Za-z0-9._-], not starting with '.'. So a name is
 * always one new entry of the capture directory, never a path.
 * @return 0, or -EINVAL with the reason in @p why.
 */
int pa_capture_check_name(const char *name, char *why, size_t why_len);

/**
 * Reason mask of a name: a drop reason ("acl", ...) or "any".
 * @return 0, or -EINVAL.
 */
int pa_capture_parse_reason(const char *name, uint32_t *mask);

/**
 * Start the RPC capture: create the file (O_EXCL: never an existing
 * one; mode 0640) in the capture directory, write its header, then put
 * its reasons in the mask.
 * @return 0 (its id in @p id), or -errno with the reason in @p err:
 *         -EBUSY a capture is running; -EINVAL bad parameters; -EEXIST
 *         the file exists; -ENOSPC less room in the directory's file
 *         system than max_bytes; another -errno when the directory or
 *         the file cannot be made.
 */
int pa_capture_start(struct pa_capture *c, const struct pa_capture_params *p,
		uint64_t *id, char *err, size_t err_len);

/** State of the RPC capture slot. */
enum pa_capture_state {
	PA_CAPTURE_IDLE = 0,		/**< none since start-up */
	PA_CAPTURE_RUNNING,
	PA_CAPTURE_STOPPED,		/**< the last one, ended */
};

/** Why a capture ended. */
enum pa_capture_end {
	PA_CAPTURE_END_NONE = 0,	/**< still running */
	PA_CAPTURE_END_RPC,		/**< capture_stop */
	PA_CAPTURE_END_MAX_PACKETS,	/**< max_packets written */
	PA_CAPTURE_END_MAX_BYTES,	/**< the next packet would pass max_bytes */
	PA_CAPTURE_END_ERROR,		/**< a write failed (see error) */
	PA_CAPTURE_END_SHUTDOWN,	/**< the daemon stopped */
};

/** The RPC capture, as capture_get reports it. */
struct pa_capture_status {
	enum pa_capture_state state;
	enum pa_capture_end ended_by;
	uint64_t id;			/**< 1, 2, ... since start-up */
	uint32_t reasons;
	char path[PATH_MAX];		/**< the file, absolute when the dir is */
	uint64_t max_packets, max_bytes;
	uint32_t snaplen;
	uint64_t packets;		/**< records written */
	uint64_t bytes;			/**< file size (header included) */
	uint64_t lost;			/**< wanted, but the ring was full */
	double duration_s;		/**< since start (until the end) */
	char error[128];		/**< PA_CAPTURE_END_ERROR: why */
};

/**
 * Stop the RPC capture: take its reasons out of the mask, wait until no
 * lcore can still be enqueueing for it, write what is queued, close the
 * file. @p st (may be NULL) gets its final status.
 * @return 0, or -ENOENT when none is running.
 */
int pa_capture_stop(struct pa_capture *c, struct pa_capture_status *st);

/** The RPC capture slot now (running: counts so far). */
void pa_capture_get(struct pa_capture *c, struct pa_capture_status *st);

/**
 * Drain the ring: write each queued packet to the sinks that want it
 * (a capture whose bound is reached ends there), free it. Call often
 * from one control thread (the daemon: every 200 us).
 * @return packets taken off the ring.
 */
unsigned int pa_capture_poll(struct pa_capture *c);

/** Is some reason being captured now (an RPC capture or the replay's
 * drops file)? NULL: false. Any thread. */
bool pa_capture_active(const struct pa_capture *c);

/**
 * The daemon is stopping: the data path no longer waits for room in the
 * ring (a lost packet is counted). Call before stopping the lcores.
 */
void pa_capture_quiesce(struct pa_capture *c);

/**
 * Close every sink (a running capture ends with "shutdown"), free what
 * is queued, free everything. The data path must have stopped. NULL ok.
 */
void pa_capture_destroy(struct pa_capture *c);

/** Name of an end ("rpc", "max_packets", ...); NULL for NONE. */
const char *pa_capture_end_name(enum pa_capture_end e);

/**
 * The status as JSON: {"state", "id", "reason", "path", "max_packets",
 * "max_bytes", "snaplen", "packets", "bytes", "lost", "duration_s",
 * "stopped_by", "error"?} (only "state" when idle). New reference.
 */
json_t *pa_capture_status_json(const struct pa_capture_status *st);

/** The capture directory (as given, or the default). */
const char *pa_capture_dir(const struct pa_capture *c);

/* The capture_* methods are the RPC subsystem "capture": bind the
 * capture with pa_rpc_bind("capture", c). */

extern int pa_capture_logtype;

#include "pa_capture_inline.h"

#endif /* PA_CAPTURE_H */
