/* bind.c - binds both sides of a conversion: logical names and extents */
#include "internal.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

typedef struct side {
  const relayout_layout *l;
  char letters[RELAYOUT_MAX_DIMS + 1];
  int batch, positional;
} side;

static void shape_text(char *buf, size_t size, int rank, const int64_t *shape) {
  size_t n = (size_t)snprintf(buf, size, "(");
  for (int i = 0; i < rank && n < size; i++)
    n += (size_t)snprintf(buf + n, size - n, "%s%lld", i ? ", " : "",
                          (long long)shape[i]);
  if (n < size) snprintf(buf + n, size - n, ")");
}

/* For a message about sides of plain grammar text: how such text reads (a
 * misspelt format name, BOGUS, reads as dims B, O, G, U, S). */
static const char *as_grammar(const side *a, const side *b) {
  int plain = (a->l->kind == RL_GRAMMAR && !a->l->format) ||
              (b && b->l->kind == RL_GRAMMAR && !b->l->format);
  return plain ? " (text that names no format reads as grammar: a dim per "
                 "letter)"
               : "";
}

/* Every letter of a is a letter of b. */
static relayout_status letters_within(const side *a, const side *b,
                                      relayout_error *err) {
  int shared = 0;
  for (const char *p = a->letters; *p; p++) shared |= !!strchr(b->letters, *p);
  for (const char *p = a->letters; *p; p++)
    if (!strchr(b->letters, *p))
      return shared ? rl_fail(err, RELAYOUT_ERR_DIMS,
                              "dim %c of '%s' has no place in '%s' (its dims: "
                              "%s)",
                              *p, a->l->text, b->l->text, b->letters)
                    : rl_fail(err, RELAYOUT_ERR_DIMS,
                              "'%s' (dims %s) and '%s' (dims %s) share no "
                              "dim%s",
                              a->l->text, a->letters, b->l->text, b->letters,
                              as_grammar(a, b));
  return RELAYOUT_OK;
}

static int is_matrix(const side *s) {
  return s->l->format && s->batch && strlen(s->letters) == 2;
}

/* Logical rank of a positional side: CuTe fixes it, ND takes the array's. */
static int positional_rank(const side *s, int src_rank) {
  return s->l->kind == RL_CUTE ? s->l->cute.nmodes : src_rank;
}

/* Extents and where each came from, for messages. */
typedef struct extents {
  int64_t v[RELAYOUT_MAX_DIMS];
  const char *from[RELAYOUT_MAX_DIMS];
} known_extents;

static relayout_status set_extent(known_extents *ext, int i, int64_t v,
                                  const char *names, const char *from,
                                  relayout_error *err) {
  if (ext->v[i] >= 0 && ext->v[i] != v) {
    char lab[8];
    return rl_fail(err, RELAYOUT_ERR_DIMS, "dim %s is %lld %s but %lld %s",
                   relayout_dim_label(lab, names[i]), (long long)ext->v[i],
                   ext->from[i], (long long)v, from);
  }
  ext->v[i] = v;
  ext->from[i] = from;
  return RELAYOUT_OK;
}

/* Extents from an array whose trailing axes are one (BSH's H = N * D): the
 * leading axes' extents, and the heads= parameter's N, D = H / N. */
static relayout_status merged_tail_extents(known_extents *ext, const side *src,
                                           const rl_grammar *g, int tail,
                                           const char *names,
                                           const int64_t *shape,
                                           relayout_error *err) {
  relayout_status s = RELAYOUT_OK;
  int lead = g->naxes - tail;
  for (int j = 0; j < lead && !s; j++)
    s = set_extent(ext, (int)(strchr(names, g->axes[j].letter) - names),
                   shape[j], names, "in the source array", err);
  int n = (int)(strchr(names, 'N') - names),
      d = (int)(strchr(names, 'D') - names);
  int64_t h = shape[lead], heads = src->l->param[RL_P_HEADS];
  if (s) return s;
  if (heads == RL_UNSET) heads = ext->v[n]; /* N given as a dim */
  if (heads < 1)
    return rl_fail(err, RELAYOUT_ERR_DIMS,
                   "'%s' stores N and D merged (H = %lld = N * D): give "
                   "heads= (N) to split it, e.g. %s(heads=8), or the dim N",
                   src->l->text, (long long)h, src->l->format->name);
  if (h % heads)
    return rl_fail(err, RELAYOUT_ERR_DIMS,
                   "'%s': H = %lld is not a multiple of heads=%lld",
                   src->l->text, (long long)h, (long long)heads);
  if ((s = set_extent(ext, n, heads, names, "by heads=", err))) return s;
  return set_extent(ext, d, h / heads, names, "as H / heads", err);
}

