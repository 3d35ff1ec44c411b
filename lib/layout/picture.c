/* picture.c - a descriptor's buffer drawn as SVG, alone or beside another
 * (where elements go): a cell per element in physical order, labelled
 * with the logical coordinate that lands there */
#include "internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ROWS  64 /* drawn; the rest are counted */
#define MAX_COLS  32
#define MAX_ELEMS ((int64_t)1 << 26) /* logical elements walked for labels */
#define CELL_H    14
#define LINE_H    13

/* Growing text; oom once any append failed. */
typedef struct text {
  char *p;
  size_t n, cap;
  int oom;
} text;

__attribute__((format(printf, 2, 3))) static void put(text *t, const char *fmt,
                                                      ...) {
  va_list ap;
  for (int pass = 0; pass < 2 && !t->oom; pass++) {
    va_start(ap, fmt);
    int k =
        vsnprintf(t->p ? t->p + t->n : NULL, t->p ? t->cap - t->n : 0, fmt, ap);
    va_end(ap);
    if (k < 0) {
      t->oom = 1;
    } else if (t->p && (size_t)k < t->cap - t->n) {
      t->n += (size_t)k;
      return;
    } else {
      size_t cap = (t->cap + (size_t)k + 1) * 2;
      char *p = realloc(t->p, cap);
      if (!p) t->oom = 1;
      t->p = p ? p : t->p;
      t->cap = p ? cap : t->cap;
    }
  }
}

/* s with XML's special characters escaped. */
static void put_escaped(text *t, const char *s) {
  for (; *s; s++) switch (*s) {
    case '<': put(t, "&lt;"); break;
    case '>': put(t, "&gt;"); break;
    case '&': put(t, "&amp;"); break;
    case '"': put(t, "&quot;"); break;
    default: put(t, "%c", (unsigned char)*s >= ' ' ? *s : '?');
    }
}

/* An axis's name as the grammar writes it: its dim's letter for the dim's
 * outer part, else its extent and the letter in lowercase (16c). */
static void axis_name(char *buf, const relayout_axis *ax, int naxes, int i,
                      const relayout_vdim *v) {
  char dim[8];
  relayout_dim_label(dim, v[ax[i].dim].name);
  for (int j = 0; j < naxes; j++)
    if (ax[j].dim == ax[i].dim && ax[j].weight > ax[i].weight) {
      snprintf(buf, 32, "%lld%c", (long long)ax[i].extent,
               dim[0] >= 'A' && dim[0] <= 'Z' ? dim[0] - 'A' + 'a' : dim[0]);
      return;
    }
  snprintf(buf, 32, "%s", dim);
}

/* Where a descriptor's cells go. Rows hold `width` elements (the second
 * innermost axis's stride); where the outermost axis leaves a gap after
 * each of its positions (lanes: a TPU layout's NPUs), each lane is a band
 * of lane_rows rows of its own, of which the first drawn_rows are drawn
 * for the first drawn_lanes lanes. rows x cols cells are drawn, cell_w
 * wide from y = top; the picture is w x h, its left edge at x0. */
typedef struct picture {
  const relayout_desc *d;
  int64_t span, width, lanes, lane_stride, lane_span, lane_rows, all_rows, rows,
      cols;
  int64_t drawn_lanes, drawn_rows; /* lanes drawn, and rows of each */
  int cell_w, top, w, h, x0;
} picture;

