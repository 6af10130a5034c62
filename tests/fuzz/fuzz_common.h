/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef PA_FUZZ_COMMON_H
#define PA_FUZZ_COMMON_H

/**
 * @file
 * Helpers shared by the libFuzzer targets of tests/fuzz/.
 */

#include <stddef.h>
#include <stdint.h>

/**
 * Start a DPDK EAL for a fuzz target, once: no hugepages, no shared
 * config, no PCI, no telemetry, 128 MB, errors only, a file prefix unique
 * to this process, one lcore (the first CPU the process may run on). The
 * CPU affinity the process had is restored afterwards, so that the EAL
 * does not pin the fuzzer (or its -fork/-jobs children) to one CPU.
 * Aborts when the EAL cannot start: a fuzz target without it is useless.
 */
void fuzz_eal_init(const char *name);

/** Print "fuzz: <target>: <what>" and abort() (a finding). */
void fuzz_fail(const char *target, const char *fmt, ...)
	__attribute__((format(printf, 2, 3), noreturn));

/** @p data as a NUL-terminated string (malloc'd; embedded NULs kept). */
char *fuzz_strndup(const uint8_t *data, size_t size);

#endif /* PA_FUZZ_COMMON_H */
