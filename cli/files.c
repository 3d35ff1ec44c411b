/* files.c - whole-file reads and atomic writes for the CLI */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static relayout_status io_fail(relayout_error *err, const char *what,
                               const char *path) {
  snprintf(err->message, sizeof err->message, "%s: %s: %s", path, what,
           strerror(errno));
  return RELAYOUT_ERR_IO;
}

void *cli_alloc_aligned(size_t n) {
  const size_t page = 4096;
  if (n > SIZE_MAX - page) return NULL;
  return aligned_alloc(page, (n + page - 1) / page * page + (n ? 0 : page));
}

relayout_status cli_read_file(unsigned char **data, size_t *size,
                              const char *path, relayout_error *err) {
  int fd = open(path, O_RDONLY);
  if (fd < 0) return io_fail(err, "cannot open", path);
  struct stat st;
  if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
    close(fd);
    snprintf(err->message, sizeof err->message, "%s: not a regular file", path);
    return RELAYOUT_ERR_IO;
  }
  size_t n = (size_t)st.st_size;
  unsigned char *buf = cli_alloc_aligned(n);
  if (!buf) {
    close(fd);
    snprintf(err->message, sizeof err->message,
             "%s: cannot hold its %zu bytes in memory", path, n);
    return RELAYOUT_ERR_NOMEM;
  }
  size_t got = 0;
  while (got < n) {
    ssize_t r = read(fd, buf + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      free(buf);
      close(fd);
      return io_fail(err, "read failed", path);
    }
    got += (size_t)r;
  }
  close(fd);
  *data = buf;
  *size = n;
  return RELAYOUT_OK;
}

/* The temp file being written, for the signal handler to remove. With
 * deferred signals the handler only records the signal: the command checks
 * cli_interrupted() between steps and removes what it wrote itself. */
static char tmp_path[4096];
static volatile sig_atomic_t tmp_live, deferred, caught;

static void on_signal(int sig) {
  signal(sig, SIG_DFL);
  if (deferred) {
    caught = sig;
    return;
  }
  if (tmp_live) unlink(tmp_path);
  raise(sig);
}

void cli_install_cleanup(void) {
  signal(SIGINT, on_signal);
  signal(SIGTERM, on_signal);
  signal(SIGHUP, on_signal);
}

void cli_defer_signals(void) { deferred = 1; }
int cli_interrupted(void) { return caught; }
void cli_reraise(void) {
  if (caught) raise(caught);
}

static int write_all(int fd, const void *p, size_t n) {
  const unsigned char *b = p;
  while (n) {
    ssize_t w = write(fd, b, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    b += w;
    n -= (size_t)w;
  }
  return 0;
}

relayout_status cli_temp_open(int *fd, const char *path, relayout_error *err) {
  if (strlen(path) + 16 > sizeof tmp_path) {
    return cli_fail(err, RELAYOUT_ERR_IO, "output path is too long (%zu chars)",
                    strlen(path));
  }
  snprintf(tmp_path, sizeof tmp_path, "%s.tmp-XXXXXX", path);
  *fd = mkstemp(tmp_path);
  if (*fd < 0) return io_fail(err, "cannot create a temp file beside", path);
  tmp_live = 1;
  mode_t mask = umask(0);
  umask(mask);
  if (fchmod(*fd, 0666 & ~mask)) {
    relayout_status s =
        io_fail(err, "cannot set the mode of a temp file beside", path);
    cli_temp_discard(*fd);
    return s;
  }
  return RELAYOUT_OK;
}

void cli_temp_discard(int fd) {
  close(fd);
  unlink(tmp_path);
  tmp_live = 0;
}

relayout_status cli_temp_commit(int fd, const char *path, relayout_error *err) {
  if (fsync(fd)) {
    relayout_status s = io_fail(err, "write failed", path);
    cli_temp_discard(fd);
    return s;
  }
  if (close(fd) || rename(tmp_path, path)) {
    relayout_status s =
        io_fail(err, "cannot move the finished file into place", path);
    unlink(tmp_path);
    tmp_live = 0;
    return s;
  }
  tmp_live = 0;
  return RELAYOUT_OK;
}

relayout_status cli_pwrite(int fd, const void *data, size_t size,
                           uint64_t offset, const char *path,
                           relayout_error *err) {
  const unsigned char *b = data;
  while (size) {
    ssize_t w = pwrite(fd, b, size, (off_t)offset);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return io_fail(err, "write failed", path);
    b += w;
    size -= (size_t)w;
    offset += (uint64_t)w;
  }
  return RELAYOUT_OK;
}

relayout_status cli_write_atomic(const char *path, const void *head,
                                 size_t head_size, const void *body,
                                 size_t body_size, relayout_error *err) {
  int fd;
  relayout_status s = cli_temp_open(&fd, path, err);
  if (s) return s;
  if (write_all(fd, head, head_size) || write_all(fd, body, body_size)) {
    s = io_fail(err, "write failed", path);
    cli_temp_discard(fd);
    return s;
  }
  return cli_temp_commit(fd, path, err);
}

int cli_same_file(const char *a, const char *b) {
  struct stat sa, sb;
  return !stat(a, &sa) && !stat(b, &sb) && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

relayout_status cli_write_npy(const char *path, const char *descr, int rank,
                              const int64_t *shape, const void *data,
                              size_t size, relayout_error *err) {
  char head[1024];
  size_t len = sizeof head;
  relayout_status s = relayout_npy_header(head, &len, descr, rank, shape, err);
  return s ? s : cli_write_atomic(path, head, len, data, size, err);
}