static void lay_out(picture *p, const relayout_desc *d, const char *title,
                    int x0) {
  relayout_axis ax[RELAYOUT_MAX_AXES];
  int64_t ext[RELAYOUT_MAX_DIMS];
  int naxes = relayout_desc_axes(d, ax), n = relayout_desc_dims(d, NULL, ext);
  p->d = d;
  p->span = relayout_desc_span(d);
  /* elements a position of the outermost axis spans, from its start */
  int64_t inner = 1 + relayout_desc_base(d);
  for (int k = 1; k < naxes; k++) inner += (ax[k].extent - 1) * ax[k].stride;
  int lanes = naxes > 1 && ax[0].extent > 1 && ax[0].stride > inner;
  p->lanes = lanes ? ax[0].extent : 1;
  p->lane_stride = lanes ? ax[0].stride : p->span;
  p->lane_span = lanes ? inner : p->span;
  p->width = naxes - lanes > 1 && ax[naxes - 2].stride < p->lane_span
                 ? ax[naxes - 2].stride
                 : p->lane_span;
  p->lane_rows = (p->lane_span + p->width - 1) / p->width;
  p->all_rows = p->lanes * p->lane_rows;
  /* every lane's first rows where there are lanes, up to 16 of them */
  p->drawn_lanes = p->lanes < 16 ? p->lanes : 16;
  int64_t room = MAX_ROWS / p->drawn_lanes > 2 ? MAX_ROWS / p->drawn_lanes : 2;
  p->drawn_rows = p->lane_rows < room ? p->lane_rows : room;
  p->rows = p->drawn_lanes * p->drawn_rows;
  p->cols = p->width < MAX_COLS ? p->width : MAX_COLS;
  int chars = 1;
  for (int k = 0; k < n; k++)
    chars += snprintf(NULL, 0, "%lld,", (long long)ext[k]);
  p->cell_w = 6 * chars + 6;
  p->top = (title ? 2 : 1) * LINE_H + 6;
  p->x0 = x0;
  p->w = 8 + (int)p->cols * p->cell_w + (lanes ? 60 : 0);
  if (p->w < (lanes ? 820 : 560)) p->w = lanes ? 820 : 560; /* the footnote */
  p->h = p->top + (int)p->rows * CELL_H + 2 * LINE_H;
}

/* The offset drawn at row r, column c, or -1 (past a lane's span, or the
 * buffer's). */
static int64_t offset_at(const picture *p, int64_t r, int64_t c) {
  int64_t in_lane = r % p->drawn_rows * p->width + c;
  int64_t at = r / p->drawn_rows * p->lane_stride + in_lane;
  return in_lane < p->lane_span && at < p->span ? at : -1;
}

/* The drawn cell (r * cols + c) of offset at, or -1. */
static int64_t cell_of(const picture *p, int64_t at) {
  int64_t lane = at / p->lane_stride, in_lane = at % p->lane_stride;
  int64_t row = in_lane / p->width, c = in_lane % p->width;
  return in_lane < p->lane_span && lane < p->drawn_lanes &&
                 row < p->drawn_rows && c < p->cols
             ? (lane * p->drawn_rows + row) * p->cols + c
             : -1;
}

/* The drawn cells' logical elements: index[r * cols + c] is the row-major
 * logical index of the element drawn there, or -1 (padding or a gap).
 * Every logical coordinate is walked once. */
static relayout_status label_cells(int64_t *index, const picture *p,
                                   relayout_error *err) {
  const relayout_desc *d = p->d;
  int64_t ext[RELAYOUT_MAX_DIMS], coord[RELAYOUT_MAX_DIMS] = {0}, count = 1;
  int n = relayout_desc_dims(d, NULL, ext);
  for (int64_t i = 0; i < p->rows * p->cols; i++) index[i] = -1;
  for (int i = 0; i < n; i++) count *= ext[i];
  if (count > MAX_ELEMS)
    return rl_fail(err, RELAYOUT_ERR_UNSUPPORTED,
                   "%lld elements are too many to draw (at most %lld): a "
                   "picture shows the layout, so give smaller extents",
                   (long long)count, (long long)MAX_ELEMS);
  for (int64_t flat = 0; flat < count; flat++) {
    int64_t at;
    relayout_status s = relayout_desc_offset(&at, d, coord, err);
    if (s) return s;
    int64_t cell = cell_of(p, at);
    if (cell >= 0) index[cell] = flat;
    for (int k = n - 1; k >= 0 && ++coord[k] == ext[k]; k--) coord[k] = 0;
  }
  return RELAYOUT_OK;
}

/* A cell's label: its logical coordinate, or with `values` its index. */
static void cell_label(char *buf, size_t room, int64_t flat, const int64_t *ext,
                       int n, int values) {
  if (values) {
    snprintf(buf, room, "%lld", (long long)flat);
    return;
  }
  int64_t c[RELAYOUT_MAX_DIMS];
  for (int k = n - 1; k >= 0; k--) {
    c[k] = flat % ext[k];
    flat /= ext[k];
  }
  size_t at = 0;
  for (int k = 0; k < n && at < room; k++)
    at += (size_t)snprintf(buf + at, room - at, "%s%lld", k ? "," : "",
                           (long long)c[k]);
}

