/* SPDX-License-Identifier: BSD-3-Clause */
/* Helpers shared by the libFuzzer targets (see fuzz_common.h). */
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_memory.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#include <sanitizer/lsan_interface.h>
#define FUZZ_LSAN 1
#endif
#endif

#include "fuzz_common.h"

/* UBSan findings are crashes, also when a crash file is replayed alone. */
const char *__ubsan_default_options(void);

const char *
__ubsan_default_options(void)
{
	return "halt_on_error=1:print_stacktrace=1";
}

/* --no-shconf still makes an (empty) runtime directory: remove it. */
static void
remove_runtime_dir(void)
{
	rmdir(rte_eal_get_runtime_dir());
}

#ifdef FUZZ_LSAN
/*
 * Objects in rte_malloc memory (an ACL, an LB) hold pointers to malloc()ed
 * ones. LeakSanitizer does not scan EAL memory unless told to: it would
 * call those blocks leaked while their owner lives.
 */
static int
lsan_add_memseg_list(const struct rte_memseg_list *msl, void *arg)
{
	if (msl->base_va != NULL && msl->len > 0)
		__lsan_register_root_region(msl->base_va, msl->len);
	return 0;
}
#endif

void
fuzz_eal_init(const char *name)
{
	char prefix[64], lcore[16];
	char *argv[] = { (char *)(uintptr_t)name, "--no-huge", "--no-shconf",
		"--no-pci", "--no-telemetry", "-m", "128",
		"--log-level=*:error", prefix, "-l", lcore, NULL };
	cpu_set_t cpus;
	int cpu = 0;

	if (sched_getaffinity(0, sizeof(cpus), &cpus) != 0)
		CPU_ZERO(&cpus);
	while (cpu < CPU_SETSIZE - 1 && CPU_COUNT(&cpus) > 0 &&
			!CPU_ISSET(cpu, &cpus))
		cpu++;
	snprintf(prefix, sizeof(prefix), "--file-prefix=%s_%ld", name,
		(long)getpid());
	snprintf(lcore, sizeof(lcore), "%d", cpu);
	if (rte_eal_init((int)RTE_DIM(argv) - 1, argv) < 0) {
		fprintf(stderr, "fuzz: %s: cannot start the EAL: %s\n", name,
			rte_strerror(rte_errno));
		abort();
	}
	atexit(remove_runtime_dir);
#ifdef FUZZ_LSAN
	rte_memseg_list_walk(lsan_add_memseg_list, NULL);
#endif
	if (CPU_COUNT(&cpus) > 0)
		pthread_setaffinity_np(pthread_self(), sizeof(cpus), &cpus);
}

void
fuzz_fail(const char *target, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "fuzz: %s: ", target);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

char *
fuzz_strndup(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (s == NULL)
		abort();
	if (size > 0)
		memcpy(s, data, size);
	s[size] = '\0';
	return s;
}
