/* layout.c - the layout handle: text parsed (a named format with its
 * parameters, grammar or CuTe), its names, its grammar at a dtype */
#include "internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void format_text(relayout_layout *l) {
  size_t n = (size_t)snprintf(l->text, sizeof l->text, "%s", l->format->name);
  const char *sep = "(";
  for (int i = 0; i < RL_NPARAMS && n < sizeof l->text; i++)
    if (l->param[i] != RL_UNSET) {
      n += (size_t)snprintf(l->text + n, sizeof l->text - n, "%s%s=%lld", sep,
                            rl_param_name(i), (long long)l->param[i]);
      sep = ",";
    }
  if (*sep == ',' && n < sizeof l->text)
    snprintf(l->text + n, sizeof l->text - n, ")");
}

relayout_status relayout_layout_set_param(relayout_layout *l, const char *key,
                                          int64_t value, relayout_error *err) {
  if (!l || !key)
    return rl_fail(err, RELAYOUT_ERR_ARGUMENT, "layout or key is NULL");
  int p = 0;
  while (p < RL_NPARAMS && strcmp(key, rl_param_name(p))) p++;
  if (!l->format || p == RL_NPARAMS || !(l->format->params & (1u << p))) {
    char known[128] = "";
    for (int i = 0; l->format && i < RL_NPARAMS; i++)
      if (l->format->params & (1u << i)) {
        strcat(known, " ");
        strcat(known, rl_param_name(i));
      }
    return rl_fail(err, RELAYOUT_ERR_UNKNOWN,
                   "layout '%s' has no parameter '%s' (it takes:%s)", l->text,
                   key, *known ? known : " none");
  }
  int64_t min = p == RL_P_START || p == RL_P_OFFSET ? 0 : 1;
  if (value < min || value > ((int64_t)1 << 40))
    return rl_fail(err, RELAYOUT_ERR_ARGUMENT,
                   "parameter %s=%lld of '%s' is out of range [%lld, 2^40]",
                   key, (long long)value, l->format->name, (long long)min);
  l->param[p] = value;
  format_text(l);
  return RELAYOUT_OK;
}

/* NAME(key=value,...) */
static relayout_status parse_params(relayout_layout *l, const char *text,
                                    const char *open, relayout_error *err) {
  const char *p = open + 1;
  for (;;) {
    char key[16];
    size_t k = 0;
    while (isalnum((unsigned char)*p) && k + 1 < sizeof key) key[k++] = *p++;
    key[k] = 0;
    if (*p != '=')
      return rl_fail(err, RELAYOUT_ERR_SYNTAX,
                     "expected key=value in the parameters of '%s'", text);
    char *end;
    long long v = strtoll(++p, &end, 10);
    if (end == p || !isdigit((unsigned char)*p))
      return rl_fail(err, RELAYOUT_ERR_SYNTAX,
                     "parameter %s of '%s' needs a whole number", key, text);
    relayout_status s = relayout_layout_set_param(l, key, v, err);
    if (s) return s;
    p = end;
    if (*p == ',') {
      p++;
      continue;
    }
    if (p[0] == ')' && p[1] == 0) return RELAYOUT_OK;
    return rl_fail(err, RELAYOUT_ERR_SYNTAX,
                   "expected ',' or a final ')' in the parameters of '%s'",
                   text);
  }
}

/* Text of digits only, or "-1": the layout an aclFormat number names. */
static relayout_status acl_format_text(const char **out, const char *text,
                                       relayout_error *err) {
  if (!strcmp(text, "-1"))
    return rl_fail(err, RELAYOUT_ERR_UNKNOWN,
                   "acl_format -1 is ACL_FORMAT_UNDEFINED: it names no layout");
  int n = 0;
  for (const char *p = text; *p && n < 1000; p++) n = n * 10 + (*p - '0');
  if ((*out = relayout_acl_format(n))) return RELAYOUT_OK;
  return rl_fail(err, RELAYOUT_ERR_UNKNOWN,
                 "unknown acl_format number %s: CANN's aclFormat has none such "
                 "('relayout formats' lists the numbers)",
                 text);
}

