/* explain.c - relayout explain: what a layout does to given dims */
#include "cli.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: relayout explain LAYOUT (--dims X=n,... | --shape AxBxC)\n"
    "                        [--dtype T] [--c0 N] [--svg FILE [--values]]\n"
    "       relayout explain --from A --to B (--dims ... | --shape ...)\n"
    "                        [--dtype T] --svg FILE [--values]\n"
    "\n"
    "Prints the physical axes (extent, stride), the padding, the array shape\n"
    "and the byte size of LAYOUT at the given logical extents.\n"
    "  --dims   extents by letter (N=2,C=17,H=5,W=3)\n"
    "  --shape  extents in the layout's logical order, batch dims of '...'\n"
    "           first (needed for ND and for batch dims)\n"
    "  --dtype  element type (default f32): block sizes depend on it\n"
    "  --c0     overrides the dtype-dependent block of a named format\n"
    "  --svg    draws the buffer into FILE (- for standard output) instead: a\n"
    "           cell per element in physical order labelled with its logical\n"
    "           coordinate, padding shaded, blocks outlined, the axes listed;\n"
    "           past 64 rows and 32 columns the rest is counted\n"
    "  --values labels cells with the logical index instead (the seeds'\n"
    "           tables)\n"
    "  --from, --to  draws A's buffer and B's side by side (extents in A's\n"
    "           logical order), with the paths of a few elements from one\n"
    "           to the other\n";

/* A descriptor as explain reads it, through relayout.h's queries. */
typedef struct desc_view {
  relayout_dtype dtype;
  int ndims, naxes, nvdims, compact;
  int64_t dims[RELAYOUT_MAX_DIMS], span;
  relayout_axis axes[RELAYOUT_MAX_AXES];
  relayout_vdim vdims[RELAYOUT_MAX_DIMS + 1];
  relayout_groups groups;
  int grouped;
} desc_view;

static void read_view(desc_view *v, const relayout_desc *d) {
  v->dtype = relayout_desc_dtype(d);
  v->ndims = relayout_desc_dims(d, NULL, v->dims);
  v->naxes = relayout_desc_axes(d, v->axes);
  v->nvdims = relayout_desc_vdims(d, v->vdims);
  v->grouped = relayout_desc_groups(d, &v->groups);
  v->compact = relayout_desc_is_compact(d);
  v->span = relayout_desc_span(d);
}

/* An axis is its dim's outer part when no other axis of the dim is coarser. */
static void axis_label(char *buf, const desc_view *d, int i) {
  const relayout_axis *a = &d->axes[i];
  char dim[8];
  relayout_dim_label(dim, d->vdims[a->dim].name);
  for (int j = 0; j < d->naxes; j++)
    if (d->axes[j].dim == a->dim && d->axes[j].weight > a->weight) {
      snprintf(buf, 32, "%lld%c", (long long)a->extent,
               tolower((unsigned char)dim[0]));
      return;
    }
  snprintf(buf, 32, "%s", dim);
}

/* A line on what a reader of older versions or other tools might take
 * otherwise, or nothing. */
static void print_note(const desc_view *d, const relayout_layout *l) {
  const char *text = relayout_layout_text(l);
  if (!strncmp(text, "FRACTAL_ZN", 10) || !strncmp(text, "ZN", 2)) {
    printf("note      a (32 B / element) x 16 fractal, K innermost: K0 = %lld, "
           "N0 = %lld (before 0.2, relayout swapped K0 and N0 at 1, 4 and 32 "
           "bits)\n",
           (long long)d->axes[d->naxes - 1].extent,
           (long long)d->axes[d->naxes - 2].extent);
    return;
  }
  if (!strncmp(text, "FRACTAL_Z_C04", 13)) {
    int h = 0;
    while (h < d->ndims - 1 && d->vdims[h].name != 'H') h++;
    printf("note      H is H * W merged (%lld): K = (h * W + w) * 4 + c, split "
           "by 16 into K1 and K0 = (4h, 4c)\n",
           (long long)d->vdims[h].valid);
    return;
  }
  if (strstr(text, "_RNN")) {
    printf("note      N is gates of hidden= units, each gate padded to 16%s; "
           "the padding counts positions, gaps included\n",
           strstr(text, "FRACTAL") ? ", and K = input= + hidden= pads the "
                                     "input rows apart"
                                   : "");
    return;
  }
  char g[128];
  int tag = !relayout_layout_grammar_text(g, sizeof g, l, d->dtype, NULL) &&
            !strcmp(g, text);
  for (const char *p = text; tag && *p; p++)
    tag = isdigit((unsigned char)*p) || (tolower((unsigned char)*p) >= 'a' &&
                                         tolower((unsigned char)*p) <= 'l');
  if (tag)
    printf("note      a oneDNN tag: its dims take the alphabet's order, as in "
           "oneDNN\n");
}

