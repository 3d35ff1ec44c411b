/* warm.c - a repack's missing kernels built by a process of their own
 *
 * A single repack runs the kernels relayout's cache holds, and the generic
 * ones where it lacks a shape's own; once its output is complete it starts
 * `relayout repack --warm` with the same input, rules and device, in a
 * session of its own at the lowest priority, and exits: the next run of the
 * same conversions finds every kernel. A lock file in the cache directory
 * lets one such process run at a time: it holds the lock from here, through
 * its exec, to its exit.
 */
#define _GNU_SOURCE /* O_CLOEXEC, pipe2 */
#include "repack.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#define LOCK_NAME "warm.lock"
#define LOCK_FD   3 /* where the child keeps the lock */

/* The child's side of the fork: detached, quiet, the lock at LOCK_FD, then
 * exec; on failure, errno goes up the pipe. Async-signal-safe calls only. */
static void child(int lock, int report, char **argv) {
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  int null = open("/dev/null", O_RDWR);
  if (setsid() >= 0 && setpriority(PRIO_PROCESS, 0, 19) == 0 && null >= 0 &&
      dup2(null, 0) == 0 && dup2(null, 1) == 1 && dup2(null, 2) == 2 &&
      (lock == LOCK_FD ? fcntl(lock, F_SETFD, 0) == 0
                       : dup2(lock, LOCK_FD) == LOCK_FD)) {
    for (int fd = LOCK_FD + 1; fd < 1024; fd++)
      if (fd != report) close(fd);
    execv("/proc/self/exe", argv);
  }
  int why = errno;
  if (write(report, &why, sizeof why) < 0) _exit(126);
  _exit(127);
}

/* argv for `relayout repack --warm IN ...` as o and device say (device
 * NULL: the default), malloc'd. */
static char **warm_argv(const rp_options *o, const char *in,
                        const char *device) {
  char **a = malloc(sizeof *a * (7 + 2 * (size_t)o->nrules));
  if (!a) return NULL;
  int n = 0;
  a[n++] = "relayout";
  a[n++] = "repack";
  a[n++] = "--warm";
  for (int i = 0; i < o->nrules; i++) {
    a[n++] = "--rule";
    a[n++] = (char *)o->rules[i].text;
  }
  if (o->restore) a[n++] = "--restore";
  if (device) {
    a[n++] = "--device";
    a[n++] = (char *)device;
  }
  a[n++] = (char *)in;
  a[n] = NULL;
  return a;
}

int rp_warm_spawn(const rp_options *o, const char *in, const char *device,
                  const char *cache_dir, char *why, size_t room) {
  char path[4200];
  snprintf(path, sizeof path, "%s/%s", cache_dir, LOCK_NAME);
  int lock = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (lock < 0) {
    snprintf(why, room, "%s: %s", path, strerror(errno));
    return -1;
  }
  if (flock(lock, LOCK_EX | LOCK_NB)) {
    snprintf(why, room, "%s",
             errno == EWOULDBLOCK ? "another relayout repack --warm is "
                                    "building into the cache"
                                  : strerror(errno));
    close(lock);
    return -1;
  }
  char **argv = warm_argv(o, in, device);
  int report[2] = {-1, -1};
  pid_t pid = -1;
  if (argv && !pipe2(report, O_CLOEXEC) && (pid = fork()) == 0)
    child(lock, report[1], argv);
  int err = argv ? errno : ENOMEM;
  if (report[1] >= 0) close(report[1]);
  if (pid > 0 && read(report[0], &err, sizeof err) == (ssize_t)sizeof err) {
    waitpid(pid, NULL, 0); /* its exec failed: it exited */
    pid = -1;
  }
  if (report[0] >= 0) close(report[0]);
  if (pid < 0) snprintf(why, room, "cannot start it: %s", strerror(err));
  close(lock); /* the child holds it on */
  free(argv);
  return pid;
}
