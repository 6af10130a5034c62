/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The main() of a unit suite: one check runner over the suite's Suites,
 * with or without a DPDK EAL. Each test binary describes itself in a
 * struct pa_test_main and returns pa_test_main() or pa_test_main_eal()
 * from its main().
 *
 * What scripts/test.sh and meson rely on, kept here for every binary:
 * - one runner, so one summary line "NN%: Checks: N, Failures: F,
 *   Errors: E" (verbosity from CK_VERBOSITY, check's CK_ENV);
 * - exit status EXIT_SUCCESS only when no test failed, EXIT_FAILURE
 *   when one did or when the set-up did not get as far as the run;
 * - check's own selection by environment: CK_RUN_SUITE, CK_RUN_CASE,
 *   CK_INCLUDE_TAGS, CK_EXCLUDE_TAGS, CK_FORK (without an EAL).
 * stdout is line-buffered, so that the lines a test prints and check's
 * stay in order with the libraries' logs on stderr.
 */

#ifndef PA_TEST_MAIN_H
#define PA_TEST_MAIN_H

#include <stdbool.h>

#include <check.h>

struct rte_mempool;

struct pa_test_main {
	/** The program's name: messages, and the EAL's argv[0] and mbuf
	 *  pool name. */
	const char *name;
	/** The suites, NULL-terminated, run in this order by one runner. */
	Suite *(*const *suites)(void);
	/**
	 * pa_test_main_eal() only: EAL arguments after those every suite
	 * gets (--no-huge --no-shconf --no-pci --no-telemetry
	 * --log-level=lib.eal:notice), NULL-terminated: memory, lcores,
	 * log levels, vdevs. NULL: none more.
	 */
	const char *const *eal_args;
	/** pa_test_main_eal() only: mbufs in a pool of default-sized
	 *  buffers (no cache, any socket) made after the EAL and freed
	 *  before it stops, stored in *pool; 0: no pool. */
	unsigned int mbufs;
	struct rte_mempool **pool;
	/** pa_test_main_eal() only: register the packet metadata
	 *  (pa_pkt_init()) before the set-up, for suites that parse or
	 *  build packets with lib/pkt's metadata. */
	bool pkt_init;
	/** Before the run (after the EAL and the pool): 0, or the run does
	 *  not happen and the binary fails. May be NULL. */
	int (*setup)(void);
	/** After the run (before the pool is freed and the EAL stops).
	 *  May be NULL. */
	void (*teardown)(void);
};

/**
 * Run @p t's suites without an EAL (check's default fork mode).
 * @return the exit status for main().
 */
int pa_test_main(const struct pa_test_main *t);

/**
 * Start an EAL (--no-huge --no-shconf --no-pci --no-telemetry plus
 * @p t->eal_args), make the mbuf pool, run @p t's suites without fork
 * (one EAL for the whole run: CK_NOFORK whatever CK_FORK says), stop
 * the EAL. In pa_test_eal_dep (it links DPDK); pa_test_main() does not.
 * @return the exit status for main().
 */
int pa_test_main_eal(const struct pa_test_main *t);

/** pa_test_main() and pa_test_main_eal()'s run: set-up, the runner
 *  (@p nofork: CK_NOFORK), tear-down. @return the exit status. */
int pa_test_main_run(const struct pa_test_main *t, int nofork);

#endif /* PA_TEST_MAIN_H */
