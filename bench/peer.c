/* peer.c - what the peers share: which layouts they can express */
#include "peer.h"

#include <stdio.h>

int peer_expressible(peer_result *r, const relayout_desc *d) {
  const char *why = NULL;
  relayout_vdim v[RELAYOUT_MAX_DIMS + 1];
  int nv = relayout_desc_vdims(d, v);
  if (!relayout_desc_is_compact(d))
    why = "a layout with gaps between blocks";
  else if (relayout_desc_groups(d, NULL))
    why = "a grouped layout";
  for (int i = 0; !why && i < nv; i++)
    if (v[i].pad_before) why = "padding before the data";
  if (!why) return 1;
  snprintf(r->note, sizeof r->note, "cannot express %s", why);
  r->seconds = -1;
  return 0;
}

int peer_runs(double first_seconds, int runs) {
  return first_seconds > 1.0 && runs > 3 ? 3 : runs;
}
