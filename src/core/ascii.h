/* SPDX-License-Identifier: MIT */
/*
 * ASCII helpers the text readers share (JSON, protobuf text, query strings,
 * prof's JSON): header-only, inline.
 */
#ifndef TFT_CORE_ASCII_H
#define TFT_CORE_ASCII_H

/* The value of hex digit c (0-9, a-f, A-F), or -1. */
static inline int tft_hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20; /* 'A'..'F' -> 'a'..'f'; nothing else lands there */
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

#endif /* TFT_CORE_ASCII_H */
