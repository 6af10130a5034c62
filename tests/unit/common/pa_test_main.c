/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The suites' main() without an EAL (pa_test_main.h). Links check alone:
 * a suite that tests a library without DPDK stays without it.
 */

#include <stdio.h>
#include <stdlib.h>

#include <check.h>

#include "pa_test_main.h"

int
pa_test_main_run(const struct pa_test_main *t, int nofork)
{
	SRunner *sr;
	unsigned int i;
	int failed;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (t->suites == NULL || t->suites[0] == NULL) {
		fprintf(stderr, "%s: no suite\n", t->name);
		return EXIT_FAILURE;
	}
	if (t->setup != NULL && t->setup() != 0) {
		fprintf(stderr, "%s: set-up failed\n", t->name);
		return EXIT_FAILURE;
	}
	sr = srunner_create(t->suites[0]());
	for (i = 1; t->suites[i] != NULL; i++)
		srunner_add_suite(sr, t->suites[i]());
	if (nofork)
		srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	if (t->teardown != NULL)
		t->teardown();
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

int
pa_test_main(const struct pa_test_main *t)
{
	return pa_test_main_run(t, 0);
}
