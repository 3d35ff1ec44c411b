/* peer.c - what the peers share: which layouts they can express */
#include "peer.h"

#include <stdio.h>

int peer_expressible(peer_result *r, const relayout_desc *d) {
  const char *why = NULL;
  if (!d->compact)
    why = "a layout with gaps between blocks";
  else if (d->groups.groups)
    why = "a grouped layout";
  for (int i = 0; !why && i < d->nvdims; i++)
    if (d->pad_before[i]) why = "padding before the data";
  if (!why) return 1;
  snprintf(r->note, sizeof r->note, "cannot express %s", why);
  r->seconds = -1;
  return 0;
}

int peer_runs(double first_seconds, int runs) {
  return first_seconds > 1.0 && runs > 3 ? 3 : runs;
}
