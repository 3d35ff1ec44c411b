/* isolate.c - relayout conform --isolate: each case run by a child process
 * of this same command (conform --case), its output read through a pipe.
 * A case that crashes the driver kills only its child: it is reported as
 * a failure, with the signal and the command that reruns it, and the
 * matrix goes on. */
#include "conform.h"

#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* The child's whole output (stdout and stderr), NUL-terminated, or NULL;
 * *status its wait status (-1: it could not start). */
static char *run_child(char *const argv[], int *status) {
  int fd[2];
  *status = -1;
  if (pipe(fd)) return NULL;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fd[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&fa, fd[1], STDERR_FILENO);
  posix_spawn_file_actions_addclose(&fa, fd[0]);
  pid_t pid;
  int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  close(fd[1]);
  char *out = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&out, &len);
  char buf[4096];
  ssize_t n;
  while (f && (n = read(fd[0], buf, sizeof buf)) > 0)
    fwrite(buf, 1, (size_t)n, f);
  close(fd[0]);
  if (f) fclose(f);
  if (!rc) waitpid(pid, status, 0);
  return out;
}

/* The verdict a child printed last ("pass|fail|skip TEXT"), or -1; the
 * line cut off out. */
static int verdict_of(char *out, const char *text) {
  size_t n = strlen(out);
  while (n && out[n - 1] == '\n') out[--n] = 0;
  char *line = strrchr(out, '\n') ? strrchr(out, '\n') + 1 : out;
  for (int v = 0; v < 3; v++) {
    size_t w = strlen(cf_verdicts[v]);
    if (!strncmp(line, cf_verdicts[v], w) && line[w] == ' ' &&
        !strcmp(line + w + 1, text)) {
      *line = 0;
      return v;
    }
  }
  return -1;
}

void cf_run_isolated(conform *c, const char *group, const cf_case *k) {
  char self[4096], seed[32], rerun[1536];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  self[n > 0 ? n : 0] = 0;
  snprintf(seed, sizeof seed, "%llu", (unsigned long long)c->seed);
  int against = strcmp(c->against_name, "ref") != 0;
  char *argv[] = {self,
                  "conform",
                  "--device",
                  (char *)c->device_arg,
                  "--seed",
                  seed,
                  "--case",
                  (char *)k->text,
                  against ? "--against" : NULL,
                  (char *)c->against_name,
                  NULL};
  snprintf(rerun, sizeof rerun,
           "rerun: relayout conform --device %s --seed %s%s%s --case '%s'",
           c->device_arg, seed, against ? " --against " : "",
           against ? c->against_name : "", k->text);
  int status, verdict = CF_FAIL;
  char *out = n > 0 ? run_child(argv, &status) : NULL;
  if (cli_interrupted()) { /* the signal reached the child too: not run */
    free(out);
    return;
  }
  char *details = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&details, &len);
  if (!out || status == -1) {
    fprintf(f, "the case's process could not start (%s)", self);
  } else if (WIFSIGNALED(status)) {
    fprintf(f, "the case crashed its process (signal %d, %s); %s",
            WTERMSIG(status), strsignal(WTERMSIG(status)), rerun);
    if (*out) fprintf(f, "\n%s", out);
  } else if ((verdict = verdict_of(out, k->text)) < 0) {
    verdict = CF_FAIL;
    fprintf(f, "the case's process exited %d without a verdict; %s\n%s",
            WEXITSTATUS(status), rerun, out);
  } else {
    /* its own "FAIL TEXT: details" line, without the prefix */
    const char *d = strstr(out, ": ");
    fputs(verdict == CF_PASS ? "" : d ? d + 2 : out, f);
  }
  if (f) fclose(f);
  if (details) {
    size_t m = strlen(details);
    while (m && details[m - 1] == '\n') details[--m] = 0;
  }
  cf_record(c, c->seen - 1, group, k, verdict,
            details ? details : "out of memory");
  free(details);
  free(out);
}
