/* grammar.c - parses layout text: pad/split/permute grammar and CuTe
 * shape:stride */
#include "internal.h"

#include <ctype.h>
#include <string.h>

/* Reads a decimal integer in [min, 2^62] at *p; advances *p past it. */
static relayout_status read_int(int64_t *out, const char **p, const char *text,
                                const char *what, int64_t min,
                                relayout_error *err) {
  const char *s = *p;
  int64_t v = 0;
  if (!isdigit((unsigned char)*s))
    return rl_fail(err, RELAYOUT_ERR_SYNTAX,
                   "expected %s at position %d of '%s'", what,
                   (int)(s - text) + 1, text);
  while (isdigit((unsigned char)*s)) {
    if (v > ((int64_t)1 << 62) / 10)
      return rl_fail(err, RELAYOUT_ERR_OVERFLOW, "%s in '%s' is too large",
                     what, text);
    v = v * 10 + (*s++ - '0');
  }
  if (v < min)
    return rl_fail(err, RELAYOUT_ERR_SYNTAX, "%s in '%s' must be at least %lld",
                   what, text, (long long)min);
  *out = v;
  *p = s;
  return RELAYOUT_OK;
}

static int count_outer(const rl_grammar *g, char letter) {
  int n = 0;
  for (int i = 0; i < g->naxes; i++)
    n += g->axes[i].letter == letter && g->axes[i].block == 0;
  return n;
}

/* Letters before a ':' that begins the text: the logical dims' order the
 * text states (e.g. "MN:...NM16m16n"), uppercased into order; the text
 * after it. NULL: none stated. */
static const char *stated_order(char *order, const char *text) {
  size_t n = 0;
  while (isalpha((unsigned char)text[n])) n++;
  if (!n || text[n] != ':' || n > RELAYOUT_MAX_DIMS) return NULL;
  for (size_t i = 0; i < n; i++)
    order[i] = (char)toupper((unsigned char)text[i]);
  order[n] = 0;
  return text + n + 1;
}

/* Lowercase outer letters follow oneDNN's convention (nChw16c, OIhw16i16o):
 * there an uppercase letter is a blocked dim and a lowercase one a plain
 * dim. Text with lowercase outer letters that breaks it (zN) is refused,
 * not read as something else; text of lowercase letters alone (nhwc, a
 * oneDNN tag abcd) is plain. */
static relayout_status check_case(const rl_grammar *g, const char *text,
                                  relayout_error *err) {
  int lower = 0, upper = 0;
  for (int i = 0; i < g->naxes; i++)
    if (!g->axes[i].block) {
      lower |= g->axes[i].lower;
      upper |= !g->axes[i].lower;
    }
  for (int i = 0; lower && upper && i < g->naxes; i++) {
    const rl_gaxis *a = &g->axes[i];
    int blocked = 0;
    for (int j = 0; j < g->naxes; j++)
      blocked |= g->axes[j].block && g->axes[j].letter == a->letter;
    if (!a->block && blocked == a->lower)
      return rl_fail(err, RELAYOUT_ERR_SYNTAX,
                     "'%c' in '%s': with lowercase letters the text is read "
                     "as oneDNN writes tags (nChw16c), where an uppercase "
                     "letter is a blocked dim and a lowercase one a plain "
                     "dim; write the dims uppercase (NCHW16c), or name a "
                     "format ('relayout formats')",
                     a->lower ? a->letter - 'A' + 'a' : a->letter, text);
  }
  return RELAYOUT_OK;
}

