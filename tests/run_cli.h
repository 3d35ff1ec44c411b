/* run_cli.h - what the tests that run the relayout command share: its path,
 * a scratch directory to run it in, a run, and what it said */
#ifndef RELAYOUT_TEST_RUN_CLI_H
#define RELAYOUT_TEST_RUN_CLI_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char relayout_bin[4096];
static char scratch_dir[64];

/* The command's path from argv[1], and a scratch directory of its own made
 * current: 0, or 2 with the usage printed. */
static int cli_setup(int argc, char **argv, const char *test) {
  if (argc != 2 || !realpath(argv[1], relayout_bin)) {
    fprintf(stderr, "usage: test_%s PATH/TO/relayout\n", test);
    return 2;
  }
  snprintf(scratch_dir, sizeof scratch_dir, "/tmp/relayout-%s-XXXXXX", test);
  return mkdtemp(scratch_dir) && !chdir(scratch_dir) ? 0 : 2;
}

/* The scratch directory removed. */
static void cli_teardown(void) {
  char cmd[96];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", scratch_dir);
  if (system(cmd)) fprintf(stderr, "could not remove %s\n", scratch_dir);
}

/* Runs relayout with args (printf-style) in the scratch directory, after
 * `pipe` (a shell command whose output becomes relayout's stdin, a stream)
 * where it is not NULL; stdout goes to out.txt, stderr to err.txt. Returns
 * the exit code. */
static int vcli(const char *pipe, const char *fmt, va_list ap) {
  char args[2048], cmd[8192];
  vsnprintf(args, sizeof args, fmt, ap);
  snprintf(cmd, sizeof cmd, "%s%s'%s' %s >out.txt 2>err.txt", pipe ? pipe : "",
           pipe ? " | " : "", relayout_bin, args);
  int rc = system(cmd);
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

__attribute__((format(printf, 1, 2))) static int cli(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int rc = vcli(NULL, fmt, ap);
  va_end(ap);
  return rc;
}

/* cli with file's bytes piped in (relayout's stdin a stream). */
__attribute__((format(printf, 2, 3), unused)) static int
cli_piped(const char *file, const char *fmt, ...) {
  char pipe[256];
  snprintf(pipe, sizeof pipe, "cat '%s'", file);
  va_list ap;
  va_start(ap, fmt);
  int rc = vcli(pipe, fmt, ap);
  va_end(ap);
  return rc;
}

/* A file's bytes with a NUL after them (malloc'd), or NULL. */
static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
  if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
    free(s);
    s = NULL;
  }
  fclose(f);
  if (s) s[n] = 0;
  return s;
}

/* Whether the last run's stderr holds part (else it is printed). */
static int said(const char *part) {
  char *err = slurp("err.txt");
  int ok = err && strstr(err, part);
  if (!ok) fprintf(stderr, "stderr was: %s\n", err ? err : "(none)");
  free(err);
  return ok;
}

#endif /* RELAYOUT_TEST_RUN_CLI_H */
