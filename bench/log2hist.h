/*
 * The limit loops' latency histograms: bucket b counts the times of
 * [2^b, 2^(b+1)) ns, and a percentile is the upper bound of the bucket it
 * falls in. A count per I/O is all they add to the loop, as iolab adds
 * one to fio's histogram; nothing is left to sort after it.
 */
#ifndef LOG2HIST_H
#define LOG2HIST_H

#include <stdint.h>

static inline void log2_count(uint64_t *hist, uint64_t ns)
{
	hist[63 - __builtin_clzll(ns | 1)]++;
}

/* The pct-th percentile (ns) of the n times counted in hist. */
static inline uint64_t log2_pct(const uint64_t *hist, uint64_t n, unsigned pct)
{
	uint64_t seen = 0;
	for (int b = 0; b < 64; b++) {
		seen += hist[b];
		if (seen * 100 >= n * pct)
			return 2ULL << b;
	}
	return 0;
}

#endif
