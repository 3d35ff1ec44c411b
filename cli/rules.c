/* rules.c - repack rules: GLOB[:Nd][:FROM]=TO[:DTYPE] */
#include "cli.h"
#include "repack.h"

#include <ctype.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

/* The '=' that ends the selector: the first one outside parentheses. */
static const char *selector_end(const char *text) {
  int depth = 0;
  for (const char *p = text; *p; p++) {
    if (*p == '(') depth++;
    if (*p == ')') depth--;
    if (*p == '=' && depth == 0) return p;
  }
  return NULL;
}

/* "4d" -> 4; otherwise 0. */
static int rank_part(const char *p, size_t len) {
  if (len < 2 || len > 3 || tolower((unsigned char)p[len - 1]) != 'd') return 0;
  int r = 0;
  for (size_t i = 0; i + 1 < len; i++) {
    if (!isdigit((unsigned char)p[i])) return 0;
    r = r * 10 + (p[i] - '0');
  }
  return r;
}

static int bad(const char *text, const char *why) {
  return cli_error(EXIT_USAGE, "repack",
                   "--rule '%s': %s (expected GLOB[:Nd][:FROM]=TO[:DTYPE], "
                   "e.g. '*.weight:4d=FRACTAL_Z' or '*:2d=FRACTAL_NZ:f16')",
                   text, why);
}

int rp_rule_parse(rp_rule *r, const char *text) {
  memset(r, 0, sizeof *r);
  r->text = text;
  const char *eq = selector_end(text);
  if (!eq || !eq[1]) return bad(text, "no target layout after '='");
  const char *p = text;
  size_t len = strcspn(p, ":");
  if (p + len > eq) len = (size_t)(eq - p);
  if (len == 0) return bad(text, "empty name glob");
  if (len >= sizeof r->glob) return bad(text, "name glob is too long");
  memcpy(r->glob, p, len);
  r->glob[len] = 0;
  char from[128] = "";
  for (p += len; p < eq;) {
    p++; /* the ':' */
    len = strcspn(p, ":");
    if (p + len > eq) len = (size_t)(eq - p);
    int rank = rank_part(p, len);
    if (!len) return bad(text, "an empty part between ':'");
    if (rank) {
      if (r->rank) return bad(text, "the rank is given twice");
      if (rank > RELAYOUT_MAX_DIMS)
        return bad(text, "the rank is above the limit");
      r->rank = rank;
    } else {
      if (*from) return bad(text, "two source layouts");
      if (len >= sizeof from) return bad(text, "the source layout is too long");
      memcpy(from, p, len);
      from[len] = 0;
    }
    p += len;
  }
  relayout_error e;
  char to[256];
  const char *colon = strrchr(eq + 1, ':');
  size_t to_len = strlen(eq + 1);
  if (colon && !relayout_dtype_from_name(&r->dtype, colon + 1, &e)) {
    if (!cli_float_dtype(r->dtype))
      return bad(text, "repack casts to f16, bf16, f32 or f64 (quantizing "
                       "rules are to come)");
    r->cast = 1;
    to_len = (size_t)(colon - (eq + 1));
  }
  if (to_len >= sizeof to) return bad(text, "the target layout is too long");
  memcpy(to, eq + 1, to_len);
  to[to_len] = 0;
  if (relayout_layout_parse(&r->from, *from ? from : "ND", &e) ||
      relayout_layout_parse(&r->to, to, &e)) {
    rp_rule_free(r);
    return bad(text, e.message);
  }
  return 0;
}

void rp_rule_free(rp_rule *r) {
  relayout_layout_free(r->from);
  relayout_layout_free(r->to);
  r->from = r->to = NULL;
}

int rp_rule_match(const rp_rule *rules, int n, const st_tensor *t) {
  for (int i = 0; i < n; i++)
    if ((!rules[i].rank || rules[i].rank == t->rank) &&
        fnmatch(rules[i].glob, t->name, 0) == 0)
      return i;
  return -1;
}
