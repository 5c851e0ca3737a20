/* SPDX-License-Identifier: MIT */
/*
 * A write-combining SQLite VFS for the bulk writer: the default VFS with the
 * main database file's page writes gathered in a window of the file and
 * written out in runs, 64 KiB at a time. SQLite writes every page with a
 * pwrite of its own; a bulk import writes pages mostly near each other, and
 * small writes cost the kernel more CPU per byte than large ones (BENCHMARKS.md,
 * "Store: design measurements"). The file written is byte for byte the same.
 */
#ifndef TFT_STORE_WC_VFS_H
#define TFT_STORE_WC_VFS_H

#define TFT_WC_VFS_NAME "tft-wc"

/* The span of the file (bytes) a main database file's window covers. */
#ifndef TFT_WC_VFS_BUF_BYTES
#define TFT_WC_VFS_BUF_BYTES ((int)1 << 20)
#endif

/*
 * Registers the VFS under TFT_WC_VFS_NAME (not as the default) over the
 * default VFS of the moment; once, from any thread. Returns 0, or a negative
 * tft_status if SQLite has no default VFS or refused it (then open with the
 * default VFS: the session is the same).
 */
int tft_wc_vfs_register(void);

#endif /* TFT_STORE_WC_VFS_H */
