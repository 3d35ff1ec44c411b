/* peer_python.c - numpy and PyTorch as peers (bench --suite)
 *
 * Runs bench/peer.py (embedded at build time) with the interpreter CMake
 * found able to import the backend, once per conversion: the source's bytes
 * go to it in a temp file; it makes one run, whose result comes back in a
 * temp file and whose seconds, on a JSON line on its stdout, choose the run
 * count (peer_runs); the count goes to its stdin, and a second JSON line
 * gives the median seconds of the timed runs.
 */
#include "peer.h"

#include <jansson.h>
#include <signal.h>
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
#ifndef RELAYOUT_OPENCV_PYTHON
#define RELAYOUT_OPENCV_PYTHON NULL
#endif

/* A configuration as bench/peer.py reads it. */
static json_t *aipp_json(const relayout_aipp *a) {
  static const char *const formats[] = {"YUV420SP_U8", "RGB888_U8",
                                        "XRGB8888_U8", "YUV400_U8"};
  json_t *m = json_array(), *norm[3];
  for (int i = 0; i < 3; i++)
    json_array_append_new(m, json_pack("[iii]", a->matrix[i][0],
                                       a->matrix[i][1], a->matrix[i][2]));
  const float *v[3] = {a->mean_chn, a->min_chn, a->var_reci_chn};
  for (int k = 0; k < 3; k++)
    norm[k] =
        json_pack("[fff]", (double)v[k][0], (double)v[k][1], (double)v[k][2]);
  int64_t cw = a->crop ? a->crop_size_w : a->src_image_size_w,
          ch = a->crop ? a->crop_size_h : a->src_image_size_h;
  json_t *o = json_pack(
      "{s:s, s:I, s:I, s:b, s:b, s:[IIII], s:b, s:o, s:[iii], s:[iii]}",
      "format", formats[a->input_format], "w", (json_int_t)a->src_image_size_w,
      "h", (json_int_t)a->src_image_size_h, "ax_swap", a->ax_swap_switch,
      "rbuv_swap", a->rbuv_swap_switch, "crop",
      (json_int_t)(a->crop ? a->load_start_pos_w : 0),
      (json_int_t)(a->crop ? a->load_start_pos_h : 0), (json_int_t)cw,
      (json_int_t)ch, "csc", a->csc_switch, "matrix", m, "input_bias",
      a->input_bias[0], a->input_bias[1], a->input_bias[2], "output_bias",
      a->output_bias[0], a->output_bias[1], a->output_bias[2]);
  json_object_set_new(o, "mean", norm[0]);
  json_object_set_new(o, "min", norm[1]);
  json_object_set_new(o, "var_reci", norm[2]);
  json_object_set_new(o, "padding",
                      json_pack("[IIII]", (json_int_t)a->top_padding_size,
                                (json_int_t)a->bottom_padding_size,
                                (json_int_t)a->left_padding_size,
                                (json_int_t)a->right_padding_size));
  json_object_set_new(o, "padding_value", json_real(a->padding_value));
  return o;
}

