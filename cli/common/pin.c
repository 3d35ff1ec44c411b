/* pin.c - PoCL's CPU worker threads, one to a CPU
 *
 * PoCL's CPU device (pthread) leaves its worker threads to the scheduler
 * unless POCL_AFFINITY is 1, when worker i runs on CPU i only. Unpinned,
 * two workers can share one CPU for much of a kernel, which slows tensors
 * of 8 MiB and more (docs/notes/TUNING.md, "Pinned PoCL threads"); pinned, a
 * worker wakes a few microseconds later, which tensors of 1 MiB and less feel.
 * PoCL reads the variable once, when its device starts, so the command sets it
 * first thing, and only where worker i may run on CPU i: this process may run
 * on every online CPU, numbered from 0, and no thread count asked of PoCL is
 * larger. The library leaves the environment alone.
 */
#define _GNU_SOURCE
#include "cli.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static char state[160];

#ifdef __linux__
/* Whether PoCL's thread count (POCL_MAX_PTHREAD_COUNT,
 * POCL_CPU_MAX_CU_COUNT) stays within online CPUs where set. */
static int threads_fit(const char *name, long online) {
  const char *v = getenv(name);
  char *end;
  if (!v) return 1;
  long n = strtol(v, &end, 10);
  return *v && !*end && n >= 1 && n <= online;
}
#endif

void cli_pin_pocl(void) {
  const char *set = getenv("POCL_AFFINITY");
  if (set) {
    snprintf(state, sizeof state,
             "as POCL_AFFINITY=%.40s, set before the command, says", set);
    return;
  }
#ifdef __linux__
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  cpu_set_t allowed;
  int every = online >= 1 && online <= CPU_SETSIZE &&
              !sched_getaffinity(0, sizeof allowed, &allowed);
  for (long i = 0; every && i < online; i++)
    every = CPU_ISSET((int)i, &allowed);
  if (!every || !threads_fit("POCL_MAX_PTHREAD_COUNT", online) ||
      !threads_fit("POCL_CPU_MAX_CU_COUNT", online)) {
    snprintf(state, sizeof state,
             "not pinned (this process may not run on every CPU, or PoCL "
             "was asked for more threads than CPUs)");
    return;
  }
  setenv("POCL_AFFINITY", "1", 0);
  snprintf(state, sizeof state,
           "pinned, worker i to CPU i (POCL_AFFINITY=1; set it to 0 to "
           "leave them to the scheduler)");
#else
  snprintf(state, sizeof state, "not pinned (POCL_AFFINITY is Linux's)");
#endif
}

const char *cli_pin_state(void) { return state; }
