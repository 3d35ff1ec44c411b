/* args.c - command-line options, numbers, --dims and --shape */
#include "cli.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double cli_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

relayout_status cli_fail(relayout_error *err, relayout_status status,
                         const char *fmt, ...) {
  char msg[RELAYOUT_ERROR_LEN]; /* the arguments may name err->message */
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  memcpy(err->message, msg, sizeof msg);
  return status;
}

static const char *command = "";

void cli_set_command(const char *name) { command = name; }

int cli_exit_code(relayout_status s) {
  return s == RELAYOUT_ERR_SYNTAX || s == RELAYOUT_ERR_UNKNOWN ||
                 s == RELAYOUT_ERR_DIMS || s == RELAYOUT_ERR_ARGUMENT
             ? EXIT_USAGE
             : EXIT_WORK;
}

void cli_put_text(FILE *f, const char *s) {
  for (; *s; s++)
    if ((unsigned char)*s < ' ' || *s == 127)
      fprintf(f, "\\x%02x", (unsigned char)*s);
    else
      fputc(*s, f);
}

int cli_error(int code, const char *cmd, const char *fmt, ...) {
  va_list ap;
  char text[16384];
  if (!*cmd) cmd = command;
  fprintf(stderr, "relayout%s%s: error: ", *cmd ? " " : "", cmd);
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  /* names from files (tensors, paths) may hold a terminal's escape codes;
   * the lines of a usage text stay lines */
  for (char *line = text, *end; line; line = end ? end + 1 : NULL) {
    if ((end = strchr(line, '\n'))) *end = 0;
    cli_put_text(stderr, line);
    fputc('\n', stderr);
  }
  return code;
}

int cli_parse(int argc, char **argv, cli_opt *opts, const char **pos,
              int max_pos, int *npos, const char *cmd, const char *usage) {
  *npos = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      fputs(usage, stdout);
      return -1;
    }
    if (strncmp(a, "--", 2) || !a[2]) {
      if (*npos == max_pos)
        return cli_error(EXIT_USAGE, cmd, "unexpected argument '%s'\n%s", a,
                         usage);
      pos[(*npos)++] = a;
      continue;
    }
    const char *eq = strchr(a, '=');
    size_t len = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
    cli_opt *o = opts;
    while (o->name && (strlen(o->name) != len || strncmp(o->name, a + 2, len)))
      o++;
    if (!o->name)
      return cli_error(EXIT_USAGE, cmd, "unknown option '%s'\n%s", a, usage);
    if (o->value && !o->all)
      return cli_error(EXIT_USAGE, cmd, "option --%s is given twice", o->name);
    if (o->all && o->count == o->max)
      return cli_error(EXIT_USAGE, cmd,
                       "option --%s is given more than %d times", o->name,
                       o->max);
    if (o->is_flag) {
      if (eq) return cli_error(EXIT_USAGE, cmd, "--%s takes no value", o->name);
      o->value = "1";
    } else if (eq) {
      o->value = eq + 1;
    } else if (i + 1 < argc) {
      o->value = argv[++i];
    } else {
      return cli_error(EXIT_USAGE, cmd, "option --%s needs a value", o->name);
    }
    if (o->all) o->all[o->count++] = o->value;
  }
  return 0;
}

const char *cli_get(const cli_opt *opts, const char *name) {
  for (; opts->name; opts++)
    if (!strcmp(opts->name, name)) return opts->value;
  return NULL;
}

/* A whole number in [1, 2^62]; prints and returns EXIT_USAGE otherwise. */
int cli_parse_int(int64_t *out, const char *text, const char *what) {
  int64_t v = 0;
  const char *p = text;
  if (!isdigit((unsigned char)*p))
    return cli_error(EXIT_USAGE, "", "%s: '%s' is not a whole number", what,
                     text);
  for (; isdigit((unsigned char)*p); p++) {
    if (v > ((int64_t)1 << 62) / 10)
      return cli_error(EXIT_USAGE, "", "%s: %s is too large", what, text);
    v = v * 10 + (*p - '0');
  }
  if (*p)
    return cli_error(EXIT_USAGE, "", "%s: '%s' is not a whole number", what,
                     text);
  if (v < 1)
    return cli_error(EXIT_USAGE, "", "%s: %s must be at least 1", what, text);
  *out = v;
  return 0;
}

