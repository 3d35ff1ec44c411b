/* peer_python.c - numpy and PyTorch as peers (bench --suite)
 *
 * Runs bench/peer.py (embedded at build time) with the interpreter CMake
 * found able to import the backend, twice: once for one run, whose result
 * comes back in a temp file and whose time chooses the run count
 * (peer_runs), then for the timed runs. The source's bytes go to it in a
 * temp file; one JSON line on its stdout gives the seconds.
 */
#include "peer.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern const char rl_bench_peer_py[]; /* bench/peer.py, embedded */

#ifndef RELAYOUT_NUMPY_PYTHON
#define RELAYOUT_NUMPY_PYTHON NULL
#endif
#ifndef RELAYOUT_TORCH_PYTHON
#define RELAYOUT_TORCH_PYTHON NULL
#endif

static json_t *layout_json(const relayout_desc *d) {
  json_t *dims = json_array(), *padded = json_array(), *axes = json_array();
  for (int i = 0; i < d->ndims; i++) {
    json_array_append_new(dims, json_integer(d->dims[i]));
    json_array_append_new(padded, json_integer(d->padded[i]));
  }
  for (int i = 0; i < d->naxes; i++)
    json_array_append_new(axes, json_pack("[iII]", d->axes[i].dim,
                                          (json_int_t)d->axes[i].extent,
                                          (json_int_t)d->axes[i].weight));
  return json_pack("{s:o, s:o, s:o}", "dims", dims, "padded", padded, "axes",
                   axes);
}

/* A temp file holding size bytes of data (or empty); its path in path, or
 * path empty on failure. */
static int temp_file(char *path, size_t n, const void *data, size_t size) {
  const char *dir = getenv("TMPDIR");
  snprintf(path, n, "%s/relayout-peer-XXXXXX", dir && *dir ? dir : "/tmp");
  int fd = mkstemp(path);
  if (fd < 0) {
    *path = 0;
    return -1;
  }
  FILE *f = fdopen(fd, "wb");
  int ok = f && fwrite(data, 1, size, f) == size;
  if (f ? fclose(f) : close(fd)) ok = 0;
  if (!ok) {
    unlink(path);
    *path = 0;
  }
  return ok ? 0 : -1;
}

/* Runs argv[0] with argv, its stdout into out (NUL-terminated). */
static int run_child(char *const *argv, char *out, size_t n) {
  int fds[2];
  if (pipe(fds)) return -1;
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return -1;
  }
  if (pid == 0) {
    dup2(fds[1], 1);
    close(fds[0]);
    close(fds[1]);
    execv(argv[0], argv);
    _exit(127);
  }
  close(fds[1]);
  size_t len = 0;
  ssize_t got;
  while (len + 1 < n && (got = read(fds[0], out + len, n - 1 - len)) > 0)
    len += (size_t)got;
  out[len] = 0;
  close(fds[0]);
  int status;
  while (waitpid(pid, &status, 0) < 0)
    ;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* Reads the result file and compares it with want. */
static int same_bytes(const char *path, const unsigned char *want,
                      size_t size) {
  FILE *f = fopen(path, "rb");
  if (!f) return 0;
  unsigned char buf[1 << 16];
  size_t at = 0, got;
  int same = 1;
  while (same && (got = fread(buf, 1, sizeof buf, f)) > 0) {
    same = at + got <= size && !memcmp(buf, want + at, got);
    at += got;
  }
  fclose(f);
  return same && at == size;
}

/* One run of the script with RUNS = runs: its JSON reply, or NULL with
 * r->note saying why (a skip, or a failure). */
static json_t *run_script(peer_result *r, const char *python,
                          const char *backend, int runs, const char *spec,
                          const char *src_path, const char *out_path) {
  char runs_text[16], line[512] = "";
  snprintf(runs_text, sizeof runs_text, "%d", runs);
  char *argv[] = {(char *)python,
                  "-c",
                  (char *)rl_bench_peer_py,
                  (char *)backend,
                  runs_text,
                  (char *)spec,
                  (char *)src_path,
                  (char *)out_path,
                  NULL};
  json_t *res = NULL;
  if (run_child(argv, line, sizeof line) ||
      !(res = json_loads(line, 0, NULL))) {
    snprintf(r->note, sizeof r->note, "%s failed: %.200s", backend, line);
  } else if (json_is_string(json_object_get(res, "skip"))) {
    snprintf(r->note, sizeof r->note, "%s",
             json_string_value(json_object_get(res, "skip")));
    json_decref(res);
    res = NULL;
  }
  return res;
}

void peer_python(peer_result *r, const char *backend, const relayout_desc *s,
                 const relayout_desc *d, const unsigned char *in,
                 const unsigned char *want, int runs) {
  const char *python =
      !strcmp(backend, "numpy") ? RELAYOUT_NUMPY_PYTHON : RELAYOUT_TORCH_PYTHON;
  r->seconds = -1;
  if (!python) {
    snprintf(r->note, sizeof r->note, "no python with %s found at build time",
             backend);
    return;
  }
  if (!peer_expressible(r, s) || !peer_expressible(r, d)) return;
  int64_t sb, db;
  relayout_desc_size_bytes(&sb, s, NULL);
  relayout_desc_size_bytes(&db, d, NULL);
  json_t *spec =
      json_pack("{s:i, s:o, s:o}", "size", relayout_dtype_bits(d->dtype) / 8,
                "src", layout_json(s), "dst", layout_json(d));
  char *spec_text = spec ? json_dumps(spec, JSON_COMPACT) : NULL;
  json_decref(spec);
  char src_path[4096] = "", out_path[4096] = "";
  json_t *res = NULL;
  /* one run for the output and to choose the run count, then the timing */
  if (!spec_text || temp_file(src_path, sizeof src_path, in, (size_t)sb) ||
      temp_file(out_path, sizeof out_path, "", 0)) {
    snprintf(r->note, sizeof r->note, "cannot write a temp file");
  } else if ((res = run_script(r, python, backend, 0, spec_text, src_path,
                               out_path))) {
    r->same = same_bytes(out_path, want, (size_t)db);
    r->runs =
        peer_runs(json_number_value(json_object_get(res, "seconds")), runs);
    json_decref(res);
    res =
        run_script(r, python, backend, r->runs, spec_text, src_path, out_path);
  }
  if (res) {
    r->seconds = json_number_value(json_object_get(res, "seconds"));
    snprintf(r->note, sizeof r->note, "%s",
             !strcmp(backend, "numpy") ? "pad + reshape + transpose"
                                       : "permute + pad on the GPU");
  }
  json_decref(res);
  if (*src_path) unlink(src_path);
  if (*out_path) unlink(out_path);
  free(spec_text);
}