relayout_status relayout_layout_parse(relayout_layout **out, const char *text,
                                      relayout_error *err) {
  if (!out || !text)
    return rl_fail(err, RELAYOUT_ERR_ARGUMENT, "layout text is NULL");
  *out = NULL;
  if ((*text && strspn(text, "0123456789") == strlen(text)) ||
      !strcmp(text, "-1")) {
    relayout_status s = acl_format_text(&text, text, err);
    if (s) return s;
  }
  size_t len = strlen(text);
  if (len == 0)
    return rl_fail(err, RELAYOUT_ERR_SYNTAX, "layout text is empty");
  if (len >= sizeof((relayout_layout *)0)->text)
    return rl_fail(err, RELAYOUT_ERR_SYNTAX,
                   "layout text is too long (%zu chars)", len);
  relayout_layout *l = calloc(1, sizeof *l);
  if (!l) return rl_fail(err, RELAYOUT_ERR_NOMEM, "out of memory");
  for (int i = 0; i < RL_NPARAMS; i++) l->param[i] = RL_UNSET;
  memcpy(l->text, text, len + 1);

  relayout_status s;
  char name[sizeof l->text];
  const char *open = strchr(text, '(');
  size_t nlen = open && open != text ? (size_t)(open - text) : len;
  memcpy(name, text, nlen);
  name[nlen] = 0;
  l->format = rl_format_find(name);
  if (l->format) {
    l->kind = l->format->kind;
    s = nlen < len ? parse_params(l, text, open, err) : RELAYOUT_OK;
  } else if (text[0] == '(' ||
             (strchr(text, ':') && !isalpha((unsigned char)text[0]))) {
    l->kind = RL_CUTE;
    s = rl_parse_cute(&l->cute, text, err);
  } else {
    l->kind = RL_GRAMMAR;
    s = rl_parse_grammar(&l->grammar, text, err);
    const char *near = s ? rl_closest_format(name) : NULL;
    if ((near || strchr(text, '_') || strchr(text, '(')) && s && err) {
      char why[RELAYOUT_ERROR_LEN];
      snprintf(why, sizeof why, "%s", err->message);
      s = near ? rl_fail(err, RELAYOUT_ERR_UNKNOWN,
                         "unknown layout '%s'; did you mean %s? (as grammar: "
                         "%s)",
                         name, near, why)
               : rl_fail(err, RELAYOUT_ERR_UNKNOWN,
                         "unknown layout '%s': not a named format, and as "
                         "grammar: %s",
                         text, why);
    }
  }
  if (s) {
    free(l);
    return s;
  }
  *out = l;
  return RELAYOUT_OK;
}

void relayout_layout_free(relayout_layout *layout) { free(layout); }

const char *relayout_layout_text(const relayout_layout *layout) {
  return layout ? layout->text : "(null)";
}

relayout_status relayout_layout_logical_names(char *out, int *has_batch,
                                              int *positional,
                                              const relayout_layout *l,
                                              relayout_error *err) {
  if (!out || !has_batch || !positional || !l)
    return rl_fail(err, RELAYOUT_ERR_ARGUMENT, "NULL argument");
  *has_batch = 0;
  *positional = l->kind == RL_POSITIONAL || l->kind == RL_CUTE;
  out[0] = 0;
  if (l->kind == RL_CUTE) {
    for (int i = 0; i < l->cute.nmodes; i++) out[i] = (char)('0' + i);
    out[l->cute.nmodes] = 0;
  } else if (l->format && l->kind != RL_POSITIONAL) {
    strcpy(out, l->format->order);
    *has_batch = l->format->pattern && !strncmp(l->format->pattern, "...", 3);
  } else if (l->kind == RL_GRAMMAR) {
    strcpy(out, l->grammar.order);
    *has_batch = l->grammar.has_batch;
  }
  return RELAYOUT_OK;
}

static int64_t param_or(const relayout_layout *l, int p, int64_t dflt) {
  return l->param[p] != RL_UNSET ? l->param[p] : dflt;
}

/* The dtype-dependent block of a format (0: it has none). */
static int64_t default_c0(const rl_format *f, relayout_dtype dtype) {
  return f->c0_rule == RL_BLOCK_CUBE  ? rl_cube_c0(dtype)
         : f->c0_rule == RL_BLOCK_B32 ? rl_b32(dtype)
                                      : 0;
}

relayout_status relayout_layout_resolved_text(char *out, size_t room,
                                              const relayout_layout *l,
                                              relayout_dtype dtype,
                                              relayout_error *err) {
  if (!out || !l || (unsigned)dtype >= RELAYOUT_DTYPE_COUNT)
    return rl_fail(err, RELAYOUT_ERR_ARGUMENT, "NULL layout or bad dtype");
  relayout_layout r = *l;
  const rl_format *f = l->format;
  if (f) {
    int64_t c0 =
        f->c0_rule == RL_BLOCK_CUBE ? rl_cube_c0(dtype) : rl_b32(dtype);
    const int64_t dflt[RL_NPARAMS] = {
        [RL_P_C0] = c0, [RL_P_B16] = 16, [RL_P_ALIGN] = 32};
    const int blocks[] = {RL_P_C0, RL_P_B16, RL_P_ALIGN};
    for (int i = 0; i < 3; i++)
      if ((f->params & (1u << blocks[i])) && r.param[blocks[i]] == RL_UNSET)
        r.param[blocks[i]] = dflt[blocks[i]];
    format_text(&r);
  }
  if (strlen(r.text) >= room)
    return rl_fail(err, RELAYOUT_ERR_ARGUMENT, "no room for '%s'", r.text);
  strcpy(out, r.text);
  return RELAYOUT_OK;
}