/* I/N from two strings; first counts from 1 (GitLab's CI_NODE_INDEX). */
static int part_of(long *i, long *n, const char *si, const char *sn,
                   int first) {
  char *e1, *e2;
  *i = strtol(si, &e1, 10) - first;
  *n = strtol(sn, &e2, 10);
  return isdigit((unsigned char)*si) && isdigit((unsigned char)*sn) && !*e1 &&
         !*e2;
}

int cli_parse_part(int *part, int *parts, const char *text, const char *cmd) {
  static const char *const launchers[][3] = {
      {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "0"},
      {"PMI_RANK", "PMI_SIZE", "0"},
      {"SLURM_PROCID", "SLURM_NTASKS", "0"},
      {"RANK", "WORLD_SIZE", "0"},
      {"CI_NODE_INDEX", "CI_NODE_TOTAL", "1"}};
  long i = -1, n = 0;
  char *end = NULL;
  if (!strcmp(text, "auto")) {
    for (size_t k = 0; k < sizeof launchers / sizeof launchers[0]; k++) {
      const char *si = getenv(launchers[k][0]), *sn = getenv(launchers[k][1]);
      if (!si || !sn) continue;
      if (!part_of(&i, &n, si, sn, launchers[k][2][0] - '0')) i = -1;
      if (i < 0 || i >= n)
        return cli_error(EXIT_USAGE, cmd,
                         "--part auto: %s=%s and %s=%s are "
                         "no rank and size",
                         launchers[k][0], si, launchers[k][1], sn);
      break;
    }
    if (!n)
      return cli_error(EXIT_USAGE, cmd,
                       "--part auto: no launcher's rank and size in the "
                       "environment (OMPI_COMM_WORLD_RANK, PMI_RANK, "
                       "SLURM_PROCID, RANK with WORLD_SIZE, CI_NODE_INDEX); "
                       "give --part I/N");
  } else {
    i = strtol(text, &end, 10);
    n = *end == '/' ? strtol(end + 1, &end, 10) : 0;
    if (!isdigit((unsigned char)*text)) i = -1;
  }
  if ((end && *end) || n < 1 || n > 100000 || i < 0 || i >= n)
    return cli_error(EXIT_USAGE, cmd,
                     "--part %s: I/N with 0 <= I < N (e.g. 0/3, 1/3, 2/3), or "
                     "auto",
                     text);
  *part = (int)i;
  *parts = (int)n;
  return 0;
}

int cli_parse_bytes(int64_t *out, const char *text, const char *what) {
  char num[32];
  size_t len = strspn(text, "0123456789");
  const char *units = "KMGT",
             *u = text[len] ? strchr(units, toupper((unsigned char)text[len]))
                            : NULL;
  if (len == 0 || len >= sizeof num || (text[len] && (!u || text[len + 1])))
    return cli_error(EXIT_USAGE, "",
                     "%s: expected a byte count such as 512M or 2G, got '%s'",
                     what, text);
  memcpy(num, text, len);
  num[len] = 0;
  if (cli_parse_int(out, num, what)) return EXIT_USAGE;
  for (int shift = u ? 10 * (int)(u - units + 1) : 0; shift > 0; shift -= 10) {
    if (*out > ((int64_t)1 << 52))
      return cli_error(EXIT_USAGE, "", "%s: %s is too large", what, text);
    *out <<= 10;
  }
  return 0;
}

int cli_parse_dim_name(char *out, const char *text) {
  if (isalpha((unsigned char)text[0]) && !text[1]) {
    *out = (char)toupper((unsigned char)text[0]);
    return 0;
  }
  char *end;
  long i = isdigit((unsigned char)text[0]) ? strtol(text, &end, 10) : -1;
  if (i < 0 || *end || i >= RELAYOUT_MAX_DIMS) return -1;
  *out = (char)('0' + i);
  return 0;
}