/* Header lines: the title, the dtype, the axes outermost first. */
static int header(text *t, const relayout_desc *d, const char *title,
                  const relayout_axis *ax, int naxes, const relayout_vdim *v) {
  int y = LINE_H;
  if (title) {
    put(t, "<text x=\"4\" y=\"%d\" font-weight=\"bold\">", y);
    put_escaped(t, title);
    put(t, "</text>\n");
    y += LINE_H;
  }
  put(t,
      "<text x=\"4\" y=\"%d\">%s; axes outermost first (extent x stride):", y,
      relayout_dtype_name(relayout_desc_dtype(d)));
  for (int i = 0; i < naxes; i++) {
    char name[32];
    axis_name(name, ax, naxes, i, v);
    put(t, " %s %lldx%lld", name, (long long)ax[i].extent,
        (long long)ax[i].stride);
  }
  put(t, "</text>\n");
  return y + 6;
}

/* Lines where outer axes roll over between rows: the more axes begin
 * there, the thicker; each lane's band named. */
static void boundaries(text *t, const picture *p, const relayout_axis *ax,
                       int naxes) {
  int right = 4 + (int)p->cols * p->cell_w;
  for (int64_t r = 0; r < p->rows; r++) {
    int64_t at =
        r / p->drawn_rows * p->lane_stride + r % p->drawn_rows * p->width;
    int level = 0, y = p->top + (int)r * CELL_H;
    for (int k = 0; k + 1 < naxes; k++)
      level += ax[k].stride > p->width && at % ax[k].stride == 0;
    if (level && r)
      put(t,
          "<line x1=\"4\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#000\" "
          "stroke-width=\"%d\"/>\n",
          y, right, y, level);
    if (p->lanes > 1 && r % p->drawn_rows == 0)
      put(t, "<text x=\"%d\" y=\"%d\" font-weight=\"bold\">lane %lld</text>\n",
          right + 6, y + CELL_H - 4, (long long)(r / p->drawn_rows));
  }
}

/* The picture p lays out, into t. */
static relayout_status draw(text *t, const picture *p, const char *title,
                            unsigned flags, relayout_error *err) {
  relayout_axis ax[RELAYOUT_MAX_AXES];
  relayout_vdim v[RELAYOUT_MAX_DIMS + 1];
  int64_t ext[RELAYOUT_MAX_DIMS];
  const relayout_desc *d = p->d;
  int naxes = relayout_desc_axes(d, ax), n = relayout_desc_dims(d, NULL, ext);
  relayout_desc_vdims(d, v);
  int64_t *index = malloc(sizeof *index * (size_t)(p->rows * p->cols));
  if (!index) return rl_fail(err, RELAYOUT_ERR_NOMEM, "out of memory");
  relayout_status s = label_cells(index, p, err);
  if (s) {
    free(index);
    return s;
  }
  put(t, "<g transform=\"translate(%d,0)\">\n", p->x0);
  header(t, d, title, ax, naxes, v);
  for (int64_t r = 0; r < p->rows; r++)
    for (int64_t c = 0; c < p->cols; c++) {
      int64_t at = offset_at(p, r, c), flat = index[r * p->cols + c];
      if (at < 0) continue;
      char label[160] = "";
      if (flat >= 0)
        cell_label(label, sizeof label, flat, ext, n,
                   flags & RELAYOUT_SVG_VALUES);
      int x = 4 + (int)c * p->cell_w, y = p->top + (int)r * CELL_H;
      put(t,
          "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\" "
          "stroke=\"#bbb\" stroke-width=\"0.5\" class=\"%s\" "
          "data-offset=\"%lld\" data-label=\"%s\"/>",
          x, y, p->cell_w, CELL_H, flat >= 0 ? "#fff" : "#d8d8d8",
          flat >= 0 ? "data" : "padding", (long long)at, label);
      if (*label)
        put(t, "<text x=\"%d\" y=\"%d\">%s</text>", x + 3, y + CELL_H - 4,
            label);
      put(t, "\n");
    }
  boundaries(t, p, ax, naxes);
  int cut = p->all_rows > p->rows || p->width > p->cols;
  put(t,
      "<text x=\"4\" y=\"%d\">%lld elements in rows of %lld (the second "
      "innermost axis's stride)%s; grey: padding (written as zero)%s",
      p->top + (int)p->rows * CELL_H + LINE_H, (long long)p->span,
      (long long)p->width,
      p->lanes > 1 ? ", a band per lane of the outermost axis (its "
                     "positions lie apart: a TPU layout's NPUs)"
                   : "",
      cut ? "; " : "</text>\n");
  if (cut)
    put(t, "%lld rows and %lld columns not drawn</text>\n",
        (long long)(p->all_rows - p->rows), (long long)(p->width - p->cols));
  put(t, "</g>\n");
  free(index);
  return RELAYOUT_OK;
}

