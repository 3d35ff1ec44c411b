/* formats.c - relayout formats: the catalogue of named formats */
#include "cli.h"

#include <stdio.h>
#include <string.h>

static const char usage[] =
    "usage: relayout formats\n"
    "\n"
    "Lists every named format: its logical dims (the order ND binds to), the\n"
    "parameters it takes, and the grammar it stands for at 4-, 8-, 16- and\n"
    "32-bit dtypes; then CANN's aclFormat numbers, which name layouts too.\n";

/* The grammar of l at dtype t, or what stands for it. */
static void grammar_at(char *out, size_t room, const relayout_layout *l,
                       relayout_dtype t) {
  if (relayout_layout_grammar_text(out, room, l, t, NULL))
    snprintf(out, room, "-");
}

int cmd_formats(int argc, char **argv) {
  cli_opt opts[] = {{0}};
  const char *pos[1];
  int npos, rc;
  if ((rc = cli_parse(argc, argv, opts, pos, 0, &npos, "formats", usage)))
    return rc < 0 ? 0 : rc;
  static const relayout_dtype widths[] = {RELAYOUT_I4, RELAYOUT_I8,
                                          RELAYOUT_F16, RELAYOUT_F32};
  printf("%-14s %-11s %-7s %-22s %-17s %-17s %-17s %s\n", "format", "alias",
         "dims", "parameters", "i4", "i8", "f16", "f32");
  relayout_format_info f;
  for (int i = 0; !relayout_format_at(&f, i); i++) {
    relayout_layout *l;
    if (relayout_layout_parse(&l, f.name, NULL)) continue;
    char dims[RELAYOUT_MAX_DIMS + 8], g[4][64];
    int batch, positional;
    relayout_layout_logical_names(dims + 3, &batch, &positional, l, NULL);
    memcpy(dims, "...", 3);
    const char *shown = positional ? "any" : batch ? dims : dims + 3;
    for (int k = 0; k < 4; k++) grammar_at(g[k], sizeof g[k], l, widths[k]);
    if (!strcmp(g[0], "-") && !strcmp(g[3], "-")) /* no grammar: the
                                                    parameters, however long */
      printf("%-14s %-11s %-7s %s\n", f.name, f.alias ? f.alias : "-", shown,
             *f.params ? f.params : "-");
    else
      printf("%-14s %-11s %-7s %-22s %-17s %-17s %-17s %s\n", f.name,
             f.alias ? f.alias : "-", shown, *f.params ? f.params : "-", g[0],
             g[1], g[2], g[3]);
    relayout_layout_free(l);
  }
  printf("\n- ND is row-major over any rank; TPU layouts are NPU-scattered "
         "(no grammar).\n"
         "- FRACTAL_Z and FRACTAL_Z_3D arrays are stored as CANN stores them, "
         "(C1*H*W, N1, N0, C0)\n  and (D*C1*H*W, N1, N0, C0); one axis per "
         "physical axis is read too.\n"
         "- Plain text in letters a-l alone is a oneDNN tag: its dims follow "
         "the alphabet (acdb is NHWC\n  over abcd).\n\n"
         "aclFormat numbers (CANN, torch_npu's acl_format):\n");
  for (int n = 0; n < 100; n++)
    if (relayout_acl_format(n))
      printf("  %2d  %s\n", n, relayout_acl_format(n));
  printf("  -1  ACL_FORMAT_UNDEFINED: refused, it names no layout\n");
  return 0;
}