static void print(const relayout_desc *desc, const relayout_layout *l) {
  desc_view view, *d = &view;
  read_view(d, desc);
  char lab[32];
  int64_t bytes, elems = 1;
  relayout_desc_size_bytes(&bytes, desc, NULL);
  printf("layout    %s\n", relayout_layout_text(l));
  printf("dtype     %s (%d bits)\n", relayout_dtype_name(d->dtype),
         relayout_dtype_bits(d->dtype));
  printf("dims     ");
  for (int i = 0; i < d->ndims; i++) {
    relayout_dim_label(lab, d->vdims[i].name);
    printf(" %s=%lld", lab, (long long)d->dims[i]);
    elems *= d->dims[i];
  }
  if (d->grouped)
    printf("\ngroups    %lld (cin %lld, cout %lld, %lld per block)",
           (long long)d->groups.groups, (long long)d->groups.cin,
           (long long)d->groups.cout, (long long)d->groups.e);
  printf("\npadding  ");
  int any = 0;
  for (int v = 0; v < d->nvdims; v++) {
    const relayout_vdim *x = &d->vdims[v];
    if (x->padded == x->valid && !x->pad_before) continue;
    relayout_dim_label(lab, x->name);
    printf(" %s: %lld -> %lld", lab, (long long)x->valid, (long long)x->padded);
    if (x->pad_before) printf(" (%lld before)", (long long)x->pad_before);
    any = 1;
  }
  printf("%s\n", any ? "" : " none");
  printf("axes      %-8s %12s %14s\n", "axis", "extent", "stride");
  for (int i = 0; i < d->naxes; i++) {
    axis_label(lab, d, i);
    printf("          %-8s %12lld %14lld\n", lab, (long long)d->axes[i].extent,
           (long long)d->axes[i].stride);
  }
  int64_t base = relayout_desc_base(desc);
  if (base)
    printf("origin    element %lld (byte %lld): every offset is past it\n",
           (long long)base,
           (long long)(base * relayout_dtype_bits(d->dtype) / 8));
  int rank;
  int64_t shape[RELAYOUT_MAX_AXES];
  relayout_desc_physical_shape(&rank, shape, desc);
  printf("array     (");
  for (int i = 0; i < rank; i++)
    printf("%s%lld", i ? ", " : "", (long long)shape[i]);
  printf(rank == 1 ? ",)%s\n" : ")%s\n",
         !d->compact       ? "  (strided with gaps: stored flat)"
         : rank < d->naxes ? "  (axes merged as the format stores them: "
                             "FRACTAL_Z's leading ones, BSH's N and D as H, "
                             "FRACTAL_Z_C04's C, 4h, 4c as K0; one array "
                             "axis per axis is read too)"
                           : "");
  printf("size      %lld bytes: %lld elements, %lld of them padding\n",
         (long long)bytes, (long long)d->span, (long long)(d->span - elems));
  print_note(d, l);
}

/* The picture of d, or of the pair d and e (e not NULL), titled by their
 * layouts, into path: 0, or the exit code. */
static int draw(const relayout_desc *d, const relayout_layout *l,
                const relayout_desc *e, const relayout_layout *m,
                const char *path, unsigned flags) {
  relayout_error err;
  size_t size = 0;
  char *svg = NULL;
  const char *a = relayout_layout_text(l), *b = e ? relayout_layout_text(m) : 0;
  cli_out o;
  relayout_status s =
      e ? relayout_descs_svg(NULL, &size, d, e, a, b, flags, &err)
        : relayout_desc_svg(NULL, &size, d, a, flags, &err);
  if (!s && !(svg = malloc(size)))
    s = cli_fail(&err, RELAYOUT_ERR_NOMEM, "out of memory");
  if (!s)
    s = e ? relayout_descs_svg(svg, &size, d, e, a, b, flags, &err)
          : relayout_desc_svg(svg, &size, d, a, flags, &err);
  if (!s) s = cli_out_check(&o, path, 1, &err);
  if (!s) s = cli_out_whole(&o, NULL, 0, svg, size - 1, &err);
  free(svg);
  return s ? cli_error(cli_exit_code(s), "explain", "%s", err.message) : 0;
}

/* l (bound at ext) and layout text `to`, bound as a conversion, drawn as
 * a pair into path: 0, or the exit code. */
static int draw_pair(const relayout_layout *l, const char *to,
                     relayout_dtype dtype, int n, const int64_t *ext,
                     const char *path, unsigned flags) {
  relayout_layout *m = NULL;
  relayout_desc s, d;
  relayout_error err;
  int rc = relayout_layout_parse(&m, to, &err) ||
                   relayout_bind_extents(&s, &d, l, m, dtype, n, ext, &err)
               ? cli_error(EXIT_USAGE, "explain", "%s", err.message)
               : draw(&s, l, &d, m, path, flags);
  relayout_layout_free(m);
  return rc;
}