/* Extents the source array shows: ND axes, batch axes, and the outer axes
 * of dims that are neither blocked, aligned nor padded. An array of a
 * format stored merged (FRACTAL_Z as CANN's 4 axes) may come either way;
 * merged, its leading axes show no extent. */
static relayout_status extents_from_array(known_extents *ext, const side *src,
                                          relayout_dtype dtype, int n,
                                          const char *names, int nbatch,
                                          int rank, const int64_t *shape,
                                          relayout_error *err) {
  relayout_status s = RELAYOUT_OK;
  if (src->l->kind == RL_POSITIONAL) {
    for (int i = 0; i < n && !s; i++)
      s = set_extent(ext, i, shape[i], names, "in the source array", err);
    return s;
  }
  if (src->l->kind != RL_GRAMMAR) return RELAYOUT_OK;
  rl_grammar g;
  if ((s = rl_layout_grammar(&g, src->l, dtype, err))) return s;
  int axes = nbatch + g.naxes,
      stored = src->l->format ? src->l->format->stored_rank : 0,
      merged = stored && axes > stored && rank == stored ? axes - stored : 0,
      tail = src->l->format ? src->l->format->merged_tail : 0;
  /* merged, FRACTAL_Z_C04's array shows no extent (its K1 is H * W / 4) */
  if (tail && rank == axes - tail + 1)
    return src->l->format->merge
               ? RELAYOUT_OK
               : merged_tail_extents(ext, src, &g, tail, names, shape, err);
  if (rank != axes && !merged)
    return stored ? rl_fail(err, RELAYOUT_ERR_DIMS,
                            "the source array has %d axes, but '%s' has %d "
                            "(or %d, its leading ones merged as CANN stores "
                            "it)",
                            rank, src->l->text, axes, stored)
                  : rl_fail(err, RELAYOUT_ERR_DIMS,
                            "the source array has %d axes, but '%s' has %d",
                            rank, src->l->text, axes);
  for (int i = 0; i < nbatch && !s && !merged; i++)
    s = set_extent(ext, i, shape[i], names, "the source array", err);
  for (int j = merged ? merged + 1 - nbatch : 0; j < g.naxes && !s; j++) {
    const rl_gaxis *a = &g.axes[j];
    const char *at = strchr(names, a->letter);
    int plain = a->block == 0 && a->align == 0 && at;
    for (int k = 0; k < g.naxes; k++)
      plain &= g.axes[k].letter != a->letter || g.axes[k].block == 0;
    if (src->l->param[RL_P_GROUPS] > 1 &&
        (a->letter == 'N' || a->letter == 'C'))
      plain = 0;
    if (plain)
      s = set_extent(ext, (int)(at - names), shape[nbatch + j - merged], names,
                     "in the source array", err);
  }
  return s;
}

