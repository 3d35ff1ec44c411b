/* options.c - the relayout command's RELAYOUT_* environment variables,
 * mapped onto an engine's options (the library reads none) */
#include "cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A tuning variable's value where it is a finite number and nothing else
 * ("64K" or "1G" is not one: the default stays), in *out; else 0. */
static int env_number(const char *name, double *out) {
  const char *v = getenv(name);
  char *end = NULL;
  double x = v && *v ? strtod(v, &end) : 0;
  if (!end || *end || !isfinite(x)) return 0;
  *out = x;
  return 1;
}

/* RELAYOUT_CACHE_DIR ("off": none), else $XDG_CACHE_HOME/relayout, else
 * ~/.cache/relayout; NULL when none is set. */
static const char *cache_dir(void) {
  static char dir[4096];
  const char *set = getenv("RELAYOUT_CACHE_DIR"),
             *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
  if (set && !strcmp(set, "off")) return NULL;
  if (set && *set) return set;
  if (xdg && *xdg)
    snprintf(dir, sizeof dir, "%s/relayout", xdg);
  else if (home && *home)
    snprintf(dir, sizeof dir, "%s/.cache/relayout", home);
  else
    return NULL;
  return dir;
}

void cli_engine_options(relayout_engine_options *o, const char *device) {
  *o = (relayout_engine_options){.size = sizeof *o};
  o->device = device ? device : getenv("RELAYOUT_DEVICE");
  o->cache_dir = cache_dir();
  double v;
  if (env_number("RELAYOUT_CACHE_MB", &v) && v > 0 && v < 1e12)
    o->cache_bytes = (int64_t)(v * 1048576);
  if (env_number("RELAYOUT_MAX_ALLOC", &v) && v >= 1 && v < 9e18)
    o->max_alloc = (int64_t)v;
  const char *unified = getenv("RELAYOUT_UNIFIED");
  o->copies = unified && !strcmp(unified, "0");
  const char *fam = getenv("RELAYOUT_FAMILIES");
  o->families = fam && !strcmp(fam, "gpu")   ? RELAYOUT_FAMILIES_GPU
                : fam && !strcmp(fam, "cpu") ? RELAYOUT_FAMILIES_CPU
                                             : RELAYOUT_FAMILIES_AUTO;
  if (env_number("RELAYOUT_STREAM_BYTES", &v) && v >= 0 && v < 1e18)
    o->stream_bytes = v == 0 ? -1 : (int64_t)v;
  const char *k = getenv("RELAYOUT_KERNELS");
  o->kernels = k && !strcmp(k, "generic")       ? RELAYOUT_KERNELS_GENERIC
               : k && !strcmp(k, "specialised") ? RELAYOUT_KERNELS_SPECIALISED
                                                : RELAYOUT_KERNELS_AUTO;
}