/* A format's pattern with its blocks filled in for dtype, into text (128
 * chars). */
static void format_pattern(char *text, const relayout_layout *l,
                           relayout_dtype dtype) {
  const rl_format *f = l->format;
  int64_t c0 = param_or(l, RL_P_C0, default_c0(f, dtype));
  int64_t b16 = param_or(l, RL_P_B16, 16);
  int64_t align = param_or(l, RL_P_ALIGN, 32);
  /* Grouped FRACTAL_Z and FRACTAL_Z_3D pack groups block-diagonally; G, the
   * block index, is outermost (CANN's GC1HWN1N0C0 and GDC1HWN1N0C0) */
  char grouped[32];
  const char *pattern = f->pattern;
  if (param_or(l, RL_P_GROUPS, 1) > 1) {
    snprintf(grouped, sizeof grouped, "G%s", f->pattern);
    pattern = grouped;
  }
  size_t n = 0;
  for (const char *p = pattern; *p && n + 24 < 128;) {
    int64_t v = -1;
    if (!strncmp(p, "{c0}", 4))
      v = c0, p += 4;
    else if (!strncmp(p, "{b16}", 5))
      v = b16, p += 5;
    else if (!strncmp(p, "{align}", 7))
      v = align, p += 7;
    if (v >= 0)
      n += (size_t)snprintf(text + n, 128 - n, "%lld", (long long)v);
    else
      text[n++] = *p++;
  }
  text[n] = 0;
}

relayout_status rl_format_grammar(rl_grammar *out, const relayout_layout *l,
                                  relayout_dtype dtype, relayout_error *err) {
  char text[128];
  format_pattern(text, l, dtype);
  return rl_parse_grammar(out, text, err);
}

relayout_status relayout_layout_grammar_text(char *out, size_t room,
                                             const relayout_layout *l,
                                             relayout_dtype dtype,
                                             relayout_error *err) {
  if (!out || !l || (unsigned)dtype >= RELAYOUT_DTYPE_COUNT)
    return rl_fail(err, RELAYOUT_ERR_ARGUMENT, "NULL layout or bad dtype");
  char text[160];
  if (l->format && l->format->merge)
    return rl_fail(err, RELAYOUT_ERR_UNSUPPORTED,
                   "'%s' has no grammar text (it lays out %c * %c as one dim)",
                   l->text, l->format->merge[0], l->format->merge[1]);
  if (l->format && (l->format->params & (1u << RL_P_HIDDEN)))
    return rl_fail(err, RELAYOUT_ERR_UNSUPPORTED,
                   "'%s' has no grammar text (it pads each gate apart)",
                   l->text);
  if (l->kind != RL_GRAMMAR)
    return rl_fail(err, RELAYOUT_ERR_UNSUPPORTED,
                   "'%s' has no grammar text (%s)", l->text,
                   l->kind == RL_CUTE  ? "a CuTe layout"
                   : l->kind == RL_TPU ? "NPU-scattered"
                                       : "ND: row-major over any rank");
  rl_grammar g;
  if (l->format) {
    /* stating the logical order where the letters' order is not it, so
     * that the text converts as the name does (NM16m16n alone is (N, M)) */
    char pattern[128];
    format_pattern(pattern, l, dtype);
    relayout_status s = rl_parse_grammar(&g, pattern, err);
    if (s) return s;
    snprintf(text, sizeof text, "%s%s%s",
             strcmp(g.order, l->format->order) ? l->format->order : "",
             strcmp(g.order, l->format->order) ? ":" : "", pattern);
  } else {
    snprintf(text, sizeof text, "%s", l->text);
  }
  if (strlen(text) >= room)
    return rl_fail(err, RELAYOUT_ERR_ARGUMENT, "no room for '%s'", text);
  strcpy(out, text);
  return RELAYOUT_OK;
}

relayout_status rl_layout_grammar(rl_grammar *out, const relayout_layout *l,
                                  relayout_dtype dtype, relayout_error *err) {
  if (l->format) return rl_format_grammar(out, l, dtype, err);
  *out = l->grammar;
  return RELAYOUT_OK;
}