relayout_status rl_parse_grammar(rl_grammar *out, const char *text,
                                 relayout_error *err) {
  rl_grammar g;
  memset(&g, 0, sizeof g);
  char stated[RELAYOUT_MAX_DIMS + 1];
  const char *body = stated_order(stated, text), *p = body ? body : text;
  if (!strncmp(p, "...", 3)) {
    g.has_batch = 1;
    p += 3;
  }
  if (!*p)
    return rl_fail(err, RELAYOUT_ERR_SYNTAX, "layout '%s' names no dims", text);
  while (*p) {
    rl_gaxis a = {0};
    relayout_status s;
    if (isdigit((unsigned char)*p)) {
      if ((s = read_int(&a.block, &p, text, "block size", 1, err))) return s;
      if (!isalpha((unsigned char)*p))
        return rl_fail(err, RELAYOUT_ERR_SYNTAX,
                       "block size at position %d of '%s' must be followed by "
                       "the letter of its dim",
                       (int)(p - text), text);
    } else if (!isalpha((unsigned char)*p)) {
      return rl_fail(err, RELAYOUT_ERR_SYNTAX,
                     "unexpected '%c' at position %d of '%s'", *p,
                     (int)(p - text) + 1, text);
    }
    a.lower = a.block == 0 && islower((unsigned char)*p);
    a.letter = (char)toupper((unsigned char)*p++);
    if (a.block == 0 && *p == '%') {
      p++;
      if ((s = read_int(&a.align, &p, text, "alignment", 1, err))) return s;
      if (*p == 'B') {
        a.align_bytes = 1;
        p++;
      }
    }
    if (g.naxes == RELAYOUT_MAX_AXES)
      return rl_fail(err, RELAYOUT_ERR_UNSUPPORTED,
                     "layout '%s' has more than %d axes", text,
                     RELAYOUT_MAX_AXES);
    g.axes[g.naxes++] = a;
  }
  int nd = 0;
  for (int i = 0; i < g.naxes; i++) {
    const rl_gaxis *a = &g.axes[i];
    int outer = count_outer(&g, a->letter);
    if (outer == 0)
      return rl_fail(err, RELAYOUT_ERR_SYNTAX,
                     "block %lld%c in '%s' has no outer %c axis",
                     (long long)a->block, tolower(a->letter), text, a->letter);
    if (outer > 1)
      return rl_fail(err, RELAYOUT_ERR_SYNTAX, "dim %c appears twice in '%s'",
                     a->letter, text);
    if (a->block) continue;
    if (nd == RELAYOUT_MAX_DIMS)
      return rl_fail(err, RELAYOUT_ERR_UNSUPPORTED,
                     "layout '%s' has more than %d dims", text,
                     RELAYOUT_MAX_DIMS);
    g.order[nd++] = a->letter;
  }
  g.order[nd] = 0;
  relayout_status s = check_case(&g, text, err);
  if (s) return s;
  if (body) {
    /* the stated order: the same letters, each once */
    int same = (int)strlen(stated) == nd;
    for (int i = 0; same && i < nd; i++)
      same = strchr(g.order, stated[i]) && !strchr(stated + i + 1, stated[i]);
    if (!same)
      return rl_fail(err, RELAYOUT_ERR_SYNTAX,
                     "'%s' states its dims as %s but lays out %s: the letters "
                     "before ':' name each dim of the layout once, in "
                     "logical order",
                     text, stated, g.order);
    memcpy(g.order, stated, (size_t)nd + 1);
    *out = g;
    return RELAYOUT_OK;
  }
  /* Letters a-l alone are a oneDNN tag, whose letters are dim indices:
   * the logical order is the alphabet's (acdb is NHWC over abcd). */
  int tag = !g.has_batch;
  for (int i = 0; i < nd; i++) tag &= g.order[i] >= 'A' && g.order[i] <= 'L';
  for (int i = 1; tag && i < nd; i++)
    for (int j = i; j > 0 && g.order[j - 1] > g.order[j]; j--) {
      char t = g.order[j];
      g.order[j] = g.order[j - 1];
      g.order[j - 1] = t;
    }
  *out = g;
  return RELAYOUT_OK;
}

/* ---- CuTe / TLA: shape := INT | "(" shape ("," shape)* ")" */

typedef struct cute_parser {
  const char *text, *p;
  int n; /* leaves read */
  int64_t leaf[RELAYOUT_MAX_AXES];
  int mode[RELAYOUT_MAX_AXES]; /* top-level mode of each leaf */
  int nmodes;
  int64_t min; /* 1 for extents, 0 for strides */
  const char *what;
  relayout_error *err;
} cute_parser;

