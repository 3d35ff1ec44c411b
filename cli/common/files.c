/* files.c - a command's input: a regular file read whole, or a stream
 * (standard input as "-", a FIFO, a device) read for exactly the bytes its
 * format says it holds */
#define _XOPEN_SOURCE 700 /* realpath */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static relayout_status io_fail(relayout_error *err, const char *what) {
  return cli_fail(err, RELAYOUT_ERR_IO, "%s: %s", what, strerror(errno));
}

void *cli_alloc_aligned(size_t n) {
  const size_t page = 4096;
  if (n > SIZE_MAX - page) return NULL;
  return aligned_alloc(page, (n + page - 1) / page * page + (n ? 0 : page));
}

int cli_open_regular(const char *path, relayout_error *err) {
  /* without O_NONBLOCK, opening a FIFO that nothing writes waits forever */
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return io_fail(err, "cannot open"), -1;
  struct stat st;
  if (fstat(fd, &st) || fcntl(fd, F_SETFL, 0)) {
    io_fail(err, "cannot look at it");
    close(fd);
    return -1;
  }
  if (!S_ISREG(st.st_mode)) {
    cli_fail(err, RELAYOUT_ERR_FILE, "not a regular file (a %s)",
             S_ISDIR(st.st_mode)    ? "directory"
             : S_ISFIFO(st.st_mode) ? "FIFO"
             : S_ISSOCK(st.st_mode) ? "socket"
                                    : "device");
    close(fd);
    return -1;
  }
  return fd;
}

int cli_open_beneath(const char *dir, const char *name, relayout_error *err) {
  char *top = realpath(dir, NULL), *path = NULL, *real = NULL;
  size_t n = top && strcmp(top, "/") ? strlen(top) : 0;
  int fd = -1;
  if (!top)
    io_fail(err, "cannot resolve the directory");
  else if (!(path = malloc(n + strlen(name) + 2)))
    cli_fail(err, RELAYOUT_ERR_NOMEM, "out of memory");
  else if (sprintf(path, "%s/%s", top, name), !(real = realpath(path, NULL)))
    io_fail(err, "cannot open");
  else if (strncmp(real, top, n) || real[n] != '/')
    cli_fail(err, RELAYOUT_ERR_FILE, "a link leads out of the directory");
  else
    fd = cli_open_regular(real, err);
  free(top);
  free(path);
  free(real);
  return fd;
}

/* An open descriptor as in. */
static relayout_status in_of(cli_in *in, int fd, relayout_error *err) {
  in->size = 0;
  in->stream = 0;
  in->fd = fd;
  if (in->fd < 0) return RELAYOUT_ERR_IO;
  struct stat st;
  if (fstat(in->fd, &st)) {
    relayout_status s = io_fail(err, "cannot look at it");
    cli_in_close(in);
    return s;
  }
  if (S_ISDIR(st.st_mode)) {
    cli_in_close(in);
    return cli_fail(err, RELAYOUT_ERR_IO, "is a directory");
  }
  in->stream = !S_ISREG(st.st_mode);
  if (!in->stream) in->size = (uint64_t)st.st_size;
  return RELAYOUT_OK;
}

relayout_status cli_in_open(cli_in *in, const char *path, relayout_error *err) {
  int fd =
      strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : dup(STDIN_FILENO);
  if (fd < 0) io_fail(err, "cannot open");
  return in_of(in, fd, err);
}

relayout_status cli_in_open_file(cli_in *in, int fd, relayout_error *err) {
  return fd < 0 ? (in->fd = -1, RELAYOUT_ERR_FILE) : in_of(in, fd, err);
}

void cli_in_close(cli_in *in) {
  if (in->fd >= 0) close(in->fd);
  in->fd = -1;
}

/* Reads up to n bytes into p, stopping early only at the end; *got says how
 * many came. */
