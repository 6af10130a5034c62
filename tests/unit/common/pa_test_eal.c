/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The suites' main() with an EAL (pa_test_main.h): no hugepages, no
 * shared runtime directory (several suites run side by side), no PCI.
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <check.h>

#include <rte_common.h>
#include <rte_eal.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "pa_pkt.h"
#include "pa_pkt.h"
#include "pa_test_main.h"

/* every suite's; the suite's own follow */
static const char *const eal_base[] = {
	"--no-huge", "--no-shconf", "--no-pci", "--no-telemetry",
	"--log-level=lib.eal:notice",
};

#define EAL_ARGS_MAX	64

int
pa_test_main_eal(const struct pa_test_main *t)
{
	char *argv[EAL_ARGS_MAX + 1];
	struct rte_mempool *pool = NULL;
	unsigned int i;
	int argc = 0, ret;

	argv[argc++] = (char *)(uintptr_t)t->name;
	for (i = 0; i < RTE_DIM(eal_base); i++)
		argv[argc++] = (char *)(uintptr_t)eal_base[i];
	for (i = 0; t->eal_args != NULL && t->eal_args[i] != NULL; i++) {
		if (argc == EAL_ARGS_MAX) {
			fprintf(stderr, "%s: more than %u EAL arguments\n",
				t->name, EAL_ARGS_MAX);
			return EXIT_FAILURE;
		}
		argv[argc++] = (char *)(uintptr_t)t->eal_args[i];
	}
	argv[argc] = NULL;
	if (rte_eal_init(argc, argv) < 0) {
		fprintf(stderr, "%s: cannot start the EAL\n", t->name);
		return EXIT_FAILURE;
	}
	if (t->pkt_init && pa_pkt_init() != 0) {
		fprintf(stderr, "%s: pa_pkt_init failed\n", t->name);
		rte_eal_cleanup();
		return EXIT_FAILURE;
	}
	if (t->mbufs != 0) {
		pool = rte_pktmbuf_pool_create(t->name, t->mbufs, 0, 0,
			RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
		if (pool == NULL) {
			fprintf(stderr, "%s: no mbuf pool\n", t->name);
			rte_eal_cleanup();
			return EXIT_FAILURE;
		}
		if (t->pool != NULL)
			*t->pool = pool;
	}
	/* one EAL for the whole run: the tests must not fork */
	ret = pa_test_main_run(t, 1);
	if (pool != NULL) {
		if (t->pool != NULL)
			*t->pool = NULL;
		rte_mempool_free(pool);
	}
	rte_eal_cleanup();
	return ret;
}
