// SPDX-License-Identifier: MIT
// Track kinds, event kinds and event flags, as the server and the static export write
// them (src/core/model.h; the track_kinds table of src/store/schema.h): one table for
// the Timeline, the Overview, the Ops page, the tile decoder and the static export's
// queries (staticapi.js, which its worker loads too: plain declarations only).

/* Track kinds by number (tracks.kind); sessions list them by name. */
export const KIND_NAMES = ['', 'thread', 'device', 'gpu_stream', 'comm', 'counter', 'async', 'object'];

/* A track kind's name, from its number or its name; an unknown number, or none: 'thread'. */
export function kindName(k) { return typeof k === 'number' ? (KIND_NAMES[k] || 'thread') : (k || 'thread'); }

/* Kinds whose depth is nesting (a call stack), unless the track is concurrent (its
 * depth then is a lane: GPU streams, TF devices). */
export const STACK_KINDS = new Set(['thread', 'device', 'gpu_stream', 'comm']);

/* The Timeline's order of a process's tracks: compute first, then communication beside
 * it, counters last; and the tag each kind is shown with. */
export const KIND_ORDER = { thread: 0, async: 1, device: 2, gpu_stream: 3, comm: 4, object: 5, counter: 6 };
export const KIND_LABEL = { thread: 'thread', async: 'async', device: 'device', gpu_stream: 'stream', comm: 'comm', object: 'objects', counter: 'counter' };

/* Event kinds (ekind; TFT_EV_*): a slice, an instant. */
export const EV_SLICE = 0, EV_INSTANT = 1;

/* Event flags (TFT_EVF_*): a slice without its end; a block standing for `count` events. */
export const EVF_UNCLOSED = 1, EVF_SUMMARY = 2;

/* A decoded tile's flags (tiledata.js): the event's flags in bits 0-6, bit 7 set on an instant. */
export const TILE_EVF_MASK = 127, TILE_INSTANT = 128;
