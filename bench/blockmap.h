/*
 * The order of the limit loops' random reads: the one fio and iolab give a
 * random job unless it says norandommap=1. A block is drawn uniformly
 * (xorshift64); when this pass has read it already, the next block it has
 * not read takes its place (after it, else from the file's start); when
 * every block has been read, the pass ends and the map is cleared. No
 * block is read twice in one pass, so a read never finds its block still
 * in the CPU's caches from a read a moment before, which a uniform draw
 * allows: the loops do the job's reads, not cheaper ones. The map costs
 * the loop a test and a set of one bit per read, as it costs iolab.
 */
#ifndef BLOCKMAP_H
#define BLOCKMAP_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct blockmap {
	uint64_t *words;
	uint64_t nwords, blocks, left, x;
};

/* A map of `blocks` blocks, none read yet: 0, or -1 (said on stderr)
 * without memory for it. */
static int blockmap_init(struct blockmap *m, uint64_t blocks)
{
	m->nwords = (blocks + 63) / 64;
	m->words = calloc(m->nwords, sizeof(*m->words));
	m->blocks = m->left = blocks;
	/* Each copy its own sequence, as each of fio's and iolab's clones
	 * has its own seeds: two copies at once (numjobs=2) do not read the
	 * same blocks in step. The copy's number comes from LOOP_COPY
	 * (bench/compare.py numbers the copies it starts), so that a copy
	 * reads the same sequence in every run, as fio's and iolab's jobs do
	 * under randrepeat=1; without it, from the process id. The constant
	 * keeps the seed from being zero, which xorshift would keep. */
	const char *copy = getenv("LOOP_COPY");
	uint64_t n = copy ? strtoull(copy, NULL, 10) : (uint64_t)getpid();
	m->x = 88172645463325252ULL ^ (n << 17);
	if (!m->words) {
		fprintf(stderr, "no memory for the map of %llu blocks\n",
			(unsigned long long)blocks);
		return -1;
	}
	/* The bits past the last block count as read: never chosen. */
	if (blocks % 64)
		m->words[m->nwords - 1] = ~0ULL << (blocks % 64);
	return 0;
}

/* The next block to read. */
static inline uint64_t blockmap_next(struct blockmap *m)
{
	uint64_t x = m->x;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	m->x = x;
	uint64_t b = x % m->blocks, w = b / 64;
	uint64_t here = m->words[w] | ((1ULL << (b % 64)) - 1);
	if (m->words[w] & (1ULL << (b % 64))) {
		/* Read in this pass: the first free block after it. */
		while (here == ~0ULL) {
			w = w + 1 == m->nwords ? 0 : w + 1;
			here = m->words[w];
		}
		b = w * 64 + (uint64_t)__builtin_ctzll(~here);
	}
	m->words[b / 64] |= 1ULL << (b % 64);
	if (--m->left == 0) {
		memset(m->words, 0, m->nwords * sizeof(*m->words));
		if (m->blocks % 64)
			m->words[m->nwords - 1] = ~0ULL << (m->blocks % 64);
		m->left = m->blocks;
	}
	return b;
}

#endif
