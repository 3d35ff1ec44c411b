/* formats.c - the catalogue of named formats, CANN's aclFormat numbers, and
 * the name closest to a misspelt one */
#include "internal.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#define P(x)       (1u << RL_P_##x)
#define TPU_PARAMS (P(NPUS) | P(START) | P(OFFSET) | P(LMEM) | P(N0))

/* LAYOUTS.md section 3. Patterns are grammar text with the block sizes left
 * open; logical order is the order in which ND binds to the dims. FRACTAL_Z
 * and FRACTAL_Z_3D are stored in 4 array axes, as CANN stores them. */
static const rl_format formats[] = {
    {"ND", NULL, RL_POSITIONAL, "", NULL, RL_BLOCK_NONE, 0, 0, 0, NULL},
    {"NC1HWC0", NULL, RL_GRAMMAR, "NCHW", "NCHW{c0}c", RL_BLOCK_CUBE, P(C0), 0,
     0, NULL},
    {"NDC1HWC0", NULL, RL_GRAMMAR, "NDCHW", "NDCHW{c0}c", RL_BLOCK_CUBE, P(C0),
     0, 0, NULL},
    /* CATLASS's names for the cube core's fractals (zN, zZ, nZ, nN): the
     * first letter orders a fractal's elements, the second the fractals
     * (z row-major, n column-major); the contiguous side is 32 bytes */
    {"FRACTAL_NZ", "NZ,zN", RL_GRAMMAR, "MN", "...NM{b16}m{c0}n", RL_BLOCK_B32,
     P(C0) | P(B16), 0, 0, NULL},
    {"FRACTAL_ZZ", "ZZ,zZ", RL_GRAMMAR, "MK", "...MK{b16}m{c0}k", RL_BLOCK_B32,
     P(C0) | P(B16), 0, 0, NULL},
    {"FRACTAL_ZN", "ZN,nZ", RL_GRAMMAR, "KN", "...KN{b16}n{c0}k", RL_BLOCK_B32,
     P(C0) | P(B16), 0, 0, NULL},
    {"nN", NULL, RL_GRAMMAR, "MN", "...NM{b16}n{c0}m", RL_BLOCK_B32,
     P(C0) | P(B16), 0, 0, NULL},
    {"FRACTAL_Z", NULL, RL_GRAMMAR, "NCHW", "CHWN{b16}n{c0}c", RL_BLOCK_CUBE,
     P(C0) | P(B16) | P(GROUPS), 4, 0, NULL},
    {"FRACTAL_Z_3D", NULL, RL_GRAMMAR, "NDHWC", "DCHWN{b16}n{c0}c",
     RL_BLOCK_CUBE, P(C0) | P(B16) | P(GROUPS), 4, 0, NULL},
    {"ND_ALIGN", NULL, RL_GRAMMAR, "MN", "...MN%{align}B", RL_BLOCK_NONE,
     P(ALIGN), 0, 0, NULL},
    {"NCHW4", "NC1HWC0_C04", RL_GRAMMAR, "NCHW", "NCHW4c", RL_BLOCK_NONE, 0, 0,
     0, NULL},
    {"NCHW32", NULL, RL_GRAMMAR, "NCHW", "NCHW32c", RL_BLOCK_NONE, 0, 0, 0,
     NULL},
    {"NCHW64", NULL, RL_GRAMMAR, "NCHW", "NCHW64c", RL_BLOCK_NONE, 0, 0, 0,
     NULL},
    {"CHWN4", NULL, RL_GRAMMAR, "NCHW", "CHWN4c", RL_BLOCK_NONE, 0, 0, 0, NULL},
    {"4N", NULL, RL_GRAMMAR, "NCHW", "NCHW4n", RL_BLOCK_NONE, 0, 0, 0, NULL},
    {"2N", NULL, RL_GRAMMAR, "NCHW", "NCHW2n", RL_BLOCK_NONE, 0, 0, 0, NULL},
    {"2IC", NULL, RL_GRAMMAR, "IOHW", "IOHW2i", RL_BLOCK_NONE, 0, 0, 0, NULL},
    /* TPU local memory: a tensor at NPU start, byte offset inside it; n0
     * packs 4N, 2N or 2IC words; TPU_STRIDED takes the seed's free strides */
    {"TPU_COMPACT", NULL, RL_TPU, "NCHW", NULL, RL_BLOCK_NONE, TPU_PARAMS, 0, 0,
     NULL},
    {"TPU_ALIGNED", NULL, RL_TPU, "NCHW", NULL, RL_BLOCK_NONE, TPU_PARAMS, 0, 0,
     NULL},
    {"TPU_STRIDED", NULL, RL_TPU, "NCHW", NULL, RL_BLOCK_NONE,
     TPU_PARAMS | P(NSTRIDE) | P(CSTRIDE) | P(HSTRIDE) | P(WSTRIDE), 0, 0,
     NULL},
    {"TPU_MATRIX", NULL, RL_TPU, "NM", NULL, RL_BLOCK_NONE,
     P(NPUS) | P(START) | P(OFFSET) | P(LMEM) | P(W), 0, 0, NULL},
    /* Ascend's attention layouts (seed 000): H = N * D, N the heads; the
     * array holds N and D merged as H. BNGS1S2 names S1 S and S2 T. */
    {"BSH", NULL, RL_GRAMMAR, "BSND", "BSND", RL_BLOCK_NONE, P(HEADS), 0, 2,
     NULL},
    {"SBH", NULL, RL_GRAMMAR, "BSND", "SBND", RL_BLOCK_NONE, P(HEADS), 0, 2,
     NULL},
    {"BNGS1S2", NULL, RL_GRAMMAR, "BNGST", "BNGST", RL_BLOCK_NONE, 0, 0, 0,
     NULL},
    /* CANN's first-layer weight (GE's Format 13): C (at most 4) padded to 4
     * and folded with H and W into the reduction axis K = (h * W + w) * 4 +
     * c, split by 16 as FRACTAL_Z's C1 * H * W * C0 is; H here is the
     * merged H * W, stored (K1, N1, N0, 16) */
    {"FRACTAL_Z_C04", NULL, RL_GRAMMAR, "NCHW", "HN16nC4h4c", RL_BLOCK_NONE, 0,
     0, 3, "HW"},
    /* CANN's RNN weight and bias (GE's Formats 49 and 48): N is gates of
     * hidden= units, each gate padded to 16; FRACTAL_ZN_RNN's K, where it
     * is input= + hidden=, pads the input rows to 16 apart from the hidden
     * ones; fractals of 16 x 16 (LAYOUTS.md section 3) */
    {"FRACTAL_ZN_RNN", NULL, RL_GRAMMAR, "KN", "...KN16n16k", RL_BLOCK_NONE,
     P(INPUT) | P(HIDDEN), 0, 0, NULL},
    {"ND_RNN_BIAS", NULL, RL_GRAMMAR, "N", "...N%16", RL_BLOCK_NONE, P(HIDDEN),
     0, 0, NULL},
};

