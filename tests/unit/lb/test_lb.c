/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of lib/lb: the Maglev table against a reference written here
 * from the NSDI'16 paper (and its balance, disruption and build time),
 * then the load balancer's data path without a pipeline: frames built
 * from bytes, parsed by lib/pkt, balanced by pa_lb_process() and checked
 * byte for byte (outer headers, rewrites, checksums against a full
 * recomputation), the sticky flow table (backend changes, aging, a full
 * table, fragments), the schedulers, the counters and the control
 * functions' errors, export and trace, protection and health.
 *
 * One check executable, one source per concern with its test case:
 *   test_lb_maglev.c      maglev       the table against the reference
 *   test_lb_modes.c       forwarding   ipip, nat (and its replies), dsr
 *   test_lb_flows.c       flows        the flow table, aging, fragments
 *   test_lb_protection.c  protect      SYN-only flows, source limits,
 *                                      max_flows
 *   test_lb_icmp.c        icmp         echo, quoted errors, path MTU, MSS
 *   test_lb_sched.c       schedulers   rr, wrr, lc
 *   test_lb_control.c     control      errors, export, trace, poll
 *   test_lb_health.c      health       health, panic, agent, grace
 *   test_lb_fnat.c        fnat         full NAT: rewrites, replies, the pool
 *   test_lb_history.c     history      recovery across table changes
 * and the shared fixture in lb_fixture.h / lb_fixture.c. This file puts
 * the test cases in one suite, "lb", in that order, and starts the EAL.
 */

#include "lb_fixture.h"
#include "pa_test_main.h"

static Suite *
lb_suite(void)
{
	Suite *s = suite_create("lb");

	suite_add_tcase(s, lb_tcase_maglev());
	suite_add_tcase(s, lb_tcase_modes());
	suite_add_tcase(s, lb_tcase_flows());
	suite_add_tcase(s, lb_tcase_protection());
	suite_add_tcase(s, lb_tcase_icmp());
	suite_add_tcase(s, lb_tcase_sched());
	suite_add_tcase(s, lb_tcase_control());
	suite_add_tcase(s, lb_tcase_health());
	suite_add_tcase(s, lb_tcase_fnat());
	suite_add_tcase(s, lb_tcase_history());
	return s;
}

static int
run_setup(void)
{
	hz = rte_get_tsc_hz();
	return 0;
}

int
main(void)
{
	static const char *const eal_args[] = { "-m", "256",
		"--log-level=pa.lb:warning", "-l", "0", NULL };
	static Suite *(*const suites[])(void) = { lb_suite, NULL };
	const struct pa_test_main t = {
		.name = "test_lb",
		.suites = suites,
		.eal_args = eal_args,
		.mbufs = 1023,
		.pool = &pool,
		.pkt_init = true,
		.setup = run_setup,
		.teardown = teardown_lb,
	};

	return pa_test_main_eal(&t);
}