static json_t *layout_json(const relayout_desc *d) {
  json_t *dims = json_array(), *padded = json_array(), *axes = json_array();
  int64_t extents[RELAYOUT_MAX_DIMS];
  relayout_vdim v[RELAYOUT_MAX_DIMS + 1];
  relayout_axis a[RELAYOUT_MAX_AXES];
  int ndims = relayout_desc_dims(d, NULL, extents);
  int naxes = relayout_desc_axes(d, a);
  relayout_desc_vdims(d, v);
  for (int i = 0; i < ndims; i++) {
    json_array_append_new(dims, json_integer(extents[i]));
    json_array_append_new(padded, json_integer(v[i].padded));
  }
  for (int i = 0; i < naxes; i++)
    json_array_append_new(axes,
                          json_pack("[iII]", a[i].dim, (json_int_t)a[i].extent,
                                    (json_int_t)a[i].weight));
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

/* The script running as a child process, its stdin and stdout as streams.
 * While it runs, SIGPIPE is ignored: a script that dies does not take the
 * bench with it when its stdin is written to. */
typedef struct child {
  pid_t pid;
  FILE *to, *from;
  int started;
  struct sigaction pipe_action; /* SIGPIPE's, to restore */
} child;

/* Starts argv[0] with argv; 0 on success. */
static int child_start(child *c, char *const *argv) {
  struct sigaction ignore = {.sa_handler = SIG_IGN};
  sigaction(SIGPIPE, &ignore, &c->pipe_action);
  c->started = 1;
  int in[2], out[2];
  if (pipe(in)) return -1;
  if (pipe(out)) {
    close(in[0]);
    close(in[1]);
    return -1;
  }
  c->pid = fork();
  if (c->pid == 0) {
    dup2(in[0], 0);
    dup2(out[1], 1);
    close(in[0]);
    close(in[1]);
    close(out[0]);
    close(out[1]);
    execv(argv[0], argv);
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  c->to = c->pid < 0 ? NULL : fdopen(in[1], "w");
  c->from = c->pid < 0 ? NULL : fdopen(out[0], "r");
  if (!c->to) close(in[1]);
  if (!c->from) close(out[0]);
  return c->to && c->from ? 0 : -1;
}

/* Closes its stdin and waits for it: 0 when it exited with status 0. */
static int child_end(child *c) {
  if (c->to) fclose(c->to);
  if (c->from) fclose(c->from);
  int status = 0;
  if (c->pid > 0)
    while (waitpid(c->pid, &status, 0) < 0)
      ;
  if (c->started) sigaction(SIGPIPE, &c->pipe_action, NULL);
  return c->pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
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

/* The script's next JSON reply, or NULL with r->note saying why (a skip,
 * or a failure). */
static json_t *child_reply(peer_result *r, child *c, const char *backend) {
  char line[512] = "";
  json_t *res = NULL;
  if (!fgets(line, sizeof line, c->from) ||
      !(res = json_loads(line, 0, NULL))) {
    line[strcspn(line, "\n")] = 0;
    snprintf(r->note, sizeof r->note, "%s failed: %.200s", backend,
             *line ? line : "no reply");
  } else if (json_is_string(json_object_get(res, "skip"))) {
    snprintf(r->note, sizeof r->note, "%s",
             json_string_value(json_object_get(res, "skip")));
    json_decref(res);
    res = NULL;
  }
  return res;
}

void peer_python(peer_result *r, const char *backend, const peer_tensors *t,
                 int runs) {
  const relayout_desc *s = t->s, *d = t->d;
  const unsigned char *in = t->in, *want = t->want;
  int opencv = !strcmp(backend, "opencv");
  const char *python = !strcmp(backend, "numpy") ? RELAYOUT_NUMPY_PYTHON
                       : opencv                  ? RELAYOUT_OPENCV_PYTHON
                                                 : RELAYOUT_TORCH_PYTHON;
  r->seconds = -1;
  if (!python) {
    snprintf(r->note, sizeof r->note, "no python with %s found at build time",
             backend);
    return;
  }
  if ((s && !peer_expressible(r, s)) || !peer_expressible(r, d)) return;
  int64_t sb, db, frame = 0, frames = 0;
  if (t->aipp) {
    char names[RELAYOUT_MAX_DIMS];
    int64_t ext[RELAYOUT_MAX_DIMS];
    int n = relayout_desc_dims(d, names, ext);
    relayout_aipp_check(t->aipp, NULL, NULL, NULL, &frame, NULL);
    for (int i = 0; i < n; i++)
      if (names[i] == 'N') frames = ext[i];
    sb = frame * frames;
  } else {
    relayout_desc_size_bytes(&sb, s, NULL);
  }
  relayout_desc_size_bytes(&db, d, NULL);
  relayout_dtype dt = relayout_desc_dtype(d),
                 st = s ? relayout_desc_dtype(s) : RELAYOUT_U8;
  json_t *scales = json_array();
  for (int64_t i = 0; i < t->q.count; i++)
    json_array_append_new(scales, json_real(t->q.scales[i]));
  json_t *spec =
      json_pack("{s:i, s:o, s:o, s:s, s:s, s:o, s:i}", "size",
                relayout_dtype_bits(st) / 8, "src",
                s ? layout_json(s) : json_null(), "dst", layout_json(d), "from",
                relayout_dtype_name(st), "to", relayout_dtype_name(dt),
                "scales", scales, "axis", t->q.count > 1 ? t->q.dim : -1);
  if (spec && t->aipp) {
    json_object_set_new(spec, "aipp", aipp_json(t->aipp));
    json_object_set_new(spec, "frames", json_integer(frames));
  }
  char *spec_text = spec ? json_dumps(spec, JSON_COMPACT) : NULL;
  json_decref(spec);
  char src_path[4096] = "", out_path[4096] = "";
  char *argv[] = {(char *)python,  "-c",      (char *)rl_bench_peer_py,
                  (char *)backend, spec_text, src_path,
                  out_path,        NULL};
  child c = {0};
  json_t *res = NULL;
  double max_diff = 0;
  /* one run for the output and to choose the run count, then the timing */
  if (!spec_text || temp_file(src_path, sizeof src_path, in, (size_t)sb) ||
      temp_file(out_path, sizeof out_path, "", 0)) {
    snprintf(r->note, sizeof r->note, "cannot write a temp file");
  } else if (child_start(&c, argv)) {
    snprintf(r->note, sizeof r->note, "cannot start %s", python);
  } else if ((res = child_reply(r, &c, backend))) {
    r->same = same_bytes(out_path, want, (size_t)db);
    max_diff = json_number_value(json_object_get(res, "max_diff"));
    r->runs =
        peer_runs(json_number_value(json_object_get(res, "seconds")), runs);
    json_decref(res);
    res = NULL;
    if (fprintf(c.to, "%d\n", r->runs) < 0 || fflush(c.to))
      snprintf(r->note, sizeof r->note, "%s stopped before its runs", backend);
    else
      res = child_reply(r, &c, backend);
  }
  if (child_end(&c) && res) {
    json_decref(res);
    res = NULL;
    snprintf(r->note, sizeof r->note, "%s exited with an error", backend);
  }
  if (res) {
    r->seconds = json_number_value(json_object_get(res, "seconds"));
    if (opencv)
      snprintf(r->note, sizeof r->note,
               "cvtColor + blobFromImages, up to %g from AIPP's values",
               max_diff);
    else
      snprintf(r->note, sizeof r->note, "%s",
               t->aipp                     ? "AIPP's steps, then pad + reshape"
               : !strcmp(backend, "numpy") ? "pad + reshape + transpose"
                                           : "permute + pad on the GPU");
  }
  json_decref(res);
  if (*src_path) unlink(src_path);
  if (*out_path) unlink(out_path);
  free(spec_text);
}