static const char *const param_names[RL_NPARAMS] = {
    "c0",      "b16",     "groups", "npus",  "start",   "lmem",
    "w",       "align",   "offset", "n0",    "nstride", "cstride",
    "hstride", "wstride", "heads",  "input", "hidden"};

const char *rl_param_name(int param) { return param_names[param]; }

relayout_status relayout_format_at(relayout_format_info *out, int index) {
  if (!out || index < 0 || (size_t)index >= sizeof formats / sizeof formats[0])
    return RELAYOUT_ERR_ARGUMENT;
  const rl_format *f = &formats[index];
  out->name = f->name;
  out->alias = f->alias;
  out->params[0] = 0;
  for (int i = 0; i < RL_NPARAMS; i++)
    if (f->params & (1u << i)) {
      size_t n = strlen(out->params);
      snprintf(out->params + n, sizeof out->params - n, "%s%s", n ? " " : "",
               param_names[i]);
    }
  return RELAYOUT_OK;
}

/* Whether name is one of a comma-separated list of aliases. */
static int is_alias(const char *name, const char *aliases) {
  size_t n = strlen(name);
  for (const char *a = aliases; a; a = strchr(a, ',') ? strchr(a, ',') + 1 : 0)
    if (!strncmp(a, name, n) && (a[n] == ',' || !a[n])) return 1;
  return 0;
}

