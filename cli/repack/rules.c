/* rules.c - repack rules: GLOB[:Nd][:FROM]=TO[:DTYPE[:per-channel=X]] */
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
                   "--rule '%s': %s (expected "
                   "GLOB[:Nd][:FROM]=TO[:DTYPE[:per-channel=X]], e.g. "
                   "'*.weight:4d=FRACTAL_Z', '*:2d=FRACTAL_NZ:f16' or "
                   "'*.weight:4d=FRACTAL_Z:i8:per-channel=N')",
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
  if (strlen(eq + 1) >= sizeof to)
    return bad(text, "the target layout is too long");
  strcpy(to, eq + 1);
  /* from the right: per-channel=X, then a DTYPE, each after a ':' */
  char *colon = strrchr(to, ':');
  static const char per[] = "per-channel=";
  if (colon && !strncmp(colon + 1, per, sizeof per - 1)) {
    if (cli_parse_dim_name(&r->axis, colon + sizeof per)) /* past '=' */
      return bad(text, "per-channel= takes one logical dim: a letter, or an "
                       "ND dim's index");
    *colon = 0;
    colon = strrchr(to, ':');
  }
  if (colon && !relayout_dtype_from_name(&r->dtype, colon + 1, &e)) {
    if (!cli_float_dtype(r->dtype) && r->dtype != RELAYOUT_I8)
      return bad(text, "repack casts to f16, bf16, f32 or f64, or quantizes "
                       "to i8 (symmetric scales, stored beside the weight)");
    r->cast = 1;
    *colon = 0;
  }
  if (r->axis && !(r->cast && r->dtype == RELAYOUT_I8))
    return bad(text, "per-channel= follows the DTYPE of a quantizing rule "
                     "(i8)");
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
