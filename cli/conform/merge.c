/* merge.c - relayout conform --merge: the JSON reports of a matrix's parts
 * (--part I/N) as one run, each case once, in the matrix's order */
#include "conform.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Report path, read: its object, or NULL after saying why. */
static json_t *load(const char *path) {
  relayout_error err;
  json_error_t je;
  int fd = cli_open_regular(path, &err);
  json_t *r = fd < 0 ? NULL : json_loadfd(fd, JSON_REJECT_DUPLICATES, &je);
  if (fd >= 0) close(fd);
  if (!r)
    cli_error(EXIT_WORK, "conform", "%s: %s", path,
              fd < 0 ? err.message : je.text);
  else if (!json_is_array(json_object_get(r, "cases")) ||
           !json_is_string(json_object_get(r, "matrix")) ||
           !json_is_integer(json_object_get(r, "matrix_cases"))) {
    cli_error(EXIT_WORK, "conform",
              "%s: not a report of 'relayout conform --json' (no matrix, "
              "matrix_cases and cases)",
              path);
    json_decref(r);
    r = NULL;
  }
  return r;
}

/* Report number `which`'s cases into by_index (a slot per case of the
 * matrix; from: the report each came from): 0, or the exit code after
 * naming a case out of range or already there. */
static int take(json_t **by_index, int *from, json_int_t total, json_t *r,
                int which, const char *const *paths) {
  const char *path = paths[which];
  size_t i;
  json_t *e;
  json_array_foreach(json_object_get(r, "cases"), i, e) {
    json_t *at = json_object_get(e, "index");
    json_int_t k = json_is_integer(at) ? json_integer_value(at) : -1;
    const char *name = json_string_value(json_object_get(e, "case"));
    if (k < 0 || k >= total || !name ||
        !json_is_string(json_object_get(e, "verdict")))
      return cli_error(EXIT_WORK, "conform",
                       "%s: case %zu has no index of the matrix's %lld, or "
                       "no name or verdict",
                       path, i + 1, (long long)total);
    if (by_index[k])
      return cli_error(EXIT_WORK, "conform",
                       "case %lld (%s) is in both %s and %s: parts overlap",
                       (long long)k, name, paths[from[k]], path);
    by_index[k] = e;
    from[k] = which;
  }
  return 0;
}

int cf_merge(conform *c, const char *const *paths, int n, cli_out *junit,
             cli_out *json) {
  json_t **reports = calloc((size_t)n, sizeof *reports);
  json_int_t total = -1;
  int rc = reports ? 0 : cli_error(EXIT_WORK, "conform", "out of memory");
  for (int i = 0; i < n && !rc; i++) {
    if (!(reports[i] = load(paths[i]))) {
      rc = EXIT_WORK;
      break;
    }
    const char *matrix =
        json_string_value(json_object_get(reports[i], "matrix"));
    json_int_t t =
        json_integer_value(json_object_get(reports[i], "matrix_cases"));
    if (!json_is_true(json_object_get(reports[i], "complete")))
      rc = cli_error(EXIT_WORK, "conform",
                     "%s: an interrupted part (complete: false): run it "
                     "again",
                     paths[i]);
    else if (i && (t != total || strcmp(matrix, c->matrix)))
      rc = cli_error(EXIT_WORK, "conform",
                     "%s is a part of another matrix than %s (%s; %s)",
                     paths[i], paths[0], matrix, c->matrix);
    total = t;
    snprintf(c->matrix, sizeof c->matrix, "%s", matrix);
  }
  json_t **by_index = rc ? NULL : calloc((size_t)total + 1, sizeof *by_index);
  int *from = rc ? NULL : calloc((size_t)total + 1, sizeof *from);
  if (!rc && (!by_index || !from))
    rc = cli_error(EXIT_WORK, "conform", "out of memory");
  for (int i = 0; i < n && !rc; i++)
    rc = take(by_index, from, total, reports[i], i, paths);
  json_int_t missing = 0, first = -1;
  for (json_int_t k = 0; !rc && k < total; k++)
    if (!by_index[k] && !missing++) first = k;
  if (!rc && missing)
    rc = cli_error(EXIT_WORK, "conform",
                   "%lld of the matrix's %lld cases are in no report (the "
                   "first: case %lld): is a part missing?",
                   (long long)missing, (long long)total, (long long)first);
  for (json_int_t k = 0; !rc && k < total; k++) {
    json_t *e = by_index[k];
    const char *v = json_string_value(json_object_get(e, "verdict")),
               *group = json_string_value(json_object_get(e, "group")),
               *types = json_string_value(json_object_get(e, "types"));
    int verdict = 0;
    while (verdict < 3 && strcmp(v, cf_verdicts[verdict])) verdict++;
    if (verdict == 3 || !group || !types) {
      rc = cli_error(EXIT_WORK, "conform",
                     "case %lld: verdict '%s', or no group or types",
                     (long long)k, v);
      break;
    }
    cf_tally *t = cf_tally_of(c, group, types);
    t->n[verdict]++;
    c->ncases++;
    json_array_append(c->cases, e);
  }
  if (!rc) {
    const char *device =
        json_string_value(json_object_get(reports[0], "device"));
    const char *against =
        json_string_value(json_object_get(reports[0], "against"));
    c->seen = total;
    c->device = device ? device : "(unnamed)";
    c->against_name = against ? against : "(unnamed)";
    rc = cf_finish(c, junit, json, 1);
  }
  free(by_index);
  free(from);
  for (int i = 0; reports && i < n; i++) json_decref(reports[i]);
  free(reports);
  return rc;
}