const rl_format *rl_format_find(const char *name) {
  for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
    if (!strcmp(name, formats[i].name) ||
        (*name && formats[i].alias && is_alias(name, formats[i].alias)))
      return &formats[i];
  return NULL;
}

/* CANN's aclFormat numbers (torch_npu's acl_format), every one that names a
 * layout, as the layout text it names: NC1HWC0_C04 is NC1HWC0 with C0 = 4,
 * FRACTAL_NZ_C0_M FRACTAL_NZ with C0 = M. ACL_FORMAT_UNDEFINED (-1) names
 * none. */
static const struct {
  int number;
  const char *text;
} acl_formats[] = {{0, "NCHW"},
                   {1, "NHWC"},
                   {2, "ND"},
                   {3, "NC1HWC0"},
                   {4, "FRACTAL_Z"},
                   {12, "NC1HWC0(c0=4)"},
                   {16, "HWCN"},
                   {27, "NDHWC"},
                   {29, "FRACTAL_NZ"},
                   {30, "NCDHW"},
                   {32, "NDC1HWC0"},
                   {33, "FRACTAL_Z_3D"},
                   {35, "NC"},
                   {47, "NCL"},
                   {50, "FRACTAL_NZ(c0=16)"},
                   {51, "FRACTAL_NZ(c0=32)"},
                   {52, "FRACTAL_NZ(c0=2)"},
                   {53, "FRACTAL_NZ(c0=4)"},
                   {54, "FRACTAL_NZ(c0=8)"}};

const char *relayout_acl_format(int number) {
  for (size_t i = 0; i < sizeof acl_formats / sizeof acl_formats[0]; i++)
    if (acl_formats[i].number == number) return acl_formats[i].text;
  return NULL;
}

/* Edit distance (with transpositions) between two names, read uppercase
 * and without underscores: FRACTALNZ is FRACTAL_NZ, NC1HWZ 2 from NC1HWC0. */
static int name_distance(const char *a, const char *b) {
  char x[32], y[32];
  int n = 0, m = 0, d[32][32];
  for (; *a && n < 31; a++)
    if (*a != '_') x[n++] = (char)toupper((unsigned char)*a);
  for (; *b && m < 31; b++)
    if (*b != '_') y[m++] = (char)toupper((unsigned char)*b);
  for (int i = 0; i <= n; i++)
    for (int j = 0; j <= m; j++) {
      if (!i || !j) {
        d[i][j] = i + j;
        continue;
      }
      int best = d[i - 1][j - 1] + (x[i - 1] != y[j - 1]);
      if (d[i - 1][j] + 1 < best) best = d[i - 1][j] + 1;
      if (d[i][j - 1] + 1 < best) best = d[i][j - 1] + 1;
      if (i > 1 && j > 1 && x[i - 1] == y[j - 2] && x[i - 2] == y[j - 1] &&
          d[i - 2][j - 2] + 1 < best)
        best = d[i - 2][j - 2] + 1;
      d[i][j] = best;
    }
  return d[n][m];
}

/* Names of 6 letters or fewer (NCHW4, 2IC) are too close to grammar text
 * to guess at: NCHW16 is a grammar mistake. */
const char *rl_closest_format(const char *name) {
  const char *best = NULL;
  int best_d = 3, len = (int)strlen(name);
  for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++) {
    int d = name_distance(name, formats[i].name);
    if (strlen(formats[i].name) > 6 && d < best_d &&
        (d <= 1 ? len >= 3 : len >= 6))
      best = formats[i].name, best_d = d;
  }
  return best;
}