int cli_parse_dims(relayout_dim_value *out, int *n, const char *text) {
  *n = 0;
  const char *p = text;
  while (*p) {
    if (!isalpha((unsigned char)p[0]) || p[1] != '=')
      return cli_error(EXIT_USAGE, "",
                       "--dims: expected LETTER=EXTENT at '%s' (e.g. "
                       "N=2,C=17,H=5,W=3)",
                       p);
    if (*n == RELAYOUT_MAX_DIMS)
      return cli_error(EXIT_USAGE, "", "--dims: more than %d dims",
                       RELAYOUT_MAX_DIMS);
    char num[32];
    size_t len = strcspn(p + 2, ",");
    if (len == 0 || len >= sizeof num)
      return cli_error(EXIT_USAGE, "", "--dims: bad extent for %c", p[0]);
    memcpy(num, p + 2, len);
    num[len] = 0;
    out[*n].name = (char)toupper((unsigned char)p[0]);
    for (int j = 0; j < *n; j++)
      if (out[j].name == out[*n].name)
        return cli_error(EXIT_USAGE, "", "--dims: dim %c is given twice",
                         out[*n].name);
    char what[16];
    snprintf(what, sizeof what, "--dims %c", out[*n].name);
    if (cli_parse_int(&out[*n].extent, num, what)) return EXIT_USAGE;
    (*n)++;
    p += 2 + len;
    if (*p == ',') p++;
  }
  if (*n == 0) return cli_error(EXIT_USAGE, "", "--dims is empty");
  return 0;
}

int cli_parse_shape(int64_t *out, int *rank, const char *text) {
  *rank = 0;
  const char *p = text;
  for (;;) {
    char num[32];
    size_t len = strcspn(p, "x");
    if (len == 0 || len >= sizeof num)
      return cli_error(EXIT_USAGE, "", "--shape: expected AxBxC, got '%s'",
                       text);
    if (*rank == RELAYOUT_MAX_DIMS)
      return cli_error(EXIT_USAGE, "", "--shape: more than %d dims",
                       RELAYOUT_MAX_DIMS);
    memcpy(num, p, len);
    num[len] = 0;
    if (cli_parse_int(&out[(*rank)++], num, "--shape")) return EXIT_USAGE;
    p += len;
    if (!*p) return 0;
    p++;
  }
}

/* Parses both sides and applies --c0 to whichever has the parameter. */
int cli_layouts(relayout_layout **from, relayout_layout **to, const char *src,
                const char *dst, const char *c0, const char *cmd) {
  relayout_error e1, e2;
  *from = *to = NULL;
  if (relayout_layout_parse(from, src, &e1))
    return cli_error(EXIT_USAGE, cmd, "%s", e1.message);
  if (relayout_layout_parse(to, dst, &e1))
    return cli_error(EXIT_USAGE, cmd, "%s", e1.message);
  if (!c0) return 0;
  int64_t v;
  if (cli_parse_int(&v, c0, "--c0")) return EXIT_USAGE;
  int ok1 = !relayout_layout_set_param(*from, "c0", v, &e1);
  int ok2 = !relayout_layout_set_param(*to, "c0", v, &e2);
  if (!ok1 && !ok2) return cli_error(EXIT_USAGE, cmd, "--c0: %s", e2.message);
  return 0;
}

int cli_several_devices(const char *spec) {
  return spec && (!strcmp(spec, "all") || strchr(spec, ','));
}

void cli_device_items_free(char **items, int n) {
  for (int i = 0; items && i < n; i++) free(items[i]);
  free(items);
}

int cli_parse_device_list(char ***out, int *n, const char *spec,
                          const char *cmd) {
  const char *p = spec ? spec : "";
  int count = 1, rc = 0;
  for (const char *q = p; *q; q++) count += *q == ',';
  *out = NULL;
  *n = 0;
  char **items = calloc((size_t)count, sizeof *items);
  if (!items) return cli_error(EXIT_WORK, cmd, "out of memory");
  for (int i = 0; i < count && !rc; i++) {
    size_t len = strcspn(p, ",");
    if (!len && count > 1)
      rc = cli_error(EXIT_USAGE, cmd, "--device %s: an empty item", spec);
    else if (!(items[i] = strndup(p, len)))
      rc = cli_error(EXIT_WORK, cmd, "out of memory");
    p += len + (p[len] == ',');
  }
  if (rc) {
    cli_device_items_free(items, count);
    return rc;
  }
  *out = items;
  *n = count;
  return 0;
}