relayout_status rl_bind(rl_desc *src, rl_desc *dst,
                        const relayout_layout *src_layout,
                        const relayout_layout *dst_layout, relayout_dtype dtype,
                        int src_rank, const int64_t *src_shape,
                        const relayout_dim_value *given, int ngiven,
                        relayout_error *err) {
  if (!src || !dst || !src_layout || !dst_layout || (ngiven > 0 && !given) ||
      (src_rank > 0 && !src_shape) || src_rank < 0 ||
      src_rank > RELAYOUT_MAX_AXES)
    return rl_fail(err, RELAYOUT_ERR_ARGUMENT, "bad argument to relayout_bind");
  side a = {.l = src_layout}, b = {.l = dst_layout};
  relayout_status s;
  if ((s = relayout_layout_logical_names(a.letters, &a.batch, &a.positional,
                                         a.l, err)) ||
      (s = relayout_layout_logical_names(b.letters, &b.batch, &b.positional,
                                         b.l, err)))
    return s;
  if (a.positional && a.l->kind == RL_POSITIONAL && src_rank == 0)
    return rl_fail(err, RELAYOUT_ERR_DIMS,
                   "an ND source takes its rank from the source array's shape");

  /* Logical names: batch dims '0'.. first, then the named side's letters. */
  char names[RELAYOUT_MAX_DIMS + 1] = "";
  int n, nbatch = 0;
  const side *named = !a.positional ? &a : !b.positional ? &b : NULL;
  /* Matrix formats (FRACTAL_NZ/ZZ/ZN, ND_ALIGN) name their rows and columns
   * differently (M, N / M, K / K, N); between two of them the matrix dims
   * bind by position. */
  int matrices = is_matrix(&a) && is_matrix(&b) && strcmp(a.letters, b.letters);
  if (!a.positional && !b.positional && !matrices &&
      ((s = letters_within(&a, &b, err)) || (s = letters_within(&b, &a, err))))
    return s;
  int nletters = named ? (int)strlen(named->letters) : 0;
  if (a.positional) {
    n = positional_rank(&a, src_rank);
    nbatch = n - nletters;
  } else {
    n = nletters;
    if (a.batch && src_rank > 0 && a.l->kind == RL_GRAMMAR) {
      rl_grammar g;
      if ((s = rl_layout_grammar(&g, a.l, dtype, err))) return s;
      nbatch = src_rank - g.naxes;
      if (nbatch < 0)
        return rl_fail(err, RELAYOUT_ERR_DIMS,
                       "the source array has %d axes, but '%s' has at least "
                       "%d",
                       src_rank, a.l->text, g.naxes);
      n += nbatch;
    }
  }
  if (nbatch < 0)
    return rl_fail(err, RELAYOUT_ERR_DIMS,
                   "'%s' has %d dims, fewer than the %d that '%s' names%s",
                   a.l->text, n, nletters, named->l->text,
                   as_grammar(named, NULL));
  for (int k = 0; k < 2 && nbatch > 0; k++) {
    const side *x = k ? &b : &a;
    if (!x->positional && !x->batch)
      return rl_fail(err, RELAYOUT_ERR_DIMS,
                     "'%s' has no '...' to hold the other side's %d extra "
                     "dims",
                     x->l->text, nbatch);
  }
  if (n < 1 || n > RELAYOUT_MAX_DIMS)
    return rl_fail(err, RELAYOUT_ERR_DIMS, "a tensor has 1 to %d dims, not %d",
                   RELAYOUT_MAX_DIMS, n);
  for (int i = 0; i < nbatch; i++) names[i] = (char)('0' + i);
  for (int i = nbatch; i < n; i++)
    names[i] = named ? named->letters[i - nbatch] : (char)('0' + i);
  names[n] = 0;

  known_extents ext;
  for (int i = 0; i < n; i++) ext.v[i] = -1;
  for (int i = 0; i < ngiven; i++) {
    char c = (char)toupper((unsigned char)given[i].name);
    const char *at = c ? strchr(names, c) : NULL;
    if (!at || !isalpha((unsigned char)c))
      return rl_fail(err, RELAYOUT_ERR_DIMS,
                     "dim %c is not a dim of this conversion (dims: %s)",
                     given[i].name ? given[i].name : '?',
                     named ? named->letters : "positional only");
    if (ext.v[at - names] >= 0)
      return rl_fail(err, RELAYOUT_ERR_DIMS, "dim %c is given twice", c);
    if (given[i].extent < 1)
      return rl_fail(err, RELAYOUT_ERR_DIMS,
                     "dim %c=%lld: extents must be at least 1", c,
                     (long long)given[i].extent);
    ext.v[at - names] = given[i].extent;
    ext.from[at - names] = "as given";
  }
  const side *sides[2] = {&a, &b};
  char cute_from[2][sizeof a.l->text + 8];
  for (int k = 0; k < 2; k++)
    if (sides[k]->l->kind == RL_CUTE) {
      snprintf(cute_from[k], sizeof cute_from[k], "in '%s'", sides[k]->l->text);
      if (sides[k]->l->cute.nmodes != n)
        return rl_fail(err, RELAYOUT_ERR_DIMS,
                       "CuTe layout '%s' has %d modes; the other side has %d "
                       "dims",
                       sides[k]->l->text, sides[k]->l->cute.nmodes, n);
      for (int i = 0; i < n; i++)
        if ((s = set_extent(&ext, i, sides[k]->l->cute.mode_extent[i], names,
                            cute_from[k], err)))
          return s;
    }
  if (src_rank > 0 && (s = extents_from_array(&ext, &a, dtype, n, names, nbatch,
                                              src_rank, src_shape, err)))
    return s;
  char hidden[RELAYOUT_MAX_DIMS * 8] = "", example[RELAYOUT_MAX_DIMS * 16] = "";
  int nhidden = 0;
  for (int i = 0; i < n; i++)
    if (ext.v[i] < 0) {
      char lab[8];
      relayout_dim_label(lab, names[i]);
      size_t h = strlen(hidden), e = strlen(example);
      snprintf(hidden + h, sizeof hidden - h, "%s%s", nhidden ? ", " : "", lab);
      snprintf(example + e, sizeof example - e, "%s%s=<n>", nhidden ? "," : "",
               lab);
      nhidden++;
    }
  if (nhidden)
    return rl_fail(
        err, RELAYOUT_ERR_DIMS,
        "the source array's shape does not show the extent%s of "
        "dim%s %s (the padding%s of '%s' hide%s %s): give %s, e.g. "
        "--dims %s",
        nhidden > 1 ? "s" : "", nhidden > 1 ? "s" : "", hidden,
        a.l->format && a.l->format->stored_rank ? " or the merged axes" : "",
        a.l->text, a.l->format && a.l->format->stored_rank ? "" : "s",
        nhidden > 1 ? "them" : "it", nhidden > 1 ? "them" : "it", example);
  char dst_names[RELAYOUT_MAX_DIMS + 1];
  memcpy(dst_names, names, sizeof names);
  if (matrices) memcpy(dst_names + nbatch, b.letters, 2);
  if ((s = rl_desc_init(src, a.l, dtype, n, names, ext.v, err)) ||
      (s = rl_desc_init(dst, b.l, dtype, n, dst_names, ext.v, err)))
    return s;
  memcpy(dst->names, src->names, sizeof dst->names);
  if (src_rank > 0 && !rl_desc_holds_shape(src, src_rank, src_shape)) {
    int rank;
    int64_t shape[RELAYOUT_MAX_AXES];
    char want[160], got[160];
    rl_desc_physical_shape(&rank, shape, src);
    shape_text(want, sizeof want, rank, shape);
    shape_text(got, sizeof got, src_rank, src_shape);
    return rl_fail(err, RELAYOUT_ERR_DIMS,
                   "the source array has shape %s, but '%s' at these dims has "
                   "shape %s",
                   got, a.l->text, want);
  }
  return RELAYOUT_OK;
}

