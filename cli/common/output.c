/* output.c - where a command's output goes: a regular file written through a
 * temp file beside it and renamed into place (symlinks followed, so the link
 * stays), or a stream (standard output, a device, a FIFO, a socket) written
 * in order, in place. */
#define _XOPEN_SOURCE 700 /* nftw */
#include "cli.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* A piece of a stream's output that arrived ahead of the bytes before it. */
typedef struct cli_piece {
  struct cli_piece *next;
  uint64_t at;
  size_t size;
  const unsigned char *data; /* the caller's (lasting) or own */
  unsigned char *own;
} cli_piece;

static relayout_status os_fail(relayout_error *err, const char *path,
                               const char *what) {
  return cli_fail(err, RELAYOUT_ERR_IO, "%s: %s: %s", path, what,
                  strerror(errno));
}

/* The temp file being written, for the signal handler to remove. With
 * deferred signals the handler only records the signal: the command checks
 * cli_interrupted() between steps and removes what it wrote itself. */
static char tmp_path[PATH_MAX + 16];
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
  signal(SIGPIPE, SIG_IGN); /* a closed reader is a write error, reported */
}

void cli_defer_signals(void) { deferred = 1; }
int cli_interrupted(void) { return caught; }
relayout_status cli_stop_requested(relayout_error *err) {
  return caught ? cli_fail(err, RELAYOUT_ERR_IO, "interrupted by signal %d",
                           (int)caught)
                : RELAYOUT_OK;
}
void cli_reraise(void) {
  if (caught) raise(caught);
}

/* path's directory ("." when it has none) into dir. */
static void dir_of(char *dir, size_t room, const char *path) {
  const char *slash = strrchr(path, '/');
  if (!slash)
    snprintf(dir, room, ".");
  else if (slash == path)
    snprintf(dir, room, "/");
  else
    snprintf(dir, room, "%.*s", (int)(slash - path), path);
}

/* Follows symlinks from path to what the last one names (which need not
 * exist): the file a write through the link reaches. */
static relayout_status follow_links(char *out, size_t room, const char *path,
                                    relayout_error *err) {
  if (strlen(path) >= room)
    return cli_fail(err, RELAYOUT_ERR_IO, "%s: path is too long", path);
  snprintf(out, room, "%s", path);
  struct stat st;
  for (int hops = 0; !lstat(out, &st) && S_ISLNK(st.st_mode); hops++) {
    char link[PATH_MAX], dir[PATH_MAX];
    ssize_t n = readlink(out, link, sizeof link - 1);
    if (hops == 40) errno = ELOOP;
    if (n < 0 || hops == 40) return os_fail(err, path, "cannot follow");
    link[n] = 0;
    dir_of(dir, sizeof dir, out);
    int len = link[0] == '/' ? snprintf(out, room, "%s", link)
                             : snprintf(out, room, "%s/%s", dir, link);
    if (len < 0 || (size_t)len >= room)
      return cli_fail(err, RELAYOUT_ERR_IO, "%s: its link target is too long",
                      path);
  }
  return RELAYOUT_OK;
}

relayout_status cli_out_check(cli_out *o, const char *path, int can_stream,
                              relayout_error *err) {
  memset(o, 0, sizeof *o);
  o->path = path;
  o->fd = -1;
  if (!strcmp(path, "-")) {
    o->stream = 1;
    return can_stream ? RELAYOUT_OK
                      : cli_fail(err, RELAYOUT_ERR_IO,
                                 "'-' (standard output) takes a single file");
  }
  relayout_status s = follow_links(o->target, sizeof o->target, path, err);
  if (s) return s;
  struct stat st;
  if (!stat(o->target, &st)) {
    if (S_ISDIR(st.st_mode))
      return cli_fail(err, RELAYOUT_ERR_IO, "%s: is a directory", path);
    o->stream = !S_ISREG(st.st_mode);
    if (o->stream && !can_stream)
      return cli_fail(err, RELAYOUT_ERR_IO,
                      "%s: is not a regular file, and this output is a "
                      "directory of shards",
                      path);
    if (o->stream) return RELAYOUT_OK;
  } else if (errno != ENOENT) {
    return os_fail(err, path, "cannot look at");
  }
  char dir[PATH_MAX];
  dir_of(dir, sizeof dir, o->target);
  errno = 0;
  if (stat(dir, &st) || !S_ISDIR(st.st_mode) || access(dir, W_OK | X_OK))
    return cli_fail(err, RELAYOUT_ERR_IO, "%s: cannot write into %s: %s", path,
                    dir, errno ? strerror(errno) : "not a directory");
  return RELAYOUT_OK;
}

static int remove_one(const char *path, const struct stat *st, int flag,
                      struct FTW *ftw) {
  (void)st, (void)flag, (void)ftw;
  return remove(path);
}

void cli_remove_tree(const char *path) {
  nftw(path, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

void cli_sweep_stale(const char *target) {
  char dir[PATH_MAX];
  dir_of(dir, sizeof dir, target);
  const char *base = strrchr(target, '/') ? strrchr(target, '/') + 1 : target;
  size_t n = strlen(base);
  DIR *d = opendir(dir);
  if (!d) return;
  time_t day_ago = time(NULL) - 24 * 3600;
  struct dirent *e;
  while ((e = readdir(d))) {
    const char *tail = e->d_name + n;
    char path[PATH_MAX + 256];
    struct stat st;
    if (strncmp(e->d_name, base, n) || strncmp(tail, ".tmp-", 5) ||
        strlen(tail) != 11 ||
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >=
            (int)sizeof path)
      continue;
    if (!lstat(path, &st) && st.st_mtime < day_ago) cli_remove_tree(path);
  }
  closedir(d);
}

/* A socket at path, connected. */
static int connect_socket(const char *path) {
  struct sockaddr_un a = {.sun_family = AF_UNIX};
  if (strlen(path) >= sizeof a.sun_path) {
    errno = ENAMETOOLONG;
    return -1;
  }
  strcpy(a.sun_path, path);
  int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a)) {
    int keep = errno;
    close(fd);
    errno = keep;
    fd = -1;
  }
  return fd;
}