static relayout_status read_up_to(cli_in *in, void *p, size_t n, size_t *got,
                                  relayout_error *err) {
  unsigned char *b = p;
  *got = 0;
  while (*got < n) {
    ssize_t r = read(in->fd, b + *got, n - *got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return io_fail(err, "read failed");
    if (r == 0) break;
    *got += (size_t)r;
  }
  return RELAYOUT_OK;
}

relayout_status cli_in_read(cli_in *in, unsigned char **data, size_t n,
                            relayout_error *err) {
  *data = NULL;
  if (!in->stream && in->size != n)
    return cli_fail(err, RELAYOUT_ERR_FILE, "holds %llu bytes, not %zu",
                    (unsigned long long)in->size, n);
  unsigned char *buf = cli_alloc_aligned(n), extra;
  if (!buf)
    return cli_fail(err, RELAYOUT_ERR_NOMEM,
                    "cannot hold its %zu bytes in memory", n);
  size_t got, more = 0;
  relayout_status s = read_up_to(in, buf, n, &got, err);
  if (!s && in->stream) s = read_up_to(in, &extra, 1, &more, err);
  if (!s && (got < n || more))
    s = cli_fail(err, RELAYOUT_ERR_FILE, "holds %s than the %zu bytes %s",
                 got < n ? "fewer" : "more", n,
                 in->stream ? "expected" : "its size said");
  if (s) {
    free(buf);
    return s;
  }
  *data = buf;
  return RELAYOUT_OK;
}

relayout_status cli_in_read_some(cli_in *in, void *data, size_t n, size_t *got,
                                 relayout_error *err) {
  return read_up_to(in, data, n, got, err);
}

relayout_status cli_in_read_npy(cli_in *in, unsigned char **data, size_t *size,
                                relayout_error *err) {
  if (!in->stream) {
    if (in->size > SIZE_MAX - 4096)
      return cli_fail(err, RELAYOUT_ERR_NOMEM, "too large to hold");
    *size = (size_t)in->size;
    return cli_in_read(in, data, *size, err);
  }
  /* The prefix, the header it sizes, then exactly the data the header
   * sizes. */
  enum { room = 12 + (1 << 20) }; /* relayout_npy_parse_header's limit */
  unsigned char *head = malloc(room), extra;
  size_t got = 0, more = 0;
  relayout_npy_info info;
  if (!head) return cli_fail(err, RELAYOUT_ERR_NOMEM, "out of memory");
  relayout_status s = read_up_to(in, head, 12, &got, err);
  if (!s) s = relayout_npy_parse_header(&info, head, got, err);
  if (s == RELAYOUT_ERR_BUFFER && (size_t)info.data_offset <= room) {
    size_t rest = 0;
    s = read_up_to(in, head + got, (size_t)info.data_offset - got, &rest, err);
    if (!s) s = relayout_npy_parse_header(&info, head, got + rest, err);
  }
  unsigned char *buf = NULL;
  if (!s && (uint64_t)info.data_size > SIZE_MAX / 2)
    s = cli_fail(err, RELAYOUT_ERR_NOMEM, "too large to hold");
  if (!s) {
    *size = (size_t)(info.data_offset + info.data_size);
    if ((buf = cli_alloc_aligned(*size)))
      memcpy(buf, head, (size_t)info.data_offset);
    else
      s = cli_fail(err, RELAYOUT_ERR_NOMEM,
                   "cannot hold its %zu bytes in memory", *size);
  }
  free(head);
  if (s) return s;
  s = read_up_to(in, buf + info.data_offset, (size_t)info.data_size, &got, err);
  if (!s) s = read_up_to(in, &extra, 1, &more, err);
  if (!s && (got < (size_t)info.data_size || more))
    s = cli_fail(
        err, RELAYOUT_ERR_FILE, ".npy data %s: its shape needs %lld bytes",
        got < (size_t)info.data_size ? "is truncated" : "runs on past its end",
        (long long)info.data_size);
  if (s) {
    free(buf);
    return s;
  }
  *data = buf;
  return RELAYOUT_OK;
}

/* The directory of path ("." for none) as text stat takes, into dir. */
static const char *base_of(char *dir, size_t room, const char *path) {
  const char *slash = strrchr(path, '/');
  snprintf(dir, room, "%.*s", slash ? (int)(slash - path + 1) : 1,
           slash ? path : ".");
  return slash ? slash + 1 : path;
}

int cli_same_file(const char *a, const char *b) {
  struct stat sa, sb;
  char da[4096], db[4096];
  if (!strcmp(a, "-") || !strcmp(b, "-")) return 0;
  if (!stat(a, &sa) && !stat(b, &sb))
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  /* one that is not there yet: the same name in the same directory */
  const char *na = base_of(da, sizeof da, a), *nb = base_of(db, sizeof db, b);
  return !strcmp(na, nb) && !stat(da, &sa) && !stat(db, &sb) &&
         sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

relayout_status cli_read_npy(const char *path, unsigned char **data,
                             size_t *size, relayout_error *err) {
  cli_in in;
  relayout_status s = cli_in_open(&in, path, err);
  if (s) return s;
  s = cli_in_read_npy(&in, data, size, err);
  cli_in_close(&in);
  return s;
}

relayout_status cli_read_exact(const char *path, unsigned char **data, size_t n,
                               relayout_error *err) {
  cli_in in;
  relayout_status s = cli_in_open(&in, path, err);
  if (s) return s;
  s = cli_in_read(&in, data, n, err);
  cli_in_close(&in);
  return s;
}