int cmd_explain(int argc, char **argv) {
  cli_opt opts[] = {{.name = "dims"},
                    {.name = "shape"},
                    {.name = "dtype"},
                    {.name = "c0"},
                    {.name = "svg"},
                    {.name = "from"},
                    {.name = "to"},
                    {.name = "values", .is_flag = 1},
                    {0}};
  const char *pos[1];
  int npos, rc;
  if ((rc = cli_parse(argc, argv, opts, pos, 1, &npos, "explain", usage)))
    return rc < 0 ? 0 : rc;
  const char *from = cli_get(opts, "from"), *to = cli_get(opts, "to");
  if ((from || to) && (npos || !from || !to || !cli_get(opts, "svg")))
    return cli_error(EXIT_USAGE, "explain",
                     "--from and --to draw a pair: both, with --svg and no "
                     "LAYOUT");
  if (npos != 1 && !from)
    return cli_error(EXIT_USAGE, "explain", "needs a LAYOUT\n%s", usage);
  const char *text = from ? from : pos[0];
  const char *dims = cli_get(opts, "dims"), *shape = cli_get(opts, "shape");
  if (!dims == !shape)
    return cli_error(EXIT_USAGE, "explain", "give either --dims or --shape");
  relayout_error err;
  relayout_dtype dtype = RELAYOUT_F32;
  const char *dt = cli_get(opts, "dtype");
  if (dt && relayout_dtype_from_name(&dtype, dt, &err))
    return cli_error(EXIT_USAGE, "explain", "%s", err.message);
  relayout_layout *l = NULL;
  const char *c0 = cli_get(opts, "c0");
  int64_t v;
  if (relayout_layout_parse(&l, text, &err))
    return cli_error(EXIT_USAGE, "explain", "%s", err.message);
  if (c0) {
    if ((rc = cli_parse_int(&v, c0, "--c0"))) goto done;
    if (relayout_layout_set_param(l, "c0", v, &err)) {
      rc = cli_error(EXIT_USAGE, "explain", "--c0: %s", err.message);
      goto done;
    }
  }

  char letters[RELAYOUT_MAX_DIMS + 1], names[RELAYOUT_MAX_DIMS + 1];
  int has_batch, positional, n = 0;
  int64_t ext[RELAYOUT_MAX_DIMS];
  relayout_layout_logical_names(letters, &has_batch, &positional, l, NULL);
  if (shape) {
    if ((rc = cli_parse_shape(ext, &n, shape))) goto done;
    int nbatch = n - (int)strlen(letters);
    if (positional) nbatch = n;
    if (nbatch < 0 || (nbatch > 0 && !has_batch && !positional)) {
      rc = cli_error(EXIT_USAGE, "explain",
                     "--shape has %d dims; %s has dims %s%s", n, text,
                     has_batch ? "..." : "", letters);
      goto done;
    }
    for (int i = 0; i < n; i++)
      names[i] = i < nbatch ? (char)('0' + i) : letters[i - nbatch];
  } else {
    relayout_dim_value given[RELAYOUT_MAX_DIMS];
    int ng;
    if ((rc = cli_parse_dims(given, &ng, dims))) goto done;
    if (positional) {
      rc = cli_error(EXIT_USAGE, "explain",
                     "%s has no dim letters: give --shape", text);
      goto done;
    }
    for (n = 0; letters[n]; n++) {
      names[n] = letters[n];
      ext[n] = -1;
      for (int j = 0; j < ng; j++)
        if (given[j].name == letters[n]) ext[n] = given[j].extent;
      if (ext[n] < 0) {
        rc =
            cli_error(EXIT_USAGE, "explain", "--dims lacks %c (%s has dims %s)",
                      letters[n], text, letters);
        goto done;
      }
    }
    for (int j = 0; j < ng; j++)
      if (!strchr(letters, given[j].name)) {
        rc = cli_error(EXIT_USAGE, "explain", "%s has no dim %c (its dims: %s)",
                       text, given[j].name, letters);
        goto done;
      }
  }
  relayout_desc d;
  relayout_status st = relayout_desc_init(&d, l, dtype, n, names, ext, &err);
  if (st) {
    rc = cli_error(cli_exit_code(st), "explain", "%s", err.message);
    goto done;
  }
  if (to)
    rc = draw_pair(l, to, dtype, n, ext, cli_get(opts, "svg"),
                   cli_get(opts, "values") ? RELAYOUT_SVG_VALUES : 0);
  else if (cli_get(opts, "svg"))
    rc = draw(&d, l, NULL, NULL, cli_get(opts, "svg"),
              cli_get(opts, "values") ? RELAYOUT_SVG_VALUES : 0);
  else if (cli_get(opts, "values"))
    rc = cli_error(EXIT_USAGE, "explain", "--values labels a --svg picture");
  else
    print(&d, l);
done:
  relayout_layout_free(l);
  return rc;
}