relayout_status cli_out_open(cli_out *o, relayout_error *err) {
  if (o->stream) {
    struct stat st;
    if (!strcmp(o->path, "-"))
      o->fd = dup(STDOUT_FILENO);
    else if (!stat(o->target, &st) && S_ISSOCK(st.st_mode))
      o->fd = connect_socket(o->target);
    else
      o->fd = open(o->target, O_WRONLY | O_CLOEXEC);
    return o->fd < 0 ? os_fail(err, o->path, "cannot open for writing")
                     : RELAYOUT_OK;
  }
  cli_sweep_stale(o->target);
  snprintf(tmp_path, sizeof tmp_path, "%s.tmp-XXXXXX", o->target);
  o->fd = mkstemp(tmp_path);
  if (o->fd < 0) return os_fail(err, o->path, "cannot create a temp file");
  tmp_live = 1;
  mode_t mask = umask(0);
  umask(mask);
  if (fchmod(o->fd, 0666 & ~mask)) {
    relayout_status s = os_fail(err, o->path, "cannot set the file's mode");
    cli_out_discard(o);
    return s;
  }
  return RELAYOUT_OK;
}

static int write_all(int fd, const unsigned char *b, size_t n) {
  while (n) {
    ssize_t w = write(fd, b, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    b += w;
    n -= (size_t)w;
  }
  return 0;
}

/* Writes the pieces that now follow the stream's end. */
static relayout_status drain(cli_out *o, relayout_error *err) {
  while (o->pending && o->pending->at == o->next) {
    cli_piece *p = o->pending;
    if (write_all(o->fd, p->data, p->size))
      return os_fail(err, o->path, "write failed");
    o->next += p->size;
    o->pending = p->next;
    free(p->own);
    free(p);
  }
  return RELAYOUT_OK;
}

relayout_status cli_out_write(cli_out *o, const void *data, size_t size,
                              uint64_t at, int lasting, relayout_error *err) {
  const unsigned char *b = data;
  if (!o->stream) {
    while (size) {
      ssize_t w = pwrite(o->fd, b, size, (off_t)at);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) return os_fail(err, o->path, "write failed");
      b += w;
      size -= (size_t)w;
      at += (uint64_t)w;
    }
    return RELAYOUT_OK;
  }
  if (at == o->next) {
    if (write_all(o->fd, b, size)) return os_fail(err, o->path, "write failed");
    o->next += size;
    return drain(o, err);
  }
  cli_piece **p = &o->pending, *q = calloc(1, sizeof *q);
  if (!q || (!lasting && !(q->own = malloc(size ? size : 1)))) {
    free(q);
    return cli_fail(err, RELAYOUT_ERR_NOMEM,
                    "%s: out of memory holding %zu bytes back for their turn",
                    o->path, size);
  }
  q->at = at;
  q->size = size;
  q->data = lasting ? b : memcpy(q->own, b, size);
  while (*p && (*p)->at < at) p = &(*p)->next;
  q->next = *p;
  *p = q;
  return RELAYOUT_OK;
}

/* Frees what a stream still holds back. */
static void drop_pending(cli_out *o) {
  while (o->pending) {
    cli_piece *p = o->pending;
    o->pending = p->next;
    free(p->own);
    free(p);
  }
}

void cli_out_discard(cli_out *o) {
  if (o->fd >= 0) close(o->fd);
  o->fd = -1;
  drop_pending(o);
  if (!o->stream && tmp_live) {
    unlink(tmp_path);
    tmp_live = 0;
  }
}

relayout_status cli_out_commit(cli_out *o, relayout_error *err) {
  if (o->stream) {
    int gap = o->pending != NULL;
    drop_pending(o);
    int closed = close(o->fd);
    o->fd = -1;
    if (gap)
      return cli_fail(err, RELAYOUT_ERR_IO,
                      "%s: the output has a gap at byte %llu", o->path,
                      (unsigned long long)o->next);
    return closed ? os_fail(err, o->path, "write failed") : RELAYOUT_OK;
  }
  if (fsync(o->fd)) {
    relayout_status s = os_fail(err, o->path, "write failed");
    cli_out_discard(o);
    return s;
  }
  int closed = close(o->fd);
  o->fd = -1;
  if (closed || rename(tmp_path, o->target)) {
    relayout_status s =
        os_fail(err, o->path, "cannot move the file into place");
    unlink(tmp_path);
    tmp_live = 0;
    return s;
  }
  tmp_live = 0;
  return RELAYOUT_OK;
}

relayout_status cli_out_whole(cli_out *o, const void *head, size_t head_size,
                              const void *body, size_t body_size,
                              relayout_error *err) {
  relayout_status s = cli_out_open(o, err);
  if (!s) s = cli_out_write(o, head, head_size, 0, 1, err);
  if (!s) s = cli_out_write(o, body, body_size, head_size, 1, err);
  if (s) {
    cli_out_discard(o);
    return s;
  }
  return cli_out_commit(o, err);
}

relayout_status cli_write_npy(cli_out *o, const char *descr, int rank,
                              const int64_t *shape, const void *data,
                              size_t size, relayout_error *err) {
  char head[1024];
  size_t len = sizeof head;
  relayout_status s = relayout_npy_header(head, &len, descr, rank, shape, err);
  return s ? s : cli_out_whole(o, head, len, data, size, err);
}