/* The centre of offset at's cell in p, where it is drawn: 1, else 0. */
static int cell_centre(int *x, int *y, const picture *p, int64_t at) {
  int64_t cell = cell_of(p, at), r = cell / p->cols, c = cell % p->cols;
  if (cell < 0) return 0;
  *x = p->x0 + 4 + (int)c * p->cell_w + p->cell_w / 2;
  *y = p->top + (int)r * CELL_H + CELL_H / 2;
  return 1;
}

/* Lines from a few elements' cells in a to theirs in b (the first, the
 * last, the middle one, the first of the last row): where an element goes. */
static void paths(text *t, const picture *a, const picture *b) {
  static const char *const colour[] = {"#d62728", "#1f77b4", "#2ca02c",
                                       "#9467bd"};
  int64_t ext[RELAYOUT_MAX_DIMS], coord[RELAYOUT_MAX_DIMS];
  int n = relayout_desc_dims(a->d, NULL, ext);
  for (int k = 0; k < 4; k++) {
    for (int i = 0; i < n; i++)
      coord[i] = k == 0   ? 0
                 : k == 1 ? ext[i] - 1
                 : k == 2 ? ext[i] / 2
                          : (i + 1 == n ? 0 : ext[i] - 1);
    int64_t oa, ob;
    int xa, ya, xb, yb;
    if (relayout_desc_offset(&oa, a->d, coord, NULL) ||
        relayout_desc_offset(&ob, b->d, coord, NULL) ||
        !cell_centre(&xa, &ya, a, oa) || !cell_centre(&xb, &yb, b, ob))
      continue;
    put(t,
        "<path d=\"M%d,%d C%d,%d %d,%d %d,%d\" fill=\"none\" stroke=\"%s\" "
        "stroke-width=\"1.5\" class=\"path\" data-from=\"%lld\" "
        "data-to=\"%lld\"/>\n",
        xa, ya, (xa + xb) / 2, ya, (xa + xb) / 2, yb, xb, yb, colour[k],
        (long long)oa, (long long)ob);
  }
}

/* t's text to the caller as relayout_desc_svg says. */
static relayout_status hand_over(char *out, size_t *size, text *t,
                                 relayout_status s, relayout_error *err) {
  if (!s && t->oom) s = rl_fail(err, RELAYOUT_ERR_NOMEM, "out of memory");
  size_t need = t->n + 1, room = *size;
  if (!s) *size = need;
  if (!s && out && room < need)
    s = rl_fail(err, RELAYOUT_ERR_BUFFER,
                "the picture needs %zu bytes, the buffer holds %zu", need,
                room);
  else if (!s && out)
    memcpy(out, t->p, need);
  free(t->p);
  return s;
}

static void svg_open(text *t, int w, int h) {
  put(t,
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
      "height=\"%d\" font-family=\"monospace\" font-size=\"9\">\n",
      w, h);
}

relayout_status relayout_desc_svg(char *out, size_t *size,
                                  const relayout_desc *d, const char *title,
                                  unsigned flags, relayout_error *err) {
  if (!size || !d) return rl_fail(err, RELAYOUT_ERR_ARGUMENT, "NULL argument");
  picture p;
  text t = {0};
  lay_out(&p, d, title, 0);
  svg_open(&t, p.w, p.h);
  relayout_status s = draw(&t, &p, title, flags, err);
  put(&t, "</svg>\n");
  return hand_over(out, size, &t, s, err);
}

relayout_status relayout_descs_svg(char *out, size_t *size,
                                   const relayout_desc *src,
                                   const relayout_desc *dst,
                                   const char *src_title, const char *dst_title,
                                   unsigned flags, relayout_error *err) {
  if (!size || !src || !dst)
    return rl_fail(err, RELAYOUT_ERR_ARGUMENT, "NULL argument");
  picture a, b;
  text t = {0};
  lay_out(&a, src, src_title, 0);
  lay_out(&b, dst, dst_title, a.w + 40);
  svg_open(&t, b.x0 + b.w, a.h > b.h ? a.h : b.h);
  relayout_status s = draw(&t, &a, src_title, flags, err);
  if (!s) s = draw(&t, &b, dst_title, flags, err);
  if (!s) paths(&t, &a, &b);
  put(&t, "</svg>\n");
  return hand_over(out, size, &t, s, err);
}