static void skip_space(cute_parser *c) {
  while (*c->p == ' ') c->p++;
}

static relayout_status cute_tree(cute_parser *c, int depth, int top_mode) {
  relayout_status s;
  skip_space(c);
  if (*c->p == '(') {
    c->p++;
    for (;;) {
      int m = top_mode;
      if (depth == 0) {
        if (c->nmodes == RELAYOUT_MAX_DIMS)
          return rl_fail(c->err, RELAYOUT_ERR_UNSUPPORTED,
                         "CuTe layout '%s' has more than %d modes", c->text,
                         RELAYOUT_MAX_DIMS);
        m = c->nmodes++;
      }
      if ((s = cute_tree(c, depth + 1, m))) return s;
      skip_space(c);
      if (*c->p == ',') {
        c->p++;
        continue;
      }
      if (*c->p == ')') {
        c->p++;
        return RELAYOUT_OK;
      }
      return rl_fail(c->err, RELAYOUT_ERR_SYNTAX,
                     "expected ',' or ')' at position %d of '%s'",
                     (int)(c->p - c->text) + 1, c->text);
    }
  }
  if (*c->p == '_') c->p++; /* static integers print as _4 */
  if (c->n == RELAYOUT_MAX_AXES)
    return rl_fail(c->err, RELAYOUT_ERR_UNSUPPORTED,
                   "CuTe layout '%s' has more than %d sub-modes", c->text,
                   RELAYOUT_MAX_AXES);
  if (depth == 0) top_mode = c->nmodes++;
  c->mode[c->n] = top_mode;
  return read_int(&c->leaf[c->n++], &c->p, c->text, c->what, c->min, c->err);
}

relayout_status rl_parse_cute(rl_cute *out, const char *text,
                              relayout_error *err) {
  cute_parser shape = {
      .text = text, .p = text, .min = 1, .what = "CuTe extent", .err = err};
  relayout_status s = cute_tree(&shape, 0, 0);
  if (s) return s;
  skip_space(&shape);
  if (*shape.p != ':')
    return rl_fail(err, RELAYOUT_ERR_SYNTAX,
                   "CuTe layout '%s' needs ':' between shape and stride", text);
  /* A zero stride parses; rl_finish_desc refuses layouts that map two
   * coordinates to one element. */
  cute_parser stride = {.text = text,
                        .p = shape.p + 1,
                        .min = 0,
                        .what = "CuTe stride",
                        .err = err};
  if ((s = cute_tree(&stride, 0, 0))) return s;
  skip_space(&stride);
  if (*stride.p)
    return rl_fail(err, RELAYOUT_ERR_SYNTAX,
                   "unexpected '%c' after the stride of CuTe layout '%s'",
                   *stride.p, text);
  if (stride.n != shape.n || stride.nmodes != shape.nmodes)
    return rl_fail(err, RELAYOUT_ERR_SYNTAX,
                   "shape and stride of CuTe layout '%s' differ in form", text);
  for (int i = 0; i < shape.n; i++)
    if (shape.mode[i] != stride.mode[i])
      return rl_fail(err, RELAYOUT_ERR_SYNTAX,
                     "shape and stride of CuTe layout '%s' differ in form",
                     text);
  rl_cute c;
  memset(&c, 0, sizeof c);
  c.nmodes = shape.nmodes;
  c.naxes = shape.n;
  for (int m = 0; m < c.nmodes; m++) c.mode_extent[m] = 1;
  for (int i = 0; i < shape.n; i++) {
    c.mode[i] = shape.mode[i];
    c.extent[i] = shape.leaf[i];
    c.stride[i] = stride.leaf[i];
    if (__builtin_mul_overflow(c.mode_extent[c.mode[i]], c.extent[i],
                               &c.mode_extent[c.mode[i]]))
      return rl_fail(err, RELAYOUT_ERR_OVERFLOW,
                     "CuTe layout '%s' is too large", text);
  }
  *out = c;
  return RELAYOUT_OK;
}