relayout_status rl_bind_extents(rl_desc *src, rl_desc *dst,
                                const relayout_layout *src_layout,
                                const relayout_layout *dst_layout,
                                relayout_dtype dtype, int n,
                                const int64_t *extents, relayout_error *err) {
  if (!src || !dst || !src_layout || !dst_layout || !extents || n < 1 ||
      n > RELAYOUT_MAX_DIMS)
    return rl_fail(err, RELAYOUT_ERR_ARGUMENT,
                   "bad argument to relayout_bind_extents");
  char own[RELAYOUT_MAX_DIMS + 1], names[RELAYOUT_MAX_DIMS + 1];
  int batch, positional;
  relayout_layout_logical_names(own, &batch, &positional, src_layout, NULL);
  int nbatch = positional ? n : n - (int)strlen(own);
  if (nbatch < 0 || (nbatch > 0 && !batch && !positional))
    return rl_fail(err, RELAYOUT_ERR_DIMS,
                   "'%s' has dims %s%s, but %d extents were given",
                   src_layout->text, batch ? "..." : "", own, n);
  relayout_dim_value given[RELAYOUT_MAX_DIMS];
  int ng = 0;
  for (int i = 0; i < n; i++) {
    names[i] = i < nbatch ? (char)('0' + i) : own[i - nbatch];
    if (i >= nbatch) given[ng++] = (relayout_dim_value){names[i], extents[i]};
  }
  rl_desc shape_of;
  relayout_status s =
      rl_desc_init(&shape_of, src_layout, dtype, n, names, extents, err);
  if (s) return s;
  /* The array shape carries the batch dims (and ND's); a flat, strided
   * source has none to show, so its letters say everything. */
  int rank = 0;
  int64_t shape[RELAYOUT_MAX_AXES];
  if (shape_of.compact) rl_desc_physical_shape(&rank, shape, &shape_of);
  return rl_bind(src, dst, src_layout, dst_layout, dtype, rank,
                 rank ? shape : NULL, given, ng, err);
}
